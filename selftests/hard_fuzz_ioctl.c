// SPDX-License-Identifier: GPL-2.0
/*
 * Description: multi-threaded fuzzer of the /dev/pmcring system call
 * surface.  Several threads share a few sessions and hammer them with
 * random, partly valid arguments: every ioctl (valid numbers with random
 * structs and bad pointers, invalid numbers in the pmcring magic), mmap
 * with random offsets/lengths/prots/flags on configured and unconfigured
 * sessions, munmap/mremap/mprotect/madvise of the mappings, garbage and
 * valid stores to data_tail while GENERATE writes, GENERATE with random
 * sizes, counts, CPU bitmaps and batches (interrupted by signals), poll,
 * read/write, vmsplice of mapped pages into pipes that outlive the session,
 * open/close/dup churn and fork (the child must see no mapping).
 *
 * A few invariants are checked on the way (no writable or executable
 * mapping past the control page, no mprotect() upgrade, unknown ioctls are
 * ENOTTY, errnos from a known set); the real verdict is that the kernel
 * survives: afterwards the module's reference count drops back to 0 and the
 * vmrun harness checks rmmod and a clean dmesg.
 *
 * Environment (or argv[1] = operations):
 *   HARD_FUZZ_OPS      total operations (default 60000)
 *   HARD_FUZZ_THREADS  threads (default 4)
 *   HARD_FUZZ_SECONDS  time cap (default 140); the run stops there (a
 *                      note, not a failure: debug kernels are slow)
 *   HARD_FUZZ_SEED     seed (default: time); printed for reproduction
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/pmcring.h>

#define PMCRING_TEST_LINE_BUFFERED
#include "pmcring_test.h"

#define NSLOTS		6
#define NMAPS		48
#define NPIPES		4
#define MAX_THREADS	16

struct slot {
	pthread_rwlock_t	lock;	/* write: replace fd; read: use it */
	int			fd;
	uint64_t		region;	/* region_size once configured */
};

struct map {
	void	*addr;
	size_t	len;
	int	prot;
	int	slot;
	int	ctl;		/* covers only the control page (page 0) */
	int	full;		/* a whole region: ctl page at addr */
};

static struct slot slots[NSLOTS];
static struct map maps[NMAPS];
static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static int pipes[NPIPES][2];
static pthread_mutex_t pipes_lock = PTHREAD_MUTEX_INITIALIZER;

static long page;
static unsigned int nr_cpus;		/* possible CPUs (GET_INFO) */
static unsigned int nr_online;
static void *bad_ptr;			/* PROT_NONE page */
static uint8_t *edge_ptr;		/* last bytes before a PROT_NONE page */
static void *ro_ptr;			/* read-only page */

static atomic_ullong ops_done;
static atomic_ullong op_count[32];
static atomic_ullong ok_count[32];
static __thread unsigned int cur_op;
static atomic_ullong violations;
static atomic_ullong gen_records;
static atomic_int stop_all;
static uint64_t ops_target;
static uint64_t deadline_ns;
static pthread_t threads[MAX_THREADS];
static unsigned int nr_threads;
/* Nobody signals a thread before all exist or after one has left. */
static pthread_barrier_t start_bar, end_bar;
static char first_violation[256];
static pthread_mutex_t viol_lock = PTHREAD_MUTEX_INITIALIZER;

static const char *const op_names[] = {
	"open", "close", "dup_close", "get_info", "configure", "enable",
	"disable", "writelog", "generate", "clock", "add_counter", "flush",
	"bad_ioctl", "mmap", "munmap", "mremap", "mprotect", "madvise",
	"touch", "data_tail", "poll", "read_write", "vmsplice", "fork",
	"signal", "drain",
};
#define NR_OPS (sizeof(op_names) / sizeof(op_names[0]))

/* xorshift64*, one state per thread. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

static uint64_t rnd_below(uint64_t *s, uint64_t n)
{
	return n ? rnd(s) % n : 0;
}

static int one_in(uint64_t *s, unsigned int n)
{
	return rnd_below(s, n) == 0;
}

static void violation(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
static void violation(const char *fmt, ...)
{
	va_list ap;
	char buf[256];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	pthread_mutex_lock(&viol_lock);
	if (!atomic_fetch_add(&violations, 1))
		snprintf(first_violation, sizeof(first_violation), "%s", buf);
	pthread_mutex_unlock(&viol_lock);
	fprintf(stderr, "# VIOLATION: %s\n", buf);
}

/* The errnos the module documents (or the kernel's generic paths). */
static void check_errno(const char *what, int err)
{
	switch (err) {
	case EINVAL: case EFAULT: case EBUSY: case ENOTTY: case EPERM:
	case EACCES: case E2BIG: case ENOMEM: case EINTR: case ESRCH:
	case ENOSPC: case EOPNOTSUPP: case ENOENT: case ENODEV: case EBADF:
	case EAGAIN: case EOVERFLOW: case ENXIO: case EMFILE: case ENFILE:
		return;
	default:
		violation("%s: unexpected errno %d (%s)", what, err,
			  strerror(err));
	}
}

/* A user pointer for an ioctl argument: mostly @good, sometimes bad. */
static void *arg_ptr(uint64_t *s, void *good, size_t size)
{
	switch (rnd_below(s, 24)) {
	case 0: return NULL;
	case 1: return (void *)1;
	case 2: return bad_ptr;
	case 3: return (void *)0xffff888000000000ull;	/* kernel half */
	case 4: return edge_ptr + page - (size > 1 ? size / 2 : 1);
	case 5: return ro_ptr;
	default: return good;
	}
}

static void fill_random(uint64_t *s, void *p, size_t n)
{
	uint8_t *b = p;
	size_t i;

	for (i = 0; i < n; i++)
		b[i] = (uint8_t)rnd(s);
}

/* A mostly plausible data_pages value. */
static uint32_t rnd_pages(uint64_t *s)
{
	switch (rnd_below(s, 16)) {
	case 0: return (uint32_t)rnd(s);
	case 1: return 0;
	case 2: return 3;
	case 3: return 1;
	case 4: return 1u << rnd_below(s, 32);
	case 5: return 256;		/* 1 MiB per CPU */
	default: return 2u << rnd_below(s, 4);	/* 2..16 */
	}
}

/* ---- slots ---- */

/* Lock slot @i for use; returns its fd (may be -1). */
static int slot_get(int i)
{
	pthread_rwlock_rdlock(&slots[i].lock);
	return slots[i].fd;
}

static void slot_put(int i)
{
	pthread_rwlock_unlock(&slots[i].lock);
}

static void op_open(uint64_t *s)
{
	int i = rnd_below(s, NSLOTS), fd, old;

	fd = open(PMCRING_DEV_PATH,
		  (one_in(s, 8) ? O_RDONLY : O_RDWR) | O_CLOEXEC |
		  (one_in(s, 4) ? O_NONBLOCK : 0));
	if (fd < 0) {
		check_errno("open", errno);
		return;
	}
	pthread_rwlock_wrlock(&slots[i].lock);
	old = slots[i].fd;
	slots[i].fd = fd;
	slots[i].region = 0;
	pthread_rwlock_unlock(&slots[i].lock);
	if (old >= 0)
		close(old);
}

static void op_close(uint64_t *s)
{
	int i = rnd_below(s, NSLOTS), old;

	pthread_rwlock_wrlock(&slots[i].lock);
	old = slots[i].fd;
	slots[i].fd = -1;
	slots[i].region = 0;
	pthread_rwlock_unlock(&slots[i].lock);
	if (old >= 0)
		close(old);
}

/* ---- ioctls ---- */

static int do_ioctl(int fd, unsigned long cmd, void *arg, const char *what)
{
	int rc = ioctl(fd, cmd, arg);

	if (rc < 0) {
		check_errno(what, errno);
		return -errno;
	}
	atomic_fetch_add(&ok_count[cur_op], 1);
	return rc;
}

static void op_get_info(uint64_t *s, int fd)
{
	struct pmcring_info info;

	do_ioctl(fd, PMCRING_IOC_GET_INFO, arg_ptr(s, &info, sizeof(info)),
		 "GET_INFO");
}

static void op_configure(uint64_t *s, int i, int fd)
{
	static __thread uint64_t cfg_cpus[2];
	struct pmcring_config c;

	memset(&c, 0, sizeof(c));
	if (one_in(s, 6)) {
		fill_random(s, &c, sizeof(c));
	} else {
		c.data_pages = rnd_pages(s);
		if (one_in(s, 3))
			c.flags = rnd_below(s, 2) ? (uint32_t)rnd(s) :
				  (uint32_t)rnd_below(s, 64);
		if (one_in(s, 3))
			c.watermark = rnd_below(s, 2) ? rnd(s) :
				      rnd_below(s, 65536);
		if (one_in(s, 3))
			c.types = rnd_below(s, 2) ? rnd(s) :
				  PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
				  PMCRING_TYPE_BIT(PMCRING_TYPE_USERDATA);
		if (c.flags & PMCRING_CFG_F_PID)
			c.pid = one_in(s, 3) ? (int32_t)rnd(s) :
				one_in(s, 2) ? 1 : getpid();
		if (one_in(s, 4))
			c.callchain_depth = rnd_below(s, 1024);
		if (c.flags & PMCRING_CFG_F_CPUS) {
			c.cpus = one_in(s, 4) ? rnd(s) : (uintptr_t)cfg_cpus;
			c.cpus_size = one_in(s, 4) ? (uint32_t)rnd_below(s, 8200) :
				      8 * (uint32_t)rnd_below(s, 3);
			cfg_cpus[0] = rnd(s) & 0xff;
		}
		if (one_in(s, 16))
			c.__reserved[rnd_below(s, 2)] = rnd(s) | 1;
		/* any fd: ours (sessions, /dev/null), closed or absurd */
		if (one_in(s, 8))
			c.pidfd = one_in(s, 2) ? (int32_t)rnd(s) :
				  (int32_t)rnd_below(s, 64);
	}
	/* Keep the VM alive: big rings only now and then. */
	if (c.data_pages > 256 && c.data_pages <= 8192 && !one_in(s, 8))
		c.data_pages = 16;
	if (!do_ioctl(fd, PMCRING_IOC_CONFIGURE, arg_ptr(s, &c, sizeof(c)),
		      "CONFIGURE")) {
		/* Another thread may have replaced the fd: record loosely. */
		slots[i].region = c.region_size;
	}
}

static void op_writelog(uint64_t *s, int fd)
{
	uint32_t v = (uint32_t)rnd(s);

	do_ioctl(fd, PMCRING_IOC_WRITELOG, arg_ptr(s, &v, sizeof(v)),
		 "WRITELOG");
}

static void op_generate(uint64_t *s, int fd)
{
	struct pmcring_generate g;
	uint64_t bitmap[4];
	int rc;

	memset(&g, 0, sizeof(g));
	memset(bitmap, 0, sizeof(bitmap));
	if (one_in(s, 8)) {
		fill_random(s, &g, sizeof(g));
		/* A random count would run for hours: bound it. */
		g.count %= 2000;
	} else {
		/* Short calls: GENERATE dominates the run time under TCG. */
		g.count = one_in(s, 10) ? 0 : 1 + rnd_below(s, 800);
		g.size = one_in(s, 4) ? (uint32_t)rnd_below(s, 5000) :
			 16 + 8 * (uint32_t)rnd_below(s, 64);
		if (one_in(s, 12))
			g.size = PMCRING_RECORD_MAX;
		g.flags = one_in(s, 8) ? (uint32_t)rnd(s) :
			  1 + (uint32_t)rnd_below(s, 3);
		if (one_in(s, 3)) {
			g.irq_batch = one_in(s, 4) ? (uint32_t)rnd(s) :
				      (uint32_t)rnd_below(s, 1025);
		}
		if (one_in(s, 3)) {
			switch (rnd_below(s, 5)) {
			case 0:
				bitmap[0] = 1ull << rnd_below(s, nr_online);
				break;
			case 1:
				bitmap[0] = rnd(s);
				break;
			case 2:
				bitmap[rnd_below(s, 4)] = rnd(s);
				break;
			default:
				bitmap[0] = (1ull << nr_online) - 1;
				break;
			}
			g.cpus = (uintptr_t)arg_ptr(s, bitmap, sizeof(bitmap));
			g.cpus_size = one_in(s, 5) ? (uint32_t)rnd(s) :
				      8 * (1 + (uint32_t)rnd_below(s, 4));
		}
		if (one_in(s, 20))
			g.__reserved[rnd_below(s, 2)] = 1;
	}
	rc = do_ioctl(fd, PMCRING_IOC_GENERATE, arg_ptr(s, &g, sizeof(g)),
		      "GENERATE");
	if (!rc)
		atomic_fetch_add(&gen_records, g.count);
}

static void op_clock(uint64_t *s, int fd)
{
	uint64_t t;

	do_ioctl(fd, PMCRING_IOC_CLOCK, arg_ptr(s, &t, sizeof(t)), "CLOCK");
}

static void op_add_counter(uint64_t *s, int fd)
{
	struct pmcring_counter c;

	memset(&c, 0, sizeof(c));
	if (one_in(s, 8)) {
		fill_random(s, &c, sizeof(c));
	} else {
		c.type = one_in(s, 6) ? (uint32_t)rnd_below(s, 8) :
			 PERF_TYPE_SOFTWARE;
		c.config = one_in(s, 4) ? rnd_below(s, 16) :
			   PERF_COUNT_SW_CPU_CLOCK;
		c.flags = one_in(s, 6) ? (uint32_t)rnd(s) :
			  (uint32_t)rnd_below(s, 2);
		if (c.flags & PMCRING_CTR_F_FREQ)
			c.rate = one_in(s, 6) ? rnd(s) : 1 + rnd_below(s, 1000);
		else
			c.rate = one_in(s, 10) ? rnd_below(s, 100000) :
				 1000000 + rnd_below(s, 100000000);
		if (one_in(s, 10))
			fill_random(s, c.name, sizeof(c.name));
		else
			snprintf(c.name, sizeof(c.name), "fuzz-%u",
				 (unsigned int)rnd_below(s, 100));
		if (one_in(s, 16))
			c.__reserved0 = 1;
	}
	/* A period of a few ns would flood a TCG guest with interrupts. */
	if (!(c.flags & PMCRING_CTR_F_FREQ) && c.rate < 100000)
		c.rate = one_in(s, 2) ? 0 : 100000;
	if ((c.flags & PMCRING_CTR_F_FREQ) && c.rate > 1000 && !one_in(s, 4))
		c.rate = 1000;
	do_ioctl(fd, PMCRING_IOC_ADD_COUNTER, arg_ptr(s, &c, sizeof(c)),
		 "ADD_COUNTER");
}

/* Numbers that are not pmcring's: must be ENOTTY, never anything else. */
static void op_bad_ioctl(uint64_t *s, int fd)
{
	uint8_t buf[256];
	unsigned long cmd;
	unsigned int nr = 0x0a + rnd_below(s, 0xf6);
	int rc;

	fill_random(s, buf, sizeof(buf));
	switch (rnd_below(s, 3)) {
	case 0:
		cmd = _IOC(rnd_below(s, 4), PMCRING_IOC_MAGIC, nr,
			   rnd_below(s, sizeof(buf)));
		break;
	case 1:
		/* A known number with the wrong size or direction. */
		cmd = _IOC(rnd_below(s, 4), PMCRING_IOC_MAGIC,
			   1 + rnd_below(s, 9), rnd_below(s, sizeof(buf)));
		break;
	default:
		cmd = _IOC(rnd_below(s, 4), PMCRING_IOC_MAGIC + 1 +
			   rnd_below(s, 8), rnd_below(s, 256),
			   rnd_below(s, sizeof(buf)));
		break;
	}
	switch (cmd) {
	case PMCRING_IOC_GET_INFO: case PMCRING_IOC_CONFIGURE:
	case PMCRING_IOC_ENABLE: case PMCRING_IOC_DISABLE:
	case PMCRING_IOC_WRITELOG: case PMCRING_IOC_GENERATE:
	case PMCRING_IOC_GENERATE_VER0:
	case PMCRING_IOC_CLOCK: case PMCRING_IOC_ADD_COUNTER:
	case PMCRING_IOC_FLUSH:
		return;	/* hit a real one by chance: not this op's business */
	}
	rc = ioctl(fd, cmd, arg_ptr(s, buf, sizeof(buf)));
	if (rc >= 0)
		violation("ioctl 0x%lx succeeded (rc %d)", cmd, rc);
	else if (errno != ENOTTY)
		violation("ioctl 0x%lx: errno %d, want ENOTTY", cmd, errno);
}

/* ---- mappings ---- */

static int map_add(void *addr, size_t len, int prot, int slot, int ctl,
		   int full)
{
	unsigned int i;

	pthread_mutex_lock(&maps_lock);
	for (i = 0; i < NMAPS; i++) {
		if (!maps[i].addr) {
			maps[i] = (struct map){ addr, len, prot, slot, ctl,
						full };
			pthread_mutex_unlock(&maps_lock);
			return 0;
		}
	}
	pthread_mutex_unlock(&maps_lock);
	munmap(addr, len);
	return -1;
}

static void op_mmap(uint64_t *s, int i, int fd)
{
	uint64_t region = slots[i].region;
	unsigned int cpu;
	int prot, flags, ctl = 0, full = 0;
	size_t len;
	off_t off;
	void *p;

	if (!region || one_in(s, 5))
		region = (uint64_t)page * (2 + 2 * (2u << rnd_below(s, 4)));
	cpu = one_in(s, 8) ? (unsigned int)rnd_below(s, 4096) :
	      (unsigned int)rnd_below(s, nr_cpus + 1);
	flags = one_in(s, 10) ? MAP_PRIVATE : MAP_SHARED;
	if (one_in(s, 20))
		flags |= MAP_POPULATE;
	switch (rnd_below(s, 6)) {
	case 0:			/* control page, read-write */
		off = (off_t)cpu * region;
		len = page;
		prot = PROT_READ | PROT_WRITE;
		break;
	case 1:			/* the whole region, read-only */
		off = (off_t)cpu * region;
		len = region;
		prot = PROT_READ;
		break;
	case 2:			/* producer + data pages, read-only */
		off = (off_t)cpu * region + page;
		len = region - page;
		prot = PROT_READ;
		break;
	case 3:			/* random pages, random prot */
		off = (off_t)cpu * region + page * rnd_below(s, region / page + 2);
		len = page * (1 + rnd_below(s, region / page + 2));
		prot = rnd_below(s, 8);
		break;
	case 4:			/* unaligned or absurd numbers */
		off = (off_t)rnd(s);
		len = rnd_below(s, 4) ? rnd_below(s, 1 << 20) : rnd(s);
		prot = rnd_below(s, 8);
		break;
	default:		/* writable past the control page */
		off = (off_t)cpu * region + page * rnd_below(s, 3);
		len = page * (1 + rnd_below(s, 4));
		prot = PROT_READ | PROT_WRITE | (one_in(s, 3) ? PROT_EXEC : 0);
		break;
	}
	p = mmap(NULL, len, prot, flags, fd, off);
	if (p == MAP_FAILED) {
		check_errno("mmap", errno);
		return;
	}
	/* What the ABI forbids must have failed. */
	if (prot & PROT_EXEC)
		violation("mmap PROT_EXEC off %lld len %zu succeeded",
			  (long long)off, len);
	if ((prot & PROT_WRITE) && (off % region) / page + len / page > 1 &&
	    region == slots[i].region)
		violation("mmap PROT_WRITE off %lld len %zu succeeded",
			  (long long)off, len);
	if (flags & MAP_PRIVATE)
		violation("mmap MAP_PRIVATE succeeded");
	atomic_fetch_add(&ok_count[cur_op], 1);
	ctl = (off % region) == 0 && len == (size_t)page;
	full = (off % region) == 0 && len == region;
	map_add(p, len, prot, i, ctl, full);
}

/* Pick a mapping and hold maps_lock; NULL (unlocked) if none. */
static struct map *map_pick(uint64_t *s)
{
	unsigned int i, start = rnd_below(s, NMAPS);

	pthread_mutex_lock(&maps_lock);
	for (i = 0; i < NMAPS; i++) {
		struct map *m = &maps[(start + i) % NMAPS];

		if (m->addr)
			return m;
	}
	pthread_mutex_unlock(&maps_lock);
	return NULL;
}

/*
 * Never munmap() a range that may already be free: between two calls
 * another thread's mmap() (or malloc, or a thread stack) may land there.
 */
static void op_munmap(uint64_t *s)
{
	struct map *m = map_pick(s);
	size_t pages, first, n;
	unsigned int i;

	if (!m)
		return;
	pages = m->len / page;
	if (pages > 1 && one_in(s, 3)) {
		/* Punch a hole: the VMA splits, head and tail stay mapped. */
		first = rnd_below(s, pages);
		n = 1 + rnd_below(s, pages - first);
		if (munmap((uint8_t *)m->addr + first * page, n * page))
			violation("munmap of a hole: %s", strerror(errno));
		if (first + n < pages) {
			/* Track the tail as its own mapping (or drop it now). */
			for (i = 0; i < NMAPS && maps[i].addr; i++)
				;
			if (i < NMAPS) {
				maps[i] = *m;
				maps[i].addr = (uint8_t *)m->addr + (first + n) * page;
				maps[i].len = (pages - first - n) * page;
				maps[i].ctl = 0;
				maps[i].full = 0;
			} else {
				munmap((uint8_t *)m->addr + (first + n) * page,
				       (pages - first - n) * page);
			}
		}
		if (first == 0) {
			m->addr = NULL;
		} else {
			m->len = first * page;
			m->full = 0;
		}
	} else {
		if (munmap(m->addr, m->len))
			violation("munmap: %s", strerror(errno));
		m->addr = NULL;
	}
	pthread_mutex_unlock(&maps_lock);
}

static void op_mremap(uint64_t *s)
{
	struct map *m = map_pick(s);
	size_t nlen;
	void *p;

	if (!m)
		return;
	switch (rnd_below(s, 3)) {
	case 0:		/* grow in place or moving: VM_DONTEXPAND says no */
		nlen = m->len + page * (1 + rnd_below(s, 4));
		p = mremap(m->addr, m->len, nlen, MREMAP_MAYMOVE);
		if (p != MAP_FAILED) {
			violation("mremap grew a pmcring mapping");
			m->addr = p;
			m->len = nlen;
		}
		break;
	case 1:		/* shrink */
		if (m->len > (size_t)page) {
			nlen = page * (1 + rnd_below(s, m->len / page - 1));
			p = mremap(m->addr, m->len, nlen, 0);
			if (p != MAP_FAILED) {
				m->len = nlen;
				m->full = 0;
			}
		}
		break;
	default:	/* move, same size */
		p = mremap(m->addr, m->len, m->len, MREMAP_MAYMOVE);
		if (p != MAP_FAILED)
			m->addr = p;
		break;
	}
	pthread_mutex_unlock(&maps_lock);
}

static void op_mprotect(uint64_t *s)
{
	struct map *m = map_pick(s);
	int prot = rnd_below(s, 8);

	if (!m)
		return;
	if (!mprotect(m->addr, m->len, prot)) {
		if (prot & PROT_EXEC)
			violation("mprotect PROT_EXEC succeeded");
		if ((prot & PROT_WRITE) && !m->ctl && m->len > (size_t)page)
			violation("mprotect PROT_WRITE of %zu bytes succeeded",
				  m->len);
		m->prot = prot;
	}
	pthread_mutex_unlock(&maps_lock);
}

static void op_madvise(uint64_t *s)
{
	static const int advice[] = {
		MADV_NORMAL, MADV_RANDOM, MADV_SEQUENTIAL, MADV_WILLNEED,
		MADV_DONTNEED, MADV_DONTFORK, MADV_DONTDUMP, MADV_DODUMP,
		MADV_COLD, MADV_PAGEOUT, MADV_FREE, MADV_REMOVE,
	};
	struct map *m = map_pick(s);

	if (!m)
		return;
	madvise(m->addr, m->len, advice[rnd_below(s, 12)]);
	pthread_mutex_unlock(&maps_lock);
}

/* Read every page (faults them in) or a random byte. */
static void op_touch(uint64_t *s)
{
	struct map *m = map_pick(s);
	volatile uint8_t *p;
	size_t off;
	uint8_t sum = 0;

	if (!m)
		return;
	p = m->addr;
	if (m->prot & PROT_READ) {
		if (one_in(s, 2)) {
			for (off = 0; off < m->len; off += page)
				sum += p[off];
		} else {
			sum += p[rnd_below(s, m->len)];
		}
	}
	(void)sum;
	pthread_mutex_unlock(&maps_lock);
}

/*
 * Stores to the control page: garbage or a correct consume.  The kernel
 * reads data_tail and must treat anything there as untrusted.
 */
static void op_data_tail(uint64_t *s)
{
	struct map *m = map_pick(s);
	struct pmcring_mmap_page *ctl;
	uint64_t head;

	if (!m)
		return;
	if ((m->ctl || m->full) && (m->prot & PROT_WRITE) &&
	    (m->prot & PROT_READ)) {
		ctl = m->addr;
		head = __atomic_load_n(&ctl->data_head, __ATOMIC_ACQUIRE);
		switch (rnd_below(s, 6)) {
		case 0: __atomic_store_n(&ctl->data_tail, rnd(s),
					 __ATOMIC_RELEASE); break;
		case 1: __atomic_store_n(&ctl->data_tail, head + 1 +
					 rnd_below(s, 1 << 20),
					 __ATOMIC_RELEASE); break;
		case 2: __atomic_store_n(&ctl->data_tail, ~0ull,
					 __ATOMIC_RELEASE); break;
		case 3:		/* fields the kernel never reads */
			ctl->region_size = rnd(s);
			ctl->watermark = rnd(s);
			ctl->aux_tail = rnd(s);
			ctl->__reserved[rnd_below(s, 124)] = rnd(s);
			break;
		default: __atomic_store_n(&ctl->data_tail, head,
					  __ATOMIC_RELEASE); break;
		}
	}
	pthread_mutex_unlock(&maps_lock);
}

/* A real consumer on a whole-region mapping: never touches bytes twice. */
static void op_drain(uint64_t *s)
{
	struct map *m = map_pick(s);
	struct pmcring_mmap_page *ctl;
	uint64_t head, tail, tail0, size;
	const uint8_t *data;
	uint32_t h, bad = 0;

	(void)s;
	if (!m)
		return;
	if (m->full && (m->prot & PROT_READ)) {
		ctl = m->addr;
		size = ctl->data_size;
		if (size && !(size & (size - 1)) &&
		    ctl->data_offset + 2 * size <= m->len) {
			data = (const uint8_t *)m->addr + ctl->data_offset;
			head = __atomic_load_n(&ctl->data_head,
					       __ATOMIC_ACQUIRE);
			tail = tail0 = __atomic_load_n(&ctl->data_tail,
						       __ATOMIC_ACQUIRE);
			/*
			 * data_tail may hold garbage from op_data_tail: ~0 is
			 * "one byte before 0", inside the window but not at a
			 * record.  Walk only from an aligned tail in the window.
			 */
			if (head - tail > size || (tail & 7))
				tail = head;
			while (tail < head) {
				memcpy(&h, data + (tail & (size - 1)), 4);
				if (PMCRING_HEADER_MAGIC(h) != PMCRING_LOG_MAGIC ||
				    PMCRING_HEADER_LEN(h) < PMCRING_HEADER_SIZE) {
					bad = h | 1;
					break;
				}
				tail += PMCRING_RING_SPACE(PMCRING_HEADER_LEN(h));
			}
			/*
			 * Another thread may have moved data_tail meanwhile
			 * (the producer may then reuse what we read): only a
			 * walk under a still tail proves a corrupt ring.
			 */
			__atomic_thread_fence(__ATOMIC_SEQ_CST);
			if (bad && __atomic_load_n(&ctl->data_tail,
						   __ATOMIC_ACQUIRE) == tail0)
				violation("ring of cpu %u: bad header 0x%08x at %" PRIu64,
					  ctl->cpu, bad, tail);
		}
	}
	pthread_mutex_unlock(&maps_lock);
}

/* ---- the rest ---- */

static void op_poll(uint64_t *s)
{
	struct pollfd pfd[NSLOTS];
	int i, n = 0;

	for (i = 0; i < NSLOTS; i++) {
		pfd[n].fd = slot_get(i);
		pfd[n].events = rnd_below(s, 2) ? POLLIN : (short)rnd(s);
		n++;
	}
	poll(pfd, n, rnd_below(s, 3));
	for (i = 0; i < NSLOTS; i++)
		slot_put(i);
}

static void op_read_write(uint64_t *s, int fd)
{
	char buf[64];

	if (rnd_below(s, 2)) {
		if (read(fd, arg_ptr(s, buf, sizeof(buf)), rnd_below(s, 64)) >= 0)
			violation("read() on /dev/pmcring succeeded");
	} else {
		if (write(fd, arg_ptr(s, buf, sizeof(buf)), rnd_below(s, 64)) > 0)
			violation("write() on /dev/pmcring succeeded");
	}
	if (one_in(s, 4))
		lseek(fd, rnd(s), SEEK_SET);	/* nonseekable: ESPIPE */
}

/*
 * vmsplice mapped pages into a pipe: the pipe holds page references that
 * outlive the session (and the module, if it gets unloaded later).
 */
static void op_vmsplice(uint64_t *s)
{
	struct map *m = map_pick(s);
	struct iovec iov;
	char buf[4096];
	int p = rnd_below(s, NPIPES);

	if (!m)
		return;
	pthread_mutex_lock(&pipes_lock);
	if (m->prot & PROT_READ) {
		iov.iov_base = (uint8_t *)m->addr + page * rnd_below(s, m->len / page);
		iov.iov_len = page;
		vmsplice(pipes[p][1], &iov, 1, SPLICE_F_NONBLOCK |
			 (one_in(s, 2) ? SPLICE_F_GIFT : 0));
	}
	pthread_mutex_unlock(&maps_lock);
	/* Drain now and then so the pipe never fills for good. */
	if (one_in(s, 2))
		while (read(pipes[p][0], buf, sizeof(buf)) > 0)
			;
	pthread_mutex_unlock(&pipes_lock);
}

/* The child must not see any of our mappings (VM_DONTCOPY). */
static void op_fork(uint64_t *s)
{
	int status, fd = -1, i = rnd_below(s, NSLOTS);
	pid_t pid;

	fd = slot_get(i);
	pthread_mutex_lock(&maps_lock);
	pid = fork();
	if (pid == 0) {
		char buf[8192];
		ssize_t n;
		int mfd;

		/* Async-signal-safe calls only: we forked a threaded process. */
		if (fd >= 0) {
			ioctl(fd, PMCRING_IOC_ENABLE);
			ioctl(fd, PMCRING_IOC_WRITELOG, &i);
			ioctl(fd, PMCRING_IOC_FLUSH);
		}
		mfd = open("/proc/self/maps", O_RDONLY);
		if (mfd < 0)
			_exit(0);
		while ((n = read(mfd, buf, sizeof(buf) - 1)) > 0) {
			buf[n] = 0;
			if (strstr(buf, PMCRING_DEV_PATH))
				_exit(3);
		}
		_exit(0);
	}
	pthread_mutex_unlock(&maps_lock);
	slot_put(i);
	if (pid < 0)
		return;
	if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	    WEXITSTATUS(status) == 3)
		violation("fork: the child inherited a pmcring mapping");
}

static void op_signal(uint64_t *s)
{
	pthread_kill(threads[rnd_below(s, nr_threads)], SIGUSR1);
}

static void on_sigusr1(int sig)
{
	(void)sig;
}

/*
 * A crash of the fuzzer itself: name the operation and the address, with
 * the mapping table entry that covers it, then die of the same signal.
 */
static void on_crash(int sig, siginfo_t *si, void *uc)
{
	char buf[256];
	unsigned int i;
	int n;

	(void)uc;
	n = snprintf(buf, sizeof(buf), "# hard_fuzz_ioctl: signal %d at %p during %s\n",
		     sig, si->si_addr, cur_op < NR_OPS ? op_names[cur_op] : "?");
	(void)!write(2, buf, n);
	for (i = 0; i < NMAPS; i++) {
		uint8_t *a = maps[i].addr;

		if (a && (uint8_t *)si->si_addr >= a &&
		    (uint8_t *)si->si_addr < a + maps[i].len) {
			n = snprintf(buf, sizeof(buf), "#   in map %u: %p +%zu prot %d ctl %d full %d\n",
				     i, a, maps[i].len, maps[i].prot,
				     maps[i].ctl, maps[i].full);
			(void)!write(2, buf, n);
		}
	}
	signal(sig, SIG_DFL);
	raise(sig);
}

static void one_op(uint64_t *s)
{
	unsigned int op = rnd_below(s, 100), i = rnd_below(s, NSLOTS);
	unsigned int which;
	int fd, tmp;

	/* Weights: ioctls and mappings dominate, heavy ops are rare. */
	if (op < 4) which = 0;			/* open */
	else if (op < 6) which = 1;		/* close */
	else if (op < 7) which = 2;		/* dup_close */
	else if (op < 10) which = 3;		/* get_info */
	else if (op < 17) which = 4;		/* configure */
	else if (op < 22) which = 5;		/* enable */
	else if (op < 25) which = 6;		/* disable */
	else if (op < 31) which = 7;		/* writelog */
	else if (op < 33) which = 8;		/* generate */
	else if (op < 36) which = 9;		/* clock */
	else if (op < 38) which = 10;		/* add_counter */
	else if (op < 40) which = 11;		/* flush */
	else if (op < 46) which = 12;		/* bad_ioctl */
	else if (op < 58) which = 13;		/* mmap */
	else if (op < 64) which = 14;		/* munmap */
	else if (op < 66) which = 15;		/* mremap */
	else if (op < 69) which = 16;		/* mprotect */
	else if (op < 71) which = 17;		/* madvise */
	else if (op < 78) which = 18;		/* touch */
	else if (op < 85) which = 19;		/* data_tail */
	else if (op < 89) which = 20;		/* poll */
	else if (op < 91) which = 21;		/* read_write */
	else if (op < 93) which = 22;		/* vmsplice */
	else if (op < 94) which = one_in(s, 20) ? 23 : 25; /* fork, rare */
	else if (op < 95) which = 24;		/* signal */
	else which = 25;			/* drain */

	atomic_fetch_add(&op_count[which], 1);
	cur_op = which;
	switch (which) {
	case 0: op_open(s); return;
	case 1: op_close(s); return;
	case 13: case 2: case 3: case 4: case 5: case 6: case 7: case 8:
	case 9: case 10: case 11: case 12: case 21:
		break;
	case 14: op_munmap(s); return;
	case 15: op_mremap(s); return;
	case 16: op_mprotect(s); return;
	case 17: op_madvise(s); return;
	case 18: op_touch(s); return;
	case 19: op_data_tail(s); return;
	case 20: op_poll(s); return;
	case 22: op_vmsplice(s); return;
	case 23: op_fork(s); return;
	case 24: op_signal(s); return;
	default: op_drain(s); return;
	}

	fd = slot_get(i);
	if (fd < 0) {
		slot_put(i);
		return;
	}
	/* Most of the interesting paths need a configured session. */
	if ((which == 8 || which == 10 || which == 13) && !slots[i].region &&
	    one_in(s, 2)) {
		struct pmcring_config c = { .data_pages = 2u << rnd_below(s, 4) };

		if (!ioctl(fd, PMCRING_IOC_CONFIGURE, &c))
			slots[i].region = c.region_size;
	}
	switch (which) {
	case 2:
		tmp = dup(fd);
		if (tmp >= 0) {
			ioctl(tmp, PMCRING_IOC_ENABLE);
			close(tmp);
		}
		break;
	case 3: op_get_info(s, fd); break;
	case 4: op_configure(s, i, fd); break;
	case 5: do_ioctl(fd, PMCRING_IOC_ENABLE, NULL, "ENABLE"); break;
	case 6: do_ioctl(fd, PMCRING_IOC_DISABLE, NULL, "DISABLE"); break;
	case 7: op_writelog(s, fd); break;
	case 8: op_generate(s, fd); break;
	case 9: op_clock(s, fd); break;
	case 10: op_add_counter(s, fd); break;
	case 11: do_ioctl(fd, PMCRING_IOC_FLUSH, NULL, "FLUSH"); break;
	case 12: op_bad_ioctl(s, fd); break;
	case 13: op_mmap(s, i, fd); break;
	case 21: op_read_write(s, fd); break;
	}
	slot_put(i);
}

struct worker {
	uint64_t	seed;
	uint64_t	ops;
};

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	uint64_t s = w->seed | 1;

	pthread_barrier_wait(&start_bar);
	while (!atomic_load(&stop_all)) {
		one_op(&s);
		w->ops++;
		if (atomic_fetch_add(&ops_done, 1) + 1 >= ops_target)
			atomic_store(&stop_all, 1);
		if (!(w->ops & 255) && pmcring_now_ns() > deadline_ns)
			atomic_store(&stop_all, 1);
	}
	pthread_barrier_wait(&end_bar);
	return NULL;
}

static uint64_t env_u64(const char *name, uint64_t def)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 0) : def;
}

static void cleanup_all(void)
{
	char buf[4096];
	unsigned int i;

	for (i = 0; i < NMAPS; i++)
		if (maps[i].addr) {
			munmap(maps[i].addr, maps[i].len);
			maps[i].addr = NULL;
		}
	for (i = 0; i < NSLOTS; i++)
		if (slots[i].fd >= 0) {
			close(slots[i].fd);
			slots[i].fd = -1;
		}
	/* The pipes still hold spliced ring pages: read them after close. */
	for (i = 0; i < NPIPES; i++) {
		while (read(pipes[i][0], buf, sizeof(buf)) > 0)
			;
		close(pipes[i][0]);
		close(pipes[i][1]);
	}
}

PMCRING_FIXTURE_EMPTY(hard)

/*
 * 60k operations take ~25 s of TCG (make check; make fuzz runs 1.2M in
 * selftests/lib-hard/fuzz_vm.sh); debug kernels hit the time cap.
 */
TEST_F_TIMEOUT(hard, fuzz, 175)
{
	struct worker w[MAX_THREADS];
	struct pmcring_info info;
	struct sigaction sa;
	uint64_t seed, start, secs;
	unsigned int i;
	long ref;
	int fd;

	PMCRING_REQUIRE_DEV();
	page = sysconf(_SC_PAGESIZE);
	fd = open(PMCRING_DEV_PATH, O_RDWR);
	ASSERT_LE(0, fd);
	ASSERT_EQ(0, ioctl(fd, PMCRING_IOC_GET_INFO, &info));
	close(fd);
	nr_cpus = info.nr_cpus;
	nr_online = sysconf(_SC_NPROCESSORS_ONLN);
	if (nr_online > 63)
		nr_online = 63;

	ops_target = env_u64("HARD_FUZZ_OPS", 60000);
	if (getenv("HARD_FUZZ_ARGV_OPS"))
		ops_target = env_u64("HARD_FUZZ_ARGV_OPS", ops_target);
	nr_threads = env_u64("HARD_FUZZ_THREADS", 4);
	if (nr_threads < 1 || nr_threads > MAX_THREADS)
		nr_threads = 4;
	secs = env_u64("HARD_FUZZ_SECONDS", 140);
	seed = env_u64("HARD_FUZZ_SEED", pmcring_now_ns());
	TH_LOG("seed %" PRIu64 " (HARD_FUZZ_SEED), %" PRIu64 " ops, %u threads, cap %" PRIu64 " s",
	       seed, ops_target, nr_threads, secs);

	bad_ptr = mmap(NULL, page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	edge_ptr = mmap(NULL, 2 * page, PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ro_ptr = mmap(NULL, page, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, bad_ptr);
	ASSERT_NE(MAP_FAILED, edge_ptr);
	ASSERT_NE(MAP_FAILED, ro_ptr);
	ASSERT_EQ(0, mprotect(edge_ptr + page, page, PROT_NONE));

	for (i = 0; i < NSLOTS; i++) {
		pthread_rwlock_init(&slots[i].lock, NULL);
		slots[i].fd = -1;
	}
	for (i = 0; i < NPIPES; i++) {
		ASSERT_EQ(0, pipe2(pipes[i], O_NONBLOCK | O_CLOEXEC));
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigusr1;	/* no SA_RESTART: GENERATE gets EINTR */
	sigaction(SIGUSR1, &sa, NULL);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_crash;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	sigaction(SIGBUS, &sa, NULL);

	ASSERT_EQ(0, pthread_barrier_init(&start_bar, NULL, nr_threads));
	ASSERT_EQ(0, pthread_barrier_init(&end_bar, NULL, nr_threads));
	start = pmcring_now_ns();
	deadline_ns = start + secs * 1000000000ull;
	for (i = 0; i < nr_threads; i++) {
		w[i].seed = seed * (i + 1) + 0x9e3779b97f4a7c15ull * i;
		w[i].ops = 0;
		ASSERT_EQ(0, pthread_create(&threads[i], NULL, worker_main,
					    &w[i]));
	}
	for (i = 0; i < nr_threads; i++)
		pthread_join(threads[i], NULL);
	cleanup_all();

	TH_LOG("%llu operations in %.1f s (%llu GENERATEd records requested)",
	       (unsigned long long)atomic_load(&ops_done),
	       (pmcring_now_ns() - start) / 1e9,
	       (unsigned long long)atomic_load(&gen_records));
	for (i = 0; i < NR_OPS; i++)
		TH_LOG("  %-12s %8llu  %8llu succeeded", op_names[i],
		       (unsigned long long)atomic_load(&op_count[i]),
		       (unsigned long long)atomic_load(&ok_count[i]));
	printf("# hard_fuzz_ioctl: operations=%llu seconds=%.1f violations=%llu\n",
	       (unsigned long long)atomic_load(&ops_done),
	       (pmcring_now_ns() - start) / 1e9,
	       (unsigned long long)atomic_load(&violations));

	/* Every session and mapping is gone: nothing may pin the module. */
	for (i = 0; i < 50 && (ref = pmcring_module_refcnt()) > 0; i++)
		usleep(100000);
	ref = pmcring_module_refcnt();
	if (ref >= 0) {
		EXPECT_EQ(0, ref) TH_LOG("pmcring refcnt %ld after cleanup", ref);
	}
	EXPECT_EQ(0, atomic_load(&violations)) {
		TH_LOG("first violation: %s", first_violation);
	}
	/* Slow (debug) kernels stop at the time cap: say so, it is no error. */
	if (atomic_load(&ops_done) < ops_target)
		printf("# hard_fuzz_ioctl: time cap of %" PRIu64 " s hit after %llu of %" PRIu64 " operations\n",
		       secs, (unsigned long long)atomic_load(&ops_done),
		       ops_target);
}

int main(int argc, char **argv)
{
	/* argv[1]: operation count, for "make fuzz" and manual runs. */
	if (argc > 1 && argv[1][0] >= '0' && argv[1][0] <= '9') {
		setenv("HARD_FUZZ_ARGV_OPS", argv[1], 1);
		argc = 1;
	}
	return test_harness_run(argc, argv);
}
