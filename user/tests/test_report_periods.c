// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring report` weights the samples of a frequency-mode
 * counter by the periods FILE.periods records beside a hand-built pmclog:
 * the event count is their sum and the --sort table's Period column sums
 * each entry's periods; a sidecar shorter than the file gives periods to
 * the samples it covers and the header says how many had none; a sidecar
 * of another recording, or none, leaves the samples weighing 1.
 * `pmcring script` shows each sample's own period.
 */
#include "test_report_common.h"

static volatile unsigned long sink;

__attribute__((noinline, used)) void pd_alpha(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline, used)) void pd_beta(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink ^= i;
}

/* FILE.periods: magic, the start (plog_initialize()'s: 0), @n periods. */
static void write_periods(const char *log, uint64_t start, const uint64_t *v,
			  unsigned int n)
{
	uint8_t b[16 + 8 * 16];
	char path[300];
	unsigned int i;

	REQUIRE(n <= 16, "too many periods");
	memcpy(b, "pmcrprd", 8);
	memcpy(b + 8, &start, 8);
	for (i = 0; i < n; i++)
		memcpy(b + 16 + 8 * i, &v[i], 8);
	snprintf(path, sizeof(path), "%s.periods", log);
	write_file(path, b, 16 + 8 * n);
}

/* The line of @out holding both @a and @b, or "". */
static char *line_with(const char *out, const char *a, const char *b)
{
	const char *s = out, *e;

	while ((s = strstr(s, a))) {
		const char *l = s;

		while (l > out && l[-1] != '\n')
			l--;
		e = strchr(s, '\n');
		if (!e)
			e = s + strlen(s);
		if (memmem(l, (size_t)(e - l), b, strlen(b)))
			return strndup(l, (size_t)(e - l));
		s = e;
	}
	return strdup("");
}

int main(void)
{
	char dir[] = "/tmp/test_report_periodsXXXXXX", log[256], side[300];
	uint64_t a[] = { (uintptr_t)pd_alpha + 4 }, b[] = { (uintptr_t)pd_beta + 4 };
	uint64_t periods[] = { 100, 200, 300, 1000 };
	static struct plog p;
	struct self_map m;
	char *out, *l;
	int rc, i;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/pd.pmclog", dir);
	snprintf(side, sizeof(side), "%s.periods", log);
	plog_initialize(&p);
	plog_proc_create(&p, 100, "pdproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	plog_pmcalloc(&p, 1, PMCRING_CTR_F_FREQ, 1000);	/* -F 1000 */
	plog_pmc_flags(&p, 1, PMCRING_CTR_F_FREQ, "cpu-clock");
	for (i = 0; i < 3; i++)
		plog_callchain_pmc(&p, 100, 100, 0, 1, a, 1);
	plog_callchain_pmc(&p, 100, 100, 1, 1, b, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	/* 1. every sample has its period */
	write_periods(log, 0, periods, 4);
	out = run_report(&rc, "--sort", "sym", log, NULL);
	CHECK(rc == 0, "rc %d", rc);
	CHECK(strstr(out, "# Event 'cpu-clock' (pmcid 1): 4 samples, event "
		      "count 1600 (the sum of the samples' recorded periods)\n"),
	      "head:\n%s", out);
	CHECK(strstr(out, "Period: sum of the self samples' recorded periods"),
	      "table head:\n%s", out);
	l = line_with(out, "pd_alpha", "75.00%");
	CHECK(strstr(l, " 3          600"), "pd_alpha: 3 samples, 600:\n%s", out);
	free(l);
	l = line_with(out, "pd_beta", "25.00%");
	CHECK(strstr(l, " 1         1000"), "pd_beta: 1 sample, 1000:\n%s", out);
	free(l);
	free(out);

	/* script gives each sample its own period */
	out = run_script(&rc, "--json", log, NULL);
	CHECK(rc == 0 && strstr(out, "\"period\":100,") &&
	      strstr(out, "\"period\":300,") && strstr(out, "\"period\":1000,"),
	      "script --json rc %d:\n%s", rc, out);
	free(out);
	out = run_script(&rc, log, NULL);
	CHECK(rc == 0 && strstr(out, "       200 cpu-clock: \n"),
	      "script rc %d:\n%s", rc, out);
	free(out);

	/* 2. a sidecar cut short: the last sample has none and weighs 1 */
	write_periods(log, 0, periods, 3);
	out = run_report(&rc, "--sort", "sym", log, NULL);
	CHECK(rc == 0 && strstr(out, "4 samples, event count 601 (the sum of "
		      "the samples' recorded periods; 1 samples had none and "
		      "weigh 1)"), "short sidecar rc %d:\n%s", rc, out);
	l = line_with(out, "pd_beta", "25.00%");
	CHECK(strstr(l, " 1            1"), "pd_beta weighs 1:\n%s", out);
	free(l);
	free(out);

	/* 3. another recording's periods, and none: each sample weighs 1 */
	write_periods(log, 1700000000000000000ull, periods, 4);
	out = run_report(&rc, "--sort", "sym", log, NULL);
	CHECK(rc == 0 && strstr(out, "frequency 1000 Hz: the period of each "
		      "sample is not recorded, each weighs 1") &&
	      strstr(out, "Period: samples x 1, none recorded"),
	      "stale sidecar rc %d:\n%s", rc, out);
	free(out);
	unlink(side);
	out = run_report(&rc, "--sort", "sym", log, NULL);
	CHECK(rc == 0 && strstr(out, "each weighs 1") &&
	      !strstr(out, "recorded periods"), "no sidecar rc %d:\n%s", rc,
	      out);
	l = line_with(out, "pd_alpha", "75.00%");
	CHECK(strstr(l, " 3            3"), "pd_alpha weighs 3:\n%s", out);
	free(l);
	free(out);

	unlink(log);
	rmdir(dir);
	if (!t_failed)
		printf("ok: samples weighted by their recorded periods\n");
	return t_failed;
}
