// SPDX-License-Identifier: GPL-2.0
/*
 * Description: what a perf user expects: C++ names in perf's short form
 * ("ns::f<T>", no return type, no parameters; --full-signature and
 * --no-demangle are in test_report_dwarf); --sort symbol, -n and --stdio
 * taken; script -F picks the fields; record keeps an earlier recording as
 * FILE.old (its sidecars too), a blob directory (a store) as it is; a blob
 * recording into a directory whose parent is not there is refused, not
 * made with its whole tree.
 */
#include "test_report_write.h"
#include "../pmcring/report/sym.h"

static volatile unsigned long sink;

__attribute__((noinline, used)) void pf_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

static void short_is(const char *full, const char *want)
{
	char buf[512];

	sym_short_name(full, buf, sizeof(buf));
	CHECK(!strcmp(buf, want), "short of '%s': '%s', want '%s'", full, buf,
	      want);
}

static bool exists(const char *fmt, const char *a)
{
	char p[600];

	snprintf(p, sizeof(p), fmt, a);
	return !access(p, F_OK);
}

int main(void)
{
	char dir[] = "/tmp/test_report_perfXXXXXX", log[256], path[400];
	uint64_t pc[] = { (uintptr_t)pf_leaf + 4 };
	static struct plog p;
	static struct recs rs;
	struct self_map m;
	struct fmt_opts o;
	struct fmt_writer *w;
	struct out_batch b;
	char *out;
	int rc;

	/* perf's short names */
	short_is("double app::multiply<double>(double const*, double const*, "
		 "unsigned long)", "app::multiply<double>");
	short_is("pmcr::Widget::spin(int)", "pmcr::Widget::spin");
	short_is("pmcr::Widget::get() const", "pmcr::Widget::get");
	short_is("std::vector<int, std::allocator<int> >::push_back(int&&)",
		 "std::vector<int, std::allocator<int> >::push_back");
	short_is("(anonymous namespace)::helper(void (*)(int))",
		 "(anonymous namespace)::helper");
	short_is("app::Foo::operator<(app::Foo const&) const",
		 "app::Foo::operator<");
	short_is("operator new(unsigned long)", "operator new");
	short_is("void app::run<std::pair<int, int> >(std::pair<int, int>)",
		 "app::run<std::pair<int, int> >");
	short_is("main::{lambda(int)#1}::operator()(int) const",
		 "main::{lambda(int)#1}::operator()");
	short_is("<m::pmcr::Widget<u32>>::spin", "<m::pmcr::Widget<u32>>::spin");
	short_is("core::fmt::write", "core::fmt::write");
	short_is("plain_c", "plain_c");

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/f.pmclog", dir);
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "pfproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	p.ts = 3000001000ull;
	plog_callchain(&p, 100, 101, 2, pc, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	/* perf report's spellings */
	out = run_report(&rc, "--stdio", "-n", "--sort", "symbol", log, NULL);
	CHECK(rc == 0 && strstr(out, "Samples by sym ") &&
	      strstr(out, "[.] pf_leaf"), "--stdio -n --sort symbol rc %d:\n%s",
	      rc, out);
	free(out);

	/* script -F */
	out = run_script(&rc, "-F", "comm,tid,ip,sym", log, NULL);
	snprintf(path, sizeof(path), "pfproc   101 \n\t%16" PRIx64 " pf_leaf\n\n",
		 pc[0]);
	CHECK(rc == 0 && !strcmp(out, path), "-F comm,tid,ip,sym rc %d:\n%s"
	      "want\n%s", rc, out, path);
	free(out);
	out = run_script(&rc, "-F", "-ip,dso,cpu", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "pfproc   100/101       3.000001: "
			   "cpu-clock: \n\tpf_leaf+0x4\n\n"),
	      "-F -ip,dso,cpu rc %d:\n%s", rc, out);
	free(out);
	out = run_script(&rc, "-F", "comm,bogus", log, NULL);
	CHECK(rc == 2 && strstr(t_stderr, "-F: 'comm,bogus' is not a list"),
	      "-F bogus rc %d", rc);
	free(out);

	/* FILE.old, with its sidecars; DIR.old */
	snprintf(path, sizeof(path), "%s.kallsyms", log);
	write_file(path, "x\n", 2);
	CHECK(out_keep_old(log) == 0 && exists("%s.old", log) &&
	      exists("%s.old.kallsyms", log) && !exists("%s", log) &&
	      !exists("%s.kallsyms", log), "FILE.old");
	write_file(log, p.b, p.len);	/* a second time: .old replaced */
	CHECK(out_keep_old(log) == 0 && !exists("%s.old.kallsyms", log) &&
	      exists("%s.old", log), "FILE.old again");
	CHECK(out_keep_old(log) == 0, "nothing to keep");
	CHECK(out_keep_old("/dev/null") == 0 && !access("/dev/null", F_OK),
	      "/dev/null moved");

	/* blob: -o DIR under a directory that is not there */
	rs.p = p;
	rs.p.len = 0;
	plog_proc_create(&rs.p, 100, "pfproc");
	recs_slot(&rs);
	snprintf(path, sizeof(path), "%s/typo/out", dir);
	write_default_opts(&o, FMT_BLOB, path);
	REQUIRE(!out_batch_init(&b, 256, 1 << 20), "batch");
	w = fmt_writer_new(&o);
	REQUIRE(w, "writer");
	CHECK(fmt_begin(w, &b) == -ENOENT && !exists("%s/typo", dir),
	      "blob made %s", path);
	fmt_writer_free(w);
	out_batch_free(&b);
	snprintf(path, sizeof(path), "%s/blob", dir);
	write_format(&rs, FMT_BLOB, path, false);
	CHECK(out_keep_old(path) == 0 && !exists("%s.old", path) &&
	      exists("%s/c", path), "a blob store was moved");
	free((void *)rs.r[0].data);

	free(t_stderr);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (!t_failed && system(path))
		fprintf(stderr, "could not remove %s\n", dir);
	if (!t_failed)
		printf("test_report_perf: all checks passed\n");
	return t_failed;
}
