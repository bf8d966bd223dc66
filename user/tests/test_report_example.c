// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the example consumer of user/examples builds against the
 * installed headers and pkg-config file alone, and runs (or, without
 * /dev/pmcring, says the module is missing); see tests/example_build.sh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>

int main(void)
{
	const char *o = getenv("O");
	char cmd[1024];
	int st;

	/* make check runs the tests from user/; the build lands in O */
	snprintf(cmd, sizeof(cmd), "sh tests/example_build.sh . '%s'",
		 o ? o : "../build/user");
	fflush(stdout);
	st = system(cmd);
	if (st == -1 || !WIFEXITED(st)) {
		fprintf(stderr, "%s: did not run\n", cmd);
		return 1;
	}
	return WEXITSTATUS(st);
}
