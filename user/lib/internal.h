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

/*
 * Staging (merge.c, PMCRING_MERGE_F_NO_STAGING): ring bytes copied to user
 * memory so the ring space can go back while the merge waits.  A chunk
 * holds whole records, the ring positions [lo, hi), in ring order.
 */
struct pmcring_stage_chunk {
	struct pmcring_stage_chunk	*next;
	uint64_t			lo, hi;
	uint64_t			bytes[];	/* 8-aligned records */
};

/* The budget of every ring of a merge. */
struct pmcring_staging {
	uint64_t			used;	/* bytes in chunks */
	uint64_t			limit;
};

/* One CPU ring as a consumer sees it (the checks of records: ring.c). */
struct pmcring_cpu_buf {
	/* per record: the first two cache lines */
	const uint8_t			*data;	/* data, mapped twice */
	uint64_t			mask;	/* data_size - 1 */
	uint64_t			pos;	/* cursor: next record */
	uint64_t			head;	/* data_head last loaded */
	uint64_t			tail;	/* data_tail last stored */
	uint64_t			last_ts;/* ts of the last record passed */
	uint64_t			peek_end;/* end of the peeked record, or 0 */
	uint64_t			peek_ts;
	uint64_t			records;
	struct pmcring_stage_chunk	*rd;	/* chunk holding pos, or NULL */
	unsigned int			cpu;
	union {
		struct {
			bool		corrupt;
			bool		peek_back;/* peeked ts was clamped */
		};
		uint16_t		rare;	/* either (merge.c: set_slow_at()) */
	};
	struct pmcring_mmap_page	*ctl;	/* control page, read-write */
	const struct pmcring_prod_page	*prod;	/* producer page */
	uint64_t			start;	/* pos at init: bytes passed */
	uint64_t			backwards;/* records clamped */
	void				*base;	/* region, for _cpu_buffer() */
	size_t				size;
	/*
	 * Staging: data_tail is the consumer's rel, moved past the chunks
	 * that follow it (their bytes are copied).
	 */
	uint64_t			rel;	/* consumed (given back) up to */
	struct pmcring_stage_chunk	*stg_first, *stg_last;
	struct pmcring_staging		*stg;	/* the merge's budget, or NULL */
	uint64_t			staged;	/* bytes copied to chunks */
};

/*
 * pmcring_cpu_buf_peek() and _next() (ring.c: what is checked and why),
 * inline for the merge's per-record path.
 */
static inline int cpu_buf_corrupt(struct pmcring_cpu_buf *b)
{
	b->corrupt = true;
	b->peek_end = 0;
	return -EBADMSG;
}

static inline __attribute__((always_inline)) int
cpu_buf_peek_ids(struct pmcring_cpu_buf *b, struct pmcring_record *r,
		 bool ids)
{
	const struct pmcring_rec_header *h;
	uint32_t hdr, len, type;
	uint64_t avail, ts;

	if (__builtin_expect(b->corrupt, 0))
		return -EBADMSG;
	if (__builtin_expect(b->rd != NULL, 0)) {
		/* staged: checked like ring bytes, they are a copy */
		avail = b->rd->hi - b->pos;
		h = (const void *)((const uint8_t *)b->rd->bytes +
				   (b->pos - b->rd->lo));
		goto check;
	}
	if (b->pos == b->head) {
		/* (C): pairs with (B), the smp_wmb() before the producer's
		 * store of data_head in pmcring_ring_commit().
		 */
		uint64_t head = smp_load_acquire(&b->ctl->data_head);

		if ((head & 7) || head - b->tail > b->mask + 1 ||
		    head - b->pos > head - b->tail)
			return cpu_buf_corrupt(b);
		b->head = head;
		if (head == b->pos)
			return 0;
	}
	avail = b->head - b->pos;
	h = (const void *)(b->data + (b->pos & b->mask));
check:
	if (avail < PMCRING_HEADER_SIZE)
		return cpu_buf_corrupt(b);
	hdr = h->pl_header;
	ts = h->pl_tsc;
	len = PMCRING_HEADER_LEN(hdr);
	type = PMCRING_HEADER_TYPE(hdr);
	if (PMCRING_HEADER_MAGIC(hdr) != PMCRING_LOG_MAGIC ||
	    len < PMCRING_HEADER_SIZE || len > PMCRING_RECORD_MAX ||
	    PMCRING_RING_SPACE(len) > avail || type == 0 ||
	    type > PMCRING_TYPE_MAX)
		return cpu_buf_corrupt(b);
	if (ids) {
		b->peek_back = ts < b->last_ts;
		if (b->peek_back)
			ts = b->last_ts;
	} else if (__builtin_expect(ts < b->last_ts, 0)) {
		ts = b->last_ts;	/* cpu_buf_step() counts and clears it */
		b->peek_back = true;
	}
	r->data = h;
	r->len = len;
	r->type = type;
	r->ts = ts;
	r->end = b->pos + PMCRING_RING_SPACE(len);
	if (ids) {
		/* the merge keeps its own copy: no peek state in the ring */
		r->cpu = b->cpu;
		r->ring = b->cpu;
		b->peek_end = r->end;
		b->peek_ts = ts;
	}
	return 1;
}

static inline int cpu_buf_peek(struct pmcring_cpu_buf *b,
			       struct pmcring_record *r)
{
	return cpu_buf_peek_ids(b, r, true);
}

/* The merge's peek: r->cpu, r->ring are its own; see cpu_buf_step(). */
static inline int cpu_buf_peek_rec(struct pmcring_cpu_buf *b,
				   struct pmcring_record *r)
{
	return cpu_buf_peek_ids(b, r, false);
}

static inline void cpu_buf_next(struct pmcring_cpu_buf *b)
{
	if (!b->peek_end)
		return;
	/* relaxed atomics: pmcring_cpu_stats() may read them elsewhere */
	WRITE_ONCE(&b->records, b->records + 1);
	if (b->peek_back)
		WRITE_ONCE(&b->backwards, b->backwards + 1);
	b->last_ts = b->peek_ts;
	/* the stats' bytes are pos - start */
	WRITE_ONCE(&b->pos, b->peek_end);
	b->peek_end = 0;
	/* at the end of a chunk: the next one, or the ring */
	if (__builtin_expect(b->rd != NULL, 0) && b->pos == b->rd->hi)
		b->rd = b->rd->next && b->rd->next->lo == b->pos ?
			b->rd->next : NULL;
}

/*
 * The merge's next + peek: pass the record peeked into *r and peek the one
 * after it into *r (its ids left alone).  The merge's peeks keep no peek
 * state in @b but peek_back (set when a timestamp was clamped, counted
 * and cleared here): the record passed is *r.
 */
static inline __attribute__((always_inline)) int
cpu_buf_step(struct pmcring_cpu_buf *b, struct pmcring_record *r)
{
	WRITE_ONCE(&b->records, b->records + 1);
	if (__builtin_expect(b->peek_back, 0)) {
		WRITE_ONCE(&b->backwards, b->backwards + 1);
		b->peek_back = false;
	}
	b->last_ts = r->ts;
	WRITE_ONCE(&b->pos, r->end);
	if (__builtin_expect(b->rd != NULL, 0) && r->end == b->rd->hi)
		b->rd = b->rd->next && b->rd->next->lo == r->end ?
			b->rd->next : NULL;
	return cpu_buf_peek_ids(b, r, false);
}

/*
 * Staging of @b's records not yet passed (merge.c): copy them to a chunk
 * within the budget b->stg and give their ring space back as soon as the
 * records before them are consumed.  1 copied, 0 nothing (empty, over
 * budget, no memory), -EBADMSG.
 */
int pmcring_cpu_buf_stage(struct pmcring_cpu_buf *b);
/*
 * The merge that staged goes away: staged records not handed out yet are
 * dropped, chunks freed, everything handed out counts as consumed.
 */
void pmcring_cpu_buf_unstage(struct pmcring_cpu_buf *b);

/*
 * Set up @b over a mapped region whose control page is at @base: checks the
 * control page's version and layout.  0 or -EPROTO/-EINVAL.
 */
int pmcring_cpu_buf_init(struct pmcring_cpu_buf *b, void *base, size_t size,
			 unsigned int cpu);

/*
 * @b stands for a CPU that has no ring (yet): empty, nothing in flight,
 * base NULL.  @data_size is the session's, for the merge's sizing.
 */
void pmcring_cpu_buf_init_absent(struct pmcring_cpu_buf *b, unsigned int cpu,
				 uint64_t data_size);
/*
 * The ring of stand-in @b appeared, mapped at @base: @b becomes its
 * iterator (the merge's staging budget kept).  0 or -EPROTO.
 */
int pmcring_cpu_buf_adopt(struct pmcring_cpu_buf *b, void *base, size_t size);
/*
 * Map the rings that appeared since the session mapped its rings (the
 * producer pages' nr_rings is above what is mapped).  Consumer thread.
 * The number mapped, or a negative errno.
 */
int pmcring_session_refresh(struct pmcring *s);

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
