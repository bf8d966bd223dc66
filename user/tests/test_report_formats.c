// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring report` gives the same profile from the three
 * formats: the records of a hand-built profile of this program go through
 * the command's own pmclog, barman and blob writers, and the folded stacks
 * of each file, a blob written with --blob-json included, are the expected
 * ones, and `pmcring script` prints each file's samples symbolized; a
 * binary blob set's samples weigh the last PERIOD of their CPU, also in
 * the sets a roll opens (they repeat the PERIODs in force), and report on
 * a rolled set alone, binary or JSON, names the event (the set repeats the
 * counters allocated); a file that is no recording gets a clear error.
 */
#include <dirent.h>

#include "test_report_common.h"
#include "test_report_write.h"

static volatile unsigned long sink;

__attribute__((noinline, used)) void f_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i * i;
}

__attribute__((noinline, used)) void f_root(unsigned long n)
{
	f_leaf(n);
	sink++;
}

static const char kallsyms[] =
	"ffffffff81000000 T kfunc_a\n"
	"ffffffff81000100 t kfunc_b\n";

static void build(struct recs *rs, const struct self_map *m)
{
	uint64_t a[] = { (uintptr_t)f_leaf + 4, (uintptr_t)f_root + 8 };
	uint64_t k[] = { 0xffffffff81000110ull, 0xffffffff81000020ull,
			 (uintptr_t)f_leaf + 4, (uintptr_t)f_root + 8 };
	int i;

	rs->p.ts = 1000000000ull + 1000;	/* after the writers' T0 */
	plog_proc_create(&rs->p, 100, "tproc");
	plog_map_in(&rs->p, 100, m->exec_start, m->path);
	for (i = 0; i < 5; i++)
		plog_callchain(&rs->p, 100, 100, i & 1, a, 2);
	plog_callchain(&rs->p, 100, 100, 0, k, 4);
	plog_csw(&rs->p, 100, 100, 3000000);
	recs_slot(rs);
}

/*
 * @rs behind a PERIOD of pmcid 1 on each CPU (ring 0: @p0, ring 1: @p1),
 * as a frequency-mode counter's samples come.
 */
static void with_periods(struct recs *out, const struct recs *rs,
			 uint64_t p0, uint64_t p1)
{
	unsigned int cpu, i;

	out->n = 0;
	for (cpu = 0; cpu < 2; cpu++) {
		struct fmt_rec *r = &out->r[out->n++];
		uint8_t *d = aligned_alloc(8, PMCRING_SIZE_PERIOD);
		uint32_t h = PMCRING_HEADER(PMCRING_TYPE_PERIOD,
					    PMCRING_SIZE_PERIOD);
		uint64_t ts = 1000000000ull + 500, v = cpu ? p1 : p0;
		uint32_t one = 1;

		REQUIRE(d, "alloc");
		memset(d, 0, PMCRING_SIZE_PERIOD);
		memcpy(d, &h, 4);
		memcpy(d + 8, &ts, 8);
		memcpy(d + 16, &one, 4);		/* pl_pmcid */
		memcpy(d + 20, &cpu, 4);		/* pl_cpu */
		memcpy(d + 24, &v, 8);			/* pl_period */
		r->type = PMCRING_TYPE_PERIOD;
		r->len = PMCRING_SIZE_PERIOD;
		r->ts = ts;
		r->cpu = cpu;
		r->data = d;
	}
	for (i = 0; i < rs->n; i++)
		out->r[out->n++] = rs->r[i];
	out->p.ts = rs->p.ts;
}

/*
 * The allocation of pmcid 1, named "cpu-clock" (PMCALLOCATE, then
 * PMCALLOCATEDYN, as the module writes them) in front of @rs's records.
 */
static void with_alloc(struct recs *rs)
{
	unsigned int k;

	memmove(&rs->r[2], &rs->r[0], rs->n * sizeof(rs->r[0]));
	rs->n += 2;
	for (k = 0; k < 2; k++) {
		struct fmt_rec *r = &rs->r[k];
		uint32_t len = k ? PMCRING_SIZE_PMCALLOCATEDYN :
				   PMCRING_SIZE_PMCALLOCATE;
		uint32_t type = k ? PMCRING_TYPE_PMCALLOCATEDYN :
				    PMCRING_TYPE_PMCALLOCATE;
		uint32_t h = PMCRING_HEADER(type, len), one = 1;
		uint64_t ts = 1000000000ull + 400 + k;
		uint8_t *d = aligned_alloc(8, PMCRING_RING_SPACE(len));

		REQUIRE(d, "alloc");
		memset(d, 0, len);
		memcpy(d, &h, 4);
		memcpy(d + 8, &ts, 8);
		memcpy(d + 16, &one, 4);		/* pl_pmcid */
		if (k)
			strcpy((char *)d + 32, "cpu-clock");	/* pl_evname */
		r->type = type;
		r->len = len;
		r->ts = ts;
		r->cpu = 0;
		r->data = d;
	}
}

/*
 * @rs into blob sets (@json: --blob-json) under @path that roll before
 * DAT would pass @roll bytes: the DAT files of stream "all" in $t order
 * into @dats.
 */
static unsigned int write_blob_rolled(const struct recs *rs, const char *path,
				      bool json, uint64_t roll,
				      char dats[][1024], unsigned int max)
{
	unsigned int n = 0;
	long long t;

	write_roll(rs, FMT_BLOB, path, json, roll);
	/* a roll's $t is the previous one + 1 (the records share a second) */
	for (t = 1700000000; n < max; t++) {
		snprintf(dats[n], 1024, "%s/c/all.DAT.%lld", path, t);
		if (access(dats[n], F_OK))
			break;
		n++;
	}
	return n;
}

/* CALLCHAINs of a blob set on CPU 0 and CPU 1, and whether one is first. */
struct set_samples {
	unsigned int	n[2];
	bool		period_first;	/* a PERIOD before any CALLCHAIN */
	bool		seen_cc;
};

static int set_samples_cb(const struct fmt_item *it, void *ctx)
{
	struct set_samples *ss = ctx;

	if (it->type == PMCRING_TYPE_PERIOD && !ss->seen_cc)
		ss->period_first = true;
	if (it->type == PMCRING_TYPE_CALLCHAIN && it->cpu >= 0 && it->cpu < 2) {
		ss->n[it->cpu]++;
		ss->seen_cc = true;
	}
	return 0;
}

static void count_set(const char *dat, struct set_samples *ss)
{
	struct fmt_blob_set set;
	char which[1100];
	size_t bad;

	memset(ss, 0, sizeof(*ss));
	REQUIRE(!fmt_blob_map(dat, &set, which, sizeof(which)), "map %s",
		which);
	CHECK(fmt_blob_read(&set, set_samples_cb, ss, &bad) == FMT_END_CLEAN,
	      "%s: not clean", dat);
	fmt_blob_unmap(&set);
}

static unsigned int count(const char *s, const char *what)
{
	unsigned int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

/* `pmcring script` of @path: the 6 samples, their frames symbolized. */
static void check_script(const char *path, const char *ks, const char *what)
{
	char *out;
	int rc;

	out = run_script(&rc, "--kallsyms", ks, path, NULL);
	CHECK(rc == 0, "%s: script rc %d", what, rc);
	CHECK(count(out, "\ntproc ") + !strncmp(out, "tproc ", 6) == 6 &&
	      count(out, " f_leaf+0x4 (/") == 6 &&
	      count(out, " f_root+0x8 (/") == 6 &&
	      count(out, "\tffffffff81000110 kfunc_b+0x10 ([kernel.kallsyms])\n"
		    "\tffffffff81000020 kfunc_a+0x20 ([kernel.kallsyms])\n") == 1,
	      "%s: script:\n%s", what, out);
	free(out);
}

/* The DAT file of the blob stream "all" under @dir/c/. */
static void blob_dat(const char *dir, char *out, size_t sz)
{
	char c[256];
	struct dirent *e;
	DIR *d;

	snprintf(c, sizeof(c), "%s/c", dir);
	d = opendir(c);
	REQUIRE(d, "%s: %s", c, strerror(errno));
	out[0] = 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "all.DAT.", 8))
			snprintf(out, sz, "%s/%s", c, e->d_name);
	closedir(d);
	REQUIRE(out[0], "no all.DAT.* in %s", c);
}

int main(void)
{
	char dir[] = "/tmp/test_report_fmtXXXXXX", path[600], ks[600], dat[1024];
	const char *want = "tproc;f_root;f_leaf 5\n"
			   "tproc;f_root;f_leaf;kfunc_a;kfunc_b 1\n";
	static struct recs rs, rp;
	static char dats[8][1024];
	unsigned int nsets, i, later = 0;
	struct self_map m;
	char *out;
	int rc;

	f_root(3);
	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	build(&rs, &m);
	snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
	write_file(ks, kallsyms, strlen(kallsyms));

	/* pmclog */
	snprintf(path, sizeof(path), "%s/p.pmclog", dir);
	write_format(&rs, FMT_PMCLOG, path, false);
	out = run_report(&rc, "--folded", "--kallsyms", ks, path, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "pmclog:\n%s", out);
	free(out);
	check_script(path, ks, "pmclog");
	out = run_report(&rc, "--switches", path, NULL);
	CHECK(rc == 0 && strstr(out, "u f_leaf [test_report_formats]") &&
	      strstr(out, "        3.000"), "pmclog text:\n%s", out);
	free(out);

	/* barman: samples name threads, the header's tables name the rest */
	snprintf(path, sizeof(path), "%s/p.barman", dir);
	write_format(&rs, FMT_BARMAN, path, false);
	out = run_report(&rc, "--folded", "--kallsyms", ks, path, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "barman:\n%s", out);
	free(out);
	check_script(path, ks, "barman");
	out = run_report(&rc, "--folded", "--cpu", "1", path, NULL);
	CHECK(rc == 0 && !strcmp(out, "tproc;f_root;f_leaf 2\n"),
	      "barman --cpu 1:\n%s", out);
	free(out);

	/* blob: each message one binary record */
	write_format(&rs, FMT_BLOB, dir, false);
	blob_dat(dir, dat, sizeof(dat));
	out = run_report(&rc, "--folded", "--kallsyms", ks, dat, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "blob:\n%s", out);
	free(out);
	check_script(dat, ks, "blob");

	/*
	 * blob with PERIOD records: a sample weighs the last PERIOD of its
	 * CPU (pl_cpu), 4 samples on CPU 0 at 7 and 2 on CPU 1 at 11
	 */
	snprintf(path, sizeof(path), "%s/per", dir);
	REQUIRE(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	with_periods(&rp, &rs, 7, 11);
	write_format(&rp, FMT_BLOB, path, false);
	blob_dat(path, dat, sizeof(dat));
	out = run_report(&rc, "--kallsyms", ks, dat, NULL);
	CHECK(rc == 0 && strstr(out, "6 samples, event count 50 (the sum of "
				"the samples' recorded periods)\n"),
	      "blob PERIOD weights:\n%s", out);
	free(out);
	out = run_report(&rc, "--folded", "--kallsyms", ks, dat, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "blob PERIOD folded:\n%s", out);
	free(out);
	free((void *)rp.r[0].data);
	free((void *)rp.r[1].data);

	/*
	 * the same, after the allocation of "cpu-clock", in sets that roll
	 * every ~250 bytes: a set a roll opens repeats the counter allocated
	 * and the PERIODs in force, so each later set's samples are
	 * 'cpu-clock' and weigh 7 (CPU 0) and 11 (CPU 1) too, not 1
	 */
	snprintf(path, sizeof(path), "%s/roll", dir);
	REQUIRE(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	with_periods(&rp, &rs, 7, 11);
	with_alloc(&rp);
	nsets = write_blob_rolled(&rp, path, false, 250, dats, 8);
	CHECK(nsets >= 3, "%u rolled sets", nsets);
	for (i = 1; i < nsets; i++) {
		struct set_samples ss;
		char head[128];

		count_set(dats[i], &ss);
		if (!ss.n[0] && !ss.n[1])
			continue;
		later += ss.n[0] + ss.n[1];
		CHECK(ss.period_first, "%s: no PERIOD before its samples",
		      dats[i]);
		snprintf(head, sizeof(head), "# Event 'cpu-clock' (pmcid 1): "
			 "%u samples, event count %u (the sum of the samples' "
			 "recorded periods)\n",
			 ss.n[0] + ss.n[1], 7 * ss.n[0] + 11 * ss.n[1]);
		out = run_report(&rc, "--kallsyms", ks, dats[i], NULL);
		CHECK(rc == 0 && strstr(out, head), "%s: want '%.*s':\n%s",
		      dats[i], (int)strlen(head) - 1, head, out);
		free(out);
	}
	CHECK(later >= 2, "%u samples in the sets after the first", later);

	/*
	 * --blob-json, rolled: each later set repeats the allocation as
	 * JSON objects, so report on it alone names 'cpu-clock' (its
	 * callchains carry their "period")
	 */
	snprintf(path, sizeof(path), "%s/rollj", dir);
	REQUIRE(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	nsets = write_blob_rolled(&rp, path, true, 600, dats, 8);
	CHECK(nsets >= 3, "%u rolled JSON sets", nsets);
	for (i = 1, later = 0; i < nsets; i++) {
		out = run_report(&rc, "--kallsyms", ks, dats[i], NULL);
		if (strstr(out, "# Event '"))
			later++;
		CHECK(rc == 0 && (!strstr(out, "# Event '") ||
				  strstr(out, "# Event 'cpu-clock' (pmcid 1): ")),
		      "%s: want 'cpu-clock':\n%s", dats[i], out);
		free(out);
	}
	CHECK(later >= 2, "%u JSON sets after the first with samples", later);
	for (i = 0; i < 4; i++)
		free((void *)rp.r[i].data);

	/* blob with --blob-json: one flat JSON object per message */
	snprintf(path, sizeof(path), "%s/json", dir);
	REQUIRE(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	write_format(&rs, FMT_BLOB, path, true);
	blob_dat(path, dat, sizeof(dat));
	out = run_report(&rc, "--folded", "--kallsyms", ks, dat, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "blob JSON:\n%s", out);
	free(out);
	check_script(dat, ks, "blob JSON");
	out = run_report(&rc, "--switches", dat, NULL);
	CHECK(rc == 0 && strstr(out, "        3.000"), "blob JSON switches:\n%s", out);
	free(out);

	/* not a recording: a clear error, exit status 1 */
	out = run_report(&rc, ks, NULL);
	CHECK(rc == 1 && !*out, "kallsyms as a recording: rc %d", rc);
	free(out);
	out = run_report(&rc, "--bogus", ks, NULL);
	CHECK(rc == 2, "bad option: rc %d", rc);
	free(out);

	if (!t_failed) {
		snprintf(path, sizeof(path), "rm -rf '%s'", dir);
		if (system(path))
			fprintf(stderr, "could not remove %s\n", dir);
		printf("ok: same profile from pmclog, barman and blob\n");
	}
	return t_failed;
}
