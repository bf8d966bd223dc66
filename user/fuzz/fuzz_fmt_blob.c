// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: the blob and pmclog readers of `pmcring dump` and the
 * text/JSON rendering of every record they accept.  The input is split into
 * the DAT, OFFSET, TIMING and TYPE files by its first four bytes.  The JSON
 * of the fast renderer (a buffer of FMT_JSON_MAX) must be the emitter's
 * (a buffer one byte smaller, which the fast renderer does not take).
 */
#include <stdlib.h>

#include "../pmcring/formats/fmt.h"

static char buf[FMT_JSON_MAX + 64], em[FMT_JSON_MAX - 1];

static int render(const struct fmt_item *it, void *ctx)
{
	struct timespec rt = { 1, 2 };
	uint32_t len;
	size_t n;

	(void)ctx;
	if (it->btype == 'j')
		return 0;
	if (fmt_rec_check(it->data, it->len, &len) == 0) {
		fmt_rec_text(buf, sizeof(buf), it->data, len);
		n = fmt_rec_json(buf, sizeof(buf), it->data, len, 3, &rt);
		if (n >= sizeof(em) ||
		    fmt_rec_json(em, sizeof(em), it->data, len, 3, &rt) != n ||
		    memcmp(buf, em, n))
			abort();
	}
	return 0;
}

static void *with_magic(const char *magic, const uint8_t *p, size_t n)
{
	uint8_t *b = malloc(n + 8);

	memcpy(b, magic, 8);
	memcpy(b + 8, p, n);
	return b;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct fmt_blob_set s = { 0 };
	size_t n[4], bad, i, at = 4;
	void *parts[4];

	fmt_pmclog_read(data, size, render, NULL, &bad);
	if (size < 4)
		return 0;
	/* OFFSET, TIMING, TYPE sizes from bytes 1-3; DAT takes the rest */
	n[1] = data[1] * 8u > size - at ? size - at : data[1] * 8u;
	n[2] = data[2] * 16u > size - at - n[1] ? size - at - n[1] : data[2] * 16u;
	n[3] = data[3] > size - at - n[1] - n[2] ? size - at - n[1] - n[2] : data[3];
	n[0] = size - at - n[1] - n[2] - n[3];
	parts[1] = with_magic("bloboff", data + at, n[1]);
	parts[2] = with_magic("blobtim", data + at + n[1], n[2]);
	parts[3] = with_magic("blobtyp", data + at + n[1] + n[2], n[3]);
	parts[0] = with_magic("blobdat", data + at + n[1] + n[2] + n[3], n[0]);
	s.dat = parts[0];
	s.dat_len = n[0] + 8;
	s.off = parts[1];
	s.off_len = n[1] + 8;
	if (data[0] & 1) {
		s.tim = parts[2];
		s.tim_len = n[2] + 8;
	}
	s.typ = parts[3];
	s.typ_len = n[3] + 8;
	fmt_blob_read(&s, render, NULL, &bad);
	for (i = 0; i < 4; i++)
		free(parts[i]);
	return 0;
}
