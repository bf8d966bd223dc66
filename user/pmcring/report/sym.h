/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Symbolization for `pmcring report`, from the profile itself.
 *
 * The address spaces are rebuilt from the records, in timestamp order:
 * PROCEXEC starts a new space for its pid, MAP_IN adds an executable
 * mapping (path, start), MAP_OUT removes one, PROCFORK copies the parent's
 * space to the child.  MAP_IN's start is the address where the executable
 * mapping of the file begins: the ELF's first PT_LOAD with PF_X is mapped
 * there, so the load bias is
 *
 *	bias = start - PAGE_DOWN(p_vaddr of that PT_LOAD)
 *
 * which is 0 for ET_EXEC and the base address for PIE and shared objects.
 * Symbols come from .symtab, else a detached debug file of the same build
 * id, else .dynsym (libdwfl), read once per file; C++ names are
 * demangled; source lines come from the DWARF line table (libdw).
 * Kernel addresses resolve through a kallsyms or System.map file.
 *
 * Resolved frames are interned: one struct sym_frame per (kind, module,
 * name), compared by pointer and numbered densely by id, so a report can
 * keep per-frame counters in plain arrays.
 */
#ifndef PMCRING_SYM_H
#define PMCRING_SYM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum sym_kind {
	SYM_KIND_USER,		/* a function of a user space ELF image */
	SYM_KIND_KERNEL,	/* a kernel function (kallsyms) */
	SYM_KIND_UNKNOWN,	/* "[unknown] module+0xoff" or "[unknown] 0xaddr" */
	SYM_KIND_ROOT,		/* not an address: a process name at the root */
	SYM_KIND_NR,
};

struct sym_frame {
	unsigned int	id;	/* 0, 1, 2, ... in order of creation */
	enum sym_kind	kind;
	const char	*module;/* basename of the image, "[kernel]", or "" */
	char		name[];	/* function name, NUL-terminated */
};

struct sym_ctx;

struct sym_ctx *sym_new(void);
void sym_free(struct sym_ctx *c);	/* accepts NULL */

/* How C++ and Rust names are shown (set before the first lookup). */
enum sym_names {
	SYM_NAMES_FULL,		/* the whole signature (sym_new()'s default) */
	SYM_NAMES_SHORT,	/* perf's: "ns::f<T>", no return type, no
				 * parameters (report's default) */
	SYM_NAMES_MANGLED,	/* not demangled (--no-demangle) */
};
void sym_set_names(struct sym_ctx *c, enum sym_names how);

/*
 * perf's short form of a demangled C++ name @full into @out: without the
 * return type of a template function, the parameter list and the
 * qualifiers after it ("double ns::f<double>(double const*) const" ->
 * "ns::f<double>"); @full itself when it is no function signature.  @out
 * may be @full.  The length it has, as snprintf().
 */
size_t sym_short_name(const char *full, char *out, size_t sz);

/*
 * Kernel symbols from /proc/kallsyms or System.map ("addr type name
 * [module]" lines; text symbols only).  0, -errno, or -ENODATA when every
 * address is zero (kallsyms read without privilege).
 */
int sym_load_kallsyms(struct sym_ctx *c, const char *path);
/*
 * Kernel symbols to load from @path (NULL: none) only when the first
 * kernel address is looked up; @note (or the load's error) then becomes a
 * warning (sym_warning()).  For a fallback that costs nothing, and says
 * nothing, when the recording has no kernel frame.  0 or -ENOMEM.
 */
int sym_set_kallsyms_lazy(struct sym_ctx *c, const char *path,
			  const char *note);
/* Number of kernel symbols loaded. */
size_t sym_nr_kernel_syms(const struct sym_ctx *c);

/*
 * Where the files the recording names are on this machine: a path that
 * starts with directory @from is opened under @to instead (first match
 * wins; set them before the first record); with a symfs DIR, DIR/path is
 * tried before path.  0 or -errno.
 */
int sym_add_path_map(struct sym_ctx *c, const char *from, const char *to);
int sym_set_symfs(struct sym_ctx *c, const char *dir);

/*
 * The recording's clock: at timestamp @ts (ns) the wall clock read @rt_ns
 * (pmclog's INITIALIZE).  Then a file whose mtime is later than the wall
 * time of the record that first maps it (sym_set_time() before each
 * record) was changed since: a warning says its symbols may not be the
 * recorded program's, unless the build ids of the recording say for sure
 * (sym_load_build_ids()).
 */
void sym_set_clock(struct sym_ctx *c, uint64_t ts, uint64_t rt_ns);

/*
 * The recording's FILE.buildids (buildid.h), before the first record.
 * Used once sym_set_clock() gives the start it names (else a warning):
 * a file whose build id is not the recorded one gives no symbols (a
 * warning says so) and one that matches gets no age warning.  0, -ENOENT,
 * -EINVAL (malformed, not a regular file) or -ENOMEM.
 */
int sym_load_build_ids(struct sym_ctx *c, const char *path);
/* sym_load_build_ids() of @log.buildids if there is one; errors to stderr */
void sym_load_build_ids_of(struct sym_ctx *c, const char *log,
			   const char *who);
void sym_set_time(struct sym_ctx *c, uint64_t ts);

/* Record handlers, to be called in timestamp order. */
void sym_exec(struct sym_ctx *c, uint32_t pid, const char *path,
	      uint64_t dynaddr);
void sym_map_in(struct sym_ctx *c, uint32_t pid, uint64_t start,
		const char *path);
void sym_map_out(struct sym_ctx *c, uint32_t pid, uint64_t start);
void sym_fork(struct sym_ctx *c, uint32_t parent, uint32_t child);
/* Does @pid have mappings? */
bool sym_has_space(struct sym_ctx *c, uint32_t pid);

/* Addresses at or above this are kernel addresses (x86-64, arm64). */
#define SYM_KERNEL_MIN	0xffff800000000000ull

/*
 * The frame of @addr in @pid's address space.  @ret says @addr is a return
 * address (any frame but the interrupted PC): it is looked up as addr - 1,
 * so a call that ends a function resolves to that function.  NULL only on
 * allocation failure.
 */
const struct sym_frame *sym_resolve(struct sym_ctx *c, uint32_t pid,
				    uint64_t addr, bool ret);
struct sym_image;

/* Where an address is, for `pmcring script`'s "sym+0xoff (dso)". */
struct sym_loc {
	const char	*dso;	/* path the recording names, "[kernel.kallsyms]"
				 * or "[unknown]"; valid as long as the ctx */
	bool		has_off;/* the frame is a symbol: off is valid */
	uint64_t	off;	/* address - symbol start */
	struct sym_image *im;	/* the user image, for sym_srcline(), or NULL */
	uint64_t	vaddr;	/* the address looked up, in im's addresses */
	bool		inlined;/* a frame sym_inlines() added */
	const char	*file;	/* if set, sym_srcline()'s answer: the line */
	int		line;	/* of a call an inlined function replaced */
};

/* sym_resolve() that also says where @addr is (@loc may be NULL). */
const struct sym_frame *sym_resolve_loc(struct sym_ctx *c, uint32_t pid,
					uint64_t addr, bool ret,
					struct sym_loc *loc);
/* The interned frame of (kind, module, name), created if needed. */
const struct sym_frame *sym_frame_get(struct sym_ctx *c, enum sym_kind kind,
				      const char *module, const char *name);
/* Frames interned so far; frame ids are 0..n-1. */
unsigned int sym_nr_frames(const struct sym_ctx *c);
const struct sym_frame *sym_frame_by_id(const struct sym_ctx *c,
					unsigned int id);

/*
 * The source file and line of a location sym_resolve_loc() filled, from
 * the DWARF of its image or of that image's debug file; the innermost
 * inlined function's line where code was inlined.  @file is valid as long
 * as the ctx.  false (and NULL, 0) if not known.
 */
bool sym_srcline(const struct sym_loc *loc, const char **file, int *line);

/*
 * The functions inlined at @loc (a location of a user frame), innermost
 * first, from DWARF: up to @max frames into @f, their locations into @l
 * (copies of @loc marked inlined).  Source lines: @l[0] keeps @loc's own
 * line; @l[i] gets the line of the call that @f[i-1] replaced, and @loc
 * itself (updated) that of the call the outermost one replaced.  Returns
 * how many; 0 without DWARF or inlining.
 */
unsigned int sym_inlines(struct sym_ctx *c, struct sym_loc *loc,
			 const struct sym_frame **f, struct sym_loc *l,
			 unsigned int max);

/*
 * Warnings about the files read, each once: a debug file that does not
 * belong to its image (another build id or CRC), never used; a file
 * changed after the recording mapped it (sym_set_clock()).
 */
size_t sym_nr_warnings(const struct sym_ctx *c);
const char *sym_warning(const struct sym_ctx *c, size_t i);

/*
 * Images (files) the samples' addresses fell in that are not on this
 * machine (ENOENT, after --path-map and --symfs): their count, and up to
 * @max of their paths, as the recording names them, sorted, into @v.
 */
unsigned int sym_missing(const struct sym_ctx *c, const char **v,
			 unsigned int max);

/*
 * Images (files) looked at, and how many of them had symbols; kernel
 * modules (names, not files) are not counted.
 */
void sym_stats(const struct sym_ctx *c, unsigned int *images,
	       unsigned int *with_syms);

/*
 * Lower level, exposed for the tests and the fuzzer: symbols of one ELF
 * file.  The function containing virtual address @vaddr (an st_value-space
 * address), demangled, or NULL; valid until the next lookup in @im.
 */
struct sym_image *sym_image_get(struct sym_ctx *c, const char *path);
const char *sym_image_lookup(struct sym_image *im, uint64_t vaddr);
/* sym_srcline() of an st_value-space address. */
bool sym_image_srcline(struct sym_image *im, uint64_t vaddr,
		       const char **file, int *line);
/* The detached debug file the image's symbols or lines came from, or NULL. */
const char *sym_image_debug_file(const struct sym_image *im);
/* Bias for an executable mapping starting at @start; false if unknown. */
bool sym_image_bias(const struct sym_image *im, uint64_t start,
		    uint64_t *bias);

#endif /* PMCRING_SYM_H */
