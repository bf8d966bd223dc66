// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the exact cross-CPU ordering protocol of the uapi header.
 * All CPUs generate from process and hard-IRQ context while this program
 * merges every CPU's ring in timestamp order using only pending_ts,
 * data_head and PMCRING_IOC_CLOCK: a record is handed out only when every
 * other CPU has a visible record or a bound at least as late.  The merged
 * stream must be non-decreasing in time (a record handed out early would
 * show up as a later record with an earlier timestamp) and complete (every
 * seq of every CPU and context).  A second case keeps all but one CPU
 * idle: the merge must still progress on the idle CPUs' clock bound.
 */
#include <pthread.h>
#include "ring_common.h"

#define RECSZ	32

struct cursor {
	uint64_t	pos;
	uint64_t	head;	/* snapshot, read after pending_ts */
	uint64_t	bound;	/* no record past head has a smaller ts */
	uint64_t	next_seq[3];
};

struct merge {
	struct rt_sess	*s;
	struct cursor	*c;
	uint64_t	last_ts;
	uint64_t	out;		/* records handed out */
	uint64_t	rounds;
	uint64_t	waits_pending;	/* stopped on a non-zero pending_ts */
	uint64_t	waits_clock;	/* stopped on the clock bound */
	char		err[256];
};

struct gen_arg {
	int		fd;
	uint64_t	count;
	int		only_cpu;
	int		err;
	volatile int	done;
};

static void *gen_thread(void *arg)
{
	struct gen_arg *g = arg;

	if (g->only_cpu >= 0)
		g->err = rt_generate_on(g->fd, g->only_cpu, g->count, RECSZ,
					PMCRING_GEN_F_ALL);
	else
		g->err = rt_generate(g->fd, g->count, RECSZ, PMCRING_GEN_F_ALL,
				     NULL, 0, 8);
	__atomic_store_n(&g->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static const struct pmcring_rec_generated *rec_at(struct rt_ring *r,
						  uint64_t pos)
{
	return (const void *)(r->data + (pos & (r->size - 1)));
}

/*
 * One snapshot (F, then per CPU pending_ts then data_head, H) and hand
 * out everything it allows.  Returns 1 if every ring was drained and idle
 * at the snapshot, 0 if not, -1 on a violation.
 */
static int merge_round(struct merge *m)
{
	unsigned int cpu, n = m->s->nr_cpus;
	int idle = 1;
	uint64_t t;

	if (rt_ioctl(m->s->fd, PMCRING_IOC_CLOCK, &t)) {
		snprintf(m->err, sizeof(m->err), "CLOCK: %m");
		return -1;
	}
	for (cpu = 0; cpu < n; cpu++) {
		struct rt_ring *r = &m->s->rings[cpu];
		struct cursor *c = &m->c[cpu];
		uint64_t pend = __atomic_load_n(&r->prod->pending_ts,
						__ATOMIC_ACQUIRE);

		c->head = __atomic_load_n(&r->ctl->data_head, __ATOMIC_ACQUIRE);
		c->bound = pend ? pend : t;
		if (pend || c->head != c->pos)
			idle = 0;
	}
	m->rounds++;

	for (;;) {
		const struct pmcring_rec_generated *g;
		uint64_t best_ts = UINT64_MAX;
		int best = -1, best_visible = 0;
		struct rt_ring *r;
		struct cursor *c;
		uint32_t len;

		for (cpu = 0; cpu < n; cpu++) {
			int visible = m->c[cpu].pos != m->c[cpu].head;
			uint64_t ts = visible ?
				rec_at(&m->s->rings[cpu], m->c[cpu].pos)->h.pl_tsc :
				m->c[cpu].bound;

			/* Ties go to a visible record: later ones are >= ts. */
			if (ts < best_ts || (ts == best_ts && visible && !best_visible)) {
				best_ts = ts;
				best = cpu;
				best_visible = visible;
			}
		}
		if (!best_visible) {
			if (best >= 0 && m->c[best].bound != t)
				m->waits_pending++;
			else
				m->waits_clock++;
			break;
		}
		r = &m->s->rings[best];
		c = &m->c[best];
		g = rec_at(r, c->pos);
		len = PMCRING_HEADER_LEN(g->h.pl_header);
		if (PMCRING_HEADER_TYPE(g->h.pl_header) != PMCRING_TYPE_GENERATED ||
		    len != RECSZ || g->pl_cpu != (uint32_t)best ||
		    (g->pl_ctx != 1 && g->pl_ctx != 2)) {
			snprintf(m->err, sizeof(m->err),
				 "cpu %d: bad record %#x cpu %u ctx %u", best,
				 g->h.pl_header, g->pl_cpu, g->pl_ctx);
			return -1;
		}
		if (g->h.pl_tsc < m->last_ts) {
			snprintf(m->err, sizeof(m->err),
				 "out of order: cpu %d ctx %u seq %llu ts %llu after ts %llu",
				 best, g->pl_ctx, (unsigned long long)g->pl_seq,
				 (unsigned long long)g->h.pl_tsc,
				 (unsigned long long)m->last_ts);
			return -1;
		}
		if (g->pl_seq != c->next_seq[g->pl_ctx]) {
			snprintf(m->err, sizeof(m->err),
				 "cpu %d ctx %u: seq %llu, want %llu", best,
				 g->pl_ctx, (unsigned long long)g->pl_seq,
				 (unsigned long long)c->next_seq[g->pl_ctx]);
			return -1;
		}
		c->next_seq[g->pl_ctx]++;
		m->last_ts = g->h.pl_tsc;
		m->out++;
		c->pos += PMCRING_RING_SPACE(len);
	}
	for (cpu = 0; cpu < n; cpu++)
		rt_consume(&m->s->rings[cpu], m->c[cpu].pos);
	return idle;
}

static void order_stress(struct __test_metadata *_metadata, int only_cpu,
			 uint64_t count)
{
	struct gen_arg ga = { .count = count, .only_cpu = only_cpu };
	int online = rt_online_cpus(), cpu, rc;
	struct merge m = { 0 };
	uint64_t handed_early;
	struct rt_sess s;
	pthread_t th;

	PMCRING_REQUIRE_DEV();
	if (only_cpu < 0 && online < 2)
		SKIP(return, "needs 2 online CPUs");
	/* The rings hold everything: completeness is exact. */
	ASSERT_EQ(0, rt_open(&s, 512, 0, 1));
	m.s = &s;
	m.c = calloc(s.nr_cpus, sizeof(*m.c));
	ASSERT_NE(NULL, m.c);
	ga.fd = s.fd;
	ASSERT_EQ(0, pthread_create(&th, NULL, gen_thread, &ga));

	for (;;) {
		int done = __atomic_load_n(&ga.done, __ATOMIC_ACQUIRE);

		rc = merge_round(&m);
		ASSERT_LE(0, rc) TH_LOG("%s", m.err);
		if (done && rc == 1)
			break;
		if (!done && m.rounds % 64 == 0)
			sched_yield();
	}
	handed_early = m.out;
	ASSERT_EQ(0, pthread_join(th, NULL));
	ASSERT_EQ(0, ga.err);

	for (cpu = 0; cpu < online; cpu++) {
		int chosen = only_cpu < 0 || cpu == only_cpu;

		EXPECT_EQ(0, rt_prod(&s.rings[cpu].prod->lost));
		EXPECT_EQ(chosen ? count : 0, m.c[cpu].next_seq[1]) TH_LOG("cpu %d", cpu);
		EXPECT_EQ(chosen ? count : 0, m.c[cpu].next_seq[2]) TH_LOG("cpu %d", cpu);
	}
	rt_info("%llu records merged in %llu snapshots; waited %llu times on pending_ts, %llu on the clock\n",
		       (unsigned long long)m.out, (unsigned long long)m.rounds,
		       (unsigned long long)m.waits_pending,
		       (unsigned long long)m.waits_clock);
	(void)handed_early;
	free(m.c);
	rt_close(&s);
}

FIXTURE(order) {
};

FIXTURE_SETUP(order)
{
}

FIXTURE_TEARDOWN(order)
{
}

TEST_F_TIMEOUT(order, all_cpus_task_and_hardirq, 300)
{
	order_stress(_metadata, -1, 30000);
}

TEST_F_TIMEOUT(order, one_busy_cpu_others_idle, 300)
{
	order_stress(_metadata, 0, 20000);
}

TEST_HARNESS_MAIN
