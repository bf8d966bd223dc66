// SPDX-License-Identifier: GPL-2.0
/*
 * Description: wrap-around for every record size from 16 bytes to the
 * largest record in 8-byte steps on the smallest ring: each record reads
 * whole and correct through the double mapping of the data pages, even
 * when it crosses the end of the data area, and nothing is lost.
 */
#include "ring_common.h"

FIXTURE(wrap) {
};

FIXTURE_SETUP(wrap)
{
}

FIXTURE_TEARDOWN(wrap)
{
}

TEST_F_TIMEOUT(wrap, every_size, 600)
{
	uint64_t wrapped = 0, records = 0;
	struct rt_sess s;
	struct rt_ring *r;
	uint32_t size;
	int round;

	PMCRING_REQUIRE_DEV();
	/* The smallest ring the device takes. */
	{
		struct pmcring_info info;
		int fd = open(PMCRING_DEV_PATH, O_RDWR);

		ASSERT_LE(0, fd);
		ASSERT_EQ(0, rt_ioctl(fd, PMCRING_IOC_GET_INFO, &info));
		close(fd);
		ASSERT_EQ(0, rt_open(&s, info.min_data_pages, 0, 0));
	}
	ASSERT_EQ(0, rt_map(&s, 0));
	r = &s.rings[0];

	for (size = 16; size <= PMCRING_RECORD_MAX; size += 8) {
		uint64_t k = r->size / size - 1;
		/* Alternate process and hard-IRQ writers. */
		uint32_t flags = size % 16 ? PMCRING_GEN_F_HARDIRQ :
				 PMCRING_GEN_F_TASK;

		if (!k)
			k = 1;
		for (round = 0; round < 3; round++) {
			struct rt_stats st = { .size = size };

			ASSERT_EQ(0, rt_generate_on(s.fd, 0, k, size, flags));
			ASSERT_EQ((long)k, rt_drain(r, &st))
				TH_LOG("size %u: %s", size, st.err);
			ASSERT_EQ(k, st.gen[size < 32 ? 0 :
					    flags & PMCRING_GEN_F_TASK ?
					    PMCRING_GEN_CTX_TASK :
					    PMCRING_GEN_CTX_HARDIRQ])
				TH_LOG("size %u", size);
			wrapped += st.wrapped;
			records += st.records;
		}
		ASSERT_EQ(0, rt_prod(&r->prod->lost)) TH_LOG("size %u", size);
	}
	EXPECT_EQ(records, rt_prod(&r->prod->records));
	EXPECT_EQ(rt_head(r), rt_prod(&r->prod->bytes));
	EXPECT_LT(100, wrapped);
	rt_info("%llu records, %llu crossed the end of the ring\n",
		       (unsigned long long)records, (unsigned long long)wrapped);
	rt_close(&s);
}

TEST_HARNESS_MAIN
