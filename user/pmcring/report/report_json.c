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
#include <linux/pmcring.h>

#include "report.h"

#define RJ_STR	1024		/* longest string kept (paths: PATH_MAX) */

struct rj {
	char		type[32];
	char		path[RJ_STR];	/* path, comm or name */
	char		pc[PMCRING_CALLCHAIN_DEPTH_MAX * 20];
	uint64_t	ts, cpu, pid, tid, pmcid, cc_cpu, dyn, start, value;
	uint64_t	oldpid, newpid;
	bool		has_cc_cpu;
};

/* A JSON string at *p (after the opening quote) into @out; end past it. */
static const char *rj_string(const char *p, const char *end, char *out,
			     size_t sz)
{
	size_t n = 0;

	while (p < end && *p != '"') {
		char c = *p++;

		if (c == '\\' && p < end) {
			c = *p++;
			if (c == 'u' && end - p >= 4) {
				char hex[5] = { p[0], p[1], p[2], p[3], 0 };

				c = (char)strtoul(hex, NULL, 16);
				p += 4;
			} else if (c == 'n') {
				c = '\n';
			} else if (c == 't') {
				c = '\t';
			}
		}
		if (n + 1 < sz)
			out[n++] = c;
	}
	if (sz)
		out[n] = 0;
	return p < end ? p + 1 : NULL;
}

static void rj_field(struct rj *j, const char *key, const char *s, uint64_t v,
		     bool is_str)
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
	};
	size_t i;

	if (is_str) {
		if (!strcmp(key, "type"))
			snprintf(j->type, sizeof(j->type), "%s", s);
		else if (!strcmp(key, "path") || !strcmp(key, "comm") ||
			 !strcmp(key, "name"))
			snprintf(j->path, sizeof(j->path), "%s", s);
		else if (!strcmp(key, "pc"))
			snprintf(j->pc, sizeof(j->pc), "%s", s);
		return;
	}
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		if (!strcmp(key, nums[i].key)) {
			memcpy((char *)j + nums[i].off, &v, sizeof(v));
			if (!strcmp(key, "cc_cpu"))
				j->has_cc_cpu = true;
		}
	}
}

/* Parse one flat object; -EINVAL if it is not one. */
static int rj_parse(const char *p, size_t len, struct rj *j)
{
	const char *end = p + len;
	char key[32], *val = malloc(sizeof(j->pc));
	int err = -EINVAL;

	if (!val)
		return -ENOMEM;
	memset(j, 0, sizeof(*j));
	while (p < end && *p != '{')
		p++;
	for (p++; p && p < end;) {
		uint64_t v = 0;
		char *num_end;

		while (p < end && (*p == ' ' || *p == ','))
			p++;
		if (p < end && *p == '}') {
			err = 0;
			break;
		}
		if (p >= end || *p != '"')
			break;
		p = rj_string(p + 1, end, key, sizeof(key));
		if (!p || p >= end || *p != ':')
			break;
		p++;
		if (p < end && *p == '"') {
			p = rj_string(p + 1, end, val, sizeof(j->pc));
			if (p)
				rj_field(j, key, val, 0, true);
			continue;
		}
		v = strtoull(p, &num_end, 10);
		if (num_end == p || num_end > end)
			break;
		rj_field(j, key, NULL, v, false);
		p = num_end;
	}
	free(val);
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
