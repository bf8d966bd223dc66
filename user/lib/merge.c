// SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause
/*
 * Exact timestamp merge of CPU rings (EXACT CROSS-CPU ORDER in
 * <linux/pmcring.h>).
 *
 * Every ring is either
 *
 *   visible	it has a peeked record, keyed by (record ts, index) in a
 *		tournament tree of all rings (a ring without a record is a
 *		key above every record's there), or
 *   drained	it had nothing more when last looked at; in a min-heap keyed
 *		by its bound, a timestamp below which it will never produce a
 *		record.  Bounds only grow, so an old bound stays true.
 *
 * Records go out in (ts, ring index) order.  The head r of the visible tree
 * (ring t) is handed out once no drained ring d blocks it: d blocks r while
 * (bound, d) < (r.ts, t), i.e. its bound is below r.ts, or equal to it and
 * d < t (d may still produce a record of r.ts, which goes first).  Every
 * other ring then holds a later record or can never produce an earlier one.
 * A drained ring that blocks r is refreshed:
 *
 *	(F) T = clock (cached); smp_mb(); pending = load-acquire pending_ts
 *	(H) load-acquire data_head: moved -> it has a record, peek it
 *	    else bound = pending ? pending : T
 *
 * T is read only when a drained ring blocks a record later than the cached
 * T, and at most once per round (a round ends when pmcring_merge_next()
 * returns 0): the clock is a system call (an ioctl), so a
 * consumer that keeps up with one busy CPU must not read it per record.  A
 * record later than T found in a round that already read the clock waits
 * for the next round (the caller's next wake-up, see
 * pmcring_merge_timeout_ns()).  A ring that runs dry after handing out a
 * record starts with that record's ts as its bound (rings are in ts order).
 * Cost per record: log2 n compares up the tree from the ring that produced
 * it; only when no ring has a visible record are all rings looked at (one
 * load each).
 *
 * Staging: when the merge returns 0 (it waits for a bound), rings at least
 * 1/PMCRING_MERGE_STAGING_FILL full have their records not handed out yet
 * copied to user memory and their ring space given back (stage_full(),
 * pmcring_cpu_buf_stage() in ring.c); peek reads them from the copy, in the
 * same order.
 */
#define _GNU_SOURCE
#include <limits.h>
#include <stdlib.h>
#include "internal.h"

#define PMCRING_MERGE_DEFAULT_DELAY_NS	10000000ull	/* 10 ms */

struct merge_ring {
	struct pmcring_cpu_buf	*b;
	struct pmcring_record	rec;	/* peeked, when visible;
					 * rec.ring is the ring's index */
	/*
	 * A record at or past this ring position goes out through hand_out()
	 * (set_slow_at()): the per-record path's one test for space to give
	 * back, a clamped timestamp to count and staged records.
	 */
	uint64_t		slow_at;
	/*
	 * Visible: where the record after rec is in the ring
	 * (data + (rec.end & mask)).  The per-record path reads the next
	 * header from here, one load after the tree's root, not three.
	 */
	const uint8_t		*next;
} __attribute__((aligned(64)));	/* one cache line each */

/*
 * A heap or tree entry carries its key, so sifting and replaying touch only
 * their own array.
 */
struct heap_ent {
	uint64_t	key;		/* record ts, or bound */
	unsigned int	idx;		/* ring index, breaks ties */
};

/* A tree leaf of a ring without a record: above every record's (ts, index) */
#define TREE_NONE	((struct heap_ent){ UINT64_MAX, UINT_MAX })

struct pmcring_merge {
	unsigned int		n;
	unsigned int		leaves;	/* of tree[]: n up to a power of 2 */
	unsigned int		nvis;	/* visible rings */
	unsigned int		ndr;	/* entries in dr[] */
	/*
	 * The visible rings' tournament (winner) tree: tree[1] the least
	 * (ts, index), node j the lesser of 2j and 2j + 1, ring i's leaf
	 * leaves + i (TREE_NONE when not visible).  Siblings share half a
	 * cache line.
	 */
	struct heap_ent		*tree;
	struct heap_ent		*dr;	/* min-heap of drained rings by bound */
	struct merge_ring	*rings;
	uint64_t		*bound;	/* drained ring's bound, by index */
	pmcring_clock_fn	clock;
	void			*clock_ctx;
	struct pmcring		*sess;	/* of _new_session(): maps new rings */
	uint64_t		T;	/* last clock read, 0: none */
	bool			T_round; /* T read in this round */
	uint64_t		max_delay_ns;
	uint64_t		late_ns; /* decaying max of the caller's lateness */
	uint64_t		due_ns;	/* when the caller was asked back, 0 */
	uint32_t		flags;
	int			err;	/* sticky error of a ring */
	unsigned int		*dirty;	/* rings with records to give back */
	unsigned int		ndirty;
	bool			*isvis;	/* ring visible (a record in tree[]) */
	bool			*isdirty; /* ring in dirty[] */
	struct pmcring_staging	stg;	/* limit 0: no staging */
};

/* Does drained-heap entry @d keep a record of @ts from ring @t back? */
static bool blocks(const struct heap_ent *d, uint64_t ts, unsigned int t)
{
	return d->key < ts || (d->key == ts && d->idx < t);
}

/* ---- the drained heap, the visible tree ---------------------------------- */

static bool ent_less(const struct heap_ent *a, const struct heap_ent *b)
{
	return a->key < b->key || (a->key == b->key && a->idx < b->idx);
}

static inline __attribute__((always_inline)) void
sift_down(struct heap_ent *h, unsigned int n, unsigned int i)
{
	struct heap_ent e = h[i];

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= n)
			break;
		if (c + 1 < n && ent_less(&h[c + 1], &h[c]))
			c++;
		if (!ent_less(&h[c], &e))
			break;
		h[i] = h[c];
		i = c;
	}
	h[i] = e;
}

static void sift_up(struct heap_ent *h, unsigned int i)
{
	struct heap_ent e = h[i];

	while (i) {
		unsigned int p = (i - 1) / 2;

		if (!ent_less(&e, &h[p]))
			break;
		h[i] = h[p];
		i = p;
	}
	h[i] = e;
}

/*
 * Ring @i's slow_at, after any change of what it tests: 0 (every record
 * through hand_out()) while a clamped timestamp is to be counted, records
 * are staged or the ring is corrupt, and with AUTO_CONSUME while nothing
 * of the ring was handed out since its space was last given back all
 * (hand_out() notes the ring in dirty[]); with AUTO_CONSUME then the last
 * position given back plus 1/16 of the ring (the data size is a power of
 * two, >= 16), else never.
 */
static void set_slow_at(struct pmcring_merge *m, unsigned int i)
{
	struct merge_ring *mr = &m->rings[i];
	struct pmcring_cpu_buf *b = mr->b;

	if (b->rare || b->rd)
		mr->slow_at = 0;
	else if (!(m->flags & PMCRING_MERGE_F_AUTO_CONSUME))
		mr->slow_at = UINT64_MAX;
	else if (!m->isdirty[i])
		mr->slow_at = 0;
	else
		mr->slow_at = b->tail + (b->mask + 1) / 16;
}

/*
 * Ring @i's leaf becomes @e: replay its matches up to the root, one compare
 * of the lesser so far with the sibling's winner a level, without a branch
 * (which side wins is as random as the rings' records are mixed, and the
 * number of levels is fixed).  The order of ent_less().
 */
static inline __attribute__((always_inline)) void
tree_set(struct heap_ent *tr, unsigned int leaves, unsigned int i,
	 struct heap_ent e)
{
	unsigned int j = leaves + i;

	tr[j] = e;
	for (; j > 1; j >>= 1) {
		const struct heap_ent *s = &tr[j ^ 1];
		uint64_t sk = s->key, kx;
		unsigned int si = s->idx, ix;
		uint64_t sw = -(uint64_t)((sk < e.key) |
					  ((sk == e.key) & (si < e.idx)));

		kx = (e.key ^ sk) & sw;
		ix = (e.idx ^ si) & (unsigned int)sw;
		e.key ^= kx;
		e.idx ^= ix;
		tr[j >> 1] = e;
	}
}

/*
 * Ring @i's record came in below its bound: the clock broke the contract
 * (a timekeeper update seen by one CPU before another, see "The clock" in
 * Documentation/abi.rst, or a step of the test hook).  Records up to the
 * bound may have gone out already; the latest of them is the latest
 * last_ts of all rings.  A record below it is handed out at that time
 * instead and counted in its ring's backwards, as a ring's own clamp
 * does: the merged stream never goes back in time.
 */
static __attribute__((noinline)) void lift(struct pmcring_merge *m,
					   unsigned int i)
{
	struct pmcring_record *r = &m->rings[i].rec;
	uint64_t out = 0;
	unsigned int j;

	for (j = 0; j < m->n; j++)
		if (m->rings[j].b->last_ts > out)
			out = m->rings[j].b->last_ts;
	if (r->ts < out) {
		r->ts = out;
		m->rings[i].b->peek_back = true;  /* set_slow_at(): counted */
	}
}

static void vis_push(struct pmcring_merge *m, unsigned int i)
{
	struct pmcring_cpu_buf *b = m->rings[i].b;

	/* Records handed out since the ring drained are at most its bound. */
	if (__builtin_expect(m->rings[i].rec.ts < m->bound[i], 0))
		lift(m, i);
	m->rings[i].next = b->data + (m->rings[i].rec.end & b->mask);
	set_slow_at(m, i);
	m->isvis[i] = true;
	m->nvis++;
	tree_set(m->tree, m->leaves, i,
		 (struct heap_ent){ m->rings[i].rec.ts, i });
}

static void dr_push(struct pmcring_merge *m, unsigned int i)
{
	m->dr[m->ndr] = (struct heap_ent){ m->bound[i], i };
	sift_up(m->dr, m->ndr++);
}

static void dr_pop(struct pmcring_merge *m)
{
	m->dr[0] = m->dr[--m->ndr];
	sift_down(m->dr, m->ndr, 0);
}

/* ---- setup ------------------------------------------------------------- */

struct pmcring_merge *pmcring_merge_new(struct pmcring_cpu_buf **bufs,
					unsigned int n,
					const struct pmcring_merge_opts *opts)
{
	struct pmcring_merge *m;
	unsigned int i, leaves = 1;
	size_t tsz;

	if (!OPTS_VALID(opts) || !n || n > UINT_MAX / 4 || !bufs ||
	    !OPTS_GET(opts, clock, NULL) ||
	    (OPTS_GET(opts, flags, 0) & ~(PMCRING_MERGE_F_AUTO_CONSUME |
					  PMCRING_MERGE_F_NO_STAGING))) {
		errno = EINVAL;
		return NULL;
	}
	for (i = 0; i < n; i++) {
		if (!bufs[i]) {
			errno = EINVAL;
			return NULL;
		}
	}
	m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->rings = aligned_alloc(64, n * sizeof(*m->rings));
	if (m->rings)
		memset(m->rings, 0, n * sizeof(*m->rings));
	while (leaves < n)
		leaves *= 2;
	/* a multiple of the alignment, as aligned_alloc() wants */
	tsz = (2 * (size_t)leaves * sizeof(*m->tree) + 63) & ~(size_t)63;
	m->tree = aligned_alloc(64, tsz);
	if (m->tree)
		for (i = 0; i < 2 * leaves; i++)
			m->tree[i] = TREE_NONE;
	m->dr = calloc(n, sizeof(*m->dr));
	m->dirty = calloc(n, sizeof(*m->dirty));
	m->isvis = calloc(n, sizeof(*m->isvis));
	m->isdirty = calloc(n, sizeof(*m->isdirty));
	m->bound = calloc(n, sizeof(*m->bound));
	if (!m->rings || !m->tree || !m->dr || !m->dirty || !m->isvis ||
	    !m->isdirty || !m->bound) {
		pmcring_merge_free(m);
		errno = ENOMEM;
		return NULL;
	}
	m->n = n;
	m->leaves = leaves;
	m->clock = OPTS_GET(opts, clock, NULL);
	m->clock_ctx = OPTS_GET(opts, clock_ctx, NULL);
	m->max_delay_ns = OPTS_GET(opts, max_delay_ns, 0) ?:
			  PMCRING_MERGE_DEFAULT_DELAY_NS;
	m->flags = OPTS_GET(opts, flags, 0);
	if (!(m->flags & PMCRING_MERGE_F_NO_STAGING))
		m->stg.limit = OPTS_GET(opts, staging_bytes, 0) ?:
			       PMCRING_MERGE_STAGING_DEFAULT;
	/* Every ring starts drained with bound 0: looked at on first use. */
	for (i = 0; i < n; i++) {
		m->rings[i].b = bufs[i];
		m->rings[i].rec.cpu = pmcring_cpu_buf_cpu(bufs[i]);
		m->rings[i].rec.ring = i;
		if (m->stg.limit)
			bufs[i]->stg = &m->stg;
		dr_push(m, i);
	}
	return m;
}

/*
 * T, then the rings that appeared (RINGS AND CPU HOTPLUG in
 * <linux/pmcring.h>): a ring still absent after T holds nothing below it.
 */
static int session_clock(void *ctx, uint64_t *now)
{
	int err = pmcring_clock(ctx, now);

	if (err)
		return err;
	err = pmcring_session_refresh(ctx);
	return err < 0 ? err : 0;
}

struct pmcring_merge *
pmcring_merge_new_session(struct pmcring *s,
			  const struct pmcring_merge_opts *opts)
{
	struct pmcring_merge_opts o = {
		.sz = sizeof(o),
		.max_delay_ns = OPTS_GET(opts, max_delay_ns, 0),
		.clock = OPTS_GET(opts, clock, NULL),
		.clock_ctx = OPTS_GET(opts, clock_ctx, NULL),
		.flags = OPTS_GET(opts, flags, 0),
		.staging_bytes = OPTS_GET(opts, staging_bytes, 0),
	};
	struct pmcring_cpu_buf **bufs;
	struct pmcring_merge *m;
	unsigned int i, n = pmcring_nr_cpus(s);

	if (!OPTS_VALID(opts)) {
		errno = EINVAL;
		return NULL;
	}
	if (!o.clock) {
		o.clock = session_clock;
		o.clock_ctx = s;
	}
	bufs = calloc(n, sizeof(*bufs));
	if (!bufs)
		return NULL;
	for (i = 0; i < n; i++)
		bufs[i] = pmcring_cpu_buf(s, i);
	m = pmcring_merge_new(bufs, n, &o);
	free(bufs);
	if (m)
		m->sess = s;
	return m;
}

/*
 * AUTO_CONSUME: give back the space of every record handed out (the caller
 * is done with them: it called again and got 0, or frees the merge).
 */
static void give_back_all(struct pmcring_merge *m)
{
	unsigned int i;

	for (i = 0; i < m->ndirty; i++) {
		unsigned int d = m->dirty[i];

		pmcring_cpu_buf_consume(m->rings[d].b,
					pmcring_cpu_buf_pos(m->rings[d].b));
		m->isdirty[d] = false;
		set_slow_at(m, d);
	}
	m->ndirty = 0;
}

void pmcring_merge_free(struct pmcring_merge *m)
{
	unsigned int i;

	if (!m)
		return;
	if (m->dirty)
		give_back_all(m);
	if (m->stg.limit && m->rings)
		for (i = 0; i < m->n; i++)
			if (m->rings[i].b)
				pmcring_cpu_buf_unstage(m->rings[i].b);
	free(m->dirty);
	free(m->isvis);
	free(m->isdirty);
	free(m->bound);
	free(m->rings);
	free(m->tree);
	free(m->dr);
	free(m);
}

struct pmcring_cpu_buf *pmcring_merge_buf(struct pmcring_merge *m,
					  unsigned int i)
{
	if (i >= m->n) {
		errno = EINVAL;
		return NULL;
	}
	return m->rings[i].b;
}

uint64_t pmcring_merge_max_delay_ns(const struct pmcring_merge *m)
{
	return m->max_delay_ns;
}

bool pmcring_merge_holds(const struct pmcring_merge *m)
{
	return m->nvis != 0;
}

/* ---- the merge ----------------------------------------------------------- */

/*
 * With no visible record anywhere, look at every drained ring once (one
 * data_head load each, no clock) and move those with records over.
 */
static int poll_drained(struct pmcring_merge *m)
{
	unsigned int i, keep = 0;
	int ret;

	for (i = 0; i < m->ndr; i++) {
		unsigned int r = m->dr[i].idx;

		ret = cpu_buf_peek_rec(m->rings[r].b, &m->rings[r].rec);
		if (ret < 0)
			return ret;
		if (ret)
			vis_push(m, r);
		else
			m->dr[keep++] = m->dr[i];
	}
	if (keep != m->ndr) {
		m->ndr = keep;
		for (i = keep / 2; i-- > 0;)
			sift_down(m->dr, m->ndr, i);
	}
	return 0;
}

/*
 * Raise the bound of drained ring @i so it may let a record of @ts from ring
 * @t out: 1 if the ring turned out to hold a record (now in rec), 0 with the
 * bound raised as far as the contract allows, or a negative errno.
 */
static int refresh(struct pmcring_merge *m, unsigned int i, uint64_t ts,
		   unsigned int t)
{
	struct merge_ring *mr = &m->rings[i];
	struct heap_ent cached = { m->T, i };
	uint64_t pending, bound;
	int ret;

	ret = cpu_buf_peek_rec(mr->b, &mr->rec);
	if (ret)
		return ret;
	if (blocks(&cached, ts, t) && !m->T_round) {
		ret = m->clock(m->clock_ctx, &m->T);
		if (ret)
			return ret < 0 ? ret : -EIO;
		/*
		 * A caller's clock on a session's merge: the rings added
		 * before T are mapped here, as session_clock() does, or a
		 * CPU brought online would bound nothing and its older
		 * records would come after younger ones.  smp_mb(): T
		 * before nr_rings (step (F) of uapi/linux/pmcring.h).
		 */
		if (m->sess && m->clock != session_clock) {
			smp_mb();
			ret = pmcring_session_refresh(m->sess);
			if (ret < 0)
				return ret;
		}
		m->T_round = true;
	}
	/* (F): T before pending_ts; pairs with (E), the fully ordered
	 * cmpxchg() of pending_ts before the producer's clock read
	 * (pmcring_ring_pending() in kmod/ring_prod.h).
	 */
	smp_mb(); /* (F), pairs with (E) */
	pending = smp_load_acquire(&mr->b->prod->pending_ts);
	/* (H): pairs with (G), the smp_wmb() between the producer's store
	 * of data_head and its clearing of pending_ts: if we read the clear,
	 * peek sees the record it published.
	 */
	ret = cpu_buf_peek_rec(mr->b, &mr->rec);
	if (ret)
		return ret;
	bound = pending ? pending : m->T;
	if (bound > m->bound[i])
		m->bound[i] = bound;
	return 0;
}

/* Ring @t handed out its record of @ts and had no next one (or @ret < 0). */
static __attribute__((noinline)) void ran_dry(struct pmcring_merge *m,
					      unsigned int t, uint64_t ts,
					      int ret)
{
	if (ret < 0)
		m->err = ret;	/* reported on the next call */
	m->isvis[t] = false;
	m->nvis--;
	tree_set(m->tree, m->leaves, t, TREE_NONE);
	m->bound[t] = ts;
	dr_push(m, t);
}

/*
 * Ring @t (@top), the visible tree's winner, peeked its next record: give
 * the tree its new key.  With more than two rings the record after that
 * one is prefetched, as the hardware prefetcher does not follow many rings
 * (two it does).
 */
static inline __attribute__((always_inline)) void
vis_top_moved(struct pmcring_merge *m, unsigned int t, struct merge_ring *top)
{
	if (m->leaves > 2)
		__builtin_prefetch(top->next);
	tree_set(m->tree, m->leaves, t, (struct heap_ent){ top->rec.ts, t });
}

/*
 * Hand out the visible tree's winner (nothing blocks it) and peek the
 * ring's next record, every case.  pmcring_merge_next() does the common
 * one itself.
 */
static __attribute__((noinline)) int hand_out(struct pmcring_merge *m,
					      struct pmcring_record *r)
{
	unsigned int t = m->tree[1].idx;
	struct merge_ring *top = &m->rings[t];
	struct pmcring_cpu_buf *b = top->b;
	int ret;

	*r = top->rec;
	/*
	 * AUTO_CONSUME: the records handed out before are done with.  Their
	 * space goes back in steps of 1/16 of the ring, here when this ring
	 * has that much, and all of it when the merge returns 0: a fence and
	 * a store to the shared control page per record would cost more than
	 * the rest of the merge.
	 */
	if (m->flags & PMCRING_MERGE_F_AUTO_CONSUME) {
		if (!m->isdirty[t]) {
			m->isdirty[t] = true;
			m->dirty[m->ndirty++] = t;
		} else if (b->pos - b->tail >= (b->mask + 1) / 16) {
			pmcring_cpu_buf_consume(b, b->pos);
		}
	}
	ret = cpu_buf_step(b, &top->rec);	/* next + peek */
	if (ret > 0) {
		top->next = b->data + (top->rec.end & b->mask);
		set_slow_at(m, t);
		vis_top_moved(m, t, top);
	} else {
		ran_dry(m, t, r->ts, ret);
	}
	return 1;
}

/*
 * The merge waits (it returns 0): a ring at least 1/STAGING_FILL full
 * goes to staging, so its producer has room while the merge waits for
 * another ring's bound.  A visible ring's peeked record is read again,
 * from its copy: its ring space may be reused from now on.
 */
static int stage_full(struct pmcring_merge *m)
{
	unsigned int i;
	int ret;

	for (i = 0; i < m->n; i++) {
		struct merge_ring *mr = &m->rings[i];
		struct pmcring_cpu_buf *b = mr->b;

		/* a hint: pmcring_cpu_buf_stage() loads it with acquire */
		if (READ_ONCE(&b->ctl->data_head) - b->tail <
		    (b->mask + 1) / PMCRING_MERGE_STAGING_FILL)
			continue;
		ret = pmcring_cpu_buf_stage(b);
		if (ret < 0)
			return ret;
		if (ret && m->isvis[i]) {
			ret = cpu_buf_peek_rec(b, &mr->rec);
			if (ret <= 0)
				return ret < 0 ? ret : -EBADMSG;
			set_slow_at(m, i);	/* staged: rd */
		}
	}
	return 0;
}

/* Everything but the common case: look at drained rings, or return 0. */
static __attribute__((noinline)) int merge_next_slow(struct pmcring_merge *m,
						     struct pmcring_record *r)
{
	struct heap_ent e;
	unsigned int t;
	uint64_t ts;
	int ret;

	if (m->err)
		return m->err;
again:
	if (!m->nvis) {
		ret = poll_drained(m);
		if (ret < 0)
			return m->err = ret;
		if (!m->nvis)
			goto none;
	}
	t = m->tree[1].idx;
	ts = m->tree[1].key;
	while (m->ndr && blocks(&m->dr[0], ts, t)) {
		unsigned int d = m->dr[0].idx;

		ret = refresh(m, d, ts, t);
		if (ret < 0)
			return m->err = ret;
		if (ret) {
			dr_pop(m);
			vis_push(m, d);	/* may be the new winner */
			if (m->tree[1].idx != t)
				goto again;
			continue;
		}
		e = (struct heap_ent){ m->bound[d], d };
		if (blocks(&e, ts, t))
			goto none;	/* a record of d is in flight, or ts >= T */
		m->dr[0] = e;
		sift_down(m->dr, m->ndr, 0);
	}
	return hand_out(m, r);
none:
	m->T_round = false;	/* the next call starts a new round */
	give_back_all(m);
	if (m->stg.limit) {
		ret = stage_full(m);
		if (ret < 0)
			return m->err = ret;
	}
	/*
	 * A ring that appeared holds records nobody may wait for: those of
	 * a CPU brought online while the others are idle would otherwise
	 * wait for a clock read (session_clock()) that nothing triggers.
	 */
	if (m->sess) {
		ret = pmcring_session_refresh(m->sess);
		if (ret < 0)
			return m->err = ret;
	}
	return 0;
}

/*
 * The per-record path, a leaf: it hands out the visible tree's winner
 * when nothing blocks it and the ring's next record is an ordinary one,
 * and leaves every other case, at the first sign of it and before it
 * changed anything, to a tail call of the code that handles all of them
 * (merge_next_slow(), hand_out()).  What it does is cpu_buf_step() and
 * cpu_buf_peek_rec() with their rare branches taken out: the record is
 * checked as they check it (a record that fails goes to
 * cpu_buf_peek_rec(), which decides), its timestamp clamped there.
 */
int pmcring_merge_next(struct pmcring_merge *m, struct pmcring_record *r)
{
	const struct pmcring_rec_header *h;
	struct pmcring_cpu_buf *b;
	struct merge_ring *top;
	uint64_t pos, avail, ts, space, last;
	uint32_t hdr, len;
	unsigned int t;

	/* every ring is visible or drained: none drained, all visible */
	if (__builtin_expect(m->err || (m->ndr &&
			     (!m->nvis || blocks(&m->dr[0], m->tree[1].key,
						 m->tree[1].idx))), 0))
		return merge_next_slow(m, r);
	t = m->tree[1].idx;
	top = &m->rings[t];
	b = top->b;
	last = top->rec.ts;
	pos = top->rec.end;
	/*
	 * b->head is the data_head last loaded, with acquire ((C), in
	 * cpu_buf_peek_ids(), which loads it again when the records below
	 * it are used up: hand_out()).  Space to give back, a clamped
	 * timestamp to count, staged records: slow_at.
	 */
	avail = b->head - pos;
	if (__builtin_expect(b->pos >= top->slow_at ||
			     avail < PMCRING_HEADER_SIZE, 0))
		return hand_out(m, r);
	/*
	 * The next record's header before anything else: it starts the
	 * chain of loads the tree's compares wait for.  The record goes out
	 * below, once the checks passed.
	 */
	h = (const void *)top->next;	/* b->data + (pos & b->mask) */
	hdr = h->pl_header;
	ts = h->pl_tsc;
	len = PMCRING_HEADER_LEN(hdr);
	space = PMCRING_RING_SPACE(len);
	/*
	 * Magic and type in one compare: (hdr >> 16) is magic << 8 | type,
	 * type in [1, PMCRING_TYPE_MAX]; then the length, then the clamp.
	 */
	if (__builtin_expect((hdr >> 16) - (PMCRING_LOG_MAGIC << 8 | 1) >
			     PMCRING_TYPE_MAX - 1 ||
			     len - PMCRING_HEADER_SIZE >
			     PMCRING_RECORD_MAX - PMCRING_HEADER_SIZE ||
			     space > avail || ts < last, 0))
		return hand_out(m, r);
	*r = top->rec;
	/* cpu_buf_step() */
	WRITE_ONCE(&b->records, b->records + 1);
	b->last_ts = last;
	WRITE_ONCE(&b->pos, pos);
	top->rec.data = h;
	top->rec.len = len;
	top->rec.type = PMCRING_HEADER_TYPE(hdr);
	top->rec.ts = ts;
	top->rec.end = pos + space;
	top->next = b->data + ((pos + space) & b->mask);
	vis_top_moved(m, t, top);
	return 1;
}

/*
 * Lateness: how long after the time it was asked back the caller came back
 * with its records written (its poll() oversleeping, then merging and
 * writing).  A decaying maximum, so one slow round shortens the next waits
 * for a while (halved after about 44 rounds).
 */
uint64_t pmcring_merge_timeout_ns(struct pmcring_merge *m, uint64_t look_ns,
				  uint64_t now_ns)
{
	uint64_t from = look_ns, floor = m->max_delay_ns / 8, late, deadline, t;

	late = m->due_ns && now_ns > m->due_ns ? now_ns - m->due_ns : 0;
	m->late_ns -= m->late_ns / 64;
	if (late > m->late_ns)
		m->late_ns = late;
	/* Records held back count from their own commit. */
	if (m->nvis && m->tree[1].key < from)
		from = m->tree[1].key;
	/* aim at 3/4 of the promise: the rest absorbs jitter not seen yet */
	deadline = from + m->max_delay_ns - m->max_delay_ns / 4;
	deadline = deadline > m->late_ns ? deadline - m->late_ns : 0;
	t = deadline > now_ns ? deadline - now_ns : 0;
	if (t < floor)
		t = floor;	/* never a busy loop */
	if (t > m->max_delay_ns)
		t = m->max_delay_ns;
	m->due_ns = now_ns + t;
	return t;
}
