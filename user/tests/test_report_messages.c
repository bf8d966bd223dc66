// SPDX-License-Identifier: GPL-2.0
/*
 * Description: errors say what to do: a bad option value names the
 * option and its valid form (report --time-from, --top, script -C, record
 * --duration); --event of an event without samples lists the events that
 * have some; --sort marks an unnamed kernel frame [k] as perf does; dump
 * and script --json print the kernel's MAP_IN pid as -1, as the docs do.
 */
#include "test_report_common.h"
#include "../pmcring/record/opts.h"

static volatile unsigned long sink;

__attribute__((noinline, used)) void mg_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

int main(void)
{
	char dir[] = "/tmp/test_report_messagesXXXXXX", log[256], ks[256];
	uint64_t pc[] = { 0xffffffff81000010ull, (uintptr_t)mg_leaf + 4 };
	char *argv[] = { "record", "--duration", "5s", "-a", NULL }, err[256];
	static struct plog p;
	struct rec_opts ro;
	struct self_map m;
	char *out;
	int rc;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/g.pmclog", dir);
	snprintf(ks, sizeof(ks), "%s/g.kallsyms", dir);
	write_file(ks, "ffffffffa0000000 T far_away\n", 28);
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "mgproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	plog_map_in(&p, UINT32_MAX, 0xffffffffc0000000ull, "pmcring");
	plog_callchain(&p, 100, 100, 0, pc, 2);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	/* the option and its form */
	out = run_report(&rc, "--time-from", "junk", log, NULL);
	CHECK(rc == 2 && strstr(t_stderr, "--time-from: 'junk' is not ns of "
				"the record clock") && strstr(t_stderr, "+1.5s"),
	      "--time-from junk rc %d:\n%s", rc, t_stderr);
	free(out);
	out = run_report(&rc, "--top", "-1", log, NULL);
	CHECK(rc == 2 && strstr(t_stderr, "--top: '-1' is not a row count, "
				"1 to 100000"), "--top -1 rc %d:\n%s", rc,
	      t_stderr);
	free(out);
	out = run_script(&rc, "-C", "x", log, NULL);
	CHECK(rc == 2 && strstr(t_stderr, "--cpu: 'x' is not a CPU number"),
	      "script -C x rc %d:\n%s", rc, t_stderr);
	free(out);
	memset(&ro, 0, sizeof(ro));
	CHECK(rec_opts_parse(&ro, 4, argv, err, sizeof(err)) == -EINVAL &&
	      strstr(err, "--duration: '5s' is not a number of seconds (e.g. "
		     "5 or 0.5"), "--duration 5s: %s", err);
	rec_opts_free(&ro);

	/* --event: the events that have samples */
	out = run_report(&rc, "--event", "nosuch", "--kallsyms", ks, log, NULL);
	CHECK(rc == 1 && strstr(t_stderr, "no samples of event 'nosuch'; "
				"events with samples: cpu-clock"),
	      "--event nosuch rc %d:\n%s", rc, t_stderr);
	free(out);
	out = run_script(&rc, "--event", "nosuch", "--kallsyms", ks, log, NULL);
	CHECK(rc == 1 && strstr(t_stderr, "events with samples: cpu-clock"),
	      "script --event nosuch rc %d:\n%s", rc, t_stderr);
	free(out);

	/* --sort: an unnamed kernel frame is still [k] */
	out = run_report(&rc, "--sort", "sym", "--kallsyms", ks, log, NULL);
	CHECK(rc == 0 && strstr(out, "[k] [unknown]") && !strstr(out,
								"[.] [unknown] 0xffffffff"),
	      "--sort sym rc %d:\n%s", rc, out);
	free(out);

	/* the kernel's MAP_IN: pid -1 */
	out = run_dump(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, " MAP_IN pid=-1 "), "dump rc %d:\n%s", rc,
	      out);
	free(out);
	out = run_script(&rc, "--json", "--kallsyms", ks, log, NULL);
	CHECK(rc == 0 && strstr(out, "\"type\":\"mmap\",\"ts\":4000,\"pid\":-1,"),
	      "script --json rc %d:\n%s", rc, out);
	free(out);

	free(t_stderr);
	unlink(log);
	unlink(ks);
	rmdir(dir);
	if (!t_failed)
		printf("test_report_messages: all checks passed\n");
	return t_failed;
}
