// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: <libpmcring.h> builds as strict ISO C99 (-std=c99
 * -pedantic-errors, no struct timespec, no GNU extension) and a C99
 * program parses a pmclog stream with it; pmcring_version() matches the
 * headers; a parser event struct of an older, smaller size is filled only
 * up to its sz.
 */
#include <stdio.h>
#include <string.h>
#include <libpmcring.h>

static unsigned char buf[112 + 24];

static void put32(size_t off, uint32_t v) { memcpy(buf + off, &v, 4); }
static void put64(size_t off, uint64_t v) { memcpy(buf + off, &v, 8); }

int main(void)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	struct pmcring_log_ev ev, small;
	size_t cut = offsetof(struct pmcring_log_ev, pl_u);

	if (pmcring_version() != LIBPMCRING_VERSION ||
	    pmcring_version() != PMCRING_VERSION_CODE(0, 2)) {
		fprintf(stderr, "FAIL: version %#x\n", (unsigned)pmcring_version());
		return 1;
	}
	put32(0, PMCRING_HEADER(PMCRING_TYPE_INITIALIZE, 112));
	put32(16, PMCRING_LOG_VERSION);
	put64(24, 1000000000u);
	put64(32, 1700000000u);
	put64(40, 999999999u);
	put32(112, PMCRING_HEADER(PMCRING_TYPE_USERDATA, 24));
	put64(120, 5);
	put32(128, 0xabcd);
	if (!l || pmcring_log_feed(l, buf, sizeof(buf)))
		return 1;
	if (pmcring_log_read(l, &ev) || ev.sz != sizeof(ev) ||
	    ev.pl_u.pl_i.pl_ts_sec != 1700000000u ||
	    ev.pl_u.pl_i.pl_ts_nsec != 999999999u) {
		fprintf(stderr, "FAIL: INITIALIZE\n");
		return 1;
	}
	/* a caller that knows the struct only up to the union */
	memset(&small, 0x5a, sizeof(small));
	small.sz = cut;
	if (pmcring_log_next(l, &small) || small.pl_type != PMCRING_TYPE_USERDATA ||
	    small.pl_ts != 5 || small.pl_u.pl_pad[0] != 0x5a5a5a5a5a5a5a5aull) {
		fprintf(stderr, "FAIL: short sz\n");
		return 1;
	}
	small.sz = 8;
	if (pmcring_log_next(l, &small) != -1) {
		fprintf(stderr, "FAIL: sz 8 accepted\n");
		return 1;
	}
	pmcring_log_close(l);
	printf("ok c99\n");
	return 0;
}
