// SPDX-License-Identifier: GPL-2.0
/*
 * Description: overload accounting.  Every online CPU generates as fast as
 * it can from process context and from a hard-IRQ timer at once, into
 * small rings, while one consumer drains all of them, for
 * HARD_OVERLOAD_SECONDS (default 4; 30 in "make fuzz").  After each
 * GENERATE call, per CPU and exactly: records generated == records drained
 * + the producer page's lost count, the producer's committed count ==
 * records drained, no sequence number appears twice or out of order, and
 * every gap in a stream is covered by lost records.  Record sizes cycle
 * from the smallest to the largest.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

struct gen_call {
	int		fd;
	uint64_t	count;
	uint32_t	size;
	int		err;
	volatile int	done;
};

static void *gen_thread(void *p)
{
	struct gen_call *g = p;

	g->err = rt_generate(g->fd, g->count, g->size,
			     PMCRING_GEN_F_TASK | PMCRING_GEN_F_HARDIRQ,
			     NULL, 0, 256);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

PMCRING_FIXTURE_EMPTY(hard)

/* make fuzz runs 30 s of overload: more than the default 30 s timeout. */
TEST_F_TIMEOUT(hard, overload_generated_equals_written_plus_dropped, 170)
{
	static const uint32_t sizes[] = { 16, 32, 64, 256, 1024, PMCRING_RECORD_MAX };
	uint64_t lost0[RT_MAX_CPUS], rec0[RT_MAX_CPUS];
	uint64_t tot_gen = 0, tot_written = 0, tot_lost = 0, calls = 0;
	unsigned int secs, cpu, nr_online, k = 0;
	struct rt_stats *st;
	struct rt_sess s;
	uint64_t end;

	PMCRING_REQUIRE_DEV();
	secs = getenv("HARD_OVERLOAD_SECONDS") ?
	       atoi(getenv("HARD_OVERLOAD_SECONDS")) : 4;
	if (secs > 120)		/* the last GENERATE call may take a while */
		secs = 120;
	nr_online = rt_online_cpus();
	/* 8 pages per CPU: the consumer cannot keep up, rings overflow. */
	ASSERT_EQ(0, rt_open(&s, 8, 0, 1));
	st = calloc(s.nr_cpus, sizeof(*st));
	ASSERT_NE(NULL, st);

	end = rt_now_ns() + secs * 1000000000ull;
	while (rt_now_ns() < end) {
		struct gen_call g = { .fd = s.fd, .size = sizes[k++ % 6] };
		pthread_t th;
		int more;

		/* About a second of work per call at TCG speed. */
		g.count = g.size > 1024 ? 3000 : 20000;
		for (cpu = 0; cpu < s.nr_cpus; cpu++) {
			memset(&st[cpu], 0, sizeof(st[cpu]));
			st[cpu].allow_gaps = 1;
			st[cpu].size = g.size;
			lost0[cpu] = rt_prod(&s.rings[cpu].prod->lost);
			rec0[cpu] = rt_prod(&s.rings[cpu].prod->records);
		}
		ASSERT_EQ(0, pthread_create(&th, NULL, gen_thread, &g));
		do {
			more = !__atomic_load_n(&g.done, __ATOMIC_ACQUIRE);
			/* One last pass after GENERATE returned: all committed. */
			for (cpu = 0; cpu < s.nr_cpus; cpu++)
				ASSERT_LE(0, rt_drain(&s.rings[cpu], &st[cpu]))
					TH_LOG("%s", st[cpu].err);
		} while (more);
		pthread_join(th, NULL);
		ASSERT_EQ(0, g.err);
		calls++;

		for (cpu = 0; cpu < s.nr_cpus; cpu++) {
			uint64_t lost = rt_prod(&s.rings[cpu].prod->lost) - lost0[cpu];
			uint64_t recs = rt_prod(&s.rings[cpu].prod->records) - rec0[cpu];
			uint64_t written = st[cpu].gen[PMCRING_GEN_CTX_TASK] +
					   st[cpu].gen[PMCRING_GEN_CTX_HARDIRQ];
			uint64_t gen = cpu < (unsigned int)nr_online ? 2 * g.count : 0;

			if (g.size < 24)	/* no pl_seq: counts only */
				written = st[cpu].gen[0];
			EXPECT_EQ(gen, written + lost)
				TH_LOG("cpu %u size %u: generated %llu, written %llu, lost %llu",
				       cpu, g.size, (unsigned long long)gen,
				       (unsigned long long)written,
				       (unsigned long long)lost);
			EXPECT_EQ(recs, st[cpu].records)
				TH_LOG("cpu %u: committed %llu, drained %llu", cpu,
				       (unsigned long long)recs,
				       (unsigned long long)st[cpu].records);
			EXPECT_GE(lost, st[cpu].missing);
			/*
			 * A run of drops is announced before the next record
			 * that fits: a gap followed by a record means a
			 * DROPNOTIFY was written.
			 */
			if (st[cpu].missing)
				EXPECT_LE(1, st[cpu].dropnotify);
			tot_gen += gen;
			tot_written += written;
			tot_lost += lost;
		}
	}
	printf("# overload: seconds=%u cpus=%u calls=%llu generated=%llu written=%llu dropped=%llu\n",
	       secs, nr_online, (unsigned long long)calls,
	       (unsigned long long)tot_gen, (unsigned long long)tot_written,
	       (unsigned long long)tot_lost);
	EXPECT_EQ(tot_gen, tot_written + tot_lost);
	EXPECT_LT(0, tot_lost);	/* it really was an overload */
	free(st);
	rt_close(&s);
}

TEST_HARNESS_MAIN
