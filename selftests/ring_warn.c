// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a record length the producer must refuse.  GENERATE's
 * PMCRING_GEN_F_BAD_LEN hook reserves every record with length size - 2
 * (not a multiple of 4): pmcring_ring_reserve() must WARN_ON_ONCE() and
 * drop each one, counted in the result's dropped[] and in the ring's lost,
 * with a DROPNOTIFY before the next good record; nothing is written.  The
 * hook needs the module parameter test_hooks (EPERM without), which the
 * test sets and clears.
 *
 * The WARNING is the point, and vmrun fails any run whose dmesg holds one:
 * so this test runs only when PMCRING_TEST_WARN=1 says the caller expects
 * it, and skips (saying so) otherwise, e.g. in make check.  Run it as
 *	selftests/vmrun --no-splat-check --env PMCRING_TEST_WARN=1 -- ring_warn
 * It then checks the guest's kernel log itself: one WARNING from
 * pmcring_ring_reserve for the whole boot (it is WARN_ON_ONCE), none other.
 */
#include <fcntl.h>
#include "ring_common.h"

/* WARNING lines in /dev/kmsg, and how many name pmcring_ring_reserve. */
static void kmsg_warnings(unsigned int *all, unsigned int *ours)
{
	char buf[8192];
	int fd = open("/dev/kmsg", O_RDONLY | O_NONBLOCK);
	ssize_t n;
	int in_warn = 0;

	*all = *ours = 0;
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf) - 1)) > 0 || (n < 0 && errno == EPIPE)) {
		if (n <= 0)
			continue;	/* EPIPE: overwritten records, go on */
		buf[n] = '\0';
		if (strstr(buf, "WARNING:")) {
			(*all)++;
			in_warn = 1;
			if (strstr(buf, "pmcring_ring_reserve"))
				(*ours)++, in_warn = 0;
		} else if (in_warn && strstr(buf, "RIP:") &&
			   strstr(buf, "pmcring_ring_reserve")) {
			(*ours)++;
			in_warn = 0;
		}
	}
	close(fd);
}

TEST(bad_length_warns_and_drops)
{
	const char *env = getenv("PMCRING_TEST_WARN");
	struct pmcring_config cfg = { 0 };
	struct pmcring_generate g = {
		.count = 100, .size = 64,
		.flags = PMCRING_GEN_F_TASK | PMCRING_GEN_F_BAD_LEN,
	};
	uint64_t mask = 1, lost = 0, before = 0;
	unsigned int all, ours, all0, ours0, round;
	struct rt_stats st;
	struct rt_sess s;
	long n;

	PMCRING_REQUIRE_DEV();
	if (!env || strcmp(env, "1"))
		SKIP(return, "expects a kernel WARNING, which vmrun counts as a failure: run with vmrun --no-splat-check --env PMCRING_TEST_WARN=1");
	kmsg_warnings(&all0, &ours0);
	cfg.data_pages = 16;
	cfg.flags = PMCRING_CFG_F_NO_SYNTH;
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
		    PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY);
	ASSERT_EQ(0, rt_open_cfg(&s, &cfg, 1));
	g.cpus = (uintptr_t)&mask;
	g.cpus_size = sizeof(mask);
	before = rt_prod(&s.rings[0].prod->lost);
	ASSERT_EQ(0, rt_test_hooks(0));
	EXPECT_EQ(-EPERM, rt_ioctl(s.fd, PMCRING_IOC_GENERATE, &g))
		TH_LOG("the hooks are off by default");
	ASSERT_EQ(0, rt_test_hooks(1));
	for (round = 0; round < 2; round++) {
		ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_GENERATE, &g));
		EXPECT_EQ(0, g.written[PMCRING_GEN_CTX_TASK]);
		EXPECT_EQ(g.count, g.dropped[PMCRING_GEN_CTX_TASK]);
	}
	rt_test_hooks(0);
	lost = rt_prod(&s.rings[0].prod->lost) - before;
	EXPECT_EQ(2 * g.count, lost);
	EXPECT_EQ(rt_head(&s.rings[0]), s.rings[0].tail)
		TH_LOG("nothing written for a refused record");

	/* The next good record comes after one DROPNOTIFY. */
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 1, 64, PMCRING_GEN_F_TASK));
	memset(&st, 0, sizeof(st));
	st.size = 64;
	n = rt_drain(&s.rings[0], &st);
	ASSERT_LE(0, n) TH_LOG("%s", st.err);
	EXPECT_EQ(2, n);
	EXPECT_EQ(1, st.dropnotify);
	EXPECT_EQ(1, st.gen[PMCRING_GEN_CTX_TASK]);

	kmsg_warnings(&all, &ours);
	rt_info("%llu records refused, lost %llu; kernel log: %u WARNING(s) from pmcring_ring_reserve (%u before), %u in all\n",
		(unsigned long long)(2 * g.count), (unsigned long long)lost,
		ours, ours0, all);
	/* WARN_ON_ONCE: one for the boot, whoever triggered it first. */
	EXPECT_EQ(1, ours);
	EXPECT_EQ(all - all0, ours - ours0) TH_LOG("an unexpected WARNING");
	rt_close(&s);
}

TEST_HARNESS_MAIN
