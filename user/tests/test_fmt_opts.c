// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring record` option parsing: a full command line lands
 * in the right fields (formats, targets including -C's CPU list and -t's
 * thread, events, sizes with suffixes, blob streams by type name or
 * NAME:TYPES, the COMMAND after --), blob defaults to one "all" stream,
 * and every bad argument is refused with a message (exit status 2 in the
 * command) instead of being half taken.
 */
#include "test_fmt_common.h"
#include <linux/perf_event.h>
#include "../pmcring/record/opts.h"

static int parse(struct rec_opts *o, char *err, ...)
{
	char *argv[64];
	int argc = 0, ret;
	va_list ap;

	argv[argc++] = "record";
	va_start(ap, err);
	while ((argv[argc] = va_arg(ap, char *)))
		argc++;
	va_end(ap);
	ret = rec_opts_parse(o, argc, argv, err, 256);
	return ret;
}

#define BAD(...) do {							\
	struct rec_opts o_;						\
	char e_[256];							\
	int r_ = parse(&o_, e_, __VA_ARGS__, (char *)NULL);		\
	CHECK(r_ == -EINVAL && e_[0], "accepted: %s", #__VA_ARGS__);	\
	rec_opts_free(&o_);						\
} while (0)

int main(void)
{
	struct rec_opts o;
	char err[256];
	int r;

	r = parse(&o, err, "--format", "blob", "-o", "/d", "--container", "app",
		  "--stream", "sched:proccsw,thr_create", "--stream", "callchain",
		  "--blob-json", "--timing", "--roll-size", "64M",
		  "--roll-time", "30", "-e", "cycles,cpu-clock", "-c", "10000",
		  "--call-graph", "fp,64", "--types", "callchain,proccsw", "--buffer-pages",
		  "256", "--staging-mb", "0", "--duration", "1.5", "--no-uring",
		  "-q", "--",
		  "prog", "-x", "arg", (char *)NULL);
	CHECK(r == 0, "full line: %d %s", r, err);
	CHECK(o.kind == FMT_BLOB && !strcmp(o.output, "/d") &&
	      !strcmp(o.container, "app"), "format, path, container");
	CHECK(o.nr_streams == 2 && !strcmp(o.streams[0].name, "sched") &&
	      o.streams[0].types == (PMCRING_TYPE_BIT(PMCRING_TYPE_PROCCSW) |
				     PMCRING_TYPE_BIT(PMCRING_TYPE_THR_CREATE)) &&
	      !strcmp(o.streams[1].name, "callchain") &&
	      o.streams[1].types == PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN),
	      "streams");
	CHECK(o.blob_json && o.timing && o.roll_bytes == 64ull << 20 &&
	      o.roll_secs == 30, "blob options");
	CHECK(o.nr_events == 2 && !strcmp(o.events[1].name, "cpu-clock") &&
	      o.events[1].type == 1 && o.events[1].config == 0 &&
	      o.period == 10000 && o.callchain_depth == 64, "events");
	CHECK(o.buffer_pages == 256 && o.duration_ms == 1500 && o.no_uring &&
	      o.quiet && o.staging_given && !o.staging_mb, "session options");
	CHECK(o.cmd_argc == 3 && !strcmp(o.cmd[0], "prog") &&
	      !strcmp(o.cmd[1], "-x"), "command after --");
	rec_opts_free(&o);

	/* the command starts at the first non-option, its options stay its own */
	r = parse(&o, err, "--format", "blob", "ls", "-l", (char *)NULL);
	CHECK(r == 0 && o.cmd_argc == 2 && o.nr_streams == 1 &&
	      !strcmp(o.streams[0].name, "all") &&
	      o.streams[0].types == PMCRING_TYPES_ALL, "blob default stream");
	rec_opts_free(&o);
	r = parse(&o, err, "-a", "--generate", "1000,64", (char *)NULL);
	CHECK(r == 0 && o.system_wide && o.gen_count == 1000 &&
	      o.gen_size == 64, "generate");
	rec_opts_free(&o);
	r = parse(&o, err, "--generate", "5,16", (char *)NULL);
	CHECK(r == 0, "generate needs no target");
	rec_opts_free(&o);
	/* the write path: neither option is auto; the last one given wins */
	r = parse(&o, err, "-a", (char *)NULL);
	CHECK(r == 0 && !o.uring && !o.no_uring, "io path auto by default");
	rec_opts_free(&o);
	r = parse(&o, err, "-a", "--no-uring", "--uring", (char *)NULL);
	CHECK(r == 0 && o.uring && !o.no_uring, "--uring");
	rec_opts_free(&o);
	r = parse(&o, err, "-a", "--uring", "--no-uring", (char *)NULL);
	CHECK(r == 0 && !o.uring && o.no_uring, "--no-uring after --uring");
	rec_opts_free(&o);
	/* O_DIRECT: pmclog files only */
	r = parse(&o, err, "-a", "--direct-io", (char *)NULL);
	CHECK(r == 0 && o.direct_io && !o.uring && !o.no_uring,
	      "--direct-io, io path auto");
	rec_opts_free(&o);
	r = parse(&o, err, "-a", "--direct-io", "--format", "barman",
		  (char *)NULL);
	CHECK(r == -EINVAL && strstr(err, "--direct-io: pmclog files only"),
	      "--direct-io refused for barman: %d %s", r, err);
	rec_opts_free(&o);
	r = parse(&o, err, "-h", (char *)NULL);
	CHECK(r == 1, "help");
	rec_opts_free(&o);
	r = parse(&o, err, "--version", (char *)NULL);
	CHECK(r == 3, "version");
	rec_opts_free(&o);

	/* perf record's spellings */
	r = parse(&o, err, "-F", "999", "-g", "--", "cmd", (char *)NULL);
	CHECK(r == 0 && o.freq == 999 && o.callchain_depth == 0 &&
	      o.cmd_argc == 1, "-F 999 -g -- cmd: %d %s", r, err);
	rec_opts_free(&o);
	r = parse(&o, err, "--count", "5000", "--call-graph", "fp", "-a",
		  (char *)NULL);
	CHECK(r == 0 && o.period == 5000 && o.callchain_depth == 0,
	      "--count, --call-graph fp: %d %s", r, err);
	rec_opts_free(&o);
	r = parse(&o, err, "--call-graph", "none", "-a", (char *)NULL);
	CHECK(r == 0 && o.callchain_depth == 1, "--call-graph none");
	rec_opts_free(&o);
	r = parse(&o, err, "--freq", "77", "--period", "9", "-a", (char *)NULL);
	CHECK(r < 0 && strstr(err, "exclude"), "freq and period: %s", err);
	rec_opts_free(&o);
	/* the old spellings: refused, with the new one in the message */
	r = parse(&o, err, "-F", "barman", "-a", (char *)NULL);
	CHECK(r < 0 && strstr(err, "--format barman"), "-F barman: %s", err);
	rec_opts_free(&o);
	r = parse(&o, err, "-g", "64", "-a", (char *)NULL);
	CHECK(r < 0 && strstr(err, "--call-graph fp,64"), "-g 64: %s", err);
	rec_opts_free(&o);
	r = parse(&o, err, "-f", "100", "-a", (char *)NULL);
	CHECK(r < 0 && strstr(err, "-F/--freq"), "-f 100: %s", err);
	rec_opts_free(&o);
	r = parse(&o, err, "--call-graph", "dwarf", "-a", (char *)NULL);
	CHECK(r < 0 && strstr(err, "fp[,DEPTH]"), "--call-graph dwarf: %s", err);
	rec_opts_free(&o);

	BAD("--format", "perf", "-a");
	BAD("-a", "-p", "12");
	BAD("-a", "--", "true");
	BAD("-c", "10", "-F", "10", "-a");
	BAD("-e", "bogus", "-a");
	BAD("-e", "cycles:x", "-a");		/* perf's :u and :k only */
	BAD("-e", "cpu-clock:", "-a");
	BAD("-e", "r", "-a");
	BAD("-e", "rxyz", "-a");
	BAD("-e", "r12345678901234567", "-a");	/* over 64 bits */
	BAD("-e", "perf::NO_SUCH_EVENT", "-a");
	BAD("-p", "0");
	BAD("-p", "-3");
	BAD("-F", "0", "-a");
	BAD("--buffer-pages", "3", "-a");
	BAD("--staging-mb", "-1", "-a");
	BAD("--staging-mb", "2000000", "-a");
	BAD("--duration", "-1", "-a");
	BAD("--duration", "abc", "-a");
	BAD("--types", "callchain,,proccsw", "-a");
	/* one name twice: two writers of one file set */
	BAD("--format", "blob", "--stream", "all", "--stream", "all:callchain",
	    "-a");
	BAD("--types", "nosuch", "-a");
	BAD("--format", "blob", "--stream", "x/y", "-a");
	BAD("--format", "blob", "--stream", "foo", "-a");
	BAD("--format", "blob", "--stream", "s:bad", "-a");
	BAD("--format", "blob", "--roll-size", "10Q", "-a");
	BAD("--format", "blob", "--container", "..", "-a");
	BAD("--blob-json", "-a");
	BAD("--generate", "10,12");
	BAD("--generate", "10");
	BAD("--call-graph", "fp,513", "-a");
	BAD("--nosuch", "-a");
	BAD("-o");
	BAD("-a", "--duration");
	BAD("");			/* an empty COMMAND */
	/* -C LIST (perf's syntax): the whole system on those CPUs. */
	r = parse(&o, err, "-C", "0,2-3", (char *)NULL);
	CHECK(r == 0 && o.system_wide && !o.pid && !o.tid &&
	      !strcmp(o.cpu_list, "0,2-3") && o.cpus[0] == 0xd &&
	      o.cpus[1] == 0 && o.cpus_size == 8, "-C 0,2-3: %d %s", r, err);
	rec_opts_free(&o);
	r = parse(&o, err, "-a", "--cpu", "64,1", (char *)NULL);
	CHECK(r == 0 && o.system_wide && o.cpus[0] == 2 && o.cpus[1] == 1 &&
	      o.cpus_size == 16, "-a --cpu 64,1: %d %s", r, err);
	rec_opts_free(&o);
	r = parse(&o, err, "-C", "8190-8191", (char *)NULL);
	CHECK(r == 0 && o.cpus[127] == 3ull << 62 && o.cpus_size == 1024,
	      "-C 8190-8191: %d %s", r, err);
	rec_opts_free(&o);
	/* -t TID: one thread. */
	r = parse(&o, err, "--tid", "42", (char *)NULL);
	CHECK(r == 0 && o.tid == 42 && !o.pid && !o.system_wide &&
	      !o.cpu_list, "--tid 42: %d %s", r, err);
	rec_opts_free(&o);
	BAD("-C", "");
	BAD("-C", ",");
	BAD("-C", "1,");
	BAD("-C", ",1");
	BAD("-C", "1,,2");
	BAD("-C", "1-");
	BAD("-C", "-1");
	BAD("-C", "3-1");
	BAD("-C", "1-2-3");
	BAD("-C", "8192");
	BAD("-C", "0-8192");
	BAD("-C", "x");
	BAD("-C", "1 ");
	BAD("-C", "1", "-C", "2");
	BAD("-C");
	BAD("-t", "0");
	BAD("-t", "x");
	BAD("-t", "-4");
	BAD("-t", "2147483648");
	BAD("-t");
	r = parse(&o, err, "-C", "1", "-p", "3", (char *)NULL);
	CHECK(r == -EINVAL && strstr(err, "--duration"), "-C with -p: %s", err);
	rec_opts_free(&o);
	BAD("-C", "1", "-t", "3");
	BAD("-C", "1", "--", "true");
	r = parse(&o, err, "-t", "5", "-p", "5", (char *)NULL);
	CHECK(r == -EINVAL && strstr(err, "-t"), "-t with -p: %s", err);
	rec_opts_free(&o);
	BAD("-t", "5", "-a");
	BAD("-t", "5", "--", "true");
	/* perf's modifiers, raw codes and libpfm4's names */
	r = parse(&o, err, "-e", "cpu-clock:u,cycles:k,page-faults:uk,r1c2,"
		  "rC0:u", "-a", (char *)NULL);
	CHECK(r == 0, "modifiers: %s", err);
	CHECK(o.nr_events == 5, "5 events, got %u", o.nr_events);
	CHECK(o.events[0].type == PERF_TYPE_SOFTWARE &&
	      o.events[0].config == PERF_COUNT_SW_CPU_CLOCK &&
	      o.events[0].flags == PMCRING_CTR_F_EXCLUDE_KERNEL &&
	      !strcmp(o.events[0].name, "cpu-clock:u"), "cpu-clock:u");
	CHECK(o.events[1].type == PERF_TYPE_HARDWARE &&
	      o.events[1].flags == PMCRING_CTR_F_EXCLUDE_USER, "cycles:k");
	CHECK(o.events[2].flags == 0, ":uk counts both");
	CHECK(o.events[3].type == PERF_TYPE_RAW &&
	      o.events[3].config == 0x1c2 && !o.events[3].flags, "r1c2");
	CHECK(o.events[4].type == PERF_TYPE_RAW &&
	      o.events[4].config == 0xc0 &&
	      o.events[4].flags == PMCRING_CTR_F_EXCLUDE_KERNEL, "rC0:u");
	rec_opts_free(&o);
	r = parse(&o, err, "-e", "bogus", "-a", (char *)NULL);
	CHECK(r == -EINVAL && strstr(err, "pmcring list"), "hint: %s", err);
	rec_opts_free(&o);
	r = parse(&o, err, "-e", "cycles:q", "-a", (char *)NULL);
	CHECK(r == -EINVAL && strstr(err, ":u"), "modifier hint: %s", err);
	rec_opts_free(&o);
#ifdef PMCRING_HAVE_LIBPFM
	/* libpfm4's generic perf PMU exists on every machine */
	r = parse(&o, err, "-e", "perf::PERF_COUNT_SW_CPU_CLOCK:u", "-a",
		  (char *)NULL);
	CHECK(r == 0, "libpfm4 name: %s", err);
	CHECK(o.nr_events == 1 && o.events[0].type == PERF_TYPE_SOFTWARE &&
	      o.events[0].config == PERF_COUNT_SW_CPU_CLOCK &&
	      o.events[0].flags == PMCRING_CTR_F_EXCLUDE_KERNEL,
	      "perf::PERF_COUNT_SW_CPU_CLOCK:u: type %u config %llu flags %u",
	      o.events[0].type, (unsigned long long)o.events[0].config,
	      o.events[0].flags);
	rec_opts_free(&o);
#endif
	r = parse(&o, err, (char *)NULL);
	CHECK(r == -EINVAL && strstr(err, "nothing to record"), "no target");
	rec_opts_free(&o);

	if (!t_failed)
		printf("test_fmt_opts: all checks passed\n");
	return t_failed;
}
