// SPDX-License-Identifier: GPL-2.0
/*
 * Description: no drops under skew.  PMCRING_IOC_GENERATE writes bursts on
 * CPU 0 (64 records every 5 ms, a sixteenth of its 16-page ring each) while
 * the other CPUs are idle and slow to publish their bound: the merge's
 * clock reads 200 ms in the past (a valid bound, only a late one), so no
 * record of CPU 0 can be handed out until 200 ms after its commit.  With
 * an on-time clock the consumer keeps up, nothing is lost (the control);
 * with the late one and no staging the ring fills and drops (the number is
 * printed, and must not be 0, or the test did not make the skew it is
 * about); with staging (the default, 64 MiB) the records wait in user
 * memory: nothing is lost, every record comes out once, in order.
 *
 * NEEDS_LIBPMCRING
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pmcring_test.h"
#include "libpmcring.h"

#define SKEW_PAGES	16		/* 64 KiB of data per CPU */
#define SKEW_LAG_NS	200000000ull	/* the late bound: 200 ms */
#define SKEW_RECORDS	20000		/* 1.3 MB on CPU 0, in 1.6 s */
#define SKEW_SIZE	64
/*
 * Records every SKEW_TICK_NS: 4 KiB, so the ring holds 80 ms of bursts.
 * That is far less than the late bound's 200 ms (without staging the ring
 * must drop), but enough for a consumer vCPU that the host leaves
 * unscheduled for a while: with 256 (20 ms of bursts) a CI run on a
 * loaded host lost 123 records with staging on.
 */
#define SKEW_BURST	64
#define SKEW_TICK_NS	5000000ull

struct gen_thread {
	struct pmcring		*s;
	struct pmcring_generate	req;
	int			ret;
	atomic_bool		done;
};

static void *gen_main(void *arg)
{
	struct gen_thread *g = arg;
	struct pmcring_generate req = g->req;
	uint64_t left = req.count;
	struct timespec next;

	clock_gettime(CLOCK_MONOTONIC, &next);
	while (left && !g->ret) {
		req.count = left < SKEW_BURST ? left : SKEW_BURST;
		g->ret = pmcring_generate(g->s, &req);
		left -= req.count;
		next.tv_nsec += SKEW_TICK_NS;
		if (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL);
	}
	atomic_store(&g->done, true);
	return NULL;
}

/* The session clock, SKEW_LAG_NS late: every idle CPU's bound lags. */
static int late_clock(void *ctx, uint64_t *now)
{
	int ret = pmcring_clock(ctx, now);

	if (!ret)
		*now = *now > SKEW_LAG_NS ? *now - SKEW_LAG_NS : 0;
	return ret;
}

struct skew_result {
	uint64_t	out;		/* GENERATED records handed out */
	uint64_t	lost;		/* CPU 0's lost counter */
	uint64_t	staged;		/* bytes CPU 0's ring staged */
	bool		skipped;	/* skew() skipped: nothing to check */
};

static void skew(struct __test_metadata *_metadata, bool late, bool staging,
		 struct skew_result *res)
{
	uint64_t cpu0_mask = 1;
	struct pmcring_opts opts = {
		.sz = sizeof(opts),
		.data_pages = SKEW_PAGES,
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
			 PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY),
	};
	struct pmcring_merge_opts mo = {
		.sz = sizeof(mo),
		.clock = late ? late_clock : NULL,	/* NULL: on time */
		.flags = PMCRING_MERGE_F_AUTO_CONSUME |
			 (staging ? 0 : PMCRING_MERGE_F_NO_STAGING),
	};
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	struct gen_thread g = { .ret = 0 };
	uint64_t last_ts = 0;
	struct pmcring_merge *m;
	struct pmcring_record r;
	struct pmcring_info info;
	cpu_set_t set;
	pthread_t th;
	int ret;

	res->skipped = true;	/* until past the SKIPs */
	if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
		SKIP(return, "needs 2 CPUs: CPU 0 bursts, the others lag");
	PMCRING_REQUIRE_DEV();
	struct pmcring *s = pmcring_new(&opts);

	ASSERT_NE(NULL, s) TH_LOG("pmcring_new: %s", strerror(errno));
	pmcring_info(s, &info);
	if (!(info.types_supported & PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED))) {
		pmcring_free(s);
		SKIP(return, "the module cannot GENERATE");
	}
	res->skipped = false;
	/* the consumer off CPU 0, so it is not what slows the burst */
	CPU_ZERO(&set);
	CPU_SET(1, &set);
	sched_setaffinity(0, sizeof(set), &set);
	mo.clock_ctx = late ? s : NULL;
	m = pmcring_merge_new_session(s, &mo);
	ASSERT_NE(NULL, m) TH_LOG("merge_new_session: %s", strerror(errno));

	g.s = s;
	g.req = (struct pmcring_generate){
		.count = SKEW_RECORDS, .size = SKEW_SIZE,
		.flags = PMCRING_GEN_F_TASK,
		.cpus = (uintptr_t)&cpu0_mask, .cpus_size = sizeof(cpu0_mask),
	};
	ASSERT_EQ(0, pthread_create(&th, NULL, gen_main, &g));
	for (;;) {
		const struct pmcring_rec_generated *rec;

		ret = pmcring_merge_next(m, &r);
		ASSERT_LE(0, ret) TH_LOG("merge_next: %s", strerror(-ret));
		if (!ret) {
			struct pollfd pfd = { .fd = pmcring_fd(s),
					      .events = POLLIN };

			pmcring_cpu_buf_stats(pmcring_cpu_buf(s, 0), &st);
			/* done: all committed on CPU 0 handed out */
			if (atomic_load(&g.done) && st.records == st.prod_records)
				break;
			poll(&pfd, 1, 1);
			continue;
		}
		ASSERT_LE(last_ts, r.ts) TH_LOG("out of order on cpu %u", r.cpu);
		last_ts = r.ts;
		ASSERT_EQ(0, r.cpu);
		if (r.type == PMCRING_TYPE_DROPNOTIFY)
			continue;
		ASSERT_EQ(PMCRING_TYPE_GENERATED, r.type);
		rec = r.data;
		/*
		 * each record once, in ring order (pl_seq starts at 0 in
		 * every burst): checked where nothing may be lost
		 */
		if (!late || staging) {
			pmcring_cpu_buf_stats(pmcring_cpu_buf(s, 0), &st);
			ASSERT_EQ(res->out % SKEW_BURST, rec->pl_seq)
				TH_LOG("record %llu: %s", (unsigned long long)res->out,
				       st.lost ? "records lost (counted): the consumer did not run for 80 ms?" :
						 "out of sequence, nothing lost: a merge bug");
		}
		res->out++;
	}
	pthread_join(th, NULL);
	ASSERT_EQ(0, g.ret) TH_LOG("GENERATE: %s", strerror(-g.ret));
	pmcring_cpu_buf_stats(pmcring_cpu_buf(s, 0), &st);
	res->lost = st.lost;
	res->staged = st.staged;
	ASSERT_EQ(SKEW_RECORDS, res->out + res->lost);
	TH_LOG("%s bound, staging %s: %llu records on CPU 0, %llu handed "
	       "out, %llu lost, %llu bytes staged", late ? "late" : "on-time",
	       staging ? "on" : "off",
	       (unsigned long long)SKEW_RECORDS, (unsigned long long)res->out,
	       (unsigned long long)res->lost, (unsigned long long)res->staged);
	pmcring_merge_free(m);
	pmcring_free(s);
}

/* The control: without the skew the consumer keeps up at this rate. */
TEST(no_skew_no_drops)
{
	struct skew_result res = { 0 };

	skew(_metadata, false, false, &res);
	if (res.skipped)
		return;
	ASSERT_EQ(0, res.lost) TH_LOG("drops without skew: the rate is too high");
}

/* Today's behaviour, and the proof that the test makes the skew. */
TEST(skew_without_staging_drops)
{
	struct skew_result res = { 0 };

	skew(_metadata, true, false, &res);
	if (res.skipped)
		return;
	ASSERT_LT(0, res.lost) TH_LOG("no drops: the burst did not fill the ring");
	ASSERT_EQ(0, res.staged);
}

TEST(skew_with_staging_no_drops)
{
	struct skew_result res = { 0 };

	skew(_metadata, true, true, &res);
	if (res.skipped)
		return;
	ASSERT_EQ(0, res.lost);
	ASSERT_EQ(SKEW_RECORDS, res.out);
	ASSERT_LT(0, res.staged);
}

TEST_HARNESS_MAIN
