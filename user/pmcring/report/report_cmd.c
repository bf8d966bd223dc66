// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring report PATH`: read a pmclog (libpmcring's parser), barman or LDMS
 * blob file (the command's fmt readers), feed the records to the report
 * model and print the views.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include <libpmcring.h>

#include "flame.h"
#include "kallsyms.h"
#include "../formats/fmt.h"
#include "report.h"
#include "sym.h"

/* pid whose space holds every barman mapping (barman samples carry tids) */
#define REPORT_BM_ALL	0xfffffffeu

struct report_cmd {
	struct report	*r;
	const char	*path;
	int		kind;
	/* relative --time-from/--time-to, resolved at the first record */
	bool		rel_from, rel_to, first_seen;
	uint64_t	from, to;
	struct report_opts *o;
	struct pmcring_log *mem;	/* blob: a memory parser */
	struct fmt_bm_info bi;
	const char	*who;		/* "pmcring report", "pmcring script" */
	/* FILE.periods of a pmclog file, checked at INITIALIZE */
	const void	*pmap;
	size_t		plen;
	const uint8_t	*periods;	/* NULL: none (or not this file's) */
	size_t		nperiods;
	uint64_t	ncc;		/* CALLCHAINs read */
	/*
	 * A blob set's PERIOD records: the last one of each CPU and pmcid,
	 * for the CALLCHAINs of that CPU and pmcid after it (the writers'
	 * table; empty until one is read).
	 */
	struct fmt_period_last plast;
	uint64_t	pcs[PMCRING_CALLCHAIN_DEPTH_MAX];
	uint64_t	nread;		/* records taken in */
	bool		best_effort;	/* --best-effort: damage is exit 0 */
	bool		damaged;	/* damage told: exit 1 */
	bool		pdamaged;	/* FILE.periods damaged (told) */
	bool		dir;		/* path is a blob directory */
	bool		quiet;		/* report_scan_kernel(): says nothing */
};

/* Damage at @off of @path: told, and exit 1 unless --best-effort. */
static void report_cmd_damage(struct report_cmd *c, const char *path,
			      uint64_t off, const char *why, uint64_t nread)
{
	if (!c->quiet &&
	    fmt_say_damage(c->who, path, off, why, nread, c->best_effort))
		c->damaged = true;
}

static void report_cmd_first(struct report_cmd *c, uint64_t ts)
{
	if (c->first_seen)
		return;
	c->first_seen = true;
	if (c->rel_from || c->rel_to)
		report_set_time_range(c->r, c->rel_from ? ts + c->from : c->o->time_from,
				      c->rel_to ? ts + c->to : c->o->time_to);
}

/*
 * FILE.periods beside a pmclog file, mapped before reading it: its entries
 * are taken only if it names the recording INITIALIZE starts (the first
 * record), and only for the CALLCHAINs that come before any other
 * INITIALIZE.
 */
static void report_cmd_periods(struct report_cmd *c,
			       const struct pmcring_log_ev_initialize *i)
{
	struct timespec start = {
		.tv_sec = (time_t)i->pl_ts_sec, .tv_nsec = (long)i->pl_ts_nsec,
	};
	const uint8_t *p;
	size_t n, ok;
	int err;

	if (!c->pmap || c->periods || c->ncc)
		return;
	err = fmt_periods_read(c->pmap, c->plen, &start, &p, &n);
	if (err) {
		fprintf(stderr, "%s: warning: %s%s: %s; samples weigh the "
			"fixed period or 1\n", c->who, c->path,
			FMT_PERIODS_SUFFIX, err == -ESTALE ?
			"another recording's periods" : "not a periods file");
		return;
	}
	/* random bytes are not periods: the entries before them are */
	ok = fmt_periods_valid(p, n);
	if (ok < n) {
		fprintf(stderr, "%s: %s%s: damaged at offset %zu: period %"
			PRIu64 " is over 2^40, not a period; the %zu entries "
			"before it are used, later samples weigh the fixed "
			"period or 1%s\n", c->who, c->path, FMT_PERIODS_SUFFIX,
			FMT_PERIODS_HEADER + 8 * ok,
			le64toh(fmt_get64(p, 8 * ok)), ok, c->best_effort ?
			" (--best-effort: exit 0)" :
			" (exit 1; --best-effort: exit 0)");
		c->damaged |= !c->best_effort;
		c->pdamaged = true;
		n = ok;
	}
	c->periods = p;
	c->nperiods = n;
}

static void report_cmd_periods_map(struct report_cmd *c)
{
	char *path;

	if (c->quiet)	/* no sample is weighed */
		return;
	if (asprintf(&path, "%s" FMT_PERIODS_SUFFIX, c->path) < 0)
		return;
	if (!access(path, F_OK) && fmt_map_file(path, &c->pmap, &c->plen, c->who))
		c->pmap = NULL;
	free(path);
}

/* One parsed pmclog record (libpmcring's typed view) into the model. */
static int report_cmd_ev(struct report_cmd *c, const struct pmcring_log_ev *ev,
			 int32_t cpu)
{
	struct report *r = c->r;

	c->nread++;
	if (c->quiet && ev->pl_type != PMCRING_TYPE_CALLCHAIN)
		return 0;
	report_seen(r, ev->pl_ts);
	switch (ev->pl_type) {
	case PMCRING_TYPE_CALLCHAIN: {
		const struct pmcring_log_ev_callchain *cc = &ev->pl_u.pl_cc;

		uint64_t last;

		if (c->periods && c->ncc < c->nperiods)
			report_set_period(r, le64toh(fmt_get64(c->periods,
							       8 * c->ncc)));
		else if ((last = fmt_period_get(&c->plast, cc->pl_cpu,
						 cc->pl_pmcid)))
			report_set_period(r, last);
		c->ncc++;
		return report_sample(r, ev->pl_ts, cc->pl_cpu, cc->pl_pid,
				     cc->pl_tid, cc->pl_pmcid, cc->pl_pc,
				     cc->pl_npc);
	}
	case PMCRING_TYPE_PERIOD: {
		uint64_t *last = fmt_period_last(&c->plast,
						 ev->pl_u.pl_p.pl_cpu,
						 ev->pl_u.pl_p.pl_pmcid);

		if (last)
			*last = ev->pl_u.pl_p.pl_period;
		return 0;
	}
	case PMCRING_TYPE_PROCCSW:
		report_csw(r, ev->pl_ts, cpu, ev->pl_u.pl_c.pl_pid,
			   ev->pl_u.pl_c.pl_tid, ev->pl_u.pl_c.pl_pmcid,
			   ev->pl_u.pl_c.pl_value);
		break;
	case PMCRING_TYPE_PROCEXEC:
		report_exec(r, ev->pl_ts, ev->pl_u.pl_x.pl_pid,
			    ev->pl_u.pl_x.pl_pathname, ev->pl_u.pl_x.pl_dynaddr);
		break;
	case PMCRING_TYPE_MAP_IN:
		report_map_in(r, ev->pl_u.pl_mi.pl_pid, ev->pl_u.pl_mi.pl_start,
			      ev->pl_u.pl_mi.pl_pathname);
		break;
	case PMCRING_TYPE_MAP_OUT:
		report_map_out(r, ev->pl_u.pl_mo.pl_pid, ev->pl_u.pl_mo.pl_start);
		break;
	case PMCRING_TYPE_PROCFORK:
		report_fork(r, ev->pl_u.pl_f.pl_oldpid, ev->pl_u.pl_f.pl_newpid);
		break;
	case PMCRING_TYPE_PROC_CREATE:
		report_proc_create(r, ev->pl_u.pl_pc.pl_pid,
				   ev->pl_u.pl_pc.pl_pcomm);
		break;
	case PMCRING_TYPE_THR_CREATE:
		report_thr_create(r, ev->pl_u.pl_tc.pl_tid, ev->pl_u.pl_tc.pl_pid,
				  ev->pl_u.pl_tc.pl_tdname);
		break;
	case PMCRING_TYPE_PMCALLOCATEDYN:
		report_pmc_alloc(r, ev->pl_u.pl_ad.pl_pmcid,
				 ev->pl_u.pl_ad.pl_flags, 0,
				 ev->pl_u.pl_ad.pl_evname);
		break;
	case PMCRING_TYPE_PMCALLOCATE:
		report_pmc_alloc(r, ev->pl_u.pl_a.pl_pmcid,
				 ev->pl_u.pl_a.pl_flags, ev->pl_u.pl_a.pl_rate,
				 NULL);
		break;
	case PMCRING_TYPE_DROPNOTIFY:
		report_drop(r, ev->pl_ts);
		break;
	case PMCRING_TYPE_INITIALIZE:
		/* the wall clock of the start, for sym's file age check */
		sym_set_clock(report_sym(r), ev->pl_ts,
			      ev->pl_u.pl_i.pl_ts_sec * 1000000000ull +
			      ev->pl_u.pl_i.pl_ts_nsec);
		report_cmd_periods(c, &ev->pl_u.pl_i);
		break;
	default:
		break;
	}
	return 0;
}

/* libpmcring's parser fed a chunk at a time, as fmt_pmclog_read() */
#define REPORT_FEED_CHUNK	(256 * 1024)

static int report_cmd_pmclog(struct report_cmd *c, const void *img,
			     size_t len)
{
	struct pmcring_log_ev ev;
	struct pmcring_log *l;
	bool closed = false;
	size_t fed = 0, n;
	int ret, err = 0;

	l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	if (!l)
		return -errno;
	report_cmd_periods_map(c);
	for (;;) {
		ret = pmcring_log_read(l, &ev);
		if (ret && ev.pl_state == PMCRING_LOG_REQUIRE_DATA) {
			if (fed == len)
				break;	/* the end, maybe in a record */
			n = len - fed < REPORT_FEED_CHUNK ? len - fed :
							    REPORT_FEED_CHUNK;
			err = pmcring_log_feed(l, (const char *)img + fed, n);
			if (err)
				break;
			fed += n;
			continue;
		}
		if (ret && ev.pl_state == PMCRING_LOG_ERROR) {
			report_cmd_damage(c, c->path, ev.pl_offset,
					  ev.pl_reason, c->nread);
			closed = true;	/* said */
			break;
		}
		if (ret && ev.pl_state != PMCRING_LOG_EOF)
			break;
		report_cmd_first(c, ev.pl_ts);
		err = report_cmd_ev(c, &ev, -1);
		if (err || ret) {	/* CLOSELOG: EOF comes with it */
			closed = true;
			break;
		}
	}
	if (c->periods && c->ncc > c->nperiods && !c->pdamaged)
		fprintf(stderr, "%s: warning: %s%s has the periods of %zu of "
			"%" PRIu64 " samples (cut short); the others weigh the "
			"fixed period or 1\n", c->who, c->path,
			FMT_PERIODS_SUFFIX, c->nperiods, c->ncc);
	fmt_unmap_file(c->pmap, c->plen);
	c->pmap = NULL;
	c->periods = NULL;
	if (!err && !closed && !c->quiet)
		fprintf(stderr, "%s: %s: no CLOSELOG (the recording "
			"was cut short); reporting what is there\n", c->who,
			c->path);
	pmcring_log_close(l);
	return err;
}

/* ---- barman and blob through the command's readers ---- */

struct report_img {
	const void	*p;
	size_t		len;
};

static int report_cmd_item(const struct fmt_item *it, void *ctx)
{
	struct report_cmd *c = ctx;
	struct pmcring_log_ev ev;
	const uint8_t *ch;
	uint32_t i, n;

	report_cmd_first(c, it->ts);
	if (it->kind == FMT_BLOB) {
		int err;

		if (it->btype == 'j') {
			c->nread++;
			err = report_json_record(c->r, it->data, it->len,
						 c->pcs,
						 PMCRING_CALLCHAIN_DEPTH_MAX);
			if (err == -EINVAL)
				fmt_set_bad_reason("a JSON member of the wrong "
						   "type");
			return err;
		}
		if (pmcring_log_feed(c->mem, it->data, it->len))
			return -ENOMEM;
		if (pmcring_log_read(c->mem, &ev)) {
			if (ev.pl_state == PMCRING_LOG_EOF)
				return 0;	/* CLOSELOG */
			fmt_set_bad_reason(ev.pl_reason);
			return -EINVAL;
		}
		return report_cmd_ev(c, &ev, it->cpu);
	}
	/* barman: records carry the thread id as task */
	c->nread++;
	report_seen(c->r, it->ts);
	switch (it->type) {
	case BM_REC_SAMPLE_WITH_PC:
		n = it->nchain + 1 < PMCRING_CALLCHAIN_DEPTH_MAX ?
		    it->nchain + 1 : PMCRING_CALLCHAIN_DEPTH_MAX;
		c->pcs[0] = it->pc;
		ch = it->chain;
		for (i = 1; i < n; i++)
			memcpy(&c->pcs[i], ch + 8 * (i - 1), 8);
		return report_sample(c->r, it->ts, it->cpu, it->task, it->task,
				     0, c->pcs, n);
	case BM_REC_TASK_SWITCH:
		report_csw(c->r, it->ts, it->cpu, it->task, it->task, 0, 0);
		break;
	case BM_REC_WARNING:
		report_drop(c->r, it->ts);
		break;
	default:
		break;
	}
	return 0;
}

/* The barman header's task and mmap tables, before the frames. */
static void report_cmd_bm_tables(struct report_cmd *c)
{
	const struct fmt_bm_info *bi = &c->bi;
	uint32_t i;

	for (i = 0; i < bi->nr_tasks; i++) {
		const uint8_t *t = bi->tasks + (size_t)i * BM_TASK_SIZE;

		report_proc_create(c->r, fmt_get32(t, 8),
				   fmt_barman_str(bi, fmt_get32(t, 12)));
	}
	for (i = 0; i < bi->nr_mmaps; i++) {
		const uint8_t *m = bi->mmaps + (size_t)i * BM_MMAP_SIZE;
		const char *name = fmt_barman_str(bi, fmt_get32(m, 36));

		report_map_in(c->r, fmt_get32(m, 8), fmt_get64(m, 12), name);
		report_map_in(c->r, REPORT_BM_ALL, fmt_get64(m, 12), name);
	}
}

/* How a blob set's or a barman file's walk ended: damage or a cut said. */
static int report_cmd_end(struct report_cmd *c, const char *path, int rc,
			  size_t bad)
{
	if (rc == -EINVAL)
		report_cmd_damage(c, path, bad, fmt_bad_reason(), c->nread);
	if (rc == FMT_END_TRUNCATED && !c->quiet)
		fprintf(stderr, "%s: %s: ends in a partial record "
			"(the recording was cut short)\n", c->who, path);
	return rc == -EINVAL || rc == FMT_END_TRUNCATED ? 0 : rc;
}

static int report_cmd_barman(struct report_cmd *c, const void *img,
			     size_t len)
{
	size_t bad = 0;
	int rc;

	rc = fmt_barman_info(img, len, &c->bi);
	if (rc) {
		report_cmd_damage(c, c->path, 0, "not a barman header "
				  "(version, sizes)", 0);
		return 0;
	}
	if (!c->quiet)
		report_cmd_bm_tables(c);
	report_set_space_fallback(c->r, REPORT_BM_ALL);
	rc = fmt_barman_read(img, len, report_cmd_item, c, &bad);
	return report_cmd_end(c, c->path, rc, bad);
}

/*
 * The blob sets of a recording: one set (its DAT, OFFSET, ... file named),
 * or a directory (what `record -F blob -o DIR` made, or its container):
 * every set, the sets a roll made included.  The sets of one stream
 * follow one another in time (STREAM.DAT.T, T the roll's second), so one
 * stream is read set after set; the records of several streams are merged
 * by timestamp, as the rings held them.
 */
struct report_blob {
	char			**paths;
	struct fmt_blob_set	*sets;
	struct pmcring_log	**mems;	/* a parser per set (CLOSELOG ends one) */
	size_t			n;
	/* several streams: every record, in set order, then sorted by time */
	struct report_blob_it {
		struct fmt_item	it;
		size_t		set;
		size_t		seq;
	}			*v;
	size_t			nv, maxv;
	size_t			cur;	/* the set being collected */
};

static int report_blob_collect(const struct fmt_item *it, void *ctx)
{
	struct report_blob *b = ctx;

	if (b->nv == b->maxv) {
		size_t nm = b->maxv ? 2 * b->maxv : 4096;
		struct report_blob_it *nv = realloc(b->v, nm * sizeof(*nv));

		if (!nv)
			return -ENOMEM;
		b->v = nv;
		b->maxv = nm;
	}
	b->v[b->nv].it = *it;
	b->v[b->nv].set = b->cur;
	b->v[b->nv].seq = b->nv;
	b->nv++;
	return 0;
}

static int report_blob_cmp(const void *x, const void *y)
{
	const struct report_blob_it *a = x, *b = y;

	if (a->it.ts != b->it.ts)
		return a->it.ts < b->it.ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

/* "DIR/STREAM" of a DAT file's path: the stream its sets share. */
static size_t report_blob_stream_len(const char *path)
{
	const char *d = strstr(path, ".DAT.");

	return d ? (size_t)(d - path) : strlen(path);
}

static void report_blob_free(struct report_blob *b)
{
	size_t i;

	for (i = 0; i < b->n; i++) {
		fmt_blob_unmap(&b->sets[i]);
		pmcring_log_close(b->mems[i]);
		free(b->paths[i]);
	}
	free(b->paths);
	free(b->sets);
	free(b->mems);
	free(b->v);
}

/* The DAT files of @path (a set's file or a directory of sets) into @b. */
static int report_blob_find(struct report_cmd *c, struct report_blob *b)
{
	static const char *const pats[] = { "%s/*.DAT.*", "%s/*/*.DAT.*" };
	char pat[4200];
	unsigned int i;
	size_t k;
	glob_t g;

	if (!c->dir) {
		b->paths = calloc(1, sizeof(*b->paths));
		if (!b->paths || !(b->paths[0] = strdup(c->path)))
			return -ENOMEM;
		b->n = 1;
		return 0;
	}
	for (i = 0; i < 2; i++) {
		snprintf(pat, sizeof(pat), pats[i], c->path);
		if (glob(pat, 0, NULL, &g) == 0)
			break;
		globfree(&g);
	}
	if (i == 2) {
		if (!c->quiet)
			fprintf(stderr, "%s: %s: a directory without blob "
				"files (STREAM.DAT.T, or "
				"CONTAINER/STREAM.DAT.T)\n", c->who, c->path);
		return -ENOENT;
	}
	b->paths = calloc(g.gl_pathc, sizeof(*b->paths));
	for (k = 0; b->paths && k < g.gl_pathc; k++)
		if ((b->paths[k] = strdup(g.gl_pathv[k])))
			b->n++;
	globfree(&g);
	return b->paths && b->n == k ? 0 : -ENOMEM;
}

static int report_cmd_blob(struct report_cmd *c)
{
	struct report_blob b = { 0 };
	char which[4096];
	bool one_stream = true;
	size_t i, bad = 0;
	int rc;

	if (fmt_is_stream(c->path) && !c->dir) {
		if (!c->quiet)
			fprintf(stderr, "%s: %s: a blob set is several "
				"files: name one of them or its directory, "
				"not a pipe\n", c->who, c->path);
		return -EINVAL;
	}
	rc = report_blob_find(c, &b);
	if (rc)
		goto out;
	b.sets = calloc(b.n, sizeof(*b.sets));
	b.mems = calloc(b.n, sizeof(*b.mems));
	if (!b.sets || !b.mems) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < b.n; i++) {
		rc = fmt_blob_map(b.paths[i], &b.sets[i], which, sizeof(which));
		if (rc == -EINVAL && !c->quiet)
			fprintf(stderr, "%s: %s: not a blob file name "
				"(STREAM.DAT.T)\n", c->who, b.paths[i]);
		else if (rc && !c->quiet)
			fprintf(stderr, "%s: %s: %s\n", c->who, which,
				strerror(-rc));
		if (rc)
			goto out;
		b.mems[i] = pmcring_log_open(PMCRING_LOG_FD_NONE);
		if (!b.mems[i]) {
			rc = -ENOMEM;
			goto out;
		}
		if (report_blob_stream_len(b.paths[i]) !=
		    report_blob_stream_len(b.paths[0]) ||
		    strncmp(b.paths[i], b.paths[0],
			    report_blob_stream_len(b.paths[0])))
			one_stream = false;
	}
	for (i = 0; i < b.n && one_stream; i++) {
		c->mem = b.mems[i];
		rc = fmt_blob_read(&b.sets[i], report_cmd_item, c, &bad);
		rc = report_cmd_end(c, b.paths[i], rc, bad);
		if (rc)
			goto out;
	}
	for (i = 0; i < b.n && !one_stream; i++) {
		uint64_t before = b.nv;

		b.cur = i;
		rc = fmt_blob_read(&b.sets[i], report_blob_collect, &b, &bad);
		/* damage in a set: its records before it count */
		rc = report_cmd_end(c, b.paths[i], rc, bad);
		if (rc)
			goto out;
		c->nread += b.nv - before;
	}
	if (!one_stream) {
		c->nread = 0;
		qsort(b.v, b.nv, sizeof(*b.v), report_blob_cmp);
		for (i = 0; i < b.nv && !rc; i++) {
			c->mem = b.mems[b.v[i].set];
			rc = report_cmd_item(&b.v[i].it, c);
		}
		if (rc == -EINVAL) {
			report_cmd_damage(c, b.paths[b.v[i - 1].set], 0,
					  fmt_bad_reason(), c->nread);
			rc = 0;
		}
	}
out:
	c->mem = NULL;
	report_blob_free(&b);
	return rc;
}

/*
 * Read c->path (a file, "-" for the standard input, a pipe, or a blob
 * directory) into c->r.
 */
static int report_cmd_read(struct report_cmd *c)
{
	struct report_img im = { 0 };
	struct stat st;
	int err;

	c->dir = strcmp(c->path, "-") && !stat(c->path, &st) &&
		 S_ISDIR(st.st_mode);
	if (c->dir) {
		c->kind = FMT_BLOB;
	} else {
		if (fmt_map_file(c->path, &im.p, &im.len,
				 c->quiet ? NULL : c->who))
			return -ENOENT;
		c->kind = im.p ? fmt_detect(im.p, im.len) : -1;
		if (c->kind < 0) {
			if (!c->quiet)
				fprintf(stderr, "%s: %s: %s\n", c->who,
					c->path, im.p ? "not a pmclog, barman "
					"or blob file" : "empty, not a "
					"recording");
			fmt_unmap_file(im.p, im.len);
			return -EINVAL;
		}
	}
	if (!c->quiet)
		sym_load_build_ids_of(report_sym(c->r), c->path, c->who);
	if (c->kind == FMT_PMCLOG)
		err = report_cmd_pmclog(c, im.p, im.len);
	else if (c->kind == FMT_BARMAN)
		err = report_cmd_barman(c, im.p, im.len);
	else
		err = report_cmd_blob(c);
	free(c->plast.v);
	c->plast = (struct fmt_period_last){ 0 };
	fmt_unmap_file(im.p, im.len);
	return err;
}

int report_read(struct report *r, const char *path, const char *who,
		bool best_effort)
{
	struct report_opts o = { .pid = -1, .cpu = -1, .time_to = UINT64_MAX };
	struct report_cmd c = { .r = r, .path = path, .o = &o, .who = who,
				.best_effort = best_effort };
	int err = report_cmd_read(&c);

	return err ? err : c.damaged;
}

int report_scan_kernel(const char *path, struct kallsyms_fit *fit)
{
	struct report_opts o = { .pid = -1, .cpu = -1, .time_to = UINT64_MAX };
	struct report_cmd c = { .path = path, .o = &o, .who = "pmcring",
				.quiet = true };
	int err;

	c.r = report_new(&o);
	if (!c.r)
		return -ENOMEM;
	report_set_scan(c.r, fit);
	err = report_cmd_read(&c);
	report_free(c.r);
	return err;
}

/* ---- options ---- */

int cmd_one_input(const char *who, int argc, char **argv, int optind,
		  const char **path)
{
	if (optind < argc && (*path || optind + 1 < argc)) {
		fprintf(stderr, "%s: one recording at a time: '%s' and '%s' "
			"(a blob directory is one recording)\n", who,
			*path ? *path : argv[optind],
			*path ? argv[optind] : argv[optind + 1]);
		return -EINVAL;
	}
	if (optind < argc)
		*path = argv[optind];
	if (!*path)
		*path = "pmcring.pmclog";
	return 0;
}

enum {
	OPT_TIME_FROM = 256, OPT_TIME_TO, OPT_FOLDED, OPT_SVG, OPT_SWITCHES,
	OPT_KALLSYMS, OPT_SYSTEM_MAP, OPT_TOP, OPT_TITLE, OPT_PATH_MAP,
	OPT_SYMFS, OPT_EVENT, OPT_SORT, OPT_CHILDREN, OPT_NO_CHILDREN,
	OPT_CALL_GRAPH, OPT_PERCENT_LIMIT, OPT_INLINE, OPT_BEST_EFFORT,
	OPT_STDIO, OPT_FULL_SIG, OPT_NO_DEMANGLE,
};

#define REPORT_MAX_PATH_MAPS	16

static const struct option report_longopts[] = {
	{ "pid",	required_argument, NULL, 'p' },
	{ "comm",	required_argument, NULL, 'c' },
	{ "cpu",	required_argument, NULL, 'C' },
	{ "time-from",	required_argument, NULL, OPT_TIME_FROM },
	{ "time-to",	required_argument, NULL, OPT_TIME_TO },
	{ "folded",	no_argument,	   NULL, OPT_FOLDED },
	{ "svg",	required_argument, NULL, OPT_SVG },
	{ "switches",	no_argument,	   NULL, OPT_SWITCHES },
	{ "kallsyms",	required_argument, NULL, OPT_KALLSYMS },
	{ "system-map",	required_argument, NULL, OPT_SYSTEM_MAP },
	{ "top",	required_argument, NULL, OPT_TOP },
	{ "title",	required_argument, NULL, OPT_TITLE },
	{ "path-map",	required_argument, NULL, OPT_PATH_MAP },
	{ "symfs",	required_argument, NULL, OPT_SYMFS },
	{ "input",	required_argument, NULL, 'i' },
	{ "event",	required_argument, NULL, OPT_EVENT },
	{ "sort",	required_argument, NULL, OPT_SORT },
	{ "children",	no_argument,	   NULL, OPT_CHILDREN },
	{ "no-children", no_argument,	   NULL, OPT_NO_CHILDREN },
	{ "call-graph",	optional_argument, NULL, OPT_CALL_GRAPH },
	{ "percent-limit", required_argument, NULL, OPT_PERCENT_LIMIT },
	{ "inline",	no_argument,	   NULL, OPT_INLINE },
	{ "best-effort", no_argument,	   NULL, OPT_BEST_EFFORT },
	{ "stdio",	no_argument,	   NULL, OPT_STDIO },
	{ "show-nr-samples", no_argument,  NULL, 'n' },
	{ "full-signature", no_argument,   NULL, OPT_FULL_SIG },
	{ "no-demangle", no_argument,	   NULL, OPT_NO_DEMANGLE },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int report_usage(int help)
{
	if (!help) {
		fprintf(stderr, "see 'pmcring report --help' for the options\n");
		return 2;
	}
	fprintf(stdout,
"usage: pmcring report [OPTIONS] [PATH]\n"
"\n"
"Print where the time went in a recording (pmclog, barman or blob file):\n"
"top functions by self and total samples, samples per process and thread,\n"
"symbolized from the recording's own PROCEXEC/MAP_IN records and the ELF\n"
"files they name.  One profile per event (counter); a sample weighs its\n"
"period when the recording has it (FILE.periods beside a pmclog file, or\n"
"PMCALLOCATE's fixed period), else 1.\n"
"\n"
"  -i, --input PATH       the recording (or PATH; default pmcring.pmclog,\n"
"                         as perf report reads perf.data)\n"
"  -p, --pid PID          only samples of process PID\n"
"  -c, --comm NAME        only samples of processes or threads named NAME\n"
"  -C, --cpu N            only samples taken on CPU N\n"
"      --time-from T      only records at or after T: ns of the record clock,\n"
"                         or +N[s|ms|us|ns] from the first record\n"
"      --time-to T        only records at or before T (same forms)\n"
"      --folded           print folded stacks (\"comm;root;...;leaf count\",\n"
"                         flamegraph.pl and speedscope input) instead\n"
"      --svg FILE         write an interactive flame graph SVG to FILE\n"
"      --event NAME       only event NAME (--folded and --svg show one event:\n"
"                         by default the first, by pmcid)\n"
"      --sort KEYS        perf report's table instead of the function tables,\n"
"                         by KEYS, a list of comm, pid, dso, sym (or\n"
"                         symbol), srcline\n"
"                         (srcline: FILE:LINE from DWARF, \"??\" without)\n"
"      --children         --sort and -G count each sample for every entry\n"
"                         in its chain (the default)\n"
"      --no-children      only for the sample's own entry (self)\n"
"  -G, --call-graph[=caller|callee]\n"
"                         text trees per function: its callees (caller, -G)\n"
"                         or its callers (callee)\n"
"      --percent-limit P  leave out rows and branches under P percent\n"
"      --inline           functions inlined at an address (DWARF) as frames\n"
"                         of their own, as perf report --inline\n"
"      --switches         add the context switch view (time on CPU per thread)\n"
"      --kallsyms FILE    kernel symbols (default: PATH.kallsyms if present)\n"
"      --system-map FILE  kernel symbols from a System.map\n"
"      --top N            rows per table (default 20)\n"
"      --title TEXT       flame graph title\n"
"      --path-map OLD=NEW read files the recording names under OLD/ from\n"
"                         NEW/ (repeatable; e.g. a VM's or container's paths)\n"
"      --symfs DIR        look for the recording's files under DIR first\n"
"      --full-signature   C++ names with their return type and parameters\n"
"                         (default: perf's short \"ns::f<T>\")\n"
"      --no-demangle      C++ and Rust names as the ELF files spell them\n"
"      --stdio, -n        perf report's; the output is always text and the\n"
"                         Samples column always there\n"
"      --best-effort      exit 0 after damage in the recording (it is\n"
"                         reported up to the damage, which is named, and\n"
"                         the exit status is 1 without this option)\n"
"  -h, --help             this text\n");
	return help ? 0 : 2;
}

static int report_parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	return errno || end == s || *end || *s == '-' ? -EINVAL : 0;
}

/* "123" (absolute ns) or "+1.5s", "+200ms", "+10us", "+5ns" (relative). */
static int report_parse_time(const char *s, uint64_t *v, bool *rel)
{
	static const struct { const char *sfx; double mult; } units[] = {
		{ "ns", 1 }, { "us", 1e3 }, { "ms", 1e6 }, { "s", 1e9 }, { "", 1 },
	};
	unsigned int i;
	char *end;
	double d;

	*rel = *s == '+';
	if (!*rel)
		return report_parse_u64(s, v);
	errno = 0;
	d = strtod(s + 1, &end);
	if (errno || end == s + 1 || d < 0)
		return -EINVAL;
	for (i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (!strcmp(end, units[i].sfx)) {
			*v = (uint64_t)(d * units[i].mult);
			return 0;
		}
	}
	return -EINVAL;
}

static int report_load_ksyms(struct report *r, const char *file, bool must)
{
	int err = sym_load_kallsyms(report_sym(r), file);

	if (err == -ENODATA)
		fprintf(stderr, "pmcring report: %s: every address is 0 "
			"(kallsyms read without privilege); kernel frames stay "
			"[unknown]\n", file);
	else if (err && (must || err != -ENOENT))
		fprintf(stderr, "pmcring report: %s: %s\n", file, strerror(-err));
	return must && err && err != -ENODATA ? err : 0;
}

static int report_write_svg(struct report *r, const char *file,
			    const char *title, const char *path)
{
	struct flame_opts fo = { .title = title, .subtitle = path };
	FILE *f = fopen(file, "we");
	int err;

	if (!f) {
		fprintf(stderr, "pmcring report: %s: %s\n", file, strerror(errno));
		return -errno;
	}
	err = flame_write_svg(r, f, &fo);
	if (fclose(f) && !err)
		err = -EIO;
	if (err)
		fprintf(stderr, "pmcring report: %s: %s\n", file, strerror(-err));
	return err;
}

void report_bad_value(const char *who, int opt, const char *val)
{
	const struct option *lo;
	const char *form = "?";

	switch (opt) {
	case 'p':
		form = "a process id, 0 to 2147483647";
		break;
	case 'C':
		form = "a CPU number, 0 to 2147483647";
		break;
	case OPT_TIME_FROM:
	case OPT_TIME_TO:
		form = "ns of the record clock (e.g. 123456789), or the time "
		       "from the first record as +N[s|ms|us|ns] (e.g. +1.5s)";
		break;
	case OPT_TOP:
		form = "a row count, 1 to 100000";
		break;
	case OPT_PATH_MAP:
		form = "OLD=NEW, OLD an absolute path (up to 16 of them)";
		break;
	}
	for (lo = report_longopts; lo->name; lo++)
		if (lo->val == opt)
			break;
	fprintf(stderr, "%s: --%s: '%s' is not %s\n", who,
		lo->name ? lo->name : "?", val, form);
}

int cmd_report(int argc, char **argv)
{
	struct report_opts o = { .pid = -1, .cpu = -1, .time_to = UINT64_MAX };
	const char *svg = NULL, *ksyms = NULL, *title = NULL, *symfs = NULL;
	const char *event = NULL;
	char *pmap[REPORT_MAX_PATH_MAPS];
	unsigned int npmap = 0, i;
	bool folded = false, switches = false, ksyms_must = false;
	struct report_cmd c = { .o = &o, .who = "pmcring report" };
	char kpath[4096];
	uint64_t v;
	int opt, err;

	/* GNU order: options anywhere, before or after PATH (a full reset) */
	optind = 0;
	while ((opt = getopt_long(argc, argv, "i:p:c:C:Gnh", report_longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'i':
			c.path = optarg;
			break;
		case 'p':
			if (report_parse_u64(optarg, &v) || v > INT32_MAX)
				goto bad;
			o.pid = (int64_t)v;
			break;
		case 'c':
			o.comm = optarg;
			break;
		case 'C':
			if (report_parse_u64(optarg, &v) || v > INT32_MAX)
				goto bad;
			o.cpu = (int32_t)v;
			break;
		case OPT_TIME_FROM:
			if (report_parse_time(optarg, &c.from, &c.rel_from))
				goto bad;
			o.time_from = c.from;
			break;
		case OPT_TIME_TO:
			if (report_parse_time(optarg, &c.to, &c.rel_to))
				goto bad;
			o.time_to = c.to;
			break;
		case OPT_FOLDED:
			folded = true;
			break;
		case OPT_SVG:
			svg = optarg;
			break;
		case OPT_SWITCHES:
			switches = true;
			break;
		case OPT_KALLSYMS:
		case OPT_SYSTEM_MAP:
			ksyms = optarg;
			ksyms_must = true;
			break;
		case OPT_TOP:
			if (report_parse_u64(optarg, &v) || !v || v > 100000)
				goto bad;
			o.top = (unsigned int)v;
			break;
		case OPT_TITLE:
			title = optarg;
			break;
		case OPT_PATH_MAP:
			if (npmap == REPORT_MAX_PATH_MAPS || optarg[0] != '/' ||
			    !strchr(optarg, '=') || !strchr(optarg, '=')[1])
				goto bad;
			pmap[npmap++] = optarg;
			break;
		case OPT_SYMFS:
			symfs = optarg;
			break;
		case OPT_EVENT:
			event = optarg;
			o.one_event = true;
			break;
		case OPT_SORT: {
			char bad[64];

			if (report_parse_sort(&o, optarg, bad, sizeof(bad))) {
				fprintf(stderr, "pmcring report: --sort: unknown "
					"key '%s' in '%s' (keys: comm, pid, dso, "
					"sym or symbol, srcline)\n", bad, optarg);
				return 2;
			}
			break;
		}
		case OPT_CHILDREN:
			o.no_children = false;
			break;
		case OPT_NO_CHILDREN:
			o.no_children = true;
			break;
		case OPT_INLINE:
			o.inline_frames = true;
			break;
		case OPT_BEST_EFFORT:
			c.best_effort = true;
			break;
		case OPT_STDIO:
		case 'n':
			break;		/* perf's: what pmcring always does */
		case OPT_FULL_SIG:
			o.names = REPORT_NAMES_FULL;
			break;
		case OPT_NO_DEMANGLE:
			o.names = REPORT_NAMES_MANGLED;
			break;
		case 'G':
			o.call_graph = REPORT_CG_CALLER;
			break;
		case OPT_CALL_GRAPH:
			if (!optarg || !strcmp(optarg, "caller") ||
			    !strcmp(optarg, "graph,caller")) {
				o.call_graph = REPORT_CG_CALLER;
			} else if (!strcmp(optarg, "callee") ||
				   !strcmp(optarg, "graph,callee")) {
				o.call_graph = REPORT_CG_CALLEE;
			} else {
				fprintf(stderr, "pmcring report: --call-graph: "
					"'%s' is neither caller nor callee\n",
					optarg);
				return 2;
			}
			break;
		case OPT_PERCENT_LIMIT: {
			char *end;

			errno = 0;
			o.percent_limit = strtod(optarg, &end);
			if (errno || end == optarg || (*end && strcmp(end, "%")) ||
			    !(o.percent_limit >= 0 && o.percent_limit <= 100)) {
				fprintf(stderr, "pmcring report: --percent-limit: "
					"'%s' is not a percentage from 0 to "
					"100\n", optarg);
				return 2;
			}
			break;
		}
		case 'h':
			return report_usage(1);
		default:
			return report_usage(0);
		}
	}
	/* the recording: -i PATH, PATH, or perf's habit, the default file */
	if (cmd_one_input("pmcring report", argc, argv, optind, &c.path))
		return 2;

	c.r = report_new(&o);
	if (!c.r)
		return 1;
	for (i = 0, err = 0; i < npmap && !err; i++) {
		char *eq = strchr(pmap[i], '=');

		*eq = 0;
		err = sym_add_path_map(report_sym(c.r), pmap[i], eq + 1);
		*eq = '=';
	}
	if (!err && symfs)
		err = sym_set_symfs(report_sym(c.r), symfs);
	if (err)
		goto out;
	if (!ksyms)
		ksyms = kallsyms_default(c.path, kpath, sizeof(kpath),
					 report_sym(c.r));
	if (ksyms && report_load_ksyms(c.r, ksyms, ksyms_must)) {
		err = -EINVAL;
		goto out;
	}
	err = report_cmd_read(&c);
	/* what the reader has not said already */
	if (err && err != -ENOENT && err != -EINVAL)
		fprintf(stderr, "pmcring report: %s: %s\n", c.path, strerror(-err));
	else if (err)
		;
	else if (event && report_select_event(c.r, event)) {
		fprintf(stderr, "pmcring report: %s: no samples of event "
			"'%s'; ", c.path, event);
		report_say_events(c.r, stderr);
		fputc('\n', stderr);
		err = -ENOENT;
	} else if ((folded || svg) && !event && report_nr_events(c.r) > 1) {
		char buf[32];

		fprintf(stderr, "pmcring report: %u events; %s shows '%s' "
			"(choose with --event)\n", report_nr_events(c.r),
			folded ? "--folded" : "--svg",
			report_cur_event(c.r, buf, sizeof(buf)));
	}
	if (!err)
		report_sym_warnings(c.r, "pmcring report");
	if (err)
		;
	else if (folded)
		err = report_folded(c.r, stdout);
	else
		report_print(c.r, stdout, c.path, switches);
	if (!err && svg)
		err = report_write_svg(c.r, svg, title, c.path);
	if (!err && fflush(stdout))
		err = -EIO;
out:
	report_free(c.r);
	return err || c.damaged ? 1 : 0;
bad:
	report_bad_value("pmcring report", opt, optarg);
	return 2;
}
