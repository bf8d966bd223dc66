// SPDX-License-Identifier: GPL-2.0
/*
 * Description: drops after a ring's last record are announced in the file.
 * A ring's DROPNOTIFY comes only before the next record that fits, so the
 * drops of a ring that filled up and took nothing after are announced by
 * none; the producer page says so (lost > reported).  After the last
 * drain the consumer writes one DROPNOTIFY of its own for each such ring,
 * at the end timestamp, before the end of the file: checked in every
 * format, read back with the project's readers (the last record before
 * CLOSELOG / the end is that note, on the ring's CPU where the format
 * says it), with the counts the record summary and `pmcring stat` use
 * (records taken, drop notes, items in the file).  A ring whose drops a
 * DROPNOTIFY of its own announced, and one without drops, get none.
 */
#include <time.h>

#include "libpmcring_test.h"
#include "test_fmt_common.h"
#include "../pmcring/record/consumer.h"

#define NCPU		3
#define DROPS0		5	/* ring 0: full, then DROPS0 drops */
#define RECS2		7	/* ring 2: a few records, no drop */

struct seen {
	unsigned int	n, notes;
	uint64_t	last_ts;	/* of the last record before CLOSELOG */
	int32_t		last_cpu;
	bool		last_is_note;
};

static bool is_note(const struct fmt_item *it)
{
	if (it->kind == FMT_BARMAN)
		return it->type == BM_REC_WARNING &&
		       it->value == BM_WARNING_LOST;
	return it->type == PMCRING_TYPE_DROPNOTIFY;
}

static int seen_cb(const struct fmt_item *it, void *ctx)
{
	struct seen *s = ctx;

	s->n++;
	if (it->kind == FMT_PMCLOG && it->type == PMCRING_TYPE_CLOSELOG)
		return 0;	/* the end: the note must come before it */
	if (is_note(it))
		s->notes++;
	s->last_is_note = is_note(it);
	s->last_ts = it->ts;
	s->last_cpu = it->cpu;
	return 0;
}

static uint64_t mono(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Write until @cpu's ring refuses: the records it took. */
static unsigned int fill(struct pmcring_uprod *p, unsigned int cpu)
{
	uint32_t body[2] = { 0xc0ffee, 0 };
	unsigned int n = 0;

	while (!pmcring_uprod_write(p, cpu, PMCRING_TYPE_USERDATA, body,
				    sizeof(body)))
		n++;
	return n;
}

static void one(enum fmt_kind kind, bool uring, const char *dir)
{
	const char *what = kind == FMT_PMCLOG ? "pmclog" :
			   kind == FMT_BARMAN ? "barman" : "blob";
	struct pmcring_uprod *p = pmcring_uprod_new(NCPU, 1);
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct pmcring_cpu_buf *bufs[NCPU];
	uint32_t body[2] = { 0xbeef, 0 };
	struct seen s = { 0 };
	unsigned int i, n0, n1, first1;
	char path[300], dat[340];
	struct pmcring_merge *m;
	struct fmt_writer *w;
	struct fmt_opts o;
	struct consumer c;
	uint64_t n, end;
	size_t len, bad;
	void *img;
	int err;

	REQUIRE(p, "uprod: %s", strerror(errno));
	for (i = 0; i < NCPU; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, i);
	mo.clock = pmcring_uprod_clock;
	mo.clock_ctx = p;
	m = pmcring_merge_new(bufs, NCPU, &mo);
	REQUIRE(m, "merge: %s", strerror(errno));
	snprintf(path, sizeof(path), "%s/%s.%d", dir, what, uring);
	test_opts(&o, kind, path);
	o.nr_cpus = NCPU;
	o.container = "c";
	o.streams[0].name = "all";
	o.streams[0].types = PMCRING_TYPES_ALL;
	o.nr_streams = 1;
	w = fmt_writer_new(&o);
	REQUIRE(w, "writer");
	err = consumer_init(&c, m, NCPU, w, uring, -1);
	if (err) {
		REQUIRE(uring, "consumer_init: %s", strerror(-err));
		printf("# %s: io_uring unavailable: %s\n", what,
		       strerror(-err));
		goto out;
	}
	REQUIRE(!consumer_begin(&c), "begin");

	/* ring 1: full, drained, then a record behind its own DROPNOTIFY */
	first1 = fill(p, 1);
	REQUIRE(!consumer_drain(&c, 0, &n), "drain");
	REQUIRE(!consumer_sync(&c), "sync");	/* the space is back */
	REQUIRE(!pmcring_uprod_write(p, 1, PMCRING_TYPE_USERDATA, body,
				     sizeof(body)), "ring 1 after the drain");
	n1 = first1 + 1;
	/* ring 0: full and dropping to the end; ring 2: no drop */
	n0 = fill(p, 0);
	for (i = 1; i < DROPS0; i++)
		CHECK(pmcring_uprod_write(p, 0, PMCRING_TYPE_USERDATA, body,
					  sizeof(body)), "ring 0 took more");
	for (i = 0; i < RECS2; i++)
		REQUIRE(!pmcring_uprod_write(p, 2, PMCRING_TYPE_USERDATA, body,
					     sizeof(body)), "ring 2");
	REQUIRE(!consumer_drain(&c, 0, &n), "drain");
	end = mono();
	err = consumer_unannounced(&c, end);
	CHECK(!err, "%s: unannounced: %s", what, strerror(-err));
	err = consumer_end(&c, end);
	CHECK(!err, "%s: end: %s", what, strerror(-err));
	/* taken: the rings' records, ring 1's DROPNOTIFY, our note */
	CHECK(c.st.records == n0 + n1 + 1 + RECS2 + 1 && c.st.drops == 2,
	      "%s: %llu records taken, %llu drop notes; want %u, 2", what,
	      (unsigned long long)c.st.records,
	      (unsigned long long)c.st.drops, n0 + n1 + RECS2 + 2);
	CHECK(c.st.written == c.st.records, "%s: %llu of %llu written", what,
	      (unsigned long long)c.st.written,
	      (unsigned long long)c.st.records);
	consumer_fini(&c);

	if (kind == FMT_BLOB) {
		struct fmt_blob_set bs;
		char which[64];

		snprintf(dat, sizeof(dat), "%s/c/all.DAT.1700000000", path);
		REQUIRE(!fmt_blob_map(dat, &bs, which, sizeof(which)),
			"map %s (%s)", dat, which);
		err = fmt_blob_read(&bs, seen_cb, &s, &bad);
		fmt_blob_unmap(&bs);
	} else {
		img = read_file(path, &len);
		err = kind == FMT_PMCLOG ?
		      fmt_pmclog_read(img, len, seen_cb, &s, &bad) :
		      fmt_barman_read(img, len, seen_cb, &s, &bad);
		free(img);
	}
	CHECK(err == FMT_END_CLEAN, "%s: read: %d at %zu", what, err, bad);
	CHECK(s.notes == 2, "%s: %u drop notes in the file, want 2 (ring "
	      "1's and the end's)", what, s.notes);
	CHECK(s.last_is_note && s.last_ts == end,
	      "%s: the last record is %sa drop note, at %llu (end %llu)",
	      what, s.last_is_note ? "" : "not ", (unsigned long long)s.last_ts,
	      (unsigned long long)end);
	CHECK(s.last_cpu == -1 || s.last_cpu == 0,
	      "%s: the end note is on cpu %d, not ring 0's", what, s.last_cpu);
	/* what `pmcring stat` counts is what record says is in the file */
	CHECK(s.n == c.st.items, "%s: the reader sees %u records, the "
	      "consumer wrote %llu", what, s.n,
	      (unsigned long long)c.st.items);
	printf("# %s %s: %u + %u + %u records, 2 drop notes, the last at "
	       "the end\n", what, uring ? "io_uring" : "pwritev", n0, n1,
	       RECS2);
out:
	fmt_writer_free(w);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
}

int main(void)
{
	char *dir = scratch_dir();
	int mode;

	for (mode = 0; mode < 2; mode++) {
		one(FMT_PMCLOG, mode, dir);
		one(FMT_BARMAN, mode, dir);
		one(FMT_BLOB, mode, dir);
	}
	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_unannounced: all checks passed\n");
	return t_failed;
}
