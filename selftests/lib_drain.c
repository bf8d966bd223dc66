// SPDX-License-Identifier: GPL-2.0
/*
 * Description: libpmcring drains real kernel rings of every CPU in exact
 * timestamp order while PMCRING_IOC_GENERATE writes records from process
 * context and from hard-IRQ (hrtimer) context on all online CPUs: merged
 * timestamps never decrease, every record's payload is intact, and each
 * (CPU, context) stream is seen in order, every record once, with dropped
 * records exactly accounted for by the producer's lost counter.  The
 * poll-style reader does the same with GENERATE running in another thread,
 * and ends its stream with -ENODATA after the disable, every record handed
 * out once and the consumer's counts equal to the kernel's.
 *
 * NEEDS_LIBPMCRING
 */
#include <errno.h>
#include <string.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

#include "pmcring_test.h"
#include "libpmcring.h"

struct gen_thread {
	struct pmcring		*s;
	struct pmcring_generate	req;
	int			ret;
	atomic_bool		done;
};

static void *gen_main(void *arg)
{
	struct gen_thread *g = arg;

	g->ret = pmcring_generate(g->s, &g->req);
	atomic_store(&g->done, true);
	return NULL;
}

/* Per CPU: next seq expected of the task and the hardirq stream. */
struct cpu_seen {
	uint64_t next[2];
	uint64_t seen;
};

static int payload_ok(const struct pmcring_record *r)
{
	const struct pmcring_rec_generated *g = r->data;
	const uint8_t *p = r->data;
	uint32_t i;

	for (i = 32; i < r->len; i++)
		if (p[i] != (uint8_t)(g->pl_seq + i))
			return 0;
	return 1;
}

static void drain(struct __test_metadata *_metadata, uint32_t data_pages,
		  uint64_t count, uint32_t size, uint32_t flags,
		  bool drops_allowed, bool one_cpu)
{
	uint64_t cpu0_mask = 1;
	struct pmcring_opts opts = {
		.sz = sizeof(opts),
		.data_pages = data_pages,
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
			 PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY),
	};
	struct pmcring_merge_opts mo = {
		.sz = sizeof(mo),
		.flags = PMCRING_MERGE_F_AUTO_CONSUME,
	};
	struct gen_thread g = { .ret = 0 };
	uint64_t last_ts = 0, total = 0, lost = 0, dropnotify = 0, early = 0;
	unsigned int ncpu, cpu, streams, active = 0;
	long online = sysconf(_SC_NPROCESSORS_ONLN);
	struct cpu_seen *seen;
	struct pmcring_merge *m;
	struct pmcring_record r;
	pthread_t th;
	struct pmcring_info info;
	int ret;

	PMCRING_REQUIRE_DEV();
	struct pmcring *s = pmcring_new(&opts);

	ASSERT_NE(NULL, s) TH_LOG("pmcring_new: %s", strerror(errno));
	pmcring_info(s, &info);
	if (!(info.types_supported & PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED))) {
		pmcring_free(s);
		SKIP(return, "the module cannot GENERATE");
	}
	ncpu = pmcring_nr_cpus(s);
	seen = calloc(ncpu, sizeof(*seen));
	ASSERT_NE(NULL, seen);
	m = pmcring_merge_new_session(s, &mo);
	ASSERT_NE(NULL, m) TH_LOG("merge_new_session: %s", strerror(errno));

	g.s = s;
	g.req = (struct pmcring_generate){ .count = count, .size = size,
					   .flags = flags };
	if (one_cpu) {
		/* CPU 0 only: every other ring stays idle and must not
		 * hold the merge back.
		 */
		g.req.cpus = (uintptr_t)&cpu0_mask;
		g.req.cpus_size = sizeof(cpu0_mask);
	}
	ASSERT_EQ(0, pthread_create(&th, NULL, gen_main, &g));

	for (;;) {
		const struct pmcring_rec_generated *rec;
		unsigned int ctx;

		ret = pmcring_merge_next(m, &r);
		ASSERT_LE(0, ret) TH_LOG("merge_next: %s", strerror(-ret));
		if (ret == 0) {
			struct pollfd pfd = { .fd = pmcring_fd(s),
					      .events = POLLIN };

			/* every record committed and handed out: done */
			if (atomic_load(&g.done) &&
			    (ret = pmcring_merge_next(m, &r)) == 0)
				break;
			if (ret == 0) {
				poll(&pfd, 1, (int)(pmcring_merge_max_delay_ns(m)
						    / 1000000));
				continue;
			}
			ASSERT_LE(0, ret);
		}
		ASSERT_LE(last_ts, r.ts) TH_LOG("out of order on cpu %u", r.cpu);
		last_ts = r.ts;
		if (r.type == PMCRING_TYPE_DROPNOTIFY) {
			dropnotify++;
			continue;
		}
		ASSERT_EQ(PMCRING_TYPE_GENERATED, r.type);
		ASSERT_GE(r.len, 32);
		rec = r.data;
		ASSERT_EQ(r.cpu, rec->pl_cpu);
		ASSERT_TRUE(rec->pl_ctx == PMCRING_GEN_CTX_TASK ||
			    rec->pl_ctx == PMCRING_GEN_CTX_HARDIRQ);
		ctx = rec->pl_ctx == PMCRING_GEN_CTX_HARDIRQ;
		if (drops_allowed) {
			ASSERT_LE(seen[r.cpu].next[ctx], rec->pl_seq)
				TH_LOG("cpu %u ctx %u: seq %llu went back",
				       r.cpu, ctx,
				       (unsigned long long)rec->pl_seq);
		} else {
			ASSERT_EQ(seen[r.cpu].next[ctx], rec->pl_seq)
				TH_LOG("cpu %u ctx %u: seq %llu", r.cpu, ctx,
				       (unsigned long long)rec->pl_seq);
		}
		seen[r.cpu].next[ctx] = rec->pl_seq + 1;
		ASSERT_TRUE(payload_ok(&r)) TH_LOG("payload of cpu %u seq %llu",
						   r.cpu,
						   (unsigned long long)rec->pl_seq);
		seen[r.cpu].seen++;
		total++;
		early += !atomic_load(&g.done);
	}
	pthread_join(th, NULL);
	ASSERT_EQ(0, g.ret) TH_LOG("GENERATE: %s", strerror(-g.ret));

	streams = !!(flags & PMCRING_GEN_F_TASK) +
		  !!(flags & PMCRING_GEN_F_HARDIRQ);
	for (cpu = 0; cpu < ncpu; cpu++) {
		struct pmcring_cpu_stats st = { .sz = sizeof(st) };

		pmcring_cpu_buf_stats(pmcring_cpu_buf(s, cpu), &st);
		lost += st.lost;
		if (!seen[cpu].seen && !st.lost)
			continue;
		active++;
		ASSERT_EQ(streams * count, seen[cpu].seen + st.lost)
			TH_LOG("cpu %u: %llu seen + %llu lost", cpu,
			       (unsigned long long)seen[cpu].seen,
			       (unsigned long long)st.lost);
	}
	ASSERT_EQ(one_cpu ? 1u : (unsigned int)online, active);
	if (!drops_allowed)
		ASSERT_EQ(0, lost);
	TH_LOG("%u CPUs, %llu records in order (%llu while generating), "
	       "%llu lost, %llu DROPNOTIFY", active, (unsigned long long)total,
	       (unsigned long long)early, (unsigned long long)lost,
	       (unsigned long long)dropnotify);
	pmcring_merge_free(m);
	pmcring_free(s);
	free(seen);
}

/* Rings large enough for everything: exact, nothing lost. */
TEST(task_and_hardirq_exact)
{
	drain(_metadata, 256, 4000, 64, PMCRING_GEN_F_TASK |
	      PMCRING_GEN_F_HARDIRQ, false, false);
}

/* Records on CPU 0 only: the idle CPUs' rings do not stall the merge. */
TEST(one_cpu_others_idle)
{
	drain(_metadata, 256, 4000, 64, PMCRING_GEN_F_TASK |
	      PMCRING_GEN_F_HARDIRQ, false, true);
}

/* Varying record layout: the largest records, hard IRQ only. */
TEST(hardirq_large_records)
{
	drain(_metadata, 256, 200, 4096, PMCRING_GEN_F_HARDIRQ, false, false);
}

/* Smallest rings: the consumer falls behind, drops are counted exactly. */
TEST(small_rings_with_drops)
{
	drain(_metadata, 4, 20000, 256, PMCRING_GEN_F_TASK |
	      PMCRING_GEN_F_HARDIRQ, true, false);
}

/* ---- the reader: callback, GENERATE beside it, end of stream ---- */

struct reader_seen {
	struct cpu_seen	*seen;
	unsigned int	ncpu, last_ring;
	uint64_t	last_ts, total, bad;
};

static int reader_cb(void *ctx, const struct pmcring_record *r)
{
	const struct pmcring_rec_generated *rec = r->data;
	struct reader_seen *rs = ctx;
	unsigned int c;

	if (r->ts < rs->last_ts ||
	    (r->ts == rs->last_ts && r->ring < rs->last_ring) ||
	    r->type != PMCRING_TYPE_GENERATED || r->cpu >= rs->ncpu ||
	    r->ring != r->cpu || rec->pl_cpu != r->cpu || !payload_ok(r))
		return -EBADMSG;
	rs->last_ts = r->ts;
	rs->last_ring = r->ring;
	c = rec->pl_ctx == PMCRING_GEN_CTX_HARDIRQ;
	if (rec->pl_seq != rs->seen[r->cpu].next[c])
		rs->bad++;
	rs->seen[r->cpu].next[c] = rec->pl_seq + 1;
	rs->seen[r->cpu].seen++;
	rs->total++;
	return 0;
}

TEST(reader_end_of_stream)
{
	struct pmcring_opts opts = {
		.sz = sizeof(opts),
		.data_pages = 256,
		.flags = PMCRING_CFG_F_PID,
		.pid = getpid(),
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED),
	};
	const uint64_t count = 3000;
	struct gen_thread g = { .ret = 0 };
	struct reader_seen rs = { 0 };
	struct pmcring_reader *rd;
	struct pmcring_info info;
	struct pmcring *s;
	unsigned int cpu, active = 0;
	pthread_t th;
	int n;

	PMCRING_REQUIRE_DEV();
	s = pmcring_new(&opts);
	ASSERT_NE(NULL, s) TH_LOG("pmcring_new: %s", strerror(errno));
	pmcring_info(s, &info);
	if (!(info.types_supported & PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED))) {
		pmcring_free(s);
		SKIP(return, "the module cannot GENERATE");
	}
	rs.ncpu = pmcring_nr_cpus(s);
	rs.seen = calloc(rs.ncpu, sizeof(*rs.seen));
	ASSERT_NE(NULL, rs.seen);
	rd = pmcring_reader_new(s, reader_cb, &rs, NULL);
	ASSERT_NE(NULL, rd) TH_LOG("reader_new: %s", strerror(errno));
	ASSERT_EQ(0, pmcring_enable(s));
	g.s = s;
	g.req = (struct pmcring_generate){ .count = count, .size = 64,
					   .flags = PMCRING_GEN_F_ALL };
	ASSERT_EQ(0, pthread_create(&th, NULL, gen_main, &g));
	while (!atomic_load(&g.done)) {
		n = pmcring_reader_poll(rd, 100);
		ASSERT_LE(0, n) TH_LOG("poll: %s", strerror(-n));
	}
	pthread_join(th, NULL);
	ASSERT_EQ(0, g.ret) TH_LOG("GENERATE: %s", strerror(-g.ret));
	ASSERT_EQ(0, pmcring_reader_eof(rd));
	ASSERT_EQ(0, pmcring_disable(s));
	while ((n = pmcring_reader_poll(rd, 1000)) > 0)
		;
	ASSERT_EQ(-ENODATA, n) TH_LOG("poll: %s", strerror(-n));
	ASSERT_EQ(1, pmcring_reader_eof(rd));
	ASSERT_EQ(0, rs.bad);
	for (cpu = 0; cpu < rs.ncpu; cpu++) {
		struct pmcring_cpu_stats st = { .sz = sizeof(st) };

		ASSERT_EQ(0, pmcring_cpu_stats(s, cpu, &st));
		EXPECT_EQ(st.prod_records, st.records) TH_LOG("cpu %u", cpu);
		EXPECT_EQ(st.prod_bytes, st.bytes) TH_LOG("cpu %u", cpu);
		EXPECT_EQ(0, st.lost);
		if (!rs.seen[cpu].seen)
			continue;
		active++;
		EXPECT_EQ(2 * count, rs.seen[cpu].seen) TH_LOG("cpu %u", cpu);
	}
	EXPECT_EQ((unsigned int)sysconf(_SC_NPROCESSORS_ONLN), active);
	TH_LOG("reader: %llu records from %u CPUs in order, then -ENODATA",
	       (unsigned long long)rs.total, active);
	pmcring_reader_free(rd);
	pmcring_free(s);
	free(rs.seen);
}

TEST_HARNESS_MAIN
