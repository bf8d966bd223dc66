/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libpmcring internals shared by session.c, ring.c, merge.c, log.c and
 * uprod.c.  Not installed.
 */
#ifndef LIBPMCRING_INTERNAL_H
#define LIBPMCRING_INTERNAL_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include "libpmcring_test.h"

/*
 * The kernel's names for the C11 operations of the ordering contract in
 * <linux/pmcring.h>.  The mapped pages are plain __u64s; they are accessed
 * as atomics of the same size and alignment (lock-free on every target
 * that has a 64-bit atomic load).  Unlike the kernel's, these take a
 * pointer to the __u64.
 */
#define PMCRING_ATOMIC(p)	((_Atomic uint64_t *)(uintptr_t)(p))
#define smp_load_acquire(p) \
	atomic_load_explicit(PMCRING_ATOMIC(p), memory_order_acquire)
#define smp_store_release(p, v) \
	atomic_store_explicit(PMCRING_ATOMIC(p), (v), memory_order_release)
#define READ_ONCE(p) \
	atomic_load_explicit(PMCRING_ATOMIC(p), memory_order_relaxed)
#define WRITE_ONCE(p, v) \
	atomic_store_explicit(PMCRING_ATOMIC(p), (v), memory_order_relaxed)
#define smp_mb()	atomic_thread_fence(memory_order_seq_cst)
#define smp_wmb()	atomic_thread_fence(memory_order_release)

/* One CPU ring as a consumer sees it (the checks of records: ring.c). */
struct pmcring_cpu_buf {
	struct pmcring_mmap_page	*ctl;	/* control page, read-write */
	const struct pmcring_prod_page	*prod;	/* producer page */
	const uint8_t			*data;	/* data, mapped twice */
	uint64_t			mask;	/* data_size - 1 */
	uint64_t			pos;	/* cursor: next record */
	uint64_t			head;	/* data_head last loaded */
	uint64_t			tail;	/* data_tail last stored */
	uint64_t			last_ts;/* ts of the last record passed */
	uint64_t			peek_end;/* end of the peeked record, or 0 */
	uint64_t			peek_ts;
	uint64_t			records;
	uint64_t			bytes;
	uint64_t			backwards;/* records clamped */
	void				*base;	/* region, for _cpu_buffer() */
	size_t				size;
	unsigned int			cpu;
	bool				corrupt;
	bool				peek_back;/* peeked ts was clamped */
};

/*
 * Set up @b over a mapped region whose control page is at @base: checks the
 * control page's version and layout.  0 or -EPROTO/-EINVAL.
 */
int pmcring_cpu_buf_init(struct pmcring_cpu_buf *b, void *base, size_t size,
			 unsigned int cpu);

/*
 * Map one CPU region of @fd at @off: reserve @region_size bytes, control
 * page read-write, the rest read-only, all MAP_SHARED|MAP_FIXED.
 */
void *pmcring_map_region(int fd, off_t off, size_t region_size,
			 size_t page_size);

/* Does @m hold a peeked record back (reader.c's end-of-stream test)? */
bool pmcring_merge_holds(const struct pmcring_merge *m);

/*
 * Options struct helpers (libbpf style): a field is given if the caller's
 * sz covers it; bytes past our sizeof must be zero.
 */
#define OPTS_HAS(opts, field) \
	((opts) && (opts)->sz >= offsetof(__typeof__(*(opts)), field) + \
	 sizeof((opts)->field))
#define OPTS_GET(opts, field, def) \
	(OPTS_HAS(opts, field) ? (opts)->field : (def))

static inline bool pmcring_opts_valid(const void *opts, size_t sz,
				      size_t known)
{
	const uint8_t *p = opts;
	size_t i;

	if (!opts)
		return true;
	if (sz < sizeof(size_t))
		return false;
	for (i = known; i < sz; i++)
		if (p[i])
			return false;
	return true;
}

#define OPTS_VALID(opts) \
	pmcring_opts_valid((opts), (opts) ? (opts)->sz : 0, sizeof(*(opts)))

#endif /* LIBPMCRING_INTERNAL_H */
