// SPDX-License-Identifier: GPL-2.0
/*
 * Description: without FILE.kallsyms, report and script name kernel frames
 * from this machine's kallsyms only when the recording's kernel addresses
 * fit this kernel (KALLSYMS_FIT_PCT percent of KALLSYMS_FIT_MIN or more in
 * its text or a module's): a recording written here but made on another
 * kernel or boot (another KASLR offset: a copy out of a VM, an LDMS
 * aggregator's blob sets) keeps them unnamed and says why; a recording
 * without kernel addresses does not read kallsyms at all.  A fake
 * kallsyms (kallsyms_proc) stands for /proc/kallsyms.
 */
#include "test_report_common.h"
#include "../pmcring/report/kallsyms.h"

#define K_TEXT		0xffffffff81000000ull	/* _text, _stext */
#define K_SCHED		0xffffffff81100000ull	/* schedule */
#define K_SYSCALL	0xffffffff81200000ull	/* do_syscall_64 */
#define K_ETEXT		0xffffffff82000000ull	/* _etext */
#define K_MOD		0xffffffffc0001000ull	/* fakemod_fn [fakemod] */
/* where another boot's KASLR put the same kernel */
#define K_FOREIGN	0x1e000000ull

static volatile unsigned long sink;

__attribute__((noinline, used)) void kf_user(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

static const char fake_ks[] =
	"ffffffff81000000 T _text\n"
	"ffffffff81000000 T _stext\n"
	"ffffffff81100000 T schedule\n"
	"ffffffff81200000 T do_syscall_64\n"
	"ffffffff82000000 T _etext\n"
	"ffffffff82100000 D some_data\n"
	"ffffffffc0001000 t fakemod_fn\t[fakemod]\n"
	"ffffffffc0001800 t fakemod_end\t[fakemod]\n";

static const char zero_ks[] =
	"0000000000000000 T _text\n"
	"0000000000000000 T schedule\n"
	"0000000000000000 t fakemod_fn\t[fakemod]\n";

static struct self_map m;

/*
 * A pmclog at @log: @nin samples whose kernel frames are schedule, a
 * module's function and do_syscall_64 (3 kernel addresses each) plus the
 * user's kf_user, moved by @shift; then @nout samples of one kernel
 * address past this kernel's _etext.
 */
static void write_rec(const char *log, unsigned int nin, uint64_t shift,
		      unsigned int nout)
{
	static struct plog p;
	uint64_t pc[4] = {
		K_SCHED + 4 + shift, K_MOD + 8 + shift, K_SYSCALL + 16 + shift,
		(uintptr_t)kf_user + 4,
	};
	uint64_t out[2] = { K_ETEXT + 0x400000, (uintptr_t)kf_user + 4 };
	unsigned int i;

	p.len = 0;
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "kfproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	for (i = 0; i < nin; i++)
		plog_callchain(&p, 100, 100, 0, pc, 4);
	for (i = 0; i < nout; i++)
		plog_callchain(&p, 100, 100, 0, out, 2);
	plog_closelog(&p);
	write_file(log, p.b, p.len);
}

int main(void)
{
	char dir[] = "/tmp/test_report_kallsyms_fitXXXXXX", log[256];
	char ks[256], zks[256], none[256], buf[512];
	uint64_t upc[1] = { 0 };
	static struct plog p;
	char *out;
	int rc;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/f.pmclog", dir);
	snprintf(ks, sizeof(ks), "%s/fake_kallsyms", dir);
	snprintf(zks, sizeof(zks), "%s/zero_kallsyms", dir);
	snprintf(none, sizeof(none), "%s/no_kallsyms", dir);
	write_file(ks, fake_ks, strlen(fake_ks));
	write_file(zks, zero_ks, strlen(zero_ks));
	kallsyms_proc = ks;

	/* 1. this kernel's addresses (its text, a module's): named, said */
	write_rec(log, 2, 0, 0);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "kfproc;kf_user;do_syscall_64;"
				 "fakemod_fn;schedule 2\n") &&
	      strstr(t_stderr, "kernel symbols from this machine's ") &&
	      strstr(t_stderr, "6 of its 6 kernel addresses are in this "
		     "kernel's text"), "fit rc %d:\n%s%s", rc, out, t_stderr);
	free(out);
	out = run_script(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, " schedule+0x4 ([kernel.kallsyms])") &&
	      strstr(out, " fakemod_fn+0x8 ([kernel.kallsyms])"),
	      "script fit rc %d:\n%s", rc, out);
	free(out);

	/* 2. another boot's KASLR offset: unnamed, and why */
	write_rec(log, 2, K_FOREIGN, 0);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strstr(out, "schedule") &&
	      !strstr(out, "fakemod_fn") && strstr(out, "[unknown]") &&
	      strstr(t_stderr, "6 of 6 kernel addresses are outside this "
		     "kernel's text: ") &&
	      strstr(t_stderr, "was recorded on another kernel or boot; "
		     "kernel frames stay unnamed (give --kallsyms FILE, the "
		     "recording machine's /proc/kallsyms of that boot)") &&
	      !strstr(t_stderr, "kernel symbols from this machine"),
	      "foreign rc %d:\n%s%s", rc, out, t_stderr);
	free(out);
	out = run_script(&rc, log, NULL);
	CHECK(rc == 0 && !strstr(out, "schedule") &&
	      strstr(t_stderr, "kernel addresses are outside"),
	      "script foreign rc %d:\n%s%s", rc, out, t_stderr);
	free(out);
	/* --kallsyms FILE is taken as given, no check */
	snprintf(buf, sizeof(buf), "%s/explicit", dir);
	write_file(buf, fake_ks, strlen(fake_ks));
	write_rec(log, 2, 0, 0);
	out = run_report(&rc, "--folded", "--kallsyms", buf, log, NULL);
	CHECK(rc == 0 && strstr(out, "schedule 2\n") &&
	      !strstr(t_stderr, "kernel addresses"), "explicit rc %d:\n%s%s",
	      rc, out, t_stderr);
	free(out);

	/* 3. the threshold: 99% in the text fits, 98% does not */
	write_rec(log, 66, 0, 2);		/* 198 of 200 */
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && strstr(out, "schedule 66\n") &&
	      strstr(t_stderr, "198 of its 200 kernel addresses"),
	      "99%% rc %d:\n%s%s", rc, out, t_stderr);
	free(out);
	write_rec(log, 32, 0, 2);		/* 96 of 98 */
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strstr(out, "schedule") &&
	      strstr(t_stderr, "2 of 98 kernel addresses are outside"),
	      "98%% rc %d:\n%s%s", rc, out, t_stderr);
	free(out);

	/* 4. too few kernel addresses to tell: unnamed, said */
	write_rec(log, 0, 0, 0);
	p.len = 0;
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "kfproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	upc[0] = K_SCHED + 4;
	plog_callchain(&p, 100, 100, 0, upc, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strstr(out, "schedule") &&
	      strstr(t_stderr, "has 1 kernel address, too few to tell"),
	      "few rc %d:\n%s%s", rc, out, t_stderr);
	free(out);
	/* ... but kallsyms was read for it: a missing one is said */
	kallsyms_proc = none;
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && strstr(t_stderr, none), "read rc %d:\n%s%s", rc, out,
	      t_stderr);
	free(out);

	/* 5. no kernel address: kallsyms is not read, nothing is said */
	p.len = 0;
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "kfproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	upc[0] = (uintptr_t)kf_user + 4;
	plog_callchain(&p, 100, 100, 0, upc, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "kfproc;kf_user 1\n") &&
	      !strstr(t_stderr, "kallsyms"), "user rc %d:\n%s%s", rc, out,
	      t_stderr);
	free(out);

	/* 6. kallsyms read without privilege (zeros): said as before */
	kallsyms_proc = zks;
	write_rec(log, 2, 0, 0);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strstr(out, "schedule") &&
	      strstr(t_stderr, "every address is 0 (kallsyms read without "
		     "privilege)"), "zero rc %d:\n%s%s", rc, out, t_stderr);
	free(out);

	free(t_stderr);
	snprintf(buf, sizeof(buf), "rm -rf '%s'", dir);
	if (!t_failed && system(buf))
		fprintf(stderr, "could not remove %s\n", dir);
	if (!t_failed)
		printf("test_report_kallsyms_fit: all checks passed\n");
	return t_failed;
}
