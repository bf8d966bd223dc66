// SPDX-License-Identifier: GPL-2.0
/*
 * Description: Rust v0 names (_R...).  rust_demangle_v0() on names built
 * by hand from the v0 grammar (RFC 2603), one per production, with the
 * names rustc-demangle's alternate form prints (libiberty's rust_demangle
 * printed the same for each when they were written); malformed and
 * truncated names left mangled; a name whose back references double its
 * output at each level left mangled at once.  Then a Rust program built
 * here with -C symbol-mangling-version=v0: its method's name through the
 * symbolizer and `report --folded`.
 */
#include <time.h>
#include "test_report_common.h"
#include "../pmcring/report/rust_demangle.h"
#include "../pmcring/report/sym.h"

static const struct {
	const char *sym, *want;
} vec[] = {
	/* crate root, nested paths */
	{ "_RNvCs1234_7mycrate3foo", "mycrate::foo" },
	{ "_RNvNtCs1234_7mycrate3bar3foo", "mycrate::bar::foo" },
	/* closures: special namespace C, disambiguator s_ = 1 */
	{ "_RNCNvCsgStHSCytQ6I_7mycrate4main0B3_",
	  "mycrate::main::{closure#0}" },
	{ "_RNCNvCsgStHSCytQ6I_7mycrate4mains_0B3_",
	  "mycrate::main::{closure#1}" },
	/* generic arguments of a value (::<) and a back reference */
	{ "_RINvCs1234_7mycrate3fooNtB2_3BarE", "mycrate::foo::<mycrate::Bar>" },
	{ "_RINvCs1234_7mycrate3fooRL_eE", "mycrate::foo::<&str>" },
	/* trait impl, trait definition */
	{ "_RNvXs_Cs4Cv8Wi1oAIB_7mycrateINtB4_3FooeENtB4_3Bar3foo",
	  "<mycrate::Foo<str> as mycrate::Bar>::foo" },
	{ "_RNvYpNtCs1234_7mycrate3Bar3foo", "<_ as mycrate::Bar>::foo" },
	/* arrays and const generics */
	{ "_RINvCs1234_7mycrate3fooAhj4_E", "mycrate::foo::<[u8; 4]>" },
	{ "_RINvCs1234_7mycrate3fooKj2a_E", "mycrate::foo::<42>" },
	{ "_RINvCs1234_7mycrate3fooKanb_E", "mycrate::foo::<-11>" },
	{ "_RINvCs1234_7mycrate3fooKb1_E", "mycrate::foo::<true>" },
	{ "_RINvCs1234_7mycrate3fooKc61_E", "mycrate::foo::<'a'>" },
	/* chars as Rust's escape_debug shows them (libiberty: ''') */
	{ "_RINvC1a1fKca_E", "a::f::<'\\n'>" },
	{ "_RINvC1a1fKc27_E", "a::f::<'\\''>" },
	{ "_RINvC1a1fKc10a_E", "a::f::<'\\u{10a}'>" },
	{ "_RINvCs1234_7mycrate3fooKpE", "mycrate::foo::<_>" },
	/* function pointers, binders */
	{ "_RINvCs1234_7mycrate3fooFEuE", "mycrate::foo::<fn()>" },
	{ "_RINvCs1234_7mycrate3fooFUKCjEuE",
	  "mycrate::foo::<unsafe extern \"C\" fn(usize)>" },
	{ "_RINvCs1234_7mycrate3fooFG_RL0_hEuE",
	  "mycrate::foo::<for<'a> fn(&'a u8)>" },
	/* tuples (one element: a trailing comma), pointers, slices */
	{ "_RINvCs1234_7mycrate3fooTyxEE", "mycrate::foo::<(u64, i64)>" },
	{ "_RINvCs1234_7mycrate3fooThEE", "mycrate::foo::<(u8,)>" },
	{ "_RINvCs1234_7mycrate3fooTEE", "mycrate::foo::<()>" },
	{ "_RINvCs1234_7mycrate3fooPhOhSbE",
	  "mycrate::foo::<*const u8, *mut u8, [bool]>" },
	{ "_RINvCs1234_7mycrate3fooQhzE", "mycrate::foo::<&mut u8, !>" },
	/* dyn traits with a binder and an associated type */
	{ "_RINvCs1234_7mycrate3fooDNtB2_3BarEL_E",
	  "mycrate::foo::<dyn mycrate::Bar>" },
	{ "_RINvCs1234_7mycrate3fooDG_INtB2_3BarRL0_hEp4ItemRL0_tEL_E",
	  "mycrate::foo::<dyn for<'a> mycrate::Bar<&'a u8, Item = &'a u16>>" },
	/* a vendor suffix is not part of the name */
	{ "_RNvNtCs1234_7mycrate3foo3bar.llvm.1234", "mycrate::foo::bar" },
	/* an inherent impl, with the instantiating crate at the end */
	{ "_RNvMNtCs6xObwDLdFGl_1m4pmcrINtB2_6WidgetmE4spinB4_",
	  "<m::pmcr::Widget<u32>>::spin" },
	/* from Rust 1.95's standard library */
	{ "_RINvNtCsgEmfK2I1SDS_4core3ptr13drop_in_placeINtNtCslNYArtu3iFV_5"
	  "alloc5boxed3BoxDG0_INtNtNtB4_3ops8function2FnTRL1_INtNtCsjrHSEGnQ3"
	  "l9_3std5panic13PanicHookInfoL0_EEEp6OutputuNtNtB4_6marker4SyncNtB2"
	  "N_4SendEL_EEB1T_",
	  "core::ptr::drop_in_place::<alloc::boxed::Box<dyn for<'a, 'b> "
	  "core::ops::function::Fn<(&'a std::panic::PanicHookInfo<'b>,), "
	  "Output = ()> + core::marker::Sync + core::marker::Send>>" },
	/* not decoded, shown as rustc-demangle shows what it cannot */
	{ "_RNvCs1234_7mycrateu7gdaxfoo", "mycrate::punycode{gdaxfoo}" },
};

static const char *const bad[] = {
	"_R", "_RC", "_RNvB_3foo",		/* a back reference to itself */
	"_R0C3foo",				/* encoding version 0 spelled */
	"_RNvCs1234_7mycrate3fo",		/* identifier past the end */
	"_RNvCs1234_7mycrate3foo9BadSuffix",	/* trailing bytes */
	"_RNvCs1234_7mycrate3fo$o",		/* not a v0 character */
	"_RINvCs1234_7mycrate3fooKe616263_E",	/* str const: not read */
	"_RINvCs1234_7mycrate3fooFG_RL1_hEuE",	/* lifetime not bound */
	"_RINvCs1234_7mycrate3fooKb2_E",	/* bool 2 */
	"_ZN3foo3barE",
};

static void check_vectors(void)
{
	char buf[1024];
	size_t i, k;
	char *d;

	for (i = 0; i < sizeof(vec) / sizeof(vec[0]); i++) {
		d = rust_demangle_v0(vec[i].sym);
		CHECK(d && !strcmp(d, vec[i].want), "%s: %s, not %s",
		      vec[i].sym, d ? d : "NULL", vec[i].want);
		free(d);
		/* every truncation: no crash, no overread (ASan) */
		for (k = 0; k < strlen(vec[i].sym); k++) {
			snprintf(buf, sizeof(buf), "%.*s", (int)k, vec[i].sym);
			free(rust_demangle_v0(buf));
		}
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		d = rust_demangle_v0(bad[i]);
		CHECK(!d, "%s: %s, not left mangled", bad[i], d);
		free(d);
	}
}

/* base-62 number of @n as v0 writes it ("_" for 0) */
static int b62(char *o, uint64_t n)
{
	static const char dig[] = "0123456789abcdefghijklmnopqrstuvwxyz"
				  "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
	char t[16];
	int k = 0, i;

	if (n) {
		for (n--; ; n /= 62) {
			t[k++] = dig[n % 62];
			if (n < 62)
				break;
		}
	}
	for (i = 0; i < k; i++)
		o[i] = t[k - 1 - i];
	o[k] = '_';
	return k + 1;
}

/*
 * mycrate::f::<T_0, ..., T_L> where T_0 = ((), ()) and T_k = (T_k-1,
 * T_k-1), each T_k-1 a back reference: 2^L bytes of output from about
 * 8 L bytes of input.
 */
static char *bomb(unsigned int levels)
{
	char *s = malloc(32 + 16 * levels), *p;
	size_t prev, cur;
	unsigned int i;

	REQUIRE(s, "malloc");
	p = s + sprintf(s, "_RINvC7mycrate1f");
	prev = (size_t)(p - s) - 2;		/* positions count after _R */
	p += sprintf(p, "TuuE");
	for (i = 0; i < levels; i++) {
		cur = (size_t)(p - s) - 2;
		*p++ = 'T';
		*p++ = 'B';
		p += b62(p, prev);
		*p++ = 'B';
		p += b62(p, prev);
		*p++ = 'E';
		prev = cur;
	}
	strcpy(p, "E");
	return s;
}

static void check_bomb(void)
{
	struct timespec t0, t1;
	char *s, *d;
	double ms;

	/*
	 * 4 levels: T_0..T_4 of 8, 20, 44, 92, 188 bytes (each twice the
	 * last and "(, )"), ", " between them, in "mycrate::f::<...>".
	 */
	s = bomb(4);
	d = rust_demangle_v0(s);
	CHECK(d && !strncmp(d, "mycrate::f::<((), ()), (((), ()), ((), ())), "
			    "((((), ())", 55) && strlen(d) == 13 + 352 + 8 + 1,
	      "%s: %s", s, d ? d : "NULL");
	free(d);
	free(s);
	s = bomb(60);		/* 2^60 bytes */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	d = rust_demangle_v0(s);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (t1.tv_sec - t0.tv_sec) * 1e3 + (t1.tv_nsec - t0.tv_nsec) / 1e6;
	CHECK(!d, "exponential name demangled: %.60s...", d);
	/* bounded work: 64 Ki steps, well under a second even under ASan */
	CHECK(ms < 1000, "exponential name took %.0f ms", ms);
	printf("# 2^60-byte name left mangled in %.2f ms\n", ms);
	free(d);
	free(s);
}

static const char rust_src[] =
	"pub mod pmcr {\n"
	"    pub struct Widget<T>(pub T);\n"
	"    impl<T: Copy + Into<u64>> Widget<T> {\n"
	"        #[inline(never)]\n"
	"        pub fn spin(&self, n: u64) -> u64 {\n"
	"            let mut s = 0u64;\n"
	"            for i in 0..n {\n"
	"                s = s.wrapping_add(i * self.0.into()) ^ (s >> 3);\n"
	"            }\n"
	"            s\n"
	"        }\n"
	"    }\n"
	"}\n"
	"fn main() {\n"
	"    let w = pmcr::Widget(3u32);\n"
	"    let n = std::env::args().count() as u64 * 100;\n"
	"    std::process::exit((w.spin(n) & 1) as i32);\n"
	"}\n";

#define SPIN	"<m::pmcr::Widget<u32>>::spin"

/* A program built with v0 names: its method by name, in a report. */
static void check_rustc(void)
{
	char dir[] = "/tmp/test_report_rustXXXXXX", cmd[4096], line[1024];
	char src[512], exe[512], log[512], mangled[512];
	unsigned long long addr = 0;
	struct sym_ctx *c;
	struct sym_image *im;
	static struct plog p;
	uint64_t bias, start, pc[1];
	const char *name;
	char *out;
	FILE *f;
	int rc;

	REQUIRE(mkdtemp(dir), "mkdtemp");
	snprintf(src, sizeof(src), "%s/m.rs", dir);
	snprintf(exe, sizeof(exe), "%s/m", dir);
	write_file(src, rust_src, strlen(rust_src));
	snprintf(cmd, sizeof(cmd), "rustc -C symbol-mangling-version=v0 -O "
		 "--crate-name m -o %s %s", exe, src);
	REQUIRE(!system(cmd), "%s", cmd);
	snprintf(cmd, sizeof(cmd), "nm %s | grep ' _R.*4spin'", exe);
	f = popen(cmd, "r");
	REQUIRE(f, "%s", cmd);
	line[0] = 0;
	if (!fgets(line, sizeof(line), f))
		line[0] = 0;
	pclose(f);
	REQUIRE(sscanf(line, "%llx %*s %511s", &addr, mangled) == 2,
		"no v0 symbol of spin in %s: '%s'", exe, line);
	printf("# rustc: %s\n", mangled);

	c = sym_new();
	REQUIRE(c && (im = sym_image_get(c, exe)), "image");
	name = sym_image_lookup(im, addr);
	CHECK(name && !strcmp(name, SPIN), "%s: %s", mangled,
	      name ? name : "NULL");
	REQUIRE(sym_image_bias(im, 0x100000, &bias), "no PF_X segment");
	start = 0x555555000000ull + (0x100000 - bias);
	sym_free(c);

	/* one process, every sample in spin() */
	snprintf(log, sizeof(log), "%s/rust.pmclog", dir);
	pc[0] = 0x555555000000ull + addr + 1;
	p.len = 0;
	p.ts = 1000;
	plog_initialize(&p);
	plog_pmc(&p, 1, "cpu-clock");
	plog_proc_create(&p, 42, "m");
	plog_map_in(&p, 42, start, exe);
	plog_callchain(&p, 42, 42, 0, pc, 1);
	plog_closelog(&p);
	write_file(log, p.b, p.len);
	out = run_report(&rc, "--folded", log, NULL);
	CHECK(rc == 0 && strstr(out, "m;" SPIN " 1\n"), "folded:\n%s", out);
	free(out);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	REQUIRE(!system(cmd), "%s", cmd);
}

int main(void)
{
	check_vectors();
	check_bomb();
	if (system("rustc --version >/dev/null 2>&1")) {
		/* make deps installs it: missing in CI is a failure */
		CHECK(!getenv("CI"), "no rustc in CI");
		printf("no rustc (make deps installs it) to build the Rust "
		       "test program\n");
		return t_failed ? 1 : 4;
	}
	check_rustc();
	if (!t_failed)
		printf("ok: Rust v0 names\n");
	return t_failed;
}
