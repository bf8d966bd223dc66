// SPDX-License-Identifier: GPL-2.0
/*
 * Mappings (MAP_IN, MAP_OUT) and the state synthesized at enable.
 *
 *	kernel modules		module notifier: MAP_IN on load (pid -1, start of
 *				the module text, path = module name), MAP_OUT on
 *				unload (start, end of the text)
 *	exec			PROCEXEC then MAP_IN of the new image and its
 *				interpreter, from sched_process_exec
 *	mmap			MAP_IN of an executable file mapping, from a
 *				kprobe on perf_event_mmap() (no tracepoint sees
 *				the new vma); start = start of the mapping
 *	munmap			MAP_OUT of the executable file mappings in the
 *				range, from kretprobes on the munmap syscalls, on
 *				mmap/mmap2 with MAP_FIXED (the range it replaces)
 *				and on mremap (the old range, and the new one
 *				with MREMAP_FIXED; MAP_IN of the result), 64- and
 *				32-bit, written on return and only if the call
 *				succeeded; mappings dropped at exit or exec get
 *				none (SYSEXIT/PROCEXEC end them all)
 *	enable			PROC_CREATE and MAP_IN of every followed process
 *				that already runs, MAP_IN of the loaded kernel
 *				modules (unless PMCRING_CFG_F_NO_SYNTH)
 *
 * Kernel addresses are 0 for sessions without s->kaddr_ok.
 */
#include <linux/binfmts.h>
#include <linux/dcache.h>
#include <linux/elf.h>
#include <linux/fs.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/mmap_lock.h>
#include <linux/module.h>
#include <linux/path.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include "src.h"

/*
 * One PATH_MAX buffer per CPU for the probes that run in task context with
 * preemption disabled (exec tracepoint, mmap kprobe); they never nest.
 */
static char *pmcring_src_pathbufs;

/* Start of the fake mapping of pmcring_src_test_mmap_probe(). */
#define PMCRING_SRC_FAKE_START	0x7ead0000UL

static char *pmcring_src_pathbuf(void)
{
	return pmcring_src_pathbufs + (size_t)smp_processor_id() * PATH_MAX;
}

static const char *pmcring_src_d_path(struct file *f, char *buf)
{
	const char *p = d_path(&f->f_path, buf, PATH_MAX);

	return IS_ERR(p) ? "" : p;
}

static void pmcring_src_map_in(struct pmcring_session *s, pid_t pid,
			       u64 start, const char *path)
{
	struct pmcring_rec_map_in rec = {
		.pl_pid = pid,
		.pl_start = start,
	};

	pmcring_src_emit_path(s, PMCRING_TYPE_MAP_IN, &rec,
			      PMCRING_SIZE_MAP_IN_MIN, path);
}

static void pmcring_src_map_out(struct pmcring_session *s, pid_t pid,
				u64 start, u64 end)
{
	struct pmcring_rec_map_out rec = {
		.pl_pid = pid,
		.pl_start = start,
		.pl_end = end,
	};

	pmcring_src_emit(s, PMCRING_TYPE_MAP_OUT, PMCRING_SIZE_MAP_OUT, &rec);
}

static bool pmcring_src_vma_exec(struct vm_area_struct *vma)
{
	return vma->vm_file && (vma->vm_flags & VM_EXEC);
}

/*
 * A probe that cannot write its @type records (NMI context, a contended
 * mmap lock) counts one lost record in each session that wanted one, so
 * that lost stays exact at least in "something was lost here".
 */
static void pmcring_src_map_lost(unsigned int type)
{
	struct pmcring_session *s;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node)
		if (pmcring_session_wants(s, type) &&
		    pmcring_src_follows(s, current))
			pmcring_ring_lost(pmcring_session_ring(s));
	rcu_read_unlock();
}

/*
 * Records lost for want of a probe run: @n calls the kernel did not hand
 * to a handler (see pmcring_src_kp_missed()).  Whose calls they were is not
 * known, so every session that wants @types and follows anything counts
 * them, on this CPU's ring.  Any context.
 */
static void pmcring_src_map_lost_n(u64 types, u32 n)
{
	struct pmcring_session *s;
	unsigned int t;

	preempt_disable();	/* the rings */
	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (!s->src->system_wide && !s->src->targets)
			continue;
		for (t = PMCRING_TYPE_MAP_IN; t <= PMCRING_TYPE_MAP_OUT; t++) {
			if (!(types & PMCRING_TYPE_BIT(t)) ||
			    !pmcring_session_wants(s, t))
				continue;
			pmcring_ring_lost_n(pmcring_session_ring(s), n);
		}
	}
	rcu_read_unlock();
	preempt_enable();
}

/*
 * A kprobe or kretprobe of ours: pmcring_src_kps[] below are the
 * templates, each attach registers a fresh copy (pmcring_src_kp_live[]),
 * as trace_kprobe does for every kprobe event.  A kretprobe comes with a
 * plain kprobe on the same function, kp, whose post handler runs after the
 * kretprobe's entry for every call and sees whether the entry handler ran
 * (pmcring_src_kp_miss_post()).
 */
struct pmcring_src_kp {
	struct kprobe	kp;		/* the probe, or the kretprobe's twin */
	struct kretprobe rp;		/* if ret */
	/* the kernel's miss counters at the last look, modulo 2^32 */
	atomic_t	missed_seen;
	u64		types;
	const char	*what;		/* the records lost without it */
	bool		ret;
	bool		failed;		/* template: could not be placed */
	bool		twin_on;	/* kp registered beside rp */
};

/* The kretprobe whose entry handler ran last on this CPU; see above. */
static DEFINE_PER_CPU(struct pmcring_src_kp *, pmcring_src_entered);

/*
 * Calls of the probed function that ran no handler of ours at all, so
 * whose records were never written: the kprobe's nmissed (a kprobe already
 * running on the CPU; for a kretprobe its twin's, which the kernel counts
 * with it).  The kernel only counts them; the handlers compare the count
 * with what they last saw and report the difference as lost
 * (pmcring_src_map_lost_n()), at the next call that does run, so a loss
 * shows up within one call of the probe.  Any context, preemption
 * disabled (kprobe handlers).
 *
 * A kretprobe's other misses (more than maxactive calls in flight) are not
 * taken from rp.nmissed: the kernel bumps it with a plain increment from
 * every CPU (pre_handler_kretprobe()), and under load it was seen to lose
 * about one miss in twelve.  The twin counts them, exactly and as the
 * task's own.  Only if the twin could not be placed is rp.nmissed used.
 */
static u32 pmcring_src_kp_nmissed(struct pmcring_src_kp *k)
{
	/* Counted modulo 2^32: a difference is what matters, and it wraps. */
	if (k->ret && !k->twin_on)
		return (u32)READ_ONCE(k->rp.nmissed) +
		       (u32)READ_ONCE(k->rp.kp.nmissed);
	return (u32)READ_ONCE(k->kp.nmissed);
}

static void pmcring_src_kp_missed(struct pmcring_src_kp *k)
{
	u32 missed = pmcring_src_kp_nmissed(k);
	u32 seen = (u32)atomic_read(&k->missed_seen);

	/*
	 * Nothing new, or a stale @missed read before another CPU moved
	 * @seen past it: never report a negative difference.
	 */
	if (likely((s32)(missed - seen) <= 0))
		return;
	/* One handler reports each difference, the others see it done. */
	if ((u32)atomic_cmpxchg(&k->missed_seen, seen, missed) != seen)
		return;
	if (pmcring_src_wanted(PMCRING_TYPE_MAP_IN) ||
	    pmcring_src_wanted(PMCRING_TYPE_MAP_OUT))
		pmcring_src_map_lost_n(k->types, missed - seen);
}

static void pmcring_src_kp_missed_ri(struct kretprobe_instance *ri)
{
	struct kretprobe *rp = get_kretprobe(ri);

	if (rp)
		pmcring_src_kp_missed(container_of(rp, struct pmcring_src_kp,
						   rp));
}

/*
 * First thing of every entry handler: report older misses, and tell the
 * twin's post handler, which runs next on this CPU for the same call
 * (preemption is disabled in between), that this call has its instance.
 */
static void pmcring_src_kp_entered(struct kretprobe_instance *ri)
{
	struct kretprobe *rp = get_kretprobe(ri);

	if (!rp)
		return;
	__this_cpu_write(pmcring_src_entered,
			 container_of(rp, struct pmcring_src_kp, rp));
	pmcring_src_kp_missed_ri(ri);
}

/*
 * The twin's post handler, after the kretprobe's pre handler for the same
 * call: if the entry handler did not run, the kernel had no instance for
 * the call (maxactive in flight, or the rethook going away) and its
 * records are lost, counted here in each session that follows current and
 * wants them.
 */
static void pmcring_src_kp_miss_post(struct kprobe *kp, struct pt_regs *regs,
				     unsigned long flags)
{
	struct pmcring_src_kp *k = container_of(kp, struct pmcring_src_kp, kp);
	unsigned int t;

	if (likely(__this_cpu_read(pmcring_src_entered) == k)) {
		__this_cpu_write(pmcring_src_entered, NULL);
		return;
	}
	for (t = PMCRING_TYPE_MAP_IN; t <= PMCRING_TYPE_MAP_OUT; t++)
		if ((k->types & PMCRING_TYPE_BIT(t)) &&
		    pmcring_src_wanted(t))
			pmcring_src_map_lost(t);
}

/*
 * The probes below take the mmap lock (trylock) and call d_path(): task
 * context only.  An int3-based kprobe runs under irqentry_nmi_enter() on
 * x86 (ours sit on function entries and go through ftrace, so they
 * normally do not): there they write nothing and count the record lost.
 */
static bool pmcring_src_map_nmi(unsigned int type)
{
	if (likely(!in_nmi()))
		return false;
	pmcring_src_map_lost(type);
	return true;
}

/* MAP_IN for every executable file mapping of @mm; mmap lock held. */
static void pmcring_src_map_all(struct pmcring_session *s, pid_t pid,
				struct mm_struct *mm, char *buf)
{
	VMA_ITERATOR(vmi, mm, 0);
	struct vm_area_struct *vma;

	for_each_vma(vmi, vma)
		if (pmcring_src_vma_exec(vma))
			pmcring_src_map_in(s, pid, vma->vm_start,
					   pmcring_src_d_path(vma->vm_file, buf));
}

/*
 * From the exec tracepoint (p == current): PROCEXEC with the load addresses
 * as FreeBSD writes them, then the MAP_IN of the new image.  pl_baseaddr is
 * AT_BASE, the interpreter's load address (its file offset 0), 0 if none;
 * pl_dynaddr the load address of a PIE executable (ET_DYN, its file offset
 * 0, i.e. its load bias), 0 for ET_EXEC.  @bprm->buf holds the first bytes
 * of the image (ELF header).  The mmap kprobe skipped the mappings
 * (in_execve) so that they follow the PROCEXEC.  The mm is new and its lock
 * uncontended.
 */
void pmcring_src_map_exec(struct pmcring_session *s, struct task_struct *p,
			  struct linux_binprm *bprm)
{
	struct pmcring_rec_procexec rec = {
		.pl_pid = pmcring_src_pid(s, p),
		.pl_pmcid = s->src->pmcid,
	};
	const struct elf64_hdr *eh = (const struct elf64_hdr *)bprm->buf;
	struct file *exe = bprm->file;
	char *buf = pmcring_src_pathbuf();
	struct mm_struct *mm = p->mm;
	struct vm_area_struct *vma;
	bool locked, pie;

	/* e_type sits at offset 16 in both ELF classes */
	pie = !memcmp(eh->e_ident, ELFMAG, SELFMAG) && eh->e_type == ET_DYN;
	locked = mm && mmap_read_trylock(mm);
	if (locked) {
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			u64 base = vma->vm_start -
				   ((u64)vma->vm_pgoff << PAGE_SHIFT);

			if (!vma->vm_file)
				continue;
			if (vma->vm_file == exe && pie && !rec.pl_dynaddr)
				rec.pl_dynaddr = base;
			else if (vma->vm_file != exe && !rec.pl_baseaddr)
				rec.pl_baseaddr = base;
		}
	}
	if (pmcring_session_wants(s, PMCRING_TYPE_PROCEXEC))
		pmcring_src_emit_path(s, PMCRING_TYPE_PROCEXEC, &rec,
				      PMCRING_SIZE_PROCEXEC_MIN,
				      pmcring_src_d_path(exe, buf));
	if (locked && pmcring_session_wants(s, PMCRING_TYPE_MAP_IN))
		pmcring_src_map_all(s, pmcring_src_pid(s, p), mm, buf);
	else if (mm && pmcring_session_wants(s, PMCRING_TYPE_MAP_IN))
		pmcring_ring_lost(pmcring_session_ring(s));
	if (locked)
		mmap_read_unlock(mm);
}

/* ---- kprobes: mmap, munmap ---- */

/* MAP_IN of a new mapping @vma of current; the mmap kprobe's body. */
static void pmcring_src_mmap_vma(struct vm_area_struct *vma)
{
	const char *path = NULL;
	struct pmcring_session *s;

	if (!pmcring_src_wanted(PMCRING_TYPE_MAP_IN) ||
	    !pmcring_src_vma_exec(vma) || current->in_execve ||
	    pmcring_src_map_nmi(PMCRING_TYPE_MAP_IN))
		return;
	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (!pmcring_session_wants(s, PMCRING_TYPE_MAP_IN) ||
		    !pmcring_src_follows(s, current))
			continue;
		if (!path)
			path = pmcring_src_d_path(vma->vm_file,
						  pmcring_src_pathbuf());
		pmcring_src_map_in(s, pmcring_src_pid(s, current),
				   vma->vm_start, path);
	}
	rcu_read_unlock();
}

/* perf_event_mmap(struct vm_area_struct *vma), mmap lock held for write. */
static int pmcring_src_kp_mmap(struct kprobe *kp, struct pt_regs *regs)
{
	pmcring_src_kp_missed(container_of(kp, struct pmcring_src_kp, kp));
	pmcring_src_mmap_vma((struct vm_area_struct *)
			     regs_get_kernel_argument(regs, 0));
	return 0;
}

/*
 * GENERATE's PMCRING_GEN_F_SRC_NMI: the mmap probe on a mapping that is
 * executable and file-backed to every check before the NMI bail-out.  Its
 * file is all zeroes: a handler that went on to d_path() would oops, so
 * the test cannot pass without the bail-out.
 */
static struct file pmcring_src_fake_file;
static struct vm_area_struct pmcring_src_fake_vma;

void pmcring_src_test_mmap_probe(void)
{
	pmcring_src_mmap_vma(&pmcring_src_fake_vma);
}

static void pmcring_src_fake_init(void)
{
	pmcring_src_fake_vma.vm_start = PMCRING_SRC_FAKE_START;
	pmcring_src_fake_vma.vm_end = PMCRING_SRC_FAKE_START + PAGE_SIZE;
	pmcring_src_fake_vma.vm_file = &pmcring_src_fake_file;
#ifdef PMCRING_HAVE_VM_FLAGS_SET
	vm_flags_init(&pmcring_src_fake_vma, VM_READ | VM_EXEC);
#else
	pmcring_src_fake_vma.vm_flags = VM_READ | VM_EXEC;
#endif
}

/*
 * MAP_OUT is written when the call returns, and only if it succeeded: the
 * entry handler notes the executable file mappings in the range (clipped),
 * the return handler writes them.  A call that fails (EINVAL, EBADF,
 * ENOMEM...) changed nothing and writes nothing.
 */
#define PMCRING_SRC_UNMAP_MAX	8

struct pmcring_src_unmap {
	unsigned int	n;
	bool		lost;	/* ranges left out: lock contended, too many */
	struct {
		unsigned long start, end;
	} r[PMCRING_SRC_UNMAP_MAX];
};

/* Does an enabled session want @type records of current? */
static bool pmcring_src_map_any(unsigned int type)
{
	struct pmcring_session *s;
	bool any = false;

	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (pmcring_session_wants(s, type) &&
		    pmcring_src_follows(s, current)) {
			any = true;
			break;
		}
	}
	rcu_read_unlock();
	return any;
}

/*
 * Note the executable file mappings of current in [start, start + len)
 * into @d, before the call changes anything.  Entry handler context.
 */
static void pmcring_src_unmap_note(struct pmcring_src_unmap *d,
				   unsigned long start, unsigned long len)
{
	VMA_ITERATOR(vmi, current->mm, start);
	unsigned long end = start + PAGE_ALIGN(len);
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;

	if (!mm || end <= start)
		return;
	/* Never sleeps: a contended lock loses (counted) the records. */
	if (!mmap_read_trylock(mm)) {
		d->lost = true;
		return;
	}
	for_each_vma_range(vmi, vma, end) {
		if (!pmcring_src_vma_exec(vma))
			continue;
		if (d->n == PMCRING_SRC_UNMAP_MAX) {
			d->lost = true;
			break;
		}
		d->r[d->n].start = max(start, vma->vm_start);
		d->r[d->n].end = min(end, vma->vm_end);
		d->n++;
	}
	mmap_read_unlock(mm);
}

/*
 * Start of an entry handler: 0 to go on with @d cleared, 1 to skip the
 * call (no session wants MAP_OUT of current; NMI context, counted).
 */
static int pmcring_src_unmap_start(struct kretprobe_instance *ri,
				   struct pmcring_src_unmap **d)
{
	pmcring_src_kp_entered(ri);
	if (!pmcring_src_wanted(PMCRING_TYPE_MAP_OUT) ||
	    pmcring_src_map_nmi(PMCRING_TYPE_MAP_OUT) ||
	    !pmcring_src_map_any(PMCRING_TYPE_MAP_OUT))
		return 1;
	*d = (struct pmcring_src_unmap *)ri->data;
	(*d)->n = 0;
	(*d)->lost = false;
	return 0;
}

/* The call succeeded: MAP_OUT of what @d noted, to every session. */
static void pmcring_src_unmap_emit(const struct pmcring_src_unmap *d)
{
	struct pmcring_session *s;
	unsigned int i;

	if (!d->n && !d->lost)
		return;
	preempt_disable();	/* the rings */
	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (!pmcring_session_wants(s, PMCRING_TYPE_MAP_OUT) ||
		    !pmcring_src_follows(s, current))
			continue;
		/* in the opener's pid namespace */
		for (i = 0; i < d->n; i++)
			pmcring_src_map_out(s, pmcring_src_pid(s, current),
					    d->r[i].start, d->r[i].end);
		if (d->lost)
			pmcring_ring_lost(pmcring_session_ring(s));
	}
	rcu_read_unlock();
	preempt_enable();
}

/*
 * The syscall wrappers take the user's registers: __x64_sys_X(regs) and
 * __ia32_sys_X(regs) on x86-64, __arm64_sys_X(regs) and
 * __arm64_compat_sys_X(regs) on arm64.  pmcring_src_sysarg() is argument
 * @n of a 64-bit task's call, pmcring_src_sysarg32() of a 32-bit one's
 * (x86-64: rdi, rsi, rdx, r10, r8 and ebx, ecx, edx, esi, edi; arm64:
 * x0-x5, and w0-w5 for AArch32 tasks).  arm64 has no compat wrapper of
 * munmap and mremap: AArch32 tasks call the 64-bit ones, whose arguments
 * they zero-extend.
 */
#ifdef CONFIG_X86_64
#define PMCRING_SYS(name)	"__x64_sys_" name
#define PMCRING_SYS32(name)	"__ia32_sys_" name
#define PMCRING_SYS32_MMAP2	PMCRING_SYS32("mmap_pgoff")
#define PMCRING_HAVE_SYS32_ALL	1

static unsigned long pmcring_src_sysarg(const struct pt_regs *u, unsigned int n)
{
	const unsigned long a[] = { u->di, u->si, u->dx, u->r10, u->r8 };

	return n < ARRAY_SIZE(a) ? a[n] : 0;
}

static unsigned long pmcring_src_sysarg32(const struct pt_regs *u,
					  unsigned int n)
{
	const unsigned long a[] = { u->bx, u->cx, u->dx, u->si, u->di };

	return n < ARRAY_SIZE(a) ? (u32)a[n] : 0;
}
#elif defined(CONFIG_ARM64)
#define PMCRING_SYS(name)	"__arm64_sys_" name
#define PMCRING_SYS32_MMAP2	"__arm64_compat_sys_aarch32_mmap2"
#define PMCRING_HAVE_SYS32_ALL	0

static unsigned long pmcring_src_sysarg(const struct pt_regs *u, unsigned int n)
{
	return n < 6 ? u->regs[n] : 0;
}

static unsigned long pmcring_src_sysarg32(const struct pt_regs *u,
					  unsigned int n)
{
	return n < 6 ? (u32)u->regs[n] : 0;
}
#else
#error "pmcring: no syscall argument code for this architecture"
#endif

/* The user registers a syscall wrapper got. */
static struct pt_regs *pmcring_src_uregs(struct pt_regs *regs)
{
	return (struct pt_regs *)regs_get_kernel_argument(regs, 0);
}

/* sys_munmap(addr, len). */
static int pmcring_src_kp_munmap(struct kretprobe_instance *ri,
				 struct pt_regs *regs)
{
	struct pt_regs *u = pmcring_src_uregs(regs);
	struct pmcring_src_unmap *d;

	if (pmcring_src_unmap_start(ri, &d))
		return 1;
	pmcring_src_unmap_note(d, pmcring_src_sysarg(u, 0),
			       pmcring_src_sysarg(u, 1));
	return 0;
}

#if PMCRING_HAVE_SYS32_ALL
/* The 32-bit munmap(addr, len). */
static int pmcring_src_kp_munmap32(struct kretprobe_instance *ri,
				   struct pt_regs *regs)
{
	struct pt_regs *u = pmcring_src_uregs(regs);
	struct pmcring_src_unmap *d;

	if (pmcring_src_unmap_start(ri, &d))
		return 1;
	pmcring_src_unmap_note(d, pmcring_src_sysarg32(u, 0),
			       pmcring_src_sysarg32(u, 1));
	return 0;
}
#endif

/* Return of munmap: 0 on success. */
static int pmcring_src_kp_munmap_ret(struct kretprobe_instance *ri,
				     struct pt_regs *regs)
{
	pmcring_src_kp_missed_ri(ri);
	if (!regs_return_value(regs))
		pmcring_src_unmap_emit((void *)ri->data);
	return 0;
}

/* sys_mmap(addr, len, prot, flags, ...): MAP_FIXED replaces the range. */
static int pmcring_src_kp_mmap_fixed(struct kretprobe_instance *ri,
				     struct pt_regs *regs)
{
	struct pt_regs *u = pmcring_src_uregs(regs);
	struct pmcring_src_unmap *d;

	pmcring_src_kp_entered(ri);
	if (!(pmcring_src_sysarg(u, 3) & MAP_FIXED) ||
	    pmcring_src_unmap_start(ri, &d))
		return 1;
	pmcring_src_unmap_note(d, pmcring_src_sysarg(u, 0),
			       pmcring_src_sysarg(u, 1));
	return 0;
}

/* The 32-bit mmap2(addr, len, prot, flags, ...). */
static int pmcring_src_kp_mmap_fixed32(struct kretprobe_instance *ri,
				       struct pt_regs *regs)
{
	struct pt_regs *u = pmcring_src_uregs(regs);
	struct pmcring_src_unmap *d;

	pmcring_src_kp_entered(ri);
	if (!(pmcring_src_sysarg32(u, 3) & MAP_FIXED) ||
	    pmcring_src_unmap_start(ri, &d))
		return 1;
	pmcring_src_unmap_note(d, pmcring_src_sysarg32(u, 0),
			       pmcring_src_sysarg32(u, 1));
	return 0;
}

/* Return of mmap, mmap2 and mremap: an address, or -errno. */
static bool pmcring_src_ret_ok(struct pt_regs *regs)
{
	return !IS_ERR_VALUE(regs_return_value(regs));
}

static int pmcring_src_kp_mmap_fixed_ret(struct kretprobe_instance *ri,
					 struct pt_regs *regs)
{
	pmcring_src_kp_missed_ri(ri);
	if (pmcring_src_ret_ok(regs))
		pmcring_src_unmap_emit((void *)ri->data);
	return 0;
}

/*
 * mremap(addr, old_len, new_len, flags, new_addr): the old range ends
 * (moved, shrunk, or grown in place: MAP_IN follows on return), and with
 * MREMAP_FIXED whatever was at the new range.  Noted here, written on a
 * successful return, MAP_OUT first.
 */
static int pmcring_src_mremap(struct kretprobe_instance *ri,
			      unsigned long addr, unsigned long old_len,
			      unsigned long new_len, unsigned long flags,
			      unsigned long new_addr)
{
	struct pmcring_src_unmap *d;

	if (pmcring_src_unmap_start(ri, &d)) {
		/* MAP_IN on return may still be wanted. */
		d = (struct pmcring_src_unmap *)ri->data;
		d->n = 0;
		d->lost = false;
		return 0;
	}
	pmcring_src_unmap_note(d, addr, old_len);
	if (flags & MREMAP_FIXED)
		pmcring_src_unmap_note(d, new_addr, new_len);
	return 0;
}

static int pmcring_src_kp_mremap(struct kretprobe_instance *ri,
				 struct pt_regs *regs)
{
	struct pt_regs *u = pmcring_src_uregs(regs);

	return pmcring_src_mremap(ri, pmcring_src_sysarg(u, 0),
				  pmcring_src_sysarg(u, 1),
				  pmcring_src_sysarg(u, 2),
				  pmcring_src_sysarg(u, 3),
				  pmcring_src_sysarg(u, 4));
}

#if PMCRING_HAVE_SYS32_ALL
static int pmcring_src_kp_mremap32(struct kretprobe_instance *ri,
				   struct pt_regs *regs)
{
	struct pt_regs *u = pmcring_src_uregs(regs);

	return pmcring_src_mremap(ri, pmcring_src_sysarg32(u, 0),
				  pmcring_src_sysarg32(u, 1),
				  pmcring_src_sysarg32(u, 2),
				  pmcring_src_sysarg32(u, 3),
				  pmcring_src_sysarg32(u, 4));
}
#endif

/*
 * Return of mremap: MAP_OUT of the old range(s), then MAP_IN of the mapping
 * now at the returned address.
 */
static int pmcring_src_kp_mremap_ret(struct kretprobe_instance *ri,
				     struct pt_regs *regs)
{
	unsigned long addr = regs_return_value(regs);
	struct mm_struct *mm = current->mm;
	struct vm_area_struct *vma;
	struct pmcring_session *s;
	const char *path = NULL;

	pmcring_src_kp_missed_ri(ri);
	if (!pmcring_src_ret_ok(regs))
		return 0;
	pmcring_src_unmap_emit((void *)ri->data);
	if (!pmcring_src_wanted(PMCRING_TYPE_MAP_IN) || !mm ||
	    pmcring_src_map_nmi(PMCRING_TYPE_MAP_IN))
		return 0;
	preempt_disable();	/* the path buffer and the rings */
	rcu_read_lock();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		if (!pmcring_session_wants(s, PMCRING_TYPE_MAP_IN) ||
		    !pmcring_src_follows(s, current))
			continue;
		if (!mmap_read_trylock(mm)) {
			pmcring_ring_lost(pmcring_session_ring(s));
			continue;
		}
		vma = vma_lookup(mm, addr);
		if (vma && pmcring_src_vma_exec(vma)) {
			if (!path)
				path = pmcring_src_d_path(vma->vm_file,
							  pmcring_src_pathbuf());
			pmcring_src_map_in(s, pmcring_src_pid(s, current),
					   vma->vm_start, path);
		}
		mmap_read_unlock(mm);
	}
	rcu_read_unlock();
	preempt_enable();
	return 0;
}

/*
 * The kprobes are placed when a session first needs them and stay until no
 * session has been enabled for probe_linger_ms (src.c) or the module
 * unloads; meanwhile their handlers leave at once when no enabled session
 * wants the type.  Placing and removing them at every enable/disable
 * crashed 6.1 in src_stress (a call to address 0 where mprotect_fixup()
 * calls the probed perf_event_mmap()), plausibly the same probe struct
 * registered again, with the state the kernel left in it, while its last
 * registration was still being torn down.  So each attach registers a
 * fresh copy of the template, and the linger keeps the cycles rare.
 */

static struct pmcring_src_kp pmcring_src_kps[] = {
	{ .kp = { .symbol_name = "perf_event_mmap",
		  .pre_handler = pmcring_src_kp_mmap },
	  .types = PMCRING_SRC_T(MAP_IN), .what = "mmap MAP_IN" },
	{ .rp = { .kp.symbol_name = PMCRING_SYS("munmap"),
		  .entry_handler = pmcring_src_kp_munmap,
		  .handler = pmcring_src_kp_munmap_ret,
		  .data_size = sizeof(struct pmcring_src_unmap),
		  .maxactive = 64 },
	  .ret = true, .types = PMCRING_SRC_T(MAP_OUT),
	  .what = "munmap MAP_OUT" },
#if PMCRING_HAVE_SYS32_ALL
	{ .rp = { .kp.symbol_name = PMCRING_SYS32("munmap"),
		  .entry_handler = pmcring_src_kp_munmap32,
		  .handler = pmcring_src_kp_munmap_ret,
		  .data_size = sizeof(struct pmcring_src_unmap),
		  .maxactive = 64 },
	  .ret = true, .types = PMCRING_SRC_T(MAP_OUT),
	  .what = "32-bit munmap MAP_OUT" },
#endif
	{ .rp = { .kp.symbol_name = PMCRING_SYS("mmap"),
		  .entry_handler = pmcring_src_kp_mmap_fixed,
		  .handler = pmcring_src_kp_mmap_fixed_ret,
		  .data_size = sizeof(struct pmcring_src_unmap),
		  .maxactive = 64 },
	  .ret = true, .types = PMCRING_SRC_T(MAP_OUT),
	  .what = "MAP_FIXED MAP_OUT" },
	{ .rp = { .kp.symbol_name = PMCRING_SYS32_MMAP2,
		  .entry_handler = pmcring_src_kp_mmap_fixed32,
		  .handler = pmcring_src_kp_mmap_fixed_ret,
		  .data_size = sizeof(struct pmcring_src_unmap),
		  .maxactive = 64 },
	  .ret = true, .types = PMCRING_SRC_T(MAP_OUT),
	  .what = "32-bit MAP_FIXED MAP_OUT" },
	{ .rp = { .kp.symbol_name = PMCRING_SYS("mremap"),
		  .entry_handler = pmcring_src_kp_mremap,
		  .handler = pmcring_src_kp_mremap_ret,
		  .data_size = sizeof(struct pmcring_src_unmap),
		  .maxactive = 64 },
	  .ret = true, .types = PMCRING_SRC_T(MAP_IN) | PMCRING_SRC_T(MAP_OUT),
	  .what = "mremap MAP_OUT/MAP_IN" },
#if PMCRING_HAVE_SYS32_ALL
	{ .rp = { .kp.symbol_name = PMCRING_SYS32("mremap"),
		  .entry_handler = pmcring_src_kp_mremap32,
		  .handler = pmcring_src_kp_mremap_ret,
		  .data_size = sizeof(struct pmcring_src_unmap),
		  .maxactive = 64 },
	  .ret = true, .types = PMCRING_SRC_T(MAP_IN) | PMCRING_SRC_T(MAP_OUT),
	  .what = "32-bit mremap MAP_OUT/MAP_IN" },
#endif
};

/* The registered copies, under pmcring_src_mutex; NULL when detached. */
static struct pmcring_src_kp *pmcring_src_kp_live[ARRAY_SIZE(pmcring_src_kps)];

static void pmcring_src_kp_unregister(struct pmcring_src_kp *k)
{
	if (k->twin_on)
		unregister_kprobe(&k->kp);
	if (k->ret)
		unregister_kretprobe(&k->rp);
	else
		unregister_kprobe(&k->kp);
}

/* A fresh copy of template @i registered, or NULL (logged once). */
static struct pmcring_src_kp *pmcring_src_kp_attach(unsigned int i)
{
	struct pmcring_src_kp *t = &pmcring_src_kps[i], *k;
	int err;

	k = kmemdup(t, sizeof(*k), GFP_KERNEL);
	if (!k)
		return NULL;
	if (k->ret) {
		/*
		 * The twin first: until rp is in, it counts every call
		 * lost, so that lost never falls short.
		 */
		k->kp.symbol_name = k->rp.kp.symbol_name;
		k->kp.post_handler = pmcring_src_kp_miss_post;
		k->twin_on = !register_kprobe(&k->kp);
	}
	err = k->ret ? register_kretprobe(&k->rp) : register_kprobe(&k->kp);
	if (err) {
		if (k->twin_on)
			unregister_kprobe(&k->kp);
		pr_info("pmcring: no kprobe on %s (%d): no %s records\n",
			k->ret ? k->rp.kp.symbol_name : k->kp.symbol_name, err,
			k->what);
		t->failed = true;
		kfree(k);
		return NULL;
	}
	if (k->ret && !k->twin_on)
		pr_info("pmcring: no twin kprobe on %s: misses of %s counted by the kernel's rp.nmissed\n",
			k->kp.symbol_name, k->what);
	atomic_set(&k->missed_seen, pmcring_src_kp_nmissed(k));
	return k;
}

static bool pmcring_src_kp_needed(struct pmcring_session *s,
				  const struct pmcring_src_kp *k)
{
	return (s->src->system_wide || s->src->targets) && (s->types & k->types);
}

/*
 * Caller holds pmcring_src_mutex.  A kprobe that cannot be placed (symbol
 * renamed, kprobes off) only loses its records: it is logged, not fatal.
 */
int pmcring_src_map_get(struct pmcring_session *s)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(pmcring_src_kps); i++) {
		if (!pmcring_src_kp_needed(s, &pmcring_src_kps[i]) ||
		    pmcring_src_kp_live[i] || pmcring_src_kps[i].failed)
			continue;
		pmcring_src_kp_live[i] = pmcring_src_kp_attach(i);
	}
	return 0;
}

/* The kprobes stay (see above); pmcring_src_want turns them off. */
void pmcring_src_map_put(struct pmcring_session *s)
{
}

/*
 * Caller holds pmcring_src_mutex, no session is enabled (or the module
 * unloads): remove every kprobe.  unregister_kprobe() waits for running
 * handlers; a kretprobe instance still in flight finds its rethook handler
 * gone and never reaches ours, so the copies can go.
 */
void pmcring_src_map_detach(void)
{
	unsigned int i, cpu;
	bool any = false;

	for (i = 0; i < ARRAY_SIZE(pmcring_src_kps); i++) {
		if (!pmcring_src_kp_live[i])
			continue;
		pmcring_src_kp_unregister(pmcring_src_kp_live[i]);
		kfree(pmcring_src_kp_live[i]);
		pmcring_src_kp_live[i] = NULL;
		any = true;
	}
	/* No handler runs: nothing compares with a freed copy's address. */
	if (any)
		for_each_possible_cpu(cpu)
			per_cpu(pmcring_src_entered, cpu) = NULL;
}

/* ---- kernel modules ---- */

static void pmcring_src_mod_text(struct module *mod, u64 *start, u64 *end)
{
/* struct module_memory (6.4) came with for_each_mod_mem_type() */
#ifdef for_each_mod_mem_type
	*start = (unsigned long)mod->mem[MOD_TEXT].base;
	*end = *start + mod->mem[MOD_TEXT].size;
#else
	*start = (unsigned long)mod->core_layout.base;
	*end = *start + mod->core_layout.text_size;
#endif
}

static int pmcring_src_module_event(struct notifier_block *nb,
				    unsigned long action, void *data)
{
	struct pmcring_session *s;
	struct module *mod = data;
	unsigned int type;
	u64 start, end;

	if (action == MODULE_STATE_COMING)
		type = PMCRING_TYPE_MAP_IN;
	else if (action == MODULE_STATE_GOING)
		type = PMCRING_TYPE_MAP_OUT;
	else
		return NOTIFY_DONE;
	if (!pmcring_src_wanted(type))
		return NOTIFY_DONE;
	pmcring_src_mod_text(mod, &start, &end);
	rcu_read_lock();
	preempt_disable();
	list_for_each_entry_rcu(s, &pmcring_active, active_node) {
		bool k = READ_ONCE(s->kaddr_ok);

		if (!pmcring_session_wants(s, type) ||
		    (!s->src->system_wide && !s->src->targets))
			continue;
		if (type == PMCRING_TYPE_MAP_IN)
			pmcring_src_map_in(s, -1, k ? start : 0, mod->name);
		else
			pmcring_src_map_out(s, -1, k ? start : 0, k ? end : 0);
	}
	preempt_enable();
	rcu_read_unlock();
	return NOTIFY_DONE;
}

static struct notifier_block pmcring_src_module_nb = {
	.notifier_call = pmcring_src_module_event,
};

/* ---- synthesis at enable ---- */

/*
 * The mm of @t if @s may read it, referenced, as mm_access() gives it to
 * /proc/PID/maps: checked and taken under @t's exec_update_lock.  Without
 * the lock, a setuid exec could commit its credentials and map its image
 * between the ENABLE walk's check and get_task_mm(), before the exec probe
 * revokes the process.  Taken before an exec, the mm is the old image's,
 * which @s was allowed to read.  NULL if none or not allowed.
 */
static struct mm_struct *pmcring_src_read_mm(struct pmcring_session *s,
					     struct task_struct *t)
{
	struct mm_struct *mm = NULL;

	if (down_read_killable(&t->signal->exec_update_lock))
		return NULL;
	if (pmcring_src_may_read(s, t))
		mm = get_task_mm(t);
	up_read(&t->signal->exec_update_lock);
	return mm;
}

/* Path of @t's executable (the mapping of mm->exe_file), into @buf. */
int pmcring_src_exe_path(struct pmcring_session *s, struct task_struct *t,
			 char *buf, int size, const char **path)
{
	struct mm_struct *mm = pmcring_src_read_mm(s, t);
	struct vm_area_struct *vma;
	int err = -ENOENT;

	if (!mm)
		return err;
	if (mmap_read_lock_killable(mm)) {
		mmput(mm);
		return -EINTR;
	}
	{
		VMA_ITERATOR(vmi, mm, 0);

		for_each_vma(vmi, vma) {
			if (vma->vm_file &&
			    vma->vm_file == rcu_access_pointer(mm->exe_file)) {
				*path = pmcring_src_d_path(vma->vm_file, buf);
				err = 0;
				break;
			}
		}
	}
	mmap_read_unlock(mm);
	mmput(mm);
	return err;
}

static void pmcring_src_synth_task(struct pmcring_session *s,
				   struct task_struct *t, char *buf)
{
	struct pmcring_rec_proc_create rec = {
		.pl_pid = pmcring_src_pid(s, t),
	};
	struct mm_struct *mm = NULL;

	/*
	 * The name and the mappings of one image, one @s may still read
	 * (pmcring_src_read_mm()): none of an image a setuid exec put in
	 * since the tree walk.
	 */
	if (down_read_killable(&t->signal->exec_update_lock))
		return;
	if (!pmcring_src_may_read(s, t)) {
		up_read(&t->signal->exec_update_lock);
		return;
	}
	if (pmcring_session_wants(s, PMCRING_TYPE_PROC_CREATE)) {
		__get_task_comm(rec.pl_pcomm, TASK_COMM_LEN, t);
		pmcring_src_emit_task(s, PMCRING_TYPE_PROC_CREATE,
				      PMCRING_SIZE_PROC_CREATE, &rec);
	}
	if (pmcring_session_wants(s, PMCRING_TYPE_MAP_IN) &&
	    !(t->flags & PF_KTHREAD))
		mm = get_task_mm(t);
	up_read(&t->signal->exec_update_lock);
	if (!mm)
		return;
	if (!mmap_read_lock_killable(mm)) {
		preempt_disable();
		pmcring_src_map_all(s, pmcring_src_pid(s, t), mm, buf);
		preempt_enable();
		mmap_read_unlock(mm);
	}
	mmput(mm);
}

/* The processes @s follows, referenced; *nr of them. */
static struct task_struct **pmcring_src_synth_list(struct pmcring_session *s,
						   unsigned int *nr)
{
	struct task_struct **tasks, *p;
	unsigned int n = 0, max = 0;

	rcu_read_lock();
	for_each_process(p)
		max++;
	rcu_read_unlock();
	tasks = kvmalloc_array(max + 1, sizeof(*tasks), GFP_KERNEL);
	if (!tasks)
		return NULL;
	rcu_read_lock();
	for_each_process(p) {
		if (n == max)
			break;	/* forked meanwhile: PROCFORK tells */
		if (!pmcring_src_follows(s, p))
			continue;
		get_task_struct(p);
		tasks[n++] = p;
	}
	rcu_read_unlock();
	*nr = n;
	return tasks;
}

static void pmcring_src_synth_module(struct pmcring_session *s,
				     struct module *mod)
{
	u64 start, end;

	if (mod->state == MODULE_STATE_UNFORMED)
		return;
	pmcring_src_mod_text(mod, &start, &end);
	pmcring_src_map_in(s, -1, READ_ONCE(s->kaddr_ok) ? start : 0, mod->name);
}

/*
 * MAP_IN for the modules loaded before the session.  Neither the module
 * list nor module_mutex is exported, but every module is on that list, ours
 * too: walk it from our own node under RCU (modules are freed after a grace
 * period), telling the list head - kernel data, outside the module area -
 * from the modules, which live in it.  A module loading meanwhile may get
 * its MAP_IN twice (here and from the notifier).
 */
static void pmcring_src_synth_modules(struct pmcring_session *s)
{
	struct list_head *pos;

	if (!pmcring_session_wants(s, PMCRING_TYPE_MAP_IN))
		return;
	rcu_read_lock();
	preempt_disable();
	pmcring_src_synth_module(s, THIS_MODULE);
	list_for_each_rcu(pos, &THIS_MODULE->list) {
		if ((unsigned long)pos < MODULES_VADDR ||
		    (unsigned long)pos >= MODULES_END)
			continue;	/* the list head */
		pmcring_src_synth_module(s, list_entry(pos, struct module,
						       list));
	}
	preempt_enable();
	rcu_read_unlock();
}

/*
 * PROC_CREATE and MAP_IN for what already runs, as perf synthesizes from
 * /proc, and MAP_IN for the kernel modules already loaded.  Process context,
 * s->lock held.
 */
void pmcring_src_synthesize(struct pmcring_session *s)
{
	struct task_struct **tasks;
	unsigned int i, n;
	char *buf;

	if (!s->src->system_wide && !s->src->targets)
		return;		/* follows nothing */
	if (!pmcring_session_wants(s, PMCRING_TYPE_PROC_CREATE) &&
	    !pmcring_session_wants(s, PMCRING_TYPE_MAP_IN))
		return;
	pmcring_src_synth_modules(s);
	buf = kmalloc(PATH_MAX, GFP_KERNEL);
	if (!buf)
		return;
	tasks = pmcring_src_synth_list(s, &n);
	if (tasks) {
		for (i = 0; i < n; i++) {
			pmcring_src_synth_task(s, tasks[i], buf);
			put_task_struct(tasks[i]);
			cond_resched();
		}
		kvfree(tasks);
	}
	kfree(buf);
}

int pmcring_src_map_init(void)
{
	int err;

	pmcring_src_fake_init();
	pmcring_src_pathbufs = kvmalloc_array(nr_cpu_ids, PATH_MAX, GFP_KERNEL);
	if (!pmcring_src_pathbufs)
		return -ENOMEM;
	err = register_module_notifier(&pmcring_src_module_nb);
	if (err)
		kvfree(pmcring_src_pathbufs);
	return err;
}

void pmcring_src_map_exit(void)
{
	pmcring_src_map_detach();
	unregister_module_notifier(&pmcring_src_module_nb);
	kvfree(pmcring_src_pathbufs);
}
