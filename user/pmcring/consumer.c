// SPDX-License-Identifier: GPL-2.0
/*
 * The record loop's consumer: merge -> writer -> batch -> write -> consume.
 * A record handed out by the merge stays in its ring until the batch that
 * holds its bytes (or the bytes converted from it) is on disk; only then is
 * data_tail moved past it (pmcring_cpu_buf_consume(), (D) of the ordering
 * contract).
 */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "consumer.h"

int consumer_init(struct consumer *c, struct pmcring_merge *m,
		  unsigned int nr_bufs, struct fmt_writer *w, bool use_uring,
		  int poll_fd)
{
	int err;

	memset(c, 0, sizeof(*c));
	c->m = m;
	c->nr_bufs = nr_bufs;
	c->w = w;
	c->poll_fd = poll_fd;
	c->pend = calloc(nr_bufs ? nr_bufs : 1, sizeof(*c->pend));
	if (!c->pend)
		return -ENOMEM;
	err = out_batch_init(&c->b, CONSUMER_MAX_PUTS, CONSUMER_ARENA);
	if (err)
		goto err_pend;
	if (use_uring) {
		err = uring_io_init(&c->u, poll_fd);
		if (err)
			goto err_batch;
		c->use_uring = true;
	}
	return 0;
err_batch:
	out_batch_free(&c->b);
err_pend:
	free(c->pend);
	c->pend = NULL;
	return err;
}

void consumer_fini(struct consumer *c)
{
	if (c->use_uring)
		uring_io_exit(&c->u);
	out_batch_free(&c->b);
	free(c->pend);
	c->pend = NULL;
}

/* Write the batch out, then give back the ring space it covered. */
static int consumer_run(struct consumer *c)
{
	unsigned int i;
	int err;

	err = fmt_flush(c->w, &c->b);
	if (err)
		return err;
	err = c->use_uring ? uring_io_run(&c->u, &c->b) :
			     out_batch_run_sync(&c->b);
	if (err)
		return err;
	c->st.bytes += c->b.bytes;
	c->st.batches++;
	out_batch_reset(&c->b);
	for (i = 0; i < c->nr_bufs; i++) {
		if (!c->pend[i])
			continue;
		pmcring_cpu_buf_consume(pmcring_merge_buf(c->m, i), c->pend[i]);
		c->pend[i] = 0;
	}
	return 0;
}

int consumer_begin(struct consumer *c)
{
	int err = fmt_begin(c->w, &c->b);

	return err ? err : consumer_run(c);
}

static int consumer_take(struct consumer *c, const struct pmcring_record *r)
{
	struct fmt_rec fr = {
		.data = r->data, .len = r->len, .type = r->type,
		.cpu = r->cpu, .ts = r->ts,
	};
	int err = fmt_record(c->w, &c->b, &fr);

	if (err == -EAGAIN) {
		err = consumer_run(c);
		if (!err)
			err = fmt_record(c->w, &c->b, &fr);
	}
	if (err)
		return err;
	/* r->cpu is the merge's ring index, also for uprod rings */
	if (r->cpu < c->nr_bufs)
		c->pend[r->cpu] = r->end;
	c->b.records++;
	c->st.records++;
	if (r->type == PMCRING_TYPE_DROPNOTIFY)
		c->st.drops++;
	return 0;
}

int consumer_drain(struct consumer *c, uint64_t *n)
{
	struct pmcring_record r;
	uint64_t taken = 0;
	int ret, err;

	for (;;) {
		ret = pmcring_merge_next(c->m, &r);
		if (ret <= 0)
			break;
		err = consumer_take(c, &r);
		if (err)
			return err;
		taken++;
	}
	if (n)
		*n = taken;
	if (ret < 0)
		return ret;
	return out_batch_empty(&c->b) ? 0 : consumer_run(c);
}

int consumer_end(struct consumer *c, uint64_t ts)
{
	int err = fmt_end(c->w, &c->b, ts);

	if (err == -EAGAIN) {
		err = consumer_run(c);
		if (!err)
			err = fmt_end(c->w, &c->b, ts);
	}
	return err ? err : consumer_run(c);
}

int consumer_wait(struct consumer *c, unsigned int timeout_ms)
{
	struct pollfd pfd = { .fd = c->poll_fd, .events = POLLIN };
	int ret;

	if (c->use_uring)
		return uring_io_wait(&c->u, timeout_ms);
	if (c->poll_fd < 0)
		return 0;
	ret = poll(&pfd, 1, (int)timeout_ms);
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
