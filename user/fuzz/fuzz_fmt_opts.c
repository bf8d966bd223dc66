// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the command line of `pmcring record` (getopt_long,
 * numbers with suffixes, event lists, --stream NAME:TYPES, --generate).
 * The input is the argument list separated by NUL bytes.
 */
#include <stdlib.h>

#include "../pmcring/record/opts.h"

#define MAX_ARGS	32

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1), *argv[MAX_ARGS + 2], err[256];
	struct rec_opts o;
	int argc = 1;
	size_t i, start = 0;

	memcpy(copy, data, size);
	copy[size] = '\0';
	argv[0] = "record";
	for (i = 0; i <= size && argc < MAX_ARGS; i++) {
		if (copy[i] == '\0') {
			argv[argc++] = copy + start;
			start = i + 1;
		}
	}
	argv[argc] = NULL;
	rec_opts_parse(&o, argc, argv, err, sizeof(err));
	rec_opts_free(&o);
	free(copy);
	return 0;
}
