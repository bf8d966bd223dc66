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
 * full buffer.  Benchmark only: not part of pmcring.ko, not an ABI.
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
#include <linux/pmcring.h>
#include "pmcring_ftrace_bench.h"

/* As in kmod/gen.c: reschedule every this many records. */
#define PFB_TASK_BATCH		64u
/* Largest buffer accepted, bytes per CPU. */
#define PFB_MAX_BYTES		(256ULL << 20)

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

static int pfb_cpus(const struct pfb_run *req, struct cpumask *mask)
{
	unsigned int cpu;

	cpumask_clear(mask);
	if (!req->cpus) {
		cpumask_copy(mask, cpu_online_mask);
		return 0;
	}
	for (cpu = 0; cpu < 64; cpu++) {
		if (!(req->cpus & (1ULL << cpu)))
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
	err = pfb_cpus(req, mask);
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
