// SPDX-License-Identifier: GPL-2.0
/*
 * Arm barman streaming files (gator barman/src/barman-protocol.c), as a
 * user-supplied streaming datastore stores them: struct bm_protocol_header
 * at offset 0, rewritten in place with the same length whenever its tables
 * change, then frames [u64 LE length][record].
 *
 * Header layout (64-bit target, native endian; the struct is not packed
 * but its small structs are):
 *
 *	0	u64 magic "BARMAN64"
 *	8	u32 protocol_version 3, u32 header_length,
 *		u32 data_store_type, u32 target_name_ptr
 *	24	u64 last_timestamp
 *	32	u32 timer_sample_rate
 *	36	u32 max_cores, max_task_infos, max_mmap_layout,
 *		    max_pmu_counters, max_string_table_length, num_custom_counters
 *	60	clock_info: u64 timestamp_base, multiplier, divisor, unix_base_ns
 *	92	string table: u32 length, char[1024]
 *	1120	per_core_pmu_settings[max_cores], 60 bytes each (zero: no PMU
 *		settings; bank = CPU)
 *	then	u32 num_task_entries, task_info[max_task_infos] {u64 ts,
 *		u32 task_id, u32 name_ptr}
 *	then	u32 num_mmap_layout_entries, mmap_layout[max_mmap_layout]
 *		{u64 ts, u32 task_id, u64 base, u64 length, u64 offset,
 *		u32 name_ptr}
 *	then	data_store_parameters (8-aligned): u64 base 0, u64 length 0
 *
 * Records: CALLCHAIN -> SAMPLE_WITH_PC {hdr, u32 task, u64 pc} followed by
 * the caller PCs (pmcring extension; the frame length delimits it),
 * PROCCSW -> TASK_SWITCH {hdr, u32 task, u8 reason}, USERDATA -> ANNOTATION
 * {hdr, u32 task, u64 data_length, u32 channel, group, color, u8 type, data},
 * GENERATED -> ANNOTATION "pmcring GENERATED gen_cpu=C seq=N", DROPNOTIFY ->
 * WARNING {hdr, u32 code}.  hdr = u32 type, u32 core, u64 ts.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "fmt_int.h"

struct bm_layout {
	size_t	ntasks, tasks, nmmaps, mmaps, ds, size;
};

static void bm_layout(unsigned int cores, unsigned int tasks,
		      unsigned int mmaps, struct bm_layout *l)
{
	l->ntasks = BM_OFF_PMU + (size_t)cores * BM_PMU_SETTINGS_SIZE;
	l->tasks = l->ntasks + 4;
	l->nmmaps = l->tasks + (size_t)tasks * BM_TASK_SIZE;
	l->mmaps = l->nmmaps + 4;
	l->ds = (l->mmaps + (size_t)mmaps * BM_MMAP_SIZE + 7) & ~(size_t)7;
	l->size = l->ds + 16;
}

size_t fmt_barman_header_size(unsigned int max_cores)
{
	struct bm_layout l;

	bm_layout(max_cores, BM_MAX_TASKS, BM_MAX_MMAPS, &l);
	return l.size;
}

struct barman {
	struct out_file		f;
	struct bm_layout	l;
	uint8_t			*hdr;
	bool			dirty;
	uint64_t		last_ts;
	uint32_t		nr_tasks, nr_mmaps;
	uint64_t		tasks_lost, mmaps_lost;
};

/*
 * barman_protocol_string_table_insert(): reuse an equal string, else append,
 * truncated to what is left; a full table yields "" (its last NUL).
 */
static uint32_t bm_str(struct barman *bm, const char *s, size_t max)
{
	uint8_t *tab = bm->hdr + BM_OFF_STRTAB + 4;
	uint32_t used = fmt_get32(bm->hdr, BM_OFF_STRTAB), off;
	size_t n = strnlen(s, max);

	for (off = 0; off < used; off += (uint32_t)strlen((char *)tab + off) + 1)
		if (strlen((char *)tab + off) == n && !memcmp(tab + off, s, n))
			return off;
	if (used + n + 1 > BM_STRTAB_LEN) {
		if (used + 1 >= BM_STRTAB_LEN)
			return used ? used - 1 : 0;
		n = BM_STRTAB_LEN - used - 1;
	}
	memcpy(tab + used, s, n);
	tab[used + n] = '\0';
	fmt_put32(bm->hdr, BM_OFF_STRTAB, used + (uint32_t)n + 1);
	return used;
}

static void bm_init_header(struct barman *bm, const struct fmt_opts *o)
{
	uint8_t *h = bm->hdr;

	memset(h, 0, bm->l.size);
	fmt_put64(h, 0, BM_MAGIC64);
	fmt_put32(h, 8, BM_VERSION);
	fmt_put32(h, 12, (uint32_t)bm->l.size);
	fmt_put32(h, 16, BM_DATASTORE_USER);
	fmt_put64(h, 24, o->start_ns);
	fmt_put32(h, 32, o->sample_rate);
	fmt_put32(h, 36, o->nr_cpus);
	fmt_put32(h, 40, BM_MAX_TASKS);
	fmt_put32(h, 44, BM_MAX_MMAPS);
	fmt_put32(h, 48, BM_MAX_PMU_COUNTERS);
	fmt_put32(h, 52, BM_STRTAB_LEN);
	fmt_put32(h, 56, 0);
	/* ns = (ts - base) * 1 / 1 + unix_base_ns */
	fmt_put64(h, 60, o->start_ns);
	fmt_put64(h, 68, 1);
	fmt_put64(h, 76, 1);
	fmt_put64(h, 84, (uint64_t)o->start_rt.tv_sec * 1000000000ull +
		  (uint64_t)o->start_rt.tv_nsec);
	fmt_put32(h, 20, bm_str(bm, o->target ? o->target : "", 255));
}

static void bm_add_task(struct barman *bm, uint64_t ts, uint32_t id,
			const char *name, size_t max)
{
	size_t at = bm->l.tasks + (size_t)bm->nr_tasks * BM_TASK_SIZE;

	if (bm->nr_tasks >= BM_MAX_TASKS) {
		bm->tasks_lost++;
		return;
	}
	fmt_put64(bm->hdr, at, ts);
	fmt_put32(bm->hdr, at + 8, id);
	fmt_put32(bm->hdr, at + 12, bm_str(bm, name, max));	/* barman: 31 */
	fmt_put32(bm->hdr, bm->l.ntasks, ++bm->nr_tasks);
	bm->dirty = true;
}

static void bm_add_mmap(struct barman *bm, uint64_t ts, uint32_t task,
			uint64_t base, const char *name, size_t max)
{
	size_t at = bm->l.mmaps + (size_t)bm->nr_mmaps * BM_MMAP_SIZE;

	if (bm->nr_mmaps >= BM_MAX_MMAPS) {
		bm->mmaps_lost++;
		return;
	}
	fmt_put64(bm->hdr, at, ts);
	fmt_put32(bm->hdr, at + 8, task);
	fmt_put64(bm->hdr, at + 12, base);
	fmt_put64(bm->hdr, at + 20, 0);		/* length: unknown */
	fmt_put64(bm->hdr, at + 28, 0);		/* image offset */
	fmt_put32(bm->hdr, at + 36, bm_str(bm, name, max));
	fmt_put32(bm->hdr, bm->l.nmmaps, ++bm->nr_mmaps);
	bm->dirty = true;
}

static int barman_begin(struct fmt_writer *w, struct out_batch *b)
{
	struct barman *bm = calloc(1, sizeof(*bm));
	int err;

	if (!bm)
		return -ENOMEM;
	bm->f.fd = -1;
	w->priv = bm;
	bm_layout(w->o.nr_cpus, BM_MAX_TASKS, BM_MAX_MMAPS, &bm->l);
	bm->hdr = calloc(1, bm->l.size);
	if (!bm->hdr)
		return -ENOMEM;
	err = out_file_open(&bm->f, w->o.path, false);
	if (err)
		return err;
	/* the header is rewritten at offset 0: a pipe would get it twice */
	if (bm->f.stream)
		return -ESPIPE;
	bm_init_header(bm, &w->o);
	bm->last_ts = w->o.start_ns;
	/* The first header goes first; frames follow it. */
	return out_put(b, &bm->f, OUT_DATA, bm->hdr, bm->l.size);
}

/*
 * A frame of @len record bytes in the staging arena, header filled; the
 * caller fills every byte of the rest (no memset: once per sample).
 */
static inline uint8_t *bm_frame(struct barman *bm, struct out_batch *b,
				uint32_t type, const struct fmt_rec *r,
				size_t len)
{
	uint8_t *p = out_alloc_bytes(b, 8 + len);

	if (!p)
		return NULL;
	fmt_put64(p, 0, len);
	fmt_put32(p, 8, type);
	fmt_put32(p, 12, r->cpu);
	fmt_put64(p, 16, r->ts);
	if (r->ts > bm->last_ts)
		bm->last_ts = r->ts;
	return p + 8;
}

/*
 * out_put() of the frame just made at the arena's end, its common case
 * inline: it follows the file's last range in memory and in the file.
 */
static inline int bm_put(struct out_batch *b, struct out_file *f,
			 const void *p, size_t len)
{
	struct out_put *last = b->nr_puts ? &b->puts[b->nr_puts - 1] : NULL;

	if (last && last->f == f && last->phase == OUT_DATA && !last->ring &&
	    last->off + last->len == f->off &&
	    (const char *)last->p + last->len == (const char *)p) {
		last->len += len;
		b->bytes += len;
		f->off += len;
		return 0;
	}
	return out_put(b, f, OUT_DATA, p, len);
}

static int barman_record(struct fmt_writer *w, struct out_batch *b,
			 const struct fmt_rec *r)
{
	struct barman *bm = w->priv;
	const uint8_t *d = r->data;
	uint8_t *p;
	uint32_t n;
	char text[64];
	size_t tl;

	/* the frame, and the header copy of barman_flush() */
	if (!out_batch_room(b, 2, 8 + PMCRING_RECORD_MAX + bm->l.size))
		return -EAGAIN;
	switch (r->type) {
	case PMCRING_TYPE_PROC_CREATE:
		bm_add_task(bm, r->ts, fmt_get32(d, 16), (const char *)d + 24,
			    PMCRING_COMM_LEN);
		return 0;
	case PMCRING_TYPE_THR_CREATE:
		bm_add_task(bm, r->ts, fmt_get32(d, 16), (const char *)d + 32,
			    PMCRING_COMM_LEN);
		return 0;
	case PMCRING_TYPE_PROCEXEC: {
		const char *path = (const char *)d + 40, *base;
		size_t max = r->len - 40;
		size_t plen = strnlen(path, max);

		base = memrchr(path, '/', plen);
		base = base ? base + 1 : path;
		bm_add_task(bm, r->ts, fmt_get32(d, 16), base,
			    plen - (size_t)(base - path));
		return 0;
	}
	case PMCRING_TYPE_MAP_IN:
		bm_add_mmap(bm, r->ts, fmt_get32(d, 16), fmt_get64(d, 24),
			    (const char *)d + 32, r->len - 32);
		return 0;
	case PMCRING_TYPE_CALLCHAIN:
		n = (r->len - 32) / 8;
		p = bm_frame(bm, b, BM_REC_SAMPLE_WITH_PC, r,
			     BM_SAMPLE_PC_SIZE + 8 * (n ? n - 1 : 0));
		fmt_put32(p, 16, fmt_get32(d, 20));		/* tid */
		fmt_put64(p, 20, n ? fmt_get64(d, 32) : 0);
		if (n > 1)
			memcpy(p + 28, d + 40, 8 * (n - 1));
		b->items++;
		return bm_put(b, &bm->f, p - 8, 8 + BM_SAMPLE_PC_SIZE +
			      8 * (n ? n - 1 : 0));
	case PMCRING_TYPE_PROCCSW:
		p = bm_frame(bm, b, BM_REC_TASK_SWITCH, r, BM_TASK_SWITCH_SIZE);
		fmt_put32(p, 16, fmt_get32(d, 32));		/* tid */
		p[20] = 0;					/* reason */
		break;
	case PMCRING_TYPE_GENERATED:
		/*
		 * Synthetic load (GENERATE): kept, so it can be accounted.
		 * "pmcring GENERATED gen_cpu=C seq=S", made without printf:
		 * benchmarks push millions through here.
		 */
		tl = sizeof("pmcring GENERATED") - 1;
		memcpy(text, "pmcring GENERATED", tl);
		if (r->len >= 32) {
			memcpy(text + tl, " gen_cpu=", 9);
			tl += 9;
			tl += fmt_dec(text + tl, fmt_get32(d, 24));
			memcpy(text + tl, " seq=", 5);
			tl += 5;
			tl += fmt_dec(text + tl, fmt_get64(d, 16));
		}
		goto annotation;
	case PMCRING_TYPE_USERDATA:
		tl = (size_t)snprintf(text, sizeof(text), "0x%08x",
				      fmt_get32(d, 16));
annotation:
		p = bm_frame(bm, b, BM_REC_ANNOTATION, r,
			     BM_ANNOTATION_SIZE + tl);
		fmt_put32(p, 16, 0);				/* task */
		fmt_put64(p, 20, tl);
		fmt_put32(p, 28, w->o.bm_channel);
		fmt_put32(p, 32, 0);				/* group */
		fmt_put32(p, 36, 0);				/* color */
		p[40] = 0;					/* string */
		memcpy(p + 41, text, tl);
		break;
	case PMCRING_TYPE_DROPNOTIFY:
		p = bm_frame(bm, b, BM_REC_WARNING, r, BM_WARNING_SIZE);
		fmt_put32(p, 16, BM_WARNING_LOST);
		break;
	default:
		return 0;
	}
	b->items++;
	return bm_put(b, &bm->f, p - 8, 8 + fmt_get64(p - 8, 0));
}

/* Frames of this batch go first; then the header that describes them. */
static int barman_flush(struct fmt_writer *w, struct out_batch *b)
{
	struct barman *bm = w->priv;
	void *copy;

	if (!bm || !bm->dirty)
		return 0;
	fmt_put64(bm->hdr, 24, bm->last_ts);
	/*
	 * A copy: the batch may be written while the next one is merged,
	 * which changes bm->hdr.  barman_record() keeps room for it.
	 */
	copy = out_alloc(b, bm->l.size);
	if (!copy)
		return -ENOBUFS;
	memcpy(copy, bm->hdr, bm->l.size);
	bm->dirty = false;
	return out_put_at(b, &bm->f, OUT_COMMIT, 0, copy, bm->l.size);
}

static int barman_end(struct fmt_writer *w, struct out_batch *b, uint64_t ts)
{
	struct barman *bm = w->priv;

	(void)b;			/* the final header goes out in flush */
	if (ts > bm->last_ts)
		bm->last_ts = ts;
	bm->dirty = true;
	return 0;
}

static void barman_free(struct fmt_writer *w)
{
	struct barman *bm = w->priv;

	if (!bm)
		return;
	out_file_close(&bm->f);
	free(bm->hdr);
	free(bm);
}

const struct fmt_ops fmt_barman_ops = {
	.begin = barman_begin,
	.record = barman_record,
	.flush = barman_flush,
	.end = barman_end,
	.free = barman_free,
};

/* ---- reader ---- */

int fmt_barman_info(const void *buf, size_t len, struct fmt_bm_info *bi)
{
	const uint8_t *h = buf;
	struct bm_layout l;

	memset(bi, 0, sizeof(*bi));
	if (len < BM_OFF_PMU || fmt_get64(h, 0) != BM_MAGIC64 ||
	    fmt_get32(h, 8) != BM_VERSION)
		return -EINVAL;
	bi->header_length = fmt_get32(h, 12);
	bi->target_name_ptr = fmt_get32(h, 20);
	bi->last_ts = fmt_get64(h, 24);
	bi->max_cores = fmt_get32(h, 36);
	bi->max_tasks = fmt_get32(h, 40);
	bi->max_mmaps = fmt_get32(h, 44);
	if (fmt_get32(h, 48) != BM_MAX_PMU_COUNTERS ||
	    fmt_get32(h, 52) != BM_STRTAB_LEN || bi->max_cores > 65536 ||
	    bi->max_tasks > 65536 || bi->max_mmaps > 65536)
		return -EINVAL;
	bm_layout(bi->max_cores, bi->max_tasks, bi->max_mmaps, &l);
	if (bi->header_length != l.size || l.size > len)
		return -EINVAL;
	bi->ts_base = fmt_get64(h, 60);
	bi->mult = fmt_get64(h, 68);
	bi->div = fmt_get64(h, 76);
	bi->unix_base_ns = fmt_get64(h, 84);
	bi->strtab_len = fmt_get32(h, BM_OFF_STRTAB);
	bi->strtab = (const char *)h + BM_OFF_STRTAB + 4;
	bi->nr_tasks = fmt_get32(h, l.ntasks);
	bi->nr_mmaps = fmt_get32(h, l.nmmaps);
	bi->tasks = h + l.tasks;
	bi->mmaps = h + l.mmaps;
	if (!bi->mult || !bi->div || bi->strtab_len > BM_STRTAB_LEN ||
	    (bi->strtab_len && bi->strtab[bi->strtab_len - 1]) ||
	    bi->nr_tasks > bi->max_tasks || bi->nr_mmaps > bi->max_mmaps)
		return -EINVAL;
	return 0;
}

const char *fmt_barman_str(const struct fmt_bm_info *bi, uint32_t ptr)
{
	return ptr < bi->strtab_len ? bi->strtab + ptr : "";
}

static int bm_decode(struct fmt_item *it, const uint8_t *p, uint64_t len)
{
	it->type = fmt_get32(p, 0);
	it->cpu = (int32_t)fmt_get32(p, 4);
	it->ts = fmt_get64(p, 8);
	switch (it->type) {
	case BM_REC_SAMPLE_WITH_PC:
		if (len < BM_SAMPLE_PC_SIZE || (len - BM_SAMPLE_PC_SIZE) % 8)
			return -EINVAL;
		it->task = fmt_get32(p, 16);
		it->pc = fmt_get64(p, 20);
		it->chain = p + 28;
		it->nchain = (uint32_t)((len - BM_SAMPLE_PC_SIZE) / 8);
		return 0;
	case BM_REC_TASK_SWITCH:
		if (len != BM_TASK_SWITCH_SIZE)
			return -EINVAL;
		it->task = fmt_get32(p, 16);
		it->value = p[20];
		return 0;
	case BM_REC_ANNOTATION:
		if (len < BM_ANNOTATION_SIZE ||
		    fmt_get64(p, 20) != len - BM_ANNOTATION_SIZE)
			return -EINVAL;
		it->task = fmt_get32(p, 16);
		it->value = fmt_get32(p, 28);
		it->text = (const char *)p + BM_ANNOTATION_SIZE;
		it->text_len = len - BM_ANNOTATION_SIZE;
		return 0;
	case BM_REC_WARNING:
		if (len != BM_WARNING_SIZE)
			return -EINVAL;
		it->value = fmt_get32(p, 16);
		return 0;
	default:
		/* other barman records: passed on undecoded */
		return it->type >= BM_REC_SAMPLE && it->type <= BM_REC_WARNING ?
		       0 : -EINVAL;
	}
}

int fmt_barman_read(const void *buf, size_t len, fmt_item_cb cb, void *ctx,
		    size_t *bad_off)
{
	const uint8_t *p = buf;
	struct fmt_bm_info bi;
	struct fmt_item it;
	uint64_t flen;
	size_t off;
	int rc;

	const uint64_t magic = BM_MAGIC64;

	*bad_off = 0;
	fmt_set_bad_reason("not a barman header");
	if (len < 8)	/* killed before the magic was whole */
		return memcmp(p, &magic, len) ? -EINVAL : FMT_END_TRUNCATED;
	if (fmt_get64(p, 0) != BM_MAGIC64)
		return -EINVAL;
	/* Killed before the first header was whole: an empty prefix. */
	if (len < BM_OFF_PMU || (len >= 16 && fmt_get32(p, 12) > len))
		return FMT_END_TRUNCATED;
	if (fmt_barman_info(buf, len, &bi)) {
		*bad_off = 0;
		return -EINVAL;
	}
	for (off = bi.header_length; off < len; off += 8 + flen) {
		if (len - off < 8)
			return FMT_END_TRUNCATED;
		flen = fmt_get64(p, off);
		if (flen < BM_REC_HDR_SIZE || flen > (1u << 20)) {
			*bad_off = off;
			fmt_set_bad_reason("frame length out of range");
			return -EINVAL;
		}
		if (len - off - 8 < flen)
			return FMT_END_TRUNCATED;
		memset(&it, 0, sizeof(it));
		it.kind = FMT_BARMAN;
		it.data = p + off + 8;
		it.len = flen;
		if (bm_decode(&it, it.data, flen)) {
			*bad_off = off;
			fmt_set_bad_reason("bad record (unknown type or length)");
			return -EINVAL;
		}
		rc = cb(&it, ctx);
		if (rc)
			return rc;
	}
	return FMT_END_CLEAN;
}
