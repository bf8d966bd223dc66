/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pmcring(1) output formats: writers that turn pmclog records (as the rings
 * hold them) into pmclog, barman or LDMS blob files, and the readers that
 * `pmcring dump` and `pmcring stat` use.  Byte facts: shared/formats.md,
 * Documentation/formats.rst.
 *
 * Writers do not write: they append byte ranges to an out_batch (out.c),
 * pointing either straight into the ring (zero copy) or into the batch's
 * staging arena.  The consumer then runs the batch, with io_uring or with
 * pwritev(); it advances the rings' data_tail past a record once no batch
 * not yet on disk points into the ring at it (b->ring_refs tells whether
 * a record was queued as ring bytes or as a copy).  A batch has
 * three phases, each complete before the next starts: OUT_DATA (records,
 * frames, blob DAT), OUT_META (blob TIMING/TYPE) and OUT_COMMIT (what makes
 * the rest visible to a reader: blob OFFSET, the barman header).  Inside a
 * phase the writes of one file run one after the other in file order, so a
 * file never has a hole, whatever moment the process is killed, and a
 * reader never follows an index entry to bytes that are not there.  (The
 * runners simply run all writes one after the other, sorted by phase, file
 * and offset.)
 */
#ifndef PMCRING_FMT_H
#define PMCRING_FMT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <sys/uio.h>
#include <linux/pmcring.h>

/* ---- output batches (out.c) ---- */

enum { OUT_DATA, OUT_META, OUT_COMMIT, OUT_NR_PHASES };
/*
 * A writer may cut a batch into segments, each with its own three phases,
 * written one segment after the other (the blob writer does): the phase of
 * kind @kind (OUT_DATA...) of segment @seg.  Runners take phases in order.
 */
#define OUT_PHASE(seg, kind)	((seg) * OUT_NR_PHASES + (kind))
#define OUT_PHASE_KIND(phase)	((phase) % OUT_NR_PHASES)

/* Largest iovec array of one write (IOV_MAX on Linux). */
#define OUT_MAX_IOV	1024u

struct out_file {
	int		fd;
	uint64_t	off;		/* where the next append goes */
	char		*path;		/* for messages */
	bool		stream;		/* not seekable (a pipe): appends only */
	/* its last range in a batch: later bytes right after it extend it */
	const struct out_batch *last_b;
	uint64_t	last_gen;
	unsigned int	last_put;
};

/* One byte range queued for a file. */
struct out_put {
	struct out_file	*f;
	uint64_t	off;
	const void	*p;
	size_t		len;
	unsigned int	phase;
	unsigned int	seq;		/* queue order, for a stable sort */
	bool		ring;		/* points into a ring (out_put_ring) */
};

/* One positional vectored write into one file (built by out_batch_prepare). */
struct out_op {
	struct out_file	*f;
	uint64_t	off;
	uint64_t	len;
	unsigned int	iov_first;	/* index into out_batch.iov */
	unsigned int	iov_cnt;
	unsigned int	phase;
};

struct out_batch {
	struct out_put	*puts;		/* what writers queued, in order */
	unsigned int	nr_puts, max_puts;
	struct iovec	*iov;		/* built by out_batch_prepare() */
	unsigned int	nr_iov;
	struct out_op	*ops;
	unsigned int	nr_ops;
	bool		prepared;
	char		*arena;		/* staging bytes, valid until reset */
	size_t		arena_used, arena_size;
	uint64_t	bytes;		/* bytes queued */
	uint64_t	records;	/* input records taken into this batch */
	uint64_t	items;		/* what the file holds of them: pmclog
					 * records, barman frames, blob
					 * messages (as `pmcring stat` counts)
					 */
	const char	*err_path;	/* file of the last failed write */
	uint64_t	gen;		/* counts resets: tells batches apart */
	/*
	 * Ranges queued or grown that point at record bytes outside the
	 * arena (out_put_ring*()): while it does not move, the records
	 * taken are copies, and their ring space may go back before the
	 * batch is written.
	 */
	uint64_t	ring_refs;
	/* out_put_ring(): the ring run being copied into the arena */
	const char	*copy_end;	/* ring address after its last byte */
	size_t		copy_run;	/* its bytes copied */
	bool		landed;		/* no other batch is being written:
					 * a writer may close files
					 */
};

int out_batch_init(struct out_batch *b, unsigned int max_puts, size_t arena);
void out_batch_free(struct out_batch *b);
void out_batch_reset(struct out_batch *b);
/* Room for @puts more ranges and @stage staging bytes?  (per record: inline) */
static inline bool out_batch_room(const struct out_batch *b, unsigned int puts,
				  size_t stage)
{
	/* out_alloc() rounds each allocation up to 8 bytes */
	return b->nr_puts + puts <= b->max_puts &&
	       b->arena_used + stage + 8 * puts <= b->arena_size;
}
bool out_batch_empty(const struct out_batch *b);
void *out_alloc(struct out_batch *b, size_t len);	/* NULL: full */
/*
 * Unaligned, right after the previous allocation: byte streams (barman
 * frames, JSON messages) that follow on in memory go out as one range.
 */
void *out_alloc_bytes(struct out_batch *b, size_t len);
/* Append @len bytes at @p to @f (moves f->off). -ENOBUFS: batch full. */
int out_put(struct out_batch *b, struct out_file *f, unsigned int phase,
	    const void *p, size_t len);
/*
 * Append @len record bytes at @p in a ring (OUT_DATA).  Records contiguous
 * in the ring and in the file extend one range (zero copy); a range that
 * stays short (at most OUT_COPY_MAX bytes, the merge switched rings) is
 * copied into the arena, after the copy before it, so interleaved small
 * records make one iovec, not one each.  Once the merge switches rings
 * like that, records are copied as they come, and a run that grows past
 * OUT_COPY_MAX bytes goes on as a zero-copy range.
 */
#ifndef OUT_COPY_MAX
#define OUT_COPY_MAX	512u
#endif
/* Keep only @len bytes of the last out_alloc() (at @p) of @b. */
void out_trim(struct out_batch *b, const void *p, size_t len);
int out_put_ring(struct out_batch *b, struct out_file *f, const void *p,
		 size_t len);
/* The same in phase @phase (a segment's OUT_DATA, OUT_PHASE()). */
int out_put_ring_phase(struct out_batch *b, struct out_file *f,
		       unsigned int phase, const void *p, size_t len);
/*
 * The per-record path of pmclog and of blob's DAT files (B2 runs it once
 * per record).  @last is a ring range of this file and @phase ending where
 * the file does: @p follows it in the ring too (a run grows), or the merge
 * switched rings and a short @last is copied to the arena's end, into the
 * arena range before it if that ends there.  Then, with an arena range
 * ending where the file and the arena do, @p is copied after it, unless it
 * continues a ring run copied that way that would pass OUT_COPY_MAX (it
 * starts a ring range).  Everything else goes the general way.  false: @p
 * was not queued.
 */
static inline __attribute__((always_inline)) bool
out_put_ring_fast(struct out_batch *b, struct out_file *f, unsigned int phase,
		  const void *p, size_t len)
{
	struct out_put *last, *prev;
	char *tail;

	if (!b->nr_puts)
		return false;
	last = &b->puts[b->nr_puts - 1];
	if (last->f != f || last->phase != phase ||
	    last->off + last->len != f->off)
		return false;
	tail = b->arena + b->arena_used;
	if (last->ring) {
		if ((const char *)last->p + last->len == (const char *)p) {
			last->len += len;
			b->ring_refs++;
			goto queued;
		}
		if (last->len > OUT_COPY_MAX ||
		    b->arena_used + last->len + len > b->arena_size)
			return false;
		memcpy(tail, last->p, last->len);
		prev = b->nr_puts >= 2 ? last - 1 : NULL;
		if (prev && !prev->ring && prev->f == f &&
		    prev->phase == phase &&
		    prev->off + prev->len == last->off &&
		    (const char *)prev->p + prev->len == tail) {
			prev->len += last->len;
			b->nr_puts--;
		} else {
			last->p = tail;
			last->ring = false;
			prev = last;
		}
		b->arena_used += last->len;
		tail += last->len;
		last = prev;
		b->copy_end = NULL;
	} else if ((const char *)last->p + last->len != tail ||
		   b->arena_used + len > b->arena_size) {
		return false;
	}
	if (b->copy_end == (const char *)p) {
		if (b->copy_run + len > OUT_COPY_MAX)
			return false;	/* a long run: zero copy from here */
		b->copy_run += len;
	} else {
		b->copy_run = len;
	}
	memcpy(tail, p, len);
	b->arena_used += len;
	b->copy_end = (const char *)p + len;
	last->len += len;
queued:
	f->off += len;
	b->bytes += len;
	b->prepared = false;
	return true;
}

/* out_put_ring_phase() past the fast path (out.c). */
int out_put_ring_slow(struct out_batch *b, struct out_file *f,
		      unsigned int phase, const void *p, size_t len);

/*
 * out_put_ring_phase() with its fast path inline: the per-record loops
 * (the consumer's direct path, blob's DAT) call no function but memcpy()
 * for a record that is copied or extends a ring run.
 */
static inline __attribute__((always_inline)) int
out_put_ring_inline(struct out_batch *b, struct out_file *f,
		    unsigned int phase, const void *p, size_t len)
{
	if (out_put_ring_fast(b, f, phase, p, len))
		return 0;
	return out_put_ring_slow(b, f, phase, p, len);
}

/* Write @len bytes at @p at offset @off of @f (f->off does not move). */
int out_put_at(struct out_batch *b, struct out_file *f, unsigned int phase,
	       uint64_t off, const void *p, size_t len);
/*
 * Group the queued ranges into one vectored write per file, phase and
 * contiguous run (at most OUT_MAX_IOV iovecs each), merging ranges that are
 * contiguous in memory too.  The runners call it; idempotent.
 */
void out_batch_prepare(struct out_batch *b);
/* Run the batch with pwritev(); 0 or -errno (a short write is -ENOSPC). */
int out_batch_run_sync(struct out_batch *b);
/* Advance an op past @done written bytes (for short writes). */
void out_op_advance(struct out_batch *b, struct out_op *op, size_t done);

/*
 * Fixed-size entries of an index file (blob OFFSET, TYPE, TIMING; pmclog
 * FILE.periods), staged side by side in a batch's arena a slab at a time
 * and queued as one range when the slab is full or the batch is about to
 * run: one iovec per slab, not one per entry.  Entries of one file are
 * queued in order, so an entry's place in the file is fixed when it is
 * taken.  Zeroed: no slab.
 */
struct out_slab {
	const struct out_batch	*b;	/* the batch of the slab, and its */
	uint64_t		gen;	/* generation: NULL, or old: none */
	uint8_t			*start;	/* entries not queued yet */
	uint8_t			*p;	/* the next entry */
	unsigned int		left;	/* entries free after it */
};

/* Queue @sl's entries not queued yet to @f in @phase (before a batch runs). */
int out_slab_put(struct out_slab *sl, struct out_batch *b,
		 struct out_file *f, unsigned int phase);
/*
 * Queue what @sl holds, then take a new slab of @entries entries of @entry
 * bytes from @b's arena: 0, -ENOBUFS (arena full, no slab), or out_put()'s
 * error.
 */
int out_slab_new(struct out_slab *sl, struct out_batch *b, struct out_file *f,
		 unsigned int phase, size_t entry, unsigned int entries);
/* Has @sl room for one more entry in @b? */
static inline bool out_slab_has_room(const struct out_slab *sl,
				     const struct out_batch *b)
{
	return sl->b == b && sl->gen == b->gen && sl->left;
}

/* Room in @sl for one entry in @b, a new slab if need be (out_slab_new). */
static inline int out_slab_room(struct out_slab *sl, struct out_batch *b,
				struct out_file *f, unsigned int phase,
				size_t entry, unsigned int entries)
{
	return out_slab_has_room(sl, b) ? 0 :
	       out_slab_new(sl, b, f, phase, entry, entries);
}

/* The next entry of @entry bytes, after out_slab_room() said there is one. */
static inline void *out_slab_take(struct out_slab *sl, size_t entry)
{
	void *p = sl->p;

	sl->p += entry;
	sl->left--;
	return p;
}

int out_file_open(struct out_file *f, const char *path, bool excl);
/*
 * perf's perf.data.old: an existing recording file @path (with its
 * FILE.periods, .kallsyms, .modules, .buildids) is renamed @path.old
 * before a new one is written.  A pipe or device is left alone, and so is
 * a blob directory: a store that recordings add their sets to (LDMS).
 * 0 or -errno.
 */
int out_keep_old(const char *path);
void out_file_close(struct out_file *f);

/* ---- records ---- */

/* A record handed to a writer: exactly the pmclog bytes of one record. */
struct fmt_rec {
	const void	*data;		/* 16-byte header first */
	uint32_t	len;		/* pmclog length from the header */
	uint32_t	type;
	uint32_t	cpu;		/* ring it came from */
	uint64_t	ts;		/* ns, CLOCK_MONOTONIC */
};

static inline uint32_t fmt_get32(const void *p, size_t off)
{
	uint32_t v;

	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static inline uint64_t fmt_get64(const void *p, size_t off)
{
	uint64_t v;

	memcpy(&v, (const char *)p + off, sizeof(v));
	return v;
}

static inline void fmt_put32(void *p, size_t off, uint32_t v)
{
	memcpy((char *)p + off, &v, sizeof(v));
}

static inline void fmt_put64(void *p, size_t off, uint64_t v)
{
	memcpy((char *)p + off, &v, sizeof(v));
}

/* fmt_rec.c: names, validation, text and JSON rendering of pmclog records */
const char *fmt_type_name(unsigned int type);		/* "callchain", NULL */
int fmt_type_lookup(const char *name);			/* type or -1 */
/* Parse "callchain,proccsw" or "all" into a PMCRING_TYPE_BIT() mask. */
int fmt_types_parse(const char *list, uint64_t *mask);
/*
 * Check one record at @p with @avail bytes available: 0 and *len if it is a
 * whole valid record, 1 if it is cut short (needs more bytes), -EINVAL if it
 * is corrupt.
 */
int fmt_rec_check(const void *p, size_t avail, uint32_t *len);
/* @v in decimal at @buf (up to 20 bytes, no NUL); returns the length. */
size_t fmt_dec(char *buf, uint64_t v);
/* "pid=12 tid=13 ..." into @buf; returns the length written. */
size_t fmt_rec_text(char *buf, size_t sz, const void *rec, uint32_t len);
/*
 * One flat JSON object of scalars, NUL included in the returned length; cut
 * at @sz - 1 bytes and NUL-terminated if it does not fit.  With @sz at least
 * FMT_JSON_MAX and a record fmt_rec_check() accepts it takes a fast path
 * (fmt_rec.c) that makes the same bytes.
 */
size_t fmt_rec_json(char *buf, size_t sz, const void *rec, uint32_t len,
		    uint32_t cpu, const struct timespec *rt);
/*
 * Add @key (",\"name\":") and @v at the end of the JSON object of @len
 * bytes (NUL included) at @json, in a buffer of @sz: the new length, or
 * @len if it does not fit.
 */
size_t fmt_json_add_u64(char *json, size_t len, size_t sz, const char *key,
			uint64_t v);
/* Largest fmt_rec_json() output, with room for the fast path's stores. */
#define FMT_JSON_MAX	(512u * 20u + 1024u)

/* ---- writers ---- */

enum fmt_kind { FMT_PMCLOG, FMT_BARMAN, FMT_BLOB };

/*
 * The blob writer's segments (fmt_blob.c): a batch is cut after about this
 * many bytes of DAT, and each segment's DAT, TIMING/TYPE and OFFSET are
 * written (one write per file) before the next segment's, so a full disk
 * keeps every segment before the one being written.  256 KiB, not 64: on
 * ext4 every write of a file costs the same fixed work again (its inode's
 * times, the journal), and with 64 KiB segments the three writes per
 * segment made blob 0.50 to 0.74 of pmclog's rate natively against 0.74 to
 * 0.88 with 256 KiB (Documentation/performance.rst, issue 29).
 */
#ifndef BLOB_SEG_BYTES
#define BLOB_SEG_BYTES		(256u << 10)
#endif

/* A stream of the blob format: a file set taking some record types. */
struct fmt_blob_stream {
	char		*name;		/* file name stem */
	uint64_t	types;		/* PMCRING_TYPE_BIT() mask */
};

#define FMT_MAX_STREAMS		16
#define FMT_MAX_COUNTERS	16

struct fmt_opts {
	enum fmt_kind	kind;
	const char	*path;		/* pmclog/barman: file; blob: directory */
	/* what the session is */
	uint64_t	start_ns;	/* CLOCK_MONOTONIC ns at the start */
	struct timespec	start_rt;	/* CLOCK_REALTIME at the start */
	unsigned int	nr_cpus;
	const char	*target;	/* "cmd args" or "system-wide" */
	uint32_t	cputype;
	char		cpuid[PMCRING_CPUID_LEN];
	uint32_t	sample_rate;	/* Hz of timer sampling, 0: none */
	struct {
		uint32_t	pmcid;
		char		name[PMCRING_NAME_MAX];
	} counters[FMT_MAX_COUNTERS];
	unsigned int	nr_counters;
	bool		keep_generated;	/* pmclog: keep GENERATED records */
	/*
	 * pmclog: write FILE.periods (the rings have CALLCHAIN records); else
	 * remove an older one
	 */
	bool		periods;
	/* barman */
	uint32_t	bm_channel;	/* annotation channel */
	/* blob */
	const char	*container;
	struct fmt_blob_stream streams[FMT_MAX_STREAMS];
	unsigned int	nr_streams;
	bool		blob_json;
	bool		blob_timing;
	uint64_t	roll_bytes;	/* 0: no size rolling */
	uint64_t	roll_secs;	/* 0: no time rolling */
};

struct fmt_writer;

struct fmt_writer *fmt_writer_new(const struct fmt_opts *o);
/*
 * Writers queue their bytes in @b.  They return 0, -EAGAIN when the batch
 * must be run (and reset) before the call is repeated, or -errno.
 */
int fmt_begin(struct fmt_writer *w, struct out_batch *b);
int fmt_record(struct fmt_writer *w, struct out_batch *b,
	       const struct fmt_rec *r);
/*
 * A writer's direct path, for the consumer's per-record loop: records of
 * the PMCRING_TYPE_BIT()s in @types are written as the ring holds them,
 * each one item, with out_put_ring(b, @f, ...) once out_batch_room(b, 1,
 * FMT_DIRECT_ROOM) holds; what fmt_record() would do, without its call
 * through the writer's ops.  With @put set (blob), the consumer calls it
 * instead of out_put_ring(): 0 (queued and counted), 1 (nothing done: the
 * record goes through fmt_record()), or -errno.  After fmt_begin();
 * false: the writer has none (every record goes through fmt_record()).
 */
struct fmt_direct {
	uint64_t	types;
	struct out_file	*f;
	int		(*put)(struct fmt_writer *w, struct out_batch *b,
			       const void *data, uint32_t len);
};
#define FMT_DIRECT_ROOM	PMCRING_SIZE_PMCALLOCATEDYN
bool fmt_direct(struct fmt_writer *w, struct fmt_direct *d);
/* Before a batch runs: queue metadata that describes the batch. */
int fmt_flush(struct fmt_writer *w, struct out_batch *b);
/* Last records (CLOSELOG, final header); @ts: the time of the end. */
int fmt_end(struct fmt_writer *w, struct out_batch *b, uint64_t ts);
/*
 * A write failed (nothing of the writer's may be in flight): cut the files
 * back so that each ends on a whole entry, as every reader expects of a
 * prefix (blob: the messages all files of a set hold; pmclog and barman
 * files are readable prefixes as they are).  0 or -errno.
 */
int fmt_abort(struct fmt_writer *w);
void fmt_writer_free(struct fmt_writer *w);

/* pmcids with a period kept per ring: the module's go up to 8 */
#define FMT_MAX_PMCID	64u

/*
 * The last PERIOD of each ring and pmcid, [ring * FMT_MAX_PMCID + pmcid],
 * 0 for none: the period of the CALLCHAINs that follow on that ring.  The
 * writers keep one (fmt.c), and so does `pmcring report` for a blob set's
 * PERIOD records.  Zeroed: empty; free(v) when done.
 */
struct fmt_period_last {
	uint64_t	*v;
	unsigned int	nr_rings;
};

/*
 * The slot of @ring and @pmcid, grown as rings appear (up to 65536);
 * NULL for a pmcid beyond FMT_MAX_PMCID or when memory runs out.
 */
uint64_t *fmt_period_last(struct fmt_period_last *t, uint32_t ring,
			  uint32_t pmcid);
/* The last PERIOD of @ring and @pmcid, 0 if none (the table does not grow). */
static inline uint64_t fmt_period_get(const struct fmt_period_last *t,
				      uint32_t ring, uint32_t pmcid)
{
	return ring < t->nr_rings && pmcid < FMT_MAX_PMCID ?
	       t->v[(size_t)ring * FMT_MAX_PMCID + pmcid] : 0;
}

/* Realtime of a monotonic timestamp, with the session's offset. */
void fmt_realtime(const struct fmt_opts *o, uint64_t ts, struct timespec *rt);

/* ---- per-format pieces, exposed for the tests ---- */

/* pmclog: INITIALIZE (112 bytes) and CLOSELOG (16 bytes) into @buf. */
void fmt_pmclog_initialize(void *buf, const struct fmt_opts *o);
void fmt_pmclog_closelog(void *buf, uint64_t ts);
/* PMCALLOCATE -> PMCALLOCATEDYN (96 bytes) with the counter's name. */
void fmt_pmclog_allocdyn(void *buf, const void *alloc,
			 const struct fmt_opts *o);

/*
 * FILE.periods beside a pmclog file: the 8-byte magic, the recording's
 * start (INITIALIZE's, LE u64 ns of CLOCK_REALTIME), then one LE u64 per
 * CALLCHAIN of the file in file order: its period (the last PERIOD of its
 * ring and pmcid, else its counter's fixed period, PMCALLOCATE's rate),
 * 0 if none is known.
 */
#define FMT_PERIODS_SUFFIX	".periods"
#define FMT_PERIODS_MAGIC	"pmcrprd"	/* and its NUL: 8 bytes */
#define FMT_PERIODS_HEADER	16u
void fmt_periods_header(void *buf, const struct fmt_opts *o);
/*
 * Check FILE.periods in memory: 0 with *periods at the first entry (LE
 * u64s, unaligned) and *n whole entries; -EINVAL if it is not one; -ESTALE
 * if @start (INITIALIZE's start time, NULL: not checked) is not the one
 * it names.
 */
int fmt_periods_read(const void *buf, size_t len, const struct timespec *start,
		     const uint8_t **periods, size_t *n);

/*
 * The largest period a FILE.periods entry may plausibly hold: 2^40 events
 * a sample (over 200 s of a 5 GHz cycle counter at one sample a second).
 * Random bytes are above it but for one chance in 2^24.
 */
#define FMT_PERIOD_MAX		(1ull << 40)
/* Leading entries of @n at @periods that are plausible (<= FMT_PERIOD_MAX). */
size_t fmt_periods_valid(const uint8_t *periods, size_t n);

/* barman layout constants (see fmt_barman.c) */
#define BM_MAGIC64		0x4241524D414E3634ull
#define BM_VERSION		3u
#define BM_DATASTORE_USER	4u
#define BM_STRTAB_LEN		1024u
#define BM_MAX_PMU_COUNTERS	8u
#define BM_MAX_TASKS		256u
#define BM_MAX_MMAPS		256u
#define BM_PMU_SETTINGS_SIZE	(8u + 4u + 8u + 4u + 4u + 4u * BM_MAX_PMU_COUNTERS)
#define BM_TASK_SIZE		16u	/* u64 ts, u32 id, u32 name */
#define BM_MMAP_SIZE		40u	/* u64 ts, u32 task, u64 base, len, off, u32 name */
#define BM_OFF_STRTAB		92u
#define BM_OFF_PMU		(BM_OFF_STRTAB + 4u + BM_STRTAB_LEN)

enum bm_rec_type {
	BM_REC_SAMPLE = 1, BM_REC_SAMPLE_WITH_PC = 2, BM_REC_TASK_SWITCH = 3,
	BM_REC_CUSTOM_COUNTER = 4, BM_REC_ANNOTATION = 5, BM_REC_HALT = 6,
	BM_REC_PC_WITHOUT_TASK = 7, BM_REC_EVENT_COUNTER = 8,
	BM_REC_WARNING = 9,
};

/* Sizes of the packed barman records pmcring writes. */
#define BM_REC_HDR_SIZE		16u	/* u32 type, u32 core, u64 ts */
#define BM_SAMPLE_PC_SIZE	28u	/* + u32 task, u64 pc; caller PCs follow */
#define BM_TASK_SWITCH_SIZE	21u	/* + u32 task, u8 reason */
#define BM_ANNOTATION_SIZE	41u	/* + u32 task, u64 len, u32 channel,
					 * group, color, u8 type; data follows */
#define BM_WARNING_SIZE		20u	/* + u32 code */
#define BM_WARNING_LOST		1u	/* code: records were dropped */

size_t fmt_barman_header_size(unsigned int max_cores);

/* ---- readers (whole files in memory) ---- */

struct fmt_item {
	enum fmt_kind	kind;
	uint64_t	ts;
	int32_t		cpu;		/* -1: the format does not say */
	uint32_t	type;		/* pmclog type, or enum bm_rec_type */
	const void	*data;		/* the raw record / message */
	size_t		len;
	/* blob */
	char		btype;		/* 's' or 'j' */
	struct timespec	rt;		/* TIMING, if present */
	bool		has_rt;
	/* barman, decoded */
	uint32_t	task;
	uint64_t	pc;
	const void	*chain;		/* caller PCs, unaligned u64s */
	uint32_t	nchain;
	uint32_t	value;		/* reason, warning code, annotation channel */
	const char	*text;		/* annotation data */
	uint64_t	text_len;
};

/* Called for every record; a non-zero return stops the walk with it. */
typedef int (*fmt_item_cb)(const struct fmt_item *it, void *ctx);

enum fmt_end_state {
	FMT_END_CLEAN = 0,	/* the file ends where a record ends */
	FMT_END_TRUNCATED = 1,	/* a last record is cut short: a prefix */
};

/*
 * Walk a file image; return FMT_END_*, the callback's non-zero value,
 * -EINVAL when the file is corrupt (*bad_off = where), or another -errno
 * (-ENOMEM).
 */
int fmt_pmclog_read(const void *buf, size_t len, fmt_item_cb cb, void *ctx,
		    size_t *bad_off);

struct fmt_bm_info {
	uint32_t	header_length, max_cores, max_tasks, max_mmaps;
	uint32_t	target_name_ptr, strtab_len, nr_tasks, nr_mmaps;
	uint64_t	last_ts, ts_base, mult, div, unix_base_ns;
	const char	*strtab;
	const uint8_t	*tasks, *mmaps;	/* packed tables in the image */
};

int fmt_barman_info(const void *buf, size_t len, struct fmt_bm_info *bi);
int fmt_barman_read(const void *buf, size_t len, fmt_item_cb cb, void *ctx,
		    size_t *bad_off);
/* String of the barman string table at @ptr ("" if out of range). */
const char *fmt_barman_str(const struct fmt_bm_info *bi, uint32_t ptr);

struct fmt_blob_set {
	const void	*dat, *off, *typ, *tim;	/* NULL if absent */
	size_t		dat_len, off_len, typ_len, tim_len;
};

int fmt_blob_read(const struct fmt_blob_set *s, fmt_item_cb cb, void *ctx,
		  size_t *bad_off);
/*
 * Map the file set that @path (any of STREAM.DAT.T, .OFFSET.T, .TIMING.T,
 * .TYPE.T) belongs to, read-only: DAT and OFFSET must exist, TIMING and
 * TYPE may not.  0; -EINVAL if @path is not named like a blob file; or
 * -errno of the file named in @which.
 */
int fmt_blob_map(const char *path, struct fmt_blob_set *s, char *which,
		 size_t which_sz);
void fmt_blob_unmap(struct fmt_blob_set *s);

/*
 * The message of record @r in a blob set, as the blob writer writes it and
 * `record --ldms` publishes it: binary, the record as is (*msg = r->data,
 * its length); @json, the record's flat JSON object (NUL included) made in
 * @buf (FMT_JSON_MAX bytes, *msg = @buf), a callchain with the "period" in
 * force on its ring from @last.  A PERIOD in JSON has no message of its
 * own (0): it updates @last, and the callchains after it carry it.
 */
size_t fmt_blob_message(struct fmt_period_last *last, bool json,
			const struct fmt_rec *r, const struct timespec *rt,
			char *buf, const void **msg);

/*
 * Why the last reader call above returned -EINVAL (the file is damaged at
 * *bad_off): a static string, never NULL.  A reader's callback may set it
 * (fmt_set_bad_reason()) when it refuses a record.  Readers are not
 * thread-safe.
 */
const char *fmt_bad_reason(void);
void fmt_set_bad_reason(const char *why);

/*
 * How every reader (dump, stat, report, script) says that @path is damaged
 * at @off: "WHO: PATH: damaged at offset OFF: WHY; read the N records
 * before it", and the exit status that follows: 0 with @best_effort
 * (--best-effort), else 1.  A file cut short is not damaged (a prefix).
 */
int fmt_say_damage(const char *who, const char *path, uint64_t off,
		   const char *why, uint64_t nread, bool best_effort);

/* Format of a file image from its magic, or -1. */
int fmt_detect(const void *buf, size_t len);

/*
 * Map all of @path read-only (*p NULL if it is empty): 0, or -errno, which
 * unless @who is NULL is also said on stderr as "@who: @path: error".
 * "-" is the standard input.  A pipe, FIFO or other stream is read to its
 * end into memory; a named FIFO without a writer is waited for up to
 * FMT_FIFO_WAIT_MS, then refused (-EPIPE), never waited for for ever.  A
 * directory is -EISDIR.
 */
#define FMT_FIFO_WAIT_MS	1000
int fmt_map_file(const char *path, const void **p, size_t *len,
		 const char *who);
void fmt_unmap_file(const void *p, size_t len);		/* p may be NULL */
/* Is @path "-" or not a regular file (a blob set cannot be read from it)? */
bool fmt_is_stream(const char *path);

#endif /* PMCRING_FMT_H */
