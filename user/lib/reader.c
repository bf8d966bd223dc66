// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * The high-level consumer, in the spirit of libbpf's ring_buffer__poll():
 * a callback per record in exact global order (the merge of merge.c), a
 * timeout, and an end of stream.
 *
 *	poll:	drain the merge into the callback; if nothing came out, wait
 *		on the session fd for at most the merge's own timeout (so held
 *		records still go out within max_delay_ns) or what is left of
 *		the caller's, and drain again.
 *	end:	once poll() saw EPOLLHUP (the session was disabled after being
 *		enabled), a drain that ends with no record held, every ring
 *		empty and no writer in flight (pending_ts 0) is the last one:
 *		-ENODATA from then on.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include "internal.h"

struct pmcring_reader {
	struct pmcring_merge	*m;
	unsigned int		n;	/* rings */
	int			fd;	/* polled: the session fd */
	pmcring_record_fn	fn;
	void			*ctx;
	bool			hup;	/* EPOLLHUP seen: no new records */
	bool			eof;	/* all drained after hup */
};

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Take @m (freed with the reader) over @n rings, waiting on @fd. */
static struct pmcring_reader *reader_of(struct pmcring_merge *m,
					unsigned int n, int fd,
					pmcring_record_fn fn, void *ctx)
{
	struct pmcring_reader *rd;

	if (!m)
		return NULL;
	rd = calloc(1, sizeof(*rd));
	if (!rd) {
		pmcring_merge_free(m);
		return NULL;
	}
	rd->m = m;
	rd->n = n;
	rd->fd = fd;
	rd->fn = fn;
	rd->ctx = ctx;
	return rd;
}

struct pmcring_reader *pmcring_reader_new(struct pmcring *s,
					  pmcring_record_fn fn, void *ctx,
					  const struct pmcring_reader_opts *opts)
{
	struct pmcring_merge_opts mo = {
		.sz = sizeof(mo),
		.max_delay_ns = OPTS_GET(opts, max_delay_ns, 0),
		.flags = PMCRING_MERGE_F_AUTO_CONSUME |
			 OPTS_GET(opts, merge_flags, 0),
		.staging_bytes = OPTS_GET(opts, staging_bytes, 0),
	};

	if (!s || !fn || !OPTS_VALID(opts) ||
	    (OPTS_GET(opts, merge_flags, 0) & ~PMCRING_MERGE_F_NO_STAGING)) {
		errno = EINVAL;
		return NULL;
	}
	return reader_of(pmcring_merge_new_session(s, &mo), pmcring_nr_cpus(s),
			 pmcring_fd(s), fn, ctx);
}

struct pmcring_reader *
pmcring_reader_new_bufs(struct pmcring_cpu_buf **bufs, unsigned int n, int fd,
			pmcring_clock_fn clock, void *clock_ctx,
			pmcring_record_fn fn, void *ctx, uint64_t max_delay_ns)
{
	struct pmcring_merge_opts mo = {
		.sz = sizeof(mo),
		.max_delay_ns = max_delay_ns,
		.clock = clock,
		.clock_ctx = clock_ctx,
		.flags = PMCRING_MERGE_F_AUTO_CONSUME,
	};

	if (!fn || fd < 0) {
		errno = EINVAL;
		return NULL;
	}
	return reader_of(pmcring_merge_new(bufs, n, &mo), n, fd, fn, ctx);
}

void pmcring_reader_free(struct pmcring_reader *rd)
{
	if (!rd)
		return;
	pmcring_merge_free(rd->m);
	free(rd);
}

/* Nothing visible, nothing held, no writer in flight on any ring. */
static bool all_drained(struct pmcring_reader *rd)
{
	unsigned int i;

	if (pmcring_merge_holds(rd->m))
		return false;
	for (i = 0; i < rd->n; i++) {
		const struct pmcring_cpu_buf *b = pmcring_merge_buf(rd->m, i);

		if (smp_load_acquire(&b->prod->pending_ts) ||
		    smp_load_acquire(&b->ctl->data_head) != b->pos)
			return false;
	}
	return true;
}

/*
 * Hand every record the merge can prove next to the callback: the count,
 * or the callback's non-zero return (negative: an error to pass on).
 */
static int drain(struct pmcring_reader *rd, int *count)
{
	struct pmcring_record r;
	bool hup = rd->hup;	/* before the loads of the drain */
	int ret;

	while ((ret = pmcring_merge_next(rd->m, &r)) == 1) {
		++*count;
		ret = rd->fn(rd->ctx, &r);
		if (ret)
			return ret;
	}
	if (ret < 0)
		return ret;
	if (hup && all_drained(rd))
		rd->eof = true;
	return 0;
}

/* Look for EPOLLHUP without waiting (before a drain, so it covers all). */
static void check_hup(struct pmcring_reader *rd)
{
	struct pollfd pfd = { .fd = rd->fd, .events = POLLIN };

	if (!rd->hup && poll(&pfd, 1, 0) > 0 &&
	    (pfd.revents & (POLLHUP | POLLERR)))
		rd->hup = true;
}

int pmcring_reader_consume(struct pmcring_reader *rd)
{
	int n = 0, ret;

	if (rd->eof)
		return -ENODATA;
	check_hup(rd);
	ret = drain(rd, &n);
	if (ret < 0)
		return ret;
	return n || !rd->eof ? n : -ENODATA;
}

int pmcring_reader_poll(struct pmcring_reader *rd, int timeout_ms)
{
	uint64_t start = mono_ns(), deadline = UINT64_MAX, look, now, wait;
	struct pollfd pfd = { .fd = rd->fd, .events = POLLIN };
	struct timespec ts;
	int n = 0, ret;

	if (timeout_ms >= 0)
		deadline = start + (uint64_t)timeout_ms * 1000000u;
	for (;;) {
		if (rd->eof)
			return n ? n : -ENODATA;
		look = mono_ns();
		ret = drain(rd, &n);
		if (ret < 0)
			return ret;
		if (ret || n)
			return n;
		if (rd->eof)
			return -ENODATA;
		now = mono_ns();
		if (now >= deadline)
			return 0;
		wait = pmcring_merge_timeout_ns(rd->m, look, now);
		if (wait > deadline - now)
			wait = deadline - now;
		ts.tv_sec = (time_t)(wait / 1000000000u);
		ts.tv_nsec = (long)(wait % 1000000000u);
		if (rd->hup) {
			/* the fd stays readable now: sleep, do not spin */
			nanosleep(&ts, NULL);
			continue;
		}
		ret = ppoll(&pfd, 1, &ts, NULL);
		if (ret < 0 && errno != EINTR)
			return -errno;
		if (ret < 0)
			return n;	/* a signal: let the caller look */
		if (pfd.revents & (POLLHUP | POLLERR))
			rd->hup = true;
	}
}

int pmcring_reader_eof(const struct pmcring_reader *rd)
{
	return rd->eof;
}

struct pmcring_merge *pmcring_reader_merge(struct pmcring_reader *rd)
{
	return rd->m;
}
