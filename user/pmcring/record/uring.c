// SPDX-License-Identifier: GPL-2.0
/*
 * The io_uring side of the consumer: one ring, readiness of the session fd
 * through a multishot poll, and the batches written with IORING_OP_WRITEV
 * whose iovecs point straight into the mmapped rings (zero copy) or into
 * the batch's staging arena.  The writes of a batch run one after the
 * other in the order out_batch_run_sync() runs them (phase, file, offset),
 * linked in the kernel (submit_chain()).
 *
 * A batch in flight has a slot (u->fly[], the consumer's batch index):
 * uring_io_start() submits the writes of a batch and returns, so the
 * consumer merges the next batch while this one is written;
 * uring_io_finish() waits for it.  The consumer keeps one batch in flight
 * (the next is submitted only after it completed, so the file is a valid
 * prefix whenever the process dies) except with O_DIRECT
 * (consumer_set_direct()): there each batch is one aligned write, and
 * several in flight keep the device busy while the next is merged; their
 * chains are independent, each at its own offsets.
 */
#include <errno.h>
#include <poll.h>

#include "consumer.h"

#define URING_ENTRIES	256u
#define TAG_POLL	(~0ull)
/* a write's user_data: its slot, and its op in the slot's batch */
#define TAG(slot, op)	((uint64_t)(slot) << 32 | (op))

int uring_io_init(struct uring_io *u, int poll_fd)
{
	struct io_uring_params p;
	int err;

	memset(u, 0, sizeof(*u));
	u->poll_fd = poll_fd;
	memset(&p, 0, sizeof(p));
	/* One thread submits and reaps: let the kernel skip the work for others. */
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	err = io_uring_queue_init_params(URING_ENTRIES, &u->ring, &p);
	if (err == -EINVAL) {		/* before Linux 6.1 */
		memset(&p, 0, sizeof(p));
		err = io_uring_queue_init_params(URING_ENTRIES, &u->ring, &p);
	}
	if (err)
		return err;
	u->setup_flags = p.flags;
	u->inited = true;
	return 0;
}

void uring_io_exit(struct uring_io *u)
{
	if (u->inited)
		io_uring_queue_exit(&u->ring);
	u->inited = false;
}

static struct io_uring_sqe *get_sqe(struct uring_io *u)
{
	struct io_uring_sqe *sqe = io_uring_get_sqe(&u->ring);

	if (!sqe) {
		io_uring_submit(&u->ring);
		sqe = io_uring_get_sqe(&u->ring);
	}
	return sqe;
}

static int arm_poll(struct uring_io *u)
{
	struct io_uring_sqe *sqe;

	if (u->poll_fd < 0 || u->poll_armed)
		return 0;
	sqe = get_sqe(u);
	if (!sqe)
		return -EBUSY;
	io_uring_prep_poll_multishot(sqe, u->poll_fd, POLLIN);
	io_uring_sqe_set_data64(sqe, TAG_POLL);
	u->poll_armed = true;
	return 0;
}

static void poll_cqe(struct uring_io *u, const struct io_uring_cqe *cqe)
{
	if (cqe->res > 0) {
		u->ready = true;
		if (cqe->res & (POLLHUP | POLLERR))
			u->hup = true;
	}
	if (!(cqe->flags & IORING_CQE_F_MORE))
		u->poll_armed = false;	/* the kernel ended it: re-arm */
}

/*
 * Submit the ops of the batch in flight that are not written yet, from
 * its next on, as one chain of IOSQE_IO_LINK writes: the kernel starts each
 * only after the one before it wrote all its bytes, so files grow without
 * holes and phase N is on disk before phase N + 1 is started, without a
 * trip back to this process between them.  A file that cannot take the
 * write at once (tmpfs and most file systems before Linux 6.6) sends the
 * head of the chain to an io-wq worker, which runs the rest of it in turn:
 * one hand-off per batch, not one per op or phase.  A chain ends at the
 * ring's free entries; the rest follows when it completed (handle_cqe()).
 */
static int submit_chain(struct uring_io *u, unsigned int slot)
{
	struct uring_fly *fl = &u->fly[slot];
	struct out_batch *b = fl->b;
	struct io_uring_sqe *sqe;
	unsigned int n, k;

	while (fl->next < b->nr_ops && !b->ops[fl->next].len)
		fl->next++;
	if (fl->next == b->nr_ops)
		return 0;
	n = io_uring_sq_space_left(&u->ring);
	if (n < URING_ENTRIES / 2) {	/* a poll re-arm is queued */
		io_uring_submit(&u->ring);
		n = io_uring_sq_space_left(&u->ring);
	}
	if (!n)
		return -EBUSY;
	n = n < b->nr_ops - fl->next ? n : b->nr_ops - fl->next;
	for (k = 0; k < n; k++) {
		struct out_op *op = &b->ops[fl->next + k];

		sqe = io_uring_get_sqe(&u->ring);
		io_uring_prep_writev(sqe, op->f->fd, &b->iov[op->iov_first],
				     op->iov_cnt, op->off);
		io_uring_sqe_set_data64(sqe, TAG(slot, fl->next + k));
		/* a short write or an error cancels the rest (-ECANCELED) */
		if (k + 1 < n)
			sqe->flags |= IOSQE_IO_LINK;
	}
	fl->inflight = n;
	u->inflight += n;
	fl->progress = false;
	return 0;
}

/* A completion: the poll's, or a write of a batch in flight. */
static void handle_cqe(struct uring_io *u, const struct io_uring_cqe *cqe)
{
	uint64_t tag = io_uring_cqe_get_data64(cqe);
	unsigned int slot = (unsigned int)(tag >> 32), i = (unsigned int)tag;
	struct uring_fly *fl;
	struct out_batch *b;
	int res = cqe->res, ret = 0;

	if (tag == TAG_POLL) {
		poll_cqe(u, cqe);
		return;
	}
	if (slot >= URING_MAX_FLY)
		return;		/* cannot happen: nothing else is queued */
	fl = &u->fly[slot];
	b = fl->b;
	if (!b || i >= b->nr_ops || !fl->inflight)
		return;		/* cannot happen either */
	fl->inflight--;
	u->inflight--;
	/* the host tests' fault injection: a short or failed completion */
	if (u->fault && res > 0)
		res = u->fault(u->fault_ctx, slot, &b->ops[i], res);
	if (res == -ECANCELED) {
		/* not started: an op before it in the chain fell short */
	} else if (res <= 0) {
		if (!fl->err)
			b->err_path = b->ops[i].f->path;
		fl->err = fl->err ? fl->err : res ? res : -ENOSPC;
	} else {
		out_op_advance(b, &b->ops[i], (size_t)res);
		fl->progress = true;
	}
	if (fl->inflight || fl->err)
		return;		/* let the others land, start nothing new */
	/* the chain is done: the rest of a short write, or the next chain */
	ret = fl->progress ? submit_chain(u, slot) : -ECANCELED;
	if (ret)
		fl->err = ret;
}

static void reap(struct uring_io *u)
{
	struct io_uring_cqe *cqe;

	while (io_uring_peek_cqe(&u->ring, &cqe) == 0) {
		handle_cqe(u, cqe);
		io_uring_cqe_seen(&u->ring, cqe);
	}
}

int uring_io_finish(struct uring_io *u, unsigned int slot)
{
	struct uring_fly *fl = &u->fly[slot];
	int ret, err;

	while (fl->inflight) {
		ret = io_uring_submit_and_wait(&u->ring, 1);
		if (ret < 0 && ret != -EINTR && ret != -EAGAIN &&
		    ret != -EBUSY) {
			/* the ring itself fails: give up (exit cancels) */
			fl->err = fl->err ? fl->err : ret;
			return fl->err;
		}
		reap(u);
	}
	err = fl->err;
	fl->b = NULL;
	fl->err = 0;
	return err;
}

bool uring_io_busy(struct uring_io *u, unsigned int slot)
{
	if (u->inflight)
		reap(u);
	/* deferred task work posts completions only when asked to */
	if (u->inflight && (u->setup_flags & IORING_SETUP_DEFER_TASKRUN)) {
		io_uring_get_events(&u->ring);
		reap(u);
	}
	/* the rest of a batch was queued by reap(): send it off */
	if (u->inflight && io_uring_sq_ready(&u->ring))
		io_uring_submit(&u->ring);
	return u->fly[slot].inflight != 0;
}

int uring_io_start(struct uring_io *u, unsigned int slot, struct out_batch *b)
{
	struct uring_fly *fl = &u->fly[slot];
	int err;

	if (fl->b)
		return -EBUSY;
	out_batch_prepare(b);
	fl->b = b;
	fl->err = 0;
	fl->next = 0;
	err = submit_chain(u, slot);
	if (!err) {
		err = io_uring_submit(&u->ring);
		err = err < 0 ? err : 0;
	}
	if (err)
		fl->err = fl->err ? fl->err : err;
	return 0;	/* errors come from uring_io_finish() */
}

int uring_io_run(struct uring_io *u, unsigned int slot, struct out_batch *b)
{
	int err = uring_io_finish(u, slot);

	if (err)
		return err;
	uring_io_start(u, slot, b);
	return uring_io_finish(u, slot);
}

int uring_io_wait(struct uring_io *u, uint64_t timeout_ns)
{
	struct __kernel_timespec ts = {
		.tv_sec = (long long)(timeout_ns / 1000000000),
		.tv_nsec = (long long)(timeout_ns % 1000000000),
	};
	struct io_uring_cqe *cqe;
	int err;

	err = arm_poll(u);
	if (err)
		return err;
	if (!u->ready) {
		err = io_uring_submit_and_wait_timeout(&u->ring, &cqe, 1, &ts,
						       NULL);
		if (err < 0 && err != -ETIME && err != -EINTR)
			return err;
	}
	reap(u);
	err = u->ready;
	u->ready = false;
	return err;
}
