// SPDX-License-Identifier: GPL-2.0
/*
 * Description: report, script, dump and stat take a recording however it
 * comes: report and script read a blob directory as one recording - the
 * sets a roll made one after the other, several streams merged by time -
 * and give the same profile as the pmclog of the same records; every
 * reader takes a pipe as "-" (report -i -) or /dev/stdin; a FIFO with no
 * writer is refused within a second instead of blocking for ever, and a
 * FIFO whose writer comes later (within the second) is read.
 */
#include "test_report_write.h"

#include <signal.h>
#include <sys/wait.h>

static volatile unsigned long sink;

__attribute__((noinline, used)) void in_leaf(unsigned long n)
{
	unsigned long i;

	for (i = 0; i < n; i++)
		sink += i;
}

__attribute__((noinline, used)) void in_root(unsigned long n)
{
	in_leaf(n);
	sink++;
}

/* Records of a small profile: 12 samples, mappings first. */
static void build(struct recs *rs, const struct self_map *m)
{
	uint64_t a[] = { (uintptr_t)in_leaf + 4, (uintptr_t)in_root + 8 };
	uint64_t b[] = { (uintptr_t)in_root + 8 };
	int i;

	rs->p.ts = 1000000000ull + 1000;	/* after the writers' T0 */
	plog_proc_create(&rs->p, 100, "inproc");
	plog_map_in(&rs->p, 100, m->exec_start, m->path);
	for (i = 0; i < 12; i++) {
		if (i % 3 == 2)
			plog_callchain(&rs->p, 100, 100, i & 1, b, 1);
		else
			plog_callchain(&rs->p, 100, 100, i & 1, a, 2);
	}
	plog_csw(&rs->p, 100, 100, 3000000);
	recs_slot(rs);
}

static const char want[] = "inproc;in_root 4\ninproc;in_root;in_leaf 8\n";

/* Count the DAT files under @dir/c. */
static unsigned int nr_dats(const char *dir)
{
	char cmd[512];
	unsigned int n = 0;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "ls '%s'/c/*.DAT.* | wc -l", dir);
	f = popen(cmd, "r");
	REQUIRE(f && fscanf(f, "%u", &n) == 1, "%s", cmd);
	pclose(f);
	return n;
}

/* A child writing @path into a pipe: its read end as fd 0 (old one back). */
static pid_t feed_stdin(const char *path, int *saved)
{
	int fds[2];
	pid_t pid;

	REQUIRE(!pipe(fds), "pipe: %s", strerror(errno));
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork: %s", strerror(errno));
	if (!pid) {
		const void *p;
		size_t len;

		close(fds[0]);
		if (fmt_map_file(path, &p, &len, "feed") ||
		    write(fds[1], p, len) != (ssize_t)len)
			_exit(1);
		_exit(0);
	}
	close(fds[1]);
	*saved = dup(0);
	REQUIRE(*saved >= 0 && dup2(fds[0], 0) == 0, "dup2");
	close(fds[0]);
	return pid;
}

static void unfeed_stdin(pid_t pid, int saved)
{
	int st;

	REQUIRE(dup2(saved, 0) == 0, "dup2 back");
	close(saved);
	REQUIRE(waitpid(pid, &st, 0) == pid && WIFEXITED(st) &&
		!WEXITSTATUS(st), "feeder failed");
}

int main(void)
{
	char dir[] = "/tmp/test_report_inputsXXXXXX", path[300], log[300];
	char fifo[400];
	static struct recs rs;
	struct fmt_opts o;
	struct self_map m;
	int rc, saved;
	char *out;
	pid_t pid;
	time_t t0;

	alarm(60);	/* a reader blocking on the FIFO fails, not hangs */
	self_map(&m);
	REQUIRE(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
	build(&rs, &m);
	snprintf(log, sizeof(log), "%s/p.pmclog", dir);
	write_format(&rs, FMT_PMCLOG, log, false);
	out = run_report(&rc, "--folded", log, NULL);
	REQUIRE(rc == 0 && !strcmp(out, want), "pmclog:\n%s", out);
	free(out);

	/* 1. a blob recording rolled into several sets: one recording */
	snprintf(path, sizeof(path), "%s/roll", dir);
	REQUIRE(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	write_roll(&rs, FMT_BLOB, path, false, 300);
	CHECK(nr_dats(path) >= 3, "%u sets", nr_dats(path));
	out = run_report(&rc, "--folded", path, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "rolled dir rc %d:\n%s", rc, out);
	free(out);
	out = run_script(&rc, path, NULL);
	CHECK(rc == 0 && !strcmp(strstr(out, "in_leaf+0x4") ? "y" : "", "y"),
	      "script of a dir rc %d:\n%s", rc, out);
	free(out);
	out = run_stat(&rc, path, NULL);
	CHECK(rc == 0, "stat of a dir rc %d", rc);
	free(out);

	/* 2. two streams (samples apart from the mappings), JSON, rolled */
	snprintf(path, sizeof(path), "%s/two", dir);
	REQUIRE(!mkdir(path, 0755), "mkdir %s: %s", path, strerror(errno));
	write_default_opts(&o, FMT_BLOB, path);
	o.streams[0].name = "cc";
	o.streams[0].types = PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN);
	o.streams[1].name = "rest";
	o.streams[1].types = PMCRING_TYPES_ALL &
			     ~PMCRING_TYPE_BIT(PMCRING_TYPE_CALLCHAIN);
	o.nr_streams = 2;
	o.blob_json = true;
	o.roll_bytes = 900;
	write_opts(&rs, &o);
	CHECK(nr_dats(path) >= 3, "%u sets of two streams", nr_dats(path));
	out = run_report(&rc, "--folded", path, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "two streams rc %d:\n%s", rc, out);
	free(out);
	snprintf(fifo, sizeof(fifo), "%s/c", path);	/* the container */
	out = run_report(&rc, "--folded", "-i", fifo, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "container rc %d:\n%s", rc, out);
	free(out);

	/* 3. pipes: "-" and /dev/stdin */
	pid = feed_stdin(log, &saved);
	out = run_report(&rc, "--folded", "-i", "-", NULL);
	unfeed_stdin(pid, saved);
	CHECK(rc == 0 && !strcmp(out, want), "report -i - rc %d:\n%s", rc, out);
	free(out);
	pid = feed_stdin(log, &saved);
	out = run_script(&rc, "/dev/stdin", NULL);
	unfeed_stdin(pid, saved);
	CHECK(rc == 0 && strstr(out, " in_leaf+0x4 ("), "script /dev/stdin "
	      "rc %d:\n%s", rc, out);
	free(out);
	pid = feed_stdin(log, &saved);
	out = run_dump(&rc, "/dev/stdin", NULL);
	unfeed_stdin(pid, saved);
	CHECK(rc == 0 && strstr(out, " CALLCHAIN ") && strstr(out, " CLOSELOG"),
	      "dump /dev/stdin rc %d:\n%s", rc, out);
	free(out);
	pid = feed_stdin(log, &saved);
	out = run_stat(&rc, "-", NULL);
	unfeed_stdin(pid, saved);
	CHECK(rc == 0 && strstr(out, "format pmclog, 17 records"),
	      "stat - rc %d:\n%s", rc, out);
	free(out);

	/* 4. a FIFO without a writer: refused, not waited on for ever */
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	REQUIRE(!mkfifo(fifo, 0600), "mkfifo: %s", strerror(errno));
	t0 = time(NULL);
	out = run_stat(&rc, fifo, NULL);
	CHECK(rc == 1 && strstr(t_stderr, "a FIFO with no writer") &&
	      time(NULL) - t0 < 5, "stat FIFO rc %d after %lld s:\n%s", rc,
	      (long long)(time(NULL) - t0), t_stderr);
	free(out);

	/* ... and one whose writer comes 100 ms later is read */
	fflush(NULL);
	pid = fork();
	REQUIRE(pid >= 0, "fork");
	if (!pid) {
		const void *p;
		size_t len;
		int fd;

		usleep(100000);
		fd = open(fifo, O_WRONLY);
		if (fd < 0 || fmt_map_file(log, &p, &len, "feed") ||
		    write(fd, p, len) != (ssize_t)len)
			_exit(1);
		_exit(0);
	}
	out = run_report(&rc, "--folded", fifo, NULL);
	CHECK(rc == 0 && !strcmp(out, want), "FIFO with a writer rc %d:\n%s",
	      rc, out);
	free(out);
	REQUIRE(waitpid(pid, &rc, 0) == pid, "waitpid");

	free(t_stderr);
	snprintf(path, sizeof(path), "rm -rf '%s'", dir);
	if (!t_failed && system(path))
		fprintf(stderr, "could not remove %s\n", dir);
	if (!t_failed)
		printf("test_report_inputs: all checks passed\n");
	return t_failed;
}
