// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the record sources under churn.  Several sessions
 * (system-wide and per-pid, with counters) are enabled and disabled over
 * and over while processes fork, spawn threads, exec, map and unmap
 * executable files and exit; every ioctl succeeds, every ring stays
 * well-formed, and the probes detach cleanly (the runner checks dmesg and
 * unloads the module afterwards).
 *
 * NEEDS_LIBPMCRING
 */
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <linux/pmcring.h>

#include "libpmcring.h"
#include "pmcring_test.h"

#define HELPER_ARG	"--src-stress-helper"
#define ROUNDS		20

static char exe_path[PATH_MAX];

static void *thread_fn(void *arg)
{
	volatile unsigned long x = 0;
	unsigned long i;

	for (i = 0; i < 100000; i++)
		x += i;
	return arg;
}

/* One round of process churn. */
static void churn_once(void)
{
	pthread_t th;
	void *p;
	pid_t pid;
	int fd;

	if (!pthread_create(&th, NULL, thread_fn, NULL))
		pthread_join(th, NULL);
	fd = open(exe_path, O_RDONLY);
	if (fd >= 0) {
		p = mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
		if (p != MAP_FAILED)
			munmap(p, 4096);
		close(fd);
	}
	pid = fork();
	if (!pid) {
		execl(exe_path, exe_path, HELPER_ARG, (char *)NULL);
		_exit(1);
	}
	if (pid > 0)
		waitpid(pid, NULL, 0);
}

static int churn(volatile int *stop)
{
	while (!*stop)
		churn_once();
	return 0;
}

/*
 * cpu-clock samples from an hrtimer (hard IRQ), page-faults from the fault
 * (task context, real registers), context-switches from the scheduler
 * (task context, registers made by perf_fetch_caller_regs()).
 */
static struct pmcring *session(pid_t pid, uint32_t flags, uint64_t config,
			       uint64_t period)
{
	struct pmcring_opts o = {
		.sz = sizeof(o),
		.data_pages = 16,	/* small: drops happen too */
		.flags = flags | (pid ? PMCRING_CFG_F_PID : 0),
		.pid = pid,
	};
	struct pmcring_counter c = {
		.type = PERF_TYPE_SOFTWARE,
		.config = config,
		.rate = period,
	};
	struct pmcring *s = pmcring_new(&o);

	if (s && pmcring_add_counter(s, &c)) {
		pmcring_free(s);
		s = NULL;
	}
	return s;
}

/* Drain every ring, counting CALLCHAINs; -EBADMSG if one is corrupt. */
static int drain(struct pmcring *s, unsigned int *callchains)
{
	struct pmcring_record r;
	unsigned int cpu;
	int ret = 0;

	for (cpu = 0; cpu < pmcring_nr_cpus(s); cpu++) {
		struct pmcring_cpu_buf *b = pmcring_cpu_buf(s, cpu);

		while (b && (ret = pmcring_cpu_buf_peek(b, &r)) == 1) {
			*callchains += r.type == PMCRING_TYPE_CALLCHAIN;
			pmcring_cpu_buf_next(b);
		}
		if (ret < 0)
			return ret;
		if (b)
			pmcring_cpu_buf_consume(b, pmcring_cpu_buf_pos(b));
	}
	return 0;
}

TEST(enable_disable_under_churn)
{
	unsigned int cc[3] = { 0, 0, 0 };
	struct pmcring *s[3];
	volatile int *stop;
	unsigned int i, round;
	pid_t worker;
	int status;

	PMCRING_REQUIRE_DEV();
	stop = mmap(NULL, 4096, PROT_READ | PROT_WRITE,
		    MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	ASSERT_NE(MAP_FAILED, stop);
	*stop = 0;
	worker = fork();
	ASSERT_LE(0, worker);
	if (!worker)
		_exit(churn(stop));

	s[0] = session(0, PMCRING_CFG_F_SYSTEM_WIDE, PERF_COUNT_SW_CPU_CLOCK,
		       100000);	/* ns: 10 kHz */
	/*
	 * page-faults and context-switches flip static keys that patch
	 * do_user_addr_fault() and __schedule(); QEMU TCG on 6.12 sometimes
	 * runs a stale int3 of such a patch ("Oops: int3").  Opt in.
	 */
	if (getenv("PMCRING_SRC_STRESS_SWEVENTS")) {
		s[1] = session(worker, 0, PERF_COUNT_SW_PAGE_FAULTS, 1);
		s[2] = session(worker, PMCRING_CFG_F_NO_SYNTH,
			       PERF_COUNT_SW_CONTEXT_SWITCHES, 1);
	} else {
		s[1] = session(worker, 0, PERF_COUNT_SW_TASK_CLOCK, 100000);
		s[2] = session(worker, PMCRING_CFG_F_NO_SYNTH,
			       PERF_COUNT_SW_CPU_CLOCK, 100000);
	}
	for (i = 0; i < 3; i++)
		ASSERT_NE(NULL, s[i]) TH_LOG("session %u: %s", i,
					     strerror(errno));
	for (round = 0; round < ROUNDS; round++) {
		for (i = 0; i < 3; i++)
			if ((round + i) % 2 == 0)
				ASSERT_EQ(0, pmcring_enable(s[i]));
		usleep(20000);
		for (i = 0; i < 3; i++) {
			ASSERT_EQ(0, pmcring_disable(s[i]));
			ASSERT_EQ(0, drain(s[i], &cc[i]));
		}
	}
	/* Close one while enabled: release must detach too. */
	ASSERT_EQ(0, pmcring_enable(s[1]));
	usleep(20000);
	pmcring_free(s[1]);
	*stop = 1;
	ASSERT_EQ(worker, waitpid(worker, &status, 0));
	EXPECT_EQ(0, status);
	pmcring_free(s[0]);
	pmcring_free(s[2]);
	TH_LOG("CALLCHAIN records of the 3 sessions: %u, %u, %u",
	       cc[0], cc[1], cc[2]);
	for (i = 0; i < 3; i++)
		EXPECT_LT(0, cc[i]);
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], HELPER_ARG))
		return 0;
	if (!realpath("/proc/self/exe", exe_path))
		snprintf(exe_path, sizeof(exe_path), "%s", argv[0]);
	return test_harness_run(argc, argv);
}
