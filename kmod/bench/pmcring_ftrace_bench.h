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

#define PFB_IOC_MAGIC		0xB8
#define PFB_IOC_SETUP		_IOW(PFB_IOC_MAGIC, 0x01, struct pfb_setup)
#define PFB_IOC_RESET		_IO(PFB_IOC_MAGIC, 0x02)
#define PFB_IOC_RUN		_IOWR(PFB_IOC_MAGIC, 0x03, struct pfb_run)
#define PFB_IOC_CLOCK		_IOWR(PFB_IOC_MAGIC, 0x04, struct pfb_clock)

#endif /* _PMCRING_FTRACE_BENCH_H */
