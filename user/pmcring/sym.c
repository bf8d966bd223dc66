// SPDX-License-Identifier: GPL-2.0
/*
 * Symbolization for `pmcring report`: address spaces rebuilt from
 * PROCEXEC/MAP_IN/MAP_OUT/PROCFORK records, ELF symbol tables read with
 * libelf once per file, kernel symbols from a kallsyms/System.map file,
 * interned frames.  See sym.h for the model.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- ELF images ---- */

struct sym_elf_sym {
	uint64_t	addr;
	uint64_t	size;
	uint32_t	name;	/* offset into sym_image.names */
	uint32_t	global;	/* STB_GLOBAL: preferred among aliases */
};

struct sym_image {
	struct sym_image *hnext;	/* hash chain */
	char		*path;		/* as the recording names it */
	char		*file;		/* what we open: path, remapped */
	const char	*module;	/* basename of path */
	bool		loaded;		/* tried to read the file */
	bool		has_exec;	/* found a PT_LOAD with PF_X */
	bool		has_syms;
	uint16_t	e_type;
	uint64_t	exec_vaddr;	/* p_vaddr of the first PF_X PT_LOAD */
	uint64_t	exec_memsz;
	uint64_t	min_vaddr;	/* lowest PT_LOAD p_vaddr */
	struct sym_elf_sym *syms;
	size_t		nsyms, cap;
	char		*names;
	size_t		names_len, names_cap;
};

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

static int sym_image_add(struct sym_image *im, uint64_t addr, uint64_t size,
			 const char *name, bool global)
{
	size_t len = strlen(name) + 1;
	struct sym_elf_sym *s;
	char *n;

	s = sym_grow(im->syms, &im->cap, im->nsyms + 1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	im->syms = s;
	n = sym_grow(im->names, &im->names_cap, im->names_len + len, 1);
	if (!n)
		return -ENOMEM;
	im->names = n;
	memcpy(n + im->names_len, name, len);
	s += im->nsyms++;
	s->addr = addr;
	s->size = size;
	s->name = im->names_len;
	s->global = global;
	im->names_len += len;
	return 0;
}

/* Function symbols of section @scn (a SHT_SYMTAB or SHT_DYNSYM). */
static int sym_image_read_symtab(struct sym_image *im, Elf *e, Elf_Scn *scn,
				 const GElf_Shdr *sh)
{
	Elf_Data *d = elf_getdata(scn, NULL);
	size_t i, n;

	if (!d || !sh->sh_entsize)
		return 0;
	n = sh->sh_size / sh->sh_entsize;
	for (i = 1; i < n; i++) {
		GElf_Sym s;
		const char *name;
		int t, err;

		if (!gelf_getsym(d, i, &s))
			break;
		t = GELF_ST_TYPE(s.st_info);
		if ((t != STT_FUNC && t != STT_GNU_IFUNC) ||
		    s.st_shndx == SHN_UNDEF || !s.st_value)
			continue;
		name = elf_strptr(e, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		err = sym_image_add(im, s.st_value, s.st_size, name,
				    GELF_ST_BIND(s.st_info) == STB_GLOBAL);
		if (err)
			return err;
	}
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

/* Symbols of an open ELF: .symtab if it has functions, else .dynsym. */
static int sym_image_read_syms(struct sym_image *im, Elf *e)
{
	int pass, err;

	for (pass = 0; pass < 2 && !im->nsyms; pass++) {
		Elf_Scn *scn = NULL;
		GElf_Word want = pass ? SHT_DYNSYM : SHT_SYMTAB;

		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != want)
				continue;
			err = sym_image_read_symtab(im, e, scn, &sh);
			if (err)
				return err;
		}
	}
	return 0;
}

/* NT_GNU_BUILD_ID as lower-case hex into @hex (at least 2 * 64 + 1). */
static bool sym_build_id(Elf *e, char *hex, size_t hexsz)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		GElf_Nhdr nh;
		size_t off = 0, noff, doff, i;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		while (d && (off = gelf_getnote(d, off, &nh, &noff, &doff))) {
			const unsigned char *id = (const unsigned char *)d->d_buf + doff;

			if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
			    memcmp((const char *)d->d_buf + noff, "GNU", 4) ||
			    !nh.n_descsz || nh.n_descsz * 2 + 1 > hexsz)
				continue;
			for (i = 0; i < nh.n_descsz; i++)
				snprintf(hex + 2 * i, 3, "%02x", id[i]);
			return true;
		}
	}
	return false;
}

/*
 * Paths come from the recording, which may name anything: a FIFO (open()
 * or read() would block forever), a device, a directory.  Open without
 * blocking and go on only with a regular file.
 */
static Elf *sym_elf_open(const char *path, int *fd)
{
	struct stat st;
	Elf *e;

	*fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (*fd < 0)
		return NULL;
	if (fstat(*fd, &st) || !S_ISREG(st.st_mode)) {
		close(*fd);
		*fd = -1;
		return NULL;
	}
	e = elf_begin(*fd, ELF_C_READ_MMAP, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		if (e)
			elf_end(e);
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return e;
}

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

static void sym_image_load(struct sym_image *im)
{
	char hex[160], dbg[256];
	GElf_Ehdr eh;
	Elf *e;
	int fd;

	im->loaded = true;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return;
	e = sym_elf_open(im->file, &fd);
	if (!e)
		return;
	if (gelf_getehdr(e, &eh))
		im->e_type = eh.e_type;
	sym_image_read_phdrs(im, e);
	if (sym_image_read_syms(im, e))
		goto out;
	/* Stripped file: a Debian -dbgsym file of the same build id. */
	if (!im->nsyms && sym_build_id(e, hex, sizeof(hex))) {
		Elf *de;
		int dfd;

		snprintf(dbg, sizeof(dbg), "%s/%.2s/%s.debug", SYM_DEBUG_DIR,
			 hex, hex + 2);
		de = sym_elf_open(dbg, &dfd);
		if (de) {
			sym_image_read_syms(im, de);
			elf_end(de);
			close(dfd);
		}
	}
	sym_image_sort(im);
out:
	elf_end(e);
	close(fd);
}

static const struct sym_elf_sym *sym_image_find(struct sym_image *im,
						uint64_t vaddr)
{
	size_t lo = 0, hi = im->nsyms;
	const struct sym_elf_sym *s;

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

const char *sym_image_lookup(struct sym_image *im, uint64_t vaddr)
{
	const struct sym_elf_sym *s = sym_image_find(im, vaddr);

	return s ? im->names + s->name : NULL;
}

bool sym_image_bias(const struct sym_image *im, uint64_t start,
		    uint64_t *bias)
{
	if (!im->has_exec)
		return false;
	*bias = start - SYM_PAGE_DOWN(im->exec_vaddr);
	return true;
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
	/* modules named in frames, interned ("" first) */
	char		**modules;
	size_t		nmodules, modules_cap;
};

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
	for (i = 0; i < c->npmaps; i++) {
		free(c->pmaps[i].from);
		free(c->pmaps[i].to);
	}
	free(c->pmaps);
	free(c->symfs);
	free(c);
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

		for (im = c->ihash[i]; im; im = im->hnext) {
			if (!im->loaded)
				continue;
			(*images)++;
			*with_syms += im->has_syms;
		}
	}
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
	const struct sym_elf_sym *s;
	const struct sym_map *m;
	struct sym_loc dummy;

	if (!loc)
		loc = &dummy;
	loc->dso = "[unknown]";
	loc->has_off = false;
	loc->off = 0;
	/* unknown frames show the address itself, lookups use addr - 1 */
	if (ret && addr)
		look--;
	if (addr >= SYM_KERNEL_MIN)
		return sym_resolve_kernel(c, addr, look, loc);
	m = sym_space_find(sym_space(c, pid, false), look);
	if (!m)
		return sym_unknown(c, NULL, addr);
	loc->dso = m->im->path;
	if (!sym_image_bias(m->im, m->start, &bias))
		return sym_unknown(c, m->im->module, addr - m->start);
	vaddr = look - bias;
	s = sym_image_find(m->im, vaddr);
	if (!s)
		return sym_unknown(c, m->im->module, addr - bias);
	loc->has_off = true;
	loc->off = addr - bias - s->addr;
	return sym_frame_get(c, SYM_KIND_USER, m->im->module,
			     m->im->names + s->name);
}

const struct sym_frame *sym_resolve(struct sym_ctx *c, uint32_t pid,
				    uint64_t addr, bool ret)
{
	return sym_resolve_loc(c, pid, addr, ret, NULL);
}
