// SPDX-License-Identifier: GPL-2.0
/*
 * FILE.buildids: written by `pmcring record` when a pmclog recording
 * ends, read by `report` and `script` (sym_load_build_ids()).  As perf
 * record does, the files are read once the recording is over: the
 * recording is read back for the paths its PROCEXEC and MAP_IN records
 * name.  See buildid.h for the format.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <elfutils/libdwelf.h>
#include <libelf.h>

#include "libpmcring.h"
#include "buildid.h"

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return 10 + c - 'a';
	return -1;
}

int buildid_parse(const char *buf, size_t len, uint64_t *start_ns,
		  buildid_cb cb, void *arg)
{
	const size_t ml = sizeof(BUILDID_MAGIC) - 1;
	unsigned char id[BUILDID_MAX];
	const char *p, *end = buf + len, *nl, *sp;
	unsigned int n = 0;
	uint64_t v = 0;
	size_t i, k;
	int err;

	if (len < ml || memcmp(buf, BUILDID_MAGIC, ml))
		return -EINVAL;
	p = buf + ml;
	nl = memchr(p, '\n', (size_t)(end - p));
	if (!nl || nl == p || nl - p > 20)
		return -EINVAL;
	for (; p < nl; p++) {
		if (*p < '0' || *p > '9' || v > (UINT64_MAX - 9) / 10)
			return -EINVAL;
		v = v * 10 + (uint64_t)(*p - '0');
	}
	*start_ns = v;
	for (p = nl + 1; p < end; p = nl + 1) {
		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			break;			/* cut short: not a whole line */
		sp = memchr(p, ' ', (size_t)(nl - p));
		k = sp ? (size_t)(sp - p) : 0;
		if (!k || k % 2 || k / 2 > BUILDID_MAX || sp + 1 >= nl ||
		    sp[1] != '/' || memchr(sp + 1, 0, (size_t)(nl - sp - 1)) ||
		    nl - sp - 1 >= PMCRING_PATH_MAX ||
		    ++n > BUILDID_ENTRIES_MAX)
			return -EINVAL;
		for (i = 0; i < k / 2; i++) {
			int hi = hexval(p[2 * i]), lo = hexval(p[2 * i + 1]);

			if (hi < 0 || lo < 0)
				return -EINVAL;
			id[i] = (unsigned char)(hi << 4 | lo);
		}
		err = cb(arg, sp + 1, (size_t)(nl - sp - 1), id, k / 2);
		if (err)
			return err;
	}
	return 0;
}

struct bid_paths {
	char	**v;
	size_t	n, cap;
};

static int bid_paths_add(struct bid_paths *ps, const char *path)
{
	char **v;

	/* absolute paths of one line only: the format has no escapes */
	if (path[0] != '/' || strchr(path, '\n'))
		return 0;
	if (ps->n == BUILDID_ENTRIES_MAX)
		return 0;
	if (ps->n == ps->cap) {
		v = realloc(ps->v, (ps->cap ? 2 * ps->cap : 64) * sizeof(*v));
		if (!v)
			return -ENOMEM;
		ps->v = v;
		ps->cap = ps->cap ? 2 * ps->cap : 64;
	}
	ps->v[ps->n] = strdup(path);
	if (!ps->v[ps->n])
		return -ENOMEM;
	ps->n++;
	return 0;
}

static int bid_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/*
 * The build id of the regular file @path into @id, its length, or 0.
 * Checked with stat() before open(), which a device node could notice,
 * and opened without blocking: the file may change in between.
 */
static size_t bid_of_file(const char *path, unsigned char *id)
{
	const void *p = NULL;
	struct stat st;
	ssize_t len = 0;
	Elf *e;
	int fd;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return 0;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return 0;
	}
	e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) == ELF_K_ELF)
		len = dwelf_elf_gnu_build_id(e, &p);
	if (len > 0 && len <= BUILDID_MAX)
		memcpy(id, p, (size_t)len);
	else
		len = 0;
	elf_end(e);
	close(fd);
	return (size_t)len;
}

/* The paths the recording @log names, sorted, each once; its start. */
static int bid_read_log(const char *log, struct bid_paths *ps,
			uint64_t *start_ns)
{
	struct pmcring_log_ev ev;
	struct pmcring_log *l;
	int fd, err = 0;
	size_t i, j;

	fd = open(log, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	l = pmcring_log_open(fd);
	if (!l) {
		close(fd);
		return -ENOMEM;
	}
	while (!err && !pmcring_log_read(l, &ev)) {
		if (ev.pl_type == PMCRING_TYPE_INITIALIZE)
			*start_ns = ev.pl_u.pl_i.pl_ts_sec * 1000000000ull +
				    ev.pl_u.pl_i.pl_ts_nsec;
		else if (ev.pl_type == PMCRING_TYPE_MAP_IN)
			err = bid_paths_add(ps, ev.pl_u.pl_mi.pl_pathname);
		else if (ev.pl_type == PMCRING_TYPE_PROCEXEC)
			err = bid_paths_add(ps, ev.pl_u.pl_x.pl_pathname);
	}
	pmcring_log_close(l);
	close(fd);
	if (err)
		return err;
	if (ps->n)		/* qsort(NULL, 0, ...) is undefined */
		qsort(ps->v, ps->n, sizeof(*ps->v), bid_cmp);
	for (i = j = 0; i < ps->n; i++) {
		if (j && !strcmp(ps->v[j - 1], ps->v[i]))
			free(ps->v[i]);
		else
			ps->v[j++] = ps->v[i];
	}
	ps->n = j;
	return 0;
}

int buildid_sidecar_write(const char *log, unsigned int *n)
{
	struct bid_paths ps = { NULL, 0, 0 };
	unsigned char id[BUILDID_MAX];
	char *tmp = NULL, *dst = NULL;
	uint64_t start = 0;
	size_t i, k, len;
	FILE *f = NULL;
	int err;

	*n = 0;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return -EINVAL;
	err = bid_read_log(log, &ps, &start);
	if (err)
		goto out;
	if (asprintf(&dst, "%s.buildids", log) < 0 ||
	    asprintf(&tmp, "%s.buildids.tmp", log) < 0) {
		err = -ENOMEM;
		goto out;
	}
	f = fopen(tmp, "we");
	if (!f) {
		err = -errno;
		goto out;
	}
	fprintf(f, "%s%" PRIu64 "\n", BUILDID_MAGIC, start);
	for (i = 0; i < ps.n; i++) {
		len = bid_of_file(ps.v[i], id);
		if (!len)
			continue;
		for (k = 0; k < len; k++)
			fprintf(f, "%02x", id[k]);
		fprintf(f, " %s\n", ps.v[i]);
		(*n)++;
	}
	if (ferror(f))
		err = -EIO;
	if (fclose(f) && !err)
		err = -errno;
	f = NULL;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err)
		unlink(tmp);
out:
	for (i = 0; i < ps.n; i++)
		free(ps.v[i]);
	free(ps.v);
	free(tmp);
	free(dst);
	return err;
}

void buildid_sidecar_remove(const char *log)
{
	char *p;

	if (asprintf(&p, "%s.buildids", log) < 0)
		return;
	unlink(p);
	free(p);
}

void buildid_sidecar_record(const char *log)
{
	struct stat st;
	unsigned int n;
	int err;

	if (stat(log, &st) || !S_ISREG(st.st_mode))
		return;
	err = buildid_sidecar_write(log, &n);
	if (err)
		fprintf(stderr, "pmcring: %s.buildids: %s: `report` cannot "
			"check the build ids\n", log, strerror(-err));
}
