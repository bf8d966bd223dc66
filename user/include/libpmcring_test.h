/* SPDX-License-Identifier: LGPL-2.1 OR BSD-2-Clause */
/*
 * libpmcring's test interfaces: not part of the stable ABI, not exported
 * from libpmcring.so (no version node), not installed.  Link the static
 * library (build/user/libpmcring.a and its asan/static/fuzz variants) to
 * use them: the host tests, fuzzers and benchmarks do.
 */
#ifndef LIBPMCRING_TEST_H
#define LIBPMCRING_TEST_H

#include "libpmcring.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* User space producer of the ring ABI (tests, benchmarks)             */
/* ------------------------------------------------------------------ */

struct pmcring_uprod;

/*
 * @nr_cpus rings of @data_pages pages each (power of two) in a memfd, laid
 * out and mapped exactly like the device's (consumers map the control page
 * read-write and the rest read-only).
 */
struct pmcring_uprod *pmcring_uprod_new(unsigned int nr_cpus,
					uint32_t data_pages);
/*
 * Write one record of @type to @cpu's ring: a header (timestamp from
 * pmcring_uprod_clock()) then @body_len bytes of @body.  0, -ENOSPC when
 * dropped (counted in lost; a DROPNOTIFY record follows once space
 * returns), -EINVAL.  One writer per CPU at a time.
 */
int pmcring_uprod_write(struct pmcring_uprod *p, unsigned int cpu,
			unsigned int type, const void *body, uint32_t body_len);
/*
 * The two halves of _write(), to hold a record in flight: reserve publishes
 * pending_ts, reads the timestamp and returns the record (header filled,
 * body zeroed) or NULL (errno ENOSPC/EINVAL); commit publishes it.
 */
void *pmcring_uprod_reserve(struct pmcring_uprod *p, unsigned int cpu,
			    unsigned int type, uint32_t len);
void pmcring_uprod_commit(struct pmcring_uprod *p, unsigned int cpu);
struct pmcring_cpu_buf *pmcring_uprod_cpu_buf(struct pmcring_uprod *p,
					      unsigned int cpu);
/* The raw consumer mapping, as pmcring_cpu_buffer(). */
int pmcring_uprod_buffer(struct pmcring_uprod *p, unsigned int cpu,
			 void **base, size_t *size);
unsigned int pmcring_uprod_nr_cpus(const struct pmcring_uprod *p);
/* CLOCK_MONOTONIC in ns; @uprod may be NULL.  Usable as the merge clock. */
int pmcring_uprod_clock(void *uprod, uint64_t *now);
/* Accepts NULL. */
void pmcring_uprod_free(struct pmcring_uprod *p);

/* ------------------------------------------------------------------ */
/* A reader over rings of one's own (the uprod's)                      */
/* ------------------------------------------------------------------ */

/*
 * pmcring_reader_new() over @n rings (pointers copied), with @clock as the
 * merge's and @fd polled for EPOLLIN/EPOLLHUP in place of a session fd (a
 * pipe's read end: close the write end for the end of the stream).
 */
struct pmcring_reader *
pmcring_reader_new_bufs(struct pmcring_cpu_buf **bufs, unsigned int n, int fd,
			pmcring_clock_fn clock, void *clock_ctx,
			pmcring_record_fn fn, void *ctx, uint64_t max_delay_ns);

#ifdef __cplusplus
}
#endif

#endif /* LIBPMCRING_TEST_H */
