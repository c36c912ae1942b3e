/* SPDX-License-Identifier: MIT */
/*
 * kallsyms.h - the kernel's text symbols, loaded from /proc/kallsyms.
 */
#ifndef FR_KALLSYMS_H
#define FR_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Text symbols of /proc/kallsyms. */
struct kallsyms;

/*
 * kallsyms__load() - load the text symbols (types t, T, w, W) of a file in
 * the /proc/kallsyms format, keeping the [module] name. Symbols extend to
 * the next one; the last symbol of the kernel or of a module extends at
 * most FR_KSYM_TAIL bytes. Returns NULL with errno set; EPERM when every
 * address reads as zero (kptr_restrict or no privilege).
 */
#define FR_KSYM_TAIL 0x10000
struct kallsyms *kallsyms__load(const char *path);

/*
 * kallsyms__lookup() - the text symbol containing @addr, or NULL. Stores the
 * offset into it in *@sym_off and its module name (NULL for the core
 * kernel) in *@module, each if not NULL.
 */
const char *kallsyms__lookup(const struct kallsyms *k, uint64_t addr,
			     uint64_t *sym_off, const char **module);

/* kallsyms__count() - the number of text symbols loaded. */
size_t kallsyms__count(const struct kallsyms *k);

void kallsyms__free(struct kallsyms *k);

#endif
