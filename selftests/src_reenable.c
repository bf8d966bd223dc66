// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a re-ENABLE records nothing of a process that took the pid
 * of one the session followed before its DISABLE.
 *
 * While a per-pid session is disabled it is off the probes' list, so the
 * fork probe never drops the set entry of a followed process that dies;
 * ENABLE must forget the set before the probes see the session again.  It
 * used to publish the session first and empty the set later (after the
 * target recheck), and in between the switches, execs and forks of
 * whatever process then had a stale pid were written to the ring: another
 * user's included.
 *
 * Each round: P (the target) forks C while the session is enabled;
 * DISABLE; a counter is added (its walk puts C back in the set, which
 * DISABLE emptied); C is killed and reaped; ns_last_pid hands C's pid to
 * Q, an unrelated process whose two threads switch as fast as a pipe lets
 * them; a system-wide session keeps PROCCSW wanted; ENABLE, P is woken,
 * DISABLE, and look for any record of Q, and for records of P (the
 * control: the re-enabled session records its target).  With ENABLE's
 * forgetting of the set taken out of the module, every round recorded Q
 * (39 of 39 on 6.1, 2749 records); the rounds run for ROUND_BUDGET_S
 * seconds (TCG included).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <linux/perf_event.h>
#include "ring_common.h"

#define ROUND_BUDGET_S	5
#define ROUNDS_MAX	100
#define ROUNDS_MIN	10

static int q_pipe[2][2];

static void *q_pong(void *arg)
{
	char c;

	(void)arg;
	for (;;) {
		if (read(q_pipe[0][0], &c, 1) != 1 ||
		    write(q_pipe[1][1], &c, 1) != 1)
			return NULL;
	}
}

/* Q: two threads that hand one byte back and forth until killed. */
static void q_main(int ready)
{
	pthread_t t;
	char c = 'q';

	if (pipe(q_pipe[0]) || pipe(q_pipe[1]) ||
	    pthread_create(&t, NULL, q_pong, NULL))
		_exit(1);
	if (write(ready, &c, 1) != 1)
		_exit(1);
	for (;;) {
		if (write(q_pipe[0][1], &c, 1) != 1 ||
		    read(q_pipe[1][0], &c, 1) != 1)
			_exit(1);
	}
}

/*
 * P: fork C when told, report its pid, reap it, report again; then answer
 * each byte on go.
 */
static void p_main(int go, int out)
{
	pid_t c;
	char b;

	if (read(go, &b, 1) != 1)
		_exit(1);
	c = fork();
	if (c < 0)
		_exit(1);
	if (!c) {
		pause();
		_exit(0);
	}
	if (write(out, &c, sizeof(c)) != sizeof(c) ||
	    waitpid(c, NULL, 0) != c || write(out, &c, sizeof(c)) != sizeof(c))
		_exit(1);
	/* then answer every byte on go: switches the session must record */
	while (read(go, &b, 1) == 1)
		if (write(out, &c, sizeof(c)) != sizeof(c))
			_exit(1);
	_exit(0);
}

struct q_count {
	uint32_t pid;		/* Q's */
	unsigned int n;		/* records of Q */
	uint32_t ppid;		/* P's, the target */
	unsigned int pn;	/* records of P: the positive control */
};

/* Every record type that carries the pid of the process it is about. */
static void q_each(const uint8_t *rec, uint32_t type, uint32_t len,
		   void *arg)
{
	struct q_count *q = arg;
	uint32_t pid = 0, other = 0;

	switch (type) {
	case PMCRING_TYPE_PROCCSW:
		pid = ((const struct pmcring_rec_proccsw *)rec)->pl_pid;
		break;
	case PMCRING_TYPE_PROCEXEC:
		pid = ((const struct pmcring_rec_procexec *)rec)->pl_pid;
		break;
	case PMCRING_TYPE_PROC_CREATE:
		pid = ((const struct pmcring_rec_proc_create *)rec)->pl_pid;
		break;
	case PMCRING_TYPE_MAP_IN:
		pid = ((const struct pmcring_rec_map_in *)rec)->pl_pid;
		break;
	case PMCRING_TYPE_PROCFORK:
		pid = ((const struct pmcring_rec_procfork *)rec)->pl_oldpid;
		other = ((const struct pmcring_rec_procfork *)rec)->pl_newpid;
		break;
	case PMCRING_TYPE_THR_CREATE:
		pid = ((const struct pmcring_rec_thr_create *)rec)->pl_pid;
		break;
	case PMCRING_TYPE_PROCEXIT:
		pid = ((const struct pmcring_rec_procexit *)rec)->pl_pid;
		break;
	}
	(void)len;
	if (pid == q->pid || other == q->pid)
		q->n++;
	if (pid == q->ppid)
		q->pn++;
}

static void q_skip(const uint8_t *rec, uint32_t type, uint32_t len,
		   void *arg)
{
	(void)rec;
	(void)type;
	(void)len;
	(void)arg;
}

/* cpu-clock at 1 ms: any machine has it, TCG included */
static void counter_init(struct pmcring_counter *c)
{
	memset(c, 0, sizeof(*c));
	c->type = PERF_TYPE_SOFTWARE;
	c->config = PERF_COUNT_SW_CPU_CLOCK;
	c->rate = 1000000;
	strcpy(c->name, "cpu-clock");
}

static void reap(pid_t *pid)
{
	if (*pid > 0) {
		kill(*pid, SIGKILL);
		waitpid(*pid, NULL, 0);
	}
	*pid = 0;
}

TEST(stale_pid_not_recorded_at_reenable)
{
	struct pmcring_config swc = {
		.data_pages = 2,
		.flags = PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_NO_SYNTH,
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_PROCCSW),
	};
	unsigned int round, tried = 0, hits = 0, records = 0, precords = 0;
	uint64_t end;
	int sw;

	PMCRING_REQUIRE_DEV();
	if (access("/proc/sys/kernel/ns_last_pid", W_OK))
		SKIP(return, "no writable ns_last_pid (CONFIG_CHECKPOINT_RESTORE)");
	/* A system-wide session keeps the switch probe writing. */
	sw = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, sw);
	ASSERT_EQ(0, rt_ioctl(sw, PMCRING_IOC_CONFIGURE, &swc));
	ASSERT_EQ(0, rt_ioctl(sw, PMCRING_IOC_ENABLE, NULL));
	end = rt_now_ns() + ROUND_BUDGET_S * 1000000000ull;
	for (round = 0; round < ROUNDS_MAX && rt_now_ns() < end; round++) {
		struct pmcring_config cfg = {
			.data_pages = 16,
			.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH,
		};
		int go[2], out[2], ready[2];
		pid_t p = 0, c = 0, q = 0;
		struct q_count qc = { 0 };
		struct pmcring_counter ctr;
		struct rt_sess s;
		pid_t b2;
		char b;

		ASSERT_EQ(0, pipe2(go, O_CLOEXEC));
		ASSERT_EQ(0, pipe2(out, O_CLOEXEC));
		ASSERT_EQ(0, pipe2(ready, O_CLOEXEC));
		p = fork();
		ASSERT_LE(0, p);
		if (!p)
			p_main(go[0], out[1]);
		cfg.pid = p;
		ASSERT_EQ(0, rt_open_cfg(&s, &cfg, 1));
		ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
		ASSERT_EQ(1, write(go[1], "x", 1));
		ASSERT_EQ(sizeof(c), read(out[0], &c, sizeof(c)));
		ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
		/*
		 * A counter added while disabled walks the tree again and
		 * puts C back in the set, which DISABLE emptied: only
		 * ENABLE's own forgetting can take it out now.
		 */
		counter_init(&ctr);
		ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &ctr));
		/* C dies and is reaped while the session is off the probes. */
		kill(c, SIGKILL);
		ASSERT_EQ(sizeof(c), read(out[0], &c, sizeof(c)));
		ASSERT_EQ(0, pmcring_write_int("/proc/sys/kernel/ns_last_pid",
					       c - 1));
		q = fork();
		ASSERT_LE(0, q);
		if (!q)
			q_main(ready[1]);
		if (q == c) {
			tried++;
			ASSERT_EQ(1, read(ready[0], &b, 1));
			/* Everything up to here is the first enable's. */
			ASSERT_LE(0, rt_each(&s, q_skip, NULL));
			ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
			/* P wakes and answers: the session records it. */
			ASSERT_EQ(1, write(go[1], "x", 1));
			ASSERT_EQ(sizeof(c), read(out[0], &b2, sizeof(b2)));
			usleep(1000);
			ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE,
					      NULL));
			qc.pid = q;
			qc.ppid = p;
			ASSERT_LE(0, rt_each(&s, q_each, &qc));
			if (qc.n) {
				hits++;
				records += qc.n;
			}
			precords += qc.pn;
		}
		reap(&q);
		reap(&p);
		rt_close(&s);
		close(go[0]);
		close(go[1]);
		close(out[0]);
		close(out[1]);
		close(ready[0]);
		close(ready[1]);
	}
	close(sw);
	rt_info("%u rounds, %u with Q on C's pid, %u recorded Q (%u records), %u records of the target\n",
		round, tried, hits, records, precords);
	if (tried < ROUNDS_MIN)
		SKIP(return, "only %u rounds gave Q the stale pid", tried);
	EXPECT_EQ(0, hits);
	/* The re-enabled session records its target: not a vacuous pass. */
	EXPECT_LT(0, precords);
}

TEST_HARNESS_MAIN
