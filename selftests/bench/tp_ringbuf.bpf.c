// SPDX-License-Identifier: GPL-2.0
/*
 * The BPF peer of the tracepoint benchmark (selftests/bench/tpbench.c): on
 * every pmcring_bench:pfb_event, one record in a BPF ring buffer
 * (bpf_ringbuf_reserve/submit) with the bytes of pmcring's GENERATED record
 * of the same size: header word, bpf_ktime_get_ns(), seq, cpu, ctx, fill.
 * rec_size is set before loading (read-only data: a constant to the
 * verifier), the ring's size too.  Full ring: counted in fails.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);	/* set by tpbench */
} rb SEC(".maps");

const volatile __u32 rec_size = 64;
const volatile __u64 rec_header;	/* PMCRING_HEADER(GENERATED, rec_size) */
__u64 fails;

/* events/pmcring_bench/pfb_event/format */
struct pfb_event_ctx {
	__u64	common;		/* common_type, flags, preempt_count, pid */
	__u64	seq;
	__u32	cpu;
	__u32	ctx;
	__u32	fill_loc;	/* __data_loc u8[]: offset | length << 16 */
};

SEC("tracepoint/pmcring_bench/pfb_event")
int pfb_event(struct pfb_event_ctx *c)
{
	__u64 *rec = bpf_ringbuf_reserve(&rb, rec_size, 0);

	if (!rec) {
		__sync_fetch_and_add(&fails, 1);
		return 0;
	}
	rec[0] = rec_header;
	rec[1] = bpf_ktime_get_ns();
	rec[2] = c->seq;
	rec[3] = c->cpu | (__u64)c->ctx << 32;
	bpf_probe_read_kernel(&rec[4], rec_size - 32,
			      (void *)c + (c->fill_loc & 0xffff));
	bpf_ringbuf_submit(rec, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
