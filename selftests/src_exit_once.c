// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a process whose 64 threads and main thread all exit at once
 * gets exactly one PROCEXIT and one SYSEXIT (and one THR_EXIT per thread).
 * The exit probe must not decide "last thread" by reading signal->live
 * afterwards: threads that exit together all read 0 there.  The same with
 * 200 unreaped zombies made while a session wanted PROCEXIT (a module
 * whose claims live until the reap, in a table of 128, lets the threads
 * after the table filled all write them), and every zombie gets its one.
 *
 * NEEDS_LIBPMCRING
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/pmcring.h>

#include "libpmcring.h"
#include "pmcring_test.h"

#define THREADS		64
#define ROUNDS		6

static pthread_barrier_t barrier;

/* Leave this thread only (SYS_exit, not exit_group) after the barrier. */
static void *thread_fn(void *arg)
{
	(void)arg;
	pthread_barrier_wait(&barrier);
	syscall(SYS_exit, 0);
	return NULL;
}

/* The followed process: 64 threads + main leave at the same moment. */
static int exiter(int go)
{
	pthread_t th;
	char ch;
	int i;

	if (read(go, &ch, 1) != 1)
		return 1;
	if (pthread_barrier_init(&barrier, NULL, THREADS + 1))
		return 2;
	for (i = 0; i < THREADS; i++)
		if (pthread_create(&th, NULL, thread_fn, NULL))
			return 3;
	pthread_barrier_wait(&barrier);
	syscall(SYS_exit, 0);
	return 4;
}

struct counts {
	unsigned int	procexit, sysexit, thr_exit;
};

/* THR_EXIT of @pid's threads: tids from @pid up (fresh pids, in order). */
static int count(struct pmcring *s, pid_t pid, struct counts *n)
{
	struct pmcring_record r;
	unsigned int cpu;
	int ret;

	for (cpu = 0; cpu < pmcring_nr_cpus(s); cpu++) {
		struct pmcring_cpu_buf *b = pmcring_cpu_buf(s, cpu);

		if (!b)
			return -1;
		while ((ret = pmcring_cpu_buf_peek(b, &r)) == 1) {
			const uint32_t *w = r.data;

			if (r.type == PMCRING_TYPE_PROCEXIT &&
			    w[5] == (uint32_t)pid)
				n->procexit++;
			if (r.type == PMCRING_TYPE_SYSEXIT &&
			    w[4] == (uint32_t)pid)
				n->sysexit++;
			if (r.type == PMCRING_TYPE_THR_EXIT &&
			    w[4] >= (uint32_t)pid &&
			    w[4] <= (uint32_t)pid + THREADS + 64)
				n->thr_exit++;
			pmcring_cpu_buf_next(b);
		}
		if (ret < 0)
			return ret;
	}
	return 0;
}

PMCRING_FIXTURE_EMPTY(exit_once);

/* The rounds: one exiter each, in a session of its own; 0 or a failure. */
static void rounds(struct __test_metadata *_metadata)
{
	int round, bad = 0;

	for (round = 0; round < ROUNDS; round++) {
		struct counts n = { 0 };
		struct pmcring_opts o = {
			.sz = sizeof(o),
			.data_pages = 64,
			/* Odd rounds system-wide: no target set to clear. */
			.flags = (round & 1 ? PMCRING_CFG_F_SYSTEM_WIDE :
				  PMCRING_CFG_F_PID) | PMCRING_CFG_F_NO_SYNTH,
			.types = PMCRING_TYPE_BIT(PMCRING_TYPE_PROCEXIT) |
				 PMCRING_TYPE_BIT(PMCRING_TYPE_SYSEXIT) |
				 PMCRING_TYPE_BIT(PMCRING_TYPE_THR_EXIT),
		};
		struct pmcring *s;
		int go[2], status;
		pid_t c;

		ASSERT_EQ(0, pipe(go));
		c = fork();
		ASSERT_LE(0, c);
		if (!c)
			_exit(exiter(go[0]));
		o.pid = round & 1 ? 0 : c;
		s = pmcring_new(&o);
		ASSERT_NE(NULL, s);
		ASSERT_EQ(0, pmcring_enable(s));
		ASSERT_EQ(1, write(go[1], "g", 1));
		ASSERT_EQ(c, waitpid(c, &status, 0));
		ASSERT_EQ(0, pmcring_disable(s));
		ASSERT_EQ(0, count(s, c, &n));
		close(go[0]);
		close(go[1]);
		pmcring_free(s);
		EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
			TH_LOG("status %#x", status);
		EXPECT_EQ(THREADS + 1, n.thr_exit) TH_LOG("round %d", round);
		if (n.procexit != 1 || n.sysexit != 1) {
			TH_LOG("round %d: %u PROCEXIT, %u SYSEXIT for pid %d",
			       round, n.procexit, n.sysexit, c);
			bad++;
		}
	}
	EXPECT_EQ(0, bad);
}

TEST_F_TIMEOUT(exit_once, sixty_four_threads, 120)
{
	PMCRING_REQUIRE_DEV();
	rounds(_metadata);
}

#define ZOMBIES		200

TEST_F_TIMEOUT(exit_once, past_two_hundred_zombies, 120)
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.data_pages = 64,
		.flags = PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_NO_SYNTH,
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_PROCEXIT),
	};
	unsigned int i, once = 0;
	pid_t z[ZOMBIES];
	struct pmcring *s;

	PMCRING_REQUIRE_DEV();
	s = pmcring_new(&o);
	ASSERT_NE(NULL, s);
	ASSERT_EQ(0, pmcring_enable(s));
	for (i = 0; i < ZOMBIES; i++) {
		z[i] = fork();
		ASSERT_LE(0, z[i]);
		if (!z[i])
			_exit(0);
	}
	/* All exited (not reaped): their PROCEXIT are in the rings. */
	for (i = 0; i < ZOMBIES; i++)
		ASSERT_EQ(0, waitid(P_PID, z[i], NULL, WEXITED | WNOWAIT));
	rounds(_metadata);
	ASSERT_EQ(0, pmcring_disable(s));
	{
		struct pmcring_record r;
		unsigned int cpu, seen[ZOMBIES] = { 0 };
		int ret;

		for (cpu = 0; cpu < pmcring_nr_cpus(s); cpu++) {
			struct pmcring_cpu_buf *b = pmcring_cpu_buf(s, cpu);

			ASSERT_NE(NULL, b);
			while ((ret = pmcring_cpu_buf_peek(b, &r)) == 1) {
				const uint32_t *w = r.data;

				for (i = 0; r.type == PMCRING_TYPE_PROCEXIT &&
				     i < ZOMBIES; i++)
					seen[i] += w[5] == (uint32_t)z[i];
				pmcring_cpu_buf_next(b);
			}
			ASSERT_LE(0, ret);
		}
		for (i = 0; i < ZOMBIES; i++)
			once += seen[i] == 1;
	}
	EXPECT_EQ(ZOMBIES, once);
	for (i = 0; i < ZOMBIES; i++)
		waitpid(z[i], NULL, 0);
	pmcring_free(s);
}

TEST_HARNESS_MAIN
