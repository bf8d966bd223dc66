// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the blob writer's JSON (fmt_rec_json()) is byte for byte
 * what a plain snprintf() renderer written from the format's description
 * makes, for 200000 random valid records of every type (numbers of every
 * length, strings with quotes, backslashes, commas, control and high bytes,
 * CALLCHAINs up to the largest record), in a buffer of FMT_JSON_MAX and cut
 * short in smaller ones; and through the blob writer, DAT holds exactly
 * those messages, and file sets rolled by size keep the rules of LDMS's
 * reader ldms-csv-from-blobs (tests/ldms_blob_rules.py).
 */
#include <dirent.h>
#include <inttypes.h>
#include <time.h>

#include "test_fmt_common.h"

/* ---- the reference: snprintf(), one field at a time ---- */

struct ref {
	char	*p;
	size_t	n, sz;
};

static void ref_add(struct ref *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void ref_add(struct ref *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(o->p + o->n, o->sz - o->n, fmt, ap);
	va_end(ap);
	REQUIRE(n >= 0 && (size_t)n < o->sz - o->n, "reference buffer");
	o->n += (size_t)n;
}

/*
 * A string field as the format says: quoted, '"' and '\' backslashed, ','
 * as ';' (ldms-csv-from-blobs splits values on ','), bytes outside
 * 0x20..0x7e as \u00xx; it ends at a NUL or after @max bytes.
 */
static void ref_str(struct ref *o, const char *key, const uint8_t *s,
		    size_t max)
{
	size_t i;

	ref_add(o, ",\"%s\":\"", key);
	for (i = 0; i < max && s[i]; i++) {
		if (s[i] == ',')
			ref_add(o, ";");
		else if (s[i] == '"' || s[i] == '\\')
			ref_add(o, "\\%c", s[i]);
		else if (s[i] < 0x20 || s[i] >= 0x7f)
			ref_add(o, "\\u%04x", s[i]);
		else
			ref_add(o, "%c", s[i]);
	}
	ref_add(o, "\"");
}

/* Fields: 'u' LE u32, 'U' LE u64 (both in decimal), 's' a string. */
struct ref_field {
	char		how;
	const char	*key;
	unsigned int	off, max;
};

struct ref_type {
	unsigned int		type;
	const char		*name;
	unsigned int		size;
	char			var;	/* 0, 'p' path, 'c' PCs, 'g' GENERATED */
	struct ref_field	f[7];
};

#define T(t)		PMCRING_TYPE_##t
#define U(k, o)		{ 'u', k, o, 0 }	/* u32 */
#define W(k, o)		{ 'U', k, o, 0 }	/* u64 */
#define S(k, o, m)	{ 's', k, o, m }
static const struct ref_type ref_types[] = {
	{ T(CLOSELOG), "closelog", 16, 0, { { 0 } } },
	{ T(DROPNOTIFY), "dropnotify", 16, 0, { { 0 } } },
	{ T(INITIALIZE), "initialize", 112, 0, {
		U("version", 16), U("cputype", 20),
		W("tsc_freq", 24), W("start_sec", 32),
		W("start_nsec", 40), S("cpuid", 48, 64) } },
	{ T(PMCALLOCATE), "pmcallocate", 40, 0, {
		U("pmcid", 16), U("event", 20),
		U("flags", 24), W("rate", 32) } },
	{ T(PMCATTACH), "pmcattach", 24, 'p', {
		U("pmcid", 16), U("pid", 20) } },
	{ T(PMCDETACH), "pmcdetach", 24, 0, {
		U("pmcid", 16), U("pid", 20) } },
	{ T(PROCCSW), "proccsw", 40, 0, {
		U("pmcid", 24), U("pid", 28), U("tid", 32),
		W("value", 16) } },
	{ T(PROCEXEC), "procexec", 40, 'p', {
		U("pid", 16), U("pmcid", 20),
		W("base", 24), W("dyn", 32) } },
	{ T(PROCEXIT), "procexit", 32, 0, {
		U("pmcid", 16), U("pid", 20),
		W("value", 24) } },
	{ T(PROCFORK), "procfork", 24, 0, {
		U("oldpid", 16), U("newpid", 20) } },
	{ T(SYSEXIT), "sysexit", 24, 0, { U("pid", 16) } },
	{ T(USERDATA), "userdata", 24, 0, { U("userdata", 16) } },
	{ T(MAP_IN), "map_in", 32, 'p', {
		U("pid", 16), W("start", 24) } },
	{ T(MAP_OUT), "map_out", 40, 0, {
		U("pid", 16), W("start", 24), W("end", 32) } },
	{ T(CALLCHAIN), "callchain", 32, 'c', {
		U("pid", 16), U("tid", 20), U("pmcid", 24) } },
	{ T(PMCALLOCATEDYN), "pmcallocatedyn", 96, 0, {
		U("pmcid", 16), U("event", 20),
		U("flags", 24), S("name", 32, 64) } },
	{ T(THR_CREATE), "thr_create", 52, 0, {
		U("tid", 16), U("pid", 20), U("flags", 24),
		S("name", 32, 20) } },
	{ T(THR_EXIT), "thr_exit", 24, 0, { U("tid", 16) } },
	{ T(PROC_CREATE), "proc_create", 44, 0, {
		U("pid", 16), U("flags", 20),
		S("comm", 24, 20) } },
	{ T(GENERATED), "generated", 16, 'g', { { 0 } } },
};
#undef S
#undef W
#undef U
#undef T

/* The JSON of record @r (@len bytes), NUL included in the length. */
static size_t ref_json(char *buf, size_t sz, const struct ref_type *t,
		       const uint8_t *r, uint32_t len, uint32_t cpu,
		       const struct timespec *rt)
{
	struct ref o = { buf, 0, sz };
	const struct ref_field *f;
	uint32_t i, n, w;

	ref_add(&o, "{\"type\":\"%s\",\"ts\":%" PRIu64 ",\"sec\":%" PRIu64
		",\"usec\":%" PRIu64 ",\"cpu\":%" PRIu32, t->name,
		fmt_get64(r, 8), (uint64_t)rt->tv_sec,
		(uint64_t)rt->tv_nsec / 1000, cpu);
	for (f = t->f; f->key; f++) {
		if (f->how == 'u')
			ref_add(&o, ",\"%s\":%" PRIu32, f->key,
				fmt_get32(r, f->off));
		else if (f->how == 'U')
			ref_add(&o, ",\"%s\":%" PRIu64, f->key,
				fmt_get64(r, f->off));
		else
			ref_str(&o, f->key, r + f->off, f->max);
	}
	switch (t->var) {
	case 'p':
		ref_str(&o, "path", r + t->size, len - t->size);
		break;
	case 'c':
		w = fmt_get32(r, 28);
		n = (len - 32) / 8;
		ref_add(&o, ",\"cc_cpu\":%" PRIu32 ",\"cc_flags\":%" PRIu32
			",\"npc\":%" PRIu32 ",\"pc\":\"", w >> 16, w & 0xffff, n);
		for (i = 0; i < n; i++)
			ref_add(&o, "%s0x%" PRIx64, i ? ";" : "",
				fmt_get64(r, 32 + 8 * i));
		ref_add(&o, "\"");
		break;
	case 'g':
		ref_add(&o, ",\"len\":%" PRIu32, len);
		if (len >= 24)
			ref_add(&o, ",\"seq\":%" PRIu64, fmt_get64(r, 16));
		if (len >= 32)
			ref_add(&o, ",\"gen_cpu\":%" PRIu32 ",\"ctx\":%" PRIu32,
				fmt_get32(r, 24), fmt_get32(r, 28));
		break;
	}
	ref_add(&o, "}");
	return o.n + 1;
}

/* ---- random records ---- */

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	/* xorshift64* */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

/* A number of random length: every digit count turns up. */
static uint64_t rnd_num(void)
{
	unsigned int bits = (unsigned int)(rnd() % 65);

	switch (rnd() % 8) {
	case 0:
		return 0;
	case 1:		/* around a power of ten */
		return bits >= 64 ? ~0ull : (uint64_t)(1ull << bits) - 1;
	default:
		return bits >= 64 ? rnd() : rnd() & ((1ull << bits) - 1);
	}
}

/* String bytes: mostly plain, some of every kind JSON escapes. */
static uint8_t rnd_char(void)
{
	static const char special[] = "\",\\;{}:";

	switch (rnd() % 10) {
	case 0:
		return (uint8_t)special[rnd() % (sizeof(special) - 1)];
	case 1:
		return (uint8_t)(rnd() % 256);
	case 2:
		return (uint8_t)(rnd() % 0x20);
	default:
		return (uint8_t)(0x20 + rnd() % 0x5f);
	}
}

static void rnd_string(uint8_t *s, size_t max)
{
	size_t i, n = rnd() % 4 ? rnd() % (max + 1) : max;

	for (i = 0; i < n; i++) {
		s[i] = rnd_char();
		if (!s[i])
			s[i] = 'z';
	}
	if (n < max)
		s[n] = '\0';
}

/* A random valid record of type @t into @r; its length. */
static uint32_t rnd_record(uint8_t *r, const struct ref_type *t)
{
	const struct ref_field *f;
	uint32_t len = t->size, extra;
	unsigned int i;

	switch (t->var) {
	case 'p':
		extra = (uint32_t)(rnd() % (PMCRING_PATH_MAX + 4));
		len = (t->size + extra) & ~3u;
		break;
	case 'c':
		/* some of the largest records, PCs of every length */
		len = 32 + 8 * (uint32_t)(rnd() % 8 ? rnd() % 64 :
					  (PMCRING_RECORD_MAX - 32) / 8);
		break;
	case 'g':
		len = 16 + 8 * (uint32_t)(rnd() % 8);
		break;
	}
	for (i = 0; i < len; i += 8)
		fmt_put64(r, i, rnd_num());
	fmt_put32(r, 0, PMCRING_HEADER(t->type, len));
	for (f = t->f; f->key; f++) {
		if (f->how == 'u')
			fmt_put32(r, f->off, (uint32_t)rnd_num());
		else if (f->how == 's')
			rnd_string(r + f->off, f->max);
	}
	if (t->var == 'p')
		rnd_string(r + t->size, len - t->size);
	if (t->var == 'c')
		fmt_put32(r, 28, (uint32_t)rnd());
	return len;
}

/*
 * fmt_rec_json() in a buffer of @sz bytes must give the reference @exp
 * (@exp_len bytes, NUL included) cut at @sz - 1 bytes and NUL-terminated.
 */
static int same(const char *what, size_t sz, const uint8_t *r, uint32_t len,
		uint32_t cpu, const struct timespec *rt, const char *exp,
		size_t exp_len)
{
	static char got[FMT_JSON_MAX + 64];
	size_t n, keep = exp_len - 1 < sz - 1 ? exp_len - 1 : sz - 1;

	memset(got, 0x5a, sizeof(got));
	n = fmt_rec_json(got, sz, r, len, cpu, rt);
	if (n == (exp_len < sz ? exp_len : sz) && !memcmp(got, exp, keep) &&
	    got[keep] == '\0' && (sz == sizeof(got) || got[sz] == 0x5a))
		return 0;
	CHECK(0, "%s, buffer %zu: %zu bytes, expected %zu\n got %.*s\n exp %s",
	      what, sz, n, exp_len, (int)(n ? n - 1 : 0), got, exp);
	return 1;
}

static void test_random(unsigned int nr)
{
	static uint8_t rec[PMCRING_RECORD_MAX + 64];
	static char exp[FMT_JSON_MAX];
	const struct ref_type *t;
	struct timespec rt;
	uint32_t len, chk, cpu;
	unsigned int i, bad = 0, longest = 0, ntypes;
	size_t n, sz;

	ntypes = sizeof(ref_types) / sizeof(ref_types[0]);
	for (i = 0; i < nr && bad < 5; i++) {
		t = &ref_types[i % ntypes];
		len = rnd_record(rec, t);
		if (fmt_rec_check(rec, len, &chk) || chk != len) {
			CHECK(0, "random %s record of %u bytes is invalid",
			      t->name, len);
			bad++;
			continue;
		}
		cpu = (uint32_t)rnd_num();
		rt.tv_sec = (time_t)(rnd() >> 2);
		rt.tv_nsec = (long)(rnd() % 1000000000);
		n = ref_json(exp, sizeof(exp), t, rec, len, cpu, &rt);
		if (n > longest)
			longest = (unsigned int)n;
		bad += same(t->name, FMT_JSON_MAX, rec, len, cpu, &rt, exp, n);
		/* cut short: the emitter's path, a prefix of the same bytes */
		if (i % 16 == 0) {
			sz = 2 + rnd() % (n + 8);
			bad += same(t->name, sz, rec, len, cpu, &rt, exp, n);
		}
	}
	printf("# %u random records, longest JSON %u bytes (FMT_JSON_MAX %u)\n",
	       i, longest, FMT_JSON_MAX);
	CHECK(!bad, "%u mismatches", bad);
	CHECK(longest + 32 <= FMT_JSON_MAX, "longest %u", longest);
}

/* The largest outputs the format allows: a full CALLCHAIN, an escaped path. */
static void test_worst(void)
{
	static uint8_t rec[PMCRING_RECORD_MAX];
	static char exp[FMT_JSON_MAX];
	struct timespec rt = { ~0ull >> 1, 999999999 };
	const struct ref_type *cc = NULL, *ex = NULL;
	unsigned int i;
	uint32_t len;
	size_t n;

	for (i = 0; i < sizeof(ref_types) / sizeof(ref_types[0]); i++) {
		if (ref_types[i].type == PMCRING_TYPE_CALLCHAIN)
			cc = &ref_types[i];
		if (ref_types[i].type == PMCRING_TYPE_PROCEXEC)
			ex = &ref_types[i];
	}
	len = PMCRING_RECORD_MAX;
	memset(rec, 0xff, len);
	fmt_put32(rec, 0, PMCRING_HEADER(PMCRING_TYPE_CALLCHAIN, len));
	n = ref_json(exp, sizeof(exp), cc, rec, len, ~0u, &rt);
	printf("# largest CALLCHAIN: %zu bytes of JSON\n", n);
	same("largest callchain", FMT_JSON_MAX, rec, len, ~0u, &rt, exp, n);
	len = (ex->size + PMCRING_PATH_MAX + 3) & ~3u;
	memset(rec, 0x01, len);
	memset(rec + 8, 0xff, ex->size - 8);
	fmt_put32(rec, 0, PMCRING_HEADER(PMCRING_TYPE_PROCEXEC, len));
	n = ref_json(exp, sizeof(exp), ex, rec, len, ~0u, &rt);
	printf("# largest path: %zu bytes of JSON\n", n);
	same("largest path", FMT_JSON_MAX, rec, len, ~0u, &rt, exp, n);
}

/* A type fmt_rec_check() rejects still gets its head, and nothing else. */
static void test_unknown(void)
{
	uint8_t rec[16] = { 0 };
	struct timespec rt = { 5, 6000 };
	char got[FMT_JSON_MAX];
	static const char exp[] =
		"{\"type\":\"?\",\"ts\":7,\"sec\":5,\"usec\":6,\"cpu\":1}";

	fmt_put32(rec, 0, PMCRING_HEADER(40, 16));
	fmt_put64(rec, 8, 7);
	CHECK(fmt_rec_json(got, sizeof(got), rec, 16, 1, &rt) == sizeof(exp) &&
	      !strcmp(got, exp), "type 40: %s", got);
	fmt_put32(rec, 0, PMCRING_HEADER(200, 16));
	CHECK(fmt_rec_json(got, sizeof(got), rec, 16, 1, &rt) == sizeof(exp) &&
	      !strcmp(got, exp), "type 200: %s", got);
}

/*
 * Through the blob writer (which renders into the batch's arena): DAT is
 * the magic and the reference messages, one after the other.
 */
static void test_writer(const char *dir)
{
	static uint8_t recs[64][PMCRING_RECORD_MAX];
	static char exp[64 * FMT_JSON_MAX];
	const unsigned int nr = 64;
	uint32_t lens[64];
	struct fmt_writer *w;
	struct out_batch b;
	struct fmt_opts o;
	struct fmt_rec fr;
	struct timespec rt;
	char path[512];
	size_t at = 8, len;
	unsigned int i;
	uint8_t *dat;

	test_opts(&o, FMT_BLOB, dir);
	o.container = "c";
	o.blob_json = true;
	o.streams[0].name = "w";
	o.streams[0].types = PMCRING_TYPES_ALL;
	o.nr_streams = 1;
	REQUIRE(!out_batch_init(&b, 256, 1 << 20), "batch");
	w = fmt_writer_new(&o);
	REQUIRE(w && !fmt_begin(w, &b), "writer");
	memcpy(exp, "blobdat", 8);
	for (i = 0; i < nr; i++) {
		const struct ref_type *t =
			&ref_types[rnd() % (sizeof(ref_types) / sizeof(ref_types[0]))];

		lens[i] = rnd_record(recs[i], t);
		fr = (struct fmt_rec){ .data = recs[i], .len = lens[i],
				       .type = t->type, .cpu = i % 3,
				       .ts = T0 + 1000 * i };
		fmt_realtime(&o, fr.ts, &rt);
		at += ref_json(exp + at, sizeof(exp) - at, t, recs[i], lens[i],
			       fr.cpu, &rt);
		/* the writer gives a callchain its period: none recorded */
		if (t->var == 'c') {
			memcpy(exp + at - 2, ",\"period\":0}", 13);
			at += 11;
		}
		feed(w, &b, &fr);
	}
	finish(w, &b, T0 + 100000000);
	fmt_writer_free(w);
	out_batch_free(&b);
	snprintf(path, sizeof(path), "%s/c/w.DAT.%lld", dir,
		 (long long)o.start_rt.tv_sec);
	dat = read_file(path, &len);
	REQUIRE(dat, "%s", path);
	expect_bytes("JSON DAT", dat, len, exp, at);
	free(dat);
	check_ldms_rules(path, nr);
}

/*
 * Random records of every type but the allocations, TIMING on, sets rolled
 * every ~4 KiB: each set alone keeps LDMS's rules (offsets from 8),
 * together they hold all.  (A set a roll opens repeats the allocations so
 * far, one per random pmcid here: test_fmt_blob's test_roll_allocate
 * checks those.)
 */
static void test_writer_roll(const char *dir)
{
	static uint8_t rec[PMCRING_RECORD_MAX];
	const unsigned int nr = 400;
	char dats[8192] = "", path[512];
	unsigned int i, sets = 0, msgs = 0;
	struct fmt_writer *w;
	struct out_batch b;
	struct fmt_opts o;
	struct fmt_rec fr;
	struct dirent *de;
	DIR *d;

	test_opts(&o, FMT_BLOB, dir);
	o.container = "r";
	o.blob_json = true;
	o.blob_timing = true;
	o.roll_bytes = 4096;
	o.streams[0].name = "roll";
	o.streams[0].types = PMCRING_TYPES_ALL &
			     ~(PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATE) |
			       PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATEDYN));
	o.nr_streams = 1;
	REQUIRE(!out_batch_init(&b, 256, 1 << 20), "batch");
	w = fmt_writer_new(&o);
	REQUIRE(w && !fmt_begin(w, &b), "writer");
	for (i = 0; i < nr; i++) {
		const struct ref_type *t =
			&ref_types[i % (sizeof(ref_types) / sizeof(ref_types[0]))];

		fr = (struct fmt_rec){ .data = rec, .type = t->type,
				       .cpu = i % 2, .ts = T0 + 3000000 * i };
		fr.len = rnd_record(rec, t);
		feed(w, &b, &fr);
		msgs += t->type != PMCRING_TYPE_PMCALLOCATE &&
			t->type != PMCRING_TYPE_PMCALLOCATEDYN;
	}
	finish(w, &b, T0 + 3000000ull * nr);
	fmt_writer_free(w);
	out_batch_free(&b);
	snprintf(path, sizeof(path), "%s/r", dir);
	d = opendir(path);
	REQUIRE(d, "%s", path);
	while ((de = readdir(d))) {
		if (!strstr(de->d_name, ".DAT."))
			continue;
		snprintf(dats + strlen(dats), sizeof(dats) - strlen(dats),
			 " %s/%s", path, de->d_name);
		sets++;
	}
	closedir(d);
	printf("# %u JSON messages in %u file sets\n", msgs, sets);
	CHECK(sets >= 2, "%u file sets", sets);
	check_ldms_rules(dats, msgs);
}

int main(void)
{
	char dir[] = "/tmp/test_fmt_json.XXXXXX";

	REQUIRE(mkdtemp(dir), "mkdtemp");
	test_unknown();
	test_worst();
	test_random(200000);
	test_writer(dir);
	test_writer_roll(dir);
	rm_rf(dir);
	return t_failed;
}
