// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the probes go when the last session ends, and come back.
 * With probe_linger_ms at 100, a session that records mappings and
 * switches puts the kprobes on perf_event_mmap() and the munmap syscall
 * (/sys/kernel/debug/kprobes/list, the kernel's own list) and the
 * sched_switch probe (the module's "attached" parameter); within a few
 * seconds of its close they are all gone, so no mmap takes a kretprobe
 * instance and no context switch runs a probe of ours.  A new session puts
 * them back and records MAP_IN, MAP_OUT and PROCCSW as before.  On a
 * module that keeps its probes until unload the first wait fails.
 */
#include <errno.h>
#include <sys/mman.h>
#include "ring_common.h"

#define KPROBES_LIST	"/sys/kernel/debug/kprobes/list"
#define LINGER		"/sys/module/pmcring/parameters/probe_linger_ms"
#define ATTACHED	"/sys/module/pmcring/parameters/attached"

/* Lines of @path containing @what; -1 if it cannot be read. */
static int count_in(const char *path, const char *what)
{
	char line[512];
	FILE *f = fopen(path, "r");
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

static bool probes_on(void)
{
	return count_in(KPROBES_LIST, "perf_event_mmap") > 0 &&
	       count_in(KPROBES_LIST, "sys_munmap") > 0 &&
	       count_in(ATTACHED, "sched_switch") > 0;
}

static bool probes_off(void)
{
	return count_in(KPROBES_LIST, "perf_event_mmap") == 0 &&
	       count_in(KPROBES_LIST, "sys_munmap") == 0 &&
	       count_in(ATTACHED, "sched_") == 0;
}

/* Wait up to 10 s for @cond; the ms it took, or -1. */
static int wait_for(bool (*cond)(void))
{
	int ms;

	for (ms = 0; ms < 10000; ms += 20) {
		if (cond())
			return ms;
		usleep(20000);
	}
	return -1;
}

struct counts {
	uint64_t map_in, map_out, csw;
};

static void count_rec(const uint8_t *rec, uint32_t type, uint32_t len,
		      void *arg)
{
	struct counts *c = arg;

	(void)rec;
	(void)len;
	c->map_in += type == PMCRING_TYPE_MAP_IN;
	c->map_out += type == PMCRING_TYPE_MAP_OUT;
	c->csw += type == PMCRING_TYPE_PROCCSW;
}

/* A session on this process; map and unmap an executable mapping. */
static int record(struct counts *c)
{
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;
	void *p;
	int fd, i;

	cfg.data_pages = 16;
	cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
	cfg.pid = getpid();
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_MAP_IN) |
		    PMCRING_TYPE_BIT(PMCRING_TYPE_MAP_OUT) |
		    PMCRING_TYPE_BIT(PMCRING_TYPE_PROCCSW);
	if (rt_open_cfg(&s, &cfg, 1))
		return 1;
	if (rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL))
		return 2;
	if (!probes_on())
		return 3;
	fd = open("/proc/self/exe", O_RDONLY);
	if (fd < 0)
		return 4;
	p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	close(fd);
	if (p == MAP_FAILED)
		return 5;
	munmap(p, 4096);
	for (i = 0; i < 5; i++)
		usleep(1000);
	rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL);
	memset(c, 0, sizeof(*c));
	if (rt_each(&s, count_rec, c) < 0)
		return 6;
	rt_close(&s);
	return 0;
}

FIXTURE(detach) {
	long linger;
};

FIXTURE_SETUP(detach)
{
	self->linger = -1;
	PMCRING_REQUIRE_DEV();
	if (access(KPROBES_LIST, R_OK))
		SKIP(return, "no %s (debugfs not mounted?)", KPROBES_LIST);
	/* Without the parameter the default applies: 10 s is plenty. */
	self->linger = pmcring_read_long(LINGER, -1);
	if (self->linger >= 0)
		ASSERT_EQ(0, pmcring_write_int(LINGER, 100));
}

FIXTURE_TEARDOWN(detach)
{
	if (self->linger >= 0)
		pmcring_write_int(LINGER, self->linger);
}

TEST_F_TIMEOUT(detach, probes_leave_with_the_last_session, 60)
{
	struct counts c;
	int ms;

	ASSERT_EQ(0, record(&c));
	TH_LOG("first session: %llu MAP_IN, %llu MAP_OUT, %llu PROCCSW",
	       (unsigned long long)c.map_in, (unsigned long long)c.map_out,
	       (unsigned long long)c.csw);
	EXPECT_LT(0, c.map_in);
	EXPECT_LT(0, c.map_out);
	EXPECT_LT(0, c.csw);

	ms = wait_for(probes_off);
	ASSERT_LE(0, ms) TH_LOG("probes still attached 10 s after the close");
	TH_LOG("probes gone %d ms after the close", ms);

	memset(&c, 0, sizeof(c));
	ASSERT_EQ(0, record(&c)) TH_LOG("probes not back for a new session?");
	TH_LOG("second session: %llu MAP_IN, %llu MAP_OUT, %llu PROCCSW",
	       (unsigned long long)c.map_in, (unsigned long long)c.map_out,
	       (unsigned long long)c.csw);
	EXPECT_LT(0, c.map_in);
	EXPECT_LT(0, c.map_out);
	EXPECT_LT(0, c.csw);
	ASSERT_LE(0, wait_for(probes_off));
}

TEST_HARNESS_MAIN
