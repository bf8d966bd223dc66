// SPDX-License-Identifier: GPL-2.0
/*
 * A demangler for Rust's v0 symbol names (RFC 2603, "_R" names), written
 * for untrusted input.  libiberty's rust_demangle() reads v0 too, but its
 * backreferences are followed without any bound on the output: a 240-byte
 * name of nested tuples that refer back to each other prints 400 MB and
 * takes seconds (each level doubles it), and a recording may name any ELF
 * file.  Here the output is bounded (RUST_DEMANGLE_OUT_MAX), and so are
 * the recursion depth and the number of grammar steps, which bound the
 * work even where nothing is printed.
 *
 * The printed form is rustc-demangle's alternate one ({:#}): no crate
 * disambiguators, "::<" for generic arguments of values, "<T as Trait>"
 * for trait impls, "{closure#N}" for closures.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rust_demangle.h"

/* Deeper nesting, or more grammar steps, and the name is left mangled. */
#define RDM_DEPTH_MAX	128
#define RDM_STEPS_MAX	(1u << 16)
/* Largest decimal number (identifier length) accepted in a name. */
#define RDM_NUM_MAX	(1ull << 32)

struct rdm {
	const char	*s;		/* the name after "_R" */
	size_t		n;		/* its length, before any ".suffix" */
	size_t		pos;
	unsigned int	depth;
	unsigned int	steps;
	unsigned int	quiet;		/* > 0: parse, print nothing */
	uint64_t	bound_lt;	/* lifetimes bound by enclosing for<> */
	bool		err;
	size_t		olen;
	char		out[RUST_DEMANGLE_OUT_MAX];
};

static void rdm_put(struct rdm *d, const char *str, size_t len)
{
	if (d->err || d->quiet)
		return;
	if (len >= sizeof(d->out) - d->olen) {
		d->err = true;		/* too long to be shown */
		return;
	}
	memcpy(d->out + d->olen, str, len);
	d->olen += len;
}

static void rdm_puts(struct rdm *d, const char *str)
{
	rdm_put(d, str, strlen(str));
}

static void rdm_putu(struct rdm *d, uint64_t v)
{
	char b[24];

	rdm_put(d, b, (size_t)snprintf(b, sizeof(b), "%llu",
				       (unsigned long long)v));
}

static char rdm_peek(const struct rdm *d)
{
	return !d->err && d->pos < d->n ? d->s[d->pos] : 0;
}

static bool rdm_eat(struct rdm *d, char c)
{
	if (rdm_peek(d) != c || !c)
		return false;
	d->pos++;
	return true;
}

static char rdm_next(struct rdm *d)
{
	char c = rdm_peek(d);

	if (!c)
		d->err = true;
	else
		d->pos++;
	return c;
}

/* Every production: bounds the depth and the total work. */
static bool rdm_enter(struct rdm *d)
{
	if (d->err || ++d->depth > RDM_DEPTH_MAX || ++d->steps > RDM_STEPS_MAX)
		d->err = true;
	return !d->err;
}

static void rdm_leave(struct rdm *d)
{
	d->depth--;
}

/* <base-62-number> = {0-9a-zA-Z} "_": "_" is 0, else the digits + 1. */
static uint64_t rdm_base62(struct rdm *d)
{
	uint64_t v = 0;
	char c;
	int x;

	if (rdm_eat(d, '_'))
		return 0;
	while ((c = rdm_next(d)) != '_') {
		if (c >= '0' && c <= '9')
			x = c - '0';
		else if (c >= 'a' && c <= 'z')
			x = 10 + c - 'a';
		else if (c >= 'A' && c <= 'Z')
			x = 36 + c - 'A';
		else
			x = -1;
		/* crate disambiguators are 64-bit hashes */
		if (x < 0 || v > (UINT64_MAX - 2 - (uint64_t)x) / 62) {
			d->err = true;
			return 0;
		}
		v = v * 62 + (uint64_t)x;
	}
	return d->err ? 0 : v + 1;
}

/* [tag <base-62-number>]: 0 if absent, else the number + 1. */
static uint64_t rdm_opt62(struct rdm *d, char tag)
{
	uint64_t v;

	if (!rdm_eat(d, tag))
		return 0;
	v = rdm_base62(d);
	return d->err ? 0 : v + 1;
}

/* <decimal-number>: "0" or a digit 1-9 and more digits. */
static uint64_t rdm_decimal(struct rdm *d)
{
	char c = rdm_peek(d);
	uint64_t v = 0;

	if (c < '0' || c > '9') {
		d->err = true;
		return 0;
	}
	d->pos++;
	if (c == '0')
		return 0;
	v = (uint64_t)(c - '0');
	while ((c = rdm_peek(d)) >= '0' && c <= '9') {
		d->pos++;
		v = v * 10 + (uint64_t)(c - '0');
		if (v > RDM_NUM_MAX) {
			d->err = true;
			return 0;
		}
	}
	return v;
}

struct rdm_ident {
	const char	*name;
	size_t		len;
	bool		puny;
};

/* <undisambiguated-identifier> = ["u"] <decimal-number> ["_"] <bytes> */
static struct rdm_ident rdm_ident(struct rdm *d)
{
	struct rdm_ident id = { "", 0, false };
	uint64_t len;

	id.puny = rdm_eat(d, 'u');
	len = rdm_decimal(d);
	rdm_eat(d, '_');
	if (d->err || len > d->n - d->pos) {
		d->err = true;
		return id;
	}
	id.name = d->s + d->pos;
	id.len = (size_t)len;
	d->pos += (size_t)len;
	return id;
}

static void rdm_put_ident(struct rdm *d, const struct rdm_ident *id)
{
	if (id->puny) {
		/* not decoded: shown as rustc-demangle shows what it cannot */
		rdm_puts(d, "punycode{");
		rdm_put(d, id->name, id->len);
		rdm_puts(d, "}");
	} else {
		rdm_put(d, id->name, id->len);
	}
}

static void rdm_path(struct rdm *d, bool in_value);
static void rdm_type(struct rdm *d);
static void rdm_const(struct rdm *d);

/*
 * <backref> = "B" <base-62-number>, the position (after "_R") of an
 * earlier production, which @fn parses there.  When nothing is printed,
 * only the number is read.
 */
static void rdm_backref(struct rdm *d, void (*fn)(struct rdm *, bool),
			bool arg)
{
	size_t at = d->pos - 1, save;	/* of the 'B' */
	uint64_t i = rdm_base62(d);

	if (d->err || i >= at) {
		d->err = true;
		return;
	}
	if (d->quiet)
		return;
	save = d->pos;
	d->pos = (size_t)i;
	fn(d, arg);
	d->pos = save;
}

static void rdm_type_fn(struct rdm *d, bool arg)
{
	(void)arg;
	rdm_type(d);
}

static void rdm_const_fn(struct rdm *d, bool arg)
{
	(void)arg;
	rdm_const(d);
}

/* 'a 'b ... for the lifetime of de Bruijn index @i (0: erased, '_). */
static void rdm_lifetime_idx(struct rdm *d, uint64_t i)
{
	uint64_t depth;
	char b[2] = { 0, 0 };

	if (!i) {
		rdm_puts(d, "'_");
		return;
	}
	if (i > d->bound_lt) {
		d->err = true;
		return;
	}
	depth = d->bound_lt - i;
	if (depth < 26) {
		b[0] = (char)('a' + depth);
		rdm_puts(d, "'");
		rdm_puts(d, b);
	} else {
		rdm_puts(d, "'_");
		rdm_putu(d, depth);
	}
}

/* [<binder>] = "G" <base-62-number>: "for<'a, 'b> "; how many it binds. */
static uint64_t rdm_binder(struct rdm *d)
{
	uint64_t n = rdm_opt62(d, 'G'), i;

	if (d->err || n > RDM_DEPTH_MAX) {
		d->err = true;
		return 0;
	}
	if (!n)
		return 0;
	rdm_puts(d, "for<");
	for (i = 0; i < n; i++) {
		if (i)
			rdm_puts(d, ", ");
		d->bound_lt++;
		rdm_lifetime_idx(d, 1);
	}
	rdm_puts(d, "> ");
	return n;
}

/* <generic-arg> = <lifetime> | <type> | "K" <const> */
static void rdm_generic_arg(struct rdm *d)
{
	if (rdm_eat(d, 'L'))
		rdm_lifetime_idx(d, rdm_base62(d));
	else if (rdm_eat(d, 'K'))
		rdm_const(d);
	else
		rdm_type(d);
}

/* {<generic-arg>} "E", comma separated */
static void rdm_generic_args(struct rdm *d)
{
	unsigned int i;

	for (i = 0; !d->err && !rdm_eat(d, 'E'); i++) {
		if (i)
			rdm_puts(d, ", ");
		rdm_generic_arg(d);
	}
}

/* <impl-path> = [<disambiguator>] <path>: not printed (rustc-demangle) */
static void rdm_impl_path(struct rdm *d)
{
	d->quiet++;
	rdm_opt62(d, 's');
	rdm_path(d, false);
	d->quiet--;
}

static void rdm_path(struct rdm *d, bool in_value)
{
	struct rdm_ident id;
	uint64_t dis;
	char ns, b[2] = { 0, 0 };

	if (!rdm_enter(d))
		return;
	switch (rdm_next(d)) {
	case 'C':				/* crate root */
		rdm_opt62(d, 's');
		id = rdm_ident(d);
		rdm_put_ident(d, &id);
		break;
	case 'N':				/* nested path */
		ns = rdm_next(d);
		if (!(ns >= 'a' && ns <= 'z') && !(ns >= 'A' && ns <= 'Z')) {
			d->err = true;
			break;
		}
		rdm_path(d, in_value);
		dis = rdm_opt62(d, 's');
		id = rdm_ident(d);
		if (ns >= 'a' && ns <= 'z') {
			rdm_puts(d, "::");
			rdm_put_ident(d, &id);
			break;
		}
		/* a special namespace: closures, shims */
		rdm_puts(d, "::{");
		if (ns == 'C') {
			rdm_puts(d, "closure");
		} else if (ns == 'S') {
			rdm_puts(d, "shim");
		} else {
			b[0] = ns;
			rdm_puts(d, b);
		}
		if (id.len) {
			rdm_puts(d, ":");
			rdm_put_ident(d, &id);
		}
		rdm_puts(d, "#");
		rdm_putu(d, dis);
		rdm_puts(d, "}");
		break;
	case 'M':				/* <T> */
		rdm_impl_path(d);
		rdm_puts(d, "<");
		rdm_type(d);
		rdm_puts(d, ">");
		break;
	case 'X':				/* <T as Trait> */
		rdm_impl_path(d);
		/* fall through */
	case 'Y':
		rdm_puts(d, "<");
		rdm_type(d);
		rdm_puts(d, " as ");
		rdm_path(d, false);
		rdm_puts(d, ">");
		break;
	case 'I':				/* generic arguments */
		rdm_path(d, in_value);
		rdm_puts(d, in_value ? "::<" : "<");
		rdm_generic_args(d);
		rdm_puts(d, ">");
		break;
	case 'B':
		rdm_backref(d, rdm_path, in_value);
		break;
	default:
		d->err = true;
		break;
	}
	rdm_leave(d);
}

/* The printed name of basic type @c, or NULL. */
static const char *rdm_basic(char c)
{
	switch (c) {
	case 'a': return "i8";
	case 'b': return "bool";
	case 'c': return "char";
	case 'd': return "f64";
	case 'e': return "str";
	case 'f': return "f32";
	case 'h': return "u8";
	case 'i': return "isize";
	case 'j': return "usize";
	case 'l': return "i32";
	case 'm': return "u32";
	case 'n': return "i128";
	case 'o': return "u128";
	case 's': return "i16";
	case 't': return "u16";
	case 'u': return "()";
	case 'v': return "...";
	case 'x': return "i64";
	case 'y': return "u64";
	case 'z': return "!";
	case 'p': return "_";
	default: return NULL;
	}
}

/*
 * A trait's path with its generic arguments left open ("Trait<A"), for
 * the associated type bindings of a dyn type; true if left open.
 */
static bool rdm_path_open(struct rdm *d)
{
	size_t save;
	uint64_t i;
	bool open;

	if (rdm_eat(d, 'B')) {
		size_t at = d->pos - 1;

		i = rdm_base62(d);
		if (d->err || i >= at || !rdm_enter(d)) {
			d->err = true;
			return false;
		}
		save = d->pos;
		d->pos = (size_t)i;
		open = rdm_path_open(d);
		d->pos = save;
		rdm_leave(d);
		return open;
	}
	if (rdm_eat(d, 'I')) {
		rdm_path(d, false);
		rdm_puts(d, "<");
		rdm_generic_args(d);
		return true;
	}
	rdm_path(d, false);
	return false;
}

/* <dyn-trait> = <path> {"p" <undisambiguated-identifier> <type>} */
static void rdm_dyn_trait(struct rdm *d)
{
	struct rdm_ident id;
	bool open = rdm_path_open(d);

	while (!d->err && rdm_eat(d, 'p')) {
		rdm_puts(d, open ? ", " : "<");
		open = true;
		id = rdm_ident(d);
		rdm_put_ident(d, &id);
		rdm_puts(d, " = ");
		rdm_type(d);
	}
	if (open)
		rdm_puts(d, ">");
}

/* fn(A, B) -> R, after "F" */
static void rdm_fn_sig(struct rdm *d)
{
	uint64_t bound = rdm_binder(d);
	struct rdm_ident abi;
	unsigned int i;
	size_t k;

	if (rdm_eat(d, 'U'))
		rdm_puts(d, "unsafe ");
	if (rdm_eat(d, 'K')) {
		rdm_puts(d, "extern \"");
		if (rdm_eat(d, 'C')) {
			rdm_puts(d, "C");
		} else {
			abi = rdm_ident(d);
			if (abi.puny)
				d->err = true;
			for (k = 0; k < abi.len && !d->err; k++)
				rdm_put(d, abi.name[k] == '_' ? "-" : abi.name + k,
					1);
		}
		rdm_puts(d, "\" ");
	}
	rdm_puts(d, "fn(");
	for (i = 0; !d->err && !rdm_eat(d, 'E'); i++) {
		if (i)
			rdm_puts(d, ", ");
		rdm_type(d);
	}
	rdm_puts(d, ")");
	if (!rdm_eat(d, 'u')) {
		rdm_puts(d, " -> ");
		rdm_type(d);
	}
	d->bound_lt -= bound;
}

/* dyn A + B + 'a, after "D" */
static void rdm_dyn(struct rdm *d)
{
	uint64_t bound, lt;
	unsigned int i;

	rdm_puts(d, "dyn ");
	bound = rdm_binder(d);		/* binds in the traits only */
	for (i = 0; !d->err && !rdm_eat(d, 'E'); i++) {
		if (i)
			rdm_puts(d, " + ");
		rdm_dyn_trait(d);
	}
	d->bound_lt -= bound;
	if (!rdm_eat(d, 'L')) {
		d->err = true;
	} else {
		lt = rdm_base62(d);
		if (lt) {
			rdm_puts(d, " + ");
			rdm_lifetime_idx(d, lt);
		}
	}
}

static void rdm_type(struct rdm *d)
{
	const char *basic;
	unsigned int i;
	uint64_t lt;
	char c;

	if (!rdm_enter(d))
		return;
	c = rdm_peek(d);
	basic = rdm_basic(c);
	if (basic) {
		d->pos++;
		rdm_puts(d, basic);
		rdm_leave(d);
		return;
	}
	switch (c) {
	case 'C': case 'M': case 'X': case 'Y': case 'N': case 'I':
		rdm_path(d, false);
		break;
	case 'R':
	case 'Q':
		d->pos++;
		rdm_puts(d, "&");
		if (rdm_eat(d, 'L')) {
			lt = rdm_base62(d);
			if (lt) {
				rdm_lifetime_idx(d, lt);
				rdm_puts(d, " ");
			}
		}
		if (c == 'Q')
			rdm_puts(d, "mut ");
		rdm_type(d);
		break;
	case 'P':
	case 'O':
		d->pos++;
		rdm_puts(d, c == 'P' ? "*const " : "*mut ");
		rdm_type(d);
		break;
	case 'A':
	case 'S':
		d->pos++;
		rdm_puts(d, "[");
		rdm_type(d);
		if (c == 'A') {
			rdm_puts(d, "; ");
			rdm_const(d);
		}
		rdm_puts(d, "]");
		break;
	case 'T':
		d->pos++;
		rdm_puts(d, "(");
		for (i = 0; !d->err && !rdm_eat(d, 'E'); i++) {
			if (i)
				rdm_puts(d, ", ");
			rdm_type(d);
		}
		rdm_puts(d, i == 1 ? ",)" : ")");
		break;
	case 'F':
		d->pos++;
		rdm_fn_sig(d);
		break;
	case 'D':
		d->pos++;
		rdm_dyn(d);
		break;
	case 'B':
		d->pos++;
		rdm_backref(d, rdm_type_fn, false);
		break;
	default:
		d->err = true;
		break;
	}
	rdm_leave(d);
}

/* <const-data> = ["n"] {<hex-digit>} "_" of an integer, bool or char. */
static void rdm_const_data(struct rdm *d, char ty)
{
	bool neg = ty != 'b' && ty != 'c' && rdm_eat(d, 'n');
	size_t start = d->pos, nd;
	uint64_t v = 0;
	char c, b[16];

	while ((c = rdm_next(d)) != '_' && !d->err) {
		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) {
			d->err = true;
			return;
		}
		v = (v << 4) | (uint64_t)(c <= '9' ? c - '0' : 10 + c - 'a');
	}
	if (d->err)
		return;
	nd = d->pos - 1 - start;
	while (nd && d->s[start] == '0') {	/* leading zeros */
		start++;
		nd--;
	}
	if (ty == 'b') {
		if (nd > 1 || v > 1)
			d->err = true;
		else
			rdm_puts(d, v ? "true" : "false");
		return;
	}
	if (ty == 'c') {
		if (nd > 6 || v > 0x10ffff || (v >= 0xd800 && v < 0xe000)) {
			d->err = true;
		} else if (v >= 0x20 && v < 0x7f && v != '\'' && v != '\\') {
			b[0] = '\'';
			b[1] = (char)v;
			b[2] = '\'';
			rdm_put(d, b, 3);
		} else if (v && v < 0x80 && strchr("\t\n\r'\\", (int)v)) {
			/* Rust's char::escape_debug */
			rdm_puts(d, v == '\t' ? "'\\t'" : v == '\n' ? "'\\n'" :
				    v == '\r' ? "'\\r'" : v == '\'' ? "'\\''" :
				    "'\\\\'");
		} else if (!v) {
			rdm_puts(d, "'\\0'");
		} else {
			rdm_put(d, b, (size_t)snprintf(b, sizeof(b), "'\\u{%x}'",
						       (unsigned int)v));
		}
		return;
	}
	if (neg)
		rdm_puts(d, "-");
	if (nd <= 16) {
		rdm_putu(d, v);
	} else {				/* wider than 64 bits */
		rdm_puts(d, "0x");
		rdm_put(d, d->s + start, nd);
	}
}

/* <const> = <type> <const-data> | "p" | <backref> */
static void rdm_const(struct rdm *d)
{
	char c;

	if (!rdm_enter(d))
		return;
	c = rdm_next(d);
	switch (c) {
	case 'p':
		rdm_puts(d, "_");
		break;
	case 'B':
		rdm_backref(d, rdm_const_fn, false);
		break;
	case 'a': case 'h': case 'i': case 'j': case 'l': case 'm':
	case 'n': case 'o': case 's': case 't': case 'x': case 'y':
	case 'b': case 'c':
		rdm_const_data(d, c);
		break;
	default:		/* str, references, ADTs: not supported */
		d->err = true;
		break;
	}
	rdm_leave(d);
}

char *rust_demangle_v0(const char *sym)
{
	struct rdm *d;
	char *r = NULL;
	size_t i;

	if (strncmp(sym, "_R", 2))
		return NULL;
	d = calloc(1, sizeof(*d));
	if (!d)
		return NULL;
	d->s = sym + 2;
	/* a vendor suffix (".llvm.123") is not part of the name */
	d->n = strcspn(d->s, ".");
	for (i = 0; i < d->n; i++) {
		char c = d->s[i];

		if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') ||
		      (c >= 'A' && c <= 'Z') || c == '_'))
			goto out;
	}
	/* an encoding version other than the implicit 0 */
	if (d->n && d->s[0] >= '0' && d->s[0] <= '9')
		goto out;
	rdm_path(d, true);
	if (d->pos < d->n) {			/* the instantiating crate */
		d->quiet++;
		rdm_path(d, false);
		d->quiet--;
	}
	if (d->err || d->pos != d->n)
		goto out;
	r = strndup(d->out, d->olen);
out:
	free(d);
	return r;
}
