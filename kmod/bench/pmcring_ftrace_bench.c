// SPDX-License-Identifier: GPL-2.0
/*
 * pmcring_ftrace_bench: the reference of benchmark B1 (make bench).
 *
 * The same loop as PMCRING_IOC_GENERATE with PMCRING_GEN_F_TASK (kmod/gen.c):
 * a work item bound to each chosen CPU writes `count` GENERATED records of
 * `size` bytes, preemption disabled around each record, cond_resched() every
 * 64 records, filling the same bytes (header, pl_seq, pl_cpu, pl_ctx, the
 * pattern copied in 256-byte pieces) - but into a buffer of the kernel's own
 * tracing ring buffer (__ring_buffer_alloc(), ring_buffer_lock_reserve(),
 * ring_buffer_event_data(), ring_buffer_unlock_commit()), the one ftrace
 * and trace events write into.  The ring buffer stamps each event itself, so
 * the record's pl_tsc is left 0.
 *
 * The buffer is not in overwrite mode and user space sizes it to hold every
 * record of a run, as it does pmcring's rings, so neither side measures a
 * full buffer.
 *
 * PFB_IOC_TP: the tracepoint pmcring_bench:pfb_event (pfb_trace.h), the one
 * event source of the peer benchmarks (selftests/bench/tpbench.c).  A loop
 * fires it on each chosen CPU - from a work item, or in batches of
 * PFB_TP_IRQ_BATCH from irq_work (hard IRQ), or at an offered rate from a
 * pinned hard-IRQ hrtimer - with, for the run, one probe of this module
 * attached: none (perf, BPF or ftrace attached from user space), an empty
 * one (the floor of the tracepoint itself), a minimal ring (the floor of a
 * ring: one writer per CPU, no nesting, no ordering support, no wrap) or
 * pmcring's pmcring_emit_generated_probe() (looked up with symbol_get(), so
 * this module loads without pmcring.ko, and registered as the probe itself:
 * no indirect call that the other probes do not pay).  Benchmark only: not part of
 * pmcring.ko, not an ABI.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/workqueue.h>
#include <linux/completion.h>
#include <linux/ring_buffer.h>
#include <linux/ktime.h>
#include <linux/trace_clock.h>
#include <linux/mutex.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/vmalloc.h>
#include <linux/math64.h>
#include <linux/percpu.h>
#include <linux/tracepoint.h>
#include <linux/pmcring.h>
#include "pmcring_ftrace_bench.h"
#include "../pmcring_emit.h"

#define CREATE_TRACE_POINTS
#include "pfb_trace.h"

/* As in kmod/gen.c: reschedule every this many records. */
#define PFB_TASK_BATCH		64u
/* Largest buffer accepted, bytes per CPU. */
#define PFB_MAX_BYTES		(256ULL << 20)
/* PFB_IOC_TP: events per irq_work, period and largest batch of the timer */
#define PFB_TP_IRQ_BATCH	64u
#define PFB_TP_TICK_NS		500000u
#define PFB_TP_TICK_MAX		8192u

static u8 pfb_pattern[512];
static struct workqueue_struct *pfb_wq;
/* One run at a time; protects pfb_buffer. */
static DEFINE_MUTEX(pfb_lock);
static struct trace_buffer *pfb_buffer;
static struct lock_class_key pfb_key;

struct pfb_cpu {
	struct work_struct	work;
	struct pfb_run		*req;
	atomic_t		*running;
	struct completion	*done;
	u64			written;
	u64			failed;
	u64			ns;
};

static void pfb_commit(struct ring_buffer_event *ev)
{
#ifdef PFB_COMMIT_NO_EVENT
	ring_buffer_unlock_commit(pfb_buffer);
#else
	ring_buffer_unlock_commit(pfb_buffer, ev);
#endif
}

/* pmcring_gen_record() with the ring buffer; preemption is disabled. */
static bool pfb_record(u32 size, u64 seq)
{
	struct pmcring_rec_generated *rec;
	struct ring_buffer_event *ev;
	u32 i, n;
	u8 *p;

	ev = ring_buffer_lock_reserve(pfb_buffer, size);
	if (!ev)
		return false;
	rec = ring_buffer_event_data(ev);
	rec->h.pl_header = PMCRING_HEADER(PMCRING_TYPE_GENERATED, size);
	rec->h.pl_spare = 0;
	rec->h.pl_tsc = 0;
	if (size >= 24)
		rec->pl_seq = seq;
	if (size >= 32) {
		rec->pl_cpu = smp_processor_id();
		rec->pl_ctx = PMCRING_GEN_CTX_TASK;
	}
	p = (u8 *)rec;
	for (i = 32; i < size; i += n) {
		n = min_t(u32, size - i, 256);
		memcpy(p + i, pfb_pattern + ((seq + i) & 255), n);
	}
	pfb_commit(ev);
	return true;
}

static void pfb_work(struct work_struct *work)
{
	struct pfb_cpu *pc = container_of(work, struct pfb_cpu, work);
	u64 seq, count = pc->req->count, t0;
	u32 size = pc->req->size;

	t0 = ktime_get_ns();
	for (seq = 0; seq < count; seq++) {
		preempt_disable();
		if (pfb_record(size, seq))
			pc->written++;
		else
			pc->failed++;
		preempt_enable();
		if (!((seq + 1) % PFB_TASK_BATCH))
			cond_resched();
	}
	pc->ns = ktime_get_ns() - t0;
	if (atomic_dec_and_test(pc->running))
		complete(pc->done);
}

static int pfb_check(const struct pfb_run *req)
{
	if (req->flags || req->__reserved[0] || req->__reserved[1])
		return -EINVAL;
	if (req->size < PMCRING_HEADER_SIZE || req->size > PMCRING_RECORD_MAX ||
	    req->size % 8 || !req->count)
		return -EINVAL;
	return 0;
}

static int pfb_cpus(u64 cpus, struct cpumask *mask)
{
	unsigned int cpu;

	cpumask_clear(mask);
	if (!cpus) {
		cpumask_copy(mask, cpu_online_mask);
		return 0;
	}
	for (cpu = 0; cpu < 64; cpu++) {
		if (!(cpus & (1ULL << cpu)))
			continue;
		if (cpu >= nr_cpu_ids || !cpu_online(cpu))
			return -EINVAL;
		cpumask_set_cpu(cpu, mask);
	}
	return 0;
}

/* Run the loop on every CPU of the request; pfb_lock held. */
static long pfb_run(struct pfb_run *req)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct pfb_cpu *pcs;
	cpumask_var_t mask;
	unsigned int cpu, i, nr;
	atomic_t running;
	long err;

	if (!pfb_buffer)
		return -ENODEV;
	err = pfb_check(req);
	if (err)
		return err;
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	err = pfb_cpus(req->cpus, mask);
	if (err)
		goto out_mask;
	nr = cpumask_weight(mask);
	err = -ENOMEM;
	pcs = kcalloc(nr, sizeof(*pcs), GFP_KERNEL);
	if (!pcs)
		goto out_mask;

	atomic_set(&running, nr);
	i = 0;
	cpus_read_lock();
	for_each_cpu(cpu, mask) {
		pcs[i].req = req;
		pcs[i].running = &running;
		pcs[i].done = &done;
		INIT_WORK_ONSTACK(&pcs[i].work, pfb_work);
		queue_work_on(cpu, pfb_wq, &pcs[i].work);
		i++;
	}
	cpus_read_unlock();
	/* Not interruptible: the work items point at this stack frame. */
	wait_for_completion(&done);

	req->written = 0;
	req->failed = 0;
	req->loop_ns = 0;
	for (i = 0; i < nr; i++) {
		flush_work(&pcs[i].work);
		destroy_work_on_stack(&pcs[i].work);
		req->written += pcs[i].written;
		req->failed += pcs[i].failed;
		req->loop_ns = max(req->loop_ns, pcs[i].ns);
	}
	req->entries = ring_buffer_entries(pfb_buffer);
	kfree(pcs);
	err = 0;
out_mask:
	free_cpumask_var(mask);
	return err;
}

/*
 * The clock alone, in the loop shape of pfb_work(): what each side's
 * timestamp costs, so B1 can tell the clock from the ring.  Process context
 * of the caller; the benchmark pins itself to one CPU.
 */
static long pfb_clock(struct pfb_clock *req)
{
	u64 i, t0, sink = 0;

	if (req->flags || req->__reserved[0] || req->__reserved[1] ||
	    req->clock > PFB_CLOCK_NONE || !req->count ||
	    req->count > (1ULL << 32))
		return -EINVAL;
	t0 = ktime_get_ns();
	for (i = 0; i < req->count; i++) {
		preempt_disable();
		if (req->clock == PFB_CLOCK_MONO)
			sink += ktime_get_mono_fast_ns();
		else if (req->clock == PFB_CLOCK_LOCAL)
			sink += trace_clock_local();
		else
			sink += i;
		preempt_enable();
		if (!((i + 1) % PFB_TASK_BATCH))
			cond_resched();
	}
	req->loop_ns = ktime_get_ns() - t0;
	req->sink = sink;
	return 0;
}

/* ---- PFB_IOC_TP: the tracepoint and its probes ---- */

/*
 * The minimal ring of PFB_PROBE_MINRING, one per CPU: the same record bytes
 * and clock as pmcring (a GENERATED record, ktime_get_mono_fast_ns()), but
 * one writer at a time (the run never fires two contexts on one CPU), no
 * wrap (sized for the run), no drop accounting, no ordering bound.
 */
struct pfb_mr {
	u8	*buf;
	u64	size;
	u64	head;
	u64	failed;
};

static DEFINE_PER_CPU(struct pfb_mr, pfb_mr);

/* pmcring's probe while a PFB_PROBE_PMCRING run holds it */
static void (*pfb_emit)(void *data, u64 seq, u32 cpu, u32 ctx, const u8 *fill,
			u32 len);

static void pfb_probe_empty(void *data, u64 seq, u32 cpu, u32 ctx,
			    const u8 *fill, u32 len)
{
}

static void pfb_probe_minring(void *data, u64 seq, u32 cpu, u32 ctx,
			      const u8 *fill, u32 len)
{
	struct pfb_mr *mr = this_cpu_ptr(&pfb_mr);
	struct pmcring_rec_generated *rec;
	u32 size = sizeof(*rec) + len;
	u64 head = mr->head;

	/*
	 * The same test as pmcring_emit_gen(): it tells the compiler that
	 * len is bounded and a multiple of 8, so both copy the fill with the
	 * same inline "rep movsq".  Without it this probe called memcpy(),
	 * whose "rep movsb" TCG runs a byte at a time: the floor cost 1.8x
	 * pmcring at 256 bytes, a floor that was no floor.
	 */
	if (len > PMCRING_RECORD_MAX - sizeof(*rec) || size % 8)
		return;
	if (head + size > mr->size) {
		mr->failed++;
		return;
	}
	rec = (void *)(mr->buf + head);
	rec->h.pl_header = PMCRING_HEADER(PMCRING_TYPE_GENERATED, size);
	rec->h.pl_spare = 0;
	rec->h.pl_tsc = ktime_get_mono_fast_ns();
	rec->pl_seq = seq;
	rec->pl_cpu = cpu;
	rec->pl_ctx = ctx;
	memcpy(rec->pl_fill, fill, len);
	/*
	 * Publish the record: a consumer would pair this with an acquire load
	 * of head before reading it (this benchmark reads head only after the
	 * run, from the ioctl).
	 */
	smp_store_release(&mr->head, head + size);
}

struct pfb_tpc {
	struct work_struct	work;
	struct irq_work		iw;
	struct hrtimer		timer;
	const struct pfb_tp	*req;
	atomic_t		*running;
	struct completion	*done;
	u64			seq;	/* next event */
	u64			t0;
	u64			ns;
};

static const u8 *pfb_fill(u64 seq)
{
	/* byte i >= 32 of a GENERATED record is (u8)(seq + i) */
	return pfb_pattern + ((seq + 32) & 255);
}

static void pfb_tp_finish(struct pfb_tpc *pc)
{
	pc->ns = ktime_get_ns() - pc->t0;
	if (atomic_dec_and_test(pc->running))
		complete(pc->done);
}

/* Up to @n events in hard-IRQ context; false when the stream is done. */
static bool pfb_tp_irq_burst(struct pfb_tpc *pc, u64 n)
{
	u32 len = pc->req->size - sizeof(struct pmcring_rec_generated);
	u32 cpu = smp_processor_id();
	u64 end = min(pc->seq + n, pc->req->count);

	for (; pc->seq < end; pc->seq++)
		trace_pfb_event(pc->seq, cpu, PMCRING_GEN_CTX_HARDIRQ,
				pfb_fill(pc->seq), len);
	return pc->seq < pc->req->count;
}

static void pfb_tp_irq_work(struct irq_work *iw)
{
	pfb_tp_irq_burst(container_of(iw, struct pfb_tpc, iw),
			 PFB_TP_IRQ_BATCH);
}

/* The offered-rate stream: the events due by now, every tick. */
static enum hrtimer_restart pfb_tp_tick(struct hrtimer *t)
{
	struct pfb_tpc *pc = container_of(t, struct pfb_tpc, timer);
	u64 due = mul_u64_u32_div(ktime_get_ns() - pc->t0, pc->req->rate,
				  NSEC_PER_SEC) + 1;

	if (due > pc->seq + PFB_TP_TICK_MAX)
		due = pc->seq + PFB_TP_TICK_MAX;
	if (due > pc->seq && !pfb_tp_irq_burst(pc, due - pc->seq)) {
		pfb_tp_finish(pc);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(t, ns_to_ktime(PFB_TP_TICK_NS));
	return HRTIMER_RESTART;
}

static void pfb_tp_work(struct work_struct *work)
{
	struct pfb_tpc *pc = container_of(work, struct pfb_tpc, work);
	u32 len = pc->req->size - sizeof(struct pmcring_rec_generated);
	u64 count = pc->req->count;

	pc->t0 = ktime_get_ns();
	if (pc->req->rate) {
		/* finishes from the last tick */
		hrtimer_start(&pc->timer, 0, HRTIMER_MODE_REL_PINNED_HARD);
		return;
	}
	if (pc->req->flags & PFB_TP_F_IRQ) {
		/* the work item is bound to this CPU: so is the irq_work */
		while (READ_ONCE(pc->seq) < count) {
			irq_work_queue(&pc->iw);
			irq_work_sync(&pc->iw);
			cond_resched();
		}
	} else {
		for (; pc->seq < count; pc->seq++) {
			preempt_disable();
			trace_pfb_event(pc->seq, smp_processor_id(),
					PMCRING_GEN_CTX_TASK, pfb_fill(pc->seq),
					len);
			preempt_enable();
			if (!((pc->seq + 1) % PFB_TASK_BATCH))
				cond_resched();
		}
	}
	pfb_tp_finish(pc);
}

static int pfb_tp_check(const struct pfb_tp *req)
{
	if (req->flags & ~PFB_TP_F_IRQ || req->__reserved[0] ||
	    req->__reserved[1] || req->probe > PFB_PROBE_MAX)
		return -EINVAL;
	if (req->size < PFB_TP_SIZE_MIN || req->size > PFB_TP_SIZE_MAX ||
	    req->size % 8 || !req->count)
		return -EINVAL;
	if (req->probe == PFB_PROBE_MINRING &&
	    (!req->ring_bytes || req->ring_bytes > PFB_MAX_BYTES))
		return -EINVAL;
	return 0;
}

static void pfb_mr_free(const struct cpumask *mask)
{
	unsigned int cpu;

	for_each_cpu(cpu, mask) {
		struct pfb_mr *mr = per_cpu_ptr(&pfb_mr, cpu);

		vfree(mr->buf);
		memset(mr, 0, sizeof(*mr));
	}
}

static int pfb_mr_alloc(const struct cpumask *mask, u64 bytes)
{
	unsigned int cpu;

	/* zeroed: its pages touched, as pmcring's ring pages are */
	for_each_cpu(cpu, mask) {
		struct pfb_mr *mr = per_cpu_ptr(&pfb_mr, cpu);

		mr->buf = vzalloc_node(bytes, cpu_to_node(cpu));
		if (!mr->buf) {
			pfb_mr_free(mask);
			return -ENOMEM;
		}
		mr->size = bytes;
	}
	return 0;
}

static int pfb_tp_attach(struct pfb_tp *req, const struct cpumask *mask)
{
	int err;

	switch (req->probe) {
	case PFB_PROBE_EMPTY:
		return register_trace_pfb_event(pfb_probe_empty, NULL);
	case PFB_PROBE_MINRING:
		err = pfb_mr_alloc(mask, req->ring_bytes);
		if (err)
			return err;
		err = register_trace_pfb_event(pfb_probe_minring, NULL);
		if (err)
			pfb_mr_free(mask);
		return err;
	case PFB_PROBE_PMCRING:
		pfb_emit = symbol_get(pmcring_emit_generated_probe);
		if (!pfb_emit)
			return -ENOENT;
		err = register_trace_pfb_event(pfb_emit, NULL);
		if (err) {
			symbol_put(pmcring_emit_generated_probe);
			pfb_emit = NULL;
		}
		return err;
	}
	return 0;
}

static void pfb_tp_detach(struct pfb_tp *req, const struct cpumask *mask)
{
	unsigned int cpu;

	switch (req->probe) {
	case PFB_PROBE_EMPTY:
		unregister_trace_pfb_event(pfb_probe_empty, NULL);
		break;
	case PFB_PROBE_MINRING:
		unregister_trace_pfb_event(pfb_probe_minring, NULL);
		break;
	case PFB_PROBE_PMCRING:
		unregister_trace_pfb_event(pfb_emit, NULL);
		break;
	default:
		return;
	}
	/* no probe runs any more: its ring and symbol can go */
	tracepoint_synchronize_unregister();
	if (req->probe == PFB_PROBE_MINRING) {
		for_each_cpu(cpu, mask)
			req->failed += per_cpu_ptr(&pfb_mr, cpu)->failed;
		pfb_mr_free(mask);
	} else if (req->probe == PFB_PROBE_PMCRING) {
		symbol_put(pmcring_emit_generated_probe);
		pfb_emit = NULL;
	}
}

static void pfb_tp_timer_init(struct pfb_tpc *pc)
{
#ifdef PFB_HAVE_HRTIMER_SETUP
	hrtimer_setup(&pc->timer, pfb_tp_tick, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
#else
	hrtimer_init(&pc->timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	pc->timer.function = pfb_tp_tick;
#endif
}

/* Fire the tracepoint on every CPU of the request; pfb_lock held. */
static long pfb_tp(struct pfb_tp *req)
{
	DECLARE_COMPLETION_ONSTACK(done);
	struct pfb_tpc *pcs;
	cpumask_var_t mask;
	unsigned int cpu, i, nr;
	atomic_t running;
	long err;

	err = pfb_tp_check(req);
	if (err)
		return err;
	req->fired = 0;
	req->written = 0;
	req->failed = 0;
	req->loop_ns = 0;
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	err = pfb_cpus(req->cpus, mask);
	if (err)
		goto out_mask;
	nr = cpumask_weight(mask);
	err = -ENOMEM;
	pcs = kcalloc(nr, sizeof(*pcs), GFP_KERNEL);
	if (!pcs)
		goto out_mask;
	/* outside cpus_read_lock(): registering a probe enables a static key */
	err = pfb_tp_attach(req, mask);
	if (err)
		goto out_free;

	atomic_set(&running, nr);
	i = 0;
	cpus_read_lock();
	for_each_cpu(cpu, mask) {
		struct pfb_tpc *pc = &pcs[i++];

		pc->req = req;
		pc->running = &running;
		pc->done = &done;
		pc->iw = IRQ_WORK_INIT_HARD(pfb_tp_irq_work);
		pfb_tp_timer_init(pc);
		INIT_WORK_ONSTACK(&pc->work, pfb_tp_work);
		queue_work_on(cpu, pfb_wq, &pc->work);
	}
	cpus_read_unlock();
	/* Not interruptible: the work items point at this stack frame. */
	wait_for_completion(&done);
	for (i = 0; i < nr; i++) {
		flush_work(&pcs[i].work);
		destroy_work_on_stack(&pcs[i].work);
		/* returned HRTIMER_NORESTART: waits for a callback still on */
		hrtimer_cancel(&pcs[i].timer);
		irq_work_sync(&pcs[i].iw);
		req->fired += pcs[i].seq;
		req->loop_ns = max(req->loop_ns, pcs[i].ns);
	}
	if (req->probe == PFB_PROBE_MINRING) {
		for_each_cpu(cpu, mask) {
			struct pfb_mr *mr = per_cpu_ptr(&pfb_mr, cpu);
			u64 off = 0;

			/* count the records the minimal rings hold */
			while (off < mr->head) {
				struct pmcring_rec_header *h =
					(void *)(mr->buf + off);

				off += PMCRING_HEADER_LEN(h->pl_header);
				req->written++;
			}
		}
	}
	pfb_tp_detach(req, mask);
	err = 0;
out_free:
	kfree(pcs);
out_mask:
	free_cpumask_var(mask);
	return err;
}

static long pfb_setup(struct pfb_setup __user *arg)
{
	struct pfb_setup req;

	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	if (req.__reserved[0] || req.__reserved[1] || req.__reserved[2])
		return -EINVAL;
	if (!req.bytes || req.bytes > PFB_MAX_BYTES)
		return -EINVAL;
	if (pfb_buffer)
		ring_buffer_free(pfb_buffer);
	/* flags 0: no overwrite, a full buffer fails the reservation */
	pfb_buffer = __ring_buffer_alloc(req.bytes, 0, &pfb_key);
	return pfb_buffer ? 0 : -ENOMEM;
}

static long pfb_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	void __user *uarg = (void __user *)arg;
	struct pfb_clock clk;
	struct pfb_run req;
	struct pfb_tp tp;
	long err;

	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;
	mutex_lock(&pfb_lock);
	switch (cmd) {
	case PFB_IOC_SETUP:
		err = pfb_setup(uarg);
		break;
	case PFB_IOC_RESET:
		err = -ENODEV;
		if (pfb_buffer) {
			ring_buffer_reset(pfb_buffer);
			err = 0;
		}
		break;
	case PFB_IOC_RUN:
		err = -EFAULT;
		if (copy_from_user(&req, uarg, sizeof(req)))
			break;
		err = pfb_run(&req);
		if (!err && copy_to_user(uarg, &req, sizeof(req)))
			err = -EFAULT;
		break;
	case PFB_IOC_TP:
		err = -EFAULT;
		if (copy_from_user(&tp, uarg, sizeof(tp)))
			break;
		err = pfb_tp(&tp);
		if (!err && copy_to_user(uarg, &tp, sizeof(tp)))
			err = -EFAULT;
		break;
	case PFB_IOC_CLOCK:
		err = -EFAULT;
		if (copy_from_user(&clk, uarg, sizeof(clk)))
			break;
		err = pfb_clock(&clk);
		if (!err && copy_to_user(uarg, &clk, sizeof(clk)))
			err = -EFAULT;
		break;
	default:
		err = -ENOTTY;
	}
	mutex_unlock(&pfb_lock);
	return err;
}

static const struct file_operations pfb_fops = {
	.owner		= THIS_MODULE,
	.unlocked_ioctl	= pfb_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice pfb_dev = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "pmcring_ftrace_bench",
	.fops	= &pfb_fops,
	.mode	= 0600,
};

static int __init pfb_init(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(pfb_pattern); i++)
		pfb_pattern[i] = (u8)i;
	pfb_wq = alloc_workqueue("pmcring_fbench", WQ_CPU_INTENSIVE, 0);
	if (!pfb_wq)
		return -ENOMEM;
	err = misc_register(&pfb_dev);
	if (err)
		destroy_workqueue(pfb_wq);
	return err;
}

static void __exit pfb_exit(void)
{
	misc_deregister(&pfb_dev);
	destroy_workqueue(pfb_wq);
	if (pfb_buffer)
		ring_buffer_free(pfb_buffer);
}

module_init(pfb_init);
module_exit(pfb_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("pmcring benchmark: GENERATE loop over the tracing ring buffer");
