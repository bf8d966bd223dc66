/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one producer entry point pmcring.ko exports to other modules, in two
 * shapes: the tracepoint benchmark (kmod/bench/pmcring_ftrace_bench.c)
 * attaches the probe-shaped one to its tracepoint, so pmcring is measured
 * behind the same tracepoint as perf, BPF and ftrace.  Not a stable
 * interface; the bench module looks it up with symbol_get() so it loads
 * without pmcring.ko.
 */
#ifndef _PMCRING_EMIT_H
#define _PMCRING_EMIT_H

#include <linux/types.h>

/*
 * Write one GENERATED record of 32 + @len bytes (header, @seq, this CPU,
 * @ctx, then @len bytes of @data) into this CPU's ring of every enabled
 * session recording GENERATED records.  Any context including NMI, never
 * sleeps.  Returns the number of rings written; a full ring drops the record
 * and counts it in that ring's lost (DROPNOTIFY follows), -EINVAL for a
 * length pmclog cannot carry.
 */
int pmcring_emit_generated(u64 seq, u32 ctx, const void *data, u32 len);

/*
 * pmcring_emit_generated() as a probe of a tracepoint with the prototype
 * (u64 seq, u32 cpu, u32 ctx, const u8 *data, u32 len), the benchmark's
 * pmcring_bench:pfb_event; @cpu is ignored (the record holds the CPU that
 * writes it), a bad @len writes nothing.
 */
void pmcring_emit_generated_probe(void *unused, u64 seq, u32 cpu, u32 ctx,
				  const u8 *data, u32 len);

#endif /* _PMCRING_EMIT_H */
