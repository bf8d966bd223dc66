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
 * this machine's /proc/kallsyms when the recording was written since this
 * boot (the kernel's addresses change at each boot, KASLR), and says so.
 */
#ifndef PMCRING_KALLSYMS_H
#define PMCRING_KALLSYMS_H

#include <stddef.h>

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
 * The kernel symbols for @rec when none were given: its sidecar if there is
 * one (into @buf, returned); else NULL, after sym_set_kallsyms_lazy() on
 * @sym: /proc/kallsyms when @rec was written since this boot, nothing for
 * an older one, each with a note that says so - loaded and said only if
 * a kernel address comes.
 */
struct sym_ctx;
const char *kallsyms_default(const char *rec, char *buf, size_t sz,
			     struct sym_ctx *sym);

#endif /* PMCRING_KALLSYMS_H */
