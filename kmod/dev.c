// SPDX-License-Identifier: GPL-2.0
/*
 * /dev/pmcring: the misc device; each open() is an independent session.
 *
 * Session life: open -> CONFIGURE (once: one ring per online CPU) ->
 * ENABLE/DISABLE (any number of times) -> release.  A CPU that comes online
 * later gets its ring from a CPU hotplug callback; a CPU that goes offline
 * keeps its ring and its records.  A possible CPU that was never online
 * since CONFIGURE has no ring: mmap() of its region is ENODEV.  A
 * VMA of a mapped ring holds a reference on the struct file, so release (which frees
 * the rings) runs only after the last mapping is gone; the file operations'
 * .owner pins the module for as long as a session or mapping lives, which
 * makes rmmod fail instead of freeing code still in use.
 *
 * mmap layout and the poll() contract are in uapi/linux/pmcring.h.  Pages are
 * inserted on fault (like perf's perf_mmap_fault()): region page 0 is the
 * control page, 1 the producer page, 2 + i the data page i % data_pages.
 */
#include <linux/module.h>
#include <linux/miscdevice.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/poll.h>
#include <linux/slab.h>
#include <linux/cred.h>
#include <linux/pid_namespace.h>
#include <linux/sched/mm.h>
#include <linux/sched/user.h>
#include <linux/capability.h>
#include <linux/uaccess.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/memcontrol.h>
#include <linux/log2.h>
#include <linux/timekeeping.h>
#include "core.h"

LIST_HEAD(pmcring_active);
/* Serializes writers of pmcring_active (sessions enabling, disabling). */
static DEFINE_MUTEX(pmcring_active_lock);

/*
 * Pages of the rings of all sessions.  Ring pages are in no process's RSS:
 * without a global budget, sessions could take all memory and leave the OOM
 * killer to shoot bystanders (hard_lifecycle's exhaustion test).  All
 * sessions together get at most half of RAM, like one session alone.
 *
 * Of that budget one user (the opener's real uid) gets at most half,
 * unless the opener has CAP_IPC_LOCK: RLIMIT_MEMLOCK is per process, so a
 * user with many processes could otherwise take the whole budget and make
 * every other user's CONFIGURE fail with ENOMEM (perm_share).  The pages
 * of each user are in pmcring_user_pages, by uid, under pmcring_user_lock
 * (process context only: CONFIGURE, release, the hotplug callback).
 */
static atomic_long_t pmcring_pages_used = ATOMIC_LONG_INIT(0);
static DEFINE_XARRAY(pmcring_user_pages);
static DEFINE_MUTEX(pmcring_user_lock);

/* Pages of a session whose every possible CPU has a ring. */
static unsigned long pmcring_session_pages(u32 data_pages)
{
	return (unsigned long)nr_cpu_ids * (PMCRING_META_PAGES + data_pages);
}

/* Pages of the rings of @nr CPUs. */
static unsigned long pmcring_rings_pages(u32 data_pages, unsigned int nr)
{
	return (unsigned long)nr * (PMCRING_META_PAGES + data_pages);
}

static unsigned long pmcring_user_key(const struct pmcring_session *s)
{
	return __kuid_val(s->cred->user->uid);
}

static int pmcring_pages_charge(struct pmcring_session *s, unsigned long pages)
{
	unsigned long key = pmcring_user_key(s), mine;
	int err = -ENOMEM;

	mutex_lock(&pmcring_user_lock);
	mine = xa_to_value(xa_load(&pmcring_user_pages, key) ? :
			   xa_mk_value(0));
	if (mine + pages > totalram_pages() / 4 &&
	    !file_ns_capable(s->file, &init_user_ns, CAP_IPC_LOCK))
		goto out;
	if (atomic_long_add_return(pages, &pmcring_pages_used) >
	    totalram_pages() / 2)
		goto err_global;
	err = xa_err(xa_store(&pmcring_user_pages, key,
			      xa_mk_value(mine + pages), GFP_KERNEL));
	if (!err)
		goto out;
err_global:
	atomic_long_sub(pages, &pmcring_pages_used);
out:
	mutex_unlock(&pmcring_user_lock);
	return err;
}

static void pmcring_pages_uncharge(struct pmcring_session *s,
				   unsigned long pages)
{
	unsigned long key = pmcring_user_key(s), mine;

	if (!pages)
		return;
	mutex_lock(&pmcring_user_lock);
	mine = xa_to_value(xa_load(&pmcring_user_pages, key) ? :
			   xa_mk_value(0));
	if (WARN_ON_ONCE(mine < pages))
		mine = pages;
	if (mine == pages)
		xa_erase(&pmcring_user_pages, key);
	else
		/* Replaces an entry: no allocation. */
		xa_store(&pmcring_user_pages, key, xa_mk_value(mine - pages),
			 GFP_KERNEL);
	atomic_long_sub(pages, &pmcring_pages_used);
	mutex_unlock(&pmcring_user_lock);
}

/*
 * Locked memory, as perf_mmap() charges a ring buffer: each user may pin
 * mlock_kb KiB per online CPU (perf_event_mlock_kb) in user->locked_vm, the
 * counter perf, io_uring and BPF share; what goes beyond is charged to
 * the CONFIGURE caller's mm->locked_vm against its RLIMIT_MEMLOCK, unless
 * the opener has CAP_IPC_LOCK.  Over the limit CONFIGURE fails with EPERM.
 */
static unsigned int mlock_kb = 512 + (PAGE_SIZE / 1024);
module_param(mlock_kb, uint, 0644);
MODULE_PARM_DESC(mlock_kb,
		 "KiB per online CPU each user may lock in rings before RLIMIT_MEMLOCK applies (perf_event_mlock_kb)");

static int pmcring_mlock_charge(struct pmcring_session *s, unsigned long pages)
{
	unsigned long limit = (unsigned long)(READ_ONCE(mlock_kb) >>
					      (PAGE_SHIFT - 10)) *
			      num_online_cpus();
	struct user_struct *user = s->cred->user;
	struct mm_struct *mm = current->mm;
	unsigned long locked, extra = 0;
	bool ipc_lock;
	int err;

	/* Racy against other sessions of the user, as perf_mmap() is. */
	locked = min_t(unsigned long, atomic_long_read(&user->locked_vm), limit);
	if (locked + pages > limit)
		extra = locked + pages - limit;
	if (extra) {
		if (!mm)
			return -EPERM;
		ipc_lock = file_ns_capable(s->file, &init_user_ns, CAP_IPC_LOCK);
		mmap_write_lock(mm);
		err = __account_locked_vm(mm, extra, true, current, ipc_lock);
		mmap_write_unlock(mm);
		if (err)
			return -EPERM;
		mmgrab(mm);
		s->mm = mm;
		s->mm_pages = extra;
	}
	s->user_pages = pages - extra;
	atomic_long_add(s->user_pages, &user->locked_vm);
	s->user = get_uid(user);
	return 0;
}

static void pmcring_mlock_uncharge(struct pmcring_session *s)
{
	if (s->user) {
		atomic_long_sub(s->user_pages, &s->user->locked_vm);
		free_uid(s->user);
		s->user = NULL;
	}
	if (s->mm) {
		/* An mm whose users are gone has no locked_vm left to fix. */
		if (mmget_not_zero(s->mm)) {
			account_locked_vm(s->mm, s->mm_pages, false);
			mmput(s->mm);
		}
		mmdrop(s->mm);
		s->mm = NULL;
	}
}

/* Before 6.3 (feature test in Kbuild). */
#ifndef PMCRING_HAVE_VM_FLAGS_SET
static inline void vm_flags_set(struct vm_area_struct *vma, vm_flags_t flags)
{
	vma->vm_flags |= flags;
}

static inline void vm_flags_clear(struct vm_area_struct *vma,
				  vm_flags_t flags)
{
	vma->vm_flags &= ~flags;
}
#endif

/* Rings of @s, or NULL before CONFIGURE. */
static struct pmcring_ring **pmcring_dev_rings(struct pmcring_session *s)
{
	/* Pairs with smp_store_release() in pmcring_dev_configure(). */
	return smp_load_acquire(&s->rings);
}

/*
 * The ring of @cpu (< nr_cpu_ids) in @rings, NULL if the CPU has not been
 * online since CONFIGURE.  Any CPU; a ring never goes away before the
 * session does.
 */
static struct pmcring_ring *pmcring_dev_ring(struct pmcring_ring **rings,
					     unsigned int cpu)
{
	/* Pairs with smp_store_release() in pmcring_dev_ring_add(). */
	return smp_load_acquire(&rings[cpu]);
}

/* ---- session allocation ---- */

static void pmcring_dev_free_rings(struct pmcring_ring **rings)
{
	unsigned int cpu;

	if (!rings)
		return;
	for_each_possible_cpu(cpu)
		pmcring_ring_free(rings[cpu]);
	kfree(rings);
}

/* ---- rings: one per CPU online since CONFIGURE ---- */

static int pmcring_dev_cpuhp = -1;

/*
 * Charge @pages more ring pages: the global budget, and the opener's
 * user->locked_vm.  No RLIMIT_MEMLOCK check here: a CPU that comes online
 * after CONFIGURE (or during it) does so by the administrator's hand, not
 * the session's, and refusing would only lose the CPU's records; the
 * global budget still bounds it.
 */
static int pmcring_dev_charge_late(struct pmcring_session *s,
				   unsigned long pages)
{
	int err;

	err = pmcring_pages_charge(s, pages);
	if (err)
		return err;
	s->ring_pages += pages;
	if (s->user) {
		atomic_long_add(pages, &s->user->locked_vm);
		s->user_pages += pages;
	}
	return 0;
}

static void pmcring_dev_uncharge_late(struct pmcring_session *s,
				      unsigned long pages)
{
	pmcring_pages_uncharge(s, pages);
	s->ring_pages -= pages;
	if (s->user) {
		atomic_long_sub(pages, &s->user->locked_vm);
		s->user_pages -= pages;
	}
}

/*
 * Tell every ring's producer page how many rings the session has
 * (PMCRING_PROD_F_DATA's neighbour nr_rings): a consumer that mapped fewer
 * looks for the new one.  Hotplug lock held.
 */
static void pmcring_dev_nr_rings(struct pmcring_session *s,
				 struct pmcring_ring **rings)
{
	unsigned int cpu;

	s->nr_rings++;
	for_each_possible_cpu(cpu)
		if (rings[cpu])
			pmcring_ring_set_nr_rings(rings[cpu], s->nr_rings);
}

/*
 * Data pages for @rb, charged to the opener's memory cgroup; with @late
 * also to the budgets here (else CONFIGURE charged them).  Hotplug lock
 * held.
 */
static int pmcring_dev_ring_data(struct pmcring_session *s,
				 struct pmcring_ring *rb, bool late)
{
	struct mem_cgroup *old = set_active_memcg(s->memcg);
	int err = 0;

	if (late)
		err = pmcring_dev_charge_late(s, s->data_pages);
	if (!err) {
		err = pmcring_ring_alloc_data(rb);
		if (err && late)
			pmcring_dev_uncharge_late(s, s->data_pages);
	}
	set_active_memcg(old);
	return err;
}

/*
 * A ring for @cpu in @rings, as pmcring_dev_ring_data() charges it.  With
 * @keep_meta, a ring whose data pages could not be allocated is kept
 * without them (its records are counted lost, pmcring_ring_reserve()) and
 * 0 is returned.  The hotplug lock is held (read or write), which
 * serializes the callers.
 */
static int pmcring_dev_ring_add(struct pmcring_session *s,
				struct pmcring_ring **rings, unsigned int cpu,
				bool late, bool keep_meta)
{
	struct mem_cgroup *old;
	struct pmcring_ring *rb;
	int err;

	if (late) {
		err = pmcring_dev_charge_late(s, PMCRING_META_PAGES);
		if (err)
			return err;
	}
	old = set_active_memcg(s->memcg);
	rb = pmcring_ring_alloc(s, cpu);
	set_active_memcg(old);
	err = -ENOMEM;
	if (!rb)
		goto err_charge;
	err = pmcring_dev_ring_data(s, rb, late);
	if (err && !keep_meta)
		goto err_ring;
	/*
	 * The ring initialized before the pointer; pairs with
	 * smp_load_acquire() in pmcring_dev_ring() (mmap, fault, poll).  The
	 * producer on @cpu reads it only once @cpu is online, which orders
	 * it after this store.
	 */
	smp_store_release(&rings[cpu], rb);
	pmcring_dev_nr_rings(s, rings);
	return 0;

err_ring:
	pmcring_ring_free(rb);
err_charge:
	if (late)
		pmcring_dev_uncharge_late(s, PMCRING_META_PAGES);
	return err;
}

/*
 * CPUHP_BP_PREPARE_DYN, on the control CPU before @cpu runs anything, with
 * the hotplug lock held for writing: give @cpu a ring if it has none (or
 * the data pages an earlier bring-up could not get), as perf allocates
 * per-CPU state in its prepare step.  Never fails the bring-up: without
 * memory for the data pages the CPU comes online and its records are
 * counted lost (pmcring_ring_reserve()); without even the two meta pages
 * it has no ring and records nothing (warned).  Nothing to do when a CPU
 * goes offline: its ring stays, with its records, until the session ends.
 */
static int pmcring_dev_cpu_prepare(unsigned int cpu, struct hlist_node *node)
{
	struct pmcring_session *s = hlist_entry(node, struct pmcring_session,
						cpuhp_node);
	struct pmcring_ring *rb = s->hp_rings[cpu];
	int err;

	if (!rb)
		err = pmcring_dev_ring_add(s, s->hp_rings, cpu, true, true);
	else if (!pmcring_ring_has_data(rb))
		err = pmcring_dev_ring_data(s, rb, true);
	else
		return 0;
	rb = s->hp_rings[cpu];
	if (!err && !pmcring_ring_has_data(rb))
		err = -ENOMEM;
	if (err)
		pr_warn_ratelimited("pmcring: no ring data for CPU %u (%d): its records are %s\n",
				    cpu, err, rb ? "counted lost" : "not recorded");
	return 0;
}

/*
 * Rings for every online CPU (@prepaid of them are charged), and the
 * hotplug instance for those to come.  The instance goes in first, so a
 * CPU that comes online meanwhile is served by the callback; the loop
 * runs with the hotplug lock held for reading, so never at the same time.
 */
static int pmcring_dev_rings_online(struct pmcring_session *s,
				    struct pmcring_ring **rings,
				    unsigned int prepaid)
{
	unsigned int cpu, done = 0;
	int err;

	s->hp_rings = rings;
	s->nr_rings = 0;	/* a failed CONFIGURE may have counted some */
	err = cpuhp_state_add_instance_nocalls(pmcring_dev_cpuhp,
					       &s->cpuhp_node);
	if (err)
		return err;
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		if (rings[cpu])
			continue;
		err = pmcring_dev_ring_add(s, rings, cpu, done >= prepaid,
					   false);
		if (err)
			break;
		done++;
		cond_resched();
	}
	cpus_read_unlock();
	if (err)
		cpuhp_state_remove_instance_nocalls(pmcring_dev_cpuhp,
						    &s->cpuhp_node);
	return err;
}

static int pmcring_dev_open(struct inode *inode, struct file *file)
{
	struct pmcring_session *s;

	s = kzalloc(sizeof(*s), GFP_KERNEL);
	if (!s)
		return -ENOMEM;
	mutex_init(&s->lock);
	INIT_LIST_HEAD(&s->active_node);
	init_waitqueue_head(&s->wq);
	atomic_set(&s->poll_flush, 0);
	s->cred = get_cred(file->f_cred);
	s->file = file;
	s->pid_ns = get_pid_ns(task_active_pid_ns(current));
	s->kaddr_ok = file_ns_capable(file, &init_user_ns, CAP_SYSLOG);
	file->private_data = s;
	return nonseekable_open(inode, file);
}

/* ---- ENABLE / DISABLE ---- */

static int pmcring_dev_enable(struct pmcring_session *s)
{
	int err;

	lockdep_assert_held(&s->lock);
	if (!s->configured)
		return -EINVAL;
	if (s->enabled)
		return 0;
	/* Not published yet: no probe reads the follow set it empties. */
	err = pmcring_src_enable_prepare(s);
	if (err)
		return err;

	mutex_lock(&pmcring_active_lock);
	list_add_rcu(&s->active_node, &pmcring_active);
	mutex_unlock(&pmcring_active_lock);

	err = pmcring_src_enable(s);
	if (err) {
		/* The sources undo their own partial work on failure. */
		mutex_lock(&pmcring_active_lock);
		list_del_rcu(&s->active_node);
		mutex_unlock(&pmcring_active_lock);
		synchronize_rcu();
		return err;
	}
	s->enabled = true;
	WRITE_ONCE(s->stopped, false);
	return 0;
}

static void pmcring_dev_disable(struct pmcring_session *s)
{
	lockdep_assert_held(&s->lock);
	if (!s->enabled)
		return;

	mutex_lock(&pmcring_active_lock);
	list_del_rcu(&s->active_node);
	mutex_unlock(&pmcring_active_lock);
	/* No source walking pmcring_active still sees s after this. */
	synchronize_rcu();
	pmcring_src_disable(s);

	s->enabled = false;
	WRITE_ONCE(s->stopped, true);
	wake_up_all(&s->wq);
}

static int pmcring_dev_release(struct inode *inode, struct file *file)
{
	struct pmcring_session *s = file->private_data;

	mutex_lock(&s->lock);
	pmcring_dev_disable(s);
	pmcring_src_release(s);
	mutex_unlock(&s->lock);

	if (s->configured)
		/* No hotplug callback runs for s after this. */
		cpuhp_state_remove_instance_nocalls(pmcring_dev_cpuhp,
						    &s->cpuhp_node);
	pmcring_dev_free_rings(s->rings);
	pmcring_pages_uncharge(s, s->ring_pages);
	pmcring_mlock_uncharge(s);
	mem_cgroup_put(s->memcg);
	put_cred(s->cred);
	put_pid_ns(s->pid_ns);
	mutex_destroy(&s->lock);
	kfree(s);
	return 0;
}

/* ---- ioctls ---- */

static long pmcring_dev_get_info(struct pmcring_session *s,
				 struct pmcring_info __user *arg)
{
	struct pmcring_info info = {
		.abi_version	= PMCRING_ABI_VERSION,
		.compat_version	= PMCRING_ABI_COMPAT_VERSION,
		.nr_cpus	= nr_cpu_ids,
		.page_size	= PAGE_SIZE,
		.min_data_pages	= PMCRING_MIN_DATA_PAGES,
		.max_data_pages	= PMCRING_MAX_DATA_PAGES,
		.max_record	= PMCRING_RECORD_MAX,
		.types_supported = PMCRING_TYPES_KNOWN,
	};

	mutex_lock(&s->lock);
	if (s->configured) {
		info.flags |= PMCRING_INFO_F_CONFIGURED;
		info.region_size = pmcring_region_size(s->data_pages);
	}
	if (s->enabled)
		info.flags |= PMCRING_INFO_F_ENABLED;
	mutex_unlock(&s->lock);

	return copy_to_user(arg, &info, sizeof(info)) ? -EFAULT : 0;
}

/* Validate what CONFIGURE can check alone; the sources check the rest. */
static int pmcring_dev_check_config(const struct pmcring_config *cfg)
{
	u64 data_size = (u64)cfg->data_pages << PAGE_SHIFT;
	u64 pages;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cfg->__reserved); i++)
		if (cfg->__reserved[i])
			return -EINVAL;
	/* A pidfd is only the proof of a per-pid target's number. */
	if (cfg->flags & PMCRING_CFG_F_PIDFD ?
	    !(cfg->flags & PMCRING_CFG_F_PID) || cfg->pidfd < 0 : cfg->pidfd)
		return -EINVAL;
	if (cfg->flags & ~PMCRING_CFG_F_ALL)
		return -EINVAL;
	if (!is_power_of_2(cfg->data_pages) ||
	    cfg->data_pages < PMCRING_MIN_DATA_PAGES ||
	    cfg->data_pages > PMCRING_MAX_DATA_PAGES)
		return -EINVAL;
	if (cfg->watermark > data_size)
		return -EINVAL;
	if (cfg->types & ~PMCRING_TYPES_KNOWN)
		return -EINVAL;
	if (cfg->flags & PMCRING_CFG_F_PID ? cfg->pid <= 0 : cfg->pid != 0)
		return -EINVAL;
	if (cfg->callchain_depth > PMCRING_CALLCHAIN_DEPTH_MAX)
		return -EINVAL;
	/* Never let one session take more than half of the memory. */
	pages = pmcring_session_pages(cfg->data_pages);
	if (pages > totalram_pages() / 2)
		return -E2BIG;
	return 0;
}

static long pmcring_dev_configure(struct pmcring_session *s,
				  struct pmcring_config __user *arg)
{
	struct pmcring_config cfg;
	struct pmcring_ring **rings;
	unsigned long pages;
	unsigned int online;
	long err;

	if (copy_from_user(&cfg, arg, sizeof(cfg)))
		return -EFAULT;
	err = pmcring_dev_check_config(&cfg);
	if (err)
		return err;

	mutex_lock(&s->lock);
	err = -EBUSY;
	if (s->configured)
		goto out_unlock;

	s->data_pages = cfg.data_pages;
	s->flags = cfg.flags;
	s->types = cfg.types ? cfg.types : PMCRING_TYPES_ALL;
	s->watermark = cfg.watermark ? cfg.watermark :
		((u64)cfg.data_pages << PAGE_SHIFT) / 4;
	s->target_tgid = cfg.pid;
	s->callchain_depth = cfg.callchain_depth ? cfg.callchain_depth : 128;
	err = pmcring_src_configure(s, &cfg);
	if (err)
		goto out_unlock;

	online = num_online_cpus();
	pages = pmcring_rings_pages(s->data_pages, online);
	err = pmcring_mlock_charge(s, pages);
	if (err)
		goto err_src;
	err = pmcring_pages_charge(s, pages);
	if (err)
		goto err_mlock;
	s->ring_pages = pages;
	s->memcg = get_mem_cgroup_from_mm(current->mm);
	err = -ENOMEM;
	rings = kcalloc(nr_cpu_ids, sizeof(*rings), GFP_KERNEL_ACCOUNT);
	if (!rings)
		goto err_uncharge;
	err = pmcring_dev_rings_online(s, rings, online);
	if (err)
		goto err_rings;
	cfg.region_size = pmcring_region_size(s->data_pages);
	err = -EFAULT;
	if (copy_to_user(arg, &cfg, sizeof(cfg)))
		goto err_cpuhp;

	/* Rings initialized before the pointer; pairs with pmcring_dev_rings(). */
	smp_store_release(&s->rings, rings);
	s->configured = true;
	mutex_unlock(&s->lock);
	return 0;

err_cpuhp:
	cpuhp_state_remove_instance_nocalls(pmcring_dev_cpuhp, &s->cpuhp_node);
err_rings:
	pmcring_dev_free_rings(rings);
err_uncharge:
	pmcring_pages_uncharge(s, s->ring_pages);
	s->ring_pages = 0;
	mem_cgroup_put(s->memcg);
	s->memcg = NULL;
err_mlock:
	pmcring_mlock_uncharge(s);
err_src:
	/* Still unconfigured: a retry starts from scratch, nothing leaks. */
	pmcring_src_release(s);
out_unlock:
	mutex_unlock(&s->lock);
	return err;
}

static long pmcring_dev_writelog(struct pmcring_session *s, u32 __user *arg)
{
	struct pmcring_rec_userdata *rec;
	struct pmcring_ring **rings;
	struct pmcring_wr wr;
	u32 value;

	if (get_user(value, arg))
		return -EFAULT;
	rings = pmcring_dev_rings(s);
	if (!rings)
		return -EINVAL;
	if (!pmcring_session_wants(s, PMCRING_TYPE_USERDATA))
		return 0;

	preempt_disable();
	rec = pmcring_ring_reserve(READ_ONCE(rings[smp_processor_id()]),
				   PMCRING_TYPE_USERDATA,
				   PMCRING_SIZE_USERDATA, &wr);
	if (rec) {
		rec->pl_userdata = value;
		rec->pl_pad = 0;
		pmcring_ring_commit(&wr);
	}
	preempt_enable();
	/* A dropped record is counted in lost, like any other. */
	return 0;
}

static long pmcring_dev_clock(u64 __user *arg)
{
	u64 now;

	preempt_disable();	/* the test hook's CPU: this one */
	now = pmcring_ring_clock_now();
	preempt_enable();

	/*
	 * (F) of the ordering contract: the clock read completes before the
	 * caller's later load of pending_ts.
	 */
	rmb(); /* lfence: the TSC read does not pass later loads */
	smp_mb(); /* (F) pairs with (E) in pmcring_ring_pending() */
	return put_user(now, arg);
}

static long pmcring_dev_add_counter(struct pmcring_session *s,
				    struct pmcring_counter __user *arg)
{
	long err;

	mutex_lock(&s->lock);
	if (s->configured)
		err = pmcring_src_add_counter(s, arg);
	else
		err = -EINVAL;
	mutex_unlock(&s->lock);
	return err;
}

static long pmcring_dev_ioctl(struct file *file, unsigned int cmd,
			      unsigned long arg)
{
	struct pmcring_session *s = file->private_data;
	void __user *uarg = (void __user *)arg;
	long err;

	switch (cmd) {
	case PMCRING_IOC_GET_INFO:
		return pmcring_dev_get_info(s, uarg);
	case PMCRING_IOC_CONFIGURE:
		return pmcring_dev_configure(s, uarg);
	case PMCRING_IOC_ENABLE:
		mutex_lock(&s->lock);
		err = pmcring_dev_enable(s);
		mutex_unlock(&s->lock);
		return err;
	case PMCRING_IOC_DISABLE:
		mutex_lock(&s->lock);
		pmcring_dev_disable(s);
		mutex_unlock(&s->lock);
		return 0;
	case PMCRING_IOC_WRITELOG:
		return pmcring_dev_writelog(s, uarg);
	case PMCRING_IOC_CLOCK:
		return pmcring_dev_clock(uarg);
	case PMCRING_IOC_ADD_COUNTER:
		return pmcring_dev_add_counter(s, uarg);
	case PMCRING_IOC_FLUSH:
		atomic_set(&s->poll_flush, 1);
		wake_up_all(&s->wq);
		return 0;
	case PMCRING_IOC_GENERATE:
	case PMCRING_IOC_GENERATE_VER0:
		/* The size in @cmd says which version of the struct. */
		return pmcring_gen_ioctl(s, cmd, uarg);
	default:
		return -ENOTTY;
	}
}

/* ---- poll ---- */

static __poll_t pmcring_dev_poll(struct file *file, poll_table *wait)
{
	struct pmcring_session *s = file->private_data;
	struct pmcring_ring **rings;
	__poll_t mask = 0;
	unsigned int cpu;

	poll_wait(file, &s->wq, wait);
	/* (P) queued on s->wq before reading heads; pairs with (W) */
	smp_mb();
	if (READ_ONCE(s->stopped))
		mask |= EPOLLIN | EPOLLRDNORM | EPOLLHUP;
	if (atomic_xchg(&s->poll_flush, 0))
		mask |= EPOLLIN | EPOLLRDNORM;
	rings = pmcring_dev_rings(s);
	if (!rings || (mask & EPOLLIN))
		return mask;
	for_each_possible_cpu(cpu) {
		struct pmcring_ring *rb = pmcring_dev_ring(rings, cpu);

		if (rb && pmcring_ring_ready(rb))
			return mask | EPOLLIN | EPOLLRDNORM;
	}
	return mask;
}

/* ---- mmap ---- */

/*
 * The ring and its page both come from the file offset, never from the VMA:
 * a VMA that grew or merged with its neighbour (VM_DONTEXPAND forbids both
 * today) would still get each CPU's own pages.
 */
static vm_fault_t pmcring_vm_fault(struct vm_fault *vmf)
{
	struct pmcring_session *s = vmf->vma->vm_file->private_data;
	struct pmcring_ring **rings = pmcring_dev_rings(s);
	unsigned long region_pages, cpu;
	struct pmcring_ring *rb;
	struct page *page;

	if (!rings)
		return VM_FAULT_SIGBUS;
	region_pages = pmcring_region_size(s->data_pages) >> PAGE_SHIFT;
	cpu = vmf->pgoff / region_pages;
	/* mmap() checked the ring exists; it stays until release. */
	rb = cpu < nr_cpu_ids ? pmcring_dev_ring(rings, cpu) : NULL;
	if (!rb)
		return VM_FAULT_SIGBUS;
	page = pmcring_ring_page(rb, vmf->pgoff % region_pages);
	if (!page)
		return VM_FAULT_SIGBUS;
	/* The page table holds its own reference, dropped on unmap. */
	get_page(page);
	vmf->page = page;
	return 0;
}

static const struct vm_operations_struct pmcring_vm_ops = {
	.fault = pmcring_vm_fault,
};

/*
 * Map a page range of one CPU's region.  Shared only; never executable; only
 * a mapping of the control page alone may be writable.
 */
static int pmcring_dev_mmap(struct file *file, struct vm_area_struct *vma)
{
	struct pmcring_session *s = file->private_data;
	unsigned long region_pages, first, cpu;
	struct pmcring_ring **rings;

	rings = pmcring_dev_rings(s);
	if (!rings)
		return -EINVAL;
	if (!(vma->vm_flags & VM_MAYSHARE))
		return -EINVAL;
	if (vma->vm_flags & VM_EXEC)
		return -EPERM;

	region_pages = pmcring_region_size(s->data_pages) >> PAGE_SHIFT;
	cpu = vma->vm_pgoff / region_pages;
	first = vma->vm_pgoff % region_pages;
	if (cpu >= nr_cpu_ids || vma_pages(vma) > region_pages - first)
		return -EINVAL;
	/* A CPU not online since CONFIGURE: no ring (yet). */
	if (!pmcring_dev_ring(rings, cpu))
		return -ENODEV;

	if (first + vma_pages(vma) > 1) {
		/* Covers the producer or data pages: read-only for good. */
		if (vma->vm_flags & VM_WRITE)
			return -EPERM;
		vm_flags_clear(vma, VM_MAYWRITE);
	}
	vm_flags_clear(vma, VM_MAYEXEC);
	vm_flags_set(vma, VM_DONTCOPY | VM_DONTEXPAND | VM_DONTDUMP);
	vma->vm_ops = &pmcring_vm_ops;
	return 0;
}

static const struct file_operations pmcring_dev_fops = {
	.owner		= THIS_MODULE,
	.open		= pmcring_dev_open,
	.release	= pmcring_dev_release,
	.unlocked_ioctl	= pmcring_dev_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
	.poll		= pmcring_dev_poll,
	.mmap		= pmcring_dev_mmap,
};

static struct miscdevice pmcring_dev = {
	.minor		= MISC_DYNAMIC_MINOR,
	.name		= PMCRING_DEV_NAME,
	.fops		= &pmcring_dev_fops,
	.mode		= 0600,
};

static int __init pmcring_init(void)
{
	int err;

	pmcring_ring_check_abi();
	err = cpuhp_setup_state_multi(CPUHP_BP_PREPARE_DYN, "pmcring:prepare",
				      pmcring_dev_cpu_prepare, NULL);
	if (err < 0)
		return err;
	pmcring_dev_cpuhp = err;
	err = pmcring_gen_init();
	if (err)
		goto err_cpuhp;
	err = pmcring_src_init();
	if (err)
		goto err_gen;
	err = misc_register(&pmcring_dev);
	if (err)
		goto err_src;
	return 0;

err_src:
	pmcring_src_exit();
err_gen:
	pmcring_gen_exit();
err_cpuhp:
	cpuhp_remove_multi_state(pmcring_dev_cpuhp);
	return err;
}

static void __exit pmcring_exit(void)
{
	misc_deregister(&pmcring_dev);
	pmcring_src_exit();
	pmcring_gen_exit();
	cpuhp_remove_multi_state(pmcring_dev_cpuhp);
}

module_init(pmcring_init);
module_exit(pmcring_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("hwpmc-style records in per-CPU mmapped rings");
MODULE_AUTHOR("pmcring developers");
/* The release of ../VERSION, from Kbuild. */
MODULE_VERSION(PMCRING_VERSION);
