// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the consumer gives ring space back as soon as a record's
 * bytes are copied into a batch, and keeps a record in its ring while a
 * batch that is not on disk points to it there.  A write that fails
 * (EFBIG past RLIMIT_FSIZE, after the file's first bytes) shows both: the
 * staged writers (barman, JSON blob) have given back every record they
 * took (the producer can fill the whole ring again), pmclog, whose batch
 * points into the rings for runs of one CPU, has not (the producer finds
 * the ring still holding them); and in every format the records taken
 * but in no batch on disk are counted (what `pmcring record` reports as
 * lost), with io_uring and with pwritev(); and a blob set is cut back to
 * the messages all its files hold whole (LDMS's reader takes it).
 */
#include <signal.h>
#include <sys/resource.h>

#include "libpmcring_test.h"
#include "test_fmt_common.h"
#include "../pmcring/record/consumer.h"

#define PAGES		64		/* 256 KiB rings: half is 128 KiB */
#define PER_CPU		900		/* 64-byte records: 57600 bytes */
#define REC_LEN		64u
#define FSIZE_LIMIT	(64u << 10)	/* headers fit, the records do not */

/* A CALLCHAIN of REC_LEN bytes ((REC_LEN - 32) / 8 PCs) at @ts on @cpu. */
static void produce(struct pmcring_uprod *p, unsigned int cpu, uint64_t ts)
{
	uint8_t *r = pmcring_uprod_reserve(p, cpu, PMCRING_TYPE_CALLCHAIN,
					   REC_LEN);
	unsigned int i;

	REQUIRE(r, "reserve cpu %u: %s", cpu, strerror(errno));
	w64(r, 8, ts);
	w32(r, 16, 42);
	w32(r, 20, 43);
	w32(r, 28, cpu << 16);
	for (i = 32; i + 8 <= REC_LEN; i += 8)
		w64(r, i, 0x400000 + i);
	pmcring_uprod_commit(p, cpu);
}

/* Records of REC_LEN bytes the producer can still put into @cpu's ring. */
static unsigned int room(struct pmcring_uprod *p, unsigned int cpu)
{
	uint8_t body[REC_LEN - 16] = { 0 };
	unsigned int n = 0;

	while (!pmcring_uprod_write(p, cpu, PMCRING_TYPE_USERDATA, body,
				    sizeof(body)))
		n++;
	return n;
}

/*
 * Record 2 x PER_CPU records into @path with writes limited to @limit
 * bytes (0: none): each CPU's records one after the other, so that pmclog
 * points into the ring for all but a short first run.  Returns the
 * consumer's error, or 1 without io_uring; *freed: the records each ring
 * then had room for.
 */
static int record(enum fmt_kind kind, bool json, const char *path,
		  bool uring, rlim_t limit, unsigned int freed[2],
		  struct consumer_stats *st)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, PAGES);
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct rlimit rl, was;
	struct pmcring_cpu_buf *bufs[2];
	struct pmcring_merge *m;
	struct fmt_writer *w;
	struct fmt_opts o;
	struct consumer c;
	uint64_t n;
	unsigned int i;
	int err;

	REQUIRE(p, "uprod: %s", strerror(errno));
	bufs[0] = pmcring_uprod_cpu_buf(p, 0);
	bufs[1] = pmcring_uprod_cpu_buf(p, 1);
	mo.clock = pmcring_uprod_clock;
	mo.clock_ctx = p;
	m = pmcring_merge_new(bufs, 2, &mo);
	REQUIRE(m, "merge: %s", strerror(errno));
	test_opts(&o, kind, path);
	o.start_ns = 500;
	o.container = "c";
	o.streams[0].name = "all";
	o.streams[0].types = PMCRING_TYPES_ALL;
	o.nr_streams = 1;
	o.blob_json = json;
	w = fmt_writer_new(&o);
	REQUIRE(w, "writer");
	err = consumer_init(&c, m, 2, w, uring, -1);
	if (err) {
		REQUIRE(uring, "consumer_init: %s", strerror(-err));
		printf("# io_uring unavailable: %s\n", strerror(-err));
		err = 1;
		goto out;
	}
	REQUIRE(!consumer_begin(&c), "begin");
	for (i = 0; i < PER_CPU; i++) {
		produce(p, 0, 1000 + i);
		produce(p, 1, 1000 + PER_CPU + i);
	}
	REQUIRE(!getrlimit(RLIMIT_FSIZE, &was), "getrlimit: %s",
		strerror(errno));
	if (limit) {
		rl = was;
		rl.rlim_cur = limit;	/* the soft limit: it can go back */
		REQUIRE(!setrlimit(RLIMIT_FSIZE, &rl), "setrlimit: %s",
			strerror(errno));
	}
	err = consumer_drain(&c, 0, &n);
	if (!err)
		err = consumer_sync(&c);
	CHECK(n == 2 * PER_CPU, "%llu records taken", (unsigned long long)n);
	if (!err)
		err = consumer_end(&c, 1000 + 2 * PER_CPU);
	REQUIRE(!setrlimit(RLIMIT_FSIZE, &was), "setrlimit: %s",
		strerror(errno));
	*st = c.st;
	freed[0] = room(p, 0);
	freed[1] = room(p, 1);
	consumer_fini(&c);
out:
	fmt_writer_free(w);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return err;
}

int main(void)
{
	static const struct {
		const char	*name;
		enum fmt_kind	kind;
		bool		json, staged;
	} fmts[] = {
		{ "pmclog", FMT_PMCLOG, false, false },
		{ "barman", FMT_BARMAN, false, true },
		{ "json", FMT_BLOB, true, true },
	};
	const unsigned int whole = (PAGES << 12) / REC_LEN;
	unsigned int f, freed[2], mode;
	struct consumer_stats st;
	char *dir, path[256];
	int err;

	signal(SIGXFSZ, SIG_IGN);	/* EFBIG instead */
	dir = scratch_dir();
	for (mode = 0; mode < 2; mode++) {
		bool uring = mode == 1;

		for (f = 0; f < sizeof(fmts) / sizeof(fmts[0]); f++) {
			const char *what = fmts[f].name;

			snprintf(path, sizeof(path), "%s/ok.%s.%u", dir, what,
				 mode);
			err = record(fmts[f].kind, fmts[f].json, path, uring, 0,
				     freed, &st);
			if (err == 1)
				break;	/* no io_uring here: said above */
			CHECK(!err, "%s: %s", what, strerror(-err));
			CHECK(st.records == 2 * PER_CPU &&
			      st.written == st.records, "%s: %llu taken, "
			      "%llu written", what,
			      (unsigned long long)st.records,
			      (unsigned long long)st.written);
			CHECK(freed[0] == whole && freed[1] == whole,
			      "%s: room for %u and %u records after the end, "
			      "not %u", what, freed[0], freed[1], whole);

			snprintf(path, sizeof(path), "%s/efbig.%s.%u", dir,
				 what, mode);
			err = record(fmts[f].kind, fmts[f].json, path, uring,
				     FSIZE_LIMIT, freed, &st);
			CHECK(err == -EFBIG, "%s %s: %s, not EFBIG", what,
			      uring ? "io_uring" : "pwritev", strerror(-err));
			/* nothing landed: all taken are lost, and counted */
			CHECK(st.records == 2 * PER_CPU && st.written == 0,
			      "%s: %llu taken, %llu written", what,
			      (unsigned long long)st.records,
			      (unsigned long long)st.written);
			/*
			 * The files cut back to whole entries: DAT held
			 * messages no OFFSET entry covered, which LDMS's
			 * reader cannot take.
			 */
			if (fmts[f].kind == FMT_BLOB) {
				char dat[300];

				snprintf(dat, sizeof(dat),
					 "%s/c/all.DAT.1700000000", path);
				check_ldms_rules(dat, 0);
			}
			if (fmts[f].staged)
				CHECK(freed[0] == whole && freed[1] == whole,
				      "%s: copied records still in the ring: "
				      "room for %u and %u of %u", what,
				      freed[0], freed[1], whole);
			else	/* the runs (slack: a first 512 bytes copied) */
				CHECK(freed[0] <= whole - PER_CPU + 8 &&
				      freed[1] <= whole - PER_CPU + 8,
				      "%s: records the batch points to given "
				      "back before the write: room for %u and "
				      "%u of %u", what, freed[0], freed[1],
				      whole);
		}
		if (f == sizeof(fmts) / sizeof(fmts[0]))
			printf("# %s: checked\n", uring ? "io_uring" : "pwritev");
	}
	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_release: all checks passed\n");
	return t_failed;
}
