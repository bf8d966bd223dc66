/* SPDX-License-Identifier: GPL-2.0 */
/*
 * FILE.buildids, beside a pmclog recording FILE: the build id of each file
 * its PROCEXEC and MAP_IN records name, read when the recording ended, so
 * that `report` can tell a file rebuilt since from the recorded one.  The
 * pmclog file itself stays FreeBSD's (its parser refuses unknown types).
 *
 *	pmcring-buildids 1 START_NS\n	START_NS: INITIALIZE's realtime, ns
 *	HEX PATH\n			one per file with a build id
 *
 * HEX is the lowercase build id (1 to 64 bytes), PATH absolute, as the
 * recording names it.
 */
#ifndef PMCRING_BUILDID_H
#define PMCRING_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILDID_MAGIC		"pmcring-buildids 1 "
#define BUILDID_MAX		64	/* bytes of one build id */
#define BUILDID_ENTRIES_MAX	65536
#define BUILDID_FILE_MAX	(16u << 20)	/* bytes of a sidecar read */

/* One entry: 0 to go on, else stop with that value. */
typedef int (*buildid_cb)(void *arg, const char *path, size_t path_len,
			  const unsigned char *id, size_t id_len);

/*
 * Parse the sidecar bytes @buf: its start time into *@start_ns, each
 * entry through @cb.  A last line without its newline (a file cut short)
 * is ignored.  0, -EINVAL for anything malformed, or what @cb returned.
 */
int buildid_parse(const char *buf, size_t len, uint64_t *start_ns,
		  buildid_cb cb, void *arg);

/*
 * Write @log.buildids for the pmclog file @log (through a temporary file
 * renamed over it): the build ids of the regular files its PROCEXEC and
 * MAP_IN records name.  *@n: entries written.  0 or -errno.
 */
int buildid_sidecar_write(const char *log, unsigned int *n);

/* Remove @log.buildids, if any (a new recording @log starts). */
void buildid_sidecar_remove(const char *log);

/*
 * At the end of `pmcring record`: buildid_sidecar_write() if @log is a
 * regular file; a line on stderr if that failed.
 */
void buildid_sidecar_record(const char *log);

#endif
