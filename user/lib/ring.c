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
#include <stdlib.h>
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
	b->start = tail;
	b->rel = tail;
	b->head = tail;
	b->tail = tail;
	b->base = base;
	b->size = size;
	b->cpu = cpu;
	return 0;
}

int pmcring_cpu_buf_peek(struct pmcring_cpu_buf *b, struct pmcring_record *r)
{
	return cpu_buf_peek(b, r);
}

void pmcring_cpu_buf_next(struct pmcring_cpu_buf *b)
{
	cpu_buf_next(b);
}

/*
 * Stand-ins for the pages of a CPU without a ring (no CPU of that number
 * was online since CONFIGURE): an empty ring with nothing in flight, which
 * the merge treats as an idle CPU.  Only read: the cursor of such a ring
 * stays at 0, so nothing ever stores a data_tail here.
 */
static struct pmcring_mmap_page absent_ctl;
static const struct pmcring_prod_page absent_prod;

void pmcring_cpu_buf_init_absent(struct pmcring_cpu_buf *b, unsigned int cpu,
				 uint64_t data_size)
{
	memset(b, 0, sizeof(*b));
	b->ctl = &absent_ctl;
	b->prod = &absent_prod;
	b->mask = data_size - 1;
	b->cpu = cpu;
}

int pmcring_cpu_buf_adopt(struct pmcring_cpu_buf *b, void *base, size_t size)
{
	struct pmcring_cpu_buf nb;
	int err;

	err = pmcring_cpu_buf_init(&nb, base, size, b->cpu);
	if (err)
		return err;
	if (nb.mask != b->mask)
		return -EPROTO;
	/* Nothing was read from the stand-in: only the cursor moves. */
	b->ctl = nb.ctl;
	b->data = nb.data;
	b->base = base;
	b->size = size;
	b->head = nb.head;
	b->tail = nb.tail;
	b->rel = nb.rel;
	WRITE_ONCE(&b->start, nb.start);
	WRITE_ONCE(&b->pos, nb.pos);
	/* pmcring_cpu_buf_stats() may read it in another thread */
	__atomic_store_n(&b->prod, nb.prod, __ATOMIC_RELEASE);
	return 0;
}

uint64_t pmcring_cpu_buf_pos(const struct pmcring_cpu_buf *b)
{
	return b->pos;
}

/* Store data_tail = @pos ((D) of the contract). */
static void store_tail(struct pmcring_cpu_buf *b, uint64_t pos)
{
	/* (D): the record loads above (and the copies to staging) complete
	 * before the producer may reuse the space; pairs with (A), the
	 * producer's load of data_tail in pmcring_ring_reserve().
	 */
	smp_mb(); /* (D), pairs with (A) */
	smp_store_release(&b->ctl->data_tail, pos);
	b->tail = pos;
}

/*
 * Free the chunks consumed, then move data_tail from rel past the chunks
 * that follow it without a gap: their bytes are copied, only the records
 * handed out before them (still in the ring, maybe still being written
 * out) hold the ring space.
 */
static void give_back(struct pmcring_cpu_buf *b)
{
	struct pmcring_stage_chunk *c;
	uint64_t x = b->rel;

	while ((c = b->stg_first) && c->hi <= b->rel) {
		b->stg_first = c->next;
		if (!c->next)
			b->stg_last = NULL;
		b->stg->used -= c->hi - c->lo;
		free(c);
	}
	for (c = b->stg_first; c && c->lo <= x; c = c->next)
		if (c->hi > x)
			x = c->hi;
	if (x > b->tail)
		store_tail(b, x);
}

void pmcring_cpu_buf_consume(struct pmcring_cpu_buf *b, uint64_t pos)
{
	if (pos - b->rel > b->pos - b->rel || pos == b->rel)
		return;
	b->rel = pos;
	if (!b->stg_first) {
		store_tail(b, pos);
		return;
	}
	give_back(b);
}

int pmcring_cpu_buf_stage(struct pmcring_cpu_buf *b)
{
	struct pmcring_stage_chunk *c;
	uint64_t head, from, to, len;

	if (!b->stg || b->corrupt)
		return 0;
	/* (C): pairs with (B), as in pmcring_cpu_buf_peek() */
	head = smp_load_acquire(&b->ctl->data_head);
	/* not passed and not staged yet: from the cursor or the last chunk */
	from = b->rd ? b->stg_last->hi : b->pos;
	if ((head & 7) || head - b->tail > b->mask + 1 ||
	    head - from > head - b->tail) {
		b->corrupt = true;
		b->peek_end = 0;
		return -EBADMSG;
	}
	/* whole records within the budget (bad lengths: peek reports them) */
	to = b->stg->used + (head - from) <= b->stg->limit ? head : from;
	while (to != head) {
		const struct pmcring_rec_header *h =
			(const void *)(b->data + (to & b->mask));
		uint32_t rl = PMCRING_HEADER_LEN(h->pl_header);
		uint64_t sp = PMCRING_RING_SPACE(rl);

		if (rl < PMCRING_HEADER_SIZE || sp > head - to ||
		    b->stg->used + (to + sp - from) > b->stg->limit)
			break;
		to += sp;
	}
	len = to - from;
	if (!len)
		return 0;
	c = malloc(sizeof(*c) + len);
	if (!c)
		return 0;	/* the ring keeps them: maybe drops */
	/* the data is mapped twice: len <= data_size bytes are contiguous */
	memcpy(c->bytes, b->data + (from & b->mask), len);
	c->next = NULL;
	c->lo = from;
	c->hi = to;
	if (b->stg_last)
		b->stg_last->next = c;
	else
		b->stg_first = c;
	b->stg_last = c;
	b->stg->used += len;
	WRITE_ONCE(&b->staged, b->staged + len);
	if (!b->rd)
		b->rd = c;		/* from == pos */
	b->head = to;		/* after the last chunk: look again */
	give_back(b);
	return 1;
}

void pmcring_cpu_buf_unstage(struct pmcring_cpu_buf *b)
{
	struct pmcring_stage_chunk *c;

	if (b->stg_last) {
		if (b->rd) {
			/* staged: dropped */
			WRITE_ONCE(&b->pos, b->stg_last->hi);
			b->head = b->pos;
			b->peek_end = 0;
			b->rd = NULL;
		}
		while ((c = b->stg_first)) {
			b->stg_first = c->next;
			b->stg->used -= c->hi - c->lo;
			free(c);
		}
		b->stg_last = NULL;
		b->rel = b->pos;
		if (b->pos > b->tail)
			store_tail(b, b->pos);
	}
	b->stg = NULL;
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
	/* replaced once when a ring appears, pmcring_cpu_buf_adopt() */
	const struct pmcring_prod_page *prod =
		__atomic_load_n(&b->prod, __ATOMIC_ACQUIRE);
	/*
	 * reported before lost, and ordered: the kernel raises lost at a
	 * drop and reported later, so lost read after it is never below it
	 * (uapi struct pmcring_prod_page).  Not in the initializer, whose
	 * evaluation order C leaves unspecified.
	 */
	uint64_t reported = smp_load_acquire(&prod->reported);
	struct pmcring_cpu_stats all = {
		.sz = st ? st->sz : 0,
		.records = READ_ONCE(&b->records),
		.bytes = READ_ONCE(&b->pos) - READ_ONCE(&b->start),
		.staged = READ_ONCE(&b->staged),
		.lost = READ_ONCE(&prod->lost),
		.backwards = READ_ONCE(&b->backwards),
		.prod_records = READ_ONCE(&prod->records),
		.prod_bytes = READ_ONCE(&prod->bytes),
		.prod_flags = READ_ONCE(&prod->flags),
		.reported = reported,
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
