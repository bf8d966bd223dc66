// SPDX-License-Identifier: GPL-2.0
/*
 * Description: rings follow CPU hotplug (runs with 2 vCPUs, uses the
 * highest hot-pluggable CPU).  ring_when_cpu_comes_online: a session
 * configured while the CPU is offline has no ring for it (mmap of its
 * region is ENODEV, nr_rings counts the online CPUs); once the CPU comes
 * online its ring appears (nr_rings + 1 in every ring, mmap works, data
 * pages present) and records GENERATEd on it are all drained, none lost;
 * after it goes offline again its ring and records stay, and a second
 * online adds no ring.  rings_only_for_online_cpus: every CPU online at
 * CONFIGURE has a ring and no other does (meaningful when booted with more
 * possible than online CPUs, vmrun --append possible_cpus=4).
 * reader_across_hotplug: libpmcring's reader drains a session configured
 * with the CPU offline while the CPU goes online and offline under a
 * GENERATE load: the library maps the CPU's ring when it appears, every
 * record committed on every CPU is handed out in timestamp order, none
 * lost, and the CPU that came online contributed records.
 * reader_maps_a_ring_alone: records GENERATEd only on a CPU that came
 * online after pmcring_new(), all other rings idle, all reach the reader
 * (nothing else triggers the merge's clock read).
 * nmi_generate_ends_when_its_cpu_goes_offline (x86: the NMI stream): a
 * GENERATE whose NMI stream runs on a CPU that goes offline returns (it
 * used to wait for a signal).  irq_stream_follows_its_timer_offline (every
 * architecture): the hard-IRQ stream's timer moves to another CPU when its
 * CPU goes offline, writes the rest there in sequence and the GENERATE
 * ends with its count.
 *
 * NEEDS_LIBPMCRING
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include "ring_common.h"
#include "libpmcring.h"

#define GEN_SIZE	64u

/* The highest CPU whose online file is writable, or 0 for none. */
static unsigned int pluggable_cpu(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);
	char path[96];
	unsigned int c, cpu = 0;

	for (c = 1; c < RT_MAX_CPUS && c < (unsigned int)n; c++) {
		snprintf(path, sizeof(path),
			 "/sys/devices/system/cpu/cpu%u/online", c);
		if (!access(path, W_OK))
			cpu = c;
	}
	return cpu;
}

static int set_online(unsigned int cpu, int on)
{
	char path[96];

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%u/online",
		 cpu);
	return pmcring_write_int(path, on);
}

/* mmap() of the control page of @cpu's region: 0 or -errno. */
static int map_ctl(struct rt_sess *s, unsigned int cpu)
{
	void *p = mmap(NULL, s->info.page_size, PROT_READ, MAP_SHARED, s->fd,
		       (off_t)cpu * s->cfg.region_size);

	if (p == MAP_FAILED)
		return -errno;
	munmap(p, s->info.page_size);
	return 0;
}

FIXTURE(hp) {
	unsigned int cpu;
};

FIXTURE_SETUP(hp)
{
	self->cpu = pluggable_cpu();
}

/* Whatever happened, the CPU is online again for the next test. */
FIXTURE_TEARDOWN(hp)
{
	if (self->cpu)
		set_online(self->cpu, 1);
}

TEST_F(hp, ring_when_cpu_comes_online)
{
	const unsigned int count = 500;
	struct pmcring_config cfg = { 0 };
	unsigned int cpu = self->cpu, c, online = 0;
	struct rt_stats st;
	struct rt_sess s;
	struct rt_ring *r;
	long n;

	PMCRING_REQUIRE_DEV();
	if (!cpu || rt_online_cpus() < 2)
		SKIP(return, "needs 2+ online CPUs with hotplug");
	ASSERT_EQ(0, set_online(cpu, 0));

	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_NO_SYNTH;
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
		    PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY);
	ASSERT_EQ(0, rt_open_cfg(&s, &cfg, 1));
	ASSERT_LT(cpu, s.nr_cpus);
	r = &s.rings[cpu];

	/* A ring for each online CPU only. */
	for (c = 0; c < s.nr_cpus; c++)
		online += rt_cpu_online(c);
	for (c = 0; c < s.nr_cpus; c++) {
		if (!rt_cpu_online(c)) {
			EXPECT_EQ(NULL, s.rings[c].base) TH_LOG("cpu %u", c);
			EXPECT_EQ(-ENODEV, map_ctl(&s, c)) TH_LOG("cpu %u", c);
			continue;
		}
		ASSERT_NE(NULL, s.rings[c].base) TH_LOG("cpu %u", c);
		EXPECT_EQ(c, s.rings[c].ctl->cpu);
		EXPECT_EQ(PMCRING_PROD_F_DATA, rt_prod(&s.rings[c].prod->flags));
		EXPECT_EQ(online, rt_prod(&s.rings[c].prod->nr_rings));
	}
	/* Past the last possible CPU: outside the layout. */
	EXPECT_EQ(-EINVAL, map_ctl(&s, s.nr_cpus));
	EXPECT_EQ(-EINVAL, rt_generate_on(s.fd, cpu, 1, GEN_SIZE,
					  PMCRING_GEN_F_TASK));

	ASSERT_EQ(0, set_online(cpu, 1));
	EXPECT_EQ(online + 1, rt_prod(&s.rings[0].prod->nr_rings));
	ASSERT_EQ(0, rt_map(&s, cpu));
	EXPECT_EQ(cpu, r->ctl->cpu);
	EXPECT_EQ(PMCRING_PROD_F_DATA, rt_prod(&r->prod->flags));
	EXPECT_EQ(online + 1, rt_prod(&r->prod->nr_rings));
	EXPECT_EQ(0, rt_head(r));
	ASSERT_EQ(0, rt_generate_on(s.fd, cpu, count, GEN_SIZE,
				    PMCRING_GEN_F_TASK | PMCRING_GEN_F_HARDIRQ));
	memset(&st, 0, sizeof(st));
	st.size = GEN_SIZE;
	n = rt_drain(r, &st);
	ASSERT_LE(0, n) TH_LOG("%s", st.err);
	EXPECT_EQ(count, st.gen[PMCRING_GEN_CTX_TASK]);
	EXPECT_EQ(count, st.gen[PMCRING_GEN_CTX_HARDIRQ]);
	EXPECT_EQ(0, rt_prod(&r->prod->lost));

	/* Offline again: the ring and its records stay until drained. */
	ASSERT_EQ(0, rt_generate_on(s.fd, cpu, count, GEN_SIZE,
				    PMCRING_GEN_F_TASK));
	ASSERT_EQ(0, set_online(cpu, 0));
	EXPECT_EQ(0, map_ctl(&s, cpu));
	EXPECT_EQ(PMCRING_PROD_F_DATA, rt_prod(&r->prod->flags));
	memset(&st, 0, sizeof(st));
	st.size = GEN_SIZE;
	n = rt_drain(r, &st);
	ASSERT_LE(0, n) TH_LOG("%s", st.err);
	EXPECT_EQ(count, st.gen[PMCRING_GEN_CTX_TASK]);
	EXPECT_EQ(3 * count, rt_prod(&r->prod->records));
	EXPECT_EQ(0, rt_prod(&r->prod->lost));
	/* Online once more: the same ring, none added. */
	ASSERT_EQ(0, set_online(cpu, 1));
	EXPECT_EQ(online + 1, rt_prod(&r->prod->nr_rings));
	EXPECT_EQ(3 * count, rt_prod(&r->prod->records));
	rt_info("cpu %u: no ring while offline at CONFIGURE (%u rings for %u possible CPUs), %u records after online, %u drained after offline\n",
		cpu, online, s.nr_cpus, 2 * count, count);
	rt_close(&s);
}

/*
 * Rings exist for the CPUs online at CONFIGURE and for no other: with
 * more possible than online CPUs (possible_cpus=), the others cost
 * nothing.
 */
TEST(rings_only_for_online_cpus)
{
	unsigned int c, online = 0, mapped = 0;
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;

	PMCRING_REQUIRE_DEV();
	cfg.data_pages = 4;
	ASSERT_EQ(0, rt_open_cfg(&s, &cfg, 1));
	for (c = 0; c < s.nr_cpus; c++) {
		online += rt_cpu_online(c);
		mapped += s.rings[c].base != NULL;
		EXPECT_EQ(rt_cpu_online(c), s.rings[c].base != NULL)
			TH_LOG("cpu %u", c);
		if (!s.rings[c].base)
			EXPECT_EQ(-ENODEV, map_ctl(&s, c));
	}
	EXPECT_EQ(online, mapped);
	EXPECT_EQ(online, rt_prod(&s.rings[0].prod->nr_rings));
	rt_info("%u possible CPUs, %u online, %u rings\n", s.nr_cpus, online,
		mapped);
	rt_close(&s);
}

struct gen_loop {
	struct pmcring	*s;
	atomic_bool	stop;
	uint64_t	calls, ok, einval, errors;
};

/* GENERATE on whatever CPUs are online, until told to stop. */
static void *gen_loop(void *p)
{
	struct gen_loop *g = p;
	struct pmcring_generate req = {
		.count = 200, .size = GEN_SIZE,
		.flags = PMCRING_GEN_F_TASK | PMCRING_GEN_F_HARDIRQ,
	};
	int err;

	while (!atomic_load(&g->stop)) {
		err = pmcring_generate(g->s, &req);
		/* A CPU that left between the mask and the start: EINVAL. */
		if (!err)
			g->ok++;
		else if (err == -EINVAL)
			g->einval++;
		else if (err != -EINTR)
			g->errors++;
		g->calls++;
	}
	return NULL;
}

struct hp_seen {
	unsigned int	ncpu;
	uint64_t	last_ts, total, bad;
	uint64_t	*seen;		/* [ncpu] */
};

static int hp_cb(void *ctx, const struct pmcring_record *r)
{
	const struct pmcring_rec_generated *rec = r->data;
	struct hp_seen *hs = ctx;

	if (r->ts < hs->last_ts || r->cpu >= hs->ncpu ||
	    r->type != PMCRING_TYPE_GENERATED || rec->pl_cpu != r->cpu) {
		hs->bad++;
		return -EBADMSG;
	}
	hs->last_ts = r->ts;
	hs->seen[r->cpu]++;
	hs->total++;
	return 0;
}

struct toggler {
	unsigned int	cpu, cycles, done;
	int		err;
};

static void *toggle(void *p)
{
	struct toggler *t = p;

	for (t->done = 0; t->done < t->cycles && !t->err; t->done++) {
		usleep(100000);
		t->err = set_online(t->cpu, 1);
		usleep(100000);
		if (!t->err)
			t->err = set_online(t->cpu, 0);
	}
	if (!t->err)
		t->err = set_online(t->cpu, 1);
	return NULL;
}

TEST_F(hp, reader_across_hotplug)
{
	struct pmcring_opts opts = {
		.sz = sizeof(opts),
		.data_pages = 256,
		.flags = PMCRING_CFG_F_NO_SYNTH,
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
			 PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY),
	};
	struct toggler t = { .cpu = self->cpu, .cycles = 4 };
	struct gen_loop g = { 0 };
	struct hp_seen hs = { 0 };
	struct pmcring_reader *rd;
	pthread_t gth, tth;
	unsigned int c;
	int n;

	PMCRING_REQUIRE_DEV();
	if (!self->cpu || rt_online_cpus() < 2)
		SKIP(return, "needs 2+ online CPUs with hotplug");
	ASSERT_EQ(0, set_online(self->cpu, 0));
	g.s = pmcring_new(&opts);
	ASSERT_NE(NULL, g.s) TH_LOG("pmcring_new: %s", strerror(errno));
	{
		struct pmcring_cpu_stats st = { .sz = sizeof(st) };
		void *base;
		size_t size;

		/* No ring yet: a stand-in, idle to the merge. */
		EXPECT_EQ(-ENODEV, pmcring_cpu_buffer(g.s, self->cpu, &base,
						      &size));
		ASSERT_EQ(0, pmcring_cpu_stats(g.s, self->cpu, &st));
		EXPECT_EQ(0, st.prod_flags);
	}
	hs.ncpu = pmcring_nr_cpus(g.s);
	hs.seen = calloc(hs.ncpu, sizeof(*hs.seen));
	ASSERT_NE(NULL, hs.seen);
	rd = pmcring_reader_new(g.s, hp_cb, &hs, NULL);
	ASSERT_NE(NULL, rd) TH_LOG("reader_new: %s", strerror(errno));
	ASSERT_EQ(0, pmcring_enable(g.s));
	ASSERT_EQ(0, pthread_create(&gth, NULL, gen_loop, &g));
	ASSERT_EQ(0, pthread_create(&tth, NULL, toggle, &t));
	while (t.done < t.cycles && !t.err) {
		n = pmcring_reader_poll(rd, 50);
		ASSERT_LE(0, n) TH_LOG("poll: %s", strerror(-n));
	}
	pthread_join(tth, NULL);
	atomic_store(&g.stop, true);
	pthread_join(gth, NULL);
	ASSERT_EQ(0, t.err) TH_LOG("cpu %u online/offline", t.cpu);
	EXPECT_EQ(0, g.errors);
	ASSERT_EQ(0, pmcring_disable(g.s));
	while ((n = pmcring_reader_poll(rd, 1000)) > 0)
		;
	ASSERT_EQ(-ENODATA, n) TH_LOG("poll: %s", strerror(-n));
	EXPECT_EQ(0, hs.bad);
	for (c = 0; c < hs.ncpu; c++) {
		struct pmcring_cpu_stats st = { .sz = sizeof(st) };

		ASSERT_EQ(0, pmcring_cpu_stats(g.s, c, &st));
		EXPECT_EQ(st.prod_records, st.records) TH_LOG("cpu %u", c);
		EXPECT_EQ(st.prod_records, hs.seen[c]) TH_LOG("cpu %u", c);
		EXPECT_EQ(0, st.lost) TH_LOG("cpu %u", c);
	}
	EXPECT_LT(0, hs.seen[self->cpu])
		TH_LOG("cpu %u came online: it has records", self->cpu);
	{
		struct pmcring_cpu_stats st = { .sz = sizeof(st) };

		void *base;
		size_t size;

		ASSERT_EQ(0, pmcring_cpu_stats(g.s, self->cpu, &st));
		EXPECT_EQ(PMCRING_PROD_F_DATA, st.prod_flags)
			TH_LOG("the library mapped the ring of cpu %u",
			       self->cpu);
		EXPECT_EQ(0, pmcring_cpu_buffer(g.s, self->cpu, &base, &size));
	}
	rt_info("reader: %llu records in order over %u online/offline cycles of cpu %u (%llu from it), %llu GENERATE calls (%llu EINVAL at a CPU change), none lost\n",
		(unsigned long long)hs.total, t.done, self->cpu,
		(unsigned long long)hs.seen[self->cpu],
		(unsigned long long)g.calls, (unsigned long long)g.einval);
	pmcring_reader_free(rd);
	pmcring_free(g.s);
	free(hs.seen);
}

TEST_F(hp, reader_maps_a_ring_alone)
{
	struct pmcring_opts opts = {
		.sz = sizeof(opts),
		.data_pages = 64,
		.flags = PMCRING_CFG_F_NO_SYNTH,
		.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
			 PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY),
	};
	const unsigned int count = 300;
	struct pmcring_reader *rd;
	struct hp_seen hs = { 0 };
	struct pmcring *s;
	uint64_t end;
	int n;

	PMCRING_REQUIRE_DEV();
	if (!self->cpu || rt_online_cpus() < 2)
		SKIP(return, "needs 2+ online CPUs with hotplug");
	ASSERT_EQ(0, set_online(self->cpu, 0));
	s = pmcring_new(&opts);
	ASSERT_NE(NULL, s) TH_LOG("pmcring_new: %s", strerror(errno));
	hs.ncpu = pmcring_nr_cpus(s);
	hs.seen = calloc(hs.ncpu, sizeof(*hs.seen));
	ASSERT_NE(NULL, hs.seen);
	rd = pmcring_reader_new(s, hp_cb, &hs, NULL);
	ASSERT_NE(NULL, rd);
	ASSERT_EQ(0, pmcring_enable(s));
	ASSERT_LE(0, pmcring_reader_poll(rd, 10));
	ASSERT_EQ(0, set_online(self->cpu, 1));
	ASSERT_EQ(0, rt_generate_on(pmcring_fd(s), self->cpu, count, GEN_SIZE,
				    PMCRING_GEN_F_TASK | PMCRING_GEN_F_HARDIRQ));
	end = pmcring_now_ns() + 5000000000ull;
	while (hs.total < 2 * count && pmcring_now_ns() < end) {
		n = pmcring_reader_poll(rd, 100);
		ASSERT_LE(0, n) TH_LOG("poll: %s", strerror(-n));
	}
	EXPECT_EQ(0, hs.bad);
	EXPECT_EQ(2 * count, hs.seen[self->cpu]);
	EXPECT_EQ(2 * count, hs.total);
	rt_info("reader: %llu records of cpu %u, onlined after pmcring_new(), others idle\n",
		(unsigned long long)hs.seen[self->cpu], self->cpu);
	pmcring_reader_free(rd);
	pmcring_free(s);
	free(hs.seen);
}

struct bg_gen {
	int			fd;
	unsigned int		cpu;
	int			ret;
	struct pmcring_generate	req;
	atomic_int		done;
};

static void *gen_thread(void *arg)
{
	struct bg_gen *t = arg;
	uint64_t mask[RT_MAX_CPUS / 64] = { 0 };

	mask[t->cpu / 64] |= 1ull << (t->cpu % 64);
	t->req.cpus = (uintptr_t)mask;
	t->req.cpus_size = (t->cpu / 64 + 1) * 8;
	t->ret = rt_ioctl(t->fd, PMCRING_IOC_GENERATE, &t->req);
	atomic_store(&t->done, 1);
	return NULL;
}

static void gen_wake(int sig)
{
	(void)sig;
}

#ifdef __x86_64__
/*
 * A GENERATE with an NMI stream on a CPU that goes offline mid-run
 * returns.  The CPU's hrtimer migrates at its death and the NMIs it went
 * on raising landed on the new CPU, whose handler serves another stream:
 * the stream never ended and the caller waited until a signal (here after
 * 20 s, as the test's failure).
 */
TEST_F_TIMEOUT(hp, nmi_generate_ends_when_its_cpu_goes_offline, 60)
{
	struct sigaction sa = { .sa_handler = gen_wake };
	struct bg_gen t = { .cpu = self->cpu };
	struct pmcring_config cfg = { 0 };
	struct rt_sess s;
	pthread_t th;
	int i;

	PMCRING_REQUIRE_DEV();
	if (!self->cpu || rt_online_cpus() < 2)
		SKIP(return, "needs 2+ online CPUs with hotplug");
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));	/* no SA_RESTART */
	cfg.data_pages = 16;
	cfg.flags = PMCRING_CFG_F_NO_SYNTH;
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
		    PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY);
	ASSERT_EQ(0, rt_open_cfg(&s, &cfg, 0));
	t.fd = s.fd;
	t.req.count = 1ull << 40;	/* runs until the CPU goes */
	t.req.size = GEN_SIZE;
	t.req.flags = PMCRING_GEN_F_NMI;
	ASSERT_EQ(0, pthread_create(&th, NULL, gen_thread, &t));
	usleep(200000);
	ASSERT_EQ(0, atomic_load(&t.done));
	ASSERT_EQ(0, set_online(self->cpu, 0));
	for (i = 0; i < 2000 && !atomic_load(&t.done); i++)
		usleep(10000);
	if (!atomic_load(&t.done))
		pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);
	rt_info("cpu %u offline: GENERATE returned %d after %d ms, %llu NMI records, %llu NMIs\n",
		self->cpu, t.ret, i * 10,
		(unsigned long long)t.req.written[PMCRING_GEN_CTX_NMI],
		(unsigned long long)t.req.nmi_sent);
	EXPECT_GT(2000, i);
	EXPECT_EQ(0, t.ret);
	EXPECT_LT(0, t.req.written[PMCRING_GEN_CTX_NMI] +
		     t.req.dropped[PMCRING_GEN_CTX_NMI]);
	rt_close(&s);
}
#endif /* __x86_64__: the NMI stream (kmod/gen.c); arm64 has none */

/*
 * The hard-IRQ stream (no NMI, so it runs on every architecture: arm64's
 * variant of the test above) on a CPU that goes offline mid-run: its
 * hrtimer migrates at the CPU's death and goes on writing on the CPU that
 * took it, into that CPU's ring, and the GENERATE still ends once it has
 * written its count.  Each record's pl_cpu says which CPU wrote it
 * (rt_check_generated() wants it equal to the ring's CPU) and the
 * sequence goes on where the offlined CPU stopped: none missing.
 */
TEST_F_TIMEOUT(hp, irq_stream_follows_its_timer_offline, 120)
{
	/*
	 * One record per 20 us tick: at least 1.2 s for the count, so the
	 * CPU goes offline mid-run; 4 MiB rings hold every record.
	 */
	const uint64_t count = 60000;
	struct pmcring_config cfg = { 0 };
	struct bg_gen t = { .cpu = self->cpu };
	struct rt_stats st[RT_MAX_CPUS];
	uint64_t gen = 0, last = 0, before;
	unsigned int c, moved = 0;
	struct rt_sess s;
	pthread_t th;
	int i;
	struct sigaction sa = { .sa_handler = gen_wake };

	PMCRING_REQUIRE_DEV();
	if (!self->cpu || rt_online_cpus() < 2)
		SKIP(return, "needs 2+ online CPUs with hotplug");
	ASSERT_EQ(0, sigaction(SIGUSR1, &sa, NULL));	/* no SA_RESTART */
	cfg.data_pages = 1024;
	cfg.flags = PMCRING_CFG_F_NO_SYNTH;
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
		    PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY);
	ASSERT_EQ(0, rt_open_cfg(&s, &cfg, 1));
	ASSERT_LT(self->cpu, s.nr_cpus);
	ASSERT_GE(RT_MAX_CPUS, s.nr_cpus);
	t.fd = s.fd;
	t.req.count = count;
	t.req.size = GEN_SIZE;
	t.req.flags = PMCRING_GEN_F_HARDIRQ;
	t.req.irq_batch = 1;
	ASSERT_EQ(0, pthread_create(&th, NULL, gen_thread, &t));
	/* The stream has begun on its CPU: then take the CPU away. */
	for (i = 0; i < 1000 && !rt_head(&s.rings[self->cpu]); i++)
		usleep(1000);
	before = rt_head(&s.rings[self->cpu]) / PMCRING_RING_SPACE(GEN_SIZE);
	ASSERT_EQ(0, set_online(self->cpu, 0));
	for (i = 0; i < 6000 && !atomic_load(&t.done); i++)
		usleep(10000);
	if (!atomic_load(&t.done))
		pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);
	ASSERT_EQ(1, atomic_load(&t.done));
	EXPECT_EQ(0, t.ret) TH_LOG("GENERATE: %s", strerror(errno));
	EXPECT_EQ(count, t.req.written[PMCRING_GEN_CTX_HARDIRQ]);
	EXPECT_EQ(0, t.req.dropped[PMCRING_GEN_CTX_HARDIRQ]);

	/* Every record, in its writer's ring, in sequence across the move. */
	memset(st, 0, sizeof(st));
	for (c = 0; c < s.nr_cpus; c++) {
		if (!s.rings[c].base)
			continue;
		st[c].size = GEN_SIZE;
		st[c].allow_gaps = 1;	/* a ring's part of the sequence */
		ASSERT_LE(0, rt_drain(&s.rings[c], &st[c])) TH_LOG("%s", st[c].err);
		gen += st[c].gen[PMCRING_GEN_CTX_HARDIRQ];
		if (c != self->cpu && st[c].gen[PMCRING_GEN_CTX_HARDIRQ])
			moved++;
		if (st[c].next_seq[PMCRING_GEN_CTX_HARDIRQ] > last)
			last = st[c].next_seq[PMCRING_GEN_CTX_HARDIRQ];
		EXPECT_EQ(0, st[c].dropnotify) TH_LOG("cpu %u", c);
	}
	rt_info("cpu %u offline after %llu of %llu hard-IRQ records: %llu on it, %llu elsewhere, GENERATE returned %d\n",
		self->cpu, (unsigned long long)before,
		(unsigned long long)count,
		(unsigned long long)st[self->cpu].gen[PMCRING_GEN_CTX_HARDIRQ],
		(unsigned long long)(gen - st[self->cpu].gen[PMCRING_GEN_CTX_HARDIRQ]),
		t.ret);
	EXPECT_EQ(count, gen);
	EXPECT_EQ(count, last);
	/* The offlined CPU wrote the first part, and not all of it. */
	EXPECT_LT(0, st[self->cpu].gen[PMCRING_GEN_CTX_HARDIRQ]);
	EXPECT_GT(count, st[self->cpu].gen[PMCRING_GEN_CTX_HARDIRQ]) TH_LOG("the stream ended before its CPU went offline");
	/* The first records of another CPU's ring go on the sequence. */
	EXPECT_EQ(1, moved);
	EXPECT_EQ(st[self->cpu].gen[PMCRING_GEN_CTX_HARDIRQ],
		  st[self->cpu].next_seq[PMCRING_GEN_CTX_HARDIRQ]);
	rt_close(&s);
}

TEST_HARNESS_MAIN
