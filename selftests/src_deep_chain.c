// SPDX-License-Identifier: GPL-2.0
/*
 * Description: ENABLE on a deep process chain is linear, and follows it
 * all.  nobody builds a chain of processes (100, or PMCRING_CHAIN_DEPTH),
 * each the child of the one before, as any user can, and at
 * perf_event_paranoid 2 a per-pid session of nobody targets its first
 * process: ENABLE walks every process of the machine for descendants of
 * the target, twice a round.  Walking up to 4096 parents per process, that
 * took O(chain^2) parent steps under rcu_read_lock(), without a resched
 * point; the walk now remembers what it learned (each task once per pass).
 * The time of ENABLE is printed (the measured worst case in
 * Documentation/sources.rst: 2000 processes, 633 ms before, 15 to 26 ms
 * now) and must stay under a second, and the session must get one PROCEXIT
 * from every process of the chain when it unwinds.
 */
#include <errno.h>
#include <signal.h>
#include <sys/wait.h>
#include "ring_common.h"

/*
 * make check builds 100 processes (TCG forks slowly: 2000 take over a
 * minute); the measurement in Documentation/sources.rst is
 *   selftests/vmrun --env PMCRING_CHAIN_DEPTH=2000 -- src_deep_chain
 */
#define DEPTH_DEFAULT	100
static int depth = DEPTH_DEFAULT;
#define DEPTH	depth

/* The chain: each process forks the next, waits for it, leaves. */
static void chain_main(int ready, int hold)
{
	int level;
	char b;
	pid_t c;

	for (level = 0; level < DEPTH - 1; level++) {
		c = fork();
		if (c < 0) {
			b = 'f';
			if (write(ready, &b, 1) != 1)
				_exit(1);
			_exit(1);
		}
		if (c) {
			while (waitpid(c, NULL, 0) < 0 && errno == EINTR)
				;
			_exit(0);
		}
	}
	b = 'r';
	if (write(ready, &b, 1) != 1)
		_exit(1);
	/* until the test closes its end */
	while (read(hold, &b, 1) > 0)
		;
	_exit(0);
}

struct result {
	int		err;		/* 0, or the step that failed */
	uint64_t	enable_ns;
	uint64_t	procexit;
};

static void count_exit(const uint8_t *rec, uint32_t type, uint32_t len,
		       void *arg)
{
	(void)rec;
	(void)len;
	*(uint64_t *)arg += type == PMCRING_TYPE_PROCEXIT;
}

/* nobody's session on @target: ENABLE timed, then PROCEXIT counted. */
static void session_main(pid_t target, int report, int go)
{
	struct pmcring_config cfg = { 0 };
	struct result r = { 0 };
	struct rt_sess s;
	uint64_t t0;
	char b;

	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
	cfg.pid = target;
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_PROCEXIT);
	if (pmcring_drop_privileges())
		r.err = 1;
	else if (rt_open_cfg(&s, &cfg, 1))
		r.err = 2;
	if (!r.err) {
		t0 = rt_now_ns();
		if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
			r.err = 3;
		r.enable_ns = rt_now_ns() - t0;
	}
	if (write(report, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	if (r.err || read(go, &b, 1) != 1)
		_exit(0);
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	if (rt_each(&s, count_exit, &r.procexit) < 0)
		r.err = 4;
	rt_close(&s);
	if (write(report, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	_exit(0);
}

FIXTURE(chain) {
	struct pmcring_perm_state saved;
};

FIXTURE_SETUP(chain)
{
	self->saved = (struct pmcring_perm_state){ 0, PMCRING_UNSAVED };
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_perm_save(&self->saved));
}

FIXTURE_TEARDOWN(chain)
{
	pmcring_perm_restore(&self->saved);
}

TEST_F_TIMEOUT(chain, enable_on_a_deep_chain, 120)
{
	int ready[2], hold[2], rep[2], go[2], status;
	struct result r;
	pid_t root, sess;
	char b;

	if (getenv("PMCRING_CHAIN_DEPTH"))
		depth = atoi(getenv("PMCRING_CHAIN_DEPTH"));
	ASSERT_LT(1, depth);
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(PMCRING_PARANOID_PATH, 2));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(hold));
	root = fork();
	ASSERT_LE(0, root);
	if (!root) {
		close(ready[0]);
		close(hold[1]);
		if (pmcring_drop_privileges())
			_exit(100);
		chain_main(ready[1], hold[0]);
	}
	close(ready[1]);
	close(hold[0]);
	ASSERT_EQ(1, read(ready[0], &b, 1));
	ASSERT_EQ('r', b) TH_LOG("the chain could not be built");

	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(go));
	sess = fork();
	ASSERT_LE(0, sess);
	if (!sess) {
		close(hold[1]);	/* the chain's end of file is the test's */
		session_main(root, rep[1], go[0]);
	}
	ASSERT_EQ(sizeof(r), read(rep[0], &r, sizeof(r)));
	ASSERT_EQ(0, r.err);
	TH_LOG("ENABLE on a chain of %d processes: %.1f ms", DEPTH,
	       r.enable_ns / 1e6);

	close(hold[1]);		/* the chain unwinds */
	ASSERT_EQ(root, waitpid(root, &status, 0));
	ASSERT_EQ(1, write(go[1], "g", 1));
	ASSERT_EQ(sizeof(r), read(rep[0], &r, sizeof(r)));
	ASSERT_EQ(sess, waitpid(sess, &status, 0));
	ASSERT_EQ(0, r.err);
	EXPECT_EQ(DEPTH, r.procexit);
	EXPECT_GT(1000000000ull, r.enable_ns);
}

TEST_HARNESS_MAIN
