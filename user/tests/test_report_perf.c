// SPDX-License-Identifier: GPL-2.0
/*
 * Description: what a perf user expects: C++ names in perf's short form
 * ("ns::f<T>", no return type, no parameters; --full-signature and
 * --no-demangle are in test_report_dwarf); --sort symbol, -n and --stdio
 * taken; script -F picks the fields; record keeps an earlier recording as
 * FILE.old (its sidecars too), a blob directory (a store) as it is; a blob
 * recording into a directory whose parent is not there is refused, not
 * made with its whole tree; an inlined static template function (DWARF
 * without a linkage name) keeps its namespace with --inline.
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

/* A static template, inlined: DWARF names it "twice<int>" only. */
static const char st_src[] =
	"namespace app {\n"
	"template <typename T> static inline __attribute__((always_inline))\n"
	"T twice(T x)\n"
	"{\n"
	"\treturn (x * 7) ^ (x >> 3);\n"			/* 5 */
	"}\n"
	"__attribute__((noinline)) int use_twice(int n)\n"
	"{\n"
	"\tint s = 0;\n"
	"\tfor (int i = 0; i < n; i++)\n"
	"\t\ts += twice<int>(i + s);\n"
	"\treturn s;\n"
	"}\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\treturn app::use_twice(argc * 100) & 1;\n"
	"}\n";

/* The first byte of use_twice() that addr2line puts on line 5 (twice). */
static uint64_t twice_addr(const char *exe)
{
	char cmd[1024], line[512];
	unsigned long long a = 0, sz = 0, x;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm -S %s | grep ' _ZN3app9use_twiceEi$'",
		 exe);
	f = popen(cmd, "r");
	REQUIRE(f && fgets(line, sizeof(line), f) &&
		sscanf(line, "%llx %llx", &a, &sz) == 2, "%s", cmd);
	pclose(f);
	for (x = a; x < a + sz; x++) {
		snprintf(cmd, sizeof(cmd), "addr2line -e %s %llx", exe, x);
		f = popen(cmd, "r");
		REQUIRE(f && fgets(line, sizeof(line), f), "%s", cmd);
		pclose(f);
		if (strstr(line, "st.cpp:5"))
			return x;
	}
	return 0;
}

static void check_static_inline(const char *dir)
{
	char src[300], exe[300], log[300], cmd[700];
	struct sym_ctx *c = sym_new();
	struct sym_image *im;
	static struct plog p;
	uint64_t vaddr, bias, start, pc[1];
	char *out;
	int rc;

	snprintf(src, sizeof(src), "%s/st.cpp", dir);
	snprintf(exe, sizeof(exe), "%s/st", dir);
	snprintf(log, sizeof(log), "%s/st.pmclog", dir);
	write_file(src, st_src, strlen(st_src));
	snprintf(cmd, sizeof(cmd), "g++ -g -O2 -o %s %s", exe, src);
	REQUIRE(!system(cmd), "%s", cmd);
	vaddr = twice_addr(exe);
	REQUIRE(vaddr, "no byte of the inlined twice<int>() in %s", exe);
	/* as test_report_dwarf's write_log_rt(): a load bias of 0x5555... */
	REQUIRE(c && (im = sym_image_get(c, exe)), "image");
	REQUIRE(sym_image_bias(im, 0x100000, &bias), "no PF_X segment");
	start = 0x555555000000ull + (0x100000 - bias);
	sym_free(c);
	pc[0] = 0x555555000000ull + vaddr;
	p.len = 0;
	p.ts = 1000;
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 42, "st");
	plog_map_in(&p, 42, start, exe);
	plog_callchain(&p, 42, 42, 0, pc, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);
	out = run_report(&rc, "--folded", "--inline", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "st;app::use_twice;app::twice<int> 1\n"),
	      "inlined static template rc %d:\n%s", rc, out);
	free(out);
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
	snprintf(path, sizeof(path), "%s.ldms", log);	/* record --ldms's */
	write_file(path, "x\n", 2);
	CHECK(out_keep_old(log) == 0 && exists("%s.old", log) &&
	      exists("%s.old.kallsyms", log) && !exists("%s", log) &&
	      !exists("%s.kallsyms", log) && exists("%s.old.ldms", log) &&
	      !exists("%s.ldms", log), "FILE.old");
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

	if (!system("g++ --version >/dev/null 2>&1 && "
		    "addr2line --version >/dev/null 2>&1"))
		check_static_inline(dir);
	else if (getenv("CI"))		/* make deps installs g++ */
		CHECK(0, "no g++ or addr2line in CI");
	else
		printf("# no g++ or addr2line: the inlined static template is "
		       "not tested\n");

	free(t_stderr);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (!t_failed && system(path))
		fprintf(stderr, "could not remove %s\n", dir);
	if (!t_failed)
		printf("test_report_perf: all checks passed\n");
	return t_failed;
}
