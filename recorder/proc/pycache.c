// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * pycache.c - the names of Python code objects, read from live processes
 * (pycode.c) and kept by incarnation, address and fingerprint under a
 * budget. See pycode.h.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "hashmap.h"
#include "procstat.h"
#include "pycode.h"
#include "tables.h"
#include "util.h"

struct pykey {
	uint64_t start, code;
	uint32_t pid, print;
};

/*
 * An incarnation whose code objects fail to read this many times is read
 * no more: a forger rewrites garbage as it runs, and each new stack of it
 * would cost the namer its reads again. Counted per incarnation in a map
 * emptied when it holds FR_PYCACHE_BAD_MAX of them.
 */
#define FR_PYCACHE_REFUSALS	64
#define FR_PYCACHE_BAD_MAX	4096

struct pybad {
	uint64_t start;
	uint32_t pid, pad;
};

struct pycache {
	pthread_mutex_t lock;
	struct unwinder *uw;
	struct fr_hashmap map;		/* struct pykey -> struct pycode * */
	struct fr_hashmap bad;		/* struct pybad -> uint32_t refusals */
	struct pycache_stats st;
};

struct pycache *pycache__new(struct unwinder *uw, size_t budget)
{
	struct pycache *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	pthread_mutex_init(&c->lock, NULL);
	c->uw = uw;
	c->st.budget = budget;
	fr_hashmap__init(&c->map, sizeof(struct pykey), sizeof(struct pycode *), NULL, NULL, NULL);
	fr_hashmap__init(&c->bad, sizeof(struct pybad), sizeof(uint32_t), NULL, NULL, NULL);
	return c;
}

static void clear(struct pycache *c)
{
	for (size_t i = 0; i < c->map.cap; i++) {
		const void *k;
		void *v;

		if (fr_hashmap__at(&c->map, i, &k, &v))
			free(*(struct pycode **)v);
	}
	fr_hashmap__fini(&c->map);
	fr_hashmap__init(&c->map, sizeof(struct pykey), sizeof(struct pycode *), NULL, NULL, NULL);
	c->st.entries = c->st.bytes = 0;
}

void pycache__free(struct pycache *c)
{
	if (!c)
		return;
	clear(c);
	fr_hashmap__fini(&c->map);
	fr_hashmap__fini(&c->bad);
	pthread_mutex_destroy(&c->lock);
	free(c);
}

struct vmread {
	uint32_t pid;
	size_t total;		/* bytes read for this object so far: bounded */
};

#define FR_PYCODE_READ_MAX	(16u << 10)	/* bytes one code object's reads may take */

static int vm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct vmread *r = ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n;

	if (r->total + len > FR_PYCODE_READ_MAX)
		return -E2BIG;
	r->total += len;
	n = process_vm_readv((pid_t)r->pid, &local, 1, &remote, 1, 0);
	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
}

/* The bytes an entry takes in the budget: its strings and table, not its arrays. */
static size_t entry_bytes(const struct pycode *pc)
{
	return offsetof(struct pycode, linetable) + pc->ltlen;
}

/*
 * read_entry() - read (@pid, @start)'s code object @code into a new entry.
 * Unlocked. The layout is its interpreter's version's, when its table
 * says which; a process walked with a table the kernel built (a short
 * one) has none in the daemon, so each known layout is tried, and the one
 * whose fingerprint is the sample's @print wins (another object there
 * gives -ESTALE). NULL and -errno in *@err.
 */
static struct pycode *read_entry(struct pycache *c, uint32_t pid, uint64_t start, uint64_t code,
				 uint32_t print, int *err)
{
	const struct pylayout *known = NULL;
	struct fr_pyproc py;
	struct pycode *pc, *small;

	if (c->uw && !unwinder__python(c->uw, pid, start, &py))
		known = pylayout__of(py.version);
	pc = malloc(sizeof(*pc));
	if (!pc) {
		*err = -ENOMEM;
		return NULL;
	}
	*err = -EBADMSG;
	for (size_t i = 0; pylayout__at(i); i++) {
		const struct pylayout *l = known ? known : pylayout__at(i);
		struct vmread r = { .pid = pid };
		int e = pycode__read(l, vm_read, &r, code, pc);

		if (!e && pc->print != print)
			e = -ESTALE;
		/* A read that failed outright fails for every layout. */
		if (!e || e == -ESRCH || e == -EPERM || e == -EFAULT || known) {
			*err = e;
			break;
		}
		if (e == -ESTALE)
			*err = e;
	}
	/* Read while (pid, start) lived? After the reads, so a reuse in between shows. */
	if ((!*err || *err == -ESTALE) && fr_procstat__gone(pid, start))
		*err = -ESRCH;
	if (*err) {
		free(pc);
		return NULL;
	}
	small = realloc(pc, entry_bytes(pc));	/* the table's unused room back */
	return small ? small : pc;
}

/* Under the lock: one more failed read of incarnation @b's code objects. */
static void note_refusal(struct pycache *c, const struct pybad *b)
{
	uint32_t *n = fr_hashmap__find(&c->bad, b), one = 1;

	if (n) {
		(*n)++;
		return;
	}
	if (fr_hashmap__size(&c->bad) >= FR_PYCACHE_BAD_MAX) {
		fr_hashmap__fini(&c->bad);
		fr_hashmap__init(&c->bad, sizeof(struct pybad), sizeof(uint32_t), NULL, NULL, NULL);
	}
	fr_hashmap__insert(&c->bad, b, &one);	/* without memory: counted next time */
}

int pycache__name(struct pycache *c, uint32_t pid, uint64_t start, uint64_t code, uint32_t print,
		  uint32_t lasti, bool may_read, char *func, size_t func_len, char *file,
		  size_t file_len, int *line)
{
	struct pykey k = { .start = start, .code = code, .pid = pid, .print = print };
	struct pycode **found, *pc;
	int err = 0;

	pthread_mutex_lock(&c->lock);
	found = fr_hashmap__find(&c->map, &k);
	pc = found ? *found : NULL;
	pthread_mutex_unlock(&c->lock);
	if (!pc) {
		struct pybad b = { .start = start, .pid = pid };
		uint32_t *nbad;

		if (!may_read)
			return -ENOENT;
		pthread_mutex_lock(&c->lock);
		nbad = fr_hashmap__find(&c->bad, &b);
		if (nbad && *nbad >= FR_PYCACHE_REFUSALS) {
			c->st.given_up++;
			pthread_mutex_unlock(&c->lock);
			return -EACCES;
		}
		pthread_mutex_unlock(&c->lock);
		pc = read_entry(c, pid, start, code, print, &err);
		pthread_mutex_lock(&c->lock);
		if (!pc) {
			c->st.gone += err == -ESRCH;
			c->st.stale += err == -ESTALE;
			c->st.refused += err != -ESRCH && err != -ESTALE;
			if (err != -ESRCH)
				note_refusal(c, &b);
			pthread_mutex_unlock(&c->lock);
			return err == -ESRCH ? -ENOENT : err;
		}
		c->st.read++;
		if (c->st.bytes + entry_bytes(pc) > c->st.budget) {
			clear(c);
			c->st.resets++;
		}
		found = fr_hashmap__find(&c->map, &k);
		if (found) {		/* another thread read it meanwhile */
			free(pc);
			pc = *found;
		} else if (fr_hashmap__insert(&c->map, &k, &pc)) {
			pthread_mutex_unlock(&c->lock);
			free(pc);
			return -ENOMEM;
		} else {
			c->st.entries++;
			c->st.bytes += entry_bytes(pc);
		}
		pthread_mutex_unlock(&c->lock);
	}
	/* Entries are freed only by clear(), under the lock, by a reader's
	 * insert: copy what is needed under it. */
	pthread_mutex_lock(&c->lock);
	found = fr_hashmap__find(&c->map, &k);
	if (!found) {
		pthread_mutex_unlock(&c->lock);
		return -ENOENT;
	}
	pc = *found;
	fr_strlcpy(func, pc->qualname, func_len);
	fr_strlcpy(file, pc->file, file_len);
	*line = pycode__line(pc, lasti);
	pthread_mutex_unlock(&c->lock);
	return 0;
}

void pycache__stats(struct pycache *c, struct pycache_stats *st)
{
	pthread_mutex_lock(&c->lock);
	*st = c->st;
	pthread_mutex_unlock(&c->lock);
}
