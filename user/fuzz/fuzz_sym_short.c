// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: sym_short_name() (report/sym.c), perf's short form of
 * a demangled C++ name, on untrusted names (they come from the ELF files
 * a recording names, through the demangler).  The input, cut at its first
 * NUL, is the name.  Checks: no crash or sanitizer report; the result is
 * a substring of the name, as long as the returned length; a cut buffer
 * gets the same bytes, cut and NUL-terminated; shortening in place gives
 * the same.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "../pmcring/report/sym.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *d, size_t n)
{
	char *s = malloc(n + 1), *out = malloc(n + 1), *cut = malloc(8);
	size_t len, k;

	CHECK(s && out && cut);
	memcpy(s, d, n);
	s[n] = 0;
	len = sym_short_name(s, out, n + 1);
	CHECK(len == strlen(out) && len <= strlen(s));
	CHECK(strstr(s, out));
	k = sym_short_name(s, cut, 8);
	CHECK(k == len && !strncmp(cut, out, 7) && strlen(cut) <= 7);
	CHECK(sym_short_name(s, s, n + 1) == len && !strcmp(s, out));
	free(s);
	free(out);
	free(cut);
	return 0;
}
