// SPDX-License-Identifier: GPL-2.0
/*
 * Description: perf report's views of `pmcring report` on a hand-built
 * pmclog: --sort over comm, pid, dso, sym, srcline with --children and
 * --no-children (samples, period), -G / --call-graph caller and callee
 * text trees in perf's layout, --percent-limit on rows and branches, and
 * the errors for bad values.
 */
#include "test_report_common.h"

static volatile unsigned long sink;

enum { LEAF_FIRST = __LINE__ };
__attribute__((noinline, used)) void v_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}
enum { LEAF_LAST = __LINE__, WORK_FIRST = __LINE__ };

__attribute__((noinline, used)) void v_work(unsigned long n)
{
	v_leaf(n);
	sink++;
}
enum { WORK_LAST = __LINE__ };

/* The line of a "[.] FN   FILE:LINE" row of --sort sym,srcline, or -1. */
static int srcline_of(const char *out, const char *fn)
{
	char row[128];
	const char *p;

	snprintf(row, sizeof(row), "[.] %s   test_report_views.c:", fn);
	p = strstr(out, row);
	return p ? atoi(p + strlen(row)) : -1;
}

__attribute__((noinline, used)) void v_other(unsigned long n)
{
	sink += n;
}

__attribute__((noinline, used)) void v_main(unsigned long n)
{
	v_work(n);
	v_other(n);
}

static char log_path[256];

static char *report(int *rc, const char *a1, const char *a2, const char *a3,
		    const char *a4)
{
	return run_report(rc, a1, a2, a3, a4, log_path, NULL);
}

int main(void)
{
	char dir[] = "/tmp/test_report_viewsXXXXXX", *out, exp[8 * PATH_MAX];
	uint64_t leaf[] = { (uintptr_t)v_leaf + 4, (uintptr_t)v_work + 9,
			    (uintptr_t)v_main + 9 };
	uint64_t work[] = { (uintptr_t)v_work + 4, (uintptr_t)v_main + 9 };
	uint64_t other[] = { (uintptr_t)v_other + 4, (uintptr_t)v_main + 14 };
	static struct plog p;
	struct self_map m;
	const char *base;
	int rc, i;

	self_map(&m);
	base = strrchr(m.path, '/') + 1;
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log_path, sizeof(log_path), "%s/views.pmclog", dir);
	plog_initialize(&p);
	plog_pmcalloc(&p, 1, 0, 1000);
	plog_pmc(&p, 1, "cycles");
	plog_proc_create(&p, 300, "vproc");
	plog_map_in(&p, 300, m.exec_start, m.path);
	for (i = 0; i < 6; i++)
		plog_callchain(&p, 300, 300, 0, leaf, 3);
	for (i = 0; i < 3; i++)
		plog_callchain(&p, 300, 300, 0, work, 2);
	plog_callchain(&p, 300, 300, 0, other, 2);
	plog_closelog(&p);
	write_file(log_path, p.b, p.len);

	/* --sort with children: v_main is in every chain, has no self */
	out = report(&rc, "--sort", "comm,dso,sym", "--top", "20");
	CHECK(rc == 0, "rc %d", rc);
	snprintf(exp, sizeof(exp),
		 "Samples by comm,dso,sym (Children: samples with the entry "
		 "anywhere in their chain; Period: samples x the period):\n"
		 "  Children     Self  Samples       Period  Command  %-*s  Symbol\n"
		 "   100.00%%    0.00%%        0            0  vproc    %s  [.] v_main\n"
		 "    90.00%%   30.00%%        3         3000  vproc    %s  [.] v_work\n"
		 "    60.00%%   60.00%%        6         6000  vproc    %s  [.] v_leaf\n"
		 "    10.00%%   10.00%%        1         1000  vproc    %s  [.] v_other\n",
		 (int)strlen(base), "Shared Object", base, base, base, base);
	CHECK(strstr(out, exp), "--sort comm,dso,sym:\n%s\nwant:\n%s", out, exp);
	CHECK(!strstr(out, "Top functions"), "function tables with --sort");
	free(out);

	/* --no-children, --percent-limit, srcline from this file's DWARF */
	out = report(&rc, "--sort", "pid,sym,srcline", "--no-children",
		     "--percent-limit=20");
	CHECK(rc == 0, "rc %d", rc);
	CHECK(strstr(out, "Samples by pid,sym,srcline (self samples only; "
		      "Period: samples x the period):\n"
		      "      Self  Samples       Period  Pid  Symbol       "
		      "Source:Line\n"
		      "    60.00%        6         6000  300  [.] v_leaf   "
		      "test_report_views.c:"), "--no-children --percent-limit "
	      "20:\n%s", out);
	CHECK(strstr(out, "    30.00%        3         3000  300  [.] v_work   "
		      "test_report_views.c:"), "v_work row:\n%s", out);
	i = srcline_of(out, "v_leaf");
	CHECK(i > LEAF_FIRST && i < LEAF_LAST, "v_leaf at line %d", i);
	i = srcline_of(out, "v_work");
	CHECK(i > WORK_FIRST && i < WORK_LAST, "v_work at line %d", i);
	CHECK(!strstr(out, "v_other") && !strstr(out, "v_main"),
	      "entries under 20%% or without self:\n%s", out);
	free(out);

	/* -G: caller order, each function's callees */
	out = report(&rc, "-G", "--top", "1", "--percent-limit=0");
	CHECK(rc == 0, "rc %d", rc);
	CHECK(strstr(out, "Call graph (caller order: each function, then its "
		      "callees; Children: samples with the function in their "
		      "chain):\n\n"
		      "  100.00%   0.00%  v_main ["), "-G head:\n%s", out);
	CHECK(strstr(out, "]\n"
		      "          |\n"
		      "          ---v_main\n"
		      "             |\n"
		      "             |--90.00%--v_work\n"
		      "             |          |\n"
		      "             |           --60.00%--v_leaf\n"
		      "             |\n"
		      "              --10.00%--v_other\n"
		      "\n"), "-G tree:\n%s", out);
	free(out);

	/* --percent-limit prunes branches too */
	out = report(&rc, "--call-graph", "--top", "1", "--percent-limit=50");
	CHECK(rc == 0, "rc %d", rc);
	CHECK(strstr(out, "          ---v_main\n"
		      "             |\n"
		      "              --90.00%--v_work\n"
		      "                        |\n"
		      "                         --60.00%--v_leaf\n"
		      "\n"), "--percent-limit 50 tree:\n%s", out);
	CHECK(!strstr(out, "v_other"), "v_other (10%%) shown:\n%s", out);
	free(out);

	/* callee order: each function, then its callers */
	out = report(&rc, "--call-graph=callee", "--top", "3", "--children");
	CHECK(rc == 0, "rc %d", rc);
	CHECK(strstr(out, "          ---v_leaf\n"
		      "             v_work\n"
		      "             v_main\n"), "callee tree:\n%s", out);
	free(out);

	/* caller order without children: root-first chains of self samples */
	out = report(&rc, "-G", "--no-children", "--top", "1");
	CHECK(rc == 0, "rc %d", rc);
	CHECK(strstr(out, "   60.00%  60.00%  v_leaf [") &&
	      strstr(out, "          ---v_main\n"
			  "             v_work\n"
			  "             v_leaf\n"), "-G --no-children:\n%s", out);
	free(out);

	/* bad values: usage status 2, nothing on stdout */
	out = report(&rc, "--sort", "comm,bogus", "--top", "1");
	CHECK(rc == 2 && !*out, "--sort comm,bogus rc %d", rc);
	free(out);
	out = report(&rc, "--sort", "comm,", "--top", "1");
	CHECK(rc == 2 && !*out, "--sort 'comm,' rc %d", rc);
	free(out);
	out = report(&rc, "--call-graph=fractal", "--top", "1", "--children");
	CHECK(rc == 2 && !*out, "--call-graph=fractal rc %d", rc);
	free(out);
	out = report(&rc, "--percent-limit", "101", "--top", "1");
	CHECK(rc == 2 && !*out, "--percent-limit 101 rc %d", rc);
	free(out);
	out = report(&rc, "--percent-limit", "ten", "--top", "1");
	CHECK(rc == 2 && !*out, "--percent-limit ten rc %d", rc);
	free(out);

	unlink(log_path);
	rmdir(dir);
	if (!t_failed)
		printf("ok: --sort, --children, -G, --percent-limit\n");
	return t_failed;
}
