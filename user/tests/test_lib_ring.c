// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: the per-CPU iterator reads back what the user space
 * producer wrote, across many wrap-arounds of a one-page ring, with records
 * straddling the end of the ring read contiguously; consume gives space
 * back; a full ring drops records, counts them and reports DROPNOTIFY; the
 * consumer mapping is read-only past the control page; corrupt ring data
 * (bad magic, length, type, data_head, timestamps) gives -EBADMSG, never a
 * crash.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libpmcring_test.h"

#define FAIL(...) do { \
	fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
	return 1; } while (0)

static void fill(uint8_t *body, uint32_t n, uint64_t seq)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		body[i] = (uint8_t)(seq * 7 + i);
}

static int check_body(const struct pmcring_record *r, uint64_t seq)
{
	const uint8_t *b = (const uint8_t *)r->data + PMCRING_HEADER_SIZE;
	uint32_t i;

	for (i = 0; i < r->len - PMCRING_HEADER_SIZE; i++)
		if (b[i] != (uint8_t)(seq * 7 + i))
			return -1;
	return 0;
}

static int test_wrap_around(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(1, 1);
	struct pmcring_cpu_buf *b;
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	struct pmcring_record r;
	uint8_t body[PMCRING_RECORD_MAX];
	uint64_t seq, got = 0, bytes = 0, wrapped = 0, last_ts = 0;
	void *base;
	size_t size;
	int ret;

	if (!p)
		FAIL("uprod_new: %m");
	b = pmcring_uprod_cpu_buf(p, 0);
	if (pmcring_uprod_buffer(p, 0, &base, &size) || !base ||
	    size != 2 * (size_t)getpagesize() * 2)
		FAIL("raw buffer: size %zu", size);
	for (seq = 0; seq < 20000; seq++) {
		/* 20..1020 bytes, some not a multiple of 8 */
		uint32_t n = 4 + (uint32_t)((seq * 2654435761u) % 1000) / 4 * 4;

		fill(body, n, seq);
		ret = pmcring_uprod_write(p, 0, PMCRING_TYPE_USERDATA, body, n);
		if (ret)
			FAIL("write %llu: %s", (unsigned long long)seq,
			     strerror(-ret));
		ret = pmcring_cpu_buf_peek(b, &r);
		if (ret != 1)
			FAIL("peek %llu: %d", (unsigned long long)seq, ret);
		if (r.len != 16 + n || r.type != PMCRING_TYPE_USERDATA ||
		    r.ts < last_ts || check_body(&r, seq))
			FAIL("record %llu differs", (unsigned long long)seq);
		if ((r.end - 1) / 4096 != (r.end - PMCRING_RING_SPACE(r.len)) / 4096)
			wrapped++;
		last_ts = r.ts;
		pmcring_cpu_buf_next(b);
		bytes += PMCRING_RING_SPACE(r.len);
		got++;
		/* consume in batches, sometimes late */
		if (seq % 3 == 0)
			pmcring_cpu_buf_consume(b, pmcring_cpu_buf_pos(b));
	}
	if (pmcring_cpu_buf_peek(b, &r) != 0)
		FAIL("extra record");
	pmcring_cpu_buf_stats(b, &st);
	if (st.records != got || st.bytes != bytes || st.lost)
		FAIL("stats %llu/%llu/%llu", (unsigned long long)st.records,
		     (unsigned long long)st.bytes, (unsigned long long)st.lost);
	if (wrapped < 100)
		FAIL("only %llu records straddled the ring end",
		     (unsigned long long)wrapped);
	printf("# wrap: %llu records, %llu straddled the end\n",
	       (unsigned long long)got, (unsigned long long)wrapped);
	pmcring_uprod_free(p);
	return 0;
}

static int test_drops(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(1, 1);
	struct pmcring_cpu_buf *b = pmcring_uprod_cpu_buf(p, 0);
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	struct pmcring_record r;
	uint8_t body[1000] = { 0 };
	int i, ok = 0, dropped = 0, ret;

	for (i = 0; i < 10; i++) {
		ret = pmcring_uprod_write(p, 0, PMCRING_TYPE_USERDATA, body,
					  sizeof(body));
		if (ret == 0)
			ok++;
		else if (ret == -ENOSPC)
			dropped++;
		else
			FAIL("write: %d", ret);
	}
	if (ok != 4 || dropped != 6)
		FAIL("%d written, %d dropped in a 4 KiB ring", ok, dropped);
	for (i = 0; i < ok; i++) {
		if (pmcring_cpu_buf_peek(b, &r) != 1)
			FAIL("record %d missing", i);
		pmcring_cpu_buf_next(b);
	}
	pmcring_cpu_buf_consume(b, pmcring_cpu_buf_pos(b));
	if (pmcring_uprod_write(p, 0, PMCRING_TYPE_USERDATA, body, 8))
		FAIL("write after consume");
	if (pmcring_cpu_buf_peek(b, &r) != 1 ||
	    r.type != PMCRING_TYPE_DROPNOTIFY)
		FAIL("no DROPNOTIFY after the drops");
	pmcring_cpu_buf_next(b);
	if (pmcring_cpu_buf_peek(b, &r) != 1 || r.type != PMCRING_TYPE_USERDATA)
		FAIL("record after DROPNOTIFY missing");
	pmcring_cpu_buf_stats(b, &st);
	if (st.lost != 6)
		FAIL("lost %llu", (unsigned long long)st.lost);
	/* consume outside [tail, cursor] is ignored */
	pmcring_cpu_buf_consume(b, pmcring_cpu_buf_pos(b) + 4096);
	pmcring_cpu_buf_consume(b, 0);
	pmcring_uprod_free(p);
	return 0;
}

static sigjmp_buf segv_jmp;

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(segv_jmp, 1);
}

static int test_read_only(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(1, 1);
	volatile uint8_t *base;
	void *v;
	size_t size;
	struct sigaction sa = { .sa_handler = on_segv }, old;
	volatile int faults = 0;
	size_t off;

	pmcring_uprod_buffer(p, 0, &v, &size);
	base = v;
	base[1032] = base[1032];	/* control page: writable */
	sigaction(SIGSEGV, &sa, &old);
	for (off = 4096; off < size; off += 4096) {
		if (sigsetjmp(segv_jmp, 1) == 0)
			base[off] = 1;
		else
			faults++;
	}
	sigaction(SIGSEGV, &old, NULL);
	if ((size_t)faults != size / 4096 - 1)
		FAIL("%d of %zu pages past the control page writable",
		     (int)(size / 4096 - 1 - faults), size / 4096 - 1);
	pmcring_uprod_free(p);
	return 0;
}

/* ---- corruption ---------------------------------------------------------- */

enum how { BAD_MAGIC, ZERO_LEN, BIG_LEN, SHORT_LEN, BAD_TYPE,
	   HEAD_FAR, HEAD_ODD, HEAD_BACK, NR_HOW };
static const char *const how_name[NR_HOW] = {
	"bad magic", "zero length", "length > RECORD_MAX",
	"length beyond data_head", "type 0",
	"data_head beyond the ring", "data_head unaligned",
	"data_head behind the cursor",
};

static int corrupt_one(enum how how)
{
	struct pmcring_uprod *p = pmcring_uprod_new(1, 1);
	struct pmcring_cpu_buf *b = pmcring_uprod_cpu_buf(p, 0);
	struct pmcring_mmap_page *ctl;
	struct pmcring_rec_header *h;
	struct pmcring_record r;
	size_t size;
	void *base;
	int i, ret;

	pmcring_uprod_buffer(p, 0, &base, &size);
	ctl = base;
	/* two good records, read */
	for (i = 0; i < 2; i++) {
		pmcring_uprod_write(p, 0, PMCRING_TYPE_USERDATA, "12345678", 8);
		if (pmcring_cpu_buf_peek(b, &r) != 1)
			FAIL("%s: good record %d", how_name[how], i);
		pmcring_cpu_buf_next(b);
	}
	h = pmcring_uprod_reserve(p, 0, PMCRING_TYPE_USERDATA, 24);
	switch (how) {
	case BAD_MAGIC:
		h->pl_header = PMCRING_HEADER(PMCRING_TYPE_USERDATA, 24) ^
			       0x01000000;
		break;
	case ZERO_LEN:
		h->pl_header = PMCRING_HEADER(PMCRING_TYPE_USERDATA, 0);
		break;
	case BIG_LEN:
		h->pl_header = PMCRING_HEADER(PMCRING_TYPE_USERDATA, 5000);
		break;
	case SHORT_LEN:
		h->pl_header = PMCRING_HEADER(PMCRING_TYPE_USERDATA, 32);
		break;
	case BAD_TYPE:
		h->pl_header = PMCRING_HEADER(0, 24);
		break;
	default:
		break;
	}
	pmcring_uprod_commit(p, 0);
	switch (how) {
	case HEAD_FAR:
		ctl->data_head += 8192;
		break;
	case HEAD_ODD:
		ctl->data_head += 4;
		break;
	case HEAD_BACK:
		ctl->data_head = 8;
		break;
	default:
		break;
	}
	ret = pmcring_cpu_buf_peek(b, &r);
	if (ret != -EBADMSG)
		FAIL("%s: peek gave %d, not -EBADMSG", how_name[how], ret);
	if (pmcring_cpu_buf_peek(b, &r) != -EBADMSG)
		FAIL("%s: -EBADMSG not sticky", how_name[how]);
	pmcring_uprod_free(p);
	return 0;
}

/*
 * A timestamp below the previous record's is clamped and counted, not an
 * error: the ring goes on (it used to be a sticky -EBADMSG that ended a
 * whole recording).
 */
static int test_ts_backwards(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(1, 1);
	struct pmcring_cpu_buf *b = pmcring_uprod_cpu_buf(p, 0);
	static const uint64_t in[] = { 100, 200, 150, 300, 50, 300 };
	static const uint64_t out[] = { 100, 200, 200, 300, 300, 300 };
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	struct pmcring_rec_header *h;
	struct pmcring_record r;
	unsigned int i;

	for (i = 0; i < 6; i++) {
		h = pmcring_uprod_reserve(p, 0, PMCRING_TYPE_USERDATA, 24);
		if (!h)
			FAIL("reserve");
		h->pl_tsc = in[i];
		pmcring_uprod_commit(p, 0);
	}
	for (i = 0; i < 6; i++) {
		if (pmcring_cpu_buf_peek(b, &r) != 1 || r.ts != out[i] ||
		    ((const struct pmcring_rec_header *)r.data)->pl_tsc != in[i])
			FAIL("record %u: ts %llu, want %llu", i,
			     (unsigned long long)r.ts,
			     (unsigned long long)out[i]);
		/* peeking again counts nothing twice */
		if (pmcring_cpu_buf_peek(b, &r) != 1 || r.ts != out[i])
			FAIL("second peek of %u", i);
		pmcring_cpu_buf_next(b);
	}
	if (pmcring_cpu_buf_peek(b, &r) != 0)
		FAIL("extra record");
	pmcring_cpu_buf_stats(b, &st);
	if (st.records != 6 || st.backwards != 2)
		FAIL("records %llu backwards %llu",
		     (unsigned long long)st.records,
		     (unsigned long long)st.backwards);
	pmcring_uprod_free(p);
	return 0;
}

/* A merge over a corrupt ring reports the error instead of crashing. */
static int test_merge_corrupt(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	struct pmcring_cpu_buf *bufs[2] = { pmcring_uprod_cpu_buf(p, 0),
					    pmcring_uprod_cpu_buf(p, 1) };
	struct pmcring_merge_opts o = { .sz = sizeof(o),
					.clock = pmcring_uprod_clock };
	struct pmcring_merge *m = pmcring_merge_new(bufs, 2, &o);
	struct pmcring_rec_header *h;
	struct pmcring_record r;
	int ret, n = 0;

	pmcring_uprod_write(p, 0, PMCRING_TYPE_USERDATA, "12345678", 8);
	h = pmcring_uprod_reserve(p, 1, PMCRING_TYPE_USERDATA, 24);
	h->pl_header = 0xdeadbeef;
	pmcring_uprod_commit(p, 1);
	while ((ret = pmcring_merge_next(m, &r)) == 1)
		n++;
	if (ret != -EBADMSG)
		FAIL("merge over a corrupt ring: %d after %d records", ret, n);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

int main(void)
{
	int how;

	if (test_wrap_around() || test_drops() || test_read_only())
		return 1;
	for (how = 0; how < NR_HOW; how++)
		if (corrupt_one(how))
			return 1;
	if (test_merge_corrupt() || test_ts_backwards())
		return 1;
	printf("ok ring\n");
	return 0;
}
