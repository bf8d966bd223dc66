// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the module cannot be unloaded while a session is open or a
 * ring is still mapped after its fd was closed: rmmod fails
 * (delete_module() with EWOULDBLOCK, the module is in use) and the mapping
 * stays readable.
 */
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include "ring_common.h"

static int have_rmmod(void)
{
	return !system("command -v rmmod >/dev/null 2>&1");
}

/* delete_module(2) as rmmod calls it: 0 or -errno. */
static int delete_module(void)
{
	return syscall(SYS_delete_module, "pmcring", O_NONBLOCK) ? -errno : 0;
}

static int try_rmmod(void)
{
	int st = system("rmmod pmcring 2>/dev/null");

	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

TEST(refused_while_open_or_mapped)
{
	struct rt_sess s;
	struct rt_ring *r;
	int fd;

	PMCRING_REQUIRE_DEV();
	if (!pmcring_module_loaded() || access("/sys/module/pmcring/initstate", F_OK))
		SKIP(return, "pmcring is not a loadable module");
	if (!have_rmmod())
		SKIP(return, "rmmod not found");

	ASSERT_EQ(0, rt_open(&s, 2, 0, 1));
	r = &s.rings[0];
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 4, 32, PMCRING_GEN_F_TASK));
	EXPECT_NE(0, try_rmmod());
	EXPECT_EQ(-EWOULDBLOCK, delete_module());
	EXPECT_EQ(0, access("/sys/module/pmcring", F_OK));

	fd = s.fd;
	s.fd = -1;
	ASSERT_EQ(0, close(fd));
	EXPECT_NE(0, try_rmmod());
	EXPECT_EQ(-EWOULDBLOCK, delete_module());
	ASSERT_EQ(0, access("/sys/module/pmcring", F_OK))
		TH_LOG("module unloaded under a live mapping");
	EXPECT_EQ(4 * 32, rt_head(r));
	EXPECT_EQ(4, rt_prod(&r->prod->records));
	rt_close(&s);
}

TEST_HARNESS_MAIN
