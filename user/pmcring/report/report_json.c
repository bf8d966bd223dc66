// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring report` on LDMS blob files written with --blob-json: each message
 * is one flat JSON object of scalars (fmt_rec_json()), e.g.
 *
 *	{"type":"callchain","ts":123,"sec":1,"usec":2,"cpu":0,"pid":7,
 *	 "tid":7,"pmcid":1,"cc_cpu":0,"cc_flags":1,"npc":2,
 *	 "pc":"0x401136;0x401170"}
 *
 * Strings have '"' and '\' escaped, bytes outside printable ASCII as
 * \u00XX, and ',' turned into ';' (ldms-csv-from-blobs rejects commas), so
 * a path with a comma does not come back exactly.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>
#include <linux/pmcring.h>

#include "report.h"

/* A flat object of scalars: nothing deeper is accepted. */
#define RJ_DEPTH	2

struct rj {
	char		type[32];
	char		path[1024];	/* path, comm or name: PATH_MAX */
	char		pc[PMCRING_CALLCHAIN_DEPTH_MAX * 20];
	uint64_t	ts, cpu, pid, tid, pmcid, cc_cpu, dyn, start, value;
	uint64_t	oldpid, newpid;
	uint64_t	period;		/* callchain: 0, none recorded */
	bool		has_cc_cpu;
};

/*
 * The string json-c decoded (UTF-8) back into the bytes the writer had.
 * fmt_rec_json() writes every byte outside printable ASCII as \u00XX (LDMS's
 * reader takes ASCII only), so a code point up to U+00FF stands for one byte
 * of the path; any other (another writer's \u263A, say) stays UTF-8.  A NUL
 * ends the string; @out is cut to @sz.
 */
static void rj_bytes(char *out, size_t sz, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n = 0;

	while (i < len && u[i] && n + 1 < sz) {
		if ((u[i] == 0xc2 || u[i] == 0xc3) && i + 1 < len &&
		    (u[i + 1] & 0xc0) == 0x80) {
			out[n++] = (char)(((u[i] & 0x03) << 6) | (u[i + 1] & 0x3f));
			i += 2;
		} else {
			out[n++] = (char)u[i++];
		}
	}
	out[n] = 0;
}

/* One member of the object into @j; -EINVAL if its value has the wrong type. */
static int rj_field(struct rj *j, const char *key, struct json_object *v)
{
	static const struct {
		const char	*key;
		size_t		off;
	} nums[] = {
		{ "ts", offsetof(struct rj, ts) },
		{ "cpu", offsetof(struct rj, cpu) },
		{ "pid", offsetof(struct rj, pid) },
		{ "tid", offsetof(struct rj, tid) },
		{ "pmcid", offsetof(struct rj, pmcid) },
		{ "cc_cpu", offsetof(struct rj, cc_cpu) },
		{ "dyn", offsetof(struct rj, dyn) },
		{ "start", offsetof(struct rj, start) },
		{ "value", offsetof(struct rj, value) },
		{ "oldpid", offsetof(struct rj, oldpid) },
		{ "newpid", offsetof(struct rj, newpid) },
		{ "period", offsetof(struct rj, period) },
	};
	char *dst = NULL;
	size_t i, sz = 0;
	uint64_t n;

	if (!strcmp(key, "type")) {
		dst = j->type;
		sz = sizeof(j->type);
	} else if (!strcmp(key, "path") || !strcmp(key, "comm") ||
		   !strcmp(key, "name")) {
		dst = j->path;
		sz = sizeof(j->path);
	} else if (!strcmp(key, "pc")) {
		dst = j->pc;
		sz = sizeof(j->pc);
	}
	if (dst) {
		if (!json_object_is_type(v, json_type_string))
			return -EINVAL;
		rj_bytes(dst, sz, json_object_get_string(v),
			 (size_t)json_object_get_string_len(v));
		return 0;
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (strcmp(key, nums[i].key))
			continue;
		if (!json_object_is_type(v, json_type_int))
			return -EINVAL;
		n = json_object_get_uint64(v);
		memcpy((char *)j + nums[i].off, &n, sizeof(n));
		if (!strcmp(key, "cc_cpu"))
			j->has_cc_cpu = true;
		return 0;
	}
	return 0;	/* a member this view does not use */
}

/*
 * Parse one message: exactly one JSON object, bounded by @len (blob
 * messages carry no terminator; NULs and blanks after it are padding), of
 * scalars only; -EINVAL if it is anything else.
 */
static int rj_parse(const char *p, size_t len, struct rj *j)
{
	struct json_tokener *tok;
	struct json_object *o;
	size_t end;
	int err = -EINVAL;

	memset(j, 0, sizeof(*j));
	while (len && (p[len - 1] == 0 || p[len - 1] == ' ' ||
		       p[len - 1] == '\n'))
		len--;
	if (!len || len > INT32_MAX)
		return -EINVAL;
	tok = json_tokener_new_ex(RJ_DEPTH);
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, p, (int)len);
	end = json_tokener_get_parse_end(tok);
	if (!o || json_tokener_get_error(tok) != json_tokener_success ||
	    end != len || !json_object_is_type(o, json_type_object))
		goto out;
	err = 0;
	json_object_object_foreach(o, key, v) {
		err = rj_field(j, key, v);
		if (err)
			break;
	}
out:
	json_object_put(o);
	json_tokener_free(tok);
	return err;
}

int report_json_record(struct report *r, const char *msg, size_t len,
		       uint64_t *pcs, unsigned int max)
{
	struct rj *j = malloc(sizeof(*j));
	unsigned int n = 0;
	char *s, *e;
	int err;

	if (!j)
		return -ENOMEM;
	err = rj_parse(msg, len, j);
	if (err)
		goto out;
	report_seen(r, j->ts);
	if (!strcmp(j->type, "callchain")) {
		for (s = j->pc; *s && n < max; s = *e ? e + 1 : e) {
			pcs[n++] = strtoull(s, &e, 16);
			if (e == s)
				break;
		}
		report_set_period(r, j->period);
		err = report_sample(r, j->ts, j->has_cc_cpu ? (int32_t)j->cc_cpu :
				    (int32_t)j->cpu, j->pid, j->tid, j->pmcid,
				    pcs, n);
	} else if (!strcmp(j->type, "procexec")) {
		report_exec(r, j->ts, j->pid, j->path, j->dyn);
	} else if (!strcmp(j->type, "map_in")) {
		report_map_in(r, j->pid, j->start, j->path);
	} else if (!strcmp(j->type, "map_out")) {
		report_map_out(r, j->pid, j->start);
	} else if (!strcmp(j->type, "procfork")) {
		report_fork(r, j->oldpid, j->newpid);
	} else if (!strcmp(j->type, "proc_create")) {
		report_proc_create(r, j->pid, j->path);
	} else if (!strcmp(j->type, "thr_create")) {
		report_thr_create(r, j->tid, j->pid, j->path);
	} else if (!strcmp(j->type, "proccsw")) {
		report_csw(r, j->ts, -1, j->pid, j->tid, j->pmcid, j->value);
	} else if (!strcmp(j->type, "pmcallocatedyn")) {
		report_pmc(r, j->pmcid, j->path);
	} else if (!strcmp(j->type, "dropnotify")) {
		report_drop(r, j->ts);
	}
out:
	free(j);
	return err;
}
