// SPDX-License-Identifier: GPL-2.0
/*
 * Description: pmcring dump and the blob JSON show PROCEXEC as FreeBSD
 * lays it out: base= is offset 24 (AT_BASE, the interpreter), dyn= offset
 * 32 (the PIE's load base), for the golden bytes of test_lib_log.
 */
#include <string.h>
#include <time.h>
#include "test_fmt_common.h"

static const uint8_t procexec[48] = {
	0x30, 0x00, 0x09, 0xee, 0x00, 0x00, 0x00, 0x00,
	0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,
	0x2a, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
	0x00, 0x10, 0x00, 0x40, 0x00, 0x08, 0x00, 0x00,	/* 24: AT_BASE */
	0x00, 0x40, 0x55, 0x55, 0x55, 0x55, 0x00, 0x00,	/* 32: PIE base */
	'/', 'b', 'i', 'n', '/', 'l', 's', 0x00,
};

int main(void)
{
	uint64_t rec[6];
	struct timespec rt = { 0 };
	char buf[1024];

	memcpy(rec, procexec, sizeof(rec));
	fmt_rec_text(buf, sizeof(buf), rec, sizeof(rec));
	printf("# text: %s\n", buf);
	CHECK(strstr(buf, "base=0x80040001000") != NULL, "text: %s", buf);
	CHECK(strstr(buf, "dyn=0x555555554000") != NULL, "text: %s", buf);
	fmt_rec_json(buf, sizeof(buf), rec, sizeof(rec), 0, &rt);
	printf("# json: %s\n", buf);
	CHECK(strstr(buf, "\"base\":8797166768128") != NULL, "json: %s", buf);
	CHECK(strstr(buf, "\"dyn\":93824992231424") != NULL, "json: %s", buf);
	return t_failed;
}
