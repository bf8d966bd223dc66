// SPDX-License-Identifier: MIT
/*
 * reader.c - the same consumer as consumer.c, on libpmcring's poll-style
 * reader: every CPU's records through one callback, in exact (timestamp,
 * CPU) order, until the end of the stream.
 *
 *   1. pmcring_new(): open, configure, map every CPU's ring;
 *   2. pmcring_reader_new(): the exact merge of all rings, a callback;
 *   3. pmcring_enable(), then pmcring_reader_poll() in a loop;
 *   4. pmcring_disable() (here from the same thread; any thread may), then
 *      poll until -ENODATA: every record committed before is handed out;
 *   5. pmcring_cpu_stats(): the kernel's per-CPU counts against ours.
 *
 * Build: cc reader.c $(pkg-config --cflags --libs libpmcring)
 *
 * Usage: reader [-a | -p PID] [-t SECONDS] [-w COUNT] [-q]  (as consumer)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <libpmcring.h>

struct state {
	bool		quiet;
	uint64_t	records, last_ts, out_of_order;
	unsigned int	last_ring;
	uint64_t	userdata_seen;	/* bit i: value i + 1 came back */
	unsigned int	userdata_dups;
};

/* Called once per record, in (timestamp, ring index) order. */
static int on_record(void *ctx, const struct pmcring_record *r)
{
	struct state *st = ctx;
	const char *name = pmcring_type_name(r->type);

	if (r->ts < st->last_ts ||
	    (r->ts == st->last_ts && r->ring < st->last_ring))
		st->out_of_order++;
	st->last_ts = r->ts;
	st->last_ring = r->ring;
	st->records++;
	if (r->type == PMCRING_TYPE_USERDATA) {
		const struct pmcring_rec_userdata *u = r->data;

		if (u->pl_userdata >= 1 && u->pl_userdata <= 64) {
			uint64_t bit = 1ull << (u->pl_userdata - 1);

			st->userdata_dups += !!(st->userdata_seen & bit);
			st->userdata_seen |= bit;
		}
	}
	if (!st->quiet)
		printf("%" PRIu64 ".%09" PRIu64 " cpu %u %-14s len %u\n",
		       r->ts / 1000000000, r->ts % 1000000000, r->cpu,
		       name ? name : "?", r->len);
	return 0;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static int fail(const char *what, int err)
{
	fprintf(stderr, "reader: %s: %s\n", what, strerror(err));
	if (err == ENOENT)
		fprintf(stderr, "reader: is the pmcring module loaded?\n");
	return 1;
}

int main(int argc, char **argv)
{
	struct pmcring_opts o = { .sz = sizeof(o), .data_pages = 16 };
	uint64_t end, lost = 0, mismatch = 0;
	struct state st = { 0 };
	struct pmcring_reader *rd;
	struct pmcring *s;
	uint32_t writes = 0, v;
	double secs = 1.0;
	unsigned int cpu;
	int opt, n, pid = getpid();
	bool all = false;

	while ((opt = getopt(argc, argv, "ap:t:w:q")) != -1) {
		switch (opt) {
		case 'a': all = true; break;
		case 'p': pid = atoi(optarg); break;
		case 't': secs = atof(optarg); break;
		case 'w': writes = (uint32_t)atoi(optarg); break;
		case 'q': st.quiet = true; break;
		default:
			fprintf(stderr, "usage: reader [-a | -p PID] [-t SECONDS] "
				"[-w COUNT] [-q]\n");
			return 2;
		}
	}
	if (writes > 64)
		writes = 64;
	if (pmcring_version() < PMCRING_VERSION_CODE(0, 2)) {
		fprintf(stderr, "reader: libpmcring too old\n");
		return 1;
	}

	/* 1-2 */
	o.flags = all ? PMCRING_CFG_F_SYSTEM_WIDE : PMCRING_CFG_F_PID;
	o.pid = all ? 0 : pid;
	s = pmcring_new(&o);
	if (!s)
		return fail("pmcring_new", errno);
	rd = pmcring_reader_new(s, on_record, &st, NULL);
	if (!rd)
		return fail("pmcring_reader_new", errno);

	/* 3 */
	if ((n = pmcring_enable(s)))
		return fail("pmcring_enable", -n);
	for (v = 1; v <= writes; v++)
		if ((n = pmcring_writelog(s, v)))
			return fail("pmcring_writelog", -n);
	end = now_ms() + (uint64_t)(secs * 1000);
	while (now_ms() < end) {
		n = pmcring_reader_poll(rd, 100);
		if (n < 0)
			return fail("pmcring_reader_poll", -n);
	}

	/* 4: the end of the stream comes after the disable */
	if ((n = pmcring_disable(s)))
		return fail("pmcring_disable", -n);
	while ((n = pmcring_reader_poll(rd, 1000)) >= 0)
		;
	if (n != -ENODATA)
		return fail("pmcring_reader_poll", -n);

	/* 5: the kernel counted what we were handed, DROPNOTIFY included */
	for (cpu = 0; cpu < pmcring_nr_cpus(s); cpu++) {
		struct pmcring_cpu_stats cs = { .sz = sizeof(cs) };

		if ((n = pmcring_cpu_stats(s, cpu, &cs)))
			return fail("pmcring_cpu_stats", -n);
		lost += cs.lost;
		if (cs.records != cs.prod_records || cs.bytes != cs.prod_bytes)
			mismatch++;
	}
	pmcring_reader_free(rd);
	pmcring_free(s);

	printf("reader: %" PRIu64 " records, %" PRIu64 " lost, %s, %s\n",
	       st.records, lost,
	       st.out_of_order ? "OUT OF ORDER" : "in timestamp order",
	       mismatch ? "counters DIFFER from the kernel's" :
			  "counters match the kernel's");
	if (writes) {
		uint64_t want = writes == 64 ? ~0ull : (1ull << writes) - 1;

		printf("reader: userdata %" PRIu32 " written, %s\n", writes,
		       st.userdata_seen == want && !st.userdata_dups ?
		       "all read back once" : "MISSING or duplicated");
		if (st.userdata_seen != want || st.userdata_dups)
			return 1;
	}
	return st.out_of_order || mismatch ? 1 : 0;
}
