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

/* Size rules of each type: exact length, or minimum and where a path starts. */
struct rec_rule {
	const char	*name;
	uint16_t	size;		/* exact size, or minimum if var */
	uint8_t		var;		/* 1: path at size, 2: 8-byte PCs, 3: gen */
};

#define R(t, n, s, v) [PMCRING_TYPE_##t] = { n, s, v }
static const struct rec_rule rules[PMCRING_TYPE_MAX + 1] = {
	R(CLOSELOG, "closelog", 16, 0),
	R(DROPNOTIFY, "dropnotify", 16, 0),
	R(INITIALIZE, "initialize", 112, 0),
	R(PMCALLOCATE, "pmcallocate", 40, 0),
	R(PMCATTACH, "pmcattach", 24, 1),
	R(PMCDETACH, "pmcdetach", 24, 0),
	R(PROCCSW, "proccsw", 40, 0),
	R(PROCEXEC, "procexec", 40, 1),
	R(PROCEXIT, "procexit", 32, 0),
	R(PROCFORK, "procfork", 24, 0),
	R(SYSEXIT, "sysexit", 24, 0),
	R(USERDATA, "userdata", 24, 0),
	R(MAP_IN, "map_in", 32, 1),
	R(MAP_OUT, "map_out", 40, 0),
	R(CALLCHAIN, "callchain", 32, 2),
	R(PMCALLOCATEDYN, "pmcallocatedyn", 96, 0),
	R(THR_CREATE, "thr_create", 52, 0),
	R(THR_EXIT, "thr_exit", 24, 0),
	R(PROC_CREATE, "proc_create", 44, 0),
	R(GENERATED, "generated", 16, 3),
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
	case 0:
		if (l != r->size)
			return -EINVAL;
		break;
	case 1:
		if (l < r->size || l - r->size > PMCRING_PATH_MAX + 3)
			return -EINVAL;
		break;
	case 2:
		if (l < r->size || (l - r->size) % 8)
			return -EINVAL;
		break;
	case 3:
		if (l % 8)
			return -EINVAL;
		break;
	}
	if (avail < l)
		return 1;
	*len = l;
	return 0;
}

/* Key/value emitter for text ("k=v ") and JSON ("\"k\":v,"). */
struct em {
	char	*buf;
	size_t	sz, n;
	bool	json;
};

static void em_raw(struct em *e, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void em_raw(struct em *e, const char *fmt, ...)
{
	va_list ap;
	int r;

	if (e->n >= e->sz)
		return;
	va_start(ap, fmt);
	r = vsnprintf(e->buf + e->n, e->sz - e->n, fmt, ap);
	va_end(ap);
	if (r > 0)
		e->n += (size_t)r < e->sz - e->n ? (size_t)r : e->sz - e->n - 1;
}

static void em_key(struct em *e, const char *k)
{
	if (e->json)
		em_raw(e, "%s\"%s\":", e->n > 1 ? "," : "", k);
	else
		em_raw(e, "%s%s=", e->n ? " " : "", k);
}

static void em_u(struct em *e, const char *k, uint64_t v)
{
	em_key(e, k);
	em_raw(e, "%" PRIu64, v);
}

/* Addresses, flags: hex in text, a number in JSON. */
static void em_x(struct em *e, const char *k, uint64_t v)
{
	em_key(e, k);
	em_raw(e, e->json ? "%" PRIu64 : "0x%" PRIx64, v);
}

/*
 * A string of at most @max bytes.  JSON: escaped, and ',' replaced by ';'
 * because ldms-csv-from-blobs rejects values containing ','.
 */
static void em_s(struct em *e, const char *k, const char *s, size_t max)
{
	size_t i;

	em_key(e, k);
	em_raw(e, "\"");
	for (i = 0; i < max && s[i]; i++) {
		unsigned char c = (unsigned char)s[i];

		if (e->json && c == ',')
			em_raw(e, ";");
		else if (c == '"' || c == '\\')
			em_raw(e, "\\%c", c);
		else if (c < 0x20 || c >= 0x7f)
			em_raw(e, e->json ? "\\u%04x" : "\\x%02x", c);
		else
			em_raw(e, "%c", c);
	}
	em_raw(e, "\"");
}

static void em_fields(struct em *e, const uint8_t *r, uint32_t len)
{
	uint32_t type = PMCRING_HEADER_TYPE(fmt_get32(r, 0)), i, n;
	const char *path;

	path = (const char *)r + (rules[type].var == 1 ? rules[type].size : 0);
	switch (type) {
	case PMCRING_TYPE_INITIALIZE:
		em_x(e, "version", fmt_get32(r, 16));
		em_x(e, "cputype", fmt_get32(r, 20));
		em_u(e, "tsc_freq", fmt_get64(r, 24));
		em_u(e, "start_sec", fmt_get64(r, 32));
		em_u(e, "start_nsec", fmt_get64(r, 40));
		em_s(e, "cpuid", (const char *)r + 48, PMCRING_CPUID_LEN);
		break;
	case PMCRING_TYPE_PMCALLOCATE:
		em_x(e, "pmcid", fmt_get32(r, 16));
		em_x(e, "event", fmt_get32(r, 20));
		em_x(e, "flags", fmt_get32(r, 24));
		em_u(e, "rate", fmt_get64(r, 32));
		break;
	case PMCRING_TYPE_PMCATTACH:
		em_x(e, "pmcid", fmt_get32(r, 16));
		em_u(e, "pid", fmt_get32(r, 20));
		em_s(e, "path", path, len - 24);
		break;
	case PMCRING_TYPE_PMCDETACH:
		em_x(e, "pmcid", fmt_get32(r, 16));
		em_u(e, "pid", fmt_get32(r, 20));
		break;
	case PMCRING_TYPE_PROCCSW:
		em_x(e, "pmcid", fmt_get32(r, 24));
		em_u(e, "pid", fmt_get32(r, 28));
		em_u(e, "tid", fmt_get32(r, 32));
		em_u(e, "value", fmt_get64(r, 16));
		break;
	case PMCRING_TYPE_PROCEXEC:
		em_u(e, "pid", fmt_get32(r, 16));
		em_x(e, "pmcid", fmt_get32(r, 20));
		em_x(e, "base", fmt_get64(r, 24));
		em_x(e, "dyn", fmt_get64(r, 32));
		em_s(e, "path", path, len - 40);
		break;
	case PMCRING_TYPE_PROCEXIT:
		em_x(e, "pmcid", fmt_get32(r, 16));
		em_u(e, "pid", fmt_get32(r, 20));
		em_u(e, "value", fmt_get64(r, 24));
		break;
	case PMCRING_TYPE_PROCFORK:
		em_u(e, "oldpid", fmt_get32(r, 16));
		em_u(e, "newpid", fmt_get32(r, 20));
		break;
	case PMCRING_TYPE_SYSEXIT:
		em_u(e, "pid", fmt_get32(r, 16));
		break;
	case PMCRING_TYPE_USERDATA:
		em_x(e, "userdata", fmt_get32(r, 16));
		break;
	case PMCRING_TYPE_MAP_IN:
		em_u(e, "pid", fmt_get32(r, 16));
		em_x(e, "start", fmt_get64(r, 24));
		em_s(e, "path", path, len - 32);
		break;
	case PMCRING_TYPE_MAP_OUT:
		em_u(e, "pid", fmt_get32(r, 16));
		em_x(e, "start", fmt_get64(r, 24));
		em_x(e, "end", fmt_get64(r, 32));
		break;
	case PMCRING_TYPE_CALLCHAIN:
		em_u(e, "pid", fmt_get32(r, 16));
		em_u(e, "tid", fmt_get32(r, 20));
		em_x(e, "pmcid", fmt_get32(r, 24));
		em_u(e, "cc_cpu", fmt_get32(r, 28) >> 16);
		em_x(e, "cc_flags", fmt_get32(r, 28) & 0xffff);
		n = (len - 32) / 8;
		em_u(e, "npc", n);
		/* One string, ';' separated: no ',' for ldms-csv-from-blobs. */
		em_key(e, "pc");
		em_raw(e, "\"");
		for (i = 0; i < n; i++)
			em_raw(e, "%s0x%" PRIx64, i ? ";" : "",
			       fmt_get64(r, 32 + 8 * i));
		em_raw(e, "\"");
		break;
	case PMCRING_TYPE_PMCALLOCATEDYN:
		em_x(e, "pmcid", fmt_get32(r, 16));
		em_x(e, "event", fmt_get32(r, 20));
		em_x(e, "flags", fmt_get32(r, 24));
		em_s(e, "name", (const char *)r + 32, PMCRING_NAME_MAX);
		break;
	case PMCRING_TYPE_THR_CREATE:
		em_u(e, "tid", fmt_get32(r, 16));
		em_u(e, "pid", fmt_get32(r, 20));
		em_x(e, "flags", fmt_get32(r, 24));
		em_s(e, "name", (const char *)r + 32, PMCRING_COMM_LEN);
		break;
	case PMCRING_TYPE_THR_EXIT:
		em_u(e, "tid", fmt_get32(r, 16));
		break;
	case PMCRING_TYPE_PROC_CREATE:
		em_u(e, "pid", fmt_get32(r, 16));
		em_x(e, "flags", fmt_get32(r, 20));
		em_s(e, "comm", (const char *)r + 24, PMCRING_COMM_LEN);
		break;
	case PMCRING_TYPE_GENERATED:
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

size_t fmt_rec_json(char *buf, size_t sz, const void *rec, uint32_t len,
		    uint32_t cpu, const struct timespec *rt)
{
	struct em e = { buf, sz, 0, true };
	uint32_t type = PMCRING_HEADER_TYPE(fmt_get32(rec, 0));

	if (sz < 2)
		return 0;
	em_raw(&e, "{");
	em_s(&e, "type", fmt_type_name(type) ? fmt_type_name(type) : "?", 32);
	em_u(&e, "ts", fmt_get64(rec, 8));
	em_u(&e, "sec", (uint64_t)rt->tv_sec);
	em_u(&e, "usec", (uint64_t)rt->tv_nsec / 1000);
	em_u(&e, "cpu", cpu);
	em_fields(&e, rec, len);
	em_raw(&e, "}");
	/* The NUL ends the message: ldms-csv-from-blobs splits on it. */
	return e.n + 1 <= sz ? e.n + 1 : sz;
}
