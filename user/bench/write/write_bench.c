// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the consumer's two ways to write, alone: io_uring
 * (IORING_OP_WRITEV, one batch in flight while the next is made ready,
 * as uring.c runs them) against pwritev() (one batch after the other, as
 * out_batch_run_sync() does), writing TOTAL bytes to a new file in
 * batches of BATCH bytes, each batch an iovec of 4 KiB pieces as the
 * consumer's zero-copy ranges of ring pages are.  Buffered, and with
 * O_DIRECT (4 KiB-aligned batches, every one a multiple of 4 KiB) where
 * the file system takes it.  A "prepare" step touches every byte of the
 * next batch (what the merge and writer do to the bytes they queue), so
 * io_uring has work to overlap.  With -q, io_uring keeps up to DEPTH
 * batches in flight (each its own write, at its own offset, in DEPTH + 1
 * buffers: none is made ready again before its write completed), one row
 * per depth: where writes block (O_DIRECT to a device with latency) the
 * device works on several while the next is made ready.  Wall and CPU
 * time (io-wq workers included), median of RUNS runs, the ways
 * interleaved in each run.
 *
 * O_DIRECT writes go to a file whose size was set first (fallocate()), as
 * record --direct-io keeps it ahead of its writes: on ext4 an O_DIRECT
 * write that extends the file runs under the inode lock and waits for its
 * completion, so appends run one at a time however many are in flight
 * (-a: appends, to see that).
 *
 * Usage: pmcring-write-bench [-d DIR] [-l LABEL] [-b BATCH] [-t TOTAL]
 *                            [-R RUNS] [-q DEPTHS] [-a] [-j JSON]
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <liburing.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#define PIECE		4096u
#define MAX_RUNS	15u
#define MAX_DEPTH	32u
#define MAX_WAYS	9u	/* pwritev, then up to 8 io_uring depths */

static bool appends;	/* -a: O_DIRECT appends to a growing file */

static double clock_s(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct bufset {
	/* up to MAX_DEPTH batches written, one made ready */
	uint8_t		*mem[MAX_DEPTH + 1];
	struct iovec	*iov[MAX_DEPTH + 1];
	unsigned int	nr_iov;
};

/* What the consumer does to the bytes of a batch before it runs it. */
static void prepare(struct bufset *bs, unsigned int which, size_t batch,
		    uint64_t seq)
{
	uint64_t *p = (uint64_t *)bs->mem[which];
	size_t i;

	for (i = 0; i < batch / 8; i += 8)	/* one store per cache line */
		p[i] = seq + i;
}

static int write_all_sync(int fd, struct bufset *bs, size_t batch,
			  uint64_t total)
{
	uint64_t off = 0, seq = 0;

	while (off < total) {
		ssize_t n;

		prepare(bs, 0, batch, seq++);
		n = pwritev(fd, bs->iov[0], (int)bs->nr_iov, (off_t)off);
		if (n != (ssize_t)batch)
			return n < 0 ? -errno : -EIO;
		off += batch;
	}
	return 0;
}

/* Wait for one write; *slot: the buffer it wrote, free again. */
static int reap_one(struct io_uring *ring, size_t batch, unsigned int *slot)
{
	struct io_uring_cqe *cqe;
	int err = io_uring_wait_cqe(ring, &cqe), res;

	if (err)
		return err;
	res = cqe->res;
	*slot = (unsigned int)io_uring_cqe_get_data64(cqe);
	io_uring_cqe_seen(ring, cqe);
	if (res != (int)batch)
		return res < 0 ? res : -EIO;
	return 0;
}

/*
 * Up to @depth writes in flight: make the next batch ready in a free
 * buffer while they run, wait for one only when @depth are in flight.
 */
static int write_all_uring(int fd, struct bufset *bs, size_t batch,
			   uint64_t total, unsigned int depth)
{
	unsigned int free_slot[MAX_DEPTH + 1], nr_free = depth + 1, fly = 0;
	struct io_uring_params p;
	struct io_uring ring;
	uint64_t off = 0, seq = 0;
	unsigned int i, cur, done;
	int err;

	for (i = 0; i <= depth; i++)
		free_slot[i] = depth - i;
	memset(&p, 0, sizeof(p));
	p.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
	err = io_uring_queue_init_params(MAX_DEPTH, &ring, &p);
	if (err == -EINVAL) {
		memset(&p, 0, sizeof(p));
		err = io_uring_queue_init_params(MAX_DEPTH, &ring, &p);
	}
	if (err)
		return err;
	while (off < total) {
		struct io_uring_sqe *sqe;

		cur = free_slot[--nr_free];
		prepare(bs, cur, batch, seq++);	/* while the others fly */
		if (fly == depth) {
			err = reap_one(&ring, batch, &done);
			if (err)
				goto out;
			fly--;
			free_slot[nr_free++] = done;
		}
		sqe = io_uring_get_sqe(&ring);
		io_uring_prep_writev(sqe, fd, bs->iov[cur], bs->nr_iov, off);
		io_uring_sqe_set_data64(sqe, cur);
		err = io_uring_submit(&ring);
		if (err < 0)
			goto out;
		fly++;
		off += batch;
	}
	err = 0;
	while (fly && !err) {
		err = reap_one(&ring, batch, &done);
		fly--;
	}
out:
	io_uring_queue_exit(&ring);
	return err;
}

/* Seconds (and *cpu) to write @total bytes to @path; < 0: -errno. */
static double run_once(const char *path, unsigned int depth, bool direct,
		       struct bufset *bs, size_t batch, uint64_t total,
		       double *cpu)
{
	int flags = O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC;
	double t0, c0, t;
	int fd, err;

	fd = open(path, flags | (direct ? O_DIRECT : 0), 0644);
	if (fd < 0)
		return -errno;
	/*
	 * O_DIRECT: the file's size first, as record --direct-io keeps it
	 * ahead of the writes (ext4 runs an extending O_DIRECT write under
	 * the inode lock and waits for it: one at a time); -a: appends
	 */
	if (direct && !appends && fallocate(fd, 0, 0, (off_t)total)) {
		close(fd);
		return -errno;
	}
	c0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
	t0 = clock_s(CLOCK_MONOTONIC);
	err = depth ? write_all_uring(fd, bs, batch, total, depth) :
		      write_all_sync(fd, bs, batch, total);
	t = clock_s(CLOCK_MONOTONIC) - t0;
	*cpu = clock_s(CLOCK_PROCESS_CPUTIME_ID) - c0;
	close(fd);
	unlink(path);
	return err ? err : t;
}

/* "1,2,4,8": the io_uring depths to measure; their number, 0: bad. */
static unsigned int parse_depths(const char *arg, unsigned int *dep)
{
	unsigned int n = 0;
	char *end;

	while (*arg) {
		unsigned long v = strtoul(arg, &end, 0);

		if (end == arg || !v || v > MAX_DEPTH || n == MAX_WAYS - 1)
			return 0;
		dep[n++] = (unsigned int)v;
		arg = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return 0;
	}
	return n;
}

int main(int argc, char **argv)
{
	const char *dir = "/dev/shm", *label = NULL, *json = NULL;
	size_t batch = 256 * 1024;
	uint64_t total = 256ull << 20;
	unsigned int runs = 5, r, i, d, w, nways = 2, maxdep = 1;
	/* way 0: pwritev(); way w > 0: io_uring, depth[w] in flight */
	unsigned int depth[MAX_WAYS] = { 0, 1 };
	struct bufset bs;
	char path[4096], way[32];
	FILE *j = NULL;
	int opt;

	while ((opt = getopt(argc, argv, "d:l:b:t:R:q:j:a")) != -1) {
		switch (opt) {
		case 'a': appends = true; break;
		case 'd': dir = optarg; break;
		case 'l': label = optarg; break;
		case 'b': batch = strtoull(optarg, NULL, 0); break;
		case 't': total = strtoull(optarg, NULL, 0); break;
		case 'R': runs = (unsigned int)atoi(optarg); break;
		case 'q':
			nways = 1 + parse_depths(optarg, depth + 1);
			if (nways == 1)
				goto usage;
			break;
		case 'j': json = optarg; break;
		default: goto usage;
		}
	}
	if (optind < argc || !batch || batch % PIECE || batch > (64u << 20) ||
	    total < batch || !runs || runs > MAX_RUNS)
		goto usage;
	total -= total % batch;
	if (!label)
		label = dir;
	for (w = 1; w < nways; w++)
		maxdep = depth[w] > maxdep ? depth[w] : maxdep;
	bs.nr_iov = (unsigned int)(batch / PIECE);
	for (i = 0; i <= maxdep; i++) {
		unsigned int k;

		if (posix_memalign((void **)&bs.mem[i], PIECE, batch))
			return 1;
		memset(bs.mem[i], 0x5a, batch);
		bs.iov[i] = calloc(bs.nr_iov, sizeof(struct iovec));
		if (!bs.iov[i])
			return 1;
		for (k = 0; k < bs.nr_iov; k++) {
			bs.iov[i][k].iov_base = bs.mem[i] + (size_t)k * PIECE;
			bs.iov[i][k].iov_len = PIECE;
		}
	}
	if (json && !(j = fopen(json, "a"))) {
		perror(json);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/pmcring-write-bench.%d", dir,
		 (int)getpid());
	printf("writes of %llu MiB in %zu KiB batches (%u x 4 KiB iovecs) "
	       "into %s (%s), median of %u; O_DIRECT %s\n",
	       (unsigned long long)(total >> 20), batch >> 10, bs.nr_iov, dir,
	       label, runs, appends ? "appending" :
	       "into a file of its final size (fallocate())");
	printf("%-13s %-9s %-11s %9s %8s %9s %9s\n", "fs", "io", "way",
	       "MB/s", "CPU s", "/pwritev", "CPU /pw");
	for (d = 0; d < 2; d++) {
		double t[MAX_WAYS][MAX_RUNS], c[MAX_WAYS][MAX_RUNS];
		double med[MAX_WAYS], cmed[MAX_WAYS];
		const char *io = d ? "O_DIRECT" : "buffered";

		for (r = 0; r < runs; r++) {
			for (w = 0; w < nways; w++) {
				t[w][r] = run_once(path, depth[w], d, &bs,
						   batch, total, &c[w][r]);
				if (t[w][r] < 0)
					break;
			}
			if (w < nways)
				break;
		}
		if (r < runs) {
			printf("%-13s %-9s not measured: %s\n", label, io,
			       strerror((int)-t[w][r]));
			continue;
		}
		for (w = 0; w < nways; w++) {
			qsort(t[w], runs, sizeof(double), cmp_double);
			qsort(c[w], runs, sizeof(double), cmp_double);
			med[w] = t[w][runs / 2];
			cmed[w] = c[w][runs / 2];
		}
		for (w = 0; w < nways; w++) {
			/* depth 1 keeps its old name: "io_uring" */
			if (!w)
				snprintf(way, sizeof(way), "pwritev");
			else if (depth[w] == 1)
				snprintf(way, sizeof(way), "io_uring");
			else
				snprintf(way, sizeof(way), "io_uring-q%u",
					 depth[w]);
			printf("%-13s %-9s %-11s %9.1f %8.3f %8.2fx %8.2fx\n",
			       label, io, way, total / med[w] / 1e6, cmed[w],
			       med[0] / med[w], cmed[w] / cmed[0]);
			if (j)
				fprintf(j, "{\"fs\": \"%s\", \"io\": \"%s\", "
					"\"way\": \"%s\", \"depth\": %u, "
					"\"batch\": %zu, "
					"\"bytes\": %llu, \"runs\": %u, "
					"\"mb_per_s\": %.1f, \"cpu_s\": %.4f, "
					"\"of_pwritev\": %.4f, "
					"\"cpu_of_pwritev\": %.4f, "
					"\"fallocated\": %s}\n", label,
					d ? "direct" : "buffered", way,
					depth[w], batch,
					(unsigned long long)total, runs,
					total / med[w] / 1e6, cmed[w],
					med[0] / med[w], cmed[w] / cmed[0],
					d && !appends ? "true" : "false");
		}
		fflush(stdout);
	}
	if (j)
		fclose(j);
	return 0;
usage:
	fprintf(stderr, "usage: pmcring-write-bench [-d DIR] [-l LABEL] "
		"[-b BATCH (multiple of 4096)] [-t TOTAL] [-R RUNS] "
		"[-q DEPTHS (io_uring writes in flight, e.g. 1,2,4,8)] "
		"[-a (O_DIRECT: appends, no fallocate())] "
		"[-j JSON]\n");
	return 2;
}
