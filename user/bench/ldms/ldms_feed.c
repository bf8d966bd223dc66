// SPDX-License-Identifier: GPL-2.0
/*
 * Description: pmcring record's data path without the module, for the LDMS
 * cluster test and the LDMS benchmark: producer threads write records into
 * two user space rings (pmcring_uprod, the ring ABI the module writes) while
 * record's consumer merges them in exact timestamp order, writes pmcring's
 * own blob set and publishes the same records to an ldmsd (record/ldms.c,
 * what `pmcring record --ldms` does).  The records are those a sampling
 * session makes: a PMCALLOCATEDYN, then on each CPU CALLCHAINs of 4 PCs,
 * a PROCCSW every 16th and a PERIOD every 64th record.
 *
 * Usage: pmcring-ldms-feed [-n RECORDS_PER_CPU] [-p RING_PAGES] [-j]
 *                          [-r RATE] [-d MS] [-o DIR|none] [--ldms SPEC]
 *                          [-q]
 *   -o DIR   pmcring's blob set in DIR/blobs/pmcring.*.T (default none:
 *            a pmclog file on /dev/null, the cheapest writer)
 *   -j       JSON messages (--blob-json, --ldms type=json)
 *   -p N     ring pages per CPU (default: room for every record, no drop)
 *   -r RATE  records per second and CPU (default: as fast as they can)
 *   -d MS    stop after MS milliseconds, as --duration does
 *   -R FILE  replay the records of pmclog FILE (a recording made by the
 *            module) instead: all into ring 0 before the drain, each with
 *            its own timestamp, in the file's order (INITIALIZE and
 *            CLOSELOG are the writer's, not the rings')
 * Prints one line of counts: records taken, drops (DROPNOTIFY records),
 * messages published, acknowledged and refused, undelivered, seconds,
 * records/s.
 * SIGINT, SIGTERM and -d stop it as they stop `pmcring record -a`: the
 * producers stop, the rings are drained, every record taken is published
 * and the acknowledgements awaited, then the line; exit 0 if all were
 * delivered.
 * Exits 1 if the daemon went away or anything was not delivered.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include <libpmcring_test.h>

#include "../../pmcring/record/consumer.h"

#define NR_CPUS		2u
#define NR_PCS		4u
#define PMCID		1u

/*
 * set by SIGINT/SIGTERM or -d: the producers stop, the rest is drained;
 * the second signal ends the publisher's waits (ldms_pub_stop_on())
 */
static volatile sig_atomic_t stop_sig, nr_stops;
static int stop_req;

static void on_stop(int sig)
{
	stop_sig = sig;
	nr_stops++;
}

struct prod {
	struct pmcring_uprod	*p;
	unsigned int		cpu;
	uint64_t		n;
	uint64_t		rate;		/* per second, 0: flat out */
	uint64_t		dropped;
	int			done;
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static bool put(struct prod *pr, unsigned int type, uint32_t len,
		uint64_t i)
{
	uint8_t *r = pmcring_uprod_reserve(pr->p, pr->cpu, type, len);
	unsigned int k;

	if (!r) {
		pr->dropped++;
		return false;
	}
	switch (type) {
	case PMCRING_TYPE_PMCALLOCATEDYN:
		fmt_put32(r, 16, PMCID);
		fmt_put32(r, 20, 0);
		snprintf((char *)r + 32, PMCRING_NAME_MAX, "cycles");
		break;
	case PMCRING_TYPE_PERIOD:
		fmt_put32(r, 16, PMCID);
		fmt_put64(r, 24, 100000 + i);
		break;
	case PMCRING_TYPE_PROCCSW:
		fmt_put64(r, 16, i);
		fmt_put32(r, 24, PMCID);
		fmt_put32(r, 28, 1000 + pr->cpu);
		fmt_put32(r, 32, 1000 + pr->cpu);
		break;
	default:	/* CALLCHAIN */
		fmt_put32(r, 16, 1000 + pr->cpu);
		fmt_put32(r, 20, 1000 + pr->cpu);
		fmt_put32(r, 24, PMCID);
		fmt_put32(r, 28, pr->cpu << 16 | 1);
		for (k = 0; k < NR_PCS; k++)
			fmt_put64(r, 32 + 8 * k, 0x401000 + 16 * k + i % 64);
		break;
	}
	pmcring_uprod_commit(pr->p, pr->cpu);
	return true;
}

static void *produce(void *arg)
{
	struct prod *pr = arg;
	double t0 = now_s(), ahead;
	uint64_t i;

	if (pr->cpu == 0)
		put(pr, PMCRING_TYPE_PMCALLOCATEDYN, PMCRING_SIZE_PMCALLOCATEDYN,
		    0);
	/* pairs with the release store in main() */
	for (i = 0; i < pr->n &&
	     !__atomic_load_n(&stop_req, __ATOMIC_ACQUIRE); i++) {
		/* paced: sleep off any lead over RATE, every 100 records */
		if (pr->rate && i % 100 == 0) {
			ahead = (double)i / (double)pr->rate - (now_s() - t0);
			if (ahead > 0)
				usleep((useconds_t)(ahead * 1e6));
		}
		if (i % 64 == 0)
			put(pr, PMCRING_TYPE_PERIOD, PMCRING_SIZE_PERIOD, i);
		else if (i % 16 == 0)
			put(pr, PMCRING_TYPE_PROCCSW, PMCRING_SIZE_PROCCSW, i);
		else
			put(pr, PMCRING_TYPE_CALLCHAIN,
			    PMCRING_SIZE_CALLCHAIN_MIN + 8 * NR_PCS, i);
	}
	__atomic_store_n(&pr->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

struct replay {
	struct pmcring_uprod	*p;
	uint64_t		n;
	int			err;
};

static int replay_one(const struct fmt_item *it, void *ctx)
{
	struct replay *rp = ctx;
	uint8_t *r;

	if (it->type == PMCRING_TYPE_INITIALIZE ||
	    it->type == PMCRING_TYPE_CLOSELOG)
		return 0;
	r = pmcring_uprod_reserve(rp->p, 0, it->type, (uint32_t)it->len);
	if (!r) {
		rp->err = -errno;
		return 1;
	}
	memcpy(r, it->data, it->len);	/* its own header: its timestamp */
	pmcring_uprod_commit(rp->p, 0);
	rp->n++;
	return 0;
}

/* The records of pmclog @path into ring 0 of a new uprod: 0 or -errno. */
static int replay_file(const char *path, struct pmcring_uprod **pp,
		       uint64_t *n)
{
	struct replay rp = { 0 };
	const void *img;
	size_t len, bad;
	uint32_t pages = 1;
	int rc;

	rc = fmt_map_file(path, &img, &len, "pmcring-ldms-feed");
	if (rc)
		return rc;
	while ((uint64_t)pages * 4096 < len + 65536)
		pages <<= 1;
	rp.p = pmcring_uprod_new(NR_CPUS, pages);
	rc = rp.p ? fmt_pmclog_read(img, len, replay_one, &rp, &bad) : -ENOMEM;
	fmt_unmap_file(img, len);
	if (rc < 0 || rp.err) {
		fprintf(stderr, "pmcring-ldms-feed: %s: %s\n", path,
			strerror(rc < 0 ? -rc : -rp.err));
		pmcring_uprod_free(rp.p);
		return rc < 0 ? rc : rp.err;
	}
	*pp = rp.p;
	*n = rp.n;
	return 0;
}

static uint32_t pages_for(uint64_t n)
{
	uint64_t need = n * 80 + 65536, pages = 1;

	while (pages * 4096 < need)
		pages <<= 1;
	return (uint32_t)pages;
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "ldms", required_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	struct pmcring_merge_opts mo = { .sz = sizeof(mo) };
	struct pmcring_cpu_buf *bufs[NR_CPUS];
	struct ldms_pub_opts lopts = { 0 };
	struct ldms_pub_stats st = { 0 };
	struct prod pr[NR_CPUS];
	pthread_t th[NR_CPUS];
	struct pmcring_uprod *p = NULL;
	struct pmcring_merge *m;
	struct ldms_pub *pub = NULL;
	struct fmt_writer *w;
	struct consumer c;
	struct fmt_opts o;
	const char *dir = "none", *replay = NULL;
	bool json = false, quiet = false, ldms = false, gone = false;
	uint64_t n = 20000, rate = 0, k, idle = 0, end_ts = 0, dur_ms = 0;
	struct sigaction sa = { .sa_handler = on_stop };
	uint32_t pages = 0;
	char err[256];
	unsigned int cpu;
	double t0, t;
	int opt, ret = 0;

	while ((opt = getopt_long(argc, argv, "n:p:r:R:d:jo:q", lo, NULL)) != -1) {
		switch (opt) {
		case 'n':
			n = strtoull(optarg, NULL, 0);
			break;
		case 'd':
			dur_ms = strtoull(optarg, NULL, 0);
			break;
		case 'R':
			replay = optarg;
			break;
		case 'r':
			rate = strtoull(optarg, NULL, 0);
			break;
		case 'p':
			pages = (uint32_t)strtoul(optarg, NULL, 0);
			break;
		case 'j':
			json = true;
			break;
		case 'o':
			dir = optarg;
			break;
		case 'q':
			quiet = true;
			break;
		case 'L':
			if (ldms_pub_parse(&lopts, optarg, err, sizeof(err))) {
				fprintf(stderr, "pmcring-ldms-feed: %s\n", err);
				return 2;
			}
			ldms = true;
			break;
		default:
			fprintf(stderr, "usage: pmcring-ldms-feed [-n N] [-p "
				"PAGES] [-r RATE] [-d MS] [-R PMCLOG] [-j] [-o DIR|none] [--ldms "
				"SPEC] "
				"[-q]\n");
			return 2;
		}
	}
	if (ldms && json)
		lopts.json = true;
	if (replay) {
		if (replay_file(replay, &p, &n))
			return 1;
	} else {
		p = pmcring_uprod_new(NR_CPUS, pages ? pages : pages_for(n));
		if (!p)
			return 1;
	}
	for (cpu = 0; cpu < NR_CPUS; cpu++)
		bufs[cpu] = pmcring_uprod_cpu_buf(p, cpu);
	mo.clock = pmcring_uprod_clock;
	mo.clock_ctx = p;
	mo.max_delay_ns = 1000000;
	m = pmcring_merge_new(bufs, NR_CPUS, &mo);
	memset(&o, 0, sizeof(o));
	o.nr_cpus = NR_CPUS;
	o.target = "ldms-feed";
	pmcring_uprod_clock(p, &o.start_ns);
	clock_gettime(CLOCK_REALTIME, &o.start_rt);
	o.nr_counters = 1;
	o.counters[0].pmcid = PMCID;
	snprintf(o.counters[0].name, PMCRING_NAME_MAX, "cycles");
	if (strcmp(dir, "none")) {
		o.kind = FMT_BLOB;
		o.path = dir;
		o.container = "blobs";
		o.streams[0].name = "pmcring";
		o.streams[0].types = PMCRING_TYPES_ALL;
		o.nr_streams = 1;
		o.blob_json = json;
		o.blob_timing = true;
	} else {
		o.kind = FMT_PMCLOG;
		o.path = "/dev/null";
	}
	w = m ? fmt_writer_new(&o) : NULL;
	if (!w || consumer_init(&c, m, NR_CPUS, w, false, -1)) {
		fprintf(stderr, "pmcring-ldms-feed: setup failed\n");
		return 1;
	}
	if (ldms) {
		pub = ldms_pub_open(&lopts, &o);
		if (!pub)
			return 1;
		c.pub = pub;
		ldms_pub_stop_on(pub, &nr_stops, 2);
		if (!quiet)
			fprintf(stderr, "pmcring-ldms-feed: publishing to "
				"%s\n", ldms_pub_name(pub));
	}
	if (consumer_begin(&c)) {
		fprintf(stderr, "pmcring-ldms-feed: %s: cannot write\n", dir);
		return 1;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	t0 = now_s();
	if (pub && dur_ms) {	/* -d: the end, for the publisher's waits */
		struct timespec ts;

		clock_gettime(CLOCK_MONOTONIC, &ts);
		ldms_pub_stop_at(pub, (uint64_t)ts.tv_sec * 1000000000ull +
				 (uint64_t)ts.tv_nsec + dur_ms * 1000000ull);
	}
	for (cpu = 0; cpu < NR_CPUS; cpu++) {
		pr[cpu] = (struct prod){ .p = p, .cpu = cpu, .n = n,
					 .rate = rate, .done = replay != NULL };
		if (!replay)
			pthread_create(&th[cpu], NULL, produce, &pr[cpu]);
	}
	/* drain while they write, then until two rounds find nothing */
	for (;;) {
		bool done = true;

		if ((stop_sig || (dur_ms && now_s() - t0 >= dur_ms / 1e3)) &&
		    !__atomic_load_n(&stop_req, __ATOMIC_RELAXED))
			/* pairs with the acquire load in produce() */
			__atomic_store_n(&stop_req, 1, __ATOMIC_RELEASE);
		for (cpu = 0; cpu < NR_CPUS; cpu++)
			done &= __atomic_load_n(&pr[cpu].done, __ATOMIC_ACQUIRE);
		if (consumer_drain(&c, 65536, &k)) {
			ret = 1;
			break;
		}
		if (pub && ldms_pub_gone(pub)) {
			gone = true;	/* stop, as record does */
			break;
		}
		idle = done && !k ? idle + 1 : 0;
		if (idle == 2)
			break;
		if (!k)
			usleep(200);
	}
	for (cpu = 0; !replay && cpu < NR_CPUS; cpu++)
		pthread_join(th[cpu], NULL);
	/* what stop would drain still, counted undelivered when gone */
	while (gone && !consumer_drain(&c, 0, &k) && k)
		;
	pmcring_uprod_clock(p, &end_ts);
	if (!ret && (consumer_unannounced(&c, end_ts) ||
		     consumer_end(&c, end_ts)))
		ret = 1;
	if (pub) {
		ldms_pub_close(pub);
		ldms_pub_get_stats(pub, &st);
		/* the counts next to the set, as record writes them */
		if (strcmp(dir, "none") && ldms_pub_sidecar(pub, dir))
			ret = 1;
	}
	t = now_s() - t0;
	if (!quiet)
		printf("records %" PRIu64 " drops %" PRIu64 " published %"
		       PRIu64 " messages %" PRIu64 " acked %" PRIu64 " rejected %" PRIu64
		       " undelivered %" PRIu64 " no_msg %" PRIu64
		       " quota_waits %" PRIu64 " reconnects %" PRIu64
		       " seconds %.3f records_per_s %.0f\n",
		       c.st.records, c.st.drops, st.published, st.messages,
		       st.acked,
		       st.rejected, st.undelivered, st.no_msg, st.quota_waits,
		       st.reconnects, t, (double)c.st.records / t);
	if (pub && (st.gone || st.undelivered || st.acked != st.published))
		ret = 1;
	consumer_fini(&c);
	ldms_pub_free(pub);
	ldms_pub_opts_free(&lopts);
	fmt_writer_free(w);
	pmcring_merge_free(m);
	pmcring_uprod_free(p);
	return ret;
}
