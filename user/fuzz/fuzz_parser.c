// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: libFuzzer target of the pmclog parser.  Byte 0 picks a
 * chunk size; the rest is fed in chunks of that size to a memory parser
 * and, whole, to a second one.  Checks: no crash or sanitizer report, both
 * parsers give the same events and end state, every event's bytes are the
 * input's just before pl_offset (the offset past the record, as FreeBSD's),
 * pl_tsc is the header's timestamp and pl_ts (converted with INITIALIZE's
 * tsc_freq) the same either way, ERROR carries a reason.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "libpmcring.h"

#define CHECK(c) do { if (!(c)) abort(); } while (0)

struct seen {
	uint64_t off, ts;
	uint32_t type, len;
};

static size_t run(const uint8_t *d, size_t n, size_t chunk, struct seen *out,
		  size_t max, enum pmcring_log_state *end)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	struct pmcring_log_ev ev;
	size_t fed = 0, cnt = 0;

	CHECK(l);
	for (;;) {
		if (pmcring_log_read(l, &ev) == 0) {
			CHECK(ev.pl_len >= 16 && ev.pl_len <= PMCRING_RECORD_MAX);
			CHECK(ev.pl_offset >= ev.pl_len && ev.pl_offset <= fed);
			CHECK(!memcmp(ev.pl_data, d + ev.pl_offset - ev.pl_len,
				      ev.pl_len));
			CHECK(ev.pl_count == cnt + 1);
			CHECK(!memcmp(&ev.pl_tsc, (const uint8_t *)ev.pl_data + 8,
				      8));
			if (cnt < max)
				out[cnt] = (struct seen){ ev.pl_offset, ev.pl_ts,
							  ev.pl_type,
							  ev.pl_len };
			cnt++;
			continue;
		}
		if (ev.pl_state == PMCRING_LOG_ERROR)
			CHECK(ev.pl_reason && *ev.pl_reason);
		if (ev.pl_state != PMCRING_LOG_REQUIRE_DATA || fed == n)
			break;
		size_t c = n - fed < chunk ? n - fed : chunk;

		CHECK(pmcring_log_feed(l, d + fed, c) == 0);
		fed += c;
	}
	*end = ev.pl_state;
	pmcring_log_close(l);
	return cnt;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct seen a[4096], b[4096];
	enum pmcring_log_state ea, eb;
	size_t na, nb, chunk;

	if (!size)
		return 0;
	chunk = 1 + data[0] * 17u;
	data++;
	size--;
	na = run(data, size, chunk, a, 4096, &ea);
	nb = run(data, size, size ? size : 1, b, 4096, &eb);
	CHECK(na == nb && ea == eb);
	CHECK(!memcmp(a, b, (na < 4096 ? na : 4096) * sizeof(a[0])));
	return 0;
}
