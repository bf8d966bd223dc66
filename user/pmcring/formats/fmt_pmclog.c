// SPDX-License-Identifier: GPL-2.0
/*
 * FreeBSD hwpmc log files: INITIALIZE, the records in timestamp order with
 * FreeBSD's exact lengths, CLOSELOG.  Ring records already have the pmclog
 * layout, so they are written straight from the ring pages (the 0 or 4 pad
 * bytes of a ring slot are not part of the record and are skipped).  Only
 * PMCALLOCATE is rewritten: FreeBSD's parser cannot resolve a Linux event
 * code, so it becomes PMCALLOCATEDYN with the event's name inline (and the
 * kernel's own PMCALLOCATEDYN of the same counter is left out: one per pmcid).
 *
 * PERIOD records (pmcring's own) stay out of the file too; with
 * fmt_opts.periods the period of each CALLCHAIN goes to FILE.periods
 * instead (fmt_periods_*() below, Documentation/formats.rst): the last
 * PERIOD of its ring and pmcid, else its counter's fixed period
 * (PMCALLOCATE's rate, which the file's PMCALLOCATEDYN does not keep).
 */
#define _GNU_SOURCE
#include <endian.h>
#include <errno.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>
#include <libpmcring.h>

#include "fmt_int.h"

/* FreeBSD enum pmc_cputype: PMC_CPU_GENERIC (events are Linux perf's). */
#define PMC_CPU_GENERIC		0x400u

static void put_header(void *buf, unsigned int type, uint32_t len, uint64_t ts)
{
	memset(buf, 0, len);
	fmt_put32(buf, 0, PMCRING_HEADER(type, len));
	fmt_put64(buf, 8, ts);
}

void fmt_pmclog_initialize(void *buf, const struct fmt_opts *o)
{
	put_header(buf, PMCRING_TYPE_INITIALIZE, PMCRING_SIZE_INITIALIZE,
		   o->start_ns);
	fmt_put32(buf, 16, PMCRING_LOG_VERSION);
	fmt_put32(buf, 20, o->cputype ? o->cputype : PMC_CPU_GENERIC);
	fmt_put64(buf, 24, 1000000000ull);	/* timestamps are ns */
	fmt_put64(buf, 32, (uint64_t)o->start_rt.tv_sec);
	fmt_put64(buf, 40, (uint64_t)o->start_rt.tv_nsec);
	memcpy((char *)buf + 48, o->cpuid, PMCRING_CPUID_LEN - 1);
}

void fmt_pmclog_closelog(void *buf, uint64_t ts)
{
	put_header(buf, PMCRING_TYPE_CLOSELOG, PMCRING_SIZE_CLOSELOG, ts);
}

void fmt_pmclog_allocdyn(void *buf, const void *alloc,
			 const struct fmt_opts *o)
{
	uint32_t pmcid = fmt_get32(alloc, 16), event = fmt_get32(alloc, 20);
	char *name = (char *)buf + 32;
	unsigned int i;

	put_header(buf, PMCRING_TYPE_PMCALLOCATEDYN,
		   PMCRING_SIZE_PMCALLOCATEDYN, fmt_get64(alloc, 8));
	fmt_put32(buf, 16, pmcid);
	fmt_put32(buf, 20, event);
	fmt_put32(buf, 24, fmt_get32(alloc, 24));
	for (i = 0; i < o->nr_counters; i++) {
		if (o->counters[i].pmcid == pmcid) {
			strncpy(name, o->counters[i].name, PMCRING_NAME_MAX - 1);
			return;
		}
	}
	snprintf(name, PMCRING_NAME_MAX, "event-0x%x", event);
}

/*
 * Periods of the CALLCHAINs of one batch, staged side by side in its arena
 * PMCLOG_SLAB_ENTRIES at a time and queued as one range (OUT_META) when
 * the slab is full or the batch is about to run: one iovec per 128
 * samples, and the file's own ranges stay contiguous.
 */
#define PMCLOG_SLAB_ENTRIES	128u

struct pmclog {
	struct out_file	f;
	/* FILE.periods, open when pf.fd >= 0 */
	struct out_file	pf;
	struct out_slab	slab;
	struct fmt_period_last last;	/* of each ring and pmcid */
	/*
	 * PMCALLOCATE's rate of each fixed-period counter (0: frequency
	 * mode, or not seen): the period of its samples, which no other
	 * record of the file holds (PMCALLOCATEDYN has no rate)
	 */
	uint64_t	fixed[FMT_MAX_PMCID];
	/*
	 * PMCRING_TYPE_BIT()s of the types written as they are, straight
	 * from the ring: every FreeBSD type but INITIALIZE and CLOSELOG (ours
	 * are the only ones) and the allocations (one PMCALLOCATEDYN per
	 * pmcid), and GENERATED when kept.
	 */
	uint64_t	as_is;
	/* counters with a PMCALLOCATEDYN written: one per pmcid */
	uint32_t	alloc[FMT_MAX_COUNTERS * 4];
	unsigned int	nr_alloc;
};

/* First allocation record of @pmcid? (the kernel writes PMCALLOCATE and
 * PMCALLOCATEDYN; the file gets one PMCALLOCATEDYN) */
static bool pmclog_first_alloc(struct pmclog *pl, uint32_t pmcid)
{
	unsigned int i;

	for (i = 0; i < pl->nr_alloc; i++)
		if (pl->alloc[i] == pmcid)
			return false;
	if (pl->nr_alloc < sizeof(pl->alloc) / sizeof(pl->alloc[0]))
		pl->alloc[pl->nr_alloc++] = pmcid;
	return true;
}

void fmt_periods_header(void *buf, const struct fmt_opts *o)
{
	memcpy(buf, FMT_PERIODS_MAGIC, 8);
	fmt_put64(buf, 8, htole64((uint64_t)o->start_rt.tv_sec * 1000000000ull +
				  (uint64_t)o->start_rt.tv_nsec));
}

/*
 * FILE.periods beside a regular file FILE, or none (and an older one
 * removed: its periods are another recording's).
 */
static int pmclog_periods_open(struct fmt_writer *w, struct pmclog *pl,
			       struct out_batch *b)
{
	struct stat st;
	char *path;
	void *hdr;
	int err;

	if (asprintf(&path, "%s" FMT_PERIODS_SUFFIX, w->o.path) < 0)
		return -ENOMEM;
	if (!w->o.periods || fstat(pl->f.fd, &st) || !S_ISREG(st.st_mode)) {
		unlink(path);
		free(path);
		return 0;
	}
	err = out_file_open(&pl->pf, path, false);
	free(path);
	if (err)
		return err;
	/* a slot for each CPU's ring now: no allocation in the loop */
	if (!fmt_period_last(&pl->last, w->o.nr_cpus ? w->o.nr_cpus - 1 : 0,
			     0))
		return -ENOMEM;
	/* every CALLCHAIN through pmclog_record(), for its period */
	pl->as_is &= ~PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN);
	hdr = out_alloc(b, FMT_PERIODS_HEADER);
	if (!hdr)
		return -ENOBUFS;
	fmt_periods_header(hdr, &w->o);
	return out_put(b, &pl->pf, OUT_META, hdr, FMT_PERIODS_HEADER);
}

/*
 * Room in FILE.periods' slab for one entry, taken before the CALLCHAIN is
 * queued: queuing it may copy up to OUT_COPY_MAX bytes and the record into
 * the arena (out_put_ring()), after which a new slab might not fit, and a
 * CALLCHAIN queued without its entry would shift every later period.
 * -EAGAIN (nothing queued) when the arena has no room for a slab.
 */
static int pmclog_period_room(struct pmclog *pl, struct out_batch *b)
{
	int err;

	if (out_slab_has_room(&pl->slab, b))
		return 0;
	err = out_slab_new(&pl->slab, b, &pl->pf, OUT_META, 8,
			   PMCLOG_SLAB_ENTRIES);
	return err == -ENOBUFS ? -EAGAIN : err;
}

/* FILE.periods gets @period for the CALLCHAIN just queued. */
static void pmclog_period_put(struct pmclog *pl, uint64_t period)
{
	fmt_put64(out_slab_take(&pl->slab, 8), 0, htole64(period));
}

static int pmclog_begin(struct fmt_writer *w, struct out_batch *b)
{
	struct pmclog *pl;
	struct out_file *f;
	void *buf;
	int err;

	pl = calloc(1, sizeof(*pl));
	if (!pl)
		return -ENOMEM;
	pl->pf.fd = -1;
	f = &pl->f;
	err = out_file_open(f, w->o.path, false);
	if (err) {
		free(pl);
		return err;
	}
	pl->as_is = (PMCRING_TYPE_BIT(PMCRING_TYPE_PROC_CREATE + 1) - 1) &
		    ~(PMCRING_TYPE_BIT(0) |
		      PMCRING_TYPE_BIT(PMCRING_TYPE_INITIALIZE) |
		      PMCRING_TYPE_BIT(PMCRING_TYPE_CLOSELOG) |
		      PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATE) |
		      PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATEDYN));
	if (w->o.keep_generated)
		pl->as_is |= PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED);
	w->priv = pl;
	err = pmclog_periods_open(w, pl, b);
	if (err)
		return err;
	buf = out_alloc(b, PMCRING_SIZE_INITIALIZE);
	if (!buf)
		return -ENOBUFS;
	fmt_pmclog_initialize(buf, &w->o);
	b->items++;
	return out_put(b, f, OUT_DATA, buf, PMCRING_SIZE_INITIALIZE);
}

static int pmclog_record(struct fmt_writer *w, struct out_batch *b,
			 const struct fmt_rec *r)
{
	struct pmclog *pl = w->priv;
	struct out_file *f = &pl->f;
	void *buf;

	if (!out_batch_room(b, 1, FMT_DIRECT_ROOM))
		return -EAGAIN;
	/* fmt_direct()'s records (the consumer queues them itself) */
	if (r->type <= PMCRING_TYPE_MAX &&
	    (pl->as_is & PMCRING_TYPE_BIT(r->type))) {
		b->items++;
		return out_put_ring(b, f, r->data, r->len);
	}
	switch (r->type) {
	case PMCRING_TYPE_CALLCHAIN: {	/* with FILE.periods */
		uint32_t pmcid = fmt_get32(r->data, 24);
		uint64_t *last = fmt_period_last(&pl->last, r->cpu, pmcid), period;
		int err;

		/*
		 * The record copied behind a short range at worst, and a
		 * new slab, which is taken first (pmclog_period_room()).
		 */
		if (!out_batch_room(b, 3, OUT_COPY_MAX + r->len + 8 +
					  8 * PMCLOG_SLAB_ENTRIES))
			return -EAGAIN;
		err = pmclog_period_room(pl, b);
		if (err)
			return err;
		err = out_put_ring(b, f, r->data, r->len);
		if (err)
			return err;
		b->items++;
		period = last ? *last : 0;
		if (!period && pmcid < FMT_MAX_PMCID)
			period = pl->fixed[pmcid];
		pmclog_period_put(pl, period);
		return 0;
	}
	case PMCRING_TYPE_PERIOD: {
		uint64_t *last;

		if (r->len != PMCRING_SIZE_PERIOD || pl->pf.fd < 0)
			return 0;
		last = fmt_period_last(&pl->last, r->cpu, fmt_get32(r->data, 16));
		if (last)
			*last = fmt_get64(r->data, 24);
		return 0;
	}
	case PMCRING_TYPE_INITIALIZE:
	case PMCRING_TYPE_CLOSELOG:
		return 0;			/* ours are the only ones */
	case PMCRING_TYPE_PMCALLOCATEDYN:
		if (!pmclog_first_alloc(pl, fmt_get32(r->data, 16)))
			return 0;
		break;
	case PMCRING_TYPE_PMCALLOCATE:
		if (fmt_get32(r->data, 16) < FMT_MAX_PMCID &&
		    !(fmt_get32(r->data, 24) & PMCRING_CTR_F_FREQ))
			pl->fixed[fmt_get32(r->data, 16)] = fmt_get64(r->data, 32);
		if (!pmclog_first_alloc(pl, fmt_get32(r->data, 16)))
			return 0;
		buf = out_alloc(b, PMCRING_SIZE_PMCALLOCATEDYN);
		fmt_pmclog_allocdyn(buf, r->data, &w->o);
		b->items++;
		return out_put(b, f, OUT_DATA, buf,
			       PMCRING_SIZE_PMCALLOCATEDYN);
	case PMCRING_TYPE_GENERATED:
		if (!w->o.keep_generated)
			return 0;
		break;
	default:
		/* pmcring's own types have no place in a FreeBSD file */
		if (r->type > PMCRING_TYPE_PROC_CREATE)
			return 0;
		break;
	}
	b->items++;
	return out_put_ring(b, f, r->data, r->len);
}

static bool pmclog_direct(struct fmt_writer *w, struct fmt_direct *d)
{
	struct pmclog *pl = w->priv;

	if (!pl)
		return false;
	d->types = pl->as_is;
	d->f = &pl->f;
	d->put = NULL;
	return true;
}

static int pmclog_end(struct fmt_writer *w, struct out_batch *b, uint64_t ts)
{
	void *buf;

	if (!out_batch_room(b, 1, PMCRING_SIZE_CLOSELOG))
		return -EAGAIN;
	buf = out_alloc(b, PMCRING_SIZE_CLOSELOG);
	fmt_pmclog_closelog(buf, ts);
	b->items++;
	return out_put(b, &((struct pmclog *)w->priv)->f, OUT_DATA, buf,
		       PMCRING_SIZE_CLOSELOG);
}

static int pmclog_flush(struct fmt_writer *w, struct out_batch *b)
{
	struct pmclog *pl = w->priv;

	return pl && pl->pf.fd >= 0 ?
	       out_slab_put(&pl->slab, b, &pl->pf, OUT_META) : 0;
}

static void pmclog_free(struct fmt_writer *w)
{
	struct pmclog *pl = w->priv;

	if (pl) {
		out_file_close(&pl->f);
		out_file_close(&pl->pf);
		free(pl->last.v);
	}
	free(pl);
}

const struct fmt_ops fmt_pmclog_ops = {
	.begin = pmclog_begin,
	.record = pmclog_record,
	.direct = pmclog_direct,
	.flush = pmclog_flush,
	.end = pmclog_end,
	.free = pmclog_free,
};

/*
 * Read with libpmcring's parser (the checks of FreeBSD's pmclog_read() and
 * more, the same reader as `pmcring report`), fed a chunk of the image at
 * a time so that it never holds more than a chunk and a record.
 */
#define PMCLOG_FEED_CHUNK	(256 * 1024)

int fmt_pmclog_read(const void *buf, size_t len, fmt_item_cb cb, void *ctx,
		    size_t *bad_off)
{
	const uint8_t *p = buf;
	struct pmcring_log_ev ev;
	struct pmcring_log *l;
	struct fmt_item it;
	size_t fed = 0, n;
	int ret, rc;

	l = pmcring_log_open(PMCRING_LOG_FD_NONE);
	if (!l)
		return -errno;
	for (;;) {
		ret = pmcring_log_read(l, &ev);
		if (ret && ev.pl_state == PMCRING_LOG_REQUIRE_DATA) {
			if (fed == len) {
				/* bytes of a partial record left over: a prefix */
				rc = ev.pl_offset == len ? FMT_END_CLEAN :
							   FMT_END_TRUNCATED;
				break;
			}
			n = len - fed < PMCLOG_FEED_CHUNK ? len - fed :
							    PMCLOG_FEED_CHUNK;
			rc = pmcring_log_feed(l, p + fed, n);
			if (rc)
				break;
			fed += n;
			continue;
		}
		if (ret && ev.pl_state == PMCRING_LOG_ERROR) {
			*bad_off = ev.pl_offset;
			fmt_set_bad_reason(ev.pl_reason);
			rc = -EINVAL;
			break;
		}
		/* A record.  Like FreeBSD's pmclog_read(): CLOSELOG is the
		 * end (EOF comes with it). */
		memset(&it, 0, sizeof(it));
		it.kind = FMT_PMCLOG;
		it.data = ev.pl_data;
		it.len = ev.pl_len;
		it.type = ev.pl_type;
		it.ts = ev.pl_ts;
		it.cpu = it.type == PMCRING_TYPE_CALLCHAIN ?
			 (int32_t)ev.pl_u.pl_cc.pl_cpu : -1;
		rc = cb(&it, ctx);
		if (rc)
			break;
		if (ret) {
			rc = FMT_END_CLEAN;
			break;
		}
	}
	pmcring_log_close(l);
	return rc;
}

size_t fmt_periods_valid(const uint8_t *periods, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (le64toh(fmt_get64(periods, 8 * i)) > FMT_PERIOD_MAX)
			break;
	return i;
}

int fmt_periods_read(const void *buf, size_t len, const struct timespec *start,
		     const uint8_t **periods, size_t *n)
{
	uint64_t id;

	*periods = NULL;
	*n = 0;
	if (len < FMT_PERIODS_HEADER || memcmp(buf, FMT_PERIODS_MAGIC, 8))
		return -EINVAL;
	id = le64toh(fmt_get64(buf, 8));
	if (start && id != (uint64_t)start->tv_sec * 1000000000ull +
			   (uint64_t)start->tv_nsec)
		return -ESTALE;
	*periods = (const uint8_t *)buf + FMT_PERIODS_HEADER;
	/* a last entry cut short (a recording killed) is not one */
	*n = (len - FMT_PERIODS_HEADER) / 8;
	return 0;
}
