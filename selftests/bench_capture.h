/* SPDX-License-Identifier: GPL-2.0 */
/*
 * For the selftests that link a bench program (bench_smoke: pmcbench,
 * bench_tp: tpbench): run its *_main() in process and read the numbers out
 * of the JSON lines it prints.
 */
#ifndef PMCRING_BENCH_CAPTURE_H
#define PMCRING_BENCH_CAPTURE_H

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * Run @run as program @prog with @args (NULL-terminated); the lines it
 * prints are left in *out (malloc'd), its status is returned.
 */
static inline int bench_capture(int (*run)(int, char **, FILE *, FILE *),
				const char *prog, char **out,
				const char *const *args)
{
	char *argv[32], *buf = NULL;
	size_t len = 0;
	int argc = 0, ret;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return -1;
	argv[argc++] = (char *)prog;
	while (*args && argc < 31)
		argv[argc++] = (char *)*args++;
	argv[argc] = NULL;
	ret = run(argc, argv, f, stderr);
	fclose(f);
	*out = buf;
	return ret;
}

/* The number after "key": in the first line of @s holding it; NAN if none. */
static inline double bench_jnum(const char *s, const char *key)
{
	char pat[64];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	p = s ? strstr(s, pat) : NULL;
	return p ? strtod(p + strlen(pat), NULL) : NAN;
}

/* The benches need the device and root (they load modules, set sysctls). */
static inline bool bench_root(void)
{
	return !access(PMCRING_DEV_PATH, R_OK | W_OK) && !geteuid();
}

#endif /* PMCRING_BENCH_CAPTURE_H */
