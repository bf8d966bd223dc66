// SPDX-License-Identifier: GPL-2.0
/*
 * Description: smoke run of every `make bench` benchmark with tiny sizes, so
 * the benchmark cannot rot: the VM-side driver (selftests/bench/pmcbench.c,
 * compiled in here) runs B1 (producer cost; the ftrace reference too when
 * pmcring_ftrace_bench.ko is loaded), B2 (pmcring record --generate to tmpfs
 * and the raw writer), B3 (the pipe and fork/exec workloads, bare and under
 * pmcring record) and B4 (merge latency), and each must print sane JSON.
 *
 * NEEDS_LIBPMCRING
 */
#define PMCBENCH_NO_MAIN
#include "bench/pmcbench.c"

#include <math.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include "kselftest_harness.h"

#define SMOKE_FILE	"/tmp/bench_smoke.pmclog"
/* Where the VM image carries the ftrace reference (top Makefile, kmod). */
#define SMOKE_FTRACE_KO	"/lib/modules/<release>/extra/pmcring_ftrace_bench.ko"

/*
 * Load pmcring_ftrace_bench.ko ($PMCRING_FTRACE_BENCH_KO or
 * SMOKE_FTRACE_KO) unless its device exists: true if we loaded it.
 */
static bool smoke_load_ftrace(void)
{
	const char *ko = getenv("PMCRING_FTRACE_BENCH_KO");
	struct utsname u;
	char path[256];
	int fd;
	bool ok;

	if (!access(PFB_DEV_PATH, F_OK))
		return false;
	if (!ko) {
		if (uname(&u))
			return false;
		snprintf(path, sizeof(path),
			 "/lib/modules/%s/extra/pmcring_ftrace_bench.ko",
			 u.release);
		ko = path;
	}
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	ok = !syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	/* devtmpfs creates the node asynchronously */
	for (int i = 0; ok && i < 100 && access(PFB_DEV_PATH, F_OK); i++)
		usleep(10000);
	return ok;
}

/* Run pmcbench with @args (NULL-terminated); its JSON lines in *out. */
static int smoke_run(char **out, const char *const *args)
{
	char *argv[32], *buf = NULL;
	size_t len = 0;
	int argc = 0, ret;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -1;
	argv[argc++] = "pmcbench";
	while (*args && argc < 31)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	ret = pmcbench_main(argc, argv, f, stderr);
	fclose(f);
	*out = buf;
	return ret;
}

/* The number after "key": in the first line holding it after @from. */
static double jnum(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = s ? strstr(s, pat) : NULL;
	return p ? strtod(p + strlen(pat), NULL) : NAN;
}

static bool have_pmcring(void)
{
	return !access(PMCRING_DEV_PATH, R_OK | W_OK) && !geteuid();
}

/* pmcring(1) on PATH? */
static bool have_cli(void)
{
	return !system("pmcring --help >/dev/null 2>&1");
}

TEST(b1_producer_cost)
{
	const char *args[] = { "b1", "-p", "64", "-n", "2000", "-r", "1",
			       "-s", "32,64,256", NULL };
	char *out = NULL;
	bool loaded;
	int ret;

	if (!have_pmcring())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	loaded = smoke_load_ftrace();
	ret = smoke_run(&out, args);
	if (loaded)
		syscall(SYS_delete_module, "pmcring_ftrace_bench", O_NONBLOCK);
	ASSERT_EQ(0, ret);
	ASSERT_NE(NULL, strstr(out, "\"size\": 256, \"cpus\": \"all\""));
	EXPECT_GT(jnum(out, "pmcring_ns"), 0);
	if (strstr(out, "\"ftrace\": true")) {
		EXPECT_GT(jnum(out, "ftrace_ns"), 0);
		/* the clock split: both clocks timed, rows without them */
		EXPECT_GT(jnum(out, "clock_mono_ns"), 0);
		EXPECT_GT(jnum(out, "clock_local_ns"), 0);
		if (jnum(out, "clock_mono_ns") > 0)
			EXPECT_NE(NULL, strstr(out, "\"noclock_size\": 64"));
	} else {
		TH_LOG("no %s (%s): ftrace reference not measured",
		       PFB_DEV_PATH, SMOKE_FTRACE_KO);
	}
	free(out);
}

TEST(b4_merge_latency)
{
	const char *args[] = { "lat", "-n", "300", "-b", "1", "-o", SMOKE_FILE,
			       NULL };
	char *out = NULL;
	unsigned int ncpu = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);

	if (!have_pmcring())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	ASSERT_EQ(0, smoke_run(&out, args));
	/* written + dropped = generated */
	EXPECT_EQ(300.0 * ncpu, jnum(out, "records") + jnum(out, "dropped"));
	EXPECT_GT(jnum(out, "p99_ms"), 0);
	EXPECT_GE(jnum(out, "max_ms"), jnum(out, "p99_ms"));
	EXPECT_GE(jnum(out, "p99_ms"), jnum(out, "p50_ms"));
	unlink(SMOKE_FILE);
	free(out);
}

TEST(b2_drain)
{
	const char *rec[] = { "time", "pmcring", "record", "-q", "--generate",
			      "2000,64", "-o", SMOKE_FILE, NULL };
	const char *cnt[] = { "count", SMOKE_FILE, NULL };
	const char *raw[] = { "raw", SMOKE_FILE, "1048576", NULL };
	char *out = NULL;

	if (!have_pmcring())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	if (!have_cli())
		SKIP(return, "pmcring(1) not on PATH");
	ASSERT_EQ(0, smoke_run(&out, rec));
	EXPECT_GT(jnum(out, "seconds"), 0);
	free(out);
	ASSERT_EQ(0, smoke_run(&out, cnt));
	EXPECT_GT(jnum(out, "generated"), 0);
	EXPECT_GT(jnum(out, "bytes"), 64 * jnum(out, "generated") - 1);
	free(out);
	ASSERT_EQ(0, smoke_run(&out, raw));
	EXPECT_EQ(1048576, jnum(out, "bytes"));
	EXPECT_GT(jnum(out, "mb_s"), 0);
	unlink(SMOKE_FILE);
	free(out);
}

TEST(b3_workloads)
{
	const char *pipe_args[] = { "csw", "pipe", "200", NULL };
	const char *fork_args[] = { "csw", "fork", "5", NULL };
	const char *rec[] = { "time", "pmcring", "record", "-q", "-e",
			      "cpu-clock", "-F", "1000", "-o", SMOKE_FILE, "--",
			      "/proc/self/exe", "csw", "pipe", "200", NULL };
	struct stat st;
	char *out = NULL;

	ASSERT_EQ(0, smoke_run(&out, pipe_args));
	EXPECT_GT(jnum(out, "seconds"), 0);
	free(out);
	ASSERT_EQ(0, smoke_run(&out, fork_args));
	EXPECT_GT(jnum(out, "seconds"), 0);
	free(out);
	if (!have_pmcring())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	if (!have_cli())
		SKIP(return, "pmcring(1) not on PATH");
	/* /proc/self/exe of pmcring's child is pmcring: give our own path */
	rec[11] = realpath("/proc/self/exe", NULL);
	ASSERT_NE(NULL, rec[11]);
	ASSERT_EQ(0, smoke_run(&out, rec));
	ASSERT_EQ(0, stat(SMOKE_FILE, &st));
	EXPECT_GT(st.st_size, 0);
	unlink(SMOKE_FILE);
	free((void *)rec[11]);
	free(out);
}

int main(int argc, char **argv)
{
	/* the fork/exec workload runs us again as "csw nop" */
	if (argc > 1 && !strcmp(argv[1], "csw"))
		return pmcbench_main(argc, argv, stdout, stderr);
	return test_harness_run(argc, argv);
}
