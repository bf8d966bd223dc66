/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libpmcring: user space access to pmcring's per-CPU record rings.
 *
 *   - a session on /dev/pmcring: configure, enable, map every CPU's ring;
 *   - per-CPU ring access for custom consumers (raw mapping and iterator);
 *   - an exact cross-CPU timestamp merge with bounded delay;
 *   - a poll-style consumer: a callback per record in exact order, with an
 *     end of stream;
 *   - a pmclog(3)-style parser of pmclog files and streams.
 *
 * The user space producer of the ring ABI (pmcring_uprod_*, for tests and
 * benchmarks) is not part of the stable ABI: <libpmcring_test.h>, static
 * library only.
 *
 * Conventions: int functions return 0 (or a count) on success and a
 * negative errno on failure; functions returning a pointer return NULL and
 * set errno.  Options structs start with `size_t sz` (set it to sizeof the
 * struct): fields past sz take their defaults, so the structs can grow.
 * Threads: the consumer side of a session (its iterators, a merge or a
 * reader over them, pmcring_cpu_buf_stats() of them) is used by one thread
 * at a time.  The session's ioctl wrappers keep no state in user space
 * and may run in any thread beside it, at the same time: pmcring_enable(),
 * pmcring_disable(), pmcring_flush(), pmcring_writelog(), pmcring_clock(),
 * pmcring_add_counter(), pmcring_info(), pmcring_fd(), pmcring_nr_cpus()
 * and the blocking pmcring_generate() (which is meant to run in its own
 * thread beside the merge).  pmcring_cpu_stats() from another thread reads
 * the kernel's counters exactly and the consumer's as a snapshot that may
 * lag.  pmcring_free() only once no other call on the session runs.
 * Parsers (pmcring_log) are one object per thread.
 *
 * The ABI (record layouts, mmap layout, ordering contract) lives in
 * <linux/pmcring.h>, installed with this header under
 * $includedir/pmcring/ (pkg-config --cflags libpmcring adds it).
 */
#ifndef LIBPMCRING_H
#define LIBPMCRING_H

#include <stddef.h>
#include <stdint.h>
#include <linux/pmcring.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef PMCRING_API
#define PMCRING_API __attribute__((visibility("default")))
#endif

#define LIBPMCRING_MAJOR_VERSION	0
#define LIBPMCRING_MINOR_VERSION	2
#define PMCRING_VERSION_CODE(major, minor)	(((major) << 16) | (minor))
/* The version these headers belong to, as pmcring_version() codes it. */
#define LIBPMCRING_VERSION \
	PMCRING_VERSION_CODE(LIBPMCRING_MAJOR_VERSION, LIBPMCRING_MINOR_VERSION)

/*
 * The version of the library running (major << 16 | minor), which may be
 * newer than LIBPMCRING_VERSION of the headers a program was built with.
 */
PMCRING_API uint32_t pmcring_version(void);

/* ------------------------------------------------------------------ */
/* Session on /dev/pmcring                                             */
/* ------------------------------------------------------------------ */

struct pmcring;			/* a session, one open() of the device */
struct pmcring_cpu_buf;		/* one CPU's ring as a consumer sees it */

struct pmcring_opts {
	size_t		sz;		/* sizeof(struct pmcring_opts) */
	const char	*dev_path;	/* NULL: PMCRING_DEV_PATH */
	uint32_t	data_pages;	/* per CPU, power of two; 0: 64 (clamped
					 * to the device's min/max)
					 */
	uint32_t	flags;		/* PMCRING_CFG_F_* */
	uint64_t	watermark;	/* bytes; 0: data_size / 4 */
	uint64_t	types;		/* PMCRING_TYPE_BIT() mask; 0: the
				 * module's default; PMCRING_TYPES_ALL:
				 * every type it supports */
	int32_t		pid;		/* with PMCRING_CFG_F_PID (a thread
					 * id with PMCRING_CFG_F_TID)
					 */
	uint32_t	callchain_depth;/* 0: perf_event_max_stack, at most
					 * 128; at most 512 and at most
					 * perf_event_max_stack (EOVERFLOW)
					 */
	/* With PMCRING_CFG_F_CPUS (ABI 3): bit n of cpus[n / 64] = CPU n. */
	const uint64_t	*cpus;
	uint32_t	cpus_size;	/* bytes of cpus, a multiple of 8 */
	/*
	 * With PMCRING_CFG_F_PIDFD (ABI 4): a pidfd of the process (thread
	 * with _TID) that pid names; CONFIGURE fails with ESRCH if pid now
	 * names another one.
	 */
	int32_t		pidfd;
};

/*
 * Open the device, PMCRING_IOC_CONFIGURE it from @opts (NULL: defaults) and
 * map the ring of every CPU that has one (the online CPUs; see
 * pmcring_cpu_buffer() for those that come later).  The session starts
 * disabled.
 */
PMCRING_API struct pmcring *pmcring_new(const struct pmcring_opts *opts);
/* Unmap, close.  Accepts NULL. */
PMCRING_API void pmcring_free(struct pmcring *s);
/* The session fd, for poll() (EPOLLIN at watermark, EPOLLHUP after stop). */
PMCRING_API int pmcring_fd(const struct pmcring *s);
/* Copy of PMCRING_IOC_GET_INFO as read at pmcring_new(). */
PMCRING_API int pmcring_info(const struct pmcring *s, struct pmcring_info *info);
PMCRING_API int pmcring_enable(struct pmcring *s);
PMCRING_API int pmcring_disable(struct pmcring *s);
/* Wake poll() now, whatever the watermark. */
PMCRING_API int pmcring_flush(struct pmcring *s);
/* USERDATA record with value @v on the calling CPU (pmc_writelog(3)). */
PMCRING_API int pmcring_writelog(struct pmcring *s, uint32_t v);
/* The record clock now (ns of CLOCK_MONOTONIC, kernel's fast clock). */
PMCRING_API int pmcring_clock(struct pmcring *s, uint64_t *now);
/* PMCRING_IOC_ADD_COUNTER; fills c->pmcid. */
PMCRING_API int pmcring_add_counter(struct pmcring *s, struct pmcring_counter *c);
/* PMCRING_IOC_GENERATE (tests, benchmarks; CAP_SYS_ADMIN). */
PMCRING_API int pmcring_generate(struct pmcring *s, const struct pmcring_generate *g);
/*
 * Number of possible CPUs; rings are 0..n-1, but only the CPUs online
 * since CONFIGURE have one (the others: an empty stand-in, see
 * pmcring_cpu_buffer()).
 */
PMCRING_API unsigned int pmcring_nr_cpus(const struct pmcring *s);
/*
 * The raw mapping of @cpu's ring: *base is the control page
 * (struct pmcring_mmap_page), *size the bytes mapped (region_size), like
 * libbpf's perf_buffer__buffer().  For consumers of their own; they must
 * follow the ordering contract of <linux/pmcring.h>.  -ENODEV for a CPU
 * without a ring (not online since CONFIGURE); a ring the kernel added
 * since is mapped first.  The merge of a session maps new rings itself.
 */
PMCRING_API int pmcring_cpu_buffer(struct pmcring *s, unsigned int cpu,
				   void **base, size_t *size);
/* The iterator of @cpu's ring (owned by the session), or NULL (errno). */
PMCRING_API struct pmcring_cpu_buf *pmcring_cpu_buf(struct pmcring *s,
						    unsigned int cpu);
struct pmcring_cpu_stats;
/*
 * @cpu's counters, the kernel's (records and bytes committed, lost) and
 * the consumer's (records and bytes passed, backwards timestamps), as
 * pmcring_cpu_buf_stats() of pmcring_cpu_buf(s, cpu).  0 or -EINVAL.
 */
PMCRING_API int pmcring_cpu_stats(struct pmcring *s, unsigned int cpu,
				  struct pmcring_cpu_stats *st);

/* ------------------------------------------------------------------ */
/* One CPU's ring                                                      */
/* ------------------------------------------------------------------ */

/* A record in a ring; data points into the read-only mapping. */
struct pmcring_record {
	const void	*data;		/* the record, header first, 8-aligned */
	uint32_t	len;		/* pmclog length (header's length field) */
	uint32_t	type;		/* PMCRING_TYPE_* */
	uint64_t	ts;		/* header timestamp, ns, clamped to the
					 * ring's previous record's (see
					 * backwards in pmcring_cpu_stats)
					 */
	uint32_t	cpu;		/* CPU of the ring it came from */
	uint32_t	ring;		/* index of that ring in the merge (the
					 * CPU for a session; peek: the CPU)
					 */
	uint64_t	end;		/* ring position just after it */
};

/*
 * Peek the record at the cursor without moving it: 1 and *r filled, 0 when
 * the ring holds nothing more now, -EBADMSG (sticky) when the ring data is
 * corrupt (bad magic, type or length, record beyond data_head).  A
 * timestamp below the previous record's is not an error: r->ts is clamped
 * to the previous one and the record counted in backwards.  Loads data_head with acquire semantics ((C) of the contract)
 * only when the records already seen are used up.
 */
PMCRING_API int pmcring_cpu_buf_peek(struct pmcring_cpu_buf *b,
				     struct pmcring_record *r);
/* Move the cursor past the peeked record (counts it in the stats). */
PMCRING_API void pmcring_cpu_buf_next(struct pmcring_cpu_buf *b);
/* The cursor: ring position of the next record to peek. */
PMCRING_API uint64_t pmcring_cpu_buf_pos(const struct pmcring_cpu_buf *b);
/*
 * Give ring space up to @pos back to the producer: full fence, then
 * store-release of data_tail ((D) of the contract).  @pos must lie between
 * the current data_tail and the cursor; other values are ignored.  Records
 * before @pos must not be accessed afterwards.
 */
PMCRING_API void pmcring_cpu_buf_consume(struct pmcring_cpu_buf *b, uint64_t pos);
/* The CPU this ring belongs to. */
PMCRING_API unsigned int pmcring_cpu_buf_cpu(const struct pmcring_cpu_buf *b);
/* Bytes of the ring's data area (data_size, a power of two). */
PMCRING_API uint64_t pmcring_cpu_buf_data_size(const struct pmcring_cpu_buf *b);

/*
 * One ring's counters.  Size-prefixed: the caller sets sz to
 * sizeof(struct pmcring_cpu_stats); fields past it are not written, so the
 * struct can grow.
 */
struct pmcring_cpu_stats {
	size_t		sz;		/* sizeof(struct pmcring_cpu_stats) */
	uint64_t	records;	/* records passed with _next() */
	uint64_t	bytes;		/* ring bytes passed with _next() */
	uint64_t	lost;		/* records the producer dropped (the
					 * producer page's lost)
					 */
	uint64_t	backwards;	/* records passed whose timestamp was
					 * below the previous one's (clamped)
					 */
	uint64_t	prod_records;	/* records the producer committed,
					 * DROPNOTIFY included (producer page)
					 */
	uint64_t	prod_bytes;	/* ring bytes it committed, padding
					 * included (producer page)
					 */
	uint64_t	staged;		/* ring bytes the merge copied to its
					 * staging area (see
					 * pmcring_merge_opts.staging_bytes)
					 */
	uint64_t	prod_flags;	/* the producer page's flags:
					 * PMCRING_PROD_F_DATA once the ring
					 * has its data pages; 0 for a CPU
					 * without a ring (not online since
					 * CONFIGURE)
					 */
	uint64_t	reported;	/* drops the ring's DROPNOTIFY
					 * records announced (producer page,
					 * ABI 4); lost - reported were not
					 * announced (yet): nothing announces
					 * them once the session is disabled
					 * and the ring drained
					 */
};

/* Fill @st up to st->sz: 0, or -EINVAL if sz is below records' end. */
PMCRING_API int pmcring_cpu_buf_stats(const struct pmcring_cpu_buf *b,
				      struct pmcring_cpu_stats *st);

/* ------------------------------------------------------------------ */
/* Exact timestamp merge                                               */
/* ------------------------------------------------------------------ */

struct pmcring_merge;

/* A record clock read as (F) of the contract: ns, CLOCK_MONOTONIC. */
typedef int (*pmcring_clock_fn)(void *ctx, uint64_t *now);

struct pmcring_merge_opts {
	size_t		sz;		/* sizeof(struct pmcring_merge_opts) */
	uint64_t	max_delay_ns;	/* poll period the caller promises;
					 * 0: 10 ms
					 */
	pmcring_clock_fn clock;		/* required for _merge_new() */
	void		*clock_ctx;
	uint32_t	flags;		/* PMCRING_MERGE_F_* */
	uint32_t	__pad;
	uint64_t	staging_bytes;	/* staging limit, all rings together;
					 * 0: PMCRING_MERGE_STAGING_DEFAULT
					 */
};

/*
 * Staging: when the merge cannot hand a record out (it waits for another
 * ring's bound) and a ring is at least 1/PMCRING_MERGE_STAGING_FILL full, the
 * merge copies that ring's records it has not handed out into user memory
 * (at most staging_bytes, all rings together), gives their ring space back
 * as soon as the records handed out before them are consumed, and goes on
 * merging them from there in the same exact order.  A CPU that bursts
 * while another is slow to publish its bound then fills user memory, not
 * its ring.  r->data of a staged record points into the staging area; the
 * lifetime rules are the same.  Rings that are part of a merge must not
 * be read (peek/next/consume) behind its back while it stages.
 */
#define PMCRING_MERGE_STAGING_DEFAULT	(64ull << 20)	/* 64 MiB */
#define PMCRING_MERGE_STAGING_FILL	4	/* 1/4 of the ring */

/*
 * Consume automatically: each call of pmcring_merge_next() makes the record
 * it handed out before invalid, and the merge gives the space of the
 * records handed out back: in steps of 1/16 of a ring while it hands out
 * records, all of it when it returns 0 and when it is freed.  Without it
 * the caller calls pmcring_cpu_buf_consume().
 */
#define PMCRING_MERGE_F_AUTO_CONSUME	(1u << 0)
/* No staging: records wait in their ring (which may fill and drop). */
#define PMCRING_MERGE_F_NO_STAGING	(1u << 1)

/*
 * Merge @n CPU rings (pointers copied, rings stay owned by the caller).
 * Records come out in (timestamp, ring index) order: non-decreasing
 * timestamps, equal ones by ring index (the position in @bufs, the CPU for
 * a session), each ring's in ring order; r->ring is the index.  A record
 * whose timestamp went backwards in its ring is handed out with the
 * previous timestamp (counted as backwards), never as an error; so is one
 * that arrives below a timestamp already handed out from another ring (the
 * record clock's cross-CPU skew, Documentation/abi.rst "The clock"): it
 * goes out at that timestamp, counted in its ring's backwards.  Such a
 * merge knows no session: it never maps a ring the kernel added for a CPU
 * that came online later (its records are neither read nor counted lost);
 * pmcring_merge_new_session() does, whatever clock it is given.
 */
PMCRING_API struct pmcring_merge *
pmcring_merge_new(struct pmcring_cpu_buf **bufs, unsigned int n,
		  const struct pmcring_merge_opts *opts);
/* Merge every CPU of a session, clock = pmcring_clock() unless given. */
PMCRING_API struct pmcring_merge *
pmcring_merge_new_session(struct pmcring *s, const struct pmcring_merge_opts *opts);
/*
 * Hand out the next record in timestamp order: 1 and *r filled; 0 when no
 * record can be handed out yet (some CPU may still commit an earlier one,
 * or proving otherwise needs a second clock read in this round: the clock
 * is read at most once between two calls that return 0); negative errno on
 * a corrupt ring (-EBADMSG) or clock failure.
 *
 * A record is handed out only once every other CPU has a visible record
 * that is not earlier, or is drained and provably cannot produce an earlier
 * one (its pending_ts, or the clock read before checking it).  Idle CPUs do
 * not stall the merge.  After 0 the caller waits (poll() on the session fd)
 * with a timeout of at most max_delay_ns, pmcring_merge_timeout_ns() best,
 * and calls again: then every record is handed out within about
 * max_delay_ns of its commit.
 *
 * r->data stays valid until the caller consumes past r->end on ring r->ring,
 * pmcring_merge_buf(m, r->ring) (or, with PMCRING_MERGE_F_AUTO_CONSUME,
 * until the next call).  0 never means the end of the stream: see
 * pmcring_reader_poll() for that.
 */
PMCRING_API int pmcring_merge_next(struct pmcring_merge *m, struct pmcring_record *r);
/* The ring with index @i (the CPU for a session merge). */
PMCRING_API struct pmcring_cpu_buf *pmcring_merge_buf(struct pmcring_merge *m,
						      unsigned int i);
/* The effective max_delay_ns. */
PMCRING_API uint64_t pmcring_merge_max_delay_ns(const struct pmcring_merge *m);
/*
 * How long to wait (poll() timeout, ns) after pmcring_merge_next() returned
 * 0 and the records handed out so far are written, so that each record is
 * written within max_delay_ns of its commit: counted from @look_ns (when
 * the call that returned 0 was made; a record committed later is not seen
 * yet) or from the oldest record held back, to 3/4 of max_delay_ns (the
 * rest absorbs jitter), less how late the caller came back after the
 * previous timeout (its wait oversleeping, then merging and writing: a
 * decaying maximum).  Between max_delay_ns / 8 and max_delay_ns * 3 / 4.
 * @look_ns and @now_ns are CLOCK_MONOTONIC, the records' clock.
 */
PMCRING_API uint64_t pmcring_merge_timeout_ns(struct pmcring_merge *m,
					      uint64_t look_ns, uint64_t now_ns);
/* Accepts NULL. */
PMCRING_API void pmcring_merge_free(struct pmcring_merge *m);

/* ------------------------------------------------------------------ */
/* Poll-style consumer: exact order, callback, end of stream           */
/* ------------------------------------------------------------------ */

/*
 * Like libbpf's ring_buffer__new() / __poll() / __consume(), over the exact
 * merge of every CPU of a session.  The low-level calls above stay for
 * custom ordering.
 */
struct pmcring_reader;

/*
 * Called once per record, in (timestamp, ring index) order.  r->data is
 * valid until the callback returns.  Return 0 to go on; anything else
 * stops the call that invoked it, which returns the value if it is
 * negative (the record counts as handled and is not handed out again).
 */
typedef int (*pmcring_record_fn)(void *ctx, const struct pmcring_record *r);

struct pmcring_reader_opts {
	size_t		sz;		/* sizeof(struct pmcring_reader_opts) */
	uint64_t	max_delay_ns;	/* as pmcring_merge_opts; 0: 10 ms */
	uint64_t	staging_bytes;	/* as pmcring_merge_opts; 0: 64 MiB */
	uint32_t	merge_flags;	/* PMCRING_MERGE_F_NO_STAGING or 0 */
	uint32_t	__pad;
};

/* A reader of every CPU ring of @s (which must outlive it). */
PMCRING_API struct pmcring_reader *
pmcring_reader_new(struct pmcring *s, pmcring_record_fn fn, void *ctx,
		   const struct pmcring_reader_opts *opts);
/*
 * Hand out what can be proven next, waiting up to @timeout_ms (-1: no
 * limit) for records if there are none: the number of records handled
 * (> 0), 0 on timeout, -ENODATA at the end of the stream, or a negative
 * errno (the callback's, -EBADMSG for a corrupt ring, ...).  Between the
 * waits on the session fd it wakes up often enough that every record is
 * handed out within max_delay_ns of its commit.  EINTR returns the count.
 *
 * End of stream: once poll() on the session fd reported EPOLLHUP (the
 * session was disabled after being enabled) and a drain after it left no
 * record held, every ring empty and no writer in flight, every call
 * returns -ENODATA.  Records committed before the disable are all handed
 * out first.
 */
PMCRING_API int pmcring_reader_poll(struct pmcring_reader *rd, int timeout_ms);
/* Hand out what can be proven next without waiting: count or as _poll(). */
PMCRING_API int pmcring_reader_consume(struct pmcring_reader *rd);
/* 1 once the end of the stream was reached, else 0. */
PMCRING_API int pmcring_reader_eof(const struct pmcring_reader *rd);
/* The merge inside (pmcring_merge_buf() gives each CPU's iterator). */
PMCRING_API struct pmcring_merge *pmcring_reader_merge(struct pmcring_reader *rd);
/* Accepts NULL. */
PMCRING_API void pmcring_reader_free(struct pmcring_reader *rd);

/* ------------------------------------------------------------------ */
/* pmclog(3)-style parser                                              */
/* ------------------------------------------------------------------ */

#define PMCRING_LOG_FD_NONE	(-1)

enum pmcring_log_state {
	PMCRING_LOG_OK,
	PMCRING_LOG_EOF,
	PMCRING_LOG_ERROR,
	PMCRING_LOG_REQUIRE_DATA,
};

/*
 * Typed views of the records (FreeBSD lib/libpmc/pmclog.h names).  Pointers
 * point into pl_data and stay valid until the next call on the parser.
 */
struct pmcring_log_ev_initialize {
	uint32_t	pl_version;	/* PMCRING_LOG_VERSION */
	uint32_t	pl_arch;	/* cputype */
	uint64_t	pl_tsc_freq;	/* ticks per second of the timestamps */
	uint64_t	pl_ts_sec;	/* realtime at the start (FreeBSD's */
	uint64_t	pl_ts_nsec;	/* struct timespec pl_ts)           */
	char		pl_cpuid[PMCRING_CPUID_LEN + 1];
};

struct pmcring_log_ev_pmcallocate {
	uint32_t	pl_pmcid, pl_event, pl_flags;
	uint64_t	pl_rate;
};

struct pmcring_log_ev_pmcallocatedyn {
	uint32_t	pl_pmcid, pl_event, pl_flags;
	char		pl_evname[PMCRING_NAME_MAX + 1];
};

struct pmcring_log_ev_pmcattach {
	uint32_t	pl_pmcid, pl_pid;
	const char	*pl_pathname;
};

struct pmcring_log_ev_pmcdetach {
	uint32_t	pl_pmcid, pl_pid;
};

struct pmcring_log_ev_proccsw {
	uint64_t	pl_value;	/* pmcring: ns run since switched in */
	uint32_t	pl_pmcid, pl_pid, pl_tid;
};

struct pmcring_log_ev_procexec {
	uint32_t	pl_pid, pl_pmcid;
	uint64_t	pl_baseaddr;	/* offset 24: AT_BASE, the interpreter's
					 * load address, 0 if none
					 */
	uint64_t	pl_dynaddr;	/* offset 32: a PIE's load base (bias),
					 * 0 for ET_EXEC; places the executable
					 */
	const char	*pl_pathname;
};

struct pmcring_log_ev_procexit {
	uint32_t	pl_pmcid, pl_pid;
	uint64_t	pl_value;	/* pmcring: CPU time of the process, ns */
};

struct pmcring_log_ev_procfork {
	uint32_t	pl_oldpid, pl_newpid;
};

struct pmcring_log_ev_sysexit {
	uint32_t	pl_pid;
};

struct pmcring_log_ev_userdata {
	uint32_t	pl_userdata;
};

struct pmcring_log_ev_map_in {
	uint32_t	pl_pid;
	uint64_t	pl_start;
	const char	*pl_pathname;
};

struct pmcring_log_ev_map_out {
	uint32_t	pl_pid;
	uint64_t	pl_start, pl_end;
};

struct pmcring_log_ev_callchain {
	uint32_t	pl_pid, pl_tid, pl_pmcid, pl_cpuflags;
	uint32_t	pl_cpu;		/* pl_cpuflags >> 16 */
	uint32_t	pl_npc;		/* frames, <= 512 */
	const uint64_t	*pl_pc;		/* 8-aligned */
};

struct pmcring_log_ev_thr_create {
	uint32_t	pl_tid, pl_pid, pl_flags;
	char		pl_tdname[PMCRING_COMM_LEN + 1];
};

struct pmcring_log_ev_thr_exit {
	uint32_t	pl_tid;
};

struct pmcring_log_ev_proc_create {
	uint32_t	pl_pid, pl_flags;
	char		pl_pcomm[PMCRING_COMM_LEN + 1];
};

struct pmcring_log_ev_generated {
	uint64_t	pl_seq;		/* 0 if the record is too short */
	uint32_t	pl_cpu, pl_ctx;
};

/*
 * PERIOD (pmcring's own, ABI 4): the period of the CALLCHAINs of pl_pmcid
 * that follow on the same CPU's ring.  Rings and blob sets only: pmclog
 * files keep the periods in FILE.periods (Documentation/formats.rst).
 */
struct pmcring_log_ev_period {
	uint32_t	pl_pmcid;
	uint32_t	pl_cpu;		/* the ring's CPU */
	uint64_t	pl_period;
};

/*
 * Size-prefixed: sz is the size of the struct the caller has (set by the
 * inline pmcring_log_read(), from the header it was built with); the
 * library fills no byte past it.  New fields are added at the end; the
 * union keeps its size (pl_pad) so typed views can grow inside it.
 */
struct pmcring_log_ev {
	size_t		sz;		/* sizeof(struct pmcring_log_ev) */
	enum pmcring_log_state pl_state;
	const char	*pl_reason;	/* static text when pl_state is ERROR */
	uint64_t	pl_offset;	/* stream offset just past this record
					 * (FreeBSD's; it starts at pl_offset -
					 * pl_len), or past the last record
					 * read when pl_state is not OK
					 */
	uint64_t	pl_count;	/* records read, this one included */
	uint64_t	pl_ts;		/* header timestamp in ns: pl_tsc
					 * converted with the last INITIALIZE's
					 * tsc_freq (none, 0 or 10^9: equal)
					 */
	uint64_t	pl_tsc;		/* header timestamp as written (ticks) */
	uint32_t	pl_type;	/* PMCRING_TYPE_* */
	uint32_t	pl_len;		/* record length */
	const void	*pl_data;	/* whole record, 8-aligned copy */
	union {
		struct pmcring_log_ev_callchain		pl_cc;
		struct pmcring_log_ev_initialize	pl_i;
		struct pmcring_log_ev_map_in		pl_mi;
		struct pmcring_log_ev_map_out		pl_mo;
		struct pmcring_log_ev_pmcallocate	pl_a;
		struct pmcring_log_ev_pmcallocatedyn	pl_ad;
		struct pmcring_log_ev_pmcattach		pl_t;
		struct pmcring_log_ev_pmcdetach		pl_d;
		struct pmcring_log_ev_proccsw		pl_c;
		struct pmcring_log_ev_proc_create	pl_pc;
		struct pmcring_log_ev_procexec		pl_x;
		struct pmcring_log_ev_procexit		pl_e;
		struct pmcring_log_ev_procfork		pl_f;
		struct pmcring_log_ev_sysexit		pl_se;
		struct pmcring_log_ev_thr_create	pl_tc;
		struct pmcring_log_ev_thr_exit		pl_te;
		struct pmcring_log_ev_userdata		pl_u;
		struct pmcring_log_ev_generated		pl_g;
		struct pmcring_log_ev_period		pl_p;
		uint64_t				pl_pad[32];
	} pl_u;
};

struct pmcring_log;

/*
 * A parser reading @fd (which it does not close), or fed from memory with
 * pmcring_log_feed() when @fd is PMCRING_LOG_FD_NONE.
 */
PMCRING_API struct pmcring_log *pmcring_log_open(int fd);
/*
 * Parse the next record into @ev, filling at most ev->sz bytes of it: 0
 * with pl_state OK, else -1 with pl_state EOF (CLOSELOG read, pl_type
 * CLOSELOG; or end of file in fd mode; a truncated last record reads as
 * EOF), REQUIRE_DATA (memory mode: feed more; fd mode on a non-blocking fd:
 * nothing to read yet) or ERROR (sticky; pl_reason says why).  -1 with
 * errno EINVAL and @ev untouched if ev->sz does not reach pl_u.
 */
PMCRING_API int pmcring_log_next(struct pmcring_log *l, struct pmcring_log_ev *ev);

/* pmcring_log_next() with ev->sz set to the size this program knows. */
static inline int pmcring_log_read(struct pmcring_log *l,
				   struct pmcring_log_ev *ev)
{
	ev->sz = sizeof(*ev);
	return pmcring_log_next(l, ev);
}
/* Append @len bytes (copied) to a memory parser: 0, -EINVAL in fd mode. */
PMCRING_API int pmcring_log_feed(struct pmcring_log *l, const void *data, size_t len);
/* Accepts NULL. */
PMCRING_API void pmcring_log_close(struct pmcring_log *l);
/* "CALLCHAIN", ... or NULL for an unknown type. */
PMCRING_API const char *pmcring_type_name(unsigned int type);

#ifdef __cplusplus
}
#endif

#endif /* LIBPMCRING_H */
