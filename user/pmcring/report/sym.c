// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolization for `pmcring report`: address spaces rebuilt from
 * PROCEXEC/MAP_IN/MAP_OUT/PROCFORK records, ELF symbol tables and DWARF
 * line tables read with elfutils' libdwfl/libdw once per file (detached
 * debug files checked by build id), C++ and Rust names demangled, kernel
 * symbols from a kallsyms/System.map file, interned frames.  See sym.h for the
 * model.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <inttypes.h>
#include <limits.h>
#include <libelf.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "buildid.h"
#include "rust_demangle.h"
#include "sym.h"

/* Mappings are page granular; the ELF gABI page size on x86-64/arm64. */
#define SYM_PAGE		4096ull
#define SYM_PAGE_DOWN(x)	((x) & ~(SYM_PAGE - 1))
#define SYM_PAGE_UP(x)		SYM_PAGE_DOWN((x) + SYM_PAGE - 1)
/* How far past its start a mapping of an unreadable file may reach. */
#define SYM_UNSIZED_MAP		(1ull << 30)
/* How far past the last kernel symbol an address still belongs to it. */
#define SYM_KERNEL_TAIL		(1ull << 16)
/* pid of MAP_IN records describing the kernel. */
#define SYM_PID_KERNEL		0xffffffffu
/* Where Debian installs detached debug files, by build id. */
#define SYM_DEBUG_DIR		"/usr/lib/debug/.build-id"

/* ---- small helpers ---- */

static uint64_t sym_hash_str(const char *s, uint64_t h)
{
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static uint64_t sym_hash_u32(uint32_t v)
{
	uint64_t h = v * 0x9e3779b97f4a7c15ull;

	return h ^ (h >> 29);
}

static void *sym_grow(void *p, size_t *cap, size_t need, size_t elem)
{
	size_t n = *cap ? *cap : 16;
	void *q;

	if (need <= *cap)
		return p;
	while (n < need)
		n *= 2;
	q = realloc(p, n * elem);
	if (q)
		*cap = n;
	return q;
}

static const char *sym_basename(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

struct sym_ctx;
static const char *sym_ctx_symfs(const struct sym_ctx *c);
static void sym_check_age(struct sym_ctx *c, const char *path,
			  const struct stat *st);
static int sym_recorded_bid(struct sym_ctx *c, const char *path,
			    const unsigned char **id, size_t *len);
static void sym_bids_free(struct sym_ctx *c);
static enum sym_names sym_ctx_names(const struct sym_ctx *c);
static void sym_kallsyms_lazy_load(struct sym_ctx *c);

/* ---- demangling ---- */

/*
 * libstdc++'s demangler (the C++ ABI's __cxa_demangle), declared here so
 * that C code can call it; it returns a malloc'd string or NULL.  It also
 * reads Rust's legacy "_ZN...17h<hash>E" names, C++-mangled by design.
 */
extern char *__cxa_demangle(const char *mangled, char *buf, size_t *len,
			    int *status);

/* Longer names are left mangled: a bound on the demangler's work. */
#define SYM_DEMANGLE_MAX	4096

/*
 * The demangled form of @name (malloc'd), or NULL if it is not mangled:
 * C++ and Rust's legacy names (_Z) by libstdc++, Rust's v0 names (_R) by
 * rust_demangle.c, whose work and output are bounded.
 */
static char *sym_demangle_full(const char *name)
{
	size_t n;
	char *d;
	int st;

	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R') ||
	    strnlen(name, SYM_DEMANGLE_MAX) == SYM_DEMANGLE_MAX)
		return NULL;
	if (name[1] == 'R')
		return rust_demangle_v0(name);
	d = __cxa_demangle(name, NULL, NULL, &st);
	if (!d)
		return NULL;
	/* Rust legacy: the last path element "h" + 16 hex digits is a hash */
	n = strlen(d);
	if (n > 19 && !strncmp(d + n - 19, "::h", 3) &&
	    strspn(d + n - 16, "0123456789abcdef") == 16)
		d[n - 19] = 0;
	return d;
}

static bool sym_ends_with(const char *s, size_t n, const char *sfx)
{
	size_t k = strlen(sfx);

	return n >= k && !memcmp(s + n - k, sfx, k);
}

/* A depth change at @ch for the name scans: ( < { [ open, ) > } ] close. */
static int sym_depth(char ch)
{
	return strchr("(<{[", ch) ? 1 : strchr(")>}]", ch) ? -1 : 0;
}

/* @n bytes at @p into @out (cut to @sz), which may overlap them. */
static size_t sym_copy_part(char *out, size_t sz, const char *p, size_t n)
{
	size_t k = n < sz ? n : sz ? sz - 1 : 0;

	if (sz) {
		memmove(out, p, k);
		out[k] = 0;
	}
	return n;
}

size_t sym_short_name(const char *full, char *out, size_t sz)
{
	size_t n = strlen(full), open, start = 0, i;
	const char *op;
	int depth = 0;

	/* cv and ref qualifiers of a member function */
	for (;;) {
		if (sym_ends_with(full, n, " const"))
			n -= 6;
		else if (sym_ends_with(full, n, " volatile"))
			n -= 9;
		else if (sym_ends_with(full, n, " &&"))
			n -= 3;
		else if (sym_ends_with(full, n, " &"))
			n -= 2;
		else
			break;
	}
	if (!n || full[n - 1] != ')')
		goto whole;
	/* the parameter list: the ( that matches the last ) */
	for (open = n; open-- > 0;) {
		depth += full[open] == ')' ? 1 : full[open] == '(' ? -1 : 0;
		if (!depth)
			break;
	}
	if (depth || !open || open == (size_t)-1)
		goto whole;
	/*
	 * The return type of a template function: up to the last space at
	 * depth 0 before the name, the scan stopping at an operator's name
	 * ("operator<", "operator new" have brackets and spaces of their own).
	 */
	op = strstr(full, "operator");
	for (i = 0, depth = 0; i < open; i++) {
		if (op && full + i == op && (!i || full[i - 1] == ':' ||
					     full[i - 1] == ' '))
			break;
		depth += sym_depth(full[i]);
		if (depth < 0)
			goto whole;
		if (!depth && full[i] == ' ')
			start = i + 1;
	}
	if (start >= open)
		goto whole;
	return sym_copy_part(out, sz, full + start, open - start);
whole:
	return sym_copy_part(out, sz, full, strlen(full));
}

/*
 * The name of a mangled @name as @c shows it (malloc'd), or NULL to show
 * @name itself: perf's short form (no return type, no parameters) by
 * default, the whole signature, or nothing demangled.
 */
static char *sym_demangle(const struct sym_ctx *c, const char *name)
{
	char *d;

	if (sym_ctx_names(c) == SYM_NAMES_MANGLED)
		return NULL;
	d = sym_demangle_full(name);
	if (d && sym_ctx_names(c) == SYM_NAMES_SHORT)
		sym_short_name(d, d, strlen(d) + 1);
	return d;
}

/* ---- ELF images ---- */

struct sym_elf_sym {
	uint64_t	addr;
	uint64_t	size;
	const struct sym_frame *frame;	/* interned, once resolved */
	uint32_t	name;	/* offset into sym_image.names */
	uint8_t		global;	/* STB_GLOBAL: preferred among aliases */
	uint8_t		demangled; /* name is the demangled one */
};

/* The code ranges of one concrete function DIE (DW_TAG_subprogram). */
struct sym_fn {
	uint64_t	lo, hi;		/* [lo, hi) */
	Dwarf_Off	off;		/* of the DIE */
};

/* The functions of one compilation unit, sorted by lo. */
struct sym_cu_fns {
	Dwarf_Off	cu;		/* of the unit's DIE */
	struct sym_fn	*v;
	size_t		n, cap;
};

/* Cached inlined frames of one address (sym_inlines()). */
#define SYM_INL_CACHE		1024	/* per image, a power of two */
#define SYM_INL_CACHED		8	/* longer chains are not cached */

struct sym_inl_line {
	const char	*file;		/* NULL: not known */
	int		line;
};

struct sym_inl {
	uint64_t	key;		/* vaddr + 1; 0: empty slot */
	uint8_t		n;		/* inlined frames */
	const struct sym_frame *f[SYM_INL_CACHED];
	struct sym_inl_line at[SYM_INL_CACHED + 1];	/* [0] unused */
};

/* One cached source line lookup. */
struct sym_line {
	uint64_t	key;	/* vaddr + 1; 0: empty slot */
	const char	*file;	/* NULL: no line for vaddr */
	int		line;
};

/* How many line lookups an image caches (power of two). */
#define SYM_LINE_CACHE		4096
/* Longest build id kept (SHA-1 is 20 bytes; some linkers write more). */
#define SYM_BUILD_ID_MAX	64

struct sym_image {
	struct sym_image *hnext;	/* hash chain */
	struct sym_ctx	*ctx;		/* for warnings and --symfs */
	char		*path;		/* as the recording names it */
	char		*file;		/* what we open: path, remapped */
	const char	*module;	/* basename of path */
	bool		loaded;		/* tried to read the file */
	bool		has_exec;	/* found a PT_LOAD with PF_X */
	bool		has_syms;
	bool		missing;	/* no such file here (ENOENT) */
	bool		debug_tried;	/* looked for a detached debug file */
	int8_t		dw_state;	/* DWARF: 0 not tried, 1 usable, -1 no */
	bool		no_aranges;	/* DWARF without .debug_aranges */
	uint16_t	e_type;
	uint64_t	exec_vaddr;	/* p_vaddr of the first PF_X PT_LOAD */
	uint64_t	exec_memsz;
	uint64_t	min_vaddr;	/* lowest PT_LOAD p_vaddr */
	dev_t		dev;		/* of the file, so a debug link to */
	ino_t		ino;		/* the file itself is not taken */
	unsigned char	bid[SYM_BUILD_ID_MAX];	/* NT_GNU_BUILD_ID */
	size_t		bid_len;
	char		*debug;		/* the detached debug file used */
	Dwfl		*dwfl;		/* one per image, the image at bias 0 */
	Dwfl_Module	*mod;
	struct sym_line	*lines;		/* SYM_LINE_CACHE slots */
	struct sym_inl	*inl;		/* SYM_INL_CACHE slots */
	Dwarf		*dw;		/* once sym_image_dwarf() said yes */
	/* dwz's shared file (.gnu_debugaltlink), opened and checked here */
	char		*alt;
	bool		alt_refused;	/* one of another build was found */
	Dwarf		*alt_dw;
	Elf		*alt_elf;
	int		alt_fd;
	struct sym_cu_fns *cus;		/* function indexes of units seen */
	size_t		ncus, cus_cap;
	struct sym_elf_sym *syms;
	size_t		nsyms, cap;
	char		*names;
	size_t		names_len, names_cap;
};

static void sym_warn(struct sym_ctx *c, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static int sym_elf_cmp(const void *a, const void *b)
{
	const struct sym_elf_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->global != y->global)
		return x->global ? -1 : 1;
	if (x->size != y->size)
		return x->size > y->size ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int sym_image_str(struct sym_image *im, const char *name,
			 uint32_t *off)
{
	size_t len = strlen(name) + 1;
	char *n;

	if (im->names_len + len > UINT32_MAX)
		return -E2BIG;
	n = sym_grow(im->names, &im->names_cap, im->names_len + len, 1);
	if (!n)
		return -ENOMEM;
	im->names = n;
	memcpy(n + im->names_len, name, len);
	*off = im->names_len;
	im->names_len += len;
	return 0;
}

static int sym_image_add(struct sym_image *im, uint64_t addr, uint64_t size,
			 const char *name, bool global)
{
	struct sym_elf_sym *s;
	uint32_t off;
	int err;

	s = sym_grow(im->syms, &im->cap, im->nsyms + 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	im->syms = s;
	err = sym_image_str(im, name, &off);
	if (err)
		return err;
	s += im->nsyms++;
	s->addr = addr;
	s->size = size;
	s->name = off;
	s->global = global;
	s->demangled = 0;
	s->frame = NULL;
	return 0;
}

/* Sort and keep one symbol per address (the global one, else the largest). */
static void sym_image_sort(struct sym_image *im)
{
	size_t i, o = 0;

	if (!im->nsyms)
		return;
	qsort(im->syms, im->nsyms, sizeof(*im->syms), sym_elf_cmp);
	for (i = 1; i < im->nsyms; i++)
		if (im->syms[i].addr != im->syms[o].addr)
			im->syms[++o] = im->syms[i];
	im->nsyms = o + 1;
	im->has_syms = true;
}

/*
 * Paths come from the recording, which may name anything: a FIFO (open()
 * or read() would block forever), a device, a directory.  Open without
 * blocking and go on only with a regular file.  The same holds for the
 * debug files a (recording-named, untrusted) ELF file points to.
 */
static int sym_open_reg(const char *path, struct stat *st)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);

	if (fd < 0)
		return -1;
	if (fstat(fd, st) || !S_ISREG(st->st_mode)) {
		close(fd);
		return -1;
	}
	return fd;
}

static Elf *sym_elf_begin(int fd)
{
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);

	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		return NULL;
	}
	return e;
}

static void sym_hex(char *hex, size_t hexsz, const unsigned char *id,
		    size_t len)
{
	size_t i;

	hex[0] = 0;
	for (i = 0; i < len && 2 * i + 2 < hexsz; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
}

/* CRC-32 of a whole file, as .gnu_debuglink records it (zlib's crc32). */
static bool sym_file_crc(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uLong c = crc32(0, Z_NULL, 0);
	off_t off = 0;
	ssize_t n;

	while ((n = pread(fd, buf, sizeof(buf), off)) > 0) {
		c = crc32(c, buf, (uInt)n);
		off += n;
	}
	*crc = (uint32_t)c;
	return n == 0;
}

/*
 * Is @path the debug file of @im?  Its build id must be the image's; when
 * either has none, the CRC-32 that .gnu_debuglink records (@crc, if
 * @have_crc) must be the file's.  A file that is there but does not match
 * (a rebuilt program next to an old debug file, a wrong file under
 * .build-id/) is refused with a warning, never used silently.  The open
 * file descriptor, or -1.
 */
static int sym_debug_try(struct sym_image *im, const char *path,
			 GElf_Word crc, bool have_crc)
{
	char want[2 * SYM_BUILD_ID_MAX + 1], got[2 * SYM_BUILD_ID_MAX + 1];
	const void *id = NULL;
	struct stat st;
	ssize_t len;
	uint32_t fcrc;
	bool ok;
	Elf *e;
	int fd;

	fd = sym_open_reg(path, &st);
	if (fd < 0)
		return -1;
	if (st.st_dev == im->dev && st.st_ino == im->ino)
		goto refuse_quiet;		/* the image itself */
	e = sym_elf_begin(fd);
	if (!e) {
		sym_warn(im->ctx, "%s: debug file of %s is not an ELF file: "
			 "not used", path, im->path);
		goto refuse_quiet;
	}
	/* @id points into @e's mapping */
	len = dwelf_elf_gnu_build_id(e, &id);
	sym_hex(want, sizeof(want), im->bid, im->bid_len);
	sym_hex(got, sizeof(got), id, len > 0 ? (size_t)len : 0);
	ok = len > 0 && (size_t)len == im->bid_len &&
	     !memcmp(id, im->bid, len);
	elf_end(e);
	if (im->bid_len && len > 0) {
		if (!ok)
			sym_warn(im->ctx, "%s: build id %s, not %s's %s: "
				 "a debug file of another build, not used",
				 path, got, im->path, want);
	} else if (have_crc) {
		ok = sym_file_crc(fd, &fcrc) && fcrc == crc;
		if (!ok)
			sym_warn(im->ctx, "%s: CRC %08x, not the %08x that %s's "
				 ".gnu_debuglink records: not used", path,
				 fcrc, (unsigned int)crc, im->path);
	} else {
		ok = false;
		sym_warn(im->ctx, "%s: no build id to check against %s: "
			 "not used", path, im->path);
	}
	if (ok)
		return fd;
refuse_quiet:
	close(fd);
	return -1;
}

/* sym_debug_try() of --symfs DIR/@path, then of @path. */
static int sym_debug_try_fs(struct sym_image *im, const char *path,
			    GElf_Word crc, bool have_crc, char **used)
{
	const char *symfs = sym_ctx_symfs(im->ctx);
	int pass, fd;

	for (pass = symfs ? 0 : 1; pass < 2; pass++) {
		if (asprintf(used, "%s%s", pass ? "" : symfs, path) < 0) {
			*used = NULL;
			return -1;
		}
		fd = sym_debug_try(im, *used, crc, have_crc);
		if (fd >= 0)
			return fd;
		free(*used);
		*used = NULL;
	}
	return -1;
}

/*
 * libdwfl's find_debuginfo callback, instead of dwfl_standard_find_debuginfo
 * (which would also ask debuginfod servers over the network and open
 * debug-link names without the checks above).  Looked for, as gdb does:
 *	/usr/lib/debug/.build-id/xx/yyyy.debug	(build id xxyyyy)
 *	DIR/NAME, DIR/.debug/NAME, /usr/lib/debug/DIR/NAME
 * for an image DIR/FILE whose .gnu_debuglink names NAME.  libdwfl calls
 * again for a .gnu_debugaltlink (dwz) file: not searched, see
 * sym_image_dwarf().
 */
static int sym_find_debuginfo(Dwfl_Module *mod, void **userdata,
			      const char *modname, Dwarf_Addr base,
			      const char *file_name, const char *link,
			      GElf_Word crc, char **debuginfo_file_name)
{
	struct sym_image *im = *userdata;
	char *p = NULL, *dir, hex[2 * SYM_BUILD_ID_MAX + 1];
	const char *slash;
	int fd = -1;

	(void)mod;
	(void)modname;
	(void)base;
	(void)file_name;
	if (!im || im->debug_tried)
		return -1;
	im->debug_tried = true;
	if (im->bid_len) {
		sym_hex(hex, sizeof(hex), im->bid, im->bid_len);
		if (asprintf(&p, "%s/%.2s/%s.debug", SYM_DEBUG_DIR, hex,
			     hex + 2) >= 0) {
			fd = sym_debug_try_fs(im, p, 0, false, &im->debug);
			free(p);
		}
	}
	/* a link is a file name: no directories, no way out of DIR */
	if (fd < 0 && link && *link && !strchr(link, '/')) {
		slash = strrchr(im->file, '/');
		dir = strndup(im->file, slash ? (size_t)(slash - im->file) : 0);
		if (dir && asprintf(&p, "%s/%s", dir, link) >= 0) {
			fd = sym_debug_try(im, p, crc, true);
			if (fd >= 0)
				im->debug = p;
			else
				free(p);
		}
		if (dir && fd < 0 && asprintf(&p, "%s/.debug/%s", dir, link) >= 0) {
			fd = sym_debug_try(im, p, crc, true);
			if (fd >= 0)
				im->debug = p;
			else
				free(p);
		}
		/* the recorded path's directory under the debug root */
		slash = strrchr(im->path, '/');
		free(dir);
		dir = strndup(im->path, slash ? (size_t)(slash - im->path) : 0);
		if (dir && fd < 0 && asprintf(&p, "/usr/lib/debug%s/%s", dir,
					      link) >= 0) {
			fd = sym_debug_try_fs(im, p, crc, true, &im->debug);
			free(p);
		}
		free(dir);
	}
	if (fd >= 0) {
		*debuginfo_file_name = strdup(im->debug);
		if (!*debuginfo_file_name) {
			close(fd);
			return -1;
		}
	}
	return fd;
}

static const Dwfl_Callbacks sym_dwfl_callbacks = {
	/* never called: the image is reported with its file descriptor */
	.find_elf = NULL,
	.find_debuginfo = sym_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* Program headers: where the executable segment is. */
static void sym_image_read_phdrs(struct sym_image *im, Elf *e)
{
	size_t i, n;

	if (elf_getphdrnum(e, &n))
		return;
	im->min_vaddr = UINT64_MAX;
	for (i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_vaddr < im->min_vaddr)
			im->min_vaddr = ph.p_vaddr;
		if ((ph.p_flags & PF_X) && !im->has_exec) {
			im->has_exec = true;
			im->exec_vaddr = ph.p_vaddr;
			im->exec_memsz = ph.p_memsz;
		}
	}
	if (im->min_vaddr == UINT64_MAX)
		im->min_vaddr = 0;
}

/*
 * Function symbols, from the table libdwfl picks: the file's .symtab, else
 * the detached debug file's (sym_find_debuginfo()), else .dynsym and the
 * MiniDebugInfo of .gnu_debugdata.  The image is reported at bias 0, so
 * the addresses are the file's own (st_value) addresses.
 */
static int sym_image_read_syms(struct sym_image *im)
{
	int i, n = dwfl_module_getsymtab(im->mod), err;

	for (i = 1; i < n; i++) {
		GElf_Word shndx;
		GElf_Addr addr;
		GElf_Sym s;
		const char *name;
		int t;

		name = dwfl_module_getsym_info(im->mod, i, &s, &addr, &shndx,
					       NULL, NULL);
		if (!name || !*name)
			continue;
		t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
		    shndx == SHN_UNDEF || shndx == (GElf_Word)-1 || !addr)
			continue;
		err = sym_image_add(im, addr, s.st_size, name,
				    GELF_ST_BIND(s.st_info) == STB_GLOBAL);
		if (err)
			return err;
	}
	return 0;
}

static void sym_image_load(struct sym_image *im)
{
	const unsigned char *rid;
	const void *id = NULL;
	size_t rlen;
	int rec;
	struct stat st;
	void **ud;
	GElf_Ehdr eh;
	ssize_t len;
	Elf *e;
	int fd;

	im->loaded = true;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	fd = sym_open_reg(im->file, &st);
	if (fd < 0) {
		im->missing = errno == ENOENT;
		return;
	}
	im->dev = st.st_dev;
	im->ino = st.st_ino;
	e = sym_elf_begin(fd);
	if (!e) {
		sym_check_age(im->ctx, im->file, &st);
		close(fd);
		return;
	}
	if (gelf_getehdr(e, &eh))
		im->e_type = eh.e_type;
	sym_image_read_phdrs(im, e);
	len = dwelf_elf_gnu_build_id(e, &id);
	if (len > 0 && len <= SYM_BUILD_ID_MAX) {
		memcpy(im->bid, id, len);
		im->bid_len = len;
	}
	elf_end(e);
	/*
	 * The build id recorded with the recording (FILE.buildids) says
	 * for sure whether this is the recorded file: no need to guess from
	 * its age, and a file of another build gives no symbols.
	 */
	rec = sym_recorded_bid(im->ctx, im->path, &rid, &rlen);
	if (rec && (rlen != im->bid_len || memcmp(rid, im->bid, rlen))) {
		char want[2 * SYM_BUILD_ID_MAX + 1], got[2 * SYM_BUILD_ID_MAX + 1];

		sym_hex(want, sizeof(want), rid, rlen);
		sym_hex(got, sizeof(got), im->bid, im->bid_len);
		sym_warn(im->ctx, "%s: build id %s, not the %s recorded: "
			 "rebuilt since the recording, its symbols are not "
			 "used", im->file, im->bid_len ? got : "(none)", want);
		im->has_syms = false;
		close(fd);
		return;
	}
	if (!rec)
		sym_check_age(im->ctx, im->file, &st);
	im->dwfl = dwfl_begin(&sym_dwfl_callbacks);
	if (!im->dwfl) {
		close(fd);
		return;
	}
	/* libdwfl owns @fd from here */
	dwfl_report_begin(im->dwfl);
	im->mod = dwfl_report_elf(im->dwfl, im->module, im->file, fd, 0, false);
	dwfl_report_end(im->dwfl, NULL, NULL);
	if (!im->mod)
		return;
	dwfl_module_info(im->mod, &ud, NULL, NULL, NULL, NULL, NULL, NULL);
	*ud = im;
	if (!sym_image_read_syms(im))
		sym_image_sort(im);
}

static struct sym_elf_sym *sym_image_find(struct sym_image *im,
					  uint64_t vaddr)
{
	size_t lo = 0, hi = im->nsyms;
	struct sym_elf_sym *s;

	if (!im->loaded)
		sym_image_load(im);
	/* the last symbol with addr <= vaddr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (im->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &im->syms[lo - 1];
	if (s->size && vaddr - s->addr >= s->size)
		return NULL;
	if (!s->size && im->has_exec &&
	    vaddr >= im->exec_vaddr + im->exec_memsz)
		return NULL;
	return s;
}

/* The name of @s, demangled the first time it is asked for. */
static const char *sym_image_name(struct sym_image *im, struct sym_elf_sym *s)
{
	char *d;

	if (!s->demangled) {
		s->demangled = 1;
		d = sym_demangle(im->ctx, im->names + s->name);
		if (d) {
			sym_image_str(im, d, &s->name);	/* else mangled */
			free(d);
		}
	}
	return im->names + s->name;
}

const char *sym_image_lookup(struct sym_image *im, uint64_t vaddr)
{
	struct sym_elf_sym *s = sym_image_find(im, vaddr);

	return s ? sym_image_name(im, s) : NULL;
}

bool sym_image_bias(const struct sym_image *im, uint64_t start,
		    uint64_t *bias)
{
	if (!im->has_exec)
		return false;
	*bias = start - SYM_PAGE_DOWN(im->exec_vaddr);
	return true;
}

const char *sym_image_debug_file(const struct sym_image *im)
{
	return im->debug;
}

/* Does @e have a section called @name? */
static bool sym_elf_has_section(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return false;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		const char *n;

		if (gelf_getshdr(scn, &sh) &&
		    (n = elf_strptr(e, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return true;
	}
	return false;
}

/*
 * Is @path the dwz file (.gnu_debugaltlink) @im's DWARF refers to, with
 * build id @id?  If so it becomes im->alt_dw; a file of another build is
 * refused with a warning.  A dwz file that itself refers to others is not
 * used (libdw would open those itself).
 */
static bool sym_alt_try(struct sym_image *im, const char *path,
			const void *id, size_t id_len)
{
	char want[2 * SYM_BUILD_ID_MAX + 1], got[2 * SYM_BUILD_ID_MAX + 1];
	const void *fid = NULL;
	struct stat st;
	ssize_t len;
	Dwarf *dw;
	Elf *e;
	int fd;

	fd = sym_open_reg(path, &st);
	if (fd < 0)
		return false;
	e = sym_elf_begin(fd);
	if (!e) {
		sym_warn(im->ctx, "%s: dwz file of %s is not an ELF file: "
			 "not used", path, im->path);
		goto err_fd;
	}
	len = dwelf_elf_gnu_build_id(e, &fid);
	if (len <= 0 || (size_t)len != id_len || memcmp(fid, id, id_len)) {
		sym_hex(want, sizeof(want), id, id_len);
		sym_hex(got, sizeof(got), fid, len > 0 ? (size_t)len : 0);
		sym_warn(im->ctx, "%s: build id %s, not the %s that %s's "
			 ".gnu_debugaltlink names: a dwz file of another "
			 "build, not used", path, len > 0 ? got : "(none)",
			 want, im->path);
		im->alt_refused = true;
		goto err_elf;
	}
	if (sym_elf_has_section(e, ".gnu_debugaltlink") ||
	    sym_elf_has_section(e, ".debug_sup"))
		goto err_elf;
	dw = dwarf_begin_elf(e, DWARF_C_READ, NULL);
	if (!dw)
		goto err_elf;
	im->alt = strdup(path);
	if (!im->alt) {
		dwarf_end(dw);
		goto err_elf;
	}
	im->alt_dw = dw;
	im->alt_elf = e;
	im->alt_fd = fd;
	return true;
err_elf:
	elf_end(e);
err_fd:
	close(fd);
	return false;
}

/* sym_alt_try() of --symfs DIR/@path, then of @path. */
static bool sym_alt_try_fs(struct sym_image *im, const char *path,
			   const void *id, size_t id_len)
{
	const char *symfs = sym_ctx_symfs(im->ctx);
	char *p;
	bool ok;

	if (symfs && asprintf(&p, "%s%s", symfs, path) >= 0) {
		ok = sym_alt_try(im, p, id, id_len);
		free(p);
		if (ok)
			return true;
	}
	return sym_alt_try(im, path, id, id_len);
}

/*
 * The dwz file of @dw, whose ELF file is @dwfile, found as libdw would
 * look for it, but opened without blocking and checked by build id:
 *	/usr/lib/debug/.build-id/xx/yyyy.debug	(its build id xxyyyy)
 *	NAME, if absolute, else DIR/NAME	(.gnu_debugaltlink's NAME,
 *						 DIR that of @dwfile)
 * each under --symfs first.  On success, set as @dw's alternate.
 */
static bool sym_image_alt(struct sym_image *im, Dwarf *dw, const char *dwfile)
{
	char hex[2 * SYM_BUILD_ID_MAX + 1], *p = NULL;
	const char *name, *slash;
	const void *id;
	ssize_t len;
	bool ok = false;

	len = dwelf_dwarf_gnu_debugaltlink(dw, &name, &id);
	if (len <= 0 || len > SYM_BUILD_ID_MAX)
		return false;
	sym_hex(hex, sizeof(hex), id, (size_t)len);
	if (asprintf(&p, "%s/%.2s/%s.debug", SYM_DEBUG_DIR, hex, hex + 2) >= 0) {
		ok = sym_alt_try_fs(im, p, id, (size_t)len);
		free(p);
	}
	if (!ok && name[0] == '/') {
		ok = sym_alt_try_fs(im, name, id, (size_t)len);
	} else if (!ok && name[0]) {
		slash = strrchr(dwfile, '/');
		if (asprintf(&p, "%.*s%s", slash ? (int)(slash - dwfile + 1) : 0,
			     dwfile, name) >= 0) {
			ok = sym_alt_try(im, p, id, (size_t)len);
			free(p);
		}
	}
	if (!ok) {
		if (!im->alt_refused)
			sym_warn(im->ctx, "%s: the dwz file %s (build id %s) its "
				 "DWARF refers to is not found: no source "
				 "lines", im->path, name, hex);
		return false;
	}
	dwarf_setalt(dw, im->alt_dw);
	return true;
}

/*
 * The image's DWARF, for source lines, once checked safe to use.  libdw
 * opens two kinds of files by names written in the DWARF itself, with a
 * blocking open(): split DWARF units (.dwo, DW_AT_dwo_name) and dwz's
 * shared file (.gnu_debugaltlink, .debug_sup).  A recording-named file may
 * be crafted to point them at a FIFO.  dwz's .gnu_debugaltlink file is
 * found and checked here (sym_image_alt()) and given to libdw before it
 * reads any DIE, so that libdw never looks for it; DWARF that needs
 * another such file is not used: its frames have symbols but no source
 * lines.
 */
static bool sym_image_dwarf(struct sym_image *im)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Addr bias;
	Dwarf_Half ver;
	uint8_t ut;
	Dwarf *dw;
	Elf *e;

	if (im->dw_state)
		return im->dw_state > 0;
	im->dw_state = -1;
	if (!im->loaded)
		sym_image_load(im);
	if (!im->mod)
		return false;
	dw = dwfl_module_getdwarf(im->mod, &bias);
	if (!dw || bias)
		return false;
	e = dwarf_getelf(dw);
	if (!e || sym_elf_has_section(e, ".debug_sup"))
		return false;
	if (sym_elf_has_section(e, ".gnu_debugaltlink") &&
	    !sym_image_alt(im, dw, im->debug ? im->debug : im->file))
		return false;
	while (dwarf_get_units(dw, cu, &next, &ver, &ut, NULL, NULL) == 0) {
		if (ut == DW_UT_skeleton || ut == DW_UT_split_compile ||
		    ut == DW_UT_split_type)
			return false;
		cu = next;
	}
	im->no_aranges = !sym_elf_has_section(e, ".debug_aranges");
	im->dw = dw;
	im->dw_state = 1;
	return true;
}

/*
 * The compilation unit DIE that holds @vaddr.  libdw 0.188 finds it only
 * through .debug_aranges, which clang does not write by default; without
 * that section, each unit's own ranges are searched (newer elfutils do the
 * same).
 */
static bool sym_image_cu(struct sym_image *im, uint64_t vaddr, Dwarf_Die *die)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Addr bias;
	Dwarf_Half ver;
	Dwarf_Die *d;
	Dwarf *dw;
	uint8_t ut;

	d = dwfl_module_addrdie(im->mod, vaddr, &bias);
	if (d) {
		*die = *d;
		return true;
	}
	dw = im->no_aranges ? dwfl_module_getdwarf(im->mod, &bias) : NULL;
	if (!dw)
		return false;
	while (dwarf_get_units(dw, cu, &next, &ver, &ut, die, NULL) == 0) {
		if (dwarf_haspc(die, vaddr) > 0)
			return true;
		cu = next;
	}
	return false;
}

/* The line of @vaddr through sym_image_cu(), for DWARF without aranges. */
static void sym_image_line_scan(struct sym_image *im, uint64_t vaddr,
				const char **file, int *line)
{
	Dwarf_Line *dl;
	Dwarf_Die cu;

	if (!sym_image_cu(im, vaddr, &cu))
		return;
	dl = dwarf_getsrc_die(&cu, vaddr);
	if (dl && !dwarf_lineno(dl, line))
		*file = dwarf_linesrc(dl, NULL, NULL);
}

bool sym_image_srcline(struct sym_image *im, uint64_t vaddr,
		       const char **file, int *line)
{
	struct sym_line *l;
	Dwfl_Line *dl;
	size_t j;

	*file = NULL;
	*line = 0;
	if (!sym_image_dwarf(im))
		return false;
	if (!im->lines) {
		im->lines = calloc(SYM_LINE_CACHE, sizeof(*im->lines));
		if (!im->lines)
			return false;
	}
	/* a direct-mapped cache: samples hit few addresses, many times */
	j = (sym_hash_u32((uint32_t)vaddr ^ (uint32_t)(vaddr >> 32))) &
	    (SYM_LINE_CACHE - 1);
	l = &im->lines[j];
	if (l->key != vaddr + 1) {
		l->key = vaddr + 1;
		l->file = NULL;
		l->line = 0;
		dl = dwfl_module_getsrc(im->mod, vaddr);
		if (dl)
			l->file = dwfl_lineinfo(dl, NULL, &l->line, NULL, NULL,
						NULL);
		else if (im->no_aranges)
			sym_image_line_scan(im, vaddr, &l->file, &l->line);
		if (l->file && l->line <= 0)
			l->file = NULL;
	}
	*file = l->file;
	*line = l->line;
	return l->file;
}

/* ---- the context ---- */

struct sym_map {
	uint64_t	start, end;	/* [start, end) */
	struct sym_image *im;
	bool		guess;		/* derived from PROCEXEC's base only */
};

struct sym_space {
	uint32_t	pid;
	bool		used;
	struct sym_map	*maps;		/* sorted by start */
	size_t		nmaps, cap;
};

struct sym_ksym {
	uint64_t	addr;
	uint32_t	name;		/* offset into ksym_names */
	uint32_t	module;		/* offset into ksym_names */
};

struct sym_ctx {
	/* frames: array by id + open-addressing hash */
	struct sym_frame **frames;
	size_t		nframes, frames_cap;
	struct sym_frame **fhash;
	size_t		fhash_cap;		/* power of two */
	/* images: chained hash by path */
	struct sym_image **ihash;
	size_t		ihash_cap;		/* power of two */
	unsigned int	nimages;
	/* address spaces: open addressing by pid */
	struct sym_space *spaces;
	size_t		nspaces, spaces_cap;	/* power of two */
	/* kernel */
	struct sym_ksym	*ksyms;
	size_t		nksyms, ksyms_cap;
	char		*ksym_names;
	size_t		ksym_names_len, ksym_names_cap;
	/* where files of the recording are on this machine */
	struct sym_path_map {
		char	*from, *to;
	}		*pmaps;
	size_t		npmaps, pmaps_cap;
	char		*symfs;
	/* the recording's wall clock: rt_ns at ts0; now: the record's ts */
	bool		has_clock;
	uint64_t	ts0, rt0, now;
	/* FILE.buildids: sorted by path, used once the start matched */
	struct sym_bid {
		char		*path;
		unsigned char	id[SYM_BUILD_ID_MAX];
		size_t		len;
	}		*bids;
	size_t		nbids, bids_cap;
	char		*bids_file;
	uint64_t	bids_start;
	int8_t		bids_state;	/* 0 not checked, 1 ok, -1 not used */
	/* warnings about the files read, each once */
	char		**warns;
	size_t		nwarns, warns_cap;
	/* modules named in frames, interned ("" first) */
	char		**modules;
	size_t		nmodules, modules_cap;
	uint8_t		names;		/* enum sym_names */
	/* sym_set_kallsyms_lazy(): at the first kernel address */
	bool		ks_lazy;
	char		*ks_lazy_path, *ks_lazy_note;
};

static enum sym_names sym_ctx_names(const struct sym_ctx *c)
{
	return (enum sym_names)c->names;
}

void sym_set_names(struct sym_ctx *c, enum sym_names how)
{
	c->names = (uint8_t)how;
}

struct sym_ctx *sym_new(void)
{
	struct sym_ctx *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->ihash_cap = 256;
	c->ihash = calloc(c->ihash_cap, sizeof(*c->ihash));
	if (!c->ihash) {
		free(c);
		return NULL;
	}
	return c;
}

static void sym_image_free(struct sym_image *im)
{
	dwfl_end(im->dwfl);
	/* after the main Dwarf, which refers to it (dwarf_setalt) */
	if (im->alt_dw) {
		dwarf_end(im->alt_dw);
		elf_end(im->alt_elf);
		close(im->alt_fd);
	}
	free(im->alt);
	while (im->ncus)
		free(im->cus[--im->ncus].v);
	free(im->cus);
	free(im->debug);
	free(im->lines);
	free(im->inl);
	free(im->syms);
	free(im->names);
	if (im->file != im->path)
		free(im->file);
	free(im->path);
	free(im);
}

void sym_free(struct sym_ctx *c)
{
	size_t i;

	if (!c)
		return;
	sym_bids_free(c);
	for (i = 0; i < c->nframes; i++)
		free(c->frames[i]);
	free(c->frames);
	free(c->fhash);
	for (i = 0; i < c->ihash_cap; i++) {
		struct sym_image *im = c->ihash[i], *next;

		for (; im; im = next) {
			next = im->hnext;
			sym_image_free(im);
		}
	}
	free(c->ihash);
	for (i = 0; i < c->spaces_cap; i++)
		free(c->spaces[i].maps);
	free(c->spaces);
	free(c->ksyms);
	free(c->ksym_names);
	for (i = 0; i < c->nmodules; i++)
		free(c->modules[i]);
	free(c->modules);
	free(c->ks_lazy_path);
	free(c->ks_lazy_note);
	for (i = 0; i < c->npmaps; i++) {
		free(c->pmaps[i].from);
		free(c->pmaps[i].to);
	}
	free(c->pmaps);
	free(c->symfs);
	for (i = 0; i < c->nwarns; i++)
		free(c->warns[i]);
	free(c->warns);
	free(c);
}

static const char *sym_ctx_symfs(const struct sym_ctx *c)
{
	return c->symfs;
}

/* Keep a warning for the report to print (a repeated one once). */
static void sym_warn(struct sym_ctx *c, const char *fmt, ...)
{
	char *w, **v;
	va_list ap;
	size_t i;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&w, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	for (i = 0; i < c->nwarns; i++)
		if (!strcmp(c->warns[i], w))
			goto out;
	v = sym_grow(c->warns, &c->warns_cap, c->nwarns + 1, sizeof(*v));
	if (!v)
		goto out;
	c->warns = v;
	v[c->nwarns++] = w;
	return;
out:
	free(w);
}

void sym_set_clock(struct sym_ctx *c, uint64_t ts, uint64_t rt_ns)
{
	c->has_clock = rt_ns != 0;
	c->ts0 = ts;
	c->rt0 = rt_ns;
	c->now = ts;
	/* the build ids are of this recording only if it started then */
	if (c->bids_file && !c->bids_state) {
		c->bids_state = rt_ns && rt_ns == c->bids_start ? 1 : -1;
		if (c->bids_state < 0)
			sym_warn(c, "%s: build ids of a recording started at "
				 "%" PRIu64 " ns, not this one's %" PRIu64
				 ": not used", c->bids_file, c->bids_start,
				 rt_ns);
	}
}

static int sym_bid_cmp(const void *a, const void *b)
{
	return strcmp(((const struct sym_bid *)a)->path,
		      ((const struct sym_bid *)b)->path);
}

static int sym_bid_add(void *arg, const char *path, size_t path_len,
		       const unsigned char *id, size_t id_len)
{
	struct sym_ctx *c = arg;
	struct sym_bid *v;

	if (id_len > SYM_BUILD_ID_MAX)
		return -EINVAL;
	v = sym_grow(c->bids, &c->bids_cap, c->nbids + 1, sizeof(*v));
	if (!v)
		return -ENOMEM;
	c->bids = v;
	v += c->nbids;
	v->path = strndup(path, path_len);
	if (!v->path)
		return -ENOMEM;
	memcpy(v->id, id, id_len);
	v->len = id_len;
	c->nbids++;
	return 0;
}

static void sym_bids_free(struct sym_ctx *c)
{
	while (c->nbids)
		free(c->bids[--c->nbids].path);
	free(c->bids);
	c->bids = NULL;
	c->bids_cap = 0;
	free(c->bids_file);
	c->bids_file = NULL;
}

int sym_load_build_ids(struct sym_ctx *c, const char *path)
{
	struct stat st;
	uint64_t start = 0;
	ssize_t got;
	size_t len = 0;
	char *buf;
	int fd, err;

	fd = sym_open_reg(path, &st);
	if (fd < 0)
		return errno == ENOENT ? -ENOENT : -EINVAL;
	if (st.st_size <= 0 || (uint64_t)st.st_size > BUILDID_FILE_MAX) {
		close(fd);
		return -EINVAL;
	}
	buf = malloc((size_t)st.st_size);
	if (!buf) {
		close(fd);
		return -ENOMEM;
	}
	while (len < (size_t)st.st_size &&
	       (got = read(fd, buf + len, (size_t)st.st_size - len)) > 0)
		len += (size_t)got;
	close(fd);
	sym_bids_free(c);
	err = buildid_parse(buf, len, &start, sym_bid_add, c);
	free(buf);
	if (!err) {
		c->bids_file = strdup(path);
		if (!c->bids_file)
			err = -ENOMEM;
	}
	if (err) {
		sym_bids_free(c);
		return err;
	}
	if (c->nbids)		/* qsort(NULL, 0, ...) is undefined */
		qsort(c->bids, c->nbids, sizeof(*c->bids), sym_bid_cmp);
	c->bids_start = start;
	c->bids_state = 0;
	return 0;
}

void sym_load_build_ids_of(struct sym_ctx *c, const char *log,
			   const char *who)
{
	char *p;
	int err;

	if (asprintf(&p, "%s.buildids", log) < 0)
		return;
	err = sym_load_build_ids(c, p);
	if (err && err != -ENOENT)
		fprintf(stderr, "%s: %s: %s: not used\n", who, p,
			err == -EINVAL ? "not a build id list" : strerror(-err));
	free(p);
}

/* The build id recorded for @path, once known to be this recording's. */
static int sym_recorded_bid(struct sym_ctx *c, const char *path,
			    const unsigned char **id, size_t *len)
{
	struct sym_bid key = { .path = (char *)path }, *b;

	if (c->bids_state <= 0 || !c->nbids)
		return 0;
	b = bsearch(&key, c->bids, c->nbids, sizeof(*c->bids), sym_bid_cmp);
	if (!b)
		return 0;
	*id = b->id;
	*len = b->len;
	return 1;
}

void sym_set_time(struct sym_ctx *c, uint64_t ts)
{
	c->now = ts;
}

/*
 * Was @path changed after the record that maps it?  A second of slack
 * for file systems with coarse timestamps and clocks that were stepped.
 */
static void sym_check_age(struct sym_ctx *c, const char *path,
			  const struct stat *st)
{
	uint64_t mtime, mapped;

	if (!c->has_clock || st->st_mtim.tv_sec < 0)
		return;
	mtime = (uint64_t)st->st_mtim.tv_sec * 1000000000ull +
		(uint64_t)st->st_mtim.tv_nsec;
	mapped = c->rt0 + (c->now - c->ts0);
	if (c->now < c->ts0 || mtime <= mapped + 1000000000ull)
		return;
	sym_warn(c, "%s: modified %.0f s after the recording mapped it: "
		 "its symbols may not be the recorded program's", path,
		 (double)(mtime - mapped) / 1e9);
}

size_t sym_nr_warnings(const struct sym_ctx *c)
{
	return c->nwarns;
}

const char *sym_warning(const struct sym_ctx *c, size_t i)
{
	return i < c->nwarns ? c->warns[i] : NULL;
}

/* ---- interned frames ---- */

static const char *sym_module_intern(struct sym_ctx *c, const char *m)
{
	char **v;
	size_t i;

	for (i = 0; i < c->nmodules; i++)
		if (!strcmp(c->modules[i], m))
			return c->modules[i];
	v = sym_grow(c->modules, &c->modules_cap, c->nmodules + 1, sizeof(*v));
	if (!v)
		return NULL;
	c->modules = v;
	v[c->nmodules] = strdup(m);
	if (!v[c->nmodules])
		return NULL;
	return v[c->nmodules++];
}

static uint64_t sym_frame_hash(enum sym_kind kind, const char *module,
			       const char *name)
{
	uint64_t h = 0xcbf29ce484222325ull ^ kind;

	h = sym_hash_str(module, h) * 31;
	return sym_hash_str(name, h);
}

static int sym_fhash_grow(struct sym_ctx *c)
{
	size_t cap = c->fhash_cap ? c->fhash_cap * 2 : 1024, i;
	struct sym_frame **h = calloc(cap, sizeof(*h));

	if (!h)
		return -ENOMEM;
	for (i = 0; i < c->nframes; i++) {
		struct sym_frame *f = c->frames[i];
		size_t j = sym_frame_hash(f->kind, f->module, f->name) & (cap - 1);

		while (h[j])
			j = (j + 1) & (cap - 1);
		h[j] = f;
	}
	free(c->fhash);
	c->fhash = h;
	c->fhash_cap = cap;
	return 0;
}

const struct sym_frame *sym_frame_get(struct sym_ctx *c, enum sym_kind kind,
				      const char *module, const char *name)
{
	struct sym_frame *f, **v;
	size_t j, len;

	if (!module)
		module = "";
	if ((c->nframes + 1) * 2 > c->fhash_cap && sym_fhash_grow(c))
		return NULL;
	j = sym_frame_hash(kind, module, name) & (c->fhash_cap - 1);
	for (; (f = c->fhash[j]); j = (j + 1) & (c->fhash_cap - 1))
		if (f->kind == kind && !strcmp(f->module, module) &&
		    !strcmp(f->name, name))
			return f;
	module = sym_module_intern(c, module);
	v = sym_grow(c->frames, &c->frames_cap, c->nframes + 1, sizeof(*v));
	if (!module || !v)
		return NULL;
	c->frames = v;
	len = strlen(name) + 1;
	f = malloc(sizeof(*f) + len);
	if (!f)
		return NULL;
	f->id = c->nframes;
	f->kind = kind;
	f->module = module;
	memcpy(f->name, name, len);
	c->frames[c->nframes++] = f;
	c->fhash[j] = f;
	return f;
}

unsigned int sym_nr_frames(const struct sym_ctx *c)
{
	return c->nframes;
}

const struct sym_frame *sym_frame_by_id(const struct sym_ctx *c,
					unsigned int id)
{
	return id < c->nframes ? c->frames[id] : NULL;
}

/* ---- images by path ---- */

int sym_add_path_map(struct sym_ctx *c, const char *from, const char *to)
{
	struct sym_path_map *m;

	if (from[0] != '/' || !to[0])
		return -EINVAL;
	m = sym_grow(c->pmaps, &c->pmaps_cap, c->npmaps + 1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	c->pmaps = m;
	m += c->npmaps;
	m->from = strdup(from);
	m->to = strdup(to);
	if (!m->from || !m->to) {
		free(m->from);
		free(m->to);
		return -ENOMEM;
	}
	/* "/a/" and "/a" mean the same prefix */
	while (strlen(m->from) > 1 && m->from[strlen(m->from) - 1] == '/')
		m->from[strlen(m->from) - 1] = 0;
	c->npmaps++;
	return 0;
}

int sym_set_symfs(struct sym_ctx *c, const char *dir)
{
	free(c->symfs);
	c->symfs = strdup(dir);
	return c->symfs ? 0 : -ENOMEM;
}

/* The file to open for @path: the first --path-map that applies, else
 * --symfs DIR/path if that exists, else @path itself. */
static char *sym_file_of(struct sym_ctx *c, char *path)
{
	char *f = NULL;
	size_t i, n;

	for (i = 0; i < c->npmaps; i++) {
		n = strlen(c->pmaps[i].from);
		if (strncmp(path, c->pmaps[i].from, n) ||
		    (path[n] && path[n] != '/' && n > 1))
			continue;
		if (asprintf(&f, "%s%s", c->pmaps[i].to, path + (n > 1 ? n : 0)) < 0)
			return path;
		return f;
	}
	if (c->symfs && asprintf(&f, "%s%s", c->symfs, path) >= 0) {
		if (!access(f, R_OK))
			return f;
		free(f);
	}
	return path;
}

struct sym_image *sym_image_get(struct sym_ctx *c, const char *path)
{
	size_t j = sym_hash_str(path, 0xcbf29ce484222325ull) & (c->ihash_cap - 1);
	struct sym_image *im;

	for (im = c->ihash[j]; im; im = im->hnext)
		if (!strcmp(im->path, path))
			return im;
	im = calloc(1, sizeof(*im));
	if (!im)
		return NULL;
	im->path = strdup(path);
	if (!im->path) {
		free(im);
		return NULL;
	}
	im->ctx = c;
	im->module = sym_basename(im->path);
	/* only absolute paths name files; kernel modules are names */
	im->loaded = path[0] != '/';
	im->file = im->loaded ? im->path : sym_file_of(c, im->path);
	im->hnext = c->ihash[j];
	c->ihash[j] = im;
	c->nimages++;
	if (!im->loaded)
		sym_image_load(im);
	return im;
}

void sym_stats(const struct sym_ctx *c, unsigned int *images,
	       unsigned int *with_syms)
{
	size_t i;

	*images = 0;
	*with_syms = 0;
	for (i = 0; i < c->ihash_cap; i++) {
		const struct sym_image *im;

		/* kernel modules are names, not files: kallsyms has them */
		for (im = c->ihash[i]; im; im = im->hnext) {
			if (!im->loaded || im->path[0] != '/')
				continue;
			(*images)++;
			*with_syms += im->has_syms;
		}
	}
}

static int sym_str_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

unsigned int sym_missing(const struct sym_ctx *c, const char **v,
			 unsigned int max)
{
	const struct sym_image *im;
	unsigned int n = 0;
	size_t i;

	for (i = 0; i < c->ihash_cap; i++)
		for (im = c->ihash[i]; im; im = im->hnext)
			if (im->missing && n++ < max)
				v[n - 1] = im->path;
	qsort(v, n < max ? n : max, sizeof(*v), sym_str_cmp);
	return n;
}

/* ---- address spaces ---- */

static int sym_spaces_grow(struct sym_ctx *c)
{
	size_t cap = c->spaces_cap ? c->spaces_cap * 2 : 256, i;
	struct sym_space *v = calloc(cap, sizeof(*v));

	if (!v)
		return -ENOMEM;
	for (i = 0; i < c->spaces_cap; i++) {
		struct sym_space *s = &c->spaces[i];
		size_t j;

		if (!s->used)
			continue;
		j = sym_hash_u32(s->pid) & (cap - 1);
		while (v[j].used)
			j = (j + 1) & (cap - 1);
		v[j] = *s;
	}
	free(c->spaces);
	c->spaces = v;
	c->spaces_cap = cap;
	return 0;
}

/* The space of @pid; created (empty) when @create, else NULL if none. */
static struct sym_space *sym_space(struct sym_ctx *c, uint32_t pid,
				   bool create)
{
	size_t j;

	if (c->spaces_cap) {
		j = sym_hash_u32(pid) & (c->spaces_cap - 1);
		for (; c->spaces[j].used; j = (j + 1) & (c->spaces_cap - 1))
			if (c->spaces[j].pid == pid)
				return &c->spaces[j];
	}
	if (!create)
		return NULL;
	if ((c->nspaces + 1) * 2 > c->spaces_cap && sym_spaces_grow(c))
		return NULL;
	j = sym_hash_u32(pid) & (c->spaces_cap - 1);
	while (c->spaces[j].used)
		j = (j + 1) & (c->spaces_cap - 1);
	c->spaces[j].used = true;
	c->spaces[j].pid = pid;
	c->nspaces++;
	return &c->spaces[j];
}

/* Index of the first map with start >= @addr. */
static size_t sym_space_lower(const struct sym_space *s, uint64_t addr)
{
	size_t lo = 0, hi = s->nmaps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s->maps[mid].start < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static void sym_space_del(struct sym_space *s, size_t i)
{
	memmove(&s->maps[i], &s->maps[i + 1],
		(s->nmaps - i - 1) * sizeof(*s->maps));
	s->nmaps--;
}

static void sym_space_add(struct sym_space *s, uint64_t start,
			  struct sym_image *im, bool guess)
{
	struct sym_map *m;
	size_t i;

	/* a real MAP_IN of the image replaces the PROCEXEC guess */
	for (i = 0; !guess && i < s->nmaps; i++) {
		if (s->maps[i].im == im && s->maps[i].guess) {
			sym_space_del(s, i);
			break;
		}
	}
	i = sym_space_lower(s, start);
	if (i < s->nmaps && s->maps[i].start == start) {
		m = &s->maps[i];
	} else {
		m = sym_grow(s->maps, &s->cap, s->nmaps + 1, sizeof(*m));
		if (!m)
			return;		/* the frames stay [unknown] */
		s->maps = m;
		m += i;
		memmove(m + 1, m, (s->nmaps - i) * sizeof(*m));
		s->nmaps++;
	}
	m->start = start;
	m->im = im;
	m->guess = guess;
	if (!im->loaded)
		sym_image_load(im);
	if (im->has_exec)
		m->end = start + SYM_PAGE_UP(im->exec_vaddr + im->exec_memsz) -
			 SYM_PAGE_DOWN(im->exec_vaddr);
	else
		m->end = start + SYM_UNSIZED_MAP;
}

void sym_exec(struct sym_ctx *c, uint32_t pid, const char *path,
	      uint64_t dynaddr)
{
	struct sym_space *s = sym_space(c, pid, true);
	struct sym_image *im;
	uint64_t bias;

	if (!s)
		return;
	s->nmaps = 0;
	if (!path || !*path)
		return;
	im = sym_image_get(c, path);
	if (!im)
		return;
	if (!im->loaded)
		sym_image_load(im);
	if (!im->has_exec)
		return;
	/*
	 * PROCEXEC's pl_dynaddr (offset 32) is the load bias of a PIE, as
	 * FreeBSD's et_dyn_addr and as libpmcstat places the executable; an
	 * ET_EXEC sits at its link addresses.  MAP_IN records, when they
	 * come, are exact and replace this guess.
	 */
	if (im->e_type == ET_EXEC)
		bias = 0;
	else if (dynaddr)
		bias = dynaddr;
	else
		return;
	sym_space_add(s, bias + SYM_PAGE_DOWN(im->exec_vaddr), im, true);
}

void sym_map_in(struct sym_ctx *c, uint32_t pid, uint64_t start,
		const char *path)
{
	struct sym_space *s;
	struct sym_image *im;

	if (!path || !*path)
		return;
	s = sym_space(c, pid, true);
	im = sym_image_get(c, path);
	if (s && im)
		sym_space_add(s, start, im, false);
}

void sym_map_out(struct sym_ctx *c, uint32_t pid, uint64_t start)
{
	struct sym_space *s = sym_space(c, pid, false);
	size_t i;

	if (!s)
		return;
	i = sym_space_lower(s, start);
	if (i < s->nmaps && s->maps[i].start == start)
		sym_space_del(s, i);
}

void sym_fork(struct sym_ctx *c, uint32_t parent, uint32_t child)
{
	struct sym_space *p, *s;
	struct sym_map *m;
	size_t n;

	if (parent == child || !sym_space(c, parent, false))
		return;
	s = sym_space(c, child, true);
	p = sym_space(c, parent, false);	/* the table may have moved */
	if (!s || !p)
		return;
	n = p->nmaps;
	m = sym_grow(s->maps, &s->cap, n, sizeof(*m));
	if (!m)
		return;
	s->maps = m;
	memcpy(m, p->maps, n * sizeof(*m));
	s->nmaps = n;
}

bool sym_has_space(struct sym_ctx *c, uint32_t pid)
{
	struct sym_space *s = sym_space(c, pid, false);

	return s && s->nmaps;
}

static const struct sym_map *sym_space_find(const struct sym_space *s,
					    uint64_t addr)
{
	size_t i;

	if (!s)
		return NULL;
	i = sym_space_lower(s, addr + 1);
	if (!i || addr >= s->maps[i - 1].end)
		return NULL;
	return &s->maps[i - 1];
}

/* ---- kernel symbols ---- */

static int sym_ksym_cmp(const void *a, const void *b)
{
	const struct sym_ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int sym_ksym_str(struct sym_ctx *c, const char *s, uint32_t *off)
{
	size_t len = strlen(s) + 1;
	char *v;

	v = sym_grow(c->ksym_names, &c->ksym_names_cap,
		     c->ksym_names_len + len, 1);
	if (!v)
		return -ENOMEM;
	c->ksym_names = v;
	memcpy(v + c->ksym_names_len, s, len);
	*off = c->ksym_names_len;
	c->ksym_names_len += len;
	return 0;
}

int sym_load_kallsyms(struct sym_ctx *c, const char *path)
{
	char line[1024], name[512], mod[256], type, last_mod[256] = "";
	uint32_t mod_off = 0;
	bool nonzero = false;
	FILE *f = fopen(path, "re");
	int err = 0;
	size_t i, o;

	if (!f)
		return -errno;
	if (sym_ksym_str(c, "[kernel]", &mod_off)) {
		fclose(f);
		return -ENOMEM;
	}
	while (fgets(line, sizeof(line), f)) {
		struct sym_ksym *k;
		unsigned long long addr;
		int n;

		mod[0] = 0;
		n = sscanf(line, "%llx %c %511s %255s", &addr, &type, name, mod);
		if (n < 3)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		nonzero |= addr != 0;
		k = sym_grow(c->ksyms, &c->ksyms_cap, c->nksyms + 1, sizeof(*k));
		if (!k) {
			err = -ENOMEM;
			break;
		}
		c->ksyms = k;
		k += c->nksyms;
		k->addr = addr;
		if (n == 4 && mod[0] == '[' && strcmp(mod, last_mod)) {
			snprintf(last_mod, sizeof(last_mod), "%s", mod);
			err = sym_ksym_str(c, mod, &mod_off);
		} else if (n < 4 && last_mod[0]) {
			last_mod[0] = 0;
			err = sym_ksym_str(c, "[kernel]", &mod_off);
		}
		if (!err)
			err = sym_ksym_str(c, name, &k->name);
		if (err)
			break;
		k->module = mod_off;
		c->nksyms++;
	}
	fclose(f);
	if (!err && !nonzero) {
		c->nksyms = 0;
		return -ENODATA;
	}
	if (err || !c->nksyms)
		return err;
	qsort(c->ksyms, c->nksyms, sizeof(*c->ksyms), sym_ksym_cmp);
	for (i = 1, o = 0; i < c->nksyms; i++)
		if (c->ksyms[i].addr != c->ksyms[o].addr)
			c->ksyms[++o] = c->ksyms[i];
	c->nksyms = o + 1;
	return 0;
}

int sym_set_kallsyms_lazy(struct sym_ctx *c, const char *path,
			  const char *note)
{
	free(c->ks_lazy_path);
	free(c->ks_lazy_note);
	c->ks_lazy_path = path ? strdup(path) : NULL;
	c->ks_lazy_note = note ? strdup(note) : NULL;
	c->ks_lazy = true;
	return (path && !c->ks_lazy_path) || (note && !c->ks_lazy_note) ?
	       -ENOMEM : 0;
}

static void sym_kallsyms_lazy_load(struct sym_ctx *c)
{
	int err = 0;

	c->ks_lazy = false;
	if (c->ks_lazy_path)
		err = sym_load_kallsyms(c, c->ks_lazy_path);
	if (err == -ENODATA)
		sym_warn(c, "%s: every address is 0 (kallsyms read without "
			 "privilege); kernel frames stay [unknown]",
			 c->ks_lazy_path);
	else if (err)
		sym_warn(c, "%s: %s; kernel frames stay [unknown]",
			 c->ks_lazy_path, strerror(-err));
	else if (c->ks_lazy_note)
		sym_warn(c, "%s", c->ks_lazy_note);
}

size_t sym_nr_kernel_syms(const struct sym_ctx *c)
{
	return c->nksyms;
}

static const struct sym_ksym *sym_ksym_find(const struct sym_ctx *c,
					    uint64_t addr)
{
	size_t lo = 0, hi = c->nksyms;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->ksyms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	if (lo == c->nksyms && addr - c->ksyms[lo - 1].addr > SYM_KERNEL_TAIL)
		return NULL;
	return &c->ksyms[lo - 1];
}

/* ---- resolution ---- */

static const struct sym_frame *sym_unknown(struct sym_ctx *c,
					   const char *module, uint64_t off)
{
	char buf[1200];

	if (module)
		snprintf(buf, sizeof(buf), "[unknown] %s+0x%" PRIx64, module, off);
	else
		snprintf(buf, sizeof(buf), "[unknown] 0x%" PRIx64, off);
	return sym_frame_get(c, SYM_KIND_UNKNOWN, module, buf);
}

static const struct sym_frame *sym_resolve_kernel(struct sym_ctx *c,
						  uint64_t addr, uint64_t look,
						  struct sym_loc *loc)
{
	const struct sym_ksym *k = sym_ksym_find(c, look);
	const struct sym_map *m;

	if (k) {
		loc->dso = "[kernel.kallsyms]";
		loc->has_off = true;
		loc->off = addr - k->addr;
		return sym_frame_get(c, SYM_KIND_KERNEL,
				     c->ksym_names + k->module,
				     c->ksym_names + k->name);
	}
	/* kernel MAP_IN records (pid -1) name the image, if any */
	m = sym_space_find(sym_space(c, SYM_PID_KERNEL, false), look);
	if (m) {
		loc->dso = m->im->path;
		return sym_unknown(c, m->im->module, addr - m->start);
	}
	loc->dso = "[kernel.kallsyms]";
	return sym_unknown(c, NULL, addr);
}

const struct sym_frame *sym_resolve_loc(struct sym_ctx *c, uint32_t pid,
					uint64_t addr, bool ret,
					struct sym_loc *loc)
{
	uint64_t bias, vaddr, look = addr;
	struct sym_elf_sym *s;
	const struct sym_map *m;
	struct sym_loc dummy;

	if (!loc)
		loc = &dummy;
	loc->dso = "[unknown]";
	loc->has_off = false;
	loc->off = 0;
	loc->im = NULL;
	loc->vaddr = 0;
	loc->inlined = false;
	loc->file = NULL;
	loc->line = 0;
	/* unknown frames show the address itself, lookups use addr - 1 */
	if (ret && addr)
		look--;
	if (addr >= SYM_KERNEL_MIN && c->ks_lazy)
		sym_kallsyms_lazy_load(c);
	if (addr >= SYM_KERNEL_MIN)
		return sym_resolve_kernel(c, addr, look, loc);
	m = sym_space_find(sym_space(c, pid, false), look);
	if (!m)
		return sym_unknown(c, NULL, addr);
	loc->dso = m->im->path;
	if (!sym_image_bias(m->im, m->start, &bias))
		return sym_unknown(c, m->im->module, addr - m->start);
	vaddr = look - bias;
	loc->im = m->im;
	loc->vaddr = vaddr;
	s = sym_image_find(m->im, vaddr);
	if (!s)
		return sym_unknown(c, m->im->module, addr - bias);
	loc->has_off = true;
	loc->off = addr - bias - s->addr;
	/* a C++ name is long: hash and compare it once, not per sample */
	if (!s->frame)
		s->frame = sym_frame_get(c, SYM_KIND_USER, m->im->module,
					 sym_image_name(m->im, s));
	return s->frame;
}

bool sym_srcline(const struct sym_loc *loc, const char **file, int *line)
{
	*file = loc->file;
	*line = loc->line;
	if (loc->file)
		return true;
	return loc->im && sym_image_srcline(loc->im, loc->vaddr, file, line);
}

/* A DIE's linkage name (to demangle), else its name, through origins. */
static const char *sym_die_name(Dwarf_Die *die)
{
	static const unsigned int at[] = {
		DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name,
	};
	Dwarf_Attribute a;
	const char *n = NULL;
	size_t i;

	for (i = 0; !n && i < sizeof(at) / sizeof(at[0]); i++)
		n = dwarf_formstring(dwarf_attr_integrate(die, at[i], &a));
	return n;
}

/*
 * @name (a DW_AT_name: no linkage name, as for a static function) of @die
 * with the namespaces and classes around its declaration, "ns::C::name"
 * (malloc'd), or NULL when there are none.  The declaration is found
 * through DW_AT_abstract_origin and DW_AT_specification (a few hops).
 */
static char *sym_die_qualified(Dwarf_Die *die, const char *name)
{
	Dwarf_Die d = *die, next, *scopes = NULL;
	Dwarf_Attribute a;
	char *q = NULL, *t;
	int n, i, hops;

	for (hops = 0; hops < 8; hops++) {
		if (!dwarf_attr(&d, DW_AT_abstract_origin, &a) &&
		    !dwarf_attr(&d, DW_AT_specification, &a))
			break;
		if (!dwarf_formref_die(&a, &next))
			break;
		d = next;
	}
	n = dwarf_getscopes_die(&d, &scopes);
	/* scopes[0] is @d, then outwards up to the CU */
	for (i = 1; i < n; i++) {
		const char *sn;
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type)
			continue;
		sn = dwarf_diename(&scopes[i]);
		if (asprintf(&t, "%s::%s", sn ? sn : "(anonymous namespace)",
			     q ? q : name) < 0) {
			t = NULL;
			break;
		}
		free(q);
		q = t;
	}
	free(scopes);
	return q;
}

/*
 * The frame's source line becomes the call site a DW_TAG_inlined_subroutine
 * records, or unknown when it records none.
 */
static void sym_loc_call_site(struct sym_loc *l, Dwarf_Die *inl,
			      Dwarf_Files *files)
{
	Dwarf_Attribute a;
	Dwarf_Word fi, ln;

	l->file = NULL;
	l->line = 0;
	if (files &&
	    !dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &a), &fi) &&
	    !dwarf_formudata(dwarf_attr(inl, DW_AT_call_line, &a), &ln) &&
	    ln > 0 && ln <= INT_MAX) {
		l->file = dwarf_filesrc(files, fi, NULL, NULL);
		l->line = (int)ln;
	}
	if (!l->file)
		l->im = NULL;	/* "??", not the innermost line */
}

/* How deep DIEs nest, and how many a search visits, at most. */
#define SYM_SCOPE_DEPTH		64
#define SYM_SCOPE_VISITS	(1u << 20)
/* Inlined functions in one place, at most. */
#define SYM_INLINE_MAX		32

/*
 * The DW_TAG_inlined_subroutine DIEs whose code holds @pc inside @cu (a
 * function's DIE), outermost first, into @out (at most @max).  dwarf_getscopes()
 * would do, but it recurses once per level of nesting (a crafted file
 * nests as deep as it likes) and leaks its array when it fails (0.188);
 * this walk is iterative and bounded.  Into a scope with addresses it goes
 * only if the scope holds @pc, and then never back out; namespaces and
 * classes, which hold functions but have no addresses, are searched
 * through.
 */
static unsigned int sym_inline_chain(Dwarf_Die *cu, Dwarf_Addr pc,
				     Dwarf_Die *out, unsigned int max)
{
	Dwarf_Die st[SYM_SCOPE_DEPTH], next;
	bool in_pc[SYM_SCOPE_DEPTH];	/* level's parent holds pc */
	unsigned int n = 0, visits = 0;
	int d = 0;

	if (dwarf_child(cu, &st[0]))
		return 0;
	in_pc[0] = false;
	while (++visits < SYM_SCOPE_VISITS) {
		bool addr = false, down = false;

		switch (dwarf_tag(&st[d])) {
		case DW_TAG_subprogram:
		case DW_TAG_inlined_subroutine:
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_with_stmt:
		case DW_TAG_entry_point:
			addr = true;
			down = dwarf_haspc(&st[d], pc) > 0;
			if (down && dwarf_tag(&st[d]) == DW_TAG_inlined_subroutine &&
			    n < max)
				out[n++] = st[d];
			break;
		case DW_TAG_namespace:
		case DW_TAG_module:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			down = true;
			break;
		}
		if (down && d + 1 < SYM_SCOPE_DEPTH &&
		    !dwarf_child(&st[d], &st[d + 1])) {
			in_pc[d + 1] = addr;
			d++;
			continue;
		}
		if (addr && down)
			return n;	/* pc is here, in no child */
		/* the next sibling, up a level when there is none */
		while (dwarf_siblingof(&st[d], &next)) {
			if (!d || in_pc[d])
				return n;
			d--;
		}
		st[d] = next;
	}
	return n;
}

static int sym_fn_cmp(const void *a, const void *b)
{
	const struct sym_fn *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The code ranges of function @die into @x. */
static int sym_fns_add(struct sym_cu_fns *x, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	struct sym_fn *v;
	int i = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0 &&
	       i++ < 4096) {
		if (lo >= hi)
			continue;
		v = sym_grow(x->v, &x->cap, x->n + 1, sizeof(*v));
		if (!v)
			return -ENOMEM;
		x->v = v;
		v[x->n].lo = lo;
		v[x->n].hi = hi;
		v[x->n++].off = dwarf_dieoffset(die);
	}
	return 0;
}

/*
 * The index of the concrete functions of unit @cu, built on first use:
 * the unit's top level and its namespaces, not into functions or types
 * (GCC and clang put out-of-line definitions there).  Then an address
 * needs a binary search and a walk of one function's DIEs, not of the
 * whole unit (tens of thousands of DIEs with the C++ library's headers).
 */
static struct sym_cu_fns *sym_cu_fns(struct sym_image *im, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	Dwarf_Die st[SYM_SCOPE_DEPTH], next;
	unsigned int visits = 0;
	struct sym_cu_fns *x;
	size_t i;
	int d = 0;

	for (i = 0; i < im->ncus; i++)
		if (im->cus[i].cu == off)
			return &im->cus[i];
	x = sym_grow(im->cus, &im->cus_cap, im->ncus + 1, sizeof(*x));
	if (!x)
		return NULL;
	im->cus = x;
	x += im->ncus++;
	memset(x, 0, sizeof(*x));
	x->cu = off;
	if (dwarf_child(cu, &st[0]))
		return x;
	while (++visits < SYM_SCOPE_VISITS) {
		int tag = dwarf_tag(&st[d]);

		if (tag == DW_TAG_subprogram && sym_fns_add(x, &st[d]))
			break;
		if ((tag == DW_TAG_namespace || tag == DW_TAG_module) &&
		    d + 1 < SYM_SCOPE_DEPTH && !dwarf_child(&st[d], &st[d + 1])) {
			d++;
			continue;
		}
		while (dwarf_siblingof(&st[d], &next)) {
			if (!d--)
				goto sort;
		}
		st[d] = next;
	}
sort:
	if (x->n)
		qsort(x->v, x->n, sizeof(*x->v), sym_fn_cmp);
	return x;
}

/* The concrete function DIE whose code holds @pc, in unit @cu. */
static bool sym_fn_die(struct sym_image *im, Dwarf_Die *cu, uint64_t pc,
		       Dwarf_Die *die)
{
	struct sym_cu_fns *x = sym_cu_fns(im, cu);
	size_t lo = 0, hi = x ? x->n : 0;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (x->v[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && pc < x->v[lo - 1].hi &&
	       dwarf_offdie(im->dw, x->v[lo - 1].off, die);
}

static unsigned int sym_inlines_walk(struct sym_ctx *c, struct sym_loc *loc,
				     const struct sym_frame **f,
				     struct sym_loc *l, unsigned int max)
{
	Dwarf_Die cu, fn, chain[SYM_INLINE_MAX], *prev = NULL;
	struct sym_image *im = loc->im;
	Dwarf_Files *files = NULL;
	unsigned int k = 0, n;
	size_t nfiles;

	/* sym_image_dwarf() took the DWARF only at bias 0 */
	if (!im || !max || loc->file || !sym_image_dwarf(im) ||
	    !sym_image_cu(im, loc->vaddr, &cu) ||
	    !sym_fn_die(im, &cu, loc->vaddr, &fn))
		return 0;
	n = sym_inline_chain(&fn, loc->vaddr, chain, SYM_INLINE_MAX);
	if (n && dwarf_getsrcfiles(&cu, &files, &nfiles))
		files = NULL;
	/* innermost first: the chain backwards */
	while (n-- > 0 && k < max) {
		Dwarf_Die *die = &chain[n];
		const char *name = sym_die_name(die);
		char *dm = name ? sym_demangle(c, name) : NULL;

		/* no linkage name (a static function): its scopes' names */
		if (name && !dm && strncmp(name, "_Z", 2) &&
		    strncmp(name, "_R", 2))
			dm = sym_die_qualified(die, name);

		f[k] = sym_frame_get(c, SYM_KIND_USER, im->module,
				     dm ? dm : name ? name : "[inlined]");
		free(dm);
		if (!f[k])
			break;
		l[k] = *loc;
		l[k].inlined = true;
		l[k].has_off = false;
		if (prev)
			sym_loc_call_site(&l[k], prev, files);
		prev = die;
		k++;
	}
	if (prev)
		sym_loc_call_site(loc, prev, files);
	return k;
}

/* The source line a cached sym_inlines() answer gives a location. */
static void sym_line_set(struct sym_loc *l, const struct sym_inl_line *a)
{
	l->file = a->file;
	l->line = a->line;
	if (!a->file)
		l->im = NULL;
}

/*
 * sym_inlines_walk(), cached per address: samples hit the same addresses
 * again and again, and a walk costs a function's worth of DIEs and the
 * hashing of long C++ names.
 */
unsigned int sym_inlines(struct sym_ctx *c, struct sym_loc *loc,
			 const struct sym_frame **f, struct sym_loc *l,
			 unsigned int max)
{
	struct sym_image *im = loc->im;
	struct sym_inl *e = NULL;
	unsigned int k, i;

	if (!im || !max || loc->file || !sym_image_dwarf(im))
		return 0;
	if (!im->inl)
		im->inl = calloc(SYM_INL_CACHE, sizeof(*im->inl));
	if (im->inl)
		e = &im->inl[sym_hash_u32((uint32_t)loc->vaddr ^
					  (uint32_t)(loc->vaddr >> 32)) &
			     (SYM_INL_CACHE - 1)];
	if (e && e->key == loc->vaddr + 1 && e->n < max) {
		for (i = 0; i < e->n; i++) {
			f[i] = e->f[i];
			l[i] = *loc;
			l[i].inlined = true;
			l[i].has_off = false;
			if (i)
				sym_line_set(&l[i], &e->at[i]);
		}
		if (e->n)
			sym_line_set(loc, &e->at[e->n]);
		return e->n;
	}
	k = sym_inlines_walk(c, loc, f, l, max);
	/* only whole answers: not cut at @max, not too long */
	if (e && k < max && k <= SYM_INL_CACHED) {
		e->key = loc->vaddr + 1;
		e->n = (uint8_t)k;
		for (i = 0; i < k; i++) {
			e->f[i] = f[i];
			e->at[i].file = l[i].file;
			e->at[i].line = l[i].line;
		}
		e->at[k].file = loc->file;
		e->at[k].line = loc->line;
	}
	return k;
}

const struct sym_frame *sym_resolve(struct sym_ctx *c, uint32_t pid,
				    uint64_t addr, bool ret)
{
	return sym_resolve_loc(c, pid, addr, ret, NULL);
}
