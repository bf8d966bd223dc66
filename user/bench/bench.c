// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: native benchmark of libpmcring: merged records/s of the
 * exact merge over 2, 16 and 256 simulated CPUs (user space producer,
 * records spread randomly over the CPUs, merge time only), and parser MB/s
 * (memory mode, fed in 1 MiB chunks, and fd mode from a memfd).
 *
 * Usage: pmcring-bench [JSON-PATH]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>
#include "libpmcring.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct merge_result {
	unsigned int	cpus;
	uint64_t	records;
	double		seconds;
	double		rate;
};

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
	uint64_t body[4] = { 0 }, done = 0, last_ts = 0;
	/* about 1/3 of a ring per CPU per batch: no drops */
	uint64_t batch = (uint64_t)ncpu * (pages * 4096 / 48 / 3);
	unsigned int seed = 1, i;
	struct pmcring_merge *m;
	struct pmcring_record r;
	double t = 0;

	if (!p || !bufs)
		return -ENOMEM;
	for (i = 0; i < ncpu; i++)
		bufs[i] = pmcring_uprod_cpu_buf(p, i);
	m = pmcring_merge_new(bufs, ncpu, &o);
	if (!m)
		return -errno;
	while (done < total) {
		uint64_t k, out = 0;
		double t0;
		int ret;

		for (k = 0; k < batch; k++) {
			body[0] = k;
			if (pmcring_uprod_write(p, (unsigned int)rand_r(&seed) % ncpu,
						PMCRING_TYPE_GENERATED, body,
						sizeof(body)))
				return -ENOSPC;
		}
		t0 = now_s();
		while ((ret = pmcring_merge_next(m, &r)) == 1) {
			if (r.ts < last_ts)
				return -EBADMSG;
			last_ts = r.ts;
			out++;
		}
		t += now_s() - t0;
		if (ret < 0)
			return ret;
		if (out != batch)
			return -EIO;
		done += out;
	}
	res->cpus = ncpu;
	res->records = done;
	res->seconds = t;
	res->rate = (double)done / t;
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	free(bufs);
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
	double t0 = now_s();

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
	t0 = now_s() - t0;
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
	t0 = now_s();
	while (pmcring_log_read(l, &ev) == 0)
		n++;
	t0 = now_s() - t0;
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
	}
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
			"  \"merge\": [\n", model, sysconf(_SC_NPROCESSORS_ONLN));
		for (i = 0; i < 3; i++)
			fprintf(j, "    {\"cpus\": %u, \"records\": %llu, "
				"\"seconds\": %.6f, \"records_per_s\": %.0f}%s\n",
				mr[i].cpus, (unsigned long long)mr[i].records,
				mr[i].seconds, mr[i].rate, i < 2 ? "," : "");
		fprintf(j, "  ],\n  \"parser\": {\"bytes\": %zu, \"records\": "
			"%llu, \"memory_mb_per_s\": %.1f, \"fd_mb_per_s\": "
			"%.1f}\n}\n", len, (unsigned long long)nrec, mem, fd);
		fclose(j);
	}
	free(log);
	return 0;
}
