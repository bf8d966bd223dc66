// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the FILE.periods reader of `pmcring report`
 * (fmt_periods_read()) on any bytes, with the recording's start taken from
 * the input or not checked: it accepts only the magic, never hands out an
 * entry past the bytes it was given, counts whole entries only, and says
 * -ESTALE exactly when the start differs.
 */
#include <errno.h>
#include <stdlib.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "../pmcring/formats/fmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct timespec start = { 1700000000, 500000000 };
	const uint8_t *p;
	uint64_t sum = 0, id;
	size_t n, i;
	int rc;

	rc = fmt_periods_read(data, size, NULL, &p, &n);
	if (rc) {
		if (rc != -EINVAL || p || n)
			abort();
		if (size >= FMT_PERIODS_HEADER && !memcmp(data, "pmcrprd", 8))
			abort();	/* the magic, refused */
		return 0;
	}
	if (size < FMT_PERIODS_HEADER || memcmp(data, "pmcrprd", 8) ||
	    p != data + FMT_PERIODS_HEADER ||
	    n != (size - FMT_PERIODS_HEADER) / 8)
		abort();
	for (i = 0; i < n; i++)		/* ASan: every entry in bounds */
		sum += fmt_get64(p, 8 * i);
	id = fmt_get64(data, 8);
	rc = fmt_periods_read(data, size, &start, &p, &n);
	if ((id == 1700000000500000000ull) != (rc == 0) ||
	    (rc && rc != -ESTALE))
		abort();
	return sum == 42 ? 0 : 0;
}
