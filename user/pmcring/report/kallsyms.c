// SPDX-License-Identifier: GPL-2.0
/* FILE.kallsyms and FILE.modules: see kallsyms.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kallsyms.h"
#include "sym.h"

int kallsyms_sidecar_path(const char *rec, const char *name, char *buf,
			  size_t sz)
{
	struct stat st;
	bool dir = !stat(rec, &st) && S_ISDIR(st.st_mode);

	return (size_t)snprintf(buf, sz, dir ? "%s/%s" : "%s.%s", rec,
				name) < sz ? 0 : -ENAMETOOLONG;
}

/*
 * Copy @src to @dst through @dst.tmp; -ENODATA (nothing written) if
 * @addrs and no line has an address other than 0.
 */
static int ks_copy(const char *src, const char *dst, bool addrs)
{
	char tmp[4200], line[1024];
	bool nonzero = !addrs;
	FILE *in, *out;
	int err = 0;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.tmp", dst) >= sizeof(tmp))
		return -ENAMETOOLONG;
	in = fopen(src, "re");
	if (!in)
		return -errno;
	out = fopen(tmp, "we");
	if (!out) {
		err = -errno;
		fclose(in);
		return err;
	}
	while (fgets(line, sizeof(line), in)) {
		if (!nonzero && strtoull(line, NULL, 16))
			nonzero = true;
		fputs(line, out);
	}
	if (ferror(in) || ferror(out))
		err = -EIO;
	fclose(in);
	if (fclose(out) && !err)
		err = -errno;
	if (!err && !nonzero)
		err = -ENODATA;
	if (!err && rename(tmp, dst))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

int kallsyms_sidecar_record(const char *rec)
{
	char ks[4200], mods[4200];
	int err;

	if (kallsyms_sidecar_path(rec, "kallsyms", ks, sizeof(ks)) ||
	    kallsyms_sidecar_path(rec, "modules", mods, sizeof(mods)))
		return -ENAMETOOLONG;
	/* an older recording's, of the same name, is not this one's */
	unlink(ks);
	unlink(mods);
	err = ks_copy("/proc/kallsyms", ks, true);
	if (err == -ENODATA) {
		fprintf(stderr, "pmcring: %s not written: /proc/kallsyms shows "
			"no addresses (kptr_restrict; record as root): `report` "
			"names no kernel frame\n", ks);
		return err;
	}
	if (err) {
		fprintf(stderr, "pmcring: %s: %s: `report` names no kernel "
			"frame\n", ks, strerror(-err));
		return err;
	}
	err = ks_copy("/proc/modules", mods, false);
	if (err && err != -ENOENT)	/* a kernel without modules */
		fprintf(stderr, "pmcring: %s: %s\n", mods, strerror(-err));
	return err == -ENOENT ? 0 : err;
}

/* The realtime of this boot, s (/proc/stat's btime), 0 if unknown. */
static time_t ks_boot_time(void)
{
	char line[256];
	long long bt = 0;
	FILE *f = fopen("/proc/stat", "re");

	if (!f)
		return 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "btime %lld", &bt) == 1)
			break;
	fclose(f);
	return (time_t)bt;
}

const char *kallsyms_default(const char *rec, char *buf, size_t sz,
			     struct sym_ctx *sym)
{
	char note[8400];
	struct stat st;
	time_t boot;

	if (!kallsyms_sidecar_path(rec, "kallsyms", buf, sz) &&
	    !access(buf, F_OK))
		return buf;
	/* "-", a pipe: no file to date; a file: written since this boot? */
	boot = ks_boot_time();
	if (!strcmp(rec, "-") || stat(rec, &st) || !S_ISREG(st.st_mode) ||
	    !boot || st.st_mtime < boot) {
		snprintf(note, sizeof(note), "no %s, and %s was not written "
			 "since this boot: kernel frames stay unnamed (give "
			 "--kallsyms FILE, the recording machine's "
			 "/proc/kallsyms of that boot)", buf, rec);
		sym_set_kallsyms_lazy(sym, NULL, note);
		return NULL;
	}
	snprintf(note, sizeof(note), "no %s: kernel symbols from this "
		 "machine's /proc/kallsyms (%s was written since this boot)",
		 buf, rec);
	sym_set_kallsyms_lazy(sym, "/proc/kallsyms", note);
	return NULL;
}
