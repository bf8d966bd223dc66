// SPDX-License-Identifier: GPL-2.0
/*
 * Description: ring memory is locked memory, charged as perf_mmap() charges
 * a perf ring.  Each user may lock mlock_kb KiB per online CPU (module
 * parameter, perf_event_mlock_kb); beyond that the pages count against the
 * caller's RLIMIT_MEMLOCK, and over it CONFIGURE fails with EPERM.  Closing
 * a session gives its pages back; CAP_IPC_LOCK lifts the limit.  Ring
 * pages are charged to the memory cgroup (__GFP_ACCOUNT): memory.current of
 * a cgroup v2 grows by at least the ring size at CONFIGURE.
 */
#include <errno.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

#define MLOCK_KB	"/sys/module/pmcring/parameters/mlock_kb"
#define CGROOT		"/sys/fs/cgroup"
#define CGDIR		CGROOT "/pmcring_memlock"

static long page_size(void)
{
	return sysconf(_SC_PAGESIZE);
}

/* CPUs that get a ring at CONFIGURE: the online ones, not every possible. */
static int nr_cpus(void)
{
	return rt_online_cpus();
}

/* A session of @pages data pages per CPU: its fd, or -errno. */
static int session(uint32_t pages)
{
	struct pmcring_config c = { 0 };
	int fd = open(PMCRING_DEV_PATH, O_RDWR), err;

	if (fd < 0)
		return -errno;
	c.data_pages = pages;
	err = rt_ioctl(fd, PMCRING_IOC_CONFIGURE, &c);
	if (err) {
		close(fd);
		return err;
	}
	return fd;
}

static int cpus;

#define FAIL(code, ...) do {						\
	printf("#   nobody: " __VA_ARGS__);				\
	printf("\n");							\
	return (code);							\
} while (0)

/*
 * mlock_kb = 0: every page counts against RLIMIT_MEMLOCK, which allows one
 * session of 2 data pages per CPU and not two.
 */
static int nobody_rlimit(void *arg)
{
	long one = (long)cpus * (2 + 2) * page_size();
	struct rlimit rl = { one + page_size(), one + page_size() };
	int a, b;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		FAIL(1, "setrlimit: %d", errno);
	a = session(2);
	if (a < 0)
		FAIL(2, "first session within ulimit -l: %d", a);
	b = session(2);
	if (b != -EPERM)
		FAIL(3, "second session beyond ulimit -l: %d, want -EPERM", b);
	close(a);
	/* The first session's pages were given back. */
	b = session(2);
	if (b < 0)
		FAIL(4, "session after the first closed: %d", b);
	close(b);
	b = session(64);
	if (b != -EPERM)
		FAIL(5, "64 pages per CPU with ulimit -l %ld KiB: %d, want -EPERM",
		     (long)rl.rlim_cur / 1024, b);
	return 0;
}

/* Default allowance, RLIMIT_MEMLOCK 0: within it yes, beyond it EPERM. */
static int nobody_allowance(void *arg)
{
	struct rlimit rl = { 0, 0 };
	int a;

	(void)arg;
	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		FAIL(1, "setrlimit: %d", errno);
	a = session(2);
	if (a < 0)
		FAIL(2, "2 pages per CPU within the allowance: %d", a);
	close(a);
	a = session(1024);
	if (a != -EPERM)
		FAIL(3, "4 MiB per CPU, ulimit -l 0: %d, want -EPERM", a);
	return 0;
}

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"

FIXTURE(memlock) {
	struct pmcring_perm_state saved;
	long	mlock_kb;
};

FIXTURE_SETUP(memlock)
{
	self->saved = (struct pmcring_perm_state){ 0, PMCRING_UNSAVED };
	self->mlock_kb = -1;
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_perm_save(&self->saved));
	self->mlock_kb = pmcring_read_long(MLOCK_KB, -1);
	cpus = nr_cpus();
	ASSERT_LT(0, cpus);
}

FIXTURE_TEARDOWN(memlock)
{
	pmcring_perm_restore(&self->saved);
	if (self->mlock_kb >= 0)
		pmcring_write_int(MLOCK_KB, self->mlock_kb);
}

TEST_F(memlock, rlimit_memlock_beyond_the_allowance)
{
	ASSERT_LE(0, self->mlock_kb) TH_LOG("no %s", MLOCK_KB);
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(MLOCK_KB, 0));
	EXPECT_EQ(0, pmcring_as_nobody(nobody_rlimit, NULL));
}

TEST_F(memlock, allowance_then_eperm)
{
	/* The default allowance: no need for the parameter itself. */
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	EXPECT_EQ(0, pmcring_as_nobody(nobody_allowance, NULL));
}

TEST_F(memlock, cap_ipc_lock_lifts_the_limit)
{
	struct rlimit rl = { 0, 0 };
	pid_t pid = fork();
	int status, fd;

	ASSERT_LE(0, pid);
	if (!pid) {
		/* Root: CAP_IPC_LOCK, whatever ulimit -l says. */
		pmcring_write_int(MLOCK_KB, 0);
		if (setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(1);
		fd = session(64);
		_exit(fd < 0 ? 2 : 0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/*
 * `pmcring record` as nobody with ulimit -l 0 and a ring beyond the
 * allowance: exit status not 0, and stderr names the limit and the ways out.
 */
TEST_F(memlock, record_says_which_limit)
{
	char out[4096] = "", *argv[] = {
		"pmcring", "record", "-q", "-e", "none", "--buffer-pages",
		"1024", "-o", "/tmp/perm_memlock.pmclog", "--", "true", NULL,
	};
	struct rlimit rl = { 0, 0 };
	int p[2], status;
	ssize_t n, got = 0;
	pid_t pid;

	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	/* nobody may follow its own command (Debian's default 3 refuses) */
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		dup2(p[1], 2);
		dup2(p[1], 1);
		if (chdir("/tmp") || pmcring_drop_privileges() ||
		    setrlimit(RLIMIT_MEMLOCK, &rl))
			_exit(100);
		execvp(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	while ((n = read(p[0], out + got, sizeof(out) - 1 - got)) > 0)
		got += n;
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		SKIP(return, "no pmcring command on PATH");
	TH_LOG("pmcring record said: %s", out);
	EXPECT_NE(0, WEXITSTATUS(status));
	EXPECT_NE(NULL, strstr(out, "EPERM"));
	EXPECT_NE(NULL, strstr(out, "ulimit -l"));
	EXPECT_NE(NULL, strstr(out, "--buffer-pages"));
	EXPECT_NE(NULL, strstr(out, "mlock_kb"));
}

static long cg_read(const char *file)
{
	char path[256];

	snprintf(path, sizeof(path), CGDIR "/%s", file);
	return pmcring_read_long(path, -1);
}

static int cg_write(const char *path, const char *v)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, v, strlen(v));
	close(fd);
	return n == (ssize_t)strlen(v) ? 0 : -1;
}

TEST_F(memlock, memcg_charged)
{
	const uint32_t pages = 256;
	long ring = (long)cpus * (2 + pages) * page_size();
	long before, during, after;
	int p[2], fd, status;
	char buf[32];
	pid_t pid;

	if (access(CGROOT "/cgroup.controllers", F_OK))
		mount("none", CGROOT, "cgroup2", 0, NULL);
	if (access(CGROOT "/cgroup.controllers", F_OK))
		SKIP(return, "cannot mount cgroup2 at %s: %s", CGROOT,
		     strerror(errno));
	cg_write(CGROOT "/cgroup.subtree_control", "+memory");
	if (mkdir(CGDIR, 0755) && errno != EEXIST)
		SKIP(return, "mkdir %s: %s", CGDIR, strerror(errno));
	if (access(CGDIR "/memory.current", F_OK)) {
		rmdir(CGDIR);
		SKIP(return, "no memory controller in cgroup2");
	}
	ASSERT_EQ(0, cg_write(CGDIR "/memory.max", "256M"));
	ASSERT_EQ(0, pipe(p));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		snprintf(buf, sizeof(buf), "%d", getpid());
		if (cg_write(CGDIR "/cgroup.procs", buf))
			_exit(1);
		before = cg_read("memory.current");
		fd = session(pages);
		during = cg_read("memory.current");
		if (fd >= 0)
			close(fd);
		after = cg_read("memory.current");
		if (write(p[1], &before, sizeof(long)) < 0 ||
		    write(p[1], &during, sizeof(long)) < 0 ||
		    write(p[1], &after, sizeof(long)) < 0)
			_exit(2);
		_exit(fd < 0 ? 3 : 0);
	}
	close(p[1]);
	ASSERT_EQ(sizeof(long), read(p[0], &before, sizeof(long)));
	ASSERT_EQ(sizeof(long), read(p[0], &during, sizeof(long)));
	ASSERT_EQ(sizeof(long), read(p[0], &after, sizeof(long)));
	close(p[0]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	rmdir(CGDIR);
	ASSERT_EQ(0, WEXITSTATUS(status));
	TH_LOG("memory.current %ld -> %ld -> %ld, rings %ld bytes",
	       before, during, after, ring);
	/* Other charges of the child come and go: a 64 KiB tolerance. */
	EXPECT_LE(before + ring - 65536, during);
	/* Given back at close (the last RCU-freed bits may lag). */
	EXPECT_GT(during - ring / 2, after);
}

TEST_HARNESS_MAIN
