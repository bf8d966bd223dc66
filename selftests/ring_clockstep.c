// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the merge stays in order when one CPU's clock steps back.
 * The record clock, ktime_get_mono_fast_ns(), is not monotonic across CPUs
 * during a timekeeper update (Documentation/abi.rst, "The clock"); the
 * module's test hook test_clock_step makes that happen on purpose: CPU 1's
 * clock reads half the uptime less (seconds).  A USERDATA record on CPU 0 is handed out on the
 * clock bound that CPU 0 gives for the idle CPU 1; then CPU 1 writes one
 * stamped below it.  The merge must hand it out no earlier than the record
 * it already handed out, and count the lift in CPU 1's backwards; CPU 1's
 * ring must itself stay in order (its next record, after the step is
 * undone, comes later).  Without the hook, or with a merge that trusts
 * the clock, the second record goes out earlier in time than the first.
 *
 * NEEDS_LIBPMCRING
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "pmcring_test.h"
#include "libpmcring.h"

#define STEP_PATH	"/sys/module/pmcring/parameters/test_clock_step"
#define HOOKS_PATH	"/sys/module/pmcring/parameters/test_hooks"

static int write_str(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY), n;

	if (fd < 0)
		return -1;
	n = write(fd, v, strlen(v));
	close(fd);
	return n == (int)strlen(v) ? 0 : -1;
}

/* The next record out of @m, waiting for at most a second. */
static int next_rec(struct pmcring_merge *m, struct pmcring_record *r)
{
	int i, ret;

	for (i = 0; i < 100; i++) {
		ret = pmcring_merge_next(m, r);
		if (ret)
			return ret;
		usleep(10000);
	}
	return 0;
}

static uint32_t userdata(const struct pmcring_record *r)
{
	const struct pmcring_rec_userdata *u = r->data;

	return u->pl_userdata;
}

FIXTURE(clockstep) {
	struct pmcring		*s;
	struct pmcring_merge	*m;
	cpu_set_t		orig;
};

FIXTURE_SETUP(clockstep)
{
	struct pmcring_opts opts = {
		.sz = sizeof(opts),
		.data_pages = 4,
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_USERDATA),
	};

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(self->orig), &self->orig));
	if (!CPU_ISSET(0, &self->orig) || !CPU_ISSET(1, &self->orig))
		SKIP(return, "needs CPUs 0 and 1 (make check boots 2)");
	ASSERT_EQ(0, pmcring_write_int(HOOKS_PATH, 1))
		TH_LOG("test_hooks: %s", strerror(errno));
	self->s = pmcring_new(&opts);
	ASSERT_NE(NULL, self->s) TH_LOG("pmcring_new: %s", strerror(errno));
	ASSERT_EQ(0, pmcring_enable(self->s));
	self->m = pmcring_merge_new_session(self->s, NULL);
	ASSERT_NE(NULL, self->m);
}

FIXTURE_TEARDOWN(clockstep)
{
	write_str(STEP_PATH, "off");
	pmcring_write_int(HOOKS_PATH, 0);
	sched_setaffinity(0, sizeof(self->orig), &self->orig);
	pmcring_merge_free(self->m);
	pmcring_free(self->s);
}

TEST_F(clockstep, merge_lifts_a_record_below_what_went_out)
{
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	struct pmcring_record r1, r2, r3;
	uint64_t now0, now1, step;
	char arg[64];

	/* CPU 0 writes; the merge hands it out on CPU 1's clock bound. */
	ASSERT_EQ(0, pmcring_pin_cpu(0));
	ASSERT_EQ(0, pmcring_writelog(self->s, 1));
	ASSERT_EQ(1, next_rec(self->m, &r1));
	ASSERT_EQ(1, userdata(&r1));
	ASSERT_EQ(0, r1.cpu);

	/*
	 * CPU 1's clock steps back by half the uptime (the clock counts from
	 * boot), far more than the time to the next record; CPU 0's does not.
	 */
	ASSERT_EQ(0, pmcring_clock(self->s, &now0));
	step = now0 / 2;
	snprintf(arg, sizeof(arg), "1:%llu", (unsigned long long)step);
	ASSERT_EQ(0, write_str(STEP_PATH, arg))
		TH_LOG("%s: %s (a module without the hook?)", STEP_PATH,
		       strerror(errno));
	ASSERT_EQ(0, pmcring_pin_cpu(1));
	ASSERT_EQ(0, pmcring_clock(self->s, &now1));
	ASSERT_GT(now0, now1 + step / 2) TH_LOG("the hook made no step");
	ASSERT_EQ(0, pmcring_writelog(self->s, 2));

	/* Merge on CPU 0, whose clock bound is ahead of CPU 1's record. */
	ASSERT_EQ(0, pmcring_pin_cpu(0));
	ASSERT_EQ(1, next_rec(self->m, &r2));
	ASSERT_EQ(2, userdata(&r2));
	ASSERT_EQ(1, r2.cpu);
	ASSERT_LE(r1.ts, r2.ts)
		TH_LOG("out of order: %llu after %llu",
		       (unsigned long long)r2.ts, (unsigned long long)r1.ts);
	ASSERT_EQ(0, pmcring_cpu_stats(self->s, 1, &st));
	EXPECT_EQ(1, st.backwards);

	/* The step undone: CPU 1's next record is later, nothing lifted. */
	ASSERT_EQ(0, write_str(STEP_PATH, "off"));
	ASSERT_EQ(0, pmcring_pin_cpu(1));
	ASSERT_EQ(0, pmcring_writelog(self->s, 3));
	ASSERT_EQ(0, pmcring_pin_cpu(0));
	ASSERT_EQ(1, next_rec(self->m, &r3));
	ASSERT_EQ(3, userdata(&r3));
	ASSERT_LT(r2.ts, r3.ts);
	ASSERT_EQ(0, pmcring_cpu_stats(self->s, 1, &st));
	EXPECT_EQ(1, st.backwards);
}

TEST_HARNESS_MAIN
