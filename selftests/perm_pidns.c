// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a session lives in the pid namespace of its opener, as a
 * perf event does (event->ns).  Recorded inside a new pid namespace (the
 * test forks the namespace's init after unshare(CLONE_NEWPID)), PROCFORK,
 * PROCEXEC, CALLCHAIN and PMCATTACH carry the namespace's pids, not the
 * initial namespace's.  A target is a process, not a number: when it exits
 * and another process gets its number (forced with ns_last_pid), ENABLE and
 * ADD_COUNTER fail with ESRCH instead of following the newcomer.
 * pidfd_of_a_reused_pid_is_esrch: a target given with a pidfd
 * (PMCRING_CFG_F_PIDFD) taken before the number was reused is refused at
 * CONFIGURE with ESRCH; the newcomer's own pidfd is accepted.
 * pidfd_names_the_target: a pidfd of the target is accepted, one of
 * another process is ESRCH, a file that is not a pidfd (an eventfd, also
 * an anonymous inode, /dev/null) or a closed fd is EBADF, and the flag
 * without PMCRING_CFG_F_PID or with a negative fd is EINVAL; with
 * PMCRING_CFG_F_TID a thread's number is proven by its process's pidfd.
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

#define NS_LAST_PID	"/proc/sys/kernel/ns_last_pid"

#define FAIL(code, ...) do {						\
	printf("#   in the namespace: " __VA_ARGS__);			\
	printf("\n");							\
	return (code);							\
} while (0)

static volatile uint64_t spin_sink;

static void burn_user(unsigned int ms)
{
	uint64_t end = pmcring_now_ns() + ms * 1000000ull;

	while (pmcring_now_ns() < end)
		for (int i = 0; i < 100000; i++)
			spin_sink += i;
}

/* Run @fn as the init of a new pid namespace; its exit status. */
static int in_new_pidns(int (*fn)(void))
{
	int status;
	pid_t pid;

	if (unshare(CLONE_NEWPID))
		return 200;
	pid = fork();
	if (pid < 0)
		return 201;
	if (!pid)
		_exit(fn());
	if (waitpid(pid, &status, 0) != pid)
		return 202;
	return WIFEXITED(status) ? WEXITSTATUS(status) :
	       210 + WTERMSIG(status);
}

struct pids_seen {
	unsigned int	fork, exec, cc, attach, foreign;
};

static void scan(struct rt_sess *s, pid_t self, pid_t child,
		 struct pids_seen *n)
{
	unsigned int cpu;

	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct rt_ring *r = &s->rings[cpu];
		uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;

		while (pos < head) {
			const uint8_t *rec = r->data + (pos & mask);
			const struct pmcring_rec_header *h = (const void *)rec;
			uint32_t len = PMCRING_HEADER_LEN(h->pl_header);
			uint32_t pid;

			if (len < 16 || len > PMCRING_RECORD_MAX)
				break;
			switch (PMCRING_HEADER_TYPE(h->pl_header)) {
			case PMCRING_TYPE_PROCFORK: {
				const struct pmcring_rec_procfork *f = (const void *)rec;

				if (f->pl_oldpid == (uint32_t)self &&
				    f->pl_newpid == (uint32_t)child)
					n->fork++;
				else
					n->foreign++;
				break;
			}
			case PMCRING_TYPE_PROCEXEC:
				pid = ((const struct pmcring_rec_procexec *)rec)->pl_pid;
				if (pid == (uint32_t)child)
					n->exec++;
				else
					n->foreign++;
				break;
			case PMCRING_TYPE_CALLCHAIN:
				pid = ((const struct pmcring_rec_callchain *)rec)->pl_pid;
				if (pid == (uint32_t)child || pid == (uint32_t)self)
					n->cc++;
				else
					n->foreign++;
				break;
			case PMCRING_TYPE_PMCATTACH:
				pid = ((const struct pmcring_rec_pmcattach *)rec)->pl_pid;
				if (pid == (uint32_t)self)
					n->attach++;
				else
					n->foreign++;
				break;
			}
			pos += PMCRING_RING_SPACE(len);
		}
	}
}

/* The init of a new pid namespace records itself and a child that execs. */
static int ns_record(void)
{
	struct pmcring_counter c = { 0 };
	struct pmcring_config cfg = { 0 };
	struct pids_seen n = { 0 };
	struct rt_sess s;
	pid_t self = getpid(), child;
	int err, status;

	if (self != 1)
		FAIL(1, "getpid() %d in a new namespace, want 1", self);
	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_PID;
	cfg.pid = self;
	err = rt_open_cfg(&s, &cfg, 1);
	if (err)
		FAIL(2, "CONFIGURE on pid %d of the namespace: %d", self, err);
	c.type = PERF_TYPE_SOFTWARE;
	c.config = PERF_COUNT_SW_CPU_CLOCK;
	c.rate = 200000;
	strcpy(c.name, "cpu-clock");
	if (rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c))
		FAIL(3, "ADD_COUNTER");
	if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
		FAIL(4, "ENABLE");
	burn_user(100);
	child = fork();
	if (!child) {
		execl("/bin/sh", "sh", "-c",
		      "i=0; while [ $i -lt 3000 ]; do i=$((i+1)); done", NULL);
		_exit(127);
	}
	if (child < 0 || waitpid(child, &status, 0) != child)
		FAIL(5, "fork/wait");
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	scan(&s, self, child, &n);
	rt_close(&s);
	printf("#   in the namespace: self %d child %d: PROCFORK %u PROCEXEC %u CALLCHAIN %u PMCATTACH %u, other pids %u\n",
	       self, child, n.fork, n.exec, n.cc, n.attach, n.foreign);
	if (!n.fork || !n.exec || !n.cc || !n.attach)
		FAIL(6, "records with the namespace's pids missing");
	if (n.foreign)
		FAIL(7, "%u records with pids from outside the namespace",
		     n.foreign);
	return 0;
}

/* Target a child, let it die, give its number to another: ESRCH. */
static int ns_reuse(void)
{
	struct pmcring_counter c = { 0 };
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;
	pid_t victim, heir;
	int err, ret = 0;

	victim = fork();
	if (!victim) {
		pause();
		_exit(0);
	}
	if (victim < 0)
		FAIL(1, "fork");
	cfg.data_pages = 2;
	cfg.flags = PMCRING_CFG_F_PID;
	cfg.pid = victim;
	err = rt_open_cfg(&s, &cfg, 0);
	if (err)
		FAIL(2, "CONFIGURE on pid %d: %d", victim, err);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	if (pmcring_write_int(NS_LAST_PID, victim - 1))
		FAIL(3, "cannot write %s", NS_LAST_PID);
	heir = fork();
	if (!heir) {
		pause();
		_exit(0);
	}
	if (heir != victim) {
		printf("#   in the namespace: heir got pid %d, not %d\n", heir,
		       victim);
		ret = 4;
		goto out;
	}
	c.type = PERF_TYPE_SOFTWARE;
	c.config = PERF_COUNT_SW_CPU_CLOCK;
	c.rate = 200000;
	err = rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL);
	if (err != -ESRCH) {
		printf("#   in the namespace: ENABLE on a reused pid: %d, want -ESRCH\n",
		       err);
		ret = 5;
		goto out;
	}
	err = rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c);
	if (err != -ESRCH) {
		printf("#   in the namespace: ADD_COUNTER on a reused pid: %d, want -ESRCH\n",
		       err);
		ret = 6;
	}
out:
	kill(heir, SIGKILL);
	waitpid(heir, NULL, 0);
	rt_close(&s);
	return ret;
}

#ifndef __NR_pidfd_open
#define __NR_pidfd_open 434
#endif

static int pidfd_open(pid_t pid)
{
	return (int)syscall(__NR_pidfd_open, pid, 0);
}

/* CONFIGURE a per-pid session on @pid proven by @pidfd: 0 or -errno. */
static int configure_pidfd(pid_t pid, int pidfd, uint32_t flags)
{
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;
	int err;

	cfg.data_pages = 2;
	cfg.flags = flags;
	cfg.pid = pid;
	cfg.pidfd = pidfd;
	err = rt_open_cfg(&s, &cfg, 0);
	if (!err)
		rt_close(&s);
	return err;
}

static pid_t pause_child(void)
{
	pid_t pid = fork();

	if (!pid) {
		pause();
		_exit(0);
	}
	return pid;
}

/* A pidfd taken before the number went to another process: ESRCH. */
static int ns_reuse_pidfd(void)
{
	const uint32_t f = PMCRING_CFG_F_PID | PMCRING_CFG_F_PIDFD;
	int vfd, hfd = -1, err, ret = 0;
	pid_t victim, heir;

	victim = pause_child();
	if (victim < 0)
		FAIL(1, "fork");
	vfd = pidfd_open(victim);
	if (vfd < 0)
		FAIL(201, "pidfd_open: %s", strerror(errno));
	err = configure_pidfd(victim, vfd, f);
	if (err)
		FAIL(2, "CONFIGURE with its pidfd on live pid %d: %d", victim,
		     err);
	kill(victim, SIGKILL);
	waitpid(victim, NULL, 0);
	if (pmcring_write_int(NS_LAST_PID, victim - 1))
		FAIL(3, "cannot write %s", NS_LAST_PID);
	heir = pause_child();
	if (heir != victim) {
		printf("#   in the namespace: heir got pid %d, not %d\n", heir,
		       victim);
		ret = 4;
		goto out;
	}
	err = configure_pidfd(victim, vfd, f);
	if (err != -ESRCH) {
		printf("#   in the namespace: CONFIGURE with the old pidfd of reused pid %d: %d, want -ESRCH\n",
		       victim, err);
		ret = 5;
		goto out;
	}
	hfd = pidfd_open(heir);
	err = configure_pidfd(heir, hfd, f);
	if (err) {
		printf("#   in the namespace: CONFIGURE with the heir's pidfd: %d\n",
		       err);
		ret = 6;
	}
out:
	kill(heir, SIGKILL);
	waitpid(heir, NULL, 0);
	close(vfd);
	if (hfd >= 0)
		close(hfd);
	return ret;
}

PMCRING_FIXTURE_EMPTY(pidns);

TEST_F_TIMEOUT(pidns, pids_of_the_openers_namespace, 60)
{
	int ret;

	PMCRING_REQUIRE_DEV();
	ret = in_new_pidns(ns_record);
	if (ret == 200)
		SKIP(return, "unshare(CLONE_NEWPID): %s", strerror(errno));
	EXPECT_EQ(0, ret);
}

TEST_F_TIMEOUT(pidns, reused_pid_is_esrch, 60)
{
	int ret;

	PMCRING_REQUIRE_DEV();
	/* The only way to hand a pid out again on purpose. */
	if (access(NS_LAST_PID, F_OK))
		SKIP(return, "%s: %s (CONFIG_CHECKPOINT_RESTORE not set)",
		     NS_LAST_PID, strerror(errno));
	ret = in_new_pidns(ns_reuse);
	if (ret == 200)
		SKIP(return, "unshare(CLONE_NEWPID): %s", strerror(errno));
	EXPECT_EQ(0, ret);
}

TEST_F_TIMEOUT(pidns, pidfd_of_a_reused_pid_is_esrch, 60)
{
	int ret;

	PMCRING_REQUIRE_DEV();
	if (access(NS_LAST_PID, F_OK))
		SKIP(return, "%s: %s (CONFIG_CHECKPOINT_RESTORE not set)",
		     NS_LAST_PID, strerror(errno));
	ret = in_new_pidns(ns_reuse_pidfd);
	if (ret == 200)
		SKIP(return, "unshare(CLONE_NEWPID): %s", strerror(errno));
	if (ret == 201)
		SKIP(return, "no pidfd_open(2)");
	EXPECT_EQ(0, ret);
}

static int park_stop;

/* A thread that publishes its tid and waits for park_stop. */
static void *park_thread(void *arg)
{
	__atomic_store_n((pid_t *)arg, (pid_t)syscall(SYS_gettid),
			 __ATOMIC_RELEASE);
	while (!__atomic_load_n(&park_stop, __ATOMIC_ACQUIRE))
		usleep(1000);
	return NULL;
}

TEST_F(pidns, pidfd_names_the_target)
{
	const uint32_t f = PMCRING_CFG_F_PID | PMCRING_CFG_F_PIDFD;
	int pfd, selffd, efd, nfd;
	pid_t child;

	PMCRING_REQUIRE_DEV();
	child = pause_child();
	ASSERT_LT(0, child);
	pfd = pidfd_open(child);
	if (pfd < 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		SKIP(return, "pidfd_open: %s", strerror(errno));
	}
	selffd = pidfd_open(getpid());
	efd = eventfd(0, EFD_CLOEXEC);
	nfd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, selffd);
	ASSERT_LE(0, efd);
	ASSERT_LE(0, nfd);

	EXPECT_EQ(0, configure_pidfd(child, pfd, f));
	EXPECT_EQ(0, configure_pidfd(getpid(), selffd, f));
	/* a pidfd, of another process than the number */
	EXPECT_EQ(-ESRCH, configure_pidfd(child, selffd, f));
	EXPECT_EQ(-ESRCH, configure_pidfd(getpid(), pfd, f));
	/* not a pidfd: never read as one */
	EXPECT_EQ(-EBADF, configure_pidfd(child, efd, f));
	EXPECT_EQ(-EBADF, configure_pidfd(child, nfd, f));
	EXPECT_EQ(-EBADF, configure_pidfd(child, 1000, f));
	/* the flag needs a per-pid target and an fd; no fd without it */
	EXPECT_EQ(-EINVAL, configure_pidfd(child, pfd, PMCRING_CFG_F_PIDFD));
	EXPECT_EQ(-EINVAL, configure_pidfd(child, -1, f));
	EXPECT_EQ(-EINVAL, configure_pidfd(child, pfd, PMCRING_CFG_F_PID));
	/*
	 * TID: a thread of ours, proven by the pidfd of its process
	 * (pidfd_open() takes no thread before 6.9); another's is ESRCH.
	 */
	{
		pthread_t th;
		pid_t tid = 0;

		ASSERT_EQ(0, pthread_create(&th, NULL, park_thread, &tid));
		while (!__atomic_load_n(&tid, __ATOMIC_ACQUIRE))
			usleep(1000);
		EXPECT_EQ(0, configure_pidfd(tid, selffd,
					     f | PMCRING_CFG_F_TID));
		EXPECT_EQ(-ESRCH, configure_pidfd(tid, pfd,
						  f | PMCRING_CFG_F_TID));
		__atomic_store_n(&park_stop, 1, __ATOMIC_RELEASE);
		pthread_join(th, NULL);
	}
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
	/* the target is gone: its pidfd names nobody the number resolves to */
	EXPECT_EQ(-ESRCH, configure_pidfd(child, pfd, f));
	close(pfd);
	close(selffd);
	close(efd);
	close(nfd);
}

TEST_HARNESS_MAIN
