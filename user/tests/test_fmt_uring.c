// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the consumer of `pmcring record` writes the same pmclog,
 * barman and blob files with io_uring (zero-copy iovecs into the rings) as
 * with pwritev() (--no-uring), from the same ring contents of a userspace
 * producer (pmcring_uprod); records come out in exact timestamp order with
 * their pmclog lengths (no ring padding); ring space is given back (20
 * rounds fill a 16 KiB ring several times without a drop; records
 * straddle the ring's wrap).  A write cut short by the file size limit
 * (RLIMIT_FSIZE: a short write, then EFBIG) is an error from the
 * consumer with either path, and leaves a readable prefix in exact order
 * (pmclog) or whole messages (blob).  consumer_io_pick(): what the probe
 * of the directory says, for a file, a directory not made yet, a FIFO.
 * Fault injection (uring_io.fault): a completion cut short is written
 * again from where it stopped, the same bytes; a failed one is the
 * consumer's error.  O_DIRECT (consumer_set_direct(), pmclog): the same
 * bytes as pwritev() wrote, with 1 and 8 batches in flight and without
 * io_uring; short completions; a write failing while later batches are
 * in flight cuts the file back to a prefix (whole blocks, records in
 * order, nothing after the failed write); the file size limit.
 * consumer_set_idle() (io_uring while a CPU is idle, else pwritev()),
 * its choice made by the test batch by batch: the same pmclog, barman
 * and blob bytes, with short completions too; a failed write its error.
 */
#include <liburing.h>
#include <sched.h>
#include <signal.h>
#include <linux/magic.h>
#include <sys/resource.h>
#include <sys/statfs.h>
#include <sys/uio.h>
#include <limits.h>

#include "libpmcring_test.h"
#include "test_fmt_common.h"
#include "../pmcring/record/consumer.h"

#define ROUNDS		20
#define PER_ROUND	100

/*
 * O_DIRECT with this many batches in flight (0: buffered), and the fault
 * to inject into io_uring's completions (NULL: none).
 */
static unsigned int dio_depth;
/* end without consumer_end(), as a recording that fails elsewhere does */
static bool no_end;
static int (*fault)(void *ctx, unsigned int slot, const struct out_op *op,
		    int res);
struct fault_ctx {
	unsigned int	n;		/* completions seen */
	unsigned int	at;		/* fail this one (fault_fail) */
	uint64_t	fail_off;	/* where the failed write started */
	unsigned int	max_fly;	/* most writes in flight seen */
	struct uring_io	*u;
};
static struct fault_ctx fctx;

/* Every other write completes short: 4 KiB (a whole block). */
static int fault_short(void *ctx, unsigned int slot, const struct out_op *op,
		       int res)
{
	struct fault_ctx *f = ctx;

	(void)slot;
	(void)op;
	if (f->u->inflight + 1 > f->max_fly)
		f->max_fly = f->u->inflight + 1;
	return f->n++ % 2 == 0 && res > 4096 ? 4096 : res;
}

/* The at-th write completes with EIO (its bytes are on disk: cut back). */
static int fault_fail(void *ctx, unsigned int slot, const struct out_op *op,
		      int res)
{
	struct fault_ctx *f = ctx;

	(void)slot;
	if (f->u->inflight + 1 > f->max_fly)
		f->max_fly = f->u->inflight + 1;
	if (f->n++ != f->at)
		return res;
	f->fail_off = op->off;
	return -EIO;
}

/*
 * consumer_set_idle() with its choice made here, batch by batch: io_uring
 * for one, pwritev() for the next two (a batch in flight when it turns),
 * and how many batches each wrote.
 */
static bool idle_alt;
static unsigned int idle_calls;
static uint64_t idle_batches, idle_uring;

static bool idle_hook(void *ctx)
{
	(void)ctx;
	return idle_calls++ % 3 == 0;
}

/*
 * Or, with idle_load set, the consumer's own choice from this file in
 * place of /proc/loadavg.
 */
static const char *idle_load;
/*
 * The batches here are small (about 8 KB a drain); idle_min 0 lets the
 * choice act on them, else CONSUMER_IDLE_MIN_BYTES keeps them on pwritev().
 */
static uint64_t idle_min;
/* and UINT_MAX lets it act on batches of any number of writes */
static unsigned int idle_max_ops = UINT_MAX;

/* CPUs this process may run on: consumer_set_idle() wants two. */
static int check_pick_cpus(void)
{
	cpu_set_t set;

	if (sched_getaffinity(0, sizeof(set), &set) ||
	    sysconf(_SC_NPROCESSORS_ONLN) < 2)
		return 1;
	return CPU_COUNT(&set);
}
static bool record(enum fmt_kind kind, const char *path, bool uring);
static void compare(const char *what, const char *a, const char *b);

static void set_idle(struct consumer *c)
{
	if (!idle_alt && !idle_load)
		return;
	REQUIRE(!consumer_set_idle(c), "consumer_set_idle");
	CHECK(c->idle_min_bytes == CONSUMER_IDLE_MIN_BYTES,
	      "consumer_set_idle(): small batches on pwritev() by default");
	c->idle_min_bytes = idle_min;
	CHECK(c->idle_max_ops == CONSUMER_IDLE_MAX_OPS,
	      "consumer_set_idle(): batches of many writes on pwritev() by "
	      "default");
	c->idle_max_ops = idle_max_ops;
	idle_calls = 0;
	if (!idle_load) {
		c->idle_hook = idle_hook;
		return;
	}
	close(c->load_fd);
	c->load_fd = open(idle_load, O_RDONLY);
	REQUIRE(c->load_fd >= 0, "open %s", idle_load);
}

/*
 * consumer_set_idle()'s look at the runnable tasks: @line as
 * /proc/loadavg; the same bytes as @ref, and io_uring for @want_uring
 * batches: all (true) or none.
 */
static void check_idle_load(const char *dir, const char *ref,
			    const char *line, bool want_uring)
{
	char path[300], load[300];
	FILE *f;

	snprintf(load, sizeof(load), "%s/loadavg", dir);
	f = fopen(load, "w");
	REQUIRE(f && fputs(line, f) >= 0 && !fclose(f), "write %s", load);
	snprintf(path, sizeof(path), "%s/idle-load.pmclog", dir);
	idle_load = load;
	record(FMT_PMCLOG, path, true);
	idle_load = NULL;
	compare("pmclog, the choice from the runnable tasks", ref, path);
	CHECK(idle_batches > 2 && idle_uring == (want_uring ? idle_batches : 0),
	      "runnable \"%.*s\": %llu of %llu batches with io_uring, want %s",
	      (int)strcspn(line, "\n"), line, (unsigned long long)idle_uring,
	      (unsigned long long)idle_batches, want_uring ? "all" : "none");
	unlink(load);
}

/*
 * CONSUMER_IDLE_MAX_OPS on an idle machine (a runnable count of one):
 * pmclog's batches (one write each) all with io_uring, blob's (DAT,
 * OFFSET, TYPE and TIMING: four) all with pwritev(), the same files.
 */
static void check_idle_ops(const char *dir)
{
	char path[300], ref[300], load[300];
	FILE *f;

	snprintf(load, sizeof(load), "%s/loadavg", dir);
	f = fopen(load, "w");
	REQUIRE(f && fputs("0.50 0.40 0.30 1/100 4242\n", f) >= 0 &&
		!fclose(f), "write %s", load);
	idle_load = load;
	idle_max_ops = CONSUMER_IDLE_MAX_OPS;
	snprintf(path, sizeof(path), "%s/ops.pmclog", dir);
	record(FMT_PMCLOG, path, true);
	snprintf(ref, sizeof(ref), "%s/sync.pmclog", dir);
	compare("pmclog, one write a batch, the idle choice", ref, path);
	CHECK(idle_batches > 2 && idle_uring == idle_batches,
	      "pmclog: %llu of %llu batches with io_uring, want all",
	      (unsigned long long)idle_uring,
	      (unsigned long long)idle_batches);
	snprintf(path, sizeof(path), "%s/ops", dir);
	record(FMT_BLOB, path, true);
	snprintf(path, sizeof(path), "%s/ops/c/all.DAT.1700000000", dir);
	snprintf(ref, sizeof(ref), "%s/sync/c/all.DAT.1700000000", dir);
	compare("blob DAT, four writes a batch, the idle choice", ref, path);
	CHECK(idle_batches > 2 && idle_uring == 0,
	      "blob: %llu of %llu batches with io_uring, want none (more "
	      "than %u writes each)", (unsigned long long)idle_uring,
	      (unsigned long long)idle_batches, CONSUMER_IDLE_MAX_OPS);
	idle_max_ops = UINT_MAX;
	idle_load = NULL;
	unlink(load);
}

/* FMT_BENCH=N: N rounds of 1000 records per CPU, timing printed. */
static unsigned int rounds = ROUNDS, per_round = PER_ROUND;
/* blob: TIMING files (the writer's ops) or none (its direct path) */
static bool blob_timing = true;
static uint64_t drain_ns;

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One record with a chosen timestamp: reserve, overwrite ts, commit. */
static void produce(struct pmcring_uprod *p, unsigned int cpu,
		    unsigned int type, uint32_t len, uint64_t ts, uint32_t v)
{
	uint8_t *r = pmcring_uprod_reserve(p, cpu, type, len);
	unsigned int i;

	REQUIRE(r, "reserve cpu %u: %s (ring space not given back?)", cpu,
		strerror(errno));
	w64(r, 8, ts);
	if (type == PMCRING_TYPE_USERDATA) {
		w32(r, 16, v);
	} else {	/* CALLCHAIN, (len - 32) / 8 PCs */
		w32(r, 16, 42);
		w32(r, 20, 43);
		w32(r, 28, cpu << 16);
		for (i = 32; i + 8 <= len; i += 8)
			w64(r, i, 0x400000 + v + i);
	}
	pmcring_uprod_commit(p, cpu);
}

struct order {
	uint64_t	last, n;
	int		bad;
};

static int order_cb(const struct fmt_item *it, void *ctx)
{
	struct order *o = ctx;

	if (it->ts < o->last)
		o->bad = 1;
	o->last = it->ts;
	o->n++;
	return 0;
}

/* Record ROUNDS x PER_ROUND x 2 records into @path; false: no io_uring. */
static bool record(enum fmt_kind kind, const char *path, bool uring)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, rounds == ROUNDS ? 4 : 64);
	struct pmcring_cpu_buf *bufs[2];
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct pmcring_merge *m;
	struct fmt_opts o;
	struct fmt_writer *w;
	struct consumer c;
	uint64_t ts = 1000, n, total = 0, t;
	unsigned int round, i;
	int err;

	REQUIRE(p, "uprod: %s", strerror(errno));
	bufs[0] = pmcring_uprod_cpu_buf(p, 0);
	bufs[1] = pmcring_uprod_cpu_buf(p, 1);
	mo.clock = pmcring_uprod_clock;
	mo.clock_ctx = p;
	m = pmcring_merge_new(bufs, 2, &mo);
	REQUIRE(m, "merge: %s", strerror(errno));
	test_opts(&o, kind, path);
	o.start_ns = 500;	/* before the first record */
	o.container = "c";
	o.streams[0].name = "all";
	o.streams[0].types = PMCRING_TYPES_ALL;
	o.nr_streams = 1;
	o.blob_timing = blob_timing;
	w = fmt_writer_new(&o);
	REQUIRE(w, "writer");
	err = consumer_init(&c, m, 2, w, uring, -1);
	if (err && uring) {
		printf("# io_uring unavailable: %s\n", strerror(-err));
		fmt_writer_free(w);
		pmcring_merge_free(m);
		pmcring_uprod_free(p);
		return false;
	}
	REQUIRE(!err, "consumer_init: %s", strerror(-err));
	if (dio_depth)
		REQUIRE(!consumer_set_direct(&c, dio_depth), "O_DIRECT");
	set_idle(&c);
	fctx.u = &c.u;
	c.u.fault = fault;
	c.u.fault_ctx = &fctx;
	err = consumer_begin(&c);
	if (err == -EINVAL && dio_depth) {
		printf("# %s takes no O_DIRECT\n", path);
		consumer_fini(&c);
		fmt_writer_free(w);
		pmcring_merge_free(m);
		pmcring_uprod_free(p);
		return false;
	}
	REQUIRE(!err, "begin: %s", strerror(-err));
	drain_ns = 0;
	for (round = 0; round < rounds; round++) {
		for (i = 0; i < per_round; i++) {
			/* USERDATA: 24 bytes in a 32-byte slot */
			produce(p, 0, PMCRING_TYPE_USERDATA, 24, ts++, i);
			produce(p, 1, PMCRING_TYPE_CALLCHAIN, 32 + 8 * (i % 5),
				ts++, i);
		}
		t = mono_ns();
		err = consumer_drain(&c, 0, &n);
		drain_ns += mono_ns() - t;
		REQUIRE(!err, "drain: %s", strerror(-err));
		total += n;
	}
	CHECK(total == 2ull * rounds * per_round, "%llu records taken",
	      (unsigned long long)total);
	CHECK(c.st.records == total && c.st.drops == 0, "stats");
	if (!no_end)
		REQUIRE(!consumer_end(&c, ts), "end");
	idle_batches = c.st.batches;
	idle_uring = c.st.uring_batches;
	if (rounds != ROUNDS)
		printf("bench %-6s %-8s %8llu records %8.1f ms %10.0f records/s "
		       "%7.1f MB/s\n", kind == FMT_PMCLOG ? "pmclog" :
		       kind == FMT_BARMAN ? "barman" : "blob",
		       uring ? "io_uring" : "pwritev", (unsigned long long)total,
		       drain_ns / 1e6, total / (drain_ns / 1e9),
		       c.st.bytes / (drain_ns / 1e3));
	consumer_fini(&c);
	fmt_writer_free(w);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return true;
}

/*
 * Record into @path with the file size limited to @limit bytes: the
 * consumer must fail with EFBIG (the batch that crosses the limit is
 * written short, the write after it refused).  false: no io_uring.
 */
static bool record_short(enum fmt_kind kind, const char *path, bool uring,
			 rlim_t limit)
{
	struct pmcring_uprod *p = pmcring_uprod_new(2, 4);
	struct pmcring_cpu_buf *bufs[2];
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct rlimit old, lim;
	struct pmcring_merge *m;
	struct fmt_opts o;
	struct fmt_writer *w;
	struct consumer c;
	uint64_t ts = 1000, n;
	unsigned int round, i;
	int err = 0;

	REQUIRE(p, "uprod: %s", strerror(errno));
	bufs[0] = pmcring_uprod_cpu_buf(p, 0);
	bufs[1] = pmcring_uprod_cpu_buf(p, 1);
	mo.clock = pmcring_uprod_clock;
	mo.clock_ctx = p;
	m = pmcring_merge_new(bufs, 2, &mo);
	REQUIRE(m, "merge: %s", strerror(errno));
	test_opts(&o, kind, path);
	o.start_ns = 500;
	o.container = "c";
	o.streams[0].name = "all";
	o.streams[0].types = PMCRING_TYPES_ALL;
	o.nr_streams = 1;
	w = fmt_writer_new(&o);
	REQUIRE(w, "writer");
	if (consumer_init(&c, m, 2, w, uring, -1)) {
		fmt_writer_free(w);
		pmcring_merge_free(m);
		pmcring_uprod_free(p);
		return false;
	}
	if (dio_depth)
		REQUIRE(!consumer_set_direct(&c, dio_depth), "O_DIRECT");
	REQUIRE(!getrlimit(RLIMIT_FSIZE, &old), "getrlimit");
	lim = old;
	lim.rlim_cur = limit;
	REQUIRE(!setrlimit(RLIMIT_FSIZE, &lim), "setrlimit");
	err = consumer_begin(&c);
	for (round = 0; !err && round < 40; round++) {
		for (i = 0; i < 100; i++) {
			produce(p, 0, PMCRING_TYPE_USERDATA, 24, ts++, i);
			produce(p, 1, PMCRING_TYPE_CALLCHAIN, 32 + 8 * (i % 5),
				ts++, i);
		}
		err = consumer_drain(&c, 0, &n);
	}
	if (!err)
		err = consumer_end(&c, ts);
	CHECK(err == -EFBIG, "%s %s: %s past the size limit, not EFBIG",
	      kind == FMT_PMCLOG ? "pmclog" : "blob",
	      uring ? "io_uring" : "pwritev", err ? strerror(-err) : "no error");
	consumer_fini(&c);
	fmt_writer_free(w);
	REQUIRE(!setrlimit(RLIMIT_FSIZE, &old), "setrlimit back");
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return true;
}

static void check_short(const char *dir, bool uring)
{
	const char *how = uring ? "io_uring" : "pwritev";
	struct order ord = { 0 };
	struct fmt_blob_set bs;
	char path[300], which[64];
	size_t len, bad;
	uint8_t *f;
	int rc;

	snprintf(path, sizeof(path), "%s/short-%s.pmclog", dir, how);
	if (!record_short(FMT_PMCLOG, path, uring, 10000))
		return;
	f = read_file(path, &len);
	REQUIRE(f, "read %s", path);
	rc = fmt_pmclog_read(f, len, order_cb, &ord, &bad);
	/* cut where the limit is: a prefix, the last record cut short */
	CHECK(len == 10000 && rc >= 0 && !ord.bad && ord.n > 100,
	      "pmclog %s cut short: %zu bytes, rc %d, %llu records, order %s",
	      how, len, rc, (unsigned long long)ord.n,
	      ord.bad ? "bad" : "ok");
	free(f);
	snprintf(path, sizeof(path), "%s/short-%s", dir, how);
	record_short(FMT_BLOB, path, uring, 100000);
	snprintf(path, sizeof(path), "%s/short-%s/c/all.DAT.1700000000", dir,
		 how);
	REQUIRE(!fmt_blob_map(path, &bs, which, sizeof(which)), "map %s: %s",
		path, which);
	memset(&ord, 0, sizeof(ord));
	rc = fmt_blob_read(&bs, order_cb, &ord, &bad);
	CHECK(rc == FMT_END_CLEAN && !ord.bad && ord.n > 50 &&
	      bs.off_len == 8 + 8 * ord.n && bs.dat_len < 100000,
	      "blob %s cut short: rc %d, %llu messages, OFFSET %zu bytes, "
	      "DAT %zu", how, rc, (unsigned long long)ord.n, bs.off_len,
	      bs.dat_len);
	fmt_blob_unmap(&bs);
}

/* The probe consumer_io_pick() makes, made here for @dir. */
static enum consumer_io probe(const char *dir)
{
	struct iovec iov = { .iov_base = (void *)"", .iov_len = 1 };
	int fd = open(dir, O_TMPFILE | O_WRONLY, 0600);
	ssize_t n;

	if (fd < 0)
		return CONSUMER_IO_URING;
	n = pwritev2(fd, &iov, 1, 0, RWF_NOWAIT);
	close(fd);
	if (n < 0 && errno == EOPNOTSUPP) {
		cpu_set_t set;

		return !sched_getaffinity(0, sizeof(set), &set) &&
		       CPU_COUNT(&set) > 1 ? CONSUMER_IO_IDLE :
					     CONSUMER_IO_SYNC;
	}
	return CONSUMER_IO_URING;
}

static void check_pick(const char *dir)
{
	enum consumer_io want = probe(dir);
	char path[300];
	int fd;

	CHECK(consumer_io_pick(dir) == want, "pick for the directory");
	snprintf(path, sizeof(path), "%s/a.pmclog", dir);
	CHECK(consumer_io_pick(path) == want, "pick for a new file in it");
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	REQUIRE(fd >= 0, "create %s", path);
	close(fd);
	CHECK(consumer_io_pick(path) == want, "pick for a file in it");
	unlink(path);
	snprintf(path, sizeof(path), "%s/not/made/yet", dir);
	CHECK(consumer_io_pick(path) == want, "pick for a blob directory");
	snprintf(path, sizeof(path), "%s/fifo", dir);
	REQUIRE(!mkfifo(path, 0600), "mkfifo");
	CHECK(consumer_io_pick(path) == CONSUMER_IO_URING, "pick for a FIFO");
	CHECK(consumer_io_pick_direct(path) == CONSUMER_IO_URING,
	      "O_DIRECT pick for a FIFO");
	unlink(path);
	/* O_DIRECT: pwritev() on a file system in memory, else io_uring */
	{
		struct statfs sf;
		bool mem;

		REQUIRE(!statfs(dir, &sf), "statfs %s", dir);
		mem = sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
		snprintf(path, sizeof(path), "%s/not/made/yet.pmclog", dir);
		CHECK(consumer_io_pick_direct(dir) == consumer_io_pick_direct(path) &&
		      consumer_io_pick_direct(dir) == (mem ? CONSUMER_IO_SYNC :
							 CONSUMER_IO_URING),
		      "O_DIRECT pick for %s (%s)", dir, mem ? "in memory" :
		      "not in memory");
		printf("# %s with O_DIRECT: %s\n", dir,
		       mem ? "in memory: pwritev" : "io_uring");
	}
	/* the working directory removed: nothing to probe, io_uring */
	if (!strcmp(dir, "/dev/shm"))
		goto said;
	{
		int here = open(".", O_RDONLY | O_DIRECTORY);

		snprintf(path, sizeof(path), "%s/gone", dir);
		REQUIRE(here >= 0 && !mkdir(path, 0700) && !chdir(path) &&
			!rmdir(path), "a removed working directory");
		CHECK(consumer_io_pick("out.pmclog") == CONSUMER_IO_URING &&
		      consumer_io_pick("a/b") == CONSUMER_IO_URING,
		      "pick without a directory");
		REQUIRE(!fchdir(here), "back");
		close(here);
	}
said:
	printf("# %s: %s\n", dir, want == CONSUMER_IO_URING ?
	       "takes RWF_NOWAIT writes: io_uring" : want == CONSUMER_IO_IDLE ?
	       "no RWF_NOWAIT: io_uring while a CPU is idle, else pwritev" :
	       "no RWF_NOWAIT, one CPU: pwritev");
}

static void compare(const char *what, const char *a, const char *b)
{
	size_t la, lb;
	uint8_t *pa = read_file(a, &la), *pb = read_file(b, &lb);

	REQUIRE(pa && pb, "%s: read", what);
	expect_bytes(what, pa, la, pb, lb);
	free(pa);
	free(pb);
}

/*
 * Record pmclog into @path with io_uring, O_DIRECT @depth in flight (0:
 * buffered), the fault_fail injection at the @at-th write (~0u:
 * none).  @big: rings of 4 MiB filled with 30000 records each before one
 * drain, so that the batches of that drain go out without a look at the
 * completions between them (several in flight whatever the disk's speed);
 * else 20 rounds of 100 records and a drain.  The consumer's error.
 */
static int fail_run(const char *path, unsigned int depth, unsigned int at,
		    bool big)
{
	unsigned int rounds_n = big ? 1 : ROUNDS, per = big ? 30000 : PER_ROUND;
	struct pmcring_uprod *p = pmcring_uprod_new(2, big ? 1024 : 4);
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct pmcring_cpu_buf *bufs[2];
	struct pmcring_merge *m;
	struct fmt_writer *w;
	struct fmt_opts o;
	struct consumer c;
	uint64_t ts = 1000, n;
	unsigned int round, i;
	int err = 0;

	REQUIRE(p, "uprod: %s", strerror(errno));
	bufs[0] = pmcring_uprod_cpu_buf(p, 0);
	bufs[1] = pmcring_uprod_cpu_buf(p, 1);
	mo.clock = pmcring_uprod_clock;
	mo.clock_ctx = p;
	m = pmcring_merge_new(bufs, 2, &mo);
	REQUIRE(m, "merge: %s", strerror(errno));
	test_opts(&o, FMT_PMCLOG, path);
	o.start_ns = 500;
	w = fmt_writer_new(&o);
	REQUIRE(w, "writer");
	REQUIRE(!consumer_init(&c, m, 2, w, true, -1), "consumer_init");
	if (depth)
		REQUIRE(!consumer_set_direct(&c, depth), "O_DIRECT");
	set_idle(&c);
	memset(&fctx, 0, sizeof(fctx));
	fctx.at = at;
	fctx.fail_off = UINT64_MAX;
	fctx.u = &c.u;
	c.u.fault = fault_fail;
	c.u.fault_ctx = &fctx;
	err = consumer_begin(&c);
	for (round = 0; !err && round < rounds_n; round++) {
		for (i = 0; i < per; i++) {
			produce(p, 0, PMCRING_TYPE_USERDATA, 24, ts++, i);
			produce(p, 1, PMCRING_TYPE_CALLCHAIN, 32 + 8 * (i % 5),
				ts++, i);
		}
		err = consumer_drain(&c, 0, &n);
	}
	if (!err)
		err = consumer_end(&c, ts);
	consumer_fini(&c);
	fmt_writer_free(w);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return err;
}

/*
 * fail_run() with the @at-th write failing: the consumer fails with EIO,
 * and the file is a prefix of @full (the same recording without a fault)
 * that ends where the failed write started (O_DIRECT: cut back, the
 * writes after it in flight too) or where it ended (buffered).
 */
static void check_fail(const char *dir, const char *full, unsigned int depth,
		       unsigned int at, bool big)
{
	struct order ord = { 0 };
	char path[300];
	size_t len, flen, bad;
	uint8_t *f, *ff;
	int err, rc;

	snprintf(path, sizeof(path), "%s/fail-%u-%u.pmclog", dir, depth, at);
	err = fail_run(path, depth, at, big);
	CHECK(err == -EIO && fctx.fail_off != UINT64_MAX,
	      "depth %u, write %u failing: %s", depth, at,
	      err ? strerror(-err) : "no error");
	f = read_file(path, &len);
	ff = read_file(full, &flen);
	REQUIRE(f && ff, "read %s, %s", path, full);
	rc = fmt_pmclog_read(f, len, order_cb, &ord, &bad);
	/*
	 * buffered, one batch in flight: nothing after the failed write (its
	 * own bytes are there: the fault is injected after it wrote them)
	 */
	CHECK((depth ? len == fctx.fail_off : len >= fctx.fail_off) &&
	      len <= flen && !memcmp(f, ff, len) &&
	      (!depth || len % CONSUMER_DIO_ALIGN == 0) && rc >= 0 &&
	      !ord.bad,
	      "depth %u, write %u failed at %llu: a %zu-byte prefix of %zu, "
	      "rc %d, %llu records in %s order (%u writes in flight at most)",
	      depth, at, (unsigned long long)fctx.fail_off, len, flen, rc,
	      (unsigned long long)ord.n, ord.bad ? "bad" : "exact",
	      fctx.max_fly);
	if (depth > 1)
		CHECK(fctx.max_fly > 1, "depth %u: %u writes in flight at most",
		      depth, fctx.max_fly);
	printf("# write %u of %u in flight at most failed: a %zu-byte prefix "
	       "of %zu\n", at + 1, fctx.max_fly, len, flen);
	free(f);
	free(ff);
}

/*
 * O_DIRECT (pmclog): the bytes of @ref (pwritev, buffered), with pwritev,
 * with io_uring 1 and 8 batches in flight, with short completions; then
 * failures and the size limit.  false: the directory takes no O_DIRECT.
 */
static bool check_dio(const char *dir, const char *ref)
{
	static const unsigned int depths[] = { 1, 8 };
	struct order ord = { 0 };
	char path[300];
	size_t len, bad;
	unsigned int i;
	uint8_t *f;
	int rc;

	snprintf(path, sizeof(path), "%s/dio-sync.pmclog", dir);
	dio_depth = 1;
	if (!record(FMT_PMCLOG, path, false)) {
		dio_depth = 0;
		return false;
	}
	compare("pmclog O_DIRECT pwritev vs buffered", ref, path);
	for (i = 0; i < 2; i++) {
		dio_depth = depths[i];
		snprintf(path, sizeof(path), "%s/dio-%u.pmclog", dir,
			 depths[i]);
		record(FMT_PMCLOG, path, true);
		compare(depths[i] == 1 ? "pmclog O_DIRECT io_uring 1 in flight" :
			"pmclog O_DIRECT io_uring 8 in flight", ref, path);
		/* short completions: the rest written again from there */
		memset(&fctx, 0, sizeof(fctx));
		fault = fault_short;
		snprintf(path, sizeof(path), "%s/dio-short-%u.pmclog", dir,
			 depths[i]);
		record(FMT_PMCLOG, path, true);
		fault = NULL;
		compare("pmclog O_DIRECT io_uring, short completions", ref,
			path);
		/* how many in flight depends on the disk: fail_run() checks */
		CHECK(fctx.n > 2, "depth %u: %u completions", depths[i],
		      fctx.n);
		printf("# O_DIRECT, depth %u: %u completions (every other "
		       "one short), %u writes in flight at most\n", depths[i],
		       fctx.n, fctx.max_fly);
	}
	/*
	 * No consumer_end(): the whole blocks written, not the size kept
	 * ahead of them (CONSUMER_DIO_AHEAD of zeros)
	 */
	no_end = true;
	snprintf(path, sizeof(path), "%s/dio-noend.pmclog", dir);
	record(FMT_PMCLOG, path, true);
	no_end = false;
	f = read_file(path, &len);
	{
		size_t rlen;
		uint8_t *r = read_file(ref, &rlen);

		REQUIRE(f && r, "read %s, %s", path, ref);
		CHECK(len % CONSUMER_DIO_ALIGN == 0 && len > 0 &&
		      len + CONSUMER_DIO_ALIGN > rlen - 64 && len < rlen &&
		      !memcmp(f, r, len),
		      "O_DIRECT, no consumer_end(): %zu bytes, a block prefix of "
		      "the %zu", len, rlen);
		free(r);
	}
	free(f);
	dio_depth = 0;
	/*
	 * the 2nd and the 4th write fail with later ones in flight; the 3rd
	 * with one batch in flight (20 small drains, as record() makes)
	 */
	snprintf(path, sizeof(path), "%s/big.pmclog", dir);
	REQUIRE(!fail_run(path, 0, ~0u, true), "big, no fault");
	check_fail(dir, path, 8, 1, true);
	check_fail(dir, path, 8, 3, true);
	check_fail(dir, ref, 1, 2, false);
	/* the size limit: O_DIRECT writes whole blocks up to it */
	snprintf(path, sizeof(path), "%s/dio-limit.pmclog", dir);
	dio_depth = 8;
	record_short(FMT_PMCLOG, path, true, 16384);
	dio_depth = 0;
	f = read_file(path, &len);
	REQUIRE(f, "read %s", path);
	rc = fmt_pmclog_read(f, len, order_cb, &ord, &bad);
	CHECK(len == 16384 && rc >= 0 && !ord.bad && ord.n > 100,
	      "pmclog O_DIRECT cut at the size limit: %zu bytes, rc %d, "
	      "%llu records, order %s", len, rc, (unsigned long long)ord.n,
	      ord.bad ? "bad" : "ok");
	free(f);
	return true;
}

/*
 * consumer_set_idle() against @ref (pmclog, pwritev): io_uring and
 * pwritev() in turn, the same bytes; short completions; a failed write
 * the consumer's error; then its own choice from the runnable tasks: one
 * (this thread), a CPU is idle: io_uring; as many as CPUs: pwritev().
 */
static void check_idle(const char *dir, const char *ref)
{
	char path[300], line[64];

	idle_alt = true;
	snprintf(path, sizeof(path), "%s/idle.pmclog", dir);
	record(FMT_PMCLOG, path, true);
	compare("pmclog io_uring and pwritev in turn vs pwritev", ref, path);
	CHECK(idle_uring > 2 && idle_uring < idle_batches - 2,
	      "%llu of %llu batches with io_uring",
	      (unsigned long long)idle_uring,
	      (unsigned long long)idle_batches);
	printf("# io_uring and pwritev in turn: %llu of %llu batches with "
	       "io_uring\n", (unsigned long long)idle_uring,
	       (unsigned long long)idle_batches);
	memset(&fctx, 0, sizeof(fctx));
	fault = fault_short;
	snprintf(path, sizeof(path), "%s/idle-short.pmclog", dir);
	record(FMT_PMCLOG, path, true);
	fault = NULL;
	compare("pmclog io_uring and pwritev in turn, short completions", ref,
		path);
	CHECK(fctx.n > 2, "%u completions", fctx.n);
	check_fail(dir, ref, 0, 3, false);
	idle_alt = false;
	check_idle_load(dir, ref, "0.50 0.40 0.30 1/100 4242\n", true);
	snprintf(line, sizeof(line), "4.00 4.00 4.00 %ld/100 4242\n",
		 sysconf(_SC_NPROCESSORS_ONLN));
	check_idle_load(dir, ref, line, false);
	/* an idle machine, but batches below CONSUMER_IDLE_MIN_BYTES */
	idle_min = CONSUMER_IDLE_MIN_BYTES;
	check_idle_load(dir, ref, "0.50 0.40 0.30 1/100 4242\n", false);
	idle_min = 0;
}

int main(void)
{
	char *dir, a[256], b[256];
	struct order ord = { 0 };
	size_t len, bad;
	uint8_t *f;
	int rc;

	if (getenv("FMT_BENCH")) {
		rounds = (unsigned int)atoi(getenv("FMT_BENCH"));
		per_round = 1000;
	}
	dir = scratch_dir();
	/* pmclog: zero copy from the rings */
	snprintf(a, sizeof(a), "%s/sync.pmclog", dir);
	snprintf(b, sizeof(b), "%s/uring.pmclog", dir);
	record(FMT_PMCLOG, a, false);
	f = read_file(a, &len);
	rc = fmt_pmclog_read(f, len, order_cb, &ord, &bad);
	CHECK(rc == FMT_END_CLEAN && !ord.bad &&
	      ord.n == 2ull * rounds * per_round + 2, "pmclog: rc %d, %llu records, "
	      "order %s", rc, (unsigned long long)ord.n, ord.bad ? "bad" : "ok");
	/* INITIALIZE, USERDATA(ts 1000) then CALLCHAIN(ts 1001, no PCs) */
	CHECK(fmt_get32(f, 112) == 0xEE0D0018u && fmt_get64(f, 120) == 1000 &&
	      fmt_get32(f, 136) == 0xEE100020u && fmt_get64(f, 144) == 1001,
	      "first records at their exact lengths");
	free(f);
	if (!record(FMT_PMCLOG, b, true)) {
		rm_rf(dir);
		printf("io_uring not available here\n");
		return t_failed ? 1 : 4;
	}
	compare("pmclog io_uring vs pwritev", a, b);
	/* buffered, one batch in flight: short and failed completions */
	memset(&fctx, 0, sizeof(fctx));
	fault = fault_short;
	snprintf(b, sizeof(b), "%s/uring-short.pmclog", dir);
	record(FMT_PMCLOG, b, true);
	fault = NULL;
	compare("pmclog io_uring, short completions", a, b);
	CHECK(fctx.n > 2, "%u completions", fctx.n);
	check_fail(dir, a, 0, 3, false);
	if (check_pick_cpus() > 1)
		check_idle(dir, a);
	else
		printf("# one CPU: no consumer_set_idle() checks\n");
	{
		struct consumer c;

		/* no idle choice without io_uring */
		memset(&c, 0, sizeof(c));
		c.load_fd = -1;
		CHECK(consumer_set_idle(&c) == -EINVAL,
		      "consumer_set_idle() without io_uring");
	}

	/* barman and blob: converted in the staging arena */
	snprintf(a, sizeof(a), "%s/sync.barman", dir);
	snprintf(b, sizeof(b), "%s/uring.barman", dir);
	record(FMT_BARMAN, a, false);
	record(FMT_BARMAN, b, true);
	compare("barman io_uring vs pwritev", a, b);
	if (check_pick_cpus() > 1) {
		idle_alt = true;
		snprintf(b, sizeof(b), "%s/idle.barman", dir);
		record(FMT_BARMAN, b, true);
		idle_alt = false;
		compare("barman io_uring and pwritev in turn vs pwritev", a, b);
	}
	snprintf(a, sizeof(a), "%s/sync", dir);
	snprintf(b, sizeof(b), "%s/uring", dir);
	record(FMT_BLOB, a, false);
	record(FMT_BLOB, b, true);
	snprintf(a, sizeof(a), "%s/sync/c/all.DAT.1700000000", dir);
	snprintf(b, sizeof(b), "%s/uring/c/all.DAT.1700000000", dir);
	compare("blob DAT io_uring vs pwritev", a, b);
	snprintf(a, sizeof(a), "%s/sync/c/all.OFFSET.1700000000", dir);
	snprintf(b, sizeof(b), "%s/uring/c/all.OFFSET.1700000000", dir);
	compare("blob OFFSET io_uring vs pwritev", a, b);
	if (check_pick_cpus() > 1) {
		idle_alt = true;
		snprintf(b, sizeof(b), "%s/idle", dir);
		record(FMT_BLOB, b, true);
		idle_alt = false;
		snprintf(a, sizeof(a), "%s/sync/c/all.DAT.1700000000", dir);
		snprintf(b, sizeof(b), "%s/idle/c/all.DAT.1700000000", dir);
		compare("blob DAT io_uring and pwritev in turn vs pwritev", a,
			b);
		check_idle_ops(dir);
	}
	/*
	 * Without TIMING the records take blob's direct path (fmt_direct()'s
	 * put; the first of each batch its ops): the same DAT, OFFSET and
	 * TYPE as its ops alone wrote with TIMING.
	 */
	blob_timing = false;
	snprintf(b, sizeof(b), "%s/direct", dir);
	record(FMT_BLOB, b, false);
	blob_timing = true;
	snprintf(b, sizeof(b), "%s/direct/c/all.DAT.1700000000", dir);
	snprintf(a, sizeof(a), "%s/sync/c/all.DAT.1700000000", dir);
	compare("blob DAT direct path vs the writer's ops", a, b);
	snprintf(b, sizeof(b), "%s/direct/c/all.OFFSET.1700000000", dir);
	snprintf(a, sizeof(a), "%s/sync/c/all.OFFSET.1700000000", dir);
	compare("blob OFFSET direct path vs the writer's ops", a, b);
	snprintf(b, sizeof(b), "%s/direct/c/all.TYPE.1700000000", dir);
	snprintf(a, sizeof(a), "%s/sync/c/all.TYPE.1700000000", dir);
	compare("blob TYPE direct path vs the writer's ops", a, b);

	/* short writes: the file size limit, with either path */
	signal(SIGXFSZ, SIG_IGN);
	check_short(dir, false);
	check_short(dir, true);
	/* O_DIRECT, against the buffered pmclog of pwritev() */
	snprintf(a, sizeof(a), "%s/sync.pmclog", dir);
	if (!check_dio(dir, a))
		printf("# no O_DIRECT checks: %s takes no O_DIRECT\n", dir);
	check_pick(dir);
	if (access("/dev/shm", W_OK) == 0)
		check_pick("/dev/shm");

	rm_rf(dir);
	if (!t_failed)
		printf("test_fmt_uring: all checks passed\n");
	return t_failed;
}
