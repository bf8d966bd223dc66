// SPDX-License-Identifier: GPL-2.0
/*
 * Description: PMCRING_IOC_ADD_COUNTER is all or nothing.  When the kernel
 * cannot write the new pmcid back (the struct is in a read-only mapping:
 * the copy-in works, the copy-back faults) the ioctl fails with EFAULT and
 * leaves no counter behind: the next ADD_COUNTER gets pmcid 1, no
 * PMCALLOCATE/PMCALLOCATEDYN record names the failed one, and the session
 * still takes its 8 counters (the 9th is ENOSPC).  Checked for a
 * system-wide session (per-CPU events) and a per-pid one on itself
 * (inherited per-task events), enabled and not.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "ring_common.h"

#define NR_MAX	8	/* PMCRING_SRC_MAX_COUNTERS */

/* PMCALLOCATE(DYN) records of every ring: count, and the pmcids seen. */
static void count_allocs(struct rt_sess *s, unsigned int *alloc,
			 unsigned int *dyn, uint32_t *ids)
{
	unsigned int cpu;

	*alloc = *dyn = 0;
	*ids = 0;
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct rt_ring *r = &s->rings[cpu];
		uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;

		while (pos != head) {
			const struct pmcring_rec_pmcallocate *a =
				(const void *)(r->data + (pos & mask));
			uint32_t len = PMCRING_HEADER_LEN(a->h.pl_header);
			uint32_t type = PMCRING_HEADER_TYPE(a->h.pl_header);

			if (len < PMCRING_HEADER_SIZE)
				break;
			if (type == PMCRING_TYPE_PMCALLOCATE)
				(*alloc)++;
			if (type == PMCRING_TYPE_PMCALLOCATEDYN)
				(*dyn)++;
			if ((type == PMCRING_TYPE_PMCALLOCATE ||
			     type == PMCRING_TYPE_PMCALLOCATEDYN) &&
			    a->pl_pmcid < 32)
				*ids |= 1u << a->pl_pmcid;
			pos += PMCRING_RING_SPACE(len);
		}
		rt_consume(r, pos);
	}
}

static void counter_init(struct pmcring_counter *c)
{
	memset(c, 0, sizeof(*c));
	c->type = PERF_TYPE_SOFTWARE;
	c->config = PERF_COUNT_SW_CPU_CLOCK;
	c->rate = 10000000;
	strcpy(c->name, "cpu-clock");
}

static void all_or_nothing(struct __test_metadata *_metadata, uint32_t flags,
			   int enable)
{
	struct pmcring_config cfg = { 0 };
	struct pmcring_counter *ro, c;
	unsigned int alloc, dyn, i;
	struct rt_sess s;
	uint32_t ids;
	long page = sysconf(_SC_PAGESIZE);

	PMCRING_REQUIRE_DEV();
	cfg.data_pages = 16;
	cfg.flags = flags | PMCRING_CFG_F_NO_SYNTH;
	cfg.pid = (flags & PMCRING_CFG_F_PID) ? getpid() : 0;
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATE) |
		    PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATEDYN);
	ASSERT_EQ(0, rt_open_cfg(&s, &cfg, 1));
	if (enable)
		ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));

	/* A valid request in a page the kernel can read but not write. */
	ro = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, ro);
	counter_init(ro);
	ASSERT_EQ(0, mprotect(ro, page, PROT_READ));
	ASSERT_EQ(0, mprotect((char *)ro + page, page, PROT_NONE));
	for (i = 0; i < 3; i++)
		EXPECT_EQ(-EFAULT, rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, ro));
	/* Not readable to its end: nothing is even tried. */
	EXPECT_EQ(-EFAULT, rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER,
				    (char *)ro + page - 8));
	count_allocs(&s, &alloc, &dyn, &ids);
	EXPECT_EQ(0, alloc);
	EXPECT_EQ(0, dyn);

	/* Nothing was left: ids start at 1 and all 8 slots are free. */
	for (i = 1; i <= NR_MAX; i++) {
		counter_init(&c);
		EXPECT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c));
		EXPECT_EQ(i, c.pmcid);
		if (i == NR_MAX / 2)
			EXPECT_EQ(-EFAULT, rt_ioctl(s.fd,
						    PMCRING_IOC_ADD_COUNTER,
						    ro));
	}
	counter_init(&c);
	EXPECT_EQ(-ENOSPC, rt_ioctl(s.fd, PMCRING_IOC_ADD_COUNTER, &c));
	count_allocs(&s, &alloc, &dyn, &ids);
	EXPECT_EQ(NR_MAX, alloc);
	EXPECT_EQ(NR_MAX, dyn);
	EXPECT_EQ(((1u << NR_MAX) - 1) << 1, ids);
	rt_info("%s%s: after 4 EFAULTs, ids mask %#x, %u PMCALLOCATE, %u DYN\n",
		flags & PMCRING_CFG_F_PID ? "per-pid" : "system-wide",
		enable ? " enabled" : "", ids, alloc, dyn);
	munmap(ro, 2 * page);
	rt_close(&s);
}

TEST(system_wide)
{
	all_or_nothing(_metadata, PMCRING_CFG_F_SYSTEM_WIDE, 0);
}

TEST(system_wide_enabled)
{
	all_or_nothing(_metadata, PMCRING_CFG_F_SYSTEM_WIDE, 1);
}

TEST(per_pid_enabled)
{
	all_or_nothing(_metadata, PMCRING_CFG_F_PID, 1);
}

TEST_HARNESS_MAIN
