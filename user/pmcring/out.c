// SPDX-License-Identifier: GPL-2.0
/*
 * Output batches: the byte ranges writers queue, and the plain pwritev()
 * runner used by --no-uring, by `dump` tests and as the io_uring fallback.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include "fmt.h"

int out_batch_init(struct out_batch *b, unsigned int max_iov, size_t arena)
{
	memset(b, 0, sizeof(*b));
	b->iov = calloc(max_iov, sizeof(*b->iov));
	b->ops = calloc(max_iov, sizeof(*b->ops));
	b->arena = malloc(arena);
	if (!b->iov || !b->ops || !b->arena) {
		out_batch_free(b);
		return -ENOMEM;
	}
	b->max_iov = max_iov;
	b->max_ops = max_iov;
	b->arena_size = arena;
	return 0;
}

void out_batch_free(struct out_batch *b)
{
	free(b->iov);
	free(b->ops);
	free(b->arena);
	memset(b, 0, sizeof(*b));
}

void out_batch_reset(struct out_batch *b)
{
	b->nr_iov = 0;
	b->nr_ops = 0;
	b->arena_used = 0;
	b->bytes = 0;
	b->records = 0;
}

bool out_batch_empty(const struct out_batch *b)
{
	return b->nr_ops == 0 && b->records == 0;
}

/*
 * A record takes at most a few iovecs and ops (blob: 4 files) and its
 * staging bytes; keep 8 of each in reserve.
 */
bool out_batch_room(const struct out_batch *b, size_t stage)
{
	return b->nr_iov + 8 <= b->max_iov && b->nr_ops + 8 <= b->max_ops &&
	       b->arena_used + stage + 64 <= b->arena_size;
}

void *out_alloc(struct out_batch *b, size_t len)
{
	size_t at = (b->arena_used + 7) & ~(size_t)7;
	void *p;

	if (at + len > b->arena_size)
		return NULL;
	p = b->arena + at;
	b->arena_used = at + len;
	return p;
}

int out_put_at(struct out_batch *b, struct out_file *f, unsigned int phase,
	       uint64_t off, const void *p, size_t len)
{
	struct out_op *op = b->nr_ops ? &b->ops[b->nr_ops - 1] : NULL;
	struct iovec *last;

	if (!len)
		return 0;
	/* Extend the last op if this continues it in the same file. */
	if (op && op->f == f && op->phase == phase && op->off + op->len == off &&
	    op->iov_first + op->iov_cnt == b->nr_iov) {
		last = &b->iov[b->nr_iov - 1];
		if ((const char *)last->iov_base + last->iov_len == p) {
			last->iov_len += len;
			goto extended;
		}
		if (op->iov_cnt < OUT_MAX_IOV && b->nr_iov < b->max_iov) {
			op->iov_cnt++;
			goto add_iov;
		}
	}
	if (b->nr_ops >= b->max_ops || b->nr_iov >= b->max_iov)
		return -ENOBUFS;
	op = &b->ops[b->nr_ops++];
	op->f = f;
	op->off = off;
	op->len = 0;
	op->iov_first = b->nr_iov;
	op->iov_cnt = 1;
	op->phase = phase;
add_iov:
	b->iov[b->nr_iov].iov_base = (void *)p;
	b->iov[b->nr_iov].iov_len = len;
	b->nr_iov++;
extended:
	op->len += len;
	b->bytes += len;
	return 0;
}

int out_put(struct out_batch *b, struct out_file *f, unsigned int phase,
	    const void *p, size_t len)
{
	int err = out_put_at(b, f, phase, f->off, p, len);

	if (!err)
		f->off += len;
	return err;
}

void out_op_advance(struct out_batch *b, struct out_op *op, size_t done)
{
	struct iovec *iov = &b->iov[op->iov_first];

	op->off += done;
	op->len -= done;
	while (done && op->iov_cnt) {
		if (done < iov->iov_len) {
			iov->iov_base = (char *)iov->iov_base + done;
			iov->iov_len -= done;
			break;
		}
		done -= iov->iov_len;
		iov++;
		op->iov_first++;
		op->iov_cnt--;
	}
}

static int out_op_run_sync(struct out_batch *b, struct out_op *op)
{
	ssize_t n;

	while (op->len) {
		n = pwritev(op->f->fd, &b->iov[op->iov_first], (int)op->iov_cnt,
			    (off_t)op->off);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -ENOSPC;
		out_op_advance(b, op, (size_t)n);
	}
	return 0;
}

int out_batch_run_sync(struct out_batch *b)
{
	unsigned int phase, i;
	int err;

	for (phase = 0; phase < OUT_NR_PHASES; phase++) {
		for (i = 0; i < b->nr_ops; i++) {
			if (b->ops[i].phase != phase)
				continue;
			err = out_op_run_sync(b, &b->ops[i]);
			if (err) {
				b->err_path = b->ops[i].f->path;
				return err;
			}
		}
	}
	return 0;
}

int out_file_open(struct out_file *f, const char *path, bool excl)
{
	int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (excl ? O_EXCL : O_TRUNC);

	f->fd = open(path, flags, 0644);
	if (f->fd < 0)
		return -errno;
	f->off = 0;
	f->path = strdup(path);
	if (!f->path) {
		close(f->fd);
		f->fd = -1;
		return -ENOMEM;
	}
	return 0;
}

void out_file_close(struct out_file *f)
{
	if (f->fd >= 0)
		close(f->fd);
	f->fd = -1;
	free(f->path);
	f->path = NULL;
}
