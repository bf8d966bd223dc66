/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The benchmark's tracepoint, pmcring_bench:pfb_event (tracefs
 * events/pmcring_bench/pfb_event): the body of a GENERATED record of `size`
 * bytes without its 16-byte header - pl_seq, pl_cpu, pl_ctx and size - 32
 * fill bytes - so every peer attached to it (pmcring, perf, BPF, ftrace,
 * the floors) carries the same payload.  As in samples/trace_events.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM pmcring_bench

#if !defined(_PFB_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define _PFB_TRACE_H

#include <linux/tracepoint.h>

TRACE_EVENT(pfb_event,

	TP_PROTO(u64 seq, u32 cpu, u32 ctx, const u8 *fill, u32 len),

	TP_ARGS(seq, cpu, ctx, fill, len),

	TP_STRUCT__entry(
		__field(u64, seq)
		__field(u32, cpu)
		__field(u32, ctx)
		__dynamic_array(u8, fill, len)
	),

	TP_fast_assign(
		__entry->seq = seq;
		__entry->cpu = cpu;
		__entry->ctx = ctx;
		memcpy(__get_dynamic_array(fill), fill, len);
	),

	TP_printk("seq=%llu cpu=%u ctx=%u len=%u", __entry->seq, __entry->cpu,
		  __entry->ctx, __get_dynamic_array_len(fill))
);

#endif /* _PFB_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE pfb_trace
#include <trace/define_trace.h>
