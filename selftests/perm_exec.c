// SPDX-License-Identifier: GPL-2.0
/*
 * Description: revocation at exec, as perf_event_exit_task() from
 * begin_new_exec().  A child of the recording process execs a setuid-root
 * helper (/usr/local/libexec/pmcring-suid-spin, which spins in user mode).
 * A session of nobody (no CAP_PERFMON) gets nothing of the child from that
 * exec on (no PROCEXEC with the helper's path, no MAP_IN, no sample, no
 * switch, no exit) but one PMCDETACH record with its pid; a session of
 * root, following a child that dropped to nobody before the same exec,
 * keeps its PROCEXEC, switches and exit (samples end for both: perf removes
 * the inherited counter from a task turned non-dumpable).  And a child that
 * already runs the helper as root when nobody's session of its parent is
 * enabled (twice) is not followed at all.
 */
#include <errno.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

#define HELPER		"/usr/local/libexec/pmcring-suid-spin"
/* A copy of HELPER, not setuid, given CAP_NET_RAW as a file capability. */
#define FCAP_HELPER	"/tmp/pmcring-suid-spin-fcap"

/* What record_exec()'s child execs, and the exit status it wants of it. */
static const char *exec_path = HELPER;
static int exec_status;
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"

struct exec_seen {
	unsigned int	detach;		/* PMCDETACH of the child */
	unsigned int	exec;		/* PROCEXEC of the child, helper path */
	unsigned int	after;		/* child records after the exec/drop */
	unsigned int	cc_after;	/* of which CALLCHAIN */
};

/*
 * The pid a record of @type is about, from its fields @f (after the
 * header) in *@pid; -1 for a type that names none here.
 */
static int rec_pid(uint32_t type, const uint32_t *f, uint32_t *pid)
{
	switch (type) {
	case PMCRING_TYPE_PMCDETACH:
	case PMCRING_TYPE_PROCEXIT:
		*pid = f[1];
		return 0;
	case PMCRING_TYPE_PROCEXEC:
	case PMCRING_TYPE_MAP_IN:
	case PMCRING_TYPE_MAP_OUT:
	case PMCRING_TYPE_CALLCHAIN:
	case PMCRING_TYPE_SYSEXIT:
	case PMCRING_TYPE_PROC_CREATE:
		*pid = f[0];
		return 0;
	case PMCRING_TYPE_PROCCSW:
		*pid = f[3];
		return 0;
	}
	return -1;
}

/*
 * Records of @child: the drop notice, the exec, and what follows them (or
 * follows @mark, if earlier).
 */
static void scan(struct rt_sess *s, uint32_t child, struct exec_seen *n,
		 uint64_t mark)
{
	unsigned int cpu, pass;

	for (pass = 0; pass < 2; pass++) {
		for (cpu = 0; cpu < s->nr_cpus; cpu++) {
			struct rt_ring *r = &s->rings[cpu];
			uint64_t head = rt_head(r), pos = r->tail;
			uint64_t mask = r->size - 1;

			while (pos < head) {
				const uint8_t *rec = r->data + (pos & mask);
				const struct pmcring_rec_header *h = (const void *)rec;
				uint32_t len = PMCRING_HEADER_LEN(h->pl_header);
				uint32_t type = PMCRING_HEADER_TYPE(h->pl_header);
				/* pl_pid: first field of all these but CALLCHAIN's */
				const uint32_t *f = (const uint32_t *)(rec + 16);
				uint32_t pid = 0;

				if (len < 16 || len > PMCRING_RECORD_MAX)
					break;
				pos += PMCRING_RING_SPACE(len);
				if (rec_pid(type, f, &pid) || pid != child)
					continue;
				if (pass == 0) {
					if (type == PMCRING_TYPE_PMCDETACH) {
						n->detach++;
						mark = h->pl_tsc;
					}
					if (type == PMCRING_TYPE_PROCEXEC &&
					    strstr((const char *)rec + 40,
						   "pmcring-suid-spin")) {
						n->exec++;
						if (mark == UINT64_MAX)
							mark = h->pl_tsc;
					}
					continue;
				}
				if (h->pl_tsc > mark && type != PMCRING_TYPE_PMCDETACH &&
				    type != PMCRING_TYPE_PROCEXEC) {
					n->after++;
					n->cc_after += type == PMCRING_TYPE_CALLCHAIN;
				}
			}
		}
	}
}

/*
 * Record this process; a child (dropping to nobody first if @drop) execs
 * the setuid helper.  0, or the failing step.
 */
static int record_exec(int drop, struct exec_seen *n)
{
	struct pmcring_counter c = { 0 };
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;
	int go[2], status;
	pid_t child;
	char b = 0;

	memset(n, 0, sizeof(*n));
	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
	cfg.pid = getpid();
	if (rt_open_cfg(&s, &cfg, 1))
		return 1;
	c.type = PERF_TYPE_SOFTWARE;
	c.config = PERF_COUNT_SW_CPU_CLOCK;
	c.rate = 200000;
	if (rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c))
		return 2;
	if (pipe(go))
		return 3;
	child = fork();
	if (!child) {
		if (read(go[0], &b, 1) != 1)
			_exit(120);
		if (drop && pmcring_drop_privileges())
			_exit(121);
		execl(exec_path, exec_path, "300", NULL);
		_exit(122);
	}
	if (child < 0 || rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
		return 4;
	if (write(go[1], &b, 1) != 1)
		return 5;
	if (waitpid(child, &status, 0) != child)
		return 6;
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != exec_status) {
		printf("#   helper: status %#x (not setuid root?)\n", status);
		return 7;
	}
	scan(&s, child, n, UINT64_MAX);
	rt_close(&s);
	printf("#   %s: PMCDETACH %u, PROCEXEC %u, after it %u records (%u CALLCHAIN)\n",
	       drop ? "root session" : "nobody session", n->detach, n->exec,
	       n->after, n->cc_after);
	return 0;
}

/* Does @pid run with effective uid 0 (the helper's setuid took)? */
static int euid_root(pid_t pid)
{
	char path[64], line[256];
	unsigned int uid, euid;
	int root = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Uid: %u %u", &uid, &euid) == 2)
			root = euid == 0;
	fclose(f);
	return root;
}

/*
 * This process (nobody) has a child that already runs the setuid helper,
 * as root, when a session of this process is enabled, disabled and enabled
 * again: each ENABLE walks the live tree below the target.  Every record of
 * the child goes in @n->after.  0, or the failing step.
 */
static int record_setuid_child(struct exec_seen *n)
{
	struct pmcring_counter c = { 0 };
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;
	int status, i;
	pid_t child;

	memset(n, 0, sizeof(*n));
	child = fork();
	if (!child) {
		execl(HELPER, HELPER, "1500", NULL);
		_exit(122);
	}
	if (child < 0)
		return 1;
	for (i = 0; i < 500 && !euid_root(child); i++)
		usleep(10000);
	if (!euid_root(child))
		return 2;
	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
	cfg.pid = getpid();
	if (rt_open_cfg(&s, &cfg, 1))
		return 3;
	c.type = PERF_TYPE_SOFTWARE;
	c.config = PERF_COUNT_SW_CPU_CLOCK;
	c.rate = 200000;
	if (rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c))
		return 4;
	for (i = 0; i < 2; i++) {
		if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
			return 5;
		usleep(300000);
		rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	}
	if (waitpid(child, &status, 0) != child)
		return 6;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		printf("#   helper: status %#x (not setuid root?)\n", status);
		return 7;
	}
	scan(&s, child, n, 0);
	rt_close(&s);
	printf("#   nobody session, root child %d: %u records of it (%u CALLCHAIN)\n",
	       (int)child, n->after, n->cc_after);
	return 0;
}

struct child_seen {
	uint32_t	pid;
	unsigned int	n;
};

/* Records about one process (pl_pid as scan() reads it). */
static void child_each(const uint8_t *rec, uint32_t type, uint32_t len,
		       void *arg)
{
	const uint32_t *f = (const uint32_t *)(rec + 16);
	struct child_seen *c = arg;
	uint32_t pid;

	(void)len;
	if (type == PMCRING_TYPE_PROCFORK)
		pid = f[0] == c->pid ? f[0] : f[1];
	else if (rec_pid(type, f, &pid))
		return;
	c->n += pid == c->pid;
}

/*
 * This process (nobody) records itself; a child forked while the session
 * is enabled makes itself non-dumpable (PR_SET_DUMPABLE 0, unless
 * @dumpable) and then sleeps and wakes 200 times.  The records of the
 * child from the prctl() to its last wakeup go in *@n.  0, or the failing
 * step.
 */
static int record_nondumpable(int dumpable, unsigned int *n)
{
	struct pmcring_config cfg = { 0 };
	struct child_seen seen = { 0 };
	int to[2], from[2], status, i;
	struct rt_sess s;
	pid_t child;
	char b = 0;

	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
	cfg.pid = getpid();
	if (rt_open_cfg(&s, &cfg, 1))
		return 1;
	if (pipe(to) || pipe(from))
		return 2;
	if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
		return 3;
	child = fork();
	if (!child) {
		if (!dumpable && prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
			_exit(120);
		if (write(from[1], &b, 1) != 1 || read(to[0], &b, 1) != 1)
			_exit(121);
		for (i = 0; i < 200; i++)
			usleep(1000);
		if (write(from[1], &b, 1) != 1 || read(to[0], &b, 1) != 1)
			_exit(122);
		_exit(0);
	}
	if (child < 0 || read(from[0], &b, 1) != 1)
		return 4;
	/* Up to here the child was dumpable (or is the control). */
	if (rt_each(&s, child_each, &seen) < 0)
		return 5;
	seen.pid = child;
	seen.n = 0;
	if (write(to[1], &b, 1) != 1 || read(from[0], &b, 1) != 1)
		return 6;
	if (rt_each(&s, child_each, &seen) < 0)
		return 7;
	if (write(to[1], &b, 1) != 1 || waitpid(child, &status, 0) != child)
		return 8;
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	rt_close(&s);
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return 9;
	*n = seen.n;
	printf("#   %s child: %u records of it while it slept and woke\n",
	       dumpable ? "dumpable" : "non-dumpable", *n);
	return 0;
}

static struct exec_seen nobody_seen;

FIXTURE(exec) {
	struct pmcring_perm_state saved;
};

FIXTURE_SETUP(exec)
{
	struct stat st;

	self->saved = (struct pmcring_perm_state){ 0, PMCRING_UNSAVED };
	PMCRING_REQUIRE_DEV();
	if (stat(HELPER, &st) || st.st_uid || !(st.st_mode & S_ISUID))
		SKIP(return, "no setuid-root %s (make selftests puts it in build/vmroot/)",
		     HELPER);
	ASSERT_EQ(0, pmcring_perm_save(&self->saved));
}

FIXTURE_TEARDOWN(exec)
{
	pmcring_perm_restore(&self->saved);
}

/*
 * As nobody, in a child: record_exec() into nobody_seen.  0, or the
 * failing step.
 */
static int record_exec_as_nobody(void)
{
	int p[2], status;
	pid_t pid;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (pmcring_drop_privileges())
			_exit(100);
		status = record_exec(0, &nobody_seen);
		if (write(p[1], &nobody_seen, sizeof(nobody_seen)) < 0)
			_exit(101);
		_exit(status);
	}
	close(p[1]);
	status = read(p[0], &nobody_seen, sizeof(nobody_seen));
	close(p[0]);
	if (status != sizeof(nobody_seen) || waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/*
 * A copy of HELPER, mode 0755, at FCAP_HELPER, with CAP_NET_RAW permitted
 * and effective as a file capability if @fcap.  0, or -1 with errno.
 */
static int fcap_helper(int fcap)
{
	struct vfs_cap_data d = {
		.magic_etc = VFS_CAP_REVISION_2 | VFS_CAP_FLAGS_EFFECTIVE,
	};
	char buf[65536];
	int in, out;
	ssize_t n;

	d.data[CAP_TO_INDEX(CAP_NET_RAW)].permitted =
		CAP_TO_MASK(CAP_NET_RAW);
	unlink(FCAP_HELPER);
	in = open(HELPER, O_RDONLY);
	if (in < 0)
		return -1;
	out = open(FCAP_HELPER, O_WRONLY | O_CREAT | O_EXCL, 0755);
	if (out < 0) {
		close(in);
		return -1;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0)
		if (write(out, buf, n) != n)
			n = -1;
	close(in);
	if (close(out) || n < 0 || chmod(FCAP_HELPER, 0755))
		return -1;
	if (fcap && setxattr(FCAP_HELPER, "security.capability", &d,
			     XATTR_CAPS_SZ_2, 0))
		return -1;
	return 0;
}

/*
 * An exec that gives the child a file capability nobody lacks leaves it
 * dumpable, so perf keeps recording it; ptrace refuses it
 * (cap_ptrace_access_check()), and so does the exec probe: PMCDETACH and
 * nothing after it.  The same image without the file capability is
 * followed (the control).
 */
TEST_F_TIMEOUT(exec, unprivileged_session_drops_file_capability_exec, 60)
{
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	exec_path = FCAP_HELPER;
	exec_status = 1;	/* not setuid: the helper's euid is nobody */
	ASSERT_EQ(0, fcap_helper(0));
	ASSERT_EQ(0, record_exec_as_nobody());
	EXPECT_EQ(0, nobody_seen.detach);
	EXPECT_EQ(1, nobody_seen.exec);
	EXPECT_LT(0, nobody_seen.after);
	if (fcap_helper(1)) {
		unlink(FCAP_HELPER);
		SKIP(return, "setxattr(%s, security.capability): %s",
		     FCAP_HELPER, strerror(errno));
	}
	ASSERT_EQ(0, record_exec_as_nobody());
	unlink(FCAP_HELPER);
	EXPECT_EQ(1, nobody_seen.detach);
	EXPECT_EQ(0, nobody_seen.exec);
	EXPECT_EQ(0, nobody_seen.after);
}

TEST_F_TIMEOUT(exec, unprivileged_session_drops_setuid_exec, 60)
{
	exec_path = HELPER;
	exec_status = 0;
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	ASSERT_EQ(0, record_exec_as_nobody());
	EXPECT_EQ(1, nobody_seen.detach);
	EXPECT_EQ(0, nobody_seen.exec);
	EXPECT_EQ(0, nobody_seen.after);
}

/*
 * A root process below the target (as sudo leaves one below a user's
 * shell) is not taken in by the tree walk of ENABLE, the first or a later
 * one: the old module followed it and sampled it.
 */
TEST_F_TIMEOUT(exec, unprivileged_session_skips_a_root_descendant, 60)
{
	struct exec_seen n;
	int p[2], status;
	pid_t pid;

	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (pmcring_drop_privileges())
			_exit(100);
		status = record_setuid_child(&n);
		if (write(p[1], &n, sizeof(n)) < 0)
			_exit(101);
		_exit(status);
	}
	close(p[1]);
	ASSERT_EQ(sizeof(n), read(p[0], &n, sizeof(n)));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(0, n.after);
	EXPECT_EQ(0, n.detach);
}

/*
 * nobody with CAP_SYS_PTRACE kept (and nothing else): as the target check
 * lets it read a non-dumpable mm of its user namespace, the probes keep
 * recording the task that made itself non-dumpable
 * (ptrace_capable_session_keeps_a_nondumpable_task).
 */
static int drop_all_but_ptrace(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || pmcring_drop_privileges())
		return -1;
	d[CAP_TO_INDEX(CAP_SYS_PTRACE)].permitted =
		CAP_TO_MASK(CAP_SYS_PTRACE);
	d[CAP_TO_INDEX(CAP_SYS_PTRACE)].effective =
		CAP_TO_MASK(CAP_SYS_PTRACE);
	return syscall(SYS_capset, &h, d);
}

/*
 * As a child that drops its privileges with @drop: record a non-dumpable
 * child (n[0]) and the dumpable control (n[1]).  0, or the failing step.
 */
static int nondumpable_as(int (*drop)(void), unsigned int n[2])
{
	int p[2], status, d;
	pid_t pid;

	if (chmod(PMCRING_DEV_PATH, 0666) || pmcring_write_int(PARANOID, 2) ||
	    pipe(p))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		if (drop())
			_exit(100);
		for (d = 0; d < 2; d++) {
			status = record_nondumpable(d, &n[d]);
			if (status)
				_exit(status);
		}
		if (write(p[1], n, 2 * sizeof(*n)) < 0)
			_exit(101);
		_exit(0);
	}
	close(p[1]);
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (!WIFEXITED(status) || WEXITSTATUS(status))
		return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	status = read(p[0], n, 2 * sizeof(*n)) == 2 * sizeof(*n) ? 0 : -1;
	close(p[0]);
	return status;
}

/*
 * Nothing of a followed task whose mm is not dumpable, for a session
 * without CAP_PERFMON: the probes test current->mm's dumpability, which
 * begin_new_exec() sets for a setuid image before it commits the
 * credentials and maps the image (the exec probe revokes only after).
 * That window is not reproducible at will; a process that makes itself
 * non-dumpable with prctl() takes the same test, and is left out as the
 * ENABLE walk leaves it out.  The dumpable control shows the switches are
 * recorded otherwise.
 */
TEST_F_TIMEOUT(exec, unprivileged_session_skips_a_nondumpable_task, 60)
{
	unsigned int n[2] = { 0, 0 };

	ASSERT_EQ(0, nondumpable_as(pmcring_drop_privileges, n));
	EXPECT_EQ(0, n[0]);
	EXPECT_LT(0, n[1]);
}

TEST_F_TIMEOUT(exec, ptrace_capable_session_keeps_a_nondumpable_task, 60)
{
	unsigned int n[2] = { 0, 0 };

	ASSERT_EQ(0, nondumpable_as(drop_all_but_ptrace, n));
	EXPECT_LT(0, n[0]);
	EXPECT_LT(0, n[1]);
}

TEST_F_TIMEOUT(exec, privileged_session_keeps_following, 60)
{
	struct exec_seen n;

	ASSERT_EQ(0, record_exec(1, &n));
	EXPECT_EQ(0, n.detach);
	EXPECT_EQ(1, n.exec);
	/*
	 * Switches, MAP_IN, exit.  Not samples: begin_new_exec() itself
	 * removes the inherited perf counter from a task turned non-dumpable
	 * (perf_event_exit_task()), whoever owns it.
	 */
	EXPECT_LT(0, n.after);
}

TEST_HARNESS_MAIN
