// SPDX-License-Identifier: GPL-2.0
/*
 * Record sources: the hooks the ring core calls (configure, enable,
 * disable, add_counter, release), the permission model, and the helpers
 * every source uses to write records.
 *
 * The sources themselves live in src_sample.c (counters, CALLCHAIN),
 * src_sched.c (scheduler tracepoints) and src_map.c (mappings, the state
 * synthesized at enable).  Probes are shared by all sessions: they are
 * attached when the first session that needs them is enabled, and detached
 * probe_linger_ms after the last enabled session is disabled (or closed),
 * unless one is enabled again meanwhile; each probe walks pmcring_active
 * and writes into every session that wants the record.
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/err.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/fs_struct.h>
#include <linux/kernel.h>
#include <linux/magic.h>
#include <linux/moduleparam.h>
#include <linux/path.h>
#include <linux/pid.h>
#include <linux/pid_namespace.h>
#include <linux/ptrace.h>
#include <linux/security.h>
#include <linux/sched/coredump.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <linux/user_namespace.h>
#include <linux/workqueue.h>
#include "src.h"

/* Largest config.cpus_size: bits for 32768 CPUs (NR_CPUS is at most 8192). */
#define PMCRING_SRC_CPUS_MAX	4096u

/* Serializes hook attach/detach and pmcring_src_want. */
static DEFINE_MUTEX(pmcring_src_mutex);
/* Sessions whose probes are attached (st->hooked), under the mutex. */
static unsigned int pmcring_src_nr_hooked;

/*
 * perf detaches a tracepoint or kprobe as its last event goes
 * (perf_trace_event_unreg()); we wait probe_linger_ms first.  Attaching
 * and detaching patch kernel text (static keys, ftrace, int3 and an IPI
 * round): at every enable/disable it was needless work, and under QEMU TCG
 * it ended in "Oops: int3" in __schedule() on 6.12.  A session that follows
 * another within the linger reuses the probes; an idle machine runs none.
 */
static unsigned int probe_linger_ms = 5000;
module_param(probe_linger_ms, uint, 0644);
MODULE_PARM_DESC(probe_linger_ms,
		 "ms the probes stay attached after the last enabled session ends");

static void pmcring_src_idle(struct work_struct *work)
{
	mutex_lock(&pmcring_src_mutex);
	if (!pmcring_src_nr_hooked) {
		pmcring_src_map_detach();
		pmcring_src_sched_detach();
	}
	mutex_unlock(&pmcring_src_mutex);
}

static DECLARE_DELAYED_WORK(pmcring_src_idle_work, pmcring_src_idle);

/* Caller holds pmcring_src_mutex: the last hooked session left. */
static void pmcring_src_idle_later(void)
{
	if (!pmcring_src_nr_hooked)
		mod_delayed_work(system_wq, &pmcring_src_idle_work,
				 msecs_to_jiffies(READ_ONCE(probe_linger_ms)));
}

/* Enabled sessions wanting each record type, under pmcring_src_mutex. */
static unsigned int pmcring_src_type_refs[64];
u64 pmcring_src_want;

/* ---- records ---- */

void pmcring_src_emit(struct pmcring_session *s, unsigned int type, u32 len,
		      const void *rec)
{
	struct pmcring_ring *rb = pmcring_session_ring(s);
	struct pmcring_wr wr;
	void *dst;

	if (!rb)
		return;
	dst = pmcring_ring_reserve(rb, type, len, &wr);
	if (!dst)
		return;
	memcpy(dst + PMCRING_HEADER_SIZE, rec + PMCRING_HEADER_SIZE,
	       len - PMCRING_HEADER_SIZE);
	pmcring_ring_commit(&wr);
}

void pmcring_src_emit_task(struct pmcring_session *s, unsigned int type,
			   u32 len, const void *rec)
{
	preempt_disable();
	pmcring_src_emit(s, type, len, rec);
	preempt_enable();
}

/*
 * @fixed is a record whose first @fixed_len bytes are the header and the
 * fixed fields; @path follows, truncated to PMCRING_PATH_MAX - 1 bytes,
 * NUL-terminated, and zero padded to the 4-byte pmclog length.
 */
void pmcring_src_emit_path(struct pmcring_session *s, unsigned int type,
			   const void *fixed, u32 fixed_len, const char *path)
{
	size_t plen = strnlen(path, PMCRING_PATH_MAX - 1);
	u32 len = PMCRING_LOG_ALIGN(fixed_len + plen + 1);
	struct pmcring_ring *rb = pmcring_session_ring(s);
	struct pmcring_wr wr;
	char *dst;

	if (!rb)
		return;
	dst = pmcring_ring_reserve(rb, type, len, &wr);
	if (!dst)
		return;
	memcpy(dst + PMCRING_HEADER_SIZE, fixed + PMCRING_HEADER_SIZE,
	       fixed_len - PMCRING_HEADER_SIZE);
	memcpy(dst + fixed_len, path, plen);
	memset(dst + fixed_len + plen, 0, len - fixed_len - plen);
	pmcring_ring_commit(&wr);
}

/* ---- permissions ---- */

/*
 * Read an integer sysctl through procfs: perf_event_paranoid and
 * kptr_restrict are not exported to modules.  The path is resolved from the
 * root of the initial pid namespace's init task, never from the caller's:
 * a user who made a user and mount namespace could otherwise bind-mount a
 * file of its own over /proc/sys/kernel/... and grant itself kernel
 * addresses (the hard_perm selftest does exactly that).  @fallback, the
 * strictest value, whenever the file is not reachable or not a number.
 */
int pmcring_src_sysctl(const char *path, int fallback)
{
	struct task_struct *init;
	bool have_root = false;
	struct path root;
	struct file *f;
	char buf[16];
	loff_t pos = 0;
	ssize_t n;
	int v;

	init = get_pid_task(find_pid_ns(1, &init_pid_ns), PIDTYPE_PID);
	if (!init)
		return fallback;
	task_lock(init);
	if (init->fs) {
		get_fs_root(init->fs, &root);
		have_root = true;
	}
	task_unlock(init);
	put_task_struct(init);
	if (!have_root)
		return fallback;
	f = file_open_root(&root, path, O_RDONLY, 0);
	path_put(&root);
	if (IS_ERR(f))
		return fallback;
	n = kernel_read(f, buf, sizeof(buf) - 1, &pos);
	filp_close(f, NULL);
	if (n <= 0)
		return fallback;
	buf[n] = '\0';
	if (kstrtoint(strim(buf), 10, &v))
		return fallback;
	return v;
}

/*
 * Capability @cap of the session's opener in @ns: security_capable() on the
 * file's f_cred through file_ns_capable(), as perf_event_open() asks
 * capable() of its caller.  The LSMs see every check; the caller's own
 * credentials play no part (an fd passed to a less privileged process
 * passes the opener's rights, like a perf event fd).
 */
static bool pmcring_src_capable_ns(const struct pmcring_session *s,
				   struct user_namespace *ns, int cap)
{
	return file_ns_capable(s->file, ns, cap);
}

static bool pmcring_src_capable(const struct pmcring_session *s, int cap)
{
	return pmcring_src_capable_ns(s, &init_user_ns, cap);
}

/* perfmon_capable() of the opener. */
static bool pmcring_src_perfmon(const struct pmcring_session *s)
{
	return pmcring_src_capable(s, CAP_PERFMON) ||
	       pmcring_src_capable(s, CAP_SYS_ADMIN);
}

/* The opener's real uid and gid are all of @tcred's ids. */
static bool pmcring_src_same_ids(const struct cred *cred,
				 const struct cred *tcred)
{
	return uid_eq(cred->uid, tcred->euid) &&
	       uid_eq(cred->uid, tcred->suid) &&
	       uid_eq(cred->uid, tcred->uid) &&
	       gid_eq(cred->gid, tcred->egid) &&
	       gid_eq(cred->gid, tcred->sgid) &&
	       gid_eq(cred->gid, tcred->gid);
}

/*
 * __ptrace_may_access(task, PTRACE_MODE_READ_REALCREDS) as far as a module
 * can reproduce it (ptrace_may_access() is not exported), with the
 * opener's credentials:
 *  - the opener's real uid/gid match all of the target's ids, or it has
 *    CAP_SYS_PTRACE in the target's user namespace (ptrace_has_cap());
 *  - and the target has no mm, or it is dumpable, or the opener has
 *    CAP_SYS_PTRACE in the user namespace of that mm (which an exec of an
 *    unreadable or setuid image moves up to the initial namespace);
 *  - and commoncap's cap_ptrace_access_check(), the first LSM hook, always
 *    built in: the opener shares the target's user namespace and holds all
 *    of its permitted capabilities (pmcring_src_caps_cover()), or has
 *    CAP_SYS_PTRACE in the target's user namespace.  Without it a
 *    capability-less opener with the target's uid could record a process
 *    that holds capabilities (a daemon with ambient CAP_NET_RAW, root
 *    daemons seen from a reduced-capability container), and an opener in
 *    a user namespace of its own could record its uid outside it.
 * The other LSMs' hooks (security_ptrace_access_check() past commoncap)
 * cannot be called from a module; Documentation/permissions.rst lists
 * that gap.
 */
bool pmcring_src_may_trace(const struct pmcring_session *s,
			   struct task_struct *task)
{
	struct user_namespace *tns, *mns = NULL;
	struct mm_struct *mm;
	bool ids, caps;

	rcu_read_lock();
	ids = pmcring_src_same_ids(s->cred, __task_cred(task));
	caps = pmcring_src_caps_cover(s->cred, __task_cred(task));
	tns = get_user_ns(__task_cred(task)->user_ns);
	rcu_read_unlock();
	/* One CAP_SYS_PTRACE over the target's namespace passes both rules. */
	if (!ids || !caps) {
		if (!pmcring_src_capable_ns(s, tns, CAP_SYS_PTRACE)) {
			put_user_ns(tns);
			return false;
		}
	}
	put_user_ns(tns);
	task_lock(task);
	mm = task->mm;
	if (mm && get_dumpable(mm) != SUID_DUMP_USER)
		mns = get_user_ns(mm->user_ns);
	task_unlock(task);
	if (mns) {
		bool ok = pmcring_src_capable_ns(s, mns, CAP_SYS_PTRACE);

		put_user_ns(mns);
		return ok;
	}
	return true;
}

/*
 * May a session without CAP_PERFMON follow @p, a live process below its
 * target that the tree walk of ENABLE and ADD_COUNTER found?  Only if it
 * runs with the opener's ids, in the opener's user namespace with no
 * capability the opener lacks, and is dumpable: the part of
 * pmcring_src_may_trace() that needs no capability check, which the walk
 * cannot make (it holds rcu_read_lock(), and an LSM's capable hook may
 * audit or sleep).  So a root shell that sudo left below the target, or a
 * setuid child, is not followed, and nor is anything below it; perf's
 * inherited events reach only children forked after perf_event_open(),
 * and leave them at a setuid exec.  Under RCU.
 */
bool pmcring_src_may_follow(const struct pmcring_session *s,
			    struct task_struct *p)
{
	struct mm_struct *mm;
	bool ok;

	if (!pmcring_src_same_ids(s->cred, __task_cred(p)) ||
	    !pmcring_src_caps_cover(s->cred, __task_cred(p)))
		return false;
	task_lock(p);
	mm = p->mm;
	ok = mm && get_dumpable(mm) == SUID_DUMP_USER;
	task_unlock(p);
	return ok;
}

/*
 * May @s read the state of @p it follows (comm, mappings, executable) at
 * ENABLE, as /proc/PID/maps is read through mm_access()?  The caller holds
 * @p's exec_update_lock, so that an exec that changes its credentials is
 * either not begun or past setup_new_exec(): the mm and the dumpability
 * seen are of one image.  A session without CAP_PERFMON must still pass
 * the check that put @p in the set: pmcring_src_may_trace() for the target
 * (may sleep), pmcring_src_may_follow() below it.
 */
bool pmcring_src_may_read(const struct pmcring_session *s,
			  struct task_struct *p)
{
	bool ok;

	lockdep_assert_held(&p->signal->exec_update_lock);
	if (s->src->perfmon)
		return true;
	if (task_tgid(p) == s->src->target_pid)
		return pmcring_src_may_trace(s, p);
	rcu_read_lock();
	ok = pmcring_src_may_follow(s, p);
	rcu_read_unlock();
	return ok;
}

/*
 * What a per-pid target must pass, at CONFIGURE and again at each step that
 * widens what is recorded (ENABLE, ADD_COUNTER), with the opener's
 * credentials: a live user process the opener may trace.
 */
static int pmcring_src_target_check(const struct pmcring_session *s,
				    struct task_struct *task, int paranoid,
				    bool privileged)
{
	if (task->flags & PF_KTHREAD)
		return -EINVAL;
	if (!atomic_read(&task->signal->live))
		return -ESRCH;		/* every thread exited: a zombie */
	if (!privileged && (paranoid > 2 || !pmcring_src_may_trace(s, task)))
		return -EACCES;
	return 0;
}

/*
 * PMCRING_CFG_F_PIDFD: is @fd a pidfd of @pid (referenced by the caller)?
 * 0, -EBADF (not a pidfd) or -ESRCH (a pidfd of another process: the
 * number was reused after the caller took the pidfd).
 *
 * No helper that reads a pidfd is exported to modules: neither
 * pidfd_get_pid() nor pidfd_pid(), nor pidfd_fops (6.1) or pidfs's file
 * operations (6.12) to compare f_op with (Module.symvers of both).  So the
 * file is never read as a pid.  It must carry the marks of a pidfd -- up
 * to 6.8 an anonymous inode file named "[pidfd]" (pidfd_create()'s
 * anon_inode_getfile(), the struct pid in private_data); from 6.9 a pidfs
 * inode (PID_FS_MAGIC, the struct pid in i_private) -- and that pointer
 * must equal @pid.  It is compared, never dereferenced: a file that only
 * looked like a pidfd could at worst fail the comparison, and equality
 * means the file holds the very struct pid the number resolved to.
 */
static int pmcring_src_pidfd_is(int fd, struct pid *pid)
{
	struct file *f = fget(fd);
	struct inode *inode;
	int err = -EBADF;

	if (!f)
		return -EBADF;
	inode = file_inode(f);
#ifdef PID_FS_MAGIC
	if (inode->i_sb->s_magic == PID_FS_MAGIC)
		err = READ_ONCE(inode->i_private) == pid ? 0 : -ESRCH;
#endif
	/* An anonymous inode's pseudo dentry is never renamed. */
	if (err == -EBADF && inode->i_sb->s_magic == ANON_INODE_FS_MAGIC &&
	    !strcmp(f->f_path.dentry->d_name.name, "[pidfd]"))
		err = READ_ONCE(f->private_data) == pid ? 0 : -ESRCH;
	fput(f);
	return err;
}

/*
 * config.pid, a number in the opener's pid namespace (not the caller's), to
 * the struct pid of its process, with the checks; with @pidfd >= 0 the
 * pidfd must name the same struct pid as the number.
 */
static int pmcring_src_target(const struct pmcring_session *s, pid_t nr,
			      int pidfd, int paranoid, bool privileged,
			      struct pid **tpid, struct pid **ttid)
{
	struct task_struct *task;
	struct pid *npid;
	int err;

	if (nr <= 0)
		return -EINVAL;
	rcu_read_lock();
	npid = get_pid(find_pid_ns(nr, s->pid_ns));
	rcu_read_unlock();
	task = get_pid_task(npid, PIDTYPE_PID);
	err = -ESRCH;
	if (!task)
		goto out_pid;
	err = 0;
	if (pidfd >= 0)
		err = pmcring_src_pidfd_is(pidfd, npid);
	/*
	 * With TID the number is a thread's, but pidfd_open() before 6.9
	 * takes only a process (its leader): a pidfd of the thread's process
	 * proves the number too.  Compared, never dereferenced.
	 */
	if (err == -ESRCH && ttid)
		err = pmcring_src_pidfd_is(pidfd, task_tgid(task));
	if (!err)
		err = pmcring_src_target_check(s, task, paranoid, privileged);
	if (!err) {
		*tpid = get_task_pid(task, PIDTYPE_TGID);
		if (ttid)
			*ttid = get_task_pid(task, PIDTYPE_PID);
	}
	put_task_struct(task);
out_pid:
	put_pid(npid);
	return err;
}

/*
 * config.cpus of PMCRING_CFG_F_CPUS into @mask: a bitmap of u64 words, at
 * least one CPU, none at or beyond nr_cpu_ids (offline ones are fine: the
 * counters follow hotplug).
 */
static int pmcring_src_get_cpus(const struct pmcring_config *cfg,
				struct cpumask *mask)
{
	u64 __user *ucpus = u64_to_user_ptr(cfg->cpus);
	unsigned int i, bit;
	u64 word;

	if (!cfg->cpus || !cfg->cpus_size || cfg->cpus_size % 8)
		return -EINVAL;
	if (cfg->cpus_size > PMCRING_SRC_CPUS_MAX)
		return -E2BIG;
	cpumask_clear(mask);
	for (i = 0; i < cfg->cpus_size / 8; i++) {
		if (get_user(word, ucpus + i))
			return -EFAULT;
		for (bit = 0; bit < 64; bit++) {
			if (!(word & BIT_ULL(bit)))
				continue;
			if (i * 64 + bit >= nr_cpu_ids)
				return -EINVAL;
			cpumask_set_cpu(i * 64 + bit, mask);
		}
	}
	return cpumask_empty(mask) ? -EINVAL : 0;
}

/*
 * ENABLE and ADD_COUNTER: the target is still the process CONFIGURE
 * checked (a struct pid, never a number: a reused number is a new struct
 * pid), and the opener may still trace it.  ESRCH once it is gone.
 */
static int pmcring_src_target_recheck(struct pmcring_session *s)
{
	struct pmcring_src_state *st = s->src;
	struct task_struct *task;
	int paranoid, err;

	if (!st->target_pid)
		return 0;
	/* PMCRING_CFG_F_TID: that thread, which may end before its process. */
	if (st->target_tid) {
		task = get_pid_task(st->target_tid, PIDTYPE_PID);
		if (!task)
			return -ESRCH;
		put_task_struct(task);
	}
	task = get_pid_task(st->target_pid, PIDTYPE_TGID);
	if (!task)
		return -ESRCH;
	paranoid = pmcring_src_sysctl("/proc/sys/kernel/perf_event_paranoid", 3);
	err = pmcring_src_target_check(s, task, paranoid,
				       pmcring_src_perfmon(s));
	put_task_struct(task);
	return err;
}

/*
 * What the session may see of the kernel, from the sysctls and lockdown as
 * they are now.  perf decides at each perf_event_open(), so CONFIGURE,
 * ADD_COUNTER (a new counter, where perf would open an event) and ENABLE
 * all call this: a raised perf_event_paranoid or kptr_restrict, or a
 * lockdown since, applies from the next of them on.  A counter made before
 * keeps its exclude_kernel, but the samplers test kernel_ok and kaddr_ok
 * at every sample (stricter than perf, whose open events keep sampling).
 * The samplers read both locklessly.
 */
static void pmcring_src_kernel_perms(struct pmcring_session *s,
				     struct pmcring_src_state *st)
{
	int paranoid, kptr;
	bool locked;

	paranoid = pmcring_src_sysctl("/proc/sys/kernel/perf_event_paranoid", 3);
	kptr = pmcring_src_sysctl("/proc/sys/kernel/kptr_restrict", 2);
	/* -EPERM under lockdown=confidentiality (LOCKDOWN_PERF) */
	locked = security_locked_down(LOCKDOWN_PERF) != 0;
	/*
	 * perf_allow_kernel(): kernel-mode samples need paranoid <= 1 or
	 * CAP_PERFMON.  Under lockdown nobody gets kernel samples or
	 * addresses, whatever the capabilities (stricter than perf, which
	 * only refuses PERF_SAMPLE_REGS_INTR then).
	 */
	WRITE_ONCE(st->kernel_ok, !locked && (st->perfmon || paranoid <= 1));
	/* perf_allow_kernel() and kallsyms_show_value() together. */
	WRITE_ONCE(s->kaddr_ok, !locked &&
		   (st->perfmon ||
		    (kptr < 2 && pmcring_src_capable(s, CAP_SYSLOG)) ||
		    (kptr == 0 && paranoid <= 1)));
}

/*
 * The callchain depth of a session, as perf_event_open() takes
 * sample_max_stack: 0 asks for the default, and more than
 * perf_event_max_stack is EOVERFLOW (get_callchain_buffers()), for
 * everyone: the sysctl is the administrator's bound on the frames walked
 * in NMI.  The default is perf's, perf_event_max_stack, at most 128.
 */
static int pmcring_src_depth(u32 depth, u32 *out)
{
	int max = pmcring_src_sysctl("/proc/sys/kernel/perf_event_max_stack",
				     PMCRING_SRC_DEFAULT_DEPTH);

	if (max < 1)
		max = 1;
	if (depth > max)
		return -EOVERFLOW;
	*out = depth ? : min_t(u32, max, PMCRING_SRC_DEFAULT_DEPTH);
	return 0;
}

int pmcring_src_configure(struct pmcring_session *s,
			  const struct pmcring_config *cfg)
{
	struct pid *tpid = NULL, *ttid = NULL;
	struct cpumask *cpus = NULL;
	struct pmcring_src_state *st;
	int paranoid, err;
	bool privileged;
	u32 depth;

	if ((cfg->flags & PMCRING_CFG_F_SYSTEM_WIDE) &&
	    (cfg->flags & PMCRING_CFG_F_PID))
		return -EINVAL;
	/* A CPU list narrows a system-wide session, a thread a per-pid one. */
	if ((cfg->flags & PMCRING_CFG_F_CPUS) &&
	    !(cfg->flags & PMCRING_CFG_F_SYSTEM_WIDE))
		return -EINVAL;
	if ((cfg->flags & PMCRING_CFG_F_TID) && !(cfg->flags & PMCRING_CFG_F_PID))
		return -EINVAL;
	if (!(cfg->flags & PMCRING_CFG_F_CPUS) && (cfg->cpus || cfg->cpus_size))
		return -EINVAL;
	if (cfg->callchain_depth > PMCRING_CALLCHAIN_DEPTH_MAX)
		return -EINVAL;
	err = pmcring_src_depth(cfg->callchain_depth, &depth);
	if (err)
		return err;
	paranoid = pmcring_src_sysctl("/proc/sys/kernel/perf_event_paranoid", 3);
	privileged = pmcring_src_perfmon(s);
	if ((cfg->flags & PMCRING_CFG_F_SYSTEM_WIDE) && !privileged)
		return -EACCES;
	if (cfg->flags & PMCRING_CFG_F_CPUS) {
		cpus = kmalloc(cpumask_size(), GFP_KERNEL);
		if (!cpus)
			return -ENOMEM;
		err = pmcring_src_get_cpus(cfg, cpus);
		if (err)
			goto err_cpus;
	}
	if (cfg->flags & PMCRING_CFG_F_PID) {
		err = pmcring_src_target(s, cfg->pid,
					 cfg->flags & PMCRING_CFG_F_PIDFD ?
					 cfg->pidfd : -1, paranoid, privileged,
					 &tpid, cfg->flags & PMCRING_CFG_F_TID ?
					 &ttid : NULL);
		if (err)
			goto err_cpus;
	}

	err = -ENOMEM;
	st = kzalloc(sizeof(*st), GFP_KERNEL);
	if (!st)
		goto err_pid;
	if (tpid) {
		st->targets = kmalloc(sizeof(*st->targets), GFP_KERNEL);
		if (!st->targets)
			goto err_st;
		/* Charged to the opener's memcg (pmcring_src_target_add()). */
		xa_init_flags(st->targets, XA_FLAGS_ACCOUNT);
	}
	st->s = s;
	st->target_pid = tpid;
	st->target_tid = ttid;
	st->cpus = cpus;
	st->ns_only = !privileged && s->pid_ns != &init_pid_ns;
	st->perfmon = privileged;
	if (!privileged &&
	    pmcring_src_capable_ns(s, s->cred->user_ns, CAP_SYS_PTRACE))
		st->ptrace_ns = get_user_ns(s->cred->user_ns);
	st->system_wide = cfg->flags & PMCRING_CFG_F_SYSTEM_WIDE;
	st->depth = depth;
	pmcring_src_kernel_perms(s, st);
	pmcring_src_release(s);	/* frees targets too, not just st */
	s->src = st;
	return 0;

err_st:
	kfree(st);
err_pid:
	put_pid(ttid);
	put_pid(tpid);
err_cpus:
	kfree(cpus);
	return err;
}

/*
 * Revocation at exec, as perf's: begin_new_exec() calls
 * perf_event_exit_task() when the new image leaves the task non-dumpable
 * (setuid, setgid, an unreadable image).  Stricter than perf, a task whose
 * new image gave it capabilities the opener lacks (file capabilities,
 * which leave it dumpable) fails the ptrace rule too (pmcring_src_caps_ok())
 * and is dropped the same way.  A session
 * without CAP_PERFMON stops following such a task from this exec on: no
 * PROCEXEC, MAP_IN, samples, switches or exit of it, nor of the children it
 * forks.  One PMCDETACH record with its pid marks the drop.  From the exec
 * tracepoint (p == current, under rcu_read_lock()), after the new
 * credentials were committed.
 */
bool pmcring_src_exec_revoke(struct pmcring_session *s, struct task_struct *p)
{
	struct pmcring_src_state *st = s->src;
	struct pmcring_rec_pmcdetach rec = {
		.pl_pmcid = st->pmcid,
		.pl_pid = pmcring_src_pid(s, p),
	};
	pid_t tgid = task_tgid_nr(p);

	if (st->perfmon || !st->targets || !p->mm)
		return false;
	if (get_dumpable(p->mm) == SUID_DUMP_USER &&
	    pmcring_src_caps_ok(s, rcu_dereference(p->real_cred)))
		return false;
	/* The samplers test the bit locklessly; they see it clear from now. */
	pmcring_src_target_del(st, tgid);
	if (pmcring_session_wants(s, PMCRING_TYPE_PMCDETACH))
		pmcring_src_emit(s, PMCRING_TYPE_PMCDETACH,
				 PMCRING_SIZE_PMCDETACH, &rec);
	return true;
}

/* ---- enable / disable ---- */

static void pmcring_src_want_update(u64 types, int delta)
{
	u64 want = 0;
	int t;

	for (t = 0; t < 64; t++) {
		if (types & BIT_ULL(t))
			pmcring_src_type_refs[t] += delta;
		if (pmcring_src_type_refs[t])
			want |= BIT_ULL(t);
	}
	WRITE_ONCE(pmcring_src_want, want);
}

static void pmcring_src_attach_record(struct pmcring_session *s,
				      unsigned int type)
{
	struct pmcring_src_state *st = s->src;
	struct pmcring_rec_pmcattach rec = {
		.pl_pid = pid_nr_ns(st->target_pid, s->pid_ns),
	};
	struct task_struct *task;
	const char *path = "";
	char *buf = NULL;
	u32 i, n = max(st->nr_counters, 1u);

	if (!pmcring_session_wants(s, type))
		return;
	if (type == PMCRING_TYPE_PMCATTACH) {
		buf = kmalloc(PATH_MAX, GFP_KERNEL);
		task = get_pid_task(st->target_pid, PIDTYPE_TGID);
		if (task && buf)
			pmcring_src_exe_path(s, task, buf, PATH_MAX, &path);
		if (task)
			put_task_struct(task);
	}
	for (i = 0; i < n; i++) {
		rec.pl_pmcid = st->nr_counters ? i + 1 : 0;
		if (type == PMCRING_TYPE_PMCATTACH) {
			preempt_disable();
			pmcring_src_emit_path(s, type, &rec,
					      PMCRING_SIZE_PMCATTACH_MIN, path);
			preempt_enable();
		} else {
			pmcring_src_emit_task(s, type, PMCRING_SIZE_PMCDETACH,
					      &rec);
		}
	}
	kfree(buf);
}

/*
 * ENABLE, before the session goes on pmcring_active: recheck the target
 * and forget the follow set.  While the session is off the list no probe
 * touches the set, so the fork probe never dropped the entry of a process
 * that died since the last enable (or since an ADD_COUNTER before the
 * first), and its pid may belong to anyone by now.  Emptied after the
 * session is published, the probes would record that process's switches,
 * execs, maps and forks until the xa_destroy(): this must come first.  The
 * tree is added again by pmcring_src_enable() once the fork probe is on.
 */
int pmcring_src_enable_prepare(struct pmcring_session *s)
{
	struct pmcring_src_state *st = s->src;
	int err;

	if (!st)
		return -EINVAL;
	err = pmcring_src_target_recheck(s);
	if (err)
		return err;
	pmcring_src_kernel_perms(s, st);
	if (st->targets)
		xa_destroy(st->targets);
	return 0;
}

int pmcring_src_enable(struct pmcring_session *s)
{
	struct pmcring_src_state *st = s->src;
	int err;

	if (!st)
		return -EINVAL;
	mutex_lock(&pmcring_src_mutex);
	err = pmcring_src_sched_get(s);
	if (err)
		goto err_unlock;
	err = pmcring_src_map_get(s);
	if (err)
		goto err_sched;
	pmcring_src_want_update(s->types, 1);
	st->hooked = true;
	pmcring_src_nr_hooked++;
	mutex_unlock(&pmcring_src_mutex);

	/* After the fork probe is on: no descendant can slip through. */
	if (st->targets)
		pmcring_src_targets_fill(s);
	if (st->target_pid)
		pmcring_src_attach_record(s, PMCRING_TYPE_PMCATTACH);
	if (!(s->flags & PMCRING_CFG_F_NO_SYNTH))
		pmcring_src_synthesize(s);
	pmcring_src_counters_arm(s, true);
	return 0;

err_sched:
	pmcring_src_sched_put(s);
err_unlock:
	pmcring_src_idle_later();	/* what did attach */
	mutex_unlock(&pmcring_src_mutex);
	return err;
}

void pmcring_src_disable(struct pmcring_session *s)
{
	struct pmcring_src_state *st = s->src;

	if (!st || !st->hooked)
		return;
	pmcring_src_counters_arm(s, false);
	mutex_lock(&pmcring_src_mutex);
	pmcring_src_want_update(s->types, -1);
	pmcring_src_map_put(s);
	pmcring_src_sched_put(s);
	st->hooked = false;
	pmcring_src_nr_hooked--;
	pmcring_src_idle_later();
	mutex_unlock(&pmcring_src_mutex);
	/*
	 * Off pmcring_active since the caller's synchronize_rcu(), so the
	 * fork probe no longer drops the entries of processes that die:
	 * forget them now, lest an ADD_COUNTER while disabled put counters
	 * on whatever process gets one of their pids (its thread walk
	 * trusts the set).  The counters' overflow handlers are disarmed,
	 * and xa_load() is safe against xa_destroy() (RCU-freed nodes).
	 */
	if (st->targets)
		xa_destroy(st->targets);
	if (st->target_pid)
		pmcring_src_attach_record(s, PMCRING_TYPE_PMCDETACH);
}

long pmcring_src_add_counter(struct pmcring_session *s,
			     struct pmcring_counter __user *arg)
{
	struct pmcring_src_state *st = s->src;
	struct pmcring_src_counter *ctr;
	struct pmcring_counter c;
	int err;

	if (!st)
		return -EINVAL;
	err = pmcring_src_target_recheck(s);
	if (err)
		return err;
	pmcring_src_kernel_perms(s, st);
	if (copy_from_user(&c, arg, sizeof(c)))
		return -EFAULT;
	/*
	 * Disabled, no probe keeps the follow set: the entry of a process
	 * that died since the last walk may name another process by now, and
	 * the counter's walk would put events on it.  Walk afresh.
	 */
	if (!st->hooked && st->targets)
		xa_destroy(st->targets);
	ctr = pmcring_src_counter_new(s, &c);
	if (IS_ERR(ctr))
		return PTR_ERR(ctr);
	/* All or nothing: a caller that cannot learn the id gets no counter. */
	if (put_user(c.pmcid, &arg->pmcid)) {
		pmcring_src_counter_drop(ctr);
		return -EFAULT;
	}
	pmcring_src_counter_commit(s, ctr, &c);
	return 0;
}

void pmcring_src_release(struct pmcring_session *s)
{
	struct pmcring_src_state *st = s->src;

	if (!st)
		return;
	pmcring_src_counters_free(s);
	put_pid(st->target_tid);
	put_pid(st->target_pid);
	put_user_ns(st->ptrace_ns);
	kfree(st->cpus);
	if (st->targets)
		xa_destroy(st->targets);
	kfree(st->targets);
	kfree(st);
	s->src = NULL;
}

int pmcring_src_init(void)
{
	int err;

	err = pmcring_src_sample_init();
	if (err)
		return err;
	err = pmcring_src_map_init();
	if (err)
		goto err_sample;
	return 0;

err_sample:
	pmcring_src_sample_exit();
	return err;
}

void pmcring_src_exit(void)
{
	/* No session is left: the worker does nothing more, or ran. */
	cancel_delayed_work_sync(&pmcring_src_idle_work);
	pmcring_src_sched_exit();
	pmcring_src_map_exit();
	pmcring_src_sample_exit();
}
