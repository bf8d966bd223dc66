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
 * are always a valid prefix.  With O_DIRECT (consumer_set_direct(), record
 * --direct-io) up to depth batches are in flight, each one aligned write
 * from its own bounce buffer; a failed one cuts the file back to where it
 * started once the others completed.  Writers never change bytes a queued batch
 * points to (the barman header is copied into the batch).  A batch is run
 * when the ring space it keeps (with the one in flight) reaches half of
 * some ring, so producers keep room to write while the consumer writes.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
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
	c->nb = 2;
	c->depth = 1;
	c->load_fd = -1;
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

int consumer_set_direct(struct consumer *c, unsigned int depth)
{
	unsigned int i, n = c->nr_bufs ? c->nr_bufs : 1;
	int err;

	if (!depth || depth > CONSUMER_MAX_DEPTH || c->dio)
		return -EINVAL;
	if (posix_memalign((void **)&c->dtail, CONSUMER_DIO_ALIGN,
			   CONSUMER_DIO_ALIGN))
		return -ENOMEM;
	c->dio = true;
	if (!c->use_uring)
		return 0;	/* pwritev(): one batch at a time */
	for (i = c->nb; i <= depth; i++) {
		struct consumer_batch *cb = &c->cb[i];

		cb->ref_from = malloc(n * sizeof(*cb->ref_from));
		if (!cb->ref_from)
			return -ENOMEM;
		memset(cb->ref_from, 0xff, n * sizeof(*cb->ref_from));
		err = out_batch_init(&cb->b, CONSUMER_MAX_PUTS,
				     CONSUMER_ARENA);
		if (err)
			return err;
		cb->b.landed = false;
		c->nb = i + 1;
	}
	c->depth = depth;
	return 0;
}

/* CPUs this process may run on (its io-wq workers inherit them). */
static unsigned int cpus_usable(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set))
		return 1;
	return (unsigned int)CPU_COUNT(&set);
}

int consumer_set_idle(struct consumer *c)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (!c->use_uring || c->dio || c->idle || n < 2 || cpus_usable() < 2)
		return -EINVAL;
	/* none to look at: pwritev() (idle_cpu()) */
	c->load_fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
	c->idle = true;
	c->idle_cpus = (unsigned int)n;
	c->idle_ns = 0;
	c->idle_min_bytes = CONSUMER_IDLE_MIN_BYTES;
	c->idle_max_ops = CONSUMER_IDLE_MAX_OPS;
	return 0;
}

/*
 * Is a CPU idle for io_uring's worker?  /proc/loadavg's runnable tasks
 * ("R/T"), this thread among them, looked at between batches.  At the
 * first look and while writing with pwritev(), the others plus this
 * thread plus a worker must fit the CPUs; while writing with io_uring
 * the worker may be among them (finishing the batch before, or queued),
 * so the others plus this thread must.  One look sees an instant, so the
 * answer is the recent looks' (a score that decays by a quarter a look),
 * with hysteresis: io_uring from 5/8 of them up, pwritev() below 3/8.
 */
static bool idle_cpu(struct consumer *c)
{
	char buf[128], *p;
	unsigned long run;
	ssize_t n;
	bool fits;

	if (c->load_fd < 0)
		return false;
	n = pread(c->load_fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return !c->idle_sync;	/* as it was */
	buf[n] = '\0';
	/* "0.52 0.58 0.59 2/154 4321": the 4th field */
	p = strchr(buf, '/');
	while (p && p > buf && p[-1] >= '0' && p[-1] <= '9')
		p--;
	if (!p)
		return !c->idle_sync;
	run = strtoul(p, NULL, 10);
	fits = run + (c->idle_ns && !c->idle_sync ? 0 : 1) <= c->idle_cpus;
	if (!c->idle_ns)	/* the first look decides alone */
		c->idle_score = fits ? 256 : 0;
	else if (fits)
		c->idle_score += (256 - c->idle_score) / 4;
	else
		c->idle_score -= c->idle_score / 4;
	if (c->idle_score >= 160)
		return true;
	if (c->idle_score < 96)
		return false;
	return !c->idle_sync;
}

static int land(struct consumer *c);

/* The writes batch @b makes (prepared here: both paths prepare it). */
static unsigned int batch_ops(struct out_batch *b)
{
	unsigned int i, n = 0;

	out_batch_prepare(b);
	for (i = 0; i < b->nr_ops; i++)
		n += b->ops[i].len != 0;
	return n;
}

/*
 * consumer_set_idle(): run batch @b with pwritev()?  Lands first.
 */
static int idle_sync(struct consumer *c, struct out_batch *b, bool *sync)
{
	unsigned int ops;
	uint64_t now;

	*sync = false;
	if (!c->idle)
		return 0;
	if (c->idle_hook) {
		c->idle_sync = !c->idle_hook(c->idle_ctx);
	} else {
		now = mono_ns();
		if (!c->idle_ns || now - c->idle_ns >= CONSUMER_IDLE_NS) {
			c->idle_sync = !idle_cpu(c);
			c->idle_ns = now;
		}
	}
	/*
	 * A small batch, many writes or none (nothing to hand a worker):
	 * pwritev() whatever the CPUs.
	 */
	if (!c->idle_sync && b->bytes >= c->idle_min_bytes) {
		ops = batch_ops(b);
		*sync = !ops || ops > c->idle_max_ops;
	} else {
		*sync = true;
	}
	/* to pwritev(): the batches in flight first, the files in order */
	if (*sync && c->nr_fly)
		return land(c);
	return 0;
}

void consumer_fini(struct consumer *c)
{
	unsigned int i;

	if (c->use_uring) {
		for (i = 0; i < URING_MAX_FLY; i++)
			uring_io_finish(&c->u, i);
		uring_io_exit(&c->u);	/* before the batches it points to */
	}
	/*
	 * O_DIRECT without consumer_end() (an error elsewhere): what the
	 * batches wrote stays, the size kept ahead of it goes.  The last
	 * partial block is lost, as the batch being filled is.
	 */
	if (c->dio && c->dfile && !c->dio_done && c->dalloc != UINT64_MAX &&
	    ftruncate(c->dfile->fd, (off_t)c->doff))
		c->abort_err = -errno;
	c->use_uring = false;
	for (i = 0; i < URING_MAX_FLY; i++) {
		if (c->cb[i].ref_from)
			out_batch_free(&c->cb[i].b);
		free(c->cb[i].ref_from);
		c->cb[i].ref_from = NULL;
		free(c->cb[i].bounce);
		c->cb[i].bounce = NULL;
	}
	free(c->dtail);
	c->dtail = NULL;
	if (c->load_fd >= 0)
		close(c->load_fd);
	c->load_fd = -1;
	c->idle = false;
	free(c->rel);
	free(c->taken);
	free(c->hold);
	c->rel = c->taken = c->hold = NULL;
	c->fill = NULL;
	c->nr_fly = 0;
}

/*
 * Give ring @i's space back up to where its records are no longer needed:
 * the end of the last record taken, or the start of the first record a
 * batch not yet on disk points to, whichever is earlier.
 */
static void give_back(struct consumer *c, unsigned int i)
{
	uint64_t to = c->taken[i];
	unsigned int k;

	for (k = 0; k < c->nb; k++)
		if (c->cb[k].ref_from[i] < to)
			to = c->cb[k].ref_from[i];
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

static unsigned int cb_index(const struct consumer *c,
			     const struct consumer_batch *cb)
{
	return (unsigned int)(cb - c->cb);
}

/*
 * O_DIRECT: have @cb write its bytes of the direct file as one aligned
 * write from its bounce buffer: the tail the batch before it left, then
 * its own ranges in file order, up to the last whole block; the rest is
 * the next tail.  The batch's other ops (pmclog's .periods) stay as they
 * are.  A copy, as a buffered write makes one into the page cache.
 */
static int dio_prepare(struct consumer *c, struct consumer_batch *cb)
{
	struct out_batch *b = &cb->b;
	uint64_t at = c->doff + c->dtail_len;
	size_t total = c->dtail_len, whole;
	struct out_op *op, *first = NULL;
	unsigned int i, k;
	char *p;

	cb->dop = NULL;
	out_batch_prepare(b);
	for (i = 0; i < b->nr_ops; i++)
		if (b->ops[i].f == c->dfile)
			total += b->ops[i].len;
	if (total + CONSUMER_DIO_ALIGN > cb->bounce_size) {
		size_t sz = (total + 2 * CONSUMER_DIO_ALIGN) &
			    ~(size_t)(CONSUMER_DIO_ALIGN - 1);
		void *nb;

		if (posix_memalign(&nb, CONSUMER_DIO_ALIGN, sz))
			return -ENOMEM;
		free(cb->bounce);
		cb->bounce = nb;
		cb->bounce_size = sz;
	}
	memcpy(cb->bounce, c->dtail, c->dtail_len);
	p = cb->bounce + c->dtail_len;
	for (i = 0; i < b->nr_ops; i++) {
		op = &b->ops[i];
		if (op->f != c->dfile || !op->len)
			continue;
		if (op->off != at)	/* appends only (pmclog) */
			return -EINVAL;
		for (k = 0; k < op->iov_cnt; k++) {
			const struct iovec *v = &b->iov[op->iov_first + k];

			memcpy(p, v->iov_base, v->iov_len);
			p += v->iov_len;
		}
		at += op->len;
		if (!first) {
			first = op;
			continue;
		}
		op->len = 0;	/* in the first one's write */
		op->iov_cnt = 0;
	}
	if (!first)
		return 0;	/* nothing for the file in this batch */
	whole = total & ~(size_t)(CONSUMER_DIO_ALIGN - 1);
	/* the size ahead of the write: not an extending write (ext4) */
	if (c->dalloc != UINT64_MAX && c->doff + whole > c->dalloc) {
		uint64_t to = c->doff + whole + CONSUMER_DIO_AHEAD;

		if (fallocate(c->dfile->fd, 0, (off_t)c->dalloc,
			      (off_t)(to - c->dalloc)))
			c->dalloc = UINT64_MAX;	/* appends, then */
		else
			c->dalloc = to;
	}
	c->dtail_len = total - whole;
	memcpy(c->dtail, cb->bounce + whole, c->dtail_len);
	first->off = c->doff;
	first->len = whole;
	first->iov_cnt = whole ? 1 : 0;
	b->iov[first->iov_first].iov_base = cb->bounce;
	b->iov[first->iov_first].iov_len = whole;
	c->doff += whole;
	cb->dop = first;
	return 0;
}

/* Cut the file to @to bytes, its last write (an end, or a failure). */
static void dio_trunc(struct consumer *c, uint64_t to)
{
	c->dio_done = true;
	if (ftruncate(c->dfile->fd, (off_t)to) && !c->abort_err)
		c->abort_err = -errno;
}

/*
 * A batch failed with O_DIRECT while later ones may have written past
 * it: once none is in flight, cut the file back to where the failed write
 * started (its op's offset moved on with what it wrote).
 */
static void dio_cut(struct consumer *c, struct consumer_batch *cb)
{
	unsigned int i;

	for (i = 0; i < c->nb; i++)
		uring_io_finish(&c->u, i);	/* errors: the first one's */
	c->nr_fly = 0;
	dio_trunc(c, cb->dop ? cb->dop->off : c->doff);
}

/* Wait for the oldest batch in flight. */
static int land_one(struct consumer *c)
{
	struct consumer_batch *cb = &c->cb[c->fly_first];
	int err;

	err = uring_io_finish(&c->u, c->fly_first);
	if (err) {
		err = write_failed(c, &cb->b, err);
		if (c->dio)	/* after the writer's abort: its error kept */
			dio_cut(c, cb);
		return err;
	}
	batch_done(c, cb);
	c->fly_first = (c->fly_first + 1) % c->nb;
	c->nr_fly--;
	return 0;
}

/* Wait for every batch in flight. */
static int land(struct consumer *c)
{
	int err = 0;

	while (c->nr_fly && !err)
		err = land_one(c);
	return err;
}

/* Land the batches in flight that are done, oldest first. */
static int land_done(struct consumer *c)
{
	int err = 0;

	while (c->nr_fly && !err && !uring_io_busy(&c->u, c->fly_first))
		err = land_one(c);
	return err;
}

/*
 * Write the batch being filled out (or start writing it), then give back
 * the ring space it covered once it is on disk.  @wait: return only once
 * everything is on disk.
 */
static int consumer_run(struct consumer *c, bool wait)
{
	struct consumer_batch *cb = c->fill;
	bool sync = !c->use_uring;
	int err;

	err = fmt_flush(c->w, &cb->b);
	if (err)
		return err;
	give_back_all(c);	/* before a wait for the disk */
	if (c->dio) {
		err = dio_prepare(c, cb);
		if (err)
			return write_failed(c, &cb->b, err);
	}
	if (!sync) {
		err = idle_sync(c, &cb->b, &sync);
		if (err)
			return err;
	}
	if (sync) {
		err = out_batch_run_sync(&cb->b);
		if (err) {
			err = write_failed(c, &cb->b, err);
			if (c->dio)
				dio_trunc(c, cb->dop ? cb->dop->off : c->doff);
			return err;
		}
		batch_done(c, cb);
		return 0;
	}
	/* all slots busy: the oldest first (depth 1: the one in flight) */
	err = wait ? land(c) : c->nr_fly == c->depth ? land_one(c) : 0;
	if (err)
		return err;
	c->st.uring_batches++;
	if (!wait) {
		uring_io_start(&c->u, cb_index(c, cb), &cb->b);
		c->nr_fly++;
		c->fill = &c->cb[(c->fly_first + c->nr_fly) % c->nb];
		return 0;
	}
	err = uring_io_run(&c->u, cb_index(c, cb), &cb->b);
	if (err) {
		err = write_failed(c, &cb->b, err);
		if (c->dio)
			dio_trunc(c, cb->dop ? cb->dop->off : c->doff);
		return err;
	}
	batch_done(c, cb);
	return 0;
}

/*
 * O_DIRECT from the first batch on (its ranges, the file's header, are
 * queued, none written): the file is new and empty.
 */
static int dio_begin(struct consumer *c)
{
	struct stat st;
	int fl;

	c->dfile = c->direct.f;
	if (!c->dfile || c->dfile->stream || fstat(c->dfile->fd, &st) ||
	    st.st_size)
		return -EINVAL;
	fl = fcntl(c->dfile->fd, F_GETFL);
	if (fl < 0 || fcntl(c->dfile->fd, F_SETFL, fl | O_DIRECT))
		return -EINVAL;	/* the file system takes no O_DIRECT */
	c->doff = 0;
	c->dtail_len = 0;
	c->dalloc = 0;
	return 0;
}

/* The last partial block, without O_DIRECT, after everything landed. */
static int dio_end(struct consumer *c)
{
	size_t done = 0;
	ssize_t n;
	int fl = fcntl(c->dfile->fd, F_GETFL);

	if (fl < 0 || fcntl(c->dfile->fd, F_SETFL, fl & ~O_DIRECT))
		return -errno;
	while (done < c->dtail_len) {
		n = pwrite(c->dfile->fd, c->dtail + done, c->dtail_len - done,
			   (off_t)(c->doff + done));
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			c->err_path = c->dfile->path;
			return n ? -errno : -ENOSPC;
		}
		done += (size_t)n;
	}
	c->doff += done;
	c->dtail_len = 0;
	c->dio_done = true;
	/* the size kept ahead: back to the bytes written */
	if (c->dalloc != UINT64_MAX && ftruncate(c->dfile->fd, (off_t)c->doff))
		return -errno;
	return 0;
}

int consumer_begin(struct consumer *c)
{
	int err = fmt_begin(c->w, &c->fill->b);

	if (err)
		return err;
	if (!fmt_direct(c->w, &c->direct))
		c->direct.types = 0;
	if (c->dio) {
		err = dio_begin(c);
		if (err)
			return err;
	}
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

	/* batches in flight may be done: give their space back first */
	err = land_done(c);
	if (err)
		return err;
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
	 * While every slot is being written this one keeps filling: it goes
	 * out when the oldest lands (a completion ends consumer_wait()).  So
	 * slow writes make larger batches, not more of them.
	 */
	if (c->nr_fly && c->nr_fly == c->depth &&
	    uring_io_busy(&c->u, c->fly_first))
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
	if (!err)
		err = consumer_run(c, true);
	return err || !c->dio ? err : dio_end(c);
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
		if (ret >= 0) {
			int err = land_done(c);

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
 * while a CPU is idle for the worker, so both are kept and the batch
 * picks (CONSUMER_IO_IDLE, consumer_set_idle(); Documentation/
 * performance.rst, "Buffered io_uring and an idle CPU"); pwritev() with
 * one CPU.
 * The probe writes one byte with RWF_NOWAIT to an unnamed file (O_TMPFILE) in the
 * directory @path is or would be in; what cannot be probed keeps the
 * default, io_uring.
 */
/*
 * The directory @path is or would be in: the nearest that exists (blob
 * makes its own), malloc()ed; NULL: none, or @path is not a regular file
 * or a directory (a pipe, a device), set in *special.
 */
static char *pick_dir(const char *path, bool *special)
{
	char *dir = strdup(path && *path ? path : "."), *slash;
	struct stat st;

	*special = false;
	if (!dir)
		return NULL;
	while (stat(dir, &st) || !S_ISDIR(st.st_mode)) {
		if (!stat(dir, &st) && !S_ISREG(st.st_mode)) {
			*special = true;	/* a pipe, a device */
			break;
		}
		slash = strrchr(dir, '/');
		if (!strcmp(dir, ".") || !strcmp(dir, "/")) {
			break;			/* no directory at all */
		} else if (!slash) {
			strcpy(dir, ".");
		} else if (slash == dir) {
			dir[1] = '\0';
		} else {
			*slash = '\0';
		}
	}
	if (!stat(dir, &st) && S_ISDIR(st.st_mode) && !*special)
		return dir;
	free(dir);
	return NULL;
}

enum consumer_io consumer_io_pick(const char *path)
{
	struct iovec iov = { .iov_base = (void *)"", .iov_len = 1 };
	bool special;
	char *dir = pick_dir(path, &special);
	ssize_t n;
	int fd;

	if (!dir)
		return CONSUMER_IO_URING;
	fd = open(dir, O_TMPFILE | O_WRONLY | O_CLOEXEC, 0600);
	free(dir);
	if (fd < 0)
		return CONSUMER_IO_URING;
	n = pwritev2(fd, &iov, 1, 0, RWF_NOWAIT);
	close(fd);
	if (n < 0 && errno == EOPNOTSUPP)
		return cpus_usable() > 1 ? CONSUMER_IO_IDLE : CONSUMER_IO_SYNC;
	return CONSUMER_IO_URING;	/* written, or EAGAIN: it would block */
}

/*
 * With O_DIRECT, io_uring's writes in flight pay where a write waits for
 * a device (ext4 over a disk: 1.2x to 2.1x pwritev(), performance.rst);
 * on a file system in memory nothing waits, and the hand-offs cost
 * (tmpfs: 0.8x to 0.9x): pwritev() there.
 */
enum consumer_io consumer_io_pick_direct(const char *path)
{
	bool special;
	char *dir = pick_dir(path, &special);
	struct statfs sf;
	int ret;

	if (!dir)
		return CONSUMER_IO_URING;
	ret = statfs(dir, &sf);
	free(dir);
	if (!ret && (sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC))
		return CONSUMER_IO_SYNC;
	return CONSUMER_IO_URING;
}
