// SPDX-License-Identifier: GPL-2.0
/*
 * Description: native counterpart of B2's "consumer alone": pmcring
 * record's consumer (libpmcring merge -> pmclog writer -> batch -> io_uring
 * or pwritev()) drains 2 user space rings (pmcring_uprod) filled first with
 * N GENERATED records of 64 bytes each, their timestamps interleaved as two
 * CPUs generating flat out make them, into a pmclog file on tmpfs; against
 * a raw write of the same number of bytes in 1 MiB write()s to the same
 * directory, in the same run.  Wall time of the drain (merge, format,
 * writes, ring space given back), median of RUNS interleaved runs.
 *
 * Usage: pmcring-drain-bench [RECORDS_PER_CPU [uring|sync]]
 *        (default 200000, both; DRAIN_BENCH_DIR: the directory, default
 *        /dev/shm, else $TMPDIR or /tmp; DRAIN_BENCH_RUNS: runs, default 5)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <libpmcring_test.h>

#include "../../pmcring/record/consumer.h"

#define REC_LEN		64u
#define NR_CPUS		2u
#define MAX_RUNS	15u

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint32_t pages_for(uint64_t n)
{
	uint64_t need = n * REC_LEN + 65536, pages = 1;

	while (pages * 4096 < need)
		pages <<= 1;
	return (uint32_t)pages;
}

/* Seconds to drain @n records per CPU into @path, or < 0; *bytes: written. */
static double drain_once(uint64_t n, bool uring, const char *path,
			 uint64_t *bytes)
{
	struct pmcring_uprod *p = pmcring_uprod_new(NR_CPUS, pages_for(n));
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct pmcring_cpu_buf *bufs[NR_CPUS];
	struct pmcring_merge *m = NULL;
	struct fmt_writer *w = NULL;
	struct consumer c;
	struct fmt_opts o;
	uint64_t i, got = 0, k;
	double t0, t = -1;
	unsigned int cpu;
	bool c_inited = false;

	if (!p)
		return -1;
	/* both CPUs flat out: timestamps alternate between the rings */
	for (i = 0; i < n; i++) {
		for (cpu = 0; cpu < NR_CPUS; cpu++) {
			uint8_t *r = pmcring_uprod_reserve(p, cpu,
						PMCRING_TYPE_GENERATED, REC_LEN);

			if (!r)
				goto out;
			fmt_put64(r, 16, i);
			fmt_put32(r, 24, cpu);
			pmcring_uprod_commit(p, cpu);
		}
	}
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		bufs[cpu] = pmcring_uprod_cpu_buf(p, cpu);
	mo.clock = pmcring_uprod_clock;
	mo.clock_ctx = p;
	m = pmcring_merge_new(bufs, NR_CPUS, &mo);
	memset(&o, 0, sizeof(o));
	o.kind = FMT_PMCLOG;
	o.path = path;
	o.nr_cpus = NR_CPUS;
	o.target = "drain-bench";
	o.keep_generated = true;
	w = m ? fmt_writer_new(&o) : NULL;
	if (!w || consumer_init(&c, m, NR_CPUS, w, uring, -1))
		goto out;
	c_inited = true;
	t0 = now_s();
	if (consumer_begin(&c))
		goto out;
	while (got < NR_CPUS * n) {
		if (consumer_drain(&c, 0, &k))
			goto out;
		got += k;
	}
	if (consumer_end(&c, 0))
		goto out;
	t = now_s() - t0;
	*bytes = c.st.bytes;
out:
	if (c_inited)
		consumer_fini(&c);
	fmt_writer_free(w);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	unlink(path);
	return t;
}

/* Seconds to write @bytes in 1 MiB write()s to @path, or < 0. */
static double raw_once(uint64_t bytes, const char *path)
{
	static char buf[1 << 20];
	uint64_t done = 0;
	double t0, t;
	int fd;

	memset(buf, 0xee, sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	t0 = now_s();
	while (done < bytes) {
		size_t len = bytes - done < sizeof(buf) ? bytes - done :
							  sizeof(buf);
		ssize_t wr = write(fd, buf, len);

		if (wr <= 0) {
			close(fd);
			return -1;
		}
		done += (uint64_t)wr;
	}
	close(fd);
	t = now_s() - t0;
	unlink(path);
	return t;
}

static const char *pick_dir(void)
{
	struct stat st;
	const char *d = getenv("DRAIN_BENCH_DIR");

	if (d)
		return d;
	if (!stat("/dev/shm", &st) && S_ISDIR(st.st_mode) &&
	    !access("/dev/shm", W_OK))
		return "/dev/shm";
	d = getenv("TMPDIR");
	return d ? d : "/tmp";
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "uring", "sync" };
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 200000;
	unsigned int runs = getenv("DRAIN_BENCH_RUNS") ?
			    (unsigned int)atoi(getenv("DRAIN_BENCH_RUNS")) : 5;
	double d[2][MAX_RUNS], raw[2][MAX_RUNS];
	const char *dir = pick_dir();
	uint64_t bytes = 0;
	char path[4096];
	unsigned int r, k;

	if (!n || !runs || runs > MAX_RUNS) {
		fprintf(stderr, "pmcring-drain-bench: bad arguments\n");
		return 2;
	}
	snprintf(path, sizeof(path), "%s/pmcring-drain-bench.%d", dir,
		 (int)getpid());
	printf("drain of %llu + %llu GENERATED records of %u bytes into "
	       "pmclog in %s, against raw 1 MiB writes, median of %u\n",
	       (unsigned long long)n, (unsigned long long)n, REC_LEN, dir,
	       runs);
	for (r = 0; r < runs; r++) {
		for (k = 0; k < 2; k++) {
			if (argc > 2 && strcmp(argv[2], modes[k]))
				continue;
			d[k][r] = drain_once(n, k == 0, path, &bytes);
			raw[k][r] = d[k][r] < 0 ? -1 : raw_once(bytes, path);
			if (d[k][r] < 0 || raw[k][r] < 0) {
				fprintf(stderr, "pmcring-drain-bench: %s "
					"failed\n", modes[k]);
				return 1;
			}
		}
	}
	for (k = 0; k < 2; k++) {
		double dm, rm;

		if (argc > 2 && strcmp(argv[2], modes[k]))
			continue;
		qsort(d[k], runs, sizeof(d[k][0]), cmp_double);
		qsort(raw[k], runs, sizeof(raw[k][0]), cmp_double);
		dm = d[k][runs / 2];
		rm = raw[k][runs / 2];
		printf("%-6s %10.0f records/s %8.1f MB/s   raw %8.1f MB/s   "
		       "%5.1f%% of raw\n", modes[k], NR_CPUS * n / dm,
		       bytes / dm / 1e6, bytes / rm / 1e6, 100 * rm / dm);
	}
	return 0;
}
