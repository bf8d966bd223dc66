/* SPDX-License-Identifier: GPL-2.0 */
/* The subcommands of pmcring(1). */
#ifndef PMCRING_CMD_H
#define PMCRING_CMD_H

int cmd_record(int argc, char **argv);
int cmd_dump(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_report(int argc, char **argv);

#endif /* PMCRING_CMD_H */
