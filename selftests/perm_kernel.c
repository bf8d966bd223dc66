// SPDX-License-Identifier: GPL-2.0
/*
 * Description: kernel-mode samples need perf_allow_kernel()'s permission.
 * At perf_event_paranoid 2 a session of nobody sampling a kernel-heavy
 * workload gets CALLCHAIN records of user mode only: its counters are made
 * with exclude_kernel and exclude_hv, not merely stripped of kernel frames
 * (root, as a control, gets kernel-mode samples of the same workload).
 * Under lockdown=confidentiality (LOCKDOWN_PERF) not even root gets a
 * kernel-mode sample, a kernel address in any record, or a kernel module's
 * load address.
 *
 * Both are decided again at ADD_COUNTER and ENABLE: nobody who configured
 * at paranoid 1 gets EACCES for a kernel-only counter once it is raised to
 * 2, and no kernel-mode sample.  perf_event_max_stack bounds the callchain
 * depth (EOVERFLOW above it, the default follows it).
 *
 * Lockdown cannot be lowered again once raised and the module, unsigned,
 * cannot be loaded on a kernel booted locked down, so the lockdown test
 * raises it at run time through securityfs, only when PMCRING_TEST_LOCKDOWN=1
 * says the boot is its own:
 *   selftests/vmrun --env PMCRING_TEST_LOCKDOWN=1 -- perm_kernel
 */
#include <errno.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <linux/perf_event.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

#define PARANOID	"/proc/sys/kernel/perf_event_paranoid"
#define LOCKDOWN	"/sys/kernel/security/lockdown"
#define KERNEL_HALF	0xffff800000000000ull

struct seen {
	uint64_t	kernel;		/* CALLCHAIN of kernel mode */
	uint64_t	user;		/* CALLCHAIN of user mode */
	uint64_t	kaddr;		/* kernel-half words in any record */
	uint64_t	mod_maps;	/* MAP_IN of kernel modules */
	uint64_t	mod_addr;	/* ... with a non-zero address */
};

static void scan(struct rt_sess *s, struct seen *n)
{
	unsigned int cpu;

	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct rt_ring *r = &s->rings[cpu];
		uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;

		while (pos < head) {
			const uint8_t *rec = r->data + (pos & mask);
			const struct pmcring_rec_header *h = (const void *)rec;
			uint32_t len = PMCRING_HEADER_LEN(h->pl_header), i;
			uint32_t type = PMCRING_HEADER_TYPE(h->pl_header);
			const struct pmcring_rec_callchain *cc = (const void *)rec;
			const struct pmcring_rec_map_in *mi = (const void *)rec;
			uint64_t w;

			if (len < 16 || len > PMCRING_RECORD_MAX)
				break;
			if (type == PMCRING_TYPE_CALLCHAIN) {
				if (cc->pl_cpuflags & PMCRING_CC_F_USERSPACE)
					n->user++;
				else
					n->kernel++;
			}
			if (type == PMCRING_TYPE_MAP_IN &&
			    mi->pl_pid == (uint32_t)-1) {
				n->mod_maps++;
				n->mod_addr += mi->pl_start != 0;
			}
			for (i = 16; i + 8 <= len; i += 8) {
				memcpy(&w, rec + i, 8);
				n->kaddr += w >= KERNEL_HALF;
			}
			pos += PMCRING_RING_SPACE(len);
		}
	}
}

static volatile uint64_t spin_sink;

static void burn_user(unsigned int ms)
{
	uint64_t end = pmcring_now_ns() + ms * 1000000ull;

	while (pmcring_now_ns() < end)
		for (int i = 0; i < 100000; i++)
			spin_sink += i;
}

/*
 * Sample a kernel-heavy then a user-only workload with cpu-clock, in a
 * session following this process (@wide: system-wide).  0 or an error
 * number (the step that failed).
 */
static int sample(int wide, struct seen *n)
{
	struct pmcring_counter c = { 0 };
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;
	int err;

	memset(n, 0, sizeof(*n));
	cfg.data_pages = 64;
	cfg.flags = wide ? PMCRING_CFG_F_SYSTEM_WIDE : PMCRING_CFG_F_PID;
	cfg.pid = wide ? 0 : getpid();
	err = rt_open_cfg(&s, &cfg, 1);
	if (err)
		return 1;
	c.type = PERF_TYPE_SOFTWARE;
	c.config = PERF_COUNT_SW_CPU_CLOCK;
	c.rate = 200000;
	strcpy(c.name, "cpu-clock");
	if (rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c))
		return 2;
	if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
		return 3;
	pmcring_burn_kernel(300);
	burn_user(150);
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	scan(&s, n);
	rt_close(&s);
	return 0;
}

static struct seen nobody_seen;

static int nobody_samples(void *arg)
{
	(void)arg;
	return sample(0, &nobody_seen);
}

FIXTURE(kern) {
	struct pmcring_perm_state saved;
};

FIXTURE_SETUP(kern)
{
	self->saved = (struct pmcring_perm_state){ 0, PMCRING_UNSAVED };
	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, pmcring_perm_save(&self->saved));
}

FIXTURE_TEARDOWN(kern)
{
	pmcring_perm_restore(&self->saved);
}

TEST_F_TIMEOUT(kern, paranoid2_no_kernel_samples, 60)
{
	struct seen root = { 0 };
	pid_t pid;
	int status;

	ASSERT_EQ(0, sample(0, &root));
	TH_LOG("root: %llu kernel-mode, %llu user-mode samples",
	       (unsigned long long)root.kernel,
	       (unsigned long long)root.user);
	if (!root.kernel)
		SKIP(return, "no kernel-mode sample even for root: no proof");

	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	/* The child writes its counts to a pipe: it leaves with _exit(). */
	{
		int p[2];

		ASSERT_EQ(0, pipe(p));
		pid = fork();
		ASSERT_LE(0, pid);
		if (!pid) {
			close(p[0]);
			if (pmcring_drop_privileges())
				_exit(100);
			status = nobody_samples(NULL);
			if (write(p[1], &nobody_seen, sizeof(nobody_seen)) < 0)
				_exit(101);
			_exit(status);
		}
		close(p[1]);
		ASSERT_EQ(sizeof(nobody_seen),
			  read(p[0], &nobody_seen, sizeof(nobody_seen)));
		close(p[0]);
		ASSERT_EQ(pid, waitpid(pid, &status, 0));
		ASSERT_EQ(0, WEXITSTATUS(status));
	}
	TH_LOG("nobody: %llu kernel-mode, %llu user-mode samples",
	       (unsigned long long)nobody_seen.kernel,
	       (unsigned long long)nobody_seen.user);
	EXPECT_EQ(0, nobody_seen.kernel);
	EXPECT_LT(0, nobody_seen.user);
	EXPECT_EQ(0, nobody_seen.kaddr);
}

/*
 * Nobody configures at paranoid 1; the parent raises it to 2 (@go: one
 * byte on a pipe each way); then a kernel-only counter must be refused
 * (EACCES, perf_allow_kernel() at perf_event_open()) and a cpu-clock one
 * must sample user mode only.  Exit status: 0, or the step that failed
 * (10 + errno for a kernel-only counter that was not refused as expected).
 */
static int raised_child(int to_parent, int from_parent, struct seen *n)
{
	struct pmcring_counter c = { 0 };
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;
	char b = 'c';
	int err;

	memset(n, 0, sizeof(*n));
	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_PID;
	cfg.pid = getpid();
	if (rt_open_cfg(&s, &cfg, 1))
		return 1;
	if (write(to_parent, &b, 1) != 1 || read(from_parent, &b, 1) != 1)
		return 2;
	c.type = PERF_TYPE_SOFTWARE;
	c.config = PERF_COUNT_SW_CPU_CLOCK;
	c.rate = 200000;
	c.flags = PMCRING_CTR_F_EXCLUDE_USER;
	strcpy(c.name, "cpu-clock");
	err = rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c);
	if (err != -EACCES)
		return err ? 10 - err : 3;
	c.flags = 0;
	if (rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c))
		return 4;
	if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
		return 5;
	pmcring_burn_kernel(300);
	burn_user(150);
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	scan(&s, n);
	rt_close(&s);
	return 0;
}

TEST_F_TIMEOUT(kern, paranoid_raised_after_configure, 60)
{
	int up[2], down[2], status;
	struct seen seen;
	pid_t pid;
	char b;

	ASSERT_EQ(0, chmod(PMCRING_DEV_PATH, 0666));
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 1));
	ASSERT_EQ(0, pipe(up));
	ASSERT_EQ(0, pipe(down));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		close(up[0]);
		close(down[1]);
		if (pmcring_drop_privileges())
			_exit(100);
		status = raised_child(up[1], down[0], &seen);
		if (write(up[1], &seen, sizeof(seen)) < 0)
			_exit(101);
		_exit(status);
	}
	close(up[1]);
	close(down[0]);
	ASSERT_EQ(1, read(up[0], &b, 1)) TH_LOG("CONFIGURE at paranoid 1 failed");
	ASSERT_EQ(0, pmcring_write_int(PARANOID, 2));
	ASSERT_EQ(1, write(down[1], &b, 1));
	memset(&seen, 0, sizeof(seen));
	ASSERT_EQ(sizeof(seen), read(up[0], &seen, sizeof(seen)));
	close(up[0]);
	close(down[1]);
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_EQ(0, WEXITSTATUS(status))
		TH_LOG("step %d (3: a kernel-only counter was accepted at paranoid 2)",
		       WEXITSTATUS(status));
	TH_LOG("nobody after the raise: %llu kernel-mode, %llu user-mode samples",
	       (unsigned long long)seen.kernel, (unsigned long long)seen.user);
	EXPECT_EQ(0, seen.kernel);
	EXPECT_LT(0, seen.user);
	EXPECT_EQ(0, seen.kaddr);
}

#define MAX_STACK	"/proc/sys/kernel/perf_event_max_stack"

struct depth_seen {
	uint64_t	chains;
	uint32_t	deepest;
};

static void depth_rec(const uint8_t *rec, uint32_t type, uint32_t len,
		      void *arg)
{
	struct depth_seen *d = arg;
	uint32_t n = (len - sizeof(struct pmcring_rec_callchain)) / 8;

	(void)rec;
	if (type != PMCRING_TYPE_CALLCHAIN)
		return;
	d->chains++;
	if (n > d->deepest)
		d->deepest = n;
}

/*
 * perf_event_max_stack bounds callchain_depth as it bounds perf's
 * sample_max_stack: above it CONFIGURE is EOVERFLOW, and the default
 * follows it (root's kernel-mode samples of a syscall loop are deeper
 * than 6 frames, kernel and user together).
 */
TEST_F_TIMEOUT(kern, depth_follows_perf_event_max_stack, 60)
{
	struct pmcring_counter c = { 0 };
	struct pmcring_config cfg = { 0 };
	struct depth_seen d = { 0 };
	long saved = pmcring_read_long(MAX_STACK, -1);
	struct rt_sess s;
	int err;

	ASSERT_LT(0, saved);
	ASSERT_EQ(0, pmcring_write_int(MAX_STACK, 6));
	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_PID;
	cfg.pid = getpid();
	cfg.callchain_depth = 7;
	err = rt_open_cfg(&s, &cfg, 1);
	if (!err)
		rt_close(&s);
	EXPECT_EQ(-EOVERFLOW, err);

	cfg.callchain_depth = 0;
	err = rt_open_cfg(&s, &cfg, 1);
	ASSERT_EQ(0, err);
	c.type = PERF_TYPE_SOFTWARE;
	c.config = PERF_COUNT_SW_CPU_CLOCK;
	c.rate = 200000;
	strcpy(c.name, "cpu-clock");
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	pmcring_burn_kernel(300);
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	pmcring_write_int(MAX_STACK, saved);
	ASSERT_LE(0, rt_each(&s, depth_rec, &d));
	rt_close(&s);
	TH_LOG("%llu CALLCHAIN records, deepest %u frames",
	       (unsigned long long)d.chains, d.deepest);
	ASSERT_LT(0, d.chains);
	EXPECT_GE(6, d.deepest);
	EXPECT_EQ(6, d.deepest) TH_LOG("no chain reached the bound: no proof");
}

static int lockdown_level(char *buf, size_t size)
{
	int fd = open(LOCKDOWN, O_RDONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	return 0;
}

TEST_F_TIMEOUT(kern, lockdown_confidentiality_hides_the_kernel, 60)
{
	const char *go = getenv("PMCRING_TEST_LOCKDOWN");
	struct seen before, after;
	char level[128];
	int fd;

	if (lockdown_level(level, sizeof(level)))
		mount("none", "/sys/kernel/security", "securityfs", 0, NULL);
	if (lockdown_level(level, sizeof(level)))
		SKIP(return, "no %s (lockdown LSM not active)", LOCKDOWN);
	if (!strstr(level, "[none]") && !strstr(level, "[confidentiality]"))
		SKIP(return, "lockdown is %s", level);
	if (strstr(level, "[none]") && (!go || strcmp(go, "1")))
		SKIP(return, "raising lockdown cannot be undone: run alone with PMCRING_TEST_LOCKDOWN=1");
	if (strstr(level, "[none]")) {
		/* Control: the same session sees the kernel before. */
		ASSERT_EQ(0, sample(1, &before));
		TH_LOG("before lockdown: %llu kernel-mode samples, %llu kernel words, %llu/%llu module maps with addresses",
		       (unsigned long long)before.kernel,
		       (unsigned long long)before.kaddr,
		       (unsigned long long)before.mod_addr,
		       (unsigned long long)before.mod_maps);
		EXPECT_LT(0, before.kernel);
		EXPECT_LT(0, before.mod_addr);
		fd = open(LOCKDOWN, O_WRONLY);
		ASSERT_LE(0, fd);
		ASSERT_EQ(15, write(fd, "confidentiality", 15));
		close(fd);
	}
	ASSERT_EQ(0, sample(1, &after));
	TH_LOG("under lockdown: %llu kernel-mode, %llu user-mode samples, %llu kernel words, %llu/%llu module maps with addresses",
	       (unsigned long long)after.kernel,
	       (unsigned long long)after.user,
	       (unsigned long long)after.kaddr,
	       (unsigned long long)after.mod_addr,
	       (unsigned long long)after.mod_maps);
	EXPECT_EQ(0, after.kernel);
	EXPECT_LT(0, after.user);
	EXPECT_EQ(0, after.kaddr);
	EXPECT_LT(0, after.mod_maps);
	EXPECT_EQ(0, after.mod_addr);
}

TEST_HARNESS_MAIN
