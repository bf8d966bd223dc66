// SPDX-License-Identifier: GPL-2.0
/*
 * Description: pmcring-workload, the small built-in workload "make run"
 * records: CPU work in a function named burn_cpu(), threads, pipe
 * ping-pong between two processes (context switches) and fork/exec.
 *
 * Usage: pmcring-workload [-d SECONDS] [-t THREADS]
 */
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Keep the symbol: profiles should show this name. */
__attribute__((noinline)) uint64_t burn_cpu(double seconds)
{
	volatile uint64_t x = 0x9e3779b97f4a7c15ull;
	double end = now() + seconds;
	uint64_t loops = 0;

	do {
		for (int i = 0; i < 100000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
		loops++;
	} while (now() < end);
	return loops + (x & 1);
}

static void *thread_main(void *arg)
{
	double seconds = *(double *)arg;
	struct timespec nap = { 0, 1000000 };
	double end = now() + seconds;

	while (now() < end) {
		burn_cpu(0.01);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

/* Bounce a byte between two processes until the time is up. */
static long pipe_pingpong(double seconds)
{
	int ab[2], ba[2];
	long rounds = 0;
	double end;
	pid_t pid;
	char c = 0;

	if (pipe(ab) || pipe(ba))
		return -errno;
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		/*
		 * Only our ends: if the parent dies (a test's kill), read()
		 * sees EOF instead of waiting for ever on a pipe we hold open
		 * ourselves, which kept the kselftest runner's output pipe
		 * open and hung the suite after cli_target.sh.
		 */
		close(ab[1]);
		close(ba[0]);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(0);
		while (read(ab[0], &c, 1) == 1 && c)
			if (write(ba[1], &c, 1) != 1)
				break;
		_exit(0);
	}
	end = now() + seconds;
	c = 1;
	while (now() < end) {
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1)
			break;
		rounds++;
	}
	c = 0;
	if (write(ab[1], &c, 1) != 1)
		kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(ab[0]); close(ab[1]); close(ba[0]); close(ba[1]);
	return rounds;
}

/* fork + exec ourselves as a short-lived child, n times. */
static int fork_exec(int n)
{
	int done = 0;

	for (int i = 0; i < n; i++) {
		int status;
		pid_t pid = fork();

		if (pid < 0)
			break;
		if (pid == 0) {
			execl("/proc/self/exe", "pmcring-workload", "--child",
			      (char *)NULL);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
		    WEXITSTATUS(status) == 0)
			done++;
	}
	return done;
}

int main(int argc, char **argv)
{
	double seconds = 2, t0 = now(), phase;
	int nthreads = 2, opt, execs;
	pthread_t tids[64];
	long rounds;

	if (argc == 2 && !strcmp(argv[1], "--child"))
		return burn_cpu(0.001) ? 0 : 1;
	while ((opt = getopt(argc, argv, "d:t:h")) != -1) {
		switch (opt) {
		case 'd':
			seconds = atof(optarg);
			break;
		case 't':
			nthreads = atoi(optarg);
			break;
		default:
			fprintf(stderr, "usage: %s [-d SECONDS] [-t THREADS]\n",
				argv[0]);
			return opt == 'h' ? 0 : 2;
		}
	}
	if (seconds <= 0 || nthreads < 1 || nthreads > 64) {
		fprintf(stderr, "pmcring-workload: bad -d or -t\n");
		return 2;
	}
	phase = seconds / 3;

	burn_cpu(phase);
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&tids[i], NULL, thread_main, &phase))
			nthreads = i;
	rounds = pipe_pingpong(phase);
	for (int i = 0; i < nthreads; i++)
		pthread_join(tids[i], NULL);
	execs = fork_exec(20);

	printf("pmcring-workload: pid %d, %.2fs: burn_cpu, %d threads, %ld pipe round trips, %d fork+exec\n",
	       (int)getpid(), now() - t0, nthreads, rounds, execs);
	return rounds > 0 && execs == 20 ? 0 : 1;
}
