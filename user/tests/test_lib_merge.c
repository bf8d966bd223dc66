// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: the exact merge hands out records of all CPUs in
 * non-decreasing timestamp order, each exactly once, while writers on
 * several threads commit late (records held in flight with pending_ts set,
 * also while the thread writes to its other CPUs), go idle, wrap their
 * small rings and drop records (6 and 64 CPUs); an idle CPU does not stall
 * it, an in-flight record on a drained CPU does.  Over random inputs with
 * many equal timestamps, what comes out is exactly a reference sort's,
 * also from two rings (the merge's two-ring compare) that wrap, drop and
 * announce the drops, or stay empty for a while, and from 3, 5, 16 and 17
 * (the merge's tournament tree) merged a part at a time, rings running dry
 * and coming back while others hold records, or held back by a record in
 * flight while the others advance.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <errno.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "libpmcring_test.h"

/* Fail fast: writer threads may still run, so no cleanup. */
#define FAIL(...) do { \
	fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
	fflush(NULL); _exit(1); } while (0)

static uint64_t now(void)
{
	uint64_t t;

	pmcring_uprod_clock(NULL, &t);
	return t;
}

static struct pmcring_merge *merge_of(struct pmcring_uprod *p, uint32_t flags)
{
	unsigned int i, n = pmcring_uprod_nr_cpus(p);
	struct pmcring_cpu_buf *bufs[256];
	struct pmcring_merge_opts o = {
		.sz = sizeof(o),
		.clock = pmcring_uprod_clock,
		.clock_ctx = p,
		.flags = flags,
	};

	for (i = 0; i < n; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, i);
	return pmcring_merge_new(bufs, n, &o);
}

static int put_gen(struct pmcring_uprod *p, unsigned int cpu, uint64_t seq,
		   uint32_t len, bool commit)
{
	struct pmcring_rec_generated *g;

	g = pmcring_uprod_reserve(p, cpu, PMCRING_TYPE_GENERATED, len);
	if (!g)
		return -errno;
	g->pl_seq = seq;
	g->pl_cpu = cpu;
	if (commit)
		pmcring_uprod_commit(p, cpu);
	return 0;
}

/* Counts clock reads (the session clock is a system call: not per record). */
static unsigned int clock_reads;

static int counting_clock(void *ctx, uint64_t *t)
{
	clock_reads++;
	return pmcring_uprod_clock(ctx, t);
}

/*
 * One busy CPU and three idle ones: records come out in the round they are
 * seen, or at the latest in the next one (a call after a 0), and the clock
 * is read at most once per round, never per record.
 */
static int test_idle_cpus_do_not_stall(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(4, 1);
	struct pmcring_merge *m;
	struct pmcring_record r;
	unsigned int rounds = 0;
	int i, ret;

	if (!p)
		FAIL("uprod_new: %m");
	m = merge_of(p, PMCRING_MERGE_F_AUTO_CONSUME);
	if (!m)
		FAIL("merge_new: %m");
	if (pmcring_merge_next(m, &r) != 0)
		FAIL("empty rings gave a record");
	for (i = 0; i < 100; i++) {
		if (put_gen(p, 2, i, 32, true))
			FAIL("write %d", i);
		ret = pmcring_merge_next(m, &r);
		if (ret == 0) {		/* a new round: the clock again */
			rounds++;
			ret = pmcring_merge_next(m, &r);
		}
		if (ret != 1)
			FAIL("record %d not handed out (ret %d)", i, ret);
		if (r.cpu != 2 ||
		    ((const struct pmcring_rec_generated *)r.data)->pl_seq !=
		    (uint64_t)i)
			FAIL("wrong record %d: cpu %u", i, r.cpu);
	}
	printf("# idle CPUs: %u of 100 records came out in the next round\n",
	       rounds);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/*
 * A consumer that keeps up with a busy CPU while others are idle: each
 * record is later than the last clock read, so proving it is next needs the
 * clock.  At most one read per round (calls up to one that returns 0).
 */
static int test_clock_once_per_round(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(4, 4);
	struct pmcring_merge_opts o = {
		.sz = sizeof(o), .clock = counting_clock,
		.flags = PMCRING_MERGE_F_AUTO_CONSUME,
	};
	struct pmcring_cpu_buf *bufs[4];
	struct pmcring_merge *m;
	struct pmcring_record r;
	unsigned int i, round, out = 0, reads;
	int ret;

	if (!p)
		FAIL("uprod_new: %m");
	for (i = 0; i < 4; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, i);
	o.clock_ctx = p;
	m = pmcring_merge_new(bufs, 4, &o);
	if (!m)
		FAIL("merge_new: %m");
	for (round = 0; round < 50; round++) {
		reads = clock_reads;
		/* the producer adds a record after every one handed out */
		if (put_gen(p, 1, out, 32, true))
			FAIL("write");
		while ((ret = pmcring_merge_next(m, &r)) == 1) {
			out++;
			if (put_gen(p, 1, out, 32, true))
				FAIL("write");
		}
		if (ret < 0)
			FAIL("merge_next: %s", strerror(-ret));
		if (clock_reads - reads > 1)
			FAIL("round %u read the clock %u times", round,
			     clock_reads - reads);
		/* the record left behind is the oldest one held back */
		if (pmcring_merge_timeout_ns(m, now(), now()) >
		    pmcring_merge_max_delay_ns(m))
			FAIL("timeout beyond max_delay_ns");
		ret = pmcring_merge_next(m, &r);
		if (ret != 1)
			FAIL("held record not out in the next round (%d)", ret);
		out++;
		while (pmcring_merge_next(m, &r) == 1)
			out++;
	}
	if (out < 100)
		FAIL("only %u records out", out);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/*
 * pmcring_merge_timeout_ns(): 3/4 of max_delay_ns when on time; a
 * late caller gets shorter timeouts, never below max_delay_ns / 8; a record
 * held back counts from its own timestamp.
 */
static int test_timeout(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	struct pmcring_merge *m;
	struct pmcring_record r;
	uint64_t D, t, t0 = 1000000000000ull;
	int i;

	if (!p)
		FAIL("uprod_new: %m");
	m = merge_of(p, 0);
	if (!m)
		FAIL("merge_new: %m");
	D = pmcring_merge_max_delay_ns(m);
	t = pmcring_merge_timeout_ns(m, t0, t0);
	if (t != D * 3 / 4)
		FAIL("idle timeout %llu, not %llu", (unsigned long long)t,
		     (unsigned long long)D * 3 / 4);
	/* back 3 ms late after merging and writing */
	t0 += t + 3000000;
	t = pmcring_merge_timeout_ns(m, t0, t0);
	if (t != D * 3 / 4 - 3000000)
		FAIL("timeout after 3 ms late: %llu", (unsigned long long)t);
	/* on time from now on: the margin decays slowly */
	for (i = 0; i < 10; i++) {
		t0 += t;
		t = pmcring_merge_timeout_ns(m, t0, t0);
	}
	if (t <= D * 3 / 4 - 3000000 || t >= D * 3 / 4 - 2000000)
		FAIL("margin decayed to %llu",
		     (unsigned long long)(D * 3 / 4 - t));
	/* very late: the floor */
	t0 += t + 2 * D;
	t = pmcring_merge_timeout_ns(m, t0, t0);
	if (t != D / 8)
		FAIL("floor %llu", (unsigned long long)t);
	pmcring_merge_free(m);

	/* a record held back (in flight elsewhere) counts from its ts */
	m = merge_of(p, 0);
	if (!m || put_gen(p, 1, 0, 32, false) || put_gen(p, 0, 0, 32, true))
		FAIL("setup");
	if (pmcring_merge_next(m, &r) != 0)
		FAIL("record out while an earlier one is in flight");
	t0 = now() + D / 2;	/* the held record is D / 2 old */
	t = pmcring_merge_timeout_ns(m, t0, t0);
	if (t > D / 4 + D / 100 || t < D / 8)
		FAIL("held-back timeout %llu", (unsigned long long)t);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/*
 * CPU 1 reserves (pending_ts set) but does not commit; CPU 0 then commits
 * a later record.  The merge must hold CPU 0's record back until CPU 1's
 * earlier one is committed, then hand out CPU 1's first.
 */
static int test_in_flight_blocks(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	struct pmcring_merge *m;
	struct pmcring_record r;
	int ret;

	if (!p)
		FAIL("uprod_new: %m");
	m = merge_of(p, PMCRING_MERGE_F_AUTO_CONSUME);
	if (!m)
		FAIL("merge_new: %m");
	if (put_gen(p, 1, 100, 32, false))
		FAIL("reserve on cpu 1");
	if (put_gen(p, 0, 200, 32, true))
		FAIL("write on cpu 0");
	ret = pmcring_merge_next(m, &r);
	if (ret != 0)
		FAIL("record handed out while an earlier one is in flight "
		     "(ret %d cpu %u)", ret, r.cpu);
	pmcring_uprod_commit(p, 1);
	if (pmcring_merge_next(m, &r) != 1 || r.cpu != 1)
		FAIL("in-flight record of cpu 1 not first");
	if (pmcring_merge_next(m, &r) != 1 || r.cpu != 0)
		FAIL("record of cpu 0 not second");
	if (pmcring_merge_next(m, &r) != 0)
		FAIL("extra record");
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/* ---- property test: threads as CPUs ------------------------------------- */

#define MAX_CPUS	64

/*
 * A writer thread owns the CPUs cpu, cpu + nthreads, ...  It writes to a
 * random one of them at a time and leaves records in flight on some CPUs
 * while it writes to others, so in-flight records, idle CPUs and late
 * commits overlap in every combination.
 */
struct writer {
	struct pmcring_uprod	*p;
	unsigned int		first, stride, ncpu;
	unsigned int		seed;
	uint64_t		per_cpu;
	uint64_t		seq[MAX_CPUS];
	bool			held[MAX_CPUS];
	uint64_t		drops[MAX_CPUS];
};

static void tiny_delay(unsigned int *seed)
{
	unsigned int r = rand_r(seed) % 100;

	if (r < 60)
		return;
	if (r < 90) {
		sched_yield();
		return;
	}
	if (r < 99) {
		struct timespec d = { 0, 1000 * (rand_r(seed) % 50) };

		nanosleep(&d, NULL);
		return;
	}
	/* go idle for a while */
	usleep(1000 + rand_r(seed) % 3000);
}

static void *writer_main(void *arg)
{
	struct writer *w = arg;
	unsigned int owned = 0, c;
	uint64_t left;

	for (c = w->first; c < w->ncpu; c += w->stride)
		owned++;
	left = owned * w->per_cpu;
	while (left) {
		struct pmcring_rec_generated *g;
		uint32_t len;

		c = w->first + w->stride * (rand_r(&w->seed) % owned);
		if (w->held[c]) {
			pmcring_uprod_commit(w->p, c);
			w->held[c] = false;
			left--;
			tiny_delay(&w->seed);
			continue;
		}
		if (w->seq[c] == w->per_cpu)
			continue;
		len = 16 + 8 * (2 + rand_r(&w->seed) % 30);
		while (!(g = pmcring_uprod_reserve(w->p, c,
						   PMCRING_TYPE_GENERATED,
						   len))) {
			unsigned int h;

			w->drops[c]++;
			/* the consumer may wait for what we hold: let go */
			for (h = w->first; h < w->ncpu; h += w->stride) {
				if (!w->held[h])
					continue;
				pmcring_uprod_commit(w->p, h);
				w->held[h] = false;
				left--;
			}
			sched_yield();
		}
		g->pl_seq = w->seq[c]++;
		g->pl_cpu = c;
		/* now and then leave it in flight and go on elsewhere */
		if (rand_r(&w->seed) % 4 == 0) {
			w->held[c] = true;
			continue;
		}
		pmcring_uprod_commit(w->p, c);
		left--;
		tiny_delay(&w->seed);
	}
	return NULL;
}

static int test_property(unsigned int seed, bool auto_consume,
			 unsigned int ncpu, unsigned int nthreads,
			 uint64_t per_cpu)
{
	struct pmcring_uprod *p = pmcring_uprod_new(ncpu, 2);
	struct writer *w = calloc(nthreads, sizeof(*w));
	pthread_t th[MAX_CPUS];
	uint64_t next_seq[MAX_CPUS] = { 0 }, last_ts = 0, got = 0, drops = 0;
	uint64_t deadline = now() + 120ull * 1000000000ull, dropnotify = 0;
	unsigned int last_ring = 0;
	struct pmcring_merge *m;
	struct pmcring_record r;
	unsigned int i;
	int ret;

	if (!p || !w || ncpu > MAX_CPUS || nthreads > ncpu)
		FAIL("setup: %m");
	m = merge_of(p, auto_consume ? PMCRING_MERGE_F_AUTO_CONSUME : 0);
	if (!m)
		FAIL("merge_new: %m");
	for (i = 0; i < nthreads; i++) {
		w[i] = (struct writer){ .p = p, .first = i, .stride = nthreads,
					.ncpu = ncpu, .seed = seed + i,
					.per_cpu = per_cpu };
		if (pthread_create(&th[i], NULL, writer_main, &w[i]))
			FAIL("pthread_create");
	}
	while (got < (uint64_t)ncpu * per_cpu) {
		const struct pmcring_rec_generated *g;

		ret = pmcring_merge_next(m, &r);
		if (ret < 0)
			FAIL("merge_next: %s", strerror(-ret));
		if (!ret) {
			if (now() > deadline)
				FAIL("stalled after %llu records",
				     (unsigned long long)got);
			sched_yield();
			continue;
		}
		if (r.ts < last_ts || (r.ts == last_ts && r.ring < last_ring))
			FAIL("out of order: %llu/%u after %llu/%u",
			     (unsigned long long)r.ts, r.ring,
			     (unsigned long long)last_ts, last_ring);
		if (r.ring != r.cpu)
			FAIL("ring index %u of cpu %u", r.ring, r.cpu);
		last_ts = r.ts;
		last_ring = r.ring;
		if (r.type == PMCRING_TYPE_DROPNOTIFY) {
			dropnotify++;
		} else {
			g = r.data;
			if (r.type != PMCRING_TYPE_GENERATED ||
			    g->pl_cpu != r.cpu || r.cpu >= ncpu)
				FAIL("bad record type %u cpu %u", r.type, r.cpu);
			if (g->pl_seq != next_seq[r.cpu])
				FAIL("cpu %u: seq %llu, expected %llu", r.cpu,
				     (unsigned long long)g->pl_seq,
				     (unsigned long long)next_seq[r.cpu]);
			next_seq[r.cpu]++;
			got++;
		}
		if (!auto_consume)
			pmcring_cpu_buf_consume(pmcring_merge_buf(m, r.ring),
						r.end);
	}
	for (i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);
	/* after the writers ended, nothing more may come out */
	if ((ret = pmcring_merge_next(m, &r)) != 0 &&
	    !(ret == 1 && r.type == PMCRING_TYPE_DROPNOTIFY))
		FAIL("record after the end (ret %d)", ret);
	for (i = 0; i < ncpu; i++) {
		struct pmcring_cpu_stats st = { .sz = sizeof(st) };
		uint64_t d = w[i % nthreads].drops[i];

		pmcring_cpu_buf_stats(pmcring_uprod_cpu_buf(p, i), &st);
		if (st.lost != d)
			FAIL("cpu %u: lost %llu, writer saw %llu", i,
			     (unsigned long long)st.lost,
			     (unsigned long long)d);
		/*
		 * Every drop was retried until it fit, behind a DROPNOTIFY
		 * that announced it: none is left unannounced.
		 */
		if (st.reported != st.lost)
			FAIL("cpu %u: lost %llu, DROPNOTIFY announced %llu", i,
			     (unsigned long long)st.lost,
			     (unsigned long long)st.reported);
		drops += d;
	}
	printf("# property seed %u, %u CPUs, %u threads: %llu records, "
	       "%llu drops, %llu DROPNOTIFY, sorted and complete\n", seed,
	       ncpu, nthreads, (unsigned long long)got,
	       (unsigned long long)drops, (unsigned long long)dropnotify);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	free(w);
	return 0;
}

/* ---- records at chosen timestamps, a fixed clock -------------------------- */

static uint64_t fixed_now;

static int fixed_clock(void *ctx, uint64_t *t)
{
	(void)ctx;
	*t = fixed_now;
	return 0;
}

/* Commit a GENERATED record with header timestamp @ts, seq @seq. */
static void put_at(struct pmcring_uprod *p, unsigned int cpu, uint64_t ts,
		   uint64_t seq)
{
	struct pmcring_rec_generated *g;

	g = pmcring_uprod_reserve(p, cpu, PMCRING_TYPE_GENERATED, 32);
	if (!g)
		FAIL("reserve: %m");
	g->h.pl_tsc = ts;
	g->pl_seq = seq;
	g->pl_cpu = cpu;
	pmcring_uprod_commit(p, cpu);
}

static struct pmcring_merge *fixed_merge(struct pmcring_uprod *p,
					 unsigned int *order, unsigned int n)
{
	struct pmcring_cpu_buf *bufs[8];
	struct pmcring_merge_opts o = {
		.sz = sizeof(o),
		.clock = fixed_clock,
		.flags = PMCRING_MERGE_F_AUTO_CONSUME,
	};
	unsigned int i;

	for (i = 0; i < n; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, order[i]);
	return pmcring_merge_new(bufs, n, &o);
}

/* Next record, giving the merge a second round if the first says 0. */
static int next2(struct pmcring_merge *m, struct pmcring_record *r)
{
	int ret = pmcring_merge_next(m, r);

	return ret ? ret : pmcring_merge_next(m, r);
}

/*
 * Equal timestamps come out by ring index, also when the lower ring had
 * run dry at that very timestamp and commits another record of it (the
 * drained ring's bound equals the record's ts: it must be looked at).  The
 * index is the position in the merge's array, not the CPU.
 */
static int test_ties(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(3, 1);
	unsigned int order[3] = { 2, 0, 1 };	/* ring i = cpu order[i] */
	static const struct { unsigned int ring; uint64_t seq; } want[] = {
		{ 0, 0 }, { 0, 1 }, { 1, 0 }, { 2, 0 }, { 0, 2 }, { 1, 1 },
	};
	struct pmcring_merge *m;
	struct pmcring_record r;
	unsigned int i;

	fixed_now = 1000;
	m = fixed_merge(p, order, 3);
	if (!p || !m)
		FAIL("setup: %m");
	put_at(p, 1, 100, 0);		/* ring 2 */
	put_at(p, 0, 100, 0);		/* ring 1 */
	put_at(p, 2, 100, 0);		/* ring 0 */
	/* ring 0 hands out its 100 and runs dry with bound 100 */
	if (next2(m, &r) != 1 || r.ring != 0)
		FAIL("first: ring %u", r.ring);
	put_at(p, 2, 100, 1);		/* ring 0 again, the same ts */
	put_at(p, 2, 200, 2);
	put_at(p, 0, 200, 1);
	for (i = 1; i < 6; i++) {
		const struct pmcring_rec_generated *g;

		if (next2(m, &r) != 1)
			FAIL("record %u missing", i);
		g = r.data;
		if (r.ring != want[i].ring || g->pl_seq != want[i].seq ||
		    r.cpu != order[r.ring])
			FAIL("record %u: ring %u seq %llu, want ring %u seq %llu",
			     i, r.ring, (unsigned long long)g->pl_seq,
			     want[i].ring, (unsigned long long)want[i].seq);
	}
	if (pmcring_merge_next(m, &r) != 0)
		FAIL("extra record");
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/*
 * A timestamp that goes backwards in one ring is clamped to that ring's
 * previous one and counted; the merge goes on (it used to end with a
 * sticky -EBADMSG) and stays in order.
 */
static int test_backwards(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	unsigned int order[2] = { 0, 1 }, i;
	static const uint64_t want_ts[] = { 100, 250, 300, 300, 400 };
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	struct pmcring_merge *m;
	struct pmcring_record r;

	fixed_now = 1000;
	m = fixed_merge(p, order, 2);
	if (!p || !m)
		FAIL("setup: %m");
	put_at(p, 0, 100, 0);
	put_at(p, 0, 300, 1);
	put_at(p, 0, 200, 2);		/* backwards: read as 300 */
	put_at(p, 1, 250, 0);
	put_at(p, 1, 400, 1);
	for (i = 0; i < 5; i++) {
		int ret = next2(m, &r);

		if (ret != 1 || r.ts != want_ts[i])
			FAIL("record %u: ret %d ts %llu", i, ret,
			     (unsigned long long)r.ts);
	}
	if (pmcring_merge_next(m, &r) != 0)
		FAIL("extra record");
	put_at(p, 0, 500, 3);		/* and the ring goes on */
	if (next2(m, &r) != 1 || r.ts != 500)
		FAIL("after the clamp");
	pmcring_cpu_buf_stats(pmcring_uprod_cpu_buf(p, 0), &st);
	if (st.backwards != 1 || st.records != 4)
		FAIL("backwards %llu records %llu",
		     (unsigned long long)st.backwards,
		     (unsigned long long)st.records);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/* ---- staging -------------------------------------------------------------- */

/* put_at() that reports a full ring (-ENOSPC) instead of failing. */
static int try_put_at(struct pmcring_uprod *p, unsigned int cpu, uint64_t ts,
		      uint64_t seq)
{
	struct pmcring_rec_generated *g;

	g = pmcring_uprod_reserve(p, cpu, PMCRING_TYPE_GENERATED, 32);
	if (!g)
		return -errno;
	g->h.pl_tsc = ts;
	g->pl_seq = seq;
	g->pl_cpu = cpu;
	pmcring_uprod_commit(p, cpu);
	return 0;
}

/*
 * Ring 0 bursts (12 ring sizes) while ring 1's bound stays behind (the
 * clock does not move): the merge can hand nothing out.  With staging the
 * burst goes to user memory, nothing is dropped and, once the bound moves,
 * every record comes out in order; without it the ring fills and drops.
 * A staging limit below the burst drops again, in order all the same.
 */
static uint64_t skew_run(uint32_t flags, uint64_t staging_bytes,
			 uint64_t *staged)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	unsigned int order[2] = { 0, 1 };
	struct pmcring_cpu_buf *bufs[2];
	struct pmcring_merge_opts o = {
		.sz = sizeof(o), .clock = fixed_clock,
		.flags = PMCRING_MERGE_F_AUTO_CONSUME | flags,
		.staging_bytes = staging_bytes,
	};
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	uint64_t k, drops = 0, next_seq = 0, last_ts = 0, n = 1000;
	struct pmcring_merge *m;
	struct pmcring_record r;
	int ret;

	if (!p)
		FAIL("setup: %m");
	bufs[0] = pmcring_uprod_cpu_buf(p, order[0]);
	bufs[1] = pmcring_uprod_cpu_buf(p, order[1]);
	m = pmcring_merge_new(bufs, 2, &o);
	if (!m)
		FAIL("merge: %m");
	fixed_now = 10;			/* ring 1's bound: 10 */
	for (k = 0; k < n; k++) {
		if (try_put_at(p, 0, 100 + k, k))
			drops++;
		if (k % 8 == 7 && (ret = next2(m, &r)) != 0)
			FAIL("record %d out while ring 1 is behind", ret);
	}
	fixed_now = 100000;
	while ((ret = next2(m, &r)) == 1) {
		const struct pmcring_rec_generated *g = r.data;

		if (r.ts < last_ts)
			FAIL("out of order");
		last_ts = r.ts;
		if (r.type == PMCRING_TYPE_DROPNOTIFY)
			continue;
		if (g->pl_seq < next_seq || g->h.pl_tsc != 100 + g->pl_seq)
			FAIL("seq %llu after %llu", (unsigned long long)g->pl_seq,
			     (unsigned long long)next_seq);
		next_seq = g->pl_seq + 1;
	}
	if (ret < 0)
		FAIL("merge: %s", strerror(-ret));
	if (!drops && next_seq != n)
		FAIL("%llu of %llu records", (unsigned long long)next_seq,
		     (unsigned long long)n);
	pmcring_cpu_buf_stats(bufs[0], &st);
	*staged = st.staged;
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return drops;
}

static int test_staging(void)
{
	uint64_t staged, drops;

	drops = skew_run(PMCRING_MERGE_F_NO_STAGING, 0, &staged);
	printf("# skew, no staging: %llu of 1000 records dropped\n",
	       (unsigned long long)drops);
	if (!drops || staged)
		FAIL("no staging: %llu drops, %llu staged",
		     (unsigned long long)drops, (unsigned long long)staged);
	drops = skew_run(0, 0, &staged);
	printf("# skew, staging: %llu dropped, %llu bytes staged\n",
	       (unsigned long long)drops, (unsigned long long)staged);
	if (drops || staged < 800 * 32)
		FAIL("staging: %llu drops, %llu staged",
		     (unsigned long long)drops, (unsigned long long)staged);
	drops = skew_run(0, 16384, &staged);
	printf("# skew, 16 KiB staging: %llu dropped, %llu bytes staged\n",
	       (unsigned long long)drops, (unsigned long long)staged);
	if (!drops || staged > 16384)
		FAIL("16 KiB staging: %llu drops, %llu staged",
		     (unsigned long long)drops, (unsigned long long)staged);
	return 0;
}

/*
 * Records handed out and not consumed yet (no AUTO_CONSUME) stay in the
 * ring, intact, while the records after them are staged; their space
 * and the staged records' go back when the caller consumes them.
 */
static int test_staging_held(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	struct pmcring_cpu_buf *bufs[2];
	struct pmcring_merge_opts o = {
		.sz = sizeof(o), .clock = fixed_clock,
	};
	const struct pmcring_rec_generated *held[10];
	uint64_t held_end = 0, k, last_ts = 0, out = 0;
	struct pmcring_merge *m;
	struct pmcring_record r;
	unsigned int i;
	int ret;

	if (!p)
		FAIL("setup: %m");
	bufs[0] = pmcring_uprod_cpu_buf(p, 0);
	bufs[1] = pmcring_uprod_cpu_buf(p, 1);
	m = pmcring_merge_new(bufs, 2, &o);
	if (!m)
		FAIL("merge: %m");
	fixed_now = 1000;
	for (k = 0; k < 10; k++)
		put_at(p, 0, 100 + k, k);
	for (i = 0; i < 10; i++) {
		if (next2(m, &r) != 1 || r.ring != 0)
			FAIL("held record %u", i);
		held[i] = r.data;
		held_end = r.end;
	}
	/* ring 1's bound stays at 1000: records from 2000 wait */
	for (k = 10; k < 60; k++) {
		if (try_put_at(p, 0, 2000 + k, k))
			FAIL("record %llu dropped", (unsigned long long)k);
		if (k % 8 == 7 && next2(m, &r) != 0)
			FAIL("record out while ring 1 is behind");
	}
	for (i = 0; i < 10; i++)
		if (held[i]->pl_seq != i || held[i]->h.pl_tsc != 100 + i)
			FAIL("held record %u overwritten", i);
	/* the held records keep the ring space: the ring fills up */
	for (; k < 200 && !try_put_at(p, 0, 2000 + k, k); k++)
		if (k % 8 == 7)
			next2(m, &r);
	if (k == 200)
		FAIL("the held records did not hold the ring");
	pmcring_cpu_buf_consume(bufs[0], held_end);
	/* now the staged records' space is free too */
	for (i = 0; i < 20; i++, k++)
		if (try_put_at(p, 0, 2000 + k, k))
			FAIL("record %llu dropped after the consume",
			     (unsigned long long)k);
	fixed_now = ~0ull >> 1;	/* past the DROPNOTIFY's real time */
	while ((ret = next2(m, &r)) == 1) {
		const struct pmcring_rec_generated *g = r.data;

		if (r.ts < last_ts || r.type == PMCRING_TYPE_DROPNOTIFY)
			continue;	/* the drop of the full ring above */
		last_ts = r.ts;
		if (g->h.pl_tsc != 2000 + g->pl_seq)
			FAIL("record %llu damaged", (unsigned long long)g->pl_seq);
		out++;
		pmcring_cpu_buf_consume(bufs[r.ring], r.end);
	}
	if (ret < 0 || out != k - 10)
		FAIL("%llu of %llu records, %d", (unsigned long long)out,
		     (unsigned long long)(k - 10), ret);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/*
 * A merge freed with records staged and not handed out drops them: the
 * chunks are freed (ASan would see a leak), the cursor and data_tail are
 * past them, the whole ring is the producer's again.
 */
static int test_staging_free(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	struct pmcring_cpu_buf *bufs[2];
	struct pmcring_merge_opts o = {
		.sz = sizeof(o), .clock = fixed_clock,
		.flags = PMCRING_MERGE_F_AUTO_CONSUME,
	};
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	struct pmcring_merge *m;
	struct pmcring_record r;
	uint64_t k;

	if (!p)
		FAIL("setup: %m");
	bufs[0] = pmcring_uprod_cpu_buf(p, 0);
	bufs[1] = pmcring_uprod_cpu_buf(p, 1);
	m = pmcring_merge_new(bufs, 2, &o);
	if (!m)
		FAIL("merge: %m");
	fixed_now = 10;
	for (k = 0; k < 100; k++)
		put_at(p, 0, 100 + k, k);
	if (next2(m, &r) != 0)
		FAIL("record out while ring 1 is behind");
	pmcring_cpu_buf_stats(bufs[0], &st);
	if (st.staged != 100 * 32)
		FAIL("%llu bytes staged", (unsigned long long)st.staged);
	pmcring_merge_free(m);
	if (pmcring_cpu_buf_peek(bufs[0], &r) != 0)
		FAIL("staged records still there after the free");
	for (k = 0; k < 4096 / 32; k++)
		if (try_put_at(p, 0, 1000 + k, k))
			FAIL("ring not free after the free: record %llu",
			     (unsigned long long)k);
	pmcring_uprod_free(p);
	return 0;
}

/* ---- against a reference sort -------------------------------------------- */

struct ref_rec {
	uint64_t	ts;		/* as handed out: clamped */
	unsigned int	ring;
	uint64_t	seq;		/* per ring */
};

static int ref_cmp(const void *a, const void *b)
{
	const struct ref_rec *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->ring != y->ring)
		return x->ring < y->ring ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/*
 * Random inputs over @n rings (ring i = a shuffled CPU): timestamps from a
 * small range, so most have ties across rings and within a ring, some
 * going backwards (clamped); written in @phases, merged after each one
 * (the next phase starts at the clock the merge was given, the first
 * timestamp the bounds allow).
 * With @runs, records come in runs instead: one ring commits 1 to 48
 * records in a row at a shared clock that moves on by 0 or 1 a record, so
 * a ring's run is earlier than every other ring's next record, or equal
 * to it at the run's ends (ties across rings where one run ends and the
 * next begins), as one busy CPU among idle ones makes them.
 * What comes out must be exactly the stable (ts, ring index, ring order)
 * sort of what went in.
 */
static int test_reference(unsigned int seed, unsigned int n,
			  unsigned int phases, unsigned int per_phase,
			  uint32_t flags, bool runs)
{
	struct pmcring_uprod *p = pmcring_uprod_new(n, 4);
	struct pmcring_cpu_buf **bufs = calloc(n, sizeof(*bufs));
	unsigned int *order = calloc(n, sizeof(*order));
	uint64_t *last = calloc(n, sizeof(*last)), *seq = calloc(n, 8);
	size_t cap = (size_t)phases * per_phase, nin = 0, nout = 0;
	struct ref_rec *in = calloc(cap, sizeof(*in));
	struct ref_rec *out = calloc(cap, sizeof(*out));
	struct pmcring_merge_opts o = {
		.sz = sizeof(o), .clock = fixed_clock, .flags = flags,
	};
	struct pmcring_merge *m;
	struct pmcring_record r;
	uint64_t base = 1000;
	unsigned int i, ph, seed0 = seed;

	if (!p || !bufs || !order || !last || !seq || !in || !out)
		FAIL("setup: %m");
	for (i = 0; i < n; i++)
		order[i] = i;
	for (i = n; i > 1; i--) {
		unsigned int j = (unsigned int)rand_r(&seed) % i, x = order[i - 1];

		order[i - 1] = order[j];
		order[j] = x;
	}
	for (i = 0; i < n; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, order[i]);
	m = pmcring_merge_new(bufs, n, &o);
	if (!m)
		FAIL("merge: %m");
	for (ph = 0; ph < phases; ph++) {
		uint64_t top = base, clk = base;
		unsigned int ring = 0, left = 0;

		for (i = 0; i < per_phase; i++) {
			unsigned int k;
			uint64_t ts;

			if (!left) {
				ring = (unsigned int)rand_r(&seed) % n;
				left = runs ? 1 + (unsigned int)rand_r(&seed) %
					      48 : 1;
			}
			left--;
			k = (unsigned int)rand_r(&seed) % 16;
			ts = base + (unsigned int)rand_r(&seed) % 8;
			if (runs) {
				ts = clk;
				clk += k & 1;
			} else if (k && ts < last[ring]) {
				/* mostly in order per ring, 1 in 16 backwards */
				ts = last[ring] + (k & 1);
			}
			put_at(p, order[ring], ts, seq[ring]);
			in[nin++] = (struct ref_rec){
				ts < last[ring] ? last[ring] : ts, ring,
				seq[ring]++ };
			if (ts > last[ring])
				last[ring] = ts;
			if (last[ring] > top)
				top = last[ring];
		}
		/* the clock past every record: all of them can go out */
		fixed_now = top + 1;
		for (;;) {
			int ret = next2(m, &r);
			const struct pmcring_rec_generated *g;

			if (ret < 0)
				FAIL("merge: %s", strerror(-ret));
			if (!ret)
				break;
			g = r.data;
			if (nout == cap)
				FAIL("more out than in");
			out[nout++] = (struct ref_rec){ r.ts, r.ring, g->pl_seq };
			if (r.cpu != order[r.ring] || g->pl_cpu != r.cpu)
				FAIL("ring %u cpu %u", r.ring, r.cpu);
			if (!(flags & PMCRING_MERGE_F_AUTO_CONSUME))
				pmcring_cpu_buf_consume(bufs[r.ring], r.end);
		}
		if (nout != nin)
			FAIL("phase %u: %zu out, %zu in", ph, nout, nin);
		/* the bounds were the clock: nothing below it any more */
		base = fixed_now;
	}
	qsort(in, nin, sizeof(*in), ref_cmp);
	for (i = 0; i < nin; i++)
		if (ref_cmp(&in[i], &out[i]))
			FAIL("seed %u n %u record %u: ts %llu ring %u seq %llu, "
			     "want ts %llu ring %u seq %llu", seed0, n, i,
			     (unsigned long long)out[i].ts, out[i].ring,
			     (unsigned long long)out[i].seq,
			     (unsigned long long)in[i].ts, in[i].ring,
			     (unsigned long long)in[i].seq);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	free(bufs);
	free(order);
	free(last);
	free(seq);
	free(in);
	free(out);
	return 0;
}

/* ---- more than two rings: the merge's tournament tree -------------------- */

/*
 * The merge's tree over @n rings (3, 5 and 17 leave leaves without a ring),
 * merged a part at a time: a ring runs dry while others still hold records,
 * and gets records again while they do (the count of these comebacks must
 * not be 0); every ring stays empty for 8 rounds in turn; many equal
 * timestamps, some going backwards (clamped).  Exactly the reference sort
 * must come out.
 */
static int test_tree_rounds(unsigned int seed, unsigned int n, uint32_t flags)
{
	enum { ROUNDS = 240 };
	struct pmcring_uprod *p = pmcring_uprod_new(n, 4);
	struct pmcring_cpu_buf **bufs = calloc(n, sizeof(*bufs));
	unsigned int *order = calloc(n, sizeof(*order));
	uint64_t *last = calloc(n, 8), *seq = calloc(n, 8), *got = calloc(n, 8);
	size_t cap = (size_t)ROUNDS * 2 * n, nin = 0, nout = 0, i;
	struct ref_rec *in = calloc(cap, sizeof(*in));
	struct ref_rec *out = calloc(cap, sizeof(*out));
	struct pmcring_merge_opts o = {
		.sz = sizeof(o), .clock = fixed_clock, .flags = flags,
	};
	unsigned int round, seed0 = seed, comebacks = 0;
	struct pmcring_merge *m;
	struct pmcring_record r;
	uint64_t base = 1000;

	if (!p || !bufs || !order || !last || !seq || !got || !in || !out)
		FAIL("setup: %m");
	for (i = 0; i < n; i++)
		order[i] = (unsigned int)(n - 1 - i);	/* ring i: CPU n-1-i */
	for (i = 0; i < n; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, order[i]);
	m = pmcring_merge_new(bufs, n, &o);
	if (!m)
		FAIL("merge: %m");
	for (round = 0; round < ROUNDS; round++) {
		unsigned int k, cnt = (unsigned int)rand_r(&seed) % (2 * n + 1);
		uint64_t top = base;
		size_t want;

		for (k = 0; k < cnt; k++) {
			unsigned int ring = (unsigned int)rand_r(&seed) % n;
			unsigned int back = (unsigned int)rand_r(&seed) % 16;
			uint64_t ts = base + (unsigned int)rand_r(&seed) % 4;

			if ((round / 8 + ring) % 3 == 0)
				continue;	/* this ring's 8 idle rounds */
			/* all of the ring out, records of others not yet */
			if (got[ring] == seq[ring] && nout < nin)
				comebacks++;
			if (back && ts < last[ring])
				ts = last[ring] + (back & 1);
			put_at(p, order[ring], ts, seq[ring]);
			in[nin++] = (struct ref_rec){
				ts < last[ring] ? last[ring] : ts, ring,
				seq[ring]++ };
			if (ts > last[ring])
				last[ring] = ts;
			if (last[ring] > top)
				top = last[ring];
		}
		/*
		 * The clock past every record; records of the next round are
		 * at or past it, so the bounds it gives stay true.
		 */
		fixed_now = top + 1;
		/* a part of what is there, all of it every 4th round */
		want = round % 4 == 3 ? nin :
		       nout + (size_t)rand_r(&seed) % (nin - nout + 1);
		while (nout < want) {
			int ret = next2(m, &r);
			const struct pmcring_rec_generated *g;

			if (ret < 0)
				FAIL("merge: %s", strerror(-ret));
			if (!ret)
				break;
			g = r.data;
			if (nout == nin)
				FAIL("round %u: more out than in", round);
			if (r.ring >= n || r.cpu != order[r.ring] ||
			    g->pl_cpu != r.cpu)
				FAIL("round %u: ring %u cpu %u", round, r.ring,
				     r.cpu);
			out[nout++] = (struct ref_rec){ r.ts, r.ring, g->pl_seq };
			got[r.ring]++;
			if (!(flags & PMCRING_MERGE_F_AUTO_CONSUME))
				pmcring_cpu_buf_consume(bufs[r.ring], r.end);
		}
		if (nout != want)
			FAIL("round %u: %zu out, %zu wanted", round, nout, want);
		base = fixed_now;
	}
	if (pmcring_merge_next(m, &r) != 0 || pmcring_merge_next(m, &r) != 0)
		FAIL("extra record");
	if (!comebacks)
		FAIL("n %u: no ring came back while others held records", n);
	qsort(in, nin, sizeof(*in), ref_cmp);
	for (i = 0; i < nin; i++)
		if (ref_cmp(&in[i], &out[i]))
			FAIL("seed %u n %u record %zu: ts %llu ring %u seq %llu, "
			     "want ts %llu ring %u seq %llu", seed0, n, i,
			     (unsigned long long)out[i].ts, out[i].ring,
			     (unsigned long long)out[i].seq,
			     (unsigned long long)in[i].ts, in[i].ring,
			     (unsigned long long)in[i].seq);
	printf("# tree of %u rings: %zu records, %u comebacks\n", n, nin,
	       comebacks);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	free(bufs);
	free(order);
	free(last);
	free(seq);
	free(got);
	free(in);
	free(out);
	return 0;
}

#define PENDING_RINGS	17
#define PENDING_PER	4	/* records per ring and phase */

/*
 * Ring @x of @n holds a record in flight (pending_ts set, real clock) while
 * the other rings advance through the tree, @x having run dry among them:
 * what is below its pending timestamp goes out, nothing at or above it,
 * also on more calls; once it commits (a timestamp some rings below and
 * above @x have too), its record takes its place: exactly the reference
 * sort comes out.  The merge's clock is far ahead: only pending_ts bounds.
 */
static int test_tree_pending(unsigned int n, unsigned int x, uint32_t flags)
{
	struct pmcring_uprod *p = pmcring_uprod_new(n, 4);
	struct pmcring_cpu_buf *bufs[PENDING_RINGS];
	enum { CAP = PENDING_RINGS * PENDING_PER * 2 + 2 };
	struct ref_rec in[CAP], out[CAP];
	uint64_t seq[PENDING_RINGS] = { 0 }, t_lo, t0, t1;
	struct pmcring_merge_opts o = {
		.sz = sizeof(o), .clock = fixed_clock, .flags = flags,
	};
	struct pmcring_rec_generated *held;
	struct pmcring_merge *m;
	struct pmcring_record r;
	size_t nin = 0, nout = 0, first, i;
	unsigned int k, j;
	int ret;

	if (!p || n > PENDING_RINGS || x >= n)
		FAIL("setup: %m");
	for (j = 0; j < n; j++)
		bufs[j] = pmcring_uprod_cpu_buf(p, n - 1 - j);	/* ring j */
	m = pmcring_merge_new(bufs, n, &o);
	if (!m)
		FAIL("merge: %m");
	fixed_now = UINT64_MAX / 2;
	t_lo = now() - 1000000;
	for (k = 0; k < PENDING_PER; k++)
		for (j = 0; j < n; j++) {
			uint64_t ts = t_lo + k * 10 + j % 3;

			put_at(p, n - 1 - j, ts, seq[j]);
			in[nin++] = (struct ref_rec){ ts, j, seq[j]++ };
		}
	t0 = now();
	held = pmcring_uprod_reserve(p, n - 1 - x, PMCRING_TYPE_GENERATED, 32);
	t1 = now();
	if (!held)
		FAIL("reserve: %m");
	for (k = 0; k < PENDING_PER; k++)
		for (j = 0; j < n; j++) {
			uint64_t ts = t1 + 1000 + k * 10 + j % 3;

			if (j == x)
				continue;
			put_at(p, n - 1 - j, ts, seq[j]);
			in[nin++] = (struct ref_rec){ ts, j, seq[j]++ };
		}
	first = (size_t)n * PENDING_PER;
	/* x's record in flight: only what is below its pending_ts, */
	for (k = 0; k < 3; k++) {	/* also on more calls */
		while ((ret = pmcring_merge_next(m, &r)) == 1) {
			if (nout == first || r.ts >= t0)
				FAIL("ts %llu ring %u out before the pending "
				     "%llu", (unsigned long long)r.ts, r.ring,
				     (unsigned long long)t0);
			out[nout++] = (struct ref_rec){ r.ts, r.ring,
				((const struct pmcring_rec_generated *)
				 r.data)->pl_seq };
			if (!(flags & PMCRING_MERGE_F_AUTO_CONSUME))
				pmcring_cpu_buf_consume(bufs[r.ring], r.end);
		}
		if (ret < 0)
			FAIL("merge: %s", strerror(-ret));
	}
	if (nout != first)
		FAIL("%zu of %zu records below pending_ts out", nout, first);
	/* commit at a timestamp rings below and above x have too */
	held->h.pl_tsc = t1 + 1010 + x % 3;
	held->pl_seq = seq[x];
	held->pl_cpu = n - 1 - x;
	in[nin++] = (struct ref_rec){ t1 + 1010 + x % 3, x, seq[x]++ };
	pmcring_uprod_commit(p, n - 1 - x);
	put_at(p, n - 1 - x, t1 + 1031, seq[x]);
	in[nin++] = (struct ref_rec){ t1 + 1031, x, seq[x]++ };
	for (;;) {
		ret = next2(m, &r);
		if (ret < 0)
			FAIL("merge: %s", strerror(-ret));
		if (!ret)
			break;
		if (nout == nin)
			FAIL("more out than in");
		out[nout++] = (struct ref_rec){ r.ts, r.ring,
			((const struct pmcring_rec_generated *)r.data)->pl_seq };
		if (!(flags & PMCRING_MERGE_F_AUTO_CONSUME))
			pmcring_cpu_buf_consume(bufs[r.ring], r.end);
	}
	if (nout != nin)
		FAIL("%zu out, %zu in", nout, nin);
	qsort(in, nin, sizeof(*in), ref_cmp);
	for (i = 0; i < nin; i++)
		if (ref_cmp(&in[i], &out[i]))
			FAIL("n %u x %u record %zu: ts %llu ring %u seq %llu, "
			     "want ts %llu ring %u seq %llu", n, x, i,
			     (unsigned long long)out[i].ts, out[i].ring,
			     (unsigned long long)out[i].seq,
			     (unsigned long long)in[i].ts, in[i].ring,
			     (unsigned long long)in[i].seq);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/* ---- two rings: the merge's two-ring compare ------------------------------ */

/*
 * Two rings of one page (the merge compares their two heads, without a
 * branch, its tree of one level): records with many equal timestamps
 * across and within the rings, some going backwards (clamped), a ring
 * left empty for a few rounds then filled, both wrapping their ring
 * several times.  Exactly the reference sort must come out.
 */
static int test_two_rings(unsigned int seed, uint32_t flags)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	struct pmcring_cpu_buf *bufs[2];
	struct pmcring_merge_opts o = {
		.sz = sizeof(o), .clock = fixed_clock, .flags = flags,
	};
	enum { ROUNDS = 300, PER = 40 };
	static struct ref_rec in[ROUNDS * PER], out[ROUNDS * PER];
	uint64_t last[2] = { 0 }, seq[2] = { 0 }, base = 1000;
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	size_t nin = 0, nout = 0, i;
	unsigned int round, seed0 = seed, uses[2] = { 0 };
	struct pmcring_merge *m;
	struct pmcring_record r;

	if (!p)
		FAIL("setup: %m");
	bufs[0] = pmcring_uprod_cpu_buf(p, 1);	/* ring 0 is CPU 1 */
	bufs[1] = pmcring_uprod_cpu_buf(p, 0);
	m = pmcring_merge_new(bufs, 2, &o);
	if (!m)
		FAIL("merge: %m");
	for (round = 0; round < ROUNDS; round++) {
		/* rounds 10-19: ring 0 empty, 40-49: ring 1 empty */
		unsigned int only = round / 10 == 1 ? 2 : round / 10 == 4 ? 1 : 0;
		unsigned int k, n = (unsigned int)rand_r(&seed) % PER;
		uint64_t top = base;

		for (k = 0; k < n; k++) {
			unsigned int ring = only ? only - 1 :
					    (unsigned int)rand_r(&seed) % 2;
			unsigned int back = (unsigned int)rand_r(&seed) % 16;
			uint64_t ts = base + (unsigned int)rand_r(&seed) % 4;

			/* mostly in order within a ring, 1 in 16 backwards */
			if (back && ts < last[ring])
				ts = last[ring] + (back & 1);
			put_at(p, ring ? 0 : 1, ts, seq[ring]);
			in[nin++] = (struct ref_rec){
				ts < last[ring] ? last[ring] : ts, ring,
				seq[ring]++ };
			uses[ring]++;
			if (ts > last[ring])
				last[ring] = ts;
			if (last[ring] > top)
				top = last[ring];
		}
		fixed_now = top + 1;
		for (;;) {
			int ret = next2(m, &r);
			const struct pmcring_rec_generated *g;

			if (ret < 0)
				FAIL("merge: %s", strerror(-ret));
			if (!ret)
				break;
			g = r.data;
			if (nout == nin)
				FAIL("round %u: more out than in", round);
			if (r.type != PMCRING_TYPE_GENERATED || r.len != 32 ||
			    r.cpu != (r.ring ? 0u : 1u) || g->pl_cpu != r.cpu)
				FAIL("round %u: record %zu: type %u len %u ring %u"
				     " cpu %u", round, nout, r.type, r.len,
				     r.ring, r.cpu);
			out[nout++] = (struct ref_rec){ r.ts, r.ring, g->pl_seq };
			if (!(flags & PMCRING_MERGE_F_AUTO_CONSUME))
				pmcring_cpu_buf_consume(bufs[r.ring], r.end);
		}
		if (nout != nin)
			FAIL("round %u: %zu out, %zu in", round, nout, nin);
		base = fixed_now;
	}
	/* each ring wrapped its 4 KiB several times */
	if (uses[0] * 32 < 4 * 4096 || uses[1] * 32 < 4 * 4096)
		FAIL("rings did not wrap: %u %u records", uses[0], uses[1]);
	qsort(in, nin, sizeof(*in), ref_cmp);
	for (i = 0; i < nin; i++)
		if (ref_cmp(&in[i], &out[i]))
			FAIL("seed %u record %zu: ts %llu ring %u seq %llu, "
			     "want ts %llu ring %u seq %llu", seed0, i,
			     (unsigned long long)out[i].ts, out[i].ring,
			     (unsigned long long)out[i].seq,
			     (unsigned long long)in[i].ts, in[i].ring,
			     (unsigned long long)in[i].seq);
	pmcring_cpu_buf_stats(bufs[0], &st);
	if (st.records != uses[0])
		FAIL("ring 0 passed %llu records, %u written",
		     (unsigned long long)st.records, uses[0]);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/*
 * Two rings of one page, ring 0 overfilled again and again (it drops, then
 * announces the drops with a DROPNOTIFY, which lands behind records not
 * handed out yet): every record committed comes out once, in write order,
 * all of them in (ts, ring) order, the DROPNOTIFYs too, through several
 * wraps of both rings.
 */
static void drops_write(struct pmcring_uprod *p, unsigned int n,
			uint64_t *seq, bool *dropped)
{
	unsigned int k;

	for (k = 0; k < n; k++) {
		unsigned int cpu = k % 20 ? 0 : 1;

		if (put_gen(p, cpu, seq[cpu], 32, true) == 0)
			seq[cpu]++;
		else if (cpu == 0)
			*dropped = true;
		else
			FAIL("ring 1 dropped");
	}
}

struct drops_out {
	uint64_t	lastts, got[2], next_seq[2], drops;
	unsigned int	last_ring;
	/* DROPNOTIFYs peeked as the next record of ring 0 (no run dry) */
	unsigned int	mid;
};

/* Hand out up to @max records (0: all there are); the number. */
static unsigned int drops_merge(struct pmcring_merge *m, struct drops_out *o,
				uint32_t flags, unsigned int max)
{
	struct pmcring_record r;
	unsigned int n = 0;
	bool ring0 = false;	/* a record of ring 0 came out before */

	while (!max || n < max) {
		int ret = next2(m, &r);

		if (ret < 0)
			FAIL("merge: %s", strerror(-ret));
		if (!ret)
			break;
		n++;
		if (r.ts < o->lastts || (r.ts == o->lastts &&
					 r.ring < o->last_ring))
			FAIL("out of order");
		o->lastts = r.ts;
		o->last_ring = r.ring;
		if (!(flags & PMCRING_MERGE_F_AUTO_CONSUME))
			pmcring_cpu_buf_consume(pmcring_merge_buf(m, r.ring),
						r.end);
		if (r.type == PMCRING_TYPE_DROPNOTIFY) {
			if (r.ring != 0 || r.len != PMCRING_HEADER_SIZE)
				FAIL("DROPNOTIFY ring %u len %u", r.ring,
				     r.len);
			o->drops++;
			o->mid += ring0;
			continue;
		}
		if (r.type != PMCRING_TYPE_GENERATED)
			FAIL("type %u", r.type);
		/* records come in write order, none twice, none lost */
		if (((const struct pmcring_rec_generated *)r.data)->pl_seq !=
		    o->next_seq[r.ring]++)
			FAIL("ring %u: seq out of order", r.ring);
		ring0 |= r.ring == 0;
		o->got[r.ring]++;
	}
	return n;
}

static int test_two_rings_drops(uint32_t flags)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	struct drops_out o = { 0 };
	struct pmcring_merge *m;
	uint64_t seq[2] = { 0 };
	unsigned int round;
	bool dropped = false;

	if (!p)
		FAIL("setup: %m");
	m = merge_of(p, flags);
	if (!m)
		FAIL("merge: %m");
	for (round = 0; round < 20; round++) {
		unsigned int j;

		/*
		 * Bursts to ring 0 larger than the room the merge leaves
		 * (4 KiB, 32-byte records): it drops, and its DROPNOTIFY
		 * lands behind records the merge's last data_head did not
		 * cover yet, so the merge steps onto it from a record.
		 */
		for (j = 0; j < 10; j++) {
			drops_write(p, 200, seq, &dropped);
			drops_merge(m, &o, flags, 70);
		}
		drops_merge(m, &o, flags, 0);
		if (o.got[0] != seq[0] || o.got[1] != seq[1])
			FAIL("round %u: %llu/%llu and %llu/%llu out", round,
			     (unsigned long long)o.got[0],
			     (unsigned long long)seq[0],
			     (unsigned long long)o.got[1],
			     (unsigned long long)seq[1]);
	}
	/* DROPNOTIFYs that follow records of ring 0 */
	if (!dropped || o.drops < 20 || !o.mid)
		FAIL("%llu DROPNOTIFY, %u behind a record",
		     (unsigned long long)o.drops, o.mid);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

int main(void)
{
	static const unsigned int ns[] = { 1, 2, 3, 5, 16, 17, 33, 256 };
	static const unsigned int tree_ns[] = { 3, 5, 16, 17 };
	unsigned int i, s;

	if (test_staging() || test_staging_held() || test_staging_free())
		return 1;
	for (s = 1; s <= 4; s++)
		if (test_two_rings(s * 104729, s & 1 ?
				   PMCRING_MERGE_F_AUTO_CONSUME : 0))
			return 1;
	if (test_two_rings_drops(PMCRING_MERGE_F_AUTO_CONSUME) ||
	    test_two_rings_drops(0))
		return 1;
	for (i = 0; i < sizeof(ns) / sizeof(ns[0]); i++)
		for (s = 1; s <= 4; s++)
			if (test_reference(s * 7919 + i, ns[i], 8,
					   ns[i] < 16 ? 120 : 40 * ns[i],
					   s & 1 ? PMCRING_MERGE_F_AUTO_CONSUME :
					   0, false) ||
			    test_reference(s * 6151 + i, ns[i], 8,
					   ns[i] < 16 ? 240 : 40 * ns[i],
					   s & 1 ? PMCRING_MERGE_F_AUTO_CONSUME :
					   0, true))
				return 1;
	for (i = 0; i < sizeof(tree_ns) / sizeof(tree_ns[0]); i++)
		for (s = 1; s <= 2; s++)
			if (test_tree_rounds(s * 6007 + i, tree_ns[i], s & 1 ?
					     PMCRING_MERGE_F_AUTO_CONSUME : 0))
				return 1;
	if (test_tree_pending(17, 9, PMCRING_MERGE_F_AUTO_CONSUME) ||
	    test_tree_pending(5, 2, 0) || test_tree_pending(3, 0, 0) ||
	    test_tree_pending(16, 15, PMCRING_MERGE_F_AUTO_CONSUME))
		return 1;
	if (test_ties() || test_backwards())
		return 1;
	if (test_idle_cpus_do_not_stall())
		return 1;
	if (test_in_flight_blocks())
		return 1;
	if (test_clock_once_per_round() || test_timeout())
		return 1;
	if (test_property(1, true, 6, 6, 20000) ||
	    test_property(1000, false, 6, 3, 20000) ||
	    test_property(77, true, 64, 4, 2000))
		return 1;
	printf("ok merge\n");
	return 0;
}
