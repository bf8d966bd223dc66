// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring report`: the profile model and its text views (see report.h).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <linux/pmcring.h>

#include "kallsyms.h"
#include "report.h"

#define REPORT_NAME_LEN		64
#define REPORT_DEFAULT_TOP	20
#define REPORT_KERNEL_COMM	15	/* TASK_COMM_LEN - 1 */
/* missing files named in the header and the warnings */
#define REPORT_MISSING_SHOWN	8
/* perf's PERF_CONTEXT_* markers sit in the last page of the address space. */
#define REPORT_PC_MARKER	((uint64_t)-4095)

/* ---- a u32 -> index map (open addressing, value 0 = empty) ---- */

struct rmap {
	uint32_t	*keys;
	uint32_t	*vals;		/* index + 1 */
	size_t		cap, n;		/* cap: power of two */
};

static size_t rmap_slot(uint32_t key, size_t cap)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (h ^ (h >> 29)) & (cap - 1);
}

static int rmap_grow(struct rmap *m)
{
	size_t cap = m->cap ? m->cap * 2 : 64, i;
	uint32_t *k = calloc(cap, sizeof(*k)), *v = calloc(cap, sizeof(*v));

	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	for (i = 0; i < m->cap; i++) {
		size_t j;

		if (!m->vals[i])
			continue;
		j = rmap_slot(m->keys[i], cap);
		while (v[j])
			j = (j + 1) & (cap - 1);
		k[j] = m->keys[i];
		v[j] = m->vals[i];
	}
	free(m->keys);
	free(m->vals);
	m->keys = k;
	m->vals = v;
	m->cap = cap;
	return 0;
}

/* Index stored for @key, or -1. */
static int64_t rmap_get(const struct rmap *m, uint32_t key)
{
	size_t j;

	if (!m->cap)
		return -1;
	for (j = rmap_slot(key, m->cap); m->vals[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			return m->vals[j] - 1;
	return -1;
}

static int rmap_put(struct rmap *m, uint32_t key, uint32_t idx)
{
	size_t j;

	if ((m->n + 1) * 2 > m->cap && rmap_grow(m))
		return -ENOMEM;
	for (j = rmap_slot(key, m->cap); m->vals[j]; j = (j + 1) & (m->cap - 1))
		if (m->keys[j] == key)
			break;
	if (!m->vals[j])
		m->n++;
	m->keys[j] = key;
	m->vals[j] = idx + 1;
	return 0;
}

static void rmap_free(struct rmap *m)
{
	free(m->keys);
	free(m->vals);
}

static void *report_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	q = realloc(p, n * elem);
	if (q) {
		memset((char *)q + *cap * elem, 0, (n - *cap) * elem);
		*cap = n;
	}
	return q;
}

/* ---- the model ---- */

struct report_proc {
	uint32_t	pid;
	char		comm[REPORT_NAME_LEN];
	uint64_t	samples;
};

struct report_thread {
	uint32_t	tid, pid;
	char		name[REPORT_NAME_LEN];
	uint64_t	samples;
	uint64_t	switches;	/* PROCCSW records (switched out) */
	uint64_t	csw_value;	/* sum of their values */
	uint64_t	oncpu_ns;	/* from switch timestamps, CPU known */
};

struct report_pmc {
	uint32_t	pmcid;
	uint32_t	flags;		/* PMCRING_CTR_F_FREQ in bit 0 */
	uint64_t	rate;		/* PMCALLOCATE's rate, 0: not recorded */
	char		name[REPORT_NAME_LEN];
};

/*
 * One profile per counter (pmcid): its calling-context tree, per-frame and
 * per-thread sample counts.  Samples of different events never mix.
 */
struct report_prof {
	uint32_t	pmcid;
	struct report_node *nodes;
	size_t		nnodes, nodes_cap;
	uint64_t	*nhash_keys;	/* parent << 32 | frame */
	uint32_t	*nhash_vals;	/* node index, 0: empty */
	size_t		nhash_cap;
	/* per-frame counters, by sym_frame id */
	uint64_t	*fself, *ftotal, *fmark;
	size_t		fcap;
	uint64_t	*tsamples;	/* by index in report.threads */
	size_t		tcap;
	uint64_t	samples;
	/*
	 * Recorded periods (FILE.periods): their sum, and the samples that
	 * had one; the others weigh the fixed period or 1.
	 */
	uint64_t	period_sum, period_samples;
	/* --sort: entries by key, found through a hash */
	struct report_hist *hist;
	size_t		nhist, hist_cap;
	uint32_t	*hidx;		/* index + 1, 0: empty */
	size_t		hidx_cap;
};

/* An entry of the --sort table: the key's fields joined by '\x1f'. */
struct report_hist {
	char		*key;
	uint64_t	hash;
	uint64_t	self, children;
	uint64_t	self_period;	/* sum of the weights of self */
	uint64_t	mark;		/* sample that last counted children */
};

struct report {
	struct report_opts o;
	uint64_t	next_period;	/* report_set_period(), 0: none */
	struct sym_ctx	*sym;
	/* processes and threads */
	struct report_proc *procs;
	size_t		nprocs, procs_cap;
	struct rmap	proc_idx;
	struct report_thread *threads;
	size_t		nthreads, threads_cap;
	struct rmap	thread_idx;
	struct report_pmc *pmcs;
	size_t		npmcs, pmcs_cap;
	/* the profiles, sorted by pmcid; cur: the one the views show */
	struct report_prof **profs;
	size_t		nprofs, profs_cap;
	struct report_prof *cur;
	/* context switches: last switch time per CPU */
	uint64_t	*cpu_last;
	size_t		cpu_cap;
	bool		csw_has_cpu;
	bool		has_fallback;
	uint32_t	fallback_pid;
	/* totals */
	uint64_t	records, samples, samples_seen, drops, switches;
	uint64_t	first_ts, last_ts;
	uint32_t	*stack;		/* frame ids of the sample being added */
	/* per-record views */
	struct report_hooks hooks;
	struct report_frame *frames;	/* the sample being added, hooks set */
	uint64_t	cur_ts;		/* of the record being taken in */
	/* report_set_scan(): samples only count kernel addresses there */
	struct kallsyms_fit *scan;
};

struct report *report_new(const struct report_opts *o)
{
	struct report *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->o = *o;
	if (!r->o.top)
		r->o.top = REPORT_DEFAULT_TOP;
	r->sym = sym_new();
	r->stack = calloc(PMCRING_CALLCHAIN_DEPTH_MAX + 1, sizeof(*r->stack));
	r->frames = calloc(PMCRING_CALLCHAIN_DEPTH_MAX + 1, sizeof(*r->frames));
	if (!r->sym || !r->stack || !r->frames) {
		report_free(r);
		return NULL;
	}
	/* perf's short C++ names unless asked otherwise */
	sym_set_names(r->sym, o->names == REPORT_NAMES_FULL ? SYM_NAMES_FULL :
		      o->names == REPORT_NAMES_MANGLED ? SYM_NAMES_MANGLED :
		      SYM_NAMES_SHORT);
	r->first_ts = UINT64_MAX;
	return r;
}

static void report_prof_free(struct report_prof *p)
{
	size_t i;

	free(p->nodes);
	free(p->nhash_keys);
	free(p->nhash_vals);
	free(p->fself);
	free(p->ftotal);
	free(p->fmark);
	free(p->tsamples);
	for (i = 0; i < p->nhist; i++)
		free(p->hist[i].key);
	free(p->hist);
	free(p->hidx);
	free(p);
}

void report_free(struct report *r)
{
	size_t i;

	if (!r)
		return;
	sym_free(r->sym);
	free(r->procs);
	rmap_free(&r->proc_idx);
	free(r->threads);
	rmap_free(&r->thread_idx);
	free(r->pmcs);
	for (i = 0; i < r->nprofs; i++)
		report_prof_free(r->profs[i]);
	free(r->profs);
	free(r->cpu_last);
	free(r->stack);
	free(r->frames);
	free(r);
}

struct sym_ctx *report_sym(struct report *r)
{
	return r->sym;
}

void report_set_hooks(struct report *r, const struct report_hooks *h)
{
	r->hooks = *h;
}

/* A record for the hooks (@ts: the record being taken in). */
static void report_hook(struct report *r, const char *type, uint32_t pid,
			uint32_t tid, uint64_t addr, uint64_t value,
			const char *str)
{
	struct report_rec rec = {
		.type = type, .ts = r->cur_ts, .cpu = -1, .pid = pid,
		.tid = tid, .addr = addr, .value = value, .str = str,
	};

	if (r->hooks.rec)
		r->hooks.rec(r->hooks.ctx, &rec);
}

void report_set_scan(struct report *r, struct kallsyms_fit *fit)
{
	r->scan = fit;
}

void report_set_time_range(struct report *r, uint64_t from, uint64_t to)
{
	r->o.time_from = from;
	r->o.time_to = to;
}

void report_set_space_fallback(struct report *r, uint32_t pid)
{
	r->has_fallback = true;
	r->fallback_pid = pid;
}

static void report_name_set(char *dst, const char *src)
{
	size_t i;

	snprintf(dst, REPORT_NAME_LEN, "%s", src ? src : "");
	/* names end up in folded stacks and tables: no separators */
	for (i = 0; dst[i]; i++)
		if (dst[i] == ';' || (unsigned char)dst[i] < ' ')
			dst[i] = '_';
}

static struct report_proc *report_proc(struct report *r, uint32_t pid,
				       bool create)
{
	int64_t i = rmap_get(&r->proc_idx, pid);
	struct report_proc *p;

	if (i >= 0)
		return &r->procs[i];
	if (!create)
		return NULL;
	p = report_grow(r->procs, &r->procs_cap, r->nprocs + 1, sizeof(*p));
	if (!p)
		return NULL;
	r->procs = p;
	if (rmap_put(&r->proc_idx, pid, r->nprocs))
		return NULL;
	p += r->nprocs++;
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

static struct report_thread *report_thread(struct report *r, uint32_t tid,
					   uint32_t pid)
{
	int64_t i = rmap_get(&r->thread_idx, tid);
	struct report_thread *t;

	if (i >= 0) {
		t = &r->threads[i];
		if (pid != UINT32_MAX)
			t->pid = pid;
		return t;
	}
	t = report_grow(r->threads, &r->threads_cap, r->nthreads + 1,
			sizeof(*t));
	if (!t)
		return NULL;
	r->threads = t;
	if (rmap_put(&r->thread_idx, tid, r->nthreads))
		return NULL;
	t += r->nthreads++;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->pid = pid == UINT32_MAX ? tid : pid;
	return t;
}

/* The name samples of @pid are filed under. */
static const char *report_comm(struct report *r, uint32_t pid, uint32_t tid,
			       char *buf, size_t sz)
{
	struct report_proc *p = report_proc(r, pid, false);
	int64_t i;

	if (p && p->comm[0])
		return p->comm;
	i = rmap_get(&r->thread_idx, tid);
	if (i >= 0 && r->threads[i].name[0])
		return r->threads[i].name;
	if (!pid)	/* the idle task, as ps and perf call it */
		snprintf(buf, sz, "swapper");
	else
		snprintf(buf, sz, "pid-%" PRIu32, pid);
	return buf;
}

void report_proc_create(struct report *r, uint32_t pid, const char *comm)
{
	struct report_proc *p = report_proc(r, pid, true);
	size_t n = strlen(comm);

	report_hook(r, "comm", pid, pid, 0, 0, comm);
	if (!p || !n)
		return;
	/* keep a longer exec name that the kernel's comm truncates */
	if (p->comm[0] && !strncmp(p->comm, comm, n))
		return;
	report_name_set(p->comm, comm);
}

void report_thr_create(struct report *r, uint32_t tid, uint32_t pid,
		       const char *name)
{
	struct report_thread *t = report_thread(r, tid, pid);

	report_hook(r, "thread", pid, tid, 0, 0, name);
	if (t && name && *name)
		report_name_set(t->name, name);
}

void report_exec(struct report *r, uint64_t ts, uint32_t pid,
		 const char *path, uint64_t dynaddr)
{
	struct report_proc *p = report_proc(r, pid, true);
	const char *b = path ? strrchr(path, '/') : NULL;

	(void)ts;
	if (r->scan)
		return;
	report_hook(r, "exec", pid, pid, dynaddr, 0, path);
	if (p && path && *path)
		report_name_set(p->comm, b && b[1] ? b + 1 : path);
	sym_exec(r->sym, pid, path, dynaddr);
}

void report_map_in(struct report *r, uint32_t pid, uint64_t start,
		   const char *path)
{
	if (r->scan)
		return;	/* no image to read */
	report_hook(r, "mmap", pid, pid, start, 0, path);
	sym_map_in(r->sym, pid, start, path);
}

void report_map_out(struct report *r, uint32_t pid, uint64_t start)
{
	if (r->scan)
		return;
	report_hook(r, "munmap", pid, pid, start, 0, NULL);
	sym_map_out(r->sym, pid, start);
}

void report_fork(struct report *r, uint32_t parent, uint32_t child)
{
	struct report_proc *pp = report_proc(r, parent, false), *c;
	char comm[REPORT_NAME_LEN];

	if (r->scan)
		return;
	report_hook(r, "fork", parent, parent, 0, child, NULL);
	if (pp && pp->comm[0]) {
		memcpy(comm, pp->comm, sizeof(comm));
		c = report_proc(r, child, true);	/* may move pp */
		if (c)
			memcpy(c->comm, comm, sizeof(comm));
	}
	sym_fork(r->sym, parent, child);
}

void report_pmc(struct report *r, uint32_t pmcid, const char *name)
{
	report_pmc_alloc(r, pmcid, UINT32_MAX, 0, name);
}

void report_pmc_alloc(struct report *r, uint32_t pmcid, uint32_t flags,
		      uint64_t rate, const char *name)
{
	struct report_pmc *p;
	struct report_rec rec = {
		.type = "event", .ts = r->cur_ts, .cpu = -1, .pmcid = pmcid,
		.addr = flags, .value = rate, .str = name,
	};
	size_t i;

	if (r->hooks.rec)
		r->hooks.rec(r->hooks.ctx, &rec);
	for (i = 0; i < r->npmcs; i++)
		if (r->pmcs[i].pmcid == pmcid)
			break;
	if (i == r->npmcs) {
		p = report_grow(r->pmcs, &r->pmcs_cap, r->npmcs + 1, sizeof(*p));
		if (!p)
			return;
		r->pmcs = p;
		r->npmcs++;
	}
	p = &r->pmcs[i];
	p->pmcid = pmcid;
	if (flags != UINT32_MAX)
		p->flags = flags;
	if (rate)
		p->rate = rate;
	if (name && *name)
		report_name_set(p->name, name);
}

static const struct report_pmc *report_pmc_of(const struct report *r,
					      uint32_t pmcid)
{
	size_t i;

	for (i = 0; i < r->npmcs; i++)
		if (r->pmcs[i].pmcid == pmcid)
			return &r->pmcs[i];
	return NULL;
}

const char *report_event_name(const struct report *r, uint32_t pmcid,
			      char *buf, size_t sz)
{
	const struct report_pmc *pm = report_pmc_of(r, pmcid);

	if (pm && pm->name[0])
		return pm->name;
	snprintf(buf, sz, "pmc%" PRIu32, pmcid);
	return buf;
}

void report_set_period(struct report *r, uint64_t period)
{
	r->next_period = period;
}

uint64_t report_weight(const struct report *r, uint32_t pmcid,
		       uint64_t *nrecorded)
{
	const struct report_prof *p = NULL;
	uint64_t fixed = report_period(r, pmcid);
	size_t i;

	for (i = 0; i < r->nprofs; i++)
		if (r->profs[i]->pmcid == pmcid)
			p = r->profs[i];
	*nrecorded = p ? p->period_samples : 0;
	if (!p)
		return 0;
	return p->period_sum +
	       (p->samples - p->period_samples) * (fixed ? fixed : 1);
}

uint64_t report_period(const struct report *r, uint32_t pmcid)
{
	const struct report_pmc *pm = report_pmc_of(r, pmcid);

	/* a rate in frequency mode is Hz: the kernel varies the period */
	if (!pm || (pm->flags & PMCRING_CTR_F_FREQ))
		return 0;
	return pm->rate;
}

int report_select_event(struct report *r, const char *name)
{
	char buf[32];
	size_t i;

	for (i = 0; i < r->nprofs; i++) {
		if (!strcmp(report_event_name(r, r->profs[i]->pmcid, buf,
					      sizeof(buf)), name)) {
			r->cur = r->profs[i];
			return 0;
		}
	}
	return -ENOENT;
}

void report_say_events(const struct report *r, FILE *f)
{
	char buf[32];
	size_t i;

	if (!r->nprofs) {
		fprintf(f, "no event has samples");
		return;
	}
	fprintf(f, "events with samples:");
	for (i = 0; i < r->nprofs; i++)
		fprintf(f, "%s %s", i ? "," : "",
			report_event_name(r, r->profs[i]->pmcid, buf,
					  sizeof(buf)));
}

unsigned int report_nr_events(const struct report *r)
{
	return (unsigned int)r->nprofs;
}

const char *report_cur_event(const struct report *r, char *buf, size_t sz)
{
	return r->cur ? report_event_name(r, r->cur->pmcid, buf, sz) : NULL;
}

void report_drop(struct report *r, uint64_t ts)
{
	(void)ts;
	report_hook(r, "lost", 0, 0, 0, 0, NULL);
	r->drops++;
}

void report_seen(struct report *r, uint64_t ts)
{
	r->records++;
	r->cur_ts = ts;
	sym_set_time(r->sym, ts);
	if (ts < r->first_ts)
		r->first_ts = ts;
	if (ts > r->last_ts)
		r->last_ts = ts;
}

/* ---- filters ---- */

/* --comm NAME matches a name, or the kernel's 15-byte cut of NAME. */
static bool report_comm_match(const char *have, const char *want)
{
	return !strcmp(have, want) ||
	       (strlen(have) == REPORT_KERNEL_COMM && !strncmp(have, want,
							      REPORT_KERNEL_COMM));
}

static bool report_want(struct report *r, uint64_t ts, int32_t cpu,
			uint32_t pid, uint32_t tid)
{
	char buf[32];
	int64_t i;

	if (ts < r->o.time_from || ts > r->o.time_to)
		return false;
	if (r->o.cpu >= 0 && cpu >= 0 && cpu != r->o.cpu)
		return false;
	if (r->o.pid >= 0 && pid != (uint64_t)r->o.pid)
		return false;
	if (!r->o.comm)
		return true;
	if (report_comm_match(report_comm(r, pid, tid, buf, sizeof(buf)),
			      r->o.comm))
		return true;
	i = rmap_get(&r->thread_idx, tid);
	return i >= 0 && report_comm_match(r->threads[i].name, r->o.comm);
}

void report_csw(struct report *r, uint64_t ts, int32_t cpu, uint32_t pid,
		uint32_t tid, uint32_t pmcid, uint64_t value)
{
	struct report_thread *t;
	uint64_t last = 0;

	if (r->hooks.rec) {
		struct report_rec rec = {
			.type = "switch", .ts = ts, .cpu = cpu, .pid = pid,
			.tid = tid, .pmcid = pmcid, .value = value,
		};

		r->hooks.rec(r->hooks.ctx, &rec);
	}
	if (cpu >= 0) {
		uint64_t *v = report_grow(r->cpu_last, &r->cpu_cap, cpu + 1,
					  sizeof(*v));

		if (!v)
			return;
		r->cpu_last = v;
		last = v[cpu];
		v[cpu] = ts;
		r->csw_has_cpu = true;
	}
	if (!report_want(r, ts, cpu, pid, tid))
		return;
	t = report_thread(r, tid, pid);
	if (!t)
		return;
	r->switches++;
	t->switches++;
	t->csw_value += value;
	if (last && ts >= last)
		t->oncpu_ns += ts - last;
}

/* ---- the calling-context tree ---- */

static size_t report_nslot(uint64_t key, size_t cap)
{
	uint64_t h = key * 0x9e3779b97f4a7c15ull;

	return (h ^ (h >> 31)) & (cap - 1);
}

static int report_nhash_grow(struct report_prof *p)
{
	size_t cap = p->nhash_cap ? p->nhash_cap * 2 : 4096, i;
	uint64_t *k = calloc(cap, sizeof(*k));
	uint32_t *v = calloc(cap, sizeof(*v));

	if (!k || !v) {
		free(k);
		free(v);
		return -ENOMEM;
	}
	for (i = 1; i < p->nnodes; i++) {
		uint64_t key = (uint64_t)p->nodes[i].parent << 32 |
			       p->nodes[i].frame;
		size_t j = report_nslot(key, cap);

		while (v[j])
			j = (j + 1) & (cap - 1);
		k[j] = key;
		v[j] = i;
	}
	free(p->nhash_keys);
	free(p->nhash_vals);
	p->nhash_keys = k;
	p->nhash_vals = v;
	p->nhash_cap = cap;
	return 0;
}

/* The child of @parent for @frame, created if needed; 0 on ENOMEM. */
static uint32_t report_child(struct report_prof *p, uint32_t parent,
			     uint32_t frame)
{
	uint64_t key = (uint64_t)parent << 32 | frame;
	struct report_node *n;
	size_t j;

	if ((p->nnodes + 1) * 2 > p->nhash_cap && report_nhash_grow(p))
		return 0;
	for (j = report_nslot(key, p->nhash_cap); p->nhash_vals[j];
	     j = (j + 1) & (p->nhash_cap - 1))
		if (p->nhash_keys[j] == key)
			return p->nhash_vals[j];
	n = report_grow(p->nodes, &p->nodes_cap, p->nnodes + 1, sizeof(*n));
	if (!n || p->nnodes >= UINT32_MAX)
		return 0;
	p->nodes = n;
	n += p->nnodes;
	n->frame = frame;
	n->parent = parent;
	n->child = 0;
	n->sibling = p->nodes[parent].child;
	p->nodes[parent].child = p->nnodes;
	p->nhash_keys[j] = key;
	p->nhash_vals[j] = p->nnodes;
	return p->nnodes++;
}

static int report_frames_fit(struct report *r, struct report_prof *p)
{
	size_t need = sym_nr_frames(r->sym), cap = p->fcap;
	uint64_t *s, *t, *m;

	if (need <= p->fcap)
		return 0;
	s = report_grow(p->fself, &cap, need, sizeof(*s));
	if (s)
		p->fself = s;
	cap = p->fcap;
	t = report_grow(p->ftotal, &cap, need, sizeof(*t));
	if (t)
		p->ftotal = t;
	cap = p->fcap;
	m = report_grow(p->fmark, &cap, need, sizeof(*m));
	if (m)
		p->fmark = m;
	if (!s || !t || !m)
		return -ENOMEM;
	p->fcap = cap;
	return 0;
}

/* ---- the --sort table ---- */

static const char *const report_sort_names[REPORT_SORT_NR] = {
	"comm", "pid", "dso", "sym", "srcline",
};

int report_parse_sort(struct report_opts *o, const char *s, char *bad,
		      size_t badsz)
{
	const char *p = s;

	o->nsort = 0;
	while (*p) {
		size_t n = strcspn(p, ","), k;

		for (k = 0; k < REPORT_SORT_NR; k++)
			if (strlen(report_sort_names[k]) == n &&
			    !strncmp(p, report_sort_names[k], n))
				break;
		/* perf's other spelling of sym */
		if (n == 6 && !strncmp(p, "symbol", 6))
			k = REPORT_SORT_SYM;
		if (k == REPORT_SORT_NR || o->nsort == REPORT_SORT_MAX) {
			snprintf(bad, badsz, "%.*s", (int)n, p);
			return -EINVAL;
		}
		o->sort[o->nsort++] = (uint8_t)k;
		p += n;
		if (*p == ',' && *++p == 0) {
			snprintf(bad, badsz, "%s", "");
			return -EINVAL;		/* "comm," */
		}
	}
	if (!o->nsort) {
		snprintf(bad, badsz, "%s", s);
		return -EINVAL;
	}
	return 0;
}

static const char *report_base(const char *path)
{
	const char *b = strrchr(path, '/');

	return b && b[1] ? b + 1 : path;
}

/* The --sort key of frame @fr of a sample of @comm/@pid into @buf. */
static void report_hist_key(const struct report *r, const char *comm,
			    uint32_t pid, const struct report_frame *fr,
			    char *buf, size_t sz)
{
	size_t len = 0;
	unsigned int i;

	buf[0] = 0;
	for (i = 0; i < r->o.nsort && len < sz; i++) {
		const char *sep = i ? "\x1f" : "";
		int n = 0;

		switch (r->o.sort[i]) {
		case REPORT_SORT_COMM:
			n = snprintf(buf + len, sz - len, "%s%s", sep, comm);
			break;
		case REPORT_SORT_PID:
			n = snprintf(buf + len, sz - len, "%s%" PRIu32, sep, pid);
			break;
		case REPORT_SORT_DSO:
			n = snprintf(buf + len, sz - len, "%s%s", sep,
				     report_base(fr->loc.dso ? fr->loc.dso :
						 "[unknown]"));
			break;
		case REPORT_SORT_SYM:
			/* perf: [k] for a kernel address, named or not */
			n = snprintf(buf + len, sz - len, "%s[%s] %s", sep,
				     fr->frame->kind == SYM_KIND_KERNEL ||
				     fr->ip >= SYM_KERNEL_MIN ? "k" : ".",
				     fr->frame->name);
			break;
		case REPORT_SORT_SRCLINE: {
			/* the file's base name, as perf shows it; else "??" */
			const char *file;
			int line;

			if (sym_srcline(&fr->loc, &file, &line))
				n = snprintf(buf + len, sz - len, "%s%s:%d", sep,
					     report_base(file), line);
			else
				n = snprintf(buf + len, sz - len, "%s??", sep);
			break;
		}
		}
		if (n < 0)
			break;
		len += (size_t)n;
	}
}

static int report_hidx_grow(struct report_prof *p)
{
	size_t cap = p->hidx_cap ? p->hidx_cap * 2 : 256, i;
	uint32_t *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < p->nhist; i++) {
		size_t j = p->hist[i].hash & (cap - 1);

		while (v[j])
			j = (j + 1) & (cap - 1);
		v[j] = (uint32_t)i + 1;
	}
	free(p->hidx);
	p->hidx = v;
	p->hidx_cap = cap;
	return 0;
}

static struct report_hist *report_hist_get(struct report_prof *p,
					   const char *key)
{
	uint64_t h = 0xcbf29ce484222325ull;
	struct report_hist *e;
	const char *k;
	size_t j;

	for (k = key; *k; k++)
		h = (h ^ (unsigned char)*k) * 0x100000001b3ull;
	if ((p->nhist + 1) * 2 > p->hidx_cap && report_hidx_grow(p))
		return NULL;
	for (j = h & (p->hidx_cap - 1); p->hidx[j];
	     j = (j + 1) & (p->hidx_cap - 1)) {
		e = &p->hist[p->hidx[j] - 1];
		if (e->hash == h && !strcmp(e->key, key))
			return e;
	}
	e = report_grow(p->hist, &p->hist_cap, p->nhist + 1, sizeof(*e));
	if (!e)
		return NULL;
	p->hist = e;
	e += p->nhist;
	e->key = strdup(key);
	if (!e->key)
		return NULL;
	e->hash = h;
	p->hidx[j] = (uint32_t)++p->nhist;
	return e;
}

/* Self to the leaf's entry, children once to each entry in the chain. */
static int report_hist_sample(struct report *r, struct report_prof *p,
			      const char *comm, uint32_t pid,
			      unsigned int depth, uint64_t weight)
{
	char key[1024];
	unsigned int i;

	for (i = 0; i < depth; i++) {
		struct report_hist *e;

		report_hist_key(r, comm, pid, &r->frames[i], key, sizeof(key));
		e = report_hist_get(p, key);
		if (!e)
			return -ENOMEM;
		if (!i) {
			e->self++;
			e->self_period += weight;
		}
		if (e->mark != r->samples) {
			e->mark = r->samples;
			e->children++;
		}
	}
	return 0;
}

/* The profile of @pmcid, created (and sorted in) if needed. */
static struct report_prof *report_prof(struct report *r, uint32_t pmcid)
{
	struct report_prof **v, *p;
	size_t i;

	for (i = 0; i < r->nprofs && r->profs[i]->pmcid <= pmcid; i++)
		if (r->profs[i]->pmcid == pmcid)
			return r->profs[i];
	v = report_grow(r->profs, &r->profs_cap, r->nprofs + 1, sizeof(*v));
	if (!v)
		return NULL;
	r->profs = v;
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pmcid = pmcid;
	p->nodes_cap = 1024;
	p->nodes = calloc(p->nodes_cap, sizeof(*p->nodes));
	if (!p->nodes) {
		free(p);
		return NULL;
	}
	p->nnodes = 1;		/* the root */
	memmove(v + i + 1, v + i, (r->nprofs - i) * sizeof(*v));
	v[i] = p;
	r->nprofs++;
	if (!r->cur || pmcid < r->cur->pmcid)
		r->cur = p;	/* the views show the first event */
	return p;
}

/* Inlined functions, each a frame at most, and never more frames than fit. */
#define REPORT_INLINE_MAX	16

/*
 * --inline: the functions inlined at frame @depth go before it (leaf
 * first), which moves outward; returns where it is now, *@depth updated.
 */
static struct report_frame *report_inlines(struct report *r, uint64_t ip,
					   unsigned int *depth)
{
	const struct sym_frame *f[REPORT_INLINE_MAX];
	struct sym_loc l[REPORT_INLINE_MAX];
	struct report_frame *fr = &r->frames[*depth];
	unsigned int k, j;

	if (*depth + REPORT_INLINE_MAX + 1 > PMCRING_CALLCHAIN_DEPTH_MAX)
		return fr;
	k = sym_inlines(r->sym, &fr->loc, f, l, REPORT_INLINE_MAX);
	if (!k)
		return fr;
	r->frames[*depth + k] = *fr;
	for (j = 0; j < k; j++) {
		fr = &r->frames[*depth + j];
		fr->ip = ip;
		fr->frame = f[j];
		fr->loc = l[j];
		r->stack[*depth + j] = f[j]->id;
	}
	*depth += k;
	return &r->frames[*depth];
}

int report_sample(struct report *r, uint64_t ts, int32_t cpu, uint32_t pid,
		  uint32_t tid, uint32_t pmcid, const uint64_t *pc,
		  unsigned int n)
{
	const struct sym_frame *f;
	struct report_thread *t;
	struct report_frame *fr;
	struct report_proc *pr;
	struct report_prof *p;
	const char *comm;
	unsigned int i, depth = 0;
	bool prev_kernel = false;
	uint32_t node, space = pid;
	char buf[32];

	uint64_t period = r->next_period, weight;

	r->next_period = 0;
	r->samples_seen++;
	if (r->scan) {
		for (i = 0; i < n && i < PMCRING_CALLCHAIN_DEPTH_MAX; i++)
			if (pc[i] >= SYM_KERNEL_MIN && pc[i] < REPORT_PC_MARKER)
				kallsyms_fit_add(r->scan, pc[i]);
		return 0;
	}
	if (!report_want(r, ts, cpu, pid, tid))
		return 0;
	if (n > PMCRING_CALLCHAIN_DEPTH_MAX)
		n = PMCRING_CALLCHAIN_DEPTH_MAX;
	if (r->has_fallback && !sym_has_space(r->sym, pid))
		space = r->fallback_pid;
	for (i = 0; i < n; i++) {
		bool kernel = pc[i] >= SYM_KERNEL_MIN;
		/* the first frame of each context is an interrupted PC */
		bool ret = depth && (kernel || !prev_kernel);

		if (!pc[i] || pc[i] >= REPORT_PC_MARKER)
			continue;
		fr = &r->frames[depth];
		f = sym_resolve_loc(r->sym, space, pc[i], ret, &fr->loc);
		if (!f)
			return -ENOMEM;
		fr->ip = pc[i];
		fr->frame = f;
		if (r->o.inline_frames && f->kind == SYM_KIND_USER)
			fr = report_inlines(r, pc[i], &depth);
		/*
		 * A return address in no mapping of a process whose mappings
		 * we know: a frame-pointer walk through code built without
		 * frame pointers reads garbage from here on.  One frame for
		 * all of it keeps the graphs readable.
		 */
		if (ret && !kernel && f->kind == SYM_KIND_UNKNOWN &&
		    !f->module[0] && sym_has_space(r->sym, space)) {
			f = sym_frame_get(r->sym, SYM_KIND_UNKNOWN, NULL,
					  "[unknown]");
			if (!f)
				return -ENOMEM;
			fr->frame = f;
			fr->loc.dso = "[unknown]";
			r->stack[depth++] = f->id;
			break;
		}
		r->stack[depth++] = f->id;
		prev_kernel = kernel;
	}
	if (!depth) {
		f = sym_frame_get(r->sym, SYM_KIND_UNKNOWN, NULL, "[unknown]");
		if (!f)
			return -ENOMEM;
		fr = &r->frames[depth];
		memset(fr, 0, sizeof(*fr));
		fr->frame = f;
		fr->loc.dso = "[unknown]";
		r->stack[depth++] = f->id;
	}
	comm = report_comm(r, pid, tid, buf, sizeof(buf));
	f = sym_frame_get(r->sym, SYM_KIND_ROOT, NULL, comm);
	p = report_prof(r, pmcid);
	if (!f || !p || report_frames_fit(r, p))
		return -ENOMEM;
	if (r->hooks.sample) {
		struct report_sample_info si = {
			.ts = ts, .cpu = cpu, .pid = pid, .tid = tid,
			.pmcid = pmcid, .comm = comm, .n = depth,
			.f = r->frames,
			.period = period ? period : report_period(r, pmcid),
		};
		int err = r->hooks.sample(r->hooks.ctx, &si);

		if (err)
			return err;
	}

	r->samples++;
	p->samples++;
	/* its recorded period, else the fixed one, else 1 */
	weight = period;
	if (period) {
		p->period_sum += period;
		p->period_samples++;
	} else {
		weight = report_period(r, pmcid);
		if (!weight)
			weight = 1;
	}
	node = report_child(p, 0, f->id);
	p->nodes[0].total++;
	for (i = depth; node && i-- > 0;) {
		p->nodes[node].total++;
		node = report_child(p, node, r->stack[i]);
	}
	if (!node)
		return -ENOMEM;
	p->nodes[node].total++;
	p->nodes[node].self++;

	p->fself[r->stack[0]]++;
	for (i = 0; i < depth; i++) {
		uint32_t id = r->stack[i];

		if (p->fmark[id] == r->samples)
			continue;	/* recursion: count once */
		p->fmark[id] = r->samples;
		p->ftotal[id]++;
	}
	if (r->o.nsort && report_hist_sample(r, p, comm, pid, depth, weight))
		return -ENOMEM;
	t = report_thread(r, tid, pid);
	if (t) {
		size_t ti = t - r->threads;
		uint64_t *ts = report_grow(p->tsamples, &p->tcap, ti + 1,
					   sizeof(*ts));

		t->samples++;
		if (ts) {
			p->tsamples = ts;
			ts[ti]++;
		}
	}
	pr = report_proc(r, pid, true);
	if (pr)
		pr->samples++;
	return 0;
}

uint64_t report_nr_samples(const struct report *r)
{
	return r->samples;
}

static const struct report_node report_empty_root;

const struct report_node *report_nodes(const struct report *r, uint32_t *nr)
{
	if (!r->cur) {
		*nr = 1;
		return &report_empty_root;
	}
	*nr = r->cur->nnodes;
	return r->cur->nodes;
}

/* ---- sorting helpers ---- */

/* qsort has no context argument */
static const struct report *sort_r;
static const struct report_prof *sort_p;

static int report_child_cmp(const void *a, const void *b)
{
	const struct sym_frame *x, *y;
	int c;

	x = sym_frame_by_id(sort_r->sym, sort_p->nodes[*(const uint32_t *)a].frame);
	y = sym_frame_by_id(sort_r->sym, sort_p->nodes[*(const uint32_t *)b].frame);
	c = strcmp(x->name, y->name);
	if (c)
		return c;
	c = strcmp(x->module, y->module);
	return c ? c : (int)x->kind - (int)y->kind;
}

int report_children_sorted(struct report *r, uint32_t node, uint32_t **v,
			   uint32_t *nr)
{
	const struct report_prof *p = r->cur;
	uint32_t c, n = 0;

	if (!p) {
		*v = malloc(sizeof(**v));
		*nr = 0;
		return *v ? 0 : -ENOMEM;
	}
	for (c = p->nodes[node].child; c; c = p->nodes[c].sibling)
		n++;
	*v = malloc((n ? n : 1) * sizeof(**v));
	if (!*v)
		return -ENOMEM;
	n = 0;
	for (c = p->nodes[node].child; c; c = p->nodes[c].sibling)
		(*v)[n++] = c;
	sort_r = r;
	sort_p = p;
	qsort(*v, n, sizeof(**v), report_child_cmp);
	*nr = n;
	return 0;
}

/* ---- folded stacks: "comm;root;...;leaf count", sorted ---- */

static int report_folded_node(struct report *r, FILE *out, uint32_t node,
			      char *path, size_t len, size_t cap)
{
	uint32_t *kids, nk, i;
	int err;

	if (node) {
		const struct report_prof *p = r->cur;
		const struct sym_frame *f =
			sym_frame_by_id(r->sym, p->nodes[node].frame);
		size_t fl = strlen(f->name);

		if (len + fl + 2 > cap)
			fl = cap > len + 2 ? cap - len - 2 : 0;
		if (len)
			path[len++] = ';';
		memcpy(path + len, f->name, fl);
		len += fl;
		path[len] = 0;
		if (p->nodes[node].self)
			fprintf(out, "%s %" PRIu64 "\n", path,
				p->nodes[node].self);
	}
	err = report_children_sorted(r, node, &kids, &nk);
	if (err)
		return err;
	for (i = 0; i < nk && !err; i++)
		err = report_folded_node(r, out, kids[i], path, len, cap);
	free(kids);
	return err;
}

int report_folded(struct report *r, FILE *out)
{
	size_t cap = 1 << 20;
	char *path = malloc(cap);
	int err;

	if (!path)
		return -ENOMEM;
	path[0] = 0;
	err = report_folded_node(r, out, 0, path, 0, cap);
	free(path);
	return err;
}

/* ---- the text report ---- */

static const char *report_kind_tag(enum sym_kind k)
{
	switch (k) {
	case SYM_KIND_USER:	return "u";
	case SYM_KIND_KERNEL:	return "k";
	default:		return "?";
	}
}

static int report_frame_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_p->fself[x] != sort_p->fself[y])
		return sort_p->fself[x] > sort_p->fself[y] ? -1 : 1;
	if (sort_p->ftotal[x] != sort_p->ftotal[y])
		return sort_p->ftotal[x] > sort_p->ftotal[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

static int report_frame_total_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (sort_p->ftotal[x] != sort_p->ftotal[y])
		return sort_p->ftotal[x] > sort_p->ftotal[y] ? -1 : 1;
	return report_frame_cmp(a, b);
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

static bool report_below_limit(const struct report *r, uint64_t v,
			       uint64_t total)
{
	return r->o.percent_limit > 0 && pct(v, total) < r->o.percent_limit;
}

/* The frames with counters, ROOT frames left out; caller frees. */
static uint32_t *report_frame_list(struct report *r, uint32_t *nr)
{
	const struct report_prof *p = r->cur;

	uint32_t i, n = 0, *v = malloc((p->fcap ? p->fcap : 1) * sizeof(*v));

	if (!v)
		return NULL;
	for (i = 0; i < p->fcap && i < sym_nr_frames(r->sym); i++)
		if (p->ftotal[i] &&
		    sym_frame_by_id(r->sym, i)->kind != SYM_KIND_ROOT)
			v[n++] = i;
	*nr = n;
	return v;
}

static void report_print_functions(struct report *r, FILE *out, bool by_total,
				   bool user_only)
{
	const struct report_prof *p = r->cur;
	uint32_t n, i, shown = 0, *v = report_frame_list(r, &n);

	if (!v)
		return;
	sort_r = r;
	sort_p = p;
	qsort(v, n, sizeof(*v), by_total ? report_frame_total_cmp :
					  report_frame_cmp);
	fprintf(out, "\n%s\n", user_only ? "Top user functions by self samples:" :
		by_total ? "Top functions by total samples (self + callees):" :
			   "Top functions by self samples:");
	fprintf(out, "  %7s %8s %7s %8s  %s\n", "Self%", "Self", "Total%",
		"Total", "Function [module] (u: user, k: kernel, ?: unknown)");
	for (i = 0; i < n && shown < r->o.top; i++) {
		const struct sym_frame *f = sym_frame_by_id(r->sym, v[i]);

		if (user_only && f->kind != SYM_KIND_USER)
			continue;
		if (!by_total && !p->fself[v[i]])
			break;
		if (report_below_limit(r, by_total ? p->ftotal[v[i]] :
				       p->fself[v[i]], p->samples))
			break;
		shown++;
		fprintf(out, "  %6.2f%% %8" PRIu64 " %6.2f%% %8" PRIu64
			"  %s %s %s%s%s\n", pct(p->fself[v[i]], p->samples),
			p->fself[v[i]], pct(p->ftotal[v[i]], p->samples),
			p->ftotal[v[i]], report_kind_tag(f->kind), f->name,
			f->module[0] == '[' ? "" : "[",
			f->module[0] ? f->module : "-",
			f->module[0] == '[' ? "" : "]");
	}
	free(v);
}

static int report_thread_cmp(const void *a, const void *b)
{
	const struct report_thread *x = a, *y = b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static void report_print_threads(struct report *r, FILE *out)
{
	struct report_thread *v;
	size_t i, shown = 0;
	char buf[32];

	v = malloc((r->nthreads ? r->nthreads : 1) * sizeof(*v));
	if (!v)
		return;
	memcpy(v, r->threads, r->nthreads * sizeof(*v));
	for (i = 0; i < r->nthreads; i++)	/* this event's samples */
		v[i].samples = i < r->cur->tcap ? r->cur->tsamples[i] : 0;
	qsort(v, r->nthreads, sizeof(*v), report_thread_cmp);
	fprintf(out, "\nSamples per process and thread:\n");
	fprintf(out, "  %7s %8s %8s %8s  %-20s %s\n", "%", "Samples", "PID",
		"TID", "Process", "Thread");
	for (i = 0; i < r->nthreads && shown < r->o.top; i++) {
		if (!v[i].samples ||
		    report_below_limit(r, v[i].samples, r->cur->samples))
			break;
		shown++;
		fprintf(out, "  %6.2f%% %8" PRIu64 " %8" PRIu32 " %8" PRIu32
			"  %-20s %s\n", pct(v[i].samples, r->cur->samples),
			v[i].samples, v[i].pid, v[i].tid,
			report_comm(r, v[i].pid, v[i].tid, buf, sizeof(buf)),
			v[i].name[0] ? v[i].name : "-");
	}
	free(v);
}

static int report_switch_cmp(const void *a, const void *b)
{
	const struct report_thread *x = a, *y = b;
	uint64_t vx = sort_r->csw_has_cpu ? x->oncpu_ns : x->csw_value;
	uint64_t vy = sort_r->csw_has_cpu ? y->oncpu_ns : y->csw_value;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->switches != y->switches)
		return x->switches > y->switches ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int report_print_switches(struct report *r, FILE *out)
{
	struct report_thread *v;
	uint64_t span;
	size_t i, shown = 0;
	char buf[32];

	fprintf(out, "\nContext switches (PROCCSW): %" PRIu64 " switch-outs\n",
		r->switches);
	if (!r->switches) {
		fprintf(out, "  none recorded (record with the proccsw type)\n");
		return 0;
	}
	v = malloc(r->nthreads * sizeof(*v));
	if (!v)
		return -ENOMEM;
	memcpy(v, r->threads, r->nthreads * sizeof(*v));
	sort_r = r;
	qsort(v, r->nthreads, sizeof(*v), report_switch_cmp);
	span = r->last_ts > r->first_ts && r->first_ts != UINT64_MAX ?
	       r->last_ts - r->first_ts : 0;
	fprintf(out, "  on-CPU time %s; CPU%%: of the %.3f s recorded\n",
		r->csw_has_cpu ? "from the switch timestamps of each CPU" :
		"from the PROCCSW values (ns run before each switch-out)",
		(double)span / 1e9);
	fprintf(out, "  %8s %8s %-20s %9s %12s %12s %6s\n", "PID", "TID",
		"Process", "Switches", "On-CPU ms", "Avg slice us", "CPU%");
	for (i = 0; i < r->nthreads && shown < r->o.top; i++) {
		uint64_t ns = r->csw_has_cpu ? v[i].oncpu_ns : v[i].csw_value;

		if (!v[i].switches)
			continue;
		shown++;
		fprintf(out, "  %8" PRIu32 " %8" PRIu32 " %-20s %9" PRIu64
			" %12.3f %12.1f %6.1f\n", v[i].pid, v[i].tid,
			report_comm(r, v[i].pid, v[i].tid, buf, sizeof(buf)),
			v[i].switches, (double)ns / 1e6,
			(double)ns / 1e3 / (double)v[i].switches,
			pct(ns, span));
	}
	free(v);
	return 0;
}

/* ---- the --sort table, perf report's main view ---- */

static bool sort_children;

static int report_hist_cmp(const void *a, const void *b)
{
	const struct report_hist *x = *(struct report_hist *const *)a;
	const struct report_hist *y = *(struct report_hist *const *)b;
	uint64_t vx = sort_children ? x->children : x->self;
	uint64_t vy = sort_children ? y->children : y->self;

	if (vx != vy)
		return vx > vy ? -1 : 1;
	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	return strcmp(x->key, y->key);
}

/* Field @i of a '\x1f'-joined key, into @buf. */
static const char *report_key_field(const char *key, unsigned int i,
				    char *buf, size_t sz)
{
	const char *p = key, *e;

	while (i-- && (p = strchr(p, '\x1f')))
		p++;
	if (!p)
		return "";
	e = strchr(p, '\x1f');
	snprintf(buf, sz, "%.*s", (int)(e ? (size_t)(e - p) : strlen(p)), p);
	return buf;
}

static void report_print_sort(struct report *r, FILE *out)
{
	static const char *const head[REPORT_SORT_NR] = {
		"Command", "Pid", "Shared Object", "Symbol", "Source:Line",
	};
	const struct report_prof *p = r->cur;
	uint64_t period = report_period(r, p->pmcid);
	struct report_hist **v;
	size_t i, n = 0, shown = 0, w[REPORT_SORT_MAX];
	bool children = !r->o.no_children;
	char buf[1024];
	unsigned int k;

	v = malloc((p->nhist ? p->nhist : 1) * sizeof(*v));
	if (!v)
		return;
	for (i = 0; i < p->nhist; i++)
		if (children || p->hist[i].self)
			v[n++] = &p->hist[i];
	sort_children = children;
	qsort(v, n, sizeof(*v), report_hist_cmp);
	if (n > r->o.top)
		n = r->o.top;
	for (k = 0; k < r->o.nsort; k++) {
		w[k] = strlen(head[r->o.sort[k]]);
		for (i = 0; i < n; i++) {
			size_t l = strlen(report_key_field(v[i]->key, k, buf,
							   sizeof(buf)));
			if (l > w[k])
				w[k] = l;
		}
	}
	fprintf(out, "\nSamples by");
	for (k = 0; k < r->o.nsort; k++)
		fprintf(out, "%s%s", k ? "," : " ",
			report_sort_names[r->o.sort[k]]);
	fprintf(out, " (%s; Period: %s):\n", children ?
		"Children: samples with the entry anywhere in their chain" :
		"self samples only",
		p->period_samples ? "sum of the self samples' recorded periods" :
		period ? "samples x the period" : "samples x 1, none recorded");
	fprintf(out, "  ");
	if (children)
		fprintf(out, "%8s ", "Children");
	fprintf(out, "%8s %8s %12s", "Self", "Samples", "Period");
	for (k = 0; k < r->o.nsort; k++)
		fprintf(out, "  %-*s", k + 1 < r->o.nsort ? (int)w[k] : 0,
			head[r->o.sort[k]]);
	fputc('\n', out);
	for (i = 0; i < n; i++) {
		const struct report_hist *e = v[i];

		if (report_below_limit(r, children ? e->children : e->self,
				       p->samples))
			break;
		shown++;
		fprintf(out, "  ");
		if (children)
			fprintf(out, "%7.2f%% ", pct(e->children, p->samples));
		fprintf(out, "%7.2f%% %8" PRIu64 " %12" PRIu64,
			pct(e->self, p->samples), e->self, e->self_period);
		for (k = 0; k < r->o.nsort; k++)
			fprintf(out, "  %-*s", k + 1 < r->o.nsort ? (int)w[k] : 0,
				report_key_field(e->key, k, buf, sizeof(buf)));
		fputc('\n', out);
	}
	if (!shown && n)
		fprintf(out, "  (no entry at or above --percent-limit %g%%)\n",
			r->o.percent_limit);
	free(v);
}

/* ---- -G / --call-graph: text trees of callers or callees ---- */

struct cg_node {
	uint32_t	frame, child, sibling;
	uint64_t	w;
};

struct cg {
	struct cg_node	*n;
	size_t		nn, cap;
};

static uint32_t cg_child(struct cg *g, uint32_t parent, uint32_t frame)
{
	struct cg_node *n;
	uint32_t c;

	for (c = g->n[parent].child; c; c = g->n[c].sibling)
		if (g->n[c].frame == frame)
			return c;
	n = report_grow(g->n, &g->cap, g->nn + 1, sizeof(*n));
	if (!n)
		return 0;
	g->n = n;
	n += g->nn;
	n->frame = frame;
	n->child = 0;
	n->w = 0;
	n->sibling = g->n[parent].child;
	g->n[parent].child = (uint32_t)g->nn;
	return (uint32_t)g->nn++;
}

/* Add @w along @path (outermost first in the tree's direction). */
static int cg_insert(struct cg *g, const uint32_t *path, unsigned int n,
		     uint64_t w)
{
	uint32_t node = 0;
	unsigned int i;

	g->n[0].w += w;
	for (i = 0; i < n; i++) {
		node = cg_child(g, node, path[i]);
		if (!node)
			return -ENOMEM;
		g->n[node].w += w;
	}
	return 0;
}

/* Frames from CCT node @n up to its process (ROOT) frame, left out. */
static unsigned int report_up(const struct report_prof *p, uint32_t n,
			      uint32_t *path, unsigned int max)
{
	unsigned int len = 0;

	for (; n && p->nodes[n].parent && len < max; n = p->nodes[n].parent)
		path[len++] = p->nodes[n].frame;
	return len;
}

static bool report_outermost(const struct report_prof *p, uint32_t n)
{
	uint32_t f = p->nodes[n].frame;

	for (n = p->nodes[n].parent; n; n = p->nodes[n].parent)
		if (p->nodes[n].frame == f)
			return false;
	return true;
}

/* Caller order with children: the subtree of @n, paths from its top. */
static int cg_subtree(const struct report_prof *p, struct cg *g, uint32_t n,
		      uint32_t *path, unsigned int len, unsigned int max)
{
	uint32_t c;
	int err = 0;

	if (len >= max)
		return 0;
	path[len++] = p->nodes[n].frame;
	if (p->nodes[n].self)
		err = cg_insert(g, path, len, p->nodes[n].self);
	for (c = p->nodes[n].child; c && !err; c = p->nodes[c].sibling)
		err = cg_subtree(p, g, c, path, len, max);
	return err;
}

/* The tree of function @frame in the current event. */
static int cg_build(struct report *r, struct cg *g, uint32_t frame,
		    uint32_t *path, unsigned int max)
{
	const struct report_prof *p = r->cur;
	bool children = !r->o.no_children;
	unsigned int i, len;
	uint32_t n;
	int err = 0;

	for (n = 1; n < p->nnodes && !err; n++) {
		uint64_t w = children ? p->nodes[n].total : p->nodes[n].self;

		if (p->nodes[n].frame != frame || !w ||
		    (children && !report_outermost(p, n)))
			continue;
		if (r->o.call_graph == REPORT_CG_CALLEE) {
			len = report_up(p, n, path, max);
			err = cg_insert(g, path, len, w);
		} else if (children) {
			err = cg_subtree(p, g, n, path, 0, max);
		} else {
			uint32_t t;

			len = report_up(p, n, path, max);
			for (i = 0; i < len / 2; i++) {	/* outermost first */
				t = path[i];
				path[i] = path[len - 1 - i];
				path[len - 1 - i] = t;
			}
			err = cg_insert(g, path, len, w);
		}
	}
	return err;
}

static const struct cg *sort_cg;

static int cg_cmp(const void *a, const void *b)
{
	const struct cg_node *x = &sort_cg->n[*(const uint32_t *)a];
	const struct cg_node *y = &sort_cg->n[*(const uint32_t *)b];

	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return x->frame < y->frame ? -1 : x->frame > y->frame;
}

/* Children of @node by weight, those under --percent-limit left out. */
static uint32_t *cg_kids(const struct report *r, const struct cg *g,
			 uint32_t node, unsigned int *nk)
{
	unsigned int n = 0;
	uint32_t c, *v;

	for (c = g->n[node].child; c; c = g->n[c].sibling)
		n++;
	v = malloc((n ? n : 1) * sizeof(*v));
	if (!v)
		return NULL;
	n = 0;
	for (c = g->n[node].child; c; c = g->n[c].sibling)
		if (!report_below_limit(r, g->n[c].w, r->cur->samples))
			v[n++] = c;
	sort_cg = g;
	qsort(v, n, sizeof(*v), cg_cmp);
	*nk = n;
	return v;
}

#define CG_PREFIX_MAX	8192

/*
 * perf's graph layout: a branch is "|--P%--name" ("--P%--name" for the
 * last), its subtree indented under the name; a node with one child of
 * its own weight continues straight down, without a percentage.
 */
static void cg_print(struct report *r, FILE *out, const struct cg *g,
		     uint32_t node, char *prefix, size_t plen)
{
	unsigned int nk, i;
	uint32_t *kids = cg_kids(r, g, node, &nk);
	char lead[32];

	if (!kids)
		return;
	if (nk == 1 && g->n[kids[0]].w == g->n[node].w) {
		fprintf(out, "%s%s\n", prefix,
			sym_frame_by_id(r->sym, g->n[kids[0]].frame)->name);
		cg_print(r, out, g, kids[0], prefix, plen);
		free(kids);
		return;
	}
	for (i = 0; i < nk; i++) {
		bool last = i + 1 == nk;
		size_t l = (size_t)snprintf(lead, sizeof(lead), "%s%.2f%%--",
					    last ? " --" : "|--",
					    pct(g->n[kids[i]].w, r->cur->samples));

		fprintf(out, "%s|\n%s%s%s\n", prefix, prefix, lead,
			sym_frame_by_id(r->sym, g->n[kids[i]].frame)->name);
		if (plen + l + 1 >= CG_PREFIX_MAX)
			continue;
		prefix[plen] = last ? ' ' : '|';
		memset(prefix + plen + 1, ' ', l - 1);
		prefix[plen + l] = 0;
		cg_print(r, out, g, kids[i], prefix, plen + l);
		prefix[plen] = 0;
	}
	free(kids);
}

static void report_print_callgraph(struct report *r, FILE *out)
{
	const struct report_prof *p = r->cur;
	bool children = !r->o.no_children;
	uint32_t n, i, shown = 0, *v = report_frame_list(r, &n), *path;
	char *prefix = malloc(CG_PREFIX_MAX);
	unsigned int max = PMCRING_CALLCHAIN_DEPTH_MAX + 2;

	path = malloc(max * sizeof(*path));
	if (!v || !prefix || !path)
		goto out;
	sort_r = r;
	sort_p = p;
	qsort(v, n, sizeof(*v), children ? report_frame_total_cmp :
					   report_frame_cmp);
	fprintf(out, "\nCall graph (%s order: %s; %s):\n",
		r->o.call_graph == REPORT_CG_CALLER ? "caller" : "callee",
		r->o.call_graph == REPORT_CG_CALLER ?
		(children ? "each function, then its callees" :
			    "the callers down to each function") :
		"each function, then its callers",
		children ? "Children: samples with the function in their chain" :
			   "self samples only");
	for (i = 0; i < n && shown < r->o.top; i++) {
		const struct sym_frame *f = sym_frame_by_id(r->sym, v[i]);
		uint64_t w = children ? p->ftotal[v[i]] : p->fself[v[i]];
		struct cg g = { 0 };
		unsigned int nk, j;
		uint32_t *kids;

		if (!w || report_below_limit(r, w, p->samples))
			break;
		shown++;
		fprintf(out, "\n  %6.2f%% %6.2f%%  %s %s%s%s\n",
			pct(p->ftotal[v[i]], p->samples),
			pct(p->fself[v[i]], p->samples), f->name,
			f->module[0] == '[' ? "" : "[",
			f->module[0] ? f->module : "-",
			f->module[0] == '[' ? "" : "]");
		g.n = report_grow(NULL, &g.cap, 64, sizeof(*g.n));
		if (!g.n)
			break;
		g.nn = 1;
		if (cg_build(r, &g, v[i], path, max)) {
			free(g.n);
			break;
		}
		kids = cg_kids(r, &g, 0, &nk);
		for (j = 0; kids && j < nk; j++) {
			fprintf(out, "          |\n          ---%s\n",
				sym_frame_by_id(r->sym, g.n[kids[j]].frame)->name);
			strcpy(prefix, "             ");
			cg_print(r, out, &g, kids[j], prefix, strlen(prefix));
		}
		free(kids);
		free(g.n);
	}
out:
	free(v);
	free(prefix);
	free(path);
}

/* The head of an event's section: its samples and what one weighs. */
static void report_print_event(struct report *r, FILE *out)
{
	const struct report_pmc *pm = report_pmc_of(r, r->cur->pmcid);
	uint64_t period = report_period(r, r->cur->pmcid);
	char buf[32];

	fprintf(out, "\n# Event '%s' (pmcid %" PRIu32 "): %" PRIu64
		" samples", report_event_name(r, r->cur->pmcid, buf,
					      sizeof(buf)),
		r->cur->pmcid, r->cur->samples);
	if (r->cur->period_samples) {
		fprintf(out, ", event count %" PRIu64 " (the sum of the "
			"samples' recorded periods", report_weight(r,
			r->cur->pmcid, &(uint64_t){ 0 }));
		if (r->cur->period_samples < r->cur->samples)
			fprintf(out, "; %" PRIu64 " samples had none and weigh "
				"%s", r->cur->samples - r->cur->period_samples,
				period ? "the period" : "1");
		fprintf(out, ")\n");
	} else if (period)
		fprintf(out, ", period %" PRIu64 " (event count ~%" PRIu64
			")\n", period, period * r->cur->samples);
	else if (pm && (pm->flags & PMCRING_CTR_F_FREQ) && pm->rate)
		fprintf(out, ", frequency %" PRIu64 " Hz: the period of each "
			"sample is not recorded, each weighs 1\n", pm->rate);
	else
		fprintf(out, ", %s: each weighs 1\n",
			pm && (pm->flags & PMCRING_CTR_F_FREQ) ?
			"frequency mode, the period of each sample is not recorded" :
			"no period recorded");
}

/*
 * The files the samples fell in that are not here, named, and the
 * --path-map that maps their common directory: "@pfx" starts each line.
 */
static void report_missing(struct report *r, FILE *out, const char *pfx)
{
	const char *v[REPORT_MISSING_SHOWN];
	unsigned int n = sym_missing(r->sym, v, REPORT_MISSING_SHOWN), i;
	size_t common;

	if (!n)
		return;
	fprintf(out, "%s%u file%s the samples fell in %s not on this machine, "
		"their functions stay [unknown]:", pfx, n, n > 1 ? "s" : "",
		n > 1 ? "are" : "is");
	for (i = 0; i < n && i < REPORT_MISSING_SHOWN; i++)
		fprintf(out, " %s", v[i]);
	fprintf(out, "%s\n", n > REPORT_MISSING_SHOWN ? " ..." : "");
	/* their longest common directory */
	common = strlen(v[0]);
	for (i = 1; i < n && i < REPORT_MISSING_SHOWN; i++) {
		size_t k = 0;

		while (k < common && v[i][k] == v[0][k])
			k++;
		common = k;
	}
	while (common && v[0][common - 1] != '/')
		common--;
	if (common > 1)
		common--;	/* the directory without its last '/' */
	fprintf(out, "%smap them to where they are here: --path-map "
		"%.*s=DIR (or --symfs ROOT for a whole tree)\n", pfx,
		(int)common, v[0]);
}

void report_sym_warnings(struct report *r, const char *who)
{
	char pfx[64];
	size_t i;

	for (i = 0; i < sym_nr_warnings(r->sym); i++)
		fprintf(stderr, "%s: warning: %s\n", who,
			sym_warning(r->sym, i));
	snprintf(pfx, sizeof(pfx), "%s: warning: ", who);
	report_missing(r, stderr, pfx);
}

void report_print(struct report *r, FILE *out, const char *title,
		  bool switches)
{
	unsigned int images, with_syms;
	size_t i;

	sym_stats(r->sym, &images, &with_syms);
	fprintf(out, "# pmcring report of %s\n", title);
	fprintf(out, "# %" PRIu64 " records, %" PRIu64 " samples (%" PRIu64
		" after filters), %" PRIu64 " drop notices, %.3f s\n",
		r->records, r->samples_seen, r->samples, r->drops,
		r->last_ts > r->first_ts && r->first_ts != UINT64_MAX ?
		(double)(r->last_ts - r->first_ts) / 1e9 : 0.0);
	for (i = 0; i < r->npmcs; i++)
		fprintf(out, "# counter %" PRIu32 ": %s\n", r->pmcs[i].pmcid,
			r->pmcs[i].name);
	fprintf(out, "# symbols: %u of %u images with symbols, %zu kernel "
		"symbols\n", with_syms, images, sym_nr_kernel_syms(r->sym));
	for (i = 0; i < sym_nr_warnings(r->sym); i++)
		fprintf(out, "# WARNING: %s\n", sym_warning(r->sym, i));
	report_missing(r, out, "# WARNING: ");
	if (r->drops)
		fprintf(out, "# WARNING: records were dropped; the profile "
			"is incomplete (use more --buffer-pages)\n");
	if (!r->samples) {
		fprintf(out, "\nNo samples%s.\n", r->samples_seen ?
			" match the filters" : " (record with the callchain type)");
	}
	for (i = 0; i < r->nprofs; i++) {
		if (r->o.one_event && r->profs[i] != r->cur)
			continue;
		r->cur = r->profs[i];
		report_print_event(r, out);
		if (r->o.nsort) {
			report_print_sort(r, out);
		} else {
			report_print_functions(r, out, false, false);
			report_print_functions(r, out, false, true);
			report_print_functions(r, out, true, false);
		}
		if (r->o.call_graph)
			report_print_callgraph(r, out);
		report_print_threads(r, out);
	}
	if (!r->o.one_event)
		r->cur = r->nprofs ? r->profs[0] : NULL;
	if (switches)
		report_print_switches(r, out);
}
