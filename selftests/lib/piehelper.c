// SPDX-License-Identifier: GPL-2.0
/*
 * Description: a static PIE for src_records' exec_addresses test.  Prints
 * the start of its own mapping of file offset 0 from /proc/self/maps (its
 * load base, where PROCEXEC's pl_dynaddr must point) and exits.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void)
{
	char exe[PATH_MAX], line[PATH_MAX + 128], path[PATH_MAX];
	unsigned long start, end, off;
	FILE *f;

	if (!realpath("/proc/self/exe", exe))
		return 1;
	f = fopen("/proc/self/maps", "r");
	if (!f)
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &start, &end,
			   &off, path) != 4)
			continue;
		if (!off && !strcmp(path, exe)) {
			printf("%lx\n", start);
			fclose(f);
			return 0;
		}
	}
	fclose(f);
	return 2;
}
