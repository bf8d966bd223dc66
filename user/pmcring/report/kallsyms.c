// SPDX-License-Identifier: GPL-2.0
/* FILE.kallsyms and FILE.modules: see kallsyms.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "kallsyms.h"
#include "report.h"
#include "sym.h"

const char *kallsyms_proc = "/proc/kallsyms";

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

static int ks_range_add(struct kallsyms_fit *f, uint64_t lo, uint64_t hi)
{
	struct kallsyms_range *r;

	if (f->nr == f->cap) {
		size_t cap = f->cap ? 2 * f->cap : 64;

		r = realloc(f->r, cap * sizeof(*r));
		if (!r)
			return -ENOMEM;
		f->r = r;
		f->cap = cap;
	}
	f->r[f->nr].lo = lo;
	f->r[f->nr++].hi = hi;
	return 0;
}

static int ks_range_cmp(const void *a, const void *b)
{
	const struct kallsyms_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * The ranges of f->path: the kernel's text, and one per run of a module's
 * text symbols (kallsyms lists a module's symbols together).
 */
static int ks_fit_load(struct kallsyms_fit *f)
{
	uint64_t text = 0, stext = 0, etext = 0, klo = UINT64_MAX, khi = 0;
	uint64_t mlo = 0, mhi = 0;
	char line[1024], name[512], mod[256], last[256] = "", type;
	bool nonzero = false;
	FILE *in = fopen(f->path, "re");
	int err = 0;
	size_t i, o;

	if (!in)
		return -errno;
	while (!err && fgets(line, sizeof(line), in)) {
		unsigned long long a;
		int n;

		mod[0] = 0;
		n = sscanf(line, "%llx %c %511s %255s", &a, &type, name, mod);
		if (n < 3)
			continue;
		nonzero |= a != 0;
		if (n < 4) {
			if (!strcmp(name, "_text"))
				text = a;
			else if (!strcmp(name, "_stext"))
				stext = a;
			else if (!strcmp(name, "_etext"))
				etext = a;
		}
		if (type != 't' && type != 'T')
			continue;
		if (n < 4) {
			klo = a < klo ? a : klo;
			khi = a > khi ? a : khi;
			continue;
		}
		if (strcmp(mod, last)) {
			if (last[0])
				err = ks_range_add(f, mlo,
						   mhi + KALLSYMS_FIT_TAIL);
			snprintf(last, sizeof(last), "%s", mod);
			mlo = mhi = a;
		}
		mlo = a < mlo ? a : mlo;
		mhi = a > mhi ? a : mhi;
	}
	if (!err && last[0])
		err = ks_range_add(f, mlo, mhi + KALLSYMS_FIT_TAIL);
	fclose(in);
	if (err)
		return err;
	if (!nonzero)
		return -ENODATA;
	/* the linker's marks if kallsyms has them, else its text symbols */
	if (text || stext)
		klo = text && (!stext || text < stext) ? text : stext;
	khi = etext > klo ? etext : khi + KALLSYMS_FIT_TAIL;
	if (klo < khi)
		err = ks_range_add(f, klo, khi);
	if (err || !f->nr)
		return err;
	/* sorted and merged: at most one range holds an address */
	qsort(f->r, f->nr, sizeof(*f->r), ks_range_cmp);
	for (i = 1, o = 0; i < f->nr; i++) {
		if (f->r[i].lo <= f->r[o].hi) {
			if (f->r[i].hi > f->r[o].hi)
				f->r[o].hi = f->r[i].hi;
		} else {
			f->r[++o] = f->r[i];
		}
	}
	f->nr = o + 1;
	return 0;
}

static bool ks_fit_in(const struct kallsyms_fit *f, uint64_t pc)
{
	size_t lo = 0, hi = f->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (f->r[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < f->r[lo - 1].hi;
}

void kallsyms_fit_add(struct kallsyms_fit *f, uint64_t pc)
{
	if (!f->loaded) {
		f->loaded = true;
		f->err = ks_fit_load(f);
	}
	f->n++;
	if (!f->err && !ks_fit_in(f, pc))
		f->outside++;
}

void kallsyms_fit_free(struct kallsyms_fit *f)
{
	free(f->r);
	f->r = NULL;
	f->nr = f->cap = 0;
}

const char *kallsyms_default(const char *rec, char *buf, size_t sz,
			     struct sym_ctx *sym)
{
	struct kallsyms_fit fit = { .path = kallsyms_proc };
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
	/*
	 * Written here is not recorded here (a copy out of a VM, an LDMS
	 * aggregator's blob sets): do its kernel addresses fit this kernel?
	 * A scan error is the real read's to tell; what it counted counts.
	 */
	report_scan_kernel(rec, &fit);
	if (fit.err) {
		/* a load error (kptr_restrict's zeros) is the load's to say */
		snprintf(note, sizeof(note), "no %s: kernel symbols from this "
			 "machine's %s (%s was written since this boot)", buf,
			 kallsyms_proc, rec);
		sym_set_kallsyms_lazy(sym, kallsyms_proc, note);
	} else if (fit.n >= KALLSYMS_FIT_MIN &&
		   fit.outside * 100 <= fit.n * (100 - KALLSYMS_FIT_PCT)) {
		snprintf(note, sizeof(note), "no %s: kernel symbols from this "
			 "machine's %s (%s was written since this boot, and %"
			 PRIu64 " of its %" PRIu64 " kernel addresses are in "
			 "this kernel's text)", buf, kallsyms_proc, rec,
			 fit.n - fit.outside, fit.n);
		sym_set_kallsyms_lazy(sym, kallsyms_proc, note);
	} else if (fit.n >= KALLSYMS_FIT_MIN) {
		snprintf(note, sizeof(note), "no %s: %" PRIu64 " of %" PRIu64
			 " kernel addresses are outside this kernel's text: %s "
			 "was recorded on another kernel or boot; kernel "
			 "frames stay unnamed (give --kallsyms FILE, the "
			 "recording machine's /proc/kallsyms of that boot)",
			 buf, fit.outside, fit.n, rec);
		sym_set_kallsyms_lazy(sym, NULL, note);
	} else {
		/* none (then none is said), or too few to tell */
		snprintf(note, sizeof(note), "no %s: %s has %" PRIu64 " kernel "
			 "address%s, too few to tell that it was recorded on "
			 "this kernel: kernel frames stay unnamed (give "
			 "--kallsyms FILE, the recording machine's "
			 "/proc/kallsyms of that boot)", buf, rec, fit.n,
			 fit.n == 1 ? "" : "es");
		sym_set_kallsyms_lazy(sym, NULL, note);
	}
	kallsyms_fit_free(&fit);
	return NULL;
}
