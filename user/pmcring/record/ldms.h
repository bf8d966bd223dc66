/* SPDX-License-Identifier: GPL-2.0 */
/*
 * `pmcring record --ldms SPEC`: the merged record stream, in exact
 * timestamp order, published to an ldmsd's stream (LDMS's older stream
 * channel, what blob_stream_writer stores), one message per record: the
 * messages pmcring's own blob writer writes (fmt_blob_message()), binary
 * pmclog records (type string, 's') or with type=json flat JSON objects
 * ('j'); with channel=msg,batch=BYTES several whole binary records per
 * message.  LDMS is loaded at run time (dlopen): pmcring builds and runs
 * without it, and says so when --ldms is asked for on a machine without
 * it.  Documentation/ldms.rst.
 */
#ifndef PMCRING_LDMS_H
#define PMCRING_LDMS_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "../formats/fmt.h"

#define LDMS_PUB_MAX_AUTH_OPTS	8

/* The SPEC of --ldms, key=value pairs as ldmsd_stream_publish(8) names them. */
struct ldms_pub_opts {
	char		*spec;		/* owned copy the pointers point into */
	const char	*xprt;		/* xprt=sock (default) */
	const char	*host;		/* host=localhost (default) */
	const char	*port;		/* port=411 (LDMS's default) */
	const char	*auth;		/* auth=none (default) */
	const char	*auth_opt[LDMS_PUB_MAX_AUTH_OPTS];	/* auth_opt=K=V */
	unsigned int	nr_auth_opts;
	const char	*stream;	/* stream=pmcring (default); the
					 * message tag with channel=msg */
	bool		json;		/* type=json; type=string (default) */
	bool		msg;		/* channel=msg; channel=stream (default) */
	uint32_t	window;		/* window=N messages not yet acked */
	uint32_t	timeout_ms;	/* timeout=MS: connect, final acks */
	const char	*lib;		/* lib=PATH of libldmsd_stream.so */
	uint32_t	batch;		/* batch=BYTES: whole records packed
					 * per message (channel=msg, binary);
					 * 0: one record per message */
	uint32_t	reconnect_ms;	/* reconnect=MS: after a loss, connect
					 * again every MS ms and go on; 0
					 * (default): stop the recording */
};

/* Parse SPEC into @o: 0, or -EINVAL with @err saying why. */
int ldms_pub_parse(struct ldms_pub_opts *o, const char *spec, char *err,
		   size_t errsz);
void ldms_pub_opts_free(struct ldms_pub_opts *o);

struct ldms_pub_stats {
	uint64_t	published;	/* records handed to LDMS */
	uint64_t	messages;	/* in that many messages (batch=) */
	uint64_t	acked;		/* records acknowledged by the daemon
					 * (channel=msg: all at the end, or 0) */
	uint64_t	rejected;	/* records refused by the daemon */
	uint64_t	undelivered;	/* records taken but never published
					 * (the daemon was gone) */
	uint64_t	no_msg;		/* records with no message (JSON PERIOD) */
	uint64_t	quota_waits;	/* channel=msg: publishes LDMS refused
					 * for want of send quota (EAGAIN,
					 * ENOBUFS), waited for and retried */
	uint64_t	reconnects;	/* reconnect=: connections made again */
	bool		gone;		/* the connection was lost */
};

struct ldms_pub;

/*
 * Load LDMS and connect (waiting up to timeout=): NULL with the reason
 * said on stderr (no library, no daemon, refused).  @fo: the session's
 * facts (JSON's realtime clock).
 */
struct ldms_pub *ldms_pub_open(const struct ldms_pub_opts *o,
			       const struct fmt_opts *fo);
/*
 * Publish @r.  Blocks while window= messages wait for the daemon's
 * acknowledgement (a slow daemon slows the consumer, and the rings fill:
 * drops are counted there, as DROPNOTIFY).  0, or -ENOTCONN once the
 * daemon is gone (the record is counted undelivered).
 */
int ldms_pub_record(struct ldms_pub *p, const struct fmt_rec *r);
/*
 * batch=: publish the records packed so far (the consumer calls it when
 * the rings are empty, so a batch waits no longer than a drain pass).
 */
void ldms_pub_flush(struct ldms_pub *p);
/*
 * Was the connection lost, so that the recording must stop?  (Says so on
 * stderr, once.)  With reconnect=: never; a lost connection is made
 * again here (and in ldms_pub_record()) every reconnect= ms, and the
 * records taken meanwhile are counted undelivered.
 */
bool ldms_pub_gone(struct ldms_pub *p);
/*
 * Signals, as the caller counts them (@count, incremented by its handler):
 * once *@count reaches @at, every wait for the daemon (window=, send quota,
 * the acknowledgements at close) ends within 100 ms, and what is not yet
 * published is counted undelivered ("stopped at once").  While a stop is
 * asked (*@count >= 1) and a wait lasts over a second, stderr says so, once;
 * one that lasts timeout= ends as the second signal would.  A daemon that
 * stops reading with the connection up would otherwise hold the recording
 * for as long, signals or not.
 */
void ldms_pub_stop_on(struct ldms_pub *p, const volatile sig_atomic_t *count,
		      int at);
/*
 * The recording's end (--duration), CLOCK_MONOTONIC ns: from then on, as
 * after a first signal, a wait for the daemon that lasts timeout= gives the
 * daemon up as the second signal does.
 */
void ldms_pub_stop_at(struct ldms_pub *p, uint64_t mono_ns);
/* Wait (up to timeout=) for the acknowledgements, then disconnect. */
void ldms_pub_close(struct ldms_pub *p);
void ldms_pub_get_stats(const struct ldms_pub *p, struct ldms_pub_stats *st);
/*
 * The counts that outlive the run: PATH.ldms, one line (PATH: record's
 * -o file or blob directory), which `pmcring stat PATH` shows.  0 or
 * -errno.
 */
int ldms_pub_sidecar(const struct ldms_pub *p, const char *path);
/* Remove the PATH.ldms an earlier recording left. */
void ldms_sidecar_remove(const char *path);
/* "host:port stream" for messages */
const char *ldms_pub_name(const struct ldms_pub *p);
void ldms_pub_free(struct ldms_pub *p);

#endif /* PMCRING_LDMS_H */
