// SPDX-License-Identifier: GPL-2.0
#include <stdio.h>
#include "cmd.h"

int cmd_record(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	fprintf(stderr, "pmcring record: not built yet\n");
	return 1;
}
