/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Helpers of the test_report_*.c host tests: a pmclog file built record by
 * record, where this test program itself is mapped, and `pmcring report`
 * run in-process with its standard output captured.
 */
#ifndef TEST_REPORT_COMMON_H
#define TEST_REPORT_COMMON_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <linux/pmcring.h>

#include "../pmcring/cmd.h"

#include "test_check.h"

/* ---- a pmclog file, built in memory ---- */

struct plog {
	uint8_t		b[1 << 20];
	size_t		len;
	uint64_t	ts;		/* timestamp of the next record */
};

/* Append a record of @type with @body (@n bytes); returns its offset. */
static inline size_t plog_rec(struct plog *p, unsigned int type, const void *body,
		       size_t n)
{
	uint32_t len = PMCRING_LOG_ALIGN(16 + n);
	size_t at = p->len;
	uint32_t hdr = PMCRING_HEADER(type, len), zero = 0;

	REQUIRE(at + len <= sizeof(p->b), "log too long");
	memset(p->b + at, 0, len);
	memcpy(p->b + at, &hdr, 4);
	memcpy(p->b + at + 4, &zero, 4);
	memcpy(p->b + at + 8, &p->ts, 8);
	if (n)
		memcpy(p->b + at + 16, body, n);
	p->len += len;
	p->ts += 1000;
	return at;
}

static inline void plog_initialize(struct plog *p)
{
	uint8_t b[96] = { 0 };
	uint32_t v = PMCRING_LOG_VERSION;
	uint64_t f = 1000000000;

	memcpy(b, &v, 4);
	memcpy(b + 8, &f, 8);
	memcpy(b + 32, "test cpu", 8);
	plog_rec(p, PMCRING_TYPE_INITIALIZE, b, sizeof(b));
}

static inline void plog_proc_create(struct plog *p, uint32_t pid, const char *comm)
{
	uint8_t b[28] = { 0 };

	memcpy(b, &pid, 4);
	strncpy((char *)b + 8, comm, 19);
	plog_rec(p, PMCRING_TYPE_PROC_CREATE, b, sizeof(b));
}

static inline void plog_thr_create(struct plog *p, uint32_t tid, uint32_t pid,
			    const char *name)
{
	uint8_t b[36] = { 0 };

	memcpy(b, &tid, 4);
	memcpy(b + 4, &pid, 4);
	strncpy((char *)b + 16, name, 19);
	plog_rec(p, PMCRING_TYPE_THR_CREATE, b, sizeof(b));
}

/* PROCEXEC as FreeBSD writes it: no interpreter, @dyn = the PIE's base */
static inline void plog_exec(struct plog *p, uint32_t pid, uint64_t dyn,
		      const char *path)
{
	uint8_t b[24 + PATH_MAX] = { 0 };
	size_t n = strlen(path) + 1;

	memcpy(b, &pid, 4);
	memcpy(b + 16, &dyn, 8);	/* record offset 32: pl_dynaddr */
	memcpy(b + 24, path, n);
	plog_rec(p, PMCRING_TYPE_PROCEXEC, b, 24 + n);
}

static inline void plog_map_in(struct plog *p, uint32_t pid, uint64_t start,
			const char *path)
{
	uint8_t b[16 + PATH_MAX] = { 0 };
	size_t n = strlen(path) + 1;

	memcpy(b, &pid, 4);
	memcpy(b + 8, &start, 8);
	memcpy(b + 16, path, n);
	plog_rec(p, PMCRING_TYPE_MAP_IN, b, 16 + n);
}

static inline void plog_fork(struct plog *p, uint32_t parent, uint32_t child)
{
	uint32_t b[2] = { parent, child };

	plog_rec(p, PMCRING_TYPE_PROCFORK, b, sizeof(b));
}

static inline void plog_csw(struct plog *p, uint32_t pid, uint32_t tid,
		     uint64_t value)
{
	uint8_t b[24] = { 0 };

	memcpy(b, &value, 8);
	memcpy(b + 12, &pid, 4);
	memcpy(b + 16, &tid, 4);
	plog_rec(p, PMCRING_TYPE_PROCCSW, b, sizeof(b));
}

static inline void plog_pmc(struct plog *p, uint32_t pmcid, const char *name)
{
	uint8_t b[80] = { 0 };

	memcpy(b, &pmcid, 4);
	strncpy((char *)b + 16, name, 63);
	plog_rec(p, PMCRING_TYPE_PMCALLOCATEDYN, b, sizeof(b));
}

/* PMCALLOCATEDYN with the counter's flags (bit 0: frequency mode) */
static inline void plog_pmc_flags(struct plog *p, uint32_t pmcid,
				  uint32_t flags, const char *name)
{
	uint8_t b[80] = { 0 };

	memcpy(b, &pmcid, 4);
	memcpy(b + 8, &flags, 4);
	strncpy((char *)b + 16, name, 63);
	plog_rec(p, PMCRING_TYPE_PMCALLOCATEDYN, b, sizeof(b));
}

/* PMCALLOCATE: @rate is the period, or Hz with flags bit 0 */
static inline void plog_pmcalloc(struct plog *p, uint32_t pmcid,
				 uint32_t flags, uint64_t rate)
{
	uint8_t b[24] = { 0 };

	memcpy(b, &pmcid, 4);
	memcpy(b + 8, &flags, 4);
	memcpy(b + 16, &rate, 8);
	plog_rec(p, PMCRING_TYPE_PMCALLOCATE, b, sizeof(b));
}

static inline void plog_callchain_pmc(struct plog *p, uint32_t pid,
				      uint32_t tid, uint32_t cpu,
				      uint32_t pmcid, const uint64_t *pc,
				      unsigned int n)
{
	uint8_t b[16 + 8 * 64] = { 0 };
	uint32_t cpuflags = cpu << 16 | PMCRING_CC_F_USERSPACE;

	REQUIRE(n <= 64, "too many frames");
	memcpy(b, &pid, 4);
	memcpy(b + 4, &tid, 4);
	memcpy(b + 8, &pmcid, 4);
	memcpy(b + 12, &cpuflags, 4);
	memcpy(b + 16, pc, 8 * n);
	plog_rec(p, PMCRING_TYPE_CALLCHAIN, b, 16 + 8 * n);
}

static inline void plog_callchain(struct plog *p, uint32_t pid, uint32_t tid,
			   uint32_t cpu, const uint64_t *pc, unsigned int n)
{
	uint8_t b[16 + 8 * 64] = { 0 };
	uint32_t cpuflags = cpu << 16 | PMCRING_CC_F_USERSPACE, one = 1;

	REQUIRE(n <= 64, "too many frames");
	memcpy(b, &pid, 4);
	memcpy(b + 4, &tid, 4);
	memcpy(b + 8, &one, 4);
	memcpy(b + 12, &cpuflags, 4);
	memcpy(b + 16, pc, 8 * n);
	plog_rec(p, PMCRING_TYPE_CALLCHAIN, b, 16 + 8 * n);
}

static inline void plog_closelog(struct plog *p)
{
	plog_rec(p, PMCRING_TYPE_CLOSELOG, NULL, 0);
}

static inline void write_file(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "w");

	REQUIRE(f, "%s: %s", path, strerror(errno));
	REQUIRE(fwrite(b, 1, n, f) == n, "%s: short write", path);
	REQUIRE(!fclose(f), "%s: %s", path, strerror(errno));
}

/* ---- this program's own image ---- */

struct self_map {
	char		path[PATH_MAX];
	uint64_t	exec_start;	/* start of the executable mapping */
	uint64_t	base;		/* address of file offset 0 */
};

static inline void self_map(struct self_map *m)
{
	char line[PATH_MAX + 256];
	ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);
	FILE *f;

	REQUIRE(n > 0, "readlink /proc/self/exe: %s", strerror(errno));
	m->path[n] = 0;
	m->exec_start = 0;
	m->base = 0;
	f = fopen("/proc/self/maps", "r");
	REQUIRE(f, "/proc/self/maps: %s", strerror(errno));
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perm[8], path[PATH_MAX];

		path[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi,
			   perm, &off, path) < 4 || strcmp(path, m->path))
			continue;
		if (!m->base)
			m->base = lo - off;
		if (perm[2] == 'x' && !m->exec_start)
			m->exec_start = lo;
	}
	fclose(f);
	REQUIRE(m->exec_start, "no executable mapping of %s", m->path);
}

/* ---- running the command ---- */

/* The standard error of the last run_cmd_v() (malloc'd; also echoed). */
static char *t_stderr;

/* All of @fd from offset 0, NUL-terminated (malloc'd). */
static inline char *read_back(int fd)
{
	struct stat st;
	char *buf;

	REQUIRE(!fstat(fd, &st), "fstat: %s", strerror(errno));
	buf = calloc(1, st.st_size + 1);
	REQUIRE(buf && pread(fd, buf, st.st_size, 0) == st.st_size, "read back");
	return buf;
}

/*
 * Run `pmcring NAME ARGS...` (NULL-terminated) in this process; its
 * standard output is returned (malloc'd), its exit status in *rc, its
 * standard error in t_stderr.
 */
static inline char *run_cmd_v(int (*cmd)(int, char **), const char *name,
			      int *rc, va_list ap)
{
	char *argv[32], tmpl[] = "/tmp/test_report_outXXXXXX", *buf;
	char etmpl[] = "/tmp/test_report_errXXXXXX";
	int argc = 0, fd, efd, saved, esaved;

	argv[argc++] = (char *)name;
	while (argc < 31 && (argv[argc] = va_arg(ap, char *)))
		argc++;
	argv[argc] = NULL;
	fd = mkstemp(tmpl);
	efd = mkstemp(etmpl);
	REQUIRE(fd >= 0 && efd >= 0, "mkstemp: %s", strerror(errno));
	fflush(stdout);
	fflush(stderr);
	saved = dup(1);
	esaved = dup(2);
	REQUIRE(saved >= 0 && dup2(fd, 1) == 1, "dup2: %s", strerror(errno));
	REQUIRE(esaved >= 0 && dup2(efd, 2) == 2, "dup2: %s", strerror(errno));
	*rc = cmd(argc, argv);
	fflush(stdout);
	fflush(stderr);
	REQUIRE(dup2(saved, 1) == 1, "dup2: %s", strerror(errno));
	REQUIRE(dup2(esaved, 2) == 2, "dup2: %s", strerror(errno));
	close(saved);
	close(esaved);
	buf = read_back(fd);
	free(t_stderr);
	t_stderr = read_back(efd);
	fputs(t_stderr, stderr);
	close(fd);
	close(efd);
	unlink(tmpl);
	unlink(etmpl);
	return buf;
}

static inline char *run_report(int *rc, ...)
{
	va_list ap;
	char *out;

	va_start(ap, rc);
	out = run_cmd_v(cmd_report, "report", rc, ap);
	va_end(ap);
	return out;
}

/* `pmcring script ARGS...`, as run_report() */
static inline char *run_script(int *rc, ...)
{
	va_list ap;
	char *out;

	va_start(ap, rc);
	out = run_cmd_v(cmd_script, "script", rc, ap);
	va_end(ap);
	return out;
}

/* `pmcring dump ARGS...`, as run_report() */
static inline char *run_dump(int *rc, ...)
{
	va_list ap;
	char *out;

	va_start(ap, rc);
	out = run_cmd_v(cmd_dump, "dump", rc, ap);
	va_end(ap);
	return out;
}

/* `pmcring stat ARGS...`, as run_report() */
static inline char *run_stat(int *rc, ...)
{
	va_list ap;
	char *out;

	va_start(ap, rc);
	out = run_cmd_v(cmd_stat, "stat", rc, ap);
	va_end(ap);
	return out;
}

#endif /* TEST_REPORT_COMMON_H */
