// SPDX-License-Identifier: GPL-2.0
/*
 * Description: `pmcring record`'s live status line is drawn on the terminal
 * only where nobody else writes there, as perf does: with no command and
 * no -p target on that terminal it is shown; a recorded command, or a -p
 * target whose output is the same terminal, gets none, so their lines are
 * never overwritten ("\r\033[K").  Each case runs pmcring on a fresh
 * pseudo-terminal and reads back all that was written to it.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest_harness.h"

#define STATUS_MARK	"[pmcring]"

/* A pseudo-terminal master, mounting devpts first if the guest has none. */
static int open_master(void)
{
	int fd = posix_openpt(O_RDWR | O_NOCTTY);

	if (fd < 0 && (errno == ENOENT || errno == ENODEV)) {
		mkdir("/dev/pts", 0755);
		if (mount("devpts", "/dev/pts", "devpts", 0, "ptmxmode=0666"))
			return -1;
		fd = open("/dev/pts/ptmx", O_RDWR | O_NOCTTY);
	}
	if (fd < 0 || grantpt(fd) || unlockpt(fd)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/*
 * Run "sh -c SCRIPT" with the slave as its controlling terminal and its
 * standard output and error; collect what reaches the terminal into @out.
 * Returns the exit status, -1 on setup failure.
 */
static int run_on_pty(const char *script, char *out, size_t cap)
{
	int m = open_master(), status = -1;
	size_t got = 0;
	pid_t pid;

	if (m < 0)
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		int s;

		setsid();
		s = open(ptsname(m), O_RDWR);
		if (s < 0)
			_exit(126);
		dup2(s, 0);
		dup2(s, 1);
		dup2(s, 2);
		close(m);
		execl("/bin/sh", "sh", "-c", script, (char *)NULL);
		_exit(127);
	}
	for (;;) {
		struct pollfd p = { .fd = m, .events = POLLIN };
		ssize_t n;

		if (poll(&p, 1, 30000) <= 0)
			break;
		n = read(m, out + got, cap - 1 - got);
		if (n <= 0)	/* EIO: every slave fd is closed */
			break;
		got += n;
		if (got == cap - 1)
			break;
	}
	out[got] = '\0';
	if (waitpid(pid, &status, 0) != pid)
		return -1;
	close(m);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

FIXTURE(status) {
	char out[65536];
};

FIXTURE_SETUP(status)
{
	if (access("/dev/pmcring", F_OK))
		SKIP(return, "no /dev/pmcring: the module is not loaded");
	if (system("command -v pmcring >/dev/null"))
		SKIP(return, "no pmcring command on PATH");
}

FIXTURE_TEARDOWN(status)
{
	unlink("/tmp/cli_status.pmclog");
}

/* Nobody else writes to the terminal: the status line is there. */
TEST_F(status, system_wide_shows_it)
{
	int rc = run_on_pty("exec pmcring record -a --duration 1.5 "
			    "-o /tmp/cli_status.pmclog", self->out,
			    sizeof(self->out));

	ASSERT_NE(-1, rc) TH_LOG("no pseudo-terminal");
	TH_LOG("terminal: %s", self->out);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(self->out, STATUS_MARK));
	/* the summary still ends the run */
	EXPECT_NE(NULL, strstr(self->out, "written to"));
}

/* The command shares the terminal: its lines, and no status line. */
TEST_F(status, command_gets_none)
{
	int rc = run_on_pty("exec pmcring record -o /tmp/cli_status.pmclog "
			    "-- sh -c 'for i in 1 2 3 4 5 6; do echo line$i; "
			    "sleep 0.3; done'", self->out, sizeof(self->out));

	ASSERT_NE(-1, rc) TH_LOG("no pseudo-terminal");
	TH_LOG("terminal: %s", self->out);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(self->out, "line1"));
	EXPECT_NE(NULL, strstr(self->out, "line6"));
	EXPECT_EQ(NULL, strstr(self->out, STATUS_MARK));
	EXPECT_EQ(NULL, strstr(self->out, "\033[K"));
}

/* A -p target writing to this terminal: none either. */
TEST_F(status, pid_on_same_terminal_gets_none)
{
	int rc = run_on_pty("sleep 4 & exec pmcring record -p $! "
			    "--duration 1.5 -o /tmp/cli_status.pmclog",
			    self->out, sizeof(self->out));

	ASSERT_NE(-1, rc) TH_LOG("no pseudo-terminal");
	TH_LOG("terminal: %s", self->out);
	EXPECT_EQ(0, rc);
	EXPECT_EQ(NULL, strstr(self->out, STATUS_MARK));
}

/* A -p target writing elsewhere: the status line is shown. */
TEST_F(status, pid_elsewhere_shows_it)
{
	int rc = run_on_pty("sleep 4 >/dev/null 2>&1 </dev/null & "
			    "exec pmcring record -p $! --duration 1.5 "
			    "-o /tmp/cli_status.pmclog",
			    self->out, sizeof(self->out));

	ASSERT_NE(-1, rc) TH_LOG("no pseudo-terminal");
	TH_LOG("terminal: %s", self->out);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(self->out, STATUS_MARK));
}

/*
 * After the stop the rings and the staging are still written out; on a slow
 * sink (here a pipe read 128 KiB every 0.1 s) that takes a while, and the
 * line says so, as soon as the stop begins, and how to cut it short.  The
 * generator ends the recording while the consumer is still blocked on the
 * pipe, so most of its 2 MB (in rings that hold them all: nothing dropped)
 * are written after the stop.
 */
TEST_F(status, drain_after_stop_says_so)
{
	int rc = run_on_pty("set -o pipefail; pmcring record --buffer-pages 1024 "
			    "--generate 4000,256 "
			    "-o /dev/stdout | { sleep 1; while [ \"$(head -c "
			    "131072 | wc -c)\" -gt 0 ]; do sleep 0.1; done; }",
			    self->out, sizeof(self->out));

	ASSERT_NE(-1, rc) TH_LOG("no pseudo-terminal");
	TH_LOG("terminal: %s", self->out);
	EXPECT_EQ(0, rc);
	EXPECT_NE(NULL, strstr(self->out, "stopping: draining the rings "
				     "(signal again: stop at once)"));
	EXPECT_NE(NULL, strstr(self->out, "written to /dev/stdout"));
	EXPECT_NE(NULL, strstr(self->out, "drops 0"));
	EXPECT_EQ(NULL, strstr(self->out, "stopped at once"));
}

TEST_HARNESS_MAIN
