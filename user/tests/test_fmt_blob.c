// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the LDMS blob writer of pmcring(1) writes DAT/OFFSET/TIMING/
 * TYPE with their magics and per message the LE offset (first at 8), LE
 * seconds and microseconds of CLOCK_REALTIME and the type byte, byte for
 * byte; streams select record types; --blob-json sets keep the rules of
 * LDMS's reader ldms-csv-from-blobs (tests/ldms_blob_rules.py); rolled
 * file sets (by size and by time) each start their offsets at 8, and a
 * binary set a roll opens starts with the PERIODs in force; a batch
 * killed before its index entries leaves no OFFSET past DAT; reads round
 * trip; a batch larger than a segment (BLOB_SEG_BYTES) killed in the
 * middle keeps every whole segment before it; after a write that fails
 * part-way, fmt_abort() leaves every file of the set ending on the same
 * whole message; two runs in the same second into one directory make two
 * whole sets (O_EXCL, the next free $t); sets of several records per
 * message (`record --ldms ...,batch=`, stored by blob_msg_writer) read
 * back.
 */
#define _GNU_SOURCE	/* memmem() */
#include <dirent.h>

#include "test_fmt_common.h"

struct collect {
	unsigned int	n;
	struct fmt_item	it[64];
};

static int collect_cb(const struct fmt_item *it, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 64)
		c->it[c->n] = *it;
	c->n++;
	return 0;
}

struct set {
	uint8_t	*p[4];
	size_t	len[4];
};

static const char *const exts[4] = { "DAT", "OFFSET", "TIMING", "TYPE" };

static void load_set(struct set *s, const char *dir, const char *stream,
		     long long t)
{
	char path[512];
	unsigned int i;

	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/c/%s.%s.%lld", dir, stream,
			 exts[i], t);
		s->p[i] = read_file(path, &s->len[i]);
	}
}

static void free_set(struct set *s)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		free(s->p[i]);
}

static int read_set(const struct set *s, struct collect *c)
{
	struct fmt_blob_set bs = {
		.dat = s->p[0], .dat_len = s->len[0],
		.off = s->p[1], .off_len = s->len[1],
		.tim = s->p[2], .tim_len = s->len[2],
		.typ = s->p[3], .typ_len = s->len[3],
	};
	size_t bad;

	c->n = 0;
	return fmt_blob_read(&bs, collect_cb, c, &bad);
}

static struct fmt_writer *start_n(struct fmt_opts *o, struct out_batch *b,
				  const char *dir, unsigned int puts,
				  size_t arena)
{
	struct fmt_writer *w;

	REQUIRE(!out_batch_init(b, puts, arena), "batch");
	w = fmt_writer_new(o);
	REQUIRE(w, "writer");
	o->path = dir;
	REQUIRE(!fmt_begin(w, b), "begin");
	return w;
}

static struct fmt_writer *start(struct fmt_opts *o, struct out_batch *b,
				const char *dir)
{
	return start_n(o, b, dir, 256, 1 << 20);
}

static void stop(struct fmt_writer *w, struct out_batch *b)
{
	finish(w, b, T0 + 100000);
	fmt_writer_free(w);
	out_batch_free(b);
}

static void base_opts(struct fmt_opts *o, const char *dir)
{
	test_opts(o, FMT_BLOB, dir);
	o->container = "c";
	o->blob_timing = true;
	o->streams[0].name = "all";
	o->streams[0].types = PMCRING_TYPES_ALL;
	o->streams[1].name = "sched";
	o->streams[1].types = PMCRING_TYPE_BIT(PMCRING_TYPE_PROCCSW) |
			      PMCRING_TYPE_BIT(PMCRING_TYPE_THR_CREATE);
	o->nr_streams = 2;
}

static void test_golden(const char *dir, const struct ring_recs *rr)
{
	struct img *dat = calloc(1, sizeof(*dat)), *off = calloc(1, sizeof(*off));
	struct img *tim = calloc(1, sizeof(*tim)), *typ = calloc(1, sizeof(*typ));
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	unsigned int i;
	int rc;

	base_opts(&o, dir);
	w = start(&o, &b, dir);
	for (i = 0; i < rr->n; i++)
		feed(w, &b, &rr->r[i]);
	stop(w, &b);

	bytes(dat, 0, "blobdat", 8);
	bytes(off, 0, "bloboff", 8);
	bytes(tim, 0, "blobtim", 8);
	bytes(typ, 0, "blobtyp", 8);
	for (i = 0; i < rr->n; i++) {
		le(off, off->len, dat->len, 8);
		append(dat, rr->r[i].data, rr->r[i].len);
		/* 1700000000.5 s + (i + 1) us */
		le(tim, tim->len, 1700000000, 8);
		le(tim, tim->len, 500000 + i + 1, 8);
		le(typ, typ->len, 's', 1);
	}
	load_set(&s, dir, "all", 1700000000);
	expect_bytes("all.DAT", s.p[0], s.len[0], dat->b, dat->len);
	expect_bytes("all.OFFSET", s.p[1], s.len[1], off->b, off->len);
	expect_bytes("all.TIMING", s.p[2], s.len[2], tim->b, tim->len);
	expect_bytes("all.TYPE", s.p[3], s.len[3], typ->b, typ->len);
	CHECK(fmt_detect(s.p[1], s.len[1]) == FMT_BLOB, "detect");
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == rr->n, "read: rc %d n %u", rc, c.n);
	for (i = 0; i < rr->n && i < c.n; i++)
		CHECK(c.it[i].len == rr->r[i].len &&
		      !memcmp(c.it[i].data, rr->r[i].data, rr->r[i].len) &&
		      c.it[i].type == rr->r[i].type && c.it[i].has_rt &&
		      c.it[i].rt.tv_nsec == (long)(500000 + i + 1) * 1000,
		      "message %u", i);

	/* a kill mid-entry of OFFSET: a prefix */
	s.len[1] -= 3;
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_TRUNCATED && c.n == rr->n - 1, "cut OFFSET: %d %u",
	      rc, c.n);
	free_set(&s);

	/* the "sched" stream took PROCCSW and THR_CREATE only */
	load_set(&s, dir, "sched", 1700000000);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == 2 &&
	      c.it[0].type == PMCRING_TYPE_THR_CREATE &&
	      c.it[1].type == PMCRING_TYPE_PROCCSW, "sched stream: %u", c.n);
	free_set(&s);
	free(dat);
	free(off);
	free(tim);
	free(typ);
}

static void test_json(const char *dir, const struct ring_recs *rr)
{
	static const char cc[] =
		"{\"type\":\"callchain\",\"ts\":1000006000,\"sec\":1700000000,"
		"\"usec\":500006,\"cpu\":1,\"pid\":42,\"tid\":43,\"pmcid\":256,"
		"\"cc_cpu\":1,\"cc_flags\":1,\"npc\":3,"
		"\"pc\":\"0xffffffff81000000;0x401000;0x402000\","
		"\"period\":0}";
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	char path[512];
	uint64_t at;
	unsigned int i;
	int rc;

	base_opts(&o, dir);
	o.blob_json = true;
	o.nr_streams = 1;
	o.streams[0].name = "json";
	w = start(&o, &b, dir);
	for (i = 0; i < rr->n; i++)
		feed(w, &b, &rr->r[i]);
	stop(w, &b);
	load_set(&s, dir, "json", 1700000000);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == rr->n, "json read: %d %u", rc, c.n);
	at = fmt_get64(s.p[1], 8 + 8 * 5);		/* the CALLCHAIN */
	CHECK(at + sizeof(cc) <= s.len[0] && !memcmp(s.p[0] + at, cc, sizeof(cc)),
	      "callchain JSON: %.*s", (int)sizeof(cc), (char *)s.p[0] + at);
	for (i = 0; i < c.n && i < rr->n; i++)
		CHECK(c.it[i].btype == 'j' && c.it[i].ts == rr->r[i].ts &&
		      c.it[i].type == rr->r[i].type, "json message %u", i);
	CHECK(s.p[3][8] == 'j', "type byte");
	free_set(&s);
	snprintf(path, sizeof(path), "%s/c/json.DAT.1700000000", dir);
	check_ldms_rules(path, rr->n);
}

/*
 * PERIOD records: a binary set keeps them as messages; a JSON set gives
 * each callchain the last period of its ring and pmcid (0: none) instead.
 */
static void test_periods(const char *dir, bool json)
{
	static struct ring_recs rr;
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	unsigned int i;
	uint8_t *p;
	int rc;

	memset(&rr, 0, sizeof(rr));
	p = rr_add(&rr, PMCRING_TYPE_PERIOD, 32, 1);
	w32(p, 16, 1); w32(p, 20, 1); w64(p, 24, 5000);
	for (i = 0; i < 2; i++) {	/* ring 1, then ring 0 */
		p = rr_add(&rr, PMCRING_TYPE_CALLCHAIN, 40, 1 - i);
		w32(p, 16, 42); w32(p, 20, 43); w32(p, 24, 1);
		w32(p, 28, (1 - i) << 16); w64(p, 32, 0x401000);
	}
	base_opts(&o, dir);
	o.blob_json = json;
	o.nr_streams = 2;
	o.streams[0].name = json ? "pj" : "pb";
	/* a stream of callchains only: their PERIODs come with them */
	o.streams[1].name = json ? "pjc" : "pbc";
	o.streams[1].types = PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN);
	w = start(&o, &b, dir);
	for (i = 0; i < rr.n; i++)
		feed(w, &b, &rr.r[i]);
	stop(w, &b);
	load_set(&s, dir, o.streams[0].name, 1700000000);
	rc = read_set(&s, &c);
	if (!json) {
		CHECK(rc == FMT_END_CLEAN && c.n == 3 &&
		      c.it[0].type == PMCRING_TYPE_PERIOD && c.it[0].len == 32 &&
		      fmt_get64(c.it[0].data, 24) == 5000,
		      "binary: PERIOD kept: rc %d, %u messages", rc, c.n);
		free_set(&s);
		load_set(&s, dir, o.streams[1].name, 1700000000);
		rc = read_set(&s, &c);
		CHECK(rc == FMT_END_CLEAN && c.n == 3 &&
		      c.it[0].type == PMCRING_TYPE_PERIOD,
		      "callchain stream: PERIOD kept: rc %d, %u messages", rc,
		      c.n);
	} else {
		CHECK(rc == FMT_END_CLEAN && c.n == 2, "json: %d, %u", rc, c.n);
		CHECK(c.n == 2 && strstr(c.it[0].data, "\"period\":5000}") &&
		      strstr(c.it[1].data, "\"period\":0}"),
		      "json periods: %s / %s", c.n ? (char *)c.it[0].data : "",
		      c.n > 1 ? (char *)c.it[1].data : "");
	}
	free_set(&s);
}

/*
 * PERIODs across rolls: each binary set a roll opens starts with the
 * PERIODs in force, one per ring and pmcid (ring 0 first), stamped with
 * the time of the message that rolled it; a later PERIOD replaces its
 * ring's in the sets after it; the set's own messages are the records in
 * order.  A JSON set repeats none (its callchains carry "period").
 */
static void test_roll_periods(const char *dir, bool json)
{
	static struct ring_recs rr;
	const char *name = json ? "rpj" : "rpb";
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	unsigned int i, j, got = 0, sets = 0, head, nper = 0;
	uint64_t p0 = 0;
	long long t;
	uint8_t *p;
	int rc;

	memset(&rr, 0, sizeof(rr));
	p = rr_add(&rr, PMCRING_TYPE_PERIOD, 32, 1);
	w32(p, 16, 1); w32(p, 20, 1); w64(p, 24, 5000);
	p = rr_add(&rr, PMCRING_TYPE_PERIOD, 32, 0);
	w32(p, 16, 1); w32(p, 20, 0); w64(p, 24, 7000);
	for (i = 0; i < 24; i++) {
		if (i == 12) {		/* ring 0 changes its period */
			p = rr_add(&rr, PMCRING_TYPE_PERIOD, 32, 0);
			w32(p, 16, 1); w32(p, 20, 0); w64(p, 24, 9000);
		}
		p = rr_add(&rr, PMCRING_TYPE_CALLCHAIN, 40, i & 1);
		w32(p, 16, 42); w32(p, 20, 43); w32(p, 24, 1);
		w32(p, 28, (i & 1) << 16); w64(p, 32, 0x401000 + i);
	}
	base_opts(&o, dir);
	o.blob_json = json;
	o.nr_streams = 1;
	o.streams[0].name = (char *)name;
	o.streams[0].types = PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN);
	o.roll_bytes = 300;
	w = start(&o, &b, dir);
	for (i = 0; i < rr.n; i++)
		feed(w, &b, &rr.r[i]);
	stop(w, &b);
	for (t = 1700000000; ; t++) {
		load_set(&s, dir, name, t);
		if (!s.p[0]) {
			free_set(&s);
			break;
		}
		rc = read_set(&s, &c);
		CHECK(rc == FMT_END_CLEAN && c.n >= 1 && c.n <= 64,
		      "%s set %lld: rc %d, %u messages", name, t, rc, c.n);
		head = 0;
		if (sets && !json) {
			/* ring 0's PERIOD in force, then ring 1's */
			head = 2;
			for (j = 0; j < 2 && j < c.n; j++) {
				const uint8_t *d = c.it[j].data;

				CHECK(c.it[j].type == PMCRING_TYPE_PERIOD &&
				      c.it[j].len == 32 &&
				      fmt_get32(d, 16) == 1 &&
				      fmt_get32(d, 20) == j &&
				      fmt_get64(d, 24) == (j ? 5000 : p0) &&
				      c.n > 2 && c.it[j].ts == c.it[2].ts &&
				      c.it[j].rt.tv_sec == c.it[2].rt.tv_sec &&
				      c.it[j].rt.tv_nsec == c.it[2].rt.tv_nsec,
				      "%s set %lld: message %u is not ring %u's "
				      "PERIOD in force (%llu)", name, t, j, j,
				      (unsigned long long)(j ? 5000 : p0));
			}
			nper += 2;
		}
		CHECK(fmt_get64(s.p[1], 8) == 8, "%s set %lld: first offset",
		      name, t);
		for (i = head; i < c.n && i < 64; i++, got++) {
			/* JSON: no PERIOD message, the callchains in order */
			while (json && got < rr.n &&
			       rr.r[got].type == PMCRING_TYPE_PERIOD)
				got++;
			CHECK(got < rr.n && c.it[i].ts == rr.r[got].ts,
			      "%s set %lld message %u: not record %u", name, t,
			      i, got);
			if (got < rr.n && rr.r[got].type == PMCRING_TYPE_PERIOD &&
			    rr.r[got].cpu == 0)
				p0 = fmt_get64(rr.r[got].data, 24);
		}
		sets++;
		free_set(&s);
	}
	CHECK(got == rr.n && sets > 3, "%s: %u records in %u sets", name, got,
	      sets);
	CHECK(json || nper == 2 * (sets - 1), "%s: %u repeated PERIODs in %u "
	      "sets", name, nper, sets);
}

/* Allocation record of @type for @pmcid named @name (DYN) into @rr. */
static void ra_alloc(struct ring_recs *rr, unsigned int type, uint32_t pmcid,
		     const char *name)
{
	uint8_t *p = rr_add(rr, type, type == PMCRING_TYPE_PMCALLOCATE ? 40 : 96,
			    0);

	w32(p, 16, pmcid);
	w32(p, 20, 0x100 + pmcid);	/* event */
	if (type == PMCRING_TYPE_PMCALLOCATE)
		w64(p, 32, 4000);	/* rate */
	else
		memcpy(p + 32, name, strlen(name));
}

/* Is message @m the allocation record @type of @pmcid (named @name)? */
static bool ra_is(const struct fmt_item *m, bool json, unsigned int type,
		  uint32_t pmcid, const char *name)
{
	char pat[64];

	if (m->type != type)
		return false;
	if (json) {
		snprintf(pat, sizeof(pat), "\"pmcid\":%u,", pmcid);
		return memmem(m->data, m->len, pat, strlen(pat)) &&
		       (type != PMCRING_TYPE_PMCALLOCATEDYN ||
			memmem(m->data, m->len, name, strlen(name)));
	}
	return m->len == (type == PMCRING_TYPE_PMCALLOCATE ? 40u : 96u) &&
	       fmt_get32(m->data, 16) == pmcid &&
	       fmt_get32(m->data, 20) == 0x100 + pmcid &&
	       (type == PMCRING_TYPE_PMCALLOCATEDYN ?
		!strcmp((const char *)m->data + 32, name) :
		fmt_get64(m->data, 32) == 4000);
}

/*
 * A set opened by a roll starts with the counters allocated so far, in the
 * order they came (PMCALLOCATE and PMCALLOCATEDYN of pmcid 1, then of
 * pmcid 2 once it came), then (binary) the PERIODs in force, all stamped
 * with the first message of its own.
 */
static void test_roll_allocate(const char *dir, bool json)
{
	static struct ring_recs rr;
	const char *name = json ? "raj" : "rab";
	static const unsigned int at[2] = {
		PMCRING_TYPE_PMCALLOCATE, PMCRING_TYPE_PMCALLOCATEDYN,
	};
	static const char *const ev[3] = { "", "cpu-clock", "task-clock" };
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	unsigned int i, j, sets = 0, head, nalloc = 0, reps = 0, own = 0;
	long long t;
	uint8_t *p;
	int rc;

	memset(&rr, 0, sizeof(rr));
	ra_alloc(&rr, PMCRING_TYPE_PMCALLOCATE, 1, "");
	ra_alloc(&rr, PMCRING_TYPE_PMCALLOCATEDYN, 1, ev[1]);
	p = rr_add(&rr, PMCRING_TYPE_PERIOD, 32, 0);
	w32(p, 16, 1); w32(p, 20, 0); w64(p, 24, 7000);
	for (i = 0; i < 24; i++) {
		if (i == 12) {		/* a second counter */
			ra_alloc(&rr, PMCRING_TYPE_PMCALLOCATE, 2, "");
			ra_alloc(&rr, PMCRING_TYPE_PMCALLOCATEDYN, 2, ev[2]);
		}
		p = rr_add(&rr, PMCRING_TYPE_CALLCHAIN, 40, 0);
		w32(p, 16, 42); w32(p, 20, 43); w32(p, 24, 1 + (i >= 12));
		w32(p, 28, 0); w64(p, 32, 0x401000 + i);
	}
	base_opts(&o, dir);
	o.blob_json = json;
	o.nr_streams = 1;
	o.streams[0].name = (char *)name;
	o.streams[0].types = PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN) |
			     PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATE) |
			     PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATEDYN);
	o.roll_bytes = json ? 900 : 400;
	w = start(&o, &b, dir);
	for (i = 0; i < rr.n; i++)
		feed(w, &b, &rr.r[i]);
	stop(w, &b);
	for (t = 1700000000; ; t++) {
		load_set(&s, dir, name, t);
		if (!s.p[0]) {
			free_set(&s);
			break;
		}
		rc = read_set(&s, &c);
		CHECK(rc == FMT_END_CLEAN && c.n >= 1 && c.n <= 64,
		      "%s set %lld: rc %d, %u messages", name, t, rc, c.n);
		head = sets ? nalloc + !json : 0;
		CHECK(c.n > head, "%s set %lld: %u messages, %u repeated",
		      name, t, c.n, head);
		for (j = 0; sets && j < head && j < c.n; j++) {
			const struct fmt_item *m = &c.it[j];
			bool ok = j < nalloc ?
				  ra_is(m, json, at[j & 1], 1 + j / 2,
					ev[1 + j / 2]) :
				  m->type == PMCRING_TYPE_PERIOD &&
				  fmt_get64(m->data, 24) == 7000;

			CHECK(ok && c.n > head && m->ts == c.it[head].ts &&
			      m->rt.tv_sec == c.it[head].rt.tv_sec &&
			      m->rt.tv_nsec == c.it[head].rt.tv_nsec,
			      "%s set %lld: message %u is not repeat %u of "
			      "%u, stamped as message %u", name, t, j, j, head,
			      head);
			reps++;
		}
		for (i = head; i < c.n; i++) {
			own++;
			/* an allocation record came: later sets repeat it */
			if (c.it[i].type == PMCRING_TYPE_PMCALLOCATE ||
			    c.it[i].type == PMCRING_TYPE_PMCALLOCATEDYN)
				nalloc++;
		}
		sets++;
		free_set(&s);
	}
	CHECK(own == rr.n - (json ? 1 : 0) && sets > 3 && nalloc == 4,
	      "%s: %u messages of their own in %u sets (%u records), %u "
	      "counters", name, own, sets, rr.n, nalloc / 2);
	CHECK(reps > (sets - 1) * (2 + !json), "%s: %u repeats in %u sets",
	      name, reps, sets);
}

/* Roll every ~200 bytes: every set starts at offset 8 and holds whole
 * messages; together they hold every record in order. */
static void test_roll_size(const char *dir, const struct ring_recs *rr)
{
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	unsigned int i, j, got = 0, sets = 0, reps = 0;
	long long t;
	int rc;

	base_opts(&o, dir);
	o.nr_streams = 1;
	o.streams[0].name = "roll";
	o.roll_bytes = 200;
	w = start(&o, &b, dir);
	for (i = 0; i < rr->n; i++)
		feed(w, &b, &rr->r[i]);
	stop(w, &b);
	for (t = 1700000000; ; t++) {
		load_set(&s, dir, "roll", t);
		if (!s.p[0]) {
			free_set(&s);
			break;
		}
		sets++;
		rc = read_set(&s, &c);
		CHECK(rc == FMT_END_CLEAN && c.n >= 1, "set %lld: %d %u", t, rc, c.n);
		CHECK(fmt_get64(s.p[1], 8) == 8, "set %lld: first offset", t);
		/*
		 * a later set first repeats the counters allocated so far,
		 * stamped as its first message of its own (test_roll_allocate)
		 */
		for (j = 0; sets > 1 && j < c.n && got < rr->n &&
		     c.it[j].ts == rr->r[got].ts &&
		     memcmp(c.it[j].data, rr->r[got].data, c.it[j].len); j++)
			reps++;
		CHECK(s.len[0] <= 200 || c.n == j + 1, "set %lld: %zu bytes",
		      t, s.len[0]);
		for (i = j; i < c.n; i++, got++)
			CHECK(got < rr->n && c.it[i].ts == rr->r[got].ts,
			      "set %lld message %u", t, i);
		free_set(&s);
	}
	CHECK(got == rr->n && sets > 3 && reps >= sets - 1,
	      "%u messages in %u sets, %u repeated", got, sets, reps);
}

/* Roll every second of record time. */
static void test_roll_time(const char *dir)
{
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	uint8_t rec[24];
	struct fmt_rec r = { rec, 24, PMCRING_TYPE_USERDATA, 0, 0 };
	unsigned int i;
	int rc;

	base_opts(&o, dir);
	o.nr_streams = 1;
	o.streams[0].name = "tick";
	o.roll_secs = 1;
	w = start(&o, &b, dir);
	/* realtime 1700000000.5 + 0.4 s * i: seconds 0,0,1,1,2,2,2 */
	for (i = 0; i < 7; i++) {
		memset(rec, 0, sizeof(rec));
		r.ts = T0 + 400000000ull * i;
		w32(rec, 0, 0xEE0D0018u);
		w64(rec, 8, r.ts);
		w32(rec, 16, i);
		feed(w, &b, &r);
	}
	stop(w, &b);
	/* a set rolls when a record is a second past its first one */
	load_set(&s, dir, "tick", 1700000000);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == 2, "time set 0: %u", c.n);
	free_set(&s);
	load_set(&s, dir, "tick", 1700000001);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == 2 && fmt_get64(s.p[1], 8) == 8,
	      "time set 1: %u", c.n);
	free_set(&s);
	load_set(&s, dir, "tick", 1700000002);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == 3, "time set 2: %u", c.n);
	free_set(&s);
}

/* A batch killed after DAT, before the index: OFFSET points at nothing new. */
static void test_kill(const char *dir, const struct ring_recs *rr)
{
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	unsigned int i;
	int rc;

	base_opts(&o, dir);
	o.nr_streams = 1;
	o.streams[0].name = "kill";
	w = start(&o, &b, dir);
	run(&b);
	for (i = 0; i < rr->n; i++)
		feed(w, &b, &rr->r[i]);
	out_batch_prepare(&b);
	for (i = 0; i < b.nr_ops; i++)
		if (OUT_PHASE_KIND(b.ops[i].phase) != OUT_DATA)
			b.ops[i].len = 0;
	run(&b);
	load_set(&s, dir, "kill", 1700000000);
	CHECK(s.len[0] > 8 && s.len[1] == 8, "DAT %zu OFFSET %zu", s.len[0],
	      s.len[1]);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == 0, "killed set: %d %u", rc, c.n);
	free_set(&s);
	fmt_writer_free(w);
	out_batch_free(&b);
}

/*
 * A batch of three segments killed after the first segment and the DAT of
 * the second: the set holds exactly the messages of the first, clean.  Run
 * to the end, the same batch holds them all.
 */
static void test_kill_segments(const char *dir, const struct ring_recs *rr)
{
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	unsigned int i, n = 0, seg = 0;
	uint64_t sum = 0, kept = 0;
	size_t keep[4096];
	int rc;

	base_opts(&o, dir);
	o.nr_streams = 1;
	o.streams[0].name = "segs";
	/* 2.5 segments and their index entries: the batch holds them all */
	w = start_n(&o, &b, dir, 4096, 8 * BLOB_SEG_BYTES);
	run(&b);
	while (sum < 5 * BLOB_SEG_BYTES / 2) {
		const struct fmt_rec *r = &rr->r[n % rr->n];

		REQUIRE(!fmt_record(w, &b, r), "record %u", n);
		sum += r->len;
		n++;
	}
	REQUIRE(!fmt_flush(w, &b), "flush");
	out_batch_prepare(&b);
	REQUIRE(b.nr_ops <= 4096, "ops %u", b.nr_ops);
	for (i = 0; i < b.nr_ops; i++) {
		keep[i] = b.ops[i].len;
		if (b.ops[i].phase / OUT_NR_PHASES > seg)
			seg = b.ops[i].phase / OUT_NR_PHASES;
		if (b.ops[i].phase > OUT_PHASE(1, OUT_DATA))
			b.ops[i].len = 0;
	}
	CHECK(seg >= 2, "%u segments in %llu bytes", seg + 1,
	      (unsigned long long)sum);
	REQUIRE(!out_batch_run_sync(&b), "run");
	load_set(&s, dir, "segs", 1700000000);
	rc = read_set(&s, &c);
	for (i = 0; i < c.n; i++)
		kept += rr->r[i % rr->n].len;
	/* segment 0 whole, segment 1's DAT only: its index is not there */
	CHECK(rc == FMT_END_CLEAN && c.n > 0 && c.n < n,
	      "killed in segment 1: %d, %u of %u messages", rc, c.n, n);
	CHECK(s.len[1] == 8 + 8 * (size_t)c.n &&
	      s.len[2] == 8 + 16 * (size_t)c.n && s.len[3] == 8 + (size_t)c.n,
	      "index files %zu %zu %zu for %u messages", s.len[1], s.len[2],
	      s.len[3], c.n);
	CHECK(s.len[0] > 8 + kept && s.len[0] < 8 + sum,
	      "DAT %zu: segment 0 is %llu bytes, all %llu", s.len[0],
	      (unsigned long long)kept, (unsigned long long)sum);
	free_set(&s);
	/* what the kill left out, as the rest of the run would write it */
	for (i = 0; i < b.nr_ops; i++)
		if (b.ops[i].phase > OUT_PHASE(1, OUT_DATA))
			b.ops[i].len = keep[i];
	REQUIRE(!out_batch_run_sync(&b), "run the rest");
	out_batch_reset(&b);
	load_set(&s, dir, "segs", 1700000000);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == n && s.len[0] == 8 + sum,
	      "whole batch: %d, %u of %u", rc, c.n, n);
	free_set(&s);
	fmt_writer_free(w);
	out_batch_free(&b);
}

static size_t file_size(const char *dir, const char *stream, const char *ext)
{
	char path[512];
	struct stat st;

	snprintf(path, sizeof(path), "%s/c/%s.%s.1700000000", dir, stream, ext);
	return stat(path, &st) ? 0 : (size_t)st.st_size;
}

/* Make @op write its first @len bytes only. */
static void cut_op(struct out_batch *b, struct out_op *op, size_t len)
{
	struct iovec *iov = &b->iov[op->iov_first];
	unsigned int i;

	op->len = len;
	for (i = 0; i < op->iov_cnt; i++) {
		if (iov[i].iov_len > len)
			iov[i].iov_len = len;
		len -= iov[i].iov_len;
	}
}

/*
 * A write that fails in the magics of a new set (TIMING's cut at 3
 * bytes, nothing after it): the set holds no message, and empty or
 * partial files would fail LDMS's magic check, so fmt_abort() removes it.
 */
static void test_magic_cut(const char *dir, const struct ring_recs *rr)
{
	static const char *const ext[] = { "DAT", "OFFSET", "TIMING", "TYPE" };
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	char path[512];
	struct stat st;
	bool tail = false;
	unsigned int i, left = 0;

	base_opts(&o, dir);
	o.nr_streams = 1;
	o.streams[0].name = "magiccut";
	w = start(&o, &b, dir);
	for (i = 0; i < rr->n; i++)
		feed(w, &b, &rr->r[i]);
	REQUIRE(!fmt_flush(w, &b), "flush");
	out_batch_prepare(&b);
	for (i = 0; i < b.nr_ops; i++) {
		struct out_op *op = &b.ops[i];

		if (!tail && strstr(op->f->path, ".TIMING.")) {
			cut_op(&b, op, 3);
			tail = true;
		} else if (tail) {
			cut_op(&b, op, 0);
		}
	}
	REQUIRE(tail, "no TIMING write");
	REQUIRE(!out_batch_run_sync(&b), "run");
	out_batch_reset(&b);
	REQUIRE(!fmt_abort(w), "abort");
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "%s/c/magiccut.%s.1700000000",
			 dir, ext[i]);
		left += !stat(path, &st);
	}
	CHECK(left == 0, "a set cut in its magics: %u of its files left",
	      left);
	fmt_writer_free(w);
	out_batch_free(&b);
}

/*
 * A write that fails part-way (a full disk): the first batch is on disk,
 * the second wrote its DAT and then @cut_ext (TIMING or OFFSET) only up
 * to @cut bytes, mid-entry, and nothing after it.  fmt_abort() cuts every
 * file back to the @keep messages they all hold, whole: the reader calls
 * the set clean, and LDMS's rules (JSON) hold.
 */
static void test_write_fail(const char *dir, const struct ring_recs *rr,
			    bool json, const char *cut_ext, size_t cut,
			    unsigned int keep)
{
	char stream[32];
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct collect c;
	struct set s;
	bool tail = false;
	size_t dat1, dat2 = 0, entry;
	char path[512];
	unsigned int i;
	int rc;

	snprintf(stream, sizeof(stream), "fail%s%s", cut_ext, json ? "j" : "");
	base_opts(&o, dir);
	o.nr_streams = 1;
	o.streams[0].name = stream;
	o.blob_json = json;
	w = start(&o, &b, dir);
	run(&b);
	for (i = 0; i < rr->n; i++)
		feed(w, &b, &rr->r[i]);
	REQUIRE(!fmt_flush(w, &b), "flush");
	run(&b);
	dat1 = file_size(dir, stream, "DAT");
	/* the second batch: DAT whole, then @cut_ext cut short */
	for (i = 0; i < rr->n; i++)
		feed(w, &b, &rr->r[i]);
	REQUIRE(!fmt_flush(w, &b), "flush");
	out_batch_prepare(&b);
	snprintf(path, sizeof(path), ".%s.", cut_ext);
	for (i = 0; i < b.nr_ops; i++) {
		struct out_op *op = &b.ops[i];

		if (strstr(op->f->path, path)) {
			REQUIRE(op->len > cut, "%s write of %llu bytes",
				cut_ext, (unsigned long long)op->len);
			cut_op(&b, op, cut);
			tail = true;	/* the write that failed */
		} else if (tail) {
			cut_op(&b, op, 0);	/* never ran */
		}
	}
	REQUIRE(tail, "no %s write", cut_ext);
	REQUIRE(!out_batch_run_sync(&b), "run");
	out_batch_reset(&b);
	entry = strcmp(cut_ext, "TIMING") ? 8 : 16;
	CHECK((file_size(dir, stream, cut_ext) - 8) % entry,
	      "%s: the failure leaves it mid-entry", cut_ext);
	REQUIRE(!fmt_abort(w), "abort");
	load_set(&s, dir, stream, 1700000000);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == keep, "%s cut at %zu: %d, %u "
	      "messages, expected %u", cut_ext, cut, rc, c.n, keep);
	CHECK(s.len[1] == 8 + 8 * (size_t)keep &&
	      s.len[2] == 8 + 16 * (size_t)keep && s.len[3] == 8 + (size_t)keep,
	      "%s cut: index files %zu %zu %zu for %u messages", cut_ext,
	      s.len[1], s.len[2], s.len[3], keep);
	for (i = rr->n; i < keep; i++)
		dat2 += json ? 0 : rr->r[i - rr->n].len;
	if (!json)
		CHECK(s.len[0] == dat1 + dat2, "%s cut: DAT %zu, expected %zu",
		      cut_ext, s.len[0], dat1 + dat2);
	else
		CHECK(s.len[0] >= dat1, "%s cut: DAT %zu < %zu", cut_ext,
		      s.len[0], dat1);
	free_set(&s);
	fmt_writer_free(w);
	out_batch_free(&b);
	if (json) {
		snprintf(path, sizeof(path), "%s/c/%s.DAT.1700000000", dir,
			 stream);
		check_ldms_rules(path, keep);
	}
}

/* One whole run of @rr into stream @stream: 0 or fmt_begin()'s error. */
static int one_run(const char *dir, const struct ring_recs *rr,
		   const char *stream)
{
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	unsigned int i;
	int err;

	base_opts(&o, dir);
	o.nr_streams = 1;
	o.streams[0].name = (char *)stream;
	REQUIRE(!out_batch_init(&b, 256, 1 << 20), "batch");
	w = fmt_writer_new(&o);
	REQUIRE(w, "writer");
	err = fmt_begin(w, &b);
	if (!err) {
		for (i = 0; i < rr->n; i++)
			feed(w, &b, &rr->r[i]);
		finish(w, &b, T0 + 100000);
	}
	fmt_writer_free(w);
	out_batch_free(&b);
	return err;
}

/* $t of the sets of @stream in @dir/c, sorted; how many (at most @max). */
static unsigned int list_sets(const char *dir, const char *stream,
			      long long *t, unsigned int max)
{
	char sub[512], pat[64];
	struct dirent *de;
	unsigned int n = 0, i, j;
	long long x;
	DIR *d;

	snprintf(sub, sizeof(sub), "%s/c", dir);
	snprintf(pat, sizeof(pat), "%s.DAT.", stream);
	d = opendir(sub);
	REQUIRE(d, "opendir %s", sub);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, pat, strlen(pat)) || n == max)
			continue;
		x = atoll(de->d_name + strlen(pat));
		for (i = n++; i && t[i - 1] > x; i--)
			t[i] = t[i - 1];
		t[i] = x;
	}
	closedir(d);
	for (i = 0; i + 1 < n; i++)
		for (j = i + 1; j < n; j++)
			CHECK(t[i] != t[j], "set %lld twice", t[i]);
	return n;
}

static void create_empty(const char *dir, const char *name, long long t)
{
	char path[512];
	int fd;

	snprintf(path, sizeof(path), "%s/c/%s.%lld", dir, name, t);
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0644);
	REQUIRE(fd >= 0, "create %s: %s", path, strerror(errno));
	close(fd);
}

/*
 * Two runs in the same second (the test session's start, 1700000000)
 * into one directory: the second gets the next free $t, max(time(NULL),
 * $t + 1), and both sets stay whole.  A set whose name is taken by one
 * stale file only (a TYPE) is skipped and that file kept; a stream whose
 * names are taken far ahead of the clock gets the one after the highest.
 */
static void test_two_runs(const char *dir, const struct ring_recs *rr)
{
	long long t[8], now, k;
	struct collect c;
	struct set s;
	size_t len[2];
	unsigned int i, n;
	int rc;

	now = (long long)time(NULL);
	REQUIRE(!one_run(dir, rr, "twice"), "first run");
	REQUIRE(!one_run(dir, rr, "twice"), "second run");
	n = list_sets(dir, "twice", t, 8);
	CHECK(n == 2 && t[0] == 1700000000 && t[1] >= now &&
	      t[1] <= (long long)time(NULL), "two runs: %u sets, $t %lld %lld",
	      n, t[0], n > 1 ? t[1] : 0);
	for (i = 0; i < n && i < 2; i++) {
		load_set(&s, dir, "twice", t[i]);
		rc = read_set(&s, &c);
		CHECK(rc == FMT_END_CLEAN && c.n == rr->n && s.p[2] && s.p[3],
		      "set %lld: %d, %u messages", t[i], rc, c.n);
		len[i] = s.len[0];
		free_set(&s);
	}
	CHECK(n < 2 || len[0] == len[1], "DAT %zu and %zu bytes", len[0],
	      len[1]);

	/* a stale TYPE file takes the name: skipped, and kept */
	create_empty(dir, "stale.TYPE", 1700000000);
	REQUIRE(!one_run(dir, rr, "stale"), "run beside a stale file");
	n = list_sets(dir, "stale", t, 8);
	CHECK(n == 1 && t[0] >= now, "stale: %u sets, $t %lld", n, t[0]);
	load_set(&s, dir, "stale", 1700000000);
	CHECK(!s.p[0] && !s.p[1] && !s.p[2] && s.p[3] && !s.len[3],
	      "the stale set was touched");
	free_set(&s);

	/*
	 * names taken far ahead of the clock (a run that rolled faster
	 * than once a second): the set goes after the highest, untouched
	 */
	create_empty(dir, "full.DAT", 1700000000);
	for (k = now; k < now + 64 + 60; k++)
		create_empty(dir, "full.DAT", k);
	rc = one_run(dir, rr, "full");
	CHECK(rc == 0, "names taken ahead: %s", strerror(-rc));
	load_set(&s, dir, "full", now);
	CHECK(s.p[0] && !s.len[0] && !s.p[1] && !s.p[2] && !s.p[3],
	      "a taken set was touched");
	free_set(&s);
	load_set(&s, dir, "full", now + 64 + 60);
	rc = read_set(&s, &c);
	CHECK(rc == FMT_END_CLEAN && c.n == rr->n,
	      "the set after the taken ones: %d, %u messages", rc, c.n);
	free_set(&s);
}

/*
 * What blob_msg_writer stores for `record --ldms ...,batch=`: one OFFSET,
 * TIMING and TYPE entry per message, several whole records in each: read
 * back record by record, each with its message's TIMING.  The last message
 * runs to DAT's end (a part of a record there: truncated); a set of one
 * message is batched too.
 */
static void test_batched(const struct ring_recs *rr)
{
	struct img *dat = calloc(1, sizeof(*dat)), *off = calloc(1, sizeof(*off));
	struct img *tim = calloc(1, sizeof(*tim)), *typ = calloc(1, sizeof(*typ));
	struct fmt_blob_set bs;
	struct collect c;
	unsigned int i, msgs = 0;
	size_t bad;
	int rc;

	REQUIRE(dat && off && tim && typ && rr->n >= 6, "setup");
	bytes(dat, 0, "blobdat", 8);
	bytes(off, 0, "bloboff", 8);
	bytes(tim, 0, "blobtim", 8);
	bytes(typ, 0, "blobtyp", 8);
	for (i = 0; i < rr->n; i++) {
		/* messages of 1, 2, 3, ... records */
		if (i == msgs * (msgs + 1) / 2) {
			le(off, off->len, dat->len, 8);
			le(tim, tim->len, 1700000000 + msgs, 8);
			le(tim, tim->len, 0, 8);
			le(typ, typ->len, 's', 1);
			msgs++;
		}
		append(dat, rr->r[i].data, rr->r[i].len);
	}
	bs = (struct fmt_blob_set){
		.dat = dat->b, .dat_len = dat->len, .off = off->b,
		.off_len = off->len, .tim = tim->b, .tim_len = tim->len,
		.typ = typ->b, .typ_len = typ->len,
	};
	c.n = 0;
	rc = fmt_blob_read(&bs, collect_cb, &c, &bad);
	CHECK(rc == FMT_END_CLEAN && c.n == rr->n, "batched: rc %d, %u of %u "
	      "records in %u messages", rc, c.n, rr->n, msgs);
	for (i = 0; i < rr->n && i < c.n && i < 64; i++)
		CHECK(c.it[i].len == rr->r[i].len &&
		      !memcmp(c.it[i].data, rr->r[i].data, rr->r[i].len) &&
		      c.it[i].ts == rr->r[i].ts && c.it[i].has_rt,
		      "batched: record %u", i);
	CHECK(c.n > 3 && c.it[2].rt.tv_sec == 1700000001 &&
	      c.it[3].rt.tv_sec == 1700000002, "batched: a message's TIMING");
	/* the last record cut: the set ends before it, truncated */
	bs.dat_len -= 3;
	c.n = 0;
	rc = fmt_blob_read(&bs, collect_cb, &c, &bad);
	CHECK(rc == FMT_END_TRUNCATED && c.n == rr->n - 1,
	      "batched, cut: rc %d, %u records", rc, c.n);
	/* all in one message */
	bs.dat_len = dat->len;
	bs.off_len = bs.typ_len = 16;
	bs.tim_len = 24;
	c.n = 0;
	rc = fmt_blob_read(&bs, collect_cb, &c, &bad);
	CHECK(rc == FMT_END_CLEAN && c.n == rr->n, "one message: rc %d, %u",
	      rc, c.n);
	free(dat);
	free(off);
	free(tim);
	free(typ);
}

int main(void)
{
	char *dir = scratch_dir();
	struct ring_recs rr;

	build_records(&rr);
	test_golden(dir, &rr);
	test_json(dir, &rr);
	test_periods(dir, false);
	test_periods(dir, true);
	test_roll_size(dir, &rr);
	test_roll_time(dir);
	test_roll_periods(dir, false);
	test_roll_periods(dir, true);
	test_roll_allocate(dir, false);
	test_roll_allocate(dir, true);
	test_kill(dir, &rr);
	test_kill_segments(dir, &rr);
	/* TIMING cut after 2 entries and 5 bytes: only the first batch */
	test_magic_cut(dir, &rr);
	test_write_fail(dir, &rr, false, "TIMING", 37, rr.n);
	test_write_fail(dir, &rr, true, "TIMING", 37, rr.n);
	/* OFFSET cut after 3 entries and 3 bytes: 3 more messages */
	test_write_fail(dir, &rr, false, "OFFSET", 27, rr.n + 3);
	test_write_fail(dir, &rr, true, "OFFSET", 27, rr.n + 3);
	test_two_runs(dir, &rr);
	test_batched(&rr);
	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_blob: all checks passed\n");
	return t_failed;
}
