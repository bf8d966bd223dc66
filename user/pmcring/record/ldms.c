// SPDX-License-Identifier: GPL-2.0
/*
 * `pmcring record --ldms`: publish the merged records to an ldmsd stream.
 *
 * Why dlopen, not a link: LDMS is not in Debian and most machines that run
 * pmcring have none, so a pmcring linked with -lldmsd_stream would not
 * start there at all; a build-time option would make two pmcrings, and the
 * one a distribution ships would have no LDMS.  Loaded at run time, one
 * binary publishes wherever LDMS is installed (LD_LIBRARY_PATH, ld.so.conf,
 * LDMS_PREFIX or lib=) and says why it cannot elsewhere.  The few LDMS
 * calls are declared here with the ABI of LDMS 4.5 (ldms.h, ldmsd_stream.h):
 * the build needs no LDMS headers.  The static pmcring (the VM's) cannot
 * dlopen; it refuses --ldms with that reason.
 *
 * Two channels, which this LDMS does not bridge: channel=stream (the
 * default) publishes with ldmsd_stream_publish() to the older streams
 * (`stream_enable`, `prdcr_subscribe ... stream=`), which
 * blob_stream_writer stores and sites run today; channel=msg with
 * ldms_msg_publish() to the newer messages (`msg_enable`, `prdcr_subscribe
 * ... message_channel=`), stored by blob_msg_writer in the same blob
 * layout.  The stream channel's forwarding (an aggregator's
 * prdcr_subscribe) copies a message as a C string, so binary records
 * (type=string) reach only a store on the ldmsd pmcring publishes to;
 * JSON crosses aggregators on both, binary on the message channel.
 * And ldmsd refuses a request whose attributes do not each end in a NUL
 * byte (validate_ldmsd_req()): a binary record whose last byte is not 0
 * (a kernel call chain: its last PC is 0xffff...) is answered "LDMSD
 * received a bad request." instead of "ACK"; pub_event() counts those as
 * refused.  Binary on the stream channel gets a warning.
 *
 * Flow control, stream channel: ldmsd answers every publish request with
 * an ACK (a RECV event here).  At most window= messages are published and not yet
 * acknowledged; a record beyond that waits, so a slow daemon slows the
 * consumer, the rings fill and the module counts the drops (DROPNOTIFY
 * records, in the file and in the stream), never hidden.  When the daemon
 * goes away (DISCONNECTED, or a publish that fails) the publisher says so,
 * counts each record it can no longer publish as undelivered, and
 * `pmcring record` stops as on a full disk, ending its file (if any)
 * cleanly; the messages published but not acknowledged are reported too:
 * the daemon may or may not have taken them.  The message channel has no
 * ACK: its back-pressure is LDMS's send quota (ldms_msg_publish() says
 * EAGAIN until quota comes back), and at the end one acknowledged stream
 * publish after the messages tells that the daemon read them all
 * (pub_msg_sync()); until then they count as not acknowledged.
 *
 * batch= (message channel, binary): one request per record caps the rate
 * at a few percent of the blob writer's, so whole records are packed, in
 * the order taken, into messages of up to batch= bytes (under
 * ldms_xprt_msg_max(): full-size messages crashed ldmsd).  blob_msg_writer
 * stores a message as one OFFSET/TIMING/TYPE entry and its bytes in DAT,
 * which the blob reader reads record by record.  The counts are records.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldms.h"

/* ---- the LDMS ABI used (ldms.h, ldmsd_stream.h of LDMS 4.5) ---- */

typedef struct ldms_xprt *ldms_t;
struct attr_value_list;

enum {
	LDMS_XPRT_EVENT_CONNECTED,
	LDMS_XPRT_EVENT_REJECTED,
	LDMS_XPRT_EVENT_ERROR,
	LDMS_XPRT_EVENT_DISCONNECTED,
	LDMS_XPRT_EVENT_RECV,
	LDMS_XPRT_EVENT_SET_DELETE,
	LDMS_XPRT_EVENT_SEND_COMPLETE,
	LDMS_XPRT_EVENT_SEND_QUOTA_DEPOSITED,
};

/* struct ldms_xprt_event: the type, and a RECV's data */
struct ldms_event_head {
	int	type;
	union {
		char	*data;
		void	*other[2];	/* set_delete, quota: not read */
	};
	size_t	data_len;
};

/*
 * What ldmsd sends back for each publish: a struct ldmsd_req_hdr_s
 * (ldmsd_request.h, packed, 24 bytes), one attribute header (discrim,
 * attr_id, attr_len: 12 bytes), then its text: "ACK", or why the request
 * was refused ("LDMSD received a bad request.", with rsp_err 0, so the
 * text is what tells).
 */
#define LDMSD_REPLY_TEXT	36u

enum { LDMSD_STREAM_STRING, LDMSD_STREAM_JSON };
enum { LDMS_MSG_STRING, LDMS_MSG_JSON };	/* ldms_msg_type_t */

typedef void (*ldms_event_cb_t)(ldms_t x, struct ldms_event_head *e,
				void *arg);

struct ldms_api {
	void	*dl;
	ldms_t	(*xprt_new_with_auth)(const char *xprt, const char *auth,
				      struct attr_value_list *av);
	int	(*connect_by_name)(ldms_t x, const char *host,
				   const char *port, ldms_event_cb_t cb,
				   void *arg);
	void	(*xprt_close)(ldms_t x);
	int	(*stream_publish)(ldms_t x, const char *stream, int type,
				  const char *data, size_t len);
	/* channel=msg: ldms_msg_publish(), NULL in an LDMS without it */
	int	(*msg_publish)(ldms_t x, const char *tag, int type,
			       void *cred, uint32_t perm, const char *data,
			       size_t len);
	/* the largest message the transport takes; NULL: not known */
	size_t	(*msg_max)(ldms_t x);
	/* the daemon's receive quota (default_quota); NULL: not known */
	int	(*send_quota_get)(ldms_t x, uint64_t *quotas, int n);
	struct attr_value_list *(*av_new)(size_t size);
	int	(*av_add)(struct attr_value_list *av, const char *name,
			  const char *value);
};

/* ---- options ---- */

#define LDMS_PUB_WINDOW		4096u
#define LDMS_PUB_TIMEOUT_MS	5000u
#define LDMS_PUB_BATCH_MAX	(16u << 20)
/*
 * batch= stays this far under ldms_xprt_msg_max(): messages of the full
 * size crashed ldmsd (the message header and the forwarding copy).
 */
#define LDMS_PUB_BATCH_MARGIN	4096u

static int bad(char *err, size_t sz, const char *fmt, const char *arg)
{
	snprintf(err, sz, fmt, arg);
	return -EINVAL;
}

int ldms_pub_parse(struct ldms_pub_opts *o, const char *spec, char *err,
		   size_t errsz)
{
	char *save = NULL, *kv, *v;
	unsigned long n;

	memset(o, 0, sizeof(*o));
	o->xprt = "sock";
	o->host = "localhost";
	o->port = "411";
	o->auth = "none";
	o->stream = "pmcring";
	o->window = LDMS_PUB_WINDOW;
	o->timeout_ms = LDMS_PUB_TIMEOUT_MS;
	o->spec = strdup(spec);
	if (!o->spec)
		return bad(err, errsz, "--ldms: %s", "out of memory");
	for (kv = strtok_r(o->spec, ",", &save); kv;
	     kv = strtok_r(NULL, ",", &save)) {
		v = strchr(kv, '=');
		if (!v || !v[1])
			return bad(err, errsz, "--ldms: '%s': want KEY=VALUE "
				   "(xprt, host, port, auth, auth_opt, stream, "
				   "type, channel, window, timeout, batch, "
				   "reconnect, lib)", kv);
		*v++ = '\0';
		if (!strcmp(kv, "xprt")) {
			o->xprt = v;
		} else if (!strcmp(kv, "host")) {
			o->host = v;
		} else if (!strcmp(kv, "port")) {
			o->port = v;
		} else if (!strcmp(kv, "auth")) {
			o->auth = v;
		} else if (!strcmp(kv, "auth_opt")) {
			if (!strchr(v, '=') ||
			    o->nr_auth_opts == LDMS_PUB_MAX_AUTH_OPTS)
				return bad(err, errsz, "--ldms: auth_opt=%s: "
					   "want auth_opt=NAME=VALUE (at most "
					   "8)", v);
			o->auth_opt[o->nr_auth_opts++] = v;
		} else if (!strcmp(kv, "stream")) {
			o->stream = v;
		} else if (!strcmp(kv, "type")) {
			if (strcmp(v, "json") && strcmp(v, "string"))
				return bad(err, errsz, "--ldms: type=%s: want "
					   "string (binary pmclog records) or "
					   "json", v);
			o->json = !strcmp(v, "json");
		} else if (!strcmp(kv, "window") || !strcmp(kv, "timeout") ||
			   !strcmp(kv, "reconnect")) {
			char *end;

			errno = 0;
			n = strtoul(v, &end, 10);
			if (errno || *end || !n || n > 1000000)
				return bad(err, errsz, "--ldms: bad number "
					   "'%s' (1 to 1000000)", v);
			if (kv[0] == 'w')
				o->window = (uint32_t)n;
			else if (kv[0] == 't')
				o->timeout_ms = (uint32_t)n;
			else
				o->reconnect_ms = (uint32_t)n;
		} else if (!strcmp(kv, "channel")) {
			if (strcmp(v, "stream") && strcmp(v, "msg"))
				return bad(err, errsz, "--ldms: channel=%s: want "
					   "stream (ldmsd_stream_publish, "
					   "blob_stream_writer) or msg "
					   "(ldms_msg_publish, blob_msg_writer)",
					   v);
			o->msg = !strcmp(v, "msg");
		} else if (!strcmp(kv, "lib")) {
			o->lib = v;
		} else if (!strcmp(kv, "batch")) {
			char *end;

			errno = 0;
			n = strtoul(v, &end, 10);
			if (errno || *end || n > LDMS_PUB_BATCH_MAX)
				return bad(err, errsz, "--ldms: batch=%s: want "
					   "bytes per message, 0 to 16777216 "
					   "(capped at the transport's message "
					   "size)", v);
			o->batch = (uint32_t)n;
		} else {
			return bad(err, errsz, "--ldms: unknown key '%s' "
				   "(xprt, host, port, auth, auth_opt, stream, "
				   "type, channel, window, timeout, batch, "
				   "reconnect, lib)", kv);
		}
	}
	/* a JSON message is one object; the stream channel is acked per
	 * message and cuts binary at NUL bytes on aggregators */
	if (o->batch && (!o->msg || o->json))
		return bad(err, errsz, "--ldms: batch=%s needs channel=msg with "
			   "binary records (type=string)", "");
	return 0;
}

void ldms_pub_opts_free(struct ldms_pub_opts *o)
{
	free(o->spec);
	o->spec = NULL;
}

/* ---- the publisher ---- */

struct ldms_pub {
	struct ldms_api		api;
	struct ldms_pub_opts	o;
	const struct fmt_opts	*fo;
	ldms_t			x;
	pthread_mutex_t		lock;
	pthread_cond_t		cond;	/* an event: connect, ACK, loss */
	int			conn;	/* 0 waiting, 1 connected, -1 failed */
	int			conn_event;
	bool			gone;	/* lost after it was connected */
	bool			said_gone;	/* a loss, ever (the stats) */
	bool			loss_said;	/* this loss, on stderr */
	/*
	 * reconnect=: an attempt in flight (conn 0, then 1 or -1 by its
	 * events), when to make the next, and what the connections given up
	 * left: stream messages never answered, records published on them
	 * (the message channel's sync answers for the last connection only).
	 */
	bool			connecting;
	uint64_t		next_try_ns;
	uint64_t		lost_unanswered;
	uint64_t		pub_before;
	struct attr_value_list	*av;	/* auth_opt=, for every connect */
	bool			lost;	/* gone before ldms_pub_close() */
	bool			gone_fast;	/* gone, for atomic reads */
	bool			sync_acked;	/* channel=msg: all delivered */
	/*
	 * Written by LDMS's threads under lock, read by the consumer without
	 * it (atomics) unless it waits: waiters says so, and only then do
	 * the events wake it (no futex call per ACK).
	 */
	uint64_t		acked;		/* answered, rejected included */
	uint64_t		rejected;	/* under lock */
	unsigned int		waiters;
	struct ldms_pub_stats	st;	/* the consumer's own counts */
	struct fmt_period_last	last;	/* JSON: the PERIOD in force */
	uint8_t			*buf;	/* batch=: the message being packed */
	size_t			batch;	/* its capacity (capped) */
	size_t			blen;	/* bytes in it */
	uint64_t		bn;	/* records in it */
	char			*json;	/* FMT_JSON_MAX */
	/*
	 * ldms_pub_stop_on(): the caller's signal count, and at which count
	 * every wait ends (cut: from then on nothing is published; the
	 * consumer's thread alone reads and writes these).
	 */
	const volatile sig_atomic_t *stop_count;
	int			stop_at;
	uint64_t		stop_ns;	/* ldms_pub_stop_at() */
	uint64_t		stop_seen_ns;	/* a wait first saw the stop */
	bool			cut;
	bool			cut_stalled;	/* by timeout=, not a signal */
	bool			cut_said;
	bool			wait_said;
	char			name[256];
};

static void pub_event(ldms_t x, struct ldms_event_head *e, void *arg)
{
	struct ldms_pub *p = arg;

	pthread_mutex_lock(&p->lock);
	/* a connection given up for another (reconnect=): not ours now */
	if (x != p->x) {
		pthread_mutex_unlock(&p->lock);
		return;
	}
	switch (e->type) {
	case LDMS_XPRT_EVENT_CONNECTED:
		p->conn = 1;
		break;
	case LDMS_XPRT_EVENT_REJECTED:
	case LDMS_XPRT_EVENT_ERROR:
	case LDMS_XPRT_EVENT_DISCONNECTED:
		/* an attempt of reconnect= that failed, even once connected */
		if (p->conn == 1 && !p->connecting)
			p->gone = true;
		else
			p->conn = -1;
		p->conn_event = e->type;
		/* pairs with the acquires in ldms_pub_record(), _gone() */
		__atomic_store_n(&p->gone_fast, p->gone, __ATOMIC_RELEASE);
		break;
	case LDMS_XPRT_EVENT_SEND_QUOTA_DEPOSITED:	/* channel=msg */
		break;
	case LDMS_XPRT_EVENT_RECV:	/* the answer to one publish */
		if (e->data_len < LDMSD_REPLY_TEXT + 3 ||
		    memcmp(e->data + LDMSD_REPLY_TEXT, "ACK", 3))
			p->rejected++;	/* refused */
		/* pairs with the acquire in ldms_pub_record() */
		__atomic_store_n(&p->acked, p->acked + 1, __ATOMIC_RELEASE);
		break;
	default:
		break;
	}
	if (p->waiters)
		pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
}

#ifdef PMCRING_STATIC
static int pub_load(struct ldms_pub *p)
{
	(void)p;
	fprintf(stderr, "pmcring: --ldms: this pmcring is static and cannot "
		"load LDMS (a shared library): use the dynamic pmcring\n");
	return -ENOTSUP;
}
#else
static int pub_load(struct ldms_pub *p)
{
	static const char so[] = "libldmsd_stream.so.0";
	const char *prefix = getenv("LDMS_PREFIX");
	char path[4096];
	const char *tried = so;

	if (p->o.lib) {
		tried = p->o.lib;
	} else if (prefix && *prefix) {
		snprintf(path, sizeof(path), "%s/lib/%s", prefix, so);
		tried = path;
	}
	p->api.dl = dlopen(tried, RTLD_NOW | RTLD_GLOBAL);
	if (!p->api.dl) {
		fprintf(stderr, "pmcring: --ldms: cannot load LDMS: %s\n"
			"pmcring: --ldms needs OVIS LDMS 4.5 (not in Debian): "
			"its lib/ on LD_LIBRARY_PATH, LDMS_PREFIX=DIR, or "
			"--ldms lib=PATH\n", dlerror());
		return -ENOENT;
	}
#define SYM(f, name) do { \
		*(void **)&p->api.f = dlsym(p->api.dl, name); \
		if (!p->api.f) { \
			fprintf(stderr, "pmcring: --ldms: %s has no %s: not " \
				"the LDMS 4.5 ABI\n", tried, name); \
			return -ENOENT; \
		} \
	} while (0)
	SYM(xprt_new_with_auth, "ldms_xprt_new_with_auth");
	SYM(connect_by_name, "ldms_xprt_connect_by_name");
	SYM(xprt_close, "ldms_xprt_close");
	SYM(stream_publish, "ldmsd_stream_publish");
	SYM(av_new, "av_new");
	SYM(av_add, "av_add");
#undef SYM
	*(void **)&p->api.msg_publish = dlsym(p->api.dl, "ldms_msg_publish");
	*(void **)&p->api.msg_max = dlsym(p->api.dl, "ldms_xprt_msg_max");
	*(void **)&p->api.send_quota_get =
		dlsym(p->api.dl, "ldms_xprt_rail_send_quota_get");
	if (p->o.msg && !p->api.msg_publish) {
		fprintf(stderr, "pmcring: --ldms channel=msg: %s has no "
			"ldms_msg_publish (an LDMS older than the message "
			"channel): use channel=stream\n", tried);
		return -ENOENT;
	}
	return 0;
}
#endif

/* Absolute CLOCK_REALTIME deadline @ms from now, for the cond waits. */
static void deadline(struct timespec *ts, uint32_t ms)
{
	clock_gettime(CLOCK_REALTIME, ts);
	ts->tv_sec += ms / 1000;
	ts->tv_nsec += (long)(ms % 1000) * 1000000;
	if (ts->tv_nsec >= 1000000000) {
		ts->tv_sec++;
		ts->tv_nsec -= 1000000000;
	}
}

/* Is @a before @b? */
static bool ts_before(const struct timespec *a, const struct timespec *b)
{
	return a->tv_sec < b->tv_sec ||
	       (a->tv_sec == b->tv_sec && a->tv_nsec < b->tv_nsec);
}

void ldms_pub_stop_on(struct ldms_pub *p, const volatile sig_atomic_t *count,
		      int at)
{
	p->stop_count = count;
	p->stop_at = at;
}

void ldms_pub_stop_at(struct ldms_pub *p, uint64_t mono_ns)
{
	p->stop_ns = mono_ns;
}

static uint64_t pub_now_ns(void);

/* A stop asked: a first signal, or the end ldms_pub_stop_at() set. */
static bool pub_stop_asked(const struct ldms_pub *p)
{
	return (p->stop_count && *p->stop_count >= 1) ||
	       (p->stop_ns && pub_now_ns() >= p->stop_ns);
}

/* Has the signal that stops at once come?  (Sets cut; prints nothing.) */
static bool pub_cut(struct ldms_pub *p)
{
	if (!p->cut && p->stop_count && *p->stop_count >= p->stop_at)
		p->cut = true;
	return p->cut;
}

/* Say, once, that the publisher was cut short (never under p->lock). */
static void pub_say_cut(struct ldms_pub *p)
{
	if (!p->cut || p->cut_said)
		return;
	p->cut_said = true;
	if (p->cut_stalled)
		fprintf(stderr, "pmcring: --ldms: %s: the daemon took nothing "
			"for timeout=%u ms after the stop: ", p->name,
			p->o.timeout_ms);
	else
		fprintf(stderr, "pmcring: --ldms: %s: ", p->name);
	fprintf(stderr, "stopped at once: what was not yet published is "
		"counted undelivered, what was not yet acknowledged not "
		"acknowledged\n");
}

/*
 * A wait for the daemon that began at @since (CLOCK_MONOTONIC, ns), with a
 * stop asked: over a second gone, say what holds the stop, once; timeout=
 * gone, give the daemon up as the second signal does (a batch system's one
 * SIGTERM, or --duration, must end the recording while its file can still
 * be ended).  Never under p->lock.
 */
static void pub_waiting(struct ldms_pub *p, uint64_t since)
{
	uint64_t now = pub_now_ns(), waited;

	if (!pub_stop_asked(p))
		return;
	if (!p->stop_seen_ns)
		p->stop_seen_ns = now;
	/* since the stop, or since this wait began if that is later */
	waited = now - (since > p->stop_seen_ns ? since : p->stop_seen_ns);
	if (waited >= (uint64_t)p->o.timeout_ms * 1000000ull) {
		p->cut = true;
		p->cut_stalled = true;
	} else if (waited >= 1000000000ull && !p->wait_said) {
		p->wait_said = true;
		fprintf(stderr, "pmcring: --ldms: %s: the stop waits for the "
			"daemon (at most timeout=%u ms; signal again: stop at "
			"once)\n", p->name, p->o.timeout_ms);
	}
}

/*
 * pthread_cond_timedwait() on p->cond (p->lock held) until @until, but at
 * most 100 ms, so that the signal which stops at once is seen.  False once
 * @until has passed or that signal came.
 */
static bool pub_wait(struct ldms_pub *p, const struct timespec *until)
{
	struct timespec slice, now;

	deadline(&slice, 100);
	if (ts_before(until, &slice))
		slice = *until;
	pthread_cond_timedwait(&p->cond, &p->lock, &slice);
	clock_gettime(CLOCK_REALTIME, &now);
	return ts_before(&now, until) && !pub_cut(p);
}

static const char *event_name(int type)
{
	switch (type) {
	case LDMS_XPRT_EVENT_REJECTED:
		return "rejected (auth= or auth_opt= not the daemon's?)";
	case LDMS_XPRT_EVENT_ERROR:
		return "connection refused or unreachable (is an ldmsd "
		       "listening there: ldmsd -x XPRT:PORT?)";
	case LDMS_XPRT_EVENT_DISCONNECTED:
		return "disconnected";
	default:
		return "timed out";
	}
}

/* A new transport with auth= and auth_opt=, or NULL with errno. */
static ldms_t pub_xprt(struct ldms_pub *p)
{
	unsigned int i;
	char kv[256], *v;

	if (p->o.nr_auth_opts && !p->av) {
		p->av = p->api.av_new(p->o.nr_auth_opts);
		for (i = 0; p->av && i < p->o.nr_auth_opts; i++) {
			snprintf(kv, sizeof(kv), "%s", p->o.auth_opt[i]);
			v = strchr(kv, '=');
			*v++ = '\0';
			p->api.av_add(p->av, kv, v);
		}
	}
	return p->api.xprt_new_with_auth(p->o.xprt, p->o.auth, p->av);
}

static int pub_connect(struct ldms_pub *p)
{
	struct timespec until;
	int rc;

	p->x = pub_xprt(p);
	if (!p->x) {
		rc = errno ? errno : EINVAL;
		fprintf(stderr, "pmcring: --ldms: transport %s with auth %s: "
			"%s\n", p->o.xprt, p->o.auth, strerror(rc));
		return -rc;
	}
	rc = p->api.connect_by_name(p->x, p->o.host, p->o.port, pub_event, p);
	if (rc) {
		fprintf(stderr, "pmcring: --ldms: connect to %s: %s\n",
			p->name, strerror(rc));
		return -rc;
	}
	deadline(&until, p->o.timeout_ms);
	pthread_mutex_lock(&p->lock);
	p->waiters++;
	while (!p->conn && !pthread_cond_timedwait(&p->cond, &p->lock, &until))
		;
	p->waiters--;
	rc = p->conn;
	pthread_mutex_unlock(&p->lock);
	if (rc == 1)
		return 0;
	fprintf(stderr, "pmcring: --ldms: no ldmsd at %s: %s\n", p->name,
		event_name(rc ? p->conn_event : -1));
	return -ENOTCONN;
}

struct ldms_pub *ldms_pub_open(const struct ldms_pub_opts *o,
			       const struct fmt_opts *fo)
{
	struct ldms_pub *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->o = *o;
	p->o.spec = NULL;	/* the caller keeps the strings */
	p->fo = fo;
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	snprintf(p->name, sizeof(p->name), "%s:%s:%s stream %s", o->xprt,
		 o->host, o->port, o->stream);
	if (o->json && !(p->json = malloc(FMT_JSON_MAX)))
		goto err;
	if (pub_load(p) || pub_connect(p))
		goto err;
	if (o->batch) {
		size_t max = p->api.msg_max ? p->api.msg_max(p->x) : 0;

		uint64_t q[16];

		p->batch = o->batch;
		if (max > LDMS_PUB_BATCH_MARGIN &&
		    p->batch > max - LDMS_PUB_BATCH_MARGIN)
			p->batch = max - LDMS_PUB_BATCH_MARGIN;
		/*
		 * and at half the daemon's receive quota (its default_quota,
		 * LDMS_UNLIMITED: none): a message larger than the quota
		 * would wait for it for ever; half lets one be packed while
		 * another is in flight
		 */
		if (p->api.send_quota_get &&
		    !p->api.send_quota_get(p->x, q, 16) &&
		    q[0] != (uint64_t)-1 && q[0] / 2 > LDMS_PUB_BATCH_MARGIN &&
		    p->batch > q[0] / 2 - LDMS_PUB_BATCH_MARGIN)
			p->batch = q[0] / 2 - LDMS_PUB_BATCH_MARGIN;
		p->buf = malloc(p->batch);
		if (!p->buf)
			goto err;
		snprintf(p->name + strlen(p->name),
			 sizeof(p->name) - strlen(p->name), " batch=%zu",
			 p->batch);
	}
	if (!o->msg && !o->json)
		fprintf(stderr, "pmcring: --ldms: warning: binary records on "
			"the stream channel: ldmsd refuses those whose last "
			"byte is not NUL (counted), and an aggregator cuts "
			"them at their first NUL byte; type=json or "
			"channel=msg carry every record whole "
			"(Documentation/ldms.rst)\n");
	return p;
err:
	ldms_pub_free(p);
	return NULL;
}

static void say_gone(struct ldms_pub *p)
{
	if (p->loss_said)
		return;
	p->loss_said = true;
	p->said_gone = true;
	if (p->o.reconnect_ms)
		fprintf(stderr, "pmcring: --ldms: %s: the daemon went away: "
			"connecting again every %u ms, the records taken "
			"meanwhile counted undelivered\n", p->name,
			p->o.reconnect_ms);
	else
		fprintf(stderr, "pmcring: --ldms: %s: the daemon went away: "
			"stopping\n", p->name);
}

static uint64_t pub_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * reconnect=, the connection lost: every reconnect= ms give it (or the
 * last attempt) up and start another, without waiting for it: the
 * consumer goes on, its records counted undelivered, until the attempt's
 * CONNECTED.  Then what the connections given up left unanswered stays
 * so (not acknowledged), and publishing resumes.  True when connected
 * again.
 */
static bool pub_reconnect(struct ldms_pub *p)
{
	uint64_t now = pub_now_ns();
	ldms_t old, x;

	pthread_mutex_lock(&p->lock);
	if (p->connecting && p->conn == 1) {
		p->connecting = false;
		p->gone = false;
		p->lost_unanswered = p->st.messages - p->acked;
		p->pub_before = p->st.published;
		p->loss_said = false;
		p->st.reconnects++;
		/* pairs with the acquires in ldms_pub_record(), _gone() */
		__atomic_store_n(&p->gone_fast, false, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&p->lock);
		fprintf(stderr, "pmcring: --ldms: %s: connected again, %"
			PRIu64 " records undelivered so far\n", p->name,
			p->st.undelivered);
		return true;
	}
	if ((p->connecting && !p->conn) || now < p->next_try_ns) {
		pthread_mutex_unlock(&p->lock);
		return false;
	}
	old = p->x;
	p->x = NULL;	/* its events are ignored from here on */
	p->connecting = false;
	pthread_mutex_unlock(&p->lock);
	p->next_try_ns = now + (uint64_t)p->o.reconnect_ms * 1000000u;
	if (old)
		p->api.xprt_close(old);
	x = pub_xprt(p);
	if (!x)
		return false;
	pthread_mutex_lock(&p->lock);
	p->x = x;
	p->conn = 0;
	p->connecting = true;
	pthread_mutex_unlock(&p->lock);
	if (p->api.connect_by_name(x, p->o.host, p->o.port, pub_event, p)) {
		pthread_mutex_lock(&p->lock);
		p->conn = -1;
		pthread_mutex_unlock(&p->lock);
	}
	return false;
}

/*
 * channel=msg: one ldms_msg_publish().  The message channel has no ACK;
 * out of send quota (EAGAIN, ENOBUFS) it waits for the quota LDMS deposits
 * back (SEND_QUOTA_DEPOSITED), which is its back-pressure.  0 or an errno.
 */
static int pub_msg(struct ldms_pub *p, const void *msg, size_t len)
{
	uint64_t since = 0;	/* the first refusal's: no clock per message */
	struct timespec until;
	int rc;

	for (;;) {
		rc = p->api.msg_publish(p->x, p->o.stream,
					p->json ? LDMS_MSG_JSON :
						  LDMS_MSG_STRING,
					NULL, 0444, msg, len);
		if (rc != EAGAIN && rc != ENOBUFS)
			return rc;
		if (!since)
			since = pub_now_ns();
		pub_waiting(p, since);
		if (pub_cut(p))
			return ECANCELED;
		p->st.quota_waits++;
		deadline(&until, 10);
		pthread_mutex_lock(&p->lock);
		p->waiters++;
		if (!p->gone)
			pthread_cond_timedwait(&p->cond, &p->lock, &until);
		p->waiters--;
		rc = p->gone;
		pthread_mutex_unlock(&p->lock);
		if (rc)
			return ENOTCONN;
	}
}

/*
 * One message of @nrec records: waits for window= (stream channel) or
 * quota (message channel), publishes.  0, or -ENOTCONN once the daemon is
 * gone (its records counted undelivered).
 */
static int pub_send(struct ldms_pub *p, const void *msg, size_t len,
		    uint64_t nrec)
{
	int rc;

	/*
	 * back-pressure: at most window= messages not acknowledged.  The
	 * acquires pair with the releases in pub_event(); a stale value only
	 * sends us to the locked check.
	 */
	if (pub_cut(p))
		goto cut;
	rc = __atomic_load_n(&p->gone_fast, __ATOMIC_ACQUIRE);
	if (!rc && !p->o.msg && p->st.messages - p->lost_unanswered -
	    __atomic_load_n(&p->acked, __ATOMIC_ACQUIRE) >= p->o.window) {
		uint64_t since = pub_now_ns();
		struct timespec never;

		/* a deadline pub_wait() never reaches: 100 ms slices */
		deadline(&never, 0);
		never.tv_sec += 1000000000;
		pthread_mutex_lock(&p->lock);
		p->waiters++;
		while (!p->gone && p->st.messages - p->lost_unanswered -
		       p->acked >= p->o.window && pub_wait(p, &never)) {
			pthread_mutex_unlock(&p->lock);
			pub_waiting(p, since);
			pthread_mutex_lock(&p->lock);
		}
		p->waiters--;
		rc = p->gone;
		pthread_mutex_unlock(&p->lock);
		if (!rc && p->cut)
			goto cut;
	}
	if (!rc && p->o.msg)
		rc = pub_msg(p, msg, len);
	else if (!rc)
		rc = p->api.stream_publish(p->x, p->o.stream,
					   p->json ? LDMSD_STREAM_JSON :
						     LDMSD_STREAM_STRING,
					   msg, len);
	if (rc == ECANCELED)	/* pub_msg(): cut while out of quota */
		goto cut;
	if (rc) {
		pthread_mutex_lock(&p->lock);
		p->gone = true;
		/* pairs with the acquire in ldms_pub_gone() */
		__atomic_store_n(&p->gone_fast, true, __ATOMIC_RELEASE);
		pthread_mutex_unlock(&p->lock);
		say_gone(p);
		p->st.undelivered += nrec;
		return -ENOTCONN;
	}
	p->st.published += nrec;
	p->st.messages++;
	return 0;
cut:
	pub_say_cut(p);
	p->st.undelivered += nrec;
	return -ECANCELED;
}

void ldms_pub_flush(struct ldms_pub *p)
{
	if (!p->blen)
		return;
	pub_send(p, p->buf, p->blen, p->bn);
	p->blen = 0;
	p->bn = 0;
}

int ldms_pub_record(struct ldms_pub *p, const struct fmt_rec *r)
{
	struct timespec rt;
	const void *msg;
	size_t len;

	if (p->json)
		fmt_realtime(p->fo, r->ts, &rt);
	len = fmt_blob_message(&p->last, p->json != NULL, r, &rt, p->json,
			       &msg);
	if (!len) {
		p->st.no_msg++;
		return 0;
	}
	if (pub_cut(p)) {
		pub_say_cut(p);
		p->st.undelivered++;
		return -ECANCELED;
	}
	/* pairs with the releases in pub_event(), pub_send() */
	if (__atomic_load_n(&p->gone_fast, __ATOMIC_ACQUIRE) &&
	    (!p->o.reconnect_ms || !pub_reconnect(p))) {
		say_gone(p);
		p->st.undelivered++;
		return -ENOTCONN;
	}
	if (!p->batch)
		return pub_send(p, msg, len, 1);
	/* whole records, in the order taken, as many as fit */
	if (p->blen + len > p->batch)
		ldms_pub_flush(p);
	if (len > p->batch)
		return pub_send(p, msg, len, 1);
	memcpy(p->buf + p->blen, msg, len);
	p->blen += len;
	p->bn++;
	return 0;
}

bool ldms_pub_gone(struct ldms_pub *p)
{
	/* pairs with the releases in pub_event(), ldms_pub_record() */
	bool gone = __atomic_load_n(&p->gone_fast, __ATOMIC_ACQUIRE);

	if (gone && p->o.reconnect_ms) {
		if (!pub_reconnect(p))
			say_gone(p);
		return false;	/* the recording goes on */
	}
	if (gone)
		say_gone(p);
	return gone;
}

/*
 * channel=msg has no ACK, and a close drops what LDMS still queues to
 * send.  One stream publish after the messages, on the same connection,
 * is acknowledged only once the daemon has read every message before it:
 * its ACK stands for all of them (sync_acked).
 */
static void pub_msg_sync(struct ldms_pub *p, const struct timespec *until)
{
	static const char sync[] = "pmcring: end of messages";
	uint64_t before;

	pthread_mutex_lock(&p->lock);
	before = p->acked;
	pthread_mutex_unlock(&p->lock);
	if (p->gone_fast || pub_cut(p) ||
	    p->api.stream_publish(p->x, "pmcring-sync", LDMSD_STREAM_STRING,
				  sync, sizeof(sync)))
		return;
	pthread_mutex_lock(&p->lock);
	p->waiters++;
	while (!p->gone && p->acked == before && pub_wait(p, until))
		;
	p->waiters--;
	p->sync_acked = p->acked != before;
	pthread_mutex_unlock(&p->lock);
}

void ldms_pub_close(struct ldms_pub *p)
{
	struct timespec until;

	/* an attempt of reconnect= that has connected since */
	if (p->o.reconnect_ms &&
	    __atomic_load_n(&p->gone_fast, __ATOMIC_ACQUIRE))
		pub_reconnect(p);
	if (!p->x)
		return;
	if (p->conn != 1) {	/* never connected: nothing to wait for */
		p->api.xprt_close(p->x);
		p->x = NULL;
		return;
	}
	ldms_pub_flush(p);
	deadline(&until, p->o.timeout_ms);
	if (p->o.msg)
		pub_msg_sync(p, &until);
	/* every ACK, or the loss, or timeout=, or the signal that cuts */
	pthread_mutex_lock(&p->lock);
	p->waiters++;
	while (!p->o.msg && !p->gone && !p->cut &&
	       p->acked + p->lost_unanswered < p->st.messages &&
	       pub_wait(p, &until))
		;
	p->lost = p->gone;
	pthread_mutex_unlock(&p->lock);
	pub_say_cut(p);
	p->api.xprt_close(p->x);
	/* the DISCONNECTED of our own close ends the connection's events */
	deadline(&until, 1000);
	pthread_mutex_lock(&p->lock);
	while (!p->gone && !pthread_cond_timedwait(&p->cond, &p->lock, &until))
		;
	p->waiters--;
	pthread_mutex_unlock(&p->lock);
	p->x = NULL;
}

void ldms_pub_get_stats(const struct ldms_pub *p, struct ldms_pub_stats *st)
{
	pthread_mutex_lock((pthread_mutex_t *)&p->lock);
	*st = p->st;
	/* the message channel: all or (we cannot tell which) none */
	/* no batch on the stream channel: a message is a record there */
	/* reconnect=: the last connection's (earlier ones: not known) */
	st->acked = !p->o.msg ? p->acked - p->rejected :
		    p->sync_acked ? p->st.published - p->pub_before : 0;
	st->rejected = p->rejected;
	st->gone = p->lost || p->said_gone;
	pthread_mutex_unlock((pthread_mutex_t *)&p->lock);
}

int ldms_pub_sidecar(const struct ldms_pub *p, const char *path)
{
	struct ldms_pub_stats st;
	char *side;
	FILE *f;
	int err = 0;

	if (asprintf(&side, "%s.ldms", path) < 0)
		return -ENOMEM;
	ldms_pub_get_stats(p, &st);
	f = fopen(side, "w");
	if (!f) {
		err = -errno;
		goto out;
	}
	fprintf(f, "published %" PRIu64 " messages %" PRIu64 " acknowledged %"
		PRIu64 " refused %" PRIu64 " not_acknowledged %" PRIu64
		" undelivered %" PRIu64 " quota_waits %" PRIu64 " no_msg %"
		PRIu64 " reconnects %" PRIu64 " gone %d to %s\n", st.published,
		st.messages, st.acked, st.rejected,
		st.published - st.acked - st.rejected, st.undelivered,
		st.quota_waits, st.no_msg, st.reconnects, st.gone, p->name);
	if (fclose(f))
		err = -errno;
out:
	free(side);
	return err;
}

void ldms_sidecar_remove(const char *path)
{
	char *side;

	if (asprintf(&side, "%s.ldms", path) < 0)
		return;
	unlink(side);
	free(side);
}

const char *ldms_pub_name(const struct ldms_pub *p)
{
	return p->name;
}

void ldms_pub_free(struct ldms_pub *p)
{
	if (!p)
		return;
	if (p->x)
		ldms_pub_close(p);
	/*
	 * The library stays loaded: LDMS's threads may still run (a
	 * dlclose() under them would pull their code away).
	 */
	free(p->buf);
	free(p->json);
	free(p->last.v);
	pthread_cond_destroy(&p->cond);
	pthread_mutex_destroy(&p->lock);
	free(p);
}
