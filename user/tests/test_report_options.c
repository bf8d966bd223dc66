// SPDX-License-Identifier: GPL-2.0
/*
 * Description: report, script, dump and stat parse their options the GNU
 * way, as perf does: an option after the recording is taken
 * (`report FILE --top 3`, `script FILE --inline`, `dump FILE -h`), an
 * unknown one is refused by name (`stat FILE -v`, not "-v: No such
 * file"), and two recordings are refused with a message naming both.
 */
#include "test_report_common.h"

static volatile unsigned long sink;

__attribute__((noinline, used)) void opt_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

int main(void)
{
	char dir[] = "/tmp/test_report_optionsXXXXXX", log[256];
	uint64_t pc[] = { (uintptr_t)opt_leaf + 4 };
	static struct plog p;
	struct self_map m;
	char *out;
	int rc, i;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/o.pmclog", dir);
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "optproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	for (i = 0; i < 3; i++)
		plog_callchain(&p, 100, 100, 0, pc, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	/* options after the file */
	out = run_report(&rc, log, "--top", "3", NULL);
	CHECK(rc == 0 && strstr(out, "opt_leaf"), "report FILE --top 3: rc %d\n%s",
	      rc, out);
	free(out);
	out = run_report(&rc, log, "--folded", NULL);
	CHECK(rc == 0 && !strcmp(out, "optproc;opt_leaf 3\n"),
	      "report FILE --folded: rc %d\n%s", rc, out);
	free(out);
	out = run_script(&rc, log, "--inline", NULL);
	CHECK(rc == 0 && strstr(out, " opt_leaf+0x4 ("),
	      "script FILE --inline: rc %d\n%s", rc, out);
	free(out);
	out = run_script(&rc, log, "-C", "0", NULL);
	CHECK(rc == 0 && strstr(out, "[000]"), "script FILE -C 0: rc %d\n%s",
	      rc, out);
	free(out);
	out = run_dump(&rc, log, "-h", NULL);
	CHECK(rc == 0 && strstr(out, "usage: pmcring dump"),
	      "dump FILE -h: rc %d\n%s", rc, out);
	free(out);

	/* an unknown option is named, not taken for a file */
	out = run_stat(&rc, log, "-v", NULL);
	CHECK(rc == 2 && strstr(t_stderr, "invalid option") &&
	      !strstr(t_stderr, "No such file"), "stat FILE -v: rc %d\n%s", rc,
	      t_stderr);
	free(out);
	out = run_report(&rc, log, "--no-such", NULL);
	CHECK(rc == 2 && strstr(t_stderr, "--no-such"),
	      "report --no-such: rc %d\n%s", rc, t_stderr);
	free(out);

	/* two recordings: both named */
	out = run_report(&rc, log, log, NULL);
	CHECK(rc == 2 && strstr(t_stderr, "one recording at a time"),
	      "report A B: rc %d\n%s", rc, t_stderr);
	free(out);
	out = run_script(&rc, "-i", log, log, NULL);
	CHECK(rc == 2 && strstr(t_stderr, "one recording at a time"),
	      "script -i A B: rc %d\n%s", rc, t_stderr);
	free(out);

	free(t_stderr);
	unlink(log);
	rmdir(dir);
	if (!t_failed)
		printf("test_report_options: all checks passed\n");
	return t_failed;
}
