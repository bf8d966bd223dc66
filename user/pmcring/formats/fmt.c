// SPDX-License-Identifier: GPL-2.0
/* Writer dispatch and the helpers every format shares. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "fmt_int.h"

struct fmt_writer *fmt_writer_new(const struct fmt_opts *o)
{
	struct fmt_writer *w = calloc(1, sizeof(*w));

	if (!w)
		return NULL;
	w->o = *o;
	switch (o->kind) {
	case FMT_PMCLOG:
		w->ops = &fmt_pmclog_ops;
		break;
	case FMT_BARMAN:
		w->ops = &fmt_barman_ops;
		break;
	case FMT_BLOB:
		w->ops = &fmt_blob_ops;
		break;
	default:
		free(w);
		errno = EINVAL;
		return NULL;
	}
	return w;
}

int fmt_begin(struct fmt_writer *w, struct out_batch *b)
{
	return w->ops->begin(w, b);
}

int fmt_record(struct fmt_writer *w, struct out_batch *b,
	       const struct fmt_rec *r)
{
	return w->ops->record(w, b, r);
}

bool fmt_direct(struct fmt_writer *w, struct fmt_direct *d)
{
	return w->ops->direct ? w->ops->direct(w, d) : false;
}

int fmt_flush(struct fmt_writer *w, struct out_batch *b)
{
	return w->ops->flush ? w->ops->flush(w, b) : 0;
}

int fmt_end(struct fmt_writer *w, struct out_batch *b, uint64_t ts)
{
	return w->ops->end(w, b, ts);
}

int fmt_abort(struct fmt_writer *w)
{
	return w->ops->abort ? w->ops->abort(w) : 0;
}

void fmt_writer_free(struct fmt_writer *w)
{
	if (!w)
		return;
	w->ops->free(w);
	free(w);
}

void fmt_realtime(const struct fmt_opts *o, uint64_t ts, struct timespec *rt)
{
	int64_t d = (int64_t)(ts - o->start_ns);
	int64_t ns = (int64_t)o->start_rt.tv_nsec + d % 1000000000;

	rt->tv_sec = o->start_rt.tv_sec + d / 1000000000;
	if (ns < 0) {
		ns += 1000000000;
		rt->tv_sec--;
	} else if (ns >= 1000000000) {
		ns -= 1000000000;
		rt->tv_sec++;
	}
	rt->tv_nsec = ns;
}

int fmt_detect(const void *buf, size_t len)
{
	static const char *const blob[] = {
		"blobdat", "bloboff", "blobtim", "blobtyp",
	};
	uint32_t h;
	unsigned int i;

	if (len >= 8 && fmt_get64(buf, 0) == BM_MAGIC64)
		return FMT_BARMAN;
	for (i = 0; len >= 8 && i < sizeof(blob) / sizeof(blob[0]); i++)
		if (!memcmp(buf, blob[i], 8))
			return FMT_BLOB;
	if (len >= 4) {
		h = fmt_get32(buf, 0);
		if (PMCRING_HEADER_MAGIC(h) == PMCRING_LOG_MAGIC &&
		    PMCRING_HEADER_TYPE(h) == PMCRING_TYPE_INITIALIZE)
			return FMT_PMCLOG;
	}
	return -1;
}

uint64_t *fmt_period_last(struct fmt_period_last *t, uint32_t ring,
			  uint32_t pmcid)
{
	unsigned int n = t->nr_rings;
	uint64_t *nl;

	if (pmcid >= FMT_MAX_PMCID || ring >= 1u << 16)
		return NULL;
	if (ring >= n) {
		nl = realloc(t->v, (size_t)(ring + 1) * FMT_MAX_PMCID *
				   sizeof(*nl));
		if (!nl)
			return NULL;
		memset(nl + (size_t)n * FMT_MAX_PMCID, 0,
		       (size_t)(ring + 1 - n) * FMT_MAX_PMCID * sizeof(*nl));
		t->v = nl;
		t->nr_rings = ring + 1;
	}
	return &t->v[(size_t)ring * FMT_MAX_PMCID + pmcid];
}

static const char *fmt_reason = "";

const char *fmt_bad_reason(void)
{
	return fmt_reason;
}

void fmt_set_bad_reason(const char *why)
{
	fmt_reason = why ? why : "";
}

int fmt_say_damage(const char *who, const char *path, uint64_t off,
		   const char *why, uint64_t nread, bool best_effort)
{
	fprintf(stderr, "%s: %s: damaged at offset %" PRIu64 ": %s; read the "
		"%" PRIu64 " records before it%s\n", who, path, off,
		why && *why ? why : "bad record", nread,
		best_effort ? " (--best-effort: exit 0)" :
		" (exit 1; --best-effort: exit 0)");
	return best_effort ? 0 : 1;
}
