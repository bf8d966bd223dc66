// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the permission model of the record sources.  An
 * unprivileged user (uid/gid 65534) is refused a system-wide session
 * (EACCES), may follow its own processes when perf_event_paranoid <= 2 and
 * then gets no kernel-mode sample at all (its counters exclude the kernel,
 * as perf's at paranoid 2) and no kernel address, is
 * refused its own processes when perf_event_paranoid is 3 (Debian) and
 * other users' processes always; a missing target is ESRCH; root gets
 * kernel addresses.
 *
 * The test makes /dev/pmcring world-accessible and changes
 * kernel.perf_event_paranoid for its duration, then restores both.
 *
 * NEEDS_LIBPMCRING
 */
#include <fcntl.h>
#include <grp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/pmcring.h>

#include "libpmcring.h"
#include "pmcring_test.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
/* Lowest address of the x86-64 kernel half. */
#define KERNEL_HALF	0xffff800000000000ull

static struct pmcring *session_new(pid_t pid, uint32_t flags)
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.data_pages = 128,
		.flags = flags | (pid ? PMCRING_CFG_F_PID : 0),
		.pid = pid,
	};

	return pmcring_new(&o);
}

/*
 * Sample the calling process (a per-pid session on itself) while it burns
 * kernel time.  Returns 0 when kernel-mode samples with kernel addresses
 * were seen (@want_kaddr true), or no kernel-mode sample and no kernel
 * address at all (@want_kaddr false), and the kernel-module MAP_IN records
 * synthesized at enable agree; a positive code otherwise.
 */
static int sample_self(bool want_kaddr)
{
	struct pmcring_counter c = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_CPU_CLOCK,
		.rate = 1000000,
	};
	unsigned int cpu, kernel = 0, kmods = 0, bad = 0;
	struct pmcring_record r;
	struct pmcring *s;

	s = session_new(getpid(), 0);
	if (!s)
		return 20;
	if (pmcring_add_counter(s, &c) || pmcring_enable(s))
		return 21;
	pmcring_burn_kernel(400);
	if (pmcring_disable(s))
		return 22;
	for (cpu = 0; cpu < pmcring_nr_cpus(s); cpu++) {
		struct pmcring_cpu_buf *b = pmcring_cpu_buf(s, cpu);

		while (b && pmcring_cpu_buf_peek(b, &r) == 1) {
			const struct pmcring_rec_callchain *cc = r.data;
			unsigned int i, n = (r.len - 32) / 8;

			pmcring_cpu_buf_next(b);
			/* synthesized module mappings: addresses hidden too */
			if (r.type == PMCRING_TYPE_MAP_IN &&
			    ((const struct pmcring_rec_map_in *)r.data)->pl_pid ==
			    (uint32_t)-1) {
				const struct pmcring_rec_map_in *mi = r.data;

				kmods++;
				if (want_kaddr != (mi->pl_start >= KERNEL_HALF))
					bad++;
			}
			if (r.type != PMCRING_TYPE_CALLCHAIN)
				continue;
			for (i = 0; i < n; i++)
				if (!want_kaddr && cc->pl_pc[i] >= KERNEL_HALF)
					bad++;
			if (cc->pl_cpuflags & PMCRING_CC_F_USERSPACE)
				continue;
			kernel++;
			if (want_kaddr != (cc->pl_pc[0] >= KERNEL_HALF))
				bad++;
		}
	}
	pmcring_free(s);
	if (!want_kaddr && kernel)
		return 26;	/* kernel-mode samples at paranoid 2 */
	if (want_kaddr && !kernel)
		return 23;
	if (!kmods)
		return 25;
	return bad ? 24 : 0;
}

/* pmcring_new() as configured by @arg: 0 on success, else its errno. */
static int try_session(void *arg)
{
	const struct pmcring_opts *o = arg;
	struct pmcring *s = pmcring_new(o);

	if (!s)
		return errno;
	pmcring_free(s);
	return 0;
}

/* A per-pid session on the calling process itself. */
static int try_self(void *arg __attribute__((unused)))
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.flags = PMCRING_CFG_F_PID,
		.pid = getpid(),
	};

	return try_session(&o);
}

static int sample_self_nokaddr(void *arg __attribute__((unused)))
{
	return sample_self(false);
}

FIXTURE(perm) {
	struct pmcring_perm_state saved;
};

FIXTURE_SETUP(perm)
{
	self->saved = (struct pmcring_perm_state){ 0, PMCRING_UNSAVED };
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_perm_save(&self->saved));
	if (self->saved.paranoid == PMCRING_UNSAVED)
		SKIP(return, "%s not readable", PARANOID);
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
}

FIXTURE_TEARDOWN(perm)
{
	pmcring_perm_restore(&self->saved);
}

TEST_F(perm, system_wide_needs_cap_perfmon)
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.flags = PMCRING_CFG_F_SYSTEM_WIDE,
	};

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */

	ASSERT_EQ(0, pmcring_write_int(PARANOID, -1));
	EXPECT_EQ(EACCES, pmcring_as_nobody(try_session, &o));
	EXPECT_EQ(0, try_session(&o));
}

TEST_F(perm, own_process_without_kernel_addresses)
{
	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	EXPECT_EQ(0, pmcring_as_nobody(sample_self_nokaddr, NULL));
}

TEST_F(perm, root_sees_kernel_addresses)
{
	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	EXPECT_EQ(0, sample_self(true));
}

TEST_F(perm, paranoid_3_refuses_own_process)
{
	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 3));
	EXPECT_EQ(EACCES, pmcring_as_nobody(try_self, NULL));
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	EXPECT_EQ(0, pmcring_as_nobody(try_self, NULL));
}

TEST_F(perm, other_users_process_refused)
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.flags = PMCRING_CFG_F_PID,
		.pid = 1,
	};

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */

	ASSERT_EQ(0, pmcring_write_int(PARANOID, -1));
	EXPECT_EQ(EACCES, pmcring_as_nobody(try_session, &o));
	EXPECT_EQ(0, try_session(&o));
}

TEST_F(perm, missing_target_is_esrch)
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.flags = PMCRING_CFG_F_PID,
	};
	pid_t pid = fork();

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */

	ASSERT_LE(0, pid);
	if (!pid)
		_exit(0);
	ASSERT_EQ(pid, waitpid(pid, NULL, 0));
	o.pid = pid;		/* reaped: no such process any more */
	EXPECT_EQ(ESRCH, try_session(&o));
}

TEST_HARNESS_MAIN
