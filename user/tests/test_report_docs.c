// SPDX-License-Identifier: GPL-2.0
/*
 * Description: the documentation says what the readers take: every long
 * option that `pmcring report --help`, `script --help`, `dump --help`
 * and `stat --help` print is in their man page and in the .rst page, and
 * the consumer documentation names what a custom consumer needs (struct
 * pmcring_counter's name and PERF_TYPE_* values, counters before or after
 * enable, the end of the stream after EPOLLHUP, struct pmcring_record).
 */
#include "test_report_common.h"

/* The whole of @path (malloc'd), with man's "\-" turned into "-". */
static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *b, *w;
	const char *r;
	long n;

	REQUIRE(f, "%s: %s", path, strerror(errno));
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = calloc(1, n + 1);
	REQUIRE(b && fread(b, 1, n, f) == (size_t)n, "read %s", path);
	fclose(f);
	for (r = w = b; *r; r++)
		if (!(r[0] == '\\' && r[1] == '-'))
			*w++ = *r;
	*w = 0;
	return b;
}

/* Each "--option" of @help is in @doc (named @what). */
static void options_in(const char *help, const char *doc, const char *what)
{
	const char *p = help;
	char opt[64], want[80];

	while ((p = strstr(p, "--"))) {
		size_t n = strspn(p + 2, "abcdefghijklmnopqrstuvwxyz-");

		/* --help goes without saying */
		if (n && n < sizeof(opt) && strncmp(p + 2, "help", n)) {
			snprintf(opt, sizeof(opt), "%.*s", (int)n, p + 2);
			snprintf(want, sizeof(want), "--%s", opt);
			CHECK(strstr(doc, want), "%s does not name %s", what,
			      want);
		}
		p += 2 + n;
	}
}

int main(void)
{
	static const struct {
		int (*cmd)(int, char **);
		const char *name, *man, *rst;
	} c[] = {
		{ cmd_report, "report", "man/man1/pmcring-report.1",
		  "../Documentation/report.rst" },
		{ cmd_script, "script", "man/man1/pmcring-script.1",
		  "../Documentation/report.rst" },
		{ cmd_dump, "dump", "man/man1/pmcring.1",
		  "../Documentation/pmcring.rst" },
		{ cmd_stat, "stat", "man/man1/pmcring.1",
		  "../Documentation/pmcring.rst" },
	};
	static const char *const consumer[] = {
		"PERF_TYPE_HARDWARE", "PERF_TYPE_SOFTWARE", "PERF_TYPE_RAW",
		"PERF_COUNT_HW_CPU_CYCLES", "PERF_COUNT_SW_CPU_CLOCK",
		"PMCALLOCATEDYN", "before or after", "pending_ts",
	};
	char *man4 = slurp("man/man4/pmcring.4");
	char *crst = slurp("../Documentation/consumer.rst");
	char *peek = slurp("man/man3/pmcring_cpu_buf_peek.3");
	unsigned int i;
	char *help;
	int rc;

	for (i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		char *man = slurp(c[i].man), *rst = slurp(c[i].rst);
		char *argv[] = { (char *)c[i].name, "--help", NULL };
		int fd = dup(1);
		FILE *f = tmpfile();

		REQUIRE(f && fd >= 0, "tmpfile");
		fflush(stdout);
		dup2(fileno(f), 1);
		rc = c[i].cmd(2, argv);
		fflush(stdout);
		dup2(fd, 1);
		close(fd);
		help = read_back(fileno(f));
		fclose(f);
		CHECK(rc == 0 && *help, "%s --help: %d", c[i].name, rc);
		options_in(help, man, c[i].man);
		options_in(help, rst, c[i].rst);
		free(help);
		free(man);
		free(rst);
	}
	for (i = 0; i < sizeof(consumer) / sizeof(consumer[0]); i++) {
		CHECK(strstr(man4, consumer[i]), "pmcring(4) lacks %s",
		      consumer[i]);
		CHECK(strstr(crst, consumer[i]), "consumer.rst lacks %s",
		      consumer[i]);
	}
	CHECK(strstr(man4, "name") && strstr(crst, "``name``"),
	      "struct pmcring_counter's name undocumented");
	CHECK(strstr(man4, "EPOLLHUP") && strstr(man4, "finds each one empty"),
	      "pmcring(4): no end-of-stream rule");
	CHECK(strstr(peek, "struct pmcring_record"),
	      "pmcring_cpu_buf_peek(3) lacks struct pmcring_record");
	free(man4);
	free(crst);
	free(peek);
	if (!t_failed)
		printf("test_report_docs: all checks passed\n");
	return t_failed;
}
