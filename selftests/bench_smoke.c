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
#include "bench_capture.h"

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

	if (!bench_root())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	loaded = smoke_load_ftrace();
	ret = bench_capture(pmcbench_main, "pmcbench", &out, args);
	if (loaded)
		syscall(SYS_delete_module, "pmcring_ftrace_bench", O_NONBLOCK);
	ASSERT_EQ(0, ret);
	ASSERT_NE(NULL, strstr(out, "\"size\": 256, \"cpus\": \"all\""));
	EXPECT_GT(bench_jnum(out, "pmcring_ns"), 0);
	if (strstr(out, "\"ftrace\": true")) {
		EXPECT_GT(bench_jnum(out, "ftrace_ns"), 0);
		/* the clock split: both clocks timed, rows without them */
		EXPECT_GT(bench_jnum(out, "clock_mono_ns"), 0);
		EXPECT_GT(bench_jnum(out, "clock_local_ns"), 0);
		if (bench_jnum(out, "clock_mono_ns") > 0)
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

	if (!bench_root())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	ASSERT_EQ(0, bench_capture(pmcbench_main, "pmcbench", &out, args));
	/* written + dropped = generated */
	EXPECT_EQ(300.0 * ncpu,
		  bench_jnum(out, "records") + bench_jnum(out, "dropped"));
	EXPECT_GT(bench_jnum(out, "p99_ms"), 0);
	EXPECT_GE(bench_jnum(out, "max_ms"), bench_jnum(out, "p99_ms"));
	EXPECT_GE(bench_jnum(out, "p99_ms"), bench_jnum(out, "p50_ms"));
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

	if (!bench_root())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	if (!have_cli())
		SKIP(return, "pmcring(1) not on PATH");
	ASSERT_EQ(0, bench_capture(pmcbench_main, "pmcbench", &out, rec));
	EXPECT_GT(bench_jnum(out, "seconds"), 0);
	free(out);
	ASSERT_EQ(0, bench_capture(pmcbench_main, "pmcbench", &out, cnt));
	EXPECT_GT(bench_jnum(out, "generated"), 0);
	EXPECT_GT(bench_jnum(out, "bytes"), 64 * bench_jnum(out, "generated") - 1);
	free(out);
	ASSERT_EQ(0, bench_capture(pmcbench_main, "pmcbench", &out, raw));
	EXPECT_EQ(1048576, bench_jnum(out, "bytes"));
	EXPECT_GT(bench_jnum(out, "mb_s"), 0);
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

	ASSERT_EQ(0, bench_capture(pmcbench_main, "pmcbench", &out, pipe_args));
	EXPECT_GT(bench_jnum(out, "seconds"), 0);
	free(out);
	ASSERT_EQ(0, bench_capture(pmcbench_main, "pmcbench", &out, fork_args));
	EXPECT_GT(bench_jnum(out, "seconds"), 0);
	free(out);
	if (!bench_root())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	if (!have_cli())
		SKIP(return, "pmcring(1) not on PATH");
	/* /proc/self/exe of pmcring's child is pmcring: give our own path */
	rec[11] = realpath("/proc/self/exe", NULL);
	ASSERT_NE(NULL, rec[11]);
	ASSERT_EQ(0, bench_capture(pmcbench_main, "pmcbench", &out, rec));
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
