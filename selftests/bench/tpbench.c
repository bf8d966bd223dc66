// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the peers of pmcring behind one tracepoint (`make bench`, VM
 * side; selftests/bench/guest.sh drives it, selftests/bench_tp.c smoke-tests
 * it).  pmcring_ftrace_bench.ko fires pmcring_bench:pfb_event (PFB_IOC_TP);
 * this program attaches each peer in turn and checks it got every event.
 *
 *   tpbench b1 [-n MAXCOUNT] [-p PAGES] [-r REPS] [-s SIZES] [-x PEERS]
 *	B1 producer cost, ns per event on CPU 0, task and hard-IRQ context,
 *	median of REPS interleaved runs.  Every peer gets PAGES pages of ring
 *	per CPU and a count of events that fits in it (no full ring), nothing
 *	drains during the run:
 *	  off      the tracepoint with nothing attached (the loop alone)
 *	  empty    an empty probe (the tracepoint's floor)
 *	  minring  a minimal single-writer ring (the ring's floor)
 *	  pmcring  pmcring_emit_generated_probe() into a pmcring session's ring
 *	  perf     perf_event_open() of the tracepoint, its mmap ring (what
 *	           `perf record -e pmcring_bench:pfb_event` maps)
 *	  bpf      a BPF program on the tracepoint, bpf_ringbuf_reserve/submit
 *	  ftrace   tracefs events/pmcring_bench/pfb_event/enable
 *	Exits 1 if any peer recorded another number of events than fired.
 *   tpbench fire -n COUNT -s SIZE [-R RATE] [-x PROBE]
 *	B2's offered load: COUNT events per CPU on every CPU, at RATE per CPU
 *	per second from a hard-IRQ hrtimer (0: back to back).
 *   tpbench bpfrec -s SIZE -m BYTES -o FILE
 *	B2's BPF consumer: the BPF program with a BYTES ring, drained with
 *	ring_buffer__poll() into FILE until SIGINT/SIGTERM, then emptied.
 *
 * NEEDS_LIBPMCRING NEEDS_LIBBPF
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include "libpmcring.h"
#include "../../kmod/bench/pmcring_ftrace_bench.h"
#include "bench_main.h"
#ifndef TP_NO_BPF
#include <bpf/libbpf.h>
#include "tp_ringbuf.skel.h"
#endif

#define TP_MAX_SIZES	4
#define TP_MAX_REPS	15
#define TP_EVENT	"pmcring_bench/pfb_event"
/* Ring bytes an event of @size takes at most in any peer (perf's sample). */
#define TP_SPACE(size)	((uint64_t)(size) + 96)

enum tp_peer { P_OFF, P_EMPTY, P_MINRING, P_PMCRING, P_PERF, P_BPF,
	       P_FTRACE, P_NR };
static const char *const tp_names[P_NR] = {
	"off", "empty", "minring", "pmcring", "perf", "bpf", "ftrace",
};

static FILE *tp_out;		/* JSON */
static FILE *tp_log;		/* tables, errors */
static const char *tp_tracefs = "/sys/kernel/tracing";

static uint64_t tp_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int tp_cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* tracefs: mounted if it is not yet (the VM's init mounts none). */
static int tp_tracefs_init(void)
{
	char p[128];

	snprintf(p, sizeof(p), "%s/events", tp_tracefs);
	if (!access(p, F_OK))
		return 0;
	if (!access("/sys/kernel/debug/tracing/events", F_OK)) {
		tp_tracefs = "/sys/kernel/debug/tracing";
		return 0;
	}
	if (mount("tracefs", tp_tracefs, "tracefs", 0, NULL) && errno != EBUSY)
		return -errno;
	return access(p, F_OK) ? -errno : 0;
}

static int tp_write(const char *rel, const char *val)
{
	char p[256];
	ssize_t n;
	int fd;

	snprintf(p, sizeof(p), "%s/%s", tp_tracefs, rel);
	fd = open(p, O_WRONLY | O_TRUNC | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -EIO;
}

/* A number after "key" in a tracefs file, or -1. */
static long long tp_read_num(const char *rel, const char *key)
{
	char p[256], line[256];
	long long v = -1;
	FILE *f;

	snprintf(p, sizeof(p), "%s/%s", tp_tracefs, rel);
	f = fopen(p, "re");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (!strncmp(line, key, strlen(key))) {
			v = strtoll(line + strlen(key), NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* ---- the peers ---------------------------------------------------------- */

struct tp {
	int		fb;		/* /dev/pmcring_ftrace_bench */
	uint32_t	pages;		/* ring pages per CPU, every peer */
	uint64_t	bytes;
	/* pmcring */
	struct pmcring	*s;
	/* perf */
	int		perf_fd;
	void		*perf_map;
	/* bpf */
#ifndef TP_NO_BPF
	struct tp_ringbuf *bpf;
	struct ring_buffer *bpf_rb;
#endif
	uint64_t	bpf_seen;
};

static int tp_fire(struct tp *t, uint32_t probe, uint32_t size, uint64_t count,
		   uint32_t flags, uint64_t cpus, uint32_t rate,
		   struct pfb_tp *r)
{
	memset(r, 0, sizeof(*r));
	r->count = count;
	r->size = size;
	r->flags = flags;
	r->cpus = cpus;
	r->probe = probe;
	r->rate = rate;
	r->ring_bytes = t->bytes;
	return ioctl(t->fb, PFB_IOC_TP, r) ? -errno : 0;
}

/* pmcring: the GENERATED records in every ring, consumed. */
static int tp_pmcring_drain(struct tp *t, uint64_t *n, uint64_t *lost)
{
	struct pmcring_cpu_stats st = { .sz = sizeof(st) };
	unsigned int cpu;

	*n = *lost = 0;
	for (cpu = 0; cpu < pmcring_nr_cpus(t->s); cpu++) {
		struct pmcring_cpu_buf *b = pmcring_cpu_buf(t->s, cpu);
		struct pmcring_record rec;

		if (!b)
			continue;
		while (pmcring_cpu_buf_peek(b, &rec) == 1) {
			*n += rec.type == PMCRING_TYPE_GENERATED;
			pmcring_cpu_buf_next(b);
		}
		pmcring_cpu_buf_consume(b, pmcring_cpu_buf_pos(b));
		if (!pmcring_cpu_stats(t->s, cpu, &st))
			*lost += st.lost;
	}
	return 0;
}

static int tp_pmcring_open(struct tp *t)
{
	struct pmcring_opts so = { .sz = sizeof(so) };
	uint64_t n, lost;

	so.data_pages = t->pages;
	so.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED);
	so.flags = PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_NO_SYNTH;
	t->s = pmcring_new(&so);
	if (!t->s)
		return -errno;
	if (pmcring_enable(t->s))
		return -errno;
	return tp_pmcring_drain(t, &n, &lost);
}

/* perf: one counting-free sampling event on CPU 0, every event a sample. */
static int tp_perf_open(struct tp *t)
{
	struct perf_event_attr a;
	long long id;
	char rel[128];

	snprintf(rel, sizeof(rel), "events/%s/id", TP_EVENT);
	id = tp_read_num(rel, "");
	if (id < 0)
		return -ENOENT;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_TRACEPOINT;
	a.config = (uint64_t)id;
	a.sample_period = 1;
	/* what perf record -a -e <tracepoint> asks for */
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW;
	a.disabled = 1;
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(t->bytes / 2);
	t->perf_fd = (int)syscall(SYS_perf_event_open, &a, -1, 0, -1,
				  PERF_FLAG_FD_CLOEXEC);
	if (t->perf_fd < 0)
		return -errno;
	t->perf_map = mmap(NULL, t->bytes + 4096, PROT_READ | PROT_WRITE,
			   MAP_SHARED, t->perf_fd, 0);
	if (t->perf_map == MAP_FAILED) {
		t->perf_map = NULL;
		return -errno;
	}
	return 0;
}

/* perf: samples and lost samples in the ring, consumed. */
static void tp_perf_drain(struct tp *t, uint64_t *n, uint64_t *lost)
{
	struct perf_event_mmap_page *pg = t->perf_map;
	const uint8_t *data = (const uint8_t *)t->perf_map + 4096;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;

	*n = *lost = 0;
	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % t->bytes, i;

		for (i = 0; i < sizeof(h); i++)
			((uint8_t *)&h)[i] = data[(off + i) % t->bytes];
		if (h.type == PERF_RECORD_SAMPLE) {
			(*n)++;
		} else if (h.type == PERF_RECORD_LOST) {
			uint64_t v = 0;

			for (i = 0; i < 8; i++)
				((uint8_t *)&v)[i] =
					data[(off + 16 + i) % t->bytes];
			*lost += v;
		}
		if (!h.size)
			break;
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
}

/* ftrace: enable the event with a buffer of the same size, cleared. */
static int tp_ftrace_on(struct tp *t, bool on)
{
	char kb[32];
	int err;

	if (!on)
		return tp_write("events/" TP_EVENT "/enable", "0");
	snprintf(kb, sizeof(kb), "%" PRIu64, t->bytes / 1024);
	err = tp_write("buffer_size_kb", kb);
	if (!err)
		err = tp_write("trace", "");
	if (!err)
		err = tp_write("tracing_on", "1");
	if (!err)
		err = tp_write("events/" TP_EVENT "/enable", "1");
	return err;
}

/* ftrace: entries and overruns of every CPU's buffer, then cleared. */
static void tp_ftrace_count(uint64_t *n, uint64_t *lost)
{
	long cpu, ncpu = sysconf(_SC_NPROCESSORS_CONF);
	char rel[64];

	*n = *lost = 0;
	for (cpu = 0; cpu < ncpu; cpu++) {
		long long e, o;

		snprintf(rel, sizeof(rel), "per_cpu/cpu%ld/stats", cpu);
		e = tp_read_num(rel, "entries: ");
		o = tp_read_num(rel, "overrun: ");
		if (e > 0)
			*n += (uint64_t)e;
		if (o > 0)
			*lost += (uint64_t)o;
	}
	tp_write("trace", "");
}

#ifndef TP_NO_BPF
static int tp_bpf_count(void *ctx, void *data, size_t len)
{
	uint64_t *seen = ctx;

	(void)data;
	(void)len;
	(*seen)++;
	return 0;
}

static void tp_bpf_close(struct tp *t)
{
	ring_buffer__free(t->bpf_rb);
	t->bpf_rb = NULL;
	tp_ringbuf__destroy(t->bpf);
	t->bpf = NULL;
}

/* The BPF program for records of @size with a ring of @bytes, attached. */
static int tp_bpf_open(struct tp *t, uint32_t size, uint64_t bytes,
		       ring_buffer_sample_fn fn, void *ctx)
{
	int err;

	t->bpf = tp_ringbuf__open();
	if (!t->bpf)
		return -errno;
	t->bpf->rodata->rec_size = size;
	t->bpf->rodata->rec_header = PMCRING_HEADER(PMCRING_TYPE_GENERATED,
						    size);
	err = bpf_map__set_max_entries(t->bpf->maps.rb, (uint32_t)bytes);
	if (!err)
		err = tp_ringbuf__load(t->bpf);
	if (!err)
		err = tp_ringbuf__attach(t->bpf);
	if (!err) {
		t->bpf_rb = ring_buffer__new(bpf_map__fd(t->bpf->maps.rb), fn,
					     ctx, NULL);
		if (!t->bpf_rb)
			err = -errno;
	}
	if (err) {
		tp_bpf_close(t);
		return err < 0 ? err : -EINVAL;
	}
	return 0;
}
#endif

static bool tp_have_bpf(void)
{
#ifdef TP_NO_BPF
	return false;
#else
	return true;
#endif
}

/*
 * One run of @peer: the events fired on CPU 0, what the peer holds
 * afterwards in @got and @lost.  Peers are set up by the caller; ns/event.
 */
static double tp_run(struct tp *t, enum tp_peer peer, uint32_t size,
		     uint64_t count, uint32_t flags, uint64_t *got,
		     uint64_t *lost, int *err)
{
	static const uint32_t probe[P_NR] = {
		[P_EMPTY] = PFB_PROBE_EMPTY, [P_MINRING] = PFB_PROBE_MINRING,
		[P_PMCRING] = PFB_PROBE_PMCRING,
	};
	struct pfb_tp r;

	if (getenv("TP_DEBUG"))
		fprintf(tp_log, "tp: %s size %u count %" PRIu64 " flags %u\n",
			tp_names[peer], size, count, flags);
	*got = *lost = 0;
	*err = 0;
	/* only this run's peer is attached while the loop runs */
	if (peer == P_FTRACE)
		*err = tp_ftrace_on(t, true);
	if (peer == P_PERF && ioctl(t->perf_fd, PERF_EVENT_IOC_ENABLE, 0))
		*err = -errno;
#ifndef TP_NO_BPF
	if (peer == P_BPF)
		*err = tp_bpf_open(t, size, t->bytes, tp_bpf_count,
				   &t->bpf_seen);
#endif
	if (!*err)
		*err = tp_fire(t, probe[peer], size, count, flags, 1, 0, &r);
	if (peer == P_PERF)
		ioctl(t->perf_fd, PERF_EVENT_IOC_DISABLE, 0);
	if (peer == P_FTRACE)
		tp_ftrace_on(t, false);
	if (*err) {
#ifndef TP_NO_BPF
		if (peer == P_BPF && t->bpf)
			tp_bpf_close(t);
#endif
		return 0;
	}
	switch (peer) {
	case P_OFF:
	case P_EMPTY:
		*got = r.fired;
		break;
	case P_MINRING:
		*got = r.written;
		*lost = r.failed;
		break;
	case P_PMCRING:
		tp_pmcring_drain(t, got, lost);
		break;
	case P_PERF:
		tp_perf_drain(t, got, lost);
		break;
	case P_FTRACE:
		tp_ftrace_count(got, lost);
		break;
	case P_BPF:
#ifndef TP_NO_BPF
		t->bpf_seen = 0;
		ring_buffer__consume(t->bpf_rb);
		*got = t->bpf_seen;
		*lost = t->bpf->bss->fails;
		tp_bpf_close(t);
#endif
		break;
	default:
		break;
	}
	if (r.fired != count)
		*err = -EIO;
	return (double)r.loop_ns / (double)count;
}

static int tp_parse_peers(const char *arg, bool *want)
{
	char buf[256], *tok, *save = NULL;
	int i, any = 0;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok;
	     tok = strtok_r(NULL, ",", &save)) {
		for (i = 0; i < P_NR && strcmp(tok, tp_names[i]); i++)
			;
		if (i == P_NR)
			return -EINVAL;
		want[i] = true;
		any = 1;
	}
	return any ? 0 : -EINVAL;
}

static int cmd_b1(int argc, char **argv)
{
	uint32_t sizes[TP_MAX_SIZES] = { 32, 64, 256 };
	unsigned int nsizes = 3, reps = 5, i, r, c, p, bad = 0;
	uint64_t maxcount = 50000, count[TP_MAX_SIZES];
	static double res[TP_MAX_SIZES][2][P_NR][TP_MAX_REPS];
	double med[TP_MAX_SIZES][2][P_NR];
	bool want[P_NR] = { false }, ok[P_NR];
	struct tp t = { .fb = -1, .pages = 1024, .perf_fd = -1 };
	int opt, err;
	char *end;

	while ((opt = getopt(argc, argv, "n:p:r:s:x:")) != -1) {
		switch (opt) {
		case 'n':
			maxcount = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			t.pages = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'r':
			reps = (unsigned int)strtoul(optarg, NULL, 0);
			break;
		case 's':
			nsizes = 0;
			for (end = optarg; *end && nsizes < TP_MAX_SIZES;) {
				unsigned long v = strtoul(end, &end, 0);

				if (v < PFB_TP_SIZE_MIN || v > PFB_TP_SIZE_MAX ||
				    v % 8)
					return 2;
				sizes[nsizes++] = (uint32_t)v;
				if (*end == ',')
					end++;
				else if (*end)
					return 2;
			}
			break;
		case 'x':
			if (tp_parse_peers(optarg, want))
				return 2;
			break;
		default:
			return 2;
		}
	}
	if (!reps || reps > TP_MAX_REPS || !maxcount || !nsizes ||
	    !t.pages || (t.pages & (t.pages - 1)))
		return 2;
	for (p = 0, c = 0; p < P_NR; p++)
		c |= want[p];
	if (!c)
		for (p = 0; p < P_NR; p++)
			want[p] = true;
	t.bytes = (uint64_t)t.pages * 4096;
	for (i = 0; i < nsizes; i++) {
		/* 90% of the ring of the hungriest peer: never a full ring */
		count[i] = t.bytes / TP_SPACE(sizes[i]) * 9 / 10;
		if (count[i] > maxcount)
			count[i] = maxcount;
	}
	t.fb = open(PFB_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (t.fb < 0) {
		fprintf(tp_log, "tp b1: %s: %s (load pmcring_ftrace_bench.ko)\n",
			PFB_DEV_PATH, strerror(errno));
		return 1;
	}
	/* set up every peer once; one that cannot be is skipped, with why */
	for (p = 0; p < P_NR; p++)
		ok[p] = want[p];
	err = tp_tracefs_init();
	if (err && (want[P_PERF] || want[P_FTRACE] || want[P_BPF])) {
		fprintf(tp_log, "tp b1: no tracefs (%s): no perf, ftrace, bpf\n",
			strerror(-err));
		ok[P_PERF] = ok[P_FTRACE] = ok[P_BPF] = false;
	}
	if (ok[P_PMCRING] && (err = tp_pmcring_open(&t))) {
		fprintf(tp_log, "tp b1: pmcring session: %s\n", strerror(-err));
		ok[P_PMCRING] = false;
	}
	if (ok[P_PERF] && (err = tp_perf_open(&t))) {
		fprintf(tp_log, "tp b1: perf_event_open: %s\n", strerror(-err));
		ok[P_PERF] = false;
	}
	if (ok[P_BPF] && !tp_have_bpf()) {
		fprintf(tp_log, "tp b1: built without libbpf: no bpf peer\n");
		ok[P_BPF] = false;
	}

	for (r = 0; r < reps; r++)
		for (i = 0; i < nsizes; i++)
			for (c = 0; c < 2; c++)
				for (p = 0; p < P_NR; p++) {
					/* a different order every rep */
					enum tp_peer q = (p + r) % P_NR;
					uint64_t got, lost;
					double ns;

					res[i][c][q][r] = 0;
					if (!ok[q])
						continue;
					ns = tp_run(&t, q, sizes[i], count[i],
						    c ? PFB_TP_F_IRQ : 0, &got,
						    &lost, &err);
					if (err) {
						fprintf(tp_log, "tp b1: %s size %u: %s\n",
							tp_names[q], sizes[i],
							strerror(-err));
						ok[q] = false;
						bad++;
						continue;
					}
					if (got != count[i] || lost) {
						fprintf(tp_log, "tp b1: %s size %u %s: "
							"%" PRIu64 " of %" PRIu64
							" events, %" PRIu64 " lost\n",
							tp_names[q], sizes[i],
							c ? "irq" : "task", got,
							count[i], lost);
						bad++;
					}
					res[i][c][q][r] = ns;
				}

	fprintf(tp_log, "B1 tracepoint peers, ns/event on CPU 0, median of "
		"%u runs, %u pages per CPU each\n%5s %4s %7s", reps, t.pages,
		"size", "ctx", "events");
	for (p = 0; p < P_NR; p++)
		fprintf(tp_log, " %8s", tp_names[p]);
	fprintf(tp_log, "\n");
	fprintf(tp_out, "{\"tp_settings\": 1, \"reps\": %u, \"pages\": %u, "
		"\"peers\": \"", reps, t.pages);
	for (p = 0, c = 0; p < P_NR; p++)
		if (ok[p])
			fprintf(tp_out, "%s%s", c++ ? "," : "", tp_names[p]);
	fprintf(tp_out, "\"}\n");
	for (i = 0; i < nsizes; i++)
		for (c = 0; c < 2; c++) {
			fprintf(tp_log, "%5u %4s %7" PRIu64, sizes[i],
				c ? "irq" : "task", count[i]);
			fprintf(tp_out, "{\"size\": %u, \"ctx\": \"%s\", "
				"\"events\": %" PRIu64, sizes[i],
				c ? "irq" : "task", count[i]);
			for (p = 0; p < P_NR; p++) {
				qsort(res[i][c][p], reps, sizeof(double), tp_cmp);
				med[i][c][p] = ok[p] ? res[i][c][p][reps / 2] : 0;
				fprintf(tp_log, " %8.1f", med[i][c][p]);
				if (ok[p])
					fprintf(tp_out, ", \"%s_ns\": %.2f, "
						"\"%s_min_ns\": %.2f",
						tp_names[p], med[i][c][p],
						tp_names[p], res[i][c][p][0]);
			}
			fprintf(tp_log, "\n");
			fprintf(tp_out, "}\n");
		}
	fflush(tp_out);
	if (t.perf_map)
		munmap(t.perf_map, t.bytes + 4096);
	if (t.perf_fd >= 0)
		close(t.perf_fd);
	if (t.s)
		pmcring_free(t.s);
	close(t.fb);
	return bad ? 1 : 0;
}

/* ---- B2: the offered load and the BPF consumer -------------------------- */

static int cmd_fire(int argc, char **argv)
{
	struct tp t = { .fb = -1, .bytes = 1 << 20 };
	uint32_t size = 64, rate = 0, probe = PFB_PROBE_NONE;
	uint64_t count = 0, t0, t1;
	struct pfb_tp r;
	int opt, err;

	while ((opt = getopt(argc, argv, "n:s:R:x:")) != -1) {
		switch (opt) {
		case 'n':
			count = strtoull(optarg, NULL, 0);
			break;
		case 's':
			size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'R':
			rate = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'x':
			probe = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		default:
			return 2;
		}
	}
	if (!count)
		return 2;
	t.fb = open(PFB_DEV_PATH, O_RDWR | O_CLOEXEC);
	if (t.fb < 0) {
		fprintf(tp_log, "tp fire: %s: %s\n", PFB_DEV_PATH,
			strerror(errno));
		return 1;
	}
	t0 = tp_now();
	err = tp_fire(&t, probe, size, count, rate ? PFB_TP_F_IRQ : 0, 0, rate,
		      &r);
	t1 = tp_now();
	close(t.fb);
	if (err) {
		fprintf(tp_log, "tp fire: %s\n", strerror(-err));
		return 1;
	}
	fprintf(tp_out, "{\"fired\": %" PRIu64 ", \"rate\": %u, \"size\": %u, "
		"\"seconds\": %.6f}\n", (uint64_t)r.fired, rate, size, (t1 - t0) / 1e9);
	return 0;
}

#ifndef TP_NO_BPF
struct tp_sink {
	int		fd;
	char		*buf;
	size_t		len, cap;
	uint64_t	records, bytes;
	int		err;
};

static void tp_sink_flush(struct tp_sink *k)
{
	size_t off = 0;

	while (off < k->len) {
		ssize_t w = write(k->fd, k->buf + off, k->len - off);

		if (w <= 0) {
			k->err = errno ? errno : EIO;
			break;
		}
		off += (size_t)w;
	}
	k->bytes += off;
	k->len = 0;
}

/* One ring record: copied out, written in 1 MiB pieces (as pmcring does). */
static int tp_sink_rec(void *ctx, void *data, size_t len)
{
	struct tp_sink *k = ctx;

	if (k->len + len > k->cap)
		tp_sink_flush(k);
	memcpy(k->buf + k->len, data, len);
	k->len += len;
	k->records++;
	return 0;
}

static volatile sig_atomic_t tp_stop;

static void tp_on_signal(int sig)
{
	(void)sig;
	tp_stop = 1;
}
#endif

static int cmd_bpfrec(int argc, char **argv)
{
#ifdef TP_NO_BPF
	(void)argc;
	(void)argv;
	fprintf(tp_log, "tp bpfrec: built without libbpf\n");
	return 4;
#else
	struct tp_sink k = { .cap = 1 << 20 };
	struct tp t = { .fb = -1 };
	const char *out = NULL;
	uint64_t bytes = 1 << 21;
	uint32_t size = 64;
	struct sigaction sa;
	int opt, err;

	while ((opt = getopt(argc, argv, "s:m:o:")) != -1) {
		switch (opt) {
		case 's':
			size = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'm':
			bytes = strtoull(optarg, NULL, 0);
			break;
		case 'o':
			out = optarg;
			break;
		default:
			return 2;
		}
	}
	if (!out)
		return 2;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = tp_on_signal;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	k.buf = malloc(k.cap);
	k.fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (!k.buf || k.fd < 0) {
		perror(out);
		return 1;
	}
	err = tp_tracefs_init();
	if (!err)
		err = tp_bpf_open(&t, size, bytes, tp_sink_rec, &k);
	if (err) {
		fprintf(tp_log, "tp bpfrec: %s\n", strerror(-err));
		return 1;
	}
	fprintf(tp_log, "tp bpfrec: attached\n");
	while (!tp_stop) {
		int n = ring_buffer__poll(t.bpf_rb, 100);

		if (n < 0 && n != -EINTR) {
			fprintf(tp_log, "tp bpfrec: poll: %s\n", strerror(-n));
			break;
		}
	}
	ring_buffer__consume(t.bpf_rb);
	tp_sink_flush(&k);
	fprintf(tp_out, "{\"records\": %" PRIu64 ", \"lost\": %llu, "
		"\"bytes\": %" PRIu64 "}\n", k.records,
		(unsigned long long)t.bpf->bss->fails, k.bytes);
	tp_bpf_close(&t);
	close(k.fd);
	free(k.buf);
	return k.err ? 1 : 0;
#endif
}

int tpbench_main(int argc, char **argv, FILE *out, FILE *log)
{
	static const struct bench_cmd cmds[] = {
		{ "b1", cmd_b1 }, { "fire", cmd_fire }, { "bpfrec", cmd_bpfrec },
		{ NULL, NULL },
	};

	tp_out = out;
	tp_log = log;
	return bench_dispatch(cmds, argc, argv, log,
			      "usage: tpbench b1|fire|bpfrec ... "
			      "(see selftests/bench/tpbench.c)");
}

#ifndef TPBENCH_NO_MAIN
int main(int argc, char **argv)
{
	return bench_main(argc, argv, tpbench_main);
}
#endif
