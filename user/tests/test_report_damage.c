// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the four readers (stat, dump, report, script) treat damage
 * the same way: a pmclog with a bad record header, a --blob-json set with
 * 12 bytes of a message overwritten, and FILE.periods with random entries
 * are each named with the offset and the reason, read up to the damage,
 * and exit 1; --best-effort makes it exit 0; a file cut short (a killed
 * recording) is a valid prefix and exits 0.
 */
#include "test_report_write.h"

#include <dirent.h>

static volatile unsigned long sink;

__attribute__((noinline, used)) void dm_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

/* The four readers on @path (+ @opt, or NULL): exit status of each. */
struct four {
	int	rc[4];
	char	*out[4], *err[4];
};

static void run_four(struct four *f, const char *path, const char *opt)
{
	char *(*run[4])(int *, ...) = { run_stat, run_dump, run_report,
					run_script };
	int i;

	for (i = 0; i < 4; i++) {
		f->out[i] = i == 2 ? run[i](&f->rc[i], path, "--folded", opt,
					    NULL) :
				     run[i](&f->rc[i], path, opt, NULL);
		f->err[i] = strdup(t_stderr);
	}
}

static void free_four(struct four *f)
{
	int i;

	for (i = 0; i < 4; i++) {
		free(f->out[i]);
		free(f->err[i]);
	}
}

static const char *const names[4] = { "stat", "dump", "report", "script" };

/* Every reader: exit @rc, and @msg in its stderr (NULL: no "damaged"). */
static void expect_four(const struct four *f, const char *what, int rc,
			const char *msg)
{
	int i;

	for (i = 0; i < 4; i++) {
		CHECK(f->rc[i] == rc, "%s: %s: exit %d, want %d\n%s", what,
		      names[i], f->rc[i], rc, f->err[i]);
		if (msg)
			CHECK(strstr(f->err[i], msg), "%s: %s: no '%s':\n%s",
			      what, names[i], msg, f->err[i]);
		else
			CHECK(!strstr(f->err[i], ": damaged at "), "%s: %s: says "
			      "damaged:\n%s", what, names[i], f->err[i]);
	}
}

static unsigned int count(const char *s, const char *what)
{
	unsigned int n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s += strlen(what);
	}
	return n;
}

/* The DAT file of the blob stream "all" under @dir/c/. */
static void blob_dat(const char *dir, char *out, size_t sz)
{
	char c[400];
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
	char dir[] = "/tmp/test_report_dmgXXXXXX", log[256], msg[128];
	char path[300], dat[1024];
	uint64_t pc[] = { (uintptr_t)dm_leaf + 4 };
	static struct plog p;
	static struct recs rs;
	size_t cc[6], off;
	struct self_map m;
	struct four f;
	uint8_t *b;
	int i;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/d.pmclog", dir);
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 100, "dmproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	for (i = 0; i < 6; i++) {
		cc[i] = p.len;
		plog_callchain(&p, 100, 100, 0, pc, 1);
	}
	plog_closelog(&p);

	/* 1. a bad record header (the 4th sample's): 3 samples, then exit 1 */
	b = malloc(p.len);
	REQUIRE(b, "malloc");
	memcpy(b, p.b, p.len);
	memset(b + cc[3], 0x5a, 4);
	write_file(log, b, p.len);
	free(b);
	run_four(&f, log, NULL);
	snprintf(msg, sizeof(msg), "d.pmclog: damaged at offset %zu: ", cc[3]);
	expect_four(&f, "bad header", 1, msg);
	CHECK(strstr(f.out[0], " 7 records,"), "stat of the prefix:\n%s",
	      f.out[0]);
	CHECK(count(f.out[1], " CALLCHAIN ") == 3, "dump of the prefix:\n%s",
	      f.out[1]);
	CHECK(!strcmp(f.out[2], "dmproc;dm_leaf 3\n"), "report of the prefix:\n%s",
	      f.out[2]);
	CHECK(count(f.out[3], " dm_leaf+0x4 (") == 3, "script of the prefix:\n%s",
	      f.out[3]);
	free_four(&f);
	run_four(&f, log, "--best-effort");
	expect_four(&f, "bad header, --best-effort", 0, msg);
	CHECK(!strcmp(f.out[2], "dmproc;dm_leaf 3\n"), "report --best-effort:\n%s",
	      f.out[2]);
	free_four(&f);

	/* 2. cut short in the 6th sample (killed): a prefix, exit 0 */
	write_file(log, p.b, cc[5] + 20);
	run_four(&f, log, NULL);
	expect_four(&f, "cut short", 0, NULL);
	CHECK(!strcmp(f.out[2], "dmproc;dm_leaf 5\n"), "report cut short:\n%s",
	      f.out[2]);
	free_four(&f);

	/* 3. FILE.periods: the 3rd entry random bytes */
	write_file(log, p.b, p.len);
	{
		uint8_t pb[16 + 6 * 8] = "pmcrprd";
		uint64_t v = 1000;

		for (i = 0; i < 6; i++)
			memcpy(pb + 16 + 8 * i, &v, 8);
		memcpy(pb + 16 + 16, "\x9f\x3c\xa1\x07\x55\xd2\x33\x06", 8);
		snprintf(path, sizeof(path), "%s.periods", log);
		write_file(path, pb, sizeof(pb));
	}
	f.out[0] = run_report(&f.rc[0], "--sort", "sym", log, NULL);
	CHECK(f.rc[0] == 1 && strstr(t_stderr, "d.pmclog.periods: damaged at "
				     "offset 32: period "),
	      "periods: rc %d\n%s", f.rc[0], t_stderr);
	/* the two entries before it are used, the others weigh 1 */
	CHECK(strstr(f.out[0], "6 samples, event count 2004 "), "periods:\n%s",
	      f.out[0]);
	free(f.out[0]);
	f.out[0] = run_report(&f.rc[0], "--best-effort", log, NULL);
	CHECK(f.rc[0] == 0, "periods --best-effort: rc %d", f.rc[0]);
	free(f.out[0]);
	unlink(path);

	/* 4. --blob-json: 12 bytes of the 4th sample's message overwritten */
	p.len = 0;
	p.ts = 1000000000ull + 1000;
	plog_proc_create(&p, 100, "dmproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	for (i = 0; i < 6; i++)
		plog_callchain(&p, 100, 100, 0, pc, 1);
	rs.p = p;
	recs_slot(&rs);
	snprintf(path, sizeof(path), "%s/json", dir);
	REQUIRE(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	write_format(&rs, FMT_BLOB, path, true);
	blob_dat(path, dat, sizeof(dat));
	{
		const void *img;
		const char *q;
		size_t len;

		REQUIRE(!fmt_map_file(dat, &img, &len, "test"), "map");
		b = malloc(len);
		REQUIRE(b, "malloc");
		memcpy(b, img, len);
		fmt_unmap_file(img, len);
		q = (const char *)b;
		for (i = 0; i < 4; i++) {
			q = memmem(q + 1, len - (size_t)(q + 1 - (char *)b),
				   "{\"type\":\"callchain\"", 19);
			REQUIRE(q, "callchain %d not found", i);
		}
		off = (size_t)(q - (char *)b);
		memcpy(b + off + 1, "############", 12);
		write_file(dat, b, len);
	}
	run_four(&f, dat, NULL);
	snprintf(msg, sizeof(msg), ": damaged at offset %zu: not a JSON", off);
	expect_four(&f, "JSON", 1, msg);
	CHECK(!strcmp(f.out[2], "dmproc;dm_leaf 3\n"), "report of JSON:\n%s",
	      f.out[2]);
	free_four(&f);
	for (i = 0; i < (int)rs.n; i++)
		free((void *)rs.r[i].data);

	free(b);
	free(t_stderr);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (!t_failed && system(path))
		fprintf(stderr, "could not remove %s\n", dir);
	if (!t_failed)
		printf("test_report_damage: all checks passed\n");
	return t_failed;
}
