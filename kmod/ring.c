// SPDX-License-Identifier: GPL-2.0
/*
 * pmcring per-CPU rings: allocation, the page lookup used by mmap, and the
 * lockless producer (pmcring_ring_reserve() / pmcring_ring_commit()).
 *
 * A session owns one ring per CPU that has been online since CONFIGURE:
 * dev.c allocates them at CONFIGURE for the online CPUs and from a CPU
 * hotplug prepare callback for a CPU that comes online later, each as its
 * two meta pages (pmcring_ring_alloc()) and then its data
 * (pmcring_ring_alloc_data(); a ring whose data could not be allocated in
 * the callback stays without and counts its records lost).  Nothing is
 * freed before the session is: an offline CPU's records stay until the
 * consumer drains them.  A ring is
 *
 *	control page	struct pmcring_mmap_page, mapped read-write: the
 *			consumer owns data_tail; the kernel reads nothing else
 *			from it and validates data_tail before use.
 *	producer page	struct pmcring_prod_page, mapped read-only: pending_ts
 *			and the counters, written only here.
 *	data pages	2^n zeroed pages allocated on the CPU's node, vmap()ed
 *			twice in a row (as kernel/bpf/ringbuf.c does) so that a
 *			record starting anywhere in the ring is contiguous in
 *			the kernel's view; user space maps them twice too.
 *
 * The producer state that matters for safety (head, nesting level, drops not
 * yet reported) lives in struct pmcring_ring, never in a mapped page, so
 * nothing user space writes can corrupt it.  Positions are free-running byte
 * counts masked by data_size - 1.
 *
 * Only the CPU owning a ring writes to it (the caller of pmcring_ring_reserve()
 * has preemption disabled or runs in IRQ/NMI context), so every update uses
 * local_t / cmpxchg_local(): writers nest (task, softirq, hardirq, NMI on the
 * same CPU) but never run in parallel.  No lock is taken, nothing sleeps.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/mm.h>
#include <linux/vmalloc.h>
#include <linux/gfp.h>
#include <linux/topology.h>
#include <linux/irq_work.h>
#include <linux/timekeeping.h>
#include <linux/build_bug.h>
#include <linux/stddef.h>
#include <linux/overflow.h>
#include <asm/local.h>
#include "core.h"

/*
 * Kernel view of struct pmcring_prod_page: the same offsets (checked in
 * pmcring_ring_check_abi()) with local_t counters, so that the producer
 * updates them with single non-locked instructions a reader never sees torn.
 */
struct pmcring_prod {
	u64	pending_ts;	/* cmpxchg_local(), see pmcring_ring_pending() */
	local_t	lost;
	local_t	records;
	local_t	bytes;
	u64	flags;		/* PMCRING_PROD_F_*, process context only */
	u64	nr_rings;	/* rings of the session, process context */
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

/* ---- allocation ---- */

static struct page *pmcring_page_alloc(int node)
{
	/*
	 * Zeroed: nothing stale from the kernel ever reaches user space.
	 * __GFP_RETRY_MAYFAIL: a session asking for more than the machine has
	 * gets ENOMEM; it must not wake the OOM killer, which cannot see ring
	 * pages in any process's RSS and would kill bystanders.
	 */
	/* __GFP_ACCOUNT: charged to the memory cgroup of the CONFIGURE caller. */
	return alloc_pages_node(node, GFP_KERNEL_ACCOUNT | __GFP_ZERO |
				__GFP_NOWARN | __GFP_RETRY_MAYFAIL, 0);
}

static void pmcring_ring_wake(struct irq_work *work)
{
	struct pmcring_ring *rb = container_of(work, struct pmcring_ring,
					       wake_work);

	wake_up_all(&rb->s->wq);
}

static void pmcring_ring_put_pages(struct pmcring_ring *rb)
{
	unsigned int i;

	/*
	 * __free_page() drops our reference only: a page still pinned by
	 * someone (get_user_pages() on a mapping) is freed by its last put.
	 */
	for (i = 0; i < PMCRING_META_PAGES; i++)
		if (rb->meta[i])
			__free_page(rb->meta[i]);
	if (!rb->pages)
		return;
	for (i = 0; i < rb->nr_pages; i++)
		if (rb->pages[i])
			__free_page(rb->pages[i]);
	kvfree(rb->pages);
}

/* Map the data pages twice in a row: data[i] and data[i + size] alias. */
static void *pmcring_ring_vmap(struct pmcring_ring *rb)
{
	unsigned int i, n = rb->nr_pages;
	struct page **map;
	void *data;

	map = kvmalloc_array(2 * n, sizeof(*map), GFP_KERNEL);
	if (!map)
		return NULL;
	for (i = 0; i < 2 * n; i++)
		map[i] = rb->pages[i & (n - 1)];
	data = vmap(map, 2 * n, VM_MAP, PAGE_KERNEL);
	kvfree(map);
	return data;
}

static void pmcring_ring_init_ctl(struct pmcring_ring *rb)
{
	struct pmcring_mmap_page *ctl = rb->ctl;

	ctl->version = PMCRING_ABI_VERSION;
	ctl->compat_version = PMCRING_ABI_COMPAT_VERSION;
	ctl->cpu = rb->cpu;
	ctl->page_size = PAGE_SIZE;
	ctl->region_size = pmcring_region_size(rb->nr_pages);
	ctl->watermark = rb->watermark;
	ctl->data_offset = (u64)PMCRING_META_PAGES << PAGE_SHIFT;
	ctl->data_size = (u64)rb->nr_pages << PAGE_SHIFT;
}

/*
 * Ring of @cpu for session @s, sized by s->data_pages (a power of two,
 * checked by the caller): the control and producer pages only; the data
 * pages come with pmcring_ring_alloc_data().  Process context.
 */
struct pmcring_ring *pmcring_ring_alloc(struct pmcring_session *s,
					unsigned int cpu)
{
	int node = cpu_to_node(cpu);
	struct pmcring_ring *rb;
	unsigned int i;

	rb = kzalloc_node(sizeof(*rb), GFP_KERNEL_ACCOUNT, node);
	if (!rb)
		return NULL;
	rb->nr_pages = s->data_pages;
	rb->node = node;
	for (i = 0; i < PMCRING_META_PAGES; i++) {
		rb->meta[i] = pmcring_page_alloc(node);
		if (!rb->meta[i])
			goto err_pages;
	}

	rb->s = s;
	rb->cpu = cpu;
	rb->mask = ((unsigned long)rb->nr_pages << PAGE_SHIFT) - 1;
	rb->watermark = s->watermark;
	rb->ctl = page_address(rb->meta[0]);
	rb->prod = page_address(rb->meta[1]);
	local_set(&rb->head, 0);
	local_set(&rb->nest, 0);
	local_set(&rb->unreported, 0);
	/*
	 * The clock, not a small constant: pending_ts = last_ts must read as
	 * "writer in flight" even after every writer nested in the first
	 * reservation lowered it by one (1 would reach 0).
	 */
	rb->last_ts = ktime_get_mono_fast_ns();
	init_irq_work(&rb->wake_work, pmcring_ring_wake);
	pmcring_ring_init_ctl(rb);
	return rb;

err_pages:
	pmcring_ring_put_pages(rb);
	kfree(rb);
	return NULL;
}

/*
 * The session has @nr rings now (prod->nr_rings, a hint to the consumer).
 * Process context, CPU hotplug lock held; the producer never touches it.
 */
void pmcring_ring_set_nr_rings(struct pmcring_ring *rb, unsigned int nr)
{
	WRITE_ONCE(rb->prod->nr_rings, nr);
}

/* True once the ring has its data pages. */
bool pmcring_ring_has_data(struct pmcring_ring *rb)
{
	/* Pairs with smp_store_release() in pmcring_ring_alloc_data(). */
	return smp_load_acquire(&rb->data);
}

/*
 * Give @rb its data pages, unless it has them: 0, or -ENOMEM with the ring
 * left as it was.  Process context, and no producer runs on the ring's CPU
 * concurrently: either the CPU is online and the ring not yet published to
 * the producers (CONFIGURE), or the CPU is being brought up and runs
 * nothing yet (CPUHP_BP_PREPARE_DYN callback on the control CPU; the
 * bring-up that follows orders these stores before anything the CPU does).
 * Callers serialize through the CPU hotplug lock.
 */
int pmcring_ring_alloc_data(struct pmcring_ring *rb)
{
	unsigned int i, n = rb->nr_pages;
	struct page **pages;
	void *data;

	if (rb->data)
		return 0;
	pages = kvzalloc_node(array_size(n, sizeof(*pages)), GFP_KERNEL_ACCOUNT,
			      rb->node);
	if (!pages)
		return -ENOMEM;
	rb->pages = pages;
	for (i = 0; i < n; i++) {
		pages[i] = pmcring_page_alloc(rb->node);
		if (!pages[i])
			goto err_pages;
	}
	data = pmcring_ring_vmap(rb);
	if (!data)
		goto err_pages;
	WRITE_ONCE(rb->prod->flags, PMCRING_PROD_F_DATA);
	/*
	 * pages[] and the vmap before the pointer; pairs with
	 * smp_load_acquire() in pmcring_ring_has_data() (the fault handler).
	 */
	smp_store_release(&rb->data, data);
	return 0;

err_pages:
	for (i = 0; i < n; i++)
		if (pages[i])
			__free_page(pages[i]);
	kvfree(pages);
	rb->pages = NULL;
	return -ENOMEM;
}

/*
 * Free a ring no producer can reach any more (the session left pmcring_active
 * and an RCU grace period passed, or it never got there).  Process context.
 */
void pmcring_ring_free(struct pmcring_ring *rb)
{
	if (!rb)
		return;
	irq_work_sync(&rb->wake_work);
	if (rb->data)
		vunmap(rb->data);
	pmcring_ring_put_pages(rb);
	kfree(rb);
}

/* ---- what mmap and poll need ---- */

/* Page @pgoff of the ring's region, NULL past its end. */
struct page *pmcring_ring_page(struct pmcring_ring *rb, unsigned long pgoff)
{
	if (pgoff < PMCRING_META_PAGES)
		return rb->meta[pgoff];
	pgoff -= PMCRING_META_PAGES;
	if (pgoff >= 2UL * rb->nr_pages || !pmcring_ring_has_data(rb))
		return NULL;
	return rb->pages[pgoff & (rb->nr_pages - 1)];
}

/*
 * True if the ring holds at least watermark published bytes.  The caller
 * (poll) issued smp_mb() (P) after queueing itself on the wait queue.
 */
bool pmcring_ring_ready(struct pmcring_ring *rb)
{
	unsigned long head = READ_ONCE(rb->published);

	return head - READ_ONCE(rb->ctl->data_tail) >= rb->watermark;
}

/* ---- producer ---- */

struct pmcring_ring *pmcring_session_ring(struct pmcring_session *s)
{
	struct pmcring_ring **rings = READ_ONCE(s->rings);

	return rings ? rings[smp_processor_id()] : NULL;
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
/*
 * The record clock, never below the ring's last timestamp.
 * ktime_get_mono_fast_ns() is NMI-safe at a price (kernel/time/
 * timekeeping.c): an NMI that hits the timekeeper's update may read a time
 * ahead of what the CPU reads after it.  So a record written after such an
 * NMI record would come out earlier than it, and the exact merge, which
 * needs every ring in timestamp order, would break (ring_order's NMI run
 * saw it, 40 to 60 us under TCG).  perf leaves such timestamps as they are
 * (its consumers sort heuristically); pmcring lifts the later ones.
 */
static __always_inline u64 pmcring_ring_clock(struct pmcring_ring *rb)
{
	u64 ts = ktime_get_mono_fast_ns(), last = READ_ONCE(rb->last_ts);

	return ts < last ? last : ts;
}

/*
 * last_ts only moves up: a writer that nests after our reservation (an
 * NMI) may have stored a later time before we store ours.  Only this CPU
 * writes it; cmpxchg_local() orders us against the nesting writers.
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

static void pmcring_ring_pending(struct pmcring_prod *prod, u64 t0)
{
	u64 old = READ_ONCE(prod->pending_ts);
	u64 new, prev;

	for (;;) {
		new = old ? old - 1 : t0;
		/* 0 would tell the consumer that nothing is in flight. */
		WARN_ON_ONCE(!new);
		prev = cmpxchg_local(&prod->pending_ts, old, new);
		if (prev == old)
			return;
		old = prev;
	}
}

/*
 * Wake poll()ers if this publication moved the ring from below to at least
 * the watermark.  An untrusted tail only changes whether we wake.
 */
static void pmcring_ring_wakeup(struct pmcring_ring *rb, unsigned long prev,
				unsigned long head)
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
 *	(E) STORE pending_ts; smp_mb()		(F) T = PMCRING_IOC_CLOCK;
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
		goto again;
	}
}

static void pmcring_ring_header(void *rec, unsigned int type, u32 len, u64 ts)
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
 * The timestamp is read inside the reservation loop, after loading head and
 * before the cmpxchg that claims the space: a writer that nests in between
 * moves head and makes us retry with a later clock read, so each ring holds
 * its records in non-decreasing timestamp order.
 */
void *pmcring_ring_reserve(struct pmcring_ring *rb, unsigned int type, u32 len,
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
	pmcring_ring_pending(rb->prod, READ_ONCE(rb->last_ts));
	/*
	 * (E) pending_ts before the clock read, pairs with (F).  A full
	 * barrier: store-buffering needs one on each side.  (Moving it to the
	 * consumer as an IPI to every CPU, membarrier-style, was measured:
	 * no gain under TCG, and PMCRING_IOC_CLOCK went from 10 us to 55 us
	 * at p50 and to 10 ms at worst, interrupting isolated CPUs.)
	 */
	smp_mb();

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
		if (local_cmpxchg(&rb->head, head, head + need) == head)
			break;
		if (drops)
			local_add(drops, &rb->unreported);
	}

	WRITE_ONCE(rb->tail_hint, tail);
	pmcring_ring_last_ts(rb, ts);
	rec = rb->data + (head & rb->mask);
	if (drops) {
		pmcring_ring_header(rec, PMCRING_TYPE_DROPNOTIFY,
				    PMCRING_SIZE_DROPNOTIFY, ts);
		local_inc(&rb->prod->records);
		local_add(PMCRING_SIZE_DROPNOTIFY, &rb->prod->bytes);
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

/*
 * Count one record that a source could not even try to write (a lock it
 * cannot take, NMI context) as lost; a DROPNOTIFY precedes the next record
 * that fits.  Any context including NMI; preemption disabled.
 */
void pmcring_ring_lost(struct pmcring_ring *rb)
{
	pmcring_ring_lost_n(rb, 1);
}

/* @n records lost at once, as pmcring_ring_lost(). */
void pmcring_ring_lost_n(struct pmcring_ring *rb, u32 n)
{
	if (!rb || !n)
		return;
	local_add(n, &rb->prod->lost);
	local_add(n, &rb->unreported);
}

/* Publish a record obtained from pmcring_ring_reserve(). */
void pmcring_ring_commit(struct pmcring_wr *wr)
{
	struct pmcring_ring *rb = wr->rb;

	local_inc(&rb->prod->records);
	local_add(PMCRING_RING_SPACE(wr->len), &rb->prod->bytes);
	pmcring_ring_exit(rb);
}

/*
 * Writers on @wr's ring between reserve and commit, @wr's own included:
 * 1 for the outermost.  Exact only when nothing can nest in the caller
 * (NMI context) and called before pmcring_ring_commit(); for the generator.
 */
unsigned int pmcring_ring_nest(const struct pmcring_wr *wr)
{
	return local_read(&wr->rb->nest);
}

/* True if the record of @wr crosses the end of the data (wraps). */
bool pmcring_ring_wraps(const struct pmcring_wr *wr)
{
	struct pmcring_ring *rb = wr->rb;

	unsigned long off = (unsigned long)(wr->rec - rb->data) & rb->mask;

	return off + PMCRING_RING_SPACE(wr->len) > rb->mask + 1;
}

/* Compile-time checks of the ABI; called once at module load. */
void pmcring_ring_check_abi(void)
{
	BUILD_BUG_ON(sizeof(struct pmcring_rec_header) != PMCRING_HEADER_SIZE);
	BUILD_BUG_ON(offsetof(struct pmcring_mmap_page, cpu) != 8);
	BUILD_BUG_ON(offsetof(struct pmcring_mmap_page, region_size) != 16);
	BUILD_BUG_ON(offsetof(struct pmcring_mmap_page, data_head) != 1024);
	BUILD_BUG_ON(offsetof(struct pmcring_mmap_page, data_tail) != 1032);
	BUILD_BUG_ON(offsetof(struct pmcring_mmap_page, data_offset) != 1040);
	BUILD_BUG_ON(offsetof(struct pmcring_mmap_page, data_size) != 1048);
	BUILD_BUG_ON(offsetof(struct pmcring_mmap_page, aux_size) != 1080);
	BUILD_BUG_ON(sizeof(struct pmcring_mmap_page) != 1088);
	BUILD_BUG_ON(sizeof(struct pmcring_prod_page) != 512);
	BUILD_BUG_ON(sizeof(local_t) != sizeof(u64));
	BUILD_BUG_ON(offsetof(struct pmcring_prod, pending_ts) !=
		     offsetof(struct pmcring_prod_page, pending_ts));
	BUILD_BUG_ON(offsetof(struct pmcring_prod, lost) !=
		     offsetof(struct pmcring_prod_page, lost));
	BUILD_BUG_ON(offsetof(struct pmcring_prod, records) !=
		     offsetof(struct pmcring_prod_page, records));
	BUILD_BUG_ON(offsetof(struct pmcring_prod, bytes) !=
		     offsetof(struct pmcring_prod_page, bytes));
	BUILD_BUG_ON(offsetof(struct pmcring_prod, flags) !=
		     offsetof(struct pmcring_prod_page, flags));
	BUILD_BUG_ON(offsetof(struct pmcring_prod, nr_rings) !=
		     offsetof(struct pmcring_prod_page, nr_rings));
	BUILD_BUG_ON(sizeof(struct pmcring_prod) >
		     sizeof(struct pmcring_prod_page));
	BUILD_BUG_ON(sizeof(struct pmcring_info) != 80);
	BUILD_BUG_ON(sizeof(struct pmcring_config) != 72);
	BUILD_BUG_ON(sizeof(struct pmcring_counter) != 128);
	BUILD_BUG_ON(sizeof(struct pmcring_generate) !=
		     PMCRING_GENERATE_SIZE_VER1);
	BUILD_BUG_ON(offsetof(struct pmcring_generate, written) !=
		     PMCRING_GENERATE_SIZE_VER0);
	BUILD_BUG_ON(sizeof(struct pmcring_rec_initialize) !=
		     PMCRING_SIZE_INITIALIZE);
	BUILD_BUG_ON(sizeof(struct pmcring_rec_pmcallocatedyn) !=
		     PMCRING_SIZE_PMCALLOCATEDYN);
	BUILD_BUG_ON(offsetof(struct pmcring_rec_generated, pl_fill) != 32);
	/* The largest record plus a DROPNOTIFY fit the smallest ring. */
	BUILD_BUG_ON(PMCRING_RECORD_MAX + PMCRING_SIZE_DROPNOTIFY >
		     PMCRING_MIN_DATA_PAGES * PAGE_SIZE);
	BUILD_BUG_ON(PMCRING_TYPE_MAX >= 64);
}
