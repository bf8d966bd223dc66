// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a full ring drops records and counts them exactly
 * (generated = consumed + lost, per CPU, with process and hard-IRQ
 * writers), a DROPNOTIFY precedes the first record once space returns
 * and raises the producer page's reported to lost, and a corrupt data_tail written by user space (beyond the head, or more
 * than a ring behind) only makes records drop: it never corrupts the ring.
 */
#include "ring_common.h"

static void fill_and_count(struct __test_metadata *_metadata, uint32_t flags,
			   uint32_t size, uint64_t count)
{
	int online = rt_online_cpus(), cpu;
	uint64_t streams = (flags & PMCRING_GEN_F_TASK ? 1 : 0) +
			   (flags & PMCRING_GEN_F_HARDIRQ ? 1 : 0);
	struct rt_sess s;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 2, 0, 1));
	ASSERT_EQ(0, rt_generate(s.fd, count, size, flags, NULL, 0, 0));

	for (cpu = 0; cpu < online; cpu++) {
		struct rt_ring *r = &s.rings[cpu];
		struct rt_stats st = { .size = size, .allow_gaps = 1 };
		uint64_t consumed, lost = rt_prod(&r->prod->lost);
		long n;

		ASSERT_LE(0, rt_drain(r, &st)) TH_LOG("%s", st.err);
		consumed = st.gen[0] + st.gen[1] + st.gen[2];
		EXPECT_EQ(count * streams, consumed + lost)
			TH_LOG("cpu %d: consumed %llu lost %llu", cpu,
			       (unsigned long long)consumed,
			       (unsigned long long)lost);
		EXPECT_LT(0, lost);
		/* The ring filled up to the last record that fit. */
		EXPECT_GT(size, r->size - st.bytes);
		EXPECT_EQ(0, st.dropnotify);
		/* ... and none of the drops is announced yet */
		EXPECT_EQ(0, rt_prod(&r->prod->reported));
		EXPECT_EQ(st.records, rt_prod(&r->prod->records));
		if (streams == 1)
			EXPECT_EQ(st.records, r->size / size);

		/* Space again: DROPNOTIFY first, then the new records. */
		memset(&st, 0, sizeof(st));
		st.size = size;
		n = (r->size - PMCRING_SIZE_DROPNOTIFY) / size;
		if (n > 10)
			n = 10;
		ASSERT_EQ(0, rt_generate_on(s.fd, cpu, n, size,
					    PMCRING_GEN_F_TASK));
		ASSERT_EQ(n + 1, rt_drain(r, &st)) TH_LOG("%s", st.err);
		EXPECT_EQ(1, st.dropnotify);
		EXPECT_EQ(PMCRING_TYPE_DROPNOTIFY,
			  PMCRING_HEADER_TYPE(*(const uint32_t *)(r->data +
				((r->tail - n * size - 16) & (r->size - 1)))));
		EXPECT_EQ(n, st.gen[PMCRING_GEN_CTX_TASK]);
		EXPECT_EQ(0, st.missing);
		EXPECT_EQ(lost, rt_prod(&r->prod->lost));
		/* that DROPNOTIFY announced every drop */
		EXPECT_EQ(lost, rt_prod(&r->prod->reported));
		EXPECT_EQ(rt_head(r), rt_prod(&r->prod->bytes));
	}
	rt_close(&s);
}

TEST(full_ring_task)
{
	fill_and_count(_metadata, PMCRING_GEN_F_TASK, 64, 1000);
}

TEST(full_ring_hardirq)
{
	fill_and_count(_metadata, PMCRING_GEN_F_HARDIRQ, 40, 1000);
}

TEST(full_ring_both)
{
	fill_and_count(_metadata, PMCRING_GEN_F_ALL, 4128, 50);
}

TEST(corrupt_tail)
{
	struct rt_stats st = { .size = 64 };
	struct rt_sess s;
	struct rt_ring *r, *r1;
	uint64_t head, lost;

	PMCRING_REQUIRE_DEV();
	ASSERT_EQ(0, rt_open(&s, 4, 0, 1));
	r = &s.rings[0];
	r1 = &s.rings[s.nr_cpus > 1 ? 1 : 0];
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 5, 64, PMCRING_GEN_F_TASK));
	ASSERT_EQ(5, rt_drain(r, &st)) TH_LOG("%s", st.err);
	head = rt_head(r);
	ASSERT_EQ(5 * 64, head);

	/*
	 * Tail beyond head, a ring and more behind, one byte ahead.  (Any
	 * value within a ring behind head, ~0 included since positions are
	 * modular, is a valid tail.)
	 */
	r->ctl->data_tail = head + 4096;
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 7, 64, PMCRING_GEN_F_TASK));
	r->ctl->data_tail = head - r->size - 8;
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 7, 64, PMCRING_GEN_F_HARDIRQ));
	r->ctl->data_tail = head + 1;
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 7, 64, PMCRING_GEN_F_ALL));
	EXPECT_EQ(head, rt_head(r));
	lost = rt_prod(&r->prod->lost);
	EXPECT_EQ(28, lost);
	EXPECT_EQ(0, rt_prod(&r->prod->reported));

	/* Honest tail again: the ring resumes, nothing was overwritten. */
	r->ctl->data_tail = head;
	memset(&st, 0, sizeof(st));
	st.size = 64;
	ASSERT_EQ(0, rt_generate_on(s.fd, 0, 3, 64, PMCRING_GEN_F_TASK));
	ASSERT_EQ(1 + 3, rt_drain(r, &st)) TH_LOG("%s", st.err);
	EXPECT_EQ(1, st.dropnotify);
	EXPECT_EQ(3, st.gen[PMCRING_GEN_CTX_TASK]);
	EXPECT_EQ(lost, rt_prod(&r->prod->lost));
	EXPECT_EQ(lost, rt_prod(&r->prod->reported));
	EXPECT_EQ(rt_head(r), rt_prod(&r->prod->bytes));
	if (r1 != r) {
		EXPECT_EQ(0, rt_head(r1));
		EXPECT_EQ(0, rt_prod(&r1->prod->lost));
	}
	rt_close(&s);
}

TEST_HARNESS_MAIN
