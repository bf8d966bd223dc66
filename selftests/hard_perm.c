// SPDX-License-Identifier: GPL-2.0
/*
 * Description: privilege boundaries seen by an unprivileged user (uid/gid
 * 65534 in a forked child).  /dev/pmcring's mode 0600 keeps nobody out
 * (EACCES); with the node opened up for the test, nobody still gets no
 * system-wide session (EACCES), cannot follow root's processes (EACCES),
 * cannot GENERATE (EPERM), never sees a kernel address in any record of
 * its own session, cannot write the producer or data pages by any route
 * (mmap PROT_WRITE EPERM, mprotect, /proc/self/mem, process_vm_writev)
 * and cannot read another session's rings (re-opening /proc/PID/fd/N
 * makes a new, empty session; pidfd_getfd() and /proc/PID/mem of a root
 * process are refused; its own rings never carry root's records).
 *
 * The test opens /dev/pmcring to everyone and lowers
 * kernel.perf_event_paranoid to 2 while it runs, then restores both.
 */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define KERNEL_HALF	0xffff800000000000ull
#define ROOT_MAGIC	0x5ec2e7u

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

#define FAIL(code, ...) do {						\
	printf("#   nobody: " __VA_ARGS__);				\
	printf("\n");							\
	fflush(stdout);							\
	return (code);							\
} while (0)

static int nobody_open_refused(void *arg)
{
	(void)arg;
	if (open(PMCRING_DEV_PATH, O_RDWR) >= 0)
		FAIL(1, "opened a mode 0600 root-owned /dev/pmcring");
	if (errno != EACCES)
		FAIL(2, "open: errno %d, want EACCES", errno);
	return 0;
}

static int nobody_configure(int fd, uint32_t flags, int32_t pid)
{
	struct pmcring_config c = { 0 };

	c.data_pages = 4;
	c.flags = flags;
	c.pid = pid;
	return rt_ioctl(fd, PMCRING_IOC_CONFIGURE, &c);
}

static int nobody_no_wide_no_root_targets(void *arg)
{
	int fd, err;

	(void)arg;
	fd = open(PMCRING_DEV_PATH, O_RDWR);
	if (fd < 0)
		FAIL(1, "open: %d", errno);
	err = nobody_configure(fd, PMCRING_CFG_F_SYSTEM_WIDE, 0);
	if (err != -EACCES)
		FAIL(2, "system-wide CONFIGURE: %d, want -EACCES", err);
	err = nobody_configure(fd, PMCRING_CFG_F_PID, 1);
	if (err != -EACCES)
		FAIL(3, "CONFIGURE on pid 1 (root): %d, want -EACCES", err);
	err = nobody_configure(fd, PMCRING_CFG_F_PID, getppid());
	if (err != -EACCES)
		FAIL(4, "CONFIGURE on the root parent: %d, want -EACCES", err);
	/* Nothing half-configured was left behind by the refusals. */
	err = nobody_configure(fd, 0, 0);
	if (err)
		FAIL(5, "plain CONFIGURE after refusals: %d", err);
	err = rt_generate(fd, 1, 16, PMCRING_GEN_F_TASK, NULL, 0, 0);
	if (err != -EPERM)
		FAIL(6, "GENERATE: %d, want -EPERM", err);
	close(fd);
	return 0;
}

static int nobody_cannot_write_rings(void *arg)
{
	struct rt_sess s;
	long page = sysconf(_SC_PAGESIZE);
	struct iovec local, remote;
	uint64_t v = 0x4141414141414141ull;
	uint8_t *p;
	int err, memfd;
	off_t off;

	(void)arg;
	err = rt_open(&s, 4, 0, 1);
	if (err)
		FAIL(1, "rt_open: %d", err);
	off = 0;
	/* Producer page and data: no writable mapping at all. */
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd,
		 off + page);
	if (p != MAP_FAILED)
		FAIL(2, "mmap PROT_WRITE of the producer page succeeded");
	if (errno != EPERM)
		FAIL(3, "mmap PROT_WRITE: errno %d, want EPERM", errno);
	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd,
		 off + 2 * page);
	if (p != MAP_FAILED)
		FAIL(4, "mmap PROT_WRITE of a data page succeeded");
	p = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE, MAP_SHARED, s.fd,
		 off);
	if (p != MAP_FAILED)
		FAIL(5, "mmap PROT_WRITE of control + producer page succeeded");
	/* The read-only view cannot be upgraded. */
	p = (uint8_t *)s.rings[0].base + page;
	if (!mprotect(p, page, PROT_READ | PROT_WRITE))
		FAIL(6, "mprotect PROT_WRITE of the producer page succeeded");
	if (!mprotect((uint8_t *)s.rings[0].data, page, PROT_READ | PROT_WRITE))
		FAIL(7, "mprotect PROT_WRITE of a data page succeeded");
	/* Nor written through /proc/self/mem (FOLL_FORCE) ... */
	memfd = open("/proc/self/mem", O_RDWR);
	if (memfd >= 0) {
		if (pwrite(memfd, &v, sizeof(v), (off_t)(uintptr_t)p) > 0)
			FAIL(8, "/proc/self/mem wrote the producer page");
		if (pwrite(memfd, &v, sizeof(v),
			   (off_t)(uintptr_t)s.rings[0].data) > 0)
			FAIL(9, "/proc/self/mem wrote a data page");
		close(memfd);
	}
	/* ... nor process_vm_writev(). */
	local.iov_base = &v;
	local.iov_len = sizeof(v);
	remote.iov_base = (void *)s.rings[0].data;
	remote.iov_len = sizeof(v);
	if (process_vm_writev(getpid(), &local, 1, &remote, 1, 0) > 0)
		FAIL(10, "process_vm_writev wrote a data page");
	/* The producer page still reads what the kernel wrote. */
	if (s.rings[0].prod->__reserved[0] || s.rings[0].ctl->version !=
	    PMCRING_ABI_VERSION)
		FAIL(11, "ring pages changed");
	rt_close(&s);
	return 0;
}

/*
 * Every 8-byte field of every record nobody can read is below the kernel
 * half, and none of root's USERDATA shows up.
 */
static int nobody_no_kernel_addresses(void *arg)
{
	struct pmcring_counter c = { 0 };
	struct rt_sess s;
	uint64_t records = 0, words = 0;
	unsigned int cpu;
	uint32_t v = 7;
	int err;

	(void)arg;
	memset(&s, 0, sizeof(s));
	s.fd = open(PMCRING_DEV_PATH, O_RDWR);
	if (s.fd < 0)
		FAIL(1, "open: %d", errno);
	rt_ioctl(s.fd, PMCRING_IOC_GET_INFO, &s.info);
	s.cfg.data_pages = 64;
	s.cfg.flags = PMCRING_CFG_F_PID;
	s.cfg.pid = getpid();
	err = rt_ioctl(s.fd, PMCRING_IOC_CONFIGURE, &s.cfg);
	if (err)
		FAIL(2, "CONFIGURE on itself: %d", err);
	c.type = PERF_TYPE_SOFTWARE;
	c.config = PERF_COUNT_SW_CPU_CLOCK;
	c.rate = 200000;
	strcpy(c.name, "cpu-clock");
	err = rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c);
	if (err)
		FAIL(3, "ADD_COUNTER: %d", err);
	s.nr_cpus = s.info.nr_cpus;
	s.rings = calloc(s.nr_cpus, sizeof(*s.rings));
	for (cpu = 0; cpu < s.nr_cpus; cpu++)
		if (rt_map(&s, cpu))
			FAIL(4, "map cpu %u", cpu);
	if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
		FAIL(5, "ENABLE");
	rt_ioctl(s.fd, PMCRING_IOC_WRITELOG, &v);
	pmcring_burn_kernel(300);
	if (fork() == 0)	/* PROCFORK/PROCEXIT/THR_* records */
		_exit(0);
	wait(NULL);
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);

	for (cpu = 0; cpu < s.nr_cpus; cpu++) {
		struct rt_ring *r = &s.rings[cpu];
		uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;

		while (pos < head) {
			const uint8_t *rec = r->data + (pos & mask);
			const struct pmcring_rec_header *h = (const void *)rec;
			uint32_t len = PMCRING_HEADER_LEN(h->pl_header);
			uint32_t type = PMCRING_HEADER_TYPE(h->pl_header), i;
			uint64_t w;

			if (len < 16 || len > PMCRING_RECORD_MAX)
				FAIL(6, "cpu %u: bad record header %#x", cpu,
				     h->pl_header);
			records++;
			if (type == PMCRING_TYPE_USERDATA &&
			    ((const struct pmcring_rec_userdata *)rec)->pl_userdata == ROOT_MAGIC)
				FAIL(7, "root's USERDATA in nobody's ring");
			for (i = 16; i + 8 <= len; i += 8) {
				memcpy(&w, rec + i, 8);
				words++;
				if (w >= KERNEL_HALF)
					FAIL(8, "cpu %u: record type %u offset %u holds %#llx",
					     cpu, type, i, (unsigned long long)w);
			}
			pos += PMCRING_RING_SPACE(len);
		}
	}
	if (!records)
		FAIL(9, "no records at all");
	printf("#   nobody: %llu records, %llu words scanned, no kernel address\n",
	       (unsigned long long)records, (unsigned long long)words);
	rt_close(&s);
	return 0;
}

/* Kernel-half words in the records of every ring of @s. */
static uint64_t count_kaddr(struct rt_sess *s)
{
	uint64_t found = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct rt_ring *r = &s->rings[cpu];
		uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;

		while (pos < head) {
			const uint8_t *rec = r->data + (pos & mask);
			uint32_t len = PMCRING_HEADER_LEN(*(const uint32_t *)rec), i;
			uint64_t w;

			if (len < 16 || len > PMCRING_RECORD_MAX)
				break;
			for (i = 16; i + 8 <= len; i += 8) {
				memcpy(&w, rec + i, 8);
				found += w >= KERNEL_HALF;
			}
			pos += PMCRING_RING_SPACE(len);
		}
	}
	return found;
}

static int write_file(const char *path, const char *s)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644), rc;

	if (fd < 0)
		return -1;
	rc = write(fd, s, strlen(s)) == (ssize_t)strlen(s) ? 0 : -1;
	close(fd);
	return rc;
}

/*
 * The sysctls that gate unprivileged sessions must be the kernel's, not
 * whatever the caller's mount namespace shows at /proc/sys: in a user
 * namespace nobody may bind-mount its own files over them.
 */
static int nobody_spoofed_sysctls(void *arg)
{
	char map[64];
	struct rt_sess s;
	uint64_t kaddr = 0;
	unsigned int cpu;
	int err;

	(void)arg;
	memset(&s, 0, sizeof(s));
	s.fd = open(PMCRING_DEV_PATH, O_RDWR);
	if (s.fd < 0)
		FAIL(1, "open: %d", errno);
	if (unshare(CLONE_NEWUSER | CLONE_NEWNS)) {
		printf("#   nobody: no user namespace (%s): cannot try\n",
		       strerror(errno));
		return 0;
	}
	write_file("/proc/self/setgroups", "deny");
	snprintf(map, sizeof(map), "%d %d 1", PMCRING_NOBODY, PMCRING_NOBODY);
	write_file("/proc/self/uid_map", map);
	write_file("/proc/self/gid_map", map);
	mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL);
	if (write_file("/tmp/hard_perm.paranoid", "-1\n") ||
	    write_file("/tmp/hard_perm.kptr", "0\n"))
		FAIL(2, "cannot write /tmp");
	if (mount("/tmp/hard_perm.paranoid", PARANOID, NULL, MS_BIND, NULL) ||
	    mount("/tmp/hard_perm.kptr", "/proc/sys/kernel/kptr_restrict",
		  NULL, MS_BIND, NULL)) {
		printf("#   nobody: cannot mount over /proc/sys (%s): boundary holds\n",
		       strerror(errno));
		return 0;
	}
	rt_ioctl(s.fd, PMCRING_IOC_GET_INFO, &s.info);
	s.cfg.data_pages = 16;
	s.cfg.flags = PMCRING_CFG_F_PID;
	s.cfg.pid = getpid();
	err = rt_ioctl(s.fd, PMCRING_IOC_CONFIGURE, &s.cfg);
	if (err == -EACCES)
		return 0;
	if (err)
		FAIL(3, "CONFIGURE: %d, want -EACCES", err);
	/* Bypassed: show what it gives away. */
	s.nr_cpus = s.info.nr_cpus;
	s.rings = calloc(s.nr_cpus, sizeof(*s.rings));
	for (cpu = 0; cpu < s.nr_cpus; cpu++)
		rt_map(&s, cpu);
	if (!rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL)) {
		usleep(100000);
		rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
		kaddr = count_kaddr(&s);
	}
	FAIL(4, "perf_event_paranoid=3 bypassed: a bind mount over %s in a user namespace let nobody CONFIGURE a per-pid session (%llu kernel addresses in its records)",
	     PARANOID, (unsigned long long)kaddr);
}

struct other {
	pid_t	pid;		/* root's process */
	int	fd;		/* its session fd number */
	void	*ring;		/* its ring's address in its memory */
};

static int nobody_cannot_reach_other_session(void *arg)
{
	struct other *o = arg;
	struct pmcring_info info;
	char path[64];
	uint64_t buf;
	int fd, pidfd;

	/* Re-opening the fd of another process: a new, empty session. */
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", o->pid, o->fd);
	fd = open(path, O_RDWR);
	if (fd >= 0) {
		if (ioctl(fd, PMCRING_IOC_GET_INFO, &info))
			FAIL(1, "GET_INFO on reopened fd");
		if (info.flags & PMCRING_INFO_F_CONFIGURED)
			FAIL(2, "reopening %s reached root's configured session",
			     path);
		close(fd);
	}
	/* Its file itself: pidfd_getfd needs ptrace rights over root. */
	pidfd = syscall(SYS_pidfd_open, o->pid, 0);
	if (pidfd >= 0) {
		fd = syscall(SYS_pidfd_getfd, pidfd, o->fd, 0);
		if (fd >= 0)
			FAIL(3, "pidfd_getfd took root's session fd");
		close(pidfd);
	}
	/* Its memory, where the ring is mapped. */
	snprintf(path, sizeof(path), "/proc/%d/mem", o->pid);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		if (pread(fd, &buf, sizeof(buf), (off_t)(uintptr_t)o->ring) > 0)
			FAIL(4, "read root's ring through %s", path);
		close(fd);
	}
	return 0;
}

FIXTURE(perm) {
	struct pmcring_perm_state saved;
};

FIXTURE_SETUP(perm)
{
	self->saved = (struct pmcring_perm_state){ 0, PMCRING_UNSAVED };
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_perm_save(&self->saved));
}

FIXTURE_TEARDOWN(perm)
{
	pmcring_perm_restore(&self->saved);
}

TEST_F(perm, dev_mode_0600_keeps_nobody_out)
{
	struct stat st;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, stat(PMCRING_DEV_PATH, &st));
	EXPECT_EQ(0600, st.st_mode & 07777);
	EXPECT_EQ(0, st.st_uid);
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0600));
	EXPECT_EQ(0, pmcring_as_nobody(nobody_open_refused, NULL));
}

TEST_F(perm, no_system_wide_no_root_targets_no_generate)
{
	if (_metadata->skip)
		return;
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	EXPECT_EQ(0, pmcring_as_nobody(nobody_no_wide_no_root_targets, NULL));
}

TEST_F(perm, no_write_access_to_ring_pages)
{
	if (_metadata->skip)
		return;
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	EXPECT_EQ(0, pmcring_as_nobody(nobody_cannot_write_rings, NULL));
	/* Root gets no more than nobody. */
	EXPECT_EQ(0, nobody_cannot_write_rings(NULL));
}

TEST_F(perm, no_kernel_addresses_no_foreign_records)
{
	struct rt_sess root;
	uint32_t magic = ROOT_MAGIC;
	int i;

	if (_metadata->skip)
		return;
	if (self->saved.paranoid == PMCRING_UNSAVED)
		SKIP(return, "%s not readable", PARANOID);
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	pmcring_write_int(PARANOID, 2);	/* own processes yes, kernel addresses no */
	/* Root writes marked records meanwhile: they must stay in root's. */
	ASSERT_EQ(0, rt_open(&root, 4, 0, 1));
	for (i = 0; i < 10; i++)
		rt_ioctl(root.fd, PMCRING_IOC_WRITELOG, &magic);
	EXPECT_EQ(0, pmcring_as_nobody(nobody_no_kernel_addresses, NULL));
	rt_close(&root);
}

TEST_F(perm, sysctls_cannot_be_spoofed_from_a_user_namespace)
{
	int kptr = pmcring_read_long("/proc/sys/kernel/kptr_restrict", -1000);

	if (_metadata->skip)
		return;
	if (self->saved.paranoid == PMCRING_UNSAVED)
		SKIP(return, "%s not readable", PARANOID);
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	pmcring_write_int(PARANOID, 3);		/* Debian's default */
	pmcring_write_int("/proc/sys/kernel/kptr_restrict", 1);
	EXPECT_EQ(0, pmcring_as_nobody(nobody_spoofed_sysctls, NULL));
	if (kptr != -1000)
		pmcring_write_int("/proc/sys/kernel/kptr_restrict", kptr);
}

TEST_F(perm, no_access_to_another_users_session)
{
	struct other o;
	struct rt_sess root;
	int sv[2], status;
	pid_t pid;
	char c;

	if (_metadata->skip)
		return;
	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pipe(sv));
	/* A root process holding a configured, mapped session. */
	pid = fork();
	ASSERT_LE(0, pid);
	if (pid == 0) {
		if (rt_open(&root, 4, 0, 1))
			_exit(1);
		rt_ioctl(root.fd, PMCRING_IOC_WRITELOG, &pid);
		o.fd = root.fd;
		o.ring = (void *)root.rings[0].data;
		(void)!write(sv[1], &o, sizeof(o));
		pause();
		_exit(0);
	}
	ASSERT_EQ(sizeof(o), read(sv[0], &o, sizeof(o)));
	o.pid = pid;
	EXPECT_EQ(0, pmcring_as_nobody(nobody_cannot_reach_other_session, &o));
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	(void)c;
	close(sv[0]);
	close(sv[1]);
}

TEST_HARNESS_MAIN
