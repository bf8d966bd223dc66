// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the Rust v0 demangler (report/rust_demangle.c) on
 * untrusted symbol names (a recording names the ELF files they come
 * from).  The input, cut at its first NUL, is the name, with "_R" put in
 * front unless it starts so.  Checks: no crash, hang or sanitizer report;
 * a result is a NUL-terminated string shorter than RUST_DEMANGLE_OUT_MAX;
 * demangling is deterministic.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../pmcring/report/rust_demangle.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 3), *a, *b;
	size_t k = 0;

	CHECK(s);
	if (n < 2 || memcmp(d, "_R", 2)) {
		memcpy(s, "_R", 2);
		k = 2;
	}
	memcpy(s + k, d, n);
	s[k + n] = 0;
	a = rust_demangle_v0(s);
	b = rust_demangle_v0(s);
	CHECK(!a == !b);
	if (a) {
		CHECK(strlen(a) < RUST_DEMANGLE_OUT_MAX);
		CHECK(!strcmp(a, b));
	}
	free(a);
	free(b);
	free(s);
	return 0;
}
