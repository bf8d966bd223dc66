// SPDX-License-Identifier: GPL-2.0
/*
 * Description: 10,000 sessions opened, configured, written (every 8th
 * also mapped and read, every 16th enabled) and closed leak nothing: no slab objects (per-cache counts from
 * /proc/slabinfo), no pages (MemFree), no vmalloc space (VmallocUsed), no
 * module references.  HARD_LEAK_SESSIONS changes the count.  And a
 * CONFIGURE that fails after the sources accepted it (the result cannot be
 * copied back: EFAULT), retried, leaks nothing either.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#define PMCRING_TEST_LINE_BUFFERED
#include "ring_common.h"

static int read_meminfo(const char *key, long *kb)
{
	char line[256];
	size_t n = strlen(key);
	FILE *f = fopen("/proc/meminfo", "r");

	if (!f)
		return -1;
	*kb = -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':')
			*kb = atol(line + n + 1);
	fclose(f);
	return *kb < 0 ? -1 : 0;
}

#define MAX_CACHES	512

struct slabs {
	unsigned int	n;
	char		name[MAX_CACHES][64];
	long		objs[MAX_CACHES];
};

/* Active objects per slab cache (/proc/slabinfo, root only). */
static int read_slabinfo(struct slabs *sl)
{
	char line[512], name[64];
	long active;
	FILE *f = fopen("/proc/slabinfo", "r");

	if (!f)
		return -1;
	sl->n = 0;
	while (fgets(line, sizeof(line), f) && sl->n < MAX_CACHES) {
		if (line[0] == '#' || !strncmp(line, "slabinfo", 8))
			continue;
		if (sscanf(line, "%63s %ld", name, &active) != 2)
			continue;
		strcpy(sl->name[sl->n], name);
		sl->objs[sl->n++] = active;
	}
	fclose(f);
	return 0;
}

/* One full session life: open, configure, map everything, write, close. */
static int churn_once(unsigned int i)
{
	struct rt_sess s;
	uint32_t v = i;
	int err;

	/* Every 8th maps all CPUs (mmap/fault/munmap is slow under TCG). */
	err = rt_open(&s, 2, 0, !(i & 7));
	if (err)
		return err;
	/*
	 * Every 16th enables the sources too: (un)registering tracepoints
	 * and the grace periods it waits for cost ~30 ms each under TCG.
	 */
	if (!(i & 15))
		rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL);
	rt_ioctl(s.fd, PMCRING_IOC_WRITELOG, &v);
	if (!(i & 7))
		(void)*(volatile uint64_t *)s.rings[0].data;
	rt_close(&s);
	return 0;
}

/*
 * 10,000 sessions opened and closed leak nothing.  Tolerances: a leak of
 * one object per session shows as >= 10,000 objects in its slab cache, a
 * leaked page as 40 MB of MemFree, a leaked vmap as >= 80 MB of
 * VmallocUsed; an idle guest moves each by far less than the limits below
 * (a few hundred objects, a few MB, nothing) while we run.
 */
PMCRING_FIXTURE_EMPTY(leak)

/* 10,000 sessions take about a minute of TCG. */
TEST_F_TIMEOUT(leak, open_close_10000, 170)
{
	static struct slabs before, after;
	long free0, free1, vm0, vm1, sun0, sun1;
	unsigned int i, n = getenv("HARD_LEAK_SESSIONS") ?
		atoi(getenv("HARD_LEAK_SESSIONS")) : 10000;
	int have_slab;
	uint64_t t0;

	PMCRING_REQUIRE_DEV();
	/* Warm up: per-CPU caches and lazily created slabs settle first. */
	for (i = 0; i < 300; i++)
		ASSERT_EQ(0, churn_once(i));
	sync();
	have_slab = read_slabinfo(&before) == 0;
	ASSERT_EQ(0, read_meminfo("MemFree", &free0));
	ASSERT_EQ(0, read_meminfo("VmallocUsed", &vm0));
	ASSERT_EQ(0, read_meminfo("SUnreclaim", &sun0));

	t0 = rt_now_ns();
	for (i = 0; i < n; i++)
		ASSERT_EQ(0, churn_once(i)) TH_LOG("session %u", i);
	TH_LOG("%u sessions in %.1f s", n, (rt_now_ns() - t0) / 1e9);

	ASSERT_EQ(0, read_meminfo("MemFree", &free1));
	ASSERT_EQ(0, read_meminfo("VmallocUsed", &vm1));
	ASSERT_EQ(0, read_meminfo("SUnreclaim", &sun1));
	TH_LOG("%u sessions: MemFree %+ld kB, VmallocUsed %+ld kB, SUnreclaim %+ld kB",
	       n, free1 - free0, vm1 - vm0, sun1 - sun0);
	printf("# open_close_leaks: sessions=%u memfree_kb=%+ld vmalloc_kb=%+ld sunreclaim_kb=%+ld\n",
	       n, free1 - free0, vm1 - vm0, sun1 - sun0);
	EXPECT_GT(8192, free0 - free1);	/* < 8 MB: a page each would be 40 MB */
	EXPECT_GT(4096, vm1 - vm0);	/* < 4 MB: a vmap each >= 80 MB */
	EXPECT_GT(2048, sun1 - sun0);	/* < 2 MB: a 256-byte object each is 2.5 MB */

	if (have_slab && read_slabinfo(&after) == 0) {
		unsigned int a, b, worst = 0;
		long grown, max_grown = 0;

		for (a = 0; a < after.n; a++)
			for (b = 0; b < before.n; b++)
				if (!strcmp(after.name[a], before.name[b])) {
					grown = after.objs[a] - before.objs[b];
					if (grown > max_grown) {
						max_grown = grown;
						worst = a;
					}
					break;
				}
		TH_LOG("largest slab growth: %s %+ld objects", after.name[worst],
		       max_grown);
		printf("# open_close_leaks: max_slab_growth=%ld cache=%s\n",
		       max_grown, after.name[worst]);
		/* Smaller leaks: one object per session is >= n objects. */
		EXPECT_GT((long)n / 2, max_grown)
			TH_LOG("%s grew by %ld objects over %u sessions",
			       after.name[worst], max_grown, n);
	}
	for (i = 0; i < 100 && pmcring_module_refcnt() > 0; i++)
		usleep(20000);
	EXPECT_GE(0, pmcring_module_refcnt());
}

/*
 * CONFIGURE of a per-pid session whose struct sits in a read-only page:
 * copy_from_user() works, the sources set up their state, copy_to_user()
 * of region_size fails (EFAULT) and the session stays unconfigured.  Each
 * retry must free what the failed attempt left.  A leaked target bitmap is
 * PID_MAX_LIMIT bits = 512 KiB of vmalloc per retry: 200 retries would be
 * 100 MB of VmallocUsed, the test allows 4 MB.
 */
TEST_F_TIMEOUT(leak, configure_efault_retry, 120)
{
	long page = sysconf(_SC_PAGESIZE), vm0, vm1;
	struct pmcring_config *ro, ok;
	unsigned int i, n = 200, efault = 0;
	int fd;

	PMCRING_REQUIRE_DEV();
	ro = mmap(NULL, page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	memset(ro, 0, sizeof(*ro));
	ro->data_pages = 2;
	ro->flags = PMCRING_CFG_F_PID;
	ro->pid = getpid();
	ASSERT_EQ(0, mprotect(ro, page, PROT_READ));

	fd = open(PMCRING_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, read_meminfo("VmallocUsed", &vm0));
	for (i = 0; i < n; i++) {
		int err = rt_ioctl(fd, PMCRING_IOC_CONFIGURE, ro);

		ASSERT_TRUE(err == -EFAULT) TH_LOG("attempt %u: %d", i, err);
		efault++;
	}
	ASSERT_EQ(0, read_meminfo("VmallocUsed", &vm1));
	/* Still unconfigured: a proper CONFIGURE works now. */
	ok = *ro;
	EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_CONFIGURE, &ok));
	close(fd);
	munmap(ro, page);
	TH_LOG("%u CONFIGURE attempts failing with EFAULT: VmallocUsed %+ld kB",
	       efault, vm1 - vm0);
	printf("# configure_efault_retry: attempts=%u vmalloc_kb=%+ld\n",
	       efault, vm1 - vm0);
	EXPECT_GT(4096, vm1 - vm0)
		TH_LOG("each failed CONFIGURE leaked %ld bytes of vmalloc",
		       (vm1 - vm0) * 1024 / (long)n);
}

TEST_HARNESS_MAIN
