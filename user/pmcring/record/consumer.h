/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The consumer of `pmcring record`: takes records in exact timestamp order
 * from a libpmcring merge, hands them to a format writer and runs the
 * batches (io_uring, or pwritev() with --no-uring).  Ring space (data_tail)
 * goes back once a record's bytes are copied into a batch's arena, or once
 * the batch that points to them in the ring is on disk.  Works on a
 * session's rings or on a pmcring_uprod's (the host tests).
 */
#ifndef PMCRING_CONSUMER_H
#define PMCRING_CONSUMER_H

#include <liburing.h>
#include <libpmcring.h>

#include "../formats/fmt.h"
#include "ldms.h"

/*
 * Batches in flight at most (consumer_set_direct()), and the batches:
 * those in flight and the one being filled.
 */
#define CONSUMER_MAX_DEPTH	8u
#define URING_MAX_FLY		(CONSUMER_MAX_DEPTH + 1)

/* A batch in flight (one slot per consumer batch). */
struct uring_fly {
	struct out_batch *b;		/* NULL: no batch */
	unsigned int	next;		/* its first op not written yet */
	unsigned int	inflight;	/* its writes not complete yet */
	bool		progress;	/* the last chain wrote something */
	int		err;		/* its first error */
};

struct uring_io {
	struct io_uring	ring;
	bool		inited;
	unsigned int	setup_flags;	/* IORING_SETUP_* the kernel took */
	int		poll_fd;	/* session fd, -1: none */
	bool		poll_armed;
	bool		ready;		/* poll fired since the last wait */
	bool		hup;		/* POLLHUP seen */
	struct uring_fly fly[URING_MAX_FLY];
	unsigned int	inflight;	/* writes not complete, all slots */
	/*
	 * Host tests: called with each write's result > 0, returns the
	 * result to act on (shorter, or -errno); NULL: none.
	 */
	int		(*fault)(void *ctx, unsigned int slot,
				 const struct out_op *op, int res);
	void		*fault_ctx;
};

int uring_io_init(struct uring_io *u, int poll_fd);
void uring_io_exit(struct uring_io *u);
/* Run @b (all its phases) to completion in @slot, after the one there. */
int uring_io_run(struct uring_io *u, unsigned int slot, struct out_batch *b);
/* Start writing @b in @slot (free) and return. */
int uring_io_start(struct uring_io *u, unsigned int slot, struct out_batch *b);
/* Still writing @slot's batch?  Reaps completions, never waits. */
bool uring_io_busy(struct uring_io *u, unsigned int slot);
/* Wait for @slot's batch: 0 or its first error; frees the slot. */
int uring_io_finish(struct uring_io *u, unsigned int slot);
/* 1 if the fd became readable, 0 on timeout, or -errno. */
int uring_io_wait(struct uring_io *u, uint64_t timeout_ns);

struct consumer_stats {
	uint64_t	records;	/* records taken from the rings */
	uint64_t	written;	/* of them, in batches on disk */
	uint64_t	bytes;		/* bytes written to files */
	uint64_t	items;		/* records/frames/messages written */
	uint64_t	drops;		/* DROPNOTIFY records seen */
	uint64_t	batches;
	uint64_t	uring_batches;	/* of them, run with io_uring */
};

/*
 * Batches: with io_uring one is written (in flight) while the merge fills
 * the other; a batch is started only after the one before it completed.
 * With O_DIRECT (consumer_set_direct()) up to depth batches are in flight,
 * used in turn (cb[], a ring of depth + 1), each written from its own
 * bounce buffer.
 */
struct consumer_batch {
	struct out_batch	b;
	uint64_t		*ref_from;	/* per ring: where the first record
						 * the batch points to in the ring
						 * starts; UINT64_MAX: none
						 */
	char			*bounce;	/* O_DIRECT: the batch's bytes of
						 * the file, aligned
						 */
	size_t			bounce_size;
	struct out_op		*dop;		/* O_DIRECT: the op writing them */
};

struct consumer {
	struct pmcring_merge	*m;
	unsigned int		nr_bufs;
	struct consumer_batch	cb[URING_MAX_FLY];
	unsigned int		nb;		/* batches used: depth + 1 */
	unsigned int		depth;		/* batches in flight at most */
	struct consumer_batch	*fill;		/* being filled */
	unsigned int		fly_first;	/* oldest in flight (cb[]) */
	unsigned int		nr_fly;		/* in flight */
	/*
	 * O_DIRECT (consumer_set_direct()): the writer's direct-path file
	 * (pmclog's) takes whole blocks only; the bytes after the last
	 * whole block wait in @dtail, at file offset @doff, for the next
	 * batch, and go out without O_DIRECT at consumer_end().
	 */
	bool			dio;
	struct out_file		*dfile;
	char			*dtail;
	size_t			dtail_len;
	uint64_t		doff;
	/*
	 * The file's size is kept ahead of the writes (fallocate(),
	 * CONSUMER_DIO_AHEAD at a time) up to here: ext4 runs an O_DIRECT
	 * write that extends the file under the inode lock and waits for
	 * it, so appends would go one at a time whatever is in flight.
	 * Cut back to the bytes written at the end, on a failed write and
	 * at consumer_fini().  UINT64_MAX: fallocate() refused, appends.
	 */
	uint64_t		dalloc;
	bool			dio_done;	/* tail written or file cut */
	uint64_t		*rel;		/* per ring: given back up to here */
	uint64_t		*taken;		/* per ring: end of the last record
						 * taken from it
						 */
	uint64_t		*hold;		/* per ring: run the batch when
						 * keeping this many ring bytes
						 */
	const char		*err_path;	/* file of a failed write */
	int			abort_err;	/* fmt_abort() after it failed */
	struct fmt_writer	*w;
	/*
	 * --ldms: every record taken is published too, in the order taken
	 * (set after consumer_init(); NULL: none)
	 */
	struct ldms_pub		*pub;
	struct fmt_direct	direct;		/* the writer's direct path */
	bool			use_uring;
	struct uring_io		u;
	int			poll_fd;
	uint64_t		look_ns;	/* merge last returned 0 */
	struct consumer_stats	st;
	/*
	 * consumer_set_idle(): io_uring only while a CPU is idle for its
	 * worker, else pwritev() (@idle_sync).  @idle_score: how often a
	 * look at /proc/loadavg (@load_fd) found one (0 to 256, decaying).
	 * Tests set @idle_hook: its answer is the choice for each batch.
	 */
	bool			idle;
	bool			idle_sync;
	int			load_fd;
	unsigned int		idle_cpus;	/* CPUs online */
	unsigned int		idle_score;
	uint64_t		idle_ns;	/* last look */
	bool			(*idle_hook)(void *ctx);
	void			*idle_ctx;
	uint64_t		idle_min_bytes;	/* smaller: pwritev() */
	unsigned int		idle_max_ops;	/* more writes: pwritev() */
	/*
	 * The DROPNOTIFY of consumer_unannounced(): a batch may point to
	 * it until it is on disk, so it lives as long as the batches.
	 */
	struct pmcring_rec_header endnote;
	/*
	 * perf's enable on exec: the samples of this pid (the command
	 * record runs) are not written until its PROCEXEC, so that a
	 * recording starts with the command, not with pmcring's fork of it
	 * waiting to exec.  0: none.
	 */
	uint32_t		until_exec;
};

/*
 * Batch size: queued ranges and staging bytes.  Two batches: what was
 * converted into the arenas and is not on disk yet is at most twice
 * CONSUMER_ARENA.  512 KiB, measured (pmcring-drain-bench, CPU time per
 * record, pwritev to tmpfs): 4 to 6% less than 2 MiB for 64- and 256-byte
 * records in every format, an arena the kernel reads back from the cache
 * it was just written to (-DCONSUMER_ARENA=BYTES to measure another).
 */
#define CONSUMER_MAX_PUTS	4096u
#ifndef CONSUMER_ARENA
#define CONSUMER_ARENA		(512u << 10)
#endif

int consumer_init(struct consumer *c, struct pmcring_merge *m,
		  unsigned int nr_bufs, struct fmt_writer *w, bool use_uring,
		  int poll_fd);
/*
 * After consumer_init(), before consumer_begin(): write the writer's
 * direct-path file (pmclog's; others: -EINVAL at consumer_begin()) with
 * O_DIRECT, in CONSUMER_DIO_ALIGN blocks, with io_uring up to @depth
 * batches in flight (1 to CONSUMER_MAX_DEPTH).  The last partial block is
 * written at consumer_end(); a failed write cuts the file back to what
 * was written before it.  The file system must take O_DIRECT
 * (consumer_begin(): -EINVAL if not).  While recording, the file's size
 * runs up to CONSUMER_DIO_AHEAD bytes ahead of its data (zeros: a
 * process killed leaves them; every end that runs consumer_end() or
 * consumer_fini() cuts them).
 */
#define CONSUMER_DIO_ALIGN	4096u
/* Batches in flight with O_DIRECT by default: the write bench's best. */
#define CONSUMER_DIO_DEPTH	8u
/* How far the file's size is kept ahead of the O_DIRECT writes. */
#define CONSUMER_DIO_AHEAD	(16u << 20)
int consumer_set_direct(struct consumer *c, unsigned int depth);
/*
 * After consumer_init() with io_uring, buffered: write each batch with
 * io_uring while a CPU is idle for the io-wq worker that copies it into
 * the page cache (overlapping the merge), with pwritev() while none is
 * (the same copy plus a hand-off): the system's runnable tasks
 * (/proc/loadavg), looked at when a batch is run, at most once every
 * CONSUMER_IDLE_NS.  -EINVAL: no io_uring, O_DIRECT, or one CPU.
 */
#define CONSUMER_IDLE_NS	1000000ull
/*
 * A batch below this goes with pwritev() whatever the CPUs: its copy is
 * too short to overlap anything, and in a system-wide recording the worker
 * woken for each small batch is recorded too (two PROCCSW records and the
 * wake-up of the next drain per batch: on an idle arm64 VM, 20,000 to
 * 76,000 records/s of the recorder's own, against 400 with pwritev()).
 */
#define CONSUMER_IDLE_MIN_BYTES	(64u << 10)
/*
 * A batch of more writes than this goes with pwritev() whatever the CPUs:
 * io_uring runs a batch's writes as one linked chain, and each write after
 * the first that the file cannot take at once goes to an io-wq worker
 * again.  Measured on an idle host (make bench, native drain, 2026-11-29):
 * blob (three files a segment: six writes or more a batch) drained at
 * 0.65-0.82 of its own pwritev() rate with io_uring, at 1.4-1.5x the CPU
 * per record, on tmpfs and ext4; pmclog (one write) and barman (its frames
 * and its header: two) are kept on the choice.
 */
#define CONSUMER_IDLE_MAX_OPS	2u
int consumer_set_idle(struct consumer *c);
void consumer_fini(struct consumer *c);
int consumer_begin(struct consumer *c);
/*
 * Take the records the merge can hand out now, at most @max (0: no limit;
 * producers may refill the rings as fast as they are drained, the
 * consumer's own writes included, so a caller with other work to check
 * bounds each call); *n: how many.
 */
int consumer_drain(struct consumer *c, uint64_t max, uint64_t *n);
/*
 * After the last drain of a disabled session: one DROPNOTIFY at @ts (the
 * end) for each ring whose producer page counts drops no DROPNOTIFY of
 * the ring announced (lost > reported), since nothing else will.  Counted
 * as records taken and drop notes, as the rings' DROPNOTIFYs are.
 */
int consumer_unannounced(struct consumer *c, uint64_t ts);
/* Write the end (CLOSELOG, final headers); everything is on disk after. */
int consumer_end(struct consumer *c, uint64_t ts);
/* Wait until the batch in flight (if any) is on disk. */
int consumer_sync(struct consumer *c);
/*
 * The wait after a drain: records are written within the merge's
 * max_delay_ns of their commit (pmcring_merge_timeout_ns()).
 */
uint64_t consumer_timeout_ns(struct consumer *c);
/* Wait for the session fd (or a timeout): 1 readable, 0 timeout, -errno. */
int consumer_wait(struct consumer *c, uint64_t timeout_ns);
/* POLLHUP seen on the session fd. */
bool consumer_hup(const struct consumer *c);

/* IDLE: io_uring while a CPU is idle, else pwritev() (consumer_set_idle()) */
enum consumer_io { CONSUMER_IO_SYNC, CONSUMER_IO_URING, CONSUMER_IO_IDLE };
/*
 * The faster way to write the file or directory @path (or the directory
 * it is to be created in), for when the user did not choose.
 */
enum consumer_io consumer_io_pick(const char *path);
/*
 * The same for O_DIRECT (consumer_set_direct()): io_uring, except on a
 * file system in memory (tmpfs, ramfs), where no write waits.
 */
enum consumer_io consumer_io_pick_direct(const char *path);

#endif /* PMCRING_CONSUMER_H */
