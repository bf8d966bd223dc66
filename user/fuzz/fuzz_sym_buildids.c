// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the parser of a recording's FILE.buildids
 * (report/buildid.c), which `report` reads from beside any file it is
 * given, and sym_load_build_ids() on the same bytes as a file.  Checks:
 * no crash, hang or sanitizer report; every entry the parser hands out
 * has an absolute path without NUL or newline, shorter than PATH_MAX,
 * and a build id of 1 to 64 bytes; a file that parses loads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../pmcring/report/buildid.h"
#include "../pmcring/report/sym.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static int entry(void *arg, const char *path, size_t path_len,
		 const unsigned char *id, size_t id_len)
{
	(void)id;
	CHECK(path_len > 0 && path[0] == '/' && path_len < 1024);
	CHECK(!memchr(path, '\n', path_len) && !memchr(path, 0, path_len));
	CHECK(id_len > 0 && id_len <= BUILDID_MAX);
	++*(unsigned int *)arg;
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	unsigned int entries = 0;
	struct sym_ctx *c;
	uint64_t start;
	char path[64];
	int fd, err, lerr;

	err = buildid_parse((const char *)d, n, &start, entry, &entries);
	CHECK(!err || err == -EINVAL);
	CHECK(entries <= BUILDID_ENTRIES_MAX);

	fd = memfd_create("fuzz", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, d, n) == (ssize_t)n);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	c = sym_new();
	CHECK(c);
	lerr = sym_load_build_ids(c, path);
	/* an empty file is refused before parsing */
	CHECK(n ? lerr == err : lerr == -EINVAL);
	if (!lerr)
		sym_set_clock(c, 1, start);
	sym_free(c);
	close(fd);
	return 0;
}
