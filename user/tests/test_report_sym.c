// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring report` symbolizes a hand-built pmclog file whose
 * PROCEXEC/MAP_IN/CALLCHAIN records point into this very test program (a
 * PIE) and into a hand-made kallsyms file: the right function names, exact
 * folded stacks, [unknown] frames, fork/exec address spaces, the pid, comm,
 * cpu and time filters, the context switch view and the flame graph SVG.
 */
#include <sys/stat.h>
#include "test_report_common.h"
#include "../pmcring/report/sym.h"

/* Three functions of our own, called leaf <- mid <- top. */
static volatile unsigned long sink;

__attribute__((noinline, used)) void t_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline, used)) void t_mid(unsigned long n)
{
	t_leaf(n);
	sink++;
}

__attribute__((noinline, used)) void t_top(unsigned long n)
{
	t_mid(n);
	sink++;
}

#define LEAF	((uint64_t)(uintptr_t)t_leaf + 4)	/* interrupted PC */
#define MID_RA	((uint64_t)(uintptr_t)t_mid + 8)	/* return addresses */
#define TOP_RA	((uint64_t)(uintptr_t)t_top + 8)
#define MID_PC	((uint64_t)(uintptr_t)t_mid + 4)
#define KA	0xffffffff81000020ull			/* in kfunc_a */
#define KB	0xffffffff81000110ull			/* in kfunc_b */

static const char kallsyms[] =
	"ffffffff81000000 T kfunc_a\n"
	"ffffffff81000100 t kfunc_b\n"
	"ffffffff81000180 d some_data\n"
	"ffffffffc0000000 t modfunc\t[mymod]\n";

static void test_sym_lookup(const struct self_map *m)
{
	struct sym_ctx *c = sym_new();
	struct sym_image *im;
	const struct sym_frame *f;
	uint64_t bias = 0;
	const char *name;

	REQUIRE(c, "sym_new");
	im = sym_image_get(c, m->path);
	REQUIRE(im, "sym_image_get");
	CHECK(sym_image_bias(im, m->exec_start, &bias), "no PF_X segment");
	CHECK(bias == m->base, "bias %#" PRIx64 " != base %#" PRIx64, bias,
	      m->base);
	name = sym_image_lookup(im, (uintptr_t)t_mid - bias + 1);
	CHECK(name && !strcmp(name, "t_mid"), "lookup: %s", name ? name : "NULL");

	/* return addresses resolve to the caller; unmapped ones are [unknown] */
	sym_map_in(c, 7, m->exec_start, m->path);
	f = sym_resolve(c, 7, (uintptr_t)t_top + 1, true);
	CHECK(f && !strcmp(f->name, "t_top"), "resolve: %s", f ? f->name : "NULL");
	f = sym_resolve(c, 8, 0x1234, false);
	CHECK(f && !strcmp(f->name, "[unknown] 0x1234") &&
	      f->kind == SYM_KIND_UNKNOWN, "unknown: %s", f ? f->name : "NULL");
	/* frames are interned */
	CHECK(sym_resolve(c, 7, LEAF, false) == sym_resolve(c, 7, LEAF + 1, false),
	      "same function, two frames");
	sym_free(c);
}

/* The profile: see the expected folded stacks below. */
static void build_log(struct plog *p, const struct self_map *m)
{
	uint64_t a[] = { LEAF, MID_RA, TOP_RA };
	uint64_t k[] = { KB, KA, LEAF, MID_RA, TOP_RA };
	uint64_t c[] = { MID_PC, TOP_RA };
	uint64_t u[] = { 0x10 };
	uint64_t lib[] = { 0x7f0000000123ull, TOP_RA };
	uint64_t f[] = { LEAF, TOP_RA };
	uint64_t l[] = { LEAF };
	uint64_t g[] = { LEAF, MID_RA, 0x55, TOP_RA };	/* a broken FP walk */
	int i;

	p->len = 0;
	p->ts = 1000000;
	plog_initialize(p);
	plog_pmc(p, 1, "cpu-clock");
	plog_proc_create(p, 100, "tproc");
	plog_exec(p, 100, m->base, m->path);
	plog_proc_create(p, 100, "tproc");
	plog_map_in(p, 100, m->exec_start, m->path);
	plog_map_in(p, 100, 0x7f0000000000ull, "/nonexistent/libfoo.so");
	plog_thr_create(p, 101, 100, "worker");
	for (i = 0; i < 3; i++)
		plog_callchain(p, 100, 100, 0, a, 3);
	plog_callchain(p, 100, 101, 0, a, 3);		/* the thread */
	plog_callchain(p, 100, 100, 0, k, 5);		/* kernel on top */
	plog_callchain(p, 100, 100, 0, c, 2);
	plog_callchain(p, 100, 100, 0, c, 2);
	plog_callchain(p, 100, 100, 1, u, 1);		/* CPU 1 */
	plog_callchain(p, 100, 100, 0, lib, 2);
	plog_callchain(p, 100, 100, 0, g, 4);
	plog_csw(p, 100, 100, 2000000);
	plog_csw(p, 100, 101, 500000);
	plog_csw(p, 100, 100, 2000000);
	/* pid 200: PROCEXEC alone gives the load address */
	plog_exec(p, 200, m->base, m->path);
	plog_callchain(p, 200, 200, 0, l, 1);
	/* pid 300: a fork of 100 shares its mappings and name */
	plog_fork(p, 100, 300);
	plog_callchain(p, 300, 300, 0, f, 2);
	plog_closelog(p);
}

static void check_folded(const char *log, const char *ksyms, const char *exe)
{
	char want[4096], *out;
	int rc;

	snprintf(want, sizeof(want),
		 "%s;t_leaf 1\n"
		 "tproc;[unknown];t_mid;t_leaf 1\n"
		 "tproc;[unknown] 0x10 1\n"
		 "tproc;t_top;[unknown] libfoo.so+0x123 1\n"
		 "tproc;t_top;t_leaf 1\n"
		 "tproc;t_top;t_mid 2\n"
		 "tproc;t_top;t_mid;t_leaf 4\n"
		 "tproc;t_top;t_mid;t_leaf;kfunc_a;kfunc_b 1\n", exe);
	out = run_report(&rc, "--folded", "--kallsyms", ksyms, log, NULL);
	CHECK(rc == 0, "rc %d", rc);
	CHECK(!strcmp(out, want), "folded:\n%s\nwanted:\n%s", out, want);
	free(out);

	/* filters */
	snprintf(want, sizeof(want), "%s;t_leaf 1\n", exe);
	out = run_report(&rc, "--folded", "--pid", "200", log, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "--pid:\n%s", out);
	free(out);
	out = run_report(&rc, "--folded", "-C", "1", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "tproc;[unknown] 0x10 1\n"), "--cpu:\n%s", out);
	free(out);
	out = run_report(&rc, "--folded", "--comm", "worker", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "tproc;t_top;t_mid;t_leaf 1\n"),
	      "--comm worker:\n%s", out);
	free(out);
	/* records 9, 10, 11 (1000 ns apart from 1000000) are the first samples */
	out = run_report(&rc, "--folded", "--time-from", "1008000", "--time-to",
			 "1010000", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "tproc;t_top;t_mid;t_leaf 3\n"),
	      "--time-from/to:\n%s", out);
	free(out);
	out = run_report(&rc, "--folded", "--time-from", "+8us", "--time-to",
			 "+10000ns", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "tproc;t_top;t_mid;t_leaf 3\n"),
	      "relative time:\n%s", out);
	free(out);
}

static void check_text(const char *log, const char *ksyms)
{
	char *out, *p;
	int rc;

	out = run_report(&rc, "--switches", "--kallsyms", ksyms, log, NULL);
	CHECK(rc == 0, "rc %d", rc);
	p = strstr(out, "Top functions by self samples:");
	CHECK(p, "no top table:\n%s", out);
	/* the first row after the column names is the hottest function */
	if (p) {
		p = strchr(strchr(p, '\n') + 1, '\n') + 1;
		CHECK(!strncmp(p, "   58.33%        7 ", 19) &&
		      strstr(p, "u t_leaf [test_report_sym]") == strstr(p, "u t_leaf"),
		      "first row: %.80s", p);
	}
	CHECK(strstr(out, "Top user functions by self samples:"), "user table");
	CHECK(strstr(out, "k kfunc_b [kernel]"), "kernel frame:\n%s", out);
	CHECK(strstr(out, "# counter 1: cpu-clock"), "counter name");
	CHECK(strstr(out, "worker"), "thread name");
	CHECK(strstr(out, "from the PROCCSW values (ns run before each switch-out)"), "csw source");
	CHECK(strstr(out, "     100      100 tproc                        2"
			  "        4.000       2000.0"),
	      "switch row:\n%s", out);
	free(out);

	out = run_report(&rc, "--pid", "999", log, NULL);
	CHECK(rc == 0 && strstr(out, "No samples match the filters"),
	      "empty:\n%s", out);
	free(out);
}

static void check_svg(const char *log, const char *ksyms, const char *svg)
{
	char *out, buf[1 << 16];
	size_t n;
	FILE *f;
	int rc;

	out = run_report(&rc, "--folded", "--kallsyms", ksyms, "--svg", svg,
			 "--title", "test <&> flame", log, NULL);
	CHECK(rc == 0, "rc %d", rc);
	free(out);
	f = fopen(svg, "r");
	REQUIRE(f, "%s: %s", svg, strerror(errno));
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	CHECK(!strncmp(buf, "<?xml", 5), "not XML");
	CHECK(strstr(buf, "</svg>\n") == buf + n - 7, "no end");
	CHECK(strstr(buf, "test &lt;&amp;&gt; flame"), "title not escaped");
	CHECK(strstr(buf, "data-n=\"t_leaf\""), "no t_leaf frame");
	CHECK(strstr(buf, "data-n=\"kfunc_b\""), "no kernel frame");
	CHECK(strstr(buf, "data-n=\"[unknown] 0x10\""), "no unknown frame");
	CHECK(strstr(buf, "<script"), "no script");
}

/* A recording made where this program lived at another path (a VM). */
static void check_path_map(const char *dir, const struct self_map *m,
			   const char *exe)
{
	char log[512], fake[600], arg[PATH_MAX + 64], symfs[600], *out;
	char link[3 * PATH_MAX];
	uint64_t l[] = { LEAF };
	static struct plog p;
	int rc;

	snprintf(log, sizeof(log), "%s/vm.pmclog", dir);
	snprintf(fake, sizeof(fake), "/vm-only/bin/%s", exe);
	p.len = 0;
	p.ts = 1000;
	plog_initialize(&p);
	plog_proc_create(&p, 500, "vmproc");
	plog_map_in(&p, 500, m->exec_start, fake);
	plog_callchain(&p, 500, 500, 0, l, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strncmp(out, "vmproc;[unknown] ", 17),
	      "no path map:\n%s", out);
	free(out);
	snprintf(arg, sizeof(arg), "/vm-only/bin=%.*s", (int)(exe - 1 - m->path),
		 m->path);
	out = run_report(&rc, "--folded", "--path-map", arg, log, NULL);
	CHECK(rc == 0 && !strcmp(out, "vmproc;t_leaf 1\n"), "--path-map:\n%s", out);
	free(out);

	snprintf(symfs, sizeof(symfs), "%s/symfs", dir);
	snprintf(link, sizeof(link), "mkdir -p '%s/vm-only/bin' && ln -sf '%s' "
		 "'%s/vm-only/bin/%s'", symfs, m->path, symfs, exe);
	REQUIRE(!system(link), "%s", link);
	out = run_report(&rc, "--folded", "--symfs", symfs, log, NULL);
	CHECK(rc == 0 && !strcmp(out, "vmproc;t_leaf 1\n"), "--symfs:\n%s", out);
	free(out);
	/* --comm with a full name finds the kernel's 15-byte comm */
	p.len = 0;
	plog_initialize(&p);
	plog_proc_create(&p, 600, "averyveryverylo");
	plog_callchain(&p, 600, 600, 0, l, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);
	out = run_report(&rc, "--folded", "--comm", "averyveryverylongname", log,
			 NULL);
	CHECK(rc == 0 && !strncmp(out, "averyveryverylo;", 16), "--comm long:\n%s", out);
	free(out);
	out = run_report(&rc, "--folded", "--comm", "averyvery", log, NULL);
	CHECK(rc == 0 && !*out, "--comm prefix matched:\n%s", out);
	free(out);
	out = run_report(&rc, "--path-map", "relative=x", log, NULL);
	CHECK(rc == 2, "relative --path-map accepted");
	free(out);
	snprintf(link, sizeof(link), "rm -rf '%s'", symfs);
	if (system(link))
		fprintf(stderr, "could not remove %s\n", symfs);
	unlink(log);
}

/*
 * A recording may name any path: MAP_IN records naming a FIFO nobody
 * writes, a character device and a directory must not block or break the
 * report; their frames stay unresolved.  alarm() turns a hang into a
 * failure.
 */
static void check_special_files(const char *dir, const struct self_map *m)
{
	char log[512], fifo[512], *out;
	uint64_t l[] = { 0x7e0000000010ull };
	uint64_t d[] = { 0x7d0000000010ull };
	uint64_t r[] = { 0x7c0000000010ull };
	static struct plog p;
	int rc;

	(void)m;
	snprintf(log, sizeof(log), "%s/special.pmclog", dir);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	REQUIRE(!mkfifo(fifo, 0600), "mkfifo: %s", strerror(errno));
	p.len = 0;
	p.ts = 1000;
	plog_initialize(&p);
	plog_proc_create(&p, 700, "special");
	plog_map_in(&p, 700, 0x7e0000000000ull, fifo);
	plog_map_in(&p, 700, 0x7d0000000000ull, "/dev/zero");
	plog_map_in(&p, 700, 0x7c0000000000ull, dir);
	plog_callchain(&p, 700, 700, 0, l, 1);
	plog_callchain(&p, 700, 700, 0, d, 1);
	plog_callchain(&p, 700, 700, 0, r, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);
	alarm(20);
	out = run_report(&rc, "--folded", log, NULL);
	alarm(0);
	CHECK(rc == 0, "report on special files: rc %d", rc);
	/* unresolved, each named by its mapping as any unreadable file */
	CHECK(strstr(out, "special;[unknown] fifo+0x10 1\n"),
	      "FIFO frame:\n%s", out);
	CHECK(strstr(out, "special;[unknown] zero+0x10 1\n"),
	      "device frame:\n%s", out);
	CHECK(strstr(out, strrchr(dir, '/') + 1) &&
	      strstr(out, "+0x10 1\n"), "directory frame:\n%s", out);
	free(out);
	unlink(fifo);
	unlink(log);
}

int main(void)
{
	char dir[] = "/tmp/test_report_symXXXXXX", log[256], ks[256], svg[256];
	static struct plog p;
	struct self_map m;
	const char *exe;

	t_top(10);		/* keep the functions alive and honest */
	self_map(&m);
	exe = strrchr(m.path, '/') + 1;
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/prof.pmclog", dir);
	snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
	snprintf(svg, sizeof(svg), "%s/flame.svg", dir);
	write_file(ks, kallsyms, strlen(kallsyms));
	build_log(&p, &m);
	write_file(log, p.b, p.len);

	test_sym_lookup(&m);
	check_folded(log, ks, exe);
	check_text(log, ks);
	check_svg(log, ks, svg);
	check_path_map(dir, &m, exe);
	check_special_files(dir, &m);

	/* PATH.kallsyms next to the recording is picked up by default */
	snprintf(ks, sizeof(ks), "%s/prof.pmclog.kallsyms", dir);
	write_file(ks, kallsyms, strlen(kallsyms));
	{
		int rc;
		char *out = run_report(&rc, "--folded", log, NULL);

		CHECK(strstr(out, ";kfunc_a;kfunc_b 1\n"), "default kallsyms:\n%s", out);
		free(out);
	}
	if (getenv("TEST_REPORT_KEEP")) {	/* for a look at the files */
		fprintf(stderr, "kept %s\n", dir);
		return t_failed;
	}
	unlink(ks);
	snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
	unlink(ks);
	unlink(log);
	unlink(svg);
	rmdir(dir);
	if (!t_failed)
		printf("ok: report symbolization\n");
	return t_failed;
}
