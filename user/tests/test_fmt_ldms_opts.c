// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring record --ldms SPEC` parsing: LDMS's defaults (sock,
 * localhost, port 411, auth none, stream pmcring, binary, stream channel),
 * every key landing in its field (auth_opt repeatable), and every bad key
 * or value refused with a message, the whole option with it; --ldms given
 * twice refused.  And fmt_blob_message(), the message --ldms publishes:
 * binary is the record itself, JSON a PERIOD has none and the callchain
 * after it carries its period.
 */
#include "test_fmt_common.h"
#include "../pmcring/record/opts.h"

static int parse_ldms(struct rec_opts *o, char *err, const char *spec,
		      bool twice)
{
	char *argv[] = { "record", "--ldms", (char *)spec, "--ldms",
			 (char *)spec, "-a", NULL };

	if (!twice) {
		argv[3] = "-a";
		argv[4] = NULL;
	}
	return rec_opts_parse(o, twice ? 6 : 4, argv, err, 256);
}

#define BAD(spec) do {							\
	struct rec_opts o_;						\
	char e_[256] = "";						\
	int r_ = parse_ldms(&o_, e_, spec, false);			\
	CHECK(r_ == -EINVAL && strstr(e_, "--ldms"), "accepted: %s (%s)", \
	      spec, e_);						\
	rec_opts_free(&o_);						\
} while (0)

static void test_parse(void)
{
	struct rec_opts o;
	char err[256];

	CHECK(!parse_ldms(&o, err, "port=10411", false), "%s", err);
	CHECK(o.ldms_given, "--ldms not noted");
	CHECK(!strcmp(o.ldms.xprt, "sock") && !strcmp(o.ldms.host, "localhost") &&
	      !strcmp(o.ldms.port, "10411") && !strcmp(o.ldms.auth, "none") &&
	      !strcmp(o.ldms.stream, "pmcring") && !o.ldms.json &&
	      !o.ldms.msg && o.ldms.window == 4096 &&
	      o.ldms.timeout_ms == 5000 && !o.ldms.lib &&
	      !o.ldms.nr_auth_opts && !o.ldms.batch && !o.ldms.reconnect_ms,
	      "defaults");
	rec_opts_free(&o);

	CHECK(!parse_ldms(&o, err, "xprt=rdma,host=n1,port=1,auth=munge,"
			  "auth_opt=socket=/run/m.sock,auth_opt=x=y,"
			  "stream=app,type=json,channel=msg,window=8,"
			  "timeout=100,lib=/opt/l.so", false), "%s", err);
	CHECK(!strcmp(o.ldms.xprt, "rdma") && !strcmp(o.ldms.host, "n1") &&
	      !strcmp(o.ldms.auth, "munge") && o.ldms.nr_auth_opts == 2 &&
	      !strcmp(o.ldms.auth_opt[0], "socket=/run/m.sock") &&
	      !strcmp(o.ldms.auth_opt[1], "x=y") &&
	      !strcmp(o.ldms.stream, "app") && o.ldms.json && o.ldms.msg &&
	      o.ldms.window == 8 && o.ldms.timeout_ms == 100 &&
	      !strcmp(o.ldms.lib, "/opt/l.so"), "every key");
	rec_opts_free(&o);

	CHECK(!parse_ldms(&o, err, "channel=msg,batch=65536", false), "%s",
	      err);
	CHECK(o.ldms.msg && o.ldms.batch == 65536, "batch=65536");
	rec_opts_free(&o);

	CHECK(!parse_ldms(&o, err, "reconnect=250,timeout=7", false), "%s",
	      err);
	CHECK(o.ldms.reconnect_ms == 250 && o.ldms.timeout_ms == 7,
	      "reconnect=250");
	rec_opts_free(&o);

	{
		char *none[] = { "record", "-o", "none", "--ldms", "port=1",
				 "-a", NULL };
		char *nold[] = { "record", "-o", "none", "-a", NULL };
		char *blob[] = { "record", "-o", "none", "--format", "blob",
				 "--ldms", "port=1", "-a", NULL };

		CHECK(!rec_opts_parse(&o, 6, none, err, sizeof(err)) &&
		      o.no_file, "-o none --ldms: %s", err);
		rec_opts_free(&o);
		CHECK(rec_opts_parse(&o, 4, nold, err, sizeof(err)) ==
		      -EINVAL && strstr(err, "only with --ldms"),
		      "-o none without --ldms: %s", err);
		rec_opts_free(&o);
		CHECK(rec_opts_parse(&o, 8, blob, err, sizeof(err)) ==
		      -EINVAL && strstr(err, "no file"),
		      "-o none --format blob: %s", err);
		rec_opts_free(&o);
		CHECK(!rec_opts_parse(&o, 4, (char *[]){ "record", "-o",
		      "out.pmclog", "-a", NULL }, err, sizeof(err)) &&
		      !o.no_file, "-o FILE: %s", err);
		rec_opts_free(&o);
	}

	CHECK(parse_ldms(&o, err, "port=1", true) == -EINVAL &&
	      strstr(err, "twice"), "--ldms twice: %s", err);
	rec_opts_free(&o);

	BAD("bogus=1");
	BAD("port");
	BAD("port=");
	BAD("type=binary");
	BAD("channel=both");
	BAD("window=0");
	BAD("window=-1");
	BAD("timeout=10x");
	BAD("reconnect=0");
	BAD("reconnect=1000001");
	BAD("batch=65536");			/* the stream channel */
	BAD("channel=msg,type=json,batch=4096");	/* JSON: one per message */
	BAD("channel=msg,batch=16777217");
	BAD("channel=msg,batch=1k");
	BAD("auth_opt=novalue");
	BAD("auth_opt=a=1,auth_opt=a=2,auth_opt=a=3,auth_opt=a=4,"
	    "auth_opt=a=5,auth_opt=a=6,auth_opt=a=7,auth_opt=a=8,auth_opt=a=9");
}

static void test_message(void)
{
	struct fmt_period_last last = { 0 };
	struct timespec rt = { .tv_sec = 1, .tv_nsec = 0 };
	uint8_t period[PMCRING_SIZE_PERIOD] = { 0 }, cc[48] = { 0 };
	struct fmt_rec r;
	const void *msg;
	char *buf = malloc(FMT_JSON_MAX);
	size_t len;

	REQUIRE(buf, "no memory");
	fmt_put32(period, 0, PMCRING_HEADER(PMCRING_TYPE_PERIOD,
					    PMCRING_SIZE_PERIOD));
	fmt_put32(period, 16, 1);
	fmt_put64(period, 24, 12345);
	fmt_put32(cc, 0, PMCRING_HEADER(PMCRING_TYPE_CALLCHAIN, sizeof(cc)));
	fmt_put32(cc, 24, 1);
	fmt_put64(cc, 32, 0x401000);
	fmt_put64(cc, 40, 0x401010);

	r = (struct fmt_rec){ .data = cc, .len = sizeof(cc),
			      .type = PMCRING_TYPE_CALLCHAIN };
	len = fmt_blob_message(&last, false, &r, &rt, buf, &msg);
	CHECK(len == sizeof(cc) && msg == cc, "binary: the record itself");

	r = (struct fmt_rec){ .data = period, .len = sizeof(period),
			      .type = PMCRING_TYPE_PERIOD };
	CHECK(fmt_blob_message(&last, true, &r, &rt, buf, &msg) == 0,
	      "JSON PERIOD: no message");
	r = (struct fmt_rec){ .data = cc, .len = sizeof(cc),
			      .type = PMCRING_TYPE_CALLCHAIN };
	len = fmt_blob_message(&last, true, &r, &rt, buf, &msg);
	CHECK(len > 1 && msg == buf && buf[len - 1] == '\0' &&
	      strstr(buf, "\"period\":12345") && buf[0] == '{',
	      "JSON callchain with its period: %s", buf);
	free(last.v);
	free(buf);
}

int main(void)
{
	test_parse();
	test_message();
	return t_failed;
}
