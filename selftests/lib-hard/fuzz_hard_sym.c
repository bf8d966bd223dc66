// SPDX-License-Identifier: GPL-2.0
/*
 * Description: libFuzzer target of `pmcring report`'s symbolizer inputs:
 * a kallsyms/System.map text file and an ELF image named by MAP_IN, both
 * untrusted (a recording comes with its .kallsyms; MAP_IN paths name any
 * file).  Byte 0 picks the target (even: kallsyms, odd: ELF); the rest is
 * the file.  Addresses from the input are then resolved.  Checks: no
 * crash or sanitizer report, every frame has a name and a valid kind.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "../pmcring/sym.h"	/* from user/fuzz/ */

#define CHECK(c) do { if (!(c)) abort(); } while (0)

static void check_frame(const struct sym_frame *f)
{
	CHECK(f);
	CHECK(f->kind < SYM_KIND_NR);
	CHECK(f->module);
	CHECK(strlen(f->name) < 4096);
}

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	static const uint64_t probes[] = {
		0, 1, 0x400000, 0x401000, 0x555555554000ull,
		SYM_KERNEL_MIN, 0xffffffff81000000ull, ~0ull,
	};
	struct sym_ctx *c;
	char path[64];
	unsigned int i;
	int fd;

	if (n < 1)
		return 0;
	fd = memfd_create("fuzz", 0);
	CHECK(fd >= 0);
	CHECK(write(fd, d + 1, n - 1) == (ssize_t)(n - 1));
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	c = sym_new();
	CHECK(c);
	if (!(d[0] & 1)) {
		sym_load_kallsyms(c, path);
		for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++)
			check_frame(sym_resolve(c, 1, probes[i], i & 1));
	} else {
		sym_exec(c, 1, path, 0x400000);
		sym_map_in(c, 1, 0x400000, path);
		sym_map_in(c, 1, 0x555555554000ull, path);
		for (i = 0; i < sizeof(probes) / sizeof(probes[0]); i++) {
			check_frame(sym_resolve(c, 1, probes[i], false));
			check_frame(sym_resolve(c, 1, probes[i] + 0x123, true));
		}
		/* Addresses taken from the input itself. */
		for (i = 1; i + 8 <= n && i < 256; i += 8) {
			uint64_t a;

			memcpy(&a, d + i, 8);
			check_frame(sym_resolve(c, 1, 0x400000 + (a & 0xfffff), false));
		}
	}
	sym_free(c);
	close(fd);
	return 0;
}
