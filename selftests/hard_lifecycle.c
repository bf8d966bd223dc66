// SPDX-License-Identifier: GPL-2.0
/*
 * Description: session and module life under abuse.  rmmod is refused
 * (never a crash) while a session records, while only a mapping is left
 * and while GENERATE runs; the module's reference count returns to 0 once
 * the last file and mapping are gone, also after SIGKILL of the owner at
 * random points.  fork() children get none of the mappings (VM_DONTCOPY)
 * and exec() drops them while the fd stays usable.  Absurd ring sizes are
 * EINVAL/E2BIG and memory exhaustion is ENOMEM rather than the OOM killer
 * (the leak check of 10,000 sessions is hard_leak.c).
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/sysinfo.h>
#include <sys/wait.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

/* The module's refcount once it settles (fput may be deferred a little). */
static long settled_refcnt(void)
{
	long ref = pmcring_module_refcnt();
	int i;

	for (i = 0; i < 100 && ref > 0; i++) {
		usleep(20000);
		ref = pmcring_module_refcnt();
	}
	return ref;
}

/* delete_module(2) without waiting: 0 if it unloaded, else -errno. */
static int try_rmmod(void)
{
	if (syscall(SYS_delete_module, "pmcring", O_NONBLOCK))
		return -errno;
	return 0;
}

#define REQUIRE_IDLE_MODULE() do {					\
	PMCRING_REQUIRE_DEV();						\
	if (pmcring_module_refcnt() < 0)				\
		SKIP(return, "pmcring is not a loadable module");	\
	if (settled_refcnt() != 0)					\
		SKIP(return, "another pmcring session is open");	\
} while (0)

struct gen_arg {
	int		fd;
	volatile int	stop;
	int		err;
	uint64_t	calls;
};

static void *gen_loop(void *p)
{
	struct gen_arg *a = p;

	while (!a->stop) {
		a->err = rt_generate(a->fd, 2000, 64,
				     PMCRING_GEN_F_TASK | PMCRING_GEN_F_HARDIRQ,
				     NULL, 0, 0);
		if (a->err && a->err != -EINTR)
			break;
		a->calls++;
	}
	return NULL;
}

TEST(rmmod_refused_while_recording_and_mapped)
{
	struct gen_arg ga = { 0 };
	struct rt_sess s;
	pthread_t th;
	int i, err;

	REQUIRE_IDLE_MODULE();
	ASSERT_EQ(0, rt_open(&s, 4, 0, 1));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	ga.fd = s.fd;
	ASSERT_EQ(0, pthread_create(&th, NULL, gen_loop, &ga));

	/* Recording and generating: every attempt is refused. */
	for (i = 0; i < 50; i++) {
		err = try_rmmod();
		ASSERT_TRUE(err == -EWOULDBLOCK || err == -EBUSY)
			TH_LOG("rmmod while recording: %d", err);
		usleep(2000);
	}
	ga.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(0, ga.err);
	EXPECT_LT(0, ga.calls);

	/* The fd closed, mappings alive: still in use, still readable. */
	close(s.fd);
	s.fd = -1;
	EXPECT_LE(1, pmcring_module_refcnt());
	for (i = 0; i < 10; i++) {
		err = try_rmmod();
		ASSERT_TRUE(err == -EWOULDBLOCK || err == -EBUSY)
			TH_LOG("rmmod with live mappings: %d", err);
	}
	EXPECT_EQ(PMCRING_ABI_VERSION, s.rings[0].ctl->version);
	(void)rt_head(&s.rings[0]);

	/* Last mapping gone: nothing pins the module any more. */
	rt_close(&s);
	EXPECT_EQ(0, settled_refcnt());
}

/* SIGKILL an owner that is in the middle of something, many times. */
TEST(sigkill_tears_down_sessions)
{
	unsigned int seed = (unsigned int)rt_now_ns(), round;
	int rounds = getenv("HARD_KILL_ROUNDS") ?
		     atoi(getenv("HARD_KILL_ROUNDS")) : 40;

	REQUIRE_IDLE_MODULE();
	TH_LOG("seed %u, %d rounds", seed, rounds);
	for (round = 0; round < (unsigned int)rounds; round++) {
		int status, what = rand_r(&seed) % 4;
		struct rt_sess s;
		pid_t pid;

		pid = fork();
		ASSERT_LE(0, pid);
		if (pid == 0) {
			if (rt_open(&s, 4 << (what & 1), 0, 1))
				_exit(2);
			if (what & 2)
				rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL);
			for (;;) {
				rt_generate(s.fd, 5000, 128,
					    what == 3 ? PMCRING_GEN_F_HARDIRQ :
					    PMCRING_GEN_F_TASK, NULL, 0, 0);
				rt_consume(&s.rings[0], rt_head(&s.rings[0]));
			}
		}
		usleep(rand_r(&seed) % 30000);
		kill(pid, SIGKILL);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_TRUE(WIFSIGNALED(status) || WEXITSTATUS(status) != 2);
		ASSERT_EQ(0, settled_refcnt())
			TH_LOG("round %u: session not torn down", round);
	}
	printf("# sigkill_tears_down_sessions: kills=%d\n", rounds);
}

/* A child of a process holding mappings has none of them. */
TEST(fork_child_has_no_mapping)
{
	struct rt_stats st = { 0 };
	struct rt_sess s;
	int status;
	pid_t pid;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 4, 0, 1));
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 10, 64, PMCRING_GEN_F_TASK));

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		char buf[16384];
		ssize_t n;
		int fd = open("/proc/self/maps", O_RDONLY);

		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (n < 0)
			_exit(10);
		buf[n] = 0;
		if (strstr(buf, PMCRING_DEV_PATH))
			_exit(11);
		/* The address is unmapped in the child: must fault. */
		signal(SIGSEGV, SIG_DFL);
		(void)*(volatile uint32_t *)s.rings[0].ctl;
		_exit(12);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGSEGV)
		TH_LOG("child status %#x (10: no maps, 11: mapping inherited, 12: readable)",
		       status);

	/* The parent's view is untouched. */
	ASSERT_EQ(10, rt_drain(&s.rings[0], &st)) TH_LOG("%s", st.err);
	EXPECT_EQ(10, st.gen[PMCRING_GEN_CTX_TASK]);
	rt_close(&s);
}

/* Runs in the exec()ed image: argv = [exe, "--exec-check", fd]. */
static int exec_check(int fd)
{
	struct pmcring_info info;
	char buf[16384];
	ssize_t n;
	int mfd;
	void *p;

	mfd = open("/proc/self/maps", O_RDONLY);
	n = mfd < 0 ? -1 : read(mfd, buf, sizeof(buf) - 1);
	if (n < 0)
		return 20;
	buf[n] = 0;
	if (strstr(buf, PMCRING_DEV_PATH))
		return 21;		/* a mapping survived exec */
	if (ioctl(fd, PMCRING_IOC_GET_INFO, &info) ||
	    !(info.flags & PMCRING_INFO_F_CONFIGURED))
		return 22;		/* the session is gone */
	p = mmap(NULL, info.page_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 fd, 0);
	if (p == MAP_FAILED)
		return 23;
	if (((struct pmcring_mmap_page *)p)->version != PMCRING_ABI_VERSION)
		return 24;
	return 0;
}

TEST(exec_drops_mappings_keeps_session)
{
	char fdstr[16];
	struct rt_sess s;
	int status;
	pid_t pid;

	PMCRING_REQUIRE_DEV();
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (rt_open(&s, 4, 0, 1))
			_exit(30);
		/* Keep the fd across exec, the mappings should not survive. */
		fcntl(s.fd, F_SETFD, 0);
		snprintf(fdstr, sizeof(fdstr), "%d", s.fd);
		execl("/proc/self/exe", "hard_lifecycle", "--exec-check",
		      fdstr, (char *)NULL);
		_exit(31);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("exec check failed: 21 mapping survived, 22 session gone, 23 remap failed");
}

/* Sizes nobody can have: refused up front, nothing allocated. */
TEST(huge_requests_fail_cleanly)
{
	static const uint32_t bad_pages[] = {
		0, 1, 3, 8193, 16384, 1u << 20, 1u << 31, 0xffffffffu,
	};
	struct pmcring_config cfg;
	struct pmcring_info info;
	struct sysinfo si;
	uint64_t totalram_pages, need;
	unsigned int i;
	int fd, err;

	PMCRING_REQUIRE_DEV();
	fd = open(PMCRING_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	for (i = 0; i < sizeof(bad_pages) / sizeof(bad_pages[0]); i++) {
		if (bad_pages[i] >= info.min_data_pages &&
		    bad_pages[i] <= info.max_data_pages &&
		    !(bad_pages[i] & (bad_pages[i] - 1)))
			continue;
		EXPECT_EQ(-EINVAL, rt_configure(fd, &cfg, bad_pages[i], 0))
			TH_LOG("data_pages %u", bad_pages[i]);
	}
	/* The session is still unconfigured and usable after all that. */
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	EXPECT_EQ(0, info.flags & PMCRING_INFO_F_CONFIGURED);

	/* More than half of the RAM for one session: E2BIG, if reachable. */
	ASSERT_EQ(0, sysinfo(&si));
	totalram_pages = (uint64_t)si.totalram * si.mem_unit / info.page_size;
	need = (uint64_t)info.nr_cpus * (2 + info.max_data_pages);
	err = rt_configure(fd, &cfg, info.max_data_pages, 0);
	if (need > totalram_pages / 2) {
		EXPECT_EQ(-E2BIG, err);
	} else {
		EXPECT_TRUE(err == 0 || err == -ENOMEM) TH_LOG("err %d", err);
	}
	TH_LOG("max ring: %u CPUs x %u pages = %llu of %llu pages: %d",
	       info.nr_cpus, info.max_data_pages, (unsigned long long)need,
	       (unsigned long long)totalram_pages, err);
	close(fd);

	/* A watermark beyond the ring, an oversized CPU bitmap. */
	fd = open(PMCRING_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	memset(&cfg, 0, sizeof(cfg));
	cfg.data_pages = 2;
	cfg.watermark = 3ull * info.page_size;
	EXPECT_EQ(-EINVAL, rt_ioctl(fd, PMCRING_IOC_CONFIGURE, &cfg));
	ASSERT_EQ(0, rt_configure(fd, &cfg, 2, 0));
	{
		static uint64_t mask[1024];

		mask[0] = 1;
		EXPECT_EQ(-E2BIG, rt_generate(fd, 1, 16, PMCRING_GEN_F_TASK,
					      mask, sizeof(mask), 0));
	}
	close(fd);
}

/*
 * Memory exhaustion by rings must end in ENOMEM, not in the OOM killer:
 * a child (first in line for the OOM killer) opens sessions with the
 * largest rings until CONFIGURE fails.
 */
TEST(exhaustion_is_enomem_not_oom)
{
	struct pmcring_info info;
	int status, fd;
	pid_t pid;

	PMCRING_REQUIRE_DEV();
	if (getenv("HARD_SKIP_OOM"))
		SKIP(return, "HARD_SKIP_OOM set");
	fd = open(PMCRING_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	close(fd);

	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct pmcring_config cfg;
		int oom = open("/proc/self/oom_score_adj", O_WRONLY);
		unsigned int n;

		if (oom >= 0) {
			(void)!write(oom, "1000", 4);
			close(oom);
		}
		for (n = 0; n < 4096; n++) {
			fd = open(PMCRING_DEV_PATH, O_RDWR);
			if (fd < 0)
				_exit(errno == EMFILE ? 3 : 4);
			if (rt_configure(fd, &cfg, info.max_data_pages, 0)) {
				printf("# exhaustion: errno %d after %u sessions of %u pages/CPU\n",
				       errno, n, info.max_data_pages);
				fflush(stdout);
				_exit(errno == ENOMEM ? 0 : 5);
			}
		}
		_exit(6);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("child status %#x: %s", status,
		       WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL ?
		       "killed by the OOM killer instead of getting ENOMEM" :
		       "3/4: open failed, 5: other errno, 6: never ran out");
	EXPECT_EQ(0, settled_refcnt());
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "--exec-check"))
		return exec_check(atoi(argv[2]));
	return test_harness_run(argc, argv);
}
