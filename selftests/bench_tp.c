// SPDX-License-Identifier: GPL-2.0
/*
 * Description: smoke run of the tracepoint peer benchmark of `make bench`
 * (selftests/bench/tpbench.c, compiled in here): with
 * pmcring_ftrace_bench.ko loaded, pmcring_bench:pfb_event is fired from
 * task and hard-IRQ context with each peer attached in turn - nothing, an
 * empty probe, the minimal ring, pmcring
 * (pmcring_emit_generated_probe()), perf's ring (perf_event_open), the BPF
 * ring buffer (libbpf) and ftrace (tracefs) - and every peer must hold
 * exactly the events fired; then the offered-rate mode (hard-IRQ hrtimer)
 * must fire its count in about the time the rate says.
 *
 * NEEDS_LIBPMCRING NEEDS_LIBBPF
 */
#define TPBENCH_NO_MAIN
#include "bench/tpbench.c"

#include <math.h>
#include <sys/utsname.h>
#include "kselftest_harness.h"
#include "bench_capture.h"

/*
 * Load pmcring_ftrace_bench.ko ($PMCRING_FTRACE_BENCH_KO or the VM image's
 * /lib/modules/<release>/extra/) unless its device exists: 1 if we loaded
 * it, 0 if it was there, -1 if it cannot be loaded.
 */
static int tp_load(void)
{
	const char *ko = getenv("PMCRING_FTRACE_BENCH_KO");
	struct utsname u;
	char path[256];
	int fd, i;

	if (!access(PFB_DEV_PATH, F_OK))
		return 0;
	if (!ko) {
		if (uname(&u))
			return -1;
		snprintf(path, sizeof(path),
			 "/lib/modules/%s/extra/pmcring_ftrace_bench.ko",
			 u.release);
		ko = path;
	}
	fd = open(ko, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -1;
	i = (int)syscall(SYS_finit_module, fd, "", 0);
	close(fd);
	if (i)
		return -1;
	/* devtmpfs creates the node asynchronously */
	for (i = 0; i < 100 && access(PFB_DEV_PATH, F_OK); i++)
		usleep(10000);
	return 1;
}

static void tp_unload(int loaded)
{
	if (loaded == 1)
		syscall(SYS_delete_module, "pmcring_ftrace_bench", O_NONBLOCK);
}

TEST(every_peer_gets_every_event)
{
	const char *args[] = { "b1", "-p", "64", "-n", "1000", "-r", "1",
			       "-s", "32,256", NULL };
	char *out = NULL, key[32];
	int loaded, ret;
	unsigned int p;

	if (!bench_root())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	loaded = tp_load();
	if (loaded < 0)
		SKIP(return, "pmcring_ftrace_bench.ko cannot be loaded");
	/* exits 1 when a peer holds another number of events than fired */
	ret = bench_capture(tpbench_main, "tpbench", &out, args);
	tp_unload(loaded);
	ASSERT_EQ(0, ret);
	ASSERT_NE(NULL, out);
	for (p = 0; p < P_NR; p++) {
		if (p == P_BPF && !tp_have_bpf()) {
			TH_LOG("built without libbpf: no BPF peer");
			continue;
		}
		snprintf(key, sizeof(key), "%s_ns", tp_names[p]);
		/* every peer set up, and timed in the last row (256, irq) */
		EXPECT_GT(bench_jnum(strstr(out, "\"size\": 256, \"ctx\": \"irq\""),
				  key), 0) TH_LOG("peer %s", tp_names[p]);
	}
	EXPECT_NE(NULL, strstr(out, "\"size\": 32, \"ctx\": \"task\""));
	free(out);
}

TEST(offered_rate)
{
	const char *args[] = { "fire", "-n", "2000", "-s", "64", "-R", "20000",
			       "-x", "1", NULL };
	unsigned int ncpu = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	char *out = NULL;
	int loaded, ret;

	if (!bench_root())
		SKIP(return, "no %s or not root", PMCRING_DEV_PATH);
	loaded = tp_load();
	if (loaded < 0)
		SKIP(return, "pmcring_ftrace_bench.ko cannot be loaded");
	ret = bench_capture(tpbench_main, "tpbench", &out, args);
	tp_unload(loaded);
	ASSERT_EQ(0, ret);
	EXPECT_EQ(2000.0 * ncpu, bench_jnum(out, "fired"));
	/* 2000 events at 20000/s: 0.1 s, not much less */
	EXPECT_GE(bench_jnum(out, "seconds"), 0.09);
	free(out);
}

TEST_HARNESS_MAIN
