/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * Interface of the benchmark-only module pmcring_ftrace_bench.ko: the loop
 * of PMCRING_IOC_GENERATE (PMCRING_GEN_F_TASK) writing the same records into
 * a ring buffer of the kernel's own tracing ring buffer API instead of
 * pmcring's rings.  Used by selftests/bench/pmcbench.c only; not an ABI.
 *
 * /dev/pmcring_ftrace_bench, root only:
 *	PFB_IOC_SETUP	allocate the ring buffer (bytes per CPU), freeing
 *			the previous one
 *	PFB_IOC_RESET	empty it (ring_buffer_reset()), between runs
 *	PFB_IOC_RUN	count records of size bytes on each chosen CPU from a
 *			work item bound to it, like PMCRING_IOC_GENERATE
 *	PFB_IOC_CLOCK	count reads of one clock in the same loop, on the
 *			calling CPU: what a timestamp costs each side
 *	PFB_IOC_TP	fire the tracepoint pmcring_bench:pfb_event (pfb_trace.h)
 *			count times on each chosen CPU, with one of the module's
 *			own probes attached for the run (or none: whatever user
 *			space attached, perf, BPF, ftrace); back to back from a
 *			work item (task context) or from irq_work (hard IRQ),
 *			or at an offered rate from a pinned hard-IRQ hrtimer
 */
#ifndef _PMCRING_FTRACE_BENCH_H
#define _PMCRING_FTRACE_BENCH_H

#include <linux/types.h>
#include <linux/ioctl.h>

#define PFB_DEV_PATH		"/dev/pmcring_ftrace_bench"

struct pfb_setup {
	__u64	bytes;		/* in: buffer bytes per CPU */
	__u64	__reserved[3];	/* in: 0 */
};

struct pfb_run {
	__u64	count;		/* in: records per CPU */
	__u32	size;		/* in: record length, 16..4128, % 8 == 0 */
	__u32	flags;		/* in: 0 */
	__u64	cpus;		/* in: bitmap of CPUs 0..63, 0 = all online */
	__u64	written;	/* out: records committed */
	__u64	failed;		/* out: reservations that failed (full) */
	__u64	entries;	/* out: ring_buffer_entries() afterwards */
	__u64	loop_ns;	/* out: longest loop of one CPU, ns */
	__u64	__reserved[2];	/* in: 0 */
};

/* PFB_IOC_CLOCK clocks */
#define PFB_CLOCK_MONO		0	/* ktime_get_mono_fast_ns(): pmcring */
#define PFB_CLOCK_LOCAL		1	/* trace_clock_local(): ftrace default */
#define PFB_CLOCK_NONE		2	/* the loop alone */

struct pfb_clock {
	__u64	count;		/* in: reads */
	__u32	clock;		/* in: PFB_CLOCK_* */
	__u32	flags;		/* in: 0 */
	__u64	loop_ns;	/* out: ns of the loop */
	__u64	sink;		/* out: sum of the values read */
	__u64	__reserved[2];	/* in: 0 */
};

/* PFB_IOC_TP probes the module attaches for the run */
#define PFB_PROBE_NONE		0	/* none (perf, BPF, ftrace attach) */
#define PFB_PROBE_EMPTY		1	/* an empty probe: the floor */
#define PFB_PROBE_MINRING	2	/* a minimal single-writer ring */
#define PFB_PROBE_PMCRING	3	/* pmcring_emit_generated() */
#define PFB_PROBE_MAX		3

/* PFB_IOC_TP flags */
#define PFB_TP_F_IRQ		(1u << 0)	/* hard IRQ (irq_work batches) */

/* Record sizes the tracepoint payload can stand for (size - 16 bytes). */
#define PFB_TP_SIZE_MIN		32
#define PFB_TP_SIZE_MAX		288

struct pfb_tp {
	__u64	count;		/* in: events per CPU */
	__u32	size;		/* in: GENERATED record size, 32..288, % 8 == 0 */
	__u32	flags;		/* in: PFB_TP_F_* */
	__u64	cpus;		/* in: bitmap of CPUs 0..63, 0 = all online */
	__u32	probe;		/* in: PFB_PROBE_* */
	__u32	rate;		/* in: events/s per CPU (hrtimer), 0 = max */
	__u64	ring_bytes;	/* in: PFB_PROBE_MINRING bytes per CPU */
	__u64	fired;		/* out: tracepoint calls, all CPUs */
	__u64	written;	/* out: MINRING, PMCRING: records written */
	__u64	failed;		/* out: MINRING: ring full */
	__u64	loop_ns;	/* out: longest loop of one CPU, ns */
	__u64	__reserved[2];	/* in: 0 */
};

#define PFB_IOC_MAGIC		0xB8
#define PFB_IOC_SETUP		_IOW(PFB_IOC_MAGIC, 0x01, struct pfb_setup)
#define PFB_IOC_RESET		_IO(PFB_IOC_MAGIC, 0x02)
#define PFB_IOC_RUN		_IOWR(PFB_IOC_MAGIC, 0x03, struct pfb_run)
#define PFB_IOC_CLOCK		_IOWR(PFB_IOC_MAGIC, 0x04, struct pfb_clock)
#define PFB_IOC_TP		_IOWR(PFB_IOC_MAGIC, 0x05, struct pfb_tp)

#endif /* _PMCRING_FTRACE_BENCH_H */
