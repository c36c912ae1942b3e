/* SPDX-License-Identifier: MIT */
/*
 * demangle.h - readable names for C++ and Rust symbols.
 *
 * The demangling itself is libiberty's, the demangler binutils, gdb and
 * perf use: Itanium C++ ("_Z..."), legacy Rust ("_ZN...17h<16 hex>E", the
 * hash dropped) and Rust v0 ("_R..."). Names are demangled once, when a
 * binary's symbols are loaded; nothing here keeps state, so any thread may
 * call it.
 */
#ifndef FR_DEMANGLE_H
#define FR_DEMANGLE_H

#include <stdbool.h>
#include <stddef.h>

/* Longest mangled name handed to the demangler; longer ones stay as they are. */
#define FR_DEMANGLE_INPUT_MAX	4096

/*
 * demangle__is_mangled() - whether @name has the prefix of a C++ or Rust
 * mangled name ("_Z" or "_R"); it may still fail to demangle.
 */
bool demangle__is_mangled(const char *name);

/*
 * demangle__name() - demangle @name into @buf of @size bytes (at least 1),
 * always NUL-terminated; a demangled name longer than @size - 1 bytes is
 * cut there. Rust is tried first: a legacy Rust name is also a valid C++
 * one. Returns 0, -EINVAL if @name is not a mangled name the demangler
 * accepts (then @buf holds ""), -ENAMETOOLONG if @name is longer than
 * FR_DEMANGLE_INPUT_MAX.
 */
int demangle__name(const char *name, char *buf, size_t size);

#endif /* FR_DEMANGLE_H */
