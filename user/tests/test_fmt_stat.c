// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring stat` counts the records whose timestamp is below
 * the one before (a FreeBSD log, per-CPU buffers written out whole, has
 * them; pmcring's files do not).  A file without such records prints no
 * such line.
 */
#include "test_fmt_common.h"
#include "../pmcring/cmd.h"

/* A pmclog of USERDATA records with the timestamps @ts, then CLOSELOG. */
static void pmclog_with(const char *path, const uint64_t *ts, unsigned int n)
{
	struct img im = { .len = 0 };
	struct fmt_opts o = { .start_ns = 1 };
	size_t off = PMCRING_SIZE_INITIALIZE;
	unsigned int i;
	FILE *f;

	fmt_pmclog_initialize(im.b, &o);	/* what makes it a pmclog */
	im.len = off;
	for (i = 0; i < n; i++, off += 24) {
		le(&im, off, 0xEE000000u | (PMCRING_TYPE_USERDATA << 16) | 24, 4);
		le(&im, off + 4, 0, 4);
		le(&im, off + 8, ts[i], 8);
		le(&im, off + 16, i, 8);
	}
	le(&im, off, 0xEE000000u | (PMCRING_TYPE_CLOSELOG << 16) | 16, 4);
	le(&im, off + 4, 0, 4);
	le(&im, off + 8, ts[n - 1], 8);
	f = fopen(path, "w");
	REQUIRE(f && fwrite(im.b, 1, im.len, f) == im.len && !fclose(f),
		"write %s", path);
}

/* `pmcring stat ARG`: its exit status, its standard output in @out. */
static int stat_of(const char *arg, char *out, size_t sz)
{
	char *argv[] = { "stat", (char *)arg, NULL };
	int fd, saved, rc;
	FILE *f = tmpfile();
	size_t n;

	REQUIRE(f, "tmpfile");
	fflush(stdout);
	saved = dup(1);
	fd = fileno(f);
	dup2(fd, 1);
	rc = cmd_stat(2, argv);
	fflush(stdout);
	dup2(saved, 1);
	close(saved);
	rewind(f);
	n = fread(out, 1, sz - 1, f);
	out[n] = '\0';
	fclose(f);
	return rc;
}

int main(void)
{
	static const uint64_t ordered[] = { 10, 20, 20, 30 };
	static const uint64_t twice[] = { 10, 30, 20, 40, 5 };
	char *dir = scratch_dir(), path[512], out[8192];

	snprintf(path, sizeof(path), "%s/ordered.pmclog", dir);
	pmclog_with(path, ordered, 4);
	CHECK(stat_of(path, out, sizeof(out)) == 0 && strstr(out, " 6 records") &&
	      !strstr(out, "out of order"), "ordered: %s", out);

	snprintf(path, sizeof(path), "%s/twice.pmclog", dir);
	pmclog_with(path, twice, 5);
	CHECK(stat_of(path, out, sizeof(out)) == 0 &&
	      strstr(out, "out of order 2 "), "twice: %s", out);

	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_stat: all checks passed\n");
	return t_failed;
}
