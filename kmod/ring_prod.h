/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The producer of the per-CPU rings, inline: ring.c exports it as
 * pmcring_ring_reserve() and pmcring_ring_commit(); a source on the hot path
 * of a tracepoint (src_emit.c, the sched_switch probe of src_sched.c)
 * includes this header to write a record without two calls
 * (perf_output_begin() and perf_output_end() are calls, but the tracepoint
 * path has no other: B1 measured each call, see
 * Documentation/performance.rst).  Nothing else uses struct pmcring_ring.
 * See ring.c for the layout of a ring.
 */
#ifndef _PMCRING_RING_PROD_H
#define _PMCRING_RING_PROD_H

#include <linux/kernel.h>
#include <linux/irq_work.h>
#include <linux/timekeeping.h>
#include <asm/local.h>
#include "core.h"

/*
 * Kernel view of struct pmcring_prod_page: the same offsets (checked in
 * pmcring_ring_check_abi()) with local_t counters, so that the producer
 * updates them with single non-locked instructions a reader never sees torn.
 */
struct pmcring_prod {
	u64	pending_ts;	/* see pmcring_ring_pending(), _exit() */
	local_t	lost;
	local_t	records;
	local_t	bytes;
	u64	flags;		/* PMCRING_PROD_F_*, process context only */
	u64	nr_rings;	/* rings of the session, process context */
	local_t	reported;	/* drops the DROPNOTIFYs announced */
};

/*
 * One CPU's ring.  The first group is written by the producer of that CPU
 * only (nested writers included); the rest is constant after allocation.
 */
struct pmcring_ring {
	local_t			head;		/* bytes reserved, free running */
	local_t			nest;		/* writers between reserve/commit */
	local_t			unreported;	/* drops no DROPNOTIFY marked yet */
	unsigned long		published;	/* last data_head stored */
	unsigned long		tail_hint;	/* a data_tail read by a writer */
	u64			last_ts;	/* ts of the last reservation */

	unsigned long		mask;		/* data_size - 1 */
	unsigned long		watermark;	/* poll threshold, bytes */
	/*
	 * Data pages, vmapped twice; NULL until pmcring_ring_alloc_data().
	 * Set with smp_store_release() once pages[] and the vmap are in
	 * place; read with smp_load_acquire() by the fault handler (any
	 * CPU) and with READ_ONCE() by the producer, which runs on the ring's
	 * CPU only after it came online (see pmcring_ring_alloc_data()).
	 */
	void			*data;
	struct pmcring_mmap_page *ctl;		/* control page, user writable */
	struct pmcring_prod	*prod;		/* producer page */
	struct pmcring_session	*s;
	struct irq_work		wake_work;	/* NMI-safe poll wake-up */
	unsigned int		cpu;
	unsigned int		nr_pages;	/* data pages, a power of two */
	int			node;		/* of the CPU */
	struct page		*meta[PMCRING_META_PAGES];
	struct page		**pages;	/* nr_pages, with data */
};

/*
 * The record clock of the calling CPU (preemption disabled, or a caller
 * that does not mind which CPU): ktime_get_mono_fast_ns(), CLOCK_MONOTONIC
 * read without the timekeeper's seqcount, so NMI-safe.  Its guarantee is
 * weaker than ktime_get_ns()'s (kernel/time/timekeeping.c, "not
 * guaranteed to be monotonic across an update"): a reader that runs while
 * another CPU updates the timekeeper may use the old slope, and read a
 * little ahead of (slope lowered) or behind (slope raised) a reader that
 * uses the new one.  Documentation/abi.rst says what that means for the
 * merge; perf's default clock (local_clock()) gives less, and its tools
 * sort with a heuristic window instead.
 */
static __always_inline u64 pmcring_clock(void)
{
	u64 ts = ktime_get_mono_fast_ns(), step;

	if (static_branch_unlikely(&pmcring_clock_step_key) &&
	    raw_smp_processor_id() == READ_ONCE(pmcring_clock_step_cpu)) {
		step = READ_ONCE(pmcring_clock_step_ns);
		ts = ts > step ? ts - step : 1;
	}
	return ts;
}

/*
 * The record clock, never below the ring's last timestamp.  An NMI that
 * hits the timekeeper's update on this CPU may read a time ahead of what
 * the CPU reads after it, and a writer may have read the clock while
 * another CPU updated it (pmcring_clock()).  So a record written after
 * such a record would come out earlier than it, and the exact merge, which
 * needs every ring in timestamp order, would break (ring_order's NMI run
 * saw it, 40 to 60 us under TCG).  perf leaves such timestamps as they are
 * (its consumers sort heuristically); pmcring lifts the later ones.
 */
static __always_inline u64 pmcring_ring_clock(struct pmcring_ring *rb)
{
	u64 ts = pmcring_clock(), last = READ_ONCE(rb->last_ts);

	return ts < last ? last : ts;
}

/*
 * last_ts only moves up: a writer that nests between our read of it and
 * this store may have stored a later time.  Only this CPU writes it;
 * cmpxchg_local() orders us against the nesting writers.
 */
static __always_inline void pmcring_ring_last_ts(struct pmcring_ring *rb,
						 u64 ts)
{
	u64 old = READ_ONCE(rb->last_ts), prev;

	while (old < ts) {
		prev = cmpxchg_local(&rb->last_ts, old, ts);
		if (prev == old)
			break;
		old = prev;
	}
}

/*
 * Announce a writer: pending_ts = t0 if no writer is in flight, else lower
 * the current value by one.  t0 is the timestamp of the last reservation on
 * this ring, not a fresh clock read: the records of a ring are in timestamp
 * order, so it bounds every record reserved from now on, at the price of
 * one clock read less per record (the bound is staler only while a writer
 * is in flight).  A nested writer thus always changes a non-zero
 * pending_ts and never raises it, so the outermost writer's clearing
 * cmpxchg_local() in pmcring_ring_exit() fails whenever a nested writer came
 * in after it read the value (no ABA).  The value stays a lower bound: a
 * nested writer's records are stamped after the outer writer's t0.
 * last_ts starts from the clock (pmcring_ring_alloc()), which is far above
 * the depth of any nesting, so neither branch produces 0.
 */
static __always_inline void pmcring_ring_pending(struct pmcring_prod *prod,
						 u64 t0)
{
	u64 old = READ_ONCE(prod->pending_ts);
	u64 new, prev;

	for (;;) {
		new = old ? old - 1 : t0;
		/* 0 would tell the consumer that nothing is in flight. */
		WARN_ON_ONCE(!new);
		/*
		 * (E) pending_ts before the clock read, pairs with (F): a
		 * full barrier, as store-buffering needs one on each side.
		 * cmpxchg() is fully ordered when it succeeds (atomic_t.txt),
		 * and only a success leaves the loop, so it is the barrier:
		 * one locked instruction on x86 instead of cmpxchg_local()
		 * and smp_mb().  (Moving the barrier to the consumer as an
		 * IPI to every CPU, membarrier-style, was measured: no gain
		 * under TCG, and PMCRING_IOC_CLOCK went from 10 us to 55 us
		 * at p50 and to 10 ms at worst, interrupting isolated CPUs.)
		 * perf has no such store: its records are not ordered across
		 * rings, its consumers sort them heuristically.
		 */
		prev = cmpxchg(&prod->pending_ts, old, new);
		if (prev == old)
			return;
		old = prev;
	}
}

/*
 * Wake poll()ers if this publication moved the ring from below to at least
 * the watermark.  An untrusted tail only changes whether we wake.
 */
static inline void pmcring_ring_wakeup(struct pmcring_ring *rb,
				       unsigned long prev, unsigned long head)
{
	unsigned long tail;

	if (head == prev)
		return;
	/*
	 * An honest consumer's tail only grows: if even an older tail leaves
	 * less than the watermark, so does the current one.  This skips the
	 * full barrier below while the consumer keeps up.
	 */
	if (head - READ_ONCE(rb->tail_hint) < rb->watermark)
		return;
	/*
	 * (W) published before loading data_tail; pairs with (P) smp_mb() in
	 * pmcring_dev_poll() between queueing on the wait queue and reading
	 * published: either poll sees this head or we see its tail.
	 */
	smp_mb();
	tail = READ_ONCE(rb->ctl->data_tail);
	if (head - tail >= rb->watermark && prev - tail < rb->watermark)
		irq_work_queue(&rb->wake_work);
}

/*
 * Leave the writer section: the outermost writer publishes data_head and
 * clears pending_ts; nested writers just leave.  perf's
 * perf_output_put_handle(), extended with pending_ts.
 *
 *	producer (here and reserve)		consumer (user/lib/ring.c)
 *	(E) cmpxchg() pending_ts (full mb)	(F) T = PMCRING_IOC_CLOCK;
 *	    READ clock (ts >= t0)		    smp_mb(); LOAD pending_ts
 *	(A) LOAD data_tail; ctrl dependency	(C) LOAD data_head (acquire)
 *	    STORE record bytes			    LOAD record bytes
 *	(B) smp_wmb(); STORE data_head		(D) smp_mb(); STORE data_tail
 *	(G) smp_wmb(); STORE pending_ts = 0	(H) LOAD data_head after
 *						    LOAD pending_ts (acquire)
 *
 *	A pairs with D: we never overwrite bytes the consumer still reads.
 *	B pairs with C: a consumer that sees data_head sees the records.
 *	E pairs with F: if the consumer reads pending_ts == 0, every record
 *	not yet published reads its clock after T.
 *	G pairs with H: a consumer that reads the cleared 0 sees the data_head
 *	stored before it.
 *
 * If a writer nests between our read of pending_ts and the clearing
 * cmpxchg_local(), the value changed (pmcring_ring_pending()) and we loop
 * to publish its record too.  If one nests after the clear but before
 * nest drops to 0 it neither publishes nor clears: the final check sees its
 * head or its pending_ts and loops.
 */
static __always_inline void pmcring_ring_exit(struct pmcring_ring *rb)
{
	unsigned long head, prev;
	u64 pending;

again:
	if (local_read(&rb->nest) > 1) {
		local_dec(&rb->nest);
		return;
	}
	pending = READ_ONCE(rb->prod->pending_ts);
	head = local_read(&rb->head);

	smp_wmb(); /* (B) record bytes before data_head, pairs with (C) */
	WRITE_ONCE(rb->ctl->data_head, head);
	prev = rb->published;
	WRITE_ONCE(rb->published, head);

	smp_wmb(); /* (G) data_head before pending_ts = 0, pairs with (H) */
	if (cmpxchg_local(&rb->prod->pending_ts, pending, 0) != pending)
		goto again;

	pmcring_ring_wakeup(rb, prev, head);

	barrier();
	local_set(&rb->nest, 0);
	barrier();
	if (unlikely(local_read(&rb->head) != head ||
		     READ_ONCE(rb->prod->pending_ts))) {
		local_inc(&rb->nest);
		/*
		 * nest before the loads of the next round (local_inc() has no
		 * "memory" clobber): reading head first could publish a head
		 * older than a nested writer's, as perf's barrier() after its
		 * "again:" in perf_output_put_handle() prevents.
		 */
		barrier();
		goto again;
	}
}

static __always_inline void pmcring_ring_header(void *rec, unsigned int type, u32 len, u64 ts)
{
	struct pmcring_rec_header *h = rec;

	h->pl_header = PMCRING_HEADER(type, len);
	h->pl_spare = 0;
	h->pl_tsc = ts;
}

/*
 * Reserve a record of @len bytes and @type on @rb, the calling CPU's ring.
 * Any context including NMI; the caller has preemption disabled.  Fills the
 * header and the padding after the record; the caller must write every byte
 * 16..len-1 (the ring is reused: what it does not write is a previous
 * record's bytes) and then call pmcring_ring_commit().  Returns NULL if
 * the record was dropped (counted in lost; a DROPNOTIFY precedes the next
 * record that fits).
 *
 * The timestamp is read inside the reservation loop, after loading head,
 * and stored in last_ts before the cmpxchg that claims the space.  A writer
 * that nests before the claim moves head and makes us retry with a later
 * clock read; one that nests after it finds our time in last_ts and is
 * lifted to it.  So each ring holds its records in non-decreasing
 * timestamp order by construction, whatever the clock does.
 */
static __always_inline void *
pmcring_ring_reserve_inline(struct pmcring_ring *rb, unsigned int type, u32 len,
			    struct pmcring_wr *wr)
{
	unsigned long head, tail, used, need, size;
	u32 space;
	long drops;
	void *rec;
	u64 ts;

	if (unlikely(!rb))
		return NULL;
	/*
	 * No data pages: a CPU that came online although they could not be
	 * allocated (pmcring_ring_alloc_data() failed in the hotplug
	 * callback).  Counted; the consumer sees the loss in lost.
	 */
	if (unlikely(!READ_ONCE(rb->data))) {
		pmcring_ring_lost(rb);
		return NULL;
	}
	/*
	 * A caller's bug, not the ring's: the padding below writes one u32
	 * only, so a length must be 4-aligned (PMCRING_LOG_ALIGN()).  Dropped
	 * and counted like any other lost record.
	 */
	if (WARN_ON_ONCE(len < PMCRING_HEADER_SIZE || len > PMCRING_RECORD_MAX ||
			 (len & 3) || type > PMCRING_TYPE_MAX)) {
		pmcring_ring_lost(rb);
		return NULL;
	}
	space = PMCRING_RING_SPACE(len);
	size = rb->mask + 1;

	local_inc(&rb->nest);
	barrier();
	/* (E): the fully ordered cmpxchg() in there, pairs with (F). */
	pmcring_ring_pending(rb->prod, READ_ONCE(rb->last_ts));

	for (;;) {
		head = local_read(&rb->head);
		/*
		 * (A) pairs with (D): no barrier.  The space check below
		 * needs this load to decide whether we store at all, a
		 * control dependency that orders it before the record
		 * stores (as perf_output_begin()).
		 */
		tail = READ_ONCE(rb->ctl->data_tail);
		ts = pmcring_ring_clock(rb);
		drops = local_read(&rb->unreported);
		need = space + (drops ? PMCRING_SIZE_DROPNOTIFY : 0);
		/* A tail beyond head or a ring behind reads as a full ring. */
		used = head - tail;
		if (unlikely(used > size || size - used < need))
			goto drop;
		/* Claim the drops we report; give them back if head moved. */
		if (drops && local_cmpxchg(&rb->unreported, drops, 0) != drops)
			continue;
		/*
		 * Before the claim: a writer nesting right after it must see
		 * our time (a retry only raises last_ts, which stays a lower
		 * bound of every record reserved later: pending_ts's t0).
		 */
		pmcring_ring_last_ts(rb, ts);
		if (local_cmpxchg(&rb->head, head, head + need) == head)
			break;
		if (drops)
			local_add(drops, &rb->unreported);
	}

	WRITE_ONCE(rb->tail_hint, tail);
	rec = rb->data + (head & rb->mask);
	if (drops) {
		pmcring_ring_header(rec, PMCRING_TYPE_DROPNOTIFY,
				    PMCRING_SIZE_DROPNOTIFY, ts);
		local_inc(&rb->prod->records);
		local_add(PMCRING_SIZE_DROPNOTIFY, &rb->prod->bytes);
		/*
		 * The drops it announces: lost - reported stays unannounced.
		 * Each was counted in lost on this CPU before it was claimed
		 * from unreported above; lost before reported, pairs with a
		 * reader's load-acquire of reported before it loads lost
		 * (uapi struct pmcring_prod_page).
		 */
		smp_wmb();
		local_add(drops, &rb->prod->reported);
		rec += PMCRING_SIZE_DROPNOTIFY;
	}
	pmcring_ring_header(rec, type, len, ts);
	if (space != len)
		*(u32 *)(rec + len) = 0;

	wr->rb = rb;
	wr->rec = rec;
	wr->len = len;
	wr->ts = ts;
	return rec;

drop:
	local_inc(&rb->prod->lost);
	local_inc(&rb->unreported);
	pmcring_ring_exit(rb);
	return NULL;
}

/* Publish a record obtained from pmcring_ring_reserve_inline(). */
static __always_inline void pmcring_ring_commit_inline(struct pmcring_wr *wr)
{
	struct pmcring_ring *rb = wr->rb;

	local_inc(&rb->prod->records);
	local_add(PMCRING_RING_SPACE(wr->len), &rb->prod->bytes);
	pmcring_ring_exit(rb);
}

#endif /* _PMCRING_RING_PROD_H */
