// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the flame graph of `pmcring report --svg` renders in headless
 * Chromium as a readable picture with the expected frames, and its inline
 * script works (search, zoom): a profile of this program's own functions is
 * written as a pmclog file, reported to an SVG, and checked by
 * tests/flame_screenshot.sh (skipped when chromium is not installed, a
 * failure in CI).
 * The screenshots stay in $FLAME_OUT (default ../build/user/tests/flame).
 */
#include <sys/wait.h>

#include "test_report_common.h"

static volatile unsigned long sink;

#define FN(name, body) \
	__attribute__((noinline, used)) void name(unsigned long n) \
	{ unsigned long i; for (i = 0; i < n; i++) { body; } sink++; }

FN(burn_cpu, sink += i * i)
FN(hash_block, burn_cpu(n); sink ^= i)
FN(parse_record, hash_block(n); sink += 3)
FN(write_output, sink += 7)
FN(main_loop, parse_record(n); write_output(n))
FN(worker_thread, hash_block(n))

#define PC(f, off)	((uint64_t)(uintptr_t)(f) + (off))

static const char kallsyms[] =
	"ffffffff81000000 T asm_sysvec_apic_timer_interrupt\n"
	"ffffffff81000100 T sysvec_apic_timer_interrupt\n"
	"ffffffff81000200 T __x64_sys_write\n"
	"ffffffff81000300 T ksys_write\n"
	"ffffffff81000400 T vfs_write\n"
	"ffffffff81000500 T entry_SYSCALL_64_after_hwframe\n";

#define K(i)	(0xffffffff81000010ull + 0x100 * (i))

static void build(struct plog *p, const char *exe, uint64_t base,
		  uint64_t exec_start)
{
	uint64_t burn[] = { PC(burn_cpu, 6), PC(hash_block, 9),
			    PC(parse_record, 9), PC(main_loop, 9) };
	uint64_t hash[] = { PC(hash_block, 5), PC(parse_record, 9),
			    PC(main_loop, 9) };
	uint64_t irq[] = { K(1), K(0), PC(burn_cpu, 6), PC(hash_block, 9),
			   PC(parse_record, 9), PC(main_loop, 9) };
	uint64_t wr[] = { K(4), K(3), K(2), K(5), PC(write_output, 5),
			  PC(main_loop, 9) };
	uint64_t thr[] = { PC(burn_cpu, 6), PC(hash_block, 9),
			   PC(worker_thread, 9) };
	uint64_t other[] = { PC(burn_cpu, 6), PC(main_loop, 9) };
	int i;

	p->ts = 5000000;
	plog_initialize(p);
	plog_pmc(p, 1, "cpu-clock");
	plog_exec(p, 42, base, exe);
	plog_proc_create(p, 42, "flamebench");
	plog_map_in(p, 42, exec_start, exe);
	plog_thr_create(p, 43, 42, "worker");
	plog_exec(p, 77, base, exe);
	plog_proc_create(p, 77, "helper");
	plog_map_in(p, 77, exec_start, exe);
	for (i = 0; i < 60; i++)
		plog_callchain(p, 42, 42, i % 2, burn, 4);
	for (i = 0; i < 15; i++)
		plog_callchain(p, 42, 42, 0, hash, 3);
	for (i = 0; i < 8; i++)
		plog_callchain(p, 42, 42, 1, irq, 6);
	for (i = 0; i < 12; i++)
		plog_callchain(p, 42, 42, 0, wr, 6);
	for (i = 0; i < 25; i++)
		plog_callchain(p, 42, 43, 1, thr, 3);
	for (i = 0; i < 10; i++)
		plog_callchain(p, 77, 77, 0, other, 2);
	plog_closelog(p);
}

int main(void)
{
	char dir[] = "/tmp/test_report_flameXXXXXX", log[256], ks[256];
	char svg[256], cmd[2048], *out;
	const char *outdir = getenv("FLAME_OUT");
	static struct plog p;
	struct self_map m;
	int rc, st;

	main_loop(3);
	worker_thread(3);
	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/flame.pmclog", dir);
	snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
	snprintf(svg, sizeof(svg), "%s/flame.svg", dir);
	write_file(ks, kallsyms, strlen(kallsyms));
	build(&p, m.path, m.base, m.exec_start);
	write_file(log, p.b, p.len);

	out = run_report(&rc, "--kallsyms", ks, "--svg", svg, "--title",
			 "pmcring report: flame graph test", log, NULL);
	CHECK(rc == 0, "report rc %d:\n%s", rc, out);
	CHECK(strstr(out, "u burn_cpu ["), "burn_cpu not in the report:\n%s", out);
	free(out);

	if (!outdir)
		outdir = "../build/user/tests/flame";
	snprintf(cmd, sizeof(cmd), "sh tests/flame_screenshot.sh '%s' '%s' "
		 "burn_cpu all flamebench helper main_loop parse_record "
		 "hash_block write_output worker_thread vfs_write "
		 "sysvec_apic_timer_interrupt", svg, outdir);
	fflush(stdout);
	st = system(cmd);
	REQUIRE(st != -1 && WIFEXITED(st), "%s: did not run", cmd);
	rc = WEXITSTATUS(st);
	if (rc == 0 || rc == 4) {
		unlink(log);
		unlink(ks);
		unlink(svg);
		rmdir(dir);
	}
	if (rc == 4)
		return 4;	/* the script printed the reason last */
	CHECK(rc == 0, "flame_screenshot.sh failed (%d); files in %s", rc, dir);
	if (!t_failed)
		printf("ok: flame graph renders, screenshots in %s\n", outdir);
	return t_failed;
}
