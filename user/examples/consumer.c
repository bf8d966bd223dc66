// SPDX-License-Identifier: MIT
/*
 * consumer.c - a complete custom consumer of pmcring's per-CPU rings, in
 * exact global timestamp order, on the raw ABI alone.
 *
 * It includes <linux/pmcring.h> and nothing of libpmcring (no library
 * header, no library link), so every step a consumer must take is visible:
 *
 *   1. open /dev/pmcring: a session;
 *   2. PMCRING_IOC_GET_INFO: how many CPU rings, page size, limits; the
 *      device's compat_version must not exceed the PMCRING_ABI_VERSION we
 *      were built with (compat_version is the oldest ABI that still works);
 *   3. PMCRING_IOC_CONFIGURE: ring size, record types, target;
 *   4. map every CPU's region: reserve region_size bytes of address space,
 *      map the control page read-write and the rest read-only over it with
 *      MAP_FIXED, so one contiguous view starts at the control page.  A
 *      CPU not online since CONFIGURE has no ring yet (ENODEV): it counts
 *      as an idle CPU until the producer pages' nr_rings says a ring was
 *      added, then we map it (map_new_rings());
 *   5. PMCRING_IOC_ENABLE, then poll() the session fd and merge the rings
 *      in exact (timestamp, CPU) order with the producer pages' pending_ts
 *      and PMCRING_IOC_CLOCK (see merge_round());
 *   6. PMCRING_IOC_DISABLE; poll() then reports POLLHUP: merge until every
 *      ring is empty and no writer is in flight, check our counts against
 *      the kernel's (producer page records/bytes), unmap, close.
 *
 * libpmcring's pmcring_reader_poll() does all of 5-6 for you; see reader.c.
 *
 * Usage: consumer [-a | -p PID] [-t SECONDS] [-w COUNT] [-q]
 *   -a        system-wide (CAP_PERFMON or root)
 *   -p PID    that process and its descendants (default: this process)
 *   -t SECS   how long to record (default 1)
 *   -w COUNT  write COUNT (at most 64) USERDATA records, values
 *             1..COUNT, with PMCRING_IOC_WRITELOG after enabling, and
 *             check that each comes back exactly once
 *   -q        print only the summary, not every record
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <linux/pmcring.h>	/* the ABI: records, pages, ioctls */

static const char *const type_names[] = {
	[PMCRING_TYPE_CLOSELOG] = "CLOSELOG",
	[PMCRING_TYPE_DROPNOTIFY] = "DROPNOTIFY",
	[PMCRING_TYPE_INITIALIZE] = "INITIALIZE",
	[PMCRING_TYPE_PMCALLOCATE] = "PMCALLOCATE",
	[PMCRING_TYPE_PMCATTACH] = "PMCATTACH",
	[PMCRING_TYPE_PMCDETACH] = "PMCDETACH",
	[PMCRING_TYPE_PROCCSW] = "PROCCSW",
	[PMCRING_TYPE_PROCEXEC] = "PROCEXEC",
	[PMCRING_TYPE_PROCEXIT] = "PROCEXIT",
	[PMCRING_TYPE_PROCFORK] = "PROCFORK",
	[PMCRING_TYPE_SYSEXIT] = "SYSEXIT",
	[PMCRING_TYPE_USERDATA] = "USERDATA",
	[PMCRING_TYPE_MAP_IN] = "MAP_IN",
	[PMCRING_TYPE_MAP_OUT] = "MAP_OUT",
	[PMCRING_TYPE_CALLCHAIN] = "CALLCHAIN",
	[PMCRING_TYPE_PMCALLOCATEDYN] = "PMCALLOCATEDYN",
	[PMCRING_TYPE_THR_CREATE] = "THR_CREATE",
	[PMCRING_TYPE_THR_EXIT] = "THR_EXIT",
	[PMCRING_TYPE_PROC_CREATE] = "PROC_CREATE",
	[PMCRING_TYPE_GENERATED] = "GENERATED",
	[PMCRING_TYPE_PERIOD] = "PERIOD",
};

static const char *type_name(unsigned int type)
{
	return type < sizeof(type_names) / sizeof(type_names[0]) ?
	       type_names[type] : NULL;
}

/* One CPU's ring as this consumer sees it. */
struct ring {
	unsigned int			cpu;
	void				*base;	/* region start = control page */
	struct pmcring_mmap_page	*ctl;	/* page 0, read-write */
	const struct pmcring_prod_page	*prod;	/* page 1, read-only */
	const uint8_t			*data;	/* data_size bytes, mapped twice */
	uint64_t			mask;	/* data_size - 1 */
	uint64_t			pos;	/* next record to read */
	uint64_t			head;	/* data_head as last loaded */
	uint64_t			bound;	/* no future record is below it */
	uint64_t			records, bytes;	/* read, ring bytes */
};

struct consumer {
	int		fd;
	struct pmcring_info info;
	struct ring	*rings;
	unsigned int	nr;
	unsigned int	mapped;		/* rings with a mapping */
	unsigned int	first;		/* one of them */
	bool		quiet;
	uint64_t	records, bytes;
	uint64_t	last_ts;	/* of the last record out, */
	unsigned int	last_cpu;	/* and its CPU: (ts, cpu) only grows */
	uint64_t	out_of_order;	/* 0, or the merge is broken */
	uint64_t	userdata_seen;	/* bit i: value i + 1 came back */
	unsigned int	userdata_dups;
};

static int die(const char *what)
{
	fprintf(stderr, "consumer: %s: %s\n", what, strerror(errno));
	if (errno == ENOENT)
		fprintf(stderr, "consumer: is the pmcring module loaded?\n");
	exit(1);
}

/*
 * Stand-ins for a CPU without a ring: empty, no writer in flight.  Only
 * read (its pos stays 0, so ring_release() never stores).
 */
static struct pmcring_mmap_page absent_ctl;
static const struct pmcring_prod_page absent_prod;

/*
 * Map CPU @cpu's region, or leave the stand-in if the CPU has no ring
 * yet (ENODEV: not online since CONFIGURE).  Its layout (see
 * <linux/pmcring.h>):
 *
 *	page 0		control page, the only page we may write (data_tail)
 *	page 1		producer page (pending_ts, lost, records, bytes)
 *	pages 2..	the data, data_size bytes mapped twice in a row
 *
 * The kernel refuses a writable mapping that covers page 1 or later, so
 * we map the region in two pieces over one reservation.
 */
static void ring_map(struct consumer *c, struct ring *r, unsigned int cpu)
{
	size_t region = c->info.region_size, page = c->info.page_size;
	off_t off = (off_t)cpu * (off_t)region;
	void *p;

	r->cpu = cpu;
	r->ctl = &absent_ctl;
	r->prod = &absent_prod;
	/* reserve the whole region so the two maps below are contiguous */
	r->base = mmap(NULL, region, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (r->base == MAP_FAILED)
		die("mmap reserve");
	p = mmap(r->base, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 c->fd, off);
	if (p == MAP_FAILED && errno == ENODEV) {
		munmap(r->base, region);
		r->base = NULL;
		return;
	}
	if (p == MAP_FAILED)
		die("mmap control page");
	p = mmap((char *)r->base + page, region - page, PROT_READ,
		 MAP_SHARED | MAP_FIXED, c->fd, off + (off_t)page);
	if (p == MAP_FAILED)
		die("mmap data pages");
	r->ctl = r->base;
	r->prod = (const void *)((char *)r->base + page);
	/* never hard-code the layout: the control page says where data is */
	r->data = (const uint8_t *)r->base + r->ctl->data_offset;
	r->mask = r->ctl->data_size - 1;
	if (r->ctl->version < PMCRING_ABI_COMPAT_VERSION ||
	    r->ctl->cpu != cpu || r->ctl->data_size & r->mask) {
		fprintf(stderr, "consumer: cpu %u: unexpected control page\n", cpu);
		exit(1);
	}
	if (!c->mapped++)
		c->first = cpu;
}

/*
 * After T: the rings added since we mapped (RINGS AND CPU HOTPLUG in
 * <linux/pmcring.h>).  A ring still absent now holds no record below T:
 * it is created before its CPU runs, and the CPU reads the clock after.
 */
static void map_new_rings(struct consumer *c)
{
	uint64_t nr;
	unsigned int i;

	if (c->mapped == c->nr)
		return;
	nr = __atomic_load_n(&c->rings[c->first].prod->nr_rings,
			     __ATOMIC_ACQUIRE);
	for (i = 0; i < c->nr && c->mapped < nr; i++)
		if (!c->rings[i].base)
			ring_map(c, &c->rings[i], i);
}

/* Print one record; the typed structs of <linux/pmcring.h> overlay it. */
static void print_record(struct consumer *c, const struct ring *r,
			 const void *rec, uint32_t len)
{
	const struct pmcring_rec_header *h = rec;
	unsigned int type = PMCRING_HEADER_TYPE(h->pl_header);
	const char *name = type_name(type);

	if (type == PMCRING_TYPE_USERDATA) {
		const struct pmcring_rec_userdata *u = rec;

		if (u->pl_userdata >= 1 && u->pl_userdata <= 64) {
			uint64_t bit = 1ull << (u->pl_userdata - 1);

			c->userdata_dups += !!(c->userdata_seen & bit);
			c->userdata_seen |= bit;
		}
	}
	if (c->quiet)
		return;
	printf("%" PRIu64 ".%09" PRIu64 " cpu %u %-14s len %u",
	       (uint64_t)h->pl_tsc / 1000000000,
	       (uint64_t)h->pl_tsc % 1000000000, r->cpu,
	       name ? name : "?", len);
	switch (type) {
	case PMCRING_TYPE_USERDATA:
		printf(" value=%" PRIu32,
		       ((const struct pmcring_rec_userdata *)rec)->pl_userdata);
		break;
	case PMCRING_TYPE_PROCCSW: {
		const struct pmcring_rec_proccsw *s = rec;

		printf(" pid=%u tid=%u ran=%" PRIu64 "ns", s->pl_pid, s->pl_tid,
		       (uint64_t)s->pl_value);
		break;
	}
	case PMCRING_TYPE_CALLCHAIN: {
		const struct pmcring_rec_callchain *s = rec;

		printf(" pid=%u tid=%u frames=%u pc=0x%" PRIx64, s->pl_pid,
		       s->pl_tid, (len - PMCRING_SIZE_CALLCHAIN_MIN) / 8,
		       len > PMCRING_SIZE_CALLCHAIN_MIN ? (uint64_t)s->pl_pc[0] : 0);
		break;
	}
	case PMCRING_TYPE_MAP_IN: {
		const struct pmcring_rec_map_in *s = rec;

		printf(" pid=%d start=0x%" PRIx64 " path=%.*s", (int)s->pl_pid,
		       (uint64_t)s->pl_start, (int)(len - PMCRING_SIZE_MAP_IN_MIN),
		       s->pl_pathname);
		break;
	}
	default:
		break;
	}
	putchar('\n');
}

/*
 * The ring's next record, or NULL when it has none visible.  The loads of
 * the ordering contract, user side:
 *
 *	kernel (producer)		user (this consumer)
 *	(A) LOAD data_tail		(C) LOAD data_head (acquire)
 *	    STORE record bytes		    LOAD record bytes
 *	(B) smp_wmb()			(D) full fence
 *	    STORE data_head		    STORE data_tail (release)
 *
 * (C) pairs with (B): after the acquire load of data_head every record
 * before it is completely written.  (D), in ring_release(), pairs with (A).
 */
static const struct pmcring_rec_header *ring_peek(struct consumer *c,
						  struct ring *r)
{
	const struct pmcring_rec_header *h;
	uint32_t len;

	if (r->pos == r->head)
		r->head = __atomic_load_n(&r->ctl->data_head,
					  __ATOMIC_ACQUIRE);	/* (C) */
	if (r->pos == r->head)
		return NULL;
	/* contiguous even across the end: the data is mapped twice */
	h = (const void *)(r->data + (r->pos & r->mask));
	len = PMCRING_HEADER_LEN(h->pl_header);
	if (PMCRING_HEADER_MAGIC(h->pl_header) != PMCRING_LOG_MAGIC ||
	    len < PMCRING_HEADER_SIZE || len > c->info.max_record ||
	    r->head - r->pos < PMCRING_RING_SPACE(len)) {
		fprintf(stderr, "consumer: cpu %u: corrupt record at %" PRIu64
			"\n", r->cpu, r->pos);
		exit(1);
	}
	return h;
}

/* Give the space of the records read back to the producer. */
static void ring_release(struct ring *r)
{
	if (r->pos == r->ctl->data_tail)	/* only we write it */
		return;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);			/* (D) */
	__atomic_store_n(&r->ctl->data_tail, r->pos, __ATOMIC_RELEASE);
}

/*
 * One round of the exact merge: hand out, in (timestamp, CPU) order, every
 * record that provably comes next; 1 if some ring is not empty yet (or a
 * writer is in flight), 0 if all are.
 *
 * Each ring's records are in timestamp order, but the rings are written
 * independently: before handing out a record of timestamp ts from CPU t we
 * must know that no CPU will later show an earlier one (or an equal one
 * from a lower CPU).  A ring with a visible record is no problem: it is in
 * the comparison.  For an empty ring the producer page's pending_ts gives
 * a bound (EXACT CROSS-CPU ORDER in <linux/pmcring.h>):
 *
 *	(F) T = PMCRING_IOC_CLOCK; full fence; LOAD pending_ts (acquire)
 *	(H) LOAD data_head (acquire)
 *
 * If pending_ts != 0 a writer is in flight and none of its records is
 * below pending_ts; if it is 0, every record not visible at (H) reads the
 * clock after T.  So nothing below bound = pending_ts ?: T can appear.
 * The fence after the ioctl is ours to issue: a system call is not a
 * memory barrier the C memory model knows of.  (F) pairs with the
 * producer's (E), (H) with its (G).  A ring that runs dry keeps as bound
 * the timestamp of its last record, if that is higher.
 */
static int merge_round(struct consumer *c)
{
	unsigned int i, best;
	uint64_t T, pending, ts, best_ts;
	bool busy = false;

	if (ioctl(c->fd, PMCRING_IOC_CLOCK, &T))
		die("PMCRING_IOC_CLOCK");
	__atomic_thread_fence(__ATOMIC_SEQ_CST);			/* (F) */
	map_new_rings(c);
	for (i = 0; i < c->nr; i++) {
		struct ring *r = &c->rings[i];

		pending = __atomic_load_n(&r->prod->pending_ts, __ATOMIC_ACQUIRE);
		r->head = __atomic_load_n(&r->ctl->data_head,
					  __ATOMIC_ACQUIRE);		/* (H) */
		ts = pending ? pending : T;
		if (ts > r->bound)
			r->bound = ts;
		busy |= pending != 0;
	}
	for (;;) {
		const struct pmcring_rec_header *h, *best_h = NULL;
		struct ring *r;

		/* the earliest visible record, ties to the lower CPU */
		best = c->nr;
		best_ts = 0;
		for (i = 0; i < c->nr; i++) {
			h = ring_peek(c, &c->rings[i]);
			if (h && (!best_h || h->pl_tsc < best_ts)) {
				best_h = h;
				best = i;
				best_ts = h->pl_tsc;
			}
		}
		if (!best_h)
			break;
		/* an empty ring whose bound is not past it holds it back */
		for (i = 0; i < c->nr; i++) {
			r = &c->rings[i];
			if (i != best && r->pos == r->head &&
			    (r->bound < best_ts ||
			     (r->bound == best_ts && i < best)))
				break;
		}
		if (i < c->nr) {
			busy = true;
			break;		/* next round: a new T, new bounds */
		}
		r = &c->rings[best];
		print_record(c, r, best_h, PMCRING_HEADER_LEN(best_h->pl_header));
		if (best_ts < c->last_ts ||
		    (best_ts == c->last_ts && r->cpu < c->last_cpu))
			c->out_of_order++;
		c->last_ts = best_ts;
		c->last_cpu = r->cpu;
		r->records++;
		r->bytes += PMCRING_RING_SPACE(PMCRING_HEADER_LEN(best_h->pl_header));
		r->pos += PMCRING_RING_SPACE(PMCRING_HEADER_LEN(best_h->pl_header));
		if (best_ts > r->bound)
			r->bound = best_ts;	/* rings are in ts order */
		c->records++;
		c->bytes += PMCRING_HEADER_LEN(best_h->pl_header);
	}
	for (i = 0; i < c->nr; i++)
		ring_release(&c->rings[i]);
	return busy;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

int main(int argc, char **argv)
{
	struct pmcring_config cfg = { 0 };
	struct consumer c = { .fd = -1 };
	uint32_t writes = 0, written, i;
	uint64_t end, lost = 0, mismatch = 0;
	double secs = 1.0;
	int opt, pid = getpid();
	bool all = false;

	while ((opt = getopt(argc, argv, "ap:t:w:q")) != -1) {
		switch (opt) {
		case 'a':
			all = true;
			break;
		case 'p':
			pid = atoi(optarg);
			break;
		case 't':
			secs = atof(optarg);
			break;
		case 'w':
			writes = (uint32_t)atoi(optarg);
			break;
		case 'q':
			c.quiet = true;
			break;
		default:
			fprintf(stderr, "usage: consumer [-a | -p PID] [-t SECONDS] "
				"[-w COUNT] [-q]\n");
			return 2;
		}
	}
	if (writes > 64)
		writes = 64;

	/* 1-2: a session, and what the device offers */
	c.fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (c.fd < 0)
		die(PMCRING_DEV_PATH);
	if (ioctl(c.fd, PMCRING_IOC_GET_INFO, &c.info))
		die("PMCRING_IOC_GET_INFO");
	if (c.info.compat_version > PMCRING_ABI_VERSION) {
		fprintf(stderr, "consumer: ABI %u too new\n", c.info.abi_version);
		return 1;
	}

	/* 3: 16 data pages per CPU (a power of two within the limits) */
	cfg.data_pages = 16;
	if (cfg.data_pages < c.info.min_data_pages)
		cfg.data_pages = c.info.min_data_pages;
	if (cfg.data_pages > c.info.max_data_pages)
		cfg.data_pages = c.info.max_data_pages;
	cfg.types = 0;			/* every type */
	cfg.flags = all ? PMCRING_CFG_F_SYSTEM_WIDE : PMCRING_CFG_F_PID;
	cfg.pid = all ? 0 : pid;
	if (ioctl(c.fd, PMCRING_IOC_CONFIGURE, &cfg))
		die("PMCRING_IOC_CONFIGURE");
	/* the reply filled region_size; GET_INFO now reports it too */
	if (ioctl(c.fd, PMCRING_IOC_GET_INFO, &c.info))
		die("PMCRING_IOC_GET_INFO");

	/* 4: map every CPU's ring */
	c.nr = c.info.nr_cpus;
	c.rings = calloc(c.nr, sizeof(*c.rings));
	if (!c.rings)
		die("calloc");
	for (i = 0; i < c.nr; i++)
		ring_map(&c, &c.rings[i], i);
	if (!c.mapped) {
		fprintf(stderr, "consumer: no CPU has a ring\n");
		return 1;
	}

	/* 5: record, waking up when a ring passes its watermark */
	if (ioctl(c.fd, PMCRING_IOC_ENABLE))
		die("PMCRING_IOC_ENABLE");
	/* USERDATA records of our own, on whatever CPU we run on */
	for (written = 1; written <= writes; written++)
		if (ioctl(c.fd, PMCRING_IOC_WRITELOG, &written))
			die("PMCRING_IOC_WRITELOG");
	/* wake poll() now rather than at the watermark */
	if (writes && ioctl(c.fd, PMCRING_IOC_FLUSH))
		die("PMCRING_IOC_FLUSH");
	end = now_ms() + (uint64_t)(secs * 1000);
	while (now_ms() < end) {
		struct pollfd pfd = { .fd = c.fd, .events = POLLIN };

		/*
		 * Wake up at least every 10 ms: a record held back by an
		 * idle CPU goes out once the clock has passed it.
		 */
		if (poll(&pfd, 1, 10) < 0 && errno != EINTR)
			die("poll");
		merge_round(&c);
	}

	/* 6: stop; after POLLHUP merge until nothing is left anywhere */
	if (ioctl(c.fd, PMCRING_IOC_DISABLE))
		die("PMCRING_IOC_DISABLE");
	for (;;) {
		struct pollfd pfd = { .fd = c.fd, .events = POLLIN };

		if (poll(&pfd, 1, 1000) < 0 && errno != EINTR)
			die("poll");
		if (!(pfd.revents & POLLHUP)) {
			fprintf(stderr, "consumer: no POLLHUP after disable\n");
			return 1;
		}
		if (!merge_round(&c))
			break;		/* every ring empty, no writer */
		usleep(1000);
	}
	for (i = 0; i < c.nr; i++) {
		struct ring *r = &c.rings[i];
		/* the kernel's own counts, DROPNOTIFY records included */
		uint64_t krec = __atomic_load_n(&r->prod->records, __ATOMIC_RELAXED);
		uint64_t kbytes = __atomic_load_n(&r->prod->bytes, __ATOMIC_RELAXED);

		lost += r->prod->lost;
		if (krec != r->records || kbytes != r->bytes)
			mismatch++;
		if (r->base)
			munmap(r->base, c.info.region_size);
	}
	close(c.fd);
	free(c.rings);
	printf("consumer: %" PRIu64 " records, %" PRIu64 " bytes, %" PRIu64
	       " lost, %u CPUs, %u rings\n", c.records, c.bytes, lost, c.nr,
	       c.mapped);
	printf("consumer: %s, %s\n",
	       c.out_of_order ? "OUT OF ORDER" : "in timestamp order",
	       mismatch ? "counters DIFFER from the kernel's" :
			  "counters match the kernel's");
	if (c.out_of_order || mismatch)
		return 1;
	if (writes) {
		uint64_t want = writes == 64 ? ~0ull : (1ull << writes) - 1;

		printf("consumer: userdata %" PRIu32 " written, %s\n", writes,
		       c.userdata_seen == want && !c.userdata_dups ?
		       "all read back once" : "MISSING or duplicated");
		if (c.userdata_seen != want || c.userdata_dups)
			return 1;
	}
	return 0;
}
