// SPDX-License-Identifier: GPL-2.0
/*
 * LDMS blob_stream_writer files (ovis-hpc/ldms, sampler/blob_stream): per
 * stream $path/$container/$stream.DAT.$t, .OFFSET.$t, .TIMING.$t (with
 * timing) and .TYPE.$t, each starting with its 8-byte magic.  Per message:
 * OFFSET gets the LE u64 offset of the message in DAT (the first is at 8),
 * TIMING LE u64 seconds and LE u64 microseconds of CLOCK_REALTIME, TYPE 's'
 * or 'j', DAT the message bytes.
 *
 * Messages are the binary pmclog records (type 's'), or with --blob-json one
 * flat NUL-terminated JSON object each (type 'j'), which LDMS's
 * ldms-csv-from-blobs reads.  Unlike LDMS's writer, offsets restart at 8 in
 * every new file set when files roll, and a set a roll opens starts with
 * the counters allocated so far and (binary) the PERIODs in force
 * (blob_repeat()): each set stands alone.  Write order, each step complete
 * before the next (fmt.h): DAT (OUT_DATA), then TIMING and TYPE (OUT_META),
 * then OFFSET (OUT_COMMIT).  So after a kill at any moment OFFSET never
 * points past what DAT holds and never has more entries than TIMING and
 * TYPE: every OFFSET entry is a whole message, which is what LDMS's
 * reader, counting OFFSET entries, needs.
 *
 * A batch is cut into segments of about BLOB_SEG_BYTES, each with its own
 * three phases (OUT_PHASE()), run in order: a batch may be as large as the
 * consumer makes it (one write hand-off for many segments), yet a disk
 * that fills up, or a kill, in the middle of it keeps every segment before
 * the one being written.  A write that fails (a full disk) may still cut
 * a segment's TIMING, TYPE or OFFSET mid-entry: blob_abort() then cuts
 * every file back to the messages all of them hold whole.
 */
#define _GNU_SOURCE
#include <endian.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>
#include <json-c/json.h>

#include "fmt_int.h"

enum { BLOB_DAT, BLOB_OFF, BLOB_TIM, BLOB_TYP, BLOB_NR_FILES };

static const char *const blob_ext[BLOB_NR_FILES] = {
	"DAT", "OFFSET", "TIMING", "TYPE",
};
static const char blob_magic[BLOB_NR_FILES][8] = {
	"blobdat", "bloboff", "blobtim", "blobtyp",
};

/*
 * Index entries of one file are staged side by side in the batch's arena,
 * BLOB_SLAB_ENTRIES at a time, and queued as one range when the slab is
 * full or the batch is about to run (blob_flush()), not one per message.
 */
#define BLOB_SLAB_ENTRIES	512u
/* Names a new file set tries before giving up (all taken: -EEXIST). */
#define BLOB_NAME_TRIES		64u
static const size_t blob_entry[BLOB_NR_FILES] = { 0, 8, 16, 1 };
static const unsigned int blob_phase[BLOB_NR_FILES] = {
	OUT_DATA, OUT_COMMIT, OUT_META, OUT_META,
};

struct blob_stream {
	struct out_file	f[BLOB_NR_FILES];
	struct out_slab	slab[BLOB_NR_FILES];
	int64_t		t;		/* $t of the open file set */
	uint64_t	msgs;		/* messages in the open file set */
	/* the messages a roll repeated at its start (blob_repeat()) */
	uint64_t	head;
	uint64_t	first_sec;	/* realtime second of its first message */
};

/*
 * The allocation records a roll repeats, the last PMCALLOCATE and
 * PMCALLOCATEDYN of each pmcid (the kernel writes both when it allocates a
 * counter): room for FMT_MAX_PMCID counters, the pmcids a PERIOD can name.
 */
#define BLOB_ALLOC_MAX		(2 * FMT_MAX_PMCID)

struct blob_alloc {
	uint32_t	cpu;		/* the ring it came from (JSON's "cpu") */
	uint32_t	len;
	uint8_t		rec[PMCRING_SIZE_PMCALLOCATEDYN];
};

struct blob {
	struct blob_stream	s[FMT_MAX_STREAMS];
	/* the segment being queued: its batch, number and first byte */
	const struct out_batch	*seg_b;
	uint64_t		seg_gen;
	unsigned int		seg;
	uint64_t		seg_start;
	char			dir[4096];
	/*
	 * The last PERIOD of each ring and pmcid (0: none recorded): with
	 * --blob-json the "period" of the callchains that follow, in a
	 * binary set the PERIODs a roll repeats
	 */
	struct fmt_period_last	last;
	/* the counters allocated so far, in the order they came */
	struct blob_alloc	alloc[BLOB_ALLOC_MAX];
	unsigned int		nr_alloc;
	char			*alloc_json;	/* FMT_JSON_MAX: one as JSON */
	bool			alloc_warned;
	bool			repeat_warned;
	/* per message, fixed at the start (blob_begin()) */
	unsigned int		room_puts;	/* blob_record()'s reserve */
	size_t			room_stage;
	bool			rolls;		/* by size or time */
	bool			need_rt;	/* realtime: TIMING, JSON, rolls */
	/*
	 * One binary stream, no rolls: the types whose messages need
	 * nothing but blob_msg() (all it takes but the allocations and
	 * PERIOD, which blob_record() keeps for rolls)
	 */
	bool			plain;
	uint64_t		plain_types;
};

/* The segment of @b being queued (0 in a batch not seen yet). */
static unsigned int blob_seg(struct blob *bl, const struct out_batch *b)
{
	if (bl->seg_b != b || bl->seg_gen != b->gen) {
		bl->seg_b = b;
		bl->seg_gen = b->gen;
		bl->seg = 0;
		bl->seg_start = b->bytes;
	}
	return bl->seg;
}

static int mkdir_p(char *path)
{
	char *p;

	for (p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			*p = '/';
			return -errno;
		}
		*p = '/';
	}
	if (mkdir(path, 0755) && errno != EEXIST)
		return -errno;
	return 0;
}

static void blob_close_set(struct blob_stream *bs)
{
	unsigned int i;

	for (i = 0; i < BLOB_NR_FILES; i++)
		out_file_close(&bs->f[i]);
}

/*
 * Create the files of stream @i's set with time @t, none of which may
 * exist: -EEXIST (and nothing left behind) if one does.
 */
static int blob_create_set(struct fmt_writer *w, unsigned int i, int64_t t)
{
	struct blob *bl = w->priv;
	struct blob_stream *bs = &bl->s[i];
	char path[4352];
	unsigned int k;
	int err = 0;

	for (k = 0; k < BLOB_NR_FILES && !err; k++) {
		if (k == BLOB_TIM && !w->o.blob_timing)
			continue;
		snprintf(path, sizeof(path), "%s/%s.%s.%lld", bl->dir,
			 w->o.streams[i].name, blob_ext[k], (long long)t);
		err = out_file_open(&bs->f[k], path, true);
	}
	if (!err)
		return 0;
	for (k = 0; k < BLOB_NR_FILES; k++) {
		if (bs->f[k].fd >= 0)
			unlink(bs->f[k].path);	/* ours: O_EXCL made it */
		out_file_close(&bs->f[k]);
	}
	return err;
}

/*
 * The highest $t of a file of stream @name in @dir (NAME.EXT.$t), -1 if
 * none: a set that rolled faster than once a second runs ahead of the
 * clock, and a later run into the same directory starts after it.
 */
static int64_t blob_last_t(const char *dir, const char *name)
{
	size_t nl = strlen(name);
	struct dirent *e;
	int64_t last = -1;
	DIR *d = opendir(dir);

	if (!d)
		return -1;
	while ((e = readdir(d))) {
		const char *dot;
		char *end;
		long long v;

		if (strncmp(e->d_name, name, nl) || e->d_name[nl] != '.')
			continue;
		dot = strrchr(e->d_name + nl + 1, '.');
		if (!dot || dot == e->d_name + nl + 1 || !dot[1])
			continue;
		errno = 0;
		v = strtoll(dot + 1, &end, 10);
		if (!errno && !*end && v > last)
			last = v;
	}
	closedir(d);
	return last;
}

/*
 * Open the file set of stream @i with time @t, or the first later one
 * whose names are all free, and queue the magics.  Files are created with
 * O_EXCL: a run that starts in the second of an earlier one (or rolls
 * into it) gets the next free $t, max(time(NULL), $t + 1), instead of
 * overwriting that run's set; when a name is taken the search starts
 * after the highest $t the stream has in the directory (blob_last_t()).
 */
static int blob_open_set(struct fmt_writer *w, struct out_batch *b,
			 unsigned int i, int64_t t)
{
	struct blob *bl = w->priv;
	struct blob_stream *bs = &bl->s[i];
	int64_t t0 = t, now;
	unsigned int k, tries;
	int err;

	for (tries = 1; ; tries++) {
		err = blob_create_set(w, i, t);
		if (err != -EEXIST || tries == BLOB_NAME_TRIES)
			break;
		now = (int64_t)time(NULL);
		t = now > t ? now : t + 1;
		if (tries == 1) {
			int64_t last = blob_last_t(bl->dir,
						   w->o.streams[i].name);

			if (last >= t)
				t = last + 1;
		}
	}
	if (err == -EEXIST)
		fprintf(stderr, "pmcring: %s/%s.*: no free name for a file "
			"set: $t %lld to %lld are taken (%u tried)\n", bl->dir,
			w->o.streams[i].name, (long long)t0, (long long)t,
			tries);
	if (err)
		return err;
	for (k = 0; k < BLOB_NR_FILES; k++) {
		if (bs->f[k].fd < 0)
			continue;
		err = out_put(b, &bs->f[k], OUT_PHASE(blob_seg(bl, b), OUT_DATA),
			      blob_magic[k], 8);
		if (err)
			return err;
	}
	bs->t = t;
	bs->msgs = 0;
	bs->head = 0;
	return 0;
}

static int blob_begin(struct fmt_writer *w, struct out_batch *b)
{
	struct blob *bl = calloc(1, sizeof(*bl));
	unsigned int i, k;
	int err;

	if (!bl)
		return -ENOMEM;
	for (i = 0; i < FMT_MAX_STREAMS; i++)
		for (k = 0; k < BLOB_NR_FILES; k++)
			bl->s[i].f[k].fd = -1;
	w->priv = bl;
	if ((size_t)snprintf(bl->dir, sizeof(bl->dir), "%s/%s", w->o.path,
			     w->o.container ? w->o.container : "pmcring") >=
	    sizeof(bl->dir))
		return -ENAMETOOLONG;
	/*
	 * The directory itself, and its container, but not its parents, as
	 * a pmclog or barman file is not made in a directory that is not
	 * there (a typo in -o would make a whole tree).
	 */
	if (mkdir(w->o.path, 0755) && errno != EEXIST)
		return -errno;
	err = mkdir_p(bl->dir);
	if (err)
		return err;
	for (i = 0; i < w->o.nr_streams; i++) {
		err = blob_open_set(w, b, i, w->o.start_rt.tv_sec);
		if (err)
			return err;
	}
	/*
	 * Per stream: 3 slab ranges to end the segment, 4 magics on a roll,
	 * the DAT range, 3 full index slabs, and 3 slab ranges for
	 * blob_flush(); index slabs.
	 */
	bl->room_puts = 14 * w->o.nr_streams + 1;
	bl->room_stage = (w->o.blob_json ? FMT_JSON_MAX : 0) +
			 w->o.nr_streams * 25 * (BLOB_SLAB_ENTRIES + 1);
	bl->rolls = w->o.roll_bytes || w->o.roll_secs;
	bl->need_rt = w->o.blob_timing || w->o.blob_json || bl->rolls;
	bl->plain = w->o.nr_streams == 1 && !w->o.blob_json && !bl->rolls;
	bl->plain_types = w->o.streams[0].types &
			  ~(PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATE) |
			    PMCRING_TYPE_BIT(PMCRING_TYPE_PMCALLOCATEDYN) |
			    PMCRING_TYPE_BIT(PMCRING_TYPE_PERIOD));
	return 0;
}

/* Queue the entries of index file @k's slab that are not queued yet. */
static int blob_slab_put(struct blob *bl, struct blob_stream *bs,
			 struct out_batch *b, unsigned int k)
{
	return out_slab_put(&bs->slab[k], b, &bs->f[k],
			    OUT_PHASE(blob_seg(bl, b), blob_phase[k]));
}

/*
 * Room for one entry of index file @k in @b (out_batch_room() kept it),
 * NULL and the error in *err if there is none.  The entry is queued later,
 * with the rest of its slab.
 */
static inline void *blob_entry_alloc(struct blob *bl, struct blob_stream *bs,
				     struct out_batch *b, unsigned int k,
				     int *err)
{
	struct out_slab *sl = &bs->slab[k];

	if (!out_slab_has_room(sl, b)) {
		*err = out_slab_new(sl, b, &bs->f[k],
				    OUT_PHASE(blob_seg(bl, b), blob_phase[k]),
				    blob_entry[k], BLOB_SLAB_ENTRIES);
		if (*err)
			return NULL;
	}
	return out_slab_take(sl, blob_entry[k]);
}

/*
 * out_put() with its common case inline: the message follows on, in DAT
 * and in memory, from DAT's last range of this batch (JSON messages are
 * made one after the other in the arena).
 */
static inline int blob_put(struct out_batch *b, struct out_file *f,
			   unsigned int phase, const void *p, size_t len)
{
	struct out_put *last;

	if (f->last_b == b && f->last_gen == b->gen &&
	    f->last_put < b->nr_puts) {
		last = &b->puts[f->last_put];
		if (last->f == f && last->phase == phase && !last->ring &&
		    last->off + last->len == f->off &&
		    (const char *)last->p + last->len == (const char *)p) {
			last->len += len;
			b->bytes += len;
			f->off += len;
			return 0;
		}
	}
	return out_put(b, f, phase, p, len);
}

/*
 * Does stream @i take records of @type?  A stream of CALLCHAINs takes
 * their PERIODs too, or its samples would have none.
 */
static bool blob_wants(const struct fmt_writer *w, unsigned int i,
		       uint32_t type)
{
	uint64_t types = w->o.streams[i].types;

	if (type == PMCRING_TYPE_PERIOD &&
	    (types & PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN)))
		return true;
	return types & PMCRING_TYPE_BIT(type);
}

/*
 * One message of @len bytes at @msg into stream @bs: its OFFSET, TYPE and
 * TIMING entries and its DAT bytes (in @data_phase), in the arena
 * (@in_arena: JSON, a repeated PERIOD) or in a ring (binary messages are
 * the ring's bytes, short runs copied).  Inline: blob_record()'s
 * per-message path.
 */
static inline __attribute__((always_inline)) int
blob_msg(struct fmt_writer *w, struct out_batch *b, struct blob_stream *bs,
	 const void *msg, size_t len, bool in_arena, unsigned int data_phase,
	 const struct timespec *rt)
{
	struct blob *bl = w->priv;
	uint64_t *off, *tim;
	uint8_t *typ;
	int err;

	off = blob_entry_alloc(bl, bs, b, BLOB_OFF, &err);
	typ = off ? blob_entry_alloc(bl, bs, b, BLOB_TYP, &err) : NULL;
	tim = typ && w->o.blob_timing ?
	      blob_entry_alloc(bl, bs, b, BLOB_TIM, &err) : NULL;
	if (!off || !typ || (w->o.blob_timing && !tim))
		return err;
	*off = htole64(bs->f[BLOB_DAT].off);
	*typ = w->o.blob_json ? 'j' : 's';
	if (tim) {
		tim[0] = htole64((uint64_t)rt->tv_sec);
		tim[1] = htole64((uint64_t)rt->tv_nsec / 1000);
	}
	err = in_arena ? blob_put(b, &bs->f[BLOB_DAT], data_phase, msg, len) :
	      out_put_ring_inline(b, &bs->f[BLOB_DAT], data_phase, msg, len);
	if (err)
		return err;
	bs->msgs++;
	b->items++;
	return 0;
}

/* Keep allocation record @r for the sets rolls open (blob_repeat()). */
static void blob_keep_alloc(struct blob *bl, const struct fmt_rec *r)
{
	uint32_t pmcid = fmt_get32(r->data, 16);
	struct blob_alloc *a;
	unsigned int k;

	if (r->len != (r->type == PMCRING_TYPE_PMCALLOCATE ?
		       PMCRING_SIZE_PMCALLOCATE : PMCRING_SIZE_PMCALLOCATEDYN))
		return;
	for (k = 0; k < bl->nr_alloc; k++)
		if (PMCRING_HEADER_TYPE(fmt_get32(bl->alloc[k].rec, 0)) ==
		    r->type && fmt_get32(bl->alloc[k].rec, 16) == pmcid)
			break;
	if (k == bl->nr_alloc) {
		if (k == BLOB_ALLOC_MAX) {
			if (!bl->alloc_warned)
				fprintf(stderr, "pmcring: %s: counter %u: more "
					"than %u allocation records kept: a "
					"rolled set does not repeat its "
					"allocation (report on it alone names "
					"it pmc%u)\n", bl->dir, pmcid,
					BLOB_ALLOC_MAX, pmcid);
			bl->alloc_warned = true;
			return;
		}
		bl->nr_alloc++;
	}
	/* a counter allocated again keeps its place, with its new record */
	a = &bl->alloc[k];
	a->cpu = r->cpu;
	a->len = r->len;
	memcpy(a->rec, r->data, r->len);
}

/*
 * Kept allocation @a as the message of a set rolled at @r, @rt: a copy
 * stamped with @r's timestamp, or with --blob-json its JSON object in
 * bl->alloc_json.  Its length, or 0 without memory for the JSON.
 */
static size_t blob_alloc_msg(struct fmt_writer *w, const struct blob_alloc *a,
			     const struct fmt_rec *r, const struct timespec *rt,
			     uint8_t *copy)
{
	struct blob *bl = w->priv;

	memcpy(copy, a->rec, a->len);
	fmt_put64(copy, 8, r->ts);
	if (!w->o.blob_json)
		return a->len;
	if (!bl->alloc_json)
		bl->alloc_json = malloc(FMT_JSON_MAX);
	if (!bl->alloc_json)
		return 0;
	return fmt_rec_json(bl->alloc_json, FMT_JSON_MAX, copy, a->len, a->cpu,
			    rt);
}

/*
 * A set opened by a roll for stream @i starts with the allocation records
 * of the counters allocated so far that the stream takes, in the order
 * they came, then (binary: a JSON callchain carries its "period") one
 * PERIOD message for each ring and pmcid with a last PERIOD, ring by ring,
 * if the stream takes PERIOD.  All are stamped with the time of the
 * record that rolled the set (@r, @rt), so that report on that set alone
 * names its counters and weighs the samples before the next PERIOD of
 * their ring by their period, not the fixed one or 1.  The batch is empty
 * at a roll; should the repeats not fit in it (thousands of rings and
 * pmcids with periods), the set repeats none and a warning says so.
 */
static int blob_repeat(struct fmt_writer *w, struct out_batch *b,
		       unsigned int i, const struct fmt_rec *r,
		       const struct timespec *rt)
{
	struct blob *bl = w->priv;
	struct blob_stream *bs = &bl->s[i];
	const struct fmt_period_last *t = &bl->last;
	bool json = w->o.blob_json;
	size_t k, n = 0, na = 0, abytes = 0, slabs, nr = 0, len;
	uint8_t *rec, tmp[PMCRING_SIZE_PMCALLOCATEDYN];
	unsigned int phase = OUT_PHASE(blob_seg(bl, b), OUT_DATA);
	int err;

	if (!json && blob_wants(w, i, PMCRING_TYPE_PERIOD))
		nr = (size_t)t->nr_rings * FMT_MAX_PMCID;
	for (k = 0; k < nr; k++)
		n += t->v[k] != 0;
	for (k = 0; k < bl->nr_alloc; k++) {
		if (!blob_wants(w, i, PMCRING_HEADER_TYPE(
					fmt_get32(bl->alloc[k].rec, 0))))
			continue;
		len = blob_alloc_msg(w, &bl->alloc[k], r, rt, tmp);
		if (!len)
			return -ENOMEM;
		abytes += len;
		na++;
	}
	if (!n && !na)
		return 0;
	/*
	 * blob_record()'s own reserve, and the repeats: their index slabs,
	 * a range of each and a DAT range after each (a slab taken between
	 * two repeats breaks their run in the arena)
	 */
	slabs = (n + na) / BLOB_SLAB_ENTRIES + 2;
	if (!out_batch_room(b, 14 * w->o.nr_streams + 1 +
			       6 * (unsigned int)slabs + 2,
			    w->o.nr_streams * 25 * (BLOB_SLAB_ENTRIES + 1) +
			    n * PMCRING_SIZE_PERIOD + abytes +
			    slabs * 25 * (BLOB_SLAB_ENTRIES + 1))) {
		if (!bl->repeat_warned)
			fprintf(stderr, "pmcring: %s: %zu allocation records "
				"and %zu PERIODs in force do not fit a batch: "
				"a rolled set repeats none (report on it alone "
				"names its events pmcN and weighs its samples "
				"before their ring's next PERIOD by the fixed "
				"period or 1)\n", bl->dir, na, n);
		bl->repeat_warned = true;
		return 0;
	}
	for (k = 0; k < bl->nr_alloc; k++) {
		const struct blob_alloc *a = &bl->alloc[k];

		if (!blob_wants(w, i, PMCRING_HEADER_TYPE(fmt_get32(a->rec,
								    0))))
			continue;
		len = blob_alloc_msg(w, a, r, rt, tmp);
		rec = len ? out_alloc_bytes(b, len) : NULL;
		if (!rec)
			return -ENOBUFS;
		memcpy(rec, json ? (const void *)bl->alloc_json : tmp, len);
		err = blob_msg(w, b, bs, rec, len, true, phase, rt);
		if (err)
			return err;
	}
	for (k = 0; k < nr; k++) {
		if (!t->v[k])
			continue;
		rec = out_alloc(b, PMCRING_SIZE_PERIOD);
		if (!rec)
			return -ENOBUFS;
		memset(rec, 0, PMCRING_SIZE_PERIOD);
		fmt_put32(rec, 0, PMCRING_HEADER(PMCRING_TYPE_PERIOD,
						 PMCRING_SIZE_PERIOD));
		fmt_put64(rec, 8, r->ts);
		fmt_put32(rec, 16, (uint32_t)(k % FMT_MAX_PMCID));	/* pmcid */
		fmt_put32(rec, 20, (uint32_t)(k / FMT_MAX_PMCID));	/* ring */
		fmt_put64(rec, 24, t->v[k]);
		err = blob_msg(w, b, bs, rec, PMCRING_SIZE_PERIOD, true, phase,
			       rt);
		if (err)
			return err;
	}
	bs->head = bs->msgs;
	return 0;
}

static bool blob_must_roll(const struct fmt_writer *w, unsigned int i,
			   size_t msg_len, const struct timespec *rt)
{
	const struct blob_stream *bs = &((struct blob *)w->priv)->s[i];

	/* one message of its own first, the repeats aside */
	if (bs->msgs <= bs->head)
		return false;
	if (w->o.roll_bytes && bs->f[BLOB_DAT].off + msg_len > w->o.roll_bytes)
		return true;
	return w->o.roll_secs &&
	       (uint64_t)rt->tv_sec >= bs->first_sec + w->o.roll_secs;
}

/*
 * Close stream @i's files and open the next set with a later $t, for @r
 * at @rt; it starts with the counters allocated and (binary) the PERIODs
 * in force that the stream takes.
 */
static int blob_roll(struct fmt_writer *w, struct out_batch *b,
		     unsigned int i, const struct fmt_rec *r,
		     const struct timespec *rt)
{
	struct blob_stream *bs = &((struct blob *)w->priv)->s[i];
	int64_t t = rt->tv_sec > bs->t ? rt->tv_sec : bs->t + 1;
	int err;

	blob_close_set(bs);
	/* nothing is queued (blob_record() waits for an empty batch) */
	memset(bs->slab, 0, sizeof(bs->slab));
	err = blob_open_set(w, b, i, t);
	return err ? err : blob_repeat(w, b, i, r, rt);
}

size_t fmt_blob_message(struct fmt_period_last *last, bool json,
			const struct fmt_rec *r, const struct timespec *rt,
			char *buf, const void **msg)
{
	uint64_t *l;
	size_t len;

	*msg = r->data;
	if (!json)
		return r->len;
	if (r->type == PMCRING_TYPE_PERIOD) {
		l = r->len == PMCRING_SIZE_PERIOD ?
		    fmt_period_last(last, r->cpu, fmt_get32(r->data, 16)) : NULL;
		if (l)
			*l = fmt_get64(r->data, 24);
		return 0;
	}
	len = fmt_rec_json(buf, FMT_JSON_MAX, r->data, r->len, r->cpu, rt);
	if (r->type == PMCRING_TYPE_CALLCHAIN) {
		l = fmt_period_last(last, r->cpu, fmt_get32(r->data, 24));
		len = fmt_json_add_u64(buf, len, FMT_JSON_MAX, ",\"period\":",
				       l ? *l : 0);
	}
	*msg = buf;
	return len;
}

static int blob_flush(struct fmt_writer *w, struct out_batch *b);

static int blob_record(struct fmt_writer *w, struct out_batch *b,
		       const struct fmt_rec *r)
{
	struct blob *bl = w->priv;
	struct timespec rt;
	const void *msg = r->data;
	size_t len = r->len;
	bool roll = false, rolls = bl->rolls;
	unsigned int i, data_phase;
	char *json = NULL;
	int err;

	if (!out_batch_room(b, bl->room_puts, bl->room_stage))
		return -EAGAIN;
	/*
	 * A segment's messages count only once its OFFSET is written after
	 * them: end it after BLOB_SEG_BYTES, so a disk that fills up in the
	 * middle of a large batch keeps all but the last segment of it.
	 */
	blob_seg(bl, b);
	if (b->bytes - bl->seg_start >= BLOB_SEG_BYTES) {
		err = blob_flush(w, b);
		if (err)
			return err;
		bl->seg++;
		bl->seg_start = b->bytes;
	}
	data_phase = OUT_PHASE(blob_seg(bl, b), OUT_DATA);
	/* realtime: for TIMING, JSON and rolls only (a division per message) */
	if (bl->need_rt)
		fmt_realtime(&w->o, r->ts, &rt);
	else
		rt = (struct timespec){ 0 };
	/*
	 * The common message (a sample, a switch: what the rings hold most)
	 * of binary sets that do not roll: one stream's, as it is, none of
	 * the bookkeeping below (JSON, rolls, allocations, PERIODs).
	 */
	if (bl->plain && (bl->plain_types & PMCRING_TYPE_BIT(r->type)))
		return blob_msg(w, b, &bl->s[0], msg, len, false, data_phase,
				&rt);
	if (w->o.blob_json) {	/* made in the arena: no copy */
		json = out_alloc_bytes(b, FMT_JSON_MAX);
		len = fmt_blob_message(&bl->last, true, r, &rt, json, &msg);
		out_trim(b, json, len);
		if (!len)	/* a PERIOD: its callchains carry it */
			return 0;
	}
	for (i = 0; rolls && i < w->o.nr_streams; i++)
		if (blob_wants(w, i, r->type) && blob_must_roll(w, i, len, &rt))
			roll = true;
	/*
	 * Old files are closed on a roll: nothing may be queued or in flight
	 * for them (the consumer sets b->landed once all is on disk).
	 */
	if (roll && (b->nr_puts || !b->landed)) {
		if (json)
			out_trim(b, json, 0);
		return -EAGAIN;
	}
	for (i = 0; i < w->o.nr_streams; i++) {
		struct blob_stream *bs = &bl->s[i];

		if (!blob_wants(w, i, r->type))
			continue;
		if (roll && blob_must_roll(w, i, len, &rt)) {
			err = blob_roll(w, b, i, r, &rt);
			if (err)
				return err;
		}
		if (rolls && bs->msgs == bs->head)
			bs->first_sec = (uint64_t)rt.tv_sec;
		err = blob_msg(w, b, bs, msg, len, json, data_phase, &rt);
		if (err)
			return err;
	}
	/* a counter: allocated from here on, for the sets rolls open */
	if (r->type == PMCRING_TYPE_PMCALLOCATE ||
	    r->type == PMCRING_TYPE_PMCALLOCATEDYN)
		blob_keep_alloc(bl, r);
	/* a binary PERIOD: in force from here, for the sets rolls open */
	if (r->type == PMCRING_TYPE_PERIOD && r->len == PMCRING_SIZE_PERIOD) {
		uint64_t *last = fmt_period_last(&bl->last, r->cpu,
						 fmt_get32(r->data, 16));

		if (last)
			*last = fmt_get64(r->data, 24);
	}
	return 0;
}

/*
 * Before the batch runs, or at the end of a segment: queue the index
 * entries of its messages not queued yet, in the segment being queued.
 */
static int blob_flush(struct fmt_writer *w, struct out_batch *b)
{
	struct blob *bl = w->priv;
	unsigned int i, k;
	int err;

	for (i = 0; i < w->o.nr_streams; i++)
		for (k = BLOB_OFF; k < BLOB_NR_FILES; k++) {
			err = blob_slab_put(bl, &bl->s[i], b, k);
			if (err)
				return err;
		}
	return 0;
}

static int blob_end(struct fmt_writer *w, struct out_batch *b, uint64_t ts)
{
	(void)w;
	(void)b;
	(void)ts;
	return 0;
}

/* Length of the message at @p with at most @max bytes, or 0 if corrupt. */
static size_t blob_msg_len(const uint8_t *p, size_t max, char type);

/* Bytes read to find where a message ends: the largest message. */
#define BLOB_MSG_MAX \
	(FMT_JSON_MAX > PMCRING_RECORD_MAX ? FMT_JSON_MAX : PMCRING_RECORD_MAX)

static int blob_pread(int fd, void *p, size_t len, uint64_t off)
{
	ssize_t n = pread(fd, p, len, (off_t)off);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EIO;
}

/*
 * Where message @i of a set ends in DAT (@dat_len bytes), from its OFFSET
 * entry, its TYPE byte and its own length; 0 if it is not whole.  @fd:
 * the set's files opened for reading (the writer's are write-only).
 */
static uint64_t blob_msg_end(const int fd[BLOB_NR_FILES], uint64_t i,
			     uint64_t dat_len, uint8_t *buf)
{
	uint64_t o;
	size_t ml, max;
	char type;

	if (blob_pread(fd[BLOB_OFF], &o, 8, 8 + 8 * i) ||
	    blob_pread(fd[BLOB_TYP], &type, 1, 8 + i))
		return 0;
	o = le64toh(o);
	if (o < 8 || o >= dat_len)
		return 0;
	max = dat_len - o < BLOB_MSG_MAX ? (size_t)(dat_len - o) : BLOB_MSG_MAX;
	if (blob_pread(fd[BLOB_DAT], buf, max, o))
		return 0;
	ml = blob_msg_len(buf, max, type);
	return ml ? o + ml : 0;
}

/* The last message all files index ends DAT: where, and how many. */
static uint64_t blob_last_end(const struct blob_stream *bs, uint64_t *n,
			      uint64_t dat_len, uint8_t *buf)
{
	static const unsigned int rd[] = { BLOB_DAT, BLOB_OFF, BLOB_TYP };
	int fd[BLOB_NR_FILES] = { -1, -1, -1, -1 };
	uint64_t end = 0;
	unsigned int k;

	for (k = 0; k < 3; k++) {
		fd[rd[k]] = open(bs->f[rd[k]].path, O_RDONLY | O_CLOEXEC);
		if (fd[rd[k]] < 0)
			*n = 0;		/* cannot tell: keep no message */
	}
	while (*n && !(end = blob_msg_end(fd, *n - 1, dat_len, buf)))
		(*n)--;
	for (k = 0; k < 3; k++)
		if (fd[rd[k]] >= 0)
			close(fd[rd[k]]);
	return *n ? end : 8;
}

/*
 * After a write failed part-way (a full disk, EFBIG): cut the open set of
 * @bs back to the messages every file of it holds whole.  A segment's
 * writes run DAT, TIMING and TYPE, then OFFSET, so a failure leaves DAT
 * bytes no OFFSET entry covers yet, or a TIMING, TYPE or OFFSET file that
 * ends in the middle of an entry (TIMING grows 16 bytes a message:
 * LDMS's reader then refuses the set).  The files are read, not the
 * writer's counts, as the failed batch may have put any part of its
 * segments on disk.  A set whose magics are not all whole holds nothing
 * and is cut to empty files.
 */
static int blob_cut_set(const struct fmt_writer *w, struct blob_stream *bs,
			uint8_t *buf)
{
	uint64_t len[BLOB_NR_FILES] = { 0 }, keep[BLOB_NR_FILES], n;
	struct stat st;
	unsigned int k;
	int err = 0;

	for (k = 0; k < BLOB_NR_FILES; k++) {
		if (bs->f[k].fd < 0)
			continue;
		if (fstat(bs->f[k].fd, &st))
			return -errno;
		len[k] = (uint64_t)st.st_size;
	}
	n = len[BLOB_OFF] >= 8 ? (len[BLOB_OFF] - 8) / 8 : 0;
	if (len[BLOB_TYP] < 8 + n)
		n = len[BLOB_TYP] >= 8 ? len[BLOB_TYP] - 8 : 0;
	if (w->o.blob_timing && len[BLOB_TIM] < 8 + 16 * n)
		n = len[BLOB_TIM] >= 8 ? (len[BLOB_TIM] - 8) / 16 : 0;
	keep[BLOB_DAT] = blob_last_end(bs, &n, len[BLOB_DAT], buf);
	keep[BLOB_OFF] = 8 + 8 * n;
	keep[BLOB_TIM] = 8 + 16 * n;
	keep[BLOB_TYP] = 8 + n;
	/*
	 * A file without its whole magic: the set has no message, and empty
	 * files would fail LDMS's magic check.  The set goes (ours: O_EXCL).
	 */
	for (k = 0; k < BLOB_NR_FILES; k++)
		if (bs->f[k].fd >= 0 && len[k] < 8)
			break;
	if (k < BLOB_NR_FILES) {
		for (k = 0; k < BLOB_NR_FILES; k++)
			if (bs->f[k].fd >= 0 && unlink(bs->f[k].path) &&
			    !err)
				err = -errno;
		return err;
	}
	for (k = 0; k < BLOB_NR_FILES; k++) {
		if (bs->f[k].fd < 0 || len[k] <= keep[k])
			continue;
		if (ftruncate(bs->f[k].fd, (off_t)keep[k]) && !err)
			err = -errno;
	}
	return err;
}

static int blob_abort(struct fmt_writer *w)
{
	struct blob *bl = w->priv;
	uint8_t *buf;
	unsigned int i;
	int err = 0, e;

	if (!bl)
		return 0;
	buf = malloc(BLOB_MSG_MAX);
	if (!buf)
		return -ENOMEM;
	for (i = 0; i < w->o.nr_streams; i++) {
		if (bl->s[i].f[BLOB_DAT].fd < 0)
			continue;
		e = blob_cut_set(w, &bl->s[i], buf);
		if (e && !err)
			err = e;
	}
	free(buf);
	return err;
}

static void blob_free(struct fmt_writer *w)
{
	struct blob *bl = w->priv;
	unsigned int i;

	if (!bl)
		return;
	for (i = 0; i < FMT_MAX_STREAMS; i++)
		blob_close_set(&bl->s[i]);
	free(bl->last.v);
	free(bl->alloc_json);
	free(bl);
}

/*
 * The consumer's direct path (fmt_direct()) for the plain messages of a
 * plain set without realtime: blob_record()'s plain case without the call
 * through the writer's ops; 1 (the general way) at a segment's end or a
 * batch the set has not seen or without room.
 */
static int blob_put_plain(struct fmt_writer *w, struct out_batch *b,
			  const void *data, uint32_t len)
{
	static const struct timespec rt0;
	struct blob *bl = w->priv;
	struct blob_stream *bs = &bl->s[0];
	struct out_slab *so = &bs->slab[BLOB_OFF], *st = &bs->slab[BLOB_TYP];
	uint64_t *off;
	uint8_t *typ;
	int err;

	if (!out_batch_room(b, bl->room_puts, bl->room_stage) ||
	    bl->seg_b != b || bl->seg_gen != b->gen ||
	    b->bytes - bl->seg_start >= BLOB_SEG_BYTES)
		return 1;
	/*
	 * blob_msg() when both slabs have room, with what a plain set
	 * without realtime fixes: no TIMING, binary ('s') messages (the
	 * same entries and bytes, in the same order).
	 */
	if (!so->left || !st->left || so->b != b || st->b != b ||
	    so->gen != b->gen || st->gen != b->gen)
		return blob_msg(w, b, bs, data, len, false,
				OUT_PHASE(bl->seg, OUT_DATA), &rt0);
	off = out_slab_take(so, blob_entry[BLOB_OFF]);
	typ = out_slab_take(st, blob_entry[BLOB_TYP]);
	*off = htole64(bs->f[BLOB_DAT].off);
	*typ = 's';
	err = out_put_ring_inline(b, &bs->f[BLOB_DAT],
				  OUT_PHASE(bl->seg, OUT_DATA), data, len);
	if (err)
		return err;
	bs->msgs++;
	b->items++;
	return 0;
}

static bool blob_direct(struct fmt_writer *w, struct fmt_direct *d)
{
	struct blob *bl = w->priv;

	if (!bl || !bl->plain || bl->need_rt)
		return false;
	d->types = bl->plain_types;
	d->f = NULL;
	d->put = blob_put_plain;
	return true;
}

const struct fmt_ops fmt_blob_ops = {
	.begin = blob_begin,
	.record = blob_record,
	.direct = blob_direct,
	.flush = blob_flush,
	.end = blob_end,
	.abort = blob_abort,
	.free = blob_free,
};

/* ---- reader ---- */

/* Value of "key":<number> in a flat JSON object, or 0. */
static uint64_t json_num(const char *js, size_t len, const char *key)
{
	char pat[32];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = memmem(js, len, pat, strlen(pat));
	return p ? strtoull(p + strlen(pat), NULL, 10) : 0;
}

static uint32_t blob_json_type(const char *js, size_t len)
{
	char name[32];
	const char *p = memmem(js, len, "\"type\":\"", 8), *e;

	if (!p)
		return 0;
	p += 8;
	e = memchr(p, '"', len - (size_t)(p - js));
	if (!e || (size_t)(e - p) >= sizeof(name))
		return 0;
	memcpy(name, p, (size_t)(e - p));
	name[e - p] = '\0';
	return fmt_type_lookup(name) < 0 ? 0 : (uint32_t)fmt_type_lookup(name);
}

static size_t blob_msg_len(const uint8_t *p, size_t max, char type)
{
	const uint8_t *nul;
	uint32_t l;

	if (type == 'j') {
		nul = memchr(p, '\0', max);
		return nul ? (size_t)(nul - p) + 1 : 0;
	}
	return fmt_rec_check(p, max, &l) == 0 ? l : 0;
}

/*
 * A --blob-json message (NUL included in @len) is one JSON object of
 * scalars (fmt_rec_json()): 0, or -EINVAL if bytes in it were damaged.
 */
static int blob_json_check(const char *p, size_t len)
{
	struct json_tokener *tok;
	struct json_object *o;
	int err = -EINVAL;

	while (len && (p[len - 1] == 0 || p[len - 1] == ' ' ||
		       p[len - 1] == '\n'))
		len--;
	if (!len || len > INT32_MAX || p[0] != '{')
		return -EINVAL;
	tok = json_tokener_new_ex(2);	/* an object of scalars */
	if (!tok)
		return -ENOMEM;
	json_tokener_set_flags(tok, JSON_TOKENER_STRICT);
	o = json_tokener_parse_ex(tok, p, (int)len);
	if (o && json_tokener_get_error(tok) == json_tokener_success &&
	    json_tokener_get_parse_end(tok) == len &&
	    json_object_is_type(o, json_type_object))
		err = 0;
	json_object_put(o);
	json_tokener_free(tok);
	return err;
}

/*
 * The item of the record of @ml bytes at @data, in message @i of set @s:
 * checked (JSON), its fields read, handed to @cb.
 */
static int blob_item(const struct fmt_blob_set *s, struct fmt_item *it,
		     const uint8_t *data, size_t ml, size_t i, fmt_item_cb cb,
		     void *ctx)
{
	int rc;

	if (it->btype == 'j') {
		rc = blob_json_check((const char *)data, ml);
		if (rc) {
			fmt_set_bad_reason("not a JSON object of scalars");
			return rc;
		}
	}
	it->data = data;
	it->len = ml;
	it->cpu = -1;
	if (s->tim) {
		uint64_t usec = le64toh(fmt_get64(s->tim, 16 + 16 * i));

		it->has_rt = true;
		it->rt.tv_sec = (time_t)(le64toh(fmt_get64(s->tim, 8 + 16 * i)) +
					 usec / 1000000);
		it->rt.tv_nsec = (long)(usec % 1000000) * 1000;
	}
	if (it->btype == 'j') {
		it->ts = json_num(it->data, ml, "ts");
		it->cpu = (int32_t)json_num(it->data, ml, "cpu");
		it->type = blob_json_type(it->data, ml);
	} else {
		it->type = PMCRING_HEADER_TYPE(fmt_get32(it->data, 0));
		it->ts = fmt_get64(it->data, 8);
		if (it->type == PMCRING_TYPE_CALLCHAIN)
			it->cpu = (int32_t)(fmt_get32(it->data, 28) >> 16);
	}
	return cb(it, ctx);
}

int fmt_blob_read(const struct fmt_blob_set *s, fmt_item_cb cb, void *ctx,
		  size_t *bad_off)
{
	const uint8_t *dat = s->dat;
	size_t n, i, o, next, mo, ml = 0;
	bool multi = false, one;	/* multi: a message held several records */
	struct fmt_item it;
	int state = FMT_END_CLEAN, rc;

	*bad_off = 0;
	fmt_set_bad_reason("not a blob file set (magic)");
	if (!dat || s->dat_len < 8 || memcmp(dat, blob_magic[BLOB_DAT], 8) ||
	    !s->off || s->off_len < 8 ||
	    memcmp(s->off, blob_magic[BLOB_OFF], 8) ||
	    (s->typ && (s->typ_len < 8 ||
			memcmp(s->typ, blob_magic[BLOB_TYP], 8))) ||
	    (s->tim && (s->tim_len < 8 ||
			memcmp(s->tim, blob_magic[BLOB_TIM], 8))))
		return -EINVAL;
	n = (s->off_len - 8) / 8;
	if ((s->off_len - 8) % 8)
		state = FMT_END_TRUNCATED;
	/* The index files are written one after the other: use what all hold. */
	if (s->typ && s->typ_len - 8 < n) {
		n = s->typ_len - 8;
		state = FMT_END_TRUNCATED;
	}
	if (s->tim && (s->tim_len - 8) / 16 < n) {
		n = (s->tim_len - 8) / 16;
		state = FMT_END_TRUNCATED;
	}
	for (i = 0; i < n; i++) {
		o = le64toh(fmt_get64(s->off, 8 + 8 * i));
		next = i + 1 < n ? le64toh(fmt_get64(s->off, 16 + 8 * i)) :
				   s->dat_len;
		if (o < 8 || next > s->dat_len || next <= o) {
			*bad_off = 8 + 8 * i;
			fmt_set_bad_reason("OFFSET entry out of order or past DAT "
					   "(offset in the OFFSET file)");
			return -EINVAL;
		}
		/*
		 * A binary message holds one record, or several whole ones
		 * (`record --ldms batch=`): each is an item, with the
		 * message's TIMING.  JSON messages are one record each.  The
		 * last message runs to DAT's end: in a batched set (an
		 * earlier message held several records, or it is the only
		 * one) its whole records are read, and a part of one ends the
		 * set as truncated; otherwise it is its first record, and
		 * what follows is what a writer killed between DAT and
		 * OFFSET left (pmcring's own writes DAT first).
		 */
		one = i + 1 == n && n > 1 && !multi;
		for (mo = o; mo < next; mo += ml) {
			memset(&it, 0, sizeof(it));
			it.kind = FMT_BLOB;
			it.btype = s->typ ? ((const char *)s->typ)[8 + i] : 's';
			ml = blob_msg_len(dat + mo, next - mo, it.btype);
			if (!ml && mo > o && i + 1 == n) {
				state = FMT_END_TRUNCATED;
				break;
			}
			/* Messages are contiguous; the last may have followers. */
			if (!ml || (i + 1 < n && it.btype == 'j' &&
				    ml != next - mo)) {
				*bad_off = mo;
				fmt_set_bad_reason(it.btype == 'j' ?
						   "JSON message without its NUL" :
						   "bad pmclog record");
				return -EINVAL;
			}
			rc = blob_item(s, &it, dat + mo, ml, i, cb, ctx);
			if (rc) {
				*bad_off = mo;	/* where it stopped */
				return rc;
			}
			if (it.btype == 'j' || one)
				break;
			if (mo > o)
				multi = true;
		}
	}
	return state;
}

/* Path of the sibling with extension @ext of blob file @path, or false. */
static bool blob_sibling(const char *path, unsigned int ext, char *out,
			 size_t sz)
{
	const char *base = strrchr(path, '/'), *dot;
	char pat[16];
	unsigned int i;

	base = base ? base + 1 : path;
	for (i = 0; i < BLOB_NR_FILES; i++) {
		snprintf(pat, sizeof(pat), ".%s.", blob_ext[i]);
		dot = strstr(base, pat);
		if (dot)
			return (size_t)snprintf(out, sz, "%.*s.%s.%s",
						(int)(dot - path), path,
						blob_ext[ext], dot + strlen(pat)) < sz;
	}
	return false;
}

/* An anonymous pipe (pipefs): EOF is for good, no writer can come. */
#define FMT_PIPEFS_MAGIC	0x50495045

/*
 * Wait for a writer of the named FIFO @fd (opened O_NONBLOCK, so that the
 * open did not block) up to FMT_FIFO_WAIT_MS: 0 once one is there (then
 * @fd blocks again), -EPIPE if none came.  read() of an empty FIFO says
 * which: -EAGAIN with a writer, 0 (EOF) without.
 */
static int fmt_fifo_writer(int fd, char *first, ssize_t *nfirst)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int waited = 0;

	for (;;) {
		*nfirst = read(fd, first, 1);
		if (*nfirst > 0 || (*nfirst < 0 && errno == EAGAIN))
			break;
		if (*nfirst < 0 && errno != EINTR)
			return -errno;
		if (waited >= FMT_FIFO_WAIT_MS)
			return -EPIPE;
		/* no writer yet: poll() wakes when one writes */
		if (poll(&pfd, 1, 50) < 0 && errno != EINTR)
			return -errno;
		waited += 50;
	}
	if (*nfirst < 0)
		*nfirst = 0;
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) ? -errno : 0;
}

/*
 * All of a pipe, FIFO or other stream @fd into an anonymous mapping (so
 * fmt_unmap_file() frees it like a file's), after the @nfirst bytes at
 * @first.
 */
static int fmt_read_stream(int fd, const char *first, ssize_t nfirst,
			   const void **p, size_t *len)
{
	size_t cap = 1 << 20, n = 0;
	char *m = mmap(NULL, cap, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	ssize_t r;

	if (m == MAP_FAILED)
		return -errno;
	memcpy(m, first, (size_t)nfirst);
	n = (size_t)nfirst;
	for (;;) {
		if (n == cap) {
			char *g = mremap(m, cap, 2 * cap, MREMAP_MAYMOVE);

			if (g == MAP_FAILED) {
				munmap(m, cap);
				return -ENOMEM;
			}
			m = g;
			cap *= 2;
		}
		r = read(fd, m + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			r = -errno;
			munmap(m, cap);
			return (int)r;
		}
		if (!r)
			break;
		n += (size_t)r;
	}
	if (!n) {
		munmap(m, cap);
		return 0;
	}
	/* keep the pages of @n bytes: what munmap(p, n) frees */
	r = (ssize_t)((n + 4095) & ~(size_t)4095);
	if ((size_t)r < cap)
		munmap(m + r, cap - (size_t)r);
	mprotect(m, n, PROT_READ);
	*p = m;
	*len = n;
	return 0;
}

int fmt_map_file(const char *path, const void **p, size_t *len,
		 const char *who)
{
	bool std_in = !strcmp(path, "-");
	struct statfs sfs;
	struct stat st;
	char first;
	ssize_t nfirst = 0;
	void *m;
	int fd, err = 0;

	*p = NULL;
	*len = 0;
	/* O_NONBLOCK: opening a FIFO without a writer does not wait */
	fd = std_in ? fcntl(0, F_DUPFD_CLOEXEC, 3) :
		      open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		err = -errno;
		goto out;
	}
	if (S_ISDIR(st.st_mode)) {
		err = -EISDIR;
		goto out;
	}
	if (!S_ISREG(st.st_mode)) {
		/* a pipe, a FIFO, a terminal: read it to its end */
		if (S_ISFIFO(st.st_mode) && !fstatfs(fd, &sfs) &&
		    sfs.f_type != FMT_PIPEFS_MAGIC) {
			err = fmt_fifo_writer(fd, &first, &nfirst);
			if (err == -EPIPE && who) {
				fprintf(stderr, "%s: %s: a FIFO with no writer "
					"(waited %d ms); start the writer "
					"first\n", who, path,
					FMT_FIFO_WAIT_MS);
				who = NULL;
			}
		} else if (fcntl(fd, F_SETFL,
				 fcntl(fd, F_GETFL) & ~O_NONBLOCK)) {
			err = -errno;
		}
		if (!err)
			err = fmt_read_stream(fd, &first, nfirst, p, len);
		goto out;
	}
	if (st.st_size > 0) {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (m == MAP_FAILED) {
			err = -errno;
			goto out;
		}
		*p = m;
		*len = (size_t)st.st_size;
	}
out:
	if (err && who)
		fprintf(stderr, "%s: %s: %s\n", who, path, strerror(-err));
	if (fd >= 0)
		close(fd);
	return err;
}

bool fmt_is_stream(const char *path)
{
	struct stat st;

	return !strcmp(path, "-") || stat(path, &st) || !S_ISREG(st.st_mode);
}

int fmt_blob_map(const char *path, struct fmt_blob_set *s, char *which,
		 size_t which_sz)
{
	const void **p[BLOB_NR_FILES] = { &s->dat, &s->off, &s->tim, &s->typ };
	size_t *len[BLOB_NR_FILES] = {
		&s->dat_len, &s->off_len, &s->tim_len, &s->typ_len,
	};
	unsigned int i;
	int err;

	memset(s, 0, sizeof(*s));
	snprintf(which, which_sz, "%s", path);
	for (i = 0; i < BLOB_NR_FILES; i++) {
		if (!blob_sibling(path, i, which, which_sz)) {
			fmt_blob_unmap(s);
			snprintf(which, which_sz, "%s", path);
			return -EINVAL;
		}
		err = fmt_map_file(which, p[i], len[i], NULL);
		/* an empty DAT or OFFSET maps to nothing: not a blob set */
		if (err && (i == BLOB_DAT || i == BLOB_OFF)) {
			fmt_blob_unmap(s);
			return err;
		}
	}
	return 0;
}

void fmt_unmap_file(const void *p, size_t len)
{
	if (p)
		munmap((void *)p, len);
}

void fmt_blob_unmap(struct fmt_blob_set *s)
{
	fmt_unmap_file(s->dat, s->dat_len);
	fmt_unmap_file(s->off, s->off_len);
	fmt_unmap_file(s->tim, s->tim_len);
	fmt_unmap_file(s->typ, s->typ_len);
	memset(s, 0, sizeof(*s));
}
