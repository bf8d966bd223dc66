/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rust "v0" symbol names (_R...), demangled with bounded work and output:
 * the names come from ELF files a recording names, so they are untrusted.
 */
#ifndef PMCRING_RUST_DEMANGLE_H
#define PMCRING_RUST_DEMANGLE_H

/* Longest output; a longer name is left mangled. */
#define RUST_DEMANGLE_OUT_MAX	4096

/*
 * The demangled form of the v0 name @sym (malloc'd), as rustc-demangle's
 * alternate form prints it (no crate hashes), or NULL: not a v0 name, a
 * malformed one, one using what is not supported (const generics other
 * than integers, bool and char), or one whose output or parse work
 * exceeds the bounds.  Punycode identifiers are shown as punycode{...}.
 */
char *rust_demangle_v0(const char *sym);

#endif
