// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: a session's merge maps the ring of a CPU brought online
 * after the session started right after its clock read, also with a clock
 * of the caller's (pmcring_merge_opts.clock), so that ring bounds the
 * others: a record it holds from before T comes out before a younger
 * record of another CPU, not after it (RINGS AND CPU HOTPLUG in
 * <linux/pmcring.h>, step (F)).
 *
 * The device is test_fake_dev.h's ioctl(), answering for a 2-CPU session,
 * and this file's mmap(): mmap() of its regions maps the rings of a user
 * space producer (uprod) instead, the region of a CPU not online failing
 * with ENODEV as the module's does; bringing CPU 1 online raises nr_rings in
 * the producer pages, as the module does.  Runs in user/ (make check).
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <sys/mman.h>
#include "test_fake_dev.h"
#include "test_check.h"

#define NR_CPUS		2u
#define DATA_PAGES	4u

static struct pmcring_uprod *up;
static bool online[NR_CPUS];
static size_t page, region;

/* CONFIGURE: the uprod's region size */
static int fake_configure(struct pmcring_config *cfg)
{
	cfg->region_size = region;
	return 0;
}

/*
 * Map the uprod pages at @addr..+@len from @off of its consumer view of
 * @cpu, one of its mappings at a time (control page, producer page and
 * data, data again): mremap() of a shared mapping with old size 0 maps
 * the same pages again.
 */
static int map_view(unsigned int cpu, uint8_t *addr, size_t off, size_t len)
{
	size_t data = (region - 2 * page) / 2, cut, n;
	void *base;
	size_t size;

	if (pmcring_uprod_buffer(up, cpu, &base, &size) || size != region)
		return -EINVAL;
	while (len) {
		cut = off < page ? page : off < 2 * page + data ?
		      2 * page + data : region;
		n = cut - off < len ? cut - off : len;
		if (mremap((uint8_t *)base + off, 0, n,
			   MREMAP_MAYMOVE | MREMAP_FIXED, addr) == MAP_FAILED)
			return -errno;
		addr += n;
		off += n;
		len -= n;
	}
	return 0;
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	unsigned int cpu;
	int err;

	if (fd < 0 || fd != fake_fd)
		return (void *)syscall(SYS_mmap, addr, len, prot, flags, fd,
				       off);
	/* pmcring_map_region(): MAP_FIXED into a reservation of its own */
	cpu = (unsigned int)((size_t)off / region);
	if (!(flags & MAP_FIXED) || cpu >= NR_CPUS ||
	    (size_t)off % region + len > region) {
		errno = EINVAL;
		return MAP_FAILED;
	}
	if (!online[cpu]) {
		errno = ENODEV;
		return MAP_FAILED;
	}
	err = map_view(cpu, addr, (size_t)off % region, len);
	if (err) {
		errno = -err;
		return MAP_FAILED;
	}
	return addr;
}

static uint64_t fixed_now;

static int fixed_clock(void *ctx, uint64_t *t)
{
	(void)ctx;
	*t = fixed_now;
	return 0;
}

/* Commit a GENERATED record with header timestamp @ts, seq @seq. */
static void put_at(unsigned int cpu, uint64_t ts, uint64_t seq)
{
	struct pmcring_rec_generated *g;

	g = pmcring_uprod_reserve(up, cpu, PMCRING_TYPE_GENERATED, 32);
	REQUIRE(g, "reserve on CPU %u: %m", cpu);
	g->h.pl_tsc = ts;
	g->pl_seq = seq;
	g->pl_cpu = cpu;
	pmcring_uprod_commit(up, cpu);
}

/*
 * CPU @cpu comes online: its ring is there, then nr_rings of every ring's
 * producer page is raised with a store-release (the module's
 * pmcring_ring_set_nr_rings()).  The producer pages are read-only in the
 * consumer view: a writable alias of each is made for this.
 */
static void bring_online(unsigned int cpu, uint64_t nr_rings)
{
	struct pmcring_prod_page *prod;
	unsigned int i;
	void *base;
	size_t size;

	online[cpu] = true;
	for (i = 0; i < NR_CPUS; i++) {
		REQUIRE(!pmcring_uprod_buffer(up, i, &base, &size), "buffer");
		prod = mremap((uint8_t *)base + page, 0, page, MREMAP_MAYMOVE);
		REQUIRE(prod != MAP_FAILED, "alias of the producer page: %m");
		REQUIRE(!mprotect(prod, page, PROT_READ | PROT_WRITE),
			"mprotect: %m");
		__atomic_store_n(&prod->nr_rings, nr_rings, __ATOMIC_RELEASE);
		munmap(prod, page);
	}
}

int main(void)
{
	struct pmcring_opts so = {
		.sz = sizeof(so), .dev_path = "/dev/null",
		.data_pages = DATA_PAGES,
	};
	struct pmcring_merge_opts mo = {
		.sz = sizeof(mo), .clock = fixed_clock,
		.flags = PMCRING_MERGE_F_AUTO_CONSUME,
	};
	struct pmcring_record r;
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	struct pmcring_merge *m;
	struct pmcring *s;
	uint64_t got[8], cpus[8];
	void *base;
	unsigned int n = 0, idle = 0, i;
	int ret;

	page = (size_t)sysconf(_SC_PAGESIZE);
	fake_info = (struct pmcring_info){
		.abi_version = PMCRING_ABI_VERSION,
		.compat_version = PMCRING_ABI_COMPAT_VERSION,
		.nr_cpus = NR_CPUS, .page_size = (uint32_t)page,
		.min_data_pages = DATA_PAGES, .max_data_pages = DATA_PAGES,
		.max_record = PMCRING_RECORD_MAX,
		.types_supported = ~0ull,
	};
	up = pmcring_uprod_new(NR_CPUS, DATA_PAGES);
	REQUIRE(up, "uprod: %m");
	REQUIRE(!pmcring_uprod_buffer(up, 0, &base, &region), "buffer");
	online[0] = true;
	bring_online(0, 1);
	s = pmcring_new(&so);
	REQUIRE(s, "session on the fake device: %m");
	REQUIRE(pmcring_cpu_buffer(s, 1, &base, &region) == -ENODEV,
		"CPU 1 should have no ring yet");
	m = pmcring_merge_new_session(s, &mo);
	REQUIRE(m, "merge: %m");

	/* nothing yet: a round of the merge sees CPU 1 absent */
	fixed_now = 100;
	REQUIRE(pmcring_merge_next(m, &r) == 0, "a record from nowhere");

	/*
	 * CPU 1 comes online and writes a record of 150; then CPU 0 one of
	 * 180, and the clock says 200.  CPU 1's record comes first.
	 */
	bring_online(1, 2);
	put_at(1, 150, 1);
	put_at(0, 180, 2);
	fixed_now = 200;
	while (n < 8 && idle < 4) {
		ret = pmcring_merge_next(m, &r);
		REQUIRE(ret >= 0, "merge_next: %d", ret);
		if (!ret) {
			idle++;
			continue;
		}
		got[n] = ((const struct pmcring_rec_header *)r.data)->pl_tsc;
		cpus[n++] = r.cpu;
	}
	CHECK(n == 2, "%u records handed out, want 2", n);
	for (i = 0; i < n; i++)
		fprintf(stderr, "# record %u: ts %llu cpu %llu\n", i,
			(unsigned long long)got[i], (unsigned long long)cpus[i]);
	CHECK(n == 2 && got[0] == 150 && cpus[0] == 1 && got[1] == 180 &&
	      cpus[1] == 0, "CPU 1's record of 150 should come before CPU "
	      "0's of 180");
	CHECK(!pmcring_cpu_stats(s, 0, &st) && st.backwards == 0,
	      "CPU 0: %llu backwards", (unsigned long long)st.backwards);
	pmcring_merge_free(m);
	pmcring_free(s);
	pmcring_uprod_free(up);
	if (!t_failed)
		printf("ok: a ring brought online bounds the merge after a "
		       "caller's clock read\n");
	return t_failed;
}
