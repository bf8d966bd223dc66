// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the permission model of the record sources.  An
 * unprivileged user (uid/gid 65534) is refused a system-wide session
 * (EACCES), may follow its own processes when perf_event_paranoid <= 2 and
 * then gets no kernel addresses (kernel frames of CALLCHAIN are 0), is
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

#define NOBODY		65534
#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
/* Lowest address of the x86-64 kernel half. */
#define KERNEL_HALF	0xffff800000000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* Time in the kernel: clear_user() of /dev/zero reads. */
static void burn_kernel(unsigned int ms)
{
	uint64_t end = now_ns() + ms * 1000000ull;
	static char buf[1 << 20];
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return;
	while (now_ns() < end)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

static int read_int(const char *path)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY), n;

	if (fd < 0)
		return -1000;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? atoi(buf) : -1000;
}

static int write_int(const char *path, int v)
{
	char buf[32];
	int fd = open(path, O_WRONLY), n, len;

	if (fd < 0)
		return -1;
	len = snprintf(buf, sizeof(buf), "%d\n", v);
	n = write(fd, buf, len);
	close(fd);
	return n == len ? 0 : -1;
}

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
 * Become nobody.  Changing credentials makes a process non-dumpable, which
 * ptrace (and pmcring) honour: dumpable again, as after an exec.
 */
static int drop_privileges(void)
{
	if (setgroups(0, NULL) || setgid(NOBODY) || setuid(NOBODY))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/*
 * Sample the calling process (a per-pid session on itself) while it burns
 * kernel time.  Returns 0 when kernel-mode samples were seen and their
 * kernel frames are all 0 (@want_kaddr false) or all kernel addresses
 * (@want_kaddr true), and the same holds for the kernel-module MAP_IN
 * records synthesized at enable; a positive code otherwise.
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
	burn_kernel(400);
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
	if (!kernel)
		return 23;
	if (!kmods)
		return 25;
	return bad ? 24 : 0;
}

/* Run @fn as nobody in a child; its exit status. */
static int as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(drop_privileges() ? 100 : fn(arg));
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
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
	mode_t	mode;
	int	paranoid;
};

FIXTURE_SETUP(perm)
{
	struct stat st;

	self->paranoid = -1000;
	self->mode = 0;
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, stat(PMCRING_DEV_PATH, &st));
	self->mode = st.st_mode & 07777;
	self->paranoid = read_int(PARANOID);
	if (self->paranoid == -1000)
		SKIP(return, "%s not readable", PARANOID);
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
}

FIXTURE_TEARDOWN(perm)
{
	if (self->mode)
		chmod(PMCRING_DEV_PATH, self->mode);
	if (self->paranoid != -1000)
		write_int(PARANOID, self->paranoid);
}

TEST_F(perm, system_wide_needs_cap_perfmon)
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.flags = PMCRING_CFG_F_SYSTEM_WIDE,
	};

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */

	ASSERT_EQ(0, write_int(PARANOID, -1));
	EXPECT_EQ(EACCES, as_nobody(try_session, &o));
	EXPECT_EQ(0, try_session(&o));
}

TEST_F(perm, own_process_without_kernel_addresses)
{
	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	ASSERT_EQ(0, write_int(PARANOID, 2));
	EXPECT_EQ(0, as_nobody(sample_self_nokaddr, NULL));
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
	ASSERT_EQ(0, write_int(PARANOID, 3));
	EXPECT_EQ(EACCES, as_nobody(try_self, NULL));
	ASSERT_EQ(0, write_int(PARANOID, 2));
	EXPECT_EQ(0, as_nobody(try_self, NULL));
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

	ASSERT_EQ(0, write_int(PARANOID, -1));
	EXPECT_EQ(EACCES, as_nobody(try_session, &o));
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
