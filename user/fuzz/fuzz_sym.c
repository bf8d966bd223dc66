// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the symbolizer of `pmcring report`/`script` on an
 * untrusted ELF file (a recording's MAP_IN may name any file): program
 * headers, symbol tables and C++ names, the build id and .gnu_debuglink
 * of the detached debug file lookup, and the DWARF line tables (libdwfl,
 * libdw).  The input is the file.  Addresses through its executable
 * segment and from the input itself are resolved, as frames, inlined
 * frames and source lines.  Checks: no crash, hang or sanitizer report; every frame
 * has a valid kind and a name; a source line is a file and a line > 0.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../pmcring/report/sym.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

/* Where the fuzzed file's executable segment is mapped. */
#define START	0x555555554000ull

static void check_frame(const struct sym_frame *f)
{
	CHECK(f);
	CHECK(f->kind < SYM_KIND_NR);
	CHECK(f->module);
	CHECK(strlen(f->name) < 16384);
}

static void probe(struct sym_ctx *c, struct sym_image *im, uint64_t addr,
		  bool ret)
{
	const struct sym_frame *inl[8];
	struct sym_loc loc, il[8];
	const char *file, *name;
	unsigned int k, i;
	int line;

	check_frame(sym_resolve_loc(c, 1, addr, ret, &loc));
	k = sym_inlines(c, &loc, inl, il, 8);
	CHECK(k <= 8);
	for (i = 0; i < k; i++) {
		check_frame(inl[i]);
		CHECK(il[i].inlined);
		if (sym_srcline(&il[i], &file, &line))
			CHECK(file && line > 0);
	}
	if (sym_srcline(&loc, &file, &line))
		CHECK(file && line > 0);
	name = sym_image_lookup(im, loc.vaddr);
	CHECK(!name || strlen(name) < 16384);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	struct sym_image *im;
	struct sym_ctx *c;
	uint64_t bias, a;
	char path[64];
	size_t i;
	int fd;

	fd = memfd_create("fuzz", MFD_CLOEXEC);
	CHECK(fd >= 0);
	CHECK(write(fd, d, n) == (ssize_t)n);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	c = sym_new();
	CHECK(c);
	im = sym_image_get(c, path);
	CHECK(im);
	sym_map_in(c, 1, START, path);
	if (sym_image_bias(im, START, &bias)) {
		/* the first 64 KiB of the segment, every 61st byte */
		for (a = 0; a < 0x10000; a += 61)
			probe(c, im, START + a, a & 1);
	}
	/* addresses from the input itself, as the file's own addresses */
	for (i = 0; i + 8 <= n && i < 512; i += 8) {
		memcpy(&a, d + i, 8);
		probe(c, im, START + (a & 0xfffff), false);
		sym_image_srcline(im, a, &(const char *){ NULL }, &(int){ 0 });
	}
	for (i = 0; i < sym_nr_warnings(c); i++)
		CHECK(sym_warning(c, i));
	sym_free(c);
	close(fd);
	return 0;
}
