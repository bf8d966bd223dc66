// SPDX-License-Identifier: GPL-2.0
/*
 * textpoke_flip: make the kernel patch its own text often, without pmcring.
 *
 * Each round forks a child that forks and reaps for CHILD_NS nanoseconds,
 * opens per-task software events on it (perf's sched static keys and the
 * context-switch swevent key go on), closes them (they go off, the sched
 * key from perf's delayed work) and sleeps SLEEP_US.  Every flip is a
 * text_poke_bp() on __schedule.  tcg_textpoke.sh runs it beside a tracefs
 * loop that flips the sched_switch and sys_exit tracepoints.
 *   textpoke_flip [ROUNDS]    (env CHILD_NS, SLEEP_US)
 */
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static long env_long(const char *name, long def)
{
	const char *v = getenv(name);

	return v && *v ? atol(v) : def;
}

static int open_sw(unsigned long long config, pid_t pid)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = config;
	a.sample_period = 100000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME;
	a.inherit = 1;
	a.context_switch = 1;
	a.task = 1;
	a.mmap = 1;
	return syscall(SYS_perf_event_open, &a, pid, -1, -1, 0);
}

static long elapsed_ns(const struct timespec *t0)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000000000L + t.tv_nsec - t0->tv_nsec;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? atol(argv[1]) : 250;
	long child_ns = env_long("CHILD_NS", 100000000);
	long sleep_us = env_long("SLEEP_US", 50000);
	long i, opened = 0;

	for (i = 0; i < rounds; i++) {
		int fd[2];
		pid_t c = fork();

		if (c < 0)
			return 1;
		if (!c) {
			struct timespec t0;

			clock_gettime(CLOCK_MONOTONIC, &t0);
			while (elapsed_ns(&t0) < child_ns) {
				if (!fork())
					_exit(0);
				wait(NULL);
			}
			_exit(0);
		}
		fd[0] = open_sw(PERF_COUNT_SW_CPU_CLOCK, c);
		fd[1] = open_sw(PERF_COUNT_SW_CONTEXT_SWITCHES, c);
		opened += (fd[0] >= 0) + (fd[1] >= 0);
		waitpid(c, NULL, 0);
		if (fd[0] >= 0)
			close(fd[0]);
		if (fd[1] >= 0)
			close(fd[1]);
		usleep(sleep_us);
		if (i % 50 == 0) {
			printf("textpoke_flip: round %ld\n", i);
			fflush(stdout);
		}
	}
	printf("textpoke_flip: %ld rounds, %ld events opened\n", rounds, opened);
	return opened ? 0 : 1;
}
