/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Record sources internals shared by src.c (sessions, permissions, hooks),
 * src_sample.c (counters, callchains), src_sched.c (tracepoints) and
 * src_map.c (mappings, synthesis).  The ring core never includes this.
 */
#ifndef _PMCRING_SRC_H
#define _PMCRING_SRC_H

#include <linux/bitops.h>
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/pid.h>
#include <linux/cpumask.h>
#include <linux/sched.h>
#include <linux/sched/coredump.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/threads.h>
#include <linux/user_namespace.h>
#include <linux/xarray.h>
#include "pmcring.h"

/* Counters one session may allocate; pmcid = index + 1, 0 = none. */
#define PMCRING_SRC_MAX_COUNTERS	8
/* CALLCHAIN depth when the configuration says 0. */
#define PMCRING_SRC_DEFAULT_DEPTH	128

struct linux_binprm;
struct pmcring_src_counter;

/* Per-session state of the sources, s->src. */
struct pmcring_src_state {
	struct pmcring_session	*s;
	/*
	 * tgids (init pid ns) followed by a PMCRING_CFG_F_PID session; NULL
	 * for other sessions.  An xarray: its memory grows with the number of
	 * processes followed, not one bit per possible pid.  Stored and erased
	 * by the fork/exec/exit probes and the tree walk (task context, the
	 * xarray's spinlock, GFP_ATOMIC: a process forked when no memory is
	 * left is not followed), read locklessly with xa_load() in any
	 * context including NMI (nodes are freed after an RCU grace period).
	 */
	struct xarray		*targets;
	/*
	 * The target process itself: checked again at ENABLE and ADD_COUNTER
	 * (ESRCH once it is gone), so a reused number is never followed.
	 */
	struct pid		*target_pid;
	/*
	 * PMCRING_CFG_F_TID: the one thread (of target_pid) whose samples and
	 * context switches are recorded; NULL otherwise.
	 */
	struct pid		*target_tid;
	/*
	 * PMCRING_CFG_F_CPUS: the CPUs whose samples and context switches are
	 * recorded, possibly offline ones; NULL for all.  Read-only once
	 * configured.
	 */
	struct cpumask		*cpus;
	/*
	 * Follow only tasks visible in the opener's pid namespace: set for a
	 * session without CAP_PERFMON whose opener is not in the initial one.
	 */
	bool			ns_only;
	bool			perfmon;	/* opener had CAP_PERFMON */
	/*
	 * The opener's user namespace if it had CAP_SYS_PTRACE there at
	 * CONFIGURE (referenced), else NULL: the namespaces in which it may
	 * read a non-dumpable mm, as pmcring_src_may_trace() lets it.
	 */
	struct user_namespace	*ptrace_ns;
	u32			depth;		/* CALLCHAIN frames, <= 512 */
	u32			nr_counters;	/* written under s->lock */
	u32			pmcid;		/* first counter's id, or 0 */
	bool			system_wide;
	/*
	 * May sample the kernel (perf_allow_kernel(): paranoid <= 1 or
	 * CAP_PERFMON, and no lockdown): else every counter is created with
	 * exclude_kernel and exclude_hv.
	 */
	bool			kernel_ok;
	bool			hooked;		/* holds hook references */
	struct pmcring_src_counter *counters[PMCRING_SRC_MAX_COUNTERS];
};

/* Record types each hook produces, for the cheap early-out. */
#define PMCRING_SRC_T(t)	PMCRING_TYPE_BIT(PMCRING_TYPE_##t)

/*
 * OR of the type masks of all enabled sessions, read locklessly by the
 * probes to leave early; src.c updates it under pmcring_src_mutex.
 */
extern u64 pmcring_src_want;

static inline bool pmcring_src_wanted(unsigned int type)
{
	return READ_ONCE(pmcring_src_want) & PMCRING_TYPE_BIT(type);
}

/*
 * pid (tgid) and tid of @t in the pid namespace of @s's opener, 0 when @t
 * is outside it: perf_event_pid() and perf_event_tid().  Any context.
 * A task's last switch-out (do_task_dead()) can come after its parent
 * reaped it, when its struct pid links are gone and __task_pid_nr_ns()
 * says 0.  In the initial namespace the numbers are the task's own
 * t->tgid and t->pid, which stay; elsewhere such a task is -1, as perf's
 * perf_event_pid_type() gives it.
 */
static inline u32 pmcring_src_pid_type(const struct pmcring_session *s,
				       struct task_struct *t,
				       enum pid_type type)
{
	u32 nr;

	if (s->pid_ns == &init_pid_ns)
		return type == PIDTYPE_PID ? t->pid : t->tgid;
	nr = __task_pid_nr_ns(t, type, s->pid_ns);
	if (!nr && !pid_alive(t))
		nr = -1;
	return nr;
}

static inline u32 pmcring_src_pid(const struct pmcring_session *s,
				  struct task_struct *t)
{
	return pmcring_src_pid_type(s, t, PIDTYPE_TGID);
}

static inline u32 pmcring_src_tid(const struct pmcring_session *s,
				  struct task_struct *t)
{
	return pmcring_src_pid_type(s, t, PIDTYPE_PID);
}

/*
 * Is task @t's process in the target set of @s?  System-wide sessions
 * have every task; per-pid sessions the tgids in their target set; others
 * none.  Any context.
 */
static inline bool pmcring_src_in_set(const struct pmcring_session *s,
				      struct task_struct *t)
{
	const struct pmcring_src_state *st = s->src;
	pid_t tgid;

	if (st->system_wide)
		return true;
	if (!st->targets)
		return false;
	tgid = task_tgid_nr(t);
	if (tgid <= 0 || !xa_load(st->targets, tgid))
		return false;
	/* Outside the opener's namespace: nothing of it, paths included. */
	return !st->ns_only || pmcring_src_pid(s, t);
}

/*
 * Does session @s follow task @t?  In its set (pmcring_src_in_set()), and,
 * for a session without CAP_PERFMON when @t is current, running an image
 * that left it dumpable.  perf removes a task's events in begin_new_exec()
 * (perf_event_exit_task()) right after set_dumpable() made a setuid image
 * non-dumpable and commit_creds(), under exec_update_lock; our exec probe
 * drops the process only later, from sched_process_exec, after the ELF
 * loader mapped the new image.  Testing the dumpability of current->mm
 * here closes that window for every record type, as perf's exit at exec
 * does, unless the opener may ptrace the mm anyway (CAP_SYS_PTRACE in the
 * mm's user namespace or above it, pmcring_src_may_trace()'s rule, kept
 * in ptrace_ns).  It also leaves out a process that made itself
 * non-dumpable (prctl(PR_SET_DUMPABLE, 0)) while it stays so, as the tree
 * walk of ENABLE does (pmcring_src_may_follow()); perf, which checks
 * dumpability at perf_event_open() and at exec only, keeps recording it.
 * Nor does it record current while its credentials fail the capability
 * rule (pmcring_src_caps_ok()): an exec of an image with file
 * capabilities grows the permitted set and leaves the process dumpable,
 * so perf keeps recording it, but ptrace no longer lets the opener read
 * it; the exec probe then detaches it (pmcring_src_exec_revoke()).
 * current->mm is NULL in a
 * kernel thread and after exit_mm() (the exit records); it is changed by
 * current itself only (exec_mmap(), exit_mm()), so reading it here, NMI
 * included, sees an mm that is not freed under us; get_dumpable() is one
 * read of mm->flags.  Another task's mm cannot be read without task_lock():
 * the callers that pass one check under its exec_update_lock instead.  Any
 * context.
 */
/*
 * Is @ns @top or a namespace below it?  cap_capable()'s walk up the user
 * namespaces, without its owner rule (stricter), for a capability the
 * opener was found to hold in @top at CONFIGURE.  Lockless, any context:
 * a task's mm holds a reference on its user_ns, and a namespace on its
 * parent.
 */
static inline bool pmcring_src_ns_within(const struct user_namespace *ns,
					 const struct user_namespace *top)
{
	if (!top)
		return false;
	while (ns->level > top->level)
		ns = ns->parent;
	return ns == top;
}

/*
 * commoncap's cap_ptrace_access_check() without its CAP_SYS_PTRACE way
 * out: does the opener (@cred) share the user namespace of @tcred and hold
 * every capability @tcred may use (cap_permitted, as for
 * PTRACE_MODE_REALCREDS)?  Pure credential compare, any context.
 */
static inline bool pmcring_src_caps_cover(const struct cred *cred,
					  const struct cred *tcred)
{
	return cred->user_ns == tcred->user_ns &&
	       cap_issubset(tcred->cap_permitted, cred->cap_permitted);
}

/*
 * May a session without CAP_PERFMON see @tcred's task by the capability
 * rule: pmcring_src_caps_cover(), or CAP_SYS_PTRACE (ptrace_ns) over the
 * task's user namespace.  Any context.
 */
static inline bool pmcring_src_caps_ok(const struct pmcring_session *s,
				       const struct cred *tcred)
{
	return pmcring_src_caps_cover(s->cred, tcred) ||
	       pmcring_src_ns_within(tcred->user_ns, s->src->ptrace_ns);
}

static inline bool pmcring_src_follows(const struct pmcring_session *s,
				       struct task_struct *t)
{
	struct mm_struct *mm;

	if (!pmcring_src_in_set(s, t))
		return false;
	if (s->src->perfmon || t != current)
		return true;
	/*
	 * current->real_cred is replaced by current only (commit_creds()),
	 * and the old one is freed after an RCU grace period, which this
	 * context (IRQ, NMI or preemption disabled) holds off.
	 */
	if (!pmcring_src_caps_ok(s, rcu_dereference_raw(t->real_cred)))
		return false;
	mm = READ_ONCE(t->mm);
	return !mm || get_dumpable(mm) == SUID_DUMP_USER ||
	       pmcring_src_ns_within(mm->user_ns, s->src->ptrace_ns);
}

/*
 * Is @t the thread of a PMCRING_CFG_F_TID session, or any thread otherwise?
 * Any context.
 */
static inline bool pmcring_src_thread_ok(const struct pmcring_src_state *st,
					 struct task_struct *t)
{
	return !st->target_tid || task_pid(t) == st->target_tid;
}

/*
 * Does @s record a sample or context switch of @t on this CPU?  Besides
 * pmcring_src_follows(): this CPU is one of PMCRING_CFG_F_CPUS and @t the
 * thread of PMCRING_CFG_F_TID.  Any context, preemption disabled.
 */
static inline bool pmcring_src_records_here(const struct pmcring_session *s,
					    struct task_struct *t)
{
	const struct pmcring_src_state *st = s->src;

	if (st->cpus && !cpumask_test_cpu(smp_processor_id(), st->cpus))
		return false;
	return pmcring_src_thread_ok(st, t);
}

/*
 * Follow @tgid from now on (per-pid sessions).  The set is XA_FLAGS_ACCOUNT:
 * its nodes are charged to the opener's memory cgroup, whoever forks.
 */
static inline void pmcring_src_target_add(struct pmcring_session *s,
					  pid_t tgid)
{
	struct mem_cgroup *old;

	if (tgid <= 0)
		return;
	old = set_active_memcg(s->memcg);
	xa_store(s->src->targets, tgid, xa_mk_value(1),
		 GFP_ATOMIC | __GFP_NOWARN);
	set_active_memcg(old);
}

static inline void pmcring_src_target_del(struct pmcring_src_state *st,
					  pid_t tgid)
{
	xa_erase(st->targets, tgid);
}

/*
 * Write one record of @type and length @len whose body (bytes 16..len-1)
 * is in @body, into this CPU's ring of @s.  Any context; preemption must
 * be disabled.
 */
void pmcring_src_emit(struct pmcring_session *s, unsigned int type, u32 len,
		      const void *body);
/* The same from process context: disables preemption itself. */
void pmcring_src_emit_task(struct pmcring_session *s, unsigned int type,
			   u32 len, const void *body);
/* A record with a trailing NUL-terminated path (PMCATTACH, PROCEXEC, MAP_IN). */
void pmcring_src_emit_path(struct pmcring_session *s, unsigned int type,
			   const void *fixed, u32 fixed_len, const char *path);

/* src.c: an integer sysctl, read through init's root; @fallback if not */
int pmcring_src_sysctl(const char *path, int fallback);
/* src.c: ptrace_may_access(@task, PTRACE_MODE_READ_REALCREDS) of the opener */
bool pmcring_src_may_trace(const struct pmcring_session *s,
			   struct task_struct *task);
/* src.c: may a session without CAP_PERFMON follow @p?  Under RCU. */
bool pmcring_src_may_follow(const struct pmcring_session *s,
			    struct task_struct *p);
/* src.c: may @s read @p's mappings?  @p's exec_update_lock held. */
bool pmcring_src_may_read(const struct pmcring_session *s,
			  struct task_struct *p);
/* src.c: a followed task exec'd a non-dumpable image; true if dropped. */
bool pmcring_src_exec_revoke(struct pmcring_session *s, struct task_struct *p);

/* src_sample.c */
int pmcring_src_sample_init(void);
void pmcring_src_sample_exit(void);
struct pmcring_src_counter *pmcring_src_counter_new(struct pmcring_session *s,
						    struct pmcring_counter *c);
void pmcring_src_counter_commit(struct pmcring_session *s,
				struct pmcring_src_counter *ctr,
				const struct pmcring_counter *c);
void pmcring_src_counter_drop(struct pmcring_src_counter *ctr);
void pmcring_src_counters_arm(struct pmcring_session *s, bool on);
void pmcring_src_counters_free(struct pmcring_session *s);

/* src_sched.c */
int pmcring_src_sched_get(struct pmcring_session *s);
void pmcring_src_sched_put(struct pmcring_session *s);
void pmcring_src_sched_exit(void);
void pmcring_src_sched_detach(void);
void pmcring_src_targets_fill(struct pmcring_session *s);

/* src_map.c */
int pmcring_src_map_init(void);
void pmcring_src_map_exit(void);
int pmcring_src_map_get(struct pmcring_session *s);
void pmcring_src_map_put(struct pmcring_session *s);
void pmcring_src_map_detach(void);
void pmcring_src_map_exec(struct pmcring_session *s, struct task_struct *t,
			  struct linux_binprm *bprm);
void pmcring_src_synthesize(struct pmcring_session *s);
int pmcring_src_exe_path(struct pmcring_session *s, struct task_struct *t,
			 char *buf, int size, const char **path);

#endif /* _PMCRING_SRC_H */
