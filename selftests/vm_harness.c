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
TEST(nobody_cannot_open)
{
	int status;
	pid_t pid;

	PMCRING_REQUIRE_DEV();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		int fd;

		if (setgid(65534) || setuid(65534))
			_exit(2);
		fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
		_exit(fd < 0 && errno == EACCES ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status))
		TH_LOG("%s", WEXITSTATUS(status) == 2 ? "setuid failed" :
		       "nobody opened the device");
}

TEST_HARNESS_MAIN
