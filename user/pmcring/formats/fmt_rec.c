// SPDX-License-Identifier: GPL-2.0
/*
 * pmclog records: type names, validation with FreeBSD's sizes, and rendering
 * as text (`pmcring dump`) or as one flat JSON object (--blob-json).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <strings.h>

#include "fmt.h"

/*
 * How a record field is shown: a 32- or 64-bit number, in decimal or (in
 * text) hex, or a string of at most .max bytes.
 */
/*
 * F_PID: a u32 pid whose (u32)-1 means the kernel (MAP_IN, MAP_OUT): -1
 * in text, as the documentation writes it; the JSON number stays the u32
 * (blob messages keep their format).
 */
enum { F_U32 = 1, F_X32, F_U64, F_X64, F_STR, F_PID };

struct rec_field {
	const char	*key;
	/*
	 * JSON: ,"key": made by the compiler, padded with NULs to 16 bytes
	 * so the renderer copies it with one fixed-size move.
	 */
	char		jkey[16];
	uint8_t		jlen;
	uint8_t		off;
	uint8_t		how;
	uint8_t		max;		/* F_STR */
};

#define FLD(k, o, h, n)	{ k, ",\"" k "\":", sizeof(",\"" k "\":") - 1, o, h, n }
#define U32(k, o)	FLD(k, o, F_U32, 0)
#define PID(k, o)	FLD(k, o, F_PID, 0)
#define X32(k, o)	FLD(k, o, F_X32, 0)
#define U64(k, o)	FLD(k, o, F_U64, 0)
#define X64(k, o)	FLD(k, o, F_X64, 0)
#define STR(k, o, n)	FLD(k, o, F_STR, n)

/* The fields of each type, in the order they are shown. */
static const struct rec_field
	f_initialize[] = { X32("version", 16), X32("cputype", 20),
		U64("tsc_freq", 24), U64("start_sec", 32),
		U64("start_nsec", 40), STR("cpuid", 48, PMCRING_CPUID_LEN),
		{ 0 } },
	f_pmcallocate[] = { X32("pmcid", 16), X32("event", 20),
		X32("flags", 24), U64("rate", 32), { 0 } },
	f_pmcattach[] = { X32("pmcid", 16), U32("pid", 20), { 0 } },
	f_pmcdetach[] = { X32("pmcid", 16), U32("pid", 20), { 0 } },
	f_proccsw[] = { X32("pmcid", 24), U32("pid", 28), U32("tid", 32),
		U64("value", 16), { 0 } },
	f_procexec[] = { U32("pid", 16), X32("pmcid", 20), X64("base", 24),
		X64("dyn", 32), { 0 } },
	f_procexit[] = { X32("pmcid", 16), U32("pid", 20), U64("value", 24),
		{ 0 } },
	f_procfork[] = { U32("oldpid", 16), U32("newpid", 20), { 0 } },
	f_pid[] = { U32("pid", 16), { 0 } },
	f_userdata[] = { X32("userdata", 16), { 0 } },
	f_map_in[] = { PID("pid", 16), X64("start", 24), { 0 } },
	f_map_out[] = { PID("pid", 16), X64("start", 24), X64("end", 32),
		{ 0 } },
	f_callchain[] = { U32("pid", 16), U32("tid", 20), X32("pmcid", 24),
		{ 0 } },
	f_pmcallocatedyn[] = { X32("pmcid", 16), X32("event", 20),
		X32("flags", 24), STR("name", 32, PMCRING_NAME_MAX), { 0 } },
	f_thr_create[] = { U32("tid", 16), U32("pid", 20), X32("flags", 24),
		STR("name", 32, PMCRING_COMM_LEN), { 0 } },
	f_tid[] = { U32("tid", 16), { 0 } },
	f_proc_create[] = { U32("pid", 16), X32("flags", 20),
		STR("comm", 24, PMCRING_COMM_LEN), { 0 } },
	f_period[] = { X32("pmcid", 16), U64("period", 24), { 0 } };

#undef U32
#undef X32
#undef U64
#undef X64
#undef STR
#undef FLD

/* What follows the fixed part of a record of variable length. */
enum {
	V_NONE,		/* nothing: the size is exact */
	V_PATH,		/* a path (shown after the fields) */
	V_PCS,		/* 8-byte PCs (CALLCHAIN) */
	V_GEN,		/* a GENERATED body */
};

/* Each type: its name, its size (exact, or minimum if var), its fields. */
struct rec_rule {
	const char		*name;
	uint16_t		size;
	uint8_t			var;
	const struct rec_field	*fields;
	/* JSON: {"type":"name","ts": (type names need no escaping) */
	char			jhead[32];
	uint8_t			jlen;
};

#define JHEAD(n)	"{\"type\":\"" n "\",\"ts\":"
#define R(t, n, s, v, f) [PMCRING_TYPE_##t] = \
	{ n, s, v, f, JHEAD(n), sizeof(JHEAD(n)) - 1 }
static const struct rec_rule rules[PMCRING_TYPE_MAX + 1] = {
	R(CLOSELOG, "closelog", 16, V_NONE, NULL),
	R(DROPNOTIFY, "dropnotify", 16, V_NONE, NULL),
	R(INITIALIZE, "initialize", 112, V_NONE, f_initialize),
	R(PMCALLOCATE, "pmcallocate", 40, V_NONE, f_pmcallocate),
	R(PMCATTACH, "pmcattach", 24, V_PATH, f_pmcattach),
	R(PMCDETACH, "pmcdetach", 24, V_NONE, f_pmcdetach),
	R(PROCCSW, "proccsw", 40, V_NONE, f_proccsw),
	R(PROCEXEC, "procexec", 40, V_PATH, f_procexec),
	R(PROCEXIT, "procexit", 32, V_NONE, f_procexit),
	R(PROCFORK, "procfork", 24, V_NONE, f_procfork),
	R(SYSEXIT, "sysexit", 24, V_NONE, f_pid),
	R(USERDATA, "userdata", 24, V_NONE, f_userdata),
	R(MAP_IN, "map_in", 32, V_PATH, f_map_in),
	R(MAP_OUT, "map_out", 40, V_NONE, f_map_out),
	R(CALLCHAIN, "callchain", 32, V_PCS, f_callchain),
	R(PMCALLOCATEDYN, "pmcallocatedyn", 96, V_NONE, f_pmcallocatedyn),
	R(THR_CREATE, "thr_create", 52, V_NONE, f_thr_create),
	R(THR_EXIT, "thr_exit", 24, V_NONE, f_tid),
	R(PROC_CREATE, "proc_create", 44, V_NONE, f_proc_create),
	R(GENERATED, "generated", 16, V_GEN, NULL),
	R(PERIOD, "period", 32, V_NONE, f_period),
};
#undef R

const char *fmt_type_name(unsigned int type)
{
	return type <= PMCRING_TYPE_MAX ? rules[type].name : NULL;
}

int fmt_type_lookup(const char *name)
{
	unsigned int t;

	for (t = 0; t <= PMCRING_TYPE_MAX; t++)
		if (rules[t].name && !strcasecmp(rules[t].name, name))
			return (int)t;
	return -1;
}

int fmt_types_parse(const char *list, uint64_t *mask)
{
	const char *p = list, *end;
	char name[32];
	size_t n;
	int t;

	*mask = 0;
	if (!*p)
		return -EINVAL;
	while (*p) {
		end = strchr(p, ',');
		n = end ? (size_t)(end - p) : strlen(p);
		if (!n || n >= sizeof(name))
			return -EINVAL;
		memcpy(name, p, n);
		name[n] = '\0';
		if (!strcasecmp(name, "all")) {
			*mask |= PMCRING_TYPES_ALL;
		} else {
			t = fmt_type_lookup(name);
			if (t < 0)
				return -EINVAL;
			*mask |= PMCRING_TYPE_BIT(t);
		}
		p += n;
		if (*p == ',' && !*++p)
			return -EINVAL;
	}
	return 0;
}

int fmt_rec_check(const void *p, size_t avail, uint32_t *len)
{
	const struct rec_rule *r;
	uint32_t h, l, type;

	if (avail < 4)
		return 1;
	h = fmt_get32(p, 0);
	l = PMCRING_HEADER_LEN(h);
	type = PMCRING_HEADER_TYPE(h);
	if (PMCRING_HEADER_MAGIC(h) != PMCRING_LOG_MAGIC || type > PMCRING_TYPE_MAX)
		return -EINVAL;
	r = &rules[type];
	if (!r->name || l < PMCRING_HEADER_SIZE || l > PMCRING_RECORD_MAX || l % 4)
		return -EINVAL;
	switch (r->var) {
	case V_NONE:
		if (l != r->size)
			return -EINVAL;
		break;
	case V_PATH:
		/* FreeBSD: the path area is at most PATH_MAX bytes */
		if (l < r->size || l - r->size > PMCRING_PATH_MAX)
			return -EINVAL;
		break;
	case V_PCS:
		if (l < r->size || (l - r->size) % 8)
			return -EINVAL;
		break;
	case V_GEN:
		if (l % 8)
			return -EINVAL;
		break;
	}
	if (avail < l)
		return 1;
	*len = l;
	return 0;
}

/*
 * Key/value emitter for text ("k=v ") and JSON ("\"k\":v,"): `pmcring
 * dump`, and JSON in buffers smaller than FMT_JSON_MAX.  The blob writer's
 * JSON goes through json_fast() below, which must make the same bytes.
 * Output is cut at sz - 1 bytes and always NUL-terminated.
 */
struct em {
	char	*buf;
	size_t	sz, n;
	bool	json;
};

static void em_put(struct em *e, const char *p, size_t len)
{
	if (e->n + 1 >= e->sz)
		return;
	if (len > e->sz - 1 - e->n)
		len = e->sz - 1 - e->n;
	memcpy(e->buf + e->n, p, len);
	e->n += len;
	e->buf[e->n] = '\0';
}

static inline void em_c(struct em *e, char c)
{
	if (e->n + 1 >= e->sz)
		return;
	e->buf[e->n++] = c;
	e->buf[e->n] = '\0';
}

/* A short NUL-terminated string (a key), byte by byte: no calls. */
static inline void em_str(struct em *e, const char *s)
{
	char *buf = e->buf;	/* locals: char stores may alias *e */
	size_t n = e->n, last = e->sz - 1;

	if (!e->sz)
		return;
	while (*s && n < last)
		buf[n++] = *s++;
	buf[n] = '\0';
	e->n = n;
}

/* Two digits at a time: half the divisions. */
static const char dec_pairs[201] =
	"00010203040506070809101112131415161718192021222324252627282930313233"
	"34353637383940414243444546474849505152535455565758596061626364656667"
	"6869707172737475767778798081828384858687888990919293949596979899";

/* @v in decimal, ending at @end (at least 20 bytes before it); the start. */
static char *dec_back(char *end, uint64_t v)
{
	while (v >= 100) {
		end -= 2;
		memcpy(end, dec_pairs + 2 * (v % 100), 2);
		v /= 100;
	}
	if (v >= 10) {
		end -= 2;
		memcpy(end, dec_pairs + 2 * v, 2);
	} else {
		*--end = (char)('0' + v);
	}
	return end;
}

size_t fmt_dec(char *buf, uint64_t v)
{
	char t[20], *p = dec_back(t + sizeof(t), v);

	memcpy(buf, p, (size_t)(t + sizeof(t) - p));
	return (size_t)(t + sizeof(t) - p);
}

static void em_dec(struct em *e, uint64_t v)
{
	char t[20], *p = dec_back(t + sizeof(t), v);
	size_t len = (size_t)(t + sizeof(t) - p);

	if (e->n + len < e->sz) {	/* the common case: room */
		memcpy(e->buf + e->n, p, len);
		e->n += len;
		e->buf[e->n] = '\0';
		return;
	}
	em_put(e, p, len);
}

static void em_hex(struct em *e, uint64_t v, unsigned int min_digits)
{
	static const char digits[] = "0123456789abcdef";
	char t[16];
	size_t i = sizeof(t);

	do {
		t[--i] = digits[v & 15];
		v >>= 4;
	} while (v || sizeof(t) - i < min_digits);
	em_put(e, t + i, sizeof(t) - i);
}

static void em_key(struct em *e, const char *k)
{
	if (e->json) {
		em_str(e, e->n > 1 ? ",\"" : "\"");
		em_str(e, k);
		em_str(e, "\":");
	} else {
		if (e->n)
			em_c(e, ' ');
		em_str(e, k);
		em_c(e, '=');
	}
}

static void em_u(struct em *e, const char *k, uint64_t v)
{
	em_key(e, k);
	em_dec(e, v);
}

/* Addresses, flags: hex in text, a number in JSON. */
static void em_x(struct em *e, const char *k, uint64_t v)
{
	em_key(e, k);
	if (e->json) {
		em_dec(e, v);
	} else {
		em_put(e, "0x", 2);
		em_hex(e, v, 1);
	}
}

/*
 * A string of at most @max bytes.  JSON: escaped, and ',' replaced by ';'
 * because ldms-csv-from-blobs rejects values containing ','.
 */
static void em_s(struct em *e, const char *k, const char *s, size_t max)
{
	size_t i, run;

	em_key(e, k);
	em_c(e, '"');
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		/* plain characters go out in one piece */
		for (run = 0; i + run < max && s[i + run] &&
		     (unsigned char)s[i + run] >= 0x20 &&
		     (unsigned char)s[i + run] < 0x7f && s[i + run] != '"' &&
		     s[i + run] != '\\' && !(e->json && s[i + run] == ','); run++)
			;
		if (run) {
			em_put(e, s + i, run);
			i += run - 1;
			continue;
		}
		if (e->json && c == ',') {
			em_c(e, ';');
		} else if (c == '"' || c == '\\') {
			em_c(e, '\\');
			em_c(e, (char)c);
		} else {
			em_put(e, e->json ? "\\u" : "\\x", 2);
			em_hex(e, c, e->json ? 4 : 2);
		}
	}
	em_c(e, '"');
}

static void em_field(struct em *e, const struct rec_field *f,
		     const uint8_t *r)
{
	switch (f->how) {
	case F_PID:
		if (!e->json && fmt_get32(r, f->off) == UINT32_MAX) {
			em_key(e, f->key);
			em_put(e, "-1", 2);
			break;
		}
		/* fall through */
	case F_U32:
		em_u(e, f->key, fmt_get32(r, f->off));
		break;
	case F_X32:
		em_x(e, f->key, fmt_get32(r, f->off));
		break;
	case F_U64:
		em_u(e, f->key, fmt_get64(r, f->off));
		break;
	case F_X64:
		em_x(e, f->key, fmt_get64(r, f->off));
		break;
	case F_STR:
		em_s(e, f->key, (const char *)r + f->off, f->max);
		break;
	}
}

/* The fields of record @r of @len bytes, checked by fmt_rec_check(). */
static void em_fields(struct em *e, const uint8_t *r, uint32_t len)
{
	uint32_t type = PMCRING_HEADER_TYPE(fmt_get32(r, 0)), i, n;
	const struct rec_rule *rule;
	const struct rec_field *f;

	if (type > PMCRING_TYPE_MAX)
		return;
	rule = &rules[type];
	for (f = rule->fields; f && f->key; f++)
		em_field(e, f, r);
	switch (rule->var) {
	case V_PATH:
		em_s(e, "path", (const char *)r + rule->size, len - rule->size);
		break;
	case V_PCS:		/* CALLCHAIN */
		em_u(e, "cc_cpu", fmt_get32(r, 28) >> 16);
		em_x(e, "cc_flags", fmt_get32(r, 28) & 0xffff);
		n = (len - 32) / 8;
		em_u(e, "npc", n);
		/* One string, ';' separated: no ',' for ldms-csv-from-blobs. */
		em_key(e, "pc");
		em_c(e, '"');
		for (i = 0; i < n; i++) {
			if (i)
				em_c(e, ';');
			em_put(e, "0x", 2);
			em_hex(e, fmt_get64(r, 32 + 8 * i), 1);
		}
		em_c(e, '"');
		break;
	case V_GEN:
		em_u(e, "len", len);
		if (len >= 24)
			em_u(e, "seq", fmt_get64(r, 16));
		if (len >= 32) {
			em_u(e, "gen_cpu", fmt_get32(r, 24));
			em_u(e, "ctx", fmt_get32(r, 28));
		}
		break;
	}
}

size_t fmt_rec_text(char *buf, size_t sz, const void *rec, uint32_t len)
{
	struct em e = { buf, sz, 0, false };

	if (sz)
		buf[0] = '\0';
	em_fields(&e, rec, len);
	return e.n;
}

/* The emitter's JSON: for buffers and records json_fast() does not take. */
static size_t json_em(char *buf, size_t sz, const void *rec, uint32_t len,
		      uint32_t cpu, const struct timespec *rt)
{
	struct em e = { buf, sz, 0, true };
	uint32_t type = PMCRING_HEADER_TYPE(fmt_get32(rec, 0));

	if (sz < 2)
		return 0;
	em_c(&e, '{');
	em_s(&e, "type", fmt_type_name(type) ? fmt_type_name(type) : "?", 32);
	em_u(&e, "ts", fmt_get64(rec, 8));
	em_u(&e, "sec", (uint64_t)rt->tv_sec);
	em_u(&e, "usec", (uint64_t)rt->tv_nsec / 1000);
	em_u(&e, "cpu", cpu);
	em_fields(&e, rec, len);
	em_c(&e, '}');
	/* The NUL ends the message: ldms-csv-from-blobs splits on it. */
	return e.n + 1 <= sz ? e.n + 1 : sz;
}

/*
 * ---- JSON for the blob writer: one pass, straight into the buffer ----
 *
 * The same bytes as json_em(), about 4x cheaper (6x under TCG; make -C
 * user fmt-bench): the keys and each type's head are made by the compiler
 * and copied with fixed-size moves, numbers are written in place two
 * digits at a time once their length is known, hex goes a byte at a time
 * through a table, and nothing checks for room per field: json_fast()
 * runs only when the whole worst case fits.
 */

/* Bytes a fixed-size copy may write past the end of what it adds. */
#define JSON_SLACK	32u

static const uint64_t pow10_u64[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull,
	10000000ull, 100000000ull, 1000000000ull, 10000000000ull,
	100000000000ull, 1000000000000ull, 10000000000000ull,
	100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull,
	10000000000000000000ull,
};

/* Decimal digits of @v (1 for 0). */
static inline unsigned int dec_digits(uint64_t v)
{
	/*
	 * bits * 1233 / 4096 is floor(log10(2^bits)) for bits <= 64: the
	 * digits, or one less.  v | 1 has the digits of v (a power of ten
	 * is even).
	 */
	uint64_t x = v | 1;
	unsigned int t = ((64u - (unsigned int)__builtin_clzll(x)) * 1233u) >> 12;

	return t + (x >= pow10_u64[t]);
}

/* @v in decimal at @p; returns the end. */
static inline char *json_dec(char *p, uint64_t v)
{
	char *end = p + dec_digits(v), *e = end;
	uint32_t w;

	/* 64-bit divisions only while the value needs them */
	while (v >= 100000000u) {
		w = (uint32_t)(v % 100000000u);
		v /= 100000000u;
		e -= 8;
		memcpy(e + 6, dec_pairs + 2 * (w % 100), 2);
		w /= 100;
		memcpy(e + 4, dec_pairs + 2 * (w % 100), 2);
		w /= 100;
		memcpy(e + 2, dec_pairs + 2 * (w % 100), 2);
		memcpy(e, dec_pairs + 2 * (w / 100), 2);
	}
	w = (uint32_t)v;
	while (w >= 100) {
		e -= 2;
		memcpy(e, dec_pairs + 2 * (w % 100), 2);
		w /= 100;
	}
	if (w >= 10)
		memcpy(e - 2, dec_pairs + 2 * w, 2);
	else
		e[-1] = (char)('0' + w);
	return end;
}

/* "0x" and @v in lowercase hex without leading zeros; returns the end. */
static inline char *json_hex(char *p, uint64_t v)
{
	static const char hex_pairs[513] =
		"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
		"202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
		"404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
		"606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
		"808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
		"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
		"c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
		"e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";
	unsigned int n = (67u - (unsigned int)__builtin_clzll(v | 1)) / 4;
	char *end = p + 2 + n, *e = end;

	memcpy(p, "0x", 2);
	for (; n >= 2; n -= 2, v >>= 8) {
		e -= 2;
		memcpy(e, hex_pairs + 2 * (v & 0xff), 2);
	}
	if (n)
		e[-1] = hex_pairs[2 * (v & 15) + 1];
	return end;
}

/*
 * A string of at most @max bytes, quoted, escaped as em_s() does: '"' and
 * '\' backslashed, ',' as ';', other bytes outside 0x20..0x7e as \u00xx.
 */
static char *json_str(char *p, const char *s, size_t max)
{
	size_t i;

	*p++ = '"';
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\' && c != ',') {
			*p++ = (char)c;
		} else if (c == ',') {
			*p++ = ';';
		} else if (c == '"' || c == '\\') {
			*p++ = '\\';
			*p++ = (char)c;
		} else {
			memcpy(p, "\\u00", 4);
			p[4] = "0123456789abcdef"[c >> 4];
			p[5] = "0123456789abcdef"[c & 15];
			p += 6;
		}
	}
	*p++ = '"';
	return p;
}

/* A key made by the compiler, "," included. */
#define JKEY(p, k)	(memcpy(p, k, sizeof(k) - 1), (p) + sizeof(k) - 1)

/*
 * Whether json_fast() takes a record: a length fmt_rec_check() could
 * accept, so that its output fits FMT_JSON_MAX - JSON_SLACK.  The worst
 * cases: a CALLCHAIN of PMCRING_RECORD_MAX bytes, 512 PCs of 19 bytes
 * ("0x", 16 digits, ';'); a path of PMCRING_PATH_MAX + 3 bytes, 6 each.
 */
static bool json_fast_ok(const struct rec_rule *rule, uint32_t len)
{
	if (len > PMCRING_RECORD_MAX)
		return false;
	if (rule->var == V_PATH)
		return len >= rule->size &&
		       len - rule->size <= PMCRING_PATH_MAX + 3;
	if (rule->var == V_PCS)
		return len >= rule->size;
	return true;
}

_Static_assert(256 + (PMCRING_RECORD_MAX - 32) / 8 * 19 + JSON_SLACK <=
	       FMT_JSON_MAX, "a CALLCHAIN's JSON fits FMT_JSON_MAX");
_Static_assert(512 + (PMCRING_PATH_MAX + 3) * 6 + JSON_SLACK <= FMT_JSON_MAX,
	       "a path's JSON fits FMT_JSON_MAX");

/* fmt_rec_json() of a record json_fast_ok() took, into FMT_JSON_MAX bytes. */
static size_t json_fast(char *buf, const uint8_t *r, uint32_t len,
			const struct rec_rule *rule, uint32_t cpu,
			const struct timespec *rt)
{
	static const char unknown[32] = JHEAD("?");
	const struct rec_field *f;
	char *p = buf;
	uint32_t i, n, w;

	if (rule && rule->name) {
		memcpy(p, rule->jhead, sizeof(rule->jhead));
		p += rule->jlen;
	} else {
		memcpy(p, unknown, sizeof(unknown));
		p += sizeof(JHEAD("?")) - 1;
		rule = NULL;
	}
	p = json_dec(p, fmt_get64(r, 8));
	p = JKEY(p, ",\"sec\":");
	p = json_dec(p, (uint64_t)rt->tv_sec);
	p = JKEY(p, ",\"usec\":");
	p = json_dec(p, (uint64_t)rt->tv_nsec / 1000);
	p = JKEY(p, ",\"cpu\":");
	p = json_dec(p, cpu);
	for (f = rule ? rule->fields : NULL; f && f->key; f++) {
		memcpy(p, f->jkey, sizeof(f->jkey));
		p += f->jlen;
		switch (f->how) {
		case F_U32:
		case F_X32:
		case F_PID:
			p = json_dec(p, fmt_get32(r, f->off));
			break;
		case F_U64:
		case F_X64:
			p = json_dec(p, fmt_get64(r, f->off));
			break;
		case F_STR:
			p = json_str(p, (const char *)r + f->off, f->max);
			break;
		}
	}
	switch (rule ? rule->var : V_NONE) {
	case V_PATH:
		p = JKEY(p, ",\"path\":");
		p = json_str(p, (const char *)r + rule->size, len - rule->size);
		break;
	case V_PCS:		/* CALLCHAIN */
		w = fmt_get32(r, 28);
		n = (len - 32) / 8;
		p = JKEY(p, ",\"cc_cpu\":");
		p = json_dec(p, w >> 16);
		p = JKEY(p, ",\"cc_flags\":");
		p = json_dec(p, w & 0xffff);
		p = JKEY(p, ",\"npc\":");
		p = json_dec(p, n);
		p = JKEY(p, ",\"pc\":\"");
		for (i = 0; i < n; i++) {
			p = json_hex(p, fmt_get64(r, 32 + 8 * i));
			*p++ = ';';
		}
		p[-(n != 0)] = '"';	/* over the last ';' */
		p += n == 0;
		break;
	case V_GEN:
		p = JKEY(p, ",\"len\":");
		p = json_dec(p, len);
		if (len >= 24) {
			p = JKEY(p, ",\"seq\":");
			p = json_dec(p, fmt_get64(r, 16));
		}
		if (len >= 32) {
			p = JKEY(p, ",\"gen_cpu\":");
			p = json_dec(p, fmt_get32(r, 24));
			p = JKEY(p, ",\"ctx\":");
			p = json_dec(p, fmt_get32(r, 28));
		}
		break;
	}
	*p++ = '}';
	/* The NUL ends the message: ldms-csv-from-blobs splits on it. */
	*p++ = '\0';
	return (size_t)(p - buf);
}

size_t fmt_rec_json(char *buf, size_t sz, const void *rec, uint32_t len,
		    uint32_t cpu, const struct timespec *rt)
{
	uint32_t type = PMCRING_HEADER_TYPE(fmt_get32(rec, 0));
	const struct rec_rule *rule = type <= PMCRING_TYPE_MAX ? &rules[type] : NULL;

	if (sz >= FMT_JSON_MAX && (!rule || json_fast_ok(rule, len)))
		return json_fast(buf, rec, len, rule, cpu, rt);
	return json_em(buf, sz, rec, len, cpu, rt);
}

size_t fmt_json_add_u64(char *json, size_t len, size_t sz, const char *key,
			uint64_t v)
{
	size_t k = strlen(key);
	char *p;

	/* the object ends "}\0"; a cut one (no room) is left alone */
	if (len < 3 || json[len - 1] || json[len - 2] != '}' ||
	    len + k + 20 > sz)
		return len;
	p = json + len - 2;
	memcpy(p, key, k);
	p += k;
	p += fmt_dec(p, v);
	*p++ = '}';
	*p++ = '\0';
	return (size_t)(p - json);
}
