/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Ring core internals shared by ring.c, dev.c and gen.c only.  The record
 * sources (src*.c) use kmod/pmcring.h and nothing from here, but for
 * src_emit.c, which includes the inline producer (ring_prod.h).
 */
#ifndef _PMCRING_CORE_H
#define _PMCRING_CORE_H

#include <linux/mm_types.h>
#include <linux/jump_label.h>
#include "pmcring.h"

/* Smallest ring: the largest record plus a DROPNOTIFY must fit. */
#define PMCRING_MIN_DATA_PAGES	2u
/* Largest ring per CPU: 32 MiB with 4 KiB pages. */
#define PMCRING_MAX_DATA_PAGES	8192u

/* Pages of a CPU region before the data: control page, producer page. */
#define PMCRING_META_PAGES	2u

/*
 * Record types CONFIGURE accepts in its mask, reported by GET_INFO as
 * types_supported.  CLOSELOG and INITIALIZE are known but never written to
 * a ring (pmclog writers make them); they stay in the mask so that a
 * consumer passing types_supported back, or naming them, is not refused.
 * Every other bit is a type the module writes.
 */
#define PMCRING_TYPES_KNOWN						\
	(PMCRING_TYPE_BIT(PMCRING_TYPE_CLOSELOG) |			\
	 PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY) |			\
	 PMCRING_TYPE_BIT(PMCRING_TYPE_INITIALIZE) |			\
	 GENMASK_ULL(PMCRING_TYPE_PROC_CREATE, PMCRING_TYPE_PMCALLOCATE) | \
	 PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |			\
	 PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD))

/* Bytes of one CPU's region for a ring of data_pages pages. */
static inline u64 pmcring_region_size(u32 data_pages)
{
	return (u64)(PMCRING_META_PAGES + 2 * data_pages) << PAGE_SHIFT;
}

/* ring.c */
struct pmcring_ring *pmcring_ring_alloc(struct pmcring_session *s,
					unsigned int cpu);
int pmcring_ring_alloc_data(struct pmcring_ring *rb);
bool pmcring_ring_has_data(struct pmcring_ring *rb);
void pmcring_ring_set_nr_rings(struct pmcring_ring *rb, unsigned int nr);
void pmcring_ring_free(struct pmcring_ring *rb);
struct page *pmcring_ring_page(struct pmcring_ring *rb, unsigned long pgoff);
bool pmcring_ring_ready(struct pmcring_ring *rb);
unsigned int pmcring_ring_nest(const struct pmcring_wr *wr);
bool pmcring_ring_wraps(const struct pmcring_wr *wr);
void pmcring_ring_check_abi(void);
u64 pmcring_ring_clock_now(void);

/* gen.c */
/*
 * The test hook test_clock_step (with test_hooks): the clock of one CPU
 * reads pmcring_clock_step_ns less, a backwards step the other CPUs do not
 * see (pmcring_clock() in ring_prod.h).  A static key: nothing on the
 * producer path while it is off.
 */
DECLARE_STATIC_KEY_FALSE(pmcring_clock_step_key);
extern unsigned int pmcring_clock_step_cpu;
extern u64 pmcring_clock_step_ns;

int pmcring_gen_init(void);
void pmcring_gen_exit(void);
long pmcring_gen_ioctl(struct pmcring_session *s, unsigned int cmd,
		       struct pmcring_generate __user *arg);

#endif /* _PMCRING_CORE_H */
