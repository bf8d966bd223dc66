// SPDX-License-Identifier: GPL-2.0
/*
 * Description: native CPU cost of each pmcring(1) writer per record: N
 * GENERATED records of 64 bytes (what B5's `--generate N,64` makes) from 2
 * simulated CPUs, alternating, queued into output batches that are reset
 * instead of written, so only the writer's own work is timed (CPU time of
 * this thread, median of 5).  "json render" is fmt_rec_json() alone.
 * "pmclog cc" and "pmclog cc+p" write CALLCHAINs of 64 bytes (4 frames)
 * instead, without and with FILE.periods (a PERIOD record every 64
 * samples of each CPU).
 *
 * Usage: pmcring-fmt-bench [RECORDS [WRITER]]   (default 2000000, all)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "../../pmcring/formats/fmt.h"

#define REC_LEN	64u
#define RUNS	5

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* CALLCHAIN @i of pmcid 1 on CPU i % 2, or (2 in 128) a PERIOD of it. */
static uint32_t make_cc(uint8_t *r, uint64_t i)
{
	memset(r, 0, REC_LEN);
	if (i % 128 < 2) {
		fmt_put32(r, 0, PMCRING_HEADER(PMCRING_TYPE_PERIOD, 32));
		fmt_put32(r, 16, 1);
		fmt_put64(r, 24, 1000 + i);
		return PMCRING_TYPE_PERIOD;
	}
	fmt_put32(r, 0, PMCRING_HEADER(PMCRING_TYPE_CALLCHAIN, REC_LEN));
	fmt_put64(r, 8, 1000000000ull + 1000 * i);
	fmt_put32(r, 16, 42);
	fmt_put32(r, 20, 42);
	fmt_put32(r, 24, 1);
	fmt_put32(r, 28, (uint32_t)(i % 2) << 16);
	fmt_put64(r, 32, 0x401000 + i);
	return PMCRING_TYPE_CALLCHAIN;
}

/* Record @i as CPU i % 2's ring would hold it. */
static void make_rec(uint8_t *r, uint64_t i)
{
	memset(r, 0, REC_LEN);
	fmt_put32(r, 0, PMCRING_HEADER(PMCRING_TYPE_GENERATED, REC_LEN));
	fmt_put64(r, 8, 1000000000ull + 1000 * i);
	fmt_put64(r, 16, i / 2);
	fmt_put32(r, 24, (uint32_t)(i % 2));
}

/*
 * ns per record of writer @kind (-1: the JSON renderer alone); @cc:
 * CALLCHAINs (1), with FILE.periods (2).
 */
static double run(int kind, bool json, int cc, uint64_t n, const char *dir)
{
	static uint8_t recs[2][REC_LEN];
	static char js[FMT_JSON_MAX];
	struct fmt_writer *w = NULL;
	struct out_batch b;
	struct fmt_opts o;
	struct timespec rt = { 1700000000, 0 };
	struct fmt_rec fr;
	char path[4096];
	double t0, t;
	uint64_t i;
	size_t sink = 0;
	int err;

	memset(&o, 0, sizeof(o));
	snprintf(path, sizeof(path), "%s/%s", dir,
		 kind == FMT_PMCLOG ? "f.pmclog" : kind == FMT_BARMAN ?
		 "f.barman" : "blob");
	o.kind = kind < 0 ? FMT_BLOB : (enum fmt_kind)kind;
	o.path = path;
	o.start_ns = 1000000000ull;
	o.start_rt.tv_sec = 1700000000;
	o.nr_cpus = 2;
	o.target = "bench";
	o.container = "c";
	o.streams[0].name = "all";
	o.streams[0].types = PMCRING_TYPES_ALL;
	o.nr_streams = 1;
	o.blob_json = json;
	o.periods = cc == 2;
	if (out_batch_init(&b, 4096, 2u << 20))
		return -1;
	if (kind >= 0) {
		w = fmt_writer_new(&o);
		if (!w || fmt_begin(w, &b) || out_batch_run_sync(&b))
			return -1;
		out_batch_reset(&b);
	}
	t0 = cpu_s();
	for (i = 0; i < n; i++) {
		uint8_t *r = recs[i % 2];
		uint32_t type = PMCRING_TYPE_GENERATED;

		if (cc)
			type = make_cc(r, i);
		else
			make_rec(r, i);
		if (!w) {
			rt.tv_nsec = (long)(i % 1000000) * 1000;
			sink += fmt_rec_json(js, sizeof(js), r, REC_LEN,
					     (uint32_t)(i % 2), &rt);
			continue;
		}
		fr = (struct fmt_rec){ .data = r,
				       .len = PMCRING_HEADER_LEN(fmt_get32(r, 0)),
				       .type = type,
				       .cpu = (uint32_t)(i % 2),
				       .ts = fmt_get64(r, 8) };
		err = fmt_record(w, &b, &fr);
		if (err == -EAGAIN) {
			/* what the consumer does, minus the write */
			fmt_flush(w, &b);
			out_batch_reset(&b);
			err = fmt_record(w, &b, &fr);
		}
		if (err)
			return -1;
	}
	t = cpu_s() - t0;
	if (w)
		fmt_writer_free(w);
	out_batch_free(&b);
	if (sink == 1)		/* keep the renderer's result alive */
		putchar(' ');
	return t / (double)n * 1e9;
}

int main(int argc, char **argv)
{
	static const struct {
		const char	*name;
		int		kind;
		bool		json;
		int		cc;
	} w[] = {
		{ "pmclog", FMT_PMCLOG, false, 0 },
		{ "barman", FMT_BARMAN, false, 0 },
		{ "blob", FMT_BLOB, false, 0 },
		{ "json", FMT_BLOB, true, 0 },
		{ "json render", -1, true, 0 },
		{ "pmclog cc", FMT_PMCLOG, false, 1 },
		{ "pmclog cc+p", FMT_PMCLOG, false, 2 },
	};
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 2000000;
	char dir[] = "/tmp/pmcring-fmt-bench.XXXXXX", cmd[64];
	double ns[RUNS];
	unsigned int i, k;

	if (!n || !mkdtemp(dir)) {
		perror("pmcring-fmt-bench");
		return 1;
	}
	printf("writer CPU per record, %llu records of %u bytes (GENERATED; "
	       "cc: CALLCHAIN), median of %d\n", (unsigned long long)n,
	       REC_LEN, RUNS);
	for (i = 0; i < sizeof(w) / sizeof(w[0]); i++) {
		if (argc > 2 && strcmp(argv[2], w[i].name))
			continue;
		for (k = 0; k < RUNS; k++) {
			ns[k] = run(w[i].kind, w[i].json, w[i].cc, n, dir);
			if (ns[k] < 0) {
				fprintf(stderr, "pmcring-fmt-bench: %s failed\n",
					w[i].name);
				return 1;
			}
		}
		qsort(ns, RUNS, sizeof(ns[0]), cmp_double);
		printf("%-12s %8.1f ns/record  (min %.1f, max %.1f)\n",
		       w[i].name, ns[RUNS / 2], ns[0], ns[RUNS - 1]);
	}
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? 1 : 0;
}
