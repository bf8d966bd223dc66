// SPDX-License-Identifier: GPL-2.0
/*
 * Description: CPU hotplug while recording.  With a system-wide session
 * sampling every CPU (sched tracepoints, a cpu-clock counter) and a
 * background GENERATE load on all online CPUs, CPUs 1..N-1 are taken
 * offline and brought back for several cycles.  For each cycle, on an
 * accounting session: records GENERATEd on the CPU just before it goes
 * offline are all still in its ring and drain completely while it is
 * offline (every committed record, seq 0..count-1, none lost); after it
 * comes back new records appear in its ring.  Per CPU, records drained ==
 * the producer page's committed count.  Needs 2+ CPUs with hotplug (best
 * run with vmrun --cpus 4); HARD_HOTPLUG_CYCLES sets the rounds over all
 * hot-pluggable CPUs (default 3).  samples_from_cpu_onlined_later: a
 * system-wide cpu-clock counter added while a CPU is offline samples it
 * once it is back, and again after another offline/online cycle.
 * counters_churn_during_hotplug: sessions with counters come and go while
 * a CPU goes offline and online.  rings_for_cpus_onlined_later: with every
 * hot-pluggable CPU offline, sessions get no rings for them (mmap ENODEV);
 * each CPU brought online gets one in every session, its records all
 * drain, none lost; sessions opened and closed
 * while CPUs come and go leave nothing behind (the module still unloads).
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <linux/perf_event.h>
#include "ring_common.h"

/* Line-buffered stdout: test children leave with _exit(), and a fully
 * buffered stdout (a file, a pipe) would lose what they printed.
 */
static void __attribute__((constructor)) hard_line_buffered(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
}

#define GEN_COUNT	500u
#define GEN_SIZE	64u

static int cpu_online_path(unsigned int cpu, char *path, size_t n)
{
	snprintf(path, n, "/sys/devices/system/cpu/cpu%u/online", cpu);
	return access(path, W_OK);
}

static int set_online(unsigned int cpu, int on)
{
	char path[96];
	int fd, rc;

	cpu_online_path(cpu, path, sizeof(path));
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	rc = write(fd, on ? "1" : "0", 1) == 1 ? 0 : -errno;
	close(fd);
	return rc;
}

struct bg {
	int		fd;
	volatile int	stop;
	uint64_t	calls, errors;
};

/* Background load: GENERATE on whatever CPUs are online right now. */
static void *bg_gen(void *p)
{
	struct bg *b = p;
	int err;

	while (!b->stop) {
		err = rt_generate(b->fd, 200, 128,
				  PMCRING_GEN_F_TASK | PMCRING_GEN_F_HARDIRQ,
				  NULL, 0, 0);
		/* A CPU that left between the mask and the start: EINVAL. */
		if (err && err != -EINVAL && err != -EINTR)
			b->errors++;
		b->calls++;
	}
	return NULL;
}

/* Drain @cpu's ring of the accounting session, exact checks. */
static long drain_exact(struct rt_sess *s, unsigned int cpu,
			struct rt_stats *st, struct __test_metadata *_metadata)
{
	long n;

	memset(st, 0, sizeof(*st));
	st->size = GEN_SIZE;
	n = rt_drain(&s->rings[cpu], st);
	EXPECT_LE(0, n) TH_LOG("cpu %u: %s", cpu, st->err);
	return n;
}

TEST(hotplug_while_recording)
{
	unsigned int cpu, cycle, nr_online, cycles, done_cycles = 0, hp[64];
	uint64_t drained[RT_MAX_CPUS] = { 0 }, total_gen = 0;
	struct pmcring_config acc_cfg = { 0 }, wide_cfg = { 0 };
	struct pmcring_counter ctr = { 0 };
	struct bg b = { 0 };
	struct rt_sess acc;
	struct rt_stats st;
	unsigned int nr_hp = 0, i;
	pthread_t th;
	char path[96];
	int wide, err;
	long n;

	PMCRING_REQUIRE_DEV();
	nr_online = rt_online_cpus();
	for (cpu = 1; cpu < 64 && cpu < (unsigned int)sysconf(_SC_NPROCESSORS_CONF); cpu++)
		if (!cpu_online_path(cpu, path, sizeof(path)))
			hp[nr_hp++] = cpu;
	if (nr_online < 2 || !nr_hp)
		SKIP(return, "needs 2+ online CPUs with hotplug (%u online, %u pluggable)",
		     nr_online, nr_hp);
	cycles = getenv("HARD_HOTPLUG_CYCLES") ?
		 atoi(getenv("HARD_HOTPLUG_CYCLES")) : 3;

	/* Accounting session: GENERATED only, every CPU mapped. */
	acc_cfg.data_pages = 64;
	acc_cfg.flags = PMCRING_CFG_F_NO_SYNTH;
	acc_cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
			PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY);
	ASSERT_EQ(0, rt_open_cfg(&acc, &acc_cfg, 1));
	ASSERT_EQ(0, rt_ioctl(acc.fd, PMCRING_IOC_ENABLE, NULL));

	/* System-wide session with every source, never drained. */
	wide = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, wide);
	wide_cfg.data_pages = 16;
	wide_cfg.flags = PMCRING_CFG_F_SYSTEM_WIDE;
	ASSERT_EQ(0, rt_ioctl(wide, PMCRING_IOC_CONFIGURE, &wide_cfg));
	ctr.type = PERF_TYPE_SOFTWARE;
	ctr.config = PERF_COUNT_SW_CPU_CLOCK;
	ctr.rate = 1000000;	/* every ms of CPU time */
	strcpy(ctr.name, "cpu-clock");
	err = rt_ioctl(wide, PMCRING_IOC_ADD_COUNTER, &ctr);
	TH_LOG("system-wide cpu-clock counter: %d", err);
	ASSERT_EQ(0, rt_ioctl(wide, PMCRING_IOC_ENABLE, NULL));

	/* Background GENERATE into a third, unmapped session. */
	b.fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, b.fd);
	{
		struct pmcring_config c;

		ASSERT_EQ(0, rt_configure(b.fd, &c, 4, 0));
	}
	ASSERT_EQ(0, pthread_create(&th, NULL, bg_gen, &b));

	for (cycle = 0; cycle < cycles; cycle++) {
		for (i = 0; i < nr_hp; i++) {
			cpu = hp[i];
			/* Records committed on cpu just before it leaves. */
			ASSERT_EQ(0, rt_generate_on(acc.fd, cpu, GEN_COUNT,
						    GEN_SIZE,
						    PMCRING_GEN_F_TASK |
						    PMCRING_GEN_F_HARDIRQ));
			total_gen += 2 * GEN_COUNT;
			err = set_online(cpu, 0);
			ASSERT_EQ(0, err) TH_LOG("offline cpu %u: %d", cpu, err);

			/* Its ring drains while it is offline, all of it. */
			n = drain_exact(&acc, cpu, &st, _metadata);
			drained[cpu] += n;
			EXPECT_EQ(GEN_COUNT, st.gen[PMCRING_GEN_CTX_TASK])
				TH_LOG("cpu %u offline: task records", cpu);
			EXPECT_EQ(GEN_COUNT, st.gen[PMCRING_GEN_CTX_HARDIRQ])
				TH_LOG("cpu %u offline: irq records", cpu);
			EXPECT_EQ(0, st.missing);
			EXPECT_EQ(0, st.dropnotify);
			/* Nothing more arrives on an offline CPU's ring. */
			usleep(20000);
			EXPECT_EQ(acc.rings[cpu].tail, rt_head(&acc.rings[cpu]));

			/* GENERATE refuses an offline CPU. */
			EXPECT_EQ(-EINVAL, rt_generate_on(acc.fd, cpu, 1,
							  GEN_SIZE,
							  PMCRING_GEN_F_TASK));

			err = set_online(cpu, 1);
			ASSERT_EQ(0, err) TH_LOG("online cpu %u: %d", cpu, err);

			/* Back: new records land in its ring again. */
			ASSERT_EQ(0, rt_generate_on(acc.fd, cpu, 50, GEN_SIZE,
						    PMCRING_GEN_F_TASK));
			total_gen += 50;
			n = drain_exact(&acc, cpu, &st, _metadata);
			drained[cpu] += n;
			EXPECT_EQ(50, st.gen[PMCRING_GEN_CTX_TASK])
				TH_LOG("cpu %u back online", cpu);
			done_cycles++;
		}
	}
	b.stop = 1;
	pthread_kill(th, SIGUSR1);
	pthread_join(th, NULL);
	EXPECT_EQ(0, b.errors);

	/* Every committed record was drained, per CPU; nothing lost. */
	for (cpu = 0; cpu < acc.nr_cpus; cpu++) {
		if (!acc.rings[cpu].base)
			continue;
		n = drain_exact(&acc, cpu, &st, _metadata);
		drained[cpu] += n;
		EXPECT_EQ(rt_prod(&acc.rings[cpu].prod->records), drained[cpu])
			TH_LOG("cpu %u: committed vs drained", cpu);
		EXPECT_EQ(0, rt_prod(&acc.rings[cpu].prod->lost));
	}
	{
		uint64_t sum = 0;

		for (cpu = 0; cpu < acc.nr_cpus; cpu++)
			sum += drained[cpu];
		EXPECT_EQ(total_gen, sum);
		printf("# hotplug: cycles=%u cpus=%u records=%llu drained=%llu bg_generate=%llu\n",
		       done_cycles, nr_online, (unsigned long long)total_gen,
		       (unsigned long long)sum, (unsigned long long)b.calls);
	}
	close(wide);
	close(b.fd);
	rt_close(&acc);
}

/* CALLCHAIN records of @cpu in ring @r (consumed), other records skipped. */
static long callchains_of(struct rt_ring *r, unsigned int cpu)
{
	uint64_t head = rt_head(r), pos = r->tail, mask = r->size - 1;
	long n = 0;

	while (pos != head) {
		const struct pmcring_rec_callchain *cc =
			(const void *)(r->data + (pos & mask));
		uint32_t len = PMCRING_HEADER_LEN(cc->h.pl_header);

		if (len < PMCRING_HEADER_SIZE)
			return -1;
		if (PMCRING_HEADER_TYPE(cc->h.pl_header) == PMCRING_TYPE_CALLCHAIN &&
		    cc->pl_cpuflags >> 16 == cpu)
			n++;
		pos += PMCRING_RING_SPACE(len);
	}
	rt_consume(r, pos);
	return n;
}

/* Burn about @ms of CPU time on @cpu, then go back to any CPU. */
static int burn_on(unsigned int cpu, unsigned int ms)
{
	cpu_set_t set, old;
	struct timespec t0, t;
	volatile unsigned long x = 0;

	if (sched_getaffinity(0, sizeof(old), &old))
		return -errno;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		return -errno;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
	do {
		for (int i = 0; i < 100000; i++)
			x += i;
		clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
	} while ((t.tv_sec - t0.tv_sec) * 1000 +
		 (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
	sched_setaffinity(0, sizeof(old), &old);
	return 0;
}

/*
 * A system-wide cpu-clock counter added while a CPU is offline samples that
 * CPU once it comes online, and again after another offline/online cycle
 * (the module follows hotplug; perf alone never re-creates the events).
 */
TEST(samples_from_cpu_onlined_later)
{
	struct pmcring_config cfg = { 0 };
	struct pmcring_counter ctr = { 0 };
	unsigned int cpu = 0, c, round;
	struct rt_sess w;
	char path[96];
	long n;

	PMCRING_REQUIRE_DEV();
	for (c = 1; c < 64 && c < (unsigned int)sysconf(_SC_NPROCESSORS_CONF); c++)
		if (!cpu_online_path(c, path, sizeof(path)))
			cpu = c;
	if (rt_online_cpus() < 2 || !cpu)
		SKIP(return, "needs 2+ online CPUs with hotplug");

	cfg.data_pages = 64;
	cfg.flags = PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_NO_SYNTH;
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN);
	ASSERT_EQ(0, rt_open_cfg(&w, &cfg, 0));
	ASSERT_LT(cpu, w.nr_cpus);
	ASSERT_EQ(0, rt_map(&w, cpu));

	ASSERT_EQ(0, set_online(cpu, 0));
	ctr.type = PERF_TYPE_SOFTWARE;
	ctr.config = PERF_COUNT_SW_CPU_CLOCK;
	ctr.rate = 1000000;
	/* Added and enabled while cpu is offline. */
	EXPECT_EQ(0, rt_ioctl(w.fd, PMCRING_IOC_ADD_COUNTER, &ctr));
	EXPECT_EQ(0, rt_ioctl(w.fd, PMCRING_IOC_ENABLE, NULL));
	for (round = 0; round < 2; round++) {
		if (round) {
			/* Another cycle: the old event goes, a new one comes. */
			EXPECT_EQ(0, set_online(cpu, 0));
			usleep(50000);
		}
		ASSERT_EQ(0, set_online(cpu, 1));
		usleep(200000);		/* the module's work runs */
		callchains_of(&w.rings[cpu], cpu);
		EXPECT_EQ(0, burn_on(cpu, 300));
		n = callchains_of(&w.rings[cpu], cpu);
		rt_info("round %u: %ld samples on cpu %u onlined after ADD_COUNTER\n",
			round, n, cpu);
		EXPECT_LT(0, n);
	}
	EXPECT_EQ(0, rt_ioctl(w.fd, PMCRING_IOC_DISABLE, NULL));
	rt_close(&w);
}

struct churn {
	unsigned int	cpu;
	volatile int	stop;
	unsigned int	toggles;
	int		err;
};

/* Take @cpu offline and back until told to stop. */
static void *churn_toggle(void *p)
{
	struct churn *ch = p;

	while (!ch->stop && !ch->err) {
		ch->err = set_online(ch->cpu, 0);
		if (!ch->err)
			ch->err = set_online(ch->cpu, 1);
		ch->toggles++;
	}
	return NULL;
}

/*
 * System-wide sessions with counters made, enabled, disabled and closed
 * while a CPU goes offline and online: the hotplug work and the sessions'
 * own add/arm/free never race into a crash or a leaked event (the module
 * must still unload; vmrun checks dmesg).
 */
TEST(counters_churn_during_hotplug)
{
	struct pmcring_config cfg = { 0 };
	struct pmcring_counter ctr = { 0 };
	struct churn ch = { 0 };
	unsigned int c, i, added = 0;
	char path[96];
	pthread_t th;
	int fd, err;

	PMCRING_REQUIRE_DEV();
	for (c = 1; c < 64 && c < (unsigned int)sysconf(_SC_NPROCESSORS_CONF); c++)
		if (!cpu_online_path(c, path, sizeof(path)))
			ch.cpu = c;
	if (rt_online_cpus() < 2 || !ch.cpu)
		SKIP(return, "needs 2+ online CPUs with hotplug");
	ASSERT_EQ(0, pthread_create(&th, NULL, churn_toggle, &ch));
	for (i = 0; i < 60; i++) {
		fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		memset(&cfg, 0, sizeof(cfg));
		cfg.data_pages = 4;
		cfg.flags = PMCRING_CFG_F_SYSTEM_WIDE | PMCRING_CFG_F_NO_SYNTH;
		cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN);
		EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_CONFIGURE, &cfg));
		ctr.type = PERF_TYPE_SOFTWARE;
		ctr.config = i & 1 ? PERF_COUNT_SW_CPU_CLOCK :
				     PERF_COUNT_SW_TASK_CLOCK;
		ctr.rate = 100000;
		ctr.pmcid = 0;
		err = rt_ioctl(fd, PMCRING_IOC_ADD_COUNTER, &ctr);
		EXPECT_EQ(0, err);
		added += !err;
		if (i % 3)
			EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_ENABLE, NULL));
		usleep(i % 5 * 2000);
		if (i % 3 == 1)
			EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_DISABLE, NULL));
		close(fd);
	}
	ch.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(0, ch.err);
	set_online(ch.cpu, 1);
	rt_info("counters churn: %u sessions with a counter, cpu %u toggled %u times\n",
		added, ch.cpu, ch.toggles);
}

/*
 * CPUs that were offline at CONFIGURE: no ring until the CPU comes
 * online, then every session has one; records drain exactly.
 * Sessions configured and closed meanwhile race the hotplug callbacks.
 */
TEST(rings_for_cpus_onlined_later)
{
	unsigned int hp[64], nr_hp = 0, i, j, c, opened = 0;
	struct pmcring_config cfg = { 0 };
	struct rt_sess s[2];
	struct churn ch = { 0 };
	struct rt_stats st;
	char path[96];
	pthread_t th;
	long n;
	int fd;

	PMCRING_REQUIRE_DEV();
	for (c = 1; c < 64 && c < (unsigned int)sysconf(_SC_NPROCESSORS_CONF); c++)
		if (!cpu_online_path(c, path, sizeof(path)))
			hp[nr_hp++] = c;
	if (rt_online_cpus() < 2 || !nr_hp)
		SKIP(return, "needs 2+ online CPUs with hotplug");
	for (i = 0; i < nr_hp; i++)
		ASSERT_EQ(0, set_online(hp[i], 0));

	cfg.data_pages = 16;
	cfg.flags = PMCRING_CFG_F_NO_SYNTH;
	cfg.types = PMCRING_TYPE_BIT(PMCRING_TYPE_GENERATED) |
		    PMCRING_TYPE_BIT(PMCRING_TYPE_DROPNOTIFY);
	for (j = 0; j < 2; j++)
		ASSERT_EQ(0, rt_open_cfg(&s[j], &cfg, 1));
	for (i = 0; i < nr_hp; i++) {
		c = hp[i];
		for (j = 0; j < 2; j++)
			EXPECT_EQ(NULL, s[j].rings[c].base)
				TH_LOG("cpu %u offline at CONFIGURE: no ring", c);
		ASSERT_EQ(0, set_online(c, 1));
		for (j = 0; j < 2; j++) {
			ASSERT_EQ(0, rt_map(&s[j], c)) TH_LOG("cpu %u", c);
			EXPECT_EQ(PMCRING_PROD_F_DATA,
				  rt_prod(&s[j].rings[c].prod->flags));
			ASSERT_EQ(0, rt_generate_on(s[j].fd, c, GEN_COUNT,
						    GEN_SIZE,
						    PMCRING_GEN_F_TASK |
						    PMCRING_GEN_F_HARDIRQ));
			n = drain_exact(&s[j], c, &st, _metadata);
			EXPECT_EQ(2 * GEN_COUNT, n) TH_LOG("cpu %u", c);
			EXPECT_EQ(0, rt_prod(&s[j].rings[c].prod->lost));
		}
	}
	for (j = 0; j < 2; j++)
		rt_close(&s[j]);

	/* Sessions come and go while the last CPU goes off and on. */
	ch.cpu = hp[nr_hp - 1];
	ASSERT_EQ(0, pthread_create(&th, NULL, churn_toggle, &ch));
	for (i = 0; i < 100; i++) {
		fd = open(PMCRING_DEV_PATH, O_RDWR | O_CLOEXEC);
		ASSERT_LE(0, fd);
		memset(&cfg, 0, sizeof(cfg));
		cfg.data_pages = 4;
		EXPECT_EQ(0, rt_ioctl(fd, PMCRING_IOC_CONFIGURE, &cfg));
		opened++;
		usleep(i % 4 * 3000);
		close(fd);
	}
	ch.stop = 1;
	pthread_join(th, NULL);
	EXPECT_EQ(0, ch.err);
	set_online(ch.cpu, 1);
	rt_info("rings: %u CPUs got a ring when onlined in 2 sessions; %u sessions while cpu %u toggled %u times\n",
		nr_hp, opened, ch.cpu, ch.toggles);
}

static void on_usr1(int sig)
{
	(void)sig;
}

int main(int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_usr1 };

	sigaction(SIGUSR1, &sa, NULL);
	return test_harness_run(argc, argv);
}
