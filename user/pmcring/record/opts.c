// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring record` options.  Parsing only fills struct rec_opts (and
 * strdup()s stream names): no I/O, no exit, so the fuzzer can drive it.
 */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <strings.h>
#include <linux/perf_event.h>

#include "opts.h"
#include "pfm.h"

static const struct {
	const char	*name;
	uint32_t	type;
	uint64_t	config;
} events[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-instructions", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_BRANCH_INSTRUCTIONS },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES },
	{ "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK },
	{ "task-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK },
	{ "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS },
	{ "context-switches", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES },
	{ "cpu-migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS },
	{ "minor-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN },
	{ "major-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ },
};

int rec_event_at(unsigned int i, struct rec_event *ev)
{
	if (i >= sizeof(events) / sizeof(events[0]))
		return -ENOENT;
	memset(ev, 0, sizeof(*ev));
	snprintf(ev->name, sizeof(ev->name), "%s", events[i].name);
	ev->type = events[i].type;
	ev->config = events[i].config;
	return 0;
}

/* A name of the table, or "rHEX" (perf's raw event), @len bytes of @s. */
static int event_base(const char *s, size_t len, struct rec_event *ev)
{
	char hex[24], *end;
	size_t i;

	for (i = 0; i < sizeof(events) / sizeof(events[0]); i++) {
		if (strlen(events[i].name) != len ||
		    strncasecmp(events[i].name, s, len))
			continue;
		ev->type = events[i].type;
		ev->config = events[i].config;
		return 0;
	}
	if (len >= 2 && len < sizeof(hex) && s[0] == 'r' &&
	    isxdigit((unsigned char)s[1])) {
		memcpy(hex, s + 1, len - 1);
		hex[len - 1] = '\0';
		errno = 0;
		ev->config = strtoull(hex, &end, 16);
		if (!errno && !*end && len - 1 <= 16) {
			ev->type = PERF_TYPE_RAW;
			return 0;
		}
	}
	return -ENOENT;
}

/* perf's :u and :k; "uk" counts both. */
static int event_modifiers(const char *m, uint32_t *flags)
{
	bool u = false, k = false;

	if (!*m)
		return -EINVAL;
	for (; *m; m++) {
		if (*m == 'u')
			u = true;
		else if (*m == 'k')
			k = true;
		else
			return -EINVAL;
	}
	*flags = u && !k ? PMCRING_CTR_F_EXCLUDE_KERNEL :
		 k && !u ? PMCRING_CTR_F_EXCLUDE_USER : 0;
	return 0;
}

/* A PMU event through libpfm4, modifiers included ("EV:UMASK:u"). */
static int event_pfm(const char *name, struct rec_event *ev)
{
	struct pfm_event pe;
	int err = pfm_event_encode(name, &pe);

	if (err)
		return err;
	if (pe.exclude_user && pe.exclude_kernel)
		return -EINVAL;
	ev->type = pe.type;
	ev->config = pe.config;
	ev->flags = pe.exclude_kernel ? PMCRING_CTR_F_EXCLUDE_KERNEL :
		    pe.exclude_user ? PMCRING_CTR_F_EXCLUDE_USER : 0;
	return 0;
}

int rec_event_lookup(const char *name, struct rec_event *ev)
{
	const char *colon = strrchr(name, ':');
	size_t len = strlen(name);

	memset(ev, 0, sizeof(*ev));
	if (!len || len >= sizeof(ev->name))
		return -ENOENT;
	snprintf(ev->name, sizeof(ev->name), "%s", name);
	if (!event_base(name, len, ev))
		return 0;
	if (colon && !event_base(name, colon - name, ev))
		return event_modifiers(colon + 1, &ev->flags);
	return event_pfm(name, ev);
}

void rec_usage(FILE *f)
{
	fprintf(f,
"usage: pmcring record [OPTIONS] [-- COMMAND [ARGS...]]\n"
"\n"
"Record a session into a pmclog (default), barman or LDMS blob file.\n"
"With COMMAND: run it and record it (and its children) until it exits.\n"
"\n"
"      --format FMT        pmclog (default), barman or blob\n"
"  -o, --output PATH       output file (blob: directory); default\n"
"                          pmcring.pmclog, pmcring.barman, pmcring.blob;\n"
"                          none: no file (only with --ldms)\n"
"  -a, --all-cpus          record the whole system (CAP_PERFMON)\n"
"  -C, --cpu LIST          record the whole system on these CPUs only\n"
"                          (0,2-3): their samples and context switches\n"
"                          (CAP_PERFMON)\n"
"  -p, --pid PID           record an existing process and its children\n"
"  -t, --tid TID           record one existing thread, not the rest of its\n"
"                          process nor its children\n"
"  -e, --event EV[,EV]     sampling events (cycles, instructions,\n"
"                          cpu-clock, ..., rHEX, libpfm4's PMU::EVENT; :u\n"
"                          user only, :k kernel only; default cycles, or\n"
"                          cpu-clock without a PMU; 'none': no sampling)\n"
"  -c, --count N           sample every N events (also --period)\n"
"  -F, --freq HZ           sample HZ times a second (default %u)\n"
"  -g                      call chains (the default, as with pmcstat)\n"
"      --call-graph MODE   fp[,DEPTH] (frame pointers, default depth\n"
"                          128, max 512) or none (the sampled PC only)\n"
"      --types LIST        record types to record (callchain,proccsw,...\n"
"                          or all; default all)\n"
"      --buffer-pages N    ring data pages per CPU, a power of two\n"
"      --staging-mb N      user memory for records of a full ring while\n"
"                          the merge waits for another CPU (default 64,\n"
"                          0: none)\n"
"      --duration S        stop after S seconds\n"
"      --uring             write with io_uring (default: io_uring where the\n"
"                          file system takes non-blocking writes, else\n"
"                          read/write)\n"
"      --no-uring          plain read/write consumer (baseline)\n"
"      --direct-io         pmclog: write the file with O_DIRECT, whole 4 KiB\n"
"                          blocks (the last one at the end), with io_uring\n"
"                          8 writes in flight (default then: io_uring, but\n"
"                          read/write on tmpfs)\n"
"  -q, --quiet             no live status line\n"
"\n"
"barman:\n"
"      --barman-channel N  annotation channel of USERDATA records\n"
"\n"
"blob (LDMS blob_stream_writer layout):\n"
"      --path DIR          same as -o\n"
"      --container NAME    subdirectory (default pmcring)\n"
"      --stream NAME[:T,T] a file set of the record types T (NAME alone:\n"
"                          a type name, or all); repeatable; default all\n"
"      --blob-json         JSON messages (ldms-csv-from-blobs) instead of\n"
"                          binary records\n"
"      --timing            write the .TIMING files\n"
"      --roll-size BYTES   start new files when DAT would exceed BYTES\n"
"                          (k, M, G suffixes)\n"
"      --roll-time S       start new files every S seconds\n"
"\n"
"LDMS (publish to an ldmsd stream, alongside the file; ldms.rst):\n"
"      --ldms SPEC         KEY=VALUE,... with xprt (sock), host\n"
"                          (localhost), port (411), auth (none),\n"
"                          auth_opt=NAME=VALUE, stream (pmcring), type\n"
"                          (string: binary records; json), channel\n"
"                          (stream: blob_stream_writer; msg), window\n"
"                          (4096 messages not acknowledged), timeout\n"
"                          (5000 ms), batch (bytes of whole records per\n"
"                          message, channel=msg binary; 0: one each),\n"
"                          reconnect (ms between attempts to connect\n"
"                          again after a loss; default none: stop),\n"
"                          lib (path of libldmsd_stream.so.0)\n"
"\n"
"  -h, --help              this text\n"
"      --version           pmcring's version\n", REC_DEFAULT_FREQ);
}

enum {
	OPT_TYPES = 256, OPT_BUFFER_PAGES, OPT_DURATION, OPT_NO_URING,
	OPT_BM_CHANNEL, OPT_PATH, OPT_CONTAINER, OPT_STREAM, OPT_BLOB_JSON,
	OPT_TIMING, OPT_ROLL_SIZE, OPT_ROLL_TIME, OPT_GENERATE, OPT_FORMAT,
	OPT_CALL_GRAPH, OPT_DEPTH, OPT_VERSION, OPT_STAGING_MB, OPT_LDMS,
	OPT_URING, OPT_DIRECT_IO,
};

static const struct option longopts[] = {
	{ "format", required_argument, NULL, OPT_FORMAT },
	{ "output", required_argument, NULL, 'o' },
	{ "all-cpus", no_argument, NULL, 'a' },
	{ "pid", required_argument, NULL, 'p' },
	{ "cpu", required_argument, NULL, 'C' },
	{ "tid", required_argument, NULL, 't' },
	{ "event", required_argument, NULL, 'e' },
	{ "count", required_argument, NULL, 'c' },
	{ "period", required_argument, NULL, 'c' },
	{ "freq", required_argument, NULL, 'F' },
	{ "call-graph", required_argument, NULL, OPT_CALL_GRAPH },
	{ "callchain-depth", required_argument, NULL, OPT_DEPTH },
	{ "types", required_argument, NULL, OPT_TYPES },
	{ "buffer-pages", required_argument, NULL, OPT_BUFFER_PAGES },
	{ "staging-mb", required_argument, NULL, OPT_STAGING_MB },
	{ "duration", required_argument, NULL, OPT_DURATION },
	{ "no-uring", no_argument, NULL, OPT_NO_URING },
	{ "uring", no_argument, NULL, OPT_URING },
	{ "direct-io", no_argument, NULL, OPT_DIRECT_IO },
	{ "quiet", no_argument, NULL, 'q' },
	{ "barman-channel", required_argument, NULL, OPT_BM_CHANNEL },
	{ "path", required_argument, NULL, OPT_PATH },
	{ "container", required_argument, NULL, OPT_CONTAINER },
	{ "stream", required_argument, NULL, OPT_STREAM },
	{ "blob-json", no_argument, NULL, OPT_BLOB_JSON },
	{ "timing", no_argument, NULL, OPT_TIMING },
	{ "roll-size", required_argument, NULL, OPT_ROLL_SIZE },
	{ "roll-time", required_argument, NULL, OPT_ROLL_TIME },
	{ "ldms", required_argument, NULL, OPT_LDMS },
	{ "generate", required_argument, NULL, OPT_GENERATE },	/* tests */
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, OPT_VERSION },
	{ NULL, 0, NULL, 0 },
};

static int fail(char *err, size_t sz, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int fail(char *err, size_t sz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, sz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* An unsigned number with an optional k/M/G (x1024) suffix. */
static int parse_u64(const char *s, uint64_t max, bool suffix, uint64_t *v)
{
	unsigned long long n;
	char *end;
	int shift = 0;

	if (!*s || *s == '-' || *s == ' ')
		return -EINVAL;
	errno = 0;
	n = strtoull(s, &end, 0);
	if (errno || end == s)
		return -EINVAL;
	if (suffix && *end) {
		switch (*end++) {
		case 'k': case 'K': shift = 10; break;
		case 'm': case 'M': shift = 20; break;
		case 'g': case 'G': shift = 30; break;
		default: return -EINVAL;
		}
	}
	if (*end || n > (max >> shift))
		return -EINVAL;
	*v = (uint64_t)n << shift;
	return 0;
}

/* Seconds with up to 3 decimals, as milliseconds. */
static int parse_ms(const char *s, uint64_t *ms)
{
	char *end;
	double d;

	if (!*s || *s == '-' || *s == ' ')
		return -EINVAL;
	errno = 0;
	d = strtod(s, &end);
	if (errno || *end || !(d > 0) || d > 1e9)
		return -EINVAL;
	*ms = (uint64_t)(d * 1000 + 0.5);
	return *ms ? 0 : -EINVAL;
}

static int parse_events(struct rec_opts *o, const char *list, char *err,
			size_t sz)
{
	char buf[256], *tok, *save = NULL;

	if (strlen(list) >= sizeof(buf))
		return fail(err, sz, "-e: list too long");
	snprintf(buf, sizeof(buf), "%s", list);
	o->events_given = true;
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		if (!strcmp(tok, "none"))
			continue;
		if (o->nr_events >= FMT_MAX_COUNTERS)
			return fail(err, sz, "-e: at most %u events",
				    FMT_MAX_COUNTERS);
		switch (rec_event_lookup(tok, &o->events[o->nr_events])) {
		case 0:
			break;
		case -EINVAL:
			return fail(err, sz, "-e %s: bad modifier (perf's :u "
				    "or :k, or both)", tok);
		default:
			return fail(err, sz, "-e: unknown event '%s' (see "
				    "pmcring list; raw events: rHEX)", tok);
		}
		o->nr_events++;
	}
	return 0;
}

static int parse_stream(struct rec_opts *o, const char *arg, char *err,
			size_t sz)
{
	const char *colon = strchr(arg, ':'), *types;
	struct fmt_blob_stream *st;
	size_t n = colon ? (size_t)(colon - arg) : strlen(arg);

	if (o->nr_streams >= FMT_MAX_STREAMS)
		return fail(err, sz, "--stream: at most %u streams",
			    FMT_MAX_STREAMS);
	if (!n || n > 64 || memchr(arg, '/', n) || (n <= 2 && arg[0] == '.'))
		return fail(err, sz, "--stream: bad name '%.*s'", (int)n, arg);
	/* two streams of one name would write into the same file set */
	for (unsigned int i = 0; i < o->nr_streams; i++)
		if (strlen(o->streams[i].name) == n &&
		    !memcmp(o->streams[i].name, arg, n))
			return fail(err, sz, "--stream %.*s: given twice (each "
				    "stream is a file set of its own)", (int)n,
				    arg);
	st = &o->streams[o->nr_streams];
	types = colon ? colon + 1 : arg;
	if (fmt_types_parse(types, &st->types))
		return fail(err, sz, "--stream %s: unknown record type in "
			    "'%s' (use NAME:TYPE,TYPE or a type name)", arg,
			    types);
	st->name = strndup(arg, n);
	if (!st->name)
		return -ENOMEM;
	o->nr_streams++;
	return 0;
}

/* perf's CPU list: "0,2-3", numbers and ranges, into o->cpus. */
static int parse_cpus(struct rec_opts *o, const char *arg, char *err,
		      size_t sz)
{
	const char *p = arg;
	uint64_t lo, hi, c;
	char num[16];
	size_t n;

	if (o->cpu_list)
		return fail(err, sz, "-C given twice");
	do {
		n = strcspn(p, ",-");
		if (!n || n >= sizeof(num))
			goto bad;
		memcpy(num, p, n);
		num[n] = '\0';
		if (parse_u64(num, REC_MAX_CPUS - 1, false, &lo))
			goto bad;
		hi = lo;
		p += n;
		if (*p == '-') {
			n = strcspn(++p, ",");
			if (!n || n >= sizeof(num))
				goto bad;
			memcpy(num, p, n);
			num[n] = '\0';
			if (parse_u64(num, REC_MAX_CPUS - 1, false, &hi) ||
			    hi < lo)
				goto bad;
			p += n;
		}
		if (*p && *p != ',')
			goto bad;
		for (c = lo; c <= hi; c++)
			o->cpus[c / 64] |= 1ull << (c % 64);
		if ((hi / 64 + 1) * 8 > o->cpus_size)
			o->cpus_size = (uint32_t)(hi / 64 + 1) * 8;
	} while (*p++ == ',');
	o->cpu_list = arg;
	return 0;
bad:
	return fail(err, sz, "-C: bad CPU list '%s' (as in perf: 0,2-3; "
		    "CPUs 0..%u)", arg, REC_MAX_CPUS - 1);
}

static int parse_generate(struct rec_opts *o, const char *arg)
{
	char buf[64], *comma;
	uint64_t size;
	char *rate;

	if (strlen(arg) >= sizeof(buf))
		return -EINVAL;
	snprintf(buf, sizeof(buf), "%s", arg);
	comma = strchr(buf, ',');
	if (!comma)
		return -EINVAL;
	*comma = '\0';
	rate = strchr(comma + 1, ',');
	if (rate) {
		*rate = '\0';
		if (parse_u64(rate + 1, 100000000, false, &o->gen_rate) ||
		    !o->gen_rate)
			return -EINVAL;
	}
	if (parse_u64(buf, UINT32_MAX, false, &o->gen_count) || !o->gen_count ||
	    parse_u64(comma + 1, PMCRING_RECORD_MAX, false, &size) ||
	    size < 16 || size % 8)
		return -EINVAL;
	o->gen_size = (uint32_t)size;
	return 0;
}

static int parse_depth(struct rec_opts *o, const char *arg, char *err,
		       size_t sz)
{
	uint64_t v;

	if (parse_u64(arg, PMCRING_CALLCHAIN_DEPTH_MAX, false, &v) || !v)
		return fail(err, sz, "call chain depth '%s': 1..%u", arg,
			    PMCRING_CALLCHAIN_DEPTH_MAX);
	o->callchain_depth = (uint32_t)v;
	return 0;
}

static int parse_one(struct rec_opts *o, int c, const char *arg, char *err,
		     size_t sz)
{
	uint64_t v;

	switch (c) {
	case OPT_FORMAT:
		if (!strcmp(arg, "pmclog"))
			o->kind = FMT_PMCLOG;
		else if (!strcmp(arg, "barman"))
			o->kind = FMT_BARMAN;
		else if (!strcmp(arg, "blob"))
			o->kind = FMT_BLOB;
		else
			return fail(err, sz, "--format: unknown format '%s' "
				    "(pmclog, barman or blob)", arg);
		return 0;
	case 'o':
	case OPT_PATH:
		if (!*arg)
			return fail(err, sz, "-o: empty path");
		o->output = arg;
		return 0;
	case 'a':
		o->system_wide = true;
		return 0;
	case 'p':
		if (parse_u64(arg, INT32_MAX, false, &v) || !v)
			return fail(err, sz, "-p: bad pid '%s'", arg);
		o->pid = (int32_t)v;
		return 0;
	case 't':
		if (parse_u64(arg, INT32_MAX, false, &v) || !v)
			return fail(err, sz, "-t: bad thread id '%s'", arg);
		o->tid = (int32_t)v;
		return 0;
	case 'C':
		return parse_cpus(o, arg, err, sz);
	case 'e':
		return parse_events(o, arg, err, sz);
	case 'c':
		if (parse_u64(arg, UINT64_MAX, false, &o->period) || !o->period)
			return fail(err, sz, "-c: bad period '%s'", arg);
		return 0;
	case 'F':
		/* the old meaning, before perf's spelling */
		if (!strcmp(arg, "pmclog") || !strcmp(arg, "barman") ||
		    !strcmp(arg, "blob"))
			return fail(err, sz, "-F is the sampling frequency, as in "
				    "perf record: the output format is "
				    "--format %s", arg);
		if (parse_u64(arg, 1000000, false, &o->freq) || !o->freq)
			return fail(err, sz, "-F: bad frequency '%s' "
				    "(1..1000000)", arg);
		return 0;
	case 'f':
		return fail(err, sz, "-f: the sampling frequency is -F/--freq "
			    "%s, as in perf record", arg);
	case 'g':
		o->callchain_depth = 0;		/* the default depth */
		return 0;
	case OPT_CALL_GRAPH:
		if (!strcmp(arg, "none")) {
			o->callchain_depth = 1;	/* the sampled PC only */
			return 0;
		}
		if (strncmp(arg, "fp", 2) || (arg[2] && arg[2] != ','))
			return fail(err, sz, "--call-graph: '%s': fp[,DEPTH] or "
				    "none (pmcring walks frame pointers only)",
				    arg);
		return arg[2] ? parse_depth(o, arg + 3, err, sz) : 0;
	case OPT_DEPTH:
		return parse_depth(o, arg, err, sz);
	case OPT_TYPES:
		if (fmt_types_parse(arg, &o->types))
			return fail(err, sz, "--types: unknown type in '%s'", arg);
		return 0;
	case OPT_BUFFER_PAGES:
		if (parse_u64(arg, 1u << 20, false, &v) || !v || (v & (v - 1)))
			return fail(err, sz, "--buffer-pages: a power of two, "
				    "not '%s'", arg);
		o->buffer_pages = (uint32_t)v;
		return 0;
	case OPT_STAGING_MB:
		if (parse_u64(arg, 1u << 20, false, &v))
			return fail(err, sz, "--staging-mb: MiB from 0 to %u, "
				    "not '%s'", 1u << 20, arg);
		o->staging_mb = v;
		o->staging_given = true;
		return 0;
	case OPT_DURATION:
		if (parse_ms(arg, &o->duration_ms))
			return fail(err, sz, "--duration: '%s' is not a number of "
				    "seconds (e.g. 5 or 0.5, no unit)", arg);
		return 0;
	case OPT_NO_URING:
		o->no_uring = true;
		o->uring = false;
		return 0;
	case OPT_URING:
		o->uring = true;
		o->no_uring = false;
		return 0;
	case OPT_DIRECT_IO:
		o->direct_io = true;
		return 0;
	case 'q':
		o->quiet = true;
		return 0;
	case OPT_BM_CHANNEL:
		if (parse_u64(arg, UINT32_MAX, false, &v))
			return fail(err, sz, "--barman-channel: bad '%s'", arg);
		o->bm_channel = (uint32_t)v;
		return 0;
	case OPT_CONTAINER:
		if (!*arg || strchr(arg, '/') || !strcmp(arg, "..") ||
		    !strcmp(arg, "."))
			return fail(err, sz, "--container: bad name '%s'", arg);
		o->container = arg;
		return 0;
	case OPT_STREAM:
		return parse_stream(o, arg, err, sz);
	case OPT_BLOB_JSON:
		o->blob_json = true;
		return 0;
	case OPT_TIMING:
		o->timing = true;
		return 0;
	case OPT_ROLL_SIZE:
		if (parse_u64(arg, UINT64_MAX, true, &o->roll_bytes) ||
		    o->roll_bytes < 64)
			return fail(err, sz, "--roll-size: bad size '%s'", arg);
		return 0;
	case OPT_ROLL_TIME:
		if (parse_u64(arg, 1u << 30, false, &o->roll_secs) ||
		    !o->roll_secs)
			return fail(err, sz, "--roll-time: bad seconds '%s'", arg);
		return 0;
	case OPT_LDMS:
		if (o->ldms_given)
			return fail(err, sz, "--ldms: given twice");
		o->ldms_given = true;
		return ldms_pub_parse(&o->ldms, arg, err, sz);
	case OPT_GENERATE:
		if (parse_generate(o, arg))
			return fail(err, sz, "--generate: N,SIZE[,RATE] with SIZE "
				    "16..%u a multiple of 8", PMCRING_RECORD_MAX);
		return 0;
	default:
		return fail(err, sz, "unknown option (see pmcring record --help)");
	}
}

int rec_opts_parse(struct rec_opts *o, int argc, char **argv, char *err,
		   size_t errsz)
{
	int c, ret;

	memset(o, 0, sizeof(*o));
	err[0] = '\0';
	optind = 0;		/* full getopt reset (GNU) */
	opterr = 0;
	/* '+': stop at the first non-option, the COMMAND */
	while ((c = getopt_long(argc, argv, "+F:o:ap:t:C:e:c:f:gqh", longopts,
				NULL)) != -1) {
		if (c == 'h')
			return 1;
		if (c == OPT_VERSION)
			return 3;
		/* "-g 64" was a depth: not a command named 64 */
		if (c == 'g' && optind < argc && argv[optind][0] &&
		    strspn(argv[optind], "0123456789") == strlen(argv[optind]))
			return fail(err, errsz, "-g takes no depth (as in perf "
				    "record): --call-graph fp,%s", argv[optind]);
		if (c == '?' || c == ':')
			return fail(err, errsz, "%s '%s' (see pmcring record "
				    "--help)", c == ':' || (optopt &&
				    strchr("FoptCecf", optopt)) ?
				    "missing argument for" : "unknown option",
				    argv[optind - 1 < argc ? optind - 1 : 0]);
		ret = parse_one(o, c, optarg, err, errsz);
		if (ret)
			return ret;
	}
	if (optind < argc) {
		o->cmd = &argv[optind];
		o->cmd_argc = argc - optind;
		if (!o->cmd[0][0])
			return fail(err, errsz, "empty COMMAND");
	}
	if (o->period && o->freq)
		return fail(err, errsz, "-c and -F exclude each other");
	if (o->cpu_list && (o->pid || o->tid || o->cmd))
		return fail(err, errsz, "-C LIST records the whole system on "
			    "those CPUs: it excludes -p, -t and COMMAND (bound "
			    "it with --duration S)");
	if (o->cpu_list)
		o->system_wide = true;
	if ((o->system_wide ? 1 : 0) + (o->pid ? 1 : 0) + (o->tid ? 1 : 0) +
	    (o->cmd ? 1 : 0) > 1)
		return fail(err, errsz, "-a, -p, -t and COMMAND exclude each "
			    "other");
	if (!o->system_wide && !o->pid && !o->tid && !o->cmd && !o->gen_count)
		return fail(err, errsz, "nothing to record: give a COMMAND "
			    "(after --), -p PID, -t TID, -C LIST or -a");
	if (o->kind != FMT_BLOB && (o->container || o->nr_streams ||
				    o->blob_json || o->timing ||
				    o->roll_bytes || o->roll_secs))
		return fail(err, errsz, "blob options need --format blob");
	/* publish only: the records go to LDMS, none to a local file */
	if (o->output && !strcmp(o->output, "none")) {
		if (!o->ldms_given)
			return fail(err, errsz, "-o none: only with --ldms "
				    "(publish without a local file)");
		if (o->kind != FMT_PMCLOG)
			return fail(err, errsz, "-o none writes no file: no "
				    "--format");
		o->no_file = true;
	}
	if (o->direct_io && (o->kind != FMT_PMCLOG || o->no_file))
		return fail(err, errsz, "--direct-io: pmclog files only");
	if (o->kind == FMT_BLOB && !o->nr_streams) {
		o->streams[0].name = strdup("all");
		if (!o->streams[0].name)
			return -ENOMEM;
		o->streams[0].types = PMCRING_TYPES_ALL;
		o->nr_streams = 1;
	}
	return 0;
}

void rec_opts_free(struct rec_opts *o)
{
	unsigned int i;

	for (i = 0; i < o->nr_streams; i++)
		free(o->streams[i].name);
	o->nr_streams = 0;
	ldms_pub_opts_free(&o->ldms);
}
