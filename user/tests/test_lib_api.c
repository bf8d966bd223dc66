// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: libpmcring's API contract: every exported function is
 * declared with PMCRING_API, listed in the version script and has a man
 * page; constructors validate their arguments and options structs (sz,
 * nonzero bytes past the known part), set errno and leak nothing on
 * failure; _free() functions accept NULL.  Runs in user/ (make check).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <regex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "libpmcring_test.h"

#define FAIL(...) do { \
	fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
	return 1; } while (0)

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	buf = calloc(1, (size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

static int test_exports(void)
{
	char *h = slurp("include/libpmcring.h"), *map = slurp("lib/libpmcring.map");
	regex_t re;
	regmatch_t mt[2];
	const char *p;
	int n = 0;

	if (!h || !map)
		FAIL("run from user/: header or version script missing");
	if (regcomp(&re, "PMCRING_API[^;]*[^a-z_0-9](pmcring_[a-z_0-9]+)\\(",
		    REG_EXTENDED))
		FAIL("regcomp");
	for (p = h; !regexec(&re, p, 2, mt, 0); p += mt[0].rm_eo) {
		char name[128], needle[140], page[200];
		int len = mt[1].rm_eo - mt[1].rm_so;

		snprintf(name, sizeof(name), "%.*s", len, p + mt[1].rm_so);
		snprintf(needle, sizeof(needle), "\t%s;", name);
		if (!strstr(map, needle))
			FAIL("%s is not in lib/libpmcring.map", name);
		snprintf(page, sizeof(page), "man/man3/%s.3", name);
		if (access(page, R_OK))
			FAIL("%s has no man page %s", name, page);
		n++;
	}
	regfree(&re);
	if (n < 40)
		FAIL("only %d PMCRING_API functions found", n);
	printf("# %d exported functions, all in the version script with a man page\n", n);
	free(h);
	free(map);
	return 0;
}

static int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	while (d && readdir(d))
		n++;
	if (d)
		closedir(d);
	return n;
}

static int test_session_errors(void)
{
	struct {
		struct pmcring_opts o;
		uint64_t future;
	} big = { { .sz = sizeof(big), .dev_path = "/nonexistent" }, 1 };
	struct pmcring_opts o = { .sz = sizeof(o), .dev_path = "/nonexistent" };
	struct pmcring_opts small = { .sz = offsetof(struct pmcring_opts,
						     data_pages),
				      .dev_path = "/nonexistent",
				      .data_pages = 3 };
	int fds = count_fds();

	errno = 0;
	if (pmcring_new(&o) || errno != ENOENT)
		FAIL("missing device: errno %d", errno);
	if (pmcring_new(&small) || errno != ENOENT)
		FAIL("short opts: errno %d", errno);
	if (pmcring_new(&big.o) || errno != EINVAL)
		FAIL("nonzero bytes past the known opts: errno %d", errno);
	big.future = 0;
	if (pmcring_new(&big.o) || errno != ENOENT)
		FAIL("zero bytes past the known opts: errno %d", errno);
	o.dev_path = "/dev/null";
	if (pmcring_new(&o) || errno != ENOTTY)
		FAIL("not a pmcring device: errno %d", errno);
	if (count_fds() != fds)
		FAIL("fd leaked on failure");
	pmcring_free(NULL);
	return 0;
}

static int test_merge_errors(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 1);
	struct pmcring_cpu_buf *bufs[2] = { pmcring_uprod_cpu_buf(p, 0), NULL };
	struct pmcring_merge_opts o = { .sz = sizeof(o),
					.clock = pmcring_uprod_clock };
	struct pmcring_merge_opts noclock = { .sz = sizeof(o) };
	struct pmcring_merge_opts badflag = o;
	struct pmcring_merge *m;

	badflag.flags = 4;	/* 1: AUTO_CONSUME, 2: NO_STAGING */
	if (pmcring_merge_new(bufs, 0, &o) || errno != EINVAL)
		FAIL("n = 0 accepted");
	if (pmcring_merge_new(bufs, 2, &o) || errno != EINVAL)
		FAIL("NULL ring accepted");
	if (pmcring_merge_new(bufs, 1, &noclock) || errno != EINVAL)
		FAIL("merge without clock accepted");
	if (pmcring_merge_new(bufs, 1, NULL) || errno != EINVAL)
		FAIL("merge without opts accepted");
	if (pmcring_merge_new(bufs, 1, &badflag) || errno != EINVAL)
		FAIL("unknown flag accepted");
	m = pmcring_merge_new(bufs, 1, &o);
	if (!m || pmcring_merge_max_delay_ns(m) != 10000000 ||
	    pmcring_merge_buf(m, 0) != bufs[0] || pmcring_merge_buf(m, 1))
		FAIL("merge defaults");
	pmcring_merge_free(m);
	pmcring_merge_free(NULL);
	pmcring_uprod_free(p);
	return 0;
}

static int test_uprod_errors(void)
{
	struct pmcring_uprod *p;
	void *base;
	size_t size;

	if (pmcring_uprod_new(0, 1) || errno != EINVAL)
		FAIL("0 CPUs accepted");
	if (pmcring_uprod_new(1, 3) || errno != EINVAL)
		FAIL("3 pages accepted");
	p = pmcring_uprod_new(2, 1);
	if (!p || pmcring_uprod_nr_cpus(p) != 2)
		FAIL("uprod_new: %m");
	if (pmcring_uprod_reserve(p, 2, 1, 16) || errno != EINVAL)
		FAIL("CPU out of range accepted");
	if (pmcring_uprod_reserve(p, 0, 0, 16) || errno != EINVAL)
		FAIL("type 0 accepted");
	if (pmcring_uprod_reserve(p, 0, 64, 16) || errno != EINVAL)
		FAIL("type 64 accepted");
	if (pmcring_uprod_reserve(p, 0, 1, 8) || errno != EINVAL)
		FAIL("length 8 accepted");
	if (pmcring_uprod_reserve(p, 0, 16, PMCRING_RECORD_MAX) ||
	    errno != EINVAL)
		FAIL("record larger than a 1-page ring accepted");
	if (!pmcring_uprod_reserve(p, 0, 13, 24))
		FAIL("reserve: %m");
	if (pmcring_uprod_reserve(p, 0, 13, 24) || errno != EBUSY)
		FAIL("second reservation accepted");
	pmcring_uprod_commit(p, 0);
	pmcring_uprod_commit(p, 0);	/* nothing reserved: ignored */
	if (pmcring_uprod_write(p, 1, 13, NULL, 5000) != -EINVAL)
		FAIL("oversized body accepted");
	if (pmcring_uprod_buffer(p, 2, &base, &size) != -EINVAL ||
	    pmcring_uprod_cpu_buf(p, 2))
		FAIL("CPU out of range accepted");
	pmcring_uprod_free(p);
	pmcring_uprod_free(NULL);
	return 0;
}

static int test_log_errors(void)
{
	if (pmcring_log_open(-5) || errno != EBADF)
		FAIL("fd -5 accepted");
	pmcring_log_close(NULL);
	if (strcmp(pmcring_type_name(PMCRING_TYPE_CALLCHAIN), "CALLCHAIN") ||
	    strcmp(pmcring_type_name(PMCRING_TYPE_GENERATED), "GENERATED") ||
	    pmcring_type_name(0) || pmcring_type_name(4) ||
	    pmcring_type_name(64) || pmcring_type_name(~0u))
		FAIL("pmcring_type_name");
	return 0;
}

int main(void)
{
	if (test_exports() || test_session_errors() || test_merge_errors() ||
	    test_uprod_errors() || test_log_errors())
		return 1;
	printf("ok api\n");
	return 0;
}
