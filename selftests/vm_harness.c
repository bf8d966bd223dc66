// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the test environment itself: the pmcring module is loaded,
 * /dev/pmcring is a misc character device with mode 0600 owned by root,
 * root can open it and an unprivileged user cannot.
 */
#include <pwd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/types.h>
#include <sys/wait.h>

#include "pmcring_test.h"

#define MISC_MAJOR 10

TEST(module_loaded)
{
	if (!pmcring_module_loaded())
		SKIP(return, "pmcring module not loaded (/sys/module/pmcring)");
	ASSERT_EQ(0, access(PMCRING_DEV_PATH, F_OK))
		TH_LOG("module loaded but %s missing", PMCRING_DEV_PATH);
}

TEST(device_node)
{
	struct stat st;

	if (stat(PMCRING_DEV_PATH, &st))
		SKIP(return, "%s missing (pmcring module not loaded)",
		     PMCRING_DEV_PATH);
	ASSERT_TRUE(S_ISCHR(st.st_mode));
	EXPECT_EQ(MISC_MAJOR, major(st.st_rdev));
	EXPECT_EQ(0600, st.st_mode & 07777)
		TH_LOG("mode is %04o", st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	EXPECT_EQ(0, st.st_gid);
}

TEST(root_can_open)
{
	int fd;

	PMCRING_REQUIRE_DEV();
	fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd) TH_LOG("open: %s", strerror(errno));
	EXPECT_EQ(0, close(fd));
}

/* Mode 0600 must really keep other users out. */
static int open_refused(void *arg)
{
	int fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);

	(void)arg;
	return fd < 0 && errno == EACCES ? 0 : 1;
}

TEST(nobody_cannot_open)
{
	int status;

	PMCRING_REQUIRE_DEV();
	status = pmcring_as_nobody(open_refused, NULL);
	EXPECT_EQ(0, status)
		TH_LOG("%s", status == 100 ? "setuid failed" :
		       "nobody opened the device");
}

TEST_HARNESS_MAIN
