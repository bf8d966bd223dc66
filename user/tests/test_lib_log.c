// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Description: the pmclog parser decodes every record type of a valid
 * stream (4-byte aligned records, as FreeBSD writes them); every truncation
 * of it gives REQUIRE_DATA (memory) or EOF (fd), never ERROR; feeding it in
 * chunks of every size gives the same events as reading it whole; corrupt
 * inputs give a sticky ERROR with a reason; records taken from rings parse
 * back when written with their exact lengths.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "libpmcring_test.h"

#define FAIL(...) do { \
	fprintf(stderr, "FAIL %s:%d: ", __func__, __LINE__); \
	fprintf(stderr, __VA_ARGS__); fputc('\n', stderr); \
	return 1; } while (0)

static uint8_t stream[64 * 1024];
static size_t stream_len;
static unsigned int nrec;
static size_t rec_off[64];

/* Append a record of @type and @len; returns its bytes to fill in. */
static uint8_t *rec(unsigned int type, uint32_t len)
{
	uint8_t *r = stream + stream_len;
	uint32_t hdr = PMCRING_HEADER(type, len);
	uint64_t ts = 1000 + nrec * 10;

	memset(r, 0, len);
	memcpy(r, &hdr, 4);
	memcpy(r + 8, &ts, 8);
	rec_off[nrec++] = stream_len;
	stream_len += len;
	return r;
}

static void put32(uint8_t *r, size_t off, uint32_t v) { memcpy(r + off, &v, 4); }
static void put64(uint8_t *r, size_t off, uint64_t v) { memcpy(r + off, &v, 8); }

static uint8_t *rec_path(unsigned int type, uint32_t fixed, const char *path)
{
	uint32_t len = PMCRING_LOG_ALIGN(fixed + (uint32_t)strlen(path) + 1);
	uint8_t *r = rec(type, len);

	strcpy((char *)r + fixed, path);
	return r;
}

static void build_stream(void)
{
	uint8_t *r;
	unsigned int i;

	r = rec(PMCRING_TYPE_INITIALIZE, 112);
	put32(r, 16, PMCRING_LOG_VERSION);
	put32(r, 20, 7);
	put64(r, 24, 1000000000);
	put64(r, 32, 1700000000);
	put64(r, 40, 123);
	memset(r + 48, 'c', 64);		/* cpuid without a NUL */
	r = rec(PMCRING_TYPE_PMCALLOCATEDYN, 96);
	put32(r, 16, 0x100);
	put32(r, 20, 3);
	strcpy((char *)r + 32, "instructions");
	r = rec(PMCRING_TYPE_PMCALLOCATE, 40);
	put32(r, 16, 0x101);
	put64(r, 32, 100000);
	r = rec(PMCRING_TYPE_THR_CREATE, 52);	/* from here on 4 mod 8 */
	put32(r, 16, 43);
	put32(r, 20, 42);
	strcpy((char *)r + 32, "worker");
	r = rec(PMCRING_TYPE_PROC_CREATE, 44);
	put32(r, 16, 42);
	memcpy(r + 24, "abcdefghijklmnopqrst", 20);	/* full, no NUL */
	r = rec_path(PMCRING_TYPE_MAP_IN, 32, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	put32(r, 16, 42);
	put64(r, 24, 0x7f0000000000ull);
	r = rec_path(PMCRING_TYPE_PMCATTACH, 24, "/bin/sh");
	put32(r, 16, 0x100);
	put32(r, 20, 42);
	r = rec_path(PMCRING_TYPE_PROCEXEC, 40, "/usr/bin/true");
	put32(r, 16, 42);
	put64(r, 24, 0x7f0000001000ull);	/* AT_BASE: the interpreter */
	put64(r, 32, 0x555555554000ull);	/* the PIE's load base */
	r = rec(PMCRING_TYPE_CALLCHAIN, 32 + 8 * 5);
	put32(r, 16, 42);
	put32(r, 20, 43);
	put32(r, 24, 0x100);
	put32(r, 28, 3u << 16 | PMCRING_CC_F_USERSPACE);
	for (i = 0; i < 5; i++)
		put64(r, 32 + 8 * i, 0xffffffff81000000ull + i);
	r = rec(PMCRING_TYPE_PROCCSW, 40);
	put64(r, 16, 999);
	r = rec(PMCRING_TYPE_PROCEXIT, 32);
	r = rec(PMCRING_TYPE_PROCFORK, 24);
	put32(r, 16, 42);
	put32(r, 20, 44);
	rec(PMCRING_TYPE_SYSEXIT, 24);
	r = rec(PMCRING_TYPE_USERDATA, 24);
	put32(r, 16, 0xabcd);
	r = rec(PMCRING_TYPE_MAP_OUT, 40);
	put64(r, 32, 0x7f0000100000ull);
	rec(PMCRING_TYPE_THR_EXIT, 24);
	rec(PMCRING_TYPE_PMCDETACH, 24);
	rec(PMCRING_TYPE_DROPNOTIFY, 16);
	r = rec(PMCRING_TYPE_GENERATED, 48);
	put64(r, 16, 77);
	put32(r, 24, 1);
	put32(r, 28, PMCRING_GEN_CTX_HARDIRQ);
	r = rec(PMCRING_TYPE_CALLCHAIN, PMCRING_RECORD_MAX);
	for (i = 0; i < 512; i++)
		put64(r, 32 + 8 * i, i);
	rec(PMCRING_TYPE_PROCFORK, 24);
	rec(PMCRING_TYPE_CLOSELOG, 16);
}

/* ---- reading it whole ---------------------------------------------------- */

struct ev_copy {
	uint64_t	off, ts, count;
	uint32_t	type, len;
	uint8_t		data[PMCRING_RECORD_MAX];
};
static struct ev_copy whole[64];

static int test_whole(void)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	struct pmcring_log_ev ev;
	unsigned int n = 0;

	if (!l || pmcring_log_feed(l, stream, stream_len))
		FAIL("open/feed");
	while (pmcring_log_read(l, &ev) == 0) {
		if (ev.pl_offset != rec_off[n] + ev.pl_len ||
		    ev.pl_count != n + 1 ||
		    ev.pl_ts != 1000 + n * 10u || (uintptr_t)ev.pl_data % 8)
			FAIL("record %u: offset %llu count %llu", n,
			     (unsigned long long)ev.pl_offset,
			     (unsigned long long)ev.pl_count);
		whole[n].off = ev.pl_offset;
		whole[n].ts = ev.pl_ts;
		whole[n].count = ev.pl_count;
		whole[n].type = ev.pl_type;
		whole[n].len = ev.pl_len;
		memcpy(whole[n].data, ev.pl_data, ev.pl_len);
		switch (ev.pl_type) {
		case PMCRING_TYPE_INITIALIZE:
			if (ev.pl_u.pl_i.pl_version != PMCRING_LOG_VERSION ||
			    ev.pl_u.pl_i.pl_tsc_freq != 1000000000 ||
			    ev.pl_u.pl_i.pl_ts_sec != 1700000000 ||
			    ev.pl_u.pl_i.pl_ts_nsec != 123 ||
			    strlen(ev.pl_u.pl_i.pl_cpuid) != 64)
				FAIL("INITIALIZE");
			break;
		case PMCRING_TYPE_PMCALLOCATEDYN:
			if (strcmp(ev.pl_u.pl_ad.pl_evname, "instructions") ||
			    ev.pl_u.pl_ad.pl_pmcid != 0x100)
				FAIL("PMCALLOCATEDYN");
			break;
		case PMCRING_TYPE_THR_CREATE:
			if (strcmp(ev.pl_u.pl_tc.pl_tdname, "worker") ||
			    ev.pl_u.pl_tc.pl_pid != 42 || ev.pl_len != 52)
				FAIL("THR_CREATE");
			break;
		case PMCRING_TYPE_PROC_CREATE:
			if (strcmp(ev.pl_u.pl_pc.pl_pcomm,
				   "abcdefghijklmnopqrst"))
				FAIL("PROC_CREATE");
			break;
		case PMCRING_TYPE_MAP_IN:
			if (strcmp(ev.pl_u.pl_mi.pl_pathname,
				   "/usr/lib/x86_64-linux-gnu/libc.so.6") ||
			    ev.pl_u.pl_mi.pl_start != 0x7f0000000000ull)
				FAIL("MAP_IN");
			break;
		case PMCRING_TYPE_PMCATTACH:
			if (strcmp(ev.pl_u.pl_t.pl_pathname, "/bin/sh"))
				FAIL("PMCATTACH");
			break;
		case PMCRING_TYPE_PROCEXEC:
			if (strcmp(ev.pl_u.pl_x.pl_pathname, "/usr/bin/true") ||
			    ev.pl_u.pl_x.pl_baseaddr != 0x7f0000001000ull ||
			    ev.pl_u.pl_x.pl_dynaddr != 0x555555554000ull)
				FAIL("PROCEXEC");
			break;
		case PMCRING_TYPE_CALLCHAIN:
			if (ev.pl_u.pl_cc.pl_npc == 5 &&
			    (ev.pl_u.pl_cc.pl_cpu != 3 ||
			     ev.pl_u.pl_cc.pl_pc[4] != 0xffffffff81000004ull))
				FAIL("CALLCHAIN");
			if (ev.pl_u.pl_cc.pl_npc != 5 &&
			    (ev.pl_u.pl_cc.pl_npc != 512 ||
			     ev.pl_u.pl_cc.pl_pc[511] != 511))
				FAIL("CALLCHAIN 512");
			break;
		case PMCRING_TYPE_GENERATED:
			if (ev.pl_u.pl_g.pl_seq != 77 ||
			    ev.pl_u.pl_g.pl_ctx != PMCRING_GEN_CTX_HARDIRQ)
				FAIL("GENERATED");
			break;
		case PMCRING_TYPE_USERDATA:
			if (ev.pl_u.pl_u.pl_userdata != 0xabcd)
				FAIL("USERDATA");
			break;
		}
		n++;
	}
	if (ev.pl_state != PMCRING_LOG_EOF || n != nrec - 1 ||
	    ev.pl_type != PMCRING_TYPE_CLOSELOG || ev.pl_count != nrec ||
	    ev.pl_offset != stream_len)
		FAIL("end: state %d after %u of %u records (%s)", ev.pl_state,
		     n, nrec, ev.pl_reason ? ev.pl_reason : "");
	if (pmcring_log_read(l, &ev) != -1 || ev.pl_state != PMCRING_LOG_EOF)
		FAIL("EOF not sticky");
	pmcring_log_close(l);
	printf("# %u records, %zu bytes\n", nrec, stream_len);
	return 0;
}

/* ---- PROCEXEC, byte for byte as FreeBSD writes it ------------------------ */

/*
 * FreeBSD's pmclog_process_procexec(): pid 0x2a, pmcid 0x100, pl_baseaddr
 * (offset 24) = imgp->reloc_base, AT_BASE, the interpreter's load address;
 * pl_dynaddr (offset 32) = imgp->et_dyn_addr, the PIE's load base, which
 * libpmcstat places the executable with; path "/bin/ls", length 48.
 */
static const uint8_t procexec_golden[48] = {
	0x30, 0x00, 0x09, 0xee, 0x00, 0x00, 0x00, 0x00,	/* hdr, spare */
	0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11,	/* tsc */
	0x2a, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,	/* pid, pmcid */
	0x00, 0x10, 0x00, 0x40, 0x00, 0x08, 0x00, 0x00,	/* 24: 0x80040001000 */
	0x00, 0x40, 0x55, 0x55, 0x55, 0x55, 0x00, 0x00,	/* 32: 0x555555554000 */
	'/', 'b', 'i', 'n', '/', 'l', 's', 0x00,
};

static int test_procexec_golden(void)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	const struct pmcring_log_ev_procexec *x;
	struct pmcring_log_ev ev;

	if (!l || pmcring_log_feed(l, procexec_golden, sizeof(procexec_golden)))
		FAIL("open/feed");
	if (pmcring_log_read(l, &ev) || ev.pl_type != PMCRING_TYPE_PROCEXEC)
		FAIL("read: state %d (%s)", ev.pl_state,
		     ev.pl_reason ? ev.pl_reason : "");
	x = &ev.pl_u.pl_x;
	if (x->pl_pid != 42 || x->pl_pmcid != 0x100 ||
	    x->pl_baseaddr != 0x80040001000ull ||
	    x->pl_dynaddr != 0x555555554000ull ||
	    strcmp(x->pl_pathname, "/bin/ls"))
		FAIL("PROCEXEC: base %#llx dyn %#llx",
		     (unsigned long long)x->pl_baseaddr,
		     (unsigned long long)x->pl_dynaddr);
	/* the uapi struct lays the fields out at the same offsets */
	if (offsetof(struct pmcring_rec_procexec, pl_baseaddr) != 24 ||
	    offsetof(struct pmcring_rec_procexec, pl_dynaddr) != 32 ||
	    offsetof(struct pmcring_rec_procexec, pl_pathname) != 40)
		FAIL("struct pmcring_rec_procexec layout");
	pmcring_log_close(l);
	return 0;
}

/* ---- the state transitions of FreeBSD's pmclog_read() -------------------- */

static unsigned int find(unsigned int type);

#define EXPECT_EV(ret_, st_, off_, cnt_) do {				\
	int r_ = pmcring_log_read(l, &ev);				\
	if (r_ != (ret_) || ev.pl_state != (st_) ||			\
	    ev.pl_offset != (off_) || ev.pl_count != (cnt_))		\
		FAIL("read %d state %d offset %llu count %llu, want "	\
		     "%d %d %llu %llu", r_, ev.pl_state,		\
		     (unsigned long long)ev.pl_offset,			\
		     (unsigned long long)ev.pl_count, (ret_), (st_),	\
		     (unsigned long long)(off_), (unsigned long long)(cnt_)); \
} while (0)

/*
 * NEW_RECORD -> EXPECTING_HEADER (< 4 bytes) -> PARTIAL_RECORD -> a record
 * (pl_offset just past it, ps_offset += evlen) -> CLOSELOG: -1, EOF, with
 * pl_type CLOSELOG and pl_offset past it; EOF and ERROR are sticky; an
 * ERROR's pl_offset is past the last good record (where the bad one
 * starts).
 */
static int test_states(void)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	uint64_t u = rec_off[find(PMCRING_TYPE_USERDATA)];
	uint8_t bad[24];
	struct pmcring_log_ev ev;

	if (!l)
		FAIL("open");
	EXPECT_EV(-1, PMCRING_LOG_REQUIRE_DATA, 0, 0);		/* NEW_RECORD */
	pmcring_log_feed(l, stream + u, 3);
	EXPECT_EV(-1, PMCRING_LOG_REQUIRE_DATA, 0, 0);	/* EXPECTING_HEADER */
	pmcring_log_feed(l, stream + u + 3, 20);
	EXPECT_EV(-1, PMCRING_LOG_REQUIRE_DATA, 0, 0);	/* PARTIAL_RECORD */
	pmcring_log_feed(l, stream + u + 23, 1);
	EXPECT_EV(0, PMCRING_LOG_OK, 24, 1);
	if (ev.pl_type != PMCRING_TYPE_USERDATA || ev.pl_len != 24 ||
	    ev.pl_u.pl_u.pl_userdata != 0xabcd)
		FAIL("USERDATA");
	EXPECT_EV(-1, PMCRING_LOG_REQUIRE_DATA, 24, 1);
	pmcring_log_feed(l, stream + stream_len - 16, 16);	/* CLOSELOG */
	EXPECT_EV(-1, PMCRING_LOG_EOF, 40, 2);
	if (ev.pl_type != PMCRING_TYPE_CLOSELOG || ev.pl_len != 16)
		FAIL("CLOSELOG: type %u", ev.pl_type);
	pmcring_log_feed(l, stream + u, 24);	/* ignored after EOF */
	EXPECT_EV(-1, PMCRING_LOG_EOF, 40, 2);
	pmcring_log_close(l);

	l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	memcpy(bad, stream + u, 24);
	bad[3] = 0xef;				/* bad magic */
	pmcring_log_feed(l, stream + u, 24);
	pmcring_log_feed(l, bad, 24);
	EXPECT_EV(0, PMCRING_LOG_OK, 24, 1);
	EXPECT_EV(-1, PMCRING_LOG_ERROR, 24, 1);
	pmcring_log_feed(l, stream + u, 24);
	EXPECT_EV(-1, PMCRING_LOG_ERROR, 24, 1);
	pmcring_log_close(l);
	return 0;
}

/* ---- INITIALIZE's tsc_freq: a FreeBSD log at 2.4 GHz ----------------------- */

static size_t hdr_at(uint8_t *b, size_t off, unsigned int type, uint32_t len,
		     uint64_t tsc)
{
	uint32_t hdr = PMCRING_HEADER(type, len);

	memset(b + off, 0, len);
	memcpy(b + off, &hdr, 4);
	memcpy(b + off + 8, &tsc, 8);
	return off + len;
}

static int test_tsc_freq(void)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	const uint64_t ghz24 = 2400000000ull;
	struct pmcring_log_ev ev;
	uint8_t b[112 + 24 * 3];
	size_t n;

	n = hdr_at(b, 0, PMCRING_TYPE_INITIALIZE, 112, ghz24);	/* 1 s */
	put32(b, 16, PMCRING_LOG_VERSION);
	put64(b, 24, ghz24);
	n = hdr_at(b, n, PMCRING_TYPE_USERDATA, 24, 3 * ghz24 + ghz24 / 2);
	n = hdr_at(b, n, PMCRING_TYPE_USERDATA, 24, 12345);
	n = hdr_at(b, n, PMCRING_TYPE_USERDATA, 24, UINT64_MAX);
	if (!l || pmcring_log_feed(l, b, n))
		FAIL("open/feed");
	if (pmcring_log_read(l, &ev) || ev.pl_tsc != ghz24 ||
	    ev.pl_ts != 1000000000ull || ev.pl_u.pl_i.pl_tsc_freq != ghz24)
		FAIL("INITIALIZE: ts %llu tsc %llu", (unsigned long long)ev.pl_ts,
		     (unsigned long long)ev.pl_tsc);
	if (pmcring_log_read(l, &ev) || ev.pl_ts != 3500000000ull ||
	    ev.pl_tsc != 3 * ghz24 + ghz24 / 2)
		FAIL("3.5 s: ts %llu", (unsigned long long)ev.pl_ts);
	if (pmcring_log_read(l, &ev) || ev.pl_ts != 5143 || ev.pl_tsc != 12345)
		FAIL("12345 ticks: ts %llu", (unsigned long long)ev.pl_ts);
	/* (2^64 - 1) / 2.4 without overflowing the product */
	if (pmcring_log_read(l, &ev) || ev.pl_tsc != UINT64_MAX ||
	    ev.pl_ts != 7686143364045646506ull)
		FAIL("2^64 - 1 ticks: ts %llu", (unsigned long long)ev.pl_ts);
	pmcring_log_close(l);
	return 0;
}

/* ---- truncation ---------------------------------------------------------- */

static unsigned int whole_before(size_t k)
{
	unsigned int n = 0;

	while (n < nrec &&
	       (n + 1 < nrec ? rec_off[n + 1] : stream_len) <= k)
		n++;
	return n;
}

static int test_truncation(void)
{
	struct pmcring_log_ev ev;
	size_t k;
	int fd = memfd_create("trunc", 0);

	if (fd < 0 || write(fd, stream, stream_len) != (ssize_t)stream_len)
		FAIL("memfd");
	for (k = 0; k <= stream_len; k++) {
		struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
		unsigned int n = 0, want = whole_before(k);

		pmcring_log_feed(l, stream, k);
		while (pmcring_log_read(l, &ev) == 0)
			n++;
		if (k < stream_len && (ev.pl_state != PMCRING_LOG_REQUIRE_DATA ||
				       n != want))
			FAIL("memory, %zu bytes: state %d (%s), %u records, "
			     "want REQUIRE_DATA after %u", k, ev.pl_state,
			     ev.pl_reason ? ev.pl_reason : "", n, want);
		if (k == stream_len && ev.pl_state != PMCRING_LOG_EOF)
			FAIL("memory, whole: state %d", ev.pl_state);
		pmcring_log_close(l);

		/* the same prefix as a file */
		if (ftruncate(fd, (off_t)k) || lseek(fd, 0, SEEK_SET))
			FAIL("ftruncate");
		l = pmcring_log_open(fd);
		n = 0;
		while (pmcring_log_read(l, &ev) == 0)
			n++;
		if (ev.pl_state != PMCRING_LOG_EOF ||
		    n != (k == stream_len ? want - 1 : want))
			FAIL("fd, %zu bytes: state %d (%s), %u records", k,
			     ev.pl_state, ev.pl_reason ? ev.pl_reason : "", n);
		pmcring_log_close(l);
		if (k < stream_len &&
		    pwrite(fd, stream + k, 1, (off_t)k) != 1)
			FAIL("pwrite");
	}
	close(fd);
	return 0;
}

/* ---- chunked feeding ----------------------------------------------------- */

static int test_chunks(void)
{
	struct pmcring_log_ev ev;
	size_t chunk;

	for (chunk = 1; chunk <= stream_len; chunk++) {
		struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
		size_t fed = 0;
		unsigned int n = 0;
		int ret;

		for (;;) {
			ret = pmcring_log_read(l, &ev);
			if (ret == 0) {
				struct ev_copy *w = &whole[n++];

				if (n > nrec - 1 || ev.pl_offset != w->off ||
				    ev.pl_ts != w->ts || ev.pl_type != w->type ||
				    ev.pl_len != w->len ||
				    ev.pl_count != w->count ||
				    memcmp(ev.pl_data, w->data, w->len))
					FAIL("chunk %zu: record %u differs",
					     chunk, n - 1);
				continue;
			}
			if (ev.pl_state != PMCRING_LOG_REQUIRE_DATA)
				break;
			if (fed == stream_len)
				FAIL("chunk %zu: REQUIRE_DATA at the end", chunk);
			size_t c = stream_len - fed < chunk ? stream_len - fed
							    : chunk;
			pmcring_log_feed(l, stream + fed, c);
			fed += c;
		}
		if (ev.pl_state != PMCRING_LOG_EOF || n != nrec - 1)
			FAIL("chunk %zu: state %d after %u records", chunk,
			     ev.pl_state, n);
		pmcring_log_close(l);
	}
	return 0;
}

/* ---- corruption ---------------------------------------------------------- */

static int expect_error(const char *what, const uint8_t *buf, size_t len,
			unsigned int at, const char *reason)
{
	struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	struct pmcring_log_ev ev;
	unsigned int n = 0;

	pmcring_log_feed(l, buf, len);
	while (pmcring_log_read(l, &ev) == 0)
		n++;
	if (ev.pl_state != PMCRING_LOG_ERROR || !ev.pl_reason ||
	    !strstr(ev.pl_reason, reason) || n != at)
		FAIL("%s: state %d reason \"%s\" after %u records, want ERROR "
		     "\"%s\" after %u", what, ev.pl_state,
		     ev.pl_reason ? ev.pl_reason : "", n, reason, at);
	pmcring_log_feed(l, stream, stream_len);
	if (pmcring_log_read(l, &ev) != -1 || ev.pl_state != PMCRING_LOG_ERROR)
		FAIL("%s: ERROR not sticky", what);
	pmcring_log_close(l);
	return 0;
}

static unsigned int find(unsigned int type)
{
	unsigned int i;

	for (i = 0; i < nrec; i++)
		if (whole[i].type == type)
			return i;
	return 0;
}

static int corrupt_hdr(const char *what, unsigned int type, uint32_t hdr,
		       const char *reason)
{
	static uint8_t buf[sizeof(stream)];
	unsigned int i = find(type);

	memcpy(buf, stream, stream_len);
	memcpy(buf + rec_off[i], &hdr, 4);
	return expect_error(what, buf, stream_len, i, reason);
}

static int corrupt_byte(const char *what, unsigned int type, size_t off,
			uint8_t v, const char *reason)
{
	static uint8_t buf[sizeof(stream)];
	unsigned int i = find(type);

	memcpy(buf, stream, stream_len);
	memset(buf + rec_off[i] + off, v, 1);
	return expect_error(what, buf, stream_len, i, reason);
}

static int test_corrupt(void)
{
	static uint8_t buf[sizeof(stream)];
	unsigned int i = find(PMCRING_TYPE_MAP_IN);
	size_t plen = whole[i].len - 32;
	int dir;

	if (corrupt_hdr("length 0", PMCRING_TYPE_USERDATA,
			PMCRING_HEADER(PMCRING_TYPE_USERDATA, 0), "zero") ||
	    corrupt_hdr("all zero header", PMCRING_TYPE_USERDATA, 0, "zero") ||
	    corrupt_hdr("bad magic", PMCRING_TYPE_USERDATA,
			PMCRING_HEADER(PMCRING_TYPE_USERDATA, 24) ^ (1u << 30),
			"magic") ||
	    corrupt_hdr("type 4", PMCRING_TYPE_USERDATA,
			PMCRING_HEADER(4, 24), "unknown") ||
	    corrupt_hdr("type 63", PMCRING_TYPE_USERDATA,
			PMCRING_HEADER(63, 24), "unknown") ||
	    corrupt_hdr("length 0xffff", PMCRING_TYPE_GENERATED,
			PMCRING_HEADER(PMCRING_TYPE_GENERATED, 0xfffc),
			"longer than") ||
	    corrupt_hdr("length 4132", PMCRING_TYPE_CALLCHAIN,
			PMCRING_HEADER(PMCRING_TYPE_CALLCHAIN, 4136),
			"longer than") ||
	    corrupt_hdr("odd length", PMCRING_TYPE_USERDATA,
			PMCRING_HEADER(PMCRING_TYPE_USERDATA, 26), "multiple of 4") ||
	    corrupt_hdr("fixed size too long", PMCRING_TYPE_USERDATA,
			PMCRING_HEADER(PMCRING_TYPE_USERDATA, 28), "fixed-size") ||
	    corrupt_hdr("INITIALIZE short", PMCRING_TYPE_INITIALIZE,
			PMCRING_HEADER(PMCRING_TYPE_INITIALIZE, 16), "shorter") ||
	    corrupt_hdr("PMCATTACH short", PMCRING_TYPE_PMCATTACH,
			PMCRING_HEADER(PMCRING_TYPE_PMCATTACH, 20), "shorter") ||
	    corrupt_hdr("CALLCHAIN short", PMCRING_TYPE_CALLCHAIN,
			PMCRING_HEADER(PMCRING_TYPE_CALLCHAIN, 28), "shorter") ||
	    corrupt_hdr("CALLCHAIN 32+8n+4", PMCRING_TYPE_CALLCHAIN,
			PMCRING_HEADER(PMCRING_TYPE_CALLCHAIN, 36), "32 + 8") ||
	    corrupt_hdr("PMCATTACH no room for a path", PMCRING_TYPE_PMCATTACH,
			PMCRING_HEADER(PMCRING_TYPE_PMCATTACH, 24), "NUL") ||
	    corrupt_byte("version 9", PMCRING_TYPE_INITIALIZE, 19, 0x09,
			 "version"))
		return 1;
	/* MAP_IN whose path runs to the end of the record */
	memcpy(buf, stream, stream_len);
	memset(buf + rec_off[i] + 32, 'x', plen);
	if (expect_error("path without NUL", buf, stream_len, i, "NUL"))
		return 1;
	/*
	 * A path area over PATH_MAX, although the NUL comes early: FreeBSD's
	 * PMCLOG_GET_PATHLEN refuses it (MAP_IN of 32 + 1028 bytes, "/bin").
	 */
	{
		uint32_t hdr = PMCRING_HEADER(PMCRING_TYPE_MAP_IN, 32 + 1028);

		memset(buf, 0, 32 + 1028);
		memcpy(buf, &hdr, 4);
		memcpy(buf + 32, "/bin", 5);
		if (expect_error("path area over PATH_MAX", buf, 32 + 1028, 0,
				 "PATH_MAX"))
			return 1;
		/* 1024 bytes of area is FreeBSD's limit, and still fine */
		struct pmcring_log *l = pmcring_log_open(PMCRING_LOG_FD_NONE);
		struct pmcring_log_ev ev;

		hdr = PMCRING_HEADER(PMCRING_TYPE_MAP_IN, 32 + 1024);
		memcpy(buf, &hdr, 4);
		pmcring_log_feed(l, buf, 32 + 1024);
		if (pmcring_log_read(l, &ev) ||
		    strcmp(ev.pl_u.pl_mi.pl_pathname, "/bin"))
			FAIL("path area of PATH_MAX: state %d reason \"%s\"",
			     ev.pl_state, ev.pl_reason ? ev.pl_reason : "");
		pmcring_log_close(l);
	}
	/* padding between records that the length does not count */
	memcpy(buf, stream, rec_off[3]);
	memset(buf + rec_off[3], 0, 4);
	memcpy(buf + rec_off[3] + 4, stream + rec_off[3],
	       stream_len - rec_off[3]);
	if (expect_error("padding", buf, stream_len + 4, 3, "zero"))
		return 1;
	/* a read error in fd mode */
	dir = open("/", O_RDONLY | O_DIRECTORY);
	if (dir >= 0) {
		struct pmcring_log *l = pmcring_log_open(dir);
		struct pmcring_log_ev ev;

		if (pmcring_log_read(l, &ev) != -1 ||
		    ev.pl_state != PMCRING_LOG_ERROR ||
		    strcmp(ev.pl_reason, "read error"))
			FAIL("read error: state %d", ev.pl_state);
		if (pmcring_log_feed(l, stream, 4) != -EINVAL)
			FAIL("feed in fd mode accepted");
		pmcring_log_close(l);
		close(dir);
	}
	return 0;
}

/*
 * Records taken from rings (8-byte slots) and written back to back with
 * their exact lengths (4-byte aligned) parse as the same records: what
 * pmcring(1) does when it writes a pmclog file.
 */
static int test_ring_to_log(void)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 4);
	struct pmcring_cpu_buf *bufs[2] = { pmcring_uprod_cpu_buf(p, 0),
					    pmcring_uprod_cpu_buf(p, 1) };
	struct pmcring_merge_opts o = { .sz = sizeof(o),
					.clock = pmcring_uprod_clock,
					.flags = PMCRING_MERGE_F_AUTO_CONSUME };
	struct pmcring_merge *m = pmcring_merge_new(bufs, 2, &o);
	static uint8_t out[64 * 1024];
	uint64_t ts[256];
	size_t len = 0;
	unsigned int i, n = 0;
	struct pmcring_record r;
	struct pmcring_log_ev ev;
	struct pmcring_log *l;

	for (i = 0; i < 64; i++) {
		uint8_t *rec;

		switch (i % 4) {
		case 0:
			rec = pmcring_uprod_reserve(p, i % 2,
						    PMCRING_TYPE_THR_CREATE, 52);
			strcpy((char *)rec + 32, "t");
			break;
		case 1:
			rec = pmcring_uprod_reserve(p, i % 2,
						    PMCRING_TYPE_MAP_IN, 36);
			strcpy((char *)rec + 32, "/x");
			break;
		case 2:
			rec = pmcring_uprod_reserve(p, i % 2,
						    PMCRING_TYPE_CALLCHAIN, 32 + 8 * i);
			break;
		default:
			rec = pmcring_uprod_reserve(p, i % 2,
						    PMCRING_TYPE_PROC_CREATE, 44);
			break;
		}
		if (!rec)
			FAIL("reserve %u: %m", i);
		pmcring_uprod_commit(p, i % 2);
	}
	while (pmcring_merge_next(m, &r) == 1) {
		memcpy(out + len, r.data, r.len);
		len += r.len;
		ts[n++] = r.ts;
	}
	if (n != 64)
		FAIL("%u records merged", n);
	l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	pmcring_log_feed(l, out, len);
	for (i = 0; pmcring_log_read(l, &ev) == 0; i++)
		if (ev.pl_ts != ts[i])
			FAIL("record %u: ts differs", i);
	if (i != 64 || ev.pl_state != PMCRING_LOG_REQUIRE_DATA)
		FAIL("%u records parsed, state %d (%s)", i, ev.pl_state,
		     ev.pl_reason ? ev.pl_reason : "");
	pmcring_log_close(l);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return 0;
}

/* A non-blocking pipe: REQUIRE_DATA while the writer is behind, then EOF. */
static int test_nonblocking_fd(void)
{
	struct pmcring_log_ev ev;
	struct pmcring_log *l;
	int fds[2], n = 0;
	size_t half = rec_off[1] + 10;

	if (pipe2(fds, O_NONBLOCK))
		FAIL("pipe2: %m");
	l = pmcring_log_open(fds[0]);
	if (pmcring_log_read(l, &ev) != -1 ||
	    ev.pl_state != PMCRING_LOG_REQUIRE_DATA)
		FAIL("empty pipe: state %d", ev.pl_state);
	if (write(fds[1], stream, half) != (ssize_t)half)
		FAIL("write");
	while (pmcring_log_read(l, &ev) == 0)
		n++;
	if (n != 1 || ev.pl_state != PMCRING_LOG_REQUIRE_DATA)
		FAIL("half written: %d records, state %d", n, ev.pl_state);
	if (write(fds[1], stream + half, rec_off[3] - half) !=
	    (ssize_t)(rec_off[3] - half))
		FAIL("write");
	close(fds[1]);
	while (pmcring_log_read(l, &ev) == 0)
		n++;
	if (n != 3 || ev.pl_state != PMCRING_LOG_EOF)
		FAIL("after close: %d records, state %d", n, ev.pl_state);
	pmcring_log_close(l);
	close(fds[0]);
	return 0;
}

int main(void)
{
	build_stream();
	if (stream_len > sizeof(stream) / 2 || rec_off[4] % 8 == 0)
		FAIL("bad test stream");
	if (test_whole() || test_procexec_golden() || test_states() ||
	    test_tsc_freq() || test_truncation() || test_chunks() ||
	    test_corrupt() || test_ring_to_log() || test_nonblocking_fd())
		return 1;
	printf("ok log\n");
	return 0;
}
