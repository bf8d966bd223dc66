// SPDX-License-Identifier: GPL-2.0
/*
 * Description: capability checks use the credentials of the session's
 * opener (file->f_cred, through file_ns_capable()), never those of the
 * caller of the ioctl, as a perf event fd carries its opener's rights.
 * A session root opened and handed to nobody may CONFIGURE system-wide; a
 * session nobody opened and root took with pidfd_getfd() may not (EACCES)
 * and may not GENERATE either (EPERM: GENERATE, a test facility, wants
 * CAP_SYS_ADMIN of both the opener and the caller).
 */
#include <errno.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

static int configure_wide(int fd)
{
	struct pmcring_config c = { 0 };

	c.data_pages = 2;
	c.flags = PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_NO_SYNTH;
	return rt_ioctl(fd, PMCRING_IOC_CONFIGURE, &c);
}

static int root_fd;

/* As nobody, on the session root opened. */
static int nobody_uses_roots_session(void *arg)
{
	int err;

	(void)arg;
	err = configure_wide(root_fd);
	if (err) {
		printf("#   nobody: system-wide CONFIGURE on root's fd: %d\n",
		       err);
		return 1;
	}
	/* GENERATE wants the caller's CAP_SYS_ADMIN too. */
	err = rt_generate(root_fd, 1, 16, PMCRING_GEN_F_TASK, NULL, 0, 0);
	if (err != -EPERM) {
		printf("#   nobody: GENERATE on root's fd: %d, want -EPERM\n",
		       err);
		return 2;
	}
	return 0;
}

FIXTURE(opener) {
	mode_t	mode;
};

FIXTURE_SETUP(opener)
{
	struct stat st;

	self->mode = 0;
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, stat(PMCRING_DEV_PATH, &st));
	self->mode = st.st_mode & 07777;
}

FIXTURE_TEARDOWN(opener)
{
	if (self->mode)
		chmod(PMCRING_DEV_PATH, self->mode);
}

TEST_F(opener, fd_of_root_keeps_roots_rights)
{
	root_fd = open(PMCRING_DEV_PATH, O_RDWR);
	ASSERT_LE(0, root_fd);
	EXPECT_EQ(0, pmcring_as_nobody(nobody_uses_roots_session, NULL));
	close(root_fd);
}

TEST_F(opener, fd_of_nobody_keeps_nobodys_rights)
{
	int ready[2], done[2], pidfd, fd, nfd = -1;
	pid_t pid;
	char c = 0;

	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pipe(ready));
	ASSERT_EQ(0, pipe(done));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (pmcring_drop_privileges())
			_exit(100);
		fd = open(PMCRING_DEV_PATH, O_RDWR);
		if (write(ready[1], &fd, sizeof(fd)) != sizeof(fd))
			_exit(101);
		if (read(done[0], &c, 1) < 0)
			_exit(102);
		_exit(0);
	}
	ASSERT_EQ(sizeof(fd), read(ready[0], &fd, sizeof(fd)));
	pidfd = syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0 && pidfd >= 0)
		nfd = syscall(SYS_pidfd_getfd, pidfd, fd, 0);
	EXPECT_EQ(1, write(done[1], &c, 1));
	waitpid(pid, NULL, 0);
	if (pidfd < 0 && errno == ENOSYS)
		SKIP(return, "no pidfd_open (kernel < 5.6)");
	ASSERT_LE(0, fd) TH_LOG("nobody could not open the 0666 node");
	ASSERT_LE(0, nfd) TH_LOG("pidfd_getfd: %s", strerror(errno));
	/* Root calls, but nobody opened: nobody's rights. */
	EXPECT_EQ(-EACCES, configure_wide(nfd));
	EXPECT_EQ(-EPERM, rt_generate(nfd, 1, 16, PMCRING_GEN_F_TASK,
				      NULL, 0, 0));
	close(nfd);
	close(pidfd);
}

TEST_HARNESS_MAIN
