/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmcring module internals shared by the ring core (ring.c, dev.c, gen.c)
 * and the record sources (src*.c).
 */
#ifndef _PMCRING_KMOD_H
#define _PMCRING_KMOD_H

#include <linux/types.h>
#include <linux/atomic.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/rcupdate.h>
#include <linux/smp.h>
#include <linux/pmcring.h>	/* uapi/, via ccflags in Kbuild */

struct pmcring_ring;		/* one CPU's ring, ring.c */
struct pmcring_src_state;	/* private to the sources, src*.c */

/* Handle of one record being written; see pmcring_ring_reserve(). */
struct pmcring_wr {
	struct pmcring_ring	*rb;
	void			*rec;	/* record start, contiguous, len bytes */
	u32			len;	/* exact pmclog length */
	u64			ts;	/* the timestamp written in the header */
};

/*
 * Producer API, any context including NMI, never sleeps.
 *
 * pmcring_ring_reserve() fills the 16-byte header (magic, type, len, zero
 * spare word, timestamp) and returns a pointer to the record, or NULL when the
 * record was dropped (counted; DROPNOTIFY follows when space returns).  After
 * a non-NULL return the caller writes bytes 16..len-1 and calls
 * pmcring_ring_commit(); after NULL it does nothing more.
 */
void *pmcring_ring_reserve(struct pmcring_ring *rb, unsigned int type, u32 len,
			   struct pmcring_wr *wr);
void pmcring_ring_commit(struct pmcring_wr *wr);
/* A record not written for another reason than space, counted in lost. */
void pmcring_ring_lost(struct pmcring_ring *rb);
void pmcring_ring_lost_n(struct pmcring_ring *rb, u32 n);

/* A session: one open() of /dev/pmcring. */
struct pmcring_session {
	struct mutex		lock;		/* ioctl state changes */
	struct list_head	active_node;	/* on pmcring_active, RCU */
	wait_queue_head_t	wq;		/* poll() */
	/*
	 * [nr_cpu_ids], NULL if !configured; rings[cpu] NULL until @cpu was
	 * online since CONFIGURE, then set once (dev.c).
	 */
	struct pmcring_ring	**rings;
	/*
	 * The CPU hotplug instance (dev.c): a CPU that comes online gets its
	 * ring, charged to the opener's memory cgroup (memcg, referenced) and
	 * user (ring_pages counts what the session holds).  nr_rings counts
	 * the rings, under the CPU hotplug lock.
	 */
	struct hlist_node	cpuhp_node;
	struct pmcring_ring	**hp_rings;	/* rings, for the callback */
	unsigned int		nr_rings;
	struct mem_cgroup	*memcg;
	unsigned long		ring_pages;
	u32			data_pages;
	u32			flags;		/* PMCRING_CFG_F_* */
	u64			types;		/* PMCRING_TYPE_BIT() mask */
	u64			watermark;
	pid_t			target_tgid;	/* with PMCRING_CFG_F_PID */
	u32			callchain_depth;
	bool			configured;
	bool			enabled;
	bool			stopped;	/* disabled after enabled: EPOLLHUP */
	bool			kaddr_ok;	/* opener may see kernel addresses */
	atomic_t		poll_flush;	/* FLUSH: EPOLLIN once */
	const struct cred	*cred;		/* opener's credentials */
	/*
	 * The session's own file: capability checks go through
	 * file_ns_capable(file, ...), i.e. security_capable() on f_cred, so
	 * LSMs see them.  Not a reference: the file owns the session.
	 */
	struct file		*file;
	/*
	 * Pid namespace of the opener (referenced): pids in records and
	 * config.pid are numbers of this namespace, as a perf event's
	 * event->ns.
	 */
	struct pid_namespace	*pid_ns;
	/*
	 * Locked memory charged at CONFIGURE (dev.c): user_pages to the
	 * opener's user->locked_vm within the mlock_kb allowance, mm_pages
	 * beyond it to mm->locked_vm of the CONFIGURE caller (RLIMIT_MEMLOCK).
	 */
	struct user_struct	*user;
	unsigned long		user_pages;
	struct mm_struct	*mm;
	unsigned long		mm_pages;
	struct pmcring_src_state *src;		/* owned by the sources */
};

/*
 * This CPU's ring of @s; caller has preemption (or IRQs) disabled.  Inline:
 * it is on every record's path (perf's this_cpu_ptr() of a per-CPU event
 * context is inline too).
 */
static inline struct pmcring_ring *
pmcring_session_ring(struct pmcring_session *s)
{
	struct pmcring_ring **rings = READ_ONCE(s->rings);

	return rings ? rings[smp_processor_id()] : NULL;
}

static inline bool pmcring_session_wants(const struct pmcring_session *s,
					 unsigned int type)
{
	return s->types & PMCRING_TYPE_BIT(type);
}

/*
 * Enabled sessions, RCU protected: sources walk it with
 * list_for_each_entry_rcu() inside rcu_read_lock() or any non-preemptible
 * section; dev.c adds on ENABLE and removes (then synchronize_rcu()) on
 * DISABLE and release.
 */
extern struct list_head pmcring_active;

/*
 * Hooks the ring core calls into the sources (src*.c).  All run in process
 * context with s->lock held unless said otherwise.
 */
int pmcring_src_init(void);			/* module load, no lock */
void pmcring_src_exit(void);			/* module unload, no lock */
/* CONFIGURE: check permissions for cfg (-EACCES, -ESRCH, -EINVAL). */
int pmcring_src_configure(struct pmcring_session *s,
			  const struct pmcring_config *cfg);
/*
 * ENABLE, before s goes on pmcring_active: recheck the target (-ESRCH,
 * -EACCES), forget the follow set of an earlier enable.
 */
int pmcring_src_enable_prepare(struct pmcring_session *s);
/* ENABLE, after s is on pmcring_active: attach probes, synthesize state. */
int pmcring_src_enable(struct pmcring_session *s);
/* DISABLE and release, after s left pmcring_active and synchronize_rcu(). */
void pmcring_src_disable(struct pmcring_session *s);
/* PMCRING_IOC_ADD_COUNTER. */
long pmcring_src_add_counter(struct pmcring_session *s,
			     struct pmcring_counter __user *arg);
/* Last close after disable, or a failed CONFIGURE: free s->src. */
void pmcring_src_release(struct pmcring_session *s);
/*
 * GENERATE's PMCRING_GEN_F_SRC_NMI hook, called by its NMI writer: the mmap
 * kprobe's handler on a fake executable mapping of current.  Any context.
 */
void pmcring_src_test_mmap_probe(void);

#endif /* _PMCRING_KMOD_H */
