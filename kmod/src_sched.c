// SPDX-License-Identifier: GPL-2.0
/*
 * Scheduler and process events from the kernel's tracepoints:
 *
 *	sched_switch		PROCCSW
 *	sched_process_fork	PROCFORK (new process), THR_CREATE (new thread)
 *	sched_process_exec	PROCEXEC, PROC_CREATE, MAP_IN (src_map.c)
 *	sched_process_exit	THR_EXIT, and PROCEXIT + SYSEXIT for the last
 *				thread of a process
 *	sched_process_free	forgets the exit claim of a reaped process
 *
 * The probes are registered by name (the tracepoints are not exported), so
 * pmcring_src_tp_check() has the compiler compare each prototype with the
 * tracepoint of the kernel built against (check_trace_callback_type_*()).
 *
 * The fork and exit probes also maintain the target set of per-pid sessions.
 *
 * Counter values.  PROCCSW and PROCEXIT carry CPU time in nanoseconds, not a
 * PMC reading: a perf counter cannot be read from sched_switch
 * (perf_event_read_value() sleeps, perf_event_read_local() is not exported).
 * PROCCSW.value is the time the outgoing thread ran since it was switched in
 * on this CPU (the delta of se.sum_exec_runtime, kept per CPU); PROCEXIT.value
 * is the CPU time of the whole process.  pmcid is the session's first counter,
 * 0 when it has none.
 *
 * Tracepoint probes run with preemption disabled (RCU-sched), never in NMI.
 */
#include <linux/binfmts.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/sched/signal.h>
#include <linux/string.h>
#include <linux/hash.h>
#include <linux/log2.h>
#include <linux/bitops.h>
#include <linux/slab.h>
#include <linux/tracepoint.h>
#include <linux/spinlock.h>
#include <trace/events/sched.h>
#include "src.h"
#include "ring_prod.h"

/* The outgoing thread's runtime when it was switched in, per CPU. */
struct pmcring_src_csw {
	struct task_struct	*task;
	u64			runtime;
};

static DEFINE_PER_CPU(struct pmcring_src_csw, pmcring_src_csw);

/*
 * @t's name, NUL padded: a memcpy() of t->comm would also copy what an
 * earlier, longer name left after the NUL.  strscpy_pad() as
 * __get_task_comm() does, without its task_lock(): the fork probe's child
 * cannot rename itself yet and the exec probe's task is current, and a
 * racing prctl(PR_SET_NAME) gives a torn name at worst, as perf's
 * perf_event_comm() accepts.
 */
static void pmcring_src_comm(char *dst, struct task_struct *t)
{
	BUILD_BUG_ON(TASK_COMM_LEN > PMCRING_COMM_LEN);
	strscpy_pad(dst, t->comm, TASK_COMM_LEN);
}

static void pmcring_src_probe_switch(void *data, bool preempt,
				     struct task_struct *prev,
				     struct task_struct *next,
				     unsigned int prev_state)
{
	struct pmcring_src_csw *csw = this_cpu_ptr(&pmcring_src_csw);
	u64 now = prev->se.sum_exec_runtime, since, value;
	struct pmcring_rec_proccsw *rec;
	struct pmcring_session *s;
	struct pmcring_ring *rb;
	struct pmcring_wr wr;

	/* Not switched in while we watched: since it was last picked. */
	since = prev->se.prev_sum_exec_runtime;
	if (csw->task == prev && csw->runtime <= now)
		since = csw->runtime;
	csw->task = next;
	csw->runtime = next->se.sum_exec_runtime;
	if (!pmcring_src_wanted(PMCRING_TYPE_PROCCSW) || is_idle_task(prev))
		return;

	value = now >= since ? now - since : 0;
	/*
	 * Every switch of a followed task comes here, twice a round trip
	 * of a pipe ping-pong: the record is written in place in the ring
	 * with the inline producer (ring_prod.h), as pmcring_emit_generated()
	 * does, not built on the stack and copied by pmcring_src_emit()
	 * through two calls.  Every byte after the header is stored.
	 */
	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (!pmcring_session_wants(s, PMCRING_TYPE_PROCCSW) ||
		    !pmcring_src_follows(s, prev) ||
		    !pmcring_src_records_here(s, prev))
			continue;
		rb = pmcring_session_ring(s);
		if (!rb)
			continue;
		rec = pmcring_ring_reserve_inline(rb, PMCRING_TYPE_PROCCSW,
						  PMCRING_SIZE_PROCCSW, &wr);
		if (!rec)
			continue;
		rec->pl_value = value;
		rec->pl_pmcid = s->src->pmcid;
		rec->pl_pid = pmcring_src_pid(s, prev);
		rec->pl_tid = pmcring_src_tid(s, prev);
		rec->pl_pad = 0;
		pmcring_ring_commit_inline(&wr);
	}
	rcu_read_unlock();
}

static void pmcring_src_fork_records(struct pmcring_session *s,
				     struct task_struct *parent,
				     struct task_struct *child, bool thread)
{
	if (!thread && pmcring_session_wants(s, PMCRING_TYPE_PROCFORK)) {
		struct pmcring_rec_procfork rec = {
			.pl_oldpid = pmcring_src_pid(s, parent),
			.pl_newpid = pmcring_src_pid(s, child),
		};

		pmcring_src_emit(s, PMCRING_TYPE_PROCFORK,
				 PMCRING_SIZE_PROCFORK, &rec);
	}
	if (thread && pmcring_session_wants(s, PMCRING_TYPE_THR_CREATE)) {
		struct pmcring_rec_thr_create rec = {
			.pl_tid = pmcring_src_tid(s, child),
			.pl_pid = pmcring_src_pid(s, child),
		};

		pmcring_src_comm(rec.pl_tdname, child);
		pmcring_src_emit(s, PMCRING_TYPE_THR_CREATE,
				 PMCRING_SIZE_THR_CREATE, &rec);
	}
}

/*
 * Runs in the parent before wake_up_new_task(child): the child is in the
 * target set before it can run, exec or fork.
 */
static void pmcring_src_probe_fork(void *data, struct task_struct *parent,
				   struct task_struct *child)
{
	bool thread = task_tgid_nr(child) == task_tgid_nr(parent);
	pid_t tgid = task_tgid_nr(child);
	struct pmcring_session *s;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		struct pmcring_src_state *st = s->src;

		/*
		 * A new process is followed iff its parent is: add or drop
		 * it here, not at exit, where the thread that writes PROCEXIT
		 * need not be the last to pass (a stale entry of a dead pid
		 * is harmless: whoever gets the pid next comes by here, and
		 * the entries are as many as the processes followed).  That
		 * holds only while s is on this list: a disabled session
		 * keeps stale entries, which is why ENABLE empties the set
		 * before it publishes s (pmcring_src_enable_prepare()).  One
		 * thread (PMCRING_CFG_F_TID) is followed without descendants.
		 */
		if (st->targets && !thread) {
			if (!st->target_tid && pmcring_src_follows(s, parent))
				pmcring_src_target_add(s, tgid);
			else if (xa_load(st->targets, tgid))
				pmcring_src_target_del(st, tgid);
		}
		/* The parent (current) too: its dumpability is the child's. */
		if (pmcring_src_follows(s, parent) &&
		    pmcring_src_follows(s, child))
			pmcring_src_fork_records(s, parent, child, thread);
	}
	rcu_read_unlock();
}

static void pmcring_src_probe_exec(void *data, struct task_struct *p,
				   pid_t old_pid, struct linux_binprm *bprm)
{
	struct pmcring_rec_proc_create rec = { };
	struct pmcring_session *s;

	/* No early return on the wanted types: revocation is for everyone. */
	pmcring_src_comm(rec.pl_pcomm, p);
	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		/*
		 * In the set, not pmcring_src_follows(): that already says no
		 * for the non-dumpable image this probe must revoke.
		 */
		if (!pmcring_src_in_set(s, p) || pmcring_src_exec_revoke(s, p))
			continue;
		/* PROCEXEC and MAP_IN of the new image */
		pmcring_src_map_exec(s, p, bprm);
		rec.pl_pid = pmcring_src_pid(s, p);
		if (pmcring_session_wants(s, PMCRING_TYPE_PROC_CREATE))
			pmcring_src_emit(s, PMCRING_TYPE_PROC_CREATE,
					 PMCRING_SIZE_PROC_CREATE, &rec);
	}
	rcu_read_unlock();
}

/*
 * CPU time of @p's whole process, as thread_group_cputime() (not exported)
 * sums it: the threads released so far in sum_sched_runtime, the others on
 * the thread list, consistent under stats_lock (__exit_signal() moves a
 * thread from one to the other as its writer).  So whichever exiting
 * thread writes PROCEXIT, the threads still exiting beside it count.
 */
static u64 pmcring_src_group_runtime(struct task_struct *p)
{
	struct signal_struct *sig = p->signal;
	struct task_struct *t;
	unsigned int seq;
	u64 sum;

	rcu_read_lock();
	do {
		seq = read_seqbegin(&sig->stats_lock);
		sum = READ_ONCE(sig->sum_sched_runtime);
		for_each_thread(p, t)
			sum += READ_ONCE(t->se.sum_exec_runtime);
	} while (read_seqretry(&sig->stats_lock, seq));
	rcu_read_unlock();
	return sum;
}

static void pmcring_src_exit_records(struct pmcring_session *s,
				     struct task_struct *p, bool group_dead,
				     u64 runtime)
{
	struct pmcring_rec_thr_exit thr = { .pl_tid = pmcring_src_tid(s, p) };
	struct pmcring_rec_procexit pe = {
		.pl_pmcid = s->src->pmcid,
		.pl_pid = pmcring_src_pid(s, p),
		.pl_value = runtime,
	};
	struct pmcring_rec_sysexit se = { .pl_pid = pmcring_src_pid(s, p) };

	if (pmcring_session_wants(s, PMCRING_TYPE_THR_EXIT))
		pmcring_src_emit(s, PMCRING_TYPE_THR_EXIT,
				 PMCRING_SIZE_THR_EXIT, &thr);
	if (!group_dead)
		return;
	if (pmcring_session_wants(s, PMCRING_TYPE_PROCEXIT))
		pmcring_src_emit(s, PMCRING_TYPE_PROCEXIT,
				 PMCRING_SIZE_PROCEXIT, &pe);
	if (pmcring_session_wants(s, PMCRING_TYPE_SYSEXIT))
		pmcring_src_emit(s, PMCRING_TYPE_SYSEXIT,
				 PMCRING_SIZE_SYSEXIT, &se);
}

/*
 * Which exiting thread writes PROCEXIT and SYSEXIT.  do_exit() knows
 * (group_dead, from atomic_dec_and_test(&signal->live)), but before 6.16
 * the tracepoint does not pass it, and signal->live read in the probe is 0
 * for every thread that reaches it after the last decrement: threads that
 * exit together would each write them.  Of those, the first to claim the
 * process's signal_struct in a hash of claims does.
 *
 * A claim lives until no thread of the group can reach the probe any more:
 * until a thread that sees itself alone among the threads not yet past
 * exit_notify() (pmcring_src_exit_alone()) passes, or else until the group
 * leader is freed (sched_process_free), after every thread of the group
 * passed sched_process_exit.  A thread alone with no claim for its process
 * (every single-threaded process) takes none and no lock: the claims exist
 * only for threads that exit together, and leave with them, not with the
 * reap, so zombies hold none.  The claims are dropped when the free probe
 * is detached (pmcring_src_sched_detach()), so none outlives its
 * signal_struct.  A claim is allocated with GFP_ATOMIC: if that fails, the
 * thread writes as if first (a duplicate, never a loss), counted in
 * pmcring_src_exit_nomem.
 */
#define PMCRING_SRC_CLAIM_BITS	6

struct pmcring_src_claim {
	struct hlist_node		node;
	const struct signal_struct	*sig;
};

static DEFINE_RAW_SPINLOCK(pmcring_src_exit_lock);
static struct hlist_head pmcring_src_exit_claims[1 << PMCRING_SRC_CLAIM_BITS];
static unsigned int pmcring_src_exit_nclaims;	/* under the lock */
static atomic_t pmcring_src_exit_nomem = ATOMIC_INIT(0);

static struct hlist_head *pmcring_src_claim_head(const struct signal_struct *sig)
{
	return &pmcring_src_exit_claims[hash_ptr((void *)sig,
						 PMCRING_SRC_CLAIM_BITS)];
}

/* The claim of @sig, or NULL; under the lock. */
static struct pmcring_src_claim *
pmcring_src_claim_find(const struct signal_struct *sig)
{
	struct pmcring_src_claim *c;

	hlist_for_each_entry(c, pmcring_src_claim_head(sig), node)
		if (c->sig == sig)
			return c;
	return NULL;
}

/* Under the lock; the caller frees @c after unlocking. */
static void pmcring_src_claim_del(struct pmcring_src_claim *c)
{
	hlist_del(&c->node);
	WRITE_ONCE(pmcring_src_exit_nclaims, pmcring_src_exit_nclaims - 1);
}

/* Drop every claim: no exit or free probe runs. */
static void pmcring_src_claims_clear(void)
{
	struct pmcring_src_claim *c;
	struct hlist_node *tmp;
	unsigned long flags;
	HLIST_HEAD(dead);
	unsigned int i;

	raw_spin_lock_irqsave(&pmcring_src_exit_lock, flags);
	for (i = 0; i < ARRAY_SIZE(pmcring_src_exit_claims); i++)
		hlist_move_list(&pmcring_src_exit_claims[i], &dead);
	WRITE_ONCE(pmcring_src_exit_nclaims, 0);
	raw_spin_unlock_irqrestore(&pmcring_src_exit_lock, flags);
	hlist_for_each_entry_safe(c, tmp, &dead, node)
		kfree(c);
}

#ifndef PMCRING_HAVE_EXIT_GROUP_DEAD
/*
 * @p (current, signal->live 0) is the only thread of its group not yet
 * past exit_notify(): nr_threads counts the threads not yet released, and
 * a zombie leader other than @p is past it.  No thread can join: live is 0.
 */
static bool pmcring_src_exit_alone(struct task_struct *p)
{
	struct task_struct *leader = READ_ONCE(p->group_leader);
	int n = READ_ONCE(p->signal->nr_threads);

	if (leader != p && READ_ONCE(leader->exit_state))
		n--;
	return n <= 1;
}

/* True for the first caller for @sig; see above. */
static bool pmcring_src_exit_claim(struct task_struct *p)
{
	const struct signal_struct *sig = p->signal;
	struct pmcring_src_claim *c, *fresh = NULL;
	bool alone = pmcring_src_exit_alone(p), first;
	unsigned long flags;

	/* Alone, and nobody claimed before: the common case, no lock. */
	if (alone && !READ_ONCE(pmcring_src_exit_nclaims))
		return true;
	if (!alone) {
		fresh = kmalloc(sizeof(*fresh), GFP_ATOMIC | __GFP_NOWARN);
		if (!fresh)
			atomic_inc(&pmcring_src_exit_nomem);
	}
	raw_spin_lock_irqsave(&pmcring_src_exit_lock, flags);
	c = pmcring_src_claim_find(sig);
	first = !c;
	if (c && alone) {
		/* The last thread that can see it: the claim goes. */
		pmcring_src_claim_del(c);
	} else if (!c && fresh) {
		fresh->sig = sig;
		hlist_add_head(&fresh->node, pmcring_src_claim_head(sig));
		WRITE_ONCE(pmcring_src_exit_nclaims,
			   pmcring_src_exit_nclaims + 1);
		fresh = NULL;
		c = NULL;
	} else {
		c = NULL;
	}
	raw_spin_unlock_irqrestore(&pmcring_src_exit_lock, flags);
	kfree(fresh);
	kfree(c);
	return first;
}
#endif

/* The group leader is freed (RCU callback): its process is gone. */
static void pmcring_src_probe_free(void *data, struct task_struct *p)
{
	struct pmcring_src_claim *c;
	unsigned long flags;

	if (!READ_ONCE(pmcring_src_exit_nclaims) || !thread_group_leader(p))
		return;
	raw_spin_lock_irqsave(&pmcring_src_exit_lock, flags);
	c = pmcring_src_claim_find(p->signal);
	if (c)
		pmcring_src_claim_del(c);
	raw_spin_unlock_irqrestore(&pmcring_src_exit_lock, flags);
	kfree(c);
}

/*
 * Runs in the exiting thread after do_exit() decremented signal->live.
 * @group_dead: this is the last thread of its process.
 */
static void pmcring_src_exit_task(struct task_struct *p, bool group_dead)
{
	struct pmcring_session *s;
	u64 runtime = 0;
	bool summed = false;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (!pmcring_src_follows(s, p))
			continue;
		if (group_dead && !summed) {
			runtime = pmcring_src_group_runtime(p);
			summed = true;
		}
		pmcring_src_exit_records(s, p, group_dead, runtime);
	}
	rcu_read_unlock();
}

#ifdef PMCRING_HAVE_EXIT_GROUP_DEAD
static void pmcring_src_probe_exit(void *data, struct task_struct *p,
				   bool group_dead)
{
	pmcring_src_exit_task(p, group_dead);
}
#else
static void pmcring_src_probe_exit(void *data, struct task_struct *p)
{
	bool group_dead = !atomic_read(&p->signal->live);
	bool proc = pmcring_src_wanted(PMCRING_TYPE_PROCEXIT) ||
		    pmcring_src_wanted(PMCRING_TYPE_SYSEXIT);

	/* No session wants exit records: no claim, no lock taken. */
	if (!proc && !pmcring_src_wanted(PMCRING_TYPE_THR_EXIT))
		return;
	/*
	 * A thread whose decrement did not reach 0 may read 0 too: only the
	 * first claimant is the last thread.  A claim is made only while a
	 * session wants PROCEXIT or SYSEXIT; a process whose last thread
	 * exited before that is claimed by the next of its exiting threads,
	 * which then writes them once, as the last.
	 */
	if (group_dead)
		group_dead = proc && pmcring_src_exit_claim(p);
	pmcring_src_exit_task(p, group_dead);
}
#endif

/* Build-time check of every probe against the kernel's tracepoint. */
static inline void pmcring_src_tp_check(void)
{
	check_trace_callback_type_sched_switch(pmcring_src_probe_switch);
	check_trace_callback_type_sched_process_fork(pmcring_src_probe_fork);
	check_trace_callback_type_sched_process_exec(pmcring_src_probe_exec);
	check_trace_callback_type_sched_process_exit(pmcring_src_probe_exit);
	check_trace_callback_type_sched_process_free(pmcring_src_probe_free);
}

/* ---- attach / detach ---- */

struct pmcring_src_tp {
	const char		*name;
	void			*probe;
	u64			types;	/* records it writes */
	bool			tracks;	/* keeps per-pid target sets */
	struct tracepoint	*tp;
	unsigned int		refs;	/* under pmcring_src_mutex */
	bool			attached; /* until pmcring_src_sched_exit() */
};

static struct pmcring_src_tp pmcring_src_tps[] = {
	{ "sched_switch", pmcring_src_probe_switch,
	  PMCRING_SRC_T(PROCCSW), false },
	{ "sched_process_fork", pmcring_src_probe_fork,
	  PMCRING_SRC_T(PROCFORK) | PMCRING_SRC_T(THR_CREATE), true },
	{ "sched_process_exec", pmcring_src_probe_exec,
	  PMCRING_SRC_T(PROCEXEC) | PMCRING_SRC_T(PROC_CREATE) |
	  PMCRING_SRC_T(MAP_IN), true },
	/* Before sched_process_exit: no claim without its release. */
	{ "sched_process_free", pmcring_src_probe_free,
	  PMCRING_SRC_T(PROCEXIT) | PMCRING_SRC_T(THR_EXIT) |
	  PMCRING_SRC_T(SYSEXIT), true },
	{ "sched_process_exit", pmcring_src_probe_exit,
	  PMCRING_SRC_T(PROCEXIT) | PMCRING_SRC_T(THR_EXIT) |
	  PMCRING_SRC_T(SYSEXIT), true },
};

static void pmcring_src_tp_find(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pmcring_src_tps); i++)
		if (!strcmp(tp->name, pmcring_src_tps[i].name))
			pmcring_src_tps[i].tp = tp;
}

static bool pmcring_src_tp_needed(struct pmcring_session *s,
				  const struct pmcring_src_tp *t)
{
	const struct pmcring_src_state *st = s->src;

	if (!st->system_wide && !st->targets)
		return false;
	return (s->types & t->types) || (t->tracks && st->targets);
}

/*
 * The probe stays attached after its last user leaves, returning at once
 * while pmcring_src_wanted() says no session wants its records, until
 * pmcring_src_sched_detach() (probe_linger_ms later, src.c) or unload.
 */
static void pmcring_src_tp_put(struct pmcring_src_tp *t)
{
	t->refs--;
}

/* Caller holds pmcring_src_mutex. */
int pmcring_src_sched_get(struct pmcring_session *s)
{
	struct pmcring_src_tp *t;
	unsigned int i;
	int err = 0;

	pmcring_src_tp_check();
	if (!pmcring_src_tps[0].tp)
		for_each_kernel_tracepoint(pmcring_src_tp_find, NULL);
	for (i = 0; i < ARRAY_SIZE(pmcring_src_tps); i++) {
		t = &pmcring_src_tps[i];
		if (!pmcring_src_tp_needed(s, t))
			continue;
		if (!t->tp) {
			err = -ENOENT;
			break;
		}
		if (!t->attached) {
			err = tracepoint_probe_register(t->tp, t->probe, NULL);
			if (err)
				break;
			WRITE_ONCE(t->attached, true);
		}
		t->refs++;
	}
	if (!err)
		return 0;
	while (i--)
		if (pmcring_src_tp_needed(s, &pmcring_src_tps[i]))
			pmcring_src_tp_put(&pmcring_src_tps[i]);
	tracepoint_synchronize_unregister();
	return err;
}

/*
 * Caller holds pmcring_src_mutex.  Returns once no probe of ours runs any
 * more for a tracepoint it detached.
 */
void pmcring_src_sched_put(struct pmcring_session *s)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pmcring_src_tps); i++)
		if (pmcring_src_tp_needed(s, &pmcring_src_tps[i]))
			pmcring_src_tp_put(&pmcring_src_tps[i]);
	tracepoint_synchronize_unregister();
}

/*
 * Caller holds pmcring_src_mutex (or the module unloads): detach every
 * probe no enabled session uses.  With the exit and free probes gone, the
 * exit claims go too: no probe releases them any more, and a claim must not
 * outlive its signal_struct.
 */
void pmcring_src_sched_detach(void)
{
	struct pmcring_src_tp *t;
	unsigned int i;
	bool any = false;

	for (i = 0; i < ARRAY_SIZE(pmcring_src_tps); i++) {
		t = &pmcring_src_tps[i];
		if (!t->attached || t->refs)
			continue;
		WARN_ON_ONCE(tracepoint_probe_unregister(t->tp, t->probe,
							 NULL));
		WRITE_ONCE(t->attached, false);
		any = true;
	}
	if (!any)
		return;
	/* No probe of ours runs any more once this returns. */
	tracepoint_synchronize_unregister();
	for (i = 0; i < ARRAY_SIZE(pmcring_src_tps); i++)
		if (pmcring_src_tps[i].probe == pmcring_src_probe_free &&
		    pmcring_src_tps[i].attached)
			return;
	pmcring_src_claims_clear();
}

/*
 * /sys/module/pmcring/parameters/attached: the tracepoints our probes are
 * on now (the kprobes are in /sys/kernel/debug/kprobes/list), one name
 * each, space-separated, for the administrator and src_detach.  Read
 * without pmcring_src_mutex: a snapshot.
 */
static int pmcring_src_attached_get(char *buf, const struct kernel_param *kp)
{
	int n = 0;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pmcring_src_tps); i++)
		if (READ_ONCE(pmcring_src_tps[i].attached))
			n += sysfs_emit_at(buf, n, "%s%s", n ? " " : "",
					   pmcring_src_tps[i].name);
	return n + sysfs_emit_at(buf, n, "\n");
}

static const struct kernel_param_ops pmcring_src_attached_ops = {
	.get	= pmcring_src_attached_get,
};
module_param_cb(attached, &pmcring_src_attached_ops, NULL, 0444);
MODULE_PARM_DESC(attached, "Tracepoints with a probe of ours attached now");

/* Module unload: no session is left; detach every probe. */
void pmcring_src_sched_exit(void)
{
	pmcring_src_sched_detach();
}

/* The entry of the tree walk, told from the fork probe's xa_mk_value(1). */
#define PMCRING_SRC_FILLED	xa_mk_value(2)

/* Parents walked up from one process at most. */
#define PMCRING_SRC_DEPTH_MAX	4096u

/*
 * What one pass of the ENABLE walk learned: task -> "descends from the
 * target", open addressing by the task's address, valid within one RCU
 * read section (a task_struct is freed after a grace period only).  Every
 * task on a walked path gets the walk's answer (path compression), so a
 * pass costs O(processes) parent steps, not O(processes x depth): a chain
 * of 4000 processes made by an unprivileged user cost 8 million steps per
 * pass without it, with no resched point.  A full table only costs steps.
 */
struct pmcring_src_memo {
	struct task_struct	**path;		/* PMCRING_SRC_DEPTH_MAX */
	const struct task_struct **key;
	unsigned long		*in;		/* bitmap by slot */
	unsigned int		mask, used;
};

static int pmcring_src_memo_alloc(struct pmcring_src_memo *m,
				  unsigned int nr)
{
	unsigned int size = roundup_pow_of_two(2 * nr + 64);

	m->mask = size - 1;
	m->used = 0;
	m->path = kvmalloc_array(PMCRING_SRC_DEPTH_MAX, sizeof(*m->path),
				 GFP_KERNEL);
	m->key = kvcalloc(size, sizeof(*m->key), GFP_KERNEL);
	m->in = kvcalloc(BITS_TO_LONGS(size), sizeof(long), GFP_KERNEL);
	if (m->path && m->key && m->in)
		return 0;
	kvfree(m->path);
	kvfree(m->key);
	kvfree(m->in);
	return -ENOMEM;
}

static void pmcring_src_memo_free(struct pmcring_src_memo *m)
{
	kvfree(m->path);
	kvfree(m->key);
	kvfree(m->in);
}

/* Forget everything: the next pass is another RCU section. */
static void pmcring_src_memo_reset(struct pmcring_src_memo *m)
{
	memset(m->key, 0, (m->mask + 1) * sizeof(*m->key));
	m->used = 0;
}

/* The slot of @t, or of the empty slot where it would go. */
static unsigned int pmcring_src_memo_slot(const struct pmcring_src_memo *m,
					  const struct task_struct *t)
{
	unsigned int i = hash_ptr((void *)t, 32) & m->mask;

	while (m->key[i] && m->key[i] != t)
		i = (i + 1) & m->mask;
	return i;
}

static void pmcring_src_memo_put(struct pmcring_src_memo *m,
				 const struct task_struct *t, bool in)
{
	unsigned int i;

	if (m->used >= m->mask / 2 + 1)
		return;		/* half full: probes stay short */
	i = pmcring_src_memo_slot(m, t);
	if (!m->key[i]) {
		m->key[i] = t;
		m->used++;
	}
	__assign_bit(i, m->in, in);
}

/*
 * Is @p the target process or one of its descendants?  Under RCU, in the
 * RCU section of @m's pass.
 */
static bool pmcring_src_descends(struct task_struct *p, struct pid *target,
				 struct pmcring_src_memo *m)
{
	unsigned int n = 0, i;
	bool in = false;

	for (; p && !is_idle_task(p) && n < PMCRING_SRC_DEPTH_MAX; ) {
		if (task_tgid(p) == target) {
			in = true;
			break;
		}
		i = pmcring_src_memo_slot(m, p);
		if (m->key[i]) {
			in = test_bit(i, m->in);
			break;
		}
		if (p == p->real_parent || task_pid_nr(p) == 1)
			break;
		m->path[n++] = p;
		p = rcu_dereference(p->real_parent);
	}
	for (i = 0; i < n; i++)
		pmcring_src_memo_put(m, m->path[i], in);
	return in;
}

/*
 * Without CAP_PERFMON, may the session follow @p, found below its target:
 * may it follow @p and every process between @p and the target (the
 * target itself was checked with the capabilities)?  The walk stops at an
 * ancestor already followed, which passed this check when it was added
 * (the walk adds parents before their children, for_each_process() order)
 * or was forked by a followed process: one step per process, not one per
 * ancestor.  Under RCU.
 */
static bool pmcring_src_chain_ok(const struct pmcring_session *s,
				 struct task_struct *p, struct pid *target)
{
	unsigned int depth = 0;

	for (; p && task_tgid(p) != target && depth < PMCRING_SRC_DEPTH_MAX;
	     depth++) {
		if (!pmcring_src_may_follow(s, p))
			return false;
		p = rcu_dereference(p->real_parent);
		if (p && xa_load(s->src->targets, task_tgid_nr(p)))
			return true;
	}
	return p && task_tgid(p) == target;
}

/*
 * Is the process of @p (referenced) alive: has its tgid a task?  Not
 * pid_alive(p): an exec by another thread of the process releases the old
 * leader in de_thread(), before exec_update_lock is taken, and the process
 * lives on under the exec'ing thread, which transfer_pid() gave the tgid.
 * The tgid loses its last task in __unhash_process(), before free_pid()
 * can give the number to another process.  p->signal stays while @p is
 * referenced.
 */
static bool pmcring_src_proc_alive(struct task_struct *p)
{
	struct pid *tgid;
	bool alive;

	rcu_read_lock();
	tgid = task_tgid(p);
	alive = tgid && pid_has_task(tgid, PIDTYPE_TGID);
	rcu_read_unlock();
	return alive;
}

/*
 * Add @p, found by the walk, unless its process died since: the list was
 * built before the checks slept, and the number of a process reaped
 * meanwhile may be another's now.  pmcring_src_proc_alive() goes false
 * before the number is freed (__unhash_process() before free_pid()); the
 * reuser's fork probe then stores or erases the entry under the xarray's
 * lock.  So: insert (never over the probe's entry) a value of our own,
 * then test again.  Still alive after the insert (the full barrier orders
 * the two against the reaper's detach_pid() and the probe's locked
 * update): the number was not reused before the insert, and a later reuse
 * passes the fork probe, which fixes the entry.  Dead: take back our own
 * value only, with a cmpxchg that leaves an entry the probe stored
 * meanwhile.  A zombie (no live thread) has nothing left to record.  True
 * if @p's process is in the set.
 */
static bool pmcring_src_fill_add(struct pmcring_src_state *st,
				 struct task_struct *p)
{
	pid_t tgid = task_tgid_nr(p);
	struct mem_cgroup *old;
	int err;

	if (tgid <= 0 || !pmcring_src_proc_alive(p) ||
	    !atomic_read(&p->signal->live))
		return false;
	old = set_active_memcg(st->s->memcg);
	err = xa_insert(st->targets, tgid, PMCRING_SRC_FILLED, GFP_KERNEL);
	set_active_memcg(old);
	if (err)
		return err == -EBUSY;	/* the fork probe was first */
	/*
	 * Pairs with the reaper's detach_pid() of the tgid before free_pid()
	 * and the reuser's fork probe: the store above before the load below,
	 * a store-buffering pattern across the reaper, alloc_pid() and the
	 * fork probe's lockless xa_load(); pidmap_lock orders the reaper's
	 * free before the reuser's alloc (a full barrier on x86, the only
	 * architecture Kbuild builds for).
	 */
	smp_mb();
	if (pmcring_src_proc_alive(p))
		return true;
	xa_cmpxchg(st->targets, tgid, PMCRING_SRC_FILLED, NULL, GFP_KERNEL);
	return false;
}

/*
 * Check and add one process @p (referenced) found by the walk, under its
 * exec_update_lock as perf_event_open() attaches an event: an exec that
 * changes its credentials either came first, and the check sees the new
 * image, or comes after, and then the exec probe, which runs after
 * begin_new_exec() released the lock, finds @p followed and revokes it
 * (pmcring_src_exec_revoke()).  Checked without the lock, a setuid exec
 * between the check and xa_store() would find nothing to revoke and the
 * store would bring the process back.  The rwsem orders the store before
 * the probe's xa_load().  The target is checked as at CONFIGURE
 * (pmcring_src_may_trace(), which may sleep), a descendant with
 * pmcring_src_chain_ok().  True if @p was added.
 */
static bool pmcring_src_fill_one(struct pmcring_session *s,
				 struct task_struct *p)
{
	struct pmcring_src_state *st = s->src;
	bool ok = st->perfmon;

	if (down_read_killable(&p->signal->exec_update_lock))
		return false;
	if (!ok && task_tgid(p) == st->target_pid) {
		ok = pmcring_src_may_trace(s, p);
	} else if (!ok) {
		rcu_read_lock();
		ok = pmcring_src_chain_ok(s, p, st->target_pid);
		rcu_read_unlock();
	}
	if (ok)
		ok = pmcring_src_fill_add(st, p);
	up_read(&p->signal->exec_update_lock);
	return ok;
}

/*
 * Processes below the target (itself included) not in the set yet, each
 * referenced, into a kvmalloc()ed array; NULL with *@nr 0 when there are
 * none or no memory.
 */
static struct task_struct **pmcring_src_fill_list(struct pmcring_session *s,
						  unsigned int *nr)
{
	struct pmcring_src_state *st = s->src;
	struct task_struct **tasks = NULL, *p;
	unsigned int n = 0, max = 0;
	struct pmcring_src_memo m;

	*nr = 0;
	rcu_read_lock();
	for_each_process(p)
		max++;
	rcu_read_unlock();
	if (pmcring_src_memo_alloc(&m, max))
		return NULL;
	max = 0;
	rcu_read_lock();
	for_each_process(p)
		max += pmcring_src_descends(p, st->target_pid, &m) &&
		       !xa_load(st->targets, task_tgid_nr(p));
	rcu_read_unlock();
	if (!max)
		goto out;
	tasks = kvmalloc_array(max, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		goto out;
	pmcring_src_memo_reset(&m);
	rcu_read_lock();
	for_each_process(p) {
		if (n < max && pmcring_src_descends(p, st->target_pid, &m) &&
		    !xa_load(st->targets, task_tgid_nr(p))) {
			get_task_struct(p);
			tasks[n++] = p;
		}
	}
	rcu_read_unlock();
	*nr = n;
out:
	pmcring_src_memo_free(&m);
	return tasks;
}

/*
 * Add the live process tree of the target to the set of a per-pid session.
 * Called with the fork probe attached: a process forked by one already in
 * the set is added by the probe.  The walk sleeps (pmcring_src_fill_one()),
 * so a process forked meanwhile by one not yet added is in neither; the
 * walk is repeated, in rounds, until a round adds nothing new (bounded).
 * A session without CAP_PERFMON gets only the processes it may follow
 * (pmcring_src_may_follow()): at a later ENABLE or ADD_COUNTER the walk
 * runs again, and it must not bring back a process revoked at a setuid
 * exec, or take in a root shell that sudo left below the target.
 * Process context.
 */
void pmcring_src_targets_fill(struct pmcring_session *s)
{
	struct pmcring_src_state *st = s->src;
	struct task_struct **tasks, *p;
	unsigned int i, n, round;
	bool added;

	if (st->target_tid) {
		/* One thread: its process, none of the processes it made. */
		p = get_pid_task(st->target_pid, PIDTYPE_TGID);
		if (p) {
			pmcring_src_fill_one(s, p);
			put_task_struct(p);
		}
		return;
	}
	for (round = 0; round < 8; round++) {
		tasks = pmcring_src_fill_list(s, &n);
		added = false;
		for (i = 0; i < n; i++) {
			added |= pmcring_src_fill_one(s, tasks[i]);
			put_task_struct(tasks[i]);
			cond_resched();
		}
		kvfree(tasks);
		if (!added)
			break;
	}
}
