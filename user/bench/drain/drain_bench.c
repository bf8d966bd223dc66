// SPDX-License-Identifier: GPL-2.0
/*
 * Description: native counterpart of B2's "consumer alone": pmcring
 * record's consumer (libpmcring merge -> format writer -> batch -> io_uring
 * or pwritev()) drains 2 user space rings (pmcring_uprod) filled first with
 * N records each, their timestamps interleaved as two CPUs sampling flat
 * out make them, into a pmclog file, a barman file or an LDMS blob set;
 * against a raw write of the same number of output bytes in 1 MiB
 * write()s to the same directory, in the same run (each drain is followed
 * by its raw write, so the host's load falls on both alike).  Wall time of
 * the drain (merge, format, writes, ring space given back), median of RUNS
 * runs.  The consumer's view of the rings is faulted in before the clock
 * starts, as it is after the first lap of a real recording.
 *
 * Usage: pmcring-drain-bench [-h] [options] [RECORDS_PER_CPU [MODES]]
 *   -n N        records per CPU (default 200000)
 *   -f LIST     formats: pmclog,barman,blob (default all three)
 *   -r LIST     records: cc64,cc256 (CALLCHAINs of 4 and 28 frames),
 *               gen64 (GENERATED, the old default) (default cc64,cc256)
 *   -m LIST     uring,sync,auto,uring-dio,sync-dio (default uring,sync;
 *               auto: what pmcring record picks for the directory,
 *               consumer_io_pick(); uring-dio, sync-dio: pmclog with
 *               O_DIRECT as record --direct-io writes it, io_uring with
 *               CONSUMER_DIO_DEPTH batches in flight or pwritev(); other
 *               formats skip them)
 *   -d DIR      directory (DRAIN_BENCH_DIR; default /dev/shm, else
 *               $TMPDIR or /tmp)
 *   -l LABEL    the directory's name in the output (default its fs type)
 *   -R RUNS     runs (DRAIN_BENCH_RUNS, default 5)
 *   -j FILE     append one JSON object per line and mode to FILE
 *   -k DIR      keep each drain's output, the last run's, as
 *               DIR/FORMAT-RECORD-MODE (to compare two builds' bytes)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <time.h>
#include <unistd.h>

#include <libpmcring_test.h>

#include "../../pmcring/record/consumer.h"

#define NR_CPUS		2u
#define MAX_RUNS	15u

enum { M_URING, M_SYNC, M_AUTO, M_UDIO, M_SDIO, M_NR };
static const char *const mode_names[M_NR] = {
	"uring", "sync", "auto", "uring-dio", "sync-dio",
};
#define M_DIO(mo)	((mo) == M_UDIO || (mo) == M_SDIO)

struct rec_kind {
	const char	*name;
	unsigned int	type;
	uint32_t	len;
};

static const struct rec_kind rec_kinds[] = {
	{ "cc64", PMCRING_TYPE_CALLCHAIN, 64 },
	{ "cc256", PMCRING_TYPE_CALLCHAIN, 256 },
	{ "gen64", PMCRING_TYPE_GENERATED, 64 },
};
#define NR_RECS	(sizeof(rec_kinds) / sizeof(rec_kinds[0]))

static const char *const fmt_names[] = { "pmclog", "barman", "blob" };

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* CPU time of the process: its threads and its io_uring workers. */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static uint32_t pages_for(uint64_t n, uint32_t len)
{
	uint64_t need = n * len + 65536, pages = 1;

	while (pages * 4096 < need)
		pages <<= 1;
	return (uint32_t)pages;
}

/* Fill record @i of @cpu as a sampling CPU (or GENERATE) would. */
static void fill_rec(uint8_t *r, const struct rec_kind *k, uint64_t i,
		     unsigned int cpu)
{
	uint32_t f;

	if (k->type == PMCRING_TYPE_GENERATED) {
		fmt_put64(r, 16, i);
		fmt_put32(r, 24, cpu);
		return;
	}
	fmt_put32(r, 16, 1000 + cpu);			/* pid */
	fmt_put32(r, 20, 1000 + cpu);			/* tid */
	fmt_put32(r, 24, 1);				/* pmcid */
	fmt_put32(r, 28, cpu << 16);			/* cpuflags */
	for (f = 32; f + 8 <= k->len; f += 8)
		fmt_put64(r, f, 0x401000 + i * 16 + f);
}

/* Read every page of the consumer's view: no fault while timed. */
static void prefault(struct pmcring_uprod *p)
{
	volatile uint8_t sink = 0;
	unsigned int cpu;

	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		void *base;
		size_t size, o;

		if (pmcring_uprod_buffer(p, cpu, &base, &size))
			continue;
		for (o = 0; o < size; o += 4096)
			sink ^= ((const uint8_t *)base)[o];
	}
	(void)sink;
}

struct result {
	double		secs;
	double		cpu;		/* CPU seconds, io-wq workers too */
	uint64_t	bytes;		/* written to the files */
	bool		uring;		/* what the consumer ran */
	uint64_t	batches, uring_batches;	/* of them, io_uring's */
};

/* Drain @n records per CPU of @k into @path as @fmt; 0 or -1. */
static int drain_once(uint64_t n, const struct rec_kind *k, int fmt, int mode,
		      const char *path, struct result *res)
{
	struct pmcring_uprod *p = pmcring_uprod_new(NR_CPUS,
						    pages_for(n, k->len));
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct pmcring_cpu_buf *bufs[NR_CPUS];
	struct pmcring_merge *m = NULL;
	struct fmt_writer *w = NULL;
	struct consumer c;
	struct fmt_opts o;
	uint64_t i, got = 0, nk;
	double t0, c0;
	unsigned int cpu;
	enum consumer_io pick;
	bool c_inited = false, uring;
	int ret = -1;

	if (!p)
		return -1;
	/* both CPUs flat out: timestamps alternate between the rings */
	for (i = 0; i < n; i++) {
		for (cpu = 0; cpu < NR_CPUS; cpu++) {
			uint8_t *r = pmcring_uprod_reserve(p, cpu, k->type,
							   k->len);

			if (!r)
				goto out;
			fill_rec(r, k, i, cpu);
			pmcring_uprod_commit(p, cpu);
		}
	}
	prefault(p);
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		bufs[cpu] = pmcring_uprod_cpu_buf(p, cpu);
	mo.clock = pmcring_uprod_clock;
	mo.clock_ctx = p;
	m = pmcring_merge_new(bufs, NR_CPUS, &mo);
	memset(&o, 0, sizeof(o));
	o.kind = (enum fmt_kind)fmt;
	o.path = path;
	o.nr_cpus = NR_CPUS;
	o.target = "drain-bench";
	o.keep_generated = true;
	o.container = "c";
	o.streams[0].name = "all";
	o.streams[0].types = PMCRING_TYPES_ALL;
	o.nr_streams = 1;
	pick = mode == M_AUTO ? consumer_io_pick(path) : CONSUMER_IO_SYNC;
	uring = mode == M_URING || mode == M_UDIO || pick != CONSUMER_IO_SYNC;
	w = m ? fmt_writer_new(&o) : NULL;
	if (!w || consumer_init(&c, m, NR_CPUS, w, uring, -1))
		goto out;
	c_inited = true;
	if (pick == CONSUMER_IO_IDLE && consumer_set_idle(&c))
		goto out;
	if (M_DIO(mode) && consumer_set_direct(&c, CONSUMER_DIO_DEPTH))
		goto out;
	c0 = cpu_s();
	t0 = now_s();
	if (consumer_begin(&c))
		goto out;
	while (got < NR_CPUS * n) {
		if (consumer_drain(&c, 0, &nk))
			goto out;
		if (!nk && consumer_wait(&c, 1000000) < 0)
			goto out;
		got += nk;
	}
	if (consumer_end(&c, 0))
		goto out;
	res->secs = now_s() - t0;
	res->cpu = cpu_s() - c0;
	res->bytes = c.st.bytes;
	res->uring = c.use_uring;
	res->batches = c.st.batches;
	res->uring_batches = c.use_uring ? c.st.uring_batches : 0;
	ret = 0;
out:
	if (c_inited)
		consumer_fini(&c);
	fmt_writer_free(w);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return ret;
}

static int rm_rf(const char *path)
{
	char cmd[8192];

	if (access(path, F_OK))
		return 0;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
	return system(cmd);
}

/* Copy drain output @path to @dir/@fmt-@rec-@mode (-k), replacing it. */
static int keep_out(const char *path, const char *dir, const char *fmt,
		    const char *rec, const char *mode)
{
	char dst[4096], cmd[8400];

	snprintf(dst, sizeof(dst), "%s/%s-%s-%s", dir, fmt, rec, mode);
	if (rm_rf(dst))
		return -1;
	snprintf(cmd, sizeof(cmd), "cp -a '%s' '%s'", path, dst);
	return system(cmd) ? -1 : 0;
}

/*
 * Seconds to write @bytes in 1 MiB write()s to @path, or < 0; *cpu: CPU
 * seconds of it.
 */
static double raw_once(uint64_t bytes, const char *path, double *cpu)
{
	static char buf[1 << 20];
	uint64_t done = 0;
	double t0, c0, t;
	int fd;

	memset(buf, 0xee, sizeof(buf));
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0)
		return -1;
	c0 = cpu_s();
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
	*cpu = cpu_s() - c0;
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

static const char *fs_name(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf))
		return "unknown";
	switch ((unsigned long)sf.f_type) {
	case 0x01021994: return "tmpfs";
	case 0xef53: return "ext4";
	case 0x58465342: return "xfs";
	case 0x9123683e: return "btrfs";
	default: return "other";
	}
}

/* Bit i set when LIST (comma-separated) names names[i]; 0 if one is bad. */
static unsigned int parse_list(const char *list, const char *const *names,
			       unsigned int nr)
{
	unsigned int mask = 0, i;
	char *s = strdup(list), *tok, *save = NULL;

	if (!s)
		return 0;
	for (tok = strtok_r(s, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < nr && strcmp(tok, names[i]); i++)
			;
		if (i == nr) {
			free(s);
			return 0;
		}
		mask |= 1u << i;
	}
	free(s);
	return mask;
}

int main(int argc, char **argv)
{
	static const char *rec_names[NR_RECS];
	const char *env_runs = getenv("DRAIN_BENCH_RUNS");
	unsigned int runs = env_runs ? (unsigned int)atoi(env_runs) : 5;
	unsigned int fmts = 7, recs = 3, modes = 3, r, f, k, mo;
	const char *dir = pick_dir(), *label = NULL, *json = NULL;
	const char *keep = NULL;
	double pmclog_rate[NR_RECS][M_NR] = { { 0 } };
	uint64_t n = 200000;
	char path[4096];
	FILE *j = NULL;
	bool help = false;
	int opt;

	for (k = 0; k < NR_RECS; k++)
		rec_names[k] = rec_kinds[k].name;
	while ((opt = getopt(argc, argv, "hn:f:r:m:d:l:R:j:k:")) != -1) {
		switch (opt) {
		case 'n': n = strtoull(optarg, NULL, 0); break;
		case 'f': fmts = parse_list(optarg, fmt_names, 3); break;
		case 'r': recs = parse_list(optarg, rec_names, NR_RECS); break;
		case 'm': modes = parse_list(optarg, mode_names, M_NR); break;
		case 'd': dir = optarg; break;
		case 'l': label = optarg; break;
		case 'R': runs = (unsigned int)atoi(optarg); break;
		case 'j': json = optarg; break;
		case 'k': keep = optarg; break;
		case 'h': help = true; goto usage;
		default: goto usage;
		}
	}
	if (optind < argc)
		n = strtoull(argv[optind++], NULL, 0);
	if (optind < argc)
		modes = parse_list(argv[optind++], mode_names, M_NR);
	if (optind < argc || !n || !runs || runs > MAX_RUNS || !fmts ||
	    !recs || !modes)
		goto usage;
	if (!label)
		label = fs_name(dir);
	if (json && !(j = fopen(json, "a"))) {
		perror(json);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/pmcring-drain-bench.%d", dir,
		 (int)getpid());
	printf("drain of %llu + %llu records into %s (%s), against raw 1 MiB "
	       "writes of the same bytes, median of %u\n",
	       (unsigned long long)n, (unsigned long long)n, dir, label, runs);
	printf("%-6s %-6s %-9s %12s %9s %9s %7s %8s %7s %7s\n", "format",
	       "record", "mode", "records/s", "MB/s", "raw MB/s", "of raw",
	       "/pmclog", "CPU ns", "CPU raw");
	for (k = 0; k < NR_RECS; k++) {
		if (!(recs & (1u << k)))
			continue;
		for (f = 0; f < 3; f++) {
			struct result res[M_NR][MAX_RUNS];
			double raw[M_NR][MAX_RUNS], rawc[M_NR][MAX_RUNS];

			if (!(fmts & (1u << f)))
				continue;
			/* modes interleaved within each run */
			for (r = 0; r < runs; r++) {
				for (mo = 0; mo < M_NR; mo++) {
					if (!(modes & (1u << mo)) ||
					    (M_DIO(mo) && f))
						continue;
					if (drain_once(n, &rec_kinds[k], (int)f,
						       (int)mo, path,
						       &res[mo][r]))
						goto failed;
					if (keep && keep_out(path, keep,
							     fmt_names[f],
							     rec_names[k],
							     mode_names[mo]))
						goto failed;
					rm_rf(path);
					raw[mo][r] = raw_once(res[mo][r].bytes,
							      path,
							      &rawc[mo][r]);
					if (raw[mo][r] < 0)
						goto failed;
				}
			}
			for (mo = 0; mo < M_NR; mo++) {
				double d[MAX_RUNS], cp[MAX_RUNS], dm, rm, rate;
				double rel, cns, rc;
				uint64_t ub = 0, tb = 0;
				char ran[32];

				if (!(modes & (1u << mo)) || (M_DIO(mo) && f))
					continue;
				for (r = 0; r < runs; r++) {
					d[r] = res[mo][r].secs;
					cp[r] = res[mo][r].cpu;
					ub += res[mo][r].uring_batches;
					tb += res[mo][r].batches;
				}
				/* auto: the share of io_uring's batches */
				if (!ub || ub >= tb)
					snprintf(ran, sizeof(ran), "%s",
						 ub ? "io_uring" : "pwritev");
				else
					snprintf(ran, sizeof(ran),
						 "io_uring %.1f%%",
						 100.0 * (double)ub / (double)tb);
				qsort(d, runs, sizeof(d[0]), cmp_double);
				qsort(cp, runs, sizeof(cp[0]), cmp_double);
				qsort(rawc[mo], runs, sizeof(rawc[mo][0]),
				      cmp_double);
				cns = cp[runs / 2] / (NR_CPUS * n) * 1e9;
				rc = rawc[mo][runs / 2] / cp[runs / 2];
				qsort(raw[mo], runs, sizeof(raw[mo][0]),
				      cmp_double);
				dm = d[runs / 2];
				rm = raw[mo][runs / 2];
				rate = NR_CPUS * n / dm;
				if (f == 0)
					pmclog_rate[k][mo] = rate;
				rel = pmclog_rate[k][mo] ?
				      rate / pmclog_rate[k][mo] : 0;
				printf("%-6s %-6s %-9s %12.0f %9.1f %9.1f "
				       "%6.1f%% %8.2f %7.1f %6.1f%%%s%s%s\n",
				       fmt_names[f],
				       rec_kinds[k].name, mode_names[mo], rate,
				       res[mo][0].bytes / dm / 1e6,
				       res[mo][0].bytes / rm / 1e6,
				       100 * rm / dm, rel, cns, 100 * rc,
				       mo != M_AUTO ? "" : " (",
				       mo != M_AUTO ? "" : ran,
				       mo != M_AUTO ? "" : ")");
				if (!j)
					continue;
				fprintf(j, "{\"dir\": \"%s\", \"fs\": \"%s\", "
					"\"format\": \"%s\", \"record\": "
					"\"%s\", \"record_bytes\": %u, "
					"\"mode\": \"%s\", \"ran\": \"%s\", "
					"\"records\": %llu, \"runs\": %u, "
					"\"records_per_s\": %.0f, "
					"\"mb_per_s\": %.1f, "
					"\"raw_mb_per_s\": %.1f, "
					"\"of_raw\": %.3f, "
					"\"of_pmclog\": %.3f, "
					"\"cpu_ns_per_record\": %.1f, "
					"\"cpu_of_raw\": %.3f}\n", label,
					fs_name(dir), fmt_names[f],
					rec_kinds[k].name, rec_kinds[k].len,
					mode_names[mo],
					ran,
					(unsigned long long)(NR_CPUS * n),
					runs, rate,
					res[mo][0].bytes / dm / 1e6,
					res[mo][0].bytes / rm / 1e6, rm / dm,
					rel, cns, rc);
			}
			fflush(stdout);
		}
	}
	if (j)
		fclose(j);
	return 0;
failed:
	fprintf(stderr, "pmcring-drain-bench: %s %s failed\n", fmt_names[f],
		rec_kinds[k].name);
	rm_rf(path);
	return 1;
usage:
	fprintf(help ? stdout : stderr, "usage: pmcring-drain-bench [-n N] "
		"[-f pmclog,barman,blob] [-r cc64,cc256,gen64] "
		"[-m uring,sync,auto,uring-dio,sync-dio] [-d DIR] "
		"[-l LABEL] [-R RUNS] [-j JSON] [-k DIR] [N [MODES]]\n");
	return help ? 0 : 2;
}
