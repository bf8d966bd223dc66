/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What the bench programs (pmcbench, tpbench) share: the subcommand table,
 * and main() for a program that is also linked into a selftest, which calls
 * its *_main() with its own streams (selftests/bench_capture.h).
 */
#ifndef PMCRING_BENCH_MAIN_H
#define PMCRING_BENCH_MAIN_H

#include <stdio.h>
#include <string.h>
#include <unistd.h>

struct bench_cmd {
	const char *name;
	int (*run)(int argc, char **argv);
};

/*
 * Run the subcommand argv[1] from @cmds (ended by a NULL name) with
 * argv[1..]; an unknown or missing one prints @usage to @log and gives 2.
 */
static inline int bench_dispatch(const struct bench_cmd *cmds, int argc,
				 char **argv, FILE *log, const char *usage)
{
	optind = 0;	/* glibc: full getopt reset (a harness parsed before) */
	for (; argc >= 2 && cmds->name; cmds++)
		if (!strcmp(argv[1], cmds->name))
			return cmds->run(argc - 1, argv + 1);
	fprintf(log, "%s\n", usage);
	return 2;
}

/* main() of a bench program: line-buffered JSON lines on stdout. */
static inline int bench_main(int argc, char **argv,
			     int (*run)(int, char **, FILE *, FILE *))
{
	int ret;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ret = run(argc, argv, stdout, stderr);
	fflush(stdout);
	return ret;
}

#endif /* PMCRING_BENCH_MAIN_H */
