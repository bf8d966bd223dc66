// SPDX-License-Identifier: GPL-2.0
/*
 * Output batches: the byte ranges writers queue, and the plain pwritev()
 * runner used by --no-uring, by `dump` tests and as the io_uring fallback.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/stat.h>

#include "../formats/fmt.h"

int out_batch_init(struct out_batch *b, unsigned int max_puts, size_t arena)
{
	memset(b, 0, sizeof(*b));
	b->puts = calloc(max_puts, sizeof(*b->puts));
	b->iov = calloc(max_puts, sizeof(*b->iov));
	b->ops = calloc(max_puts, sizeof(*b->ops));
	b->arena = malloc(arena);
	if (!b->puts || !b->iov || !b->ops || !b->arena) {
		out_batch_free(b);
		return -ENOMEM;
	}
	b->max_puts = max_puts;
	b->arena_size = arena;
	b->landed = true;	/* run synchronously unless a consumer says not */
	return 0;
}

void out_batch_free(struct out_batch *b)
{
	free(b->puts);
	free(b->iov);
	free(b->ops);
	free(b->arena);
	memset(b, 0, sizeof(*b));
}

void out_batch_reset(struct out_batch *b)
{
	b->nr_puts = 0;
	b->nr_iov = 0;
	b->nr_ops = 0;
	b->prepared = false;
	b->arena_used = 0;
	b->copy_end = NULL;
	b->copy_run = 0;
	b->bytes = 0;
	b->records = 0;
	b->items = 0;
	b->ring_refs = 0;
	b->gen++;
}

bool out_batch_empty(const struct out_batch *b)
{
	return b->nr_puts == 0 && b->records == 0;
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

void *out_alloc_bytes(struct out_batch *b, size_t len)
{
	void *p;

	if (b->arena_used + len > b->arena_size)
		return NULL;
	p = b->arena + b->arena_used;
	b->arena_used += len;
	return p;
}

void out_trim(struct out_batch *b, const void *p, size_t len)
{
	b->arena_used = (size_t)((const char *)p - b->arena) + len;
}

int out_slab_put(struct out_slab *sl, struct out_batch *b,
		 struct out_file *f, unsigned int phase)
{
	int err;

	if (sl->b != b || sl->gen != b->gen || sl->p == sl->start)
		return 0;
	err = out_put(b, f, phase, sl->start, (size_t)(sl->p - sl->start));
	if (!err)
		sl->start = sl->p;
	return err;
}

int out_slab_new(struct out_slab *sl, struct out_batch *b, struct out_file *f,
		 unsigned int phase, size_t entry, unsigned int entries)
{
	int err = out_slab_put(sl, b, f, phase);

	if (err)
		return err;
	sl->p = out_alloc(b, entry * entries);
	if (!sl->p) {
		sl->b = NULL;
		return -ENOBUFS;
	}
	sl->start = sl->p;
	sl->b = b;
	sl->gen = b->gen;
	sl->left = entries;
	return 0;
}

int out_put_at(struct out_batch *b, struct out_file *f, unsigned int phase,
	       uint64_t off, const void *p, size_t len)
{
	struct out_put *last = NULL;

	if (!len)
		return 0;
	b->bytes += len;
	/*
	 * The common case: on in file and in memory from the file's last
	 * range of this batch (writers of several files interleave them).
	 */
	if (f->last_b == b && f->last_gen == b->gen && f->last_put < b->nr_puts)
		last = &b->puts[f->last_put];
	if (last && last->f == f && last->phase == phase && !last->ring &&
	    last->off + last->len == off &&
	    (const char *)last->p + last->len == (const char *)p) {
		last->len += len;
		return 0;
	}
	last = b->nr_puts ? &b->puts[b->nr_puts - 1] : NULL;
	if (last && last->f == f && last->phase == phase &&
	    last->off + last->len == off &&
	    (const char *)last->p + last->len == (const char *)p) {
		last->len += len;
		return 0;
	}
	if (b->nr_puts >= b->max_puts) {
		b->bytes -= len;
		return -ENOBUFS;
	}
	f->last_b = b;
	f->last_gen = b->gen;
	f->last_put = b->nr_puts;
	b->puts[b->nr_puts] = (struct out_put){
		.f = f, .off = off, .p = p, .len = len, .phase = phase,
		.seq = b->nr_puts, .ring = false,
	};
	b->nr_puts++;
	b->prepared = false;
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

/* Copy the last range (a short ring range) to the arena's end. */
static void out_copy_last(struct out_batch *b)
{
	struct out_put *last = &b->puts[b->nr_puts - 1], *prev = last - 1;
	char *tail = b->arena + b->arena_used;

	if (b->arena_used + last->len > b->arena_size)
		return;		/* full: stays an iovec of its own */
	memcpy(tail, last->p, last->len);
	b->arena_used += last->len;
	if (b->nr_puts >= 2 && !prev->ring && prev->f == last->f &&
	    prev->phase == last->phase && prev->off + prev->len == last->off &&
	    (const char *)prev->p + prev->len == tail) {
		prev->len += last->len;
		b->nr_puts--;
		return;
	}
	last->p = tail;
	last->ring = false;
}

/* The general way: a new ring range, the short one before it copied. */
int out_put_ring_slow(struct out_batch *b, struct out_file *f,
		      unsigned int phase, const void *p, size_t len)
{
	struct out_put *last = b->nr_puts ? &b->puts[b->nr_puts - 1] : NULL;
	unsigned int n;
	int err;

	if (last && last->ring && last->len <= OUT_COPY_MAX &&
	    (last->f != f || last->off + last->len != f->off ||
	     (const char *)last->p + last->len != (const char *)p))
		out_copy_last(b);
	n = b->nr_puts;
	err = out_put(b, f, phase, p, len);
	if (err)
		return err;
	if (b->nr_puts > n)
		b->puts[n].ring = true;
	b->ring_refs++;		/* a new ring range, or one grown */
	return 0;
}

int out_put_ring_phase(struct out_batch *b, struct out_file *f,
		       unsigned int phase, const void *p, size_t len)
{
	return out_put_ring_inline(b, f, phase, p, len);
}

int out_put_ring(struct out_batch *b, struct out_file *f, const void *p,
		 size_t len)
{
	return out_put_ring_inline(b, f, OUT_DATA, p, len);
}

/* By phase, then file, then queue order (offsets of a file grow with it). */
static int put_cmp(const void *a, const void *b)
{
	const struct out_put *x = a, *y = b;

	if (x->phase != y->phase)
		return x->phase < y->phase ? -1 : 1;
	if (x->f != y->f)
		return (uintptr_t)x->f < (uintptr_t)y->f ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void out_batch_prepare(struct out_batch *b)
{
	struct out_op *op = NULL;
	struct iovec *iov;
	unsigned int i;

	if (b->prepared)
		return;
	/* One file and phase (pmclog) is already in order: no sort. */
	for (i = 1; i < b->nr_puts; i++)
		if (put_cmp(&b->puts[i - 1], &b->puts[i]) > 0)
			break;
	if (i < b->nr_puts)
		qsort(b->puts, b->nr_puts, sizeof(*b->puts), put_cmp);
	b->nr_iov = 0;
	b->nr_ops = 0;
	for (i = 0; i < b->nr_puts; i++) {
		const struct out_put *pt = &b->puts[i];

		if (op && op->f == pt->f && op->phase == pt->phase &&
		    op->off + op->len == pt->off) {
			iov = &b->iov[b->nr_iov - 1];
			if ((const char *)iov->iov_base + iov->iov_len == pt->p) {
				iov->iov_len += pt->len;
				op->len += pt->len;
				continue;
			}
			if (op->iov_cnt < OUT_MAX_IOV) {
				op->iov_cnt++;
				goto add_iov;
			}
		}
		op = &b->ops[b->nr_ops++];
		*op = (struct out_op){
			.f = pt->f, .off = pt->off, .iov_first = b->nr_iov,
			.iov_cnt = 1, .phase = pt->phase,
		};
add_iov:
		b->iov[b->nr_iov].iov_base = (void *)pt->p;
		b->iov[b->nr_iov].iov_len = pt->len;
		b->nr_iov++;
		op->len += pt->len;
	}
	b->prepared = true;
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
		/* a pipe has no offsets: it takes the bytes in order */
		n = op->f->stream ?
		    writev(op->f->fd, &b->iov[op->iov_first], (int)op->iov_cnt) :
		    pwritev(op->f->fd, &b->iov[op->iov_first], (int)op->iov_cnt,
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

/* The ops in order: sorted by phase, a phase is on disk before the next. */
int out_batch_run_sync(struct out_batch *b)
{
	unsigned int i;
	int err;

	out_batch_prepare(b);
	for (i = 0; i < b->nr_ops; i++) {
		err = out_op_run_sync(b, &b->ops[i]);
		if (err) {
			b->err_path = b->ops[i].f->path;
			return err;
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
	f->stream = lseek(f->fd, 0, SEEK_CUR) < 0 && errno == ESPIPE;
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

int out_keep_old(const char *path)
{
	static const char *const side[] = {
		".periods", ".kallsyms", ".modules", ".buildids", ".ldms",
	};
	char old[4200], a[4300], b[4300];
	struct stat st;
	unsigned int i;

	/*
	 * Nothing there, a pipe, a device; or a blob directory: an LDMS
	 * store that recordings add their sets to
	 */
	if (lstat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	if ((size_t)snprintf(old, sizeof(old), "%s.old", path) >= sizeof(old))
		return -ENAMETOOLONG;
	if (rename(path, old))
		return -errno;
	for (i = 0; i < sizeof(side) / sizeof(side[0]); i++) {
		snprintf(a, sizeof(a), "%s%s", path, side[i]);
		snprintf(b, sizeof(b), "%s%s", old, side[i]);
		if (rename(a, b) && errno == ENOENT)
			unlink(b);	/* not the new .old's */
	}
	return 0;
}
