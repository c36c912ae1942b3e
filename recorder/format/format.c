// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * format.c - the dump's model (format.h): what the writer is given and the
 * reader fills. The bytes are format_write.c's and format_read.c's; see
 * docs/FORMAT.md.
 */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "format.h"
#include "util.h"

void dump__init(struct fr_dump *d)
{
	memset(d, 0, sizeof(*d));
}

void dump__free(struct fr_dump *d)
{
	if (!d)
		return;
	kvlist__free(&d->meta);
	kvlist__free(&d->loss);
	for (uint32_t i = 0; i < d->ntrig; i++) {
		free(d->trig[i].name);
		free(d->trig[i].type);
		free(d->trig[i].reason);
		free(d->trig[i].detail);
	}
	free(d->trig);
	for (uint32_t i = 0; i < d->nstr; i++)
		free(d->str[i]);
	free(d->str);
	free(d->str_len);
	free(d->proc);
	free(d->bin);
	free(d->frame);
	free(d->line);
	for (uint32_t i = 0; i < d->nstack; i++)
		free(d->stack[i].frames);
	free(d->stack);
	free(d->thread);
	free(d->ev);
	free(d->arena);
	memset(d, 0, sizeof(*d));
}

const char *dump__str(const struct fr_dump *d, uint32_t idx)
{
	return idx < d->nstr ? d->str[idx] : "";
}

const char *dump__meta_str(const struct fr_dump *d, const char *key)
{
	const struct fr_kv *kv = kvlist__find(&d->meta, key);

	return kv && kv->type == FR_KV_STR ? kv->s : "";
}

uint64_t dump__meta_u64(const struct fr_dump *d, const char *key)
{
	const struct fr_kv *kv = kvlist__find(&d->meta, key);

	return kv && kv->type == FR_KV_UINT ? kv->u : 0;
}

const char *dump__rss_member_name(unsigned m)
{
	static const char *const names[FR_DRSS_NMEMBERS] = {
		[FR_DRSS_FILE] = "file", [FR_DRSS_ANON] = "anon",
		[FR_DRSS_SWAP] = "swap", [FR_DRSS_SHMEM] = "shmem",
	};

	return m < FR_DRSS_NMEMBERS ? names[m] : "?";
}

const char *dump__rss_why_name(unsigned w)
{
	static const char *const names[FR_DRSS_NWHY] = {
		[FR_DRSS_STEP] = "step", [FR_DRSS_AGE] = "age",
		[FR_DRSS_FIRST] = "first", [FR_DRSS_EXIT] = "exit",
	};

	return w < FR_DRSS_NWHY ? names[w] : "?";
}

static const char *const stall_kind_names[FR_DSTALL_NKINDS] = {
	[FR_DSTALL_RECLAIM] = "reclaim", [FR_DSTALL_MEMCG] = "memcg",
	[FR_DSTALL_COMPACT] = "compaction", [FR_DSTALL_THROTTLE] = "throttle",
	[FR_DSTALL_BLOCKED] = "blocked", [FR_DSTALL_SLEEP] = "sleep",
};

const char *dump__stall_kind_name(unsigned k)
{
	return k < FR_DSTALL_NKINDS ? stall_kind_names[k] : "?";
}

int dump__stall_kind_by_name(const char *name)
{
	for (int k = 0; k < FR_DSTALL_NKINDS; k++)
		if (!strcmp(name, stall_kind_names[k]))
			return k;
	return -1;
}

const char *dump__memsys_field_name(unsigned f)
{
	static const char *const names[FR_MSYS_NFIELDS] = {
		[FR_MSYS_MEM_TOTAL] = "MemTotal", [FR_MSYS_MEM_AVAILABLE] = "MemAvailable",
		[FR_MSYS_MEM_FREE] = "MemFree", [FR_MSYS_SWAP_TOTAL] = "SwapTotal",
		[FR_MSYS_SWAP_FREE] = "SwapFree",
		[FR_MSYS_PGSCAN_KSWAPD] = "pgscan_kswapd", [FR_MSYS_PGSCAN_DIRECT] = "pgscan_direct",
		[FR_MSYS_PGSTEAL_KSWAPD] = "pgsteal_kswapd", [FR_MSYS_PGSTEAL_DIRECT] = "pgsteal_direct",
		[FR_MSYS_ALLOCSTALL] = "allocstall", [FR_MSYS_REFAULT_ANON] = "workingset_refault_anon",
		[FR_MSYS_REFAULT_FILE] = "workingset_refault_file", [FR_MSYS_PSWPIN] = "pswpin",
		[FR_MSYS_PSWPOUT] = "pswpout", [FR_MSYS_OOM_KILL] = "oom_kill",
	};

	return f < FR_MSYS_NFIELDS ? names[f] : "?";
}

const char *dump__uend_name(unsigned uend)
{
	static const char *const names[FR_DUEND_NR] = {
		[FR_DUEND_NONE] = "none", [FR_DUEND_OUTERMOST] = "outermost",
		[FR_DUEND_NO_INFO] = "no_info", [FR_DUEND_READ] = "read_error",
		[FR_DUEND_DEPTH] = "depth", [FR_DUEND_NO_TABLE] = "no_table",
		[FR_DUEND_BAD_PC] = "bad_pc", [FR_DUEND_INVALID] = "invalid",
	};

	return uend < FR_ARRAY_SIZE(names) && names[uend] ? names[uend] : "none";
}
