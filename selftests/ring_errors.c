// SPDX-License-Identifier: GPL-2.0
/*
 * Description: every bad ioctl argument and every bad mmap is refused with
 * the documented errno: unknown ioctls, use before CONFIGURE, CONFIGURE
 * twice or with bad sizes, flags, reserved fields, CPU lists and threads
 * (PMCRING_CFG_F_CPUS, PMCRING_CFG_F_TID); GENERATE with bad sizes,
 * counts, flags, CPU bitmaps or without CAP_SYS_ADMIN; mmap of an
 * unconfigured session, MAP_PRIVATE, PROT_EXEC, PROT_WRITE past the control
 * page, ranges outside one CPU's region, CPUs out of range; and mprotect /
 * mremap / fork cannot get around the mapping's restrictions.
 */
#include <dirent.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <sys/wait.h>
#include "ring_common.h"

static int open_dev(void)
{
	return open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
}

static int configure(int fd, struct pmcring_config *c)
{
	return rt_ioctl(fd, PMCRING_IOC_CONFIGURE, c);
}

static int generate(int fd, struct pmcring_generate *g)
{
	return rt_ioctl(fd, PMCRING_IOC_GENERATE, g);
}

static int map_err(int fd, size_t len, int prot, int flags, off_t off)
{
	void *p = mmap(NULL, len, prot, flags, fd, off);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, len);
	return 0;
}

TEST(unconfigured)
{
	long page = sysconf(_SC_PAGESIZE);
	struct pmcring_counter ctr = { 0 };
	struct pmcring_generate g = { .count = 1, .size = 16,
				      .flags = PMCRING_GEN_F_TASK };
	uint32_t v = 1;
	int fd;

	PMCRING_REQUIRE_DEV();
	fd = open_dev();
	ASSERT_LE(0, fd);
	EXPECT_EQ(-ENOTTY, rt_ioctl(fd, _IO(PMCRING_IOC_MAGIC, 0x7f), NULL));
	EXPECT_EQ(-ENOTTY, rt_ioctl(fd, _IO('T', 0x01), NULL));
	/* Right number, wrong size or direction. */
	EXPECT_EQ(-ENOTTY, rt_ioctl(fd, _IOR(PMCRING_IOC_MAGIC, 0x01, __u64), &v));
	EXPECT_EQ(-ENOTTY, rt_ioctl(fd, _IOW(PMCRING_IOC_MAGIC, 0x03, __u32), &v));
	EXPECT_EQ(-EINVAL, rt_ioctl(fd, PMCRING_IOC_ENABLE, NULL));
	EXPECT_EQ(-EINVAL, rt_ioctl(fd, PMCRING_IOC_WRITELOG, &v));
	EXPECT_EQ(-EINVAL, generate(fd, &g));
	EXPECT_EQ(-EINVAL, rt_ioctl(fd, PMCRING_IOC_ADD_COUNTER, &ctr));
	EXPECT_EQ(-EINVAL, map_err(fd, page, PROT_READ, MAP_SHARED, 0));
	/* These work on any session. */
	EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_DISABLE, NULL));
	EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_FLUSH, NULL));
	EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_CLOCK, &(__u64){ 0 }));
	EXPECT_EQ(-EFAULT, rt_ioctl(fd, PMCRING_IOC_CLOCK, NULL));
	EXPECT_EQ(-EFAULT, rt_ioctl(fd, PMCRING_IOC_GET_INFO, NULL));
	EXPECT_EQ(-EFAULT, rt_ioctl(fd, PMCRING_IOC_CONFIGURE, NULL));
	close(fd);
}

TEST(configure_args)
{
	struct pmcring_info info;
	struct pmcring_config c, ok = { .data_pages = 4 };
	int fd;

	PMCRING_REQUIRE_DEV();
	fd = open_dev();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));

#define BAD(errno_, field, value) do {					\
		c = ok;							\
		c.field = value;					\
		EXPECT_EQ(-(errno_), configure(fd, &c))			\
			TH_LOG(#field " = " #value);			\
	} while (0)
	BAD(EINVAL, data_pages, 0);
	BAD(EINVAL, data_pages, 3);
	BAD(EINVAL, data_pages, 6);
	BAD(EINVAL, data_pages, info.max_data_pages * 2);
	BAD(EINVAL, data_pages, 0x80000000u);
	BAD(EINVAL, data_pages, ~0u);
	if (info.min_data_pages > 1)
		BAD(EINVAL, data_pages, info.min_data_pages / 2);
	BAD(EINVAL, flags, 1u << 31);
	BAD(EINVAL, flags, PMCRING_CFG_F_ALL + 1);
	BAD(EINVAL, watermark, 4 * info.page_size + 1);
	BAD(EINVAL, watermark, ~0ull);
	BAD(EINVAL, types, PMCRING_TYPE_BIT(0));
	BAD(EINVAL, types, PMCRING_TYPE_BIT(4));
	BAD(EINVAL, types, PMCRING_TYPE_BIT(63));
	BAD(EINVAL, pid, 1);
	BAD(EINVAL, callchain_depth, PMCRING_CALLCHAIN_DEPTH_MAX + 1);
	BAD(EINVAL, __reserved[0], 1);
	BAD(EINVAL, __reserved[1], 1ull << 63);
	BAD(EINVAL, pidfd, 1);
	/* A CPU list (ABI 3) only with its flag, the flag only system-wide. */
	BAD(EINVAL, cpus, 4096);
	BAD(EINVAL, cpus_size, 8);
	BAD(EINVAL, flags, PMCRING_CFG_F_CPUS);
	/* One thread (ABI 3) only of a per-pid session. */
	BAD(EINVAL, flags, PMCRING_CFG_F_TID);
	BAD(EINVAL, flags, PMCRING_CFG_F_TID | PMCRING_CFG_F_SYSTEM_WIDE);
	c = ok;
	c.flags = PMCRING_CFG_F_PID;
	c.pid = 0;
	EXPECT_EQ(-EINVAL, configure(fd, &c));
	c.pid = -5;
	EXPECT_EQ(-EINVAL, configure(fd, &c));
#undef BAD
	/* Still unconfigured after all that. */
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	EXPECT_EQ(0, info.flags);

	c = ok;
	c.watermark = 4 * info.page_size;
	EXPECT_EQ(0, configure(fd, &c));
	EXPECT_EQ((2 + 2 * 4) * (__u64)info.page_size, c.region_size);
	c = ok;
	EXPECT_EQ(-EBUSY, configure(fd, &c));
	close(fd);
}

/* CONFIGURE of a fresh session with @c; its result. */
static int configure_new(struct pmcring_config *c)
{
	int fd = open_dev(), ret;

	if (fd < 0)
		return -errno;
	ret = configure(fd, c);
	close(fd);
	return ret;
}

static void *idle_thread(void *arg)
{
	int *fds = arg;
	char b;

	/* Until the test closes the write end. */
	return read(fds[0], &b, 1) < 0 ? NULL : arg;
}

/*
 * PMCRING_CFG_F_CPUS and PMCRING_CFG_F_TID (ABI 3): the CPU bitmap is
 * checked word by word (size, pointer, empty, CPUs past nr_cpus), the
 * thread must exist; the valid ones configure.
 */
TEST(configure_cpus_tid)
{
	struct pmcring_config c, ok = { .data_pages = 4 };
	uint64_t mask[513] = { 0 };
	struct pmcring_info info;
	int fd, fds[2];
	pthread_t th;
	char path[64];
	pid_t tid;

	PMCRING_REQUIRE_DEV();
	fd = open_dev();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	close(fd);
	ASSERT_LE(3, info.abi_version);

#define CPUS(errno_, size_, ptr_) do {					\
		c = ok;							\
		c.flags = PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_CPUS; \
		c.cpus_size = (size_);					\
		c.cpus = (uintptr_t)(ptr_);				\
		EXPECT_EQ(-(errno_), configure_new(&c))			\
			TH_LOG("cpus_size %u", (unsigned int)(size_));	\
	} while (0)
	mask[0] = 1;
	CPUS(0, 8, mask);
	CPUS(0, 4096, mask);			/* a long bitmap, zero words */
	CPUS(EINVAL, 0, mask);
	CPUS(EINVAL, 4, mask);
	CPUS(EINVAL, 12, mask);
	CPUS(EINVAL, 8, NULL);
	CPUS(E2BIG, 4104, mask);
	CPUS(EFAULT, 8, 4096);
	mask[0] = 0;
	CPUS(EINVAL, 8, mask);			/* no CPU */
	CPUS(EINVAL, 4096, mask);
	mask[info.nr_cpus / 64] = 1ull << (info.nr_cpus % 64);
	CPUS(EINVAL, 4096, mask);		/* CPU nr_cpus */
	mask[info.nr_cpus / 64] = 0;
	mask[511] = 1ull << 63;
	CPUS(EINVAL, 4096, mask);		/* the last bit of the largest */
	mask[511] = 0;
	mask[0] = 1ull << (info.nr_cpus - 1);
	if (info.nr_cpus <= 64)
		CPUS(0, 8, mask);		/* the last possible CPU */
#undef CPUS

	/* -t: a live thread of this process, not the main one. */
	ASSERT_EQ(0, pipe(fds));
	ASSERT_EQ(0, pthread_create(&th, NULL, idle_thread, fds));
	tid = 0;
	for (int i = 0; i < 100 && !tid; i++) {
		DIR *d = opendir("/proc/self/task");
		struct dirent *e;

		while (d && (e = readdir(d)))
			if (atoi(e->d_name) > 0 && atoi(e->d_name) != getpid())
				tid = atoi(e->d_name);
		if (d)
			closedir(d);
	}
	ASSERT_NE(0, tid);
	c = ok;
	c.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_TID;
	c.pid = tid;
	EXPECT_EQ(0, configure_new(&c));
	c.pid = getpid();
	EXPECT_EQ(0, configure_new(&c));	/* the main thread */
	close(fds[1]);
	pthread_join(th, NULL);
	close(fds[0]);
	/*
	 * The thread is gone: ESRCH (its number is not reused this soon).
	 * pthread_join() returns when it left its mm, a little before it is
	 * released: wait until /proc no longer lists it.
	 */
	snprintf(path, sizeof(path), "/proc/self/task/%d", tid);
	for (int i = 0; i < 1000 && access(path, F_OK) == 0; i++)
		usleep(1000);
	c.pid = tid;
	EXPECT_EQ(-ESRCH, configure_new(&c));
}

TEST(generate_args)
{
	struct pmcring_generate g, ok = { .count = 2, .size = 32,
					  .flags = PMCRING_GEN_F_TASK };
	struct pmcring_config c = { .data_pages = 4 };
	uint64_t big[512] = { 0 }, mask[2] = { 1, 0 };
	int fd, online = rt_online_cpus();
	struct pmcring_info info;
	pid_t pid;
	int status;

	PMCRING_REQUIRE_DEV();
	fd = open_dev();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, configure(fd, &c));
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	EXPECT_EQ(0, generate(fd, &ok));
	/* The first, 48-byte version of the struct is still accepted. */
	EXPECT_LT(0, ok.written[1]);	/* the result came back */
	g = ok;
	memset(g.written, 0, sizeof(g.written));
	EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GENERATE_VER0, &g));
	EXPECT_EQ(0, g.written[1]);	/* VER0: nothing written back */

#define BAD(errno_, field, value) do {					\
		g = ok;							\
		g.field = value;					\
		EXPECT_EQ(-(errno_), generate(fd, &g))			\
			TH_LOG(#field " = " #value);			\
	} while (0)
	BAD(EINVAL, size, 0);
	BAD(EINVAL, size, 8);
	BAD(EINVAL, size, 20);
	BAD(EINVAL, size, 33);
	BAD(EINVAL, size, PMCRING_RECORD_MAX + 8);
	BAD(EINVAL, size, ~0u);
	BAD(EINVAL, count, 0);
	BAD(EINVAL, flags, 0);
	BAD(EINVAL, flags, 8);
	BAD(EINVAL, flags, PMCRING_GEN_F_NMI << 1);
	BAD(EINVAL, flags, PMCRING_GEN_F_ALL | 1u << 31);
	BAD(EINVAL, irq_batch, 1u << 20);
	BAD(EINVAL, __reserved[0], 1);
	BAD(EINVAL, __reserved[1], 1);
	BAD(EINVAL, cpus_size, 8);		/* size without a bitmap */
	g = ok;
	g.cpus = 8;
	g.cpus_size = 8;
	EXPECT_EQ(-EFAULT, generate(fd, &g));
	EXPECT_EQ(-EFAULT, generate(fd, NULL));
	g = ok;
	g.cpus = (uintptr_t)mask;
	g.cpus_size = 0;
	EXPECT_EQ(-EINVAL, generate(fd, &g));
	g.cpus_size = 4;
	EXPECT_EQ(-EINVAL, generate(fd, &g));
	g.cpus_size = 12;
	EXPECT_EQ(-EINVAL, generate(fd, &g));
	g.cpus_size = 8;
	EXPECT_EQ(0, generate(fd, &g));
	mask[0] = 0;
	EXPECT_EQ(-EINVAL, generate(fd, &g));	/* empty */
	g.cpus = (uintptr_t)big;
	g.cpus_size = sizeof(big);
	big[info.nr_cpus / 64] = 1ull << (info.nr_cpus % 64);
	EXPECT_EQ(-EINVAL, generate(fd, &g));	/* CPU >= nr_cpus */
	big[info.nr_cpus / 64] = 0;
	if ((unsigned int)online < info.nr_cpus) {
		big[online / 64] = 1ull << (online % 64);
		EXPECT_EQ(-EINVAL, generate(fd, &g));	/* offline */
		big[online / 64] = 0;
	}
	big[511] = 1ull << 63;
	EXPECT_EQ(-EINVAL, generate(fd, &g));
	big[511] = 0;
	big[0] = 1;
	EXPECT_EQ(0, generate(fd, &g));
	g.cpus_size = sizeof(big) + 8;
	EXPECT_EQ(-E2BIG, generate(fd, &g));
	g.cpus_size = 1u << 30;
	EXPECT_EQ(-E2BIG, generate(fd, &g));
#undef BAD

	/* Without CAP_SYS_ADMIN, on an fd opened by root. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		if (setresuid(65534, 65534, 65534))
			_exit(2);
		_exit(generate(fd, &ok) == -EPERM ? 0 : 1);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	close(fd);
}

static sigjmp_buf fault_env;

static void on_segv(int sig)
{
	siglongjmp(fault_env, sig);
}

/* 1 if accessing p (a write if @write) faults in this process. */
static int faults(void *p, int write)
{
	struct sigaction sa = { .sa_handler = on_segv }, old;
	int faulted;

	sigaction(SIGSEGV, &sa, &old);
	if (sigsetjmp(fault_env, 1)) {
		faulted = 1;
	} else {
		if (write)
			*(volatile char *)p = *(volatile char *)p;
		else
			(void)*(volatile char *)p;
		faulted = 0;
	}
	sigaction(SIGSEGV, &old, NULL);
	return faulted;
}

/* 1 if p is not mapped in a forked child (VM_DONTCOPY). */
static int child_lacks(void *p)
{
	int status;
	pid_t pid = fork();

	if (!pid)
		_exit(faults(p, 0) ? 0 : 1);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

TEST(mmap_args)
{
	struct pmcring_config c = { .data_pages = 4 };
	long page = sysconf(_SC_PAGESIZE);
	struct pmcring_info info;
	size_t region;
	uint8_t *p, *q;
	int fd;

	PMCRING_REQUIRE_DEV();
	fd = open_dev();
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, configure(fd, &c));
	ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	region = c.region_size;

	/* Good ones. */
	EXPECT_EQ(0, map_err(fd, page, PROT_READ | PROT_WRITE, MAP_SHARED, 0));
	EXPECT_EQ(0, map_err(fd, region, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(0, map_err(fd, region - page, PROT_READ, MAP_SHARED, page));
	EXPECT_EQ(0, map_err(fd, page, PROT_READ, MAP_SHARED,
			     (off_t)(info.nr_cpus - 1) * region + region - page));
	EXPECT_EQ(0, map_err(fd, page, PROT_READ | PROT_WRITE, MAP_SHARED,
			     (off_t)(info.nr_cpus - 1) * region));

	/* Sharing, protection. */
	EXPECT_EQ(-EINVAL, map_err(fd, page, PROT_READ, MAP_PRIVATE, 0));
	EXPECT_EQ(-EINVAL, map_err(fd, region, PROT_READ, MAP_PRIVATE, 0));
	EXPECT_EQ(-EPERM, map_err(fd, page, PROT_READ | PROT_EXEC, MAP_SHARED, 0));
	EXPECT_EQ(-EPERM, map_err(fd, region, PROT_READ | PROT_EXEC, MAP_SHARED, 0));
	EXPECT_EQ(-EPERM, map_err(fd, 2 * page, PROT_READ | PROT_WRITE,
				  MAP_SHARED, 0));
	EXPECT_EQ(-EPERM, map_err(fd, page, PROT_READ | PROT_WRITE,
				  MAP_SHARED, page));
	EXPECT_EQ(-EPERM, map_err(fd, page, PROT_WRITE, MAP_SHARED, 2 * page));
	EXPECT_EQ(-EPERM, map_err(fd, region, PROT_READ | PROT_WRITE,
				  MAP_SHARED, 0));

	/* Ranges. */
	EXPECT_EQ(-EINVAL, map_err(fd, region + page, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(-EINVAL, map_err(fd, 2 * page, PROT_READ, MAP_SHARED,
				   region - page));
	EXPECT_EQ(-EINVAL, map_err(fd, 2 * region, PROT_READ, MAP_SHARED, 0));
	EXPECT_EQ(-EINVAL, map_err(fd, page, PROT_READ, MAP_SHARED,
				   (off_t)info.nr_cpus * region));
	EXPECT_EQ(-EINVAL, map_err(fd, page, PROT_READ, MAP_SHARED,
				   (off_t)(info.nr_cpus + 1000) * region));
	EXPECT_EQ(-EINVAL, map_err(fd, page, PROT_READ, MAP_SHARED, 100));
	EXPECT_NE(0, map_err(fd, page, PROT_READ, MAP_SHARED,
			     (off_t)1 << 62));

	/* mprotect cannot add what mmap refused. */
	p = mmap(NULL, region, PROT_READ, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, region, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect(p, page, PROT_READ | PROT_WRITE));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(-1, mprotect(p + 2 * page, page, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(1, faults(p + 2 * page, 1));
	EXPECT_EQ(1, faults(p + page, 1));
	EXPECT_EQ(1, faults(p, 1));
	EXPECT_EQ(0, faults(p + region - 1, 0));
	EXPECT_EQ(1, child_lacks(p));
	/* No growing (VM_DONTEXPAND). */
	q = mremap(p, region, region + page, MREMAP_MAYMOVE);
	EXPECT_EQ(MAP_FAILED, q);
	if (q != MAP_FAILED)
		p = q;
	munmap(p, region);

	/* The control page alone is writable, not executable. */
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	ASSERT_NE(MAP_FAILED, p);
	EXPECT_EQ(-1, mprotect(p, page, PROT_READ | PROT_EXEC));
	EXPECT_EQ(EACCES, errno);
	EXPECT_EQ(0, faults(p, 1));
	((struct pmcring_mmap_page *)p)->data_tail = 0;
	/* Not inherited by fork (VM_DONTCOPY). */
	EXPECT_EQ(1, child_lacks(p));
	munmap(p, page);
	close(fd);
}

TEST_HARNESS_MAIN
