// SPDX-License-Identifier: GPL-2.0
/*
 * PMCRING_IOC_GENERATE: synthetic GENERATED records for tests and
 * benchmarks, written through the same producer path as every source.
 *
 * Each chosen CPU gets up to two streams of `count` records, each numbered
 * 0..count-1 in pl_seq with pl_ctx naming the stream:
 *
 *	PMCRING_GEN_F_TASK	a work item bound to the CPU (process context,
 *				preemption disabled around each record)
 *	PMCRING_GEN_F_HARDIRQ	an hrtimer pinned to the CPU in hard-IRQ mode,
 *				irq_batch records per tick
 *
 * With both flags the timer interrupts the work item on the same CPU, so the
 * two streams interleave and nest in the ring.  The caller sleeps
 * interruptibly until every stream finished; a signal stops them all.
 */
#include <linux/kernel.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/smp.h>
#include <linux/workqueue.h>
#include <linux/hrtimer.h>
#include <linux/completion.h>
#include <linux/sched.h>
#include "core.h"

/* Period of the hard-IRQ writer. */
#define PMCRING_GEN_TICK_NS		20000
/* Records written per tick by default and at most (bounds IRQ latency). */
#define PMCRING_GEN_IRQ_BATCH		16u
#define PMCRING_GEN_IRQ_BATCH_MAX	1024u
/* The task writer may reschedule every this many records. */
#define PMCRING_GEN_TASK_BATCH		64u
/* Largest CPU bitmap accepted, bytes. */
#define PMCRING_GEN_CPUS_MAX		4096u

/* Fill bytes: byte i of a record is (u8)(seq + i), copied from here. */
static u8 pmcring_gen_pattern[512];
/* Per-CPU workers; CPU intensive so they don't stall other work items. */
static struct workqueue_struct *pmcring_gen_wq;

struct pmcring_gen;

/* The streams of one CPU. */
struct pmcring_gen_cpu {
	struct pmcring_gen	*g;
	unsigned int		cpu;
	u64			task_seq;	/* next pl_seq of the task stream */
	u64			irq_seq;	/* next pl_seq of the IRQ stream */
	struct work_struct	work;
	struct hrtimer		timer;
};

struct pmcring_gen {
	struct pmcring_session	*s;
	u64			count;
	u32			size;
	u32			flags;
	u32			irq_batch;
	bool			stop;		/* signal: streams finish early */
	atomic_t		running;	/* streams not finished */
	struct completion	done;		/* running dropped to 0 */
	unsigned int		nr;
	struct pmcring_gen_cpu	cpus[];
};

/* Write one record on this CPU's ring; preemption is disabled. */
static void pmcring_gen_record(struct pmcring_gen *g, u64 seq, u32 ctx)
{
	struct pmcring_rec_generated *rec;
	struct pmcring_wr wr;
	u32 i, n, size = g->size;
	u8 *p;

	rec = pmcring_ring_reserve(pmcring_session_ring(g->s),
				   PMCRING_TYPE_GENERATED, size, &wr);
	if (!rec)
		return;
	if (size >= 24)
		rec->pl_seq = seq;
	if (size >= 32) {
		rec->pl_cpu = smp_processor_id();
		rec->pl_ctx = ctx;
	}
	p = (u8 *)rec;
	for (i = 32; i < size; i += n) {
		n = min_t(u32, size - i, 256);
		memcpy(p + i, pmcring_gen_pattern + ((seq + i) & 255), n);
	}
	pmcring_ring_commit(&wr);
}

/* A stream finished; complete() is safe in hard IRQ even on PREEMPT_RT. */
static void pmcring_gen_stream_done(struct pmcring_gen *g)
{
	if (atomic_dec_and_test(&g->running))
		complete(&g->done);
}

static void pmcring_gen_task(struct work_struct *work)
{
	struct pmcring_gen_cpu *gc = container_of(work, struct pmcring_gen_cpu,
						  work);
	struct pmcring_gen *g = gc->g;

	while (gc->task_seq < g->count && !READ_ONCE(g->stop)) {
		preempt_disable();
		pmcring_gen_record(g, gc->task_seq++, PMCRING_GEN_CTX_TASK);
		preempt_enable();
		if (!(gc->task_seq % PMCRING_GEN_TASK_BATCH))
			cond_resched();
	}
	pmcring_gen_stream_done(g);
}

static enum hrtimer_restart pmcring_gen_tick(struct hrtimer *timer)
{
	struct pmcring_gen_cpu *gc = container_of(timer, struct pmcring_gen_cpu,
						  timer);
	struct pmcring_gen *g = gc->g;
	u32 i;

	for (i = 0; i < g->irq_batch && gc->irq_seq < g->count; i++)
		pmcring_gen_record(g, gc->irq_seq++, PMCRING_GEN_CTX_HARDIRQ);
	if (gc->irq_seq >= g->count || READ_ONCE(g->stop)) {
		pmcring_gen_stream_done(g);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(timer, ns_to_ktime(PMCRING_GEN_TICK_NS));
	return HRTIMER_RESTART;
}

/* Runs on the target CPU (IPI) so that the pinned timer fires there. */
static void pmcring_gen_start_timer(void *arg)
{
	struct pmcring_gen_cpu *gc = arg;

	hrtimer_start(&gc->timer, ns_to_ktime(PMCRING_GEN_TICK_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/* CPUs named by the request: all online ones, or a user bitmap of u64s. */
static int pmcring_gen_get_cpus(const struct pmcring_generate *req,
				struct cpumask *mask)
{
	u64 __user *ucpus = u64_to_user_ptr(req->cpus);
	unsigned int i, bit, cpu;
	u64 word;

	cpumask_clear(mask);
	if (!req->cpus) {
		if (req->cpus_size)
			return -EINVAL;
		cpumask_copy(mask, cpu_online_mask);
		return 0;
	}
	if (!req->cpus_size || req->cpus_size % 8)
		return -EINVAL;
	if (req->cpus_size > PMCRING_GEN_CPUS_MAX)
		return -E2BIG;
	for (i = 0; i < req->cpus_size / 8; i++) {
		if (get_user(word, ucpus + i))
			return -EFAULT;
		for (bit = 0; bit < 64; bit++) {
			if (!(word & (1ULL << bit)))
				continue;
			cpu = i * 64 + bit;
			if (cpu >= nr_cpu_ids || !cpu_online(cpu))
				return -EINVAL;
			cpumask_set_cpu(cpu, mask);
		}
	}
	return cpumask_empty(mask) ? -EINVAL : 0;
}

static int pmcring_gen_check(const struct pmcring_generate *req)
{
	if (req->__reserved[0] || req->__reserved[1])
		return -EINVAL;
	if (!req->flags || (req->flags & ~PMCRING_GEN_F_ALL))
		return -EINVAL;
	if (req->size < PMCRING_HEADER_SIZE || req->size > PMCRING_RECORD_MAX ||
	    req->size % 8)
		return -EINVAL;
	if (!req->count || req->irq_batch > PMCRING_GEN_IRQ_BATCH_MAX)
		return -EINVAL;
	return 0;
}

static struct pmcring_gen *pmcring_gen_alloc(struct pmcring_session *s,
					     const struct pmcring_generate *req,
					     const struct cpumask *mask)
{
	struct pmcring_gen_cpu *gc;
	struct pmcring_gen *g;
	unsigned int cpu;

	g = kzalloc(struct_size(g, cpus, cpumask_weight(mask)), GFP_KERNEL);
	if (!g)
		return NULL;
	g->s = s;
	g->count = req->count;
	g->size = req->size;
	g->flags = req->flags;
	g->irq_batch = req->irq_batch ? req->irq_batch : PMCRING_GEN_IRQ_BATCH;
	init_completion(&g->done);
	for_each_cpu(cpu, mask) {
		gc = &g->cpus[g->nr++];
		gc->g = g;
		gc->cpu = cpu;
		INIT_WORK(&gc->work, pmcring_gen_task);
		hrtimer_init(&gc->timer, CLOCK_MONOTONIC,
			     HRTIMER_MODE_REL_PINNED_HARD);
		gc->timer.function = pmcring_gen_tick;
	}
	return g;
}

/*
 * Start every stream.  CPU hotplug is held off while starting only: a CPU
 * going offline later moves its streams elsewhere, which is harmless.
 */
static int pmcring_gen_start(struct pmcring_gen *g)
{
	struct pmcring_gen_cpu *gc;
	unsigned int i, streams;
	int err = 0;

	streams = !!(g->flags & PMCRING_GEN_F_TASK) +
		  !!(g->flags & PMCRING_GEN_F_HARDIRQ);
	atomic_set(&g->running, g->nr * streams);

	cpus_read_lock();
	for (i = 0; i < g->nr && !err; i++) {
		gc = &g->cpus[i];
		if (!cpu_online(gc->cpu)) {
			err = -EINVAL;
			break;
		}
		if (g->flags & PMCRING_GEN_F_HARDIRQ)
			err = smp_call_function_single(gc->cpu,
						       pmcring_gen_start_timer,
						       gc, 1);
		if (!err && (g->flags & PMCRING_GEN_F_TASK))
			queue_work_on(gc->cpu, pmcring_gen_wq, &gc->work);
	}
	cpus_read_unlock();
	return err;
}

/* Stop (if still running) and wait for every stream; then g can be freed. */
static void pmcring_gen_stop(struct pmcring_gen *g)
{
	unsigned int i;

	WRITE_ONCE(g->stop, true);
	for (i = 0; i < g->nr; i++) {
		hrtimer_cancel(&g->cpus[i].timer);
		cancel_work_sync(&g->cpus[i].work);
	}
}

long pmcring_gen_ioctl(struct pmcring_session *s,
		       struct pmcring_generate __user *arg)
{
	struct pmcring_generate req;
	struct pmcring_gen *g;
	cpumask_var_t mask;
	long err;

	/* The caller's (ring_errors) and the opener's (perm_opener). */
	if (!capable(CAP_SYS_ADMIN) ||
	    !file_ns_capable(s->file, &init_user_ns, CAP_SYS_ADMIN))
		return -EPERM;
	if (copy_from_user(&req, arg, sizeof(req)))
		return -EFAULT;
	err = pmcring_gen_check(&req);
	if (err)
		return err;
	/* Pairs with smp_store_release() in pmcring_dev_configure(). */
	if (!smp_load_acquire(&s->rings))
		return -EINVAL;
	if (!zalloc_cpumask_var(&mask, GFP_KERNEL))
		return -ENOMEM;
	err = pmcring_gen_get_cpus(&req, mask);
	if (err)
		goto out_mask;

	err = -ENOMEM;
	g = pmcring_gen_alloc(s, &req, mask);
	if (!g)
		goto out_mask;
	err = pmcring_gen_start(g);
	if (!err && wait_for_completion_interruptible(&g->done))
		err = -EINTR;
	pmcring_gen_stop(g);
	kfree(g);
out_mask:
	free_cpumask_var(mask);
	return err;
}

int pmcring_gen_init(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pmcring_gen_pattern); i++)
		pmcring_gen_pattern[i] = (u8)i;
	pmcring_gen_wq = alloc_workqueue("pmcring_gen", WQ_CPU_INTENSIVE, 0);
	return pmcring_gen_wq ? 0 : -ENOMEM;
}

void pmcring_gen_exit(void)
{
	destroy_workqueue(pmcring_gen_wq);
}
