/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the test_report_*.c host tests that write recordings through
 * the command's own writers (pmclog, barman, blob): records built with
 * plog_*() (test_report_common.h) in 8-aligned slots, as a ring holds
 * them, then fed to a writer as the consumer feeds it.
 */
#ifndef TEST_REPORT_WRITE_H
#define TEST_REPORT_WRITE_H

#include "test_report_common.h"
#include "../pmcring/formats/fmt.h"

/* Records (pmclog bytes, 8-aligned slots) and their fmt_rec views. */
struct recs {
	struct plog	p;
	struct fmt_rec	r[64];
	unsigned int	n;
};

/* @rs->p's records into @rs->r, each in an 8-aligned slot. */
static inline void recs_slot(struct recs *rs)
{
	size_t off;

	/* every record into an 8-aligned slot, as in a ring */
	for (off = 0; off < rs->p.len;) {
		struct fmt_rec *r = &rs->r[rs->n++];
		uint32_t h;
		void *slot;

		memcpy(&h, rs->p.b + off, 4);
		r->len = PMCRING_HEADER_LEN(h);
		r->type = PMCRING_HEADER_TYPE(h);
		memcpy(&r->ts, rs->p.b + off + 8, 8);
		/* the ring a record came from: the CPU of a sample */
		r->cpu = r->type == PMCRING_TYPE_CALLCHAIN ?
			 fmt_get32(rs->p.b + off, 28) >> 16 : 0;
		slot = aligned_alloc(8, PMCRING_RING_SPACE(r->len));
		REQUIRE(slot, "alloc");
		memcpy(slot, rs->p.b + off, r->len);
		r->data = slot;
		off += r->len;
	}
}

/*
 * What the tests' recordings are: 2 CPUs, "cpu-clock" as pmcid 1, a blob
 * container "c" with one stream "all".
 */
static inline void write_default_opts(struct fmt_opts *o, enum fmt_kind kind,
				      const char *path)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->path = path;
	o->start_ns = 1000000000ull;
	o->start_rt.tv_sec = 1700000000;
	o->nr_cpus = 2;
	o->target = "tproc";
	o->counters[0].pmcid = 1;
	strcpy(o->counters[0].name, "cpu-clock");
	o->nr_counters = 1;
	o->container = "c";
	o->streams[0].name = "all";
	o->streams[0].types = PMCRING_TYPES_ALL;
	o->nr_streams = 1;
}

/*
 * @rs through the writer of @o, the batch running whenever the writer
 * asks, as the consumer runs it.
 */
static inline void write_opts(const struct recs *rs,
			      const struct fmt_opts *o)
{
	struct fmt_writer *w;
	struct out_batch b;
	unsigned int i;
	int err;

	REQUIRE(!out_batch_init(&b, 256, 1 << 20), "batch");
	w = fmt_writer_new(o);
	REQUIRE(w, "fmt_writer_new: %s", strerror(errno));
	REQUIRE(!fmt_begin(w, &b), "fmt_begin");
	for (i = 0; i < rs->n; i++) {
		err = fmt_record(w, &b, &rs->r[i]);
		if (err == -EAGAIN) {
			REQUIRE(!fmt_flush(w, &b), "fmt_flush");
			REQUIRE(!out_batch_run_sync(&b), "run");
			out_batch_reset(&b);
			err = fmt_record(w, &b, &rs->r[i]);
		}
		REQUIRE(!err, "fmt_record: %s", strerror(-err));
	}
	REQUIRE(!fmt_end(w, &b, rs->p.ts), "fmt_end");
	REQUIRE(!fmt_flush(w, &b), "fmt_flush");
	err = out_batch_run_sync(&b);
	REQUIRE(!err, "out_batch_run_sync: %s", strerror(-err));
	fmt_writer_free(w);
	out_batch_free(&b);
}

/*
 * @rs through the @kind writer into @path; a blob set rolls before DAT
 * would pass @roll bytes (0: never).
 */
static inline void write_roll(const struct recs *rs, enum fmt_kind kind,
			      const char *path, bool json, uint64_t roll)
{
	struct fmt_opts o;

	write_default_opts(&o, kind, path);
	o.blob_json = json;
	o.roll_bytes = roll;
	write_opts(rs, &o);
}

static inline void write_format(const struct recs *rs,
				enum fmt_kind kind, const char *path, bool json)
{
	write_roll(rs, kind, path, json, 0);
}

#endif /* TEST_REPORT_WRITE_H */
