// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring dump` and `pmcring stat`: read a pmclog, barman or blob file (the
 * format comes from its magic) and print its records, or counts of them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <glob.h>
#include <inttypes.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <libpmcring.h>

#include "../cmd.h"
#include "../formats/fmt.h"

struct image {
	const void	*p;
	size_t		len;
};

struct walk {
	int			kind;
	struct fmt_bm_info	bi;
	bool			closed;		/* pmclog: CLOSELOG seen */
	uint64_t		seen;		/* items of this file so far */
	bool			best_effort;	/* --best-effort */
	FILE			*bm_header;	/* dump: barman tables here */
	const char		*who;		/* "pmcring dump", ... */
};

static void dump_barman_header(FILE *out, const struct fmt_bm_info *bi);

/*
 * Walk the records of @path; prints problems.  0: read to its end (or cut
 * short: a prefix), 1: damaged (the records before the damage were
 * walked; 0 with --best-effort), 2: not read at all.
 */
static int walk_file(const char *path, fmt_item_cb cb, void *ctx,
		     struct walk *w)
{
	bool best_effort = w->best_effort;
	FILE *bm_header = w->bm_header;
	const char *who = w->who;
	struct fmt_blob_set set;
	struct image im;
	char which[4096];
	size_t bad = 0;
	int rc;

	memset(w, 0, sizeof(*w));
	w->best_effort = best_effort;
	w->bm_header = bm_header;
	w->who = who;
	if (fmt_map_file(path, &im.p, &im.len, who))
		return 2;
	w->kind = fmt_detect(im.p, im.len);
	switch (w->kind) {
	case FMT_PMCLOG:
		rc = fmt_pmclog_read(im.p, im.len, cb, ctx, &bad);
		break;
	case FMT_BARMAN:
		/* the header tables first, as comments */
		if (!fmt_barman_info(im.p, im.len, &w->bi) && w->bm_header)
			dump_barman_header(w->bm_header, &w->bi);
		rc = fmt_barman_read(im.p, im.len, cb, ctx, &bad);
		break;
	case FMT_BLOB:
		if (fmt_is_stream(path)) {
			fprintf(stderr, "%s: %s: a blob set is several files: "
				"name one of them or its directory, not a "
				"pipe\n", who, path);
			fmt_unmap_file(im.p, im.len);
			return 2;
		}
		rc = fmt_blob_map(path, &set, which, sizeof(which));
		if (rc) {
			fprintf(stderr, "%s: %s: %s\n", who, which,
				rc == -EINVAL ? "not a blob file name "
				"(STREAM.DAT.T, STREAM.OFFSET.T, ...)" :
				strerror(-rc));
			fmt_unmap_file(im.p, im.len);
			return 2;
		}
		rc = fmt_blob_read(&set, cb, ctx, &bad);
		fmt_blob_unmap(&set);
		break;
	default:
		fprintf(stderr, "%s: %s: not a pmclog, barman or blob file\n",
			who, path);
		fmt_unmap_file(im.p, im.len);
		return 2;
	}
	fmt_unmap_file(im.p, im.len);
	if (rc == -EINVAL)
		return fmt_say_damage(who, path, bad, fmt_bad_reason(),
				      w->seen, w->best_effort);
	if (rc < 0) {
		fprintf(stderr, "%s: %s: %s\n", who, path, strerror(-rc));
		return 2;
	}
	if (rc == FMT_END_TRUNCATED)
		fprintf(stderr, "%s: %s: ends in a partial record "
			"(the recording was cut short)\n", who, path);
	else if (w->kind == FMT_PMCLOG && !w->closed)
		fprintf(stderr, "%s: %s: no CLOSELOG "
			"(the recording was cut short)\n", who, path);
	return 0;
}

/*
 * A file, or a blob directory: what `record -F blob -o DIR` made (its
 * container subdirectories) or one container, every file set in name order
 * (stream, then time).  The worst of walk_file()'s results.
 */
static int walk_path(const char *path, fmt_item_cb cb, void *ctx,
		     struct walk *w)
{
	static const char *const pats[] = { "%s/*.DAT.*", "%s/*/*.DAT.*" };
	char pat[4200];
	struct stat st;
	unsigned int i;
	size_t k;
	glob_t g;
	int ret = 0, r;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return walk_file(path, cb, ctx, w);
	for (i = 0; i < 2; i++) {
		snprintf(pat, sizeof(pat), pats[i], path);
		if (glob(pat, 0, NULL, &g) == 0)
			break;
		globfree(&g);
	}
	if (i == 2) {
		fprintf(stderr, "%s: %s: a directory without blob files "
			"(STREAM.DAT.T, or CONTAINER/STREAM.DAT.T)\n", w->who,
			path);
		return 2;
	}
	for (k = 0; k < g.gl_pathc; k++) {
		r = walk_file(g.gl_pathv[k], cb, ctx, w);
		ret = r > ret ? r : ret;
	}
	globfree(&g);
	return ret;
}

static const char *const bm_names[] = {
	[BM_REC_SAMPLE] = "SAMPLE", [BM_REC_SAMPLE_WITH_PC] = "SAMPLE_WITH_PC",
	[BM_REC_TASK_SWITCH] = "TASK_SWITCH",
	[BM_REC_CUSTOM_COUNTER] = "CUSTOM_COUNTER",
	[BM_REC_ANNOTATION] = "ANNOTATION", [BM_REC_HALT] = "HALT_EVENT",
	[BM_REC_PC_WITHOUT_TASK] = "PC_WITHOUT_TASK_ID",
	[BM_REC_EVENT_COUNTER] = "EVENT_COUNTER_WITHOUT_TASK_ID",
	[BM_REC_WARNING] = "WARNING",
};

/* Name of an item's type, as dump prints it (pmclog: libpmcring's). */
static const char *item_type_name(const struct fmt_item *it)
{
	const char *n;

	if (it->kind == FMT_BARMAN)
		n = it->type < sizeof(bm_names) / sizeof(bm_names[0]) ?
		    bm_names[it->type] : NULL;
	else
		n = pmcring_type_name(it->type);
	return n ? n : "?";
}

struct dump_ctx {
	struct walk	*w;
	FILE		*out;
	char		line[FMT_JSON_MAX + 64];
};

static void dump_barman_item(struct dump_ctx *d, const struct fmt_item *it)
{
	uint32_t i;

	switch (it->type) {
	case BM_REC_SAMPLE_WITH_PC:
		fprintf(d->out, "task=%u pc=0x%" PRIx64 " callers=", it->task,
			it->pc);
		for (i = 0; i < it->nchain; i++)
			fprintf(d->out, "%s0x%" PRIx64, i ? ";" : "",
				fmt_get64(it->chain, 8 * i));
		break;
	case BM_REC_TASK_SWITCH:
		fprintf(d->out, "task=%u reason=%u", it->task, it->value);
		break;
	case BM_REC_ANNOTATION:
		fprintf(d->out, "task=%u channel=%u text=\"%.*s\"", it->task,
			it->value, (int)it->text_len, it->text);
		break;
	case BM_REC_WARNING:
		fprintf(d->out, "code=%u%s", it->value,
			it->value == BM_WARNING_LOST ? " (records lost)" : "");
		break;
	default:
		fprintf(d->out, "len=%zu", it->len);
		break;
	}
}

static int dump_item(const struct fmt_item *it, void *ctx)
{
	struct dump_ctx *d = ctx;
	char cpu[16] = "-";

	d->w->seen++;
	if (it->type == PMCRING_TYPE_CLOSELOG && it->kind == FMT_PMCLOG)
		d->w->closed = true;
	if (it->cpu >= 0)
		snprintf(cpu, sizeof(cpu), "%d", it->cpu);
	fprintf(d->out, "%" PRIu64 ".%09" PRIu64 " cpu=%s %s",
		it->ts / 1000000000, it->ts % 1000000000, cpu,
		item_type_name(it));
	if (it->kind == FMT_BARMAN) {
		fputc(' ', d->out);
		dump_barman_item(d, it);
	} else if (it->kind == FMT_BLOB && it->btype == 'j') {
		fprintf(d->out, " %.*s", (int)it->len - 1, (const char *)it->data);
	} else if (fmt_rec_text(d->line, sizeof(d->line), it->data,
				(uint32_t)it->len)) {
		fprintf(d->out, " %s", d->line);
	}
	if (it->has_rt)
		fprintf(d->out, " realtime=%lld.%06ld", (long long)it->rt.tv_sec,
			it->rt.tv_nsec / 1000);
	fputc('\n', d->out);
	return 0;
}

/* The header tables of a barman file, as comment lines. */
static void dump_barman_header(FILE *out, const struct fmt_bm_info *bi)
{
	uint32_t i;

	fprintf(out, "# barman target=\"%s\" cores=%u last_ts=%" PRIu64
		" clock: ns = (ts - %" PRIu64 ") * %" PRIu64 " / %" PRIu64
		" + %" PRIu64 "\n", fmt_barman_str(bi, bi->target_name_ptr),
		bi->max_cores, bi->last_ts, bi->ts_base, bi->mult, bi->div,
		bi->unix_base_ns);
	for (i = 0; i < bi->nr_tasks; i++) {
		const uint8_t *t = bi->tasks + i * BM_TASK_SIZE;

		fprintf(out, "# task ts=%" PRIu64 " id=%u name=\"%s\"\n",
			fmt_get64(t, 0), fmt_get32(t, 8),
			fmt_barman_str(bi, fmt_get32(t, 12)));
	}
	for (i = 0; i < bi->nr_mmaps; i++) {
		const uint8_t *m = bi->mmaps + i * BM_MMAP_SIZE;

		fprintf(out, "# mmap ts=%" PRIu64 " task=%u base=0x%" PRIx64
			" name=\"%s\"\n", fmt_get64(m, 0), fmt_get32(m, 8),
			fmt_get64(m, 12), fmt_barman_str(bi, fmt_get32(m, 36)));
	}
}

enum { OPT_BEST_EFFORT = 256 };

static const struct option dump_longopts[] = {
	{ "help", no_argument, NULL, 'h' },
	{ "best-effort", no_argument, NULL, OPT_BEST_EFFORT },
	{ NULL, 0, NULL, 0 },
};

static int sub_usage(const char *cmd, int help)
{
	if (!help) {
		fprintf(stderr, "see 'pmcring %s --help' for the options\n",
			cmd);
		return 2;
	}
	fprintf(stdout,
		"usage: pmcring %s PATH...\n"
		"\n"
		"%s\n"
		"a pmclog, barman or LDMS blob file; the format comes from its\n"
		"magic.  A blob file set is named by any of its files\n"
		"(STREAM.DAT.T, .OFFSET.T, ...) or by its directory (all sets).\n"
		"\n"
		"A damaged file is read up to the damage, which is named (offset\n"
		"and reason), and the exit status is 1; a file cut short (a\n"
		"recording killed) is a valid prefix, exit 0.\n"
		"\n"
		"      --best-effort  exit 0 after damage too\n"
		"  -h, --help         this text\n", cmd,
		!strcmp(cmd, "dump") ?
		"Print the records, one per line (time, cpu, type, fields), of" :
		"Print counts per record type and CPU, drops, duration and rate of");
	return help ? 0 : 2;
}

/* The options of dump and stat; 0, or the exit status of a usage error. */
static int sub_opts(const char *cmd, int argc, char **argv, struct walk *w)
{
	int c;

	memset(w, 0, sizeof(*w));
	w->who = !strcmp(cmd, "dump") ? "pmcring dump" : "pmcring stat";
	optind = 0;	/* GNU order: options anywhere (a full reset) */
	while ((c = getopt_long(argc, argv, "h", dump_longopts, NULL)) != -1) {
		if (c == OPT_BEST_EFFORT)
			w->best_effort = true;
		else
			return sub_usage(cmd, c == 'h') ? 2 : -1;
	}
	if (optind >= argc) {
		fprintf(stderr, "pmcring %s: no recording given (PATH...)\n",
			cmd);
		return sub_usage(cmd, 0);
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	struct dump_ctx *d;
	struct walk w;
	int i, ret = 0;

	i = sub_opts("dump", argc, argv, &w);
	if (i)
		return i < 0 ? 0 : i;
	d = calloc(1, sizeof(*d));
	if (!d)
		return 1;
	d->out = stdout;
	d->w = &w;
	w.bm_header = stdout;
	for (i = optind; i < argc; i++)
		if (walk_path(argv[i], dump_item, d, &w))
			ret = 1;
	free(d);
	if (fflush(stdout))
		ret = 1;
	return ret;
}

#define STAT_TYPES	64
#define STAT_CPUS	1024

struct stat_ctx {
	struct walk	*w;
	uint64_t	n, bytes, drops, first, last;
	uint64_t	prev, backwards;	/* ts below the one before */
	uint64_t	types[STAT_TYPES];
	uint64_t	cpus[STAT_CPUS + 1];	/* last: CPU unknown */
};

static int stat_item(const struct fmt_item *it, void *ctx)
{
	struct stat_ctx *s = ctx;

	if (it->type == PMCRING_TYPE_CLOSELOG && it->kind == FMT_PMCLOG)
		s->w->closed = true;
	if (!s->n || it->ts < s->first)
		s->first = it->ts;
	if (it->ts > s->last)
		s->last = it->ts;
	/* in each file (a blob directory's sets each start over) */
	if (s->w->seen++ && it->ts < s->prev)
		s->backwards++;
	s->prev = it->ts;
	s->n++;
	s->bytes += it->len;
	s->types[it->type % STAT_TYPES]++;
	s->cpus[it->cpu >= 0 && it->cpu < STAT_CPUS ? it->cpu : STAT_CPUS]++;
	if ((it->kind == FMT_BARMAN && it->type == BM_REC_WARNING) ||
	    (it->kind != FMT_BARMAN && it->type == PMCRING_TYPE_DROPNOTIFY))
		s->drops++;
	return 0;
}

/*
 * PATH.ldms, which `record --ldms` leaves next to its -o file or blob
 * directory: its line of counts, as "ldms: ...".
 */
static void stat_ldms(const char *path)
{
	char side[4200], line[1024];
	size_t n = strlen(path);
	FILE *f;

	while (n > 1 && path[n - 1] == '/')
		n--;
	if (n > sizeof(side) - 6)
		return;
	snprintf(side, sizeof(side), "%.*s.ldms", (int)n, path);
	f = fopen(side, "r");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f))
		printf("ldms: %s%s", line,
		       strchr(line, '\n') ? "" : "\n");
	fclose(f);
}

int cmd_stat(int argc, char **argv)
{
	static const char *const kinds[] = { "pmclog", "barman", "blob" };
	struct stat_ctx *s;
	struct walk w;
	struct fmt_item probe = { 0 };
	double secs;
	int c, i, t, ret = 0;

	c = sub_opts("stat", argc, argv, &w);
	if (c)
		return c < 0 ? 0 : c;
	for (i = optind; i < argc; i++) {
		s = calloc(1, sizeof(*s));
		if (!s)
			return 1;
		s->w = &w;
		/* damaged: the counts of what comes before the damage */
		c = walk_path(argv[i], stat_item, s, &w);
		if (c)
			ret = 1;
		if (c == 2) {
			free(s);
			continue;
		}
		secs = s->n ? (double)(s->last - s->first) / 1e9 : 0;
		printf("%s: format %s, %" PRIu64 " records, %" PRIu64 " bytes\n",
		       argv[i], kinds[w.kind], s->n, s->bytes);
		printf("duration %.6f s, rate %.0f records/s, drops %" PRIu64 "\n",
		       secs, secs > 0 ? (double)s->n / secs : 0.0, s->drops);
		/* pmcring's files are ordered; FreeBSD's are not */
		if (s->backwards)
			printf("out of order %" PRIu64 " (a timestamp below the "
			       "one before)\n", s->backwards);
		probe.kind = w.kind;
		for (t = 0; t < STAT_TYPES; t++) {
			if (!s->types[t])
				continue;
			probe.type = (uint32_t)t;
			printf("  type %-16s %12" PRIu64 "\n",
			       item_type_name(&probe),
			       s->types[t]);
		}
		for (t = 0; t < STAT_CPUS; t++)
			if (s->cpus[t])
				printf("  cpu  %-16d %12" PRIu64 "\n", t, s->cpus[t]);
		if (s->cpus[STAT_CPUS])
			printf("  cpu  %-16s %12" PRIu64 "\n", "unknown",
			       s->cpus[STAT_CPUS]);
		stat_ldms(argv[i]);
		free(s);
	}
	return ret;
}
