// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * A user space producer of the ring ABI, for tests and benchmarks: the same
 * region layout as the device (control page, producer page, data mapped
 * twice) over a memfd, the same reserve/commit protocol as kmod/ring.c, so
 * the consumer and the merge run unchanged on it.
 *
 * The memfd holds, per CPU, [control page][producer page][data once].  The
 * producer maps it all read-write; the consumer view is mapped like the
 * device's: control page read-write, the rest read-only.
 *
 * One writer per CPU at a time (the caller's threads stand in for CPUs);
 * writers of different CPUs may run concurrently with each other and with
 * the consumer.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "internal.h"

struct uprod_cpu {
	struct pmcring_mmap_page	*ctl;	/* producer view, read-write */
	struct pmcring_prod_page	*prod;
	uint8_t				*data;	/* mapped twice */
	uint64_t			head;	/* committed */
	uint64_t			resv_end;/* end of the reservation */
	uint64_t			resv_records;
	bool				busy;	/* a record is reserved */
	bool				lost_pending;/* DROPNOTIFY owed */
	void				*pbase;	/* producer mapping */
	struct pmcring_cpu_buf		buf;	/* consumer view */
};

struct pmcring_uprod {
	int			fd;
	unsigned int		nr_cpus;
	size_t			page;
	size_t			data_size;
	size_t			file_stride;	/* bytes of one CPU in the memfd */
	size_t			region_size;	/* bytes of one CPU's view */
	struct uprod_cpu	*cpus;
};

int pmcring_uprod_clock(void *uprod, uint64_t *now)
{
	struct timespec ts;

	(void)uprod;
	if (clock_gettime(CLOCK_MONOTONIC, &ts))
		return -errno;
	*now = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
	return 0;
}

static uint64_t now_ns(void)
{
	uint64_t t = 0;

	pmcring_uprod_clock(NULL, &t);
	return t;
}

/* Map [ctl][prod][data][data again] of @cpu with @prot for pages 1.. */
static void *map_view(struct pmcring_uprod *p, unsigned int cpu, int prot)
{
	off_t off = (off_t)(cpu * p->file_stride);
	uint8_t *base;

	base = mmap(NULL, p->region_size, PROT_NONE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return NULL;
	if (mmap(base, p->page, PROT_READ | PROT_WRITE,
		 MAP_SHARED | MAP_FIXED, p->fd, off) == MAP_FAILED ||
	    mmap(base + p->page, p->page, prot, MAP_SHARED | MAP_FIXED,
		 p->fd, off + (off_t)p->page) == MAP_FAILED ||
	    mmap(base + 2 * p->page, p->data_size, prot,
		 MAP_SHARED | MAP_FIXED, p->fd,
		 off + 2 * (off_t)p->page) == MAP_FAILED ||
	    mmap(base + 2 * p->page + p->data_size, p->data_size, prot,
		 MAP_SHARED | MAP_FIXED, p->fd,
		 off + 2 * (off_t)p->page) == MAP_FAILED) {
		int err = errno;

		munmap(base, p->region_size);
		errno = err;
		return NULL;
	}
	return base;
}

static int init_cpu(struct pmcring_uprod *p, unsigned int cpu)
{
	struct uprod_cpu *c = &p->cpus[cpu];
	void *cbase;
	int err;

	c->pbase = map_view(p, cpu, PROT_READ | PROT_WRITE);
	if (!c->pbase)
		return -errno;
	c->ctl = c->pbase;
	c->prod = (void *)((uint8_t *)c->pbase + p->page);
	c->prod->flags = PMCRING_PROD_F_DATA;	/* data from the start */
	c->data = (uint8_t *)c->pbase + 2 * p->page;
	c->ctl->version = PMCRING_ABI_VERSION;
	c->ctl->compat_version = PMCRING_ABI_COMPAT_VERSION;
	c->ctl->cpu = cpu;
	c->ctl->page_size = (uint32_t)p->page;
	c->ctl->region_size = p->region_size;
	c->ctl->watermark = p->data_size / 4;
	c->ctl->data_offset = 2 * p->page;
	c->ctl->data_size = p->data_size;

	cbase = map_view(p, cpu, PROT_READ);
	if (!cbase)
		return -errno;
	err = pmcring_cpu_buf_init(&c->buf, cbase, p->region_size, cpu);
	if (err)
		munmap(cbase, p->region_size);
	return err;
}

struct pmcring_uprod *pmcring_uprod_new(unsigned int nr_cpus,
					uint32_t data_pages)
{
	struct pmcring_uprod *p;
	unsigned int cpu;
	int err;

	if (!nr_cpus || !data_pages || (data_pages & (data_pages - 1)) ||
	    data_pages > (1u << 20)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->fd = -1;
	p->nr_cpus = nr_cpus;
	p->page = (size_t)sysconf(_SC_PAGESIZE);
	p->data_size = (size_t)data_pages * p->page;
	p->file_stride = 2 * p->page + p->data_size;
	p->region_size = 2 * p->page + 2 * p->data_size;
	p->cpus = calloc(nr_cpus, sizeof(*p->cpus));
	p->fd = memfd_create("pmcring-uprod", MFD_CLOEXEC);
	if (!p->cpus || p->fd < 0) {
		err = p->cpus ? -errno : -ENOMEM;
		goto err;
	}
	if (ftruncate(p->fd, (off_t)(nr_cpus * p->file_stride))) {
		err = -errno;
		goto err;
	}
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		err = init_cpu(p, cpu);
		if (err)
			goto err;
	}
	return p;
err:
	pmcring_uprod_free(p);
	errno = -err;
	return NULL;
}

void pmcring_uprod_free(struct pmcring_uprod *p)
{
	unsigned int cpu;

	if (!p)
		return;
	for (cpu = 0; p->cpus && cpu < p->nr_cpus; cpu++) {
		if (p->cpus[cpu].pbase)
			munmap(p->cpus[cpu].pbase, p->region_size);
		if (p->cpus[cpu].buf.base)
			munmap(p->cpus[cpu].buf.base, p->region_size);
	}
	free(p->cpus);
	if (p->fd >= 0)
		close(p->fd);
	free(p);
}

static void put_header(uint8_t *rec, unsigned int type, uint32_t len,
		       uint64_t ts)
{
	struct pmcring_rec_header *h = (void *)rec;

	memset(rec, 0, PMCRING_RING_SPACE(len));
	h->pl_header = PMCRING_HEADER(type, len);
	h->pl_spare = 0;
	h->pl_tsc = ts;
}

void *pmcring_uprod_reserve(struct pmcring_uprod *p, unsigned int cpu,
			    unsigned int type, uint32_t len)
{
	struct uprod_cpu *c;
	uint64_t t0, ts, tail, need, pos;
	uint32_t drop = 0;

	if (cpu >= p->nr_cpus || !type || type > PMCRING_TYPE_MAX ||
	    len < PMCRING_HEADER_SIZE || len > PMCRING_RECORD_MAX ||
	    PMCRING_RING_SPACE(len) + PMCRING_HEADER_SIZE > p->data_size) {
		errno = EINVAL;
		return NULL;
	}
	c = &p->cpus[cpu];
	if (c->busy) {
		errno = EBUSY;
		return NULL;
	}
	/* (E): announce the lowest timestamp we may write, then read the
	 * clock; pairs with (F), the smp_mb() between the consumer's clock
	 * read and its load of pending_ts in pmcring_merge_next().
	 */
	t0 = now_ns();
	WRITE_ONCE(&c->prod->pending_ts, t0);
	smp_mb(); /* (E), pairs with (F) */
	ts = now_ns();
	/* (A): pairs with (D), smp_mb() before the store-release of
	 * data_tail in pmcring_cpu_buf_consume().
	 */
	tail = smp_load_acquire(&c->ctl->data_tail);
	if (c->lost_pending)
		drop = PMCRING_HEADER_SIZE;
	need = drop + PMCRING_RING_SPACE(len);
	if (c->head + need - tail > p->data_size) {
		WRITE_ONCE(&c->prod->lost, READ_ONCE(&c->prod->lost) + 1);
		c->lost_pending = true;
		/* Nothing published: just withdraw the announcement. */
		smp_store_release(&c->prod->pending_ts, 0);
		errno = ENOSPC;
		return NULL;
	}
	pos = c->head;
	if (drop) {
		put_header(c->data + (pos & (p->data_size - 1)),
			   PMCRING_TYPE_DROPNOTIFY, PMCRING_HEADER_SIZE, ts);
		pos += drop;
		c->lost_pending = false;
		/* it announces every drop so far, as the kernel's */
		WRITE_ONCE(&c->prod->reported, READ_ONCE(&c->prod->lost));
	}
	put_header(c->data + (pos & (p->data_size - 1)), type, len, ts);
	c->resv_end = pos + PMCRING_RING_SPACE(len);
	c->resv_records = drop ? 2 : 1;
	c->busy = true;
	return c->data + (pos & (p->data_size - 1));
}

void pmcring_uprod_commit(struct pmcring_uprod *p, unsigned int cpu)
{
	struct uprod_cpu *c;

	if (cpu >= p->nr_cpus || !p->cpus[cpu].busy)
		return;
	c = &p->cpus[cpu];
	WRITE_ONCE(&c->prod->records,
		   READ_ONCE(&c->prod->records) + c->resv_records);
	WRITE_ONCE(&c->prod->bytes,
		   READ_ONCE(&c->prod->bytes) + c->resv_end - c->head);
	/* (B): the record bytes before data_head; pairs with (C), the
	 * load-acquire of data_head in pmcring_cpu_buf_peek().
	 */
	smp_store_release(&c->ctl->data_head, c->resv_end);
	c->head = c->resv_end;
	c->busy = false;
	/* (G): data_head before the cleared pending_ts; pairs with (H), the
	 * consumer's load of data_head after its load-acquire of
	 * pending_ts in pmcring_merge_next().
	 */
	smp_store_release(&c->prod->pending_ts, 0);
}

int pmcring_uprod_write(struct pmcring_uprod *p, unsigned int cpu,
			unsigned int type, const void *body, uint32_t body_len)
{
	uint8_t *rec;

	if (body_len > PMCRING_RECORD_MAX - PMCRING_HEADER_SIZE)
		return -EINVAL;
	rec = pmcring_uprod_reserve(p, cpu, type,
				    PMCRING_HEADER_SIZE + body_len);
	if (!rec)
		return -errno;
	if (body_len)
		memcpy(rec + PMCRING_HEADER_SIZE, body, body_len);
	pmcring_uprod_commit(p, cpu);
	return 0;
}

struct pmcring_cpu_buf *pmcring_uprod_cpu_buf(struct pmcring_uprod *p,
					      unsigned int cpu)
{
	if (cpu >= p->nr_cpus) {
		errno = EINVAL;
		return NULL;
	}
	return &p->cpus[cpu].buf;
}

int pmcring_uprod_buffer(struct pmcring_uprod *p, unsigned int cpu,
			 void **base, size_t *size)
{
	if (cpu >= p->nr_cpus)
		return -EINVAL;
	*base = p->cpus[cpu].buf.base;
	*size = p->region_size;
	return 0;
}

unsigned int pmcring_uprod_nr_cpus(const struct pmcring_uprod *p)
{
	return p->nr_cpus;
}
