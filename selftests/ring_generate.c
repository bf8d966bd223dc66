// SPDX-License-Identifier: GPL-2.0
/*
 * Description: GENERATE then consume, on one CPU and on all online CPUs,
 * from process context, hard-IRQ context and both: every record arrives
 * intact, once, in sequence, on the ring of the CPU that wrote it, and the
 * producer page counters match what the consumer read.
 */
#include <signal.h>
#include <sys/time.h>
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

static void on_alarm(int sig)
{
	(void)sig;
}

/* A signal stops an endless GENERATE; nothing is written after it returns. */
TEST(interrupted)
{
	struct sigaction sa = { .sa_handler = on_alarm };
	struct itimerval it = { .it_value = { .tv_usec = 300000 } };
	uint64_t head0, head1;
	struct rt_sess s;
	int cpu;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 4, 0, 1));
	ASSERT_EQ(0, sigaction(SIGALRM, &sa, NULL));
	ASSERT_EQ(0, setitimer(ITIMER_REAL, &it, NULL));
	EXPECT_EQ(-EINTR, rt_generate(s.fd, 1ull << 62, 64, PMCRING_GEN_F_ALL,
				      NULL, 0, 0));
	for (cpu = 0; cpu < rt_online_cpus(); cpu++) {
		struct rt_ring *r = &s.rings[cpu];

		head0 = rt_head(r);
		EXPECT_NE(0, rt_prod(&r->prod->lost) + head0);
		usleep(100000);
		rt_consume(r, head0);
		usleep(100000);
		head1 = rt_head(r);
		EXPECT_EQ(head0, head1) TH_LOG("cpu %d still written", cpu);
	}
	rt_close(&s);
}

/* Producer cost as seen from GENERATE (informational; TCG is slow). */
TEST(throughput)
{
	const uint64_t n = 200000;
	struct rt_sess s;
	uint64_t t0, t1;
	int cpu;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 4096, 0, 1));
	for (cpu = 0; cpu < 2; cpu++) {
		uint32_t size = cpu ? 256 : 32;

		t0 = rt_now_ns();
		ASSERT_EQ(0, rt_generate_on(s.fd, 0, n, size, PMCRING_GEN_F_TASK));
		t1 = rt_now_ns();
		rt_info("%llu records of %u bytes on one CPU: %.1f ns/record (%llu lost)\n",
			       (unsigned long long)n, size,
			       (double)(t1 - t0) / n,
			       (unsigned long long)rt_prod(&s.rings[0].prod->lost));
		rt_consume(&s.rings[0], rt_head(&s.rings[0]));
	}
	rt_close(&s);
}

TEST_HARNESS_MAIN
