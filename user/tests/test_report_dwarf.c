// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the symbolizer on a C++ program compiled here (g++ -g, a
 * namespace, a member function, an always-inline function, a Rust-style
 * legacy name): demangled names, file:line of every byte of a function
 * against binutils' addr2line (g++'s and clang++'s DWARF, the latter
 * without .debug_aranges), `report --sort srcline` and --folded, the
 * inlined function as a frame with --inline (report and script); its
 * stripped copy symbolized through .gnu_debuglink and through
 * /usr/lib/debug/.build-id/ (under --symfs); a debug file of another
 * build, by either route, never used and warned about; a program
 * changed after the recording mapped it, warned about; and Debian's
 * -dbgsym layout, DWARF that dwz moved to /usr/lib/debug/.dwz/ (lines
 * through it, none and a warning without it or with another build's);
 * the build ids kept beside a recording (FILE.buildids).
 */
#include <sys/stat.h>
#include <time.h>
#include "test_report_common.h"
#include "../pmcring/report/buildid.h"
#include "../pmcring/report/sym.h"

/* The program; the line numbers below are its own. */
static const char cxx_src[] =
	"namespace pmcr {\n"					/* 1 */
	"inline __attribute__((always_inline)) int sq(int x)\n"	/* 2 */
	"{\n"							/* 3 */
	"\treturn x * x + 3;\n"					/* 4 */
	"}\n"							/* 5 */
	"struct Widget {\n"					/* 6 */
	"\t__attribute__((noinline)) int spin(int n);\n"	/* 7 */
	"};\n"							/* 8 */
	"int Widget::spin(int n)\n"				/* 9 */
	"{\n"							/* 10 */
	"\tint s = 0;\n"					/* 11 */
	"\tfor (int i = 0; i < n; i++)\n"			/* 12 */
	"\t\ts += sq(i) ^ (s >> 3);\n"				/* 13 */
	"\treturn s;\n"						/* 14 */
	"}\n"							/* 15 */
	"}\n"							/* 16 */
	"extern \"C\" __attribute__((noinline)) int rs(int n)\n"/* 17 */
	"\t__asm__(\"_ZN4core3fmt5write17h0123456789abcdefE\");\n"
	"int rs(int n)\n"
	"{\n"
	"\treturn n * OTHER;\n"
	"}\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\tpmcr::Widget w;\n"
	"\t(void)argv;\n"
	"\treturn (w.spin(argc * 100) + rs(argc)) & 1;\n"
	"}\n";

#define SPIN_MANGLED	"_ZN4pmcr6Widget4spinEi"
#define SPIN		"pmcr::Widget::spin(int)"
/* report's and script's names: perf's short form */
#define SPIN_SHORT	"pmcr::Widget::spin"

static char dir[] = "/tmp/test_report_dwarfXXXXXX";
/* A byte of spin() that is sq()'s code, inlined (addr2line: line 4). */
static uint64_t sq_addr;

static void sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	REQUIRE(!system(cmd), "%s", cmd);
}

/* One line of a command's output (trailing newline cut), or "". */
static void sh_line(char *buf, size_t sz, const char *cmd)
{
	FILE *f = popen(cmd, "r");

	buf[0] = 0;
	REQUIRE(f, "%s", cmd);
	if (!fgets(buf, (int)sz, f))
		buf[0] = 0;
	buf[strcspn(buf, "\n")] = 0;
	pclose(f);
}

/* Value and size of symbol @name of @exe (nm, an oracle of its own). */
static void nm_sym(const char *exe, const char *name, uint64_t *addr,
		   uint64_t *size)
{
	char cmd[4096], line[512];
	unsigned long long a = 0, s = 0;

	snprintf(cmd, sizeof(cmd), "nm -S %s | grep ' %s$'", exe, name);
	sh_line(line, sizeof(line), cmd);
	REQUIRE(sscanf(line, "%llx %llx", &a, &s) == 2, "%s: '%s'", cmd, line);
	*addr = a;
	*size = s;
}

static void build_id(const char *exe, char *hex, size_t sz)
{
	char cmd[4096];

	snprintf(cmd, sizeof(cmd), "readelf -n %s | sed -n "
		 "'s/.*Build ID: *\\([0-9a-f]*\\).*/\\1/p'", exe);
	sh_line(hex, sz, cmd);
	REQUIRE(strlen(hex) > 2, "no build id in %s", exe);
}

/*
 * Names and lines of the unstripped program: every byte of spin() gets the
 * line addr2line gives (the inlined sq()'s own line 4 among them).
 */
static void check_names_lines(const char *exe)
{
	char cmd[4096], want[512], in[600], got[512];
	struct sym_ctx *c = sym_new();
	struct sym_image *im;
	uint64_t spin, size, rs, rsz, a;
	unsigned int in_sq = 0, in_spin = 0, lines = 0;
	const char *name, *file;
	FILE *f, *out;
	int line;

	REQUIRE(c, "sym_new");
	nm_sym(exe, SPIN_MANGLED, &spin, &size);
	nm_sym(exe, "_ZN4core3fmt5write17h0123456789abcdefE", &rs, &rsz);
	im = sym_image_get(c, exe);
	REQUIRE(im, "sym_image_get");
	name = sym_image_lookup(im, spin + 1);
	CHECK(name && !strcmp(name, SPIN), "demangled: %s", name ? name : "NULL");
	name = sym_image_lookup(im, rs);
	CHECK(name && !strcmp(name, "core::fmt::write"), "Rust legacy: %s",
	      name ? name : "NULL");
	CHECK(!sym_image_debug_file(im), "no debug file needed");

	snprintf(in, sizeof(in), "%s/addrs", dir);
	f = fopen(in, "w");
	REQUIRE(f, "%s", in);
	for (a = spin; a < spin + size; a++)
		fprintf(f, "%" PRIx64 "\n", a);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "addr2line -e %s < %s", exe, in);
	out = popen(cmd, "r");
	REQUIRE(out, "%s", cmd);
	for (a = spin; a < spin + size && fgets(want, sizeof(want), out); a++) {
		want[strcspn(want, "\n")] = 0;
		/* addr2line: "/dir/t.cpp:13" or "... (discriminator 1)" */
		want[strcspn(want, " ")] = 0;
		/* line 0 (clang's compiler-made code): "t.cpp:?", no line */
		if (strlen(want) > 2 && !strcmp(want + strlen(want) - 2, ":?"))
			snprintf(want, sizeof(want), "??:0");
		if (sym_image_srcline(im, a, &file, &line))
			snprintf(got, sizeof(got), "%s:%d", file, line);
		else
			snprintf(got, sizeof(got), "??:0");
		CHECK(!strcmp(got, want), "%#" PRIx64 ": %s, addr2line %s", a,
		      got, want);
		lines++;
		if (file && line == 4 && !in_sq && strstr(want, ":4"))
			sq_addr = a;
		in_sq += file && line == 4;
		in_spin += file && line >= 9 && line <= 15;
	}
	pclose(out);
	unlink(in);
	CHECK(lines == size, "addr2line gave %u lines for %" PRIu64, lines, size);
	CHECK(in_sq && in_spin, "inlined sq() %u bytes, spin() %u bytes", in_sq,
	      in_spin);
	CHECK(!sym_nr_warnings(c), "warning: %s", sym_warning(c, 0));
	sym_free(c);
}

/* A recording of one process running @exe, every sample in spin(). */
static void write_log_rt(const char *log, const char *exe, uint64_t vaddr,
			 uint64_t *start, uint64_t rt_sec)
{
	struct sym_ctx *c = sym_new();
	struct sym_image *im;
	static struct plog p;
	uint64_t bias, pc[2];

	/* where the executable mapping starts for a load bias of 0x5555... */
	REQUIRE(c && (im = sym_image_get(c, exe)), "image");
	REQUIRE(sym_image_bias(im, 0x100000, &bias), "no PF_X segment");
	*start = 0x555555000000ull + (0x100000 - bias);
	sym_free(c);
	pc[0] = 0x555555000000ull + vaddr;	/* the interrupted PC */
	pc[1] = 0;
	p.len = 0;
	p.ts = 1000;
	plog_initialize(&p);
	/* INITIALIZE's wall clock (record offset 32), 0: not known */
	memcpy(p.b + 32, &rt_sec, 8);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 42, "cxx");
	plog_map_in(&p, 42, *start, exe);
	plog_callchain(&p, 42, 42, 0, pc, 1);
	plog_callchain(&p, 42, 42, 0, pc, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);
}

static void write_log(const char *log, const char *exe, uint64_t spin,
		      uint64_t *start)
{
	write_log_rt(log, exe, spin + 2, start, 0);
}

/*
 * --inline: a sample in sq()'s inlined code has sq() as its leaf frame,
 * at sq()'s own line, and spin() at the line of the call.
 */
static void check_inline(const char *exe)
{
	char log[512];
	uint64_t start;
	char *out;
	int rc;

	REQUIRE(sq_addr, "no byte of inlined sq() found");
	snprintf(log, sizeof(log), "%s/inline.pmclog", dir);
	write_log_rt(log, exe, sq_addr, &start, 0);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && strstr(out, "cxx;" SPIN_SHORT " 2\n"), "no --inline:\n%s",
	      out);
	free(out);
	out = run_report(&rc, "--folded", "--inline", log, NULL);
	CHECK(rc == 0 && strstr(out, "cxx;" SPIN_SHORT ";pmcr::sq 2\n"),
	      "--inline folded:\n%s", out);
	free(out);
	out = run_report(&rc, "--inline", "--sort", "sym,srcline",
			 "--no-children", log, NULL);
	CHECK(rc == 0 && strstr(out, "[.] pmcr::sq  t.cpp:4\n"),
	      "--inline srcline:\n%s", out);
	free(out);
	out = run_report(&rc, "--inline", "--sort", "sym,srcline", log, NULL);
	CHECK(rc == 0 && strstr(out, "[.] " SPIN_SHORT "  t.cpp:13\n"),
	      "--inline srcline of the call site:\n%s", out);
	free(out);
	out = run_script(&rc, "--inline", log, NULL);
	CHECK(rc == 0 && strstr(out, " pmcr::sq (inlined)\n") &&
	      strstr(out, " " SPIN_SHORT "+0x"), "script --inline:\n%s", out);
	free(out);
	unlink(log);
}

/*
 * A recording made before the program was (re)built: the report cannot
 * know which build ran, and says so; one made after it: no warning.
 */
static void check_age(const char *exe, uint64_t spin)
{
	char log[512];
	uint64_t start;
	char *out;
	int rc;

	snprintf(log, sizeof(log), "%s/age.pmclog", dir);
	write_log_rt(log, exe, spin + 2, &start, (uint64_t)time(NULL) - 3600);
	out = run_report(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, "# WARNING: ") &&
	      strstr(out, "after the recording mapped it") && strstr(out, exe),
	      "recorded an hour before the build:\n%s", out);
	free(out);
	write_log_rt(log, exe, spin + 2, &start, (uint64_t)time(NULL) + 60);
	out = run_report(&rc, log, NULL);
	CHECK(rc == 0 && !strstr(out, "WARNING"),
	      "recorded after the build:\n%s", out);
	free(out);
	unlink(log);
}

static void check_report(const char *exe, uint64_t spin)
{
	char log[512], want[600], line[512], cmd[4096];
	uint64_t start;
	char *out;
	int rc;

	snprintf(log, sizeof(log), "%s/cxx.pmclog", dir);
	write_log(log, exe, spin, &start);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && strstr(out, "cxx;" SPIN_SHORT " 2\n"), "folded:\n%s", out);
	free(out);
	out = run_report(&rc, "--folded", "--full-signature", log, NULL);
	CHECK(rc == 0 && strstr(out, "cxx;" SPIN " 2\n"),
	      "--full-signature:\n%s", out);
	free(out);
	out = run_report(&rc, "--folded", "--no-demangle", log, NULL);
	CHECK(rc == 0 && strstr(out, "cxx;" SPIN_MANGLED " 2\n"),
	      "--no-demangle:\n%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "addr2line -e %s %" PRIx64 " | sed "
		 "'s,.*/,,; s, .*,,'", exe, spin + 2);
	sh_line(line, sizeof(line), cmd);
	snprintf(want, sizeof(want), "%s\n", line);
	out = run_report(&rc, "--sort", "srcline", log, NULL);
	CHECK(rc == 0 && strstr(out, want) && !strstr(out, "??"),
	      "--sort srcline, want %s:\n%s", line, out);
	free(out);
	unlink(log);
}

/*
 * A stripped copy whose debug file is found through .gnu_debuglink, then
 * the same name holding the debug file of another build.
 */
static void check_debuglink(const char *exe, const char *other_dbg,
			    uint64_t spin)
{
	char s[512], dbg[512], log[512];
	struct sym_ctx *c;
	struct sym_image *im;
	const char *name, *file;
	uint64_t start;
	char *out;
	int line, rc;

	snprintf(s, sizeof(s), "%s/stripped", dir);
	snprintf(dbg, sizeof(dbg), "%s/stripped.debug", dir);
	sh("objcopy --only-keep-debug %s %s && strip --strip-all -o %s %s && "
	   "objcopy --add-gnu-debuglink=%s %s", exe, dbg, s, exe, dbg, s);

	c = sym_new();
	REQUIRE(c && (im = sym_image_get(c, s)), "image");
	name = sym_image_lookup(im, spin + 1);
	CHECK(name && !strcmp(name, SPIN), "via debuglink: %s",
	      name ? name : "NULL");
	CHECK(sym_image_debug_file(im) &&
	      !strcmp(sym_image_debug_file(im), dbg), "debug file %s",
	      sym_image_debug_file(im) ? sym_image_debug_file(im) : "NULL");
	CHECK(sym_image_srcline(im, spin + 1, &file, &line) &&
	      strstr(file, "t.cpp") && line >= 9 && line <= 15,
	      "srcline via debuglink: %s:%d", file ? file : "NULL", line);
	CHECK(!sym_nr_warnings(c), "warning: %s", sym_warning(c, 0));
	sym_free(c);

	/* the program rebuilt, its old debug file left behind */
	sh("cp %s %s", other_dbg, dbg);
	c = sym_new();
	REQUIRE(c && (im = sym_image_get(c, s)), "image");
	name = sym_image_lookup(im, spin + 1);
	CHECK(!name, "symbol from a mismatched debug file: %s", name);
	CHECK(!sym_image_debug_file(im), "mismatched debug file used");
	CHECK(!sym_image_srcline(im, spin + 1, &file, &line),
	      "line from a mismatched debug file: %s:%d", file, line);
	CHECK(sym_nr_warnings(c) == 1 && strstr(sym_warning(c, 0), dbg) &&
	      strstr(sym_warning(c, 0), "another build"),
	      "%zu warnings: %s", sym_nr_warnings(c),
	      sym_nr_warnings(c) ? sym_warning(c, 0) : "none");
	sym_free(c);

	/* the report says so, and the frame stays [unknown] */
	snprintf(log, sizeof(log), "%s/stripped.pmclog", dir);
	write_log(log, s, spin, &start);
	out = run_report(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, "# WARNING: ") &&
	      strstr(out, "another build") && !strstr(out, SPIN_SHORT) &&
	      strstr(out, "[unknown] stripped+0x"), "report:\n%s", out);
	free(out);
	unlink(log);
	unlink(dbg);
	unlink(s);
}

/* The same by build id, under --symfs DIR/usr/lib/debug/.build-id/. */
static void check_build_id_dir(const char *exe, const char *other_dbg,
			       uint64_t spin)
{
	char s[512], fs[512], hex[160], bdir[1024], dbg[2048];
	struct sym_ctx *c;
	struct sym_image *im;
	const char *name;

	snprintf(s, sizeof(s), "%s/bare", dir);
	snprintf(fs, sizeof(fs), "%s/symfs", dir);
	sh("strip --strip-all -o %s %s", s, exe);
	build_id(s, hex, sizeof(hex));
	snprintf(bdir, sizeof(bdir), "%s/usr/lib/debug/.build-id/%.2s", fs, hex);
	snprintf(dbg, sizeof(dbg), "%s/%s.debug", bdir, hex + 2);
	sh("mkdir -p %s && objcopy --only-keep-debug %s %s", bdir, exe, dbg);

	c = sym_new();
	REQUIRE(c && !sym_set_symfs(c, fs) && (im = sym_image_get(c, s)),
		"image");
	name = sym_image_lookup(im, spin + 1);
	CHECK(name && !strcmp(name, SPIN), "via build id: %s",
	      name ? name : "NULL");
	CHECK(sym_image_debug_file(im) &&
	      !strcmp(sym_image_debug_file(im), dbg), "debug file %s",
	      sym_image_debug_file(im) ? sym_image_debug_file(im) : "NULL");
	sym_free(c);

	/* a wrong file under the right name */
	sh("cp %s %s", other_dbg, dbg);
	c = sym_new();
	REQUIRE(c && !sym_set_symfs(c, fs) && (im = sym_image_get(c, s)),
		"image");
	name = sym_image_lookup(im, spin + 1);
	CHECK(!name, "symbol from a mismatched debug file: %s", name);
	CHECK(sym_nr_warnings(c) == 1 && strstr(sym_warning(c, 0), dbg) &&
	      strstr(sym_warning(c, 0), hex),
	      "%zu warnings: %s", sym_nr_warnings(c),
	      sym_nr_warnings(c) ? sym_warning(c, 0) : "none");
	sym_free(c);
	sh("rm -rf %s %s", fs, s);
}

/* Every byte of spin() in @im has the line addr2line gives in @orig. */
static void check_lines_as(struct sym_image *im, const char *orig,
			   uint64_t spin, uint64_t size)
{
	char cmd[4096], in[600], want[512], got[512];
	unsigned int same = 0;
	const char *file;
	FILE *f, *out;
	uint64_t a;
	int line;

	snprintf(in, sizeof(in), "%s/addrs", dir);
	f = fopen(in, "w");
	REQUIRE(f, "%s", in);
	for (a = spin; a < spin + size; a++)
		fprintf(f, "%" PRIx64 "\n", a);
	fclose(f);
	snprintf(cmd, sizeof(cmd), "addr2line -e %s < %s", orig, in);
	out = popen(cmd, "r");
	REQUIRE(out, "%s", cmd);
	for (a = spin; a < spin + size && fgets(want, sizeof(want), out); a++) {
		want[strcspn(want, "\n")] = 0;
		want[strcspn(want, " ")] = 0;
		if (sym_image_srcline(im, a, &file, &line))
			snprintf(got, sizeof(got), "%s:%d", file, line);
		else
			snprintf(got, sizeof(got), "??:0");
		CHECK(!strcmp(got, want), "%#" PRIx64 ": %s, addr2line %s", a,
		      got, want);
		same += !strcmp(got, want);
	}
	pclose(out);
	unlink(in);
	CHECK(same == size, "%u of %" PRIu64 " lines as addr2line's", same,
	      size);
}

/*
 * Debian's -dbgsym layout: dwz run on two programs (moving their common
 * DWARF into /usr/lib/debug/.dwz/NAME, named by .gnu_debugaltlink), then
 * the debug files split off under .build-id/, all under --symfs.  The
 * lines come through the dwz file; without it, or with a dwz file of
 * another build, there are symbols, no lines, and a warning.
 */
static void check_dwz(const char *exe, const char *other, uint64_t spin,
		      uint64_t size)
{
	static const char alt_name[] = "/usr/lib/debug/.dwz/pmcring-test.debug";
	static const char osrc[] = "struct Other { int x; double y; };\n"
				   "Other o;\nint main() { return o.x; }\n";
	char fs[512], d1[512], d2[512], bare[512], hex[160], dbg[2048];
	char alt[1024], src2[512], line[512], want[600], cmd[4096], log[512];
	struct sym_ctx *c;
	struct sym_image *im;
	const char *name, *file;
	uint64_t start;
	char *out;
	int ln, rc;

	snprintf(fs, sizeof(fs), "%s/dwzfs", dir);
	snprintf(d1, sizeof(d1), "%s/dwz1", dir);
	snprintf(d2, sizeof(d2), "%s/dwz2", dir);
	snprintf(bare, sizeof(bare), "%s/dwzbare", dir);
	snprintf(alt, sizeof(alt), "%s%s", fs, alt_name);
	sh("mkdir -p %s/usr/lib/debug/.dwz && cp %s %s && cp %s %s && "
	   "dwz -m %s -M %s %s %s", fs, exe, d1, other, d2, alt, alt_name, d1,
	   d2);
	build_id(d1, hex, sizeof(hex));
	snprintf(dbg, sizeof(dbg), "%s/usr/lib/debug/.build-id/%.2s/%s.debug",
		 fs, hex, hex + 2);
	sh("mkdir -p $(dirname %s) && objcopy --only-keep-debug %s %s && "
	   "strip --strip-all -o %s %s", dbg, d1, dbg, bare, d1);
	/* dwz did move DWARF out, which addr2line cannot follow here */
	sh("readelf -S %s 2>/dev/null | grep -q gnu_debugaltlink", dbg);

	c = sym_new();
	REQUIRE(c && !sym_set_symfs(c, fs) && (im = sym_image_get(c, bare)),
		"image");
	name = sym_image_lookup(im, spin + 1);
	CHECK(name && !strcmp(name, SPIN), "dwz: %s", name ? name : "NULL");
	check_lines_as(im, exe, spin, size);
	CHECK(!sym_nr_warnings(c), "warning: %s", sym_warning(c, 0));
	sym_free(c);

	/* the report, as Debian's packages would be read */
	snprintf(log, sizeof(log), "%s/dwz.pmclog", dir);
	write_log(log, bare, spin, &start);
	snprintf(cmd, sizeof(cmd), "addr2line -e %s %" PRIx64 " | sed "
		 "'s,.*/,,; s, .*,,'", exe, spin + 2);
	sh_line(line, sizeof(line), cmd);
	snprintf(want, sizeof(want), "%s\n", line);
	out = run_report(&rc, "--symfs", fs, "--sort", "srcline", log, NULL);
	CHECK(rc == 0 && strstr(out, want) && !strstr(out, "??") &&
	      !strstr(out, "WARNING"), "dwz --sort srcline, want %s:\n%s",
	      line, out);
	printf("# dwz: --sort srcline gives %s through %s\n", line, alt_name);
	free(out);

	/* no dwz file: symbols, no lines, a warning naming it */
	sh("mv %s %s.away", alt, alt);
	c = sym_new();
	REQUIRE(c && !sym_set_symfs(c, fs) && (im = sym_image_get(c, bare)),
		"image");
	name = sym_image_lookup(im, spin + 1);
	CHECK(name && !strcmp(name, SPIN), "dwz missing: %s",
	      name ? name : "NULL");
	CHECK(!sym_image_srcline(im, spin + 1, &file, &ln),
	      "a line without the dwz file: %s:%d", file, ln);
	CHECK(sym_nr_warnings(c) == 1 && strstr(sym_warning(c, 0), alt_name) &&
	      strstr(sym_warning(c, 0), "not found"), "%zu warnings: %s",
	      sym_nr_warnings(c), sym_nr_warnings(c) ? sym_warning(c, 0) : "");
	sym_free(c);

	/* a dwz file of other programs under the same name */
	snprintf(src2, sizeof(src2), "%s/o.cpp", dir);
	write_file(src2, osrc, strlen(osrc));
	sh("g++ -g -o %s/o1 %s && cp %s/o1 %s/o2 && dwz -m %s -M %s %s/o1 "
	   "%s/o2", dir, src2, dir, dir, alt, alt_name, dir, dir);
	c = sym_new();
	REQUIRE(c && !sym_set_symfs(c, fs) && (im = sym_image_get(c, bare)),
		"image");
	CHECK(!sym_image_srcline(im, spin + 1, &file, &ln),
	      "a line through another build's dwz file: %s:%d", file, ln);
	CHECK(sym_nr_warnings(c) == 1 && strstr(sym_warning(c, 0), alt) &&
	      strstr(sym_warning(c, 0), "another build"), "%zu warnings: %s",
	      sym_nr_warnings(c), sym_nr_warnings(c) ? sym_warning(c, 0) : "");
	sym_free(c);
	out = run_report(&rc, "--symfs", fs, "--sort", "srcline", log, NULL);
	CHECK(rc == 0 && strstr(out, "# WARNING: ") &&
	      strstr(out, "a dwz file of another build") && strstr(out, "??"),
	      "report with another build's dwz file:\n%s", out);
	free(out);
	unlink(log);
	if (getenv("TEST_REPORT_KEEP"))
		return;
	sh("rm -rf %s %s %s %s %s/o1 %s/o2 %s", fs, d1, d2, bare, dir, dir,
	   src2);
}

/*
 * The build ids a recording keeps beside it (FILE.buildids, written as
 * `pmcring record` does at its end): the recorded build gets its symbols
 * without the age warning its mtime would give; the program rebuilt since
 * gets none, and a warning; a list of another recording is not used.
 */
static void check_build_ids(const char *exe, const char *other,
			    uint64_t spin)
{
	char prog[512], log[512], side[600], hex[160], want[2048], got[2048];
	uint64_t start, rt = (uint64_t)time(NULL) - 3600;
	unsigned int n = 0;
	ssize_t len;
	char *out;
	int rc, fd;

	snprintf(prog, sizeof(prog), "%s/bidprog", dir);
	snprintf(log, sizeof(log), "%s/bid.pmclog", dir);
	snprintf(side, sizeof(side), "%s.buildids", log);
	sh("cp %s %s", exe, prog);
	/* recorded "an hour before" the copy's mtime, but of this build */
	write_log_rt(log, prog, spin + 2, &start, rt);
	CHECK(!buildid_sidecar_write(log, &n) && n == 1, "%u entries", n);
	build_id(prog, hex, sizeof(hex));
	snprintf(want, sizeof(want), "pmcring-buildids 1 %" PRIu64 "000000000\n"
		 "%s %s\n", rt, hex, prog);
	fd = open(side, O_RDONLY);
	REQUIRE(fd >= 0, "%s: %s", side, strerror(errno));
	len = read(fd, got, sizeof(got) - 1);
	close(fd);
	got[len > 0 ? len : 0] = 0;
	CHECK(!strcmp(got, want), "%s:\n%s, not\n%s", side, got, want);
	out = run_report(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, SPIN_SHORT) && !strstr(out, "WARNING"),
	      "recorded build:\n%s", out);
	free(out);

	/* rebuilt since the recording: same names, another build */
	sh("cp %s %s", other, prog);
	out = run_report(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, "# WARNING: ") &&
	      strstr(out, "rebuilt since the recording") && strstr(out, hex) &&
	      !strstr(out, SPIN_SHORT) && strstr(out, "[unknown] bidprog+0x"),
	      "rebuilt program:\n%s", out);
	free(out);
	out = run_script(&rc, log, NULL);
	CHECK(rc == 0 && !strstr(out, SPIN_SHORT), "script, rebuilt:\n%s", out);
	free(out);

	/* a new recording of that name, the old list left beside it */
	write_log_rt(log, prog, spin + 2, &start, rt + 7200);
	out = run_report(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, "build ids of a recording started at") &&
	      strstr(out, SPIN_SHORT), "another recording's list:\n%s", out);
	free(out);

	/* not a list: not used, the report goes on */
	write_file(side, "pmcring-buildids 1 x\n", 21);
	out = run_report(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, SPIN_SHORT), "malformed list:\n%s", out);
	free(out);
	buildid_sidecar_remove(log);
	CHECK(access(side, F_OK), "%s not removed", side);
	unlink(log);
	unlink(prog);
}

int main(void)
{
	char src[512], exe[512], other[512], other_dbg[512], clang_exe[512];
	uint64_t spin, size;

	if (system("g++ --version >/dev/null 2>&1") ||
	    system("objcopy --version >/dev/null 2>&1 && "
		   "addr2line --version >/dev/null 2>&1")) {
		printf("no g++ or binutils to build the C++ test program\n");
		return 4;
	}
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(src, sizeof(src), "%s/t.cpp", dir);
	snprintf(exe, sizeof(exe), "%s/cxx", dir);
	snprintf(other, sizeof(other), "%s/other", dir);
	snprintf(other_dbg, sizeof(other_dbg), "%s/other.debug", dir);
	write_file(src, cxx_src, strlen(cxx_src));
	/* two builds of one source: the same symbols, other build ids */
	sh("g++ -g -O2 -DOTHER=3 -o %s %s", exe, src);
	sh("g++ -g -O2 -DOTHER=5 -o %s %s && objcopy --only-keep-debug %s %s",
	   other, src, other, other_dbg);
	nm_sym(exe, SPIN_MANGLED, &spin, &size);

	/* clang writes no .debug_aranges: libdw 0.188 needs a fallback */
	snprintf(clang_exe, sizeof(clang_exe), "%s/cxx-clang", dir);
	if (!system("clang++ --version >/dev/null 2>&1")) {
		sh("clang++ -g -O2 -DOTHER=3 -o %s %s", clang_exe, src);
		sh("! readelf -S %s | grep -q debug_aranges", clang_exe);
		check_names_lines(clang_exe);
	} else {
		printf("# no clang++: DWARF without .debug_aranges not tested\n");
	}
	sq_addr = 0;
	check_names_lines(exe);		/* sq_addr: of the g++ build */
	check_report(exe, spin);
	check_age(exe, spin);
	check_inline(exe);
	check_debuglink(exe, other_dbg, spin);
	check_build_id_dir(exe, other_dbg, spin);
	check_build_ids(exe, other, spin);
	if (!system("dwz --version >/dev/null 2>&1"))
		check_dwz(exe, other, spin, size);
	else if (getenv("CI"))		/* make deps installs it */
		CHECK(0, "no dwz in CI: make deps must install it");
	else
		printf("# no dwz (make deps installs it): dwz files not "
		       "tested\n");

	if (getenv("TEST_REPORT_KEEP")) {
		fprintf(stderr, "kept %s\n", dir);
		return t_failed;
	}
	sh("rm -rf %s", dir);
	if (!t_failed)
		printf("ok: C++ names, source lines, debug files\n");
	return t_failed;
}
