// SPDX-License-Identifier: GPL-2.0
/*
 * Description: VM side of `make bench` (selftests/bench/run.sh drives it
 * through guest.sh).  One static multi-call program; each subcommand prints
 * one JSON object on stdout and a short table on stderr.
 *
 *   pmcbench b1 [-p PAGES] [-n MAXCOUNT] [-r REPS] [-s SIZES] [-x SIDE]
 *	B1 producer cost: PMCRING_IOC_GENERATE (task context) against the same
 *	loop over the kernel's tracing ring buffer (pmcring_ftrace_bench.ko,
 *	skipped if /dev/pmcring_ftrace_bench is missing), one CPU and all
 *	CPUs, runs interleaved, median of REPS.  Buffers hold every record of
 *	a run on both sides, so no run measures a full buffer.  -x pmcring or
 *	-x ftrace runs one side only (for profiling).
 *   pmcbench lat [-n COUNT] [-b IRQ_BATCH] [-s SIZE] [-o FILE] [-w MS]
 *		 [-p PAGES] [-F]
 *	B4 merge latency (and the B2 rate sweep): hard-IRQ GENERATE on every
 *	CPU at IRQ_BATCH records per 20 us tick, drained like `pmcring record`
 *	(libpmcring merge, max_delay 10 ms, ppoll() with the timeout of
 *	pmcring_merge_timeout_ns(), or a fixed MS with -w, default ring
 *	settings) with writev() to FILE; the delay of a record is
 *	CLOCK_MONOTONIC after its write completed minus its timestamp.  p50/p99/max, rates, drops.
 *	-F: fill the rings first (task context) and time the consumer alone.
 *   pmcbench clock [-n N]
 *	What one PMCRING_IOC_CLOCK costs the merge: N calls 200 us apart on an
 *	idle machine, then N more while every CPU generates in task context;
 *	p50/p99/max in us.
 *   pmcbench count FILE	GENERATED and total records of a pmclog file
 *   pmcbench raw FILE BYTES	sequential write of BYTES in 1 MiB writes
 *   pmcbench time CMD...	run CMD, report its wall time
 *   pmcbench csw pipe N | fork N | nop
 *	B3 workloads: N pipe ping-pong round trips between two processes; N
 *	fork + exec(self, "csw nop") + wait.  They time themselves.
 *
 * NEEDS_LIBPMCRING
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include "libpmcring.h"
#include "../../kmod/bench/pmcring_ftrace_bench.h"
#include "bench_main.h"

#define B1_MAX_SIZES	8
#define B1_MAX_REPS	15
/* Ring bytes a record of @size takes in the tracing ring buffer (worst). */
#define FTRACE_SPACE(size)	((uint64_t)(size) + 8)

static FILE *pb_out;		/* JSON */
static FILE *pb_log;		/* tables */

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, unsigned int n)
{
	qsort(v, n, sizeof(*v), cmp_dbl);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static int parse_sizes(const char *arg, uint32_t *sizes, unsigned int *n)
{
	char *end;

	*n = 0;
	while (*arg && *n < B1_MAX_SIZES) {
		unsigned long v = strtoul(arg, &end, 0);

		if (end == arg || v < 16 || v > PMCRING_RECORD_MAX || v % 8)
			return -EINVAL;
		sizes[(*n)++] = (uint32_t)v;
		arg = *end == ',' ? end + 1 : end;
	}
	return *n ? 0 : -EINVAL;
}

/* ---- B1: producer cost -------------------------------------------------- */

struct b1 {
	struct pmcring	*s;
	int		fb;		/* /dev/pmcring_ftrace_bench or -1 */
	unsigned int	ncpu;
	uint64_t	ring_bytes;	/* data bytes of one pmcring ring */
};

/* Give every ring's space back: data_tail = data_head. */
static int b1_pmcring_reset(struct b1 *b, uint64_t *lost)
{
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	unsigned int cpu;

	*lost = 0;
	for (cpu = 0; cpu < pmcring_nr_cpus(b->s); cpu++) {
		struct pmcring_mmap_page *ctl;
		size_t size;
		void *base;
		int err = pmcring_cpu_buffer(b->s, cpu, &base, &size);

		if (err)
			return err;
		ctl = base;
		__atomic_store_n(&ctl->data_tail,
				 __atomic_load_n(&ctl->data_head,
						 __ATOMIC_ACQUIRE),
				 __ATOMIC_RELEASE);
		pmcring_cpu_buf_stats(pmcring_cpu_buf(b->s, cpu), &st);
		*lost += st.lost;
	}
	return 0;
}

/* One timed run; ns of wall time of the ioctl, 0 on error. */
static uint64_t b1_run(struct b1 *b, bool ftrace, uint32_t size,
		       uint64_t count, uint64_t cpus, uint64_t *bad)
{
	uint64_t t0, t1, lost0, lost1;

	*bad = 0;
	if (ftrace) {
		struct pfb_run r = { .count = count, .size = size,
				     .cpus = cpus };

		if (ioctl(b->fb, PFB_IOC_RESET))
			return 0;
		t0 = now_ns();
		if (ioctl(b->fb, PFB_IOC_RUN, &r))
			return 0;
		t1 = now_ns();
		*bad = r.failed + (r.entries != r.written);
	} else {
		uint64_t mask = cpus;
		struct pmcring_generate g = {
			.count = count, .size = size,
			.flags = PMCRING_GEN_F_TASK,
			.cpus = cpus ? (uint64_t)(uintptr_t)&mask : 0,
			.cpus_size = cpus ? 8 : 0,
		};

		if (b1_pmcring_reset(b, &lost0))
			return 0;
		t0 = now_ns();
		if (pmcring_generate(b->s, &g))
			return 0;
		t1 = now_ns();
		if (b1_pmcring_reset(b, &lost1))
			return 0;
		*bad = lost1 - lost0;
	}
	return t1 - t0;
}

/*
 * What one clock read costs in the loop of the runs (PFB_IOC_CLOCK), minus
 * the loop alone: min over reps of ns per read.  0 if unavailable.
 */
static double b1_clock_ns(int fb, uint32_t clock, uint64_t count,
			  unsigned int reps)
{
	double best = 0;
	unsigned int r;

	for (r = 0; r < reps; r++) {
		struct pfb_clock c = { .count = count, .clock = clock };
		double ns;

		if (ioctl(fb, PFB_IOC_CLOCK, &c))
			return 0;
		ns = (double)c.loop_ns / (double)count;
		if (!r || ns < best)
			best = ns;
	}
	return best;
}

/*
 * Split each side's cost into its timestamp and the rest (the ring): the
 * clocks read on CPU 0 in the same loop shape, pmcring's
 * ktime_get_mono_fast_ns() and ftrace's trace_clock_local().
 */
static void b1_clocks(int fb, uint64_t count, unsigned int reps,
		      double *mono, double *local)
{
	cpu_set_t one, old;
	double none;

	*mono = *local = 0;
	if (fb < 0 || sched_getaffinity(0, sizeof(old), &old))
		return;
	CPU_ZERO(&one);
	CPU_SET(0, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return;
	/* enough reads that the difference stands out of the noise */
	if (count < 50000)
		count = 50000;
	if (reps < 3)
		reps = 3;
	none = b1_clock_ns(fb, PFB_CLOCK_NONE, count, reps);
	*mono = b1_clock_ns(fb, PFB_CLOCK_MONO, count, reps) - none;
	*local = b1_clock_ns(fb, PFB_CLOCK_LOCAL, count, reps) - none;
	if (*mono < 0 || *local < 0 || none <= 0)
		*mono = *local = 0;
	sched_setaffinity(0, sizeof(old), &old);
}

static int cmd_b1(int argc, char **argv)
{
	uint32_t sizes[B1_MAX_SIZES] = { 32, 64, 256 }, pages = 4096;
	unsigned int nsizes = 3, reps = 5, i, r, m, impl;
	uint64_t maxcount = 200000, count[B1_MAX_SIZES], fbytes = 0;
	double res[B1_MAX_SIZES][2][2][B1_MAX_REPS];	/* size, mode, impl */
	double med[B1_MAX_SIZES][2][2], mn[B1_MAX_SIZES][2][2];
	double c_mono, c_local, rp, rf;
	struct pmcring_opts so = { .sz = sizeof(so) };
	struct b1 b = { .fb = -1 };
	int c, only = -1;	/* -x: 0 pmcring only, 1 ftrace only */

	while ((c = getopt(argc, argv, "p:n:r:s:x:")) != -1) {
		switch (c) {
		case 'x':
			only = !strcmp(optarg, "ftrace");
			break;
		case 'p':
			pages = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			maxcount = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			reps = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			if (parse_sizes(optarg, sizes, &nsizes))
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (!reps || reps > B1_MAX_REPS || !maxcount)
		return 2;
	so.data_pages = pages;
	b.s = pmcring_new(&so);
	if (!b.s) {
		fprintf(stderr, "b1: pmcring_new: %s\n", strerror(errno));
		return 1;
	}
	b.ncpu = (unsigned int)sysconf(_SC_NPROCESSORS_ONLN);
	b.ring_bytes = (uint64_t)pages * (uint64_t)sysconf(_SC_PAGESIZE);
	for (i = 0; i < nsizes; i++) {
		/* 90% of the ring: never a full ring */
		count[i] = b.ring_bytes / PMCRING_RING_SPACE(sizes[i]) * 9 / 10;
		if (count[i] > maxcount)
			count[i] = maxcount;
		if (!count[i])
			count[i] = 1;
		if (FTRACE_SPACE(sizes[i]) * count[i] > fbytes)
			fbytes = FTRACE_SPACE(sizes[i]) * count[i];
	}
	b.fb = open(PFB_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (b.fb >= 0) {
		/* page headers and slack: a quarter more */
		struct pfb_setup su = { .bytes = fbytes + fbytes / 4 + 65536 };

		if (ioctl(b.fb, PFB_IOC_SETUP, &su)) {
			fprintf(stderr, "b1: ftrace bench setup: %s\n",
				strerror(errno));
			close(b.fb);
			b.fb = -1;
		}
	} else {
		fprintf(stderr, "b1: %s missing: no ftrace reference\n",
			PFB_DEV_PATH);
	}

	/* interleaved: rep, size, mode, and the two sides in turns */
	for (r = 0; r < reps; r++)
		for (i = 0; i < nsizes; i++)
			for (m = 0; m < 2; m++)
				for (impl = 0; impl < 2; impl++) {
					bool ft = (impl + r) % 2;
					uint64_t bad, ns;

					if ((ft && b.fb < 0) ||
					    (only >= 0 && only != ft)) {
						res[i][m][ft][r] = 0;
						continue;
					}
					ns = b1_run(&b, ft, sizes[i], count[i],
						    m ? 0 : 1, &bad);
					if (!ns || bad) {
						fprintf(stderr, "b1: %s size %u: %s\n",
							ft ? "ftrace" : "pmcring",
							sizes[i], !ns ?
							strerror(errno) :
							"records dropped");
						return 1;
					}
					res[i][m][ft][r] = (double)ns /
							   (double)count[i];
				}

	/* not in the one-side runs of the profile: they would show in it */
	c_mono = c_local = 0;
	if (only < 0)
		b1_clocks(b.fb, maxcount, reps, &c_mono, &c_local);
	fprintf(pb_log, "B1 producer cost, ns/record (per CPU), median of %u "
		"runs, %u CPUs\n", reps, b.ncpu);
	fprintf(pb_log, "%6s %8s %10s %10s %10s %8s\n", "size", "cpus",
		"records", "pmcring", "ftrace", "ratio");
	fprintf(pb_out, "{\"reps\": %u, \"cpus\": %u, \"ring_pages\": %u, "
		"\"ftrace\": %s, \"clock_mono_ns\": %.2f, "
		"\"clock_local_ns\": %.2f}\n", reps, b.ncpu, pages,
		b.fb >= 0 ? "true" : "false", c_mono, c_local);
	for (i = 0; i < nsizes; i++)
		for (m = 0; m < 2; m++) {
			for (impl = 0; impl < 2; impl++) {
				/* median() sorts: the minimum is first */
				med[i][m][impl] = median(res[i][m][impl], reps);
				mn[i][m][impl] = res[i][m][impl][0];
			}
			fprintf(pb_log, "%6u %8s %10" PRIu64 " %10.1f %10.1f "
				"%8.3f\n", sizes[i], m ? "all" : "1",
				count[i], med[i][m][0], med[i][m][1],
				med[i][m][1] > 0 ? med[i][m][0] / med[i][m][1] : 0);
			fprintf(pb_out, "{\"size\": %u, \"cpus\": \"%s\", "
				"\"records_per_cpu\": %" PRIu64 ", "
				"\"pmcring_ns\": %.2f, \"ftrace_ns\": %.2f, "
				"\"ratio\": %.4f, \"pmcring_min_ns\": %.2f, "
				"\"ftrace_min_ns\": %.2f, \"ratio_min\": %.4f}\n",
				sizes[i], m ? "all" : "1",
				count[i], med[i][m][0], med[i][m][1],
				med[i][m][1] > 0 ? med[i][m][0] / med[i][m][1] : 0,
				mn[i][m][0], mn[i][m][1],
				mn[i][m][1] > 0 ? mn[i][m][0] / mn[i][m][1] : 0);
			/* the same without each side's clock reads */
			rp = med[i][m][0] - c_mono;
			rf = med[i][m][1] - c_local;
			if (c_mono > 0 && rp > 0 && rf > 0)
				fprintf(pb_out, "{\"noclock_size\": %u, "
					"\"cpus\": \"%s\", \"pmcring_ns\": "
					"%.2f, \"ftrace_ns\": %.2f, "
					"\"ratio\": %.4f}\n", sizes[i],
					m ? "all" : "1", rp, rf, rp / rf);
		}
	if (c_mono > 0)
		fprintf(pb_log, "clock read, ns (CPU 0, loop subtracted): "
			"pmcring ktime_get_mono_fast_ns %.1f, ftrace "
			"trace_clock_local %.1f\n", c_mono, c_local);
	if (b.fb >= 0)
		close(b.fb);
	pmcring_free(b.s);
	return 0;
}

/* ---- B4: merge latency, B2: rate sweep ---------------------------------- */

struct gen_thread {
	struct pmcring		*s;
	struct pmcring_generate	g;
	int			err;
	int			done;
};

static void *gen_main(void *arg)
{
	struct gen_thread *gt = arg;

	gt->err = pmcring_generate(gt->s, &gt->g);
	__atomic_store_n(&gt->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

#define LAT_IOV		64

struct lat {
	struct pmcring		*s;
	struct pmcring_merge	*m;
	int			fd;
	uint64_t		*delay;		/* ns, one per GENERATED record */
	uint64_t		*hand;		/* ns, commit -> merge hand-out */
	uint64_t		n, hn, cap;
	uint64_t		*late;		/* ns a timed-out poll overslept */
	uint64_t		ln, lcap;
	uint64_t		records, bytes;
	uint64_t		first_ts, last_ts;
	uint64_t		look;		/* the merge last returned 0 */
};

/* Write a batch, stamp its records, give their space back. */
static int lat_flush(struct lat *l, struct iovec *iov,
		     struct pmcring_record *rec, unsigned int n)
{
	uint64_t t, end[256] = { 0 };
	unsigned int i;
	ssize_t w;

	if (!n)
		return 0;
	w = writev(l->fd, iov, (int)n);
	if (w < 0)
		return -errno;
	t = now_ns();
	for (i = 0; i < n; i++) {
		l->bytes += rec[i].len;
		l->records++;
		if (rec[i].cpu < 256 && rec[i].end > end[rec[i].cpu])
			end[rec[i].cpu] = rec[i].end;
		if (rec[i].type != PMCRING_TYPE_GENERATED)
			continue;
		if (!l->first_ts)
			l->first_ts = rec[i].ts;
		l->last_ts = rec[i].ts;
		if (l->n < l->cap)
			l->delay[l->n++] = t > rec[i].ts ? t - rec[i].ts : 0;
	}
	for (i = 0; i < 256 && i < pmcring_nr_cpus(l->s); i++)
		if (end[i])
			pmcring_cpu_buf_consume(pmcring_cpu_buf(l->s, i), end[i]);
	return 0;
}

/* Hand out and write everything ready now; *n = records handed out. */
static int lat_drain(struct lat *l, uint64_t *n)
{
	struct pmcring_record rec[LAT_IOV];
	struct iovec iov[LAT_IOV];
	unsigned int k = 0;
	int ret;

	*n = 0;
	for (;;) {
		ret = pmcring_merge_next(l->m, &rec[k]);
		if (ret < 0)
			return ret;
		if (ret == 0) {
			l->look = now_ns();
			break;
		}
		if (rec[k].type == PMCRING_TYPE_GENERATED && l->hn < l->cap) {
			uint64_t t = now_ns();

			l->hand[l->hn++] = t > rec[k].ts ? t - rec[k].ts : 0;
		}
		iov[k].iov_base = (void *)rec[k].data;
		iov[k].iov_len = rec[k].len;
		k++;
		(*n)++;
		if (k == LAT_IOV) {
			ret = lat_flush(l, iov, rec, k);
			if (ret)
				return ret;
			k = 0;
		}
	}
	return lat_flush(l, iov, rec, k);
}

static int cmd_lat(int argc, char **argv)
{
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct pmcring_opts so = { .sz = sizeof(so) };
	const char *path = "/tmp/pmcbench-lat.pmclog";
	struct gen_thread gt = { 0 };
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	uint64_t count = 20000, lost = 0, t0, t1, n, idle = 0;
	uint32_t batch = 1, size = 32, wait_ms = 0;
	unsigned int cpu, ncpu;
	struct lat l = { 0 };
	bool prefill = false;
	pthread_t th;
	int c, ret = 0;

	while ((c = getopt(argc, argv, "n:b:s:o:w:p:F")) != -1) {
		switch (c) {
		case 'F':
			prefill = true;
			break;
		case 'p':
			so.data_pages = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'w':
			wait_ms = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'n':
			count = strtoull(optarg, NULL, 0);
			break;
		case 'b':
			batch = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 's':
			size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'o':
			path = optarg;
			break;
		default:
			return 2;
		}
	}
	l.s = pmcring_new(&so);		/* the defaults of pmcring record */
	if (!l.s) {
		fprintf(stderr, "lat: pmcring_new: %s\n", strerror(errno));
		return 1;
	}
	/* 10 ms by default, as pmcring record (WAIT_MS) */
	mo.max_delay_ns = (uint64_t)(wait_ms ? wait_ms : 10) * 1000000;
	l.m = pmcring_merge_new_session(l.s, &mo);
	l.fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	ncpu = pmcring_nr_cpus(l.s);
	l.cap = count * ncpu;
	l.delay = calloc(l.cap ? l.cap : 1, sizeof(*l.delay));
	l.hand = calloc(l.cap ? l.cap : 1, sizeof(*l.hand));
	l.lcap = 1 << 16;
	l.late = calloc(l.lcap, sizeof(*l.late));
	if (!l.m || l.fd < 0 || !l.delay || !l.hand || !l.late) {
		fprintf(stderr, "lat: setup: %s\n", strerror(errno));
		return 1;
	}
	gt.s = l.s;
	gt.g.count = count;
	gt.g.size = size;
	gt.g.flags = PMCRING_GEN_F_HARDIRQ;
	gt.g.irq_batch = batch;
	pmcring_enable(l.s);
	if (prefill) {
		/* consumer alone: the rings are full before it starts */
		gt.g.flags = PMCRING_GEN_F_TASK;
		gen_main(&gt);
	}
	t0 = now_ns();
	if (!prefill && pthread_create(&th, NULL, gen_main, &gt))
		return 1;
	for (;;) {
		struct pollfd p = { .fd = pmcring_fd(l.s), .events = POLLIN };

		ret = lat_drain(&l, &n);
		if (ret)
			break;
		if (__atomic_load_n(&gt.done, __ATOMIC_ACQUIRE)) {
			/* two empty rounds after the generator returned */
			idle = n ? 0 : idle + 1;
			if (idle >= 2)
				break;
		}
		{
			/* -w: a fixed period; else as pmcring record does */
			uint64_t tp = now_ns(), want = wait_ms ?
				wait_ms * 1000000ull :
				pmcring_merge_timeout_ns(l.m, l.look, tp);
			struct timespec wt = { (time_t)(want / 1000000000),
					       (long)(want % 1000000000) };

			if (!ppoll(&p, 1, &wt, NULL) && l.ln < l.lcap) {
				tp = now_ns() - tp;
				l.late[l.ln++] = tp > want ? tp - want : 0;
			}
		}
	}
	t1 = now_ns();
	if (!prefill)
		pthread_join(th, NULL);
	pmcring_disable(l.s);
	for (cpu = 0; cpu < ncpu; cpu++) {
		pmcring_cpu_buf_stats(pmcring_cpu_buf(l.s, cpu), &st);
		lost += st.lost;
	}
	if (ret || gt.err) {
		fprintf(stderr, "lat: %s\n", strerror(-(ret ? ret : gt.err)));
		return 1;
	}
	qsort(l.delay, l.n, sizeof(*l.delay), cmp_u64);
	qsort(l.hand, l.hn, sizeof(*l.hand), cmp_u64);
	qsort(l.late, l.ln, sizeof(*l.late), cmp_u64);
	{
		double secs = (double)(t1 - t0) / 1e9;
		double gsecs = l.last_ts > l.first_ts ?
			(double)(l.last_ts - l.first_ts) / 1e9 : secs;
		uint64_t p50 = l.n ? l.delay[l.n / 2] : 0;
		uint64_t p99 = l.n ? l.delay[l.n * 99 / 100] : 0;
		uint64_t mx = l.n ? l.delay[l.n - 1] : 0;
		uint64_t h99 = l.hn ? l.hand[l.hn * 99 / 100] : 0;
		uint64_t late99 = l.ln ? l.late[l.ln * 99 / 100] : 0;
		uint64_t latemx = l.ln ? l.late[l.ln - 1] : 0;
		/* offered: what the generator wrote or tried to, per second */
		double offered = (double)(l.n + lost) / gsecs;

		fprintf(pb_log, "B4 merge latency: irq_batch %u, %" PRIu64
			" records written, %" PRIu64 " dropped, offered %.0f "
			"rec/s, drained %.0f rec/s, %.2f MB/s; delay p50 %.3f ms, "
			"p99 %.3f ms, max %.3f ms\n", batch, l.n, lost, offered,
			(double)l.records / secs, (double)l.bytes / secs / 1e6,
			p50 / 1e6, p99 / 1e6, mx / 1e6);
		fprintf(pb_out, "{\"prefill\": %d, \"irq_batch\": %u, "
			"\"wait_ms\": %u, "
			"\"size\": %u, \"cpus\": %u, "
			"\"records\": %" PRIu64 ", \"dropped\": %" PRIu64 ", "
			"\"seconds\": %.4f, \"offered_rps\": %.0f, "
			"\"drained_rps\": %.0f, \"mb_s\": %.3f, "
			"\"p50_ms\": %.4f, \"p99_ms\": %.4f, \"max_ms\": %.4f, "
			"\"handout_p99_ms\": %.4f, \"polls_timed_out\": %" PRIu64
			", \"poll_late_p99_ms\": %.4f, \"poll_late_max_ms\": %.4f}\n",
			prefill, batch, wait_ms, size, ncpu, l.n, lost, secs,
			offered,
			(double)l.records / secs, (double)l.bytes / secs / 1e6,
			p50 / 1e6, p99 / 1e6, mx / 1e6, h99 / 1e6, l.ln,
			late99 / 1e6, latemx / 1e6);
		fprintf(pb_log, "  commit -> hand-out p99 %.3f ms; %" PRIu64
			" polls timed out, overslept p99 %.3f ms, max %.3f ms\n",
			h99 / 1e6, l.ln, late99 / 1e6, latemx / 1e6);
	}
	close(l.fd);
	free(l.delay);
	free(l.hand);
	free(l.late);
	pmcring_merge_free(l.m);
	pmcring_free(l.s);
	return 0;
}

/* ---- helpers for B2 / B3 ------------------------------------------------ */

/* p50/p99/max of n PMCRING_IOC_CLOCK calls, us; 0 or -errno */
static int clock_lat(struct pmcring *s, unsigned int n, double q[3])
{
	const struct timespec gap = { 0, 200000 };
	uint64_t *d = calloc(n, sizeof(*d)), T, t0;
	unsigned int i;

	if (!d)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		t0 = now_ns();
		if (pmcring_clock(s, &T)) {
			free(d);
			return -errno;
		}
		d[i] = now_ns() - t0;
		nanosleep(&gap, NULL);
	}
	qsort(d, n, sizeof(*d), cmp_u64);
	q[0] = (double)d[n / 2] / 1e3;
	q[1] = (double)d[(uint64_t)n * 99 / 100] / 1e3;
	q[2] = (double)d[n - 1] / 1e3;
	free(d);
	return 0;
}

static void clock_stop(int sig)
{
	(void)sig;	/* only interrupts the generator's ioctl */
}

static int cmd_clock(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = clock_stop };
	struct pmcring_opts so = { .sz = sizeof(so), .data_pages = 64 };
	struct gen_thread gt = { 0 };
	unsigned int n = 500;
	double idle[3], busy[3];
	pthread_t th;
	int c, err;

	while ((c = getopt(argc, argv, "n:")) != -1) {
		if (c != 'n')
			return 2;
		n = (unsigned int)strtoul(optarg, NULL, 0);
	}
	if (!n)
		return 2;
	gt.s = pmcring_new(&so);
	if (!gt.s) {
		fprintf(stderr, "clock: pmcring_new: %s\n", strerror(errno));
		return 1;
	}
	err = clock_lat(gt.s, n, idle);
	if (!err) {
		/* every CPU generating (into full rings) until the signal */
		sigaction(SIGUSR1, &sa, NULL);
		gt.g = (struct pmcring_generate){ .count = 4000000,
			.size = 64, .flags = PMCRING_GEN_F_TASK };
		if (pthread_create(&th, NULL, gen_main, &gt)) {
			err = -EAGAIN;
		} else {
			err = clock_lat(gt.s, n, busy);
			pthread_kill(th, SIGUSR1);
			pthread_join(th, NULL);
		}
	}
	pmcring_free(gt.s);
	if (err) {
		fprintf(stderr, "clock: %s\n", strerror(-err));
		return 1;
	}
	fprintf(pb_log, "PMCRING_IOC_CLOCK, us: idle p50 %.1f p99 %.1f max %.1f; "
		"generating p50 %.1f p99 %.1f max %.1f\n", idle[0], idle[1],
		idle[2], busy[0], busy[1], busy[2]);
	fprintf(pb_out, "{\"calls\": %u, \"idle_p50_us\": %.2f, "
		"\"idle_p99_us\": %.2f, \"idle_max_us\": %.2f, "
		"\"busy_p50_us\": %.2f, \"busy_p99_us\": %.2f, "
		"\"busy_max_us\": %.2f}\n", n, idle[0], idle[1], idle[2],
		busy[0], busy[1], busy[2]);
	return 0;
}

static int cmd_count(int argc, char **argv)
{
	uint64_t gen = 0, all = 0, drop = 0;
	struct pmcring_log_ev ev;
	struct pmcring_log *l;
	struct stat sb;
	int fd;

	if (argc < 2)
		return 2;
	fd = open(argv[1], O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &sb)) {
		perror(argv[1]);
		return 1;
	}
	l = pmcring_log_open(fd);
	if (!l)
		return 1;
	while (pmcring_log_read(l, &ev) == 0) {
		all++;
		gen += ev.pl_type == PMCRING_TYPE_GENERATED;
		drop += ev.pl_type == PMCRING_TYPE_DROPNOTIFY;
	}
	fprintf(pb_out, "{\"records\": %" PRIu64 ", \"generated\": %" PRIu64
		", \"dropnotify\": %" PRIu64 ", \"bytes\": %lld, \"state\": "
		"%d}\n", all + (ev.pl_state == PMCRING_LOG_EOF), gen, drop,
		(long long)sb.st_size, (int)ev.pl_state);
	pmcring_log_close(l);
	close(fd);
	return ev.pl_state == PMCRING_LOG_ERROR;
}

static int cmd_raw(int argc, char **argv)
{
	size_t chunk = 1 << 20;
	uint64_t bytes, done = 0, t0, t1;
	char *buf;
	int fd;

	if (argc < 3)
		return 2;
	bytes = strtoull(argv[2], NULL, 0);
	buf = malloc(chunk);
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!buf || fd < 0)
		return 1;
	memset(buf, 0xee, chunk);
	t0 = now_ns();
	while (done < bytes) {
		size_t n = bytes - done < chunk ? bytes - done : chunk;
		ssize_t w = write(fd, buf, n);

		if (w <= 0)
			return 1;
		done += (uint64_t)w;
	}
	close(fd);
	t1 = now_ns();
	fprintf(pb_out, "{\"bytes\": %" PRIu64 ", \"seconds\": %.6f, "
		"\"mb_s\": %.3f}\n", done, (t1 - t0) / 1e9,
		t1 > t0 ? done / ((t1 - t0) / 1e9) / 1e6 : 0);
	free(buf);
	return 0;
}

static int cmd_time(int argc, char **argv)
{
	uint64_t t0, t1;
	int status = 0;
	pid_t pid;

	if (argc < 2)
		return 2;
	t0 = now_ns();
	pid = fork();
	if (pid == 0) {
		dup2(2, 1);	/* keep our stdout for the JSON */
		execvp(argv[1], argv + 1);
		_exit(127);
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	t1 = now_ns();
	fprintf(pb_out, "{\"seconds\": %.6f, \"status\": %d}\n",
		(t1 - t0) / 1e9, WIFEXITED(status) ? WEXITSTATUS(status) : 128);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

static const char *self_exe = "/proc/self/exe";

/*
 * Both workloads run on CPU 0 (children inherit it): every switch is a
 * local one, not a cross-CPU wake-up of an idle vCPU (an IPI, slow and
 * erratic under TCG); the recorder is free to use the other CPUs.
 */
static void csw_pin(void)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

static int csw_pipe(uint64_t n)
{
	int a[2], b[2];
	uint64_t i;
	char c = 0;
	pid_t pid;

	if (pipe(a) || pipe(b))
		return 1;
	pid = fork();
	if (pid < 0)
		return 1;
	if (pid == 0) {
		for (i = 0; i < n; i++)
			if (read(a[0], &c, 1) != 1 || write(b[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (i = 0; i < n; i++)
		if (write(a[1], &c, 1) != 1 || read(b[0], &c, 1) != 1)
			return 1;
	waitpid(pid, NULL, 0);
	return 0;
}

static int csw_fork(uint64_t n)
{
	char *args[] = { "pmcbench", "csw", "nop", NULL };
	uint64_t i;
	int status;

	for (i = 0; i < n; i++) {
		pid_t pid = fork();

		if (pid < 0)
			return 1;
		if (pid == 0) {
			execv(self_exe, args);
			_exit(127);
		}
		if (waitpid(pid, &status, 0) != pid || status)
			return 1;
	}
	return 0;
}

static int cmd_csw(int argc, char **argv)
{
	uint64_t n, t0, t1;
	int ret;

	if (argc >= 2 && !strcmp(argv[1], "nop"))
		return 0;
	if (argc < 3)
		return 2;
	n = strtoull(argv[2], NULL, 0);
	csw_pin();
	t0 = now_ns();
	if (!strcmp(argv[1], "pipe"))
		ret = csw_pipe(n);
	else if (!strcmp(argv[1], "fork"))
		ret = csw_fork(n);
	else
		return 2;
	t1 = now_ns();
	fprintf(pb_out, "{\"workload\": \"%s\", \"n\": %" PRIu64 ", "
		"\"seconds\": %.6f}\n", argv[1], n, (t1 - t0) / 1e9);
	return ret;
}

int pmcbench_main(int argc, char **argv, FILE *out, FILE *log)
{
	static const struct bench_cmd cmds[] = {
		{ "b1", cmd_b1 }, { "lat", cmd_lat }, { "clock", cmd_clock },
		{ "count", cmd_count }, { "raw", cmd_raw }, { "time", cmd_time },
		{ "csw", cmd_csw }, { NULL, NULL },
	};

	pb_out = out;
	pb_log = log;
	return bench_dispatch(cmds, argc, argv, log,
			      "usage: pmcbench b1|lat|clock|count|raw|time|csw ... "
			      "(see selftests/bench/pmcbench.c)");
}

#ifndef PMCBENCH_NO_MAIN
int main(int argc, char **argv)
{
	return bench_main(argc, argv, pmcbench_main);
}
#endif
