// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the capability half of the ptrace rule, as
 * __ptrace_may_access() applies it through commoncap's
 * cap_ptrace_access_check(): an opener without CAP_PERFMON may record a
 * process only if it shares the process's user namespace and holds every
 * capability the process has permitted, or has CAP_SYS_PTRACE over the
 * process's user namespace.  At perf_event_paranoid 2, with the device
 * world-accessible:
 *  - nobody is refused a nobody process that holds CAP_NET_RAW (ambient),
 *    but may record one without it, and may record the CAP_NET_RAW one
 *    when it holds CAP_SYS_PTRACE itself;
 *  - nobody in a user namespace of its own is refused a nobody process
 *    outside it;
 *  - a container-like root (the default capability set of container
 *    runtimes: no CAP_SYS_PTRACE, CAP_PERFMON, CAP_SYS_ADMIN) is refused a
 *    root process with every capability, but may record a root process
 *    with its own reduced set; root in a user namespace of its own is
 *    refused a root process outside it;
 *  - the tree walk of ENABLE does not follow a child that holds a
 *    capability its nobody parent (the target) lacks, and does follow the
 *    same child without it.
 * Each refusal is EACCES from CONFIGURE, as perf_event_open() and
 * /proc/PID/maps refuse the same pairs.
 *
 * NEEDS_LIBPMCRING
 */
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/stat.h>
#include <linux/capability.h>
#include <linux/perf_event.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"
#include "libpmcring.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define USERNS_CLONE	"/proc/sys/kernel/unprivileged_userns_clone"
#define CAPBIT(c)	(1ull << (c))

/* What docker, podman and containerd grant by default. */
#define CONTAINER_CAPS	(CAPBIT(CAP_CHOWN) | CAPBIT(CAP_DAC_OVERRIDE) |	\
			 CAPBIT(CAP_FOWNER) | CAPBIT(CAP_FSETID) |	\
			 CAPBIT(CAP_KILL) | CAPBIT(CAP_SETGID) |	\
			 CAPBIT(CAP_SETUID) | CAPBIT(CAP_SETPCAP) |	\
			 CAPBIT(CAP_NET_BIND_SERVICE) |			\
			 CAPBIT(CAP_NET_RAW) | CAPBIT(CAP_SYS_CHROOT) |	\
			 CAPBIT(CAP_MKNOD) | CAPBIT(CAP_AUDIT_WRITE) |	\
			 CAPBIT(CAP_SETFCAP))

/* Permitted = effective = inheritable = @caps; 0 or -1. */
static int set_caps(uint64_t caps)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2] = {
		{ (uint32_t)caps, (uint32_t)caps, (uint32_t)caps },
		{ caps >> 32, caps >> 32, caps >> 32 },
	};

	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/*
 * Become nobody holding @caps (permitted, effective and ambient, as a
 * daemon started with AmbientCapabilities= runs), dumpable.  0 or -1.
 */
static int nobody_with(uint64_t caps)
{
	int c;

	if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) || setgroups(0, NULL) ||
	    setresgid(PMCRING_NOBODY, PMCRING_NOBODY, PMCRING_NOBODY) ||
	    setresuid(PMCRING_NOBODY, PMCRING_NOBODY, PMCRING_NOBODY) ||
	    set_caps(caps))
		return -1;
	for (c = 0; c < 64; c++)
		if ((caps & CAPBIT(c)) &&
		    prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_RAISE, c, 0, 0))
			return -1;
	return prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
}

enum who {
	NOBODY,			/* nobody, no capability */
	NOBODY_NET_RAW,		/* nobody with CAP_NET_RAW */
	NOBODY_PTRACE,		/* nobody with CAP_SYS_PTRACE */
	NOBODY_USERNS,		/* nobody in a new user namespace */
	ROOT,			/* root, every capability */
	ROOT_CONTAINER,		/* root with CONTAINER_CAPS */
	ROOT_USERNS,		/* root in a new user namespace */
};

/* Make the calling process @who; 0 or -1 (errno set). */
static int become(enum who who)
{
	switch (who) {
	case NOBODY:
		return nobody_with(0);
	case NOBODY_NET_RAW:
		return nobody_with(CAPBIT(CAP_NET_RAW));
	case NOBODY_PTRACE:
		return nobody_with(CAPBIT(CAP_SYS_PTRACE));
	case NOBODY_USERNS:
		return nobody_with(0) || unshare(CLONE_NEWUSER) ? -1 : 0;
	case ROOT:
		return 0;
	case ROOT_CONTAINER:
		return set_caps(CONTAINER_CAPS);
	case ROOT_USERNS:
		return unshare(CLONE_NEWUSER);
	}
	return -1;
}

/* A process that is @who and waits to be killed; its pid, or -1. */
static pid_t target_new(enum who who)
{
	int ready[2];
	pid_t pid;
	char b = 0;

	if (pipe(ready))
		return -1;
	pid = fork();
	if (!pid) {
		close(ready[0]);
		if (become(who))
			_exit(1);
		if (write(ready[1], &b, 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(ready[1]);
	if (pid > 0 && read(ready[0], &b, 1) != 1) {
		waitpid(pid, NULL, 0);
		pid = -1;
	}
	close(ready[0]);
	return pid;
}

static void target_free(pid_t pid)
{
	if (pid > 0) {
		kill(pid, SIGKILL);
		waitpid(pid, NULL, 0);
	}
}

/*
 * As @who, in a child, configure a session on @target: 0, the errno of
 * the refusal, 100 + errno when the child could not become @who, or -1.
 */
static int configure_as(enum who who, pid_t target)
{
	int status;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		struct pmcring_opts o = {
			.sz = sizeof(o),
			.flags = PMCRING_CFG_F_PID,
			.pid = target,
		};
		struct pmcring *s;

		if (become(who))
			_exit(100 + (errno & 0x7f));
		s = pmcring_new(&o);
		if (!s)
			_exit(errno & 0x7f);
		pmcring_free(s);
		_exit(0);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

/* configure_as(@who, a new process that is @twho). */
static int configure_pair(enum who who, enum who twho)
{
	pid_t t = target_new(twho);
	int ret;

	if (t < 0)
		return -1;
	ret = configure_as(who, t);
	target_free(t);
	return ret;
}

struct child_count {
	uint32_t	pid;
	unsigned int	n;
};

/* Records of one process: the pid fields of the types recorded here. */
static void count_child(const uint8_t *rec, uint32_t type, uint32_t len,
			void *arg)
{
	const uint32_t *f = (const uint32_t *)(rec + 16);
	struct child_count *c = arg;

	(void)len;
	if (type == PMCRING_TYPE_CALLCHAIN || type == PMCRING_TYPE_MAP_IN)
		c->n += f[0] == c->pid;
	else if (type == PMCRING_TYPE_PROCCSW)
		c->n += f[3] == c->pid;
}

/*
 * In a child: fork a grandchild that becomes @cwho and sleeps and wakes,
 * become nobody, and record itself (the target) with the walk of ENABLE
 * finding the grandchild.  The child exits with the number of records of
 * the grandchild (capped at 200), or 201 + the failing step.
 */
static int follow_child(enum who cwho)
{
	int status, i;
	pid_t pid = fork();

	if (pid < 0)
		return -1;
	if (!pid) {
		struct pmcring_config cfg = { 0 };
		struct child_count seen = { 0 };
		struct rt_sess s;
		pid_t gc = fork();

		if (!gc) {
			if (become(cwho))
				_exit(1);
			for (i = 0; i < 2000; i++)
				usleep(1000);
			_exit(0);
		}
		if (gc < 0 || pmcring_drop_privileges())
			_exit(201);
		usleep(100000);		/* the grandchild dropped too */
		cfg.data_pages = 64;
		cfg.flags = PMCRING_CFG_F_PID;
		cfg.pid = getpid();
		if (rt_open_cfg(&s, &cfg, 1))
			_exit(202);
		if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
			_exit(203);
		usleep(300000);
		rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
		seen.pid = gc;
		if (rt_each(&s, count_child, &seen) < 0)
			_exit(204);
		rt_close(&s);
		kill(gc, SIGKILL);
		waitpid(gc, NULL, 0);
		_exit(seen.n > 200 ? 200 : seen.n);
	}
	if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status))
		return -1;
	return WEXITSTATUS(status);
}

FIXTURE(caps) {
	struct pmcring_perm_state saved;
	long userns_clone;
};

FIXTURE_SETUP(caps)
{
	self->saved = (struct pmcring_perm_state){ 0, PMCRING_UNSAVED };
	self->userns_clone = pmcring_read_long(USERNS_CLONE, -1);
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_perm_save(&self->saved));
	if (self->saved.paranoid == PMCRING_UNSAVED)
		SKIP(return, "%s not readable", PARANOID);
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	/* Debian's switch for unprivileged user namespaces, when present. */
	if (self->userns_clone >= 0)
		ASSERT_EQ(0, pmcring_write_int(USERNS_CLONE, 1));
}

FIXTURE_TEARDOWN(caps)
{
	pmcring_perm_restore(&self->saved);
	if (self->userns_clone >= 0)
		pmcring_write_int(USERNS_CLONE, (int)self->userns_clone);
}

TEST_F(caps, target_with_more_capabilities_refused)
{
	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	EXPECT_EQ(EACCES, configure_pair(NOBODY, NOBODY_NET_RAW));
	EXPECT_EQ(0, configure_pair(NOBODY, NOBODY));
	EXPECT_EQ(0, configure_pair(NOBODY_NET_RAW, NOBODY_NET_RAW));
}

TEST_F(caps, cap_sys_ptrace_overrides)
{
	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	EXPECT_EQ(0, configure_pair(NOBODY_PTRACE, NOBODY_NET_RAW));
}

TEST_F(caps, opener_in_own_user_namespace_refused)
{
	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	if (access("/proc/self/ns/user", F_OK))
		SKIP(return, "kernel without CONFIG_USER_NS");
	EXPECT_EQ(EACCES, configure_pair(NOBODY_USERNS, NOBODY));
	EXPECT_EQ(EACCES, configure_pair(ROOT_USERNS, ROOT_CONTAINER));
}

TEST_F(caps, container_root_refused_host_root)
{
	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	EXPECT_EQ(EACCES, configure_pair(ROOT_CONTAINER, ROOT));
	EXPECT_EQ(0, configure_pair(ROOT_CONTAINER, ROOT_CONTAINER));
}

TEST_F(caps, walk_skips_child_with_more_capabilities)
{
	int with, without;

	if (_metadata->skip)
		return;	/* SKIP()ped in FIXTURE_SETUP */
	with = follow_child(NOBODY_NET_RAW);
	without = follow_child(NOBODY);
	printf("#   records of the child: %d with CAP_NET_RAW, %d without\n",
	       with, without);
	EXPECT_EQ(0, with);
	EXPECT_LT(0, without);
	EXPECT_GT(201, without);
}

TEST_HARNESS_MAIN
