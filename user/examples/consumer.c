// SPDX-License-Identifier: MIT
/*
 * consumer.c - a complete custom consumer of pmcring's per-CPU rings.
 *
 * It talks to the device with the raw ABI of <linux/pmcring.h> only (no
 * libpmcring session code), so every step a consumer must take is visible:
 *
 *   1. open /dev/pmcring: a session;
 *   2. PMCRING_IOC_GET_INFO: how many CPU rings, page size, limits;
 *   3. PMCRING_IOC_CONFIGURE: ring size, record types, target;
 *   4. map every CPU's region: reserve region_size bytes of address space,
 *      map the control page read-write and the rest read-only over it with
 *      MAP_FIXED, so one contiguous view starts at the control page;
 *   5. PMCRING_IOC_ENABLE, then poll() the session fd and drain every ring
 *      following the ordering contract: load-acquire data_head, read the
 *      records, full fence, store-release data_tail;
 *   6. PMCRING_IOC_DISABLE, drain what is left, unmap, close.
 *
 * libpmcring is linked only for pmcring_type_name() (record type names), to
 * show the installed pkg-config file at work.  Build it with the Makefile
 * next to it: cc consumer.c $(pkg-config --cflags --libs libpmcring).
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
#include <libpmcring.h>		/* pmcring_type_name() */

/* One CPU's ring as this consumer sees it. */
struct ring {
	unsigned int			cpu;
	void				*base;	/* region start = control page */
	struct pmcring_mmap_page	*ctl;	/* page 0, read-write */
	const struct pmcring_prod_page	*prod;	/* page 1, read-only */
	const uint8_t			*data;	/* data_size bytes, mapped twice */
	uint64_t			mask;	/* data_size - 1 */
};

struct consumer {
	int		fd;
	struct pmcring_info info;
	struct ring	*rings;
	unsigned int	nr;
	bool		quiet;
	uint64_t	records, bytes;
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
 * Map CPU @cpu's region.  Its layout (see <linux/pmcring.h>):
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
	/* reserve the whole region so the two maps below are contiguous */
	r->base = mmap(NULL, region, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS,
		       -1, 0);
	if (r->base == MAP_FAILED)
		die("mmap reserve");
	p = mmap(r->base, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED,
		 c->fd, off);
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
}

/* Print one record; the typed structs of <linux/pmcring.h> overlay it. */
static void print_record(struct consumer *c, const struct ring *r,
			 const void *rec, uint32_t len)
{
	const struct pmcring_rec_header *h = rec;
	unsigned int type = PMCRING_HEADER_TYPE(h->pl_header);
	const char *name = pmcring_type_name(type);

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
 * Drain one ring: everything the producer has published.
 *
 *	kernel (producer)		user (this function)
 *	(A) LOAD data_tail		(C) LOAD data_head (acquire)
 *	    STORE record bytes		    LOAD record bytes
 *	(B) smp_wmb()			(D) full fence
 *	    STORE data_head		    STORE data_tail (release)
 *
 * (C) pairs with (B): after the acquire load of data_head every record
 * before it is completely written.  (D) pairs with (A): the fence orders
 * our reads of the records before the store that lets the kernel overwrite
 * them.  Returns the number of records read, or -1 on a corrupt ring.
 */
static int ring_drain(struct consumer *c, struct ring *r)
{
	uint64_t head, tail, pos;
	int n = 0;

	head = __atomic_load_n(&r->ctl->data_head, __ATOMIC_ACQUIRE);	/* (C) */
	tail = r->ctl->data_tail;	/* only we write it */
	for (pos = tail; pos != head;) {
		/* contiguous even across the end: the data is mapped twice */
		const uint8_t *rec = r->data + (pos & r->mask);
		const struct pmcring_rec_header *h = (const void *)rec;
		uint32_t len = PMCRING_HEADER_LEN(h->pl_header);

		if (PMCRING_HEADER_MAGIC(h->pl_header) != PMCRING_LOG_MAGIC ||
		    len < PMCRING_HEADER_SIZE || len > c->info.max_record ||
		    head - pos < PMCRING_RING_SPACE(len)) {
			fprintf(stderr, "consumer: cpu %u: corrupt record at %"
				PRIu64 "\n", r->cpu, pos);
			return -1;
		}
		print_record(c, r, rec, len);
		c->records++;
		c->bytes += len;
		pos += PMCRING_RING_SPACE(len);	/* records start 8-aligned */
		n++;
	}
	if (pos != tail) {
		__atomic_thread_fence(__ATOMIC_SEQ_CST);		/* (D) */
		__atomic_store_n(&r->ctl->data_tail, pos, __ATOMIC_RELEASE);
	}
	return n;
}

static int drain_all(struct consumer *c)
{
	unsigned int i;
	int n, total = 0;

	for (i = 0; i < c->nr; i++) {
		n = ring_drain(c, &c->rings[i]);
		if (n < 0)
			return -1;
		total += n;
	}
	return total;
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
	uint64_t end, lost = 0;
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

		if (poll(&pfd, 1, 100) < 0 && errno != EINTR)
			die("poll");
		if (drain_all(&c) < 0)
			return 1;
	}

	/* 6: stop, take the rest, report */
	if (ioctl(c.fd, PMCRING_IOC_DISABLE))
		die("PMCRING_IOC_DISABLE");
	if (drain_all(&c) < 0)
		return 1;
	for (i = 0; i < c.nr; i++) {
		lost += c.rings[i].prod->lost;
		munmap(c.rings[i].base, c.info.region_size);
	}
	close(c.fd);
	free(c.rings);
	printf("consumer: %" PRIu64 " records, %" PRIu64 " bytes, %" PRIu64
	       " lost, %u CPUs\n", c.records, c.bytes, lost, c.nr);
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
