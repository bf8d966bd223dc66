// SPDX-License-Identifier: GPL-2.0
/* pmcring(1): record, dump and stat pmcring sessions. */
#include <stdio.h>
#include <string.h>

#include "cmd.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pmcring COMMAND [OPTIONS]\n"
		"\n"
		"commands:\n"
		"  record   record a session into a pmclog, barman or blob file\n"
		"  dump     print the records of a file, one per line\n"
		"  stat     print counts per type and CPU of a file\n"
		"  report   print a symbolized profile, folded stacks, flame graph\n"
		"  script   print every sample with its call chain (perf script)\n"
		"  list     the sampling events and whether this machine counts them\n"
		"\n"
		"`pmcring COMMAND --help` describes each command; see pmcring(1).\n"
		"`pmcring --version` prints the version.\n");
}

int main(int argc, char **argv)
{
	int i;

	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	/* --version anywhere before a COMMAND's "--", as perf takes it */
	for (i = 1; i < argc && strcmp(argv[i], "--"); i++) {
		if (!strcmp(argv[i], "--version")) {
			cmd_version(stdout);
			return 0;
		}
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "record"))
		return cmd_record(argc - 1, argv + 1);
	if (!strcmp(argv[1], "dump"))
		return cmd_dump(argc - 1, argv + 1);
	if (!strcmp(argv[1], "stat"))
		return cmd_stat(argc - 1, argv + 1);
	if (!strcmp(argv[1], "report"))
		return cmd_report(argc - 1, argv + 1);
	if (!strcmp(argv[1], "script"))
		return cmd_script(argc - 1, argv + 1);
	if (!strcmp(argv[1], "list"))
		return cmd_list(argc - 1, argv + 1);
	fprintf(stderr, "pmcring: unknown command '%s'\n", argv[1]);
	usage(stderr);
	return 2;
}
