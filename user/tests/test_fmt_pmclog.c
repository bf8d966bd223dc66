// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the pmclog writer of pmcring(1) writes FreeBSD's bytes
 * exactly (INITIALIZE, records with their pmclog lengths and not the ring's
 * padding, PMCALLOCATE as PMCALLOCATEDYN and one of those per counter,
 * CLOSELOG); libpmcring's
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

static void write_file(const char *path, const struct ring_recs *rr,
		       bool keep_generated, uint64_t end_ts)
{
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	unsigned int i;

	test_opts(&o, FMT_PMCLOG, path);
	o.keep_generated = keep_generated;
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

	free(exp);
	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_pmclog: all checks passed\n");
	return t_failed;
}
