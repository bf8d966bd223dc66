/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the ring_*.c selftests: a session with every CPU's region
 * mapped the way the uapi header describes (control page read-write, the
 * rest read-only over it), GENERATE wrappers and a checking consumer.
 * Deliberately independent of libpmcring: these tests check the kernel ABI
 * itself.
 */
#ifndef PMCRING_RING_COMMON_H
#define PMCRING_RING_COMMON_H

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include <linux/pmcring.h>

#include "pmcring_test.h"

#define RT_MAX_CPUS	1024

struct rt_ring {
	struct pmcring_mmap_page	*ctl;
	struct pmcring_prod_page	*prod;
	const uint8_t			*data;	/* data_size bytes, twice */
	uint64_t			size;	/* data_size */
	void				*base;	/* the whole region */
	size_t				region;
	uint64_t			tail;	/* consumer cursor */
	unsigned int			cpu;
};

struct rt_sess {
	int			fd;
	struct pmcring_info	info;
	struct pmcring_config	cfg;
	unsigned int		nr_cpus;
	struct rt_ring		*rings;	/* [nr_cpus], base NULL if unmapped */
};

/* What a consumer saw of GENERATED records on one ring. */
struct rt_stats {
	uint64_t	gen[3];		/* GENERATED per ctx (0: too short) */
	uint64_t	next_seq[3];	/* expected next pl_seq per ctx */
	uint64_t	missing;	/* seq gaps (drops) */
	uint64_t	dropnotify;
	uint64_t	userdata;
	uint64_t	other;
	uint64_t	records;	/* all records */
	uint64_t	bytes;
	uint64_t	wrapped;	/* records crossing the end of the data */
	uint64_t	interleaved;	/* ctx changes between records */
	uint64_t	irq_in_task;	/* runs of other ctx between task ones */
	uint64_t	last_ts;
	uint32_t	last_ctx;
	uint32_t	size;		/* expected GENERATED length, 0: any */
	int		allow_gaps;
	char		err[256];
};

/*
 * Informational "# ..." line.  Flushed: a test runs in a child that leaves
 * with _exit(), which would drop a buffered stdout (pipe or file).
 */
#define rt_info(...) do {						\
	ksft_print_msg(__VA_ARGS__);					\
	fflush(stdout);							\
} while (0)

static inline uint64_t rt_now_ns(void)
{
	return pmcring_now_ns();
}

static inline int rt_ioctl(int fd, unsigned long cmd, void *arg)
{
	return ioctl(fd, cmd, arg) ? -errno : 0;
}

static inline int rt_configure(int fd, struct pmcring_config *cfg,
			       uint32_t data_pages, uint64_t watermark)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->data_pages = data_pages;
	cfg->watermark = watermark;
	return rt_ioctl(fd, PMCRING_IOC_CONFIGURE, cfg);
}

/*
 * Map @cpu's region: reserve the address space, control page read-write
 * at its base, producer and data pages read-only after it.
 */
static inline int rt_map(struct rt_sess *s, unsigned int cpu)
{
	struct rt_ring *r = &s->rings[cpu];
	size_t page = s->info.page_size, region = s->cfg.region_size;
	off_t off = (off_t)cpu * region;
	uint8_t *base;

	base = mmap(NULL, region, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (base == MAP_FAILED)
		return -errno;
	if (mmap(base, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 s->fd, off) == MAP_FAILED ||
	    mmap(base + page, region - page, PROT_READ, MAP_SHARED | MAP_FIXED,
		 s->fd, off + page) == MAP_FAILED) {
		int err = -errno;

		munmap(base, region);
		return err;
	}
	r->base = base;
	r->region = region;
	r->ctl = (struct pmcring_mmap_page *)base;
	r->prod = (struct pmcring_prod_page *)(base + page);
	r->data = base + r->ctl->data_offset;
	r->size = r->ctl->data_size;
	r->tail = r->ctl->data_tail;
	r->cpu = cpu;
	return 0;
}

/*
 * Stand-in for a CPU without a ring (mmap ENODEV: not online since
 * CONFIGURE): an empty ring, base NULL, so loops over every CPU read
 * data_head 0 and zero counters.  Never written (tail stays 0).
 */
static struct pmcring_mmap_page rt_absent_ctl;
static struct pmcring_prod_page rt_absent_prod;

static inline void rt_absent(struct rt_sess *s, unsigned int cpu)
{
	struct rt_ring *r = &s->rings[cpu];

	memset(r, 0, sizeof(*r));
	r->ctl = &rt_absent_ctl;
	r->prod = &rt_absent_prod;
	r->size = (s->cfg.region_size - 2 * s->info.page_size) / 2;
	r->cpu = cpu;
}

/*
 * 1 if @cpu is online: a CPU without an online file is online if present
 * (cpu0); a possible CPU that is not present (possible_cpus=) has no
 * directory.
 */
static inline int rt_cpu_online(unsigned int cpu)
{
	char path[96];
	long v = 1;
	int fd;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u", cpu);
	if (access(path, F_OK))
		return 0;
	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/online",
		 cpu);
	fd = open(path, O_RDONLY);
	if (fd >= 0) {
		char buf[8] = "";

		if (read(fd, buf, sizeof(buf) - 1) > 0)
			v = strtol(buf, NULL, 10);
		close(fd);
	}
	return v != 0;
}

static inline void rt_unmap(struct rt_ring *r)
{
	if (r->base)
		munmap(r->base, r->region);
	r->base = NULL;
}

/*
 * Open a session configured as @cfg (copied to s->cfg, where CONFIGURE
 * fills in region_size); map every CPU's region if @map, but for the CPUs
 * without a ring (offline since CONFIGURE: ENODEV), which get rt_absent().
 */
static inline int rt_open_cfg(struct rt_sess *s,
			      const struct pmcring_config *cfg, int map)
{
	unsigned int cpu;
	int err;

	memset(s, 0, sizeof(*s));
	s->cfg = *cfg;
	s->fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (s->fd < 0)
		return -errno;
	err = rt_ioctl(s->fd, PMCRING_IOC_GET_INFO, &s->info);
	if (!err)
		err = rt_ioctl(s->fd, PMCRING_IOC_CONFIGURE, &s->cfg);
	if (err)
		goto err_close;
	s->nr_cpus = s->info.nr_cpus;
	s->rings = calloc(s->nr_cpus, sizeof(*s->rings));
	if (!s->rings) {
		err = -ENOMEM;
		goto err_close;
	}
	for (cpu = 0; map && cpu < s->nr_cpus; cpu++) {
		err = rt_map(s, cpu);
		/* no ring: the CPU was not online since CONFIGURE (base NULL) */
		if (err == -ENODEV)
			rt_absent(s, cpu);
		else if (err)
			goto err_close;
	}
	err = 0;
	return 0;

err_close:
	close(s->fd);
	s->fd = -1;
	return err;
}

/* Open and configure a session; map every CPU's region if @map. */
static inline int rt_open(struct rt_sess *s, uint32_t data_pages,
			  uint64_t watermark, int map)
{
	struct pmcring_config cfg = {
		.data_pages = data_pages,
		.watermark = watermark,
	};

	return rt_open_cfg(s, &cfg, map);
}

static inline void rt_close(struct rt_sess *s)
{
	unsigned int cpu;

	for (cpu = 0; s->rings && cpu < s->nr_cpus; cpu++)
		rt_unmap(&s->rings[cpu]);
	free(s->rings);
	s->rings = NULL;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}

static inline int rt_online_cpus(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

/* GENERATE on the CPUs of @mask (NULL: all online). */
static inline int rt_generate(int fd, uint64_t count, uint32_t size,
			      uint32_t flags, const uint64_t *mask,
			      uint32_t mask_size, uint32_t irq_batch)
{
	struct pmcring_generate g = {
		.count = count, .size = size, .flags = flags,
		.cpus = (uintptr_t)mask, .cpus_size = mask ? mask_size : 0,
		.irq_batch = irq_batch,
	};

	return rt_ioctl(fd, PMCRING_IOC_GENERATE, &g);
}

static inline int rt_generate_on(int fd, unsigned int cpu, uint64_t count,
				 uint32_t size, uint32_t flags)
{
	uint64_t mask[RT_MAX_CPUS / 64] = { 0 };

	mask[cpu / 64] |= 1ull << (cpu % 64);
	return rt_generate(fd, count, size, flags, mask,
			   (cpu / 64 + 1) * 8, 0);
}

#define RT_TEST_HOOKS_PATH	"/sys/module/pmcring/parameters/test_hooks"

/* Switch GENERATE's test hooks on or off (root); 0 or -1. */
static inline int rt_test_hooks(int on)
{
	return pmcring_write_int(RT_TEST_HOOKS_PATH, on);
}

/* (C) of the ordering contract. */
static inline uint64_t rt_head(const struct rt_ring *r)
{
	return __atomic_load_n(&r->ctl->data_head, __ATOMIC_ACQUIRE);
}

/* (D): done reading before the kernel may overwrite. */
static inline void rt_consume(struct rt_ring *r, uint64_t pos)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	__atomic_store_n(&r->ctl->data_tail, pos, __ATOMIC_RELEASE);
	r->tail = pos;
}

static inline uint64_t rt_prod(const __u64 *field)
{
	return __atomic_load_n(field, __ATOMIC_ACQUIRE);
}

/*
 * Check one GENERATED record (header already validated) and account it.
 * Returns 0 or -1 with s->err set.
 */
static inline int rt_check_generated(const struct rt_ring *r,
				     const uint8_t *rec, uint32_t len,
				     struct rt_stats *s)
{
	const struct pmcring_rec_generated *g = (const void *)rec;
	uint32_t ctx = 0, i;
	uint64_t seq;

	if (s->size && len != s->size) {
		snprintf(s->err, sizeof(s->err), "cpu %u: GENERATED len %u, want %u",
			 r->cpu, len, s->size);
		return -1;
	}
	if (len >= 32) {
		ctx = g->pl_ctx;
		if (g->pl_cpu != r->cpu || (ctx != PMCRING_GEN_CTX_TASK &&
					    ctx != PMCRING_GEN_CTX_HARDIRQ)) {
			snprintf(s->err, sizeof(s->err),
				 "cpu %u: GENERATED pl_cpu %u pl_ctx %u",
				 r->cpu, g->pl_cpu, ctx);
			return -1;
		}
	}
	if (s->records > 1 && ctx != s->last_ctx) {
		s->interleaved++;
		/* Back to the task stream after another context's records. */
		if (ctx == PMCRING_GEN_CTX_TASK && s->gen[ctx])
			s->irq_in_task++;
	}
	s->last_ctx = ctx;
	s->gen[ctx]++;
	if (len < 24)
		return 0;
	seq = g->pl_seq;
	if (seq < s->next_seq[ctx] || (seq > s->next_seq[ctx] && !s->allow_gaps)) {
		snprintf(s->err, sizeof(s->err),
			 "cpu %u ctx %u: seq %llu, want %llu", r->cpu, ctx,
			 (unsigned long long)seq,
			 (unsigned long long)s->next_seq[ctx]);
		return -1;
	}
	s->missing += seq - s->next_seq[ctx];
	s->next_seq[ctx] = seq + 1;
	for (i = 32; i < len; i++) {
		if (rec[i] != (uint8_t)(seq + i)) {
			snprintf(s->err, sizeof(s->err),
				 "cpu %u seq %llu: byte %u is %#x, want %#x",
				 r->cpu, (unsigned long long)seq, i, rec[i],
				 (uint8_t)(seq + i));
			return -1;
		}
	}
	return 0;
}

/*
 * Read every published record of @r, check it and consume it.  Returns the
 * number of records, or -1 with s->err set.
 */
static inline long rt_drain(struct rt_ring *r, struct rt_stats *s)
{
	uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;
	long n = 0;

	if (head - pos > r->size) {
		snprintf(s->err, sizeof(s->err), "cpu %u: head %llu tail %llu",
			 r->cpu, (unsigned long long)head,
			 (unsigned long long)pos);
		return -1;
	}
	while (pos != head) {
		const uint8_t *rec = r->data + (pos & mask);
		const struct pmcring_rec_header *h = (const void *)rec;
		uint32_t len = PMCRING_HEADER_LEN(h->pl_header);
		uint32_t type = PMCRING_HEADER_TYPE(h->pl_header);
		uint32_t space = PMCRING_RING_SPACE(len), i;

		if (PMCRING_HEADER_MAGIC(h->pl_header) != PMCRING_LOG_MAGIC ||
		    len < PMCRING_HEADER_SIZE || len > PMCRING_RECORD_MAX ||
		    space > head - pos || h->pl_spare) {
			snprintf(s->err, sizeof(s->err),
				 "cpu %u pos %llu: bad header %#x spare %#x",
				 r->cpu, (unsigned long long)pos, h->pl_header,
				 h->pl_spare);
			return -1;
		}
		if (h->pl_tsc < s->last_ts) {
			snprintf(s->err, sizeof(s->err),
				 "cpu %u pos %llu: ts %llu after %llu", r->cpu,
				 (unsigned long long)pos,
				 (unsigned long long)h->pl_tsc,
				 (unsigned long long)s->last_ts);
			return -1;
		}
		for (i = len; i < space; i++) {
			if (rec[i]) {
				snprintf(s->err, sizeof(s->err),
					 "cpu %u pos %llu: padding byte %u",
					 r->cpu, (unsigned long long)pos, i);
				return -1;
			}
		}
		s->last_ts = h->pl_tsc;
		s->records++;
		s->bytes += space;
		if ((pos & mask) + space > r->size)
			s->wrapped++;
		switch (type) {
		case PMCRING_TYPE_GENERATED:
			if (rt_check_generated(r, rec, len, s))
				return -1;
			break;
		case PMCRING_TYPE_DROPNOTIFY:
			if (len != PMCRING_SIZE_DROPNOTIFY) {
				snprintf(s->err, sizeof(s->err), "DROPNOTIFY len %u", len);
				return -1;
			}
			s->dropnotify++;
			break;
		case PMCRING_TYPE_USERDATA:
			s->userdata++;
			break;
		default:
			s->other++;
			break;
		}
		pos += space;
		n++;
	}
	rt_consume(r, pos);
	return n;
}

/*
 * Call @fn on every published record of every ring of @sess (with its
 * type and length), then consume them.  Returns the sum of the rings'
 * lost counters, or -1 at a record shorter than a header (nothing more
 * is read from that ring).
 */
typedef void (*rt_each_fn)(const uint8_t *rec, uint32_t type, uint32_t len,
			   void *arg);

static inline int64_t rt_each(struct rt_sess *sess, rt_each_fn fn, void *arg)
{
	int64_t lost = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < sess->nr_cpus; cpu++) {
		struct rt_ring *g = &sess->rings[cpu];
		uint64_t head = rt_head(g), pos = g->tail, mask = g->size - 1;

		while (pos != head) {
			const uint8_t *p = g->data + (pos & mask);
			const struct pmcring_rec_header *h = (const void *)p;
			uint32_t len = PMCRING_HEADER_LEN(h->pl_header);

			if (len < PMCRING_HEADER_SIZE)
				return -1;
			fn(p, PMCRING_HEADER_TYPE(h->pl_header), len, arg);
			pos += PMCRING_RING_SPACE(len);
		}
		rt_consume(g, pos);
		lost += rt_prod(&g->prod->lost);
	}
	return lost;
}

#endif /* PMCRING_RING_COMMON_H */
