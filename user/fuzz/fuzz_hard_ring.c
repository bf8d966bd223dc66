// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: libFuzzer target of libpmcring's ring readers
 * (pmcring_cpu_buf_peek/next/consume and the exact merge) on hostile ring
 * contents.  A real ring layout comes from pmcring_uprod (two CPUs, two
 * data pages each); the input then overwrites record bytes (headers
 * included), data_head and data_tail with anything.  Checks: no crash or
 * sanitizer report, every record handed out lies inside its ring's data
 * view with a sane length and type, positions only move forward, and a
 * ring reported corrupt stays corrupt.
 *
 * Input: byte 0 = flags; then chunks of [cpu:1][len:2 LE][len bytes] that
 * each become one reserved-then-overwritten record; the last 16 bytes (if
 * flags ask for it) are the data_head/data_tail values of CPU 0.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "libpmcring_test.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

#define F_HEAD		0x01	/* garbage data_head on CPU 0 */
#define F_TAIL		0x02	/* garbage data_tail on CPU 0 */
#define F_MERGE		0x04	/* read through the merge */
#define F_CONSUME	0x08	/* consume while peeking */
#define F_HEAD_NEAR	0x10	/* data_head = real head +/- a small delta */

#define NR_CPUS		2
#define DATA_PAGES	2

static uint64_t get64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

struct view {
	const uint8_t	*data;	/* data area of the consumer mapping */
	uint64_t	size;	/* data_size; the area is 2 * size long */
};

static void check_record(const struct view *v, const struct pmcring_record *r)
{
	const uint8_t *p = r->data;
	volatile uint8_t sum = 0;
	uint32_t i;

	CHECK(r->len >= 16 && r->len <= PMCRING_RECORD_MAX);
	CHECK(r->type > 0 && r->type <= PMCRING_TYPE_MAX);
	CHECK(r->cpu < NR_CPUS);
	CHECK(p >= v[r->cpu].data &&
	      p + r->len <= v[r->cpu].data + 2 * v[r->cpu].size);
	for (i = 0; i < r->len; i++)	/* every byte must be readable */
		sum += p[i];
	(void)sum;
}

static void drain_bufs(struct pmcring_uprod *u, const struct view *v,
		       uint8_t flags)
{
	struct pmcring_record r;
	unsigned int cpu, i;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		struct pmcring_cpu_buf *b = pmcring_uprod_cpu_buf(u, cpu);
		uint64_t pos = pmcring_cpu_buf_pos(b);
		int rc = 0;

		for (i = 0; i < 4096; i++) {
			rc = pmcring_cpu_buf_peek(b, &r);
			if (rc <= 0)
				break;
			check_record(v, &r);
			pmcring_cpu_buf_next(b);
			CHECK(pmcring_cpu_buf_pos(b) == r.end);
			CHECK(r.end > pos);
			pos = r.end;
			if (flags & F_CONSUME)
				pmcring_cpu_buf_consume(b, r.end);
		}
		CHECK(rc == 0 || rc == 1 || rc == -EBADMSG);
		if (rc == -EBADMSG)	/* sticky */
			CHECK(pmcring_cpu_buf_peek(b, &r) == -EBADMSG);
	}
}

static void drain_merge(struct pmcring_uprod *u, const struct view *v,
			uint8_t flags)
{
	struct pmcring_cpu_buf *bufs[NR_CPUS];
	struct pmcring_merge_opts mo = {
		.sz = sizeof(mo),
		.max_delay_ns = 1,
		.clock = pmcring_uprod_clock,
		.clock_ctx = u,
		.flags = (flags & F_CONSUME) ? PMCRING_MERGE_F_AUTO_CONSUME : 0,
	};
	struct pmcring_merge *m;
	struct pmcring_record r;
	uint64_t last_ts = 0;
	unsigned int i;
	int rc;

	for (i = 0; i < NR_CPUS; i++)
		bufs[i] = pmcring_uprod_cpu_buf(u, i);
	m = pmcring_merge_new(bufs, NR_CPUS, &mo);
	CHECK(m);
	for (i = 0; i < 8192; i++) {
		rc = pmcring_merge_next(m, &r);
		if (rc <= 0)
			break;
		check_record(v, &r);
		CHECK(r.ts >= last_ts);	/* the merge's promise */
		last_ts = r.ts;
	}
	pmcring_merge_free(m);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct view v[NR_CPUS];
	struct pmcring_mmap_page *ctl0 = NULL;
	struct pmcring_uprod *u;
	uint8_t flags;
	size_t i, tail_bytes;
	unsigned int cpu;

	if (n < 1)
		return 0;
	flags = d[0];
	tail_bytes = (flags & (F_HEAD | F_TAIL | F_HEAD_NEAR)) && n >= 17 ? 16 : 0;
	u = pmcring_uprod_new(NR_CPUS, DATA_PAGES);
	CHECK(u);
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		void *base;
		size_t size;
		struct pmcring_mmap_page *ctl;

		CHECK(!pmcring_uprod_buffer(u, cpu, &base, &size));
		ctl = base;
		v[cpu].data = (const uint8_t *)base + ctl->data_offset;
		v[cpu].size = ctl->data_size;
		if (!cpu)
			ctl0 = ctl;
	}

	/* Records whose every byte, header included, comes from the input. */
	for (i = 1; i + 3 <= n - tail_bytes;) {
		uint32_t len = d[i + 1] | (uint32_t)d[i + 2] << 8;
		size_t avail = n - tail_bytes - (i + 3);
		uint8_t *rec;

		cpu = d[i] % NR_CPUS;
		i += 3;
		if (len < 16)
			len = 16;
		if (len > PMCRING_RECORD_MAX)
			len = PMCRING_RECORD_MAX;
		rec = pmcring_uprod_reserve(u, cpu, PMCRING_TYPE_USERDATA, len);
		if (!rec)
			break;
		memcpy(rec, d + i, avail < len ? avail : len);
		pmcring_uprod_commit(u, cpu);
		i += avail < len ? avail : len;
	}

	if (tail_bytes) {
		const uint8_t *t = d + n - 16;

		if (flags & F_HEAD)
			__atomic_store_n(&ctl0->data_head, get64(t),
					 __ATOMIC_RELEASE);
		else if (flags & F_HEAD_NEAR)
			__atomic_store_n(&ctl0->data_head, ctl0->data_head +
					 (int8_t)t[0], __ATOMIC_RELEASE);
		if (flags & F_TAIL)
			__atomic_store_n(&ctl0->data_tail, get64(t + 8),
					 __ATOMIC_RELEASE);
	}

	if (flags & F_MERGE)
		drain_merge(u, v, flags);
	else
		drain_bufs(u, v, flags);

	/* The producer must survive whatever the consumer side holds. */
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		pmcring_uprod_write(u, cpu, PMCRING_TYPE_USERDATA, "12345678", 8);
	pmcring_uprod_free(u);
	return 0;
}
