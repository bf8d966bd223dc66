// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring script` prints a hand-built pmclog's samples in
 * perf script's default layout, exactly (comm pid/tid [cpu] time: event:,
 * then "ip sym+0xoff (dso)" frames leaf first, a blank line); the rules of
 * FlameGraph's stackcollapse-perf.pl (tests/stackcollapse_rules.pl) read
 * it into the same folded stacks as `pmcring report --folded`; --json
 * writes one object per record; speedscope imports it as "Linux perf" in
 * headless Chromium and shows the frame names (tests/speedscope_import.sh).
 */
#include <sys/wait.h>

#include "test_report_common.h"

static volatile unsigned long sink;

__attribute__((noinline, used)) void sc_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i * 3;
}

__attribute__((noinline, used)) void sc_mid(unsigned long n)
{
	sc_leaf(n);
	sink++;
}

__attribute__((noinline, used)) void sc_root(unsigned long n)
{
	sc_mid(n);
	sink++;
}

static const char kallsyms[] =
	"ffffffff81000000 T kfunc_entry\n"
	"ffffffff81000100 t kfunc_work\n";

#define K_WORK	0xffffffff81000110ull	/* kfunc_work+0x10 */
#define K_ENTRY	0xffffffff81000020ull	/* kfunc_entry+0x20 */

static int sh(const char *cmd)
{
	int st;

	fflush(stdout);
	st = system(cmd);
	REQUIRE(st != -1 && WIFEXITED(st), "%s: did not run", cmd);
	return WEXITSTATUS(st);
}

int main(void)
{
	char dir[] = "/tmp/test_report_scriptXXXXXX", log[256], ks[256];
	char txt[256], fold[256], cmd[4096], exp[8 * PATH_MAX], *out, *folded;
	uint64_t leaf = (uintptr_t)sc_leaf + 4, mid = (uintptr_t)sc_mid + 9;
	uint64_t root = (uintptr_t)sc_root + 9;
	uint64_t u[] = { leaf, mid, root }, k[] = { K_WORK, K_ENTRY, leaf, mid };
	uint64_t t[] = { mid, root };
	const char *outdir = getenv("SPEEDSCOPE_OUT");
	static struct plog p;
	struct self_map m;
	size_t n;
	int rc;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/sc.pmclog", dir);
	snprintf(ks, sizeof(ks), "%s/sc.pmclog.kallsyms", dir);
	snprintf(txt, sizeof(txt), "%s/sc.txt", dir);
	snprintf(fold, sizeof(fold), "%s/sc.folded", dir);
	write_file(ks, kallsyms, strlen(kallsyms));
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "scproc");
	plog_thr_create(&p, 101, 100, "scworker");
	plog_map_in(&p, 100, m.exec_start, m.path);
	p.ts = 12345678901ull;
	plog_callchain(&p, 100, 100, 0, u, 3);
	plog_callchain(&p, 100, 101, 1, k, 4);
	plog_callchain(&p, 100, 100, 12, t, 2);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	/* the layout, byte for byte */
	out = run_script(&rc, log, NULL);
	CHECK(rc == 0, "script rc %d", rc);
	n = snprintf(exp, sizeof(exp),
		"scproc   100/100   [000]    12.345678: cpu-clock: \n"
		"\t%16" PRIx64 " sc_leaf+0x4 (%s)\n"
		"\t%16" PRIx64 " sc_mid+0x9 (%s)\n"
		"\t%16" PRIx64 " sc_root+0x9 (%s)\n"
		"\n"
		"scproc   100/101   [001]    12.345679: cpu-clock: \n"
		"\tffffffff81000110 kfunc_work+0x10 ([kernel.kallsyms])\n"
		"\tffffffff81000020 kfunc_entry+0x20 ([kernel.kallsyms])\n"
		"\t%16" PRIx64 " sc_leaf+0x4 (%s)\n"
		"\t%16" PRIx64 " sc_mid+0x9 (%s)\n"
		"\n"
		"scproc   100/100   [012]    12.345680: cpu-clock: \n"
		"\t%16" PRIx64 " sc_mid+0x9 (%s)\n"
		"\t%16" PRIx64 " sc_root+0x9 (%s)\n"
		"\n", leaf, m.path, mid, m.path, root, m.path, leaf, m.path,
		mid, m.path, mid, m.path, root, m.path);
	REQUIRE(n < sizeof(exp), "expected text too long");
	CHECK(!strcmp(out, exp), "layout:\n--- got\n%s--- want\n%s", out, exp);
	write_file(txt, out, strlen(out));
	free(out);

	/* stackcollapse-perf.pl's rules give report --folded's stacks */
	folded = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0, "report --folded rc %d", rc);
	snprintf(cmd, sizeof(cmd), "perl tests/stackcollapse_rules.pl '%s' "
		 ">'%s'", txt, fold);
	CHECK(sh(cmd) == 0, "stackcollapse rules refused the output");
	out = calloc(1, 4096);
	REQUIRE(out, "calloc");
	{
		FILE *f = fopen(fold, "r");

		REQUIRE(f, "%s: %s", fold, strerror(errno));
		n = fread(out, 1, 4095, f);
		fclose(f);
	}
	CHECK(!strcmp(out, "scproc;sc_mid;sc_leaf;kfunc_entry;kfunc_work 1\n"
		      "scproc;sc_root;sc_mid 1\n"
		      "scproc;sc_root;sc_mid;sc_leaf 1\n"),
	      "collapsed:\n%s", out);
	CHECK(!strcmp(out, folded), "collapsed != report --folded:\n%s---\n%s",
	      out, folded);
	free(out);
	free(folded);

	/* filters and --event */
	out = run_script(&rc, "--cpu", "12", log, NULL);
	CHECK(rc == 0 && strstr(out, "[012]") && !strstr(out, "[000]") &&
	      !strstr(out, "[001]"), "--cpu 12 rc %d:\n%s", rc, out);
	free(out);
	out = run_script(&rc, "--event", "cycles", log, NULL);
	CHECK(rc == 1 && !*out, "--event of no sample rc %d:\n%s", rc, out);
	free(out);
	out = run_script(&rc, "--cpu", "x", log, NULL);
	CHECK(rc == 2 && !*out, "--cpu x rc %d", rc);
	free(out);

	/* --json: one object per record */
	out = run_script(&rc, "--json", log, NULL);
	CHECK(rc == 0, "--json rc %d", rc);
	CHECK(strstr(out, "{\"type\":\"event\",\"ts\":1000,\"pmcid\":1,\"flags\":0,"
		      "\"name\":\"cpu-clock\"}\n"), "json event:\n%s", out);
	CHECK(strstr(out, "{\"type\":\"comm\",\"ts\":2000,\"pid\":100,"
		      "\"tid\":100,\"name\":\"scproc\"}\n"), "json comm:\n%s", out);
	snprintf(exp, sizeof(exp), "{\"type\":\"sample\",\"ts\":12345679901,"
		 "\"comm\":\"scproc\",\"pid\":100,\"tid\":101,\"cpu\":1,"
		 "\"pmcid\":1,\"event\":\"cpu-clock\",\"period\":0,\"frames\":["
		 "{\"ip\":\"0xffffffff81000110\",\"sym\":\"kfunc_work\","
		 "\"off\":16,\"dso\":\"[kernel.kallsyms]\"},"
		 "{\"ip\":\"0xffffffff81000020\",\"sym\":\"kfunc_entry\","
		 "\"off\":32,\"dso\":\"[kernel.kallsyms]\"},"
		 "{\"ip\":\"0x%" PRIx64 "\",\"sym\":\"sc_leaf\",\"off\":4,"
		 "\"dso\":\"%s\"},{\"ip\":\"0x%" PRIx64 "\",\"sym\":\"sc_mid\","
		 "\"off\":9,\"dso\":\"%s\"}]}\n", leaf, m.path, mid, m.path);
	CHECK(strstr(out, exp), "json sample:\n%s\nwant\n%s", out, exp);
	{
		const char *q;
		int lines = 0;

		for (q = out; *q; q++)
			lines += *q == '\n';
		/* event, comm, thread, mmap, 3 samples */
		CHECK(lines == 7, "%d JSON lines:\n%s", lines, out);
	}
	free(out);

	/*
	 * speedscope: import in headless Chromium, the names it shows.  It
	 * makes one profile per thread and opens the first, so the thread
	 * with the kernel frames is imported on its own (--comm).
	 */
	if (!outdir)
		outdir = "../build/user/tests/speedscope";
	snprintf(cmd, sizeof(cmd), "sh tests/speedscope_import.sh '%s' '%s' "
		 "'scproc pid: 100 tid: 100 (1/2)' sc_leaf sc_mid sc_root",
		 txt, outdir);
	rc = sh(cmd);
	if (rc != 4)
		CHECK(rc == 0, "speedscope_import.sh failed (%d); files in %s",
		      rc, dir);
	out = run_script(&rc, "--comm", "scworker", log, NULL);
	CHECK(rc == 0 && strstr(out, "100/101") && !strstr(out, "100/100"),
	      "--comm scworker rc %d:\n%s", rc, out);
	write_file(txt, out, strlen(out));
	free(out);
	snprintf(cmd, sizeof(cmd), "sh tests/speedscope_import.sh '%s' "
		 "'%s/worker' 'scproc pid: 100 tid: 101' kfunc_work "
		 "kfunc_entry sc_leaf sc_mid", txt, outdir);
	if (rc != 4)
		rc = sh(cmd);
	if (rc == 4)
		return 4;	/* the script printed the reason last */
	CHECK(rc == 0, "speedscope_import.sh failed (%d); files in %s", rc, dir);
	if (!t_failed) {
		unlink(log);
		unlink(ks);
		unlink(txt);
		unlink(fold);
		rmdir(dir);
		printf("ok: perf script layout, stackcollapse rules, JSON, "
		       "speedscope import\n");
	}
	return t_failed;
}
