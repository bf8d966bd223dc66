// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a recording read on another machine (`make run`'s VM
 * paths on the host) whose files are not here: report and script name
 * the missing files and print the --path-map that maps their directory;
 * script takes --path-map as report does, and with it the frames are
 * named; the header counts kernel modules apart from images (files).
 */
#include "test_report_common.h"

#include <libgen.h>

static volatile unsigned long sink;

__attribute__((noinline, used)) void ms_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

int main(void)
{
	char dir[] = "/tmp/test_report_missingXXXXXX", log[256], vm[600];
	char map[PATH_MAX + 32], self_dir[PATH_MAX];
	uint64_t pc[] = { (uintptr_t)ms_leaf + 4 };
	static struct plog p;
	struct self_map m;
	char *out;
	int rc, i;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/m.pmclog", dir);
	snprintf(self_dir, sizeof(self_dir), "%s", m.path);
	dirname(self_dir);
	/* this program, as a VM named it */
	snprintf(vm, sizeof(vm), "/vm/guest/bin/%s", strrchr(m.path, '/') + 1);
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "msproc");
	plog_map_in(&p, 100, m.exec_start, vm);
	plog_map_in(&p, 100, 0xffffffffc0000000ull, "pmcring");	/* a module */
	for (i = 0; i < 3; i++)
		plog_callchain(&p, 100, 100, 0, pc, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	/* the missing file named, with the --path-map that maps it */
	out = run_report(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, "# WARNING: 1 file the samples fell in "
				"is not on this machine") && strstr(out, vm) &&
	      strstr(out, "--path-map /vm/guest/bin=DIR"),
	      "report rc %d:\n%s", rc, out);
	CHECK(strstr(out, "# symbols: 0 of 1 images with symbols"),
	      "a module counted as an image:\n%s", out);
	CHECK(strstr(t_stderr, "--path-map /vm/guest/bin=DIR"),
	      "report stderr:\n%s", t_stderr);
	free(out);
	out = run_script(&rc, log, NULL);
	CHECK(rc == 0 && strstr(t_stderr, vm) &&
	      strstr(t_stderr, "--path-map /vm/guest/bin=DIR"),
	      "script rc %d:\n%s", rc, t_stderr);
	free(out);

	/* script --path-map, as report's */
	snprintf(map, sizeof(map), "/vm/guest/bin=%s", self_dir);
	out = run_script(&rc, "--path-map", map, log, NULL);
	CHECK(rc == 0 && strstr(out, " ms_leaf+0x4 (") &&
	      !strstr(t_stderr, "not on this machine"),
	      "script --path-map rc %d:\n%s%s", rc, out, t_stderr);
	free(out);
	out = run_report(&rc, "--folded", "--path-map", map, log, NULL);
	CHECK(rc == 0 && !strcmp(out, "msproc;ms_leaf 3\n"),
	      "report --path-map rc %d:\n%s", rc, out);
	free(out);
	out = run_script(&rc, "--path-map", "relative=x", log, NULL);
	CHECK(rc == 2 && strstr(t_stderr, "--path-map"), "bad --path-map rc %d",
	      rc);
	free(out);

	free(t_stderr);
	unlink(log);
	rmdir(dir);
	if (!t_failed)
		printf("test_report_missing: all checks passed\n");
	return t_failed;
}
