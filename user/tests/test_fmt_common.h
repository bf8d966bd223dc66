/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the test_fmt_*.c host tests: failure reporting, hand-built
 * little-endian byte images, and files in a scratch directory.
 */
#ifndef TEST_FMT_COMMON_H
#define TEST_FMT_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../pmcring/formats/fmt.h"

#include "test_check.h"

/* A byte image built by hand: little-endian stores at explicit offsets. */
struct img {
	uint8_t	b[65536];
	size_t	len;
};

static inline void le(struct img *im, size_t off, uint64_t v, unsigned int n)
{
	unsigned int i;

	for (i = 0; i < n; i++)
		im->b[off + i] = (uint8_t)(v >> (8 * i));
	if (off + n > im->len)
		im->len = off + n;
}

static inline void bytes(struct img *im, size_t off, const void *p, size_t n)
{
	memcpy(im->b + off, p, n);
	if (off + n > im->len)
		im->len = off + n;
}

/* Append an image to another. */
static inline void append(struct img *dst, const void *p, size_t n)
{
	memcpy(dst->b + dst->len, p, n);
	dst->len += n;
}

static inline void *read_file(const char *path, size_t *len)
{
	struct stat st;
	void *p;
	int fd = open(path, O_RDONLY);

	if (fd < 0)
		return NULL;
	fstat(fd, &st);
	p = malloc((size_t)st.st_size + 1);
	*len = (size_t)read(fd, p, (size_t)st.st_size);
	close(fd);
	return p;
}

static inline void expect_bytes(const char *what, const void *got,
				size_t got_len, const void *exp, size_t exp_len)
{
	size_t i;

	CHECK(got_len == exp_len, "%s: %zu bytes, expected %zu", what, got_len,
	      exp_len);
	for (i = 0; i < got_len && i < exp_len; i++) {
		if (((const uint8_t *)got)[i] != ((const uint8_t *)exp)[i]) {
			CHECK(0, "%s: byte %zu is 0x%02x, expected 0x%02x", what,
			      i, ((const uint8_t *)got)[i],
			      ((const uint8_t *)exp)[i]);
			return;
		}
	}
}

static inline char *scratch_dir(void)
{
	static char dir[] = "/tmp/test_fmt.XXXXXX";

	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	return dir;
}

static inline void rm_rf(const char *dir)
{
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "warning: could not remove %s\n", dir);
}

/*
 * tests/ldms_blob_rules.py (LDMS ldms-csv-from-blobs' rules, from user/,
 * where the tests run) on blob DAT files @dats, which must hold @n messages
 * together; python3 is in `make deps`.
 */
static inline void check_ldms_rules(const char *dats, unsigned int n)
{
	char cmd[8192];
	int rc;

	REQUIRE(!system("command -v python3 >/dev/null 2>&1"),
		"no python3 for tests/ldms_blob_rules.py (make deps installs it)");
	snprintf(cmd, sizeof(cmd), "python3 tests/ldms_blob_rules.py -n %u %s",
		 n, dats);
	rc = system(cmd);
	CHECK(rc == 0, "LDMS reader rules: %s", cmd);
}

/* Run a batch with pwritev and reset it. */
static inline void run(struct out_batch *b)
{
	int err = out_batch_run_sync(b);

	REQUIRE(!err, "out_batch_run_sync: %s", strerror(-err));
	out_batch_reset(b);
}

/* Feed records to a writer, running the batch when it asks. */
static inline void feed(struct fmt_writer *w, struct out_batch *b,
			const struct fmt_rec *r)
{
	int err = fmt_record(w, b, r);

	if (err == -EAGAIN) {
		REQUIRE(!fmt_flush(w, b), "flush");
		run(b);
		err = fmt_record(w, b, r);
	}
	REQUIRE(!err, "fmt_record: %s", strerror(-err));
}

static inline void finish(struct fmt_writer *w, struct out_batch *b,
			  uint64_t ts)
{
	int err = fmt_end(w, b, ts);

	if (err == -EAGAIN) {
		REQUIRE(!fmt_flush(w, b), "flush");
		run(b);
		err = fmt_end(w, b, ts);
	}
	REQUIRE(!err, "fmt_end: %s", strerror(-err));
	REQUIRE(!fmt_flush(w, b), "flush");
	run(b);
}


/*
 * The test session: start at 1 s of CLOCK_MONOTONIC, 1700000000.5 s of
 * CLOCK_REALTIME, 2 CPUs, one counter.
 */
#define T0	1000000000ull

static inline void test_opts(struct fmt_opts *o, enum fmt_kind kind,
			     const char *path)
{
	memset(o, 0, sizeof(*o));
	o->kind = kind;
	o->path = path;
	o->start_ns = T0;
	o->start_rt.tv_sec = 1700000000;
	o->start_rt.tv_nsec = 500000000;
	o->nr_cpus = 2;
	o->target = "prog";
	strcpy(o->cpuid, "GenuineIntel-6-55-4");
	o->counters[0].pmcid = 0x100;
	strcpy(o->counters[0].name, "cpu-clock");
	o->nr_counters = 1;
}

#define NR_RECS	512

/*
 * One record of every type, built byte by byte as the kernel lays them out
 * in a ring: each in a slot of PMCRING_RING_SPACE(len) bytes whose padding
 * is 0xAA, so a writer that writes more than the pmclog length shows.
 */
struct ring_recs {
	uint8_t		ring[32768];
	struct fmt_rec	r[NR_RECS];
	unsigned int	n;
	size_t		pos;
};

static inline uint8_t *rr_add(struct ring_recs *rr, unsigned int type,
			      uint32_t len, uint32_t cpu)
{
	uint8_t *p = rr->ring + rr->pos;
	struct img tmp = { .len = 0 };
	struct fmt_rec *r = &rr->r[rr->n];
	uint64_t ts = T0 + 1000 * (rr->n + 1);

	memset(p, 0xAA, (len + 7) & ~7u);
	memset(p, 0, len);
	le(&tmp, 0, 0xEE000000u | type << 16 | len, 4);
	le(&tmp, 8, ts, 8);
	memcpy(p, tmp.b, 16);
	r->data = p;
	r->len = len;
	r->type = type;
	r->cpu = cpu;
	r->ts = ts;
	rr->n++;
	rr->pos += (len + 7) & ~7u;
	return p;
}

static inline void w32(uint8_t *p, size_t off, uint32_t v)
{
	unsigned int i;

	for (i = 0; i < 4; i++)
		p[off + i] = (uint8_t)(v >> (8 * i));
}

static inline void w64(uint8_t *p, size_t off, uint64_t v)
{
	unsigned int i;

	for (i = 0; i < 8; i++)
		p[off + i] = (uint8_t)(v >> (8 * i));
}

static inline void build_records(struct ring_recs *rr)
{
	uint8_t *p;
	unsigned int i;

	memset(rr, 0, sizeof(*rr));
	p = rr_add(rr, PMCRING_TYPE_PMCALLOCATE, 40, 0);
	w32(p, 16, 0x100); w32(p, 20, 0x3c); w32(p, 24, 0); w64(p, 32, 100000);
	p = rr_add(rr, PMCRING_TYPE_PROC_CREATE, 44, 0);
	w32(p, 16, 42); w32(p, 20, 0); memcpy(p + 24, "prog", 4);
	p = rr_add(rr, PMCRING_TYPE_THR_CREATE, 52, 1);
	w32(p, 16, 43); w32(p, 20, 42); memcpy(p + 32, "worker", 6);
	p = rr_add(rr, PMCRING_TYPE_PROCEXEC, 56, 0);	/* 40 + 14 -> 56 */
	w32(p, 16, 42); w32(p, 20, 0x100); w64(p, 24, 0x400000);
	w64(p, 32, 0x7f0000000000ull); memcpy(p + 40, "/usr/bin/prog", 13);
	p = rr_add(rr, PMCRING_TYPE_MAP_IN, 48, 0);	/* 32 + 15 -> 48 */
	w32(p, 16, 42); w64(p, 24, 0x7f1234560000ull);
	memcpy(p + 32, "/lib/libc.so.6", 14);
	p = rr_add(rr, PMCRING_TYPE_CALLCHAIN, 56, 1);	/* 3 PCs */
	w32(p, 16, 42); w32(p, 20, 43); w32(p, 24, 0x100);
	w32(p, 28, 1u << 16 | PMCRING_CC_F_USERSPACE);
	w64(p, 32, 0xffffffff81000000ull); w64(p, 40, 0x401000);
	w64(p, 48, 0x402000);
	p = rr_add(rr, PMCRING_TYPE_PROCCSW, 40, 1);
	w64(p, 16, 12345); w32(p, 24, 0x100); w32(p, 28, 42); w32(p, 32, 43);
	p = rr_add(rr, PMCRING_TYPE_USERDATA, 24, 0);
	w32(p, 16, 0x2a);
	rr_add(rr, PMCRING_TYPE_DROPNOTIFY, 16, 1);
	p = rr_add(rr, PMCRING_TYPE_GENERATED, 40, 1);
	w64(p, 16, 7); w32(p, 24, 1); w32(p, 28, PMCRING_GEN_CTX_TASK);
	for (i = 32; i < 40; i++)
		p[i] = (uint8_t)(7 + i);
	p = rr_add(rr, PMCRING_TYPE_PROCFORK, 24, 0);
	w32(p, 16, 42); w32(p, 20, 44);
	p = rr_add(rr, PMCRING_TYPE_PMCATTACH, 40, 0);	/* 24 + 14 -> 40 */
	w32(p, 16, 0x100); w32(p, 20, 44); memcpy(p + 24, "/usr/bin/prog", 13);
	p = rr_add(rr, PMCRING_TYPE_PMCDETACH, 24, 0);
	w32(p, 16, 0x100); w32(p, 20, 44);
	p = rr_add(rr, PMCRING_TYPE_MAP_OUT, 40, 1);
	w32(p, 16, 42); w64(p, 24, 0x7f1234560000ull);
	w64(p, 32, 0x7f1234580000ull);
	p = rr_add(rr, PMCRING_TYPE_THR_EXIT, 24, 1);
	w32(p, 16, 43);
	p = rr_add(rr, PMCRING_TYPE_SYSEXIT, 24, 0);
	w32(p, 16, 44);
	p = rr_add(rr, PMCRING_TYPE_PROCEXIT, 32, 0);
	w32(p, 16, 0x100); w32(p, 20, 42); w64(p, 24, 999);
	p = rr_add(rr, PMCRING_TYPE_PMCALLOCATEDYN, 96, 1);
	w32(p, 16, 0x101); w32(p, 20, 0); memcpy(p + 32, "instructions", 12);
}

#endif /* TEST_FMT_COMMON_H */
