// SPDX-License-Identifier: GPL-2.0
/*
 * Description: poll() on a session: EPOLLIN exactly when a ring holds at
 * least the watermark (not one record before), a sleeping poller is woken
 * when the watermark is crossed (also after a partial consume), FLUSH
 * wakes once whatever the watermark, and DISABLE after ENABLE gives
 * EPOLLIN | EPOLLHUP.
 */
#include <pthread.h>
#include "ring_common.h"

#define WM	4096
#define RECSZ	64

static short poll_now(int fd, int timeout_ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	int n = poll(&p, 1, timeout_ms);

	return n > 0 ? p.revents : (short)n;
}

TEST(watermark_exact)
{
	struct rt_stats st = { 0 };
	struct rt_sess s;
	struct rt_ring *r;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 16, WM, 1));
	r = &s.rings[0];
	EXPECT_EQ(WM, r->ctl->watermark);
	EXPECT_EQ(0, poll_now(s.fd, 0));
	/* One record short of the watermark. */
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, WM / RECSZ - 1, RECSZ,
				    PMCRING_GEN_F_TASK));
	EXPECT_EQ(0, poll_now(s.fd, 50));
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 1, RECSZ, PMCRING_GEN_F_HARDIRQ));
	EXPECT_EQ(POLLIN, poll_now(s.fd, 0));
	/* Consuming below the watermark clears it. */
	ASSERT_LT(0, rt_drain(r, &st)) TH_LOG("%s", st.err);
	EXPECT_EQ(0, poll_now(s.fd, 0));
	/* Another CPU's ring counts too. */
	if (s.nr_cpus > 1 && rt_online_cpus() > 1) {
		ASSERT_EQ(0, rt_generate_on(s.fd, 1, WM / RECSZ, RECSZ,
					    PMCRING_GEN_F_TASK));
		EXPECT_EQ(POLLIN, poll_now(s.fd, 0));
	}
	rt_close(&s);
}

struct poller {
	int		fd;
	short		revents;
	volatile int	done;
	uint64_t	woke_ns;
};

static void *poller(void *arg)
{
	struct poller *p = arg;

	p->revents = poll_now(p->fd, 20000);
	p->woke_ns = rt_now_ns();
	p->done = 1;
	return NULL;
}

static void sleep_ms(int ms)
{
	usleep(ms * 1000);
}

static void wake_at_watermark(struct __test_metadata *_metadata,
			      uint32_t flags)
{
	struct poller p = { 0 };
	struct rt_sess s;
	struct rt_ring *r;
	uint64_t t_cross;
	pthread_t th;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 16, WM, 1));
	r = &s.rings[0];
	p.fd = s.fd;

	/* Partial consume first: half a watermark stays in the ring. */
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, WM / RECSZ + WM / RECSZ / 2,
				    RECSZ, flags));
	EXPECT_EQ(POLLIN, poll_now(s.fd, 0));
	rt_consume(r, WM);
	EXPECT_EQ(0, poll_now(s.fd, 0));

	ASSERT_EQ(0, pthread_create(&th, NULL, poller, &p));
	sleep_ms(100);
	/* Up to one record short: the poller must keep sleeping. */
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, WM / RECSZ / 2 - 1, RECSZ, flags));
	sleep_ms(200);
	EXPECT_EQ(0, p.done) TH_LOG("poll returned below the watermark");
	t_cross = rt_now_ns();
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 1, RECSZ, flags));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(POLLIN, p.revents);
	EXPECT_LT(p.woke_ns - t_cross, 5000000000ull);
	EXPECT_EQ(2 * WM, rt_head(r));
	EXPECT_EQ(0, rt_prod(&r->prod->lost));
	rt_close(&s);
}

TEST(wake_at_watermark_task)
{
	wake_at_watermark(_metadata, PMCRING_GEN_F_TASK);
}

TEST(wake_at_watermark_hardirq)
{
	wake_at_watermark(_metadata, PMCRING_GEN_F_HARDIRQ);
}

TEST(flush_wakes_once)
{
	struct poller p = { 0 };
	struct rt_sess s;
	pthread_t th;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 16, WM, 1));
	p.fd = s.fd;
	ASSERT_EQ(0, pthread_create(&th, NULL, poller, &p));
	sleep_ms(100);
	EXPECT_EQ(0, p.done);
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_FLUSH, NULL));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(POLLIN, p.revents);
	EXPECT_EQ(0, poll_now(s.fd, 0));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_FLUSH, NULL));
	EXPECT_EQ(POLLIN, poll_now(s.fd, 0));
	EXPECT_EQ(0, poll_now(s.fd, 0));
	rt_close(&s);
}

TEST(disable_hangs_up)
{
	struct poller p = { 0 };
	struct rt_sess s;
	pthread_t th;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 16, WM, 1));
	p.fd = s.fd;
	/* Disabling a session never enabled changes nothing. */
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	EXPECT_EQ(0, poll_now(s.fd, 0));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	ASSERT_EQ(0, pthread_create(&th, NULL, poller, &p));
	sleep_ms(100);
	EXPECT_EQ(0, p.done);
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	ASSERT_EQ(0, pthread_join(th, NULL));
	EXPECT_EQ(POLLIN | POLLHUP, p.revents);
	EXPECT_EQ(POLLIN | POLLHUP, poll_now(s.fd, 0));
	/* Enabled again: no longer hung up. */
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	EXPECT_EQ(0, poll_now(s.fd, 0));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	rt_close(&s);
}

TEST_HARNESS_MAIN
