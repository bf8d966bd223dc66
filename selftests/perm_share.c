// SPDX-License-Identifier: GPL-2.0
/*
 * Description: one user cannot take the whole ring budget.  All sessions
 * together get half of RAM; RLIMIT_MEMLOCK is per process, so nobody with
 * an unlimited one (as many processes each under its own limit) opens
 * sessions of 32 MiB per CPU until CONFIGURE fails: it must fail with
 * ENOMEM at no more than a quarter of RAM (a user's share, half of the
 * budget), and another user (root, with CAP_IPC_LOCK) must still configure
 * one.  On a module with only the global budget nobody takes all of it and
 * root gets ENOMEM.
 */
#include <errno.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include "ring_common.h"

#define PAGES	8192u		/* data pages per CPU: 32 MiB */
#define MAX_SESS	64

struct share {
	int		n;		/* sessions nobody got */
	int		err;		/* the CONFIGURE that failed */
	uint64_t	bytes;		/* their ring bytes */
};

static uint64_t session_bytes(void)
{
	long page = sysconf(_SC_PAGESIZE);
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	return (uint64_t)cpus * (PAGES + 2) * page;
}

/* nobody: sessions until CONFIGURE fails; report, hold until @hold closes. */
static void nobody_main(int report, int hold)
{
	struct share r = { 0 };
	struct pmcring_config cfg;
	int fds[MAX_SESS];
	char b;

	if (pmcring_drop_privileges())
		_exit(100);
	while (r.n < MAX_SESS) {
		fds[r.n] = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
		if (fds[r.n] < 0) {
			r.err = -errno;
			break;
		}
		r.err = rt_configure(fds[r.n], &cfg, PAGES, 0);
		if (r.err) {
			close(fds[r.n]);
			break;
		}
		r.n++;
	}
	r.bytes = r.n * session_bytes();
	if (write(report, &r, sizeof(r)) != sizeof(r))
		_exit(1);
	while (read(hold, &b, 1) > 0)
		;
	_exit(0);
}

FIXTURE(share) {
	struct pmcring_perm_state saved;
};

FIXTURE_SETUP(share)
{
	self->saved = (struct pmcring_perm_state){ 0, PMCRING_UNSAVED };
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_perm_save(&self->saved));
}

FIXTURE_TEARDOWN(share)
{
	pmcring_perm_restore(&self->saved);
}

TEST_F_TIMEOUT(share, one_user_leaves_room_for_others, 120)
{
	struct rlimit unlimited = { RLIM_INFINITY, RLIM_INFINITY };
	struct pmcring_config cfg;
	int rep[2], hold[2], fd, err, status;
	struct sysinfo si;
	uint64_t ram;
	struct share r;
	pid_t c;

	ASSERT_EQ(0, sysinfo(&si));
	ram = (uint64_t)si.totalram * si.mem_unit;
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pipe(rep));
	ASSERT_EQ(0, pipe(hold));
	c = fork();
	ASSERT_LE(0, c);
	if (!c) {
		close(rep[0]);
		close(hold[1]);
		if (setrlimit(RLIMIT_MEMLOCK, &unlimited))
			_exit(101);
		nobody_main(rep[1], hold[0]);
	}
	close(rep[1]);
	close(hold[0]);
	ASSERT_EQ(sizeof(r), read(rep[0], &r, sizeof(r)));
	TH_LOG("nobody: %d sessions, %llu MiB of %llu MiB RAM, then %d",
	       r.n, (unsigned long long)(r.bytes >> 20),
	       (unsigned long long)(ram >> 20), r.err);
	EXPECT_EQ(-ENOMEM, r.err);
	EXPECT_LT(0, r.n);
	EXPECT_GE(ram / 4, r.bytes);

	fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, fd);
	err = rt_configure(fd, &cfg, PAGES, 0);
	close(fd);
	close(hold[1]);
	ASSERT_EQ(c, waitpid(c, &status, 0));
	close(rep[0]);
	EXPECT_EQ(0, err) TH_LOG("root's CONFIGURE after nobody's: %d", err);
}

TEST_HARNESS_MAIN
