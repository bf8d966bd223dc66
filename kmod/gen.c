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
 *	PMCRING_GEN_F_NMI	an NMI handler, PMCRING_GEN_NMI_BATCH records
 *				per NMI
 *
 * With both flags the timer interrupts the work item on the same CPU, so the
 * two streams interleave and nest in the ring.  NMIs are raised on the CPU
 * itself (apic->send_IPI() to its own APIC) by the task and timer writers
 * *between* reserving and committing a record - every PMCRING_GEN_NMI_EVERY
 * task records, the first record of every tick, and every record that wraps
 * the end of the ring - and by the timer outside any writer once its own
 * stream is done.  So NMI records nest in one writer (task or timer) or two
 * (the timer inside the task), and land inside a wrapping record: the paths
 * of pmcring_ring_reserve()/pmcring_ring_exit() that only nesting reaches.
 * The result says how often, measured on the ring (pmcring_ring_nest()).
 *
 * The caller sleeps interruptibly until every stream finished; a signal stops
 * them all.
 *
 * The NMI stream needs a way to raise an NMI on this CPU and a handler chain
 * to claim it: x86 only (its local APIC and register_nmi_handler()).  An
 * arm64 kernel has neither (its PMU interrupt is an NMI only with pseudo-NMI
 * or FEAT_NMI, and a module cannot raise one), so there PMCRING_GEN_F_NMI
 * is refused with EOPNOTSUPP; Documentation/arm64.rst says why the x86 NMI
 * tests cover the producer code an arm64 NMI would run.
 *
 * Two test hooks reach paths nothing else can: PMCRING_GEN_F_BAD_LEN
 * reserves every record with a length that is not a multiple of 4 (the
 * producer's WARN_ON_ONCE() and drop), PMCRING_GEN_F_SRC_NMI calls the mmap
 * kprobe's handler from the NMI writer (its NMI bail-out).
 */
#include <linux/kernel.h>
#include <linux/module.h>
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
#include <linux/mutex.h>
#include <linux/percpu.h>
#include <linux/delay.h>
#include <linux/jump_label.h>
#include <asm/local.h>
#ifdef CONFIG_X86
#include <asm/apic.h>
#include <asm/nmi.h>
#define PMCRING_GEN_HAVE_NMI	1
#else
#define PMCRING_GEN_HAVE_NMI	0
#endif
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
/* Records written per NMI. */
#define PMCRING_GEN_NMI_BATCH		4u
/* The task writer raises an NMI inside every this many of its records. */
#define PMCRING_GEN_NMI_EVERY		16u
/*
 * A writer that raised an NMI waits at most this many cpu_relax() for it
 * inside its record: the NMI is meant to nest there, and a self-IPI takes
 * a little while to arrive.
 */
#define PMCRING_GEN_NMI_WAIT		20000u

/*
 * The test hooks (PMCRING_GEN_F_BAD_LEN, PMCRING_GEN_F_SRC_NMI) also need
 * this switched on: BAD_LEN raises a kernel WARNING on purpose, which no
 * caller should get by accident (a fuzzer, a kernel with panic_on_warn).
 */
static bool test_hooks;
module_param(test_hooks, bool, 0600);
MODULE_PARM_DESC(test_hooks,
		 "Allow GENERATE's test hooks (bad record length, kprobe in NMI); for the selftests");

/*
 * test_clock_step=CPU:NS (with test_hooks): from now on the record clock of
 * CPU reads NS less (pmcring_clock() in ring_prod.h), a backwards step the
 * other CPUs do not take; "off" ends it.  ring_clockstep uses it to show
 * that the rings stay in order and that the merge lifts and counts what
 * comes below what it handed out.
 */
DEFINE_STATIC_KEY_FALSE(pmcring_clock_step_key);
unsigned int pmcring_clock_step_cpu;
u64 pmcring_clock_step_ns;

static int pmcring_gen_clock_step_set(const char *val,
				      const struct kernel_param *kp)
{
	unsigned int cpu;
	u64 ns;

	if (sysfs_streq(val, "off")) {
		static_branch_disable(&pmcring_clock_step_key);
		return 0;
	}
	if (!READ_ONCE(test_hooks))
		return -EPERM;
	if (sscanf(val, "%u:%llu", &cpu, &ns) != 2 || cpu >= nr_cpu_ids)
		return -EINVAL;
	WRITE_ONCE(pmcring_clock_step_cpu, cpu);
	WRITE_ONCE(pmcring_clock_step_ns, ns);
	static_branch_enable(&pmcring_clock_step_key);
	return 0;
}

static int pmcring_gen_clock_step_get(char *buf,
				      const struct kernel_param *kp)
{
	if (!static_key_enabled(&pmcring_clock_step_key))
		return sysfs_emit(buf, "off\n");
	return sysfs_emit(buf, "%u:%llu\n", READ_ONCE(pmcring_clock_step_cpu),
			  READ_ONCE(pmcring_clock_step_ns));
}

static const struct kernel_param_ops pmcring_gen_clock_step_ops = {
	.set	= pmcring_gen_clock_step_set,
	.get	= pmcring_gen_clock_step_get,
};
module_param_cb(test_clock_step, &pmcring_gen_clock_step_ops, NULL, 0600);
MODULE_PARM_DESC(test_clock_step,
		 "CPU:NS: CPU's record clock steps NS back (needs test_hooks); off: no step. For the selftests");

/* Fill bytes: byte i of a record is (u8)(seq + i), copied from here. */
static u8 pmcring_gen_pattern[512];
/* Per-CPU workers; CPU intensive so they don't stall other work items. */
static struct workqueue_struct *pmcring_gen_wq;

struct pmcring_gen;

/*
 * The streams of one CPU.  Each counter indexed by ctx is written only by
 * the writer of that context; the others are local_t (any context of the
 * CPU) or written by the NMI writer alone.
 */
struct pmcring_gen_cpu {
	struct pmcring_gen	*g;
	unsigned int		cpu;
	u64			task_seq;	/* next pl_seq of the task stream */
	u64			irq_seq;	/* next pl_seq of the IRQ stream */
	u64			nmi_seq;	/* next pl_seq of the NMI stream */
	u64			written[PMCRING_GEN_CTX_MAX + 1];
	u64			dropped[PMCRING_GEN_CTX_MAX + 1];
	u64			nmi_depth[4];	/* NMI records by nesting */
	u64			nmi_in_wrap;
	u64			src_nmi;	/* NMI writer only */
	local_t			nmi_sent;
	local_t			wrapping;	/* wrapping records in flight */
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

/*
 * The NMI stream.  One GENERATE with PMCRING_GEN_F_NMI runs at a time
 * (pmcring_gen_nmi_lock); pmcring_gen_nmi_gc points each of its CPUs at
 * their streams while it runs.  pmcring_gen_nmi_pending is 1 from raising an
 * NMI until the handler takes it: one NMI of ours in flight per CPU at most,
 * so two never merge into one and none arrives unclaimed ("unknown NMI").
 */
static DEFINE_MUTEX(pmcring_gen_nmi_lock);
static DEFINE_PER_CPU(struct pmcring_gen_cpu *, pmcring_gen_nmi_gc);
static DEFINE_PER_CPU(int, pmcring_gen_nmi_pending);

static bool pmcring_gen_nmi_done(const struct pmcring_gen_cpu *gc)
{
	const struct pmcring_gen *g = gc->g;

	return !(g->flags & PMCRING_GEN_F_NMI) ||
		READ_ONCE(gc->nmi_seq) >= g->count || READ_ONCE(g->stop);
}

/*
 * Raise an NMI on this CPU unless one is in flight, and give it a moment to
 * arrive.  Task or hard-IRQ context, preemption disabled.
 */
static void pmcring_gen_raise_nmi(struct pmcring_gen_cpu *gc)
{
	unsigned int i;

	if (pmcring_gen_nmi_done(gc) ||
	    this_cpu_cmpxchg(pmcring_gen_nmi_pending, 0, 1))
		return;
	local_inc(&gc->nmi_sent);
#if PMCRING_GEN_HAVE_NMI
	apic->send_IPI(smp_processor_id(), NMI_VECTOR);
#endif
	for (i = 0; i < PMCRING_GEN_NMI_WAIT &&
	     this_cpu_read(pmcring_gen_nmi_pending); i++)
		cpu_relax();
}

/* How an NMI record sits in the ring: nested how deep, inside a wrap? */
static void pmcring_gen_nmi_account(struct pmcring_gen_cpu *gc,
				    const struct pmcring_wr *wr)
{
	unsigned int depth = pmcring_ring_nest(wr) - 1;

	gc->nmi_depth[min_t(unsigned int, depth, 3)]++;
	if (local_read(&gc->wrapping))
		gc->nmi_in_wrap++;
}

/*
 * Write one record of stream @ctx on this CPU's ring; preemption is
 * disabled.  With @raise (or when the record wraps and NMIs are wanted), an
 * NMI is raised between reserve and commit.
 */
static void pmcring_gen_record(struct pmcring_gen_cpu *gc, u64 seq, u32 ctx,
			       bool raise)
{
	struct pmcring_gen *g = gc->g;
	struct pmcring_rec_generated *rec;
	struct pmcring_wr wr;
	u32 i, n, size = g->size;
	bool wraps = false;
	u8 *p;

	/* The test hook: a length the producer must refuse (not 4-aligned). */
	rec = pmcring_ring_reserve(pmcring_session_ring(g->s),
				   PMCRING_TYPE_GENERATED,
				   g->flags & PMCRING_GEN_F_BAD_LEN ? size - 2 :
								      size,
				   &wr);
	if (!rec) {
		gc->dropped[ctx]++;
		return;
	}
	if (ctx == PMCRING_GEN_CTX_NMI) {
		pmcring_gen_nmi_account(gc, &wr);
	} else if ((g->flags & PMCRING_GEN_F_NMI) && pmcring_ring_wraps(&wr)) {
		wraps = true;
		local_inc(&gc->wrapping);
	}
	if (raise || wraps)
		pmcring_gen_raise_nmi(gc);
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
	if (wraps)
		local_dec(&gc->wrapping);
	gc->written[ctx]++;
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

	bool raise;

	while (gc->task_seq < g->count && !READ_ONCE(g->stop)) {
		raise = !(gc->task_seq % PMCRING_GEN_NMI_EVERY);
		preempt_disable();
		pmcring_gen_record(gc, gc->task_seq++, PMCRING_GEN_CTX_TASK,
				   raise);
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
	u64 irq_count = g->flags & PMCRING_GEN_F_HARDIRQ ? g->count : 0;
	u32 i;

	/*
	 * gc's CPU went offline and took the timer here (hrtimers are
	 * migrated at CPU death).  The NMI stream cannot go on: the NMI we
	 * raise lands on this CPU, whose handler serves this CPU's stream
	 * (pmcring_gen_nmi_gc), so gc's nmi_seq would never reach count
	 * and the caller would wait until a signal.  End gc's timer stream
	 * here; written[] says how far it got.  Without an NMI stream the
	 * hard-IRQ records go on from here, as before.
	 */
	if (unlikely(smp_processor_id() != gc->cpu) &&
	    (g->flags & PMCRING_GEN_F_NMI)) {
		pmcring_gen_stream_done(g);
		return HRTIMER_NORESTART;
	}
	for (i = 0; i < g->irq_batch && gc->irq_seq < irq_count; i++)
		pmcring_gen_record(gc, gc->irq_seq++, PMCRING_GEN_CTX_HARDIRQ,
				   !i);
	/* Our stream is done: drive the NMI stream from outside a writer. */
	if (!i)
		pmcring_gen_raise_nmi(gc);
	if ((gc->irq_seq >= irq_count && pmcring_gen_nmi_done(gc)) ||
	    READ_ONCE(g->stop)) {
		pmcring_gen_stream_done(g);
		return HRTIMER_NORESTART;
	}
	hrtimer_forward_now(timer, ns_to_ktime(PMCRING_GEN_TICK_NS));
	return HRTIMER_RESTART;
}

#if PMCRING_GEN_HAVE_NMI
/* One NMI's records; NMI context, so nothing here may take a lock. */
static void pmcring_gen_nmi_batch(struct pmcring_gen_cpu *gc)
{
	u32 i;

	for (i = 0; i < PMCRING_GEN_NMI_BATCH && !pmcring_gen_nmi_done(gc); i++)
		pmcring_gen_record(gc, gc->nmi_seq++, PMCRING_GEN_CTX_NMI,
				   false);
	if (i && (gc->g->flags & PMCRING_GEN_F_SRC_NMI)) {
		pmcring_src_test_mmap_probe();
		gc->src_nmi++;
	}
}

/*
 * NMI_LOCAL handler, registered while the module is loaded: claims the NMIs
 * this CPU raised (pending), runs the batch if a generator still wants one.
 */
static int pmcring_gen_nmi(unsigned int type, struct pt_regs *regs)
{
	struct pmcring_gen_cpu *gc;

	if (!this_cpu_read(pmcring_gen_nmi_pending))
		return NMI_DONE;
	gc = this_cpu_read(pmcring_gen_nmi_gc);
	if (gc)
		pmcring_gen_nmi_batch(gc);
	/* Cleared last: the raiser waits for it inside its record. */
	this_cpu_write(pmcring_gen_nmi_pending, 0);
	return NMI_HANDLED;
}

static int pmcring_gen_nmi_register(void)
{
	return register_nmi_handler(NMI_LOCAL, pmcring_gen_nmi, 0,
				    "pmcring_gen");
}

static void pmcring_gen_nmi_unregister(void)
{
	unregister_nmi_handler(NMI_LOCAL, "pmcring_gen");
}
#else
static int pmcring_gen_nmi_register(void)
{
	return 0;
}

static void pmcring_gen_nmi_unregister(void)
{
}
#endif

/* Runs on the target CPU (IPI) so that the pinned timer fires there. */
static void pmcring_gen_start_timer(void *arg)
{
	struct pmcring_gen_cpu *gc = arg;

	hrtimer_start(&gc->timer, ns_to_ktime(PMCRING_GEN_TICK_NS),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

/* hrtimer_setup() replaced hrtimer_init() + .function (6.13). */
static void pmcring_gen_timer_setup(struct hrtimer *timer)
{
#ifdef PMCRING_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, pmcring_gen_tick, CLOCK_MONOTONIC,
		      HRTIMER_MODE_REL_PINNED_HARD);
#else
	hrtimer_init(timer, CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
	timer->function = pmcring_gen_tick;
#endif
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
	if (!req->flags ||
	    (req->flags & ~(PMCRING_GEN_F_ALL | PMCRING_GEN_F_NMI |
			    PMCRING_GEN_F_BAD_LEN | PMCRING_GEN_F_SRC_NMI)))
		return -EINVAL;
	/* The hooks: a stream to act in, and F_SRC_NMI needs the NMI one. */
	if ((req->flags & PMCRING_GEN_F_SRC_NMI) &&
	    !(req->flags & PMCRING_GEN_F_NMI))
		return -EINVAL;
	if (!(req->flags & (PMCRING_GEN_F_ALL | PMCRING_GEN_F_NMI)))
		return -EINVAL;
	/* No NMI to raise on this architecture (see the top of this file). */
	if (!PMCRING_GEN_HAVE_NMI && (req->flags & PMCRING_GEN_F_NMI))
		return -EOPNOTSUPP;
	if ((req->flags & (PMCRING_GEN_F_BAD_LEN | PMCRING_GEN_F_SRC_NMI)) &&
	    !READ_ONCE(test_hooks))
		return -EPERM;
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
		local_set(&gc->nmi_sent, 0);
		local_set(&gc->wrapping, 0);
		INIT_WORK(&gc->work, pmcring_gen_task);
		pmcring_gen_timer_setup(&gc->timer);
	}
	return g;
}

/*
 * Start every stream.  CPU hotplug is held off while starting only: a CPU
 * going offline later moves its task and hard-IRQ streams elsewhere, which
 * is harmless, and ends its NMI stream (pmcring_gen_tick()).  Holding the
 * hotplug lock for the whole run instead would stall every
 * cpus_read_lock() in the system behind a waiting hotplug writer for as
 * long as the run lasts.
 */
static int pmcring_gen_start(struct pmcring_gen *g)
{
	struct pmcring_gen_cpu *gc;
	unsigned int i, streams;
	int err = 0;

	/* The timer also drives the NMI stream and finishes with it. */
	streams = !!(g->flags & PMCRING_GEN_F_TASK) +
		  !!(g->flags & (PMCRING_GEN_F_HARDIRQ | PMCRING_GEN_F_NMI));
	atomic_set(&g->running, g->nr * streams);
	for (i = 0; i < g->nr && (g->flags & PMCRING_GEN_F_NMI); i++)
		WRITE_ONCE(per_cpu(pmcring_gen_nmi_gc, g->cpus[i].cpu),
			   &g->cpus[i]);

	cpus_read_lock();
	for (i = 0; i < g->nr && !err; i++) {
		gc = &g->cpus[i];
		if (!cpu_online(gc->cpu)) {
			err = -EINVAL;
			break;
		}
		if (g->flags & (PMCRING_GEN_F_HARDIRQ | PMCRING_GEN_F_NMI))
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
	if (!(g->flags & PMCRING_GEN_F_NMI))
		return;
	for (i = 0; i < g->nr; i++)
		WRITE_ONCE(per_cpu(pmcring_gen_nmi_gc, g->cpus[i].cpu), NULL);
	/*
	 * NMI handlers run inside an RCU read-side section (nmi_handle()):
	 * after this none still uses g.  An NMI raised but not yet taken
	 * keeps its pending flag and is claimed, without a generator, later.
	 */
	synchronize_rcu();
}

/* Sum the streams' counters into the result. */
static void pmcring_gen_result(const struct pmcring_gen *g,
			       struct pmcring_generate *req)
{
	const struct pmcring_gen_cpu *gc;
	unsigned int i, j;

	/* The output fields as the caller passed them are ignored. */
	memset(req->written, 0, sizeof(req->written));
	memset(req->dropped, 0, sizeof(req->dropped));
	memset(req->nmi_depth, 0, sizeof(req->nmi_depth));
	memset(req->__reserved_out, 0, sizeof(req->__reserved_out));
	req->nmi_sent = 0;
	req->nmi_in_wrap = 0;
	req->src_nmi = 0;
	for (i = 0; i < g->nr; i++) {
		gc = &g->cpus[i];
		for (j = 0; j <= PMCRING_GEN_CTX_MAX; j++) {
			req->written[j] += gc->written[j];
			req->dropped[j] += gc->dropped[j];
		}
		for (j = 0; j < ARRAY_SIZE(gc->nmi_depth); j++)
			req->nmi_depth[j] += gc->nmi_depth[j];
		req->nmi_sent += local_read(&gc->nmi_sent);
		req->nmi_in_wrap += gc->nmi_in_wrap;
		req->src_nmi += gc->src_nmi;
	}
}

/*
 * @cmd is PMCRING_IOC_GENERATE or PMCRING_IOC_GENERATE_VER0: the struct
 * grows at its end (PMCRING_GENERATE_SIZE_*), input fields first, and the
 * size in @cmd says how much of it the caller has.  VER0 gets nothing back.
 */
long pmcring_gen_ioctl(struct pmcring_session *s, unsigned int cmd,
		       struct pmcring_generate __user *arg)
{
	size_t usize = _IOC_SIZE(cmd);
	struct pmcring_generate req;
	struct pmcring_gen *g;
	cpumask_var_t mask;
	long err;

	/* The caller's (ring_errors) and the opener's (perm_opener). */
	if (!capable(CAP_SYS_ADMIN) ||
	    !file_ns_capable(s->file, &init_user_ns, CAP_SYS_ADMIN))
		return -EPERM;
	err = copy_struct_from_user(&req, sizeof(req), arg, usize);
	if (err)
		return err;
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

	if ((req.flags & PMCRING_GEN_F_NMI) &&
	    mutex_lock_interruptible(&pmcring_gen_nmi_lock)) {
		err = -EINTR;
		goto out_mask;
	}
	err = -ENOMEM;
	g = pmcring_gen_alloc(s, &req, mask);
	if (!g)
		goto out_nmi;
	err = pmcring_gen_start(g);
	if (!err && wait_for_completion_interruptible(&g->done))
		err = -EINTR;
	pmcring_gen_stop(g);
	pmcring_gen_result(g, &req);
	kfree(g);
	if (!err && (_IOC_DIR(cmd) & _IOC_READ) &&
	    usize > PMCRING_GENERATE_SIZE_VER0 &&
	    copy_to_user(arg, &req, min(usize, sizeof(req))))
		err = -EFAULT;
out_nmi:
	if (req.flags & PMCRING_GEN_F_NMI)
		mutex_unlock(&pmcring_gen_nmi_lock);
out_mask:
	free_cpumask_var(mask);
	return err;
}

int pmcring_gen_init(void)
{
	unsigned int i;
	int err;

	for (i = 0; i < ARRAY_SIZE(pmcring_gen_pattern); i++)
		pmcring_gen_pattern[i] = (u8)i;
	pmcring_gen_wq = alloc_workqueue("pmcring_gen", WQ_CPU_INTENSIVE, 0);
	if (!pmcring_gen_wq)
		return -ENOMEM;
	err = pmcring_gen_nmi_register();
	if (err)
		goto err_wq;
	return 0;

err_wq:
	destroy_workqueue(pmcring_gen_wq);
	return err;
}

void pmcring_gen_exit(void)
{
	pmcring_gen_nmi_unregister();
	destroy_workqueue(pmcring_gen_wq);
}
