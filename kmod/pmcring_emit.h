/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The one producer entry point pmcring.ko exports to other modules: the
 * tracepoint benchmark (kmod/bench/pmcring_ftrace_bench.c) attaches a probe
 * that calls it, so pmcring is measured behind the same tracepoint as perf,
 * BPF and ftrace.  Not a stable interface; the bench module looks it up with
 * symbol_get() so it loads without pmcring.ko.
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

#endif /* _PMCRING_EMIT_H */
