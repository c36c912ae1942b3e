// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * meminfo.c - /proc/meminfo and /proc/vmstat into struct fr_dump_memsys.
 * Two flat "key value" files: parsed by hand, line by line.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "meminfo.h"

static ssize_t slurp(const char *path, char *buf, size_t cap)
{
	ssize_t n, got = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	while ((size_t)got < cap - 1 && (n = read(fd, buf + got, cap - 1 - got)) > 0)
		got += n;
	close(fd);
	buf[got] = 0;
	return got;
}

/* Keys of /proc/meminfo ("MemAvailable:   123 kB") we keep, in bytes. */
static const struct { const char *key; int field; } meminfo_keys[] = {
	{ "MemTotal:", FR_MSYS_MEM_TOTAL }, { "MemAvailable:", FR_MSYS_MEM_AVAILABLE },
	{ "MemFree:", FR_MSYS_MEM_FREE }, { "SwapTotal:", FR_MSYS_SWAP_TOTAL },
	{ "SwapFree:", FR_MSYS_SWAP_FREE },
};

/* Keys of /proc/vmstat; a key ending in '_' sums every key it begins (allocstall_*). */
static const struct { const char *key; int field; } vmstat_keys[] = {
	{ "pgscan_kswapd", FR_MSYS_PGSCAN_KSWAPD }, { "pgscan_direct", FR_MSYS_PGSCAN_DIRECT },
	{ "pgsteal_kswapd", FR_MSYS_PGSTEAL_KSWAPD }, { "pgsteal_direct", FR_MSYS_PGSTEAL_DIRECT },
	{ "allocstall_", FR_MSYS_ALLOCSTALL },
	{ "workingset_refault_anon", FR_MSYS_REFAULT_ANON },
	{ "workingset_refault_file", FR_MSYS_REFAULT_FILE },
	{ "pswpin", FR_MSYS_PSWPIN }, { "pswpout", FR_MSYS_PSWPOUT },
	{ "oom_kill", FR_MSYS_OOM_KILL },
};

static void parse_vmstat(const char *text, struct fr_dump_memsys *out)
{
	for (const char *l = text; *l;) {
		const char *sp = strchr(l, ' '), *nl = strchrnul(l, '\n');

		if (sp && sp < nl) {
			size_t kl = sp - l;

			for (size_t i = 0; i < sizeof(vmstat_keys) / sizeof(vmstat_keys[0]); i++) {
				const char *k = vmstat_keys[i].key;
				size_t n = strlen(k);
				bool prefix = k[n - 1] == '_';

				if (prefix ? (kl > n && !memcmp(l, k, n)) : (kl == n && !memcmp(l, k, n)))
					out->v[vmstat_keys[i].field] += strtoull(sp + 1, NULL, 10);
			}
		}
		l = *nl ? nl + 1 : nl;
	}
}

int meminfo__read(struct fr_dump_memsys *out)
{
	char text[16384];
	ssize_t n;

	memset(out, 0, sizeof(*out));
	n = slurp("/proc/meminfo", text, sizeof(text));
	if (n < 0)
		return (int)n;
	for (size_t i = 0; i < sizeof(meminfo_keys) / sizeof(meminfo_keys[0]); i++) {
		const char *p = strstr(text, meminfo_keys[i].key);

		if (p && (p == text || p[-1] == '\n'))
			out->v[meminfo_keys[i].field] =
				strtoull(p + strlen(meminfo_keys[i].key), NULL, 10) * 1024;
	}
	if (slurp("/proc/vmstat", text, sizeof(text)) > 0)
		parse_vmstat(text, out);
	return 0;
}
