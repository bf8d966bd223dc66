// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: the poll-style reader hands every record to its callback
 * once, in (timestamp, ring index) order; pmcring_reader_poll() returns 0
 * after its timeout when nothing comes, the callback's error stops it, and
 * after EPOLLHUP (a pipe whose write end is closed stands in for the
 * session fd) the stream ends with -ENODATA only once everything is
 * drained and no writer is in flight; the per-CPU counters then agree
 * with the producer's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include "libpmcring_test.h"

#define FAIL(...) do { \
	fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
	return 1; } while (0)

#define NCPU	3

struct seen {
	unsigned int	n, stop_at;
	uint64_t	last_ts;
	unsigned int	last_ring;
	uint64_t	next_seq[NCPU];
	int		bad;
};

static int on_record(void *ctx, const struct pmcring_record *r)
{
	const struct pmcring_rec_generated *g = r->data;
	struct seen *s = ctx;

	if (r->ts < s->last_ts ||
	    (r->ts == s->last_ts && r->ring < s->last_ring) ||
	    r->type != PMCRING_TYPE_GENERATED || r->ring >= NCPU ||
	    g->pl_seq != s->next_seq[r->ring])
		s->bad++;
	s->next_seq[r->ring < NCPU ? r->ring : 0]++;
	s->last_ts = r->ts;
	s->last_ring = r->ring;
	if (++s->n == s->stop_at)
		return -ECANCELED;
	return 0;
}

static void put(struct pmcring_uprod *p, unsigned int cpu, uint64_t seq)
{
	struct pmcring_rec_generated g = { .pl_seq = seq, .pl_cpu = cpu };

	pmcring_uprod_write(p, cpu, PMCRING_TYPE_GENERATED, &g.pl_seq,
			    sizeof(g) - sizeof(g.h));
}

static uint64_t ms_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int test_reader(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(NCPU, 4);
	struct pmcring_cpu_buf *bufs[NCPU];
	struct seen s = { 0 };
	struct pmcring_reader *rd;
	uint64_t seq[NCPU] = { 0 }, t0, total = 0;
	unsigned int i, cpu;
	int pfd[2], n;
	void *held;

	if (!p || pipe(pfd))
		FAIL("setup: %m");
	for (i = 0; i < NCPU; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, i);
	rd = pmcring_reader_new_bufs(bufs, NCPU, pfd[0], pmcring_uprod_clock,
				     p, on_record, &s, 2000000);
	if (!rd)
		FAIL("reader_new: %m");

	/* nothing there: 0 after about the timeout */
	t0 = ms_now();
	n = pmcring_reader_poll(rd, 30);
	if (n != 0 || ms_now() - t0 < 25 || ms_now() - t0 > 1000)
		FAIL("empty poll: %d after %llu ms", n,
		     (unsigned long long)(ms_now() - t0));
	if (pmcring_reader_consume(rd) != 0 || pmcring_reader_eof(rd))
		FAIL("empty consume");

	/* records of all CPUs, in order, each once */
	for (i = 0; i < 300; i++) {
		cpu = (i * 7) % NCPU;
		put(p, cpu, seq[cpu]++);
	}
	while (total < 300) {
		n = pmcring_reader_poll(rd, 1000);
		if (n <= 0)
			FAIL("poll: %d after %llu", n, (unsigned long long)total);
		total += (uint64_t)n;
	}
	if (s.bad || s.n != 300)
		FAIL("%u records, %d out of order or wrong", s.n, s.bad);

	/* the callback's error stops the call and is returned */
	s.stop_at = s.n + 5;
	for (i = 0; i < 20; i++) {
		cpu = i % NCPU;
		put(p, cpu, seq[cpu]++);
	}
	n = pmcring_reader_poll(rd, 1000);
	if (n != -ECANCELED || s.n != s.stop_at)
		FAIL("callback error: %d after %u", n, s.n);
	s.stop_at = 0;
	while (s.n < 320) {
		n = pmcring_reader_poll(rd, 1000);
		if (n <= 0)
			FAIL("poll after the stop: %d", n);
	}

	/* a writer in flight on CPU 1 holds the end back, even after HUP */
	put(p, 0, seq[0]++);
	held = pmcring_uprod_reserve(p, 1, PMCRING_TYPE_GENERATED, 32);
	if (!held)
		FAIL("reserve");
	((struct pmcring_rec_generated *)held)->pl_seq = seq[1]++;
	close(pfd[1]);				/* EPOLLHUP */
	for (i = 0; i < 5; i++) {
		n = pmcring_reader_poll(rd, 20);
		if (n < 0 || pmcring_reader_eof(rd))
			FAIL("end of stream with a writer in flight: %d", n);
	}
	if (s.n != 321)		/* CPU 0's, older than the writer's start */
		FAIL("%u records handed out while a writer is in flight",
		     s.n);
	pmcring_uprod_commit(p, 1);
	/*
	 * consume() sees the HUP too and hands out the last record; the
	 * drain that did may already have found the end (then eof is 1 and
	 * the next call says -ENODATA).
	 */
	n = pmcring_reader_consume(rd);
	if (n == 0)
		n = pmcring_reader_consume(rd);	/* a second merge round */
	if (n != 1 || s.n != 322)
		FAIL("consume of the last record: %d, %u records", n, s.n);
	while ((n = pmcring_reader_poll(rd, 1000)) > 0)
		;
	if (n != -ENODATA || !pmcring_reader_eof(rd) || s.n != 322 || s.bad)
		FAIL("end: %d, eof %d, %u records, %d bad", n,
		     pmcring_reader_eof(rd), s.n, s.bad);
	if (pmcring_reader_poll(rd, 10) != -ENODATA ||
	    pmcring_reader_consume(rd) != -ENODATA)
		FAIL("-ENODATA not sticky");

	/* the counters: everything the producers committed was passed */
	for (i = 0; i < NCPU; i++) {
		struct pmcring_cpu_stats st = { .sz = sizeof(st) };

		if (pmcring_cpu_buf_stats(bufs[i], &st))
			FAIL("stats");
		if (st.records != st.prod_records || st.bytes != st.prod_bytes ||
		    st.records != seq[i] || st.lost || st.backwards)
			FAIL("cpu %u: passed %llu/%llu, committed %llu/%llu, "
			     "written %llu", i, (unsigned long long)st.records,
			     (unsigned long long)st.bytes,
			     (unsigned long long)st.prod_records,
			     (unsigned long long)st.prod_bytes,
			     (unsigned long long)seq[i]);
	}
	pmcring_reader_free(rd);
	close(pfd[0]);
	pmcring_uprod_free(p);
	printf("# reader: %u records in order, end of stream after HUP\n", s.n);
	return 0;
}

/* A stats struct of an older, smaller size gets only its fields. */
static int test_stats_sz(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(1, 1);
	struct pmcring_cpu_buf *b = pmcring_uprod_cpu_buf(p, 0);
	struct pmcring_cpu_stats st;

	memset(&st, 0xa5, sizeof(st));
	st.sz = offsetof(struct pmcring_cpu_stats, lost);
	if (pmcring_cpu_buf_stats(b, &st) || st.records || st.bytes ||
	    st.lost != 0xa5a5a5a5a5a5a5a5ull)
		FAIL("short sz");
	st.sz = 4;
	if (pmcring_cpu_buf_stats(b, &st) != -EINVAL)
		FAIL("sz 4 accepted");
	pmcring_uprod_free(p);
	return 0;
}

int main(void)
{
	if (test_reader() || test_stats_sz())
		return 1;
	printf("ok reader\n");
	return 0;
}
