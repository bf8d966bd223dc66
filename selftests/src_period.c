// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a frequency-mode counter's samples carry their period.  On
 * every CPU's ring each CALLCHAIN of such a counter is preceded by a PERIOD
 * record (type 33) of its pmcid, and a PERIOD is written only when the
 * period changes: cpu-clock -F 1000 has the fixed period 1000000 ns (perf
 * turns its frequency into a period) and so at most one PERIOD per CPU;
 * page-faults -F has periods that perf adjusts as it goes, whose sum is
 * within a few percent of the faults the process took (getrusage()), where
 * the count of samples is not.  A fixed-period counter (-c) and a session
 * whose types leave PERIOD out get CALLCHAINs and no PERIOD.  The sum of
 * cpu-clock's periods is compared to the CPU time the process used.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "ring_common.h"

#define NR_PMCID	9	/* pmcid 1..8 */

/* What one drain saw, over every ring. */
struct period_stats {
	uint64_t	samples[NR_PMCID];	/* CALLCHAINs per pmcid */
	uint64_t	unweighted[NR_PMCID];	/* ...with no PERIOD before */
	uint64_t	periods[NR_PMCID];	/* PERIOD records per pmcid */
	uint64_t	same[NR_PMCID];		/* PERIODs equal to the last */
	uint64_t	sum[NR_PMCID];		/* sum of the samples' periods */
	uint64_t	min[NR_PMCID], max[NR_PMCID];	/* of the PERIODs */
	uint64_t	bad;			/* malformed PERIOD records */
	uint64_t	lost;
};

/*
 * Read every ring in order, keeping the last PERIOD of each pmcid per ring
 * (the module's rule: a PERIOD applies to the samples of its pmcid that
 * follow it on the same ring).
 */
static void drain(struct rt_sess *s, struct period_stats *st)
{
	unsigned int cpu, id;

	memset(st, 0, sizeof(*st));
	for (id = 0; id < NR_PMCID; id++)
		st->min[id] = UINT64_MAX;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct rt_ring *r = &s->rings[cpu];
		uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;
		uint64_t last[NR_PMCID] = { 0 };

		while (pos != head) {
			const uint8_t *p = r->data + (pos & mask);
			const struct pmcring_rec_header *h = (const void *)p;
			uint32_t len = PMCRING_HEADER_LEN(h->pl_header);
			uint32_t type = PMCRING_HEADER_TYPE(h->pl_header);

			if (len < PMCRING_HEADER_SIZE)
				break;
			if (type == PMCRING_TYPE_PERIOD) {
				const struct pmcring_rec_period *pr =
					(const void *)p;

				id = pr->pl_pmcid;
				if (len != PMCRING_SIZE_PERIOD || id == 0 ||
				    id >= NR_PMCID || pr->pl_cpu != cpu ||
				    !pr->pl_period || h->pl_spare) {
					st->bad++;
				} else {
					st->periods[id]++;
					st->same[id] += last[id] == pr->pl_period;
					last[id] = pr->pl_period;
					if (pr->pl_period < st->min[id])
						st->min[id] = pr->pl_period;
					if (pr->pl_period > st->max[id])
						st->max[id] = pr->pl_period;
				}
			} else if (type == PMCRING_TYPE_CALLCHAIN) {
				const struct pmcring_rec_callchain *cc =
					(const void *)p;

				id = cc->pl_pmcid < NR_PMCID ? cc->pl_pmcid : 0;
				st->samples[id]++;
				st->unweighted[id] += !last[id];
				st->sum[id] += last[id];
			}
			pos += PMCRING_RING_SPACE(len);
		}
		rt_consume(r, pos);
		st->lost += rt_prod(&r->prod->lost);
	}
}

static int open_self(struct rt_sess *s, uint64_t types)
{
	struct pmcring_config cfg = { 0 };

	cfg.data_pages = 256;
	cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
	cfg.pid = getpid();
	cfg.types = types;
	return rt_open_cfg(s, &cfg, 1);
}

static int add_counter(struct rt_sess *s, uint64_t config, uint32_t flags,
		       uint64_t rate, uint32_t *pmcid)
{
	struct pmcring_counter c;
	int err;

	memset(&c, 0, sizeof(c));
	c.type = PERF_TYPE_SOFTWARE;
	c.config = config;
	c.flags = flags;
	c.rate = rate;
	err = rt_ioctl(s->fd, PMCRING_IOC_ADD_COUNTER, &c);
	*pmcid = c.pmcid;
	return err;
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static volatile unsigned long sink;

/* Burn @ms of CPU time in user mode. */
static void burn(unsigned int ms)
{
	uint64_t end = cpu_ns() + ms * 1000000ull;
	unsigned long i, x = 1;

	while (cpu_ns() < end)
		for (i = 0; i < 100000; i++)
			x = x * 6364136223846793005ul + 1442695040888963407ul;
	sink = x;
}

/* Take minor page faults for @ms of CPU time: touch fresh anonymous pages. */
static void fault(unsigned int ms)
{
	size_t page = sysconf(_SC_PAGESIZE), size = 4u << 20, off;
	uint64_t end = cpu_ns() + ms * 1000000ull;
	char *p;

	while (cpu_ns() < end) {
		p = mmap(NULL, size, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			return;
		/* one fault per page, not per huge page (6.12 maps THPs) */
		madvise(p, size, MADV_NOHUGEPAGE);
		for (off = 0; off < size; off += page)
			p[off] = 1;
		munmap(p, size);
	}
}

static long minflt(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_minflt;
}

#define TYPES_ALL_CC	(PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN) | \
			 PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD))

static void require_period(struct __test_metadata *_metadata,
			   struct rt_sess *s)
{
	if (!(s->info.types_supported &
	      PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD))) {
		rt_close(s);
		SKIP(return, "the module writes no PERIOD records");
	}
}

TEST(cpu_clock_freq)
{
	uint64_t t0, t1, nr_online = rt_online_cpus();
	struct period_stats st;
	struct rt_sess s;
	uint32_t id;
	double ratio;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, open_self(&s, TYPES_ALL_CC));
	require_period(_metadata, &s);
	ASSERT_EQ(0, add_counter(&s, PERF_COUNT_SW_CPU_CLOCK,
				 PMCRING_CTR_F_FREQ, 1000, &id));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	t0 = cpu_ns();
	burn(400);
	t1 = cpu_ns();
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	drain(&s, &st);
	ratio = (double)st.sum[id] / (double)(t1 - t0);
	rt_info("cpu-clock -F 1000: %llu samples, %llu PERIOD (%llu..%llu), sum %llu ns, CPU time %llu ns, ratio %.3f, lost %llu\n",
		(unsigned long long)st.samples[id],
		(unsigned long long)st.periods[id],
		(unsigned long long)st.min[id], (unsigned long long)st.max[id],
		(unsigned long long)st.sum[id],
		(unsigned long long)(t1 - t0), ratio,
		(unsigned long long)st.lost);
	EXPECT_EQ(0, st.bad);
	EXPECT_EQ(0, st.lost);
	ASSERT_LT(50, st.samples[id]);
	/* Every sample has its period; each is 1e9 / 1000 ns. */
	EXPECT_EQ(0, st.unweighted[id]);
	EXPECT_EQ(1000000, st.min[id]);
	EXPECT_EQ(1000000, st.max[id]);
	EXPECT_EQ(st.samples[id] * 1000000, st.sum[id]);
	/* Written once per ring, not once per sample. */
	EXPECT_LE(st.periods[id], nr_online);
	EXPECT_EQ(0, st.same[id]);
	/*
	 * The periods add up to the CPU time sampled; under TCG an hrtimer
	 * that fires late loses the ticks it overran, so only below.
	 */
	EXPECT_LE(ratio, 1.05);
	EXPECT_GE(ratio, 0.5);
	rt_close(&s);
}

TEST(page_faults_freq)
{
	struct period_stats st;
	struct rt_sess s;
	long f0, f1;
	uint32_t id;
	double ratio;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, open_self(&s, TYPES_ALL_CC));
	require_period(_metadata, &s);
	ASSERT_EQ(0, add_counter(&s, PERF_COUNT_SW_PAGE_FAULTS,
				 PMCRING_CTR_F_FREQ, 2000, &id));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	f0 = minflt();
	fault(400);
	f1 = minflt();
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	drain(&s, &st);
	ratio = (double)st.sum[id] / (double)(f1 - f0);
	rt_info("page-faults -F 2000: %llu samples, %llu PERIOD (%llu..%llu), sum %llu, faults %ld, ratio %.3f, lost %llu\n",
		(unsigned long long)st.samples[id],
		(unsigned long long)st.periods[id],
		(unsigned long long)st.min[id], (unsigned long long)st.max[id],
		(unsigned long long)st.sum[id], f1 - f0, ratio,
		(unsigned long long)st.lost);
	EXPECT_EQ(0, st.bad);
	EXPECT_EQ(0, st.lost);
	/* enough faults per tick for perf to raise the period above 1 */
	ASSERT_LT(2000, f1 - f0);
	ASSERT_LT(20, st.samples[id]);
	EXPECT_EQ(0, st.unweighted[id]);
	/* perf adjusted the period: more than one value, none repeated. */
	EXPECT_LT(st.min[id], st.max[id]);
	EXPECT_LT(1, st.periods[id]);
	EXPECT_EQ(0, st.same[id]);
	/* The samples stand for the faults, up to the period not yet done. */
	EXPECT_LE(st.sum[id], (uint64_t)(f1 - f0) * 105 / 100 + st.max[id]);
	EXPECT_GE(st.sum[id] + st.max[id], (uint64_t)(f1 - f0) * 95 / 100);
	rt_close(&s);
}

/* -c N: PMCALLOCATE's rate is the period, no PERIOD is written. */
TEST(fixed_period_none)
{
	struct period_stats st;
	struct rt_sess s;
	uint32_t id;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, open_self(&s, TYPES_ALL_CC));
	require_period(_metadata, &s);
	ASSERT_EQ(0, add_counter(&s, PERF_COUNT_SW_CPU_CLOCK, 0, 1000000,
				 &id));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	burn(200);
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	drain(&s, &st);
	rt_info("cpu-clock -c 1000000: %llu samples, %llu PERIOD\n",
		(unsigned long long)st.samples[id],
		(unsigned long long)st.periods[id]);
	ASSERT_LT(20, st.samples[id]);
	EXPECT_EQ(0, st.periods[id]);
	EXPECT_EQ(0, st.bad);
	rt_close(&s);
}

/* Types without PERIOD: the samples still come, without periods. */
TEST(types_without_period)
{
	struct period_stats st;
	struct rt_sess s;
	uint32_t id;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, open_self(&s, PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN)));
	require_period(_metadata, &s);
	ASSERT_EQ(0, add_counter(&s, PERF_COUNT_SW_CPU_CLOCK,
				 PMCRING_CTR_F_FREQ, 1000, &id));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	burn(200);
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	drain(&s, &st);
	ASSERT_LT(20, st.samples[id]);
	EXPECT_EQ(0, st.periods[id]);
	EXPECT_EQ(st.samples[id], st.unweighted[id]);
	rt_close(&s);
}

/*
 * Two frequency-mode counters in one session: each sample is preceded by
 * a PERIOD of its own pmcid, whatever the other counter wrote between.
 */
TEST(two_counters)
{
	struct period_stats st;
	struct rt_sess s;
	uint32_t a, b;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, open_self(&s, TYPES_ALL_CC));
	require_period(_metadata, &s);
	ASSERT_EQ(0, add_counter(&s, PERF_COUNT_SW_CPU_CLOCK,
				 PMCRING_CTR_F_FREQ, 500, &a));
	ASSERT_EQ(0, add_counter(&s, PERF_COUNT_SW_PAGE_FAULTS,
				 PMCRING_CTR_F_FREQ, 1000, &b));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	fault(300);
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	drain(&s, &st);
	rt_info("two counters: %llu + %llu samples, %llu + %llu PERIOD\n",
		(unsigned long long)st.samples[a],
		(unsigned long long)st.samples[b],
		(unsigned long long)st.periods[a],
		(unsigned long long)st.periods[b]);
	ASSERT_LT(10, st.samples[a]);
	ASSERT_LT(10, st.samples[b]);
	EXPECT_EQ(0, st.unweighted[a]);
	EXPECT_EQ(0, st.unweighted[b]);
	EXPECT_EQ(2000000, st.min[a]);
	EXPECT_EQ(2000000, st.max[a]);
	EXPECT_EQ(0, st.bad);
	rt_close(&s);
}

TEST_HARNESS_MAIN
