/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * pmcring: hwpmc-style records in per-CPU rings mapped by user space.
 *
 * Opening /dev/pmcring creates a session.  After PMCRING_IOC_CONFIGURE each
 * CPU online then owns one ring, mapped by user space at
 *
 *	offset = cpu * region_size	(region_size from struct pmcring_config)
 *
 * for cpu < info.nr_cpus (the possible CPUs).  A CPU that comes online
 * later gets its ring then; until it does, mmap() of its region fails with
 * ENODEV.  The producer page's nr_rings says how many rings exist.  A CPU
 * that goes offline keeps its ring and its records.
 *
 * Region of one CPU (all offsets in pages of info.page_size):
 *
 *	page 0		struct pmcring_mmap_page, control page, read-write
 *	page 1		struct pmcring_prod_page, producer page, read-only
 *	pages 2..	data_size bytes of data, mapped twice in a row so that
 *			a record that wraps is contiguous, read-only
 *
 * A mapping may cover any page-aligned sub-range of one region.  It is
 * writable only if it covers the control page alone; any mapping that covers
 * page 1 or later must be PROT_READ only (VM_MAYWRITE is cleared); PROT_EXEC
 * is refused everywhere.  A consumer typically reserves region_size bytes of
 * address space and maps page 0 read-write and the rest read-only over it
 * with MAP_FIXED, so the control page is the base of one contiguous view.
 *
 * Records carry the FreeBSD pmclog layout (sys/sys/pmclog.h): a 16-byte
 * header (magic 0xEE, type, length; a zero spare word; a timestamp in
 * nanoseconds of CLOCK_MONOTONIC read with ktime_get_mono_fast_ns()) and the
 * body of that type.  In the ring every record starts 8-byte aligned: the
 * space a record takes is PMCRING_RING_SPACE(length); the bytes between the
 * end of a record and the next record (0 or 4) are zero and are not part of
 * the record.  Records of one ring appear in non-decreasing timestamp order.
 *
 * ORDERING CONTRACT (implemented by pmcring_ring_reserve() and
 * pmcring_ring_commit() in kmod/ring.c; the user side by
 * pmcring_cpu_buf_peek()/pmcring_cpu_buf_consume() in user/lib/ring.c):
 *
 *	kernel (producer)			user (consumer)
 *	(A) LOAD data_tail			(C) LOAD data_head (acquire)
 *	    STORE record bytes			    LOAD record bytes
 *	(B) smp_wmb()				(D) smp_mb()
 *	    STORE data_head			    STORE data_tail (release)
 *
 *	A pairs with D, B pairs with C, as in perf (perf_output_put_handle).
 *	Only the outermost of nested writers on a CPU (process, softirq,
 *	hardirq, NMI) publishes data_head.
 *
 * EXACT CROSS-CPU ORDER.  A consumer merging all CPUs must know, for a CPU
 * whose ring it has drained, the lowest timestamp a record that is not yet
 * visible may carry.  The producer page of each CPU holds pending_ts:
 *
 *	pending_ts == 0	no record of this CPU is in flight: every record
 *			not yet visible in data_head will read its timestamp
 *			after the moment this 0 was read.
 *	pending_ts != 0	records are in flight: none of them, nor any later
 *			one, has a timestamp below pending_ts.
 *
 *	kernel (pmcring_ring_reserve)		user (pmcring_merge_*)
 *	(E) STORE pending_ts = t0 (the ts	(F) T = PMCRING_IOC_CLOCK; smp_mb()
 *	    of the ring's last record);		    LOAD pending_ts (acquire)
 *	    smp_mb()				(H) LOAD data_head (acquire)
 *	    READ the clock: ts >= t0
 *	...commit: STORE data_head;
 *	(G) smp_wmb(); STORE pending_ts = 0
 *
 *	E pairs with F (store-buffering: if the consumer reads 0 the writer's
 *	clock read comes after T), G pairs with H (a consumer that reads the
 *	cleared 0 also sees the data_head published before it).  Nested writers
 *	only ever lower a non-zero pending_ts, so a clear cannot hide them
 *	(see pmcring_ring_commit()).
 *
 * So for a drained CPU the bound is pending_ts if non-zero, else T.  A
 * record r of any CPU may be handed out once every other CPU either has a
 * visible record with timestamp >= r's or a bound >= r's timestamp.
 */
#ifndef _UAPI_LINUX_PMCRING_H
#define _UAPI_LINUX_PMCRING_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PMCRING_DEV_NAME		"pmcring"
#define PMCRING_DEV_PATH		"/dev/pmcring"

/*
 * Version of this ABI; compat_version is the oldest it stays compatible with.
 * 2: the ioctl magic moved from 0xB7 (nsfs's) to PMCRING_IOC_MAGIC below, so
 * no binary built for version 1 issues a pmcring ioctl any more.
 * 3: PMCRING_CFG_F_CPUS and PMCRING_CFG_F_TID; counter flags
 * PMCRING_CTR_F_EXCLUDE_KERNEL/_USER and HW_CACHE, RAW and dynamic PMU
 * counter types (version 2 refuses them with EINVAL; version 2 callers are
 * unaffected).
 * 4: rings only for CPUs online since CONFIGURE (mmap() of another CPU's
 * region: ENODEV) and pmcring_prod_page.nr_rings; PMCRING_CFG_F_PIDFD and
 * config.pidfd (was __reserved0, which had to be 0).  Layout, records and
 * ioctls are unchanged: a version 2 or 3 consumer works as before where
 * every possible CPU is online at CONFIGURE, and elsewhere fails cleanly
 * with ENODEV when it maps an absent ring.  PERIOD records (type 33)
 * before the CALLCHAINs of a frequency-mode counter; types_supported says
 * whether the module writes them.  pmcring_prod_page.reported (was
 * __reserved[0], which read 0): the drops the ring's DROPNOTIFY records
 * announced; lost - reported were never announced (a version 3 consumer
 * sees 0 there and cannot tell).
 */
#define PMCRING_ABI_VERSION		4
#define PMCRING_ABI_COMPAT_VERSION	2

/* ---- pmclog records (FreeBSD sys/sys/pmclog.h) ---- */

#define PMCRING_LOG_MAGIC		0xEEu
#define PMCRING_LOG_VERSION		0x0A000000u	/* PMC_VERSION */
#define PMCRING_CALLCHAIN_DEPTH_MAX	512
#define PMCRING_CPUID_LEN		64
#define PMCRING_NAME_MAX		64
#define PMCRING_COMM_LEN		20		/* MAXCOMLEN + 1 */
#define PMCRING_PATH_MAX		1024		/* FreeBSD PATH_MAX */
#define PMCRING_CC_F_USERSPACE		0x01u
/* Largest record: CALLCHAIN of 512 frames = FreeBSD's parser buffer. */
#define PMCRING_RECORD_MAX		4128u
#define PMCRING_HEADER_SIZE		16u

#define PMCRING_HEADER(type, len) \
	((PMCRING_LOG_MAGIC << 24) | ((__u32)(type) << 16) | ((__u32)(len) & 0xffffu))
#define PMCRING_HEADER_MAGIC(h)		((__u32)(h) >> 24)
#define PMCRING_HEADER_TYPE(h)		(((__u32)(h) >> 16) & 0xffu)
#define PMCRING_HEADER_LEN(h)		((__u32)(h) & 0xffffu)
/* pmclog lengths are rounded to 4 bytes; ring slots to 8. */
#define PMCRING_LOG_ALIGN(len)		(((len) + 3u) & ~3u)
#define PMCRING_RING_SPACE(len)		(((len) + 7u) & ~7u)

enum pmcring_type {
	PMCRING_TYPE_CLOSELOG		= 1,
	PMCRING_TYPE_DROPNOTIFY		= 2,
	PMCRING_TYPE_INITIALIZE		= 3,
	PMCRING_TYPE_PMCALLOCATE	= 5,
	PMCRING_TYPE_PMCATTACH		= 6,
	PMCRING_TYPE_PMCDETACH		= 7,
	PMCRING_TYPE_PROCCSW		= 8,
	PMCRING_TYPE_PROCEXEC		= 9,
	PMCRING_TYPE_PROCEXIT		= 10,
	PMCRING_TYPE_PROCFORK		= 11,
	PMCRING_TYPE_SYSEXIT		= 12,
	PMCRING_TYPE_USERDATA		= 13,
	PMCRING_TYPE_MAP_IN		= 14,
	PMCRING_TYPE_MAP_OUT		= 15,
	PMCRING_TYPE_CALLCHAIN		= 16,
	PMCRING_TYPE_PMCALLOCATEDYN	= 17,
	PMCRING_TYPE_THR_CREATE		= 18,
	PMCRING_TYPE_THR_EXIT		= 19,
	PMCRING_TYPE_PROC_CREATE	= 20,
	/*
	 * pmcring's own types.  pmcring(1) writes GENERATED to a pmclog
	 * file only when asked to (--generate, or --types naming it);
	 * FreeBSD's parser stops at it (an unknown type), pmcring's reads
	 * it.  PERIOD never goes into a pmclog file: pmcring(1) writes the
	 * periods to a file beside it (Documentation/formats.rst).
	 */
	PMCRING_TYPE_GENERATED		= 32,	/* PMCRING_IOC_GENERATE */
	PMCRING_TYPE_PERIOD		= 33,	/* ABI 4: sample period */
	PMCRING_TYPE_MAX		= 63,	/* types fit a __u64 mask */
};

#define PMCRING_TYPE_BIT(t)		(1ull << (t))
#define PMCRING_TYPES_ALL		(~0ull)

/* Every record starts with this header. */
struct pmcring_rec_header {
	__u32	pl_header;	/* PMCRING_HEADER(type, length) */
	__u32	pl_spare;	/* always 0 */
	__u64	pl_tsc;		/* ns of CLOCK_MONOTONIC */
};

/* CLOSELOG, DROPNOTIFY: header only (16 bytes). */

struct pmcring_rec_initialize {			/* 112 bytes */
	struct pmcring_rec_header h;
	__u32	pl_version;	/* PMCRING_LOG_VERSION */
	__u32	pl_cpu;		/* cputype */
	__u64	pl_tsc_freq;	/* 1000000000: timestamps are ns */
	__u64	pl_ts_sec;	/* struct timespec of the start (realtime) */
	__u64	pl_ts_nsec;
	char	pl_cpuid[PMCRING_CPUID_LEN];
};

struct pmcring_rec_pmcallocate {		/* 40 bytes */
	struct pmcring_rec_header h;
	__u32	pl_pmcid;
	__u32	pl_event;
	__u32	pl_flags;
	__u32	pl_pad;		/* 0 */
	__u64	pl_rate;	/* sampling period, or frequency (flags) */
};

struct pmcring_rec_pmcattach {			/* 24 + path, rounded to 4 */
	struct pmcring_rec_header h;
	__u32	pl_pmcid;
	__u32	pl_pid;
	char	pl_pathname[];	/* NUL-terminated */
};

struct pmcring_rec_pmcdetach {			/* 24 bytes */
	struct pmcring_rec_header h;
	__u32	pl_pmcid;
	__u32	pl_pid;
};

struct pmcring_rec_proccsw {			/* 40 bytes */
	struct pmcring_rec_header h;
	__u64	pl_value;	/* ns the outgoing thread ran since it
				 * was switched in (se.sum_exec_runtime
				 * delta).  FreeBSD's hwpmc puts the
				 * counter's delta over that slice here;
				 * a perf counter cannot be read from
				 * sched_switch, so pmcring gives the
				 * cpu-clock quantity instead
				 * (Documentation/sources.rst)
				 */
	__u32	pl_pmcid;
	__u32	pl_pid;
	__u32	pl_tid;
	__u32	pl_pad;		/* 0 */
};

struct pmcring_rec_procexec {			/* 40 + path, rounded to 4 */
	struct pmcring_rec_header h;
	__u32	pl_pid;
	__u32	pl_pmcid;
	__u64	pl_baseaddr;	/* AT_BASE: load address of the interpreter
				 * (rtld), 0 if none (FreeBSD's reloc_base)
				 */
	__u64	pl_dynaddr;	/* load address of a PIE executable (its load
				 * bias, FreeBSD's et_dyn_addr), 0 for ET_EXEC
				 */
	char	pl_pathname[];	/* NUL-terminated */
};

struct pmcring_rec_procexit {			/* 32 bytes */
	struct pmcring_rec_header h;
	__u32	pl_pmcid;
	__u32	pl_pid;
	__u64	pl_value;	/* CPU time of the whole process in ns
				 * at the exit of its last thread
				 * (FreeBSD: the counter's value
				 * accumulated by the process; see
				 * PROCCSW)
				 */
};

struct pmcring_rec_procfork {			/* 24 bytes */
	struct pmcring_rec_header h;
	__u32	pl_oldpid;
	__u32	pl_newpid;
};

struct pmcring_rec_sysexit {			/* 24 bytes */
	struct pmcring_rec_header h;
	__u32	pl_pid;
	__u32	pl_pad;		/* 0 */
};

struct pmcring_rec_userdata {			/* 24 bytes */
	struct pmcring_rec_header h;
	__u32	pl_userdata;
	__u32	pl_pad;		/* 0 */
};

struct pmcring_rec_map_in {			/* 32 + path, rounded to 4 */
	struct pmcring_rec_header h;
	__u32	pl_pid;		/* (__u32)-1: kernel */
	__u32	pl_pad;		/* 0 */
	__u64	pl_start;
	char	pl_pathname[];	/* NUL-terminated */
};

struct pmcring_rec_map_out {			/* 40 bytes */
	struct pmcring_rec_header h;
	__u32	pl_pid;
	__u32	pl_pad;		/* 0 */
	__u64	pl_start;
	__u64	pl_end;
};

struct pmcring_rec_callchain {			/* 32 + 8 * npc */
	struct pmcring_rec_header h;
	__u32	pl_pid;
	__u32	pl_tid;
	__u32	pl_pmcid;
	__u32	pl_cpuflags;	/* cpu << 16 | PMCRING_CC_F_* */
	__u64	pl_pc[];	/* kernel frames first, then user frames */
};

struct pmcring_rec_pmcallocatedyn {		/* 96 bytes */
	struct pmcring_rec_header h;
	__u32	pl_pmcid;
	__u32	pl_event;
	__u32	pl_flags;
	__u32	pl_pad;		/* 0 */
	char	pl_evname[PMCRING_NAME_MAX];
};

/*
 * THR_CREATE is 52 bytes and PROC_CREATE 44: sizeof() rounds them to 56 and
 * 48 where a __u64 is 8-aligned (x86-64), not on i386.  Use the
 * PMCRING_SIZE_* lengths below, never sizeof().
 */
struct pmcring_rec_thr_create {
	struct pmcring_rec_header h;
	__u32	pl_tid;
	__u32	pl_pid;
	__u32	pl_flags;
	__u32	pl_pad;		/* 0 */
	char	pl_tdname[PMCRING_COMM_LEN];
};

struct pmcring_rec_thr_exit {			/* 24 bytes */
	struct pmcring_rec_header h;
	__u32	pl_tid;
	__u32	pl_pad;		/* 0 */
};

struct pmcring_rec_proc_create {
	struct pmcring_rec_header h;
	__u32	pl_pid;
	__u32	pl_flags;
	char	pl_pcomm[PMCRING_COMM_LEN];
};

/*
 * GENERATED (PMCRING_IOC_GENERATE), length 16..PMCRING_RECORD_MAX, a
 * multiple of 8.  Fields present only if the length covers them; byte i of
 * the record for i >= 32 is (__u8)(pl_seq + i).
 */
struct pmcring_rec_generated {
	struct pmcring_rec_header h;
	__u64	pl_seq;		/* 0, 1, 2, ... per CPU and GENERATE call */
	__u32	pl_cpu;		/* CPU that wrote it */
	__u32	pl_ctx;		/* PMCRING_GEN_CTX_* */
	__u8	pl_fill[];
};

/*
 * PERIOD (ABI 4), 32 bytes: the period of the samples of counter pl_pmcid
 * that follow it on the same CPU's ring, until the next PERIOD of that
 * pmcid there: the value perf hands the overflow handler
 * (perf_sample_data.period, the event's hw.last_period), in events of the
 * counter (nanoseconds for cpu-clock and task-clock).  Written only for a
 * counter with PMCRING_CTR_F_FREQ, before the first CALLCHAIN of that
 * counter on a CPU and before each one whose period differs from the last
 * PERIOD written there; a counter with a fixed period has none (the
 * PMCALLOCATE rate is its period).  The module drops a CALLCHAIN whose
 * PERIOD it could not write, so no sample follows a stale PERIOD.  A
 * session whose types leave PERIOD out gets CALLCHAINs without them.
 * pl_cpu names the ring, so that a merged stream (a blob set) can still
 * pair a PERIOD with the CALLCHAINs of its CPU (pl_cpuflags).
 */
struct pmcring_rec_period {
	struct pmcring_rec_header h;
	__u32	pl_pmcid;
	__u32	pl_cpu;		/* the CPU whose ring it is on */
	__u64	pl_period;
};

#define PMCRING_GEN_CTX_TASK		1u
#define PMCRING_GEN_CTX_HARDIRQ		2u
#define PMCRING_GEN_CTX_NMI		3u
#define PMCRING_GEN_CTX_MAX		3u

/* Exact record lengths of the fixed-size types. */
#define PMCRING_SIZE_CLOSELOG		16u
#define PMCRING_SIZE_DROPNOTIFY		16u
#define PMCRING_SIZE_INITIALIZE		112u
#define PMCRING_SIZE_PMCALLOCATE	40u
#define PMCRING_SIZE_PMCATTACH_MIN	24u
#define PMCRING_SIZE_PMCDETACH		24u
#define PMCRING_SIZE_PROCCSW		40u
#define PMCRING_SIZE_PROCEXEC_MIN	40u
#define PMCRING_SIZE_PROCEXIT		32u
#define PMCRING_SIZE_PROCFORK		24u
#define PMCRING_SIZE_SYSEXIT		24u
#define PMCRING_SIZE_USERDATA		24u
#define PMCRING_SIZE_MAP_IN_MIN		32u
#define PMCRING_SIZE_MAP_OUT		40u
#define PMCRING_SIZE_CALLCHAIN_MIN	32u
#define PMCRING_SIZE_PMCALLOCATEDYN	96u
#define PMCRING_SIZE_THR_CREATE		52u
#define PMCRING_SIZE_THR_EXIT		24u
#define PMCRING_SIZE_PROC_CREATE	44u
#define PMCRING_SIZE_PERIOD		32u

/* ---- the mapped pages ---- */

/*
 * Control page, page 0 of a CPU's region, read-write.  Laid out like
 * struct perf_event_mmap_page: data_head/data_tail/data_offset/data_size sit
 * at perf's offsets, so perf-style ring readers work unchanged.  The kernel
 * reads nothing from this page but data_tail, and never trusts it.
 */
struct pmcring_mmap_page {
	__u32	version;		/* PMCRING_ABI_VERSION */
	__u32	compat_version;		/* PMCRING_ABI_COMPAT_VERSION */
	__u32	cpu;			/* CPU whose records this ring holds */
	__u32	page_size;		/* bytes per page of the mapping */
	__u64	region_size;		/* bytes of this CPU's mmap region */
	__u64	watermark;		/* poll wake-up threshold, bytes */
	__u64	__reserved[124];	/* 0; pads to offset 1024 */

	/* perf_event_mmap_page compatible part, offset 1024 */
	__u64	data_head;		/* kernel: bytes written, free running */
	__u64	data_tail;		/* user: bytes consumed, free running */
	__u64	data_offset;		/* offset of the data in the region */
	__u64	data_size;		/* bytes of data, a power of two */
	__u64	aux_head;		/* 0: no AUX area */
	__u64	aux_tail;		/* ignored */
	__u64	aux_offset;		/* 0 */
	__u64	aux_size;		/* 0 */
};

/*
 * Producer page, page 1 of a CPU's region, read-only: what only the kernel
 * writes.  Counters are free running and exact.
 *
 * A DROPNOTIFY carries no count (the pmclog header's spare word stays 0):
 * it announces every drop since the previous one and is written just
 * before the next record that fits, in the same reservation.  reported
 * (ABI 4) is lost as of the last DROPNOTIFY reserved, raised together with
 * its reservation; so lost - reported are the drops no DROPNOTIFY has
 * announced (yet).  Once the session is disabled and the ring drained,
 * nothing will announce them: a consumer that writes a log ends it with
 * one DROPNOTIFY of its own for each ring where lost > reported.  The
 * kernel raises lost at the drop and reported later, with a write barrier
 * between: a live reader loads reported first, with a load-acquire, then
 * lost, and gets lost >= reported.  Read the other way round, or in an
 * unspecified order, reported may pass lost: clamp lost - reported at 0.
 */
struct pmcring_prod_page {
	__u64	pending_ts;		/* see EXACT CROSS-CPU ORDER above */
	__u64	lost;			/* records dropped for lack of space */
	__u64	records;		/* records committed, DROPNOTIFY
					 * included
					 */
	__u64	bytes;			/* ring bytes committed (with padding) */
	__u64	flags;			/* PMCRING_PROD_F_* */
	__u64	nr_rings;		/* ABI 4: rings of the session now,
					 * only grows; see RINGS AND CPU
					 * HOTPLUG below
					 */
	__u64	reported;		/* ABI 4: drops announced by the
					 * ring's DROPNOTIFY records
					 */
	__u64	__reserved[57];		/* 0; pads to 512 bytes */
};

/*
 * RINGS AND CPU HOTPLUG.  A ring exists for each CPU online at CONFIGURE
 * and is added for a CPU that comes online later, before that CPU runs
 * anything (a CPU hotplug prepare step, kmod/dev.c).  A CPU that goes
 * offline keeps its ring and the records in it until the session ends.
 * mmap() of the region of a possible CPU without a ring fails with
 * ENODEV; a consumer maps the others and treats an absent ring as an idle
 * CPU.  Each time a ring is added, every ring's nr_rings is raised to the
 * new count with a store-release made after the ring was published, so a
 * consumer that reads nr_rings with a load-acquire can map it.  A consumer
 * that mapped fewer rings than nr_rings says tries the absent CPUs again.
 * For the exact merge it does so in step (F):
 *
 *	T = PMCRING_IOC_CLOCK; smp_mb(); LOAD nr_rings (acquire)
 *
 * If nr_rings equals the rings it mapped, a ring added later holds only
 * records with timestamps after T (the ring is created before its CPU
 * runs, and the CPU reads the clock after), so the absent CPUs bound
 * nothing below T.
 *
 * PMCRING_PROD_F_DATA: the ring has its data pages, set before the ring
 * can be mapped.  Should they fail to be allocated for a CPU coming online
 * (no memory), the ring exists without them: it stays empty (data_head 0,
 * pending_ts 0), a fault on its data pages is SIGBUS (a consumer reading
 * only below data_head never takes one), and each record of that CPU is
 * counted in lost.  Once set the flag stays.  It is stored with release
 * after the pages are in place: a consumer that reads flags with a
 * load-acquire and sees it can read the data pages without a fault.
 */
#define PMCRING_PROD_F_DATA		(1ull << 0)

/* ---- ioctls on the session fd ---- */

/*
 * ioctl type code.  0xC1 has no entry in the kernel's registry,
 * Documentation/userspace-api/ioctl/ioctl-number.rst (checked in 6.1 and
 * in mainline: 0xC0 is usb/iowarrior.h, 0xCA cxl; 0xC1-0xC9 are free).
 * ABI version 1 used 0xB7, which belongs to nsfs (uapi/linux/nsfs.h):
 * PMCRING_IOC_ENABLE had the number of NS_GET_NSTYPE.
 */
#define PMCRING_IOC_MAGIC		0xC1

/* Session-wide limits and facts. */
struct pmcring_info {
	__u32	abi_version;		/* PMCRING_ABI_VERSION */
	__u32	compat_version;		/* PMCRING_ABI_COMPAT_VERSION */
	__u32	nr_cpus;		/* possible CPUs: regions 0..nr_cpus-1 */
	__u32	page_size;		/* bytes */
	__u32	min_data_pages;		/* smallest data_pages accepted */
	__u32	max_data_pages;		/* largest data_pages accepted */
	__u32	max_record;		/* PMCRING_RECORD_MAX */
	__u32	flags;			/* PMCRING_INFO_F_* */
	__u64	types_supported;	/* PMCRING_TYPE_BIT() of the types
					 * config.types accepts: every type
					 * this module knows.  CLOSELOG and
					 * INITIALIZE are accepted but never
					 * written to a ring (a consumer that
					 * writes a pmclog file writes them);
					 * each other bit is a type the
					 * module writes
					 */
	__u64	region_size;		/* 0 until configured */
	__u64	__reserved[4];		/* 0 */
};

#define PMCRING_INFO_F_CONFIGURED	(1u << 0)
#define PMCRING_INFO_F_ENABLED		(1u << 1)

/* Configure once per session; EBUSY after that. */
struct pmcring_config {
	__u32	data_pages;		/* in: data pages per CPU, power of two */
	__u32	flags;			/* in: PMCRING_CFG_F_* */
	__u64	watermark;		/* in: bytes, 0 = data_size / 4 */
	__u64	types;			/* in: PMCRING_TYPE_BIT() mask, 0 = all */
	__s32	pid;			/* in: target process (and descendants),
					 * with PMCRING_CFG_F_PID
					 */
	__u32	callchain_depth;	/* in: max frames, <= 512 (EINVAL)
					 * and <= perf_event_max_stack
					 * (EOVERFLOW); 0: that sysctl,
					 * at most 128
					 */
	__u64	region_size;		/* out: stride of the CPU regions */
	__u64	cpus;			/* in: with PMCRING_CFG_F_CPUS, user
					 * pointer to a CPU bitmap (__u64
					 * words, bit n = CPU n)
					 */
	__u32	cpus_size;		/* in: bytes of the bitmap, multiple
					 * of 8
					 */
	__s32	pidfd;			/* in: with PMCRING_CFG_F_PIDFD (ABI
					 * 4), a pidfd of config.pid; else 0
					 */
	__u64	__reserved[2];		/* in: must be 0 */
};

#define PMCRING_CFG_F_SYSTEM_WIDE	(1u << 0)	/* CAP_PERFMON */
#define PMCRING_CFG_F_PID		(1u << 1)	/* follow config.pid */
#define PMCRING_CFG_F_NO_SYNTH		(1u << 2)	/* no PROC_CREATE/MAP_IN at enable */
/*
 * ABI 3.  With SYSTEM_WIDE: samples (CALLCHAIN) and context switches
 * (PROCCSW) only from the CPUs of config.cpus; process and mapping records
 * still come from every CPU.
 */
#define PMCRING_CFG_F_CPUS		(1u << 3)
/*
 * ABI 3.  With PID: config.pid is one thread; only its samples and context
 * switches, and its process's records, not the process's other threads nor
 * the processes it creates.
 */
#define PMCRING_CFG_F_TID		(1u << 4)
/*
 * ABI 4.  With PID: config.pidfd is a pidfd (pidfd_open(2), clone3's
 * CLONE_PIDFD) of the process, or with TID the thread or its process
 * (pidfd_open() takes threads only from 6.9), that config.pid names in
 * the opener's pid namespace.  CONFIGURE fails with EBADF if it
 * is not a pidfd and with ESRCH if it is one of another process: the
 * number was reused since the caller took the pidfd.  Without the flag
 * config.pidfd must be 0.
 */
#define PMCRING_CFG_F_PIDFD		(1u << 5)
#define PMCRING_CFG_F_ALL \
	(PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH | \
	 PMCRING_CFG_F_CPUS | PMCRING_CFG_F_TID | PMCRING_CFG_F_PIDFD)

/* A sampling counter (PMCALLOCATE on allocation, CALLCHAIN on overflow). */
struct pmcring_counter {
	__u32	type;			/* in: PERF_TYPE_HARDWARE, _SOFTWARE,
					 * _HW_CACHE, _RAW, or a PMU's
					 * dynamic type (below 0x10000)
					 */
	__u32	flags;			/* in: PMCRING_CTR_F_* */
	__u64	config;			/* in: perf event config */
	__u64	rate;			/* in: period, or Hz with _F_FREQ */
	__u32	pmcid;			/* out: id in the records */
	__u32	__reserved0;		/* in: must be 0 */
	char	name[PMCRING_NAME_MAX];	/* in: NUL-terminated event name */
	__u64	__reserved[4];		/* in: must be 0 */
};

#define PMCRING_CTR_F_FREQ		(1u << 0)	/* rate is a frequency */
/* perf's :u and :k: count in user mode only, in kernel mode only */
#define PMCRING_CTR_F_EXCLUDE_KERNEL	(1u << 1)
#define PMCRING_CTR_F_EXCLUDE_USER	(1u << 2)
#define PMCRING_CTR_F_ALL		(PMCRING_CTR_F_FREQ | \
					 PMCRING_CTR_F_EXCLUDE_KERNEL | \
					 PMCRING_CTR_F_EXCLUDE_USER)

/* Synthetic load for tests and benchmarks; CAP_SYS_ADMIN only. */
struct pmcring_generate {
	__u64	count;			/* records per CPU and per context
					 * flag: each CPU gets one stream of
					 * count records for each of TASK
					 * and HARDIRQ set
					 */
	__u32	size;			/* record length, 16..RECORD_MAX, % 8 == 0 */
	__u32	flags;			/* PMCRING_GEN_F_* */
	__u64	cpus;			/* user pointer to a CPU bitmap, 0 = online */
	__u32	cpus_size;		/* bytes of the bitmap, multiple of 8 */
	__u32	irq_batch;		/* records per hrtimer tick, 0 = 16 */
	__u64	__reserved[2];		/* must be 0 */

	/*
	 * PMCRING_GENERATE_SIZE_VER1: the result, written back by
	 * PMCRING_IOC_GENERATE (ignored on input), summed over the CPUs.
	 * Index [ctx] is a PMCRING_GEN_CTX_*; [0] is unused.
	 */
	__u64	written[4];		/* out: records committed per ctx */
	__u64	dropped[4];		/* out: records dropped per ctx (lost) */
	__u64	nmi_sent;		/* out: NMIs raised */
	__u64	nmi_depth[4];		/* out: NMI records by the number of
					 * writers they nested in on the ring
					 * (0, 1, 2, 3 or more)
					 */
	__u64	nmi_in_wrap;		/* out: NMI records written while a
					 * record wrapping the end of the
					 * data was reserved, not committed
					 */
	__u64	src_nmi;		/* out: PMCRING_GEN_F_SRC_NMI probe
					 * calls made in NMI context
					 */
	__u64	__reserved_out[3];	/* out: 0 */
};

/*
 * struct pmcring_generate grows at its end; the ioctl's size field says
 * which version the caller has.  VER0 (input only) is still accepted.
 */
#define PMCRING_GENERATE_SIZE_VER0	48
#define PMCRING_GENERATE_SIZE_VER1	192

#define PMCRING_GEN_F_TASK		(1u << 0)	/* from process context */
#define PMCRING_GEN_F_HARDIRQ		(1u << 1)	/* from an hrtimer */
#define PMCRING_GEN_F_NMI		(1u << 2)	/* from NMIs (x86 APIC) */
/*
 * Test hooks, as CAP_SYS_ADMIN-only as the rest of GENERATE, and only with
 * the module parameter test_hooks set (else EPERM).
 * PMCRING_GEN_F_BAD_LEN: every record is reserved with length size - 2, a
 * caller's bug the producer must catch: WARN_ON_ONCE() (a kernel WARNING
 * once per boot) and a drop counted in lost and in dropped[].
 * PMCRING_GEN_F_SRC_NMI (with PMCRING_GEN_F_NMI): each NMI batch also runs
 * the mmap kprobe's handler on a fake executable mapping; in NMI context it
 * must write nothing and count one lost MAP_IN in each enabled session that
 * wants MAP_IN and follows the interrupted task.  The calls made are in
 * src_nmi.
 */
#define PMCRING_GEN_F_BAD_LEN		(1u << 3)
#define PMCRING_GEN_F_SRC_NMI		(1u << 4)
/*
 * The streams of the first version.  Callers pass it to mean "task and
 * hard IRQ", so it keeps that meaning: the NMI stream is asked for by name.
 */
#define PMCRING_GEN_F_ALL		(PMCRING_GEN_F_TASK | PMCRING_GEN_F_HARDIRQ)

#define PMCRING_IOC_GET_INFO	_IOR(PMCRING_IOC_MAGIC, 0x01, struct pmcring_info)
#define PMCRING_IOC_CONFIGURE	_IOWR(PMCRING_IOC_MAGIC, 0x02, struct pmcring_config)
#define PMCRING_IOC_ENABLE	_IO(PMCRING_IOC_MAGIC, 0x03)
#define PMCRING_IOC_DISABLE	_IO(PMCRING_IOC_MAGIC, 0x04)
/* USERDATA record with this value on the calling CPU (pmc_writelog(3)). */
#define PMCRING_IOC_WRITELOG	_IOW(PMCRING_IOC_MAGIC, 0x05, __u32)
#define PMCRING_IOC_GENERATE	_IOWR(PMCRING_IOC_MAGIC, 0x06, struct pmcring_generate)
/* The first version: the 48-byte request, nothing written back. */
#define PMCRING_IOC_GENERATE_VER0 \
	_IOC(_IOC_WRITE, PMCRING_IOC_MAGIC, 0x06, PMCRING_GENERATE_SIZE_VER0)
/*
 * ktime_get_mono_fast_ns() read as (F) of the ordering contract; the
 * caller issues the full barrier of (F) (smp_mb(), C11 seq_cst fence)
 * after the ioctl returns and before it loads pending_ts.
 */
#define PMCRING_IOC_CLOCK	_IOR(PMCRING_IOC_MAGIC, 0x07, __u64)
#define PMCRING_IOC_ADD_COUNTER	_IOWR(PMCRING_IOC_MAGIC, 0x08, struct pmcring_counter)
/* Wake poll() now, whatever the watermark. */
#define PMCRING_IOC_FLUSH	_IO(PMCRING_IOC_MAGIC, 0x09)

/*
 * poll(): EPOLLIN when some ring holds at least watermark bytes, after
 * PMCRING_IOC_FLUSH, and after DISABLE; EPOLLHUP too once disabled after
 * having been enabled (the consumer drains and stops).
 */

#endif /* _UAPI_LINUX_PMCRING_H */
