// SPDX-License-Identifier: GPL-2.0
/*
 * pmcring per-CPU rings: allocation, the page lookup used by mmap, and the
 * lockless producer (pmcring_ring_reserve() / pmcring_ring_commit(), whose
 * inline bodies and struct pmcring_ring are in ring_prod.h).
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
#include "ring_prod.h"

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
	rb->last_ts = pmcring_clock();
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
 * Release: the new ring's smp_store_release() into the session's rings[]
 * (pmcring_dev_ring_add()) comes before this store, so a consumer that
 * reads the new count with smp_load_acquire() (libpmcring's
 * pmcring_session_refresh(), step (F) in uapi/linux/pmcring.h) and then
 * mmap()s finds the ring published, never ENODEV.
 */
void pmcring_ring_set_nr_rings(struct pmcring_ring *rb, unsigned int nr)
{
	/* pairs with the consumer's smp_load_acquire() of nr_rings */
	smp_store_release(&rb->prod->nr_rings, nr);
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
	/*
	 * pages[] and the vmap before the pointer; pairs with
	 * smp_load_acquire() in pmcring_ring_has_data() (the fault handler).
	 */
	smp_store_release(&rb->data, data);
	/*
	 * The flag after the pointer: a ring whose pages are retried when
	 * its CPU comes back may be mapped already, and a consumer that saw
	 * the flag and then faulted on a data page before rb->data was set
	 * would get SIGBUS.  Pairs with the consumer's load-acquire of
	 * flags, which comes before its fault (uapi PMCRING_PROD_F_DATA).
	 */
	smp_store_release(&rb->prod->flags, PMCRING_PROD_F_DATA);
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

/* The record clock of the calling CPU, for PMCRING_IOC_CLOCK (dev.c). */
u64 pmcring_ring_clock_now(void)
{
	return pmcring_clock();
}

/*
 * Reserve a record of @len bytes and @type on @rb, the calling CPU's ring:
 * pmcring_ring_reserve_inline() in ring_prod.h, which says what the caller
 * must do.
 */
void *pmcring_ring_reserve(struct pmcring_ring *rb, unsigned int type, u32 len,
			   struct pmcring_wr *wr)
{
	return pmcring_ring_reserve_inline(rb, type, len, wr);
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
	pmcring_ring_commit_inline(wr);
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
	BUILD_BUG_ON(offsetof(struct pmcring_prod, reported) !=
		     offsetof(struct pmcring_prod_page, reported));
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
	BUILD_BUG_ON(sizeof(struct pmcring_rec_period) != PMCRING_SIZE_PERIOD);
	BUILD_BUG_ON(offsetof(struct pmcring_rec_period, pl_period) != 24);
	/* The largest record plus a DROPNOTIFY fit the smallest ring. */
	BUILD_BUG_ON(PMCRING_RECORD_MAX + PMCRING_SIZE_DROPNOTIFY >
		     PMCRING_MIN_DATA_PAGES * PAGE_SIZE);
	BUILD_BUG_ON(PMCRING_TYPE_MAX >= 64);
}
