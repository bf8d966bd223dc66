// SPDX-License-Identifier: GPL-2.0
/*
 * pmcring-pmuprog: the PMU tests' program (pmu_sample.sh).  Spends its time
 * in pmu_hot(), called through pmu_run() from main() (built with frame
 * pointers, so the callchains resolve), and counts its own user-mode CPU
 * cycles with perf_event_open() around that work: the reference the test
 * compares the samples of `pmcring record` with.
 *
 *	pmcring-pmuprog [-i] [-k] [-n ITERATIONS] [-s SECONDS_TO_SLEEP_FIRST]
 *
 * prints "pid PID", then after the work "cycles N" (N: user cycles of the
 * thread from just before pmu_run() to just after it; -i: "instructions N",
 * -k: user and kernel mode).
 */
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

static volatile uint64_t sink;

/* noipa: no constant-folding of the calls (pmu_hot() is pure). */
__attribute__((noipa)) static uint64_t pmu_hot(uint64_t x, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

__attribute__((noipa)) static void pmu_run(uint64_t iters)
{
	uint64_t i;

	for (i = 0; i < iters; i += 1000000)
		sink = pmu_hot(sink, 1000000);
}

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	uint64_t iters = 50000000, count = 0, config = PERF_COUNT_HW_CPU_CYCLES;
	int opt, fd, user_only = 1, nap = 0;

	while ((opt = getopt(argc, argv, "ikn:s:")) != -1) {
		switch (opt) {
		case 'i':
			config = PERF_COUNT_HW_INSTRUCTIONS;
			break;
		case 'k':
			user_only = 0;
			break;
		case 'n':
			iters = strtoull(optarg, NULL, 0);
			break;
		case 's':
			nap = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-n ITERATIONS] [-s SECONDS]\n", argv[0]);
			return 2;
		}
	}
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (nap)
		sleep(nap);	/* for pmcring record -p to attach */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = config;
	a.exclude_kernel = user_only;
	a.exclude_hv = 1;
	a.disabled = 1;
	fd = (int)syscall(SYS_perf_event_open, &a, 0, -1, -1, 0);
	if (fd < 0) {
		perror("perf_event_open(cycles)");
		return 1;
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	pmu_run(iters);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != sizeof(count)) {
		perror("read(cycles)");
		return 1;
	}
	printf("%s %llu\n", config == PERF_COUNT_HW_CPU_CYCLES ? "cycles" :
	       "instructions", (unsigned long long)count);
	return 0;
}
