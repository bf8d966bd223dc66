// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring record`: open a session, start the command (or follow a pid, or
 * the whole system), and drain every CPU's ring in exact timestamp order
 * into a pmclog, barman or blob file until the command exits, the duration
 * ends or SIGINT/SIGTERM/SIGHUP arrives; then disable, drain what is left, write
 * CLOSELOG / the final header, and exit 0.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "../cmd.h"
#include "../report/buildid.h"
#include "../report/kallsyms.h"
#include "consumer.h"
#include "opts.h"

/*
 * The merge's promise (max_delay_ns): a record is written at most this long
 * after its commit.  The waits between drains are derived from it
 * (consumer_timeout_ns()).
 */
#define WAIT_MS		10u
/* Status line period: at most 4 times a second. */
#define STATUS_NS	250000000ull

/* Records taken per consumer_drain() call between two stop checks. */
#define DRAIN_MAX	4096u
/* How long a command may take to exit after the signal it was sent. */
#define CHILD_GRACE_MS	10000u

static volatile sig_atomic_t stop_signal, nr_signals, signal_from_tty;
/* SIGHUP is ours: it was not ignored when we started (nohup) */
static bool catch_hup;

static void on_signal(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (!stop_signal) {
		stop_signal = sig;
		/* ^C: the kernel sent it to the whole foreground group */
		signal_from_tty = si && si->si_code == SI_KERNEL;
	}
	nr_signals++;
}

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* FreeBSD's x86 cpuid string "GenuineIntel-6-55-4", else "Linux-<arch>". */
static void cpuid_string(char *buf, size_t sz)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d, family, model;
	char vendor[13];

	if (__get_cpuid(0, &a, &b, &c, &d)) {
		memcpy(vendor, &b, 4);
		memcpy(vendor + 4, &d, 4);
		memcpy(vendor + 8, &c, 4);
		vendor[12] = '\0';
		__get_cpuid(1, &a, &b, &c, &d);
		family = (a >> 8) & 0xf;
		model = (a >> 4) & 0xf;
		if (family == 0xf)
			family += (a >> 20) & 0xff;
		if (family >= 6)
			model |= ((a >> 16) & 0xf) << 4;
		snprintf(buf, sz, "%s-%u-%02X-%X", vendor, family, model, a & 0xf);
		return;
	}
#endif
	struct utsname u;

	uname(&u);
	snprintf(buf, sz, "Linux-%.32s", u.machine);
}

static const char *default_output(enum fmt_kind kind)
{
	switch (kind) {
	case FMT_BARMAN:
		return "pmcring.barman";
	case FMT_BLOB:
		return "pmcring.blob";
	default:
		return "pmcring.pmclog";
	}
}

/* The module's limits (GET_INFO on a fresh fd), for error messages. */
static bool module_info(struct pmcring_info *info)
{
	int fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	bool ok;

	if (fd < 0)
		return false;
	memset(info, 0, sizeof(*info));
	ok = ioctl(fd, PMCRING_IOC_GET_INFO, info) == 0;
	close(fd);
	return ok;
}

/*
 * CONFIGURE says EPERM only when the rings would lock more memory than the
 * module's per-user allowance plus RLIMIT_MEMLOCK (opening the device
 * without permission is EACCES): name both limits and the ways out.
 */
#define REC_LIB_DATA_PAGES	64u	/* libpmcring's default (session.c) */

static void memlock_error(const struct rec_opts *o)
{
	uint32_t pages = o->buffer_pages ? o->buffer_pages : REC_LIB_DATA_PAGES;
	/* a ring per online CPU at CONFIGURE (ABI 4), not per possible CPU */
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), page = sysconf(_SC_PAGESIZE);
	char kb[32] = "?";
	struct rlimit rl;
	FILE *f;

	f = fopen("/sys/module/pmcring/parameters/mlock_kb", "r");
	if (f) {
		if (!fgets(kb, sizeof(kb), f))
			strcpy(kb, "?");
		kb[strcspn(kb, "\n")] = '\0';
		fclose(f);
	}
	fprintf(stderr, "pmcring: the rings (%ld KiB: %ld CPUs x %u+2 pages) "
		"exceed your locked-memory limit (EPERM): the module lets "
		"each user lock %s KiB per online CPU "
		"(/sys/module/pmcring/parameters/mlock_kb), the rest counts "
		"against RLIMIT_MEMLOCK", cpus * (pages + 2) * (page / 1024),
		cpus, pages, kb);
	if (!getrlimit(RLIMIT_MEMLOCK, &rl)) {
		if (rl.rlim_cur == RLIM_INFINITY)
			fprintf(stderr, " (unlimited)");
		else
			fprintf(stderr, " (ulimit -l: %llu KiB)",
				(unsigned long long)rl.rlim_cur / 1024);
	}
	fprintf(stderr, ".\npmcring: raise it with `ulimit -l`, or ask for "
		"fewer pages with --buffer-pages N (a power of two below %u), "
		"or run with CAP_IPC_LOCK\n", pages);
}

/* Are all CPUs of -C below @n? */
static bool cpus_below(const struct rec_opts *o, uint32_t n)
{
	uint32_t c;

	for (c = n; c < o->cpus_size * 8; c++)
		if (o->cpus[c / 64] & (1ull << (c % 64)))
			return false;
	return true;
}

/* A number from a sysctl file, -1 if it cannot be read. */
static long sysctl_long(const char *path)
{
	FILE *f = fopen(path, "r");
	long v = -1;

	if (!f)
		return -1;
	if (fscanf(f, "%ld", &v) != 1)
		v = -1;
	fclose(f);
	return v;
}

/* Why pmcring_new() failed, in words a user can act on. */
static void session_error(const struct rec_opts *o, int err)
{
	struct pmcring_info info;

	switch (err) {
	case EINVAL:
		if (o->buffer_pages && module_info(&info) &&
		    (o->buffer_pages < info.min_data_pages ||
		     o->buffer_pages > info.max_data_pages)) {
			fprintf(stderr, "pmcring: --buffer-pages %u: the module "
				"takes %u to %u pages per CPU (a power of two)\n",
				o->buffer_pages, info.min_data_pages,
				info.max_data_pages);
			break;
		}
		if ((o->cpu_list || o->tid) && module_info(&info) &&
		    info.abi_version < 3) {
			fprintf(stderr, "pmcring: %s needs a pmcring module of "
				"ABI 3 or later (this one has ABI %u)\n",
				o->cpu_list ? "-C" : "-t", info.abi_version);
			break;
		}
		if (o->cpu_list && module_info(&info) &&
		    o->cpus_size * 8 > info.nr_cpus &&
		    !cpus_below(o, info.nr_cpus)) {
			fprintf(stderr, "pmcring: -C %s: this machine has CPUs "
				"0-%u\n", o->cpu_list, info.nr_cpus - 1);
			break;
		}
		fprintf(stderr, "pmcring: the module refused the session's "
			"configuration (EINVAL): is it older than this pmcring? "
			"(modinfo pmcring, dmesg)\n");
		break;
	case ENOMEM:
		fprintf(stderr, "pmcring: not enough memory for the rings "
			"(the module lends all sessions' rings at most half of "
			"RAM, a user at most a quarter): try a smaller "
			"--buffer-pages\n");
		break;
	case EOVERFLOW:
		fprintf(stderr, "pmcring: call chain depth %u is above "
			"/proc/sys/kernel/perf_event_max_stack (%ld): ask for "
			"fewer frames, or raise the sysctl\n",
			o->callchain_depth,
			sysctl_long("/proc/sys/kernel/perf_event_max_stack"));
		break;
	case ENOENT:
	case ENODEV:
	case ENXIO:
		fprintf(stderr, "pmcring: %s not found: load the module with "
			"`insmod kmod/pmcring.ko` or try `make run`\n",
			PMCRING_DEV_PATH);
		break;
	case EPERM:
		memlock_error(o);
		break;
	case EACCES:
		fprintf(stderr, "pmcring: permission denied: %s%s\n",
			o->system_wide ? "recording the whole system needs "
			"CAP_PERFMON (or root)" : "cannot open or configure "
			PMCRING_DEV_PATH, o->pid ?
			" (following another user's process needs CAP_PERFMON)" :
			"");
		break;
	case EOPNOTSUPP:
		fprintf(stderr, "pmcring: this pmcring module cannot record %s "
			"yet (EOPNOTSUPP): its record sources are missing\n",
			o->system_wide ? "the whole system" : "a process");
		break;
	case ESRCH:
		if (o->tid)
			fprintf(stderr, "pmcring: no thread %d\n", (int)o->tid);
		else
			fprintf(stderr, "pmcring: no process %d\n", (int)o->pid);
		break;
	default:
		fprintf(stderr, "pmcring: cannot start a session: %s\n",
			strerror(err));
	}
}

/* The child waits for the session to be enabled before it execs. */
struct child {
	pid_t	pid;
	int	go_fd;		/* write end: one byte = exec now */
	bool	exited;
	int	status;
};

static int child_start(struct child *ch, char **cmd)
{
	sigset_t stops, old;
	int p[2], err;
	char go;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	/*
	 * Until its stop signals have their default action, the child must
	 * not take one: our handler would run in it, note the stop in its
	 * copy of our memory, and the command would exec and run on, the
	 * signal gone (seen: "did not exit within 10 s of SIGTERM" under load).
	 * Blocked here, a signal sent to the child waits for the unblock and
	 * then acts on it with the default action, which is what the command
	 * gets across exec from our handler (as with perf record and
	 * timeout(1), also when we were started with SIGINT ignored, as a
	 * background job of a script is).
	 */
	sigemptyset(&stops);
	sigaddset(&stops, SIGINT);
	sigaddset(&stops, SIGTERM);
	sigaddset(&stops, SIGHUP);
	sigprocmask(SIG_BLOCK, &stops, &old);
	ch->pid = fork();
	if (ch->pid < 0) {
		err = -errno;
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(p[0]);
		close(p[1]);
		return err;
	}
	if (ch->pid == 0) {
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (catch_hup)		/* else nohup's SIG_IGN stays */
			signal(SIGHUP, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		close(p[1]);
		if (read(p[0], &go, 1) != 1)
			_exit(127);	/* recording never started */
		/* ignored ones survive exec */
		signal(SIGPIPE, SIG_DFL);
		signal(SIGXFSZ, SIG_DFL);
		execvp(cmd[0], cmd);
		fprintf(stderr, "pmcring: cannot run %s: %s\n", cmd[0],
			strerror(errno));
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(p[0]);
	ch->go_fd = p[1];
	return 0;
}

static void child_go(struct child *ch)
{
	if (ch->go_fd >= 0 && write(ch->go_fd, "g", 1) != 1)
		fprintf(stderr, "pmcring: cannot start the command\n");
	close(ch->go_fd);
	ch->go_fd = -1;
}

static void child_abort(struct child *ch)
{
	if (ch->pid <= 0)
		return;
	close(ch->go_fd);	/* EOF: it exits without exec */
	ch->go_fd = -1;
	waitpid(ch->pid, NULL, 0);
	ch->pid = 0;
}

static bool child_poll(struct child *ch)
{
	if (ch->pid > 0 && !ch->exited &&
	    waitpid(ch->pid, &ch->status, WNOHANG) == ch->pid)
		ch->exited = true;
	return ch->exited;
}

/*
 * The recording has ended: wait for the command, which was sent @sig (or
 * got it from the terminal), at most CHILD_GRACE_MS, then kill it.
 */
static void child_reap(struct child *ch, int sig)
{
	/*
	 * A deadline, not a count of naps: under load each 10 ms nap
	 * oversleeps (1000 of them took 14 s, not 10: TCG, both vCPUs
	 * busy, a command ignoring SIGTERM).
	 */
	uint64_t end = now_ns(CLOCK_MONOTONIC) + CHILD_GRACE_MS * 1000000ull;

	while (!child_poll(ch) && now_ns(CLOCK_MONOTONIC) < end)
		usleep(10000);
	if (child_poll(ch))
		return;
	fprintf(stderr, "pmcring: the command did not exit within %u s of "
		"SIG%s: killing it\n", CHILD_GRACE_MS / 1000, sigabbrev_np(sig) ?
		sigabbrev_np(sig) : "?");
	kill(ch->pid, SIGKILL);
	if (waitpid(ch->pid, &ch->status, 0) == ch->pid)
		ch->exited = true;
}

/* The command's status as a shell gives it: 128 + signal when killed. */
static int child_status(const struct child *ch)
{
	if (!ch->exited)
		return 0;
	if (WIFEXITED(ch->status))
		return WEXITSTATUS(ch->status);
	if (WIFSIGNALED(ch->status))
		return 128 + WTERMSIG(ch->status);
	return 1;
}

/* --generate: the deterministic load, from a thread so the rings drain. */
struct gen {
	struct pmcring		*s;
	struct pmcring_generate	g;
	uint64_t		rate;	/* records per CPU and second, 0: all */
	pthread_t		th;
	volatile int		done;
	int			err;
};

/* Paced generation: a share of the records every GEN_TICK_NS. */
#define GEN_TICK_NS	10000000ull

static void *gen_main(void *arg)
{
	struct gen *gen = arg;
	struct pmcring_generate g = gen->g;
	uint64_t left = gen->g.count, chunk, next;
	struct timespec ts;

	if (!gen->rate) {
		gen->err = pmcring_generate(gen->s, &gen->g);
		goto out;
	}
	chunk = gen->rate * GEN_TICK_NS / 1000000000ull;
	chunk = chunk ? chunk : 1;
	next = now_ns(CLOCK_MONOTONIC);
	while (left && !gen->err) {
		g.count = left < chunk ? left : chunk;
		gen->err = pmcring_generate(gen->s, &g);
		left -= g.count;
		next += GEN_TICK_NS * g.count / chunk;
		ts.tv_sec = (time_t)(next / 1000000000ull);
		ts.tv_nsec = (long)(next % 1000000000ull);
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL);
	}
out:
	__atomic_store_n(&gen->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Add the sampling counters; false: an error was reported. */
static bool add_counters(struct pmcring *s, struct rec_opts *o,
			 struct fmt_opts *fo)
{
	struct rec_event def[2];
	struct rec_event *ev = o->events;
	unsigned int n = o->nr_events, i;
	int err;

	if (!o->events_given) {
		if (o->gen_count)
			return true;	/* the generated load alone */
		/* cycles; cpu-clock where there is no PMU (VMs) */
		rec_event_lookup("cycles", &def[0]);
		rec_event_lookup("cpu-clock", &def[1]);
		ev = def;
		n = 2;
	}
	for (i = 0; i < n; i++) {
		struct pmcring_counter c;

		memset(&c, 0, sizeof(c));
		c.type = ev[i].type;
		c.config = ev[i].config;
		c.rate = o->period ? o->period : o->freq ? o->freq :
			 REC_DEFAULT_FREQ;
		c.flags = (o->period ? 0 : PMCRING_CTR_F_FREQ) | ev[i].flags;
		memcpy(c.name, ev[i].name, sizeof(c.name));
		c.name[sizeof(c.name) - 1] = '\0';
		err = pmcring_add_counter(s, &c);
		if (!err) {
			fo->counters[fo->nr_counters].pmcid = c.pmcid;
			memcpy(fo->counters[fo->nr_counters].name, c.name,
			       PMCRING_NAME_MAX);
			fo->nr_counters++;
			if (!o->events_given)
				return true;	/* one default is enough */
			continue;
		}
		if (!o->events_given && i == 0)
			continue;		/* no PMU: try cpu-clock */
		if (err == -EOPNOTSUPP || err == -ENOTTY || err == -ENOSYS) {
			fprintf(stderr, "pmcring: warning: this module cannot "
				"sample yet (%s): recording without samples\n",
				strerror(-err));
			return true;
		}
		fprintf(stderr, "pmcring: cannot sample %s: %s%s\n", ev[i].name,
			strerror(-err),
			err == -ENOENT || err == -ENODEV ?
			" (this machine has no such counter: `pmcring list` "
			"shows the events it has)" : "");
		return false;
	}
	return true;
}

/* "prog arg1 arg2", "pid 42" or "system-wide" */
static void target_name(const struct rec_opts *o, char *buf, size_t sz)
{
	size_t n = 0;
	int i;

	if (o->cmd) {
		buf[0] = '\0';
		for (i = 0; i < o->cmd_argc && n + 1 < sz; i++)
			n += (size_t)snprintf(buf + n, sz - n, "%s%s",
					      i ? " " : "", o->cmd[i]);
	} else if (o->pid) {
		snprintf(buf, sz, "pid %d", (int)o->pid);
	} else if (o->tid) {
		snprintf(buf, sz, "tid %d", (int)o->tid);
	} else if (o->cpu_list) {
		snprintf(buf, sz, "system-wide, CPUs %s", o->cpu_list);
	} else if (o->system_wide) {
		snprintf(buf, sz, "system-wide");
	} else {
		snprintf(buf, sz, "generated");
	}
}

struct status {
	bool		on;
	uint64_t	start, last, last_records, last_bytes;
	bool		shown;
	bool		stopping;	/* draining after the stop */
};

static void status_update(struct status *st, const struct consumer *c,
			  uint64_t lost, bool force)
{
	uint64_t now = now_ns(CLOCK_MONOTONIC), dt = now - st->last;
	double secs = (double)dt / 1e9;

	if (!st->on || (!force && dt < STATUS_NS))
		return;
	fprintf(stderr, "\r\033[K[pmcring] %.1f s  %.0f records/s  "
		"%.2f MB/s  drops %" PRIu64 "%s",
		(double)(now - st->start) / 1e9,
		secs > 0 ? (double)(c->st.records - st->last_records) / secs : 0,
		secs > 0 ? (double)(c->st.bytes - st->last_bytes) / secs / 1e6 : 0,
		lost,	/* records the kernel dropped */
		st->stopping ? "  stopping: draining the rings "
			       "(signal again: stop at once)" : "");
	st->shown = true;
	st->last = now;
	st->last_records = c->st.records;
	st->last_bytes = c->st.bytes;
}

/* Records the kernel dropped, over all CPUs; *backwards: clamped ones. */
static uint64_t total_lost(struct pmcring *s, uint64_t *backwards)
{
	struct pmcring_cpu_stats cs = { .sz = sizeof(cs) };
	uint64_t lost = 0, back = 0;
	unsigned int i;

	for (i = 0; i < pmcring_nr_cpus(s); i++) {
		pmcring_cpu_buf_stats(pmcring_cpu_buf(s, i), &cs);
		lost += cs.lost;
		back += cs.backwards;
	}
	if (backwards)
		*backwards = back;
	return lost;
}

static void write_error(const struct fmt_opts *fo, const struct consumer *c,
			int err)
{
	const char *path = c->err_path ? c->err_path : fo->path;

	if (err == -ENOSPC)
		fprintf(stderr, "pmcring: %s: no space left on device: stopped; "
			"what was written is a valid prefix\n", path);
	else if (err == -ESPIPE)	/* only barman refuses a pipe */
		fprintf(stderr, "pmcring: %s: not seekable (a pipe): a barman "
			"file's header is rewritten in place; write it to a "
			"file\n", path);
	else
		fprintf(stderr, "pmcring: writing %s: %s\n", path,
			strerror(-err));
	/*
	 * Taken from the rings (their space may be back already) but in a
	 * batch that did not land: lost.  A blob batch may have put some of
	 * its segments on disk, so this is an upper bound.
	 */
	if (c->abort_err)
		fprintf(stderr, "pmcring: %s: cannot cut the files back to "
			"whole entries: %s\n", fo->path, strerror(-c->abort_err));
	if (c->st.records > c->st.written)
		fprintf(stderr, "pmcring: %" PRIu64 " records taken from the "
			"rings were not all written: lost\n",
			c->st.records - c->st.written);
}

struct recorder {
	struct rec_opts		o;
	struct fmt_opts		fo;
	struct pmcring		*s;
	struct pmcring_merge	*m;
	struct fmt_writer	*w;
	struct ldms_pub		*pub;		/* --ldms */
	struct consumer		c;
	bool			c_inited;
	bool			io_auto;	/* consumer_io_pick() chose */
	struct child		ch;
	struct gen		gen;
	bool			gen_started;
	char			target[512];
	uint64_t		t_enable;	/* CLOCK_MONOTONIC ns */
};

/* Why recording ends (enum stop_why); the first one wins. */
enum stop_why { STOP_NONE, STOP_SIGNAL, STOP_DURATION, STOP_CHILD,
		STOP_PID_GONE, STOP_HUP, STOP_GENERATED, STOP_LDMS };

static enum stop_why stop_check(struct recorder *r, uint64_t end_at)
{
	if (stop_signal)
		return STOP_SIGNAL;
	if (r->ch.pid > 0 && child_poll(&r->ch))
		return STOP_CHILD;
	/* kill(2) of a thread id signals its process: ESRCH once it ended. */
	if ((r->o.pid || r->o.tid) &&
	    kill(r->o.pid ? r->o.pid : r->o.tid, 0) && errno == ESRCH)
		return STOP_PID_GONE;
	if (end_at && now_ns(CLOCK_MONOTONIC) >= end_at)
		return STOP_DURATION;
	if (consumer_hup(&r->c))
		return STOP_HUP;
	if (r->gen_started && __atomic_load_n(&r->gen.done, __ATOMIC_ACQUIRE))
		return STOP_GENERATED;
	/* the ldmsd went away: stop, as on a full disk, the file ended */
	if (r->pub && ldms_pub_gone(r->pub))
		return STOP_LDMS;
	return STOP_NONE;
}

/*
 * The command gets the signal that stopped the recording (SIGTERM for
 * --duration), as `timeout` and `perf record` do; not a ^C, which the
 * terminal sent it already.  Returns the signal it was sent, or 0.
 */
static int stop_child(struct recorder *r, enum stop_why why)
{
	int sig;

	if (r->ch.pid <= 0 || r->ch.exited)
		return 0;
	if (why == STOP_SIGNAL)
		sig = stop_signal;
	else if (why == STOP_DURATION)
		sig = SIGTERM;
	else
		return 0;
	if (!(why == STOP_SIGNAL && signal_from_tty))
		kill(r->ch.pid, sig);
	return sig;
}

/*
 * Drain until a stop condition holds, checked between drains of at most
 * DRAIN_MAX records: the rings may refill as fast as they are drained (a
 * system-wide session records the consumer's own writes), so the stop must
 * not wait for them to run dry.  Then DISABLE: when it returns every record
 * of the session is committed (pmcring_dev_disable()), so the final drain
 * ends, within one set of full rings; a second signal cuts it short.  The
 * end of the file (a DROPNOTIFY for each ring with drops none of its own
 * announced, CLOSELOG, the final header) is written either way.
 */
/*
 * Does @pid write to our terminal?  Its standard output or error is the
 * terminal that our standard error is.  When that cannot be read (another
 * user's process, no /proc), assume it does.
 */
static bool shares_terminal(pid_t pid)
{
	struct stat ours, theirs;
	char path[64];
	int fd;

	if (fstat(STDERR_FILENO, &ours))
		return true;
	for (fd = 1; fd <= 2; fd++) {
		snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, fd);
		if (stat(path, &theirs))
			return errno != ENOENT;
		if (theirs.st_rdev == ours.st_rdev && S_ISCHR(theirs.st_mode))
			return true;
	}
	return false;
}

/*
 * The live status line, as perf does it: only where nobody else writes.
 * A recorded command shares our terminal, so it gets none (perf record
 * prints nothing while the command runs either); a -p target gets one
 * unless its output goes to the same terminal.  Drawn with "\r\033[K" it
 * would overwrite their lines.
 */
static bool status_wanted(const struct recorder *r)
{
	if (r->o.quiet || !isatty(STDERR_FILENO))
		return false;
	if (r->o.cmd)
		return false;
	/* -t TID as -p PID: /proc/TID/fd are its process's */
	if ((r->o.pid || r->o.tid) &&
	    shares_terminal(r->o.pid ? r->o.pid : r->o.tid))
		return false;
	return true;
}

static int record_loop(struct recorder *r, int *child_sig)
{
	struct status st = { 0 };
	uint64_t n = 0, end_at = 0, idle = 0;
	enum stop_why why = STOP_NONE;
	sig_atomic_t sigs;
	int err = 0, ret;

	st.on = status_wanted(r);
	st.start = st.last = now_ns(CLOCK_MONOTONIC);
	if (r->o.duration_ms)
		end_at = st.start + r->o.duration_ms * 1000000ull;
	if (r->pub && end_at)	/* the same clock as pub_now_ns() */
		ldms_pub_stop_at(r->pub, end_at);
	for (;;) {
		err = consumer_drain(&r->c, DRAIN_MAX, &n);
		if (err)
			break;
		status_update(&st, &r->c, total_lost(r->s, NULL), false);
		why = stop_check(r, end_at);
		if (why != STOP_NONE)
			break;
		if (n == DRAIN_MAX)
			continue;	/* more is ready: no wait */
		ret = consumer_wait(&r->c, consumer_timeout_ns(&r->c));
		if (ret < 0) {
			err = ret;
			break;
		}
	}
	sigs = nr_signals;
	*child_sig = stop_child(r, why);
	pmcring_disable(r->s);
	/*
	 * An interrupted writer may publish a little late: two empty rounds.
	 * What the rings and the staging hold can take a while to write (a
	 * slow disk, an ldmsd publishing at its own pace): the status line
	 * says so, and how to cut it short.
	 */
	st.stopping = true;
	/* at once: a write to a slow sink may block for seconds */
	status_update(&st, &r->c, total_lost(r->s, NULL), true);
	while (!err && idle < 2 && nr_signals == sigs) {
		err = consumer_drain(&r->c, DRAIN_MAX, &n);
		status_update(&st, &r->c, total_lost(r->s, NULL), false);
		idle = n ? 0 : idle + 1;
		if (!n)
			consumer_wait(&r->c, 1000000);
	}
	if (nr_signals != sigs)
		fprintf(stderr, "%spmcring: stopped at once: records not yet "
			"drained are not in the file\n", st.shown ? "\n" : "");
	if (!err) {
		uint64_t end_ts = 0;

		pmcring_clock(r->s, &end_ts);
		/*
		 * Drops after a ring's last record: no DROPNOTIFY of the
		 * ring announces them (one comes only before a record that
		 * fits), so the file gets one of ours, at the end.
		 */
		err = consumer_unannounced(&r->c, end_ts);
		if (!err)
			err = consumer_end(&r->c, end_ts);
	}
	st.stopping = false;	/* drained: the last line is the total */
	status_update(&st, &r->c, total_lost(r->s, NULL), true);
	if (st.shown)
		fputc('\n', stderr);
	return err;
}

/*
 * FILE.periods beside a pmclog file, when the rings can have samples: their
 * periods from PERIOD records (frequency mode), or the fixed period of
 * -c, which the file's PMCALLOCATEDYN does not hold.
 */
static bool record_periods(uint64_t types)
{
	return !types || (types & PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN));
}

static int record_setup(struct recorder *r)
{
	struct pmcring_opts so = { .sz = sizeof(so) };
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	enum consumer_io pick;
	bool use_uring;
	int err;

	/*
	 * The daemon must be there before anything is recorded, a command
	 * started or the module asked: LDMS missing is told first.  (The
	 * publisher keeps &r->fo; its clock facts are set below, before
	 * the first record.)
	 */
	if (r->o.ldms_given) {
		r->pub = ldms_pub_open(&r->o.ldms, &r->fo);
		if (!r->pub)
			return 1;
		/*
		 * A stop drains everything into the daemon, at its pace; the
		 * second signal ends every wait for it, as it ends the drain.
		 */
		ldms_pub_stop_on(r->pub, &nr_signals, 2);
	}
	so.data_pages = r->o.buffer_pages;
	so.types = r->o.types;
	/* --generate: the generated records alone, the same in every run */
	if (r->o.gen_count && !so.types)
		so.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED);
	so.callchain_depth = r->o.callchain_depth;
	if (r->o.system_wide)
		so.flags |= PMCRING_CFG_F_SYSTEM_WIDE;
	if (r->o.pid) {
		so.flags |= PMCRING_CFG_F_PID;
		so.pid = r->o.pid;
	}
	if (r->o.tid) {
		so.flags |= PMCRING_CFG_F_PID | PMCRING_CFG_F_TID;
		so.pid = r->o.tid;
	}
	if (r->o.cpu_list) {
		so.flags |= PMCRING_CFG_F_CPUS;
		so.cpus = r->o.cpus;
		so.cpus_size = r->o.cpus_size;
	}
	if (r->o.cmd) {
		err = child_start(&r->ch, r->o.cmd);
		if (err) {
			fprintf(stderr, "pmcring: fork: %s\n", strerror(-err));
			return 1;
		}
		so.flags |= PMCRING_CFG_F_PID;
		so.pid = r->ch.pid;
	}
	/* a sample's period goes with it (frequency mode: PERIOD records) */
	if (so.types & PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN))
		so.types |= PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD);
	r->s = pmcring_new(&so);
	/* a module without PERIOD refuses the bit: its samples have none */
	if (!r->s && errno == EINVAL && so.types != PMCRING_TYPES_ALL &&
	    (so.types & PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD)) &&
	    !(r->o.types & PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD))) {
		so.types &= ~PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD);
		r->s = pmcring_new(&so);
	}
	if (!r->s) {
		session_error(&r->o, errno);
		return 1;
	}
	/* INITIALIZE's time: before any record, PMCALLOCATE included */
	if (pmcring_clock(r->s, &r->fo.start_ns))
		r->fo.start_ns = now_ns(CLOCK_MONOTONIC);
	clock_gettime(CLOCK_REALTIME, &r->fo.start_rt);
	if (!add_counters(r->s, &r->o, &r->fo))
		return 1;
	mo.max_delay_ns = WAIT_MS * 1000000ull;
	/* a CPU bursting while another is slow: user memory, not drops */
	if (r->o.staging_given && !r->o.staging_mb)
		mo.flags |= PMCRING_MERGE_F_NO_STAGING;
	else if (r->o.staging_given)
		mo.staging_bytes = r->o.staging_mb << 20;
	r->m = pmcring_merge_new_session(r->s, &mo);
	if (!r->m) {
		fprintf(stderr, "pmcring: merge: %s\n", strerror(errno));
		return 1;
	}

	/* the facts of INITIALIZE / clock_info / TIMING */
	target_name(&r->o, r->target, sizeof(r->target));
	r->fo.kind = r->o.kind;
	r->fo.path = r->o.output ? r->o.output : default_output(r->o.kind);
	/* -o none: the consumer's pmclog goes nowhere, LDMS gets it all */
	if (r->o.no_file)
		r->fo.path = "/dev/null";
	/* perf's perf.data.old: an earlier recording is kept, renamed */
	err = r->o.no_file ? 0 : out_keep_old(r->fo.path);
	if (err)
		fprintf(stderr, "pmcring: %s.old: %s: writing over %s\n",
			r->fo.path, strerror(-err), r->fo.path);
	/* a build id list left by an earlier recording of that name */
	if (r->fo.kind == FMT_PMCLOG && !r->o.no_file)
		buildid_sidecar_remove(r->fo.path);
	/* and the LDMS counts of one (rewritten below with --ldms) */
	if (!r->o.no_file)
		ldms_sidecar_remove(r->fo.path);
	r->fo.nr_cpus = pmcring_nr_cpus(r->s);
	r->fo.target = r->target;
	cpuid_string(r->fo.cpuid, sizeof(r->fo.cpuid));
	r->fo.sample_rate = r->o.period ? 0 : (uint32_t)(r->o.freq ? r->o.freq :
					   REC_DEFAULT_FREQ);
	/* no counter (-e none, or none the machine counts): no sample */
	r->fo.periods = r->fo.nr_counters && record_periods(so.types);
	/* --generate, or --types naming them (a bench module's records) */
	r->fo.keep_generated = r->o.gen_count != 0 ||
		(r->o.types & PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED));
	r->fo.bm_channel = r->o.bm_channel;
	r->fo.container = r->o.container;
	memcpy(r->fo.streams, r->o.streams, sizeof(r->fo.streams));
	r->fo.nr_streams = r->o.nr_streams;
	r->fo.blob_json = r->o.blob_json;
	r->fo.blob_timing = r->o.timing;
	r->fo.roll_bytes = r->o.roll_bytes;
	r->fo.roll_secs = r->o.roll_secs;

	r->w = fmt_writer_new(&r->fo);
	if (!r->w)
		return 1;
	/*
	 * neither --uring nor --no-uring: the faster for the file system;
	 * with --direct-io, io_uring with several O_DIRECT writes in flight
	 * except on tmpfs (Documentation/performance.rst)
	 */
	r->io_auto = !r->o.uring && !r->o.no_uring;
	pick = !r->io_auto ? CONSUMER_IO_SYNC : r->o.direct_io ?
	       consumer_io_pick_direct(r->fo.path) :
	       consumer_io_pick(r->fo.path);
	use_uring = r->o.uring || pick != CONSUMER_IO_SYNC;
	err = consumer_init(&r->c, r->m, r->fo.nr_cpus, r->w, use_uring,
			    pmcring_fd(r->s));
	if (err && use_uring) {	/* ENOSYS, EPERM, ENOMEM (memlock) */
		fprintf(stderr, "pmcring: io_uring unavailable (%s): using "
			"read/write\n", strerror(-err));
		err = consumer_init(&r->c, r->m, r->fo.nr_cpus, r->w, false,
				    pmcring_fd(r->s));
	}
	if (err) {
		fprintf(stderr, "pmcring: consumer: %s\n", strerror(-err));
		return 1;
	}
	r->c_inited = true;
	/* io_uring while a CPU is idle for its worker, else pwritev() */
	if (pick == CONSUMER_IO_IDLE && r->c.use_uring &&
	    consumer_set_idle(&r->c)) {
		fprintf(stderr, "pmcring: consumer: no idle CPU choice\n");
		return 1;
	}
	if (r->o.direct_io) {
		err = consumer_set_direct(&r->c, CONSUMER_DIO_DEPTH);
		if (err) {
			fprintf(stderr, "pmcring: consumer: %s\n",
				strerror(-err));
			return 1;
		}
	}
	r->c.pub = r->pub;
	/*
	 * perf's enable on exec: the command's samples from its exec on
	 * (when PROCEXEC is recorded to say when that is)
	 */
	if (r->o.cmd && (!so.types ||		/* 0: all */
			 (so.types & PMCRING_TYPE_BIT(PMCRING_TYPE_PROCEXEC))))
		r->c.until_exec = (uint32_t)r->ch.pid;
	err = consumer_begin(&r->c);
	if (err == -EINVAL && r->c.dio) {
		fprintf(stderr, "pmcring: --direct-io: %s takes no O_DIRECT\n",
			r->fo.path);
		return 1;
	}
	if (err) {
		write_error(&r->fo, &r->c, err);
		return 1;
	}
	return 0;
}

static int record_start(struct recorder *r)
{
	int err = pmcring_enable(r->s);

	r->t_enable = now_ns(CLOCK_MONOTONIC);
	if (err) {
		fprintf(stderr, "pmcring: enable: %s\n", strerror(-err));
		return 1;
	}
	if (r->o.cmd)
		child_go(&r->ch);
	if (r->o.gen_count) {
		r->gen.s = r->s;
		r->gen.g.count = r->o.gen_count;
		r->gen.g.size = r->o.gen_size;
		r->gen.rate = r->o.gen_rate;
		r->gen.g.flags = PMCRING_GEN_F_TASK;
		if (pthread_create(&r->gen.th, NULL, gen_main, &r->gen)) {
			fprintf(stderr, "pmcring: cannot start the generator\n");
			return 1;
		}
		r->gen_started = true;
	}
	return 0;
}

static void record_cleanup(struct recorder *r)
{
	if (r->gen_started)
		pthread_join(r->gen.th, NULL);
	/* A command that was never told to start exits without exec. */
	if (r->ch.pid > 0 && !r->ch.exited && r->ch.go_fd >= 0)
		child_abort(&r->ch);
	if (r->c_inited)
		consumer_fini(&r->c);
	ldms_pub_free(r->pub);
	fmt_writer_free(r->w);
	pmcring_merge_free(r->m);
	pmcring_free(r->s);
	rec_opts_free(&r->o);
}

/*
 * perf record's rule: a frequency over kernel.perf_event_max_sample_rate
 * (which the kernel lowers itself when sampling interrupts take too long,
 * as they do under emulation) is lowered to it, with a warning.  The
 * module, like perf_event_open(), refuses a higher one with EINVAL.
 */
static void rec_cap_freq(struct rec_opts *o)
{
	uint64_t want = o->freq ? o->freq : REC_DEFAULT_FREQ;
	unsigned long max = 0;
	FILE *f;

	if (o->period)
		return;
	f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "r");
	if (!f)
		return;
	if (fscanf(f, "%lu", &max) != 1)
		max = 0;
	fclose(f);
	if (!max || want <= max)
		return;
	if (!o->quiet)
		fprintf(stderr, "pmcring: warning: %" PRIu64 " Hz is over "
			"the kernel's limit, %lu Hz: sampling at %lu Hz (the "
			"kernel lowers kernel.perf_event_max_sample_rate when "
			"sampling interrupts take too long; raise it to go "
			"faster)\n", want, max, max);
	o->freq = max;
}

/*
 * --ldms: wait for the daemon's acknowledgements (timeout=), disconnect,
 * and say what was published.  1 if anything was not delivered for sure:
 * records after the daemon went away, messages it refused, or published
 * and not answered.
 */
static int ldms_report(struct recorder *r)
{
	struct ldms_pub_stats st;
	struct stat pst;
	uint64_t unacked;
	int err;

	ldms_pub_close(r->pub);
	ldms_pub_get_stats(r->pub, &st);
	unacked = st.published - st.acked - st.rejected;
	if (!r->o.quiet || st.gone || unacked || st.undelivered ||
	    st.rejected)
		fprintf(stderr, "pmcring: --ldms %s: %" PRIu64 " records "
			"published in %" PRIu64 " messages, %" PRIu64
			" acknowledged by the daemon, "
			"%" PRIu64 " refused by it, %" PRIu64 " not "
			"acknowledged, %" PRIu64 " records undelivered (daemon "
			"gone), %" PRIu64 " waits for send quota, %" PRIu64
			" times connected again%s\n",
			ldms_pub_name(r->pub), st.published,
			st.messages, st.acked, st.rejected, unacked, st.undelivered,
			st.quota_waits, st.reconnects,
			st.no_msg ? "; JSON PERIODs ride on their callchains" :
			"");
	/* the same counts next to the file, for `pmcring stat` */
	if (!r->o.no_file && !stat(r->fo.path, &pst) &&
	    (S_ISREG(pst.st_mode) || S_ISDIR(pst.st_mode))) {
		err = ldms_pub_sidecar(r->pub, r->fo.path);
		if (err)
			fprintf(stderr, "pmcring: %s.ldms: %s\n", r->fo.path,
				strerror(-err));
	}
	return st.gone || unacked || st.undelivered || st.rejected;
}

int cmd_record(int argc, char **argv)
{
	struct recorder *r = calloc(1, sizeof(*r));
	struct sigaction sa = { .sa_sigaction = on_signal,
				.sa_flags = SA_SIGINFO }, hup;
	int child_sig = 0;
	char *bid_log = NULL, *ks_rec = NULL;
	struct stat kst;
	char err[256];
	int ret;

	if (!r)
		return 1;
	r->ch.go_fd = -1;
	ret = rec_opts_parse(&r->o, argc, argv, err, sizeof(err));
	if (ret) {
		if (ret == 3)
			cmd_version(stdout);
		if (ret == 1)
			rec_usage(stdout);
		else
			fprintf(stderr, "pmcring record: %s\n", err);
		rec_opts_free(&r->o);
		free(r);
		return ret == 1 || ret == 3 ? 0 : 2;
	}
	rec_cap_freq(&r->o);
	/* no SA_RESTART: a signal ends the wait at once */
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	/*
	 * A hangup (the terminal or the ssh session gone) finishes the files
	 * as SIGTERM does and is passed on to the command, as timeout(1)
	 * does; its default action left files without their end (no
	 * CLOSELOG, no final barman header, no FILE.buildids) and the command
	 * running.  Under nohup (SIGHUP ignored) it stays ignored, for the
	 * command too.
	 */
	if (!sigaction(SIGHUP, NULL, &hup) && hup.sa_handler != SIG_IGN) {
		catch_hup = true;
		sigaction(SIGHUP, &sa, NULL);
	}
	signal(SIGPIPE, SIG_IGN);
	/*
	 * Past RLIMIT_FSIZE a write gets EFBIG instead of the default
	 * SIGXFSZ, which would kill us before the files are cut back to
	 * whole records (fmt_abort()) and the loss is reported.
	 */
	signal(SIGXFSZ, SIG_IGN);

	ret = record_setup(r);
	if (!ret)
		ret = record_start(r);
	if (!ret) {
		int e = record_loop(r, &child_sig);

		if (e) {
			write_error(&r->fo, &r->c, e);
			ret = 1;
		}
		if (r->gen_started && r->gen.err)
			fprintf(stderr, "pmcring: generate: %s\n",
				strerror(-r->gen.err));
	}
	if (!r->o.quiet && !ret) {
		double secs = (double)(now_ns(CLOCK_MONOTONIC) - r->t_enable) / 1e9;
		uint64_t back, lost = total_lost(r->s, &back);
		char dio[48] = "", how[192];

		/* --direct-io: and how many writes the consumer kept in flight */
		if (r->c.dio)
			snprintf(dio, sizeof(dio), r->c.use_uring ?
				 ", O_DIRECT, %u in flight" : ", O_DIRECT",
				 r->c.depth);
		/* consumer_set_idle(): how many batches went each way */
		if (r->c.idle && r->c.st.uring_batches &&
		    r->c.st.uring_batches < r->c.st.batches)
			snprintf(how, sizeof(how), "io_uring for %" PRIu64
				 " of %" PRIu64 " batches, read/write for "
				 "small ones, those of many writes or while "
				 "no CPU was idle",
				 r->c.st.uring_batches,
				 r->c.st.batches);
		else
			snprintf(how, sizeof(how), "%s",
				 r->c.use_uring && (!r->c.idle ||
						    r->c.st.uring_batches) ?
				 "io_uring" : "read/write");
		fprintf(stderr, "pmcring: %" PRIu64 " records, %" PRIu64
			" bytes written to %s (%" PRIu64 " in the file) in "
			"%.3f s (%.0f records/s, %.1f MB/s, %s%s%s); %" PRIu64
			" lost\n", r->c.st.records, r->c.st.bytes, r->fo.path,
			r->c.st.items, secs,
			(double)r->c.st.records / secs,
			(double)r->c.st.bytes / secs / 1e6,
			how, r->io_auto ? ", auto" : "", dio, lost);
		/* what "in the file" counts, when it is not the records */
		if (r->c.st.items != r->c.st.records)
			fprintf(stderr, "pmcring: in the file: %s\n",
				r->fo.kind == FMT_PMCLOG ? "pmclog records; "
				"PERIODs go to FILE.periods, pmcring's own "
				"types have no pmclog record" :
				r->fo.kind == FMT_BARMAN ? "barman frames: "
				"samples, switches, annotations, losses" :
				"blob messages, the repeats of a roll "
				"included");
		/* the merge handed them out in order, the file has them as is */
		if (back)
			fprintf(stderr, "pmcring: warning: %" PRIu64 " records "
				"had a timestamp before the one before them on "
				"their CPU: merged in order, written with their "
				"own timestamp\n", back);
	}
	if (r->pub && ldms_report(r))
		ret = ret ? ret : 1;
	/* the kernel's symbols, for report to name kernel frames */
	if (!ret && !stat(r->fo.path, &kst) && (S_ISREG(kst.st_mode) ||
						 S_ISDIR(kst.st_mode)))
		ks_rec = strdup(r->fo.path);
	/* the build ids of the files it maps, once the module is let go */
	if (!ret && r->fo.kind == FMT_PMCLOG && !r->o.no_file)
		bid_log = strdup(r->fo.path);
	/* The exit status is the command's, as with time(1), unless we failed. */
	if (r->ch.pid > 0 && r->ch.go_fd < 0) {
		if (!child_sig && !child_poll(&r->ch)) {	/* we failed */
			child_sig = SIGTERM;
			kill(r->ch.pid, child_sig);
		}
		child_reap(&r->ch, child_sig);
		if (!ret)
			ret = child_status(&r->ch);
	}
	record_cleanup(r);
	free(r);
	if (ks_rec)
		kallsyms_sidecar_record(ks_rec);
	free(ks_rec);
	if (bid_log)
		buildid_sidecar_record(bid_log);
	free(bid_log);
	return ret;
}
