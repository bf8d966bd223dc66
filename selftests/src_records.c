// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the record sources produce every hwpmc record type from real
 * kernel activity.  A followed process spawns threads, forks a child that
 * execs a helper, maps and unmaps an executable file, burns CPU in a known
 * user function and in the kernel; the stream holds PMCALLOCATE(DYN),
 * PMCATTACH/DETACH, PROC_CREATE, MAP_IN/OUT, THR_CREATE/EXIT, PROCFORK,
 * PROCEXEC, PROCCSW, PROCEXIT, SYSEXIT, USERDATA and CALLCHAIN records with
 * the right pids, tids, paths and counts; a user CALLCHAIN resolves to the
 * burn function, a kernel one through /proc/kallsyms.  A per-pid session
 * sees only its process tree; a module loaded while recording gives MAP_IN;
 * the module cannot be unloaded while a session is open.  PROCEXEC of a
 * static PIE carries its load base (as in /proc/PID/maps) in pl_dynaddr.
 *
 * NEEDS_LIBPMCRING
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/pmcring.h>

#include "libpmcring.h"
#include "pmcring_test.h"

#define HELPER_ARG	"--src-records-helper"
#define HELPER_STATUS	7
#define USERDATA_MAGIC	0xC0FFEEu

/* ---- the workload ---- */

/* Bounds of the "pmcburn" section, which holds burn() alone. */
extern const char __start_pmcburn[], __stop_pmcburn[];

__attribute__((noinline, section("pmcburn")))
static unsigned long burn(unsigned long n)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < n; i++)
		x += i * i;
	return x;
}

static void burn_user(unsigned int ms)
{
	uint64_t end = pmcring_now_ns() + ms * 1000000ull;

	while (pmcring_now_ns() < end)
		burn(200000);
}

/* What the followed process tells the test, in shared memory. */
struct shared {
	pid_t		tids[2];
	pid_t		grandchild;
	uintptr_t	map_addr;
	size_t		map_len;
};

static char exe_path[PATH_MAX];

static void *thread_fn(void *arg)
{
	pid_t *tid = arg;

	*tid = syscall(SYS_gettid);
	burn_user(20);
	return NULL;
}

/* The followed process: returns its exit status. */
static int workload(struct shared *sh, int go)
{
	pthread_t th[2];
	char c;
	int i, fd, status;
	pid_t g;
	void *p;

	if (read(go, &c, 1) != 1)
		return 10;
	for (i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, thread_fn, &sh->tids[i]))
			return 11;
	for (i = 0; i < 2; i++)
		pthread_join(th[i], NULL);

	g = fork();
	if (g < 0)
		return 12;
	if (!g) {
		execl(exe_path, exe_path, HELPER_ARG, (char *)NULL);
		_exit(99);
	}
	sh->grandchild = g;
	if (waitpid(g, &status, 0) != g || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != HELPER_STATUS)
		return 13;

	/* An executable file mapping, like a shared library's text. */
	fd = open(exe_path, O_RDONLY);
	if (fd < 0)
		return 14;
	sh->map_len = 2 * getpagesize();
	p = mmap(NULL, sh->map_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 15;
	sh->map_addr = (uintptr_t)p;
	munmap(p, sh->map_len);

	burn_user(300);
	pmcring_burn_kernel(300);
	return 0;
}

/* ---- reading the rings ---- */

struct recs {
	struct pmcring_record	*r;
	unsigned int		n;
};

/* Every record of every CPU ring, in ring order per CPU. */
static int drain(struct pmcring *s, struct recs *out)
{
	unsigned int cpu, cap = 1024;
	struct pmcring_cpu_buf *b;
	int ret;

	out->n = 0;
	out->r = malloc(cap * sizeof(*out->r));
	if (!out->r)
		return -ENOMEM;
	for (cpu = 0; cpu < pmcring_nr_cpus(s); cpu++) {
		b = pmcring_cpu_buf(s, cpu);
		if (!b)
			return -errno;
		while ((ret = pmcring_cpu_buf_peek(b, &out->r[out->n])) == 1) {
			pmcring_cpu_buf_next(b);
			if (++out->n == cap) {
				cap *= 2;
				out->r = realloc(out->r, cap * sizeof(*out->r));
				if (!out->r)
					return -ENOMEM;
			}
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

#define REC(rec, T)	((const struct T *)(rec)->data)

/* Does /proc/kallsyms place @pc in a text symbol?  Its name in @name. */
static int kallsyms_resolve(uint64_t pc, char *name, size_t size)
{
	unsigned long long addr, best = 0;
	char type, sym[256];
	FILE *f = fopen("/proc/kallsyms", "r");
	char line[512];

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, sym) != 3)
			continue;
		if ((type != 't' && type != 'T') || !addr || addr > pc ||
		    addr < best)
			continue;
		best = addr;
		snprintf(name, size, "%s", sym);
	}
	fclose(f);
	return best && pc - best < 0x10000;
}

static struct pmcring *session_new(pid_t pid, uint32_t flags, uint64_t types)
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.data_pages = 256,
		.flags = flags | (pid ? PMCRING_CFG_F_PID : 0),
		.types = types,
		.pid = pid,
	};

	return pmcring_new(&o);
}

static int add_cpu_clock(struct pmcring *s)
{
	struct pmcring_counter c = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.rate = 1000000,	/* ns: 1 kHz */
		.name = "cpu-clock",
	};
	int err = pmcring_add_counter(s, &c);

	return err ? err : (int)c.pmcid;
}

/* ---- the tests ---- */

FIXTURE(records) {
	struct shared		*sh;
	struct pmcring		*s;
	struct recs		rs;
	pid_t			child;
	int			pmcid;
};

FIXTURE_SETUP(records)
{
	int go[2], status;
	char c = 1;

	memset(self, 0, sizeof(*self));
	PMCRING_REQUIRE_DEV();
	self->sh = mmap(NULL, sizeof(*self->sh), PROT_READ | PROT_WRITE,
			MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, self->sh);
	ASSERT_EQ(0, pipe(go));
	self->child = fork();
	ASSERT_LE(0, self->child);
	if (!self->child) {
		close(go[1]);
		_exit(workload(self->sh, go[0]));
	}
	close(go[0]);

	self->s = session_new(self->child, 0, 0);
	ASSERT_NE(NULL, self->s) TH_LOG("pmcring_new: %s", strerror(errno));
	self->pmcid = add_cpu_clock(self->s);
	ASSERT_LT(0, self->pmcid) TH_LOG("add_counter: %s",
					 strerror(-self->pmcid));
	ASSERT_EQ(0, pmcring_enable(self->s));
	ASSERT_EQ(0, pmcring_writelog(self->s, USERDATA_MAGIC));
	ASSERT_EQ(1, write(go[1], &c, 1));
	ASSERT_EQ(self->child, waitpid(self->child, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status));
	ASSERT_EQ(0, pmcring_disable(self->s));
	ASSERT_EQ(0, drain(self->s, &self->rs));
	close(go[1]);
}

FIXTURE_TEARDOWN(records)
{
	free(self->rs.r);
	pmcring_free(self->s);
}

TEST_F(records, counter_and_attach)
{
	const struct recs *rs = &self->rs;
	unsigned int i, alloc = 0, dyn = 0, att = 0, det = 0, ud = 0;

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */

	for (i = 0; i < rs->n; i++) {
		const struct pmcring_record *r = &rs->r[i];

		switch (r->type) {
		case PMCRING_TYPE_PMCALLOCATE:
			EXPECT_EQ(self->pmcid, REC(r, pmcring_rec_pmcallocate)->pl_pmcid);
			EXPECT_EQ(1000000, REC(r, pmcring_rec_pmcallocate)->pl_rate);
			alloc++;
			break;
		case PMCRING_TYPE_PMCALLOCATEDYN:
			EXPECT_STREQ("cpu-clock",
				     REC(r, pmcring_rec_pmcallocatedyn)->pl_evname);
			dyn++;
			break;
		case PMCRING_TYPE_PMCATTACH:
			EXPECT_EQ(self->child, REC(r, pmcring_rec_pmcattach)->pl_pid);
			EXPECT_EQ(self->pmcid, REC(r, pmcring_rec_pmcattach)->pl_pmcid);
			EXPECT_STREQ(exe_path,
				     REC(r, pmcring_rec_pmcattach)->pl_pathname);
			att++;
			break;
		case PMCRING_TYPE_PMCDETACH:
			EXPECT_EQ(self->child, REC(r, pmcring_rec_pmcdetach)->pl_pid);
			det++;
			break;
		case PMCRING_TYPE_USERDATA:
			EXPECT_EQ(USERDATA_MAGIC,
				  REC(r, pmcring_rec_userdata)->pl_userdata);
			ud++;
			break;
		}
	}
	EXPECT_EQ(1, alloc);
	EXPECT_EQ(1, dyn);
	EXPECT_EQ(1, att);
	EXPECT_EQ(1, det);
	EXPECT_EQ(1, ud);
}

TEST_F(records, processes_and_threads)
{
	const struct recs *rs = &self->rs;
	pid_t c = self->child, g = self->sh->grandchild;
	unsigned int i, fork = 0, exec = 0, create = 0, pexit = 0, sexit = 0;
	unsigned int thr = 0, thr_exit = 0, csw = 0, synth = 0;
	const char *base = strrchr(exe_path, '/') + 1;
	char comm[16];

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */

	snprintf(comm, sizeof(comm), "%s", base);
	for (i = 0; i < rs->n; i++) {
		const struct pmcring_record *r = &rs->r[i];

		switch (r->type) {
		case PMCRING_TYPE_PROCFORK:
			EXPECT_EQ(c, REC(r, pmcring_rec_procfork)->pl_oldpid);
			EXPECT_EQ(g, REC(r, pmcring_rec_procfork)->pl_newpid);
			fork++;
			break;
		case PMCRING_TYPE_PROCEXEC:
			EXPECT_EQ(g, REC(r, pmcring_rec_procexec)->pl_pid);
			EXPECT_STREQ(exe_path,
				     REC(r, pmcring_rec_procexec)->pl_pathname);
			exec++;
			break;
		case PMCRING_TYPE_PROC_CREATE:
			if (REC(r, pmcring_rec_proc_create)->pl_pid == (uint32_t)c) {
				synth++;
				break;
			}
			EXPECT_EQ(g, REC(r, pmcring_rec_proc_create)->pl_pid);
			EXPECT_STREQ(comm, REC(r, pmcring_rec_proc_create)->pl_pcomm);
			create++;
			break;
		case PMCRING_TYPE_PROCEXIT:
			pexit += REC(r, pmcring_rec_procexit)->pl_pid == (uint32_t)g ||
				 REC(r, pmcring_rec_procexit)->pl_pid == (uint32_t)c;
			break;
		case PMCRING_TYPE_SYSEXIT:
			sexit += REC(r, pmcring_rec_sysexit)->pl_pid == (uint32_t)g ||
				 REC(r, pmcring_rec_sysexit)->pl_pid == (uint32_t)c;
			break;
		case PMCRING_TYPE_THR_CREATE:
			EXPECT_EQ(c, REC(r, pmcring_rec_thr_create)->pl_pid);
			thr += REC(r, pmcring_rec_thr_create)->pl_tid ==
				       (uint32_t)self->sh->tids[0] ||
			       REC(r, pmcring_rec_thr_create)->pl_tid ==
				       (uint32_t)self->sh->tids[1];
			break;
		case PMCRING_TYPE_THR_EXIT:
			thr_exit += REC(r, pmcring_rec_thr_exit)->pl_tid ==
					    (uint32_t)self->sh->tids[0] ||
				    REC(r, pmcring_rec_thr_exit)->pl_tid ==
					    (uint32_t)self->sh->tids[1];
			break;
		case PMCRING_TYPE_PROCCSW:
			EXPECT_EQ(self->pmcid, REC(r, pmcring_rec_proccsw)->pl_pmcid);
			csw += REC(r, pmcring_rec_proccsw)->pl_pid == (uint32_t)c;
			break;
		}
	}
	EXPECT_EQ(1, fork);
	EXPECT_EQ(1, exec);
	EXPECT_EQ(1, create);
	EXPECT_EQ(1, synth);
	EXPECT_EQ(2, pexit);
	EXPECT_EQ(2, sexit);
	EXPECT_EQ(2, thr);
	EXPECT_EQ(2, thr_exit);
	EXPECT_LT(0, csw);
}

TEST_F(records, mappings)
{
	const struct recs *rs = &self->rs;
	unsigned int i, synth = 0, mapped = 0, exec_map = 0, unmapped = 0;
	unsigned int kmod = 0;

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */

	for (i = 0; i < rs->n; i++) {
		const struct pmcring_record *r = &rs->r[i];
		const struct pmcring_rec_map_in *in = r->data;
		const struct pmcring_rec_map_out *out = r->data;

		if (r->type == PMCRING_TYPE_MAP_IN &&
		    in->pl_pid == (uint32_t)self->child &&
		    !strcmp(in->pl_pathname, exe_path)) {
			if (in->pl_start == self->sh->map_addr)
				mapped++;
			else
				synth++;
		}
		/* loaded modules are synthesized at enable: ours at least */
		if (r->type == PMCRING_TYPE_MAP_IN && in->pl_pid == (uint32_t)-1 &&
		    !strcmp(in->pl_pathname, "pmcring")) {
			EXPECT_NE(0, in->pl_start);
			kmod++;
		}
		if (r->type == PMCRING_TYPE_MAP_IN &&
		    in->pl_pid == (uint32_t)self->sh->grandchild &&
		    !strcmp(in->pl_pathname, exe_path))
			exec_map++;
		if (r->type == PMCRING_TYPE_MAP_OUT &&
		    out->pl_pid == (uint32_t)self->child &&
		    out->pl_start == self->sh->map_addr) {
			EXPECT_EQ(self->sh->map_addr + self->sh->map_len,
				  out->pl_end);
			unmapped++;
		}
	}
	EXPECT_LT(0, synth) TH_LOG("no MAP_IN synthesized for %s", exe_path);
	EXPECT_EQ(1, mapped) TH_LOG("no MAP_IN for the mmap at %#lx",
				    (unsigned long)self->sh->map_addr);
	EXPECT_LT(0, exec_map) TH_LOG("no MAP_IN of the exec'd image");
	EXPECT_EQ(1, unmapped);
	EXPECT_EQ(1, kmod) TH_LOG("no MAP_IN synthesized for module pmcring");
}

TEST_F(records, callchains)
{
	const struct recs *rs = &self->rs;
	unsigned int i, user = 0, in_burn = 0, kernel = 0, resolved = 0;
	char name[256] = "";

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */

	for (i = 0; i < rs->n; i++) {
		const struct pmcring_record *r = &rs->r[i];
		const struct pmcring_rec_callchain *cc = r->data;
		unsigned int n = (r->len - PMCRING_SIZE_CALLCHAIN_MIN) / 8;

		if (r->type != PMCRING_TYPE_CALLCHAIN)
			continue;
		ASSERT_LT(0, n);
		ASSERT_LE(n, 128);
		EXPECT_EQ(self->pmcid, cc->pl_pmcid);
		EXPECT_EQ(r->cpu, cc->pl_cpuflags >> 16);
		if (cc->pl_pid != (uint32_t)self->child)
			continue;
		EXPECT_TRUE(cc->pl_tid == cc->pl_pid ||
			    cc->pl_tid == (uint32_t)self->sh->tids[0] ||
			    cc->pl_tid == (uint32_t)self->sh->tids[1]);
		if (cc->pl_cpuflags & PMCRING_CC_F_USERSPACE) {
			user++;
			in_burn += cc->pl_pc[0] >= (uintptr_t)__start_pmcburn &&
				   cc->pl_pc[0] < (uintptr_t)__stop_pmcburn;
		} else {
			kernel++;
			if (!resolved && kallsyms_resolve(cc->pl_pc[0], name,
							  sizeof(name)))
				resolved++;
		}
	}
	TH_LOG("%u user samples, %u in burn(); %u kernel samples, e.g. %s",
	       user, in_burn, kernel, name);
	EXPECT_LT(user / 2, in_burn);
	EXPECT_LT(0, kernel);
	EXPECT_EQ(1, resolved);
}

/* Every record is one the pmclog parser accepts, with exact lengths. */
TEST_F(records, parser_accepts_all)
{
	const struct recs *rs = &self->rs;
	struct pmcring_log_ev ev;
	struct pmcring_log *l;
	unsigned int i, n = 0;

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	ASSERT_NE(NULL, l);
	for (i = 0; i < rs->n; i++) {
		const struct pmcring_record *r = &rs->r[i];

		ASSERT_EQ(0, r->len % 4);
		ASSERT_EQ(0, pmcring_log_feed(l, r->data, r->len));
		ASSERT_EQ(0, pmcring_log_read(l, &ev))
			TH_LOG("record %u type %u len %u: %s", i, r->type,
			       r->len, ev.pl_reason ? ev.pl_reason : "?");
		EXPECT_EQ(r->type, ev.pl_type);
		EXPECT_EQ(r->len, ev.pl_len);
		n++;
	}
	EXPECT_EQ(-1, pmcring_log_read(l, &ev));
	EXPECT_EQ(PMCRING_LOG_REQUIRE_DATA, ev.pl_state);
	pmcring_log_close(l);
	TH_LOG("%u records parsed", n);
}

/* Per-pid session on C: records of C and its child G only, none of U. */
TEST(target_tree)
{
	struct pmcring_record *r;
	struct pmcring *s;
	struct recs rs;
	int go[2], status, cg = 0, gg = 0, other = 0;
	pid_t c, u, g = 0;
	unsigned int i;
	char ch = 1;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pipe(go));
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		if (read(go[0], &ch, 1) != 1)
			_exit(1);
		g = fork();
		if (!g) {
			burn_user(150);
			_exit(0);
		}
		burn_user(150);
		_exit(waitpid(g, &status, 0) == g ? 0 : 2);
	}
	u = fork();
	ASSERT_LE(0, u);
	if (!u) {
		if (read(go[0], &ch, 1) != 1)
			_exit(1);
		burn_user(300);
		_exit(0);
	}
	s = session_new(c, 0, 0);
	ASSERT_NE(NULL, s);
	ASSERT_LT(0, add_cpu_clock(s));
	ASSERT_EQ(0, pmcring_enable(s));
	ASSERT_EQ(2, write(go[1], "gg", 2));
	ASSERT_EQ(c, waitpid(c, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_EQ(u, waitpid(u, &status, 0));
	ASSERT_EQ(0, pmcring_disable(s));
	ASSERT_EQ(0, drain(s, &rs));

	for (i = 0; i < rs.n; i++) {
		r = &rs.r[i];
		if (r->type == PMCRING_TYPE_PROCFORK)
			g = REC(r, pmcring_rec_procfork)->pl_newpid;
	}
	ASSERT_NE(0, g) TH_LOG("no PROCFORK of C's child");
	for (i = 0; i < rs.n; i++) {
		const uint32_t *w = rs.r[i].data;
		uint32_t pid;

		r = &rs.r[i];
		switch (r->type) {
		case PMCRING_TYPE_CALLCHAIN:
		case PMCRING_TYPE_PROCEXEC:
		case PMCRING_TYPE_SYSEXIT:
		case PMCRING_TYPE_PROC_CREATE:
		case PMCRING_TYPE_PROCFORK:
			pid = w[4];
			break;
		case PMCRING_TYPE_THR_CREATE:
		case PMCRING_TYPE_PROCEXIT:
		case PMCRING_TYPE_PMCATTACH:
		case PMCRING_TYPE_PMCDETACH:
			pid = w[5];
			break;
		case PMCRING_TYPE_PROCCSW:
			pid = w[7];
			break;
		case PMCRING_TYPE_MAP_IN:
		case PMCRING_TYPE_MAP_OUT:
			pid = w[4];
			if (pid == (uint32_t)-1)
				continue;
			break;
		default:
			continue;
		}
		if (r->type == PMCRING_TYPE_CALLCHAIN) {
			cg += pid == (uint32_t)c;
			gg += pid == (uint32_t)g;
		}
		if (pid != (uint32_t)c && pid != (uint32_t)g) {
			if (!other)
				TH_LOG("record type %u of pid %u (c %d g %d u %d)",
				       r->type, pid, c, g, u);
			other++;
		}
	}
	EXPECT_EQ(0, other);
	EXPECT_LT(0, cg);
	EXPECT_LT(0, gg);
	free(rs.r);
	pmcring_free(s);
}

/* System-wide sampling sees this process; the type mask filters records. */
/*
 * A child whose exit nobody waits for (SIGCHLD ignored) reaps itself in
 * exit_notify(), before its last switch-out: its struct pid links are
 * gone by then.  Every PROCCSW of it still carries its pid and tid.
 */
TEST(autoreaped_child_keeps_its_pid)
{
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	struct pmcring_record *r;
	struct pmcring *s;
	struct recs rs;
	int go[2], csw = 0, bad = 0;
	unsigned int i;
	char ch = 1;
	pid_t c;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pipe(go));
	ASSERT_EQ(0, sigaction(SIGCHLD, &ign, &old));
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		if (read(go[0], &ch, 1) != 1)
			_exit(1);
		burn_user(100);
		_exit(0);
	}
	s = session_new(c, 0, 0);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, pmcring_enable(s));
	ASSERT_EQ(1, write(go[1], "g", 1));
	/* SIG_IGN: no zombie, wait until the pid is gone */
	while (!kill(c, 0))
		usleep(10000);
	usleep(100000);
	ASSERT_EQ(0, pmcring_disable(s));
	ASSERT_EQ(0, sigaction(SIGCHLD, &old, NULL));
	ASSERT_EQ(0, drain(s, &rs));
	for (i = 0; i < rs.n; i++) {
		const uint32_t *w = rs.r[i].data;

		r = &rs.r[i];
		if (r->type != PMCRING_TYPE_PROCCSW)
			continue;
		csw++;
		/* pl_pid at word 7, pl_tid at word 8 */
		if (w[7] != (uint32_t)c || w[8] != (uint32_t)c) {
			if (!bad)
				TH_LOG("PROCCSW of pid %u tid %u, want %d",
				       w[7], w[8], c);
			bad++;
		}
	}
	TH_LOG("%d PROCCSW of the child, %d with another pid", csw, bad);
	EXPECT_LT(0, csw);
	EXPECT_EQ(0, bad);
	free(rs.r);
	pmcring_free(s);
	close(go[0]);
	close(go[1]);
}

TEST(system_wide_samples)
{
	uint64_t types = PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN) |
			 PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATEDYN);
	unsigned int i, mine = 0, in_burn = 0, other = 0;
	struct pmcring *s;
	struct recs rs;

	PMCRING_REQUIRE_DEV();
	s = session_new(0, PMCRING_CFG_F_SYSTEM_WIDE, types);
	ASSERT_NE(NULL, s);
	ASSERT_LT(0, add_cpu_clock(s));
	ASSERT_EQ(0, pmcring_enable(s));
	burn_user(200);
	ASSERT_EQ(0, pmcring_disable(s));
	ASSERT_EQ(0, drain(s, &rs));
	for (i = 0; i < rs.n; i++) {
		const struct pmcring_record *r = &rs.r[i];
		const struct pmcring_rec_callchain *cc = r->data;

		if (!(types & PMCRING_TYPE_BIT(r->type))) {
			other++;
			continue;
		}
		if (r->type != PMCRING_TYPE_CALLCHAIN)
			continue;
		EXPECT_EQ(r->cpu, cc->pl_cpuflags >> 16);
		if (cc->pl_pid != (uint32_t)getpid())
			continue;
		mine++;
		in_burn += (cc->pl_cpuflags & PMCRING_CC_F_USERSPACE) &&
			   cc->pl_pc[0] >= (uintptr_t)__start_pmcburn &&
			   cc->pl_pc[0] < (uintptr_t)__stop_pmcburn;
	}
	EXPECT_EQ(0, other) TH_LOG("records of types outside the mask");
	EXPECT_LT(0, mine);
	EXPECT_LT(mine / 2, in_burn);
	free(rs.r);
	pmcring_free(s);
}

/*
 * perf's :u and :k (PMCRING_CTR_F_EXCLUDE_KERNEL / _USER): one cpu-clock
 * counter with @flags follows this process while it burns user and then
 * kernel time; count its samples by the mode of the sampled pc.
 */
static void mode_samples(struct __test_metadata *_metadata, uint32_t flags,
			 unsigned int *user, unsigned int *kern)
{
	struct pmcring_counter c = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.rate = 1000000,	/* ns: 1 kHz */
		.flags = flags,
		.name = "cpu-clock",
	};
	struct pmcring *s;
	struct recs rs;
	unsigned int i;

	*user = *kern = 0;
	s = session_new(getpid(), 0, PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN));
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, pmcring_add_counter(s, &c));
	ASSERT_EQ(0, pmcring_enable(s));
	burn_user(300);
	pmcring_burn_kernel(300);
	ASSERT_EQ(0, pmcring_disable(s));
	ASSERT_EQ(0, drain(s, &rs));
	for (i = 0; i < rs.n; i++) {
		const struct pmcring_rec_callchain *cc = rs.r[i].data;

		if (rs.r[i].type != PMCRING_TYPE_CALLCHAIN ||
		    cc->pl_pid != (uint32_t)getpid())
			continue;
		if (cc->pl_pc[0] >= 0xffff800000000000ull)
			(*kern)++;
		else
			(*user)++;
	}
	free(rs.r);
	pmcring_free(s);
}

TEST(event_modifier_u)
{
	unsigned int user, kern;

	PMCRING_REQUIRE_DEV();
	mode_samples(_metadata, PMCRING_CTR_F_EXCLUDE_KERNEL, &user, &kern);
	TH_LOG(":u: %u user samples, %u kernel", user, kern);
	EXPECT_LT(0, user);
	EXPECT_EQ(0, kern);
}

TEST(event_modifier_k)
{
	unsigned int user, kern;

	PMCRING_REQUIRE_DEV();
	mode_samples(_metadata, PMCRING_CTR_F_EXCLUDE_USER, &user, &kern);
	TH_LOG(":k: %u user samples, %u kernel", user, kern);
	EXPECT_EQ(0, user);
	EXPECT_LT(0, kern);
}

/* Both modes excluded, unknown flags, types that are not counters. */
TEST(counter_flags_and_types_checked)
{
	static const struct {
		uint32_t type, flags;
	} bad[] = {
		{ PERF_TYPE_SOFTWARE, PMCRING_CTR_F_EXCLUDE_KERNEL |
				      PMCRING_CTR_F_EXCLUDE_USER },
		{ PERF_TYPE_SOFTWARE, 1u << 3 },
		{ PERF_TYPE_SOFTWARE, 1u << 31 },
		{ PERF_TYPE_TRACEPOINT, 0 },
		{ PERF_TYPE_BREAKPOINT, 0 },
		{ 0x10000, 0 },
	};
	struct pmcring *s;
	unsigned int i;

	PMCRING_REQUIRE_DEV();
	s = session_new(getpid(), 0, 0);
	ASSERT_NE(NULL, s);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct pmcring_counter c = {
			.type = bad[i].type,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.rate = 1000000,
			.flags = bad[i].flags,
		};

		EXPECT_EQ(-EINVAL, pmcring_add_counter(s, &c))
			TH_LOG("type %u flags %#x", bad[i].type, bad[i].flags);
	}
	pmcring_free(s);
}

static int kernel_only_as_nobody(void *arg)
{
	struct pmcring_counter c = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.rate = 1000000,
		.flags = PMCRING_CTR_F_EXCLUDE_USER,
	};
	struct pmcring *s = session_new(getpid(), 0, 0);
	int err;

	(void)arg;
	if (!s)
		return 50;
	err = pmcring_add_counter(s, &c);
	pmcring_free(s);
	return err == -EACCES ? 0 : 60;
}

/* :k where perf_event_paranoid keeps the kernel out: EACCES, as perf. */
TEST(event_modifier_k_refused_unprivileged)
{
	struct pmcring_perm_state st;
	int rc;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_perm_save(&st));
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(PMCRING_PARANOID_PATH, 2));
	rc = pmcring_as_nobody(kernel_only_as_nobody, NULL);
	pmcring_perm_restore(&st);
	EXPECT_EQ(0, rc) TH_LOG("50: no session, 60: not EACCES");
}

#ifndef MODULE_INIT_COMPRESSED_FILE
#define MODULE_INIT_COMPRESSED_FILE	4
#endif

/*
 * A small module of the running kernel that is not loaded: $PMCRING_TEST_MODULE
 * or crc7/crc8/crc4 under /lib/modules/$(uname -r)/kernel/lib/, plain or
 * xz-compressed (decompressed by the kernel).  0 and @path, @name, @flags
 * for finit_module(), or -1.
 */
static int find_module(char *path, size_t size, char *name, size_t nsize,
		       int *flags)
{
	static const char * const mods[] = { "crc7", "crc8", "crc4" };
	static const char * const exts[] = { "", ".xz" };
	const char *env = getenv("PMCRING_TEST_MODULE");
	char sys[PATH_MAX];
	struct utsname u;
	unsigned int i, e;

	if (env) {
		const char *b = strrchr(env, '/');

		snprintf(path, size, "%s", env);
		snprintf(name, nsize, "%s", b ? b + 1 : env);
		name[strcspn(name, ".")] = '\0';
		*flags = strstr(env, ".ko.") ? MODULE_INIT_COMPRESSED_FILE : 0;
		return access(path, R_OK);
	}
	uname(&u);
	for (i = 0; i < sizeof(mods) / sizeof(mods[0]); i++) {
		snprintf(sys, sizeof(sys), "/sys/module/%s", mods[i]);
		if (!access(sys, F_OK))
			continue;
		for (e = 0; e < 2; e++) {
			snprintf(path, size, "/lib/modules/%s/kernel/lib/%s.ko%s",
				 u.release, mods[i], exts[e]);
			snprintf(name, nsize, "%s", mods[i]);
			*flags = e ? MODULE_INIT_COMPRESSED_FILE : 0;
			if (!access(path, R_OK))
				return 0;
		}
	}
	return -1;
}

/*
 * PROCEXEC's addresses as FreeBSD writes them: pl_baseaddr = AT_BASE (the
 * interpreter, 0 without one), pl_dynaddr = a PIE's load base (0 for
 * ET_EXEC).  The static PIE helper reports its base from /proc/self/maps;
 * this program itself is a static ET_EXEC.
 */
static pid_t spawn(const char *path, const char *arg, int out)
{
	pid_t p = fork();

	if (!p) {
		if (out >= 0 && dup2(out, 1) < 0)
			_exit(98);
		execl(path, path, arg, (char *)NULL);
		_exit(99);
	}
	return p;
}

TEST(exec_addresses)
{
	uint64_t types = PMCRING_TYPE_BIT(PMCRING_TYPE_PROCEXEC);
	char helper[PATH_MAX], line[64] = "";
	unsigned long pie_base = 0;
	unsigned int i, pie = 0, nopie = 0;
	pid_t hp, sp;
	int out[2], status;
	struct pmcring *s;
	struct recs rs;
	ssize_t n;

	PMCRING_REQUIRE_DEV();
	snprintf(helper, sizeof(helper), "%.*s/pmcring-piehelper",
		 (int)(strrchr(exe_path, '/') - exe_path), exe_path);
	if (access(helper, X_OK))
		SKIP(return, "pmcring-piehelper missing");
	s = session_new(0, PMCRING_CFG_F_SYSTEM_WIDE, types);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, pmcring_enable(s));
	ASSERT_EQ(0, pipe(out));
	hp = spawn(helper, NULL, out[1]);
	ASSERT_LT(0, hp);
	close(out[1]);
	n = read(out[0], line, sizeof(line) - 1);
	close(out[0]);
	ASSERT_EQ(hp, waitpid(hp, &status, 0));
	ASSERT_EQ(0, status);
	ASSERT_LT(0, n);
	pie_base = strtoul(line, NULL, 16);
	ASSERT_NE(0, pie_base);
	sp = spawn(exe_path, HELPER_ARG, -1);
	ASSERT_LT(0, sp);
	ASSERT_EQ(sp, waitpid(sp, &status, 0));
	ASSERT_EQ(0, pmcring_disable(s));
	ASSERT_EQ(0, drain(s, &rs));
	for (i = 0; i < rs.n; i++) {
		const struct pmcring_rec_procexec *x = rs.r[i].data;

		if (rs.r[i].type != PMCRING_TYPE_PROCEXEC)
			continue;
		if (x->pl_pid == (uint32_t)hp) {
			EXPECT_STREQ(helper, x->pl_pathname);
			EXPECT_EQ(pie_base, x->pl_dynaddr);
			EXPECT_EQ(0, x->pl_baseaddr);	/* no interpreter */
			pie++;
		} else if (x->pl_pid == (uint32_t)sp) {
			EXPECT_EQ(0, x->pl_dynaddr);	/* ET_EXEC */
			EXPECT_EQ(0, x->pl_baseaddr);
			nopie++;
		}
	}
	EXPECT_EQ(1, pie);
	EXPECT_EQ(1, nopie);
	free(rs.r);
	pmcring_free(s);
}

TEST(module_map_in)
{
	char path[PATH_MAX], name[64];
	unsigned int i, in = 0, out = 0;
	uint64_t start = 0;
	struct pmcring *s;
	struct recs rs;
	int fd, flags;

	PMCRING_REQUIRE_DEV();
	if (find_module(path, sizeof(path), name, sizeof(name), &flags))
		SKIP(return, "no unloaded module to load (crc7.ko; set PMCRING_TEST_MODULE)");
	s = session_new(0, PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_NO_SYNTH,
			PMCRING_TYPE_BIT(PMCRING_TYPE_MAP_IN) |
			PMCRING_TYPE_BIT(PMCRING_TYPE_MAP_OUT));
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, pmcring_enable(s));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, syscall(SYS_finit_module, fd, "", flags))
		TH_LOG("finit_module(%s): %s", path, strerror(errno));
	close(fd);
	ASSERT_EQ(0, syscall(SYS_delete_module, name, O_NONBLOCK));
	ASSERT_EQ(0, pmcring_disable(s));
	ASSERT_EQ(0, drain(s, &rs));
	for (i = 0; i < rs.n; i++) {
		const struct pmcring_record *r = &rs.r[i];

		if (r->type == PMCRING_TYPE_MAP_IN &&
		    !strcmp(REC(r, pmcring_rec_map_in)->pl_pathname, name)) {
			EXPECT_EQ((uint32_t)-1, REC(r, pmcring_rec_map_in)->pl_pid);
			start = REC(r, pmcring_rec_map_in)->pl_start;
			in++;
		}
		if (r->type == PMCRING_TYPE_MAP_OUT &&
		    REC(r, pmcring_rec_map_out)->pl_pid == (uint32_t)-1 &&
		    REC(r, pmcring_rec_map_out)->pl_start == start) {
			EXPECT_LT(start, REC(r, pmcring_rec_map_out)->pl_end);
			out++;
		}
	}
	EXPECT_EQ(1, in);
	EXPECT_NE(0, start) TH_LOG("root got a zeroed module address");
	EXPECT_EQ(1, out);
	free(rs.r);
	pmcring_free(s);
}

TEST(rmmod_refused_while_open)
{
	struct pmcring *s;

	PMCRING_REQUIRE_DEV();
	s = session_new(0, 0, 0);
	ASSERT_NE(NULL, s);
	EXPECT_EQ(-1, syscall(SYS_delete_module, "pmcring", O_NONBLOCK));
	EXPECT_TRUE(errno == EWOULDBLOCK || errno == EBUSY)
		TH_LOG("delete_module: %s", strerror(errno));
	EXPECT_EQ(0, access("/sys/module/pmcring", F_OK));
	pmcring_free(s);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], HELPER_ARG)) {
		burn_user(50);
		return HELPER_STATUS;
	}
	if (!realpath("/proc/self/exe", exe_path))
		snprintf(exe_path, sizeof(exe_path), "%s", argv[0]);
	return test_harness_run(argc, argv);
}
