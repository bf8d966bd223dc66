// SPDX-License-Identifier: GPL-2.0
/*
 * pmcring-pmuprog: the PMU tests' program (pmu_sample.sh).  Spends its time
 * in pmu_hot(), called through pmu_run() from main() (built with frame
 * pointers, so the callchains resolve), and counts its own user-mode CPU
 * cycles with perf_event_open() around that work: the reference the test
 * compares the samples of `pmcring record` with.
 *
 *	pmcring-pmuprog [-i] [-k] [-n ITERATIONS] [-s SECONDS_TO_SLEEP_FIRST]
 *			[-m ITERATIONS] [-S PERIOD]
 *	pmcring-pmuprog -P PID [-u MICROSECONDS]
 *
 * prints "pid PID", then after the work "cycles N" (N: user cycles of the
 * thread from just before pmu_run() to just after it; -i: "instructions N",
 * -k: user and kernel mode).
 *
 * -m N: the program moves itself between CPU 0 and CPU 1
 * (sched_setaffinity()) every N iterations, and prints "moves N".
 * -S PERIOD: the program also samples its own user cycles the way perf
 * record does (a sampling event of that period with its own mmap ring,
 * big enough for every sample), and prints "perf samples N lost L count
 * C cpus M": the PERF_RECORD_SAMPLEs and the records PERF_RECORD_LOST
 * reported in its ring, the sampling event's own count and how many
 * times consecutive samples changed CPU.  C / PERIOD is the number of
 * overflows the event went through; N + L is the number perf handled.
 * -P PID: no work, a mover: moves PID between CPU 0 and CPU 1 every -u
 * microseconds (default 20000) until PID is gone, then prints "moves N".
 * The move is another task's: PID is preempted wherever it is, as the
 * scheduler's own load balancing does.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

/* -S: data pages of the perf ring, 1 MiB: every sample of a run fits */
#define PERF_RING_PAGES	256

static volatile uint64_t sink;

/* noipa: no constant-folding of the calls (pmu_hot() is pure). */
__attribute__((noipa)) static uint64_t pmu_hot(uint64_t x, uint64_t n)
{
	uint64_t i;

	for (i = 0; i < n; i++)
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	return x;
}

/* Pin @pid (0: the caller) to @cpu; 0 or -errno. */
static int pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set) ? -errno : 0;
}

/* The work; @move: to the other CPU every @move iterations (0: never). */
__attribute__((noipa)) static unsigned long pmu_run(uint64_t iters,
						    uint64_t move)
{
	uint64_t i, step = 1000000;
	unsigned long moves = 0;

	if (move && move < step)
		step = move;
	for (i = 0; i < iters; i += step) {
		sink = pmu_hot(sink, step);
		if (move && (i / step + 1) % (move / step) == 0 &&
		    !pin(0, (int)(moves & 1) ^ 1))
			moves++;
	}
	return moves;
}

/* -P: move @pid between CPU 0 and 1 every @us until it is gone. */
static int mover(pid_t pid, unsigned int us)
{
	unsigned long moves = 0;
	int err;

	for (;;) {
		err = pin(pid, (int)(moves & 1));
		if (err == -ESRCH)
			break;
		if (err) {
			fprintf(stderr, "sched_setaffinity(%d): %s\n", (int)pid,
				strerror(-err));
			return 1;
		}
		moves++;
		usleep(us);
	}
	printf("moves %lu\n", moves);
	return 0;
}

static int perf_open(struct perf_event_attr *a)
{
	return (int)syscall(SYS_perf_event_open, a, 0, -1, -1, 0);
}

/* -S: a sampling event of user cycles on the caller, with its ring. */
static int sampler_open(uint64_t period, void **ring)
{
	struct perf_event_attr a;
	size_t len = (size_t)(PERF_RING_PAGES + 1) * getpagesize();
	int fd;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CPU;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.disabled = 1;
	fd = perf_open(&a);
	if (fd < 0) {
		perror("perf_event_open(sampling cycles)");
		return -1;
	}
	*ring = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (*ring == MAP_FAILED) {
		perror("mmap(perf ring)");
		close(fd);
		return -1;
	}
	return fd;
}

/* -S: count what the sampler's ring holds, print it with its count. */
static int sampler_report(int fd, void *ring)
{
	struct perf_event_mmap_page *pg = ring;
	unsigned long size = (unsigned long)PERF_RING_PAGES * getpagesize();
	unsigned char *data = (unsigned char *)ring + getpagesize();
	uint64_t head, tail, n = 0, lost = 0, cpus = 0, count = 0, other = 0;
	uint32_t cpu, last = UINT32_MAX;
	struct perf_event_header h;

	if (read(fd, &count, sizeof(count)) != sizeof(count)) {
		perror("read(sampling cycles)");
		return 1;
	}
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	for (tail = pg->data_tail; tail < head; tail += h.size) {
		memcpy(&h, data + tail % size, sizeof(h));
		if (h.size < sizeof(h) || tail % size + h.size > size)
			break;	/* no record crosses the end: the ring never wrapped */
		if (h.type == PERF_RECORD_SAMPLE) {
			/* ip, then cpu and res (u32 each) */
			memcpy(&cpu, data + tail % size + sizeof(h) + 8,
			       sizeof(cpu));
			cpus += last != UINT32_MAX && cpu != last;
			last = cpu;
			n++;
		} else if (h.type == PERF_RECORD_LOST) {
			uint64_t l;

			/* id, then lost */
			memcpy(&l, data + tail % size + sizeof(h) + 8, sizeof(l));
			lost += l;
		} else {
			other++;
		}
	}
	printf("perf samples %llu lost %llu count %llu cpus %llu other %llu\n",
	       (unsigned long long)n, (unsigned long long)lost,
	       (unsigned long long)count, (unsigned long long)cpus,
	       (unsigned long long)other);
	return 0;
}

int main(int argc, char **argv)
{
	struct perf_event_attr a;
	uint64_t iters = 50000000, count = 0, config = PERF_COUNT_HW_CPU_CYCLES;
	uint64_t move = 0, speriod = 0;
	int opt, fd, sfd = -1, user_only = 1, nap = 0;
	unsigned int us = 20000;
	unsigned long moves;
	void *ring = NULL;
	pid_t target = 0;

	while ((opt = getopt(argc, argv, "ikm:n:P:s:S:u:")) != -1) {
		switch (opt) {
		case 'i':
			config = PERF_COUNT_HW_INSTRUCTIONS;
			break;
		case 'k':
			user_only = 0;
			break;
		case 'm':
			move = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			iters = strtoull(optarg, NULL, 0);
			break;
		case 'P':
			target = (pid_t)atoi(optarg);
			break;
		case 's':
			nap = atoi(optarg);
			break;
		case 'S':
			speriod = strtoull(optarg, NULL, 0);
			break;
		case 'u':
			us = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: %s [-ik] [-n ITERATIONS] [-s SECONDS] [-m ITERATIONS] [-S PERIOD]\n"
				"       %s -P PID [-u MICROSECONDS]\n", argv[0], argv[0]);
			return 2;
		}
	}
	if (target > 0)
		return mover(target, us);
	printf("pid %d\n", (int)getpid());
	fflush(stdout);
	if (nap)
		sleep(nap);	/* for pmcring record -p to attach */
	if (move && pin(0, 0)) {
		perror("sched_setaffinity(CPU 0)");
		return 1;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = config;
	a.exclude_kernel = user_only;
	a.exclude_hv = 1;
	a.disabled = 1;
	fd = perf_open(&a);
	if (fd < 0) {
		perror("perf_event_open(cycles)");
		return 1;
	}
	if (speriod) {
		sfd = sampler_open(speriod, &ring);
		if (sfd < 0)
			return 1;
		ioctl(sfd, PERF_EVENT_IOC_ENABLE, 0);
	}
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	moves = pmu_run(iters, move);
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (sfd >= 0)
		ioctl(sfd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != sizeof(count)) {
		perror("read(cycles)");
		return 1;
	}
	printf("%s %llu\n", config == PERF_COUNT_HW_CPU_CYCLES ? "cycles" :
	       "instructions", (unsigned long long)count);
	if (move)
		printf("moves %lu\n", moves);
	if (sfd >= 0 && sampler_report(sfd, ring))
		return 1;
	return 0;
}
