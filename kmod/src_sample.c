// SPDX-License-Identifier: GPL-2.0
/*
 * Sampling: counters made with perf_event_create_kernel_counter() whose
 * overflow handler writes a CALLCHAIN record.
 *
 * A system-wide session gets one event per online CPU, enabled and disabled
 * with the session, that follows CPU hotplug (see "CPU hotplug" below).  A
 * per-pid
 * session gets one inherited event per thread of its process tree: perf
 * copies it into every thread and process created afterwards, so new
 * threads and descendants are sampled without us.  perf refuses CPU-wide
 * kernel counters to callers without CAP_PERFMON when perf_event_paranoid
 * > 0 (perf_allow_cpu()); per-task ones follow only the tree.  Per-task
 * events stay enabled: c->armed gates them, and a thread created between
 * the scan of the tree and the creation of its parent's event is missed.
 * The handler also checks pmcring_src_follows(), the target set the
 * tracepoints use.
 *
 * The handler runs in NMI (hardware PMU), hard IRQ (cpu-clock hrtimer) or
 * with preemption disabled in task/softirq context (other software events):
 * no locks, no allocation.  Frames are collected in a per-CPU buffer, one
 * per context level, then copied into a record of the exact length.
 */
#include <linux/cpuhotplug.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/preempt.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/sched/task_stack.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#ifdef CONFIG_X86
#include <asm/unwind.h>
#endif
#ifdef CONFIG_ARM64
#include <asm/compiler.h>
#include <asm/pointer_auth.h>
#endif
#include "src.h"

/* Contexts that can nest on one CPU: task, softirq, hardirq, NMI. */
#define PMCRING_SRC_CTX_LEVELS	4

/*
 * hw.interrupts of a counter perf has throttled (MAX_INTERRUPTS of
 * kernel/events/core.c, not in a public header).
 */
#define PMCRING_SRC_THROTTLED	(~0ULL)

/* Highest sampling frequency accepted, Hz (perf's default maximum). */
#define PMCRING_SRC_MAX_FREQ	100000

struct pmcring_src_counter {
	struct pmcring_session	*s;
	u32			pmcid;
	bool			armed;		/* handler may write */
	bool			per_cpu;	/* else per task, inherited */
	/*
	 * PMCRING_CTR_F_FREQ counters only: the period of the last PERIOD
	 * record committed on each CPU's ring, 0 for none; see
	 * pmcring_src_period().
	 */
	u64 __percpu		*last_period;
	unsigned int		nr_ev;
	struct perf_event	**ev;		/* [nr_ev], NULL slots allowed */
	/* per_cpu only, under pmcring_src_cpu_mutex (with armed, ev[]): */
	u32			*seq;		/* [cpu] pmcring_src_cpu_seq of ev[cpu] */
	struct list_head	cpu_node;	/* on pmcring_src_cpu_ctrs */
	struct perf_event_attr	attr;
};

/*
 * CPU hotplug.  perf detaches the events of a CPU that goes offline and never
 * attaches them again, so system-wide counters follow the CPUs themselves.  A
 * hotplug state bumps pmcring_src_cpu_seq of a CPU when it comes online (the
 * count becomes odd) and when it goes offline (even) and queues
 * pmcring_src_cpu_work, which brings every per-CPU counter in line: it
 * releases the events made under an older count of their CPU and creates one
 * on every online CPU that has none.  The callbacks themselves run with the
 * hotplug lock held for writing, where creating or releasing an event can
 * deadlock (software events flip static keys: cpus_read_lock()); hence the
 * work, and a CPU that comes online is sampled from when the work has run.
 */
static DEFINE_PER_CPU(u32, pmcring_src_cpu_seq);
static DEFINE_MUTEX(pmcring_src_cpu_mutex);
static LIST_HEAD(pmcring_src_cpu_ctrs);
static int pmcring_src_cpuhp = -1;
static void pmcring_src_cpu_work_fn(struct work_struct *work);
static DECLARE_WORK(pmcring_src_cpu_work, pmcring_src_cpu_work_fn);

/* [cpu][level][frame] */
static u64 *pmcring_src_pcs;

static u64 *pmcring_src_pcbuf(void)
{
	unsigned int level;

	if (in_nmi())
		level = 3;
	else if (in_hardirq())
		level = 2;
	else if (in_serving_softirq())
		level = 1;
	else
		level = 0;
	return pmcring_src_pcs + ((size_t)smp_processor_id() *
		PMCRING_SRC_CTX_LEVELS + level) * PMCRING_CALLCHAIN_DEPTH_MAX;
}

/* A frame record: the caller's frame pointer, then the return address. */
struct pmcring_src_frame {
	unsigned long next;
	unsigned long ret;
};

#ifdef CONFIG_X86
/* Kernel frames from @regs (a kernel-mode sample), as perf_callchain_kernel(). */
static unsigned int pmcring_src_kstack(struct pt_regs *regs, u64 *pc,
				       unsigned int max)
{
	struct unwind_state state;
	unsigned long addr;
	unsigned int n = 0;

	pc[n++] = regs->ip;
	/* Registers made by perf_fetch_caller_regs() are partial: use sp. */
	if (regs->flags & X86_EFLAGS_FIXED)
		unwind_start(&state, current, regs, NULL);
	else
		unwind_start(&state, current, NULL, (unsigned long *)regs->sp);
	for (; !unwind_done(&state) && n < max; unwind_next_frame(&state)) {
		addr = unwind_get_return_address(&state);
		if (!addr)
			break;
		pc[n++] = addr;
	}
	return n;
}

/* The user frame-pointer walk: where it starts, what it keeps. */
static bool pmcring_src_user64(struct pt_regs *regs)
{
	return user_64bit_mode(regs);
}

static unsigned long pmcring_src_user_ret(unsigned long ret)
{
	return ret;
}
#elif defined(CONFIG_ARM64)
/*
 * Return addresses in frame records carry a pointer-authentication code
 * when the kernel (CONFIG_ARM64_PTR_AUTH_KERNEL) or the program signs them:
 * strip it, as perf's arm64 unwinders do.  The helpers were split into user
 * and kernel macros of <asm/compiler.h> in 6.4.
 */
#ifdef ptrauth_strip_kernel_insn_pac
#define pmcring_src_kernel_ret(ret)	ptrauth_strip_kernel_insn_pac(ret)
#define pmcring_src_user_ret(ret)	ptrauth_strip_user_insn_pac(ret)
#else
#define pmcring_src_kernel_ret(ret)	ptrauth_strip_insn_pac(ret)
#define pmcring_src_user_ret(ret)	ptrauth_strip_insn_pac(ret)
#endif

/*
 * Kernel frames from @regs by walking the AAPCS64 frame records (arm64
 * kernels are built with frame pointers; arch_stack_walk() and
 * stack_trace_save_regs() are not exported).  Each record is read with
 * copy_from_kernel_nofault(), and the walk stays on the stack it started
 * on: task and IRQ stacks are THREAD_SIZE long and THREAD_SIZE aligned
 * (vmapped with THREAD_ALIGN), so the walk from an IRQ stack ends where
 * it would cross to the task stack.  The last record of a task stack is
 * zeroed (its final frame), which ends the walk too.
 */
static unsigned int pmcring_src_kstack(struct pt_regs *regs, u64 *pc,
				       unsigned int max)
{
	unsigned long fp = regs->regs[29];
	unsigned long end = ALIGN_DOWN(fp, THREAD_SIZE) + THREAD_SIZE;
	struct pmcring_src_frame frame;
	unsigned int n = 0;

	pc[n++] = instruction_pointer(regs);
	while (n < max) {
		if (!fp || (fp & 7) || fp > end - sizeof(frame))
			break;
		if (copy_from_kernel_nofault(&frame, (void *)fp, sizeof(frame)))
			break;
		frame.ret = pmcring_src_kernel_ret(frame.ret);
		if (!frame.ret)
			break;
		pc[n++] = frame.ret;
		if (frame.next <= fp)
			break;
		fp = frame.next;
	}
	return n;
}

static bool pmcring_src_user64(struct pt_regs *regs)
{
	return !compat_user_mode(regs);
}
#else
#error "pmcring: no callchain code for this architecture (x86-64 and arm64)"
#endif

/*
 * User frames from @regs by walking the frame-pointer chain, as
 * perf_callchain_user(): 64-bit tasks only; a frame whose saved frame pointer
 * does not move up the stack ends the walk.  copy_from_user_nofault() is NMI
 * safe (it checks nmi_uaccess_okay()).  x86-64's frame (rbp) and arm64's
 * frame record (x29) have the same layout: the caller's frame pointer, then
 * the return address.
 */
static unsigned int pmcring_src_ustack(struct pt_regs *regs, u64 *pc,
				       unsigned int max)
{
	struct pmcring_src_frame frame;
	unsigned long fp = frame_pointer(regs);
	unsigned int n = 0;

	if (!max)
		return 0;
	pc[n++] = instruction_pointer(regs);
	if (!pmcring_src_user64(regs))
		return n;
	while (n < max) {
		if (!fp || (fp & 7) || fp > TASK_SIZE_MAX - sizeof(frame))
			break;
		if (copy_from_user_nofault(&frame, (void __user *)fp,
					   sizeof(frame)))
			break;
		frame.ret = pmcring_src_user_ret(frame.ret);
		if (!frame.ret)
			break;
		pc[n++] = frame.ret;
		if (frame.next <= fp)
			break;
		fp = frame.next;
	}
	return n;
}

/*
 * Kernel frames first, then the user frames of the task.  A session that may
 * not see kernel addresses gets a single 0 where the kernel frames would be.
 */
static unsigned int pmcring_src_callchain(struct pmcring_session *s,
					  struct pt_regs *regs, u64 *pc,
					  u32 *flags)
{
	unsigned int max = s->src->depth, n = 0;
	struct pt_regs *uregs = regs;

	if (!user_mode(regs)) {
		if (READ_ONCE(s->kaddr_ok))
			n = pmcring_src_kstack(regs, pc, max);
		else
			pc[n++] = 0;
		uregs = NULL;
		if (current->mm && !(current->flags & PF_KTHREAD))
			uregs = task_pt_regs(current);
	} else {
		*flags |= PMCRING_CC_F_USERSPACE;
	}
	if (uregs)
		n += pmcring_src_ustack(uregs, pc + n, max - n);
	return n;
}

/*
 * Write a PERIOD record of @period for frequency-mode counter @c before its
 * CALLCHAIN on @rb, this CPU's ring, unless the last PERIOD committed there
 * said the same.  Returns false if the PERIOD was needed and could not be
 * written: the caller drops the sample, so that no CALLCHAIN follows a
 * PERIOD of another period.
 *
 * perf hands the handler the period the sample stands for in
 * perf_sample_data.period (perf_sample_data_init() with the event's
 * hw.last_period, before __perf_event_overflow() adjusts the next one), and
 * writes it into every PERF_SAMPLE_PERIOD sample; we write it only when it
 * changes.  cpu-clock and task-clock turn a frequency into a fixed period
 * (perf_swevent_init_hrtimer()), so they get one PERIOD per CPU; hardware
 * counters a new one nearly every tick (perf_adjust_period()).
 *
 * c->last_period of this CPU is read and written only here, by the handler
 * of @c on this CPU, which does not nest with itself: a hardware counter's
 * NMI does not nest in its own NMI, an hrtimer's callback does not nest in
 * itself, and a software event's overflow runs with perf's recursion guard
 * of its context level (perf_swevent_get_recursion_context()) and is only
 * ever raised by the task it counts.  The value moves only once the PERIOD
 * is committed: a PERIOD that was dropped (ring full) leaves it, and the
 * next sample tries again.  Another writer that nests between our PERIOD
 * and our CALLCHAIN (an NMI of another counter, a tracepoint) adds records
 * of its own, never a PERIOD of @c, so readers that keep the last PERIOD
 * per CPU and pmcid read ours.  A CALLCHAIN that is dropped after its
 * PERIOD was committed leaves a PERIOD without sample, which is harmless.
 */
static bool pmcring_src_period(struct pmcring_src_counter *c,
			       struct pmcring_ring *rb, u64 period)
{
	u64 *last = this_cpu_ptr(c->last_period);
	struct pmcring_rec_period *rec;
	struct pmcring_wr wr;

	if (*last == period ||
	    !pmcring_session_wants(c->s, PMCRING_TYPE_PERIOD))
		return true;
	rec = pmcring_ring_reserve(rb, PMCRING_TYPE_PERIOD,
				   PMCRING_SIZE_PERIOD, &wr);
	if (!rec)
		return false;
	rec->pl_pmcid = c->pmcid;
	rec->pl_cpu = smp_processor_id();
	rec->pl_period = period;
	pmcring_ring_commit(&wr);
	*last = period;
	return true;
}

static void pmcring_src_overflow(struct perf_event *ev,
				 struct perf_sample_data *data,
				 struct pt_regs *regs)
{
	struct pmcring_src_counter *c = ev->overflow_handler_context;
	struct pmcring_session *s = c->s;
	struct pmcring_rec_callchain *rec;
	struct pmcring_ring *rb;
	struct pmcring_wr wr;
	unsigned int n;
	u32 flags = 0;
	u64 *pc;

	if (!READ_ONCE(c->armed) || !regs ||
	    !pmcring_session_wants(s, PMCRING_TYPE_CALLCHAIN) ||
	    !pmcring_src_follows(s, current) ||
	    !pmcring_src_records_here(s, current))
		return;
	/* exclude_kernel already keeps these out; never trust one more. */
	if (!user_mode(regs) && !READ_ONCE(s->src->kernel_ok))
		return;
	pc = pmcring_src_pcbuf();
	n = pmcring_src_callchain(s, regs, pc, &flags);
	rb = pmcring_session_ring(s);
	if (!rb)
		return;
	if (c->last_period && !pmcring_src_period(c, rb, data->period)) {
		/* The sample is lost with its PERIOD: count it too. */
		pmcring_ring_lost(rb);
		return;
	}
	rec = pmcring_ring_reserve(rb, PMCRING_TYPE_CALLCHAIN,
				   PMCRING_SIZE_CALLCHAIN_MIN + 8 * n, &wr);
	if (!rec)
		return;
	rec->pl_pid = pmcring_src_pid(s, current);
	rec->pl_tid = pmcring_src_tid(s, current);
	rec->pl_pmcid = c->pmcid;
	rec->pl_cpuflags = (smp_processor_id() << 16) | flags;
	memcpy(rec->pl_pc, pc, 8 * n);
	pmcring_ring_commit(&wr);
	/*
	 * perf throttled the counter at this interrupt (more than
	 * perf_event_max_sample_rate / HZ interrupts in a tick:
	 * __perf_event_account_interrupt() ran before us): it stops counting
	 * until a later tick restarts it, and the samples it does not take
	 * are unknown.  Count the throttle as one lost record, which the
	 * ring's next DROPNOTIFY reports, so that the thinned profile is
	 * seen as such (perf writes PERF_RECORD_THROTTLE).  Only this CPU's
	 * interrupt of @ev sets and reads it here.
	 */
	if (READ_ONCE(ev->hw.interrupts) == PMCRING_SRC_THROTTLED)
		pmcring_ring_lost(rb);
}

/* ---- allocation ---- */

static const char *pmcring_src_default_name(const struct pmcring_counter *c)
{
	static const char * const hw[PERF_COUNT_HW_MAX] = {
		"cycles", "instructions", "cache-references", "cache-misses",
		"branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend",
		"ref-cycles",
	};
	static const char * const sw[PERF_COUNT_SW_MAX] = {
		"cpu-clock", "task-clock", "page-faults", "context-switches",
		"cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults",
	};
	const char *name = NULL;

	if (c->type == PERF_TYPE_HARDWARE)
		name = hw[c->config];
	else if (c->type == PERF_TYPE_SOFTWARE)
		name = sw[c->config];
	else if (c->type == PERF_TYPE_RAW)
		name = "raw";
	else if (c->type == PERF_TYPE_HW_CACHE)
		name = "cache";
	else
		name = "pmu";
	return name ? name : "unknown";
}

static int pmcring_src_counter_check(const struct pmcring_counter *c)
{
	if (c->flags & ~PMCRING_CTR_F_ALL || c->__reserved0 ||
	    memchr_inv(c->__reserved, 0, sizeof(c->__reserved)) ||
	    !memchr(c->name, '\0', sizeof(c->name)) || !c->rate)
		return -EINVAL;
	if ((c->flags & PMCRING_CTR_F_FREQ) && c->rate > PMCRING_SRC_MAX_FREQ)
		return -EINVAL;
	/* perf_event_open(): a period is a positive s64 */
	if (!(c->flags & PMCRING_CTR_F_FREQ) && (c->rate & BIT_ULL(63)))
		return -EINVAL;
	/* excluding both modes counts nothing */
	if ((c->flags & PMCRING_CTR_F_EXCLUDE_KERNEL) &&
	    (c->flags & PMCRING_CTR_F_EXCLUDE_USER))
		return -EINVAL;
	switch (c->type) {
	case PERF_TYPE_HARDWARE:
		return c->config < PERF_COUNT_HW_MAX ? 0 : -EINVAL;
	case PERF_TYPE_SOFTWARE:
		/* dummy and bpf-output never overflow */
		return c->config < PERF_COUNT_SW_DUMMY ? 0 : -EINVAL;
	case PERF_TYPE_TRACEPOINT:
	case PERF_TYPE_BREAKPOINT:
		return -EINVAL;	/* not sampling counters of ours */
	default:
		/*
		 * PERF_TYPE_HW_CACHE, _RAW and the dynamic types of PMUs
		 * (libpfm4's encodings): perf_event_create_kernel_counter()
		 * checks the config and says -ENOENT when no PMU has the type.
		 * The type must fit pl_flags' upper 16 bits.
		 */
		return c->type < 0x10000 ? 0 : -EINVAL;
	}
}

static void pmcring_src_counter_records(struct pmcring_session *s,
					const struct pmcring_counter *c)
{
	struct pmcring_rec_pmcallocatedyn dyn = {
		.pl_pmcid = c->pmcid,
		.pl_event = (u32)c->config,
		.pl_flags = c->flags | (c->type << 16),
	};
	struct pmcring_rec_pmcallocate rec = {
		.pl_pmcid = c->pmcid,
		.pl_event = (u32)c->config,
		.pl_flags = c->flags | (c->type << 16),
		.pl_rate = c->rate,
	};

	strscpy(dyn.pl_evname, c->name[0] ? c->name :
		pmcring_src_default_name(c), sizeof(dyn.pl_evname));
	if (pmcring_session_wants(s, PMCRING_TYPE_PMCALLOCATE))
		pmcring_src_emit_task(s, PMCRING_TYPE_PMCALLOCATE,
				      PMCRING_SIZE_PMCALLOCATE, &rec);
	if (pmcring_session_wants(s, PMCRING_TYPE_PMCALLOCATEDYN))
		pmcring_src_emit_task(s, PMCRING_TYPE_PMCALLOCATEDYN,
				      PMCRING_SIZE_PMCALLOCATEDYN, &dyn);
}

/* Release @ctr's events; pmcring_src_counter_kfree() after an RCU wait. */
static void pmcring_src_counter_release(struct pmcring_src_counter *ctr)
{
	unsigned int i;

	if (ctr->per_cpu) {
		/* Once off the list the work no longer looks at ctr. */
		mutex_lock(&pmcring_src_cpu_mutex);
		list_del_init(&ctr->cpu_node);
		mutex_unlock(&pmcring_src_cpu_mutex);
	}
	for (i = 0; i < ctr->nr_ev; i++)
		if (ctr->ev[i])
			perf_event_release_kernel(ctr->ev[i]);
}

static void pmcring_src_counter_kfree(struct pmcring_src_counter *ctr)
{
	free_percpu(ctr->last_period);
	kvfree(ctr->ev);
	kvfree(ctr->seq);
	kfree(ctr);
}

/*
 * A released event's handler may still be running on another CPU:
 * __perf_sw_event() calls it under rcu_read_lock() with IRQs on (a page
 * fault), and the IPI that takes the event off that CPU can land in the
 * middle; perf frees its own events with call_rcu() for that reason.  The
 * handler reads the counter (and through it the session), so wait out
 * every such reader before either is freed.  NMI and hard-IRQ handlers are
 * RCU readers too.
 */
static void pmcring_src_counter_free(struct pmcring_src_counter *ctr)
{
	pmcring_src_counter_release(ctr);
	synchronize_rcu();
	pmcring_src_counter_kfree(ctr);
}

/*
 * @kernel: the session may sample the kernel; else the counter counts and
 * samples user mode only, as perf_event_open() demands exclude_kernel of
 * a caller without perf_allow_kernel().
 */
static void pmcring_src_counter_attr(struct perf_event_attr *attr,
				     const struct pmcring_counter *c,
				     bool per_cpu, bool kernel)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = c->type;
	attr->size = sizeof(*attr);
	attr->config = c->config;
	attr->sample_period = c->rate;
	attr->freq = !!(c->flags & PMCRING_CTR_F_FREQ);
	attr->disabled = per_cpu;
	attr->inherit = !per_cpu;
	attr->exclude_kernel = !kernel ||
			       !!(c->flags & PMCRING_CTR_F_EXCLUDE_KERNEL);
	attr->exclude_hv = attr->exclude_kernel;
	attr->exclude_user = !!(c->flags & PMCRING_CTR_F_EXCLUDE_USER);
}

/*
 * Bring the events of per-CPU counter @ctr in line with the CPUs online now:
 * release each event made before its CPU last went offline, create one on
 * each online CPU without one (enabled if @ctr is armed).  Returns the number
 * of live events, or the first error other than -ENODEV (a CPU that goes
 * offline meanwhile: the work runs again after it).
 */
static int pmcring_src_counter_sync(struct pmcring_src_counter *ctr)
{
	const struct cpumask *cpus = ctr->s->src->cpus;
	struct perf_event *ev;
	unsigned int cpu;
	int err = 0, n = 0;
	u32 seq;

	lockdep_assert_held(&pmcring_src_cpu_mutex);
	for_each_possible_cpu(cpu) {
		/* PMCRING_CFG_F_CPUS: never an event on the other CPUs. */
		if (cpus && !cpumask_test_cpu(cpu, cpus))
			continue;
		seq = READ_ONCE(per_cpu(pmcring_src_cpu_seq, cpu));
		if (ctr->ev[cpu] && ctr->seq[cpu] != seq) {
			perf_event_release_kernel(ctr->ev[cpu]);
			ctr->ev[cpu] = NULL;
		}
		if (!ctr->ev[cpu] && (seq & 1)) {
			ev = perf_event_create_kernel_counter(&ctr->attr, cpu,
							      NULL,
							      pmcring_src_overflow,
							      ctr);
			if (IS_ERR(ev)) {
				if (PTR_ERR(ev) != -ENODEV && !err)
					err = PTR_ERR(ev);
				continue;
			}
			ctr->ev[cpu] = ev;
			ctr->seq[cpu] = seq;
			if (ctr->armed)
				perf_event_enable(ev);
		}
		n += !!ctr->ev[cpu];
	}
	return err ? err : n;
}

static void pmcring_src_cpu_work_fn(struct work_struct *work)
{
	struct pmcring_src_counter *ctr;
	int n;

	mutex_lock(&pmcring_src_cpu_mutex);
	list_for_each_entry(ctr, &pmcring_src_cpu_ctrs, cpu_node) {
		n = pmcring_src_counter_sync(ctr);
		if (n < 0)
			pr_warn_ratelimited("pmcring: counter %u after CPU hotplug: %d\n",
					    ctr->pmcid, n);
	}
	mutex_unlock(&pmcring_src_cpu_mutex);
}

/* Hotplug callbacks: odd count online, even offline, always a new value. */
static int pmcring_src_cpu_online(unsigned int cpu)
{
	u32 *seq = per_cpu_ptr(&pmcring_src_cpu_seq, cpu);

	WRITE_ONCE(*seq, (*seq + 1) | 1);
	queue_work(system_unbound_wq, &pmcring_src_cpu_work);
	return 0;
}

static int pmcring_src_cpu_offline(unsigned int cpu)
{
	u32 *seq = per_cpu_ptr(&pmcring_src_cpu_seq, cpu);

	WRITE_ONCE(*seq, (*seq + 2) & ~1u);
	queue_work(system_unbound_wq, &pmcring_src_cpu_work);
	return 0;
}

static int pmcring_src_counter_cpus(struct pmcring_src_counter *ctr,
				    struct perf_event_attr *attr)
{
	int n;

	ctr->ev = kvcalloc(nr_cpu_ids, sizeof(*ctr->ev), GFP_KERNEL);
	ctr->seq = kvcalloc(nr_cpu_ids, sizeof(*ctr->seq), GFP_KERNEL);
	if (!ctr->ev || !ctr->seq)
		return -ENOMEM;
	ctr->nr_ev = nr_cpu_ids;
	ctr->attr = *attr;
	mutex_lock(&pmcring_src_cpu_mutex);
	n = pmcring_src_counter_sync(ctr);
	/* On the list in the same critical section: no hotplug is missed. */
	if (n > 0)
		list_add(&ctr->cpu_node, &pmcring_src_cpu_ctrs);
	mutex_unlock(&pmcring_src_cpu_mutex);
	if (n < 0)
		return n;
	return n ? 0 : -ENODEV;
}

/* The threads of the processes @s follows, referenced. */
static struct task_struct **pmcring_src_threads(struct pmcring_session *s,
						unsigned int *nr)
{
	struct task_struct **tasks, *p, *t;
	unsigned int n = 0, max = 0;

	rcu_read_lock();
	for_each_process_thread(p, t)
		max += pmcring_src_follows(s, t) &&
		       pmcring_src_thread_ok(s->src, t);
	rcu_read_unlock();
	tasks = kvmalloc_array(max + 1, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		return NULL;
	rcu_read_lock();
	for_each_process_thread(p, t) {
		if (n < max && pmcring_src_follows(s, t) &&
		    pmcring_src_thread_ok(s->src, t)) {
			get_task_struct(t);
			tasks[n++] = t;
		}
	}
	rcu_read_unlock();
	*nr = n;
	return tasks;
}

/*
 * The event of one thread @t, made as perf_event_open() makes it: under
 * @t's exec_update_lock, so that an exec that changes its credentials
 * either came first (and the check sees the new ones) or comes after (and
 * begin_new_exec() takes the event off @t with perf_event_exit_task()).
 * Without CAP_PERFMON the session must still be allowed to trace @t; a
 * thread it may not trace, or one that exited meanwhile, gets no event and
 * is no error.
 */
static int pmcring_src_counter_task(struct pmcring_src_counter *ctr,
				    struct perf_event_attr *attr,
				    struct task_struct *t)
{
	struct perf_event *ev;
	int err;

	err = down_read_interruptible(&t->signal->exec_update_lock);
	if (err)
		return err;
	if (!ctr->s->src->perfmon && !pmcring_src_may_trace(ctr->s, t))
		goto out;
	ev = perf_event_create_kernel_counter(attr, -1, t,
					      pmcring_src_overflow, ctr);
	if (!IS_ERR(ev))
		ctr->ev[ctr->nr_ev++] = ev;
	else if (PTR_ERR(ev) != -ESRCH)
		err = PTR_ERR(ev);
out:
	up_read(&t->signal->exec_update_lock);
	return err;
}

static int pmcring_src_counter_tasks(struct pmcring_src_counter *ctr,
				     struct perf_event_attr *attr)
{
	struct task_struct **tasks;
	unsigned int i, n;
	int err = 0;

	pmcring_src_targets_fill(ctr->s);
	tasks = pmcring_src_threads(ctr->s, &n);
	if (!tasks)
		return -ENOMEM;
	ctr->ev = kvcalloc(n + 1, sizeof(*ctr->ev), GFP_KERNEL);
	if (!ctr->ev)
		err = -ENOMEM;
	for (i = 0; i < n; i++) {
		if (!err)
			err = pmcring_src_counter_task(ctr, attr, tasks[i]);
		put_task_struct(tasks[i]);
	}
	kvfree(tasks);
	if (!err && !ctr->nr_ev)
		err = -ESRCH;
	return err;
}

static void pmcring_src_counter_arm(struct pmcring_src_counter *ctr, bool on)
{
	unsigned int i;

	if (!ctr->per_cpu) {
		WRITE_ONCE(ctr->armed, on);
		return;
	}
	mutex_lock(&pmcring_src_cpu_mutex);
	WRITE_ONCE(ctr->armed, on);
	/* Drop the events of CPUs that went offline, add the new CPUs'. */
	pmcring_src_counter_sync(ctr);
	for (i = 0; i < ctr->nr_ev; i++) {
		if (!ctr->ev[i])
			continue;
		if (on)
			perf_event_enable(ctr->ev[i]);
		else
			perf_event_disable(ctr->ev[i]);
	}
	mutex_unlock(&pmcring_src_cpu_mutex);
}

/*
 * ADD_COUNTER in two steps, so that a failure to report the id leaves
 * nothing behind: pmcring_src_counter_new() makes the events (disarmed: the
 * handler writes nothing) and sets c->pmcid; then either
 * pmcring_src_counter_commit() publishes the counter (PMCALLOCATE records,
 * armed if the session is enabled) or pmcring_src_counter_drop() frees it.
 * Under s->lock.
 */
struct pmcring_src_counter *pmcring_src_counter_new(struct pmcring_session *s,
						    struct pmcring_counter *c)
{
	struct pmcring_src_state *st = s->src;
	struct pmcring_src_counter *ctr;
	struct perf_event_attr attr;
	int err;

	err = pmcring_src_counter_check(c);
	if (err)
		return ERR_PTR(err);
	/*
	 * perf_event_open(): no frequency over perf_event_max_sample_rate,
	 * which perf lowers itself when sampling takes too long.
	 */
	if ((c->flags & PMCRING_CTR_F_FREQ) &&
	    c->rate > (u64)pmcring_src_sysctl("/proc/sys/kernel/perf_event_max_sample_rate",
					      PMCRING_SRC_MAX_FREQ))
		return ERR_PTR(-EINVAL);
	/*
	 * Kernel mode only, from a session that may not see the kernel:
	 * perf_event_open() refuses it with EACCES (perf_allow_kernel()).
	 */
	if ((c->flags & PMCRING_CTR_F_EXCLUDE_USER) && !st->kernel_ok)
		return ERR_PTR(-EACCES);
	if (!st->system_wide && !st->targets)
		return ERR_PTR(-EINVAL);	/* a session that follows nothing */
	if (st->nr_counters >= PMCRING_SRC_MAX_COUNTERS)
		return ERR_PTR(-ENOSPC);
	ctr = kzalloc(sizeof(*ctr), GFP_KERNEL);
	if (!ctr)
		return ERR_PTR(-ENOMEM);
	ctr->s = s;
	ctr->pmcid = st->nr_counters + 1;
	ctr->per_cpu = st->system_wide;
	INIT_LIST_HEAD(&ctr->cpu_node);
	if (c->flags & PMCRING_CTR_F_FREQ) {
		/* Zeroed: no PERIOD written yet on any CPU. */
		ctr->last_period = alloc_percpu(u64);
		if (!ctr->last_period) {
			kfree(ctr);
			return ERR_PTR(-ENOMEM);
		}
	}
	pmcring_src_counter_attr(&attr, c, ctr->per_cpu, st->kernel_ok);
	/* One thread (PMCRING_CFG_F_TID): not the threads it creates. */
	if (st->target_tid)
		attr.inherit = 0;
	if (ctr->per_cpu)
		err = pmcring_src_counter_cpus(ctr, &attr);
	else
		err = pmcring_src_counter_tasks(ctr, &attr);
	if (err) {
		pmcring_src_counter_free(ctr);
		return ERR_PTR(err);
	}
	c->pmcid = ctr->pmcid;
	return ctr;
}

void pmcring_src_counter_commit(struct pmcring_session *s,
				struct pmcring_src_counter *ctr,
				const struct pmcring_counter *c)
{
	struct pmcring_src_state *st = s->src;

	st->counters[st->nr_counters++] = ctr;
	if (!st->pmcid)
		st->pmcid = ctr->pmcid;
	pmcring_src_counter_records(s, c);
	if (s->enabled && st->hooked)
		pmcring_src_counter_arm(ctr, true);
}

void pmcring_src_counter_drop(struct pmcring_src_counter *ctr)
{
	pmcring_src_counter_free(ctr);
}

/*
 * Arm or disarm every counter of @s.  After a disarm no handler of @s runs:
 * perf_event_disable() returns once a per-CPU event is stopped, and
 * synchronize_rcu() waits for handlers (NMI, IRQ or preemption disabled)
 * of per-task events that saw armed set.
 */
void pmcring_src_counters_arm(struct pmcring_session *s, bool on)
{
	struct pmcring_src_state *st = s->src;
	unsigned int i;

	for (i = 0; i < st->nr_counters; i++)
		pmcring_src_counter_arm(st->counters[i], on);
	if (!on && st->nr_counters)
		synchronize_rcu();
}

void pmcring_src_counters_free(struct pmcring_session *s)
{
	struct pmcring_src_state *st = s->src;
	unsigned int i;

	for (i = 0; i < st->nr_counters; i++)
		pmcring_src_counter_release(st->counters[i]);
	/* No handler still reads a counter: see pmcring_src_counter_free() */
	if (st->nr_counters)
		synchronize_rcu();
	for (i = 0; i < st->nr_counters; i++)
		pmcring_src_counter_kfree(st->counters[i]);
	st->nr_counters = 0;
}

int pmcring_src_sample_init(void)
{
	int ret;

	pmcring_src_pcs = kvcalloc((size_t)nr_cpu_ids * PMCRING_SRC_CTX_LEVELS *
				   PMCRING_CALLCHAIN_DEPTH_MAX, sizeof(u64),
				   GFP_KERNEL);
	if (!pmcring_src_pcs)
		return -ENOMEM;
	/* Calls pmcring_src_cpu_online() for the CPUs online now. */
	ret = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "pmcring:online",
				pmcring_src_cpu_online, pmcring_src_cpu_offline);
	if (ret < 0) {
		kvfree(pmcring_src_pcs);
		return ret;
	}
	pmcring_src_cpuhp = ret;
	return 0;
}

/* Every session is gone: no counter is on pmcring_src_cpu_ctrs. */
void pmcring_src_sample_exit(void)
{
	cpuhp_remove_state_nocalls(pmcring_src_cpuhp);
	cancel_work_sync(&pmcring_src_cpu_work);
	kvfree(pmcring_src_pcs);
}
