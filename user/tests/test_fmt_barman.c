// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the barman writer of pmcring(1) writes the BARMAN64 header
 * (clock_info, string table, task_info from PROC_CREATE/THR_CREATE/PROCEXEC,
 * mmap_layout from MAP_IN) at offset 0 and rewrites it with the same length,
 * then [u64 length][record] frames: CALLCHAIN -> SAMPLE_WITH_PC,
 * PROCCSW -> TASK_SWITCH, USERDATA and GENERATED -> ANNOTATION, DROPNOTIFY -> WARNING,
 * byte for byte; the reader decodes them back; a batch killed between its
 * frames and its header leaves a file whose header describes only what is
 * there; every prefix reads.
 */
#include "test_fmt_common.h"

#define HS	15600u		/* header size for 2 cores, see below */

/*
 * The header by hand: 1120 bytes up to the PMU settings, 2 x 60 of them,
 * u32 + 256 x 16 tasks at 1240, u32 + 256 x 40 mmaps at 5340, 16 bytes of
 * data store parameters at 15584.
 */
static void expected_header(struct img *h, const struct ring_recs *rr,
			    uint64_t last_ts)
{
	memset(h, 0, sizeof(*h));
	le(h, 0, 0x4241524D414E3634ull, 8);
	le(h, 8, 3, 4);
	le(h, 12, HS, 4);
	le(h, 16, 4, 4);
	le(h, 20, 0, 4);			/* "prog" at 0 */
	le(h, 24, last_ts, 8);
	le(h, 32, 0, 4);
	le(h, 36, 2, 4);
	le(h, 40, 256, 4);
	le(h, 44, 256, 4);
	le(h, 48, 8, 4);
	le(h, 52, 1024, 4);
	le(h, 56, 0, 4);
	le(h, 60, T0, 8);
	le(h, 68, 1, 8);
	le(h, 76, 1, 8);
	le(h, 84, 1700000000500000000ull, 8);
	if (!rr) {
		le(h, 92, 5, 4);
		bytes(h, 96, "prog", 5);
		le(h, HS - 1, 0, 1);
		return;
	}
	le(h, 92, 27, 4);
	bytes(h, 96, "prog\0worker\0/lib/libc.so.6", 27);
	le(h, 1240, 3, 4);			/* tasks */
	le(h, 1244, rr->r[1].ts, 8);		/* PROC_CREATE 42 "prog" */
	le(h, 1252, 42, 4);
	le(h, 1256, 0, 4);
	le(h, 1260, rr->r[2].ts, 8);		/* THR_CREATE 43 "worker" */
	le(h, 1268, 43, 4);
	le(h, 1272, 5, 4);
	le(h, 1276, rr->r[3].ts, 8);		/* PROCEXEC 42 basename */
	le(h, 1284, 42, 4);
	le(h, 1288, 0, 4);
	le(h, 5340, 1, 4);			/* mmaps */
	le(h, 5344, rr->r[4].ts, 8);
	le(h, 5352, 42, 4);
	le(h, 5356, 0x7f1234560000ull, 8);
	le(h, 5364, 0, 8);
	le(h, 5372, 0, 8);
	le(h, 5380, 12, 4);
	le(h, HS - 1, 0, 1);
}

static void expected_frames(struct img *f, const struct ring_recs *rr)
{
	memset(f, 0, sizeof(*f));
	/* SAMPLE_WITH_PC: 28 + 2 callers */
	le(f, 0, 44, 8);
	le(f, 8, 2, 4);
	le(f, 12, 1, 4);
	le(f, 16, rr->r[5].ts, 8);
	le(f, 24, 43, 4);
	le(f, 28, 0xffffffff81000000ull, 8);
	le(f, 36, 0x401000, 8);
	le(f, 44, 0x402000, 8);
	/* TASK_SWITCH: 21 */
	le(f, 52, 21, 8);
	le(f, 60, 3, 4);
	le(f, 64, 1, 4);
	le(f, 68, rr->r[6].ts, 8);
	le(f, 76, 43, 4);
	le(f, 80, 0, 1);
	/* ANNOTATION: 41 + 10 */
	le(f, 81, 51, 8);
	le(f, 89, 5, 4);
	le(f, 93, 0, 4);
	le(f, 97, rr->r[7].ts, 8);
	le(f, 105, 0, 4);			/* task */
	le(f, 109, 10, 8);			/* data_length */
	le(f, 117, 3, 4);			/* channel */
	le(f, 121, 0, 4);
	le(f, 125, 0, 4);
	le(f, 129, 0, 1);
	bytes(f, 130, "0x0000002a", 10);
	/* WARNING: 20 */
	le(f, 140, 20, 8);
	le(f, 148, 9, 4);
	le(f, 152, 1, 4);
	le(f, 156, rr->r[8].ts, 8);
	le(f, 164, 1, 4);
	/* GENERATED -> ANNOTATION: 41 + 33 */
	le(f, 168, 74, 8);
	le(f, 176, 5, 4);
	le(f, 180, 1, 4);
	le(f, 184, rr->r[9].ts, 8);
	le(f, 192, 0, 4);			/* task */
	le(f, 196, 33, 8);			/* data_length */
	le(f, 204, 3, 4);			/* channel */
	le(f, 208, 0, 4);
	le(f, 212, 0, 4);
	le(f, 216, 0, 1);
	bytes(f, 217, "pmcring GENERATED gen_cpu=1 seq=7", 33);
}

struct collect {
	unsigned int	n;
	struct fmt_item	it[16];
};

static int collect_cb(const struct fmt_item *it, void *ctx)
{
	struct collect *c = ctx;

	if (c->n < 16)
		c->it[c->n] = *it;
	c->n++;
	return 0;
}

int main(void)
{
	char *dir = scratch_dir(), path[256];
	struct img *hdr = calloc(1, sizeof(*hdr)), *fr = calloc(1, sizeof(*fr));
	struct img *exp = calloc(1, sizeof(*exp));
	struct ring_recs rr;
	struct fmt_opts o;
	struct out_batch b;
	struct fmt_writer *w;
	struct fmt_bm_info bi;
	struct collect c;
	size_t len, bad, cut;
	unsigned int i, last;
	uint8_t *got;
	int rc;

	build_records(&rr);
	snprintf(path, sizeof(path), "%s/out.barman", dir);
	CHECK(fmt_barman_header_size(2) == HS, "header size %zu",
	      fmt_barman_header_size(2));

	/* 1. the first header alone */
	test_opts(&o, FMT_BARMAN, path);
	o.bm_channel = 3;
	REQUIRE(!out_batch_init(&b, 64, 65536), "batch");
	w = fmt_writer_new(&o);
	REQUIRE(w && !fmt_begin(w, &b), "begin");
	run(&b);
	got = read_file(path, &len);
	expected_header(hdr, NULL, T0);
	expect_bytes("first header", got, len, hdr->b, hdr->len);
	free(got);

	/* 2. one batch killed after its frames, before its header */
	for (i = 0; i < rr.n; i++)
		feed(w, &b, &rr.r[i]);
	REQUIRE(!fmt_flush(w, &b), "flush");
	out_batch_prepare(&b);
	for (i = 0; i < b.nr_ops; i++)
		if (b.ops[i].phase != OUT_DATA)
			b.ops[i].len = 0;	/* the kill */
	run(&b);
	got = read_file(path, &len);
	CHECK(!fmt_barman_info(got, len, &bi) && bi.nr_tasks == 0 &&
	      bi.nr_mmaps == 0, "killed: header has no tables yet");
	c.n = 0;
	rc = fmt_barman_read(got, len, collect_cb, &c, &bad);
	CHECK(rc == FMT_END_CLEAN && c.n == 5, "killed: rc %d, %u frames",
	      rc, c.n);
	free(got);

	/* 3. golden bytes of the finished file: header rewritten in place */
	finish(w, &b, T0 + 100000);
	fmt_writer_free(w);
	out_batch_free(&b);
	expected_header(hdr, &rr, T0 + 100000);
	expected_frames(fr, &rr);
	memset(exp, 0, sizeof(*exp));
	append(exp, hdr->b, HS);
	append(exp, fr->b, fr->len);
	got = read_file(path, &len);
	expect_bytes("barman file", got, len, exp->b, exp->len);

	/* 4. round trip */
	c.n = 0;
	rc = fmt_barman_read(got, len, collect_cb, &c, &bad);
	CHECK(rc == FMT_END_CLEAN && c.n == 5, "rc %d, %u frames", rc, c.n);
	CHECK(c.it[0].type == BM_REC_SAMPLE_WITH_PC && c.it[0].cpu == 1 &&
	      c.it[0].ts == rr.r[5].ts && c.it[0].task == 43 &&
	      c.it[0].pc == 0xffffffff81000000ull && c.it[0].nchain == 2 &&
	      fmt_get64(c.it[0].chain, 8) == 0x402000, "sample");
	CHECK(c.it[1].type == BM_REC_TASK_SWITCH && c.it[1].task == 43 &&
	      c.it[1].ts == rr.r[6].ts, "task switch");
	CHECK(c.it[2].type == BM_REC_ANNOTATION && c.it[2].value == 3 &&
	      c.it[2].text_len == 10 && !memcmp(c.it[2].text, "0x0000002a", 10),
	      "annotation");
	CHECK(c.it[3].type == BM_REC_WARNING && c.it[3].value == BM_WARNING_LOST,
	      "warning");
	CHECK(!fmt_barman_info(got, len, &bi) && bi.nr_tasks == 3 &&
	      !strcmp(fmt_barman_str(&bi, fmt_get32(bi.tasks, 16 + 12)),
		      "worker") &&
	      !strcmp(fmt_barman_str(&bi, fmt_get32(bi.mmaps, 36)),
		      "/lib/libc.so.6"), "tables");
	CHECK(fmt_detect(got, len) == FMT_BARMAN, "detect");

	/* 5. every prefix reads, frames never go backwards */
	last = 0;
	for (cut = 0; cut <= len; cut++) {
		c.n = 0;
		rc = fmt_barman_read(got, cut, collect_cb, &c, &bad);
		CHECK(rc == FMT_END_CLEAN || rc == FMT_END_TRUNCATED,
		      "prefix %zu: rc %d", cut, rc);
		CHECK(c.n >= last, "prefix %zu: %u frames", cut, c.n);
		last = c.n;
	}
	CHECK(last == 5, "all frames");

	/* 6. a corrupt frame length */
	fmt_put64(got, HS, 3);
	rc = fmt_barman_read(got, len, collect_cb, &c, &bad);
	CHECK(rc == -EINVAL && bad == HS, "corrupt: rc %d at %zu", rc, bad);
	free(got);

	free(hdr);
	free(fr);
	free(exp);
	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_barman: all checks passed\n");
	return t_failed;
}
