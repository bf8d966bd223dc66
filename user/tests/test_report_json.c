// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `report` reads the JSON messages of a --blob-json blob set
 * through json-c: the paths the writer (fmt_rec_json()) escaped come back
 * byte for byte (high and control bytes, quotes, backslashes; ',' is
 * written as ';'), another writer's \u escapes above U+00FF come back as
 * UTF-8, callchains keep their frames, and anything but one flat object of
 * scalars with the right types (bad JSON, nesting, trailing bytes, a string
 * where a number belongs) is refused with -EINVAL before any record is
 * taken.
 */
#include "test_report_common.h"
#include "../pmcring/formats/fmt.h"
#include "../pmcring/report/report.h"

struct seen {
	unsigned int	recs, samples;
	char		str[PATH_MAX];
	uint64_t	addr, ip[4], period;
	unsigned int	n;
};

static int seen_sample(void *ctx, const struct report_sample_info *s)
{
	struct seen *v = ctx;
	unsigned int i;

	v->samples++;
	v->n = s->n;
	v->period = s->period;
	for (i = 0; i < s->n && i < 4; i++)
		v->ip[i] = s->f[i].ip;
	return 0;
}

static void seen_rec(void *ctx, const struct report_rec *rec)
{
	struct seen *v = ctx;

	v->recs++;
	v->addr = rec->addr;
	snprintf(v->str, sizeof(v->str), "%s", rec->str ? rec->str : "");
}

/* Feed @msg (@len bytes) to a fresh report; its result, what it saw. */
static int feed(const char *msg, size_t len, struct seen *v)
{
	static uint64_t pcs[PMCRING_CALLCHAIN_DEPTH_MAX];
	struct report_opts o = { .pid = -1, .cpu = -1, .time_to = UINT64_MAX };
	struct report_hooks h = { seen_sample, seen_rec, v };
	struct report *r = report_new(&o);
	int err;

	REQUIRE(r, "report_new");
	memset(v, 0, sizeof(*v));
	report_set_hooks(r, &h);
	err = report_json_record(r, msg, len, pcs, PMCRING_CALLCHAIN_DEPTH_MAX);
	report_free(r);
	return err;
}

static int feed_str(const char *msg, struct seen *v)
{
	return feed(msg, strlen(msg), v);
}

/* A MAP_IN of @path through the writer and back through the reader. */
static void round_trip(const char *path, const char *want)
{
	static struct plog p;
	static char buf[FMT_JSON_MAX];
	struct timespec rt = { 1, 2000 };
	struct seen v;
	size_t n;

	p.len = 0;
	plog_map_in(&p, 7, 0x400000, path);
	n = fmt_rec_json(buf, sizeof(buf), p.b, (uint32_t)p.len, 0, &rt);
	REQUIRE(n > 1 && n <= sizeof(buf), "fmt_rec_json: %zu", n);
	/* the message as the blob holds it: the NUL the writer counts */
	CHECK(feed(buf, n, &v) == 0, "map_in refused: %s", buf);
	CHECK(v.recs == 1 && v.addr == 0x400000, "recs %u addr %#" PRIx64,
	      v.recs, v.addr);
	CHECK(!strcmp(v.str, want), "path \"%s\" came back as \"%s\" (%s)",
	      want, v.str, buf);
}

int main(void)
{
	struct seen v;
	char big[64];

	/* the writer's escapes, inverted exactly */
	round_trip("/usr/lib/libc.so.6", "/usr/lib/libc.so.6");
	round_trip("/tmp/caf\xc3\xa9/a\"b\\c\x01\x7f\xff",
		   "/tmp/caf\xc3\xa9/a\"b\\c\x01\x7f\xff");
	round_trip("/tmp/a,b", "/tmp/a;b");	/* LDMS's reader: no ',' */

	/* another writer's code points above U+00FF stay UTF-8 */
	CHECK(feed_str("{\"type\":\"map_in\",\"pid\":1,\"start\":4096,"
		       "\"path\":\"/x/\\u263a\"}", &v) == 0, "\\u263a refused");
	CHECK(!strcmp(v.str, "/x/\xe2\x98\xba"), "got \"%s\"", v.str);

	/* a callchain keeps its frames, leaf first */
	CHECK(feed_str("{\"type\":\"callchain\",\"ts\":5,\"cpu\":1,\"pid\":9,"
		       "\"tid\":9,\"pmcid\":1,\"cc_cpu\":1,\"cc_flags\":1,"
		       "\"npc\":2,\"pc\":\"0x401136;0x401170\"}", &v) == 0,
	      "callchain refused");
	CHECK(v.samples == 1 && v.n == 2 && v.ip[0] == 0x401136 &&
	      v.ip[1] == 0x401170, "samples %u n %u ip %#" PRIx64,
	      v.samples, v.n, v.ip[0]);

	/* --blob-json's "period" is the sample's */
	CHECK(feed_str("{\"type\":\"callchain\",\"ts\":5,\"cpu\":1,\"pid\":9,"
		       "\"tid\":9,\"pmcid\":1,\"cc_cpu\":1,\"cc_flags\":1,"
		       "\"npc\":1,\"pc\":\"0x401136\",\"period\":250000}",
		       &v) == 0 && v.samples == 1 && v.period == 250000,
	      "callchain period: %" PRIu64, v.period);

	/* members this view does not know are skipped, not refused */
	CHECK(feed_str("{\"type\":\"procfork\",\"oldpid\":1,\"newpid\":2,"
		       "\"extra\":true}", &v) == 0, "unknown member refused");

	/* refused, and nothing taken from them */
	static const char *const bad[] = {
		"",
		"not json",
		"[1,2]",
		"{\"type\":\"map_in\",\"path\":\"/x\"",		/* cut short */
		"{\"type\":\"map_in\",\"pid\":{\"n\":1}}",	/* nested */
		"{\"type\":\"map_in\",\"pid\":[1]}",
		"{\"type\":\"map_in\",\"pid\":\"1\",\"path\":\"/x\"}",
		"{\"type\":1}",
		"{\"type\":\"map_in\",\"pid\":1,\"path\":\"/x\"} {}",
		"{\"type\":\"map_in\",\"pid\":1,\"path\":\"/x\"}garbage",
		"{'type':'map_in'}",
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		CHECK(feed_str(bad[i], &v) == -EINVAL, "accepted: %s", bad[i]);
		CHECK(v.recs == 0 && v.samples == 0, "took a record of: %s",
		      bad[i]);
	}
	/* the length bounds the message: no read past it */
	snprintf(big, sizeof(big), "{\"type\":\"procfork\",\"oldpid\":1}");
	CHECK(feed(big, 10, &v) == -EINVAL, "read past the length");
	/* blob padding after the object: NULs and blanks */
	{
		static const char pad[] = "{\"type\":\"dropnotify\",\"ts\":1}\0\0 \n";

		CHECK(feed(pad, sizeof(pad) - 1, &v) == 0, "padding refused");
	}
	return t_failed;
}
