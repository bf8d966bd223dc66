// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the kernel's symbols of a recording, as perf keeps them:
 * `record`'s end writes FILE.kallsyms and FILE.modules (DIR/kallsyms in a
 * blob directory) from /proc, and report names kernel frames from it with
 * no option; without one, report falls back to this machine's
 * /proc/kallsyms for a recording written since this boot whose kernel
 * addresses fit this kernel (test_report_kallsyms_fit) and says so, and
 * for an older one says that --kallsyms is the way.
 */
#include "test_report_common.h"
#include "../pmcring/report/kallsyms.h"

#include <sys/time.h>

static volatile unsigned long sink;

__attribute__((noinline, used)) void ks_user(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

/* The address of the kernel's schedule(), 0 if /proc/kallsyms hides it. */
static uint64_t kernel_schedule(void)
{
	char line[512], name[256], type;
	unsigned long long a;
	FILE *f = fopen("/proc/kallsyms", "r");
	uint64_t r = 0;

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %c %255s", &a, &type, name) == 3 &&
		    !strcmp(name, "schedule") && (type == 'T' || type == 't')) {
			r = a;
			break;
		}
	fclose(f);
	return r;
}

int main(void)
{
	char dir[] = "/tmp/test_report_kallsymsXXXXXX", log[256], buf[512];
	uint64_t sched = kernel_schedule();
	uint64_t pc[] = { sched + 4, (uintptr_t)ks_user + 4 };
	struct timeval old[2] = { { 946684800, 0 }, { 946684800, 0 } };
	static struct plog p;
	struct self_map m;
	struct stat st;
	unsigned int i;
	char *out;
	int rc;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/k.pmclog", dir);

	/* the sidecars' names */
	CHECK(!kallsyms_sidecar_path(log, "kallsyms", buf, sizeof(buf)) &&
	      !strcmp(buf + strlen(dir), "/k.pmclog.kallsyms"), "%s", buf);
	CHECK(!kallsyms_sidecar_path(dir, "modules", buf, sizeof(buf)) &&
	      !strcmp(buf + strlen(dir), "/modules"), "%s", buf);
	if (!sched) {
		printf("SKIP: /proc/kallsyms shows no addresses here "
		       "(kptr_restrict, not root): nothing to record\n");
		rmdir(dir);
		return t_failed ? 1 : 4;
	}

	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "ksproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	/* KALLSYMS_FIT_MIN kernel addresses: enough to tell they fit */
	for (i = 0; i < KALLSYMS_FIT_MIN; i++)
		plog_callchain(&p, 100, 100, 0, pc, 2);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	/* 1. no sidecar, written since this boot: /proc/kallsyms, said */
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "ksproc;ks_user;schedule 4\n") &&
	      strstr(t_stderr, "kernel symbols from this machine's "
		     "/proc/kallsyms"), "fallback rc %d:\n%s%s", rc, out,
	      t_stderr);
	free(out);
	out = run_script(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, " schedule+0x4 ([kernel.kallsyms])"),
	      "script fallback rc %d:\n%s", rc, out);
	free(out);

	/* 2. a recording older than this boot: no fallback, the way said */
	REQUIRE(!utimes(log, old), "utimes: %s", strerror(errno));
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strstr(out, "schedule") &&
	      strstr(t_stderr, "give --kallsyms FILE"), "old rc %d:\n%s%s", rc,
	      out, t_stderr);
	free(out);

	/* 3. record's sidecars: then report needs nothing */
	CHECK(kallsyms_sidecar_record(log) == 0, "sidecar_record");
	snprintf(buf, sizeof(buf), "%s.kallsyms", log);
	CHECK(!stat(buf, &st) && st.st_size > 1000, "%s: not written", buf);
	snprintf(buf, sizeof(buf), "%s.modules", log);
	CHECK(!stat(buf, &st) || errno == ENOENT, "%s", buf);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "ksproc;ks_user;schedule 4\n") &&
	      !strstr(t_stderr, "/proc/kallsyms"), "sidecar rc %d:\n%s%s", rc,
	      out, t_stderr);
	free(out);

	free(t_stderr);
	snprintf(buf, sizeof(buf), "rm -rf '%s'", dir);
	if (!t_failed && system(buf))
		fprintf(stderr, "could not remove %s\n", dir);
	if (!t_failed)
		printf("test_report_kallsyms: all checks passed\n");
	return t_failed;
}
