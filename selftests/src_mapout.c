// SPDX-License-Identifier: GPL-2.0
/*
 * Description: MAP_OUT wherever an executable file mapping ends, so a
 * symbolizer never keeps a stale mapping: munmap (64-bit, and 32-bit
 * through int $0x80), mmap with MAP_FIXED over it, and mremap (MAP_OUT of
 * the old range, MAP_IN of the new one with the path).  A per-pid session
 * on the test itself maps its own executable file and checks the records of
 * each step by address.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "ring_common.h"

struct mrec {
	uint32_t	type;
	uint64_t	start, end;
	char		path[PMCRING_PATH_MAX];
};

#define MAX_RECS	64

/* MAP_IN/MAP_OUT of @pid from every ring, appended to @r (consumed). */
static unsigned int collect(struct rt_sess *s, pid_t pid, struct mrec *r,
			    unsigned int n)
{
	unsigned int cpu;

	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		struct rt_ring *g = &s->rings[cpu];
		uint64_t head = rt_head(g), pos = g->tail, mask = g->size - 1;

		while (pos != head) {
			const uint8_t *p = g->data + (pos & mask);
			const struct pmcring_rec_header *h = (const void *)p;
			uint32_t len = PMCRING_HEADER_LEN(h->pl_header);
			uint32_t type = PMCRING_HEADER_TYPE(h->pl_header);

			if (len < PMCRING_HEADER_SIZE)
				break;
			if (type == PMCRING_TYPE_MAP_IN && n < MAX_RECS) {
				const struct pmcring_rec_map_in *m = (const void *)p;

				if (m->pl_pid == (uint32_t)pid) {
					r[n].type = type;
					r[n].start = m->pl_start;
					r[n].end = 0;
					snprintf(r[n].path, sizeof(r[n].path),
						 "%.*s",
						 (int)(len - PMCRING_SIZE_MAP_IN_MIN),
						 m->pl_pathname);
					n++;
				}
			} else if (type == PMCRING_TYPE_MAP_OUT && n < MAX_RECS) {
				const struct pmcring_rec_map_out *m = (const void *)p;

				if (m->pl_pid == (uint32_t)pid) {
					r[n].type = type;
					r[n].start = m->pl_start;
					r[n].end = m->pl_end;
					r[n].path[0] = '\0';
					n++;
				}
			}
			pos += PMCRING_RING_SPACE(len);
		}
		rt_consume(g, pos);
	}
	return n;
}

/* Index of a record of @type at @start (and @end for MAP_OUT), or -1. */
static int find(const struct mrec *r, unsigned int n, uint32_t type,
		uint64_t start, uint64_t end)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		if (r[i].type == type && r[i].start == start &&
		    (type != PMCRING_TYPE_MAP_OUT || r[i].end == end))
			return i;
	return -1;
}

/* munmap through the i386 system call table (__ia32_sys_munmap). */
static long munmap32(uint32_t addr, uint32_t len)
{
	long ret = 91;	/* __NR_munmap of i386 */

	asm volatile("int $0x80"
		     : "+a"(ret)
		     : "b"(addr), "c"(len)
		     : "r8", "r9", "r10", "r11", "memory", "cc");
	return (int)ret;
}

TEST(map_out_everywhere)
{
	struct mrec *r = calloc(MAX_RECS, sizeof(*r));
	long page = sysconf(_SC_PAGESIZE), ret;
	size_t len = 2 * page;
	unsigned int n, cpu;
	uint8_t *a, *b, *c, *d;
	struct rt_sess s;
	pid_t pid = getpid();
	int fd, i;

	PMCRING_REQUIRE_DEV();
	ASSERT_NE(NULL, r);
	fd = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	ASSERT_LE(0, fd);

	memset(&s, 0, sizeof(s));
	s.fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, s.fd);
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_GET_INFO, &s.info));
	s.cfg.data_pages = 16;
	s.cfg.flags = PMCRING_CFG_F_PID | PMCRING_CFG_F_NO_SYNTH;
	s.cfg.pid = pid;
	s.cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_MAP_IN) |
		      PMCRING_TYPE_BIT(PMCRING_TYPE_MAP_OUT);
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_CONFIGURE, &s.cfg));
	s.nr_cpus = s.info.nr_cpus;
	s.rings = calloc(s.nr_cpus, sizeof(*s.rings));
	ASSERT_NE(NULL, s.rings);
	for (cpu = 0; cpu < s.nr_cpus; cpu++)
		ASSERT_EQ(0, rt_map(&s, cpu));
	ASSERT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_ENABLE, NULL));

	/* 1. MAP_IN of an executable file mapping, with its path. */
	a = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, a);
	n = collect(&s, pid, r, 0);
	i = find(r, n, PMCRING_TYPE_MAP_IN, (uintptr_t)a, 0);
	ASSERT_LE(0, i) TH_LOG("no MAP_IN at %p", a);
	EXPECT_NE(NULL, strstr(r[i].path, "src_mapout")) TH_LOG("path %s", r[i].path);

	/* 2. MAP_FIXED anonymous memory over it: MAP_OUT of the range. */
	ASSERT_EQ(a, mmap(a, len, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0));
	n = collect(&s, pid, r, 0);
	EXPECT_LE(0, find(r, n, PMCRING_TYPE_MAP_OUT, (uintptr_t)a,
			  (uintptr_t)a + len))
		TH_LOG("MAP_FIXED: no MAP_OUT of %p (%u records)", a, n);
	munmap(a, len);
	collect(&s, pid, r, 0);

	/* 3. mremap to a fixed address: MAP_OUT old, MAP_IN new. */
	b = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
	ASSERT_NE(MAP_FAILED, b);
	c = mmap(NULL, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, c);
	collect(&s, pid, r, 0);
	ASSERT_EQ(c, mremap(b, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, c));
	n = collect(&s, pid, r, 0);
	EXPECT_LE(0, find(r, n, PMCRING_TYPE_MAP_OUT, (uintptr_t)b,
			  (uintptr_t)b + len))
		TH_LOG("mremap: no MAP_OUT of the old %p", b);
	i = find(r, n, PMCRING_TYPE_MAP_IN, (uintptr_t)c, 0);
	EXPECT_LE(0, i) TH_LOG("mremap: no MAP_IN of the new %p", c);
	if (i >= 0)
		EXPECT_NE(NULL, strstr(r[i].path, "src_mapout"));

	/* 4. munmap. */
	ASSERT_EQ(0, munmap(c, len));
	n = collect(&s, pid, r, 0);
	EXPECT_LE(0, find(r, n, PMCRING_TYPE_MAP_OUT, (uintptr_t)c,
			  (uintptr_t)c + len))
		TH_LOG("munmap: no MAP_OUT of %p", c);

	/* 5. 32-bit munmap of a mapping below 4 GiB. */
	d = mmap((void *)0x30000000ul, len, PROT_READ | PROT_EXEC,
		 MAP_PRIVATE | MAP_FIXED_NOREPLACE, fd, 0);
	ASSERT_NE(MAP_FAILED, d);
	collect(&s, pid, r, 0);
	ret = munmap32((uintptr_t)d, len);
	if (ret == -ENOSYS) {
		rt_info("no 32-bit system calls: 32-bit munmap not checked\n");
		munmap(d, len);
	} else {
		EXPECT_EQ(0, ret);
		n = collect(&s, pid, r, 0);
		EXPECT_LE(0, find(r, n, PMCRING_TYPE_MAP_OUT, (uintptr_t)d,
				  (uintptr_t)d + len))
			TH_LOG("32-bit munmap: no MAP_OUT of %p", d);
	}
	EXPECT_EQ(0, rt_ioctl(s.fd, PMCRING_IOC_DISABLE, NULL));
	close(fd);
	rt_close(&s);
	free(r);
}

TEST_HARNESS_MAIN
