// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring report` keeps one profile per event: samples of
 * two counters of a hand-built pmclog land in two sections named by their
 * PMCALLOCATEDYN records, with the period PMCALLOCATE gives (or the note
 * that a frequency-mode counter's period is not recorded); --folded shows
 * the first event or the one --event names, never a sum of both.
 */
#include "test_report_common.h"

static volatile unsigned long sink;

__attribute__((noinline, used)) void ev_alpha(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline, used)) void ev_beta(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink ^= i;
}

/* The text of @out from the line starting with @head to the next event. */
static char *section(const char *out, const char *head)
{
	const char *s = strstr(out, head), *e;
	char *r;

	if (!s)
		return strdup("");
	e = strstr(s + 1, "\n# Event '");
	r = strndup(s, e ? (size_t)(e - s) : strlen(s));
	REQUIRE(r, "strndup");
	return r;
}

int main(void)
{
	char dir[] = "/tmp/test_report_eventsXXXXXX", log[256], *out, *sec;
	uint64_t a[] = { (uintptr_t)ev_alpha + 4 }, b[] = { (uintptr_t)ev_beta + 4 };
	static struct plog p;
	struct self_map m;
	int rc, i;

	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	snprintf(log, sizeof(log), "%s/ev.pmclog", dir);
	plog_initialize(&p);
	plog_proc_create(&p, 100, "evproc");
	plog_map_in(&p, 100, m.exec_start, m.path);
	plog_pmcalloc(&p, 1, 0, 100000);	/* -c 100000 */
	plog_pmc_flags(&p, 1, 0, "cycles");
	plog_pmc_flags(&p, 2, 1, "instructions");	/* -F */
	for (i = 0; i < 3; i++)
		plog_callchain_pmc(&p, 100, 100, 0, 1, a, 1);
	plog_callchain_pmc(&p, 100, 100, 0, 1, b, 1);
	plog_callchain_pmc(&p, 100, 100, 1, 2, b, 1);
	plog_callchain_pmc(&p, 100, 100, 1, 2, b, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);

	out = run_report(&rc, log, NULL);
	CHECK(rc == 0, "rc %d", rc);
	sec = section(out, "# Event 'cycles'");
	CHECK(strstr(sec, "# Event 'cycles' (pmcid 1): 4 samples, period "
		      "100000 (event count ~400000)"), "cycles head:\n%s", out);
	CHECK(strstr(sec, "75.00%        3  75.00%        3  u ev_alpha"),
	      "cycles: ev_alpha 3 of 4:\n%s", sec);
	CHECK(strstr(sec, "25.00%        1  25.00%        1  u ev_beta"),
	      "cycles: ev_beta 1 of 4 (instructions not added):\n%s", sec);
	free(sec);
	sec = section(out, "# Event 'instructions'");
	CHECK(strstr(sec, "# Event 'instructions' (pmcid 2): 2 samples, "
		      "frequency mode, the period of each sample is not "
		      "recorded: each weighs 1"), "instructions head:\n%s", out);
	CHECK(strstr(sec, "100.00%        2 100.00%        2  u ev_beta"),
	      "instructions: ev_beta 2 of 2:\n%s", sec);
	CHECK(!strstr(sec, "ev_alpha"), "instructions has ev_alpha:\n%s", sec);
	free(sec);
	free(out);

	out = run_report(&rc, "--event", "instructions", log, NULL);
	CHECK(rc == 0 && strstr(out, "# Event 'instructions'") &&
	      !strstr(out, "# Event 'cycles'"), "--event instructions:\n%s",
	      out);
	free(out);

	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "evproc;ev_alpha 3\nevproc;ev_beta 1\n"),
	      "--folded (first event) rc %d:\n%s", rc, out);
	free(out);
	out = run_report(&rc, "--folded", "--event", "instructions", log, NULL);
	CHECK(rc == 0 && !strcmp(out, "evproc;ev_beta 2\n"),
	      "--folded --event instructions rc %d:\n%s", rc, out);
	free(out);
	out = run_report(&rc, "--folded", "--event", "branches", log, NULL);
	CHECK(rc == 1 && !*out, "--event of no sample: rc %d:\n%s", rc, out);
	free(out);

	unlink(log);
	rmdir(dir);
	if (!t_failed)
		printf("ok: one profile per event, periods named\n");
	return t_failed;
}
