// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * One CPU's ring as a consumer sees it: the user half of the ordering
 * contract in <linux/pmcring.h>,
 *
 *	kernel (producer)			user (consumer)
 *	(A) LOAD data_tail			(C) LOAD data_head (acquire)
 *	    STORE record bytes			    LOAD record bytes
 *	(B) smp_wmb()				(D) smp_mb()
 *	    STORE data_head			    STORE data_tail (release)
 *
 * (C) is in pmcring_cpu_buf_peek(), (D) in pmcring_cpu_buf_consume().  The
 * producer is the kernel (kmod/ring.c) or pmcring_uprod (uprod.c).
 *
 * Nothing read from the ring is trusted: a record with a bad magic, type or
 * length, one that reaches past data_head, or a data_head further from
 * data_tail than the ring is long makes the ring corrupt (-EBADMSG, sticky).
 * A timestamp below the previous record's is not corruption (a clock may
 * step back a little, the bytes are sound): it is clamped to the previous
 * one in the pmcring_record, and counted in the stats as `backwards`.
 */
#define _GNU_SOURCE
#include <sys/mman.h>
#include "internal.h"

static bool is_pow2(uint64_t x)
{
	return x && !(x & (x - 1));
}

int pmcring_cpu_buf_init(struct pmcring_cpu_buf *b, void *base, size_t size,
			 unsigned int cpu)
{
	struct pmcring_mmap_page *ctl = base;
	uint64_t page, doff, dsize, tail;

	memset(b, 0, sizeof(*b));
	if (ctl->version < 1 || ctl->compat_version > PMCRING_ABI_VERSION ||
	    ctl->cpu != cpu)
		return -EPROTO;
	page = ctl->page_size;
	doff = ctl->data_offset;
	dsize = ctl->data_size;
	if (!is_pow2(page) || !is_pow2(dsize) || doff < 2 * page ||
	    doff % page || doff > size || 2 * dsize > size - doff ||
	    ctl->region_size != size)
		return -EPROTO;
	tail = READ_ONCE(&ctl->data_tail);
	if (tail & 7)
		return -EPROTO;
	b->ctl = ctl;
	b->prod = (const struct pmcring_prod_page *)((uint8_t *)base + page);
	b->data = (const uint8_t *)base + doff;
	b->mask = dsize - 1;
	b->pos = tail;
	b->head = tail;
	b->tail = tail;
	b->base = base;
	b->size = size;
	b->cpu = cpu;
	return 0;
}

static int corrupt(struct pmcring_cpu_buf *b)
{
	b->corrupt = true;
	b->peek_end = 0;
	return -EBADMSG;
}

int pmcring_cpu_buf_peek(struct pmcring_cpu_buf *b, struct pmcring_record *r)
{
	const struct pmcring_rec_header *h;
	uint32_t hdr, len, type;
	uint64_t avail, ts;

	if (b->corrupt)
		return -EBADMSG;
	if (b->pos == b->head) {
		/* (C): pairs with (B), the smp_wmb() before the producer's
		 * store of data_head in pmcring_ring_commit().
		 */
		uint64_t head = smp_load_acquire(&b->ctl->data_head);

		if ((head & 7) || head - b->tail > b->mask + 1 ||
		    head - b->pos > head - b->tail)
			return corrupt(b);
		b->head = head;
		if (head == b->pos)
			return 0;
	}
	avail = b->head - b->pos;
	if (avail < PMCRING_HEADER_SIZE)
		return corrupt(b);
	h = (const void *)(b->data + (b->pos & b->mask));
	hdr = h->pl_header;
	ts = h->pl_tsc;
	len = PMCRING_HEADER_LEN(hdr);
	type = PMCRING_HEADER_TYPE(hdr);
	if (PMCRING_HEADER_MAGIC(hdr) != PMCRING_LOG_MAGIC ||
	    len < PMCRING_HEADER_SIZE || len > PMCRING_RECORD_MAX ||
	    PMCRING_RING_SPACE(len) > avail || type == 0 ||
	    type > PMCRING_TYPE_MAX)
		return corrupt(b);
	b->peek_back = ts < b->last_ts;
	if (b->peek_back)
		ts = b->last_ts;
	r->data = h;
	r->len = len;
	r->type = type;
	r->ts = ts;
	r->cpu = b->cpu;
	r->ring = b->cpu;
	r->end = b->pos + PMCRING_RING_SPACE(len);
	b->peek_end = r->end;
	b->peek_ts = ts;
	return 1;
}

void pmcring_cpu_buf_next(struct pmcring_cpu_buf *b)
{
	if (!b->peek_end)
		return;
	/* relaxed atomics: pmcring_cpu_stats() may read them elsewhere */
	WRITE_ONCE(&b->records, b->records + 1);
	WRITE_ONCE(&b->backwards, b->backwards + b->peek_back);
	WRITE_ONCE(&b->bytes, b->bytes + (b->peek_end - b->pos));
	b->last_ts = b->peek_ts;
	b->pos = b->peek_end;
	b->peek_end = 0;
}

uint64_t pmcring_cpu_buf_pos(const struct pmcring_cpu_buf *b)
{
	return b->pos;
}

void pmcring_cpu_buf_consume(struct pmcring_cpu_buf *b, uint64_t pos)
{
	if (pos - b->tail > b->pos - b->tail || pos == b->tail)
		return;
	/* (D): the record loads above complete before the producer may
	 * reuse the space; pairs with (A), the producer's load of data_tail
	 * in pmcring_ring_reserve().
	 */
	smp_mb(); /* (D), pairs with (A) */
	smp_store_release(&b->ctl->data_tail, pos);
	b->tail = pos;
}

unsigned int pmcring_cpu_buf_cpu(const struct pmcring_cpu_buf *b)
{
	return b->cpu;
}

uint64_t pmcring_cpu_buf_data_size(const struct pmcring_cpu_buf *b)
{
	return b->mask + 1;
}

int pmcring_cpu_buf_stats(const struct pmcring_cpu_buf *b,
			  struct pmcring_cpu_stats *st)
{
	struct pmcring_cpu_stats all = {
		.sz = st ? st->sz : 0,
		.records = READ_ONCE(&b->records),
		.bytes = READ_ONCE(&b->bytes),
		.lost = READ_ONCE(&b->prod->lost),
		.backwards = READ_ONCE(&b->backwards),
		.prod_records = READ_ONCE(&b->prod->records),
		.prod_bytes = READ_ONCE(&b->prod->bytes),
		.prod_flags = READ_ONCE(&b->prod->flags),
	};

	if (!st || st->sz < offsetof(struct pmcring_cpu_stats, bytes))
		return -EINVAL;
	memcpy(st, &all, st->sz < sizeof(all) ? st->sz : sizeof(all));
	return 0;
}

void *pmcring_map_region(int fd, off_t off, size_t region_size,
			 size_t page_size)
{
	uint8_t *base;

	base = mmap(NULL, region_size, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mmap(base, page_size, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, fd, off) == MAP_FAILED ||
	    mmap(base + page_size, region_size - page_size, PROT_READ,
		 MAP_SHARED | MAP_FIXED, fd, off + page_size) == MAP_FAILED) {
		int err = errno;

		munmap(base, region_size);
		errno = err;
		return NULL;
	}
	return base;
}
