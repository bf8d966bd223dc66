// SPDX-License-Identifier: GPL-2.0
/*
 * Description: GENERATE then consume, on one CPU and on all online CPUs,
 * from process context, hard-IRQ context and both: every record arrives
 * intact, once, in sequence, on the ring of the CPU that wrote it, and the
 * producer page counters match what the consumer read.
 */
#include "ring_common.h"

#define COUNT	1000

static void gen_check(struct __test_metadata *_metadata, int only_cpu,
		      uint32_t flags, uint32_t size)
{
	int online = rt_online_cpus();
	struct rt_sess s;
	unsigned int cpu;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 64, 0, 1));
	if (only_cpu >= 0) {
		ASSERT_EQ(0, rt_generate_on(s.fd, only_cpu, COUNT, size, flags));
	} else {
		ASSERT_EQ(0, rt_generate(s.fd, COUNT, size, flags, NULL, 0, 0));
	}

	for (cpu = 0; cpu < s.nr_cpus; cpu++) {
		struct rt_ring *r = &s.rings[cpu];
		struct rt_stats st = { .size = size };
		int chosen = only_cpu >= 0 ? (int)cpu == only_cpu :
			     (int)cpu < online;
		uint64_t want = chosen ? COUNT : 0;

		ASSERT_LE(0, rt_drain(r, &st)) TH_LOG("%s", st.err);
		if (size < 32) {
			/* No pl_ctx: one stream only (see the callers). */
			EXPECT_EQ(want, st.gen[0]) TH_LOG("cpu %u", cpu);
		} else {
			EXPECT_EQ(flags & PMCRING_GEN_F_TASK ? want : 0,
				  st.gen[PMCRING_GEN_CTX_TASK])
				TH_LOG("cpu %u", cpu);
			EXPECT_EQ(flags & PMCRING_GEN_F_HARDIRQ ? want : 0,
				  st.gen[PMCRING_GEN_CTX_HARDIRQ])
				TH_LOG("cpu %u", cpu);
		}
		EXPECT_EQ(0, st.missing);
		EXPECT_EQ(0, st.dropnotify + st.other + st.userdata);
		EXPECT_EQ(st.records, rt_prod(&r->prod->records));
		EXPECT_EQ(st.bytes, rt_prod(&r->prod->bytes));
		EXPECT_EQ(st.bytes, rt_head(r));
		EXPECT_EQ(0, rt_prod(&r->prod->lost));
		EXPECT_EQ(0, rt_prod(&r->prod->pending_ts));
	}
	rt_close(&s);
}

TEST(one_cpu_task)
{
	gen_check(_metadata, 0, PMCRING_GEN_F_TASK, 64);
}

TEST(one_cpu_hardirq)
{
	gen_check(_metadata, 0, PMCRING_GEN_F_HARDIRQ, 48);
}

TEST(one_cpu_both)
{
	gen_check(_metadata, 0, PMCRING_GEN_F_ALL, 128);
}

TEST(last_cpu_both)
{
	gen_check(_metadata, rt_online_cpus() - 1, PMCRING_GEN_F_ALL, 32);
}

TEST(all_cpus_task)
{
	gen_check(_metadata, -1, PMCRING_GEN_F_TASK, 16);
	gen_check(_metadata, -1, PMCRING_GEN_F_TASK, 24);
}

TEST(all_cpus_hardirq)
{
	gen_check(_metadata, -1, PMCRING_GEN_F_HARDIRQ, 256);
}

TEST(all_cpus_both)
{
	gen_check(_metadata, -1, PMCRING_GEN_F_ALL, 40);
}

TEST_HARNESS_MAIN
