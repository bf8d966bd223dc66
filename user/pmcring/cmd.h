/* SPDX-License-Identifier: GPL-2.0 */
/* The subcommands of pmcring(1). */
#ifndef PMCRING_CMD_H
#define PMCRING_CMD_H

#include <stdio.h>
#include <linux/pmcring.h>

#ifndef PMCRING_VERSION
#define PMCRING_VERSION "unknown"
#endif

/* `pmcring --version`, `pmcring record --version`, ... */
static inline void cmd_version(FILE *f)
{
	fprintf(f, "pmcring %s (module ABI %u)\n", PMCRING_VERSION,
		PMCRING_ABI_VERSION);
}

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_list(int argc, char **argv);

#endif /* PMCRING_CMD_H */
