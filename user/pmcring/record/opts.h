/* SPDX-License-Identifier: GPL-2.0 */
/* Command line of `pmcring record`, parsed without side effects. */
#ifndef PMCRING_OPTS_H
#define PMCRING_OPTS_H

#include "../formats/fmt.h"
#include "ldms.h"

struct rec_event {
	char		name[PMCRING_NAME_MAX];
	uint32_t	type;		/* PERF_TYPE_*, or a PMU's type */
	uint64_t	config;
	uint32_t	flags;		/* PMCRING_CTR_F_EXCLUDE_* (:u, :k) */
};

/* -C takes CPUs 0..REC_MAX_CPUS-1 (the kernel's NR_CPUS is at most 8192). */
#define REC_MAX_CPUS		8192u

struct rec_opts {
	enum fmt_kind	kind;
	const char	*output;	/* NULL: the format's default */
	bool		system_wide;
	int32_t		pid;		/* -p; 0: none */
	int32_t		tid;		/* -t; 0: none */
	const char	*cpu_list;	/* -C as given; NULL: every CPU */
	uint64_t	cpus[REC_MAX_CPUS / 64];	/* -C as a bitmap */
	uint32_t	cpus_size;	/* bytes of cpus[] up to the last CPU */
	char		**cmd;		/* after "--" or the first non-option */
	int		cmd_argc;
	struct rec_event events[FMT_MAX_COUNTERS];
	unsigned int	nr_events;
	bool		events_given;	/* -e given (else: the default) */
	uint64_t	period;		/* -c */
	uint64_t	freq;		/* -F */
	uint64_t	types;		/* --types; 0: all */
	uint32_t	buffer_pages;	/* 0: library default */
	uint64_t	staging_mb;	/* --staging-mb; 0: no staging */
	bool		staging_given;	/* else the library's default */
	uint64_t	duration_ms;	/* 0: until the command exits / signal */
	uint32_t	callchain_depth;
	bool		no_uring;	/* --no-uring: read/write */
	bool		uring;		/* --uring; neither: consumer_io_pick() */
	bool		direct_io;	/* --direct-io: O_DIRECT (pmclog) */
	bool		quiet;
	uint32_t	bm_channel;
	const char	*container;
	struct fmt_blob_stream streams[FMT_MAX_STREAMS];
	unsigned int	nr_streams;
	bool		blob_json;
	bool		timing;
	uint64_t	roll_bytes;
	uint64_t	roll_secs;
	struct ldms_pub_opts ldms;	/* --ldms SPEC */
	bool		ldms_given;
	bool		no_file;	/* -o none (with --ldms): no local file */
	uint64_t	gen_count;	/* hidden --generate N,SIZE */
	uint32_t	gen_size;
	uint64_t	gen_rate;	/* ,RATE: records per CPU and second */
};

/* Default sampling frequency when neither -c nor -f is given. */
#define REC_DEFAULT_FREQ	1000u

/*
 * Parse `record`'s arguments (argv[0] is "record").  0: go; 1: --help was
 * asked; 3: --version; -EINVAL: @err says what is wrong (exit 2).
 */
int rec_opts_parse(struct rec_opts *o, int argc, char **argv, char *err,
		   size_t errsz);
void rec_opts_free(struct rec_opts *o);
void rec_usage(FILE *f);
/*
 * Parse an event as perf's -e does: a name ("cycles", "cpu-clock", ...),
 * a raw "rHEX", or a PMU event libpfm4 knows ("INST_RETIRED:ANY_P"), each
 * with an optional ":u" / ":k" modifier.  0, -ENOENT for an unknown event,
 * -EINVAL for a bad modifier.
 */
int rec_event_lookup(const char *name, struct rec_event *ev);
/* The @i-th known event, or -ENOENT past the last (`pmcring list`). */
int rec_event_at(unsigned int i, struct rec_event *ev);

#endif /* PMCRING_OPTS_H */
