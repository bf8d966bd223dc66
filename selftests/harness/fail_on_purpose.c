// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a test that always fails.  Not part of the suite: the
 * host-side harness check runs it through selftests/vmrun and requires the
 * run to fail, proving that a failing test fails the run.
 */
#include "pmcring_test.h"

TEST(fails)
{
	EXPECT_EQ(1, 2) TH_LOG("failing on purpose");
}

TEST_HARNESS_MAIN
