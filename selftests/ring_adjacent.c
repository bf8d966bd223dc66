// SPDX-License-Identifier: GPL-2.0
/*
 * Description: consecutive CPUs' regions mapped read-only at adjacent
 * addresses (region c ends where region c + 1 starts, same flags, same
 * file, consecutive offsets: what vma_merge() would join) each serve their
 * own CPU's pages.  Every control page must show its own cpu, every
 * producer and data page the ring of that CPU (a WRITELOG made on one CPU
 * appears in that CPU's region only), and each region stays a VMA of its
 * own in /proc/self/maps.  A guard: the fault handler takes the ring from
 * the page offset, so this holds even if the mappings were merged.
 */
#include "ring_common.h"

/* VMAs of /proc/self/maps that lie in [lo, hi). */
static int count_vmas(uintptr_t lo, uintptr_t hi)
{
	FILE *f = fopen("/proc/self/maps", "r");
	unsigned long a, b;
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%lx-%lx", &a, &b) == 2 && a >= lo && b <= hi)
			n++;
	fclose(f);
	return n;
}

TEST(adjacent_regions)
{
	unsigned int cpu, ncpu, online = rt_online_cpus();
	uint32_t value = 0x5eed0000;
	struct rt_sess s;
	size_t region;
	uint8_t *base;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 4, 0, 0));
	ncpu = s.nr_cpus < online ? s.nr_cpus : online;
	if (ncpu < 2)
		SKIP(goto out, "needs 2 CPUs");
	region = s.cfg.region_size;
	base = mmap(NULL, ncpu * region, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, base);
	for (cpu = 0; cpu < ncpu; cpu++)
		ASSERT_NE(MAP_FAILED, mmap(base + cpu * region, region,
					   PROT_READ, MAP_SHARED | MAP_FIXED,
					   s.fd, (off_t)cpu * region))
			TH_LOG("cpu %u", cpu);

	/* One USERDATA record written on each CPU, value + cpu. */
	for (cpu = 0; cpu < ncpu; cpu++) {
		uint32_t v = value + cpu;

		ASSERT_EQ(0, pmcring_pin_cpu(cpu));
		ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_WRITELOG, &v));
	}
	for (cpu = 0; cpu < ncpu; cpu++) {
		uint8_t *r = base + cpu * region;
		const struct pmcring_mmap_page *ctl = (const void *)r;
		const struct pmcring_prod_page *prod =
			(const void *)(r + s.info.page_size);
		const struct pmcring_rec_userdata *u =
			(const void *)(r + ctl->data_offset);

		EXPECT_EQ(cpu, ctl->cpu);
		EXPECT_EQ(region, ctl->region_size);
		EXPECT_EQ(1, rt_prod(&prod->records)) TH_LOG("cpu %u", cpu);
		EXPECT_EQ(PMCRING_SIZE_USERDATA + 0ul, ctl->data_head);
		EXPECT_EQ(PMCRING_HEADER(PMCRING_TYPE_USERDATA,
					 PMCRING_SIZE_USERDATA),
			  u->h.pl_header);
		EXPECT_EQ(value + cpu, u->pl_userdata) TH_LOG("cpu %u", cpu);
	}
	/* Each region is still a VMA of its own. */
	EXPECT_EQ((int)ncpu, count_vmas((uintptr_t)base,
					(uintptr_t)(base + ncpu * region)));
	munmap(base, ncpu * region);
out:
	rt_close(&s);
}

TEST_HARNESS_MAIN
