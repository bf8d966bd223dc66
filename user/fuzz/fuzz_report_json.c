// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer target: `pmcring report`'s reader of --blob-json messages
 * (report_json_record(): json-c, then the record into the report model) on
 * untrusted bytes, one message per input, then a second message and the
 * views over what was taken.  Checks: no crash, hang or sanitizer report;
 * the result is 0 or a negative errno; the report prints.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pmcring.h>

#include "../pmcring/report/report.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static uint64_t pcs[PMCRING_CALLCHAIN_DEPTH_MAX];
	static const char frame[] =
		"{\"type\":\"callchain\",\"ts\":9,\"cpu\":0,\"pid\":1,"
		"\"tid\":1,\"pmcid\":1,\"pc\":\"0x1000;0x2000\"}";
	struct report_opts o = { .pid = -1, .cpu = -1, .time_to = UINT64_MAX };
	struct report *r = report_new(&o);
	FILE *out;
	int err;

	CHECK(r);
	/* the message exactly as long as the input: no terminator */
	err = report_json_record(r, (const char *)data, size, pcs,
				 PMCRING_CALLCHAIN_DEPTH_MAX);
	CHECK(err == 0 || err == -EINVAL || err == -ENOMEM);
	err = report_json_record(r, frame, sizeof(frame) - 1, pcs,
				 PMCRING_CALLCHAIN_DEPTH_MAX);
	CHECK(err == 0 || err == -ENOMEM);
	out = fopen("/dev/null", "w");
	CHECK(out);
	report_print(r, out, "fuzz", true);
	report_folded(r, out);
	fclose(out);
	report_free(r);
	return 0;
}
