// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a custom consumer on libpmcring's raw per-CPU mapping
 * (pmcring_cpu_buffer(), like libbpf's perf_buffer__buffer()): the control
 * page names its CPU and the layout, and a USERDATA record written with
 * pmcring_writelog() on each online CPU is found in that CPU's ring by the
 * library's iterator and by a hand-written reader following the ordering
 * contract (acquire data_head, full fence, release data_tail).
 *
 * NEEDS_LIBPMCRING
 */
#include <errno.h>
#include <sched.h>
#include <stdint.h>
#include <unistd.h>

#include "pmcring_test.h"
#include "libpmcring.h"

TEST(writelog_found_by_iterator_and_raw_reader)
{
	struct pmcring_opts opts = {
		.sz = sizeof(opts),
		.data_pages = 4,
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_USERDATA),
	};
	long page = sysconf(_SC_PAGESIZE);
	unsigned int cpu, ncpu, written = 0;
	cpu_set_t orig;
	struct pmcring *s;

	PMCRING_REQUIRE_DEV();
	s = pmcring_new(&opts);
	ASSERT_NE(NULL, s) TH_LOG("pmcring_new: %s", strerror(errno));
	ncpu = pmcring_nr_cpus(s);
	ASSERT_EQ(0, sched_getaffinity(0, sizeof(orig), &orig));
	for (cpu = 0; cpu < ncpu && cpu < CPU_SETSIZE; cpu++) {
		if (!CPU_ISSET(cpu, &orig) || pmcring_pin_cpu(cpu))
			continue;
		ASSERT_EQ(0, pmcring_writelog(s, 0x1000 + cpu));
		written++;
	}
	sched_setaffinity(0, sizeof(orig), &orig);
	ASSERT_LT(0, written);

	for (cpu = 0; cpu < ncpu && cpu < CPU_SETSIZE; cpu++) {
		struct pmcring_cpu_buf *b = pmcring_cpu_buf(s, cpu);
		const struct pmcring_rec_userdata *u;
		struct pmcring_mmap_page *ctl;
		struct pmcring_record r;
		uint64_t head, tail;
		const uint8_t *data;
		size_t size;
		void *base;

		ASSERT_EQ(0, pmcring_cpu_buffer(s, cpu, &base, &size));
		ctl = base;
		ASSERT_EQ(PMCRING_ABI_VERSION, ctl->version);
		ASSERT_EQ(cpu, ctl->cpu);
		ASSERT_EQ(size, ctl->region_size);
		ASSERT_EQ((uint64_t)(2 * page), ctl->data_offset);
		ASSERT_EQ((uint64_t)(4 * page), ctl->data_size);
		if (!CPU_ISSET(cpu, &orig))
			continue;

		/* the library's iterator */
		ASSERT_EQ(1, pmcring_cpu_buf_peek(b, &r));
		ASSERT_EQ(PMCRING_TYPE_USERDATA, r.type);
		ASSERT_EQ(cpu, r.cpu);
		u = r.data;
		ASSERT_EQ(0x1000 + cpu, u->pl_userdata);

		/* a hand-written consumer on the raw mapping */
		head = __atomic_load_n(&ctl->data_head, __ATOMIC_ACQUIRE);
		tail = ctl->data_tail;
		ASSERT_EQ(PMCRING_RING_SPACE(PMCRING_SIZE_USERDATA), head - tail);
		data = (const uint8_t *)base + ctl->data_offset;
		u = (const void *)(data + (tail & (ctl->data_size - 1)));
		ASSERT_EQ(PMCRING_HEADER(PMCRING_TYPE_USERDATA,
					 PMCRING_SIZE_USERDATA),
			  u->h.pl_header);
		ASSERT_EQ(0x1000 + cpu, u->pl_userdata);
		ASSERT_EQ(r.ts, u->h.pl_tsc);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		__atomic_store_n(&ctl->data_tail, head, __ATOMIC_RELEASE);
	}
	TH_LOG("USERDATA found on %u CPUs", written);
	pmcring_free(s);
}

TEST_HARNESS_MAIN
