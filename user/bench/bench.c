// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: native benchmark of libpmcring: merged records/s of the
 * exact merge over 2, 16 and 256 simulated CPUs (user space producer,
 * records spread randomly over the CPUs, merge time only) beside its floor
 * (a plain tournament-tree k-way merge keyed on (ts, cpu), over the same
 * ring bytes in the same run; both copy each record out the same way, and
 * go first every other batch), and parser MB/s
 * (memory mode, fed in 1 MiB chunks, and fd mode from a memfd), and the
 * merge's delay with live writer threads on 2 of 16 CPUs (the other 14
 * idle) and a consumer that sleeps 1 ms whenever nothing is ready.
 *
 * Usage: pmcring-bench [JSON-PATH]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "libpmcring_test.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * Throughput is timed in CPU time of the measuring thread: on a shared
 * machine wall time mostly measures the neighbours.
 */
static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct merge_result {
	unsigned int	cpus;
	uint64_t	records;
	double		seconds;
	double		rate;
	double		floor_seconds;
	double		floor_rate;	/* the plain tree merge's */
};

/* ---- the floor: a plain tournament-tree k-way merge with copy-out ------- */

struct floor_ent {
	uint64_t	ts;
	uint32_t	cpu;
};

static bool floor_less(const struct floor_ent *a, const struct floor_ent *b)
{
	return a->ts < b->ts || (a->ts == b->ts && a->cpu < b->cpu);
}

/* A leaf without a run: above every record */
#define FLOOR_NONE	((struct floor_ent){ UINT64_MAX, UINT32_MAX })

#define FLOOR_SINK	(1u << 20)

static volatile uint64_t floor_check;	/* keeps the copies live */

/*
 * What the consumer of either merge does with each record, the same code
 * for both: check the order and copy the record out to a 1 MiB sink used
 * round robin.  The merge hands out a pointer into the ring; without this
 * the floor alone paid for a copy.
 */
struct sink {
	uint8_t		*buf;
	size_t		o;
	uint64_t	last;		/* ts of the last record */
	uint64_t	records;
	bool		unordered;
};

static inline void sink_put(struct sink *s, const void *rec, uint32_t len,
			    uint64_t ts)
{
	s->unordered |= ts < s->last;
	s->last = ts;
	if (s->o + len > FLOOR_SINK)
		s->o = 0;
	memcpy(s->buf + s->o, rec, len);
	s->o += len;
	s->records++;
}

/*
 * Merge @ncpu runs of records (run i: @left[i] records from @cur[i], each
 * one's length in its pmclog header, rings mapped twice so a run is
 * contiguous) in (ts, cpu) order into @s.  No checks, no atomics: what
 * any exact merge has to do at least.  Its winner tree @t (2 * @leaves
 * entries, @leaves a power of two >= @ncpu) is done as the merge's is
 * (merge.c): the run that advanced replays its matches to the root, one
 * compare a level without a branch, the record after the next one
 * prefetched with more than two runs.  The floor was a binary heap before
 * the merge had its tree, which the merge then beat by 1.2x at 16 CPUs: a
 * floor it was not.
 */
static void floor_merge(unsigned int ncpu, const uint8_t **cur,
			uint64_t *left, struct floor_ent *t, unsigned int leaves,
			struct sink *s)
{
	unsigned int i;

	for (i = 0; i < 2 * leaves; i++)
		t[i] = FLOOR_NONE;
	for (i = 0; i < ncpu; i++)
		if (left[i])
			t[leaves + i] = (struct floor_ent){
				((const struct pmcring_rec_header *)cur[i])->pl_tsc,
				i };
	for (i = leaves; i-- > 1;)
		t[i] = floor_less(&t[2 * i + 1], &t[2 * i]) ? t[2 * i + 1] :
							       t[2 * i];
	while (t[1].cpu != UINT32_MAX) {
		unsigned int c = t[1].cpu, j = leaves + t[1].cpu;
		const struct pmcring_rec_header *r = (const void *)cur[c];
		uint32_t len = PMCRING_HEADER_LEN(r->pl_header);
		struct floor_ent e = FLOOR_NONE;

		sink_put(s, r, len, t[1].ts);
		cur[c] += PMCRING_RING_SPACE(len);
		if (--left[c]) {
			const struct pmcring_rec_header *nr = (const void *)cur[c];

			e = (struct floor_ent){ nr->pl_tsc, c };
			/* the record after it, as the merge does: with many
			 * runs the hardware prefetcher does not follow them all
			 */
			if (leaves > 2)
				__builtin_prefetch(cur[c] + PMCRING_RING_SPACE(
					PMCRING_HEADER_LEN(nr->pl_header)));
		}
		t[j] = e;
		for (; j > 1; j >>= 1) {
			const struct floor_ent *sb = &t[j ^ 1];
			uint64_t sk = sb->ts, kx;
			uint32_t si = sb->cpu, ix;
			uint64_t sw = -(uint64_t)((sk < e.ts) |
						  ((sk == e.ts) & (si < e.cpu)));

			kx = (e.ts ^ sk) & sw;
			ix = (e.cpu ^ si) & (uint32_t)sw;
			e.ts ^= kx;
			e.cpu ^= ix;
			t[j >> 1] = e;
		}
	}
}

/* The merge under test into @s: 0 once it waits, or a negative errno. */
static int lib_merge(struct pmcring_merge *m, struct sink *s)
{
	struct pmcring_record r;
	int ret;

	while ((ret = pmcring_merge_next(m, &r)) == 1)
		sink_put(s, r.data, r.len, r.ts);
	return ret;
}

static int bench_merge(unsigned int ncpu, uint64_t total,
		       struct merge_result *res)
{
	uint32_t pages = 16;			/* 64 KiB per CPU */
	struct pmcring_uprod *p = pmcring_uprod_new(ncpu, pages);
	struct pmcring_cpu_buf **bufs = calloc(ncpu, sizeof(*bufs));
	struct pmcring_merge_opts o = {
		.sz = sizeof(o),
		.clock = pmcring_uprod_clock,
		.flags = PMCRING_MERGE_F_AUTO_CONSUME,
	};
	uint64_t body[4] = { 0 }, done = 0, nb;
	/* about 1/3 of a ring per CPU per batch: no drops */
	uint64_t batch = (uint64_t)ncpu * (pages * 4096 / 48 / 3);
	unsigned int seed = 1, i;
	struct pmcring_merge *m;
	struct pmcring_record r;
	uint64_t *cnt = calloc(ncpu, sizeof(*cnt)), *left = calloc(ncpu, 8);
	const uint8_t **cur = calloc(ncpu, sizeof(*cur));
	unsigned int leaves = 1;
	struct floor_ent *h;
	struct sink sf = { .buf = malloc(FLOOR_SINK) };
	struct sink sm = { .buf = malloc(FLOOR_SINK) };
	double t = 0, tf = 0;

	while (leaves < ncpu)
		leaves *= 2;
	h = aligned_alloc(64, (2 * leaves * sizeof(*h) + 63) & ~(size_t)63);
	if (!p || !bufs || !cnt || !left || !cur || !h || !sf.buf || !sm.buf)
		return -ENOMEM;
	for (i = 0; i < ncpu; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, i);
	m = pmcring_merge_new(bufs, ncpu, &o);
	if (!m)
		return -errno;
	for (nb = 0; done < total; nb++) {
		uint64_t k, sf0 = sf.records, sm0 = sm.records;
		double t0, t1;
		int ret;

		for (k = 0; k < batch; k++) {
			unsigned int c = (unsigned int)rand_r(&seed) % ncpu;

			body[0] = k;
			if (pmcring_uprod_write(p, c, PMCRING_TYPE_GENERATED,
						body, sizeof(body)))
				return -ENOSPC;
			cnt[c]++;
		}
		/* the floor's runs: the same ring bytes */
		for (i = 0; i < ncpu; i++) {
			left[i] = cnt[i];
			cnt[i] = 0;
			cur[i] = NULL;
			if (left[i] && pmcring_cpu_buf_peek(bufs[i], &r) == 1)
				cur[i] = r.data;
			else if (left[i])
				return -EIO;
		}
		/*
		 * Each goes first every other batch: the first one reads the
		 * ring bytes the producer wrote, the second finds them in the
		 * cache.  The merge gives their space back but nothing writes
		 * them before the next batch.
		 */
		ret = 0;
		if (nb & 1) {
			t0 = cpu_s();
			ret = lib_merge(m, &sm);
			t1 = cpu_s();
			t += t1 - t0;
		}
		t0 = cpu_s();
		floor_merge(ncpu, cur, left, h, leaves, &sf);
		t1 = cpu_s();
		tf += t1 - t0;
		if (!(nb & 1)) {
			t0 = cpu_s();
			ret = lib_merge(m, &sm);
			t1 = cpu_s();
			t += t1 - t0;
		}
		if (ret < 0)
			return ret;
		if (sf.records - sf0 != batch || sm.records - sm0 != batch ||
		    sf.unordered || sm.unordered)
			return -EIO;
		done += batch;
	}
	res->cpus = ncpu;
	res->records = done;
	res->seconds = t;
	res->rate = (double)done / t;
	res->floor_seconds = tf;
	res->floor_rate = (double)done / tf;
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	floor_check = sf.buf[sf.o - 1] + sm.buf[sm.o - 1] + sf.last + sm.last;
	free(bufs);
	free(cnt);
	free(left);
	free(cur);
	free(h);
	free(sf.buf);
	free(sm.buf);
	return 0;
}

/* ---- delay with live writers ------------------------------------------ */

#define LAT_WRITERS	2
#define LAT_CPUS	16

struct lat_writer {
	struct pmcring_uprod	*p;
	unsigned int		cpu;
	atomic_bool		*stop;
	uint64_t		written;
};

static void *lat_writer_main(void *arg)
{
	struct lat_writer *w = arg;
	struct timespec d = { 0, 20000 };	/* ~50k records/s */
	uint64_t body[2] = { 0 };

	while (!atomic_load(w->stop)) {
		if (!pmcring_uprod_write(w->p, w->cpu, PMCRING_TYPE_GENERATED,
					 body, sizeof(body)))
			w->written++;
		nanosleep(&d, NULL);
	}
	return NULL;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

struct lat_result {
	uint64_t	records, p50, p99, max;
};

static int bench_latency(double seconds, struct lat_result *res)
{
	struct pmcring_uprod *p = pmcring_uprod_new(LAT_CPUS, 16);
	struct pmcring_cpu_buf *bufs[LAT_CPUS];
	struct pmcring_merge_opts o = {
		.sz = sizeof(o),
		.clock = pmcring_uprod_clock,
		.flags = PMCRING_MERGE_F_AUTO_CONSUME,
		.max_delay_ns = 1000000,
	};
	struct timespec nap = { 0, 1000000 };
	struct lat_writer w[LAT_WRITERS];
	pthread_t th[LAT_WRITERS];
	atomic_bool stop = false;
	size_t cap = 1 << 22, n = 0;
	uint64_t *lat = malloc(cap * sizeof(*lat)), now, written = 0;
	struct pmcring_merge *m;
	struct pmcring_record r;
	double end;
	unsigned int i;
	int ret;

	if (!p || !lat)
		return -ENOMEM;
	for (i = 0; i < LAT_CPUS; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, i);
	m = pmcring_merge_new(bufs, LAT_CPUS, &o);
	if (!m)
		return -errno;
	for (i = 0; i < LAT_WRITERS; i++) {
		w[i] = (struct lat_writer){ .p = p, .cpu = i * 7, .stop = &stop };
		pthread_create(&th[i], NULL, lat_writer_main, &w[i]);
	}
	end = now_s() + seconds;
	while (now_s() < end) {
		ret = pmcring_merge_next(m, &r);
		if (ret < 0)
			return ret;
		if (!ret) {
			nanosleep(&nap, NULL);
			continue;
		}
		pmcring_uprod_clock(NULL, &now);
		if (n < cap)
			lat[n++] = now - r.ts;
	}
	atomic_store(&stop, true);
	for (i = 0; i < LAT_WRITERS; i++) {
		pthread_join(th[i], NULL);
		written += w[i].written;
	}
	if (!n || n > written)
		return -EIO;
	qsort(lat, n, sizeof(*lat), cmp_u64);
	res->records = n;
	res->p50 = lat[n / 2];
	res->p99 = lat[n * 99 / 100];
	res->max = lat[n - 1];
	free(lat);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/* A pmclog stream of ~@bytes: callchains, maps, userdata, generated. */
static uint8_t *make_log(size_t bytes, size_t *len, uint64_t *nrec)
{
	uint8_t *buf = malloc(bytes + 8192);
	size_t off = 0;
	uint64_t ts = 1, n = 0;
	unsigned int seed = 7;

	while (buf && off < bytes) {
		uint32_t type, rlen, hdr;
		unsigned int k = (unsigned int)rand_r(&seed) % 16;

		if (k < 10) {
			type = PMCRING_TYPE_CALLCHAIN;
			rlen = 32 + 8 * (4 + (uint32_t)rand_r(&seed) % 28);
		} else if (k < 11) {
			type = PMCRING_TYPE_MAP_IN;
			rlen = 32 + 40;
		} else if (k < 14) {
			type = PMCRING_TYPE_USERDATA;
			rlen = 24;
		} else {
			type = PMCRING_TYPE_THR_CREATE;
			rlen = 52;
		}
		memset(buf + off, 'a', rlen);
		hdr = PMCRING_HEADER(type, rlen);
		memcpy(buf + off, &hdr, 4);
		memset(buf + off + 4, 0, 4);
		memcpy(buf + off + 8, &ts, 8);
		if (type == PMCRING_TYPE_MAP_IN)
			buf[off + rlen - 1] = 0;
		off += rlen;
		ts += 3;
		n++;
	}
	*len = off;
	*nrec = n;
	return buf;
}

static double bench_parse_mem(const uint8_t *log, size_t len, uint64_t nrec)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	struct pmcring_log_ev ev;
	size_t fed = 0;
	uint64_t n = 0;
	double t0 = cpu_s();

	for (;;) {
		if (pmcring_log_read(l, &ev) == 0) {
			n++;
			continue;
		}
		if (ev.pl_state != PMCRING_LOG_REQUIRE_DATA || fed == len)
			break;
		size_t c = len - fed < (1 << 20) ? len - fed : (1 << 20);

		pmcring_log_feed(l, log + fed, c);
		fed += c;
	}
	t0 = cpu_s() - t0;
	pmcring_log_close(l);
	return n == nrec ? (double)len / t0 / 1e6 : -1;
}

static double bench_parse_fd(const uint8_t *log, size_t len, uint64_t nrec)
{
	int fd = memfd_create("bench", 0);
	struct pmcring_log *l;
	struct pmcring_log_ev ev;
	uint64_t n = 0;
	double t0;

	if (fd < 0 || write(fd, log, len) != (ssize_t)len)
		return -1;
	lseek(fd, 0, SEEK_SET);
	l = pmcring_log_open(fd);
	t0 = cpu_s();
	while (pmcring_log_read(l, &ev) == 0)
		n++;
	t0 = cpu_s() - t0;
	pmcring_log_close(l);
	close(fd);
	return n == nrec ? (double)len / t0 / 1e6 : -1;
}

static void cpu_model(char *out, size_t n)
{
	FILE *f = fopen("/proc/cpuinfo", "r");
	char line[256];

	snprintf(out, n, "unknown");
	while (f && fgets(line, sizeof(line), f)) {
		char *c = strchr(line, ':');

		if (!strncmp(line, "model name", 10) && c) {
			snprintf(out, n, "%s", c + 2);
			out[strcspn(out, "\n")] = 0;
			break;
		}
	}
	if (f)
		fclose(f);
}

int main(int argc, char **argv)
{
	static const unsigned int cpus[] = { 2, 16, 256 };
	struct merge_result mr[3];
	struct lat_result lr = { 0 };
	char model[128];
	double mem, fd;
	uint64_t nrec;
	size_t len;
	uint8_t *log;
	unsigned int i;
	FILE *j;
	int ret;

	cpu_model(model, sizeof(model));
	printf("machine: %s, %ld online CPUs\n", model,
	       sysconf(_SC_NPROCESSORS_ONLN));
	printf("throughput per CPU second of the consumer thread\n");
	printf("%-28s %14s %10s\n", "benchmark", "result", "unit");
	for (i = 0; i < 3; i++) {
		ret = bench_merge(cpus[i], 4000000, &mr[i]);
		if (ret) {
			fprintf(stderr, "merge %u CPUs: %s\n", cpus[i],
				strerror(-ret));
			return 1;
		}
		printf("merge %3u CPUs %13s %14.0f %10s\n", cpus[i], "",
		       mr[i].rate, "records/s");
		printf("merge floor %3u CPUs %7s %14.0f %10s\n", cpus[i], "",
		       mr[i].floor_rate, "records/s");
		printf("merge/floor %3u CPUs %7s %14.2f %10s\n", cpus[i], "",
		       mr[i].rate / mr[i].floor_rate, "ratio");
	}
	ret = bench_latency(2.0, &lr);
	if (ret) {
		fprintf(stderr, "latency: %s\n", strerror(-ret));
		return 1;
	}
	printf("%-28s %14.3f %10s\n", "merge delay p50 (2 of 16)",
	       (double)lr.p50 / 1e6, "ms");
	printf("%-28s %14.3f %10s\n", "merge delay p99 (2 of 16)",
	       (double)lr.p99 / 1e6, "ms");
	printf("%-28s %14.3f %10s\n", "merge delay max (2 of 16)",
	       (double)lr.max / 1e6, "ms");
	log = make_log(256u << 20, &len, &nrec);
	if (!log)
		return 1;
	mem = bench_parse_mem(log, len, nrec);
	fd = bench_parse_fd(log, len, nrec);
	if (mem < 0 || fd < 0) {
		fprintf(stderr, "parser lost records\n");
		return 1;
	}
	printf("%-28s %14.0f %10s\n", "parse memory (1 MiB feeds)", mem, "MB/s");
	printf("%-28s %14.0f %10s\n", "parse fd (memfd)", fd, "MB/s");
	printf("%-28s %14.0f %10s\n", "parse records/s (memory)",
	       mem * 1e6 / ((double)len / (double)nrec), "records/s");
	if (argc > 1) {
		j = fopen(argv[1], "w");
		if (!j) {
			perror(argv[1]);
			return 1;
		}
		fprintf(j, "{\n  \"machine\": \"%s\",\n  \"online_cpus\": %ld,\n"
			"  \"timing\": \"CLOCK_THREAD_CPUTIME_ID\",\n"
			"  \"merge\": [\n", model, sysconf(_SC_NPROCESSORS_ONLN));
		for (i = 0; i < 3; i++)
			fprintf(j, "    {\"cpus\": %u, \"records\": %llu, "
				"\"seconds\": %.6f, \"records_per_s\": %.0f, "
				"\"floor_seconds\": %.6f, "
				"\"floor_records_per_s\": %.0f, "
				"\"vs_floor\": %.3f}%s\n",
				mr[i].cpus, (unsigned long long)mr[i].records,
				mr[i].seconds, mr[i].rate, mr[i].floor_seconds,
				mr[i].floor_rate, mr[i].rate / mr[i].floor_rate,
				i < 2 ? "," : "");
		fprintf(j, "  ],\n  \"merge_delay\": {\"cpus\": %u, "
			"\"writers\": %u, \"poll_ns\": 1000000, \"records\": "
			"%llu, \"p50_ns\": %llu, \"p99_ns\": %llu, "
			"\"max_ns\": %llu},\n", LAT_CPUS, LAT_WRITERS,
			(unsigned long long)lr.records,
			(unsigned long long)lr.p50, (unsigned long long)lr.p99,
			(unsigned long long)lr.max);
		fprintf(j, "  \"parser\": {\"bytes\": %zu, \"records\": "
			"%llu, \"memory_mb_per_s\": %.1f, \"fd_mb_per_s\": "
			"%.1f}\n}\n", len, (unsigned long long)nrec, mem, fd);
		fclose(j);
	}
	free(log);
	return 0;
}
