/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The consumer of `pmcring record`: takes records in exact timestamp order
 * from a libpmcring merge, hands them to a format writer, runs the batches
 * (io_uring, or pwritev() with --no-uring) and only then gives the ring
 * space back (data_tail).  Works on a session's rings or on a
 * pmcring_uprod's (the host tests).
 */
#ifndef PMCRING_CONSUMER_H
#define PMCRING_CONSUMER_H

#include <liburing.h>
#include <libpmcring.h>

#include "fmt.h"

struct uring_io {
	struct io_uring	ring;
	bool		inited;
	unsigned int	setup_flags;	/* IORING_SETUP_* the kernel took */
	int		poll_fd;	/* session fd, -1: none */
	bool		poll_armed;
	bool		ready;		/* poll fired since the last wait */
	bool		hup;		/* POLLHUP seen */
};

int uring_io_init(struct uring_io *u, int poll_fd);
void uring_io_exit(struct uring_io *u);
int uring_io_run(struct uring_io *u, struct out_batch *b);
/* 1 if the fd became readable, 0 on timeout, or -errno. */
int uring_io_wait(struct uring_io *u, unsigned int timeout_ms);

struct consumer_stats {
	uint64_t	records;	/* records taken from the rings */
	uint64_t	bytes;		/* bytes written to files */
	uint64_t	drops;		/* DROPNOTIFY records seen */
	uint64_t	batches;
};

struct consumer {
	struct pmcring_merge	*m;
	unsigned int		nr_bufs;
	uint64_t		*pend;		/* per ring: consume up to here */
	struct fmt_writer	*w;
	struct out_batch	b;
	bool			use_uring;
	struct uring_io		u;
	int			poll_fd;
	struct consumer_stats	st;
};

/* Batch size: queued ranges and staging bytes. */
#define CONSUMER_MAX_PUTS	4096u
#define CONSUMER_ARENA		(2u << 20)

int consumer_init(struct consumer *c, struct pmcring_merge *m,
		  unsigned int nr_bufs, struct fmt_writer *w, bool use_uring,
		  int poll_fd);
void consumer_fini(struct consumer *c);
int consumer_begin(struct consumer *c);
/* Take every record the merge can hand out now; *n: how many. */
int consumer_drain(struct consumer *c, uint64_t *n);
int consumer_end(struct consumer *c, uint64_t ts);
/* Wait for the session fd (or a timeout): 1 readable, 0 timeout, -errno. */
int consumer_wait(struct consumer *c, unsigned int timeout_ms);
/* POLLHUP seen on the session fd. */
bool consumer_hup(const struct consumer *c);

#endif /* PMCRING_CONSUMER_H */
