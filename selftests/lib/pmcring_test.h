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
 *    (the 6.1 harness runs the body anyway).
 */
#ifndef PMCRING_SELFTEST_H
#define PMCRING_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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

#endif /* PMCRING_SELFTEST_H */
