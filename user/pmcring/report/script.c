// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring script`: every sample of a recording, symbolized, one block per
 * sample in `perf script`'s default layout, so that the tools written for
 * perf read it (FlameGraph's stackcollapse-perf.pl, speedscope's and the
 * Firefox Profiler's "Linux perf" importers):
 *
 *	COMM PID/TID [CPU] SEC.USEC: [PERIOD ]EVENT:
 *	\t    IP SYM+0xOFF (DSO)
 *	...
 *	(blank line)
 *
 * IP is %16x as perf prints it, frames leaf first; an address without a
 * symbol is "[unknown] (DSO)".  PERIOD is printed when the recording has
 * one (PMCALLOCATE).  --json writes one JSON object per record instead
 * (JSON Lines): samples with their frames, and the records that name
 * processes, threads, mappings and events.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../cmd.h"
#include "kallsyms.h"
#include "report.h"

/* -F: the fields of a sample, as perf script names them */
enum {
	SF_COMM = 1 << 0, SF_PID = 1 << 1, SF_TID = 1 << 2, SF_CPU = 1 << 3,
	SF_TIME = 1 << 4, SF_PERIOD = 1 << 5, SF_EVENT = 1 << 6,
	SF_IP = 1 << 7, SF_SYM = 1 << 8, SF_SYMOFF = 1 << 9, SF_DSO = 1 << 10,
	SF_ALL = (1 << 11) - 1,
	SF_CHAIN = SF_IP | SF_SYM | SF_DSO,	/* any: the frame lines */
};

static const struct { const char *name; unsigned int bit; } script_fields[] = {
	{ "comm", SF_COMM }, { "pid", SF_PID }, { "tid", SF_TID },
	{ "cpu", SF_CPU }, { "time", SF_TIME }, { "period", SF_PERIOD },
	{ "event", SF_EVENT }, { "ip", SF_IP }, { "sym", SF_SYM },
	{ "symoff", SF_SYMOFF }, { "dso", SF_DSO },
};

struct script {
	struct report	*r;
	FILE		*out;
	unsigned int	fields;		/* SF_* */
	bool		json;
	const char	*event;		/* only this event, or NULL */
	uint64_t	samples;
};

/* A JSON string: '"' and '\' escaped, control bytes as \u00XX. */
static void script_json_str(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)(s ? s : "");

	fputc('"', f);
	for (; *p; p++) {
		if (*p == '"' || *p == '\\')
			fprintf(f, "\\%c", *p);
		else if (*p < 0x20 || *p == 0x7f)
			fprintf(f, "\\u%04x", *p);
		else
			fputc(*p, f);
	}
	fputc('"', f);
}

/* The function name as perf prints it: "[unknown]" without a symbol. */
static const char *script_sym(const struct report_frame *f)
{
	return f->frame->kind == SYM_KIND_USER ||
	       f->frame->kind == SYM_KIND_KERNEL ? f->frame->name : "[unknown]";
}

static int script_sample(void *ctx, const struct report_sample_info *s)
{
	struct script *sc = ctx;
	char buf[32];
	const char *ev = report_event_name(sc->r, s->pmcid, buf, sizeof(buf));
	uint64_t period = s->period;
	FILE *f = sc->out;
	unsigned int i;

	if (sc->event && strcmp(ev, sc->event))
		return 0;
	sc->samples++;
	if (sc->json) {
		fprintf(f, "{\"type\":\"sample\",\"ts\":%" PRIu64 ",\"comm\":",
			s->ts);
		script_json_str(f, s->comm);
		fprintf(f, ",\"pid\":%" PRIu32 ",\"tid\":%" PRIu32 ",\"cpu\":%"
			PRId32 ",\"pmcid\":%" PRIu32 ",\"event\":", s->pid,
			s->tid, s->cpu, s->pmcid);
		script_json_str(f, ev);
		fprintf(f, ",\"period\":%" PRIu64 ",\"frames\":[", period);
		for (i = 0; i < s->n; i++) {
			const struct report_frame *fr = &s->f[i];

			fprintf(f, "%s{\"ip\":\"0x%" PRIx64 "\",\"sym\":",
				i ? "," : "", fr->ip);
			script_json_str(f, script_sym(fr));
			if (fr->loc.has_off)
				fprintf(f, ",\"off\":%" PRIu64, fr->loc.off);
			fprintf(f, ",\"dso\":");
			script_json_str(f, fr->loc.dso);
			if (fr->loc.inlined)
				fprintf(f, ",\"inlined\":true");
			fputc('}', f);
		}
		fprintf(f, "]}\n");
		return ferror(f) ? -EIO : 0;
	}
	/* perf script: comm unpadded when callchains follow */
	if (sc->fields & SF_COMM)
		fprintf(f, "%s ", s->comm);
	if ((sc->fields & SF_PID) && (sc->fields & SF_TID))
		fprintf(f, "%5" PRIu32 "/%-5" PRIu32 " ", s->pid, s->tid);
	else if (sc->fields & (SF_PID | SF_TID))
		fprintf(f, "%5" PRIu32 " ", sc->fields & SF_PID ? s->pid : s->tid);
	if ((sc->fields & SF_CPU) && s->cpu >= 0)
		fprintf(f, "[%03" PRId32 "] ", s->cpu);
	if (sc->fields & SF_TIME)
		fprintf(f, "%5" PRIu64 ".%06" PRIu64 ": ", s->ts / 1000000000u,
			s->ts % 1000000000u / 1000u);
	if ((sc->fields & SF_PERIOD) && period)
		fprintf(f, "%10" PRIu64 " ", period);
	if (sc->fields & SF_EVENT)
		fprintf(f, "%s: ", ev);
	fputc('\n', f);
	for (i = 0; i < s->n && (sc->fields & SF_CHAIN); i++) {
		const struct report_frame *fr = &s->f[i];

		fputc('\t', f);
		if (sc->fields & SF_IP)
			fprintf(f, "%16" PRIx64 " ", fr->ip);
		if (sc->fields & SF_SYM)
			fputs(script_sym(fr), f);
		if ((sc->fields & SF_SYMOFF) && fr->loc.has_off)
			fprintf(f, "+0x%" PRIx64, fr->loc.off);
		/* perf script: "ip sym (inlined)", no dso */
		if (fr->loc.inlined)
			fprintf(f, " (inlined)");
		else if (sc->fields & SF_DSO)
			fprintf(f, " (%s)", fr->loc.dso);
		fputc('\n', f);
	}
	fputc('\n', f);
	return ferror(f) ? -EIO : 0;
}

/*
 * -F LIST: "comm,tid,ip,sym" (those only), or "+F,..." / "-F,..." (the
 * default with fields added or taken away), as perf script takes it.
 */
static int script_parse_fields(const char *list, unsigned int *fields)
{
	char buf[256], *tok, *save = NULL;
	int sign = *list == '+' ? 1 : *list == '-' ? -1 : 0;
	unsigned int i, v = sign ? SF_ALL : 0;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", list + !!sign) >=
	    sizeof(buf))
		return -EINVAL;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < sizeof(script_fields) / sizeof(script_fields[0]);
		     i++)
			if (!strcmp(tok, script_fields[i].name))
				break;
		if (i == sizeof(script_fields) / sizeof(script_fields[0]))
			return -EINVAL;
		if (sign < 0)
			v &= ~script_fields[i].bit;
		else
			v |= script_fields[i].bit;
	}
	*fields = v;
	return v ? 0 : -EINVAL;
}

/* --json: the other records, one object each. */
static void script_rec(void *ctx, const struct report_rec *rec)
{
	struct script *sc = ctx;
	FILE *f = sc->out;

	if (!sc->json)
		return;
	fprintf(f, "{\"type\":\"%s\",\"ts\":%" PRIu64, rec->type, rec->ts);
	if (!strcmp(rec->type, "event")) {
		fprintf(f, ",\"pmcid\":%" PRIu32, rec->pmcid);
		if (rec->addr != UINT32_MAX)
			fprintf(f, ",\"flags\":%" PRIu64, rec->addr);
		if (rec->value)
			fprintf(f, ",\"rate\":%" PRIu64, rec->value);
	} else {
		/* (u32)-1, the kernel's MAP_IN: -1, as the docs write it */
		fprintf(f, ",\"pid\":%" PRId32 ",\"tid\":%" PRId32,
			(int32_t)rec->pid, (int32_t)rec->tid);
	}
	if (rec->cpu >= 0)
		fprintf(f, ",\"cpu\":%" PRId32, rec->cpu);
	if (!strcmp(rec->type, "mmap") || !strcmp(rec->type, "munmap") ||
	    !strcmp(rec->type, "exec"))
		fprintf(f, ",\"addr\":\"0x%" PRIx64 "\"", rec->addr);
	if (!strcmp(rec->type, "fork"))
		fprintf(f, ",\"child\":%" PRIu64, rec->value);
	if (!strcmp(rec->type, "switch"))
		fprintf(f, ",\"pmcid\":%" PRIu32 ",\"value\":%" PRIu64,
			rec->pmcid, rec->value);
	if (rec->str) {
		fprintf(f, ",\"%s\":", !strcmp(rec->type, "mmap") ||
			!strcmp(rec->type, "exec") ? "path" : "name");
		script_json_str(f, rec->str);
	}
	fprintf(f, "}\n");
}

enum {
	OPT_JSON = 256, OPT_KALLSYMS, OPT_SYMFS, OPT_EVENT, OPT_INLINE,
	OPT_BEST_EFFORT, OPT_PATH_MAP, OPT_FULL_SIG, OPT_NO_DEMANGLE,
};

#define SCRIPT_MAX_PATH_MAPS	16

static const struct option script_longopts[] = {
	{ "input",	required_argument, NULL, 'i' },
	{ "pid",	required_argument, NULL, 'p' },
	{ "comm",	required_argument, NULL, 'c' },
	{ "cpu",	required_argument, NULL, 'C' },
	{ "event",	required_argument, NULL, OPT_EVENT },
	{ "json",	no_argument,	   NULL, OPT_JSON },
	{ "kallsyms",	required_argument, NULL, OPT_KALLSYMS },
	{ "symfs",	required_argument, NULL, OPT_SYMFS },
	{ "path-map",	required_argument, NULL, OPT_PATH_MAP },
	{ "inline",	no_argument,	   NULL, OPT_INLINE },
	{ "best-effort", no_argument,	   NULL, OPT_BEST_EFFORT },
	{ "full-signature", no_argument,   NULL, OPT_FULL_SIG },
	{ "fields",	required_argument, NULL, 'F' },
	{ "no-demangle", no_argument,	   NULL, OPT_NO_DEMANGLE },
	{ "help",	no_argument,	   NULL, 'h' },
	{ NULL, 0, NULL, 0 },
};

static int script_usage(int help)
{
	if (!help) {
		fprintf(stderr, "see 'pmcring script --help' for the options\n");
		return 2;
	}
	fprintf(stdout,
"usage: pmcring script [OPTIONS] [PATH]\n"
"\n"
"Print every sample of a recording (pmclog, barman or blob file), one block\n"
"per sample in perf script's layout: \"COMM PID/TID [CPU] TIME: EVENT:\",\n"
"then one \"IP SYM+0xOFF (DSO)\" line per frame, leaf first, and a blank\n"
"line.  stackcollapse-perf.pl, speedscope and the Firefox Profiler read it.\n"
"\n"
"  -i, --input PATH       the recording (or PATH; default pmcring.pmclog)\n"
"  -p, --pid PID          only samples of process PID\n"
"  -c, --comm NAME        only samples of processes or threads named NAME\n"
"  -C, --cpu N            only samples taken on CPU N\n"
"      --event NAME       only samples of event NAME\n"
"      --json             one JSON object per record (JSON Lines) instead\n"
"      --kallsyms FILE    kernel symbols (default: PATH.kallsyms if present)\n"
"      --symfs DIR        look for the recording's files under DIR first\n"
"      --path-map OLD=NEW read files the recording names under OLD/ from\n"
"                         NEW/ (repeatable; e.g. a VM's or container's paths)\n"
"      --inline           functions inlined at an address (DWARF) as frames\n"
"                         of their own, \"SYM (inlined)\", as perf script\n"
"  -F, --fields LIST      only these fields of a sample, as perf script -F:\n"
"                         comm, pid, tid, cpu, time, period, event, ip, sym,\n"
"                         symoff, dso (+LIST, -LIST: the default and more,\n"
"                         or less)\n"
"      --full-signature   C++ names with their return type and parameters\n"
"                         (default: perf's short \"ns::f<T>\")\n"
"      --no-demangle      C++ and Rust names as the ELF files spell them\n"
"      --best-effort      exit 0 after damage in the recording (its samples\n"
"                         up to the damage are printed, the damage is named\n"
"                         and the exit status is 1 without this option)\n"
"  -h, --help             this text\n");
	return help ? 0 : 2;
}

static int script_parse_u32(const char *s, uint32_t *v)
{
	unsigned long long x;
	char *end;

	errno = 0;
	x = strtoull(s, &end, 0);
	if (errno || end == s || *end || *s == '-' || x > INT32_MAX)
		return -EINVAL;
	*v = (uint32_t)x;
	return 0;
}

int cmd_script(int argc, char **argv)
{
	struct report_opts o = { .pid = -1, .cpu = -1, .time_to = UINT64_MAX };
	const char *path = NULL, *ksyms = NULL, *symfs = NULL;
	struct script sc = { .out = stdout, .fields = SF_ALL };
	struct report_hooks h = { script_sample, script_rec, &sc };
	bool ksyms_must = false, best_effort = false, damaged = false;
	char *pmap[SCRIPT_MAX_PATH_MAPS];
	unsigned int npmap = 0, i;
	char kpath[4096];
	uint32_t v;
	int opt, err;

	optind = 0;	/* GNU order: options anywhere (a full reset) */
	while ((opt = getopt_long(argc, argv, "i:p:c:C:F:h", script_longopts,
				  NULL)) != -1) {
		switch (opt) {
		case 'i':
			path = optarg;
			break;
		case 'p':
			if (script_parse_u32(optarg, &v))
				goto bad;
			o.pid = v;
			break;
		case 'c':
			o.comm = optarg;
			break;
		case 'C':
			if (script_parse_u32(optarg, &v))
				goto bad;
			o.cpu = (int32_t)v;
			break;
		case OPT_EVENT:
			sc.event = optarg;
			break;
		case OPT_JSON:
			sc.json = true;
			break;
		case OPT_KALLSYMS:
			ksyms = optarg;
			ksyms_must = true;
			break;
		case OPT_SYMFS:
			symfs = optarg;
			break;
		case OPT_PATH_MAP:
			if (npmap == SCRIPT_MAX_PATH_MAPS || optarg[0] != '/' ||
			    !strchr(optarg, '=') || !strchr(optarg, '=')[1]) {
				fprintf(stderr, "pmcring script: --path-map: "
					"'%s' is not OLD=NEW (absolute OLD, "
					"up to %d)\n", optarg,
					SCRIPT_MAX_PATH_MAPS);
				return 2;
			}
			pmap[npmap++] = optarg;
			break;
		case OPT_INLINE:
			o.inline_frames = true;
			break;
		case OPT_BEST_EFFORT:
			best_effort = true;
			break;
		case OPT_FULL_SIG:
			o.names = REPORT_NAMES_FULL;
			break;
		case 'F':
			if (script_parse_fields(optarg, &sc.fields)) {
				fprintf(stderr, "pmcring script: -F: '%s' is not "
					"a list of comm, pid, tid, cpu, time, "
					"period, event, ip, sym, symoff, dso\n",
					optarg);
				return 2;
			}
			break;
		case OPT_NO_DEMANGLE:
			o.names = REPORT_NAMES_MANGLED;
			break;
		case 'h':
			return script_usage(1);
		default:
			return script_usage(0);
		}
	}
	if (cmd_one_input("pmcring script", argc, argv, optind, &path))
		return 2;
	sc.r = report_new(&o);
	if (!sc.r)
		return 1;
	report_set_hooks(sc.r, &h);
	err = symfs ? sym_set_symfs(report_sym(sc.r), symfs) : 0;
	for (i = 0; i < npmap && !err; i++) {
		char *eq = strchr(pmap[i], '=');

		*eq = 0;
		err = sym_add_path_map(report_sym(sc.r), pmap[i], eq + 1);
		*eq = '=';
	}
	if (!ksyms)
		ksyms = kallsyms_default(path, kpath, sizeof(kpath),
					 report_sym(sc.r));
	if (!err && ksyms) {
		err = sym_load_kallsyms(report_sym(sc.r), ksyms);
		if (err && (ksyms_must || err != -ENOENT))
			fprintf(stderr, "pmcring script: %s: %s\n", ksyms,
				err == -ENODATA ? "every address is 0 (kallsyms "
				"read without privilege)" : strerror(-err));
		err = ksyms_must && err != -ENODATA ? err : 0;
	}
	if (!err) {
		err = report_read(sc.r, path, "pmcring script", best_effort);
		damaged = err > 0;
		err = err > 0 ? 0 : err;
	}
	if (!err && sc.event && !sc.samples &&
	    report_select_event(sc.r, sc.event)) {
		fprintf(stderr, "pmcring script: %s: no samples of event "
			"'%s'; ", path, sc.event);
		report_say_events(sc.r, stderr);
		fputc('\n', stderr);
		err = -ENOENT;
	}
	if (!err)
		report_sym_warnings(sc.r, "pmcring script");
	if (!err && fflush(stdout))
		err = -EIO;
	report_free(sc.r);
	return err || damaged ? 1 : 0;
bad:
	report_bad_value("pmcring script", opt, optarg);
	return 2;
}
