// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the pmclog writer of pmcring(1) writes FreeBSD's bytes
 * exactly (INITIALIZE, records with their pmclog lengths and not the ring's
 * padding, PMCALLOCATE as PMCALLOCATEDYN and one of those per counter,
 * CLOSELOG, PERIOD records left out and their periods in FILE.periods);
 * libpmcring's
 * pmclog(3)-style parser and the command's reader read every record back;
 * every prefix of the file reads without error.
 */
#include "test_fmt_common.h"
#include <libpmcring.h>

static void expected_file(struct img *exp, const struct ring_recs *rr,
			  bool keep_generated, uint64_t end_ts)
{
	struct img rec;
	unsigned int i;

	memset(exp, 0, sizeof(*exp));
	/* INITIALIZE, 112 bytes: header 0xEE 03 0070, then the body. */
	le(exp, 0, 0xEE030070u, 4);
	le(exp, 4, 0, 4);
	le(exp, 8, T0, 8);
	le(exp, 16, 0x0A000000u, 4);		/* PMC_VERSION */
	le(exp, 20, 0x400, 4);			/* PMC_CPU_GENERIC */
	le(exp, 24, 1000000000u, 8);		/* ns timestamps */
	le(exp, 32, 1700000000u, 8);
	le(exp, 40, 500000000u, 8);
	bytes(exp, 48, "GenuineIntel-6-55-4", 19);
	le(exp, 111, 0, 1);
	for (i = 0; i < rr->n; i++) {
		const struct fmt_rec *r = &rr->r[i];

		if (r->type == PMCRING_TYPE_PMCALLOCATE) {
			/* PMCALLOCATEDYN, 96 bytes, name at 32 */
			memset(&rec, 0, sizeof(rec));
			le(&rec, 0, 0xEE110060u, 4);
			le(&rec, 8, r->ts, 8);
			le(&rec, 16, 0x100, 4);
			le(&rec, 20, 0x3c, 4);
			le(&rec, 24, 0, 4);
			bytes(&rec, 32, "cpu-clock", 9);
			le(&rec, 95, 0, 1);
			append(exp, rec.b, rec.len);
			continue;
		}
		if (r->type == PMCRING_TYPE_GENERATED && !keep_generated)
			continue;
		append(exp, r->data, r->len);
	}
	memset(&rec, 0, sizeof(rec));
	le(&rec, 0, 0xEE010010u, 4);
	le(&rec, 8, end_ts, 8);
	append(exp, rec.b, rec.len);
}

static void write_file_p(const char *path, const struct ring_recs *rr,
			 bool keep_generated, bool periods, uint64_t end_ts)
{
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	unsigned int i;

	test_opts(&o, FMT_PMCLOG, path);
	o.keep_generated = keep_generated;
	o.periods = periods;
	REQUIRE(!out_batch_init(&b, 64, 4096), "batch");
	w = fmt_writer_new(&o);
	REQUIRE(w, "writer");
	REQUIRE(!fmt_begin(w, &b), "begin");
	for (i = 0; i < rr->n; i++)
		feed(w, &b, &rr->r[i]);
	finish(w, &b, end_ts);
	fmt_writer_free(w);
	out_batch_free(&b);
}

static void write_file(const char *path, const struct ring_recs *rr,
		       bool keep_generated, uint64_t end_ts)
{
	write_file_p(path, rr, keep_generated, false, end_ts);
}


struct collect {
	unsigned int	n;
	uint32_t	types[64];
	uint64_t	ts[64];
	size_t		lens[64];
};

static int collect_cb(const struct fmt_item *it, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 64) {
		c->types[c->n] = it->type;
		c->ts[c->n] = it->ts;
		c->lens[c->n] = it->len;
	}
	c->n++;
	return 0;
}

/* libpmcring's FreeBSD-style parser must read the file without an error. */
static void parse_with_libpmcring(const struct img *exp)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	struct pmcring_log_ev ev;
	unsigned int n = 0;

	REQUIRE(l, "pmcring_log_open");
	REQUIRE(!pmcring_log_feed(l, exp->b, exp->len), "feed");
	while (pmcring_log_read(l, &ev) == 0) {
		if (n == 0)
			CHECK(ev.pl_type == PMCRING_TYPE_INITIALIZE &&
			      ev.pl_u.pl_i.pl_version == 0x0A000000u &&
			      ev.pl_u.pl_i.pl_tsc_freq == 1000000000u,
			      "INITIALIZE as parsed");
		if (ev.pl_type == PMCRING_TYPE_PMCALLOCATEDYN &&
		    ev.pl_u.pl_ad.pl_pmcid == 0x100)
			CHECK(!strcmp(ev.pl_u.pl_ad.pl_evname, "cpu-clock"),
			      "evname %s", ev.pl_u.pl_ad.pl_evname);
		n++;
	}
	CHECK(ev.pl_state == PMCRING_LOG_EOF, "parser state %d (%s) after %u",
	      ev.pl_state, ev.pl_reason ? ev.pl_reason : "", n);
	pmcring_log_close(l);
}

/*
 * 7. FILE.periods: PERIOD records stay out of the file; the sidecar holds
 * the magic, the start time and each CALLCHAIN's period: the last PERIOD
 * of its ring and pmcid, else its counter's fixed period.  300 samples
 * cross slabs and batches.
 */
static void periods_sidecar(const char *path)
{
	static struct ring_recs rr;
	struct img *exp = calloc(1, sizeof(*exp));
	struct img *side = calloc(1, sizeof(*side));
	char spath[300];
	const uint8_t *ent;
	uint8_t *got, *p;
	size_t len, n, bad;
	struct collect c;
	unsigned int i, nc = 0;
	int rc;

	REQUIRE(exp && side, "calloc");
	snprintf(spath, sizeof(spath), "%s.periods", path);
	memset(&rr, 0, sizeof(rr));
	memset(exp, 0, sizeof(*exp));
	/* magic, then 1700000000.5 s in ns */
	bytes(side, 0, "pmcrprd", 8);
	le(side, 8, 1700000000500000000ull, 8);
#define CC(cpu, pmcid, want) do {					\
		p = rr_add(&rr, PMCRING_TYPE_CALLCHAIN, 40, cpu);	\
		w32(p, 16, 42); w32(p, 20, 43); w32(p, 24, pmcid);	\
		w32(p, 28, (cpu) << 16); w64(p, 32, 0x401000 + nc);	\
		append(exp, p, 40);					\
		le(side, 16 + 8 * nc++, want, 8);			\
	} while (0)
#define PERIOD(cpu, pmcid, v) do {					\
		p = rr_add(&rr, PMCRING_TYPE_PERIOD, 32, cpu);		\
		w32(p, 16, pmcid); w64(p, 24, v);			\
	} while (0)
	/* pmcid 1 in frequency mode, 3 with the fixed period 100000 */
	p = rr_add(&rr, PMCRING_TYPE_PMCALLOCATE, 40, 0);
	w32(p, 16, 1); w32(p, 24, PMCRING_CTR_F_FREQ); w64(p, 32, 1000);
	p = rr_add(&rr, PMCRING_TYPE_PMCALLOCATE, 40, 0);
	w32(p, 16, 3); w64(p, 32, 100000);
	CC(0, 1, 0);			/* none yet */
	CC(1, 3, 100000);		/* PMCALLOCATE's rate */
	PERIOD(0, 1, 1000);
	CC(0, 1, 1000);
	PERIOD(1, 1, 2000);
	CC(1, 1, 2000);
	CC(0, 1, 1000);			/* ring 0's own */
	CC(0, 2, 0);			/* another pmcid: none */
	PERIOD(0, 2, 77);
	PERIOD(0, 1, 1500);
	CC(0, 2, 77);
	CC(0, 1, 1500);
	PERIOD(0, 64, 5);		/* a pmcid beyond what is kept */
	CC(0, 64, 0);
	PERIOD(5, 1, 9);		/* a ring beyond nr_cpus (uprod) */
	CC(5, 1, 9);
	for (i = 0; i < 300; i++)
		CC(i & 1, 1, i & 1 ? 2000 : 1500);
#undef CC
#undef PERIOD
	write_file_p(path, &rr, false, true, T0 + 100000);
	got = read_file(path, &len);
	REQUIRE(got, "read %s", path);
	/* INITIALIZE, 2 PMCALLOCATEDYN, the CALLCHAINs, CLOSELOG: no PERIOD */
	CHECK(len == 112 + 2 * 96 + exp->len + 16, "file of %zu bytes", len);
	if (len == 112 + 2 * 96 + exp->len + 16)
		expect_bytes("pmclog with periods", got + 112 + 2 * 96,
			     exp->len, exp->b, exp->len);
	memset(&c, 0, sizeof(c));
	rc = fmt_pmclog_read(got, len, collect_cb, &c, &bad);
	CHECK(rc == FMT_END_CLEAN && c.n == nc + 4, "read back: rc %d, %u",
	      rc, c.n);
	free(got);
	got = read_file(spath, &len);
	REQUIRE(got, "read %s", spath);
	expect_bytes("FILE.periods", got, len, side->b, side->len);
	/* the reader: every entry, the recording named */
	{
		struct timespec start = { 1700000000, 500000000 };
		struct timespec other = { 1700000000, 500000001 };

		rc = fmt_periods_read(got, len, &start, &ent, &n);
		CHECK(rc == 0 && n == nc && fmt_get64(ent, 8 * 2) == 1000 &&
		      fmt_get64(ent, 8 * (nc - 1)) == 2000,
		      "fmt_periods_read: rc %d, %zu entries", rc, n);
		CHECK(fmt_periods_read(got, len, &other, &ent, &n) == -ESTALE,
		      "another recording's sidecar");
		CHECK(fmt_periods_read(got, len - 3, NULL, &ent, &n) == 0 &&
		      n == nc - 1, "a cut entry is not one: %zu", n);
		CHECK(fmt_periods_read(got, 15, NULL, &ent, &n) == -EINVAL,
		      "short header");
		got[0] ^= 1;
		CHECK(fmt_periods_read(got, len, NULL, &ent, &n) == -EINVAL,
		      "bad magic");
	}
	free(got);
	/* without periods: an older FILE.periods goes */
	write_file(path, &rr, false, T0 + 100000);
	CHECK(access(spath, F_OK) && errno == ENOENT,
	      "stale %s left behind", spath);
	free(exp);
	free(side);
}

int main(void)
{
	char *dir = scratch_dir(), path[256];
	struct ring_recs rr;
	struct img *exp = calloc(1, sizeof(*exp));
	struct collect c, full;
	size_t len, cut, bad;
	uint8_t *got;
	unsigned int i, records;
	int rc;

	build_records(&rr);
	snprintf(path, sizeof(path), "%s/out.pmclog", dir);

	/* 1. golden bytes, GENERATED dropped */
	write_file(path, &rr, false, T0 + 100000);
	expected_file(exp, &rr, false, T0 + 100000);
	got = read_file(path, &len);
	REQUIRE(got, "read %s", path);
	expect_bytes("pmclog file", got, len, exp->b, exp->len);
	free(got);

	/* 2. golden bytes with GENERATED kept (the --generate test mode) */
	write_file(path, &rr, true, T0 + 100000);
	expected_file(exp, &rr, true, T0 + 100000);
	got = read_file(path, &len);
	expect_bytes("pmclog file, generated kept", got, len, exp->b, exp->len);

	/* 3. FreeBSD-style parse, and the command's own reader */
	parse_with_libpmcring(exp);
	memset(&c, 0, sizeof(c));
	rc = fmt_pmclog_read(got, len, collect_cb, &c, &bad);
	CHECK(rc == FMT_END_CLEAN, "read rc %d", rc);
	CHECK(c.n == rr.n + 2, "%u records read, expected %u", c.n, rr.n + 2);
	CHECK(c.types[0] == PMCRING_TYPE_INITIALIZE, "first");
	CHECK(c.types[c.n - 1] == PMCRING_TYPE_CLOSELOG, "last");
	for (i = 0; i < rr.n && i + 1 < c.n; i++) {
		uint32_t want = rr.r[i].type == PMCRING_TYPE_PMCALLOCATE ?
				PMCRING_TYPE_PMCALLOCATEDYN : rr.r[i].type;

		CHECK(c.types[i + 1] == want && c.ts[i + 1] == rr.r[i].ts,
		      "record %u: type %u ts %llu", i, c.types[i + 1],
		      (unsigned long long)c.ts[i + 1]);
	}
	CHECK(fmt_detect(got, len) == FMT_PMCLOG, "detect");

	/* 4. every prefix (a SIGKILL) reads, up to its last whole record */
	full = c;
	for (cut = 0; cut <= len; cut++) {
		size_t whole = 0;

		records = 0;
		for (i = 0; i < full.n; whole += full.lens[i++])
			if (whole + full.lens[i] <= cut)
				records++;
		c.n = 0;
		rc = fmt_pmclog_read(got, cut, collect_cb, &c, &bad);
		CHECK(rc == FMT_END_CLEAN || rc == FMT_END_TRUNCATED,
		      "prefix %zu: rc %d", cut, rc);
		CHECK(c.n == records, "prefix %zu: %u records, expected %u",
		      cut, c.n, records);
	}

	/* 5. corruption is reported with its offset */
	got[112] ^= 0xff;
	c.n = 0;
	rc = fmt_pmclog_read(got, len, collect_cb, &c, &bad);
	CHECK(rc == -EINVAL && bad == 112, "corrupt: rc %d at %zu", rc, bad);
	free(got);

	/* 6. PMCALLOCATE then the kernel's PMCALLOCATEDYN of the same
	 * counter: one PMCALLOCATEDYN in the file */
	{
		struct ring_recs two;
		uint8_t *p;

		memset(&two, 0, sizeof(two));
		p = rr_add(&two, PMCRING_TYPE_PMCALLOCATE, 40, 0);
		w32(p, 16, 0x100);
		p = rr_add(&two, PMCRING_TYPE_PMCALLOCATEDYN, 96, 0);
		w32(p, 16, 0x100);
		memcpy(p + 32, "cpu-clock", 9);
		p = rr_add(&two, PMCRING_TYPE_PMCALLOCATEDYN, 96, 0);
		w32(p, 16, 0x101);
		write_file(path, &two, false, T0 + 100000);
		got = read_file(path, &len);
		c.n = 0;
		rc = fmt_pmclog_read(got, len, collect_cb, &c, &bad);
		CHECK(rc == FMT_END_CLEAN && c.n == 4 &&
		      c.types[1] == PMCRING_TYPE_PMCALLOCATEDYN &&
		      c.types[2] == PMCRING_TYPE_PMCALLOCATEDYN &&
		      fmt_get32(got, 112 + 96 + 16) == 0x101,
		      "one PMCALLOCATEDYN per pmcid: %u records", c.n);
		free(got);
	}

	periods_sidecar(path);

	free(exp);
	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_pmclog: all checks passed\n");
	return t_failed;
}
