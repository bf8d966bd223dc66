// SPDX-License-Identifier: GPL-2.0
/*
 * pmcring-suid-spin: the setuid-root helper of the perm_exec selftest,
 * installed mode 4755 owner root in the VM's root (build/vmroot/, made by
 * the top-level "make selftests").  Spins in user mode for argv[1] ms
 * (default 300) so that a sampler has something to sample, then exits 0
 * when it runs with euid 0 (the setuid bit worked), 1 otherwise.
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static volatile uint64_t sink;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	uint64_t end = now_ns() + (argc > 1 ? strtoull(argv[1], NULL, 0) :
				   300) * 1000000ull;

	while (now_ns() < end)
		for (int i = 0; i < 100000; i++)
			sink += i;
	return geteuid() == 0 ? 0 : 1;
}
