// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the follow set of a per-pid session costs memory in
 * proportion to the processes it follows.  It used to be a bitmap of every
 * possible pid, a 512 KiB vzalloc per session: 32 configured per-pid
 * sessions on this process took 16 MiB of vmalloc.  Now they take less
 * than 2 MiB of VmallocUsed together (rings are vmap()ed, not counted
 * there), and a session still follows its target's children.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include "ring_common.h"

#define SESSIONS	32

/* VmallocUsed of /proc/meminfo, KiB; -1 if not found. */
static long vmalloc_used_kb(void)
{
	char line[256];
	long kb = -1;
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "VmallocUsed: %ld kB", &kb) == 1)
			break;
	fclose(f);
	return kb;
}

TEST(thirty_two_sessions_cost_little_vmalloc)
{
	struct pmcring_config cfg = { 0 };
	int fd[SESSIONS], i;
	long before, after;

	PMCRING_REQUIRE_DEV();
	before = vmalloc_used_kb();
	ASSERT_LE(0, before);
	for (i = 0; i < SESSIONS; i++) {
		fd[i] = open(PMCRING_DEV_PATH, O_RDWR);
		ASSERT_LE(0, fd[i]);
		memset(&cfg, 0, sizeof(cfg));
		cfg.data_pages = 2;
		cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
		cfg.pid = getpid();
		ASSERT_EQ(0, rt_ioctl(fd[i], PMCRING_IOC_CONFIGURE, &cfg));
		ASSERT_EQ(0, rt_ioctl(fd[i], PMCRING_IOC_ENABLE, NULL));
	}
	after = vmalloc_used_kb();
	TH_LOG("VmallocUsed %ld -> %ld KiB for %d per-pid sessions", before,
	       after, SESSIONS);
	EXPECT_GT(2048, after - before);
	for (i = 0; i < SESSIONS; i++)
		close(fd[i]);
}

/* The xarray set still follows a child forked after ENABLE. */
TEST(child_followed)
{
	struct pmcring_config cfg = { 0 };
	unsigned int cpu, forks = 0, exits = 0;
	struct rt_sess s;
	pid_t child;

	PMCRING_REQUIRE_DEV();
	cfg.data_pages = 16;
	cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
	cfg.pid = getpid();
	ASSERT_EQ(0, rt_open_cfg(&s, &cfg, 1));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));
	child = fork();
	ASSERT_LE(0, child);
	if (!child)
		_exit(0);
	ASSERT_EQ(child, waitpid(child, NULL, 0));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	for (cpu = 0; cpu < s.nr_cpus; cpu++) {
		struct rt_ring *r = &s.rings[cpu];
		uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;

		while (pos < head) {
			const uint8_t *rec = r->data + (pos & mask);
			const struct pmcring_rec_header *h = (const void *)rec;
			uint32_t len = PMCRING_HEADER_LEN(h->pl_header);
			uint32_t type = PMCRING_HEADER_TYPE(h->pl_header);

			if (len < 16 || len > PMCRING_RECORD_MAX)
				break;
			if (type == PMCRING_TYPE_PROCFORK &&
			    ((const struct pmcring_rec_procfork *)rec)->pl_newpid ==
			    (uint32_t)child)
				forks++;
			if (type == PMCRING_TYPE_PROCEXIT &&
			    ((const struct pmcring_rec_procexit *)rec)->pl_pid ==
			    (uint32_t)child)
				exits++;
			pos += PMCRING_RING_SPACE(len);
		}
	}
	rt_close(&s);
	EXPECT_EQ(1, forks);
	EXPECT_EQ(1, exits);
}

TEST_HARNESS_MAIN
