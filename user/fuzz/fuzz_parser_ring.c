// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: libFuzzer target of the ring consumer's record checks.
 * Input: 8 bytes of data_head, then up to one page of ring data, written
 * into a one-page user space producer ring (mapped twice, like the
 * device's).  The iterator and a merge over it must hand out only records
 * that lie within data_head and have a sane length and type, and fail with
 * -EBADMSG otherwise: never read out of bounds, never loop.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "libpmcring_test.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void load(struct pmcring_uprod *p, const uint8_t *d, size_t n)
{
	struct pmcring_mmap_page *ctl;
	uint64_t head = 0;
	uint8_t *data;
	size_t size;
	void *base;

	/* the first reservation of a fresh ring starts at data offset 0 */
	data = pmcring_uprod_reserve(p, 0, PMCRING_TYPE_USERDATA, 16);
	CHECK(data);
	pmcring_uprod_buffer(p, 0, &base, &size);
	ctl = base;
	memcpy(&head, d, n < 8 ? n : 8);
	if (n > 8)
		memcpy(data, d + 8, n - 8 < ctl->data_size ? n - 8
							  : ctl->data_size);
	ctl->data_head = head;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct pmcring_uprod *p = pmcring_uprod_new(1, 1);
	struct pmcring_cpu_buf *b;
	struct pmcring_merge_opts o = { .sz = sizeof(o),
					.clock = pmcring_uprod_clock };
	struct pmcring_merge *m;
	struct pmcring_record r;
	uint64_t head, last_end = 0;
	int i, ret;

	CHECK(p);
	load(p, d, n);
	b = pmcring_uprod_cpu_buf(p, 0);
	memcpy(&head, d, n < 8 ? n : 8);
	if (n < 8)
		head &= (1ull << (8 * n)) - 1;
	for (i = 0; i < 1000; i++) {
		ret = pmcring_cpu_buf_peek(b, &r);
		if (ret <= 0) {
			CHECK(ret == 0 || ret == -EBADMSG);
			break;
		}
		CHECK(r.len >= 16 && r.len <= PMCRING_RECORD_MAX);
		CHECK(r.type >= 1 && r.type <= PMCRING_TYPE_MAX);
		CHECK(r.end > last_end && r.end <= head);
		/* touch every byte: ASan catches a record past the mapping */
		CHECK(memchr(r.data, 0xff, r.len) || 1);
		last_end = r.end;
		pmcring_cpu_buf_next(b);
	}
	CHECK(i < 1000 || head >= 1000 * 16);
	pmcring_uprod_free(p);

	/* the same ring through a merge */
	p = pmcring_uprod_new(1, 1);
	CHECK(p);
	load(p, d, n);
	b = pmcring_uprod_cpu_buf(p, 0);
	m = pmcring_merge_new(&b, 1, &o);
	CHECK(m);
	for (i = 0; i < 1000; i++) {
		ret = pmcring_merge_next(m, &r);
		if (ret <= 0) {
			CHECK(ret == 0 || ret == -EBADMSG);
			break;
		}
		CHECK(r.end <= head);
	}
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}
