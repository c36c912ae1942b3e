/* SPDX-License-Identifier: MIT */
/*
 * perfmap.h - a JIT's perf map (/tmp/perf-PID.map): names for code no ELF
 * file describes.
 */
#ifndef FR_PERFMAP_H
#define FR_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A JIT perf map: /tmp/perf-PID.map, lines "START SIZE name" in hex. */
struct perfmap;

/*
 * perfmap__parse() - parse @len bytes of perf map text. Malformed lines
 * and zero sizes are ignored; when several entries start at one address
 * the last line wins. Returns NULL with errno set.
 */
struct perfmap *perfmap__parse(const char *buf, size_t len);

/*
 * perfmap__load_fd() - read the perf map open at @fd (at most
 * FR_PERFMAP_MAX_BYTES, until CLOCK_BOOTTIME @deadline_ns; 0: none) and
 * parse it. Returns NULL with errno set: EFBIG, ETIMEDOUT, ...
 */
struct perfmap *perfmap__load_fd(int fd, uint64_t deadline_ns);

/*
 * perfmap__load() - perfmap__load_fd() on @path, opened as an untrusted
 * file with no owner rule (see untrusted.h). Returns NULL with errno set.
 */
struct perfmap *perfmap__load(const char *path);

/*
 * perfmap__lookup() - the entry with start <= @addr < start + size, or
 * NULL; the offset into it goes to *@sym_off if not NULL.
 */
const char *perfmap__lookup(const struct perfmap *p, uint64_t addr,
			    uint64_t *sym_off);

void perfmap__free(struct perfmap *p);

#endif
