// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * pmclog(3)-style parser (FreeBSD lib/libpmc/pmclog.c) of pmclog files and
 * streams: pmcring's own and FreeBSD-written logs (records 4-byte aligned,
 * V10 version word).
 *
 * Unlike FreeBSD's, every length is checked against the record's type and
 * against the bytes held before anything is read, so corrupt input ends in
 * a sticky ERROR with a reason, never in a read out of bounds.  A record is
 * copied to an 8-aligned buffer before it is decoded: 64-bit fields of
 * records at 4-aligned stream offsets are then naturally aligned for the
 * caller too.
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <unistd.h>
#include "internal.h"

#define LOG_READ_CHUNK		(64 * 1024)

struct pmcring_log {
	int			fd;	/* PMCRING_LOG_FD_NONE: memory */
	enum pmcring_log_state	state;	/* sticky EOF/ERROR, else OK */
	const char		*reason;
	uint8_t			*buf;	/* unparsed bytes: buf[start..end) */
	size_t			cap, start, end;
	uint64_t		off;	/* stream offset of buf[start] */
	uint64_t		count;
	uint64_t		tsc_freq; /* INITIALIZE's, 0: none seen */
	uint64_t		rec[(PMCRING_RECORD_MAX + 7) / 8];
};

/* Record lengths: exact for fixed-size types, minimum for the others. */
static const struct {
	const char	*name;
	uint16_t	size;
	bool		fixed;
} types[PMCRING_TYPE_MAX + 1] = {
	[PMCRING_TYPE_CLOSELOG]	= { "CLOSELOG", 16, true },
	[PMCRING_TYPE_DROPNOTIFY] = { "DROPNOTIFY", 16, true },
	[PMCRING_TYPE_INITIALIZE] = { "INITIALIZE", 112, true },
	[PMCRING_TYPE_PMCALLOCATE] = { "PMCALLOCATE", 40, true },
	[PMCRING_TYPE_PMCATTACH] = { "PMCATTACH", 24, false },
	[PMCRING_TYPE_PMCDETACH] = { "PMCDETACH", 24, true },
	[PMCRING_TYPE_PROCCSW]	= { "PROCCSW", 40, true },
	[PMCRING_TYPE_PROCEXEC]	= { "PROCEXEC", 40, false },
	[PMCRING_TYPE_PROCEXIT]	= { "PROCEXIT", 32, true },
	[PMCRING_TYPE_PROCFORK]	= { "PROCFORK", 24, true },
	[PMCRING_TYPE_SYSEXIT]	= { "SYSEXIT", 24, true },
	[PMCRING_TYPE_USERDATA]	= { "USERDATA", 24, true },
	[PMCRING_TYPE_MAP_IN]	= { "MAP_IN", 32, false },
	[PMCRING_TYPE_MAP_OUT]	= { "MAP_OUT", 40, true },
	[PMCRING_TYPE_CALLCHAIN] = { "CALLCHAIN", 32, false },
	[PMCRING_TYPE_PMCALLOCATEDYN] = { "PMCALLOCATEDYN", 96, true },
	[PMCRING_TYPE_THR_CREATE] = { "THR_CREATE", 52, true },
	[PMCRING_TYPE_THR_EXIT]	= { "THR_EXIT", 24, true },
	[PMCRING_TYPE_PROC_CREATE] = { "PROC_CREATE", 44, true },
	[PMCRING_TYPE_GENERATED] = { "GENERATED", 16, false },
	[PMCRING_TYPE_PERIOD]	= { "PERIOD", 32, true },
};

const char *pmcring_type_name(unsigned int type)
{
	return type <= PMCRING_TYPE_MAX ? types[type].name : NULL;
}

struct pmcring_log *pmcring_log_open(int fd)
{
	struct pmcring_log *l;

	if (fd < 0 && fd != PMCRING_LOG_FD_NONE) {
		errno = EBADF;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	l->fd = fd;
	l->state = PMCRING_LOG_OK;
	return l;
}

void pmcring_log_close(struct pmcring_log *l)
{
	if (!l)
		return;
	free(l->buf);
	free(l);
}

/* Room for @len more bytes after end, moving unparsed bytes to the front. */
static int reserve(struct pmcring_log *l, size_t len)
{
	size_t held = l->end - l->start, cap;
	uint8_t *nb;

	if (l->cap - l->end >= len)
		return 0;
	if (l->start) {
		memmove(l->buf, l->buf + l->start, held);
		l->start = 0;
		l->end = held;
		if (l->cap - l->end >= len)
			return 0;
	}
	if (len > SIZE_MAX / 2 - held)
		return -ENOMEM;
	cap = l->cap ? l->cap : LOG_READ_CHUNK;
	while (cap - held < len)
		cap *= 2;
	nb = realloc(l->buf, cap);
	if (!nb)
		return -ENOMEM;
	l->buf = nb;
	l->cap = cap;
	return 0;
}

int pmcring_log_feed(struct pmcring_log *l, const void *data, size_t len)
{
	int err;

	if (l->fd != PMCRING_LOG_FD_NONE || (!data && len))
		return -EINVAL;
	if (!len || l->state != PMCRING_LOG_OK)
		return 0;
	err = reserve(l, len);
	if (err)
		return err;
	memcpy(l->buf + l->end, data, len);
	l->end += len;
	return 0;
}

/* fd mode: read more bytes; 1 read, 0 end of file, <0 error. */
static int fill(struct pmcring_log *l)
{
	ssize_t n;

	if (reserve(l, LOG_READ_CHUNK))
		return -ENOMEM;
	do {
		n = read(l->fd, l->buf + l->end, l->cap - l->end);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	l->end += (size_t)n;
	return n > 0;
}

static int set_state(struct pmcring_log *l, struct pmcring_log_ev *ev,
		     enum pmcring_log_state st, const char *reason)
{
	if (st != PMCRING_LOG_REQUIRE_DATA) {
		l->state = st;
		l->reason = reason;
	}
	ev->pl_state = st;
	ev->pl_reason = reason;
	ev->pl_offset = l->off;
	ev->pl_count = l->count;
	return -1;
}

/* Check a header: NULL if it may start a valid record, else why not. */
static const char *check_header(uint32_t hdr)
{
	uint32_t len = PMCRING_HEADER_LEN(hdr), type = PMCRING_HEADER_TYPE(hdr);

	if (!len)
		return "zero record length";
	if (PMCRING_HEADER_MAGIC(hdr) != PMCRING_LOG_MAGIC)
		return "bad record magic";
	if (type > PMCRING_TYPE_MAX || !types[type].name)
		return "unknown record type";
	if (len > PMCRING_RECORD_MAX)
		return "record longer than PMCRING_RECORD_MAX";
	if (len % 4)
		return "record length not a multiple of 4";
	if (len < types[type].size)
		return "record shorter than its type";
	if (types[type].fixed && len != types[type].size)
		return "wrong length for a fixed-size record";
	return NULL;
}

/*
 * A NUL-terminated path at @off of the record, or NULL.  As FreeBSD's
 * PMCLOG_GET_PATHLEN: the path area (the rest of the record) is at most
 * PATH_MAX bytes, whatever the place of the NUL.
 */
static const char *path_at(const uint8_t *rec, uint32_t off, uint32_t len)
{
	const uint8_t *nul;

	if (len - off > PMCRING_PATH_MAX)
		return NULL;
	nul = memchr(rec + off, 0, len - off);
	if (!nul)
		return NULL;
	return (const char *)rec + off;
}

static void copy_str(char *dst, const char *src, size_t n)
{
	memcpy(dst, src, n);
	dst[n] = '\0';
}

/* Decode the record in l->rec into ev; NULL, or why it is corrupt. */
static const char *decode(const uint8_t *rec, uint32_t type, uint32_t len,
			  struct pmcring_log_ev *ev)
{
	const void *p = rec;

	memset(&ev->pl_u, 0, sizeof(ev->pl_u));
	switch (type) {
	case PMCRING_TYPE_INITIALIZE: {
		const struct pmcring_rec_initialize *r = p;

		if ((r->pl_version & 0xff000000u) !=
		    (PMCRING_LOG_VERSION & 0xff000000u))
			return "unsupported log version";
		ev->pl_u.pl_i.pl_version = r->pl_version;
		ev->pl_u.pl_i.pl_arch = r->pl_cpu;
		ev->pl_u.pl_i.pl_tsc_freq = r->pl_tsc_freq;
		ev->pl_u.pl_i.pl_ts_sec = r->pl_ts_sec;
		ev->pl_u.pl_i.pl_ts_nsec = r->pl_ts_nsec;
		copy_str(ev->pl_u.pl_i.pl_cpuid, r->pl_cpuid,
			 PMCRING_CPUID_LEN);
		break;
	}
	case PMCRING_TYPE_PMCALLOCATE: {
		const struct pmcring_rec_pmcallocate *r = p;

		ev->pl_u.pl_a.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_a.pl_event = r->pl_event;
		ev->pl_u.pl_a.pl_flags = r->pl_flags;
		ev->pl_u.pl_a.pl_rate = r->pl_rate;
		break;
	}
	case PMCRING_TYPE_PMCALLOCATEDYN: {
		const struct pmcring_rec_pmcallocatedyn *r = p;

		ev->pl_u.pl_ad.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_ad.pl_event = r->pl_event;
		ev->pl_u.pl_ad.pl_flags = r->pl_flags;
		copy_str(ev->pl_u.pl_ad.pl_evname, r->pl_evname,
			 PMCRING_NAME_MAX);
		break;
	}
	case PMCRING_TYPE_PMCATTACH: {
		const struct pmcring_rec_pmcattach *r = p;

		ev->pl_u.pl_t.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_t.pl_pid = r->pl_pid;
		ev->pl_u.pl_t.pl_pathname = path_at(rec, 24, len);
		if (!ev->pl_u.pl_t.pl_pathname)
			return "bad path (no NUL, or an area over PATH_MAX)";
		break;
	}
	case PMCRING_TYPE_PMCDETACH: {
		const struct pmcring_rec_pmcdetach *r = p;

		ev->pl_u.pl_d.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_d.pl_pid = r->pl_pid;
		break;
	}
	case PMCRING_TYPE_PROCCSW: {
		const struct pmcring_rec_proccsw *r = p;

		ev->pl_u.pl_c.pl_value = r->pl_value;
		ev->pl_u.pl_c.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_c.pl_pid = r->pl_pid;
		ev->pl_u.pl_c.pl_tid = r->pl_tid;
		break;
	}
	case PMCRING_TYPE_PROCEXEC: {
		const struct pmcring_rec_procexec *r = p;

		ev->pl_u.pl_x.pl_pid = r->pl_pid;
		ev->pl_u.pl_x.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_x.pl_baseaddr = r->pl_baseaddr;
		ev->pl_u.pl_x.pl_dynaddr = r->pl_dynaddr;
		ev->pl_u.pl_x.pl_pathname = path_at(rec, 40, len);
		if (!ev->pl_u.pl_x.pl_pathname)
			return "bad path (no NUL, or an area over PATH_MAX)";
		break;
	}
	case PMCRING_TYPE_PROCEXIT: {
		const struct pmcring_rec_procexit *r = p;

		ev->pl_u.pl_e.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_e.pl_pid = r->pl_pid;
		ev->pl_u.pl_e.pl_value = r->pl_value;
		break;
	}
	case PMCRING_TYPE_PROCFORK: {
		const struct pmcring_rec_procfork *r = p;

		ev->pl_u.pl_f.pl_oldpid = r->pl_oldpid;
		ev->pl_u.pl_f.pl_newpid = r->pl_newpid;
		break;
	}
	case PMCRING_TYPE_SYSEXIT:
		ev->pl_u.pl_se.pl_pid =
			((const struct pmcring_rec_sysexit *)p)->pl_pid;
		break;
	case PMCRING_TYPE_USERDATA:
		ev->pl_u.pl_u.pl_userdata =
			((const struct pmcring_rec_userdata *)p)->pl_userdata;
		break;
	case PMCRING_TYPE_MAP_IN: {
		const struct pmcring_rec_map_in *r = p;

		ev->pl_u.pl_mi.pl_pid = r->pl_pid;
		ev->pl_u.pl_mi.pl_start = r->pl_start;
		ev->pl_u.pl_mi.pl_pathname = path_at(rec, 32, len);
		if (!ev->pl_u.pl_mi.pl_pathname)
			return "bad path (no NUL, or an area over PATH_MAX)";
		break;
	}
	case PMCRING_TYPE_MAP_OUT: {
		const struct pmcring_rec_map_out *r = p;

		ev->pl_u.pl_mo.pl_pid = r->pl_pid;
		ev->pl_u.pl_mo.pl_start = r->pl_start;
		ev->pl_u.pl_mo.pl_end = r->pl_end;
		break;
	}
	case PMCRING_TYPE_CALLCHAIN: {
		const struct pmcring_rec_callchain *r = p;

		if ((len - PMCRING_SIZE_CALLCHAIN_MIN) % 8)
			return "callchain length not 32 + 8 * frames";
		if ((len - PMCRING_SIZE_CALLCHAIN_MIN) / 8 >
		    PMCRING_CALLCHAIN_DEPTH_MAX)
			return "callchain longer than 512 frames";
		ev->pl_u.pl_cc.pl_pid = r->pl_pid;
		ev->pl_u.pl_cc.pl_tid = r->pl_tid;
		ev->pl_u.pl_cc.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_cc.pl_cpuflags = r->pl_cpuflags;
		ev->pl_u.pl_cc.pl_cpu = r->pl_cpuflags >> 16;
		ev->pl_u.pl_cc.pl_npc = (len - PMCRING_SIZE_CALLCHAIN_MIN) / 8;
		ev->pl_u.pl_cc.pl_pc = (const uint64_t *)r->pl_pc;
		break;
	}
	case PMCRING_TYPE_THR_CREATE: {
		const struct pmcring_rec_thr_create *r = p;

		ev->pl_u.pl_tc.pl_tid = r->pl_tid;
		ev->pl_u.pl_tc.pl_pid = r->pl_pid;
		ev->pl_u.pl_tc.pl_flags = r->pl_flags;
		copy_str(ev->pl_u.pl_tc.pl_tdname, r->pl_tdname,
			 PMCRING_COMM_LEN);
		break;
	}
	case PMCRING_TYPE_THR_EXIT:
		ev->pl_u.pl_te.pl_tid =
			((const struct pmcring_rec_thr_exit *)p)->pl_tid;
		break;
	case PMCRING_TYPE_PROC_CREATE: {
		const struct pmcring_rec_proc_create *r = p;

		ev->pl_u.pl_pc.pl_pid = r->pl_pid;
		ev->pl_u.pl_pc.pl_flags = r->pl_flags;
		copy_str(ev->pl_u.pl_pc.pl_pcomm, r->pl_pcomm,
			 PMCRING_COMM_LEN);
		break;
	}
	case PMCRING_TYPE_GENERATED: {
		const struct pmcring_rec_generated *r = p;

		if (len >= 24)
			ev->pl_u.pl_g.pl_seq = r->pl_seq;
		if (len >= 32) {
			ev->pl_u.pl_g.pl_cpu = r->pl_cpu;
			ev->pl_u.pl_g.pl_ctx = r->pl_ctx;
		}
		break;
	}
	case PMCRING_TYPE_PERIOD: {
		const struct pmcring_rec_period *r = p;

		ev->pl_u.pl_p.pl_pmcid = r->pl_pmcid;
		ev->pl_u.pl_p.pl_cpu = r->pl_cpu;
		ev->pl_u.pl_p.pl_period = r->pl_period;
		break;
	}
	default:	/* CLOSELOG, DROPNOTIFY: header only */
		break;
	}
	return NULL;
}

/*
 * Header timestamp to ns with INITIALIZE's tsc_freq (ticks per second): a
 * FreeBSD log counts TSC ticks, pmcring's count ns (tsc_freq 10^9, the
 * identity).  128-bit product, no overflow below 2^64 ns.
 */
static uint64_t tsc_to_ns(uint64_t tsc, uint64_t freq)
{
	unsigned __int128 ns;

	if (!freq || freq == 1000000000u)
		return tsc;
	ns = (unsigned __int128)tsc * 1000000000u / freq;
	return ns > UINT64_MAX ? UINT64_MAX : (uint64_t)ns;
}

static int log_read(struct pmcring_log *l, struct pmcring_log_ev *ev)
{
	uint32_t hdr, len, type;
	const char *why;
	const uint8_t *src;
	int ret;

	if (l->state != PMCRING_LOG_OK)
		return set_state(l, ev, l->state, l->reason);
	for (;;) {
		size_t held = l->end - l->start;

		if (held >= 4) {
			memcpy(&hdr, l->buf + l->start, 4);
			why = check_header(hdr);
			if (why)
				return set_state(l, ev, PMCRING_LOG_ERROR, why);
			if (held >= PMCRING_HEADER_LEN(hdr))
				break;
		}
		if (l->fd == PMCRING_LOG_FD_NONE)
			return set_state(l, ev, PMCRING_LOG_REQUIRE_DATA, NULL);
		ret = fill(l);
		/* a non-blocking fd with nothing to read yet: try later */
		if (ret == -EAGAIN || ret == -EWOULDBLOCK)
			return set_state(l, ev, PMCRING_LOG_REQUIRE_DATA, NULL);
		if (ret < 0)
			return set_state(l, ev, PMCRING_LOG_ERROR,
					 ret == -ENOMEM ? "out of memory"
							: "read error");
		if (!ret)	/* a truncated last record reads as EOF */
			return set_state(l, ev, PMCRING_LOG_EOF, NULL);
	}

	len = PMCRING_HEADER_LEN(hdr);
	type = PMCRING_HEADER_TYPE(hdr);
	src = l->buf + l->start;
	memcpy(l->rec, src, len);
	ev->pl_type = type;
	ev->pl_len = len;
	ev->pl_data = l->rec;
	memcpy(&ev->pl_tsc, src + 8, 8);
	why = decode((const uint8_t *)l->rec, type, len, ev);
	if (why)
		return set_state(l, ev, PMCRING_LOG_ERROR, why);
	if (type == PMCRING_TYPE_INITIALIZE)
		l->tsc_freq = ev->pl_u.pl_i.pl_tsc_freq;
	ev->pl_ts = tsc_to_ns(ev->pl_tsc, l->tsc_freq);
	l->start += len;
	l->off += len;
	/* FreeBSD: ps_offset += evlen, pl_offset = ps_offset */
	ev->pl_offset = l->off;
	ev->pl_count = ++l->count;
	ev->pl_reason = NULL;
	if (type == PMCRING_TYPE_CLOSELOG) {
		l->state = PMCRING_LOG_EOF;
		ev->pl_state = PMCRING_LOG_EOF;
		return -1;
	}
	ev->pl_state = PMCRING_LOG_OK;
	return 0;
}

/*
 * The event is decoded whole on the stack and copied up to the caller's
 * size: a program built against an older, smaller struct gets its fields.
 */
int pmcring_log_next(struct pmcring_log *l, struct pmcring_log_ev *ev)
{
	struct pmcring_log_ev full;
	size_t sz = ev->sz;
	int ret;

	if (sz < offsetof(struct pmcring_log_ev, pl_u)) {
		errno = EINVAL;
		return -1;
	}
	memset(&full, 0, sizeof(full));
	ret = log_read(l, &full);
	full.sz = sz;
	memcpy(ev, &full, sz < sizeof(full) ? sz : sizeof(full));
	return ret;
}

uint32_t pmcring_version(void)
{
	return LIBPMCRING_VERSION;
}
