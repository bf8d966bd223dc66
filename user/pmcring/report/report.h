/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `pmcring report`: a profile built from the records of a file.
 *
 * report.c is the model: it takes records one by one, in timestamp order,
 * from any reader (report_cmd.c: pmclog through libpmcring's parser, barman
 * and LDMS blob through the command's fmt readers), keeps the process and
 * thread names and the address spaces (sym.c), and folds every CALLCHAIN
 * sample into a calling-context tree whose first level is the process
 * name.  The views (top functions, threads, context switches, folded stacks
 * and the flame graph of flame.c) all read that tree and the tables.
 */
#ifndef PMCRING_REPORT_H
#define PMCRING_REPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "sym.h"

/* --sort keys, as perf report spells them */
enum report_sort_key {
	REPORT_SORT_COMM, REPORT_SORT_PID, REPORT_SORT_DSO, REPORT_SORT_SYM,
	REPORT_SORT_SRCLINE, REPORT_SORT_NR,
};
#define REPORT_SORT_MAX		REPORT_SORT_NR

/* -G / --call-graph: none, F's callees (caller order), F's callers */
enum report_cg { REPORT_CG_NONE, REPORT_CG_CALLER, REPORT_CG_CALLEE };

struct report_opts {
	int64_t		pid;		/* -1: every process */
	const char	*comm;		/* NULL: every process/thread name */
	int32_t		cpu;		/* -1: every CPU */
	uint64_t	time_from;	/* ns, header timestamps, inclusive */
	uint64_t	time_to;	/* ns, inclusive; UINT64_MAX: no end */
	unsigned int	top;		/* rows of the tables; 0: 20 */
	/* --sort: keys of the perf-style table, nsort 0: no such table */
	unsigned int	nsort;
	uint8_t		sort[REPORT_SORT_MAX];	/* enum report_sort_key */
	bool		no_children;	/* --no-children: self only */
	double		percent_limit;	/* hide rows and branches below */
	uint8_t		call_graph;	/* enum report_cg */
	bool		one_event;	/* report_print: the current event only */
	bool		inline_frames;	/* --inline: inlined functions (DWARF)
					 * as frames of their own */
	uint8_t		names;		/* enum report_names */
};

/* C++/Rust names: perf's short form, the full signature, or mangled */
enum report_names {
	REPORT_NAMES_SHORT, REPORT_NAMES_FULL, REPORT_NAMES_MANGLED,
};

/* "comm,dso,sym" into @o->sort; 0, or -EINVAL naming the bad key in @bad */
int report_parse_sort(struct report_opts *o, const char *s, char *bad,
		      size_t badsz);

/* A node of the calling-context tree; node 0 is the root (all samples). */
struct report_node {
	uint32_t	frame;		/* sym_frame id; unused for node 0 */
	uint32_t	parent;
	uint32_t	child;		/* first child, 0: none */
	uint32_t	sibling;	/* next sibling, 0: none */
	uint64_t	total;		/* samples in this subtree */
	uint64_t	self;		/* samples whose leaf is this node */
};

struct report;

/* A frame of a sample, for the per-sample views (`pmcring script`). */
struct report_frame {
	uint64_t		ip;	/* as recorded; 0: no address */
	const struct sym_frame	*frame;
	struct sym_loc		loc;
};

/* A sample that passed the filters, its frames leaf first. */
struct report_sample_info {
	uint64_t		ts;
	int32_t			cpu;
	uint32_t		pid, tid, pmcid;
	const char		*comm;
	unsigned int		n;
	const struct report_frame *f;
	/* its recorded period, else the fixed one; 0: not recorded */
	uint64_t		period;
};

/* Any other record, as the per-record views see it. */
struct report_rec {
	const char	*type;	/* "comm", "thread", "exec", "mmap", ... */
	uint64_t	ts;
	int32_t		cpu;	/* -1: not known */
	uint32_t	pid, tid, pmcid;
	uint64_t	addr, value;
	const char	*str;	/* name or path, or NULL */
};

struct report_hooks {
	/* 0 or -errno, which stops the reading */
	int	(*sample)(void *ctx, const struct report_sample_info *s);
	void	(*rec)(void *ctx, const struct report_rec *rec);
	void	*ctx;
};

struct report *report_new(const struct report_opts *o);
void report_free(struct report *r);	/* accepts NULL */
struct sym_ctx *report_sym(struct report *r);
/* Called for each record as it is taken in (`pmcring script`). */
void report_set_hooks(struct report *r, const struct report_hooks *h);
/* Change the time filter (relative bounds are known at the first record). */
void report_set_time_range(struct report *r, uint64_t from, uint64_t to);
/*
 * Resolve samples of a pid without mappings of its own in @pid's space
 * (barman: samples name threads, mappings name processes).
 */
void report_set_space_fallback(struct report *r, uint32_t pid);

/*
 * Record handlers.  @ts is the record's timestamp; @cpu is -1 when the
 * format does not say which CPU a record came from.
 */
void report_proc_create(struct report *r, uint32_t pid, const char *comm);
void report_thr_create(struct report *r, uint32_t tid, uint32_t pid,
		       const char *name);
/* @dynaddr: PROCEXEC's pl_dynaddr (offset 32), a PIE's load base or 0 */
void report_exec(struct report *r, uint64_t ts, uint32_t pid,
		 const char *path, uint64_t dynaddr);
void report_map_in(struct report *r, uint32_t pid, uint64_t start,
		   const char *path);
void report_map_out(struct report *r, uint32_t pid, uint64_t start);
void report_fork(struct report *r, uint32_t parent, uint32_t child);
void report_pmc(struct report *r, uint32_t pmcid, const char *name);
/*
 * PMCALLOCATE (@rate: the period, or Hz if @flags has PMCRING_CTR_F_FREQ)
 * or PMCALLOCATEDYN (@rate 0, @name).  @flags UINT32_MAX: unknown.
 */
void report_pmc_alloc(struct report *r, uint32_t pmcid, uint32_t flags,
		      uint64_t rate, const char *name);
void report_drop(struct report *r, uint64_t ts);
void report_csw(struct report *r, uint64_t ts, int32_t cpu, uint32_t pid,
		uint32_t tid, uint32_t pmcid, uint64_t value);
/* @pc: leaf first (kernel frames, then user frames), @n frames. */
int report_sample(struct report *r, uint64_t ts, int32_t cpu, uint32_t pid,
		  uint32_t tid, uint32_t pmcid, const uint64_t *pc,
		  unsigned int n);
/* Any record: counts it and its time span. */
void report_seen(struct report *r, uint64_t ts);

/*
 * One JSON message of a --blob-json blob file (report_json.c), with @pcs
 * (@max entries) as scratch space.  0, -EINVAL if it is not a flat object.
 */
int report_json_record(struct report *r, const char *msg, size_t len,
		       uint64_t *pcs, unsigned int max);

/* Samples taken into the tree (after the filters). */
uint64_t report_nr_samples(const struct report *r);
const struct report_node *report_nodes(const struct report *r,
				       uint32_t *nr);

/*
 * Events: one profile per pmcid, in pmcid order.  The views below show the
 * current one (the first at the start; report_print shows them all).
 */
unsigned int report_nr_events(const struct report *r);
/* The name of @pmcid's event (PMCALLOCATEDYN), or "pmcN". */
const char *report_event_name(const struct report *r, uint32_t pmcid,
			      char *buf, size_t sz);
/*
 * Events counted per sample of @pmcid (PMCALLOCATE's fixed period); 0:
 * frequency mode or not recorded.
 */
uint64_t report_period(const struct report *r, uint32_t pmcid);
/*
 * The period of the next report_sample() (FILE.periods), 0: none; a
 * sample weighs its period, else report_period(), else 1.
 */
void report_set_period(struct report *r, uint64_t period);
/* Sum of the weights of @pmcid's samples; *nrecorded: those with a period. */
uint64_t report_weight(const struct report *r, uint32_t pmcid,
		       uint64_t *nrecorded);
/* "events with samples: a, b" (no newline) to @f, for --event's errors. */
void report_say_events(const struct report *r, FILE *f);
/* Make event @name current; -ENOENT if no sample has it. */
int report_select_event(struct report *r, const char *name);
const char *report_cur_event(const struct report *r, char *buf, size_t sz);

/*
 * Read @path (pmclog, barman or blob) into @r; problems are printed with
 * the prefix @who.  0, -errno, or 1: damaged, read up to the damage and
 * told (0 instead with @best_effort).
 */
int report_read(struct report *r, const char *path, const char *who,
		bool best_effort);

/*
 * A scan of @r, a report of its own: its samples count their kernel
 * addresses into @fit and are not kept; mappings are not read.
 */
struct kallsyms_fit;
void report_set_scan(struct report *r, struct kallsyms_fit *fit);
/*
 * The kernel addresses of the samples of @path into @fit, quietly (the
 * read that follows tells what is wrong with @path).  0 or -errno.
 */
int report_scan_kernel(const char *path, struct kallsyms_fit *fit);

/*
 * The recording of `report`/`script`: -i PATH (*path already set), one
 * PATH left after the options, or perf's default, pmcring.pmclog.  More
 * than one is an error said on stderr: -EINVAL.
 */
int cmd_one_input(const char *who, int argc, char **argv, int optind,
		  const char **path);

/*
 * "WHO: --OPTION: 'VAL' is not FORM" for report's and script's options
 * with a value (@opt: the short option letter, or report's OPT_*: the
 * two commands share -p and -C).
 */
void report_bad_value(const char *who, int opt, const char *val);

/* The symbolizer's warnings (sym_warning()) to stderr, "WHO: warning: ". */
void report_sym_warnings(struct report *r, const char *who);

/* The views. */
void report_print(struct report *r, FILE *out, const char *title,
		  bool switches);
int report_print_switches(struct report *r, FILE *out);
int report_folded(struct report *r, FILE *out);

/* Children of @node sorted by frame name into @v (caller frees *v). */
int report_children_sorted(struct report *r, uint32_t node, uint32_t **v,
			   uint32_t *nr);

#endif /* PMCRING_REPORT_H */
