/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for pmcring selftests, on top of kselftest_harness.h.
 *
 * Include this instead of kselftest_harness.h.  It adds:
 *  - PMCRING_REQUIRE_DEV(): SKIP the current test, with the reason, when
 *    /dev/pmcring is missing (module not loaded) or we are not root;
 *  - exit status 4 (KSFT_SKIP) when every test of the program skipped, so
 *    the kselftest runner reports "ok N ... # SKIP" instead of a pass (the
 *    6.1 harness exits 0 then);
 *  - a SKIP() in FIXTURE_SETUP() skips the test without running its body
 *    (the 6.1 harness runs the body anyway);
 *  - small helpers several test programs share (below PMCRING_DEV_PATH):
 *    sysctl/sysfs numbers, a clock, kernel time to sample, CPU pinning, an
 *    unprivileged child, the module's reference count, an empty fixture.
 *
 * A program whose test children print defines PMCRING_TEST_LINE_BUFFERED
 * before including this header: its stdout is then line-buffered.
 */
#ifndef PMCRING_SELFTEST_H
#define PMCRING_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "kselftest_harness.h"

#ifndef FIXTURE_TEARDOWN_PARENT
/*
 * The 6.1 harness runs the test body even when FIXTURE_SETUP() SKIP()ped
 * (SKIP leaves _metadata->passed set), so a body touching what setup never
 * made crashes instead of skipping.  Same wrapper, but stop after a skip in
 * setup, as later harness versions (which define FIXTURE_TEARDOWN_PARENT)
 * do.
 */
#undef __TEST_F_IMPL
#define __TEST_F_IMPL(fixture_name, test_name, signal, tmout) \
	static void fixture_name##_##test_name( \
		struct __test_metadata *_metadata, \
		FIXTURE_DATA(fixture_name) *self, \
		const FIXTURE_VARIANT(fixture_name) *variant); \
	static inline void wrapper_##fixture_name##_##test_name( \
		struct __test_metadata *_metadata, \
		struct __fixture_variant_metadata *variant) \
	{ \
		/* fixture data is alloced, setup, and torn down per call. */ \
		FIXTURE_DATA(fixture_name) self; \
		memset(&self, 0, sizeof(FIXTURE_DATA(fixture_name))); \
		if (setjmp(_metadata->env) == 0) { \
			fixture_name##_setup(_metadata, &self, variant->data); \
			/* Let setup failure or skip terminate early. */ \
			if (!_metadata->passed || _metadata->skip) \
				return; \
			_metadata->setup_completed = true; \
			fixture_name##_##test_name(_metadata, &self, variant->data); \
		} \
		if (_metadata->setup_completed) \
			fixture_name##_teardown(_metadata, &self, variant->data); \
		__test_check_assert(_metadata); \
	} \
	static struct __test_metadata \
		      _##fixture_name##_##test_name##_object = { \
		.name = #test_name, \
		.fn = &wrapper_##fixture_name##_##test_name, \
		.fixture = &_##fixture_name##_fixture_object, \
		.termsig = signal, \
		.timeout = tmout, \
	 }; \
	static void __attribute__((constructor)) \
			_register_##fixture_name##_##test_name(void) \
	{ \
		__register_test(&_##fixture_name##_##test_name##_object); \
	} \
	static void fixture_name##_##test_name( \
		struct __test_metadata __attribute__((unused)) *_metadata, \
		FIXTURE_DATA(fixture_name) __attribute__((unused)) *self, \
		const FIXTURE_VARIANT(fixture_name) \
			__attribute__((unused)) *variant)
#endif

#define PMCRING_DEV_PATH "/dev/pmcring"

/* True when the pmcring module is loaded (built in or as a module). */
static inline int pmcring_module_loaded(void)
{
	return access("/sys/module/pmcring", F_OK) == 0;
}

/* SKIP the calling TEST() unless /dev/pmcring exists and we are root. */
#define PMCRING_REQUIRE_DEV() do {					\
	if (access(PMCRING_DEV_PATH, F_OK))				\
		SKIP(return, "%s missing (pmcring module not loaded)",	\
		     PMCRING_DEV_PATH);					\
	if (geteuid() != 0)						\
		SKIP(return, "needs root to open %s", PMCRING_DEV_PATH); \
} while (0)

/*
 * Runs after the harness' exit(): every test skipped -> exit 4.  Test
 * children leave with _exit() and never get here.
 */
static void __attribute__((destructor)) pmcring_test_exit_skip(void)
{
	if (ksft_cnt.ksft_xskip && !ksft_cnt.ksft_pass &&
	    !ksft_cnt.ksft_fail && !ksft_cnt.ksft_error) {
		fflush(NULL);
		_exit(KSFT_SKIP);
	}
}

#ifdef PMCRING_TEST_LINE_BUFFERED
/*
 * Line-buffered stdout: test children leave with _exit(), and a fully
 * buffered stdout (a file, a pipe) would lose what they printed.
 */
static void __attribute__((constructor)) pmcring_test_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}
#endif

/* ---- helpers shared by several test programs ---- */

#define PMCRING_NOBODY		65534	/* uid and gid of "nobody" */
#define PMCRING_REFCNT_PATH	"/sys/module/pmcring/refcnt"

/* The number at the start of the file @path (a sysctl), or @fail. */
static inline long pmcring_read_long(const char *path, long fail)
{
	char buf[32] = "";
	int fd = open(path, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return fail;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	return n > 0 ? strtol(buf, NULL, 10) : fail;
}

/* Write "@v\n" to @path (a sysctl); 0, or -1 when it was not written. */
static inline int pmcring_write_int(const char *path, int v)
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

#define PMCRING_PARANOID_PATH	"/proc/sys/kernel/perf_event_paranoid"
#define PMCRING_UNSAVED		(-1000)

/*
 * What a permission test changes and its teardown puts back: the device
 * node's mode (0: not saved) and perf_event_paranoid (PMCRING_UNSAVED).
 */
struct pmcring_perm_state {
	mode_t	mode;
	long	paranoid;
};

/* 0, or -1 when the device node cannot be stat()ed. */
static inline int pmcring_perm_save(struct pmcring_perm_state *st)
{
	struct stat sb;

	st->mode = 0;
	st->paranoid = pmcring_read_long(PMCRING_PARANOID_PATH,
					 PMCRING_UNSAVED);
	if (stat(PMCRING_DEV_PATH, &sb))
		return -1;
	st->mode = sb.st_mode & 07777;
	return 0;
}

static inline void pmcring_perm_restore(const struct pmcring_perm_state *st)
{
	if (st->mode)
		chmod(PMCRING_DEV_PATH, st->mode);
	if (st->paranoid != PMCRING_UNSAVED)
		pmcring_write_int(PMCRING_PARANOID_PATH, (int)st->paranoid);
}

/* The module's reference count, -1 when it is not a loaded module. */
static inline long pmcring_module_refcnt(void)
{
	return pmcring_read_long(PMCRING_REFCNT_PATH, -1);
}

static inline uint64_t pmcring_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* @ms of time in the kernel, to be sampled: clear_user() of /dev/zero. */
static inline void pmcring_burn_kernel(unsigned int ms)
{
	static char buf[1 << 20];
	uint64_t end = pmcring_now_ns() + ms * 1000000ull;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return;
	while (pmcring_now_ns() < end)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

/* Run the calling thread on @cpu only; 0, or -1 with errno. */
static inline int pmcring_pin_cpu(unsigned int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set);
}

/*
 * Become nobody.  Changing credentials makes a process non-dumpable, which
 * ptrace (and pmcring) honour: dumpable again, as after an exec.
 */
static inline int pmcring_drop_privileges(void)
{
	if (setgroups(0, NULL) || setgid(PMCRING_NOBODY) ||
	    setuid(PMCRING_NOBODY))
		return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

/*
 * Run @fn(@arg) as nobody in a child.  Returns its exit status (100: the
 * child could not drop its privileges), 200 + the signal that killed it,
 * or -1 when there was no child.
 */
static inline int pmcring_as_nobody(int (*fn)(void *), void *arg)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		if (pmcring_drop_privileges())
			_exit(100);
		status = fn(arg);
		fflush(stdout);
		_exit(status);
	}
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFSIGNALED(status))
		return 200 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

/*
 * A fixture that holds nothing, for TEST_F_TIMEOUT() (the 6.1 harness has
 * no TEST() with a timeout).
 */
#define PMCRING_FIXTURE_EMPTY(name)					\
	FIXTURE(name) {							\
		int unused;						\
	};								\
	FIXTURE_SETUP(name)						\
	{								\
		self->unused = 0;					\
	}								\
	FIXTURE_TEARDOWN(name)						\
	{								\
	}

#endif /* PMCRING_SELFTEST_H */
