/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers for pmcring selftests, on top of kselftest_harness.h.
 *
 * Include this instead of kselftest_harness.h.  It adds:
 *  - PMCRING_REQUIRE_DEV(): SKIP the current test, with the reason, when
 *    /dev/pmcring is missing (module not loaded) or we are not root;
 *  - exit status 4 (KSFT_SKIP) when every test of the program skipped, so
 *    the kselftest runner reports "ok N ... # SKIP" instead of a pass (the
 *    6.1 harness exits 0 then).
 */
#ifndef PMCRING_SELFTEST_H
#define PMCRING_SELFTEST_H

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"

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
