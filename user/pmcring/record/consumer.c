// SPDX-License-Identifier: GPL-2.0
/*
 * The record loop's consumer: merge -> writer -> batch -> write -> consume.
 * A record whose bytes a batch points to in its ring (pmclog's zero-copy
 * runs, binary blob messages) stays there until that batch is on disk; a
 * record the writer copied or converted into the batch's arena (barman
 * frames, JSON messages, short pmclog runs) needs its ring no more, and
 * its space goes back before the write, once nothing before it in its
 * ring is still pointed to.  So the arenas, not the rings, absorb the
 * write latency of the staged formats; the rendered bytes not yet on disk
 * are bounded by the two arenas (2 x CONSUMER_ARENA).  data_tail moves with
 * pmcring_cpu_buf_consume(), (D) of the ordering contract.
 *
 * With io_uring a batch is left in flight while the merge fills the next
 * one; the next one is submitted after the first completed, so the files
 * are always a valid prefix.  Writers never change bytes a queued batch
 * points to (the barman header is copied into the batch).  A batch is run
 * when the ring space it keeps (with the one in flight) reaches half of
 * some ring, so producers keep room to write while the consumer writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/uio.h>

#include "consumer.h"

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int consumer_init(struct consumer *c, struct pmcring_merge *m,
		  unsigned int nr_bufs, struct fmt_writer *w, bool use_uring,
		  int poll_fd)
{
	unsigned int i, n = nr_bufs ? nr_bufs : 1;
	int err = -ENOMEM;

	memset(c, 0, sizeof(*c));
	c->m = m;
	c->nr_bufs = nr_bufs;
	c->w = w;
	c->poll_fd = poll_fd;
	c->fill = &c->cb[0];
	c->rel = calloc(n, sizeof(*c->rel));
	c->taken = calloc(n, sizeof(*c->taken));
	c->hold = calloc(n, sizeof(*c->hold));
	if (!c->rel || !c->taken || !c->hold)
		goto err;
	for (i = 0; i < 2; i++) {
		c->cb[i].ref_from = malloc(n * sizeof(*c->cb[i].ref_from));
		if (!c->cb[i].ref_from)
			goto err;
		memset(c->cb[i].ref_from, 0xff, n * sizeof(*c->cb[i].ref_from));
		err = out_batch_init(&c->cb[i].b, CONSUMER_MAX_PUTS,
				     CONSUMER_ARENA);
		if (err)
			goto err;
		err = -ENOMEM;
	}
	for (i = 0; i < nr_bufs; i++) {
		struct pmcring_cpu_buf *b = pmcring_merge_buf(m, i);

		c->hold[i] = b ? pmcring_cpu_buf_data_size(b) / 2 : UINT64_MAX;
		c->rel[i] = b ? pmcring_cpu_buf_pos(b) : 0;
		c->taken[i] = c->rel[i];
	}
	if (use_uring) {
		err = uring_io_init(&c->u, poll_fd);
		if (err)
			goto err;
		c->use_uring = true;
		c->cb[0].b.landed = c->cb[1].b.landed = false;
	}
	return 0;
err:
	consumer_fini(c);
	return err;
}

void consumer_fini(struct consumer *c)
{
	unsigned int i;

	if (c->use_uring) {
		uring_io_finish(&c->u);
		uring_io_exit(&c->u);	/* before the batches it points to */
	}
	c->use_uring = false;
	for (i = 0; i < 2; i++) {
		out_batch_free(&c->cb[i].b);
		free(c->cb[i].ref_from);
		c->cb[i].ref_from = NULL;
	}
	free(c->rel);
	free(c->taken);
	free(c->hold);
	c->rel = c->taken = c->hold = NULL;
	c->fill = c->fly = NULL;
}

/*
 * Give ring @i's space back up to where its records are no longer needed:
 * the end of the last record taken, or the start of the first record a
 * batch not yet on disk points to, whichever is earlier.
 */
static void give_back(struct consumer *c, unsigned int i)
{
	uint64_t to = c->taken[i];

	if (c->cb[0].ref_from[i] < to)
		to = c->cb[0].ref_from[i];
	if (c->cb[1].ref_from[i] < to)
		to = c->cb[1].ref_from[i];
	if (to <= c->rel[i])
		return;
	pmcring_cpu_buf_consume(pmcring_merge_buf(c->m, i), to);
	c->rel[i] = to;
}

static void give_back_all(struct consumer *c)
{
	unsigned int i;

	for (i = 0; i < c->nr_bufs; i++)
		give_back(c, i);
}

/* The batch is on disk: count it, give back the ring space it kept. */
static void batch_done(struct consumer *c, struct consumer_batch *cb)
{
	unsigned int i;

	c->st.bytes += cb->b.bytes;
	c->st.items += cb->b.items;
	c->st.written += cb->b.records;
	c->st.batches++;
	out_batch_reset(&cb->b);
	for (i = 0; i < c->nr_bufs; i++)
		cb->ref_from[i] = UINT64_MAX;
	give_back_all(c);
}

/*
 * A write of @b failed with @err: say where, and have the writer cut its
 * files back to whole entries (a blob set's TIMING, TYPE and OFFSET may end
 * mid-entry, DAT past what they index) once nothing is in flight.
 */
static int write_failed(struct consumer *c, const struct out_batch *b,
			int err)
{
	c->err_path = b->err_path;
	if (!c->use_uring || !c->u.inflight)
		c->abort_err = fmt_abort(c->w);
	return err;
}

/* Wait for the batch in flight, if any. */
static int land(struct consumer *c)
{
	int err;

	if (!c->fly)
		return 0;
	err = uring_io_finish(&c->u);
	if (err)
		return write_failed(c, &c->fly->b, err);
	batch_done(c, c->fly);
	c->fly = NULL;
	return 0;
}

/*
 * Write the batch being filled out (or start writing it), then give back
 * the ring space it covered once it is on disk.  @wait: return only once
 * everything is on disk.
 */
static int consumer_run(struct consumer *c, bool wait)
{
	struct consumer_batch *cb = c->fill;
	int err;

	err = fmt_flush(c->w, &cb->b);
	if (err)
		return err;
	give_back_all(c);	/* before a wait for the disk */
	if (!c->use_uring) {
		err = out_batch_run_sync(&cb->b);
		if (err)
			return write_failed(c, &cb->b, err);
		batch_done(c, cb);
		return 0;
	}
	err = land(c);
	if (err)
		return err;
	if (!wait) {
		uring_io_start(&c->u, &cb->b);
		c->fly = cb;
		c->fill = cb == &c->cb[0] ? &c->cb[1] : &c->cb[0];
		return 0;
	}
	err = uring_io_run(&c->u, &cb->b);
	if (err)
		return write_failed(c, &cb->b, err);
	batch_done(c, cb);
	return 0;
}

int consumer_begin(struct consumer *c)
{
	int err = fmt_begin(c->w, &c->fill->b);

	if (err)
		return err;
	if (!fmt_direct(c->w, &c->direct))
		c->direct.types = 0;
	return consumer_run(c, true);
}

/* Hand @fr to the writer (not on its direct path). */
static int consumer_put_fr(struct consumer *c, const struct fmt_rec *fr)
{
	int err = fmt_record(c->w, &c->fill->b, fr);

	if (err == -EAGAIN) {	/* the batch is full */
		err = consumer_run(c, false);
		if (!err)
			err = fmt_record(c->w, &c->fill->b, fr);
	}
	if (err == -EAGAIN) {	/* it wants every batch on disk (blob roll) */
		err = land(c);
		c->fill->b.landed = true;
		if (!err)
			err = fmt_record(c->w, &c->fill->b, fr);
		c->fill->b.landed = !c->use_uring;
	}
	return err;
}

static int consumer_put(struct consumer *c, const struct pmcring_record *r)
{
	struct fmt_rec fr = {
		.data = r->data, .len = r->len, .type = r->type,
		.cpu = r->cpu, .ts = r->ts,
	};

	return consumer_put_fr(c, &fr);
}

/* Before the command's exec: is @r one of its samples, not to be kept? */
static bool consumer_before_exec(struct consumer *c,
				 const struct pmcring_record *r)
{
	/* pl_pid at offset 16 in both (uapi/linux/pmcring.h) */
	if (r->len < 20 || fmt_get32(r->data, 16) != c->until_exec)
		return false;
	if (r->type == PMCRING_TYPE_PROCEXEC)
		c->until_exec = 0;	/* from here on, as perf enables */
	return r->type == PMCRING_TYPE_CALLCHAIN;
}

static int consumer_take(struct consumer *c, const struct pmcring_record *r)
{
	struct consumer_batch *cb = c->fill;
	struct out_batch *b = &cb->b;
	uint64_t refs = b->ring_refs, gen = b->gen;
	unsigned int i = r->cpu;	/* the merge's ring index, also for
					 * uprod rings
					 */
	/* a sample of the command before its exec: neither written nor sent */
	bool skip = c->until_exec && consumer_before_exec(c, r);
	int err;

	/*
	 * Published in the order taken: the merge's exact timestamp order.
	 * A daemon gone is the record loop's to see (ldms_pub_gone()); the
	 * record is counted undelivered, the file still gets it.
	 */
	if (c->pub && !skip) {
		struct fmt_rec fr = {
			.data = r->data, .len = r->len, .type = r->type,
			.cpu = r->cpu, .ts = r->ts,
		};

		ldms_pub_record(c->pub, &fr);
	}
	/* the per-record path: no fmt_rec, no call through the writer */
	if (skip) {
		err = 0;	/* taken, not written */
	} else if (r->type <= PMCRING_TYPE_MAX &&
	    (c->direct.types & PMCRING_TYPE_BIT(r->type)) &&
	    out_batch_room(b, 1, FMT_DIRECT_ROOM)) {
		if (c->direct.put) {
			err = c->direct.put(c->w, b, r->data, r->len);
			if (err > 0)	/* not this one: the writer's ops */
				err = consumer_put(c, r);
		} else {
			b->items++;
			err = out_put_ring_inline(b, c->direct.f, OUT_DATA,
						  r->data, r->len);
		}
	} else {
		err = consumer_put(c, r);
	}
	if (err)
		return err;
	/* the writer may have run the batch and queued @r into the next */
	if (c->fill != cb || b->gen != gen)
		refs = 0;
	cb = c->fill;
	b = &cb->b;
	b->records++;
	c->st.records++;
	if (r->type == PMCRING_TYPE_DROPNOTIFY)
		c->st.drops++;
	if (i >= c->nr_bufs)
		return 0;
	/* the batch points into the ring: keep the record until it lands */
	if (b->ring_refs != refs && cb->ref_from[i] == UINT64_MAX)
		cb->ref_from[i] = c->taken[i];
	c->taken[i] = r->end;
	/*
	 * A quarter of the ring taken: give back what the batches do not
	 * point to (one fence per quarter ring, not per record).  Still
	 * keeping half the ring: write, so producers keep room.
	 */
	if (r->end - c->rel[i] >= c->hold[i] / 2) {
		give_back(c, i);
		if (r->end - c->rel[i] >= c->hold[i])
			return consumer_run(c, false);
	}
	return 0;
}

int consumer_drain(struct consumer *c, uint64_t max, uint64_t *n)
{
	struct pmcring_record r;
	uint64_t taken = 0;
	int ret = 0, err;

	/* the batch in flight may be done: give its space back first */
	if (c->fly && !uring_io_busy(&c->u)) {
		err = land(c);
		if (err)
			return err;
	}
	while (!max || taken < max) {
		ret = pmcring_merge_next(c->m, &r);
		if (ret <= 0)
			break;
		err = consumer_take(c, &r);
		if (err)
			return err;
		taken++;
	}
	c->look_ns = mono_ns();
	/* the rings are empty: the records packed so far go out now */
	if (c->pub && !ret)
		ldms_pub_flush(c->pub);
	if (n)
		*n = taken;
	if (ret < 0)
		return ret;
	if (taken)
		give_back_all(c);	/* before the wait: producers get room */
	if (out_batch_empty(&c->fill->b))
		return 0;
	/*
	 * While a batch is being written this one keeps filling: it goes out
	 * when that one lands (a completion ends consumer_wait()).  So slow
	 * writes make larger batches, not more of them.
	 */
	if (c->fly && uring_io_busy(&c->u))
		return 0;
	return consumer_run(c, false);
}

int consumer_unannounced(struct consumer *c, uint64_t ts)
{
	struct fmt_rec fr = {
		.data = &c->endnote, .len = PMCRING_SIZE_DROPNOTIFY,
		.type = PMCRING_TYPE_DROPNOTIFY, .ts = ts,
	};
	unsigned int i;
	int err;

	/* header only, spare 0 (no batch points to it yet: written once) */
	c->endnote.pl_header = PMCRING_HEADER(PMCRING_TYPE_DROPNOTIFY,
					      PMCRING_SIZE_DROPNOTIFY);
	c->endnote.pl_spare = 0;
	c->endnote.pl_tsc = ts;
	for (i = 0; i < c->nr_bufs; i++) {
		struct pmcring_cpu_buf *b = pmcring_merge_buf(c->m, i);
		struct pmcring_cpu_stats cs = { .sz = sizeof(cs) };

		if (!b || pmcring_cpu_buf_stats(b, &cs) ||
		    cs.lost <= cs.reported)
			continue;
		fr.cpu = i;	/* the merge's ring index, as for a record */
		if (c->pub)
			ldms_pub_record(c->pub, &fr);
		err = consumer_put_fr(c, &fr);
		if (err)
			return err;
		c->fill->b.records++;
		c->st.records++;
		c->st.drops++;
	}
	return 0;
}

uint64_t consumer_timeout_ns(struct consumer *c)
{
	return pmcring_merge_timeout_ns(c->m, c->look_ns, mono_ns());
}

int consumer_end(struct consumer *c, uint64_t ts)
{
	int err = fmt_end(c->w, &c->fill->b, ts);

	if (err == -EAGAIN) {
		err = consumer_run(c, true);
		if (!err)
			err = fmt_end(c->w, &c->fill->b, ts);
	}
	return err ? err : consumer_run(c, true);
}

int consumer_sync(struct consumer *c)
{
	return land(c);
}

int consumer_wait(struct consumer *c, uint64_t timeout_ns)
{
	struct pollfd pfd = { .fd = c->poll_fd, .events = POLLIN };
	struct timespec ts = {
		.tv_sec = (time_t)(timeout_ns / 1000000000),
		.tv_nsec = (long)(timeout_ns % 1000000000),
	};
	int ret;

	if (c->use_uring) {
		/* a write completing ends the wait too */
		ret = uring_io_wait(&c->u, timeout_ns);
		if (ret >= 0 && c->fly && !uring_io_busy(&c->u)) {
			int err = land(c);

			if (err)
				return err;
		}
		return ret;
	}
	if (c->poll_fd < 0)
		return 0;
	ret = ppoll(&pfd, 1, &ts, NULL);
	if (ret < 0)
		return errno == EINTR ? 0 : -errno;
	if (pfd.revents & (POLLHUP | POLLERR))
		c->u.hup = true;
	return ret > 0;
}

bool consumer_hup(const struct consumer *c)
{
	return c->u.hup;
}

/*
 * io_uring pays where a write runs at once in the submitting thread and
 * goes to a kernel worker only when it would block: a file system that
 * takes non-blocking buffered writes (RWF_NOWAIT), a pipe.  Where it
 * takes none (tmpfs, and ext4's buffered writes, up to at least Linux
 * 6.18), io_uring hands every write to an io-wq worker: the same copy as
 * pwritev(), plus the hand-off and the worker's wake-up, a gain only
 * while a CPU is idle for the worker, so pwritev() it is
 * (Documentation/performance.rst, "Native drain against a raw write").
 * The probe writes one byte with RWF_NOWAIT to an unnamed file (O_TMPFILE) in the
 * directory @path is or would be in; what cannot be probed keeps the
 * default, io_uring.
 */
enum consumer_io consumer_io_pick(const char *path)
{
	struct iovec iov = { .iov_base = (void *)"", .iov_len = 1 };
	struct stat st;
	char *dir = strdup(path && *path ? path : "."), *slash;
	ssize_t n;
	int fd;

	if (!dir)
		return CONSUMER_IO_URING;
	/* the nearest directory that exists: blob makes its own */
	while (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		if (!stat(dir, &st) && !S_ISREG(st.st_mode)) {
			free(dir);		/* a pipe, a device */
			return CONSUMER_IO_URING;
		}
		slash = strrchr(dir, '/');
		if (!strcmp(dir, ".") || !strcmp(dir, "/")) {
			free(dir);		/* no directory at all */
			return CONSUMER_IO_URING;
		} else if (!slash) {
			strcpy(dir, ".");
		} else if (slash == dir) {
			dir[1] = '\0';
		} else {
			*slash = '\0';
		}
	}
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	free(dir);
	if (fd < 0)
		return CONSUMER_IO_URING;
	n = pwritev2(fd, &iov, 1, 0, RWF_NOWAIT);
	close(fd);
	if (n < 0 && errno == EOPNOTSUPP)
		return CONSUMER_IO_SYNC;
	return CONSUMER_IO_URING;	/* written, or EAGAIN: it would block */
}
