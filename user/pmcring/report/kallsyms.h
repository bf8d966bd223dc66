/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The kernel's symbols of a recording, as perf keeps them in perf.data:
 * `pmcring record` copies /proc/kallsyms and /proc/modules when it ends,
 *
 *	FILE.kallsyms, FILE.modules	beside a pmclog or barman FILE
 *	DIR/kallsyms, DIR/modules	in a blob directory DIR
 *
 * and `pmcring report` and `script` read FILE.kallsyms by default.  A
 * recording without one (an older pmcring, a killed record) falls back to
 * this machine's /proc/kallsyms only when the recording was written since
 * this boot (the kernel's addresses change at each boot, KASLR) and its
 * kernel addresses fit this kernel: KALLSYMS_FIT_MIN of them at least, and
 * KALLSYMS_FIT_PCT percent of them in its text or a loaded module's.  A
 * file written here can hold another machine's samples (copied out of a
 * VM, an LDMS aggregator's blob sets): then kernel frames stay unnamed,
 * and a warning says why.
 */
#ifndef PMCRING_KALLSYMS_H
#define PMCRING_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The kernel symbols of this machine (tests point it at a fake file). */
extern const char *kallsyms_proc;

/* The sidecar @name ("kallsyms", "modules") of recording @rec into @buf. */
int kallsyms_sidecar_path(const char *rec, const char *name, char *buf,
			  size_t sz);

/*
 * At the end of `pmcring record` to @rec: the two sidecars, written through
 * temporary files; a line on stderr when /proc/kallsyms shows no addresses
 * (kptr_restrict: not root) or a write fails.  0 or -errno.
 */
int kallsyms_sidecar_record(const char *rec);

/*
 * Do a recording's kernel addresses fit the kernel of a kallsyms file?
 * Its text (_text or _stext to _etext) and each module's (its first text
 * symbol to its last, plus KALLSYMS_FIT_TAIL), read at the first address.
 */
#define KALLSYMS_FIT_MIN	4	/* fewer addresses tell nothing */
#define KALLSYMS_FIT_PCT	99	/* percent of them in the ranges */
#define KALLSYMS_FIT_TAIL	(1ull << 16)

struct kallsyms_fit {
	const char	*path;		/* the kallsyms file */
	bool		loaded;
	int		err;		/* of the load: -ENODATA: all zero */
	struct kallsyms_range {
		uint64_t	lo, hi;	/* [lo, hi) */
	}		*r;
	size_t		nr, cap;
	uint64_t	n, outside;	/* kernel addresses, outside r */
};

/* Count kernel address @pc, in the ranges or not (loads them first). */
void kallsyms_fit_add(struct kallsyms_fit *f, uint64_t pc);
void kallsyms_fit_free(struct kallsyms_fit *f);

/*
 * The kernel symbols for @rec when none were given: its sidecar if there is
 * one (into @buf, returned); else NULL, after sym_set_kallsyms_lazy() on
 * @sym: kallsyms_proc when @rec was written since this boot and its kernel
 * addresses fit this kernel (a first pass over @rec counts them, quietly;
 * kallsyms_proc is read only if one comes), else nothing, each with a note
 * that says why - said only if a kernel address comes.
 */
struct sym_ctx;
const char *kallsyms_default(const char *rec, char *buf, size_t sz,
			     struct sym_ctx *sym);

#endif /* PMCRING_KALLSYMS_H */
