// SPDX-License-Identifier: MIT
/*
 * debuginfo.c - ELF objects, and the separate debug information of
 * stripped binaries: build-id debug files, .gnu_debuglink files and
 * MiniDebugInfo. See debuginfo.h.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include "debuginfo.h"
#include "untrusted.h"
#include "util.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <lzma.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define FR_ELF_MAX_PHDRS	4096
#define FR_CRC_CHUNK		(1U << 20)
#define FR_CRC_CACHE		64	/* debuglink candidates whose CRC is kept */

struct debuginfo {
	Elf *e;			/* the debug object; NULL: none */
	int fd;			/* its file; -1 for MiniDebugInfo */
	char *mem;		/* the decompressed MiniDebugInfo image */
	char *path;		/* the path its file was opened by; NULL for MiniDebugInfo */
	uid_t uid;		/* the owner, besides root, that path may have */
	unsigned int flags;	/* FR_DEBUG_* */
};

/* ------------------------------------------------------------ ELF basics */

static pthread_once_t fr_elf_once = PTHREAD_ONCE_INIT;
static bool fr_elf_ready;

static void fr_elf_init_once(void)
{
	fr_elf_ready = elf_version(EV_CURRENT) != EV_NONE;
}

/* fr_elf_init() - whether libelf is usable; initializes it once. */
static bool fr_elf_init(void)
{
	pthread_once(&fr_elf_once, fr_elf_init_once);
	return fr_elf_ready;
}

/* fr_elf_kind_ok() - take @e if it is an ELF object with a header, else end it. */
static int fr_elf_kind_ok(Elf *e, Elf **out)
{
	GElf_Ehdr eh;

	if (!e)
		return -ENOEXEC;
	if (elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh)) {
		elf_end(e);
		return -ENOEXEC;
	}
	*out = e;
	return 0;
}

int fr_elf_begin(int fd, Elf **out)
{
	if (!fr_elf_init())
		return -ENOSYS;
	return fr_elf_kind_ok(elf_begin(fd, ELF_C_READ, NULL), out);
}

int fr_elf_memory(char *buf, size_t len, Elf **out)
{
	Elf *e;
	int r;

	if (!fr_elf_init())
		return -ENOSYS;
	r = fr_elf_kind_ok(elf_memory(buf, len), &e);
	if (r)
		return r;
	if (!fr_elf_check_tables(e, len)) {
		elf_end(e);
		return -ENOEXEC;
	}
	*out = e;
	return 0;
}

bool fr_elf_check_tables(Elf *e, uint64_t fsize)
{
	size_t phnum, shnum;
	GElf_Ehdr eh;

	if (!gelf_getehdr(e, &eh) || elf_getphdrnum(e, &phnum) ||
	    elf_getshdrnum(e, &shnum))
		return false;
	if (phnum && (eh.e_phoff >= fsize || !eh.e_phentsize ||
		      (fsize - eh.e_phoff) / eh.e_phentsize < phnum))
		return false;
	if (eh.e_shoff && !shnum)
		return false;
	if (shnum && (eh.e_shoff >= fsize || !eh.e_shentsize ||
		      (fsize - eh.e_shoff) / eh.e_shentsize < shnum))
		return false;
	return true;
}

/*
 * fr_note_buildid() - scan the notes in @d for NT_GNU_BUILD_ID. Returns 0
 * with *@out filled, or -ENOENT.
 */
static int fr_note_buildid(Elf_Data *d, struct fr_buildid *out)
{
	size_t off = 0, next, name_off, desc_off;
	GElf_Nhdr nh;

	while (off < d->d_size &&
	       (next = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
		const char *base = d->d_buf;

		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    !memcmp(base + name_off, "GNU", 4) && nh.n_descsz) {
			out->len = nh.n_descsz < FR_BUILDID_MAX ?
				   nh.n_descsz : FR_BUILDID_MAX;
			memcpy(out->id, base + desc_off, out->len);
			return 0;
		}
		off = next;
	}
	return -ENOENT;
}

int fr_elf_buildid(Elf *e, struct fr_buildid *out)
{
	Elf_Scn *scn = NULL;
	size_t phnum;

	memset(out, 0, sizeof(*out));
	if (!elf_getphdrnum(e, &phnum) && phnum <= FR_ELF_MAX_PHDRS) {
		for (size_t i = 0; i < phnum; i++) {
			Elf_Type t;
			Elf_Data *d;
			GElf_Phdr ph;

			if (!gelf_getphdr(e, i, &ph) || ph.p_type != PT_NOTE)
				continue;
			t = ph.p_align == 8 ? ELF_T_NHDR8 : ELF_T_NHDR;
			d = elf_getdata_rawchunk(e, ph.p_offset, ph.p_filesz, t);
			if (d && !fr_note_buildid(d, out))
				return 0;
		}
	}
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		if (d && !fr_note_buildid(d, out))
			return 0;
	}
	return -ENOENT;
}

/* fr_elf_scn() - the first section named @name with bytes in the file, or NULL. */
static Elf_Scn *fr_elf_scn(Elf *e, const char *name)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (elf_getshdrstrndx(e, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(e, scn))) {
		const char *n;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    (sh.sh_flags & SHF_COMPRESSED))
			continue;
		n = elf_strptr(e, shstrndx, sh.sh_name);
		if (n && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/*
 * fr_elf_section() - the bytes of the first section of @e named @name
 * that are in the file (not SHT_NOBITS, not compressed), read only if
 * there are at most @max of them. Returns the data, or NULL: no such
 * section, an unreadable or empty one, or one larger than @max (then
 * *@big is set).
 */
static Elf_Data *fr_elf_section(Elf *e, const char *name, uint64_t max, bool *big)
{
	Elf_Scn *scn = fr_elf_scn(e, name);
	Elf_Data *d;
	GElf_Shdr sh;

	*big = false;
	if (!scn || !gelf_getshdr(scn, &sh))
		return NULL;
	if (sh.sh_size > max) {
		*big = true;
		return NULL;
	}
	d = elf_rawdata(scn, NULL);
	return d && d->d_buf && d->d_size ? d : NULL;
}

/* fr_elf_same_link() - whether @dbg can describe @bin: class, machine, type. */
static bool fr_elf_same_link(Elf *bin, Elf *dbg)
{
	GElf_Ehdr a, b;

	if (!gelf_getehdr(bin, &a) || !gelf_getehdr(dbg, &b))
		return false;
	return a.e_ident[EI_CLASS] == b.e_ident[EI_CLASS] &&
	       a.e_machine == b.e_machine && a.e_type == b.e_type;
}

/* ------------------------------------------------------------ debug root */

static pthread_mutex_t root_lock = PTHREAD_MUTEX_INITIALIZER;
static char root_path[PATH_MAX] = FR_DEBUG_ROOT;

int debuginfo__set_root(const char *root)
{
	if (!root)
		root = FR_DEBUG_ROOT;
	if (strlen(root) >= sizeof(root_path))
		return -ENAMETOOLONG;
	pthread_mutex_lock(&root_lock);
	fr_strlcpy(root_path, root, sizeof(root_path));
	pthread_mutex_unlock(&root_lock);
	return 0;
}

/* debuginfo__root() - a copy of the current debug root ("": none). */
static void debuginfo__root(char *out, size_t size)
{
	pthread_mutex_lock(&root_lock);
	fr_strlcpy(out, root_path, size);
	pthread_mutex_unlock(&root_lock);
}

/* ------------------------------------------------------------ debug files */

/*
 * debug_open() - open @path as an untrusted debug file owned by @uid or
 * by root (untrusted.h), at most FR_ELF_MAX_BYTES. Returns an fd or -errno.
 */
static int debug_open(const char *path, uid_t uid)
{
	const struct fr_untrusted_rule rule = {
		.max_bytes = FR_ELF_MAX_BYTES, .check_owner = true, .uid = uid,
	};

	return untrusted__open(AT_FDCWD, path, &rule, NULL);
}

/*
 * debug_elf() - open the debug file @fd with libelf and check it against
 * @bin: a valid ELF object (tables inside the file) of the same link.
 * Returns 0 with *@out set, or -ENOEXEC (-ENOSYS, -errno of fstat).
 */
static int debug_elf(int fd, Elf *bin, Elf **out)
{
	struct stat st;
	Elf *e;
	int r;

	if (fstat(fd, &st))
		return -errno;
	r = fr_elf_begin(fd, &e);
	if (r)
		return r;
	if (!fr_elf_check_tables(e, (uint64_t)st.st_size) || !fr_elf_same_link(bin, e)) {
		elf_end(e);
		return -ENOEXEC;
	}
	*out = e;
	return 0;
}

/* fr_buildid_eq() - whether two build-ids are the same bytes. */
static bool fr_buildid_eq(const struct fr_buildid *a, const struct fr_buildid *b)
{
	return a->len == b->len && !memcmp(a->id, b->id, a->len);
}

/*
 * debuginfo__take() - adopt debug file @fd, opened as @path with owner
 * rule @uid and found as @flag, if it is a valid ELF object of @bin's link
 * with build-id @id: the same bytes for a build-id file; for a debuglink
 * file, if both carry one. Closes @fd otherwise. Returns 0, -ENOEXEC (bad
 * object), -ESTALE (other build-id) or -ENOMEM.
 */
static int debuginfo__take(struct debuginfo *d, int fd, const char *path, uid_t uid,
			   Elf *bin, const struct fr_buildid *id, unsigned int flag)
{
	struct fr_buildid got;
	Elf *e = NULL;
	bool has;

	if (debug_elf(fd, bin, &e)) {
		close(fd);
		d->flags |= FR_DEBUG_BAD;
		return -ENOEXEC;
	}
	has = !fr_elf_buildid(e, &got);
	if (flag == FR_DEBUG_BUILDID ? !has || !fr_buildid_eq(id, &got) :
				       has && id->len && !fr_buildid_eq(id, &got)) {
		elf_end(e);
		close(fd);
		d->flags |= FR_DEBUG_BUILDID_MISMATCH;
		return -ESTALE;
	}
	d->path = strdup(path);
	if (!d->path) {
		elf_end(e);
		close(fd);
		return -ENOMEM;
	}
	d->e = e;
	d->fd = fd;
	d->uid = uid;
	d->flags |= flag;
	return 0;
}

/* path_inside() - whether the resolved path @p lies below directory @dir. */
static bool path_inside(const char *p, const char *dir)
{
	size_t len = strlen(dir);

	if (len == 1 && dir[0] == '/')
		return p[0] == '/';
	return !strncmp(p, dir, len) && p[len] == '/';
}

/*
 * open_buildid_file() - open the build-id debug file @path of @root. A
 * symlink there is followed (Fedora links .build-id/ to the debug files
 * by name), to a file inside @root only, then opened by its resolved path
 * with no symlink, which goes to @opened (PATH_MAX bytes). Returns an fd
 * or -errno (-ELOOP: leads outside @root).
 */
static int open_buildid_file(const char *root, const char *path, char *opened)
{
	char rroot[PATH_MAX];
	struct stat st;

	if (lstat(path, &st))
		return -errno;
	if (!S_ISLNK(st.st_mode)) {
		fr_strlcpy(opened, path, PATH_MAX);
		return debug_open(path, 0);
	}
	if (!realpath(path, opened) || !realpath(root, rroot))
		return -errno;
	if (!path_inside(opened, rroot))
		return -ELOOP;
	return debug_open(opened, 0);
}

/*
 * buildid_path() - "<root>/.build-id/xx/rest.debug" for the @len bytes of
 * build-id @id into @path (PATH_MAX bytes). Returns 0, -ENOENT for an id
 * shorter than 2 bytes, -ENAMETOOLONG.
 */
static int buildid_path(const char *root, const uint8_t *id, size_t len, char *path)
{
	char hex[2 * FR_BUILDID_MAX + 1];
	int n;

	if (len < 2 || len > FR_BUILDID_MAX)
		return -ENOENT;
	for (size_t i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", id[i]);
	n = snprintf(path, PATH_MAX, "%s/.build-id/%.2s/%s.debug", root, hex, hex + 2);
	return n < 0 || n >= PATH_MAX ? -ENAMETOOLONG : 0;
}

/*
 * debuginfo__by_buildid() - <root>/.build-id/xx/yyyy.debug for build-id
 * @id. Returns 0 if adopted, -ENOMEM, or another -errno (not found or
 * refused).
 */
static int debuginfo__by_buildid(struct debuginfo *d, Elf *bin,
				 const struct fr_buildid *id, const char *root)
{
	char path[PATH_MAX], opened[PATH_MAX];
	int fd, r;

	r = buildid_path(root, id->id, id->len, path);
	if (r)
		return r;
	fd = open_buildid_file(root, path, opened);
	if (fd < 0)
		return fd;
	return debuginfo__take(d, fd, opened, 0, bin, id, FR_DEBUG_BUILDID);
}

/*
 * debuglink__parse() - the file name (into @name, FR_DEBUGLINK_NAME_MAX + 1
 * bytes) and CRC of @e's .gnu_debuglink section: a NUL-terminated base
 * name, zero padding to 4 bytes, the CRC in the file's byte order.
 * Returns 0, -ENOENT (no section) or -EINVAL (malformed, or a name that is
 * a path, "." or "..").
 */
static int debuglink__parse(Elf *e, char *name, uint32_t *crc)
{
	unsigned char b[4];
	const char *p;
	size_t len, at;
	GElf_Ehdr eh;
	Elf_Data *d;
	bool big;

	d = fr_elf_section(e, ".gnu_debuglink", FR_DEBUGLINK_NAME_MAX + 8, &big);
	if (!d)
		return big ? -EINVAL : -ENOENT;
	if (!gelf_getehdr(e, &eh))
		return -EINVAL;
	p = d->d_buf;
	len = strnlen(p, d->d_size);
	at = FR_ALIGN(len + 1, (size_t)4);
	if (!len || len > FR_DEBUGLINK_NAME_MAX || at > d->d_size || d->d_size - at < 4)
		return -EINVAL;
	if (memchr(p, '/', len) || !strcmp(p, ".") || !strcmp(p, ".."))
		return -EINVAL;
	memcpy(name, p, len + 1);
	memcpy(b, p + at, 4);
	if (eh.e_ident[EI_DATA] == ELFDATA2MSB)
		*crc = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];
	else
		*crc = (uint32_t)b[3] << 24 | (uint32_t)b[2] << 16 | (uint32_t)b[1] << 8 | b[0];
	return 0;
}

/*
 * The CRCs of debuglink candidates, by file identity: each file is read
 * for its CRC at most once, and a read cut by a deadline goes on from
 * where it stopped at the next load. A fixed table, least recently used
 * replaced: it never grows with what others put next to their binaries.
 */
struct crc_ent {
	uint64_t key[5];	/* device, inode, size, mtime ns, ctime ns; all 0: free */
	uint64_t off;		/* bytes summed so far */
	uint32_t crc;		/* of those bytes */
	bool done;
	uint64_t used;
};

static pthread_mutex_t crc_lock = PTHREAD_MUTEX_INITIALIZER;
static struct crc_ent crc_tab[FR_CRC_CACHE];
static uint64_t crc_clock;
static struct debuginfo_crc_stats crc_st;

static void crc_key(const struct stat *st, uint64_t key[5])
{
	key[0] = st->st_dev;
	key[1] = st->st_ino;
	key[2] = (uint64_t)st->st_size;
	key[3] = (uint64_t)st->st_mtim.tv_sec * 1000000000ULL + (uint64_t)st->st_mtim.tv_nsec;
	key[4] = (uint64_t)st->st_ctim.tv_sec * 1000000000ULL + (uint64_t)st->st_ctim.tv_nsec;
}

/* crc_slot() - the entry of @key, else a free or the least recently used one, emptied. */
static struct crc_ent *crc_slot(const uint64_t key[5])
{
	struct crc_ent *old = &crc_tab[0];

	for (size_t i = 0; i < FR_CRC_CACHE; i++) {
		if (!memcmp(crc_tab[i].key, key, sizeof(crc_tab[i].key)))
			return &crc_tab[i];
		if (crc_tab[i].used < old->used)
			old = &crc_tab[i];
	}
	if (old->used)
		crc_st.replaced++;
	memset(old, 0, sizeof(*old));
	memcpy(old->key, key, sizeof(old->key));
	return old;
}

/*
 * file_crc32() - the CRC-32 of the whole file @fd (@st its fstat), read in
 * chunks from where an earlier call left it (at most FR_ELF_MAX_BYTES,
 * else -EFBIG), until CLOCK_BOOTTIME @deadline_ns (0: none): then
 * -ETIMEDOUT, and the next call goes on. liblzma's lzma_crc32() is the CRC
 * of zlib's crc32() and of gdb's debuglink check; it is used so as not to
 * link zlib for one function. Returns 0 or -errno.
 */
static int file_crc32(int fd, const struct stat *st, uint64_t deadline_ns, uint32_t *out)
{
	uint64_t key[5], off;
	struct crc_ent *e;
	uint32_t crc;
	uint8_t *buf;
	int r = 0;

	if ((uint64_t)st->st_size > FR_ELF_MAX_BYTES)
		return -EFBIG;
	crc_key(st, key);
	pthread_mutex_lock(&crc_lock);
	e = crc_slot(key);
	e->used = ++crc_clock;
	if (e->done) {
		crc_st.hits++;
		*out = e->crc;
		pthread_mutex_unlock(&crc_lock);
		return 0;
	}
	off = e->off;
	crc = e->crc;
	crc_st.resumed += off > 0;
	pthread_mutex_unlock(&crc_lock);

	buf = malloc(FR_CRC_CHUNK);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t n;

		if (deadline_ns && fr_boottime_ns() >= deadline_ns) {
			r = -ETIMEDOUT;
			break;
		}
		n = pread(fd, buf, FR_CRC_CHUNK, (off_t)off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			r = -errno;
			break;
		}
		if (!n)
			break;
		crc = lzma_crc32(buf, (size_t)n, crc);
		off += (uint64_t)n;
		pthread_mutex_lock(&crc_lock);
		crc_st.bytes += (uint64_t)n;
		pthread_mutex_unlock(&crc_lock);
		if (off > FR_ELF_MAX_BYTES) {
			r = -EFBIG;
			break;
		}
	}
	free(buf);
	/* Keep the progress (or the result) unless another call replaced the entry. */
	pthread_mutex_lock(&crc_lock);
	if (!memcmp(e->key, key, sizeof(e->key)) && off >= e->off && (!r || r == -ETIMEDOUT)) {
		e->off = off;
		e->crc = crc;
		e->done = !r;
	}
	pthread_mutex_unlock(&crc_lock);
	if (!r)
		*out = crc;
	return r;
}

void debuginfo__crc_stats(struct debuginfo_crc_stats *st)
{
	pthread_mutex_lock(&crc_lock);
	*st = crc_st;
	pthread_mutex_unlock(&crc_lock);
}

/*
 * debuginfo__try_link() - adopt the debuglink candidate @path (owned by
 * @uid or root) if it is not the binary @bst itself and its CRC is @crc.
 * Returns 0, -ENOMEM, or another -errno (missing or refused).
 */
static int debuginfo__try_link(struct debuginfo *d, const char *path, uid_t uid,
			       const struct stat *bst, Elf *bin,
			       const struct fr_buildid *id, uint32_t crc, uint64_t deadline_ns)
{
	struct stat st;
	uint32_t got;
	int fd, r;

	fd = debug_open(path, uid);
	if (fd < 0)
		return fd;
	if (fstat(fd, &st)) {
		r = -errno;
		goto fail;
	}
	if (st.st_dev == bst->st_dev && st.st_ino == bst->st_ino) {
		r = -ENOENT;
		goto fail;
	}
	/* Another user's file is read only within a bound (RELIABILITY.md). */
	if (st.st_uid && (uint64_t)st.st_size > FR_DEBUGLINK_USER_MAX_BYTES) {
		d->flags |= FR_DEBUG_BAD;
		r = -EFBIG;
		goto fail;
	}
	r = file_crc32(fd, &st, deadline_ns, &got);
	if (r == -ETIMEDOUT)
		d->flags |= FR_DEBUG_PENDING;
	if (r)
		goto fail;
	if (got != crc) {
		d->flags |= FR_DEBUG_LINK_CRC;
		r = -EBADMSG;
		goto fail;
	}
	return debuginfo__take(d, fd, path, uid, bin, id, FR_DEBUG_LINK);
fail:
	close(fd);
	return r;
}

/*
 * debuginfo__by_link() - the .gnu_debuglink file of @bin (open at @fd),
 * searched as <dir>/<name>, <dir>/.debug/<name>, <root><dir>/<name> for
 * <dir> the directory of @hint. Returns 0 if adopted, -ENOMEM, or another
 * -errno (none, or all refused).
 */
static int debuginfo__by_link(struct debuginfo *d, int fd, Elf *bin,
			      const struct fr_buildid *id, const char *hint,
			      const char *root, uint64_t deadline_ns)
{
	char name[FR_DEBUGLINK_NAME_MAX + 1], path[PATH_MAX];
	const char *slash = strrchr(hint, '/');
	struct stat bst;
	uint32_t crc;
	int dirlen, r;

	if (hint[0] != '/' || !slash || slash - hint >= PATH_MAX)
		return -ENOENT;
	dirlen = (int)(slash - hint);
	r = debuglink__parse(bin, name, &crc);
	if (r)
		return r;
	if (fstat(fd, &bst))
		return -errno;
	for (int i = 0; i < 3; i++) {
		static const char *const fmt[3] = { "%s%.*s/%s", "%s%.*s/.debug/%s", "%s%.*s/%s" };
		const char *prefix = i < 2 ? "" : root;
		int n;

		if (i == 2 && !root[0])
			break;
		n = snprintf(path, sizeof(path), fmt[i], prefix, dirlen, hint, name);
		if (n < 0 || (size_t)n >= sizeof(path))
			continue;
		r = debuginfo__try_link(d, path, i < 2 ? bst.st_uid : 0, &bst, bin, id, crc,
					deadline_ns);
		if (!r || r == -ENOMEM)
			return r;
	}
	return -ENOENT;
}

/* ---------------------------------------------------------- MiniDebugInfo */

/*
 * xz_grow() - give the decoder @strm more room in *@buf (capacity *@cap),
 * up to FR_MINIDEBUG_MAX_BYTES. Returns 0, -EFBIG at the bound, -ENOMEM.
 */
static int xz_grow(lzma_stream *strm, char **buf, size_t *cap, size_t in_len)
{
	size_t ncap = *cap ? *cap * 2 : FR_MAX(in_len * 4, (size_t)64 << 10);
	char *nb;

	if (*cap >= FR_MINIDEBUG_MAX_BYTES)
		return -EFBIG;
	if (ncap > FR_MINIDEBUG_MAX_BYTES)
		ncap = FR_MINIDEBUG_MAX_BYTES;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	strm->next_out = (uint8_t *)nb + strm->total_out;
	strm->avail_out = ncap - strm->total_out;
	*buf = nb;
	*cap = ncap;
	return 0;
}

/*
 * xz_decode() - decompress the single xz stream at @in (@len bytes) into a
 * new malloc'd buffer of at most FR_MINIDEBUG_MAX_BYTES, the decoder using
 * at most FR_XZ_MEMLIMIT. Returns 0 with *@out and *@out_len set, -EFBIG
 * past a bound, -EBADMSG for data that is not a whole xz stream, -ENOMEM.
 */
static int xz_decode(const uint8_t *in, size_t len, char **out, size_t *out_len)
{
	lzma_stream strm = LZMA_STREAM_INIT;
	size_t cap = 0;
	char *buf = NULL;
	lzma_ret lr;
	int r = 0;

	if (lzma_stream_decoder(&strm, FR_XZ_MEMLIMIT, 0) != LZMA_OK)
		return -ENOMEM;
	strm.next_in = in;
	strm.avail_in = len;
	do {
		if (!strm.avail_out) {
			r = xz_grow(&strm, &buf, &cap, len);
			if (r)
				goto out;
		}
		lr = lzma_code(&strm, LZMA_FINISH);
	} while (lr == LZMA_OK);
	if (lr == LZMA_MEM_ERROR)
		r = -ENOMEM;
	else if (lr == LZMA_MEMLIMIT_ERROR)
		r = -EFBIG;
	else if (lr != LZMA_STREAM_END || !strm.total_out)
		r = -EBADMSG;
out:
	if (!r) {
		*out = buf;
		*out_len = strm.total_out;
	} else {
		free(buf);
	}
	lzma_end(&strm);
	return r;
}

/*
 * debuginfo__mini() - the MiniDebugInfo of @bin: its .gnu_debugdata
 * section, decompressed and checked as an ELF object of @bin's link.
 * Returns 0 if adopted, -ENOMEM, or another -errno (none or refused).
 */
static int debuginfo__mini(struct debuginfo *d, Elf *bin)
{
	Elf_Data *raw;
	Elf *e = NULL;
	size_t len;
	char *img;
	bool big;
	int r;

	/* Compressed, it is smaller than the bound on what it inflates to. */
	raw = fr_elf_section(bin, ".gnu_debugdata", FR_MINIDEBUG_MAX_BYTES, &big);
	if (!raw && !big)
		return -ENOENT;
	if (!raw) {
		d->flags |= FR_DEBUG_BAD;
		return -EFBIG;
	}
	r = xz_decode(raw->d_buf, raw->d_size, &img, &len);
	if (r == -ENOMEM)
		return r;
	if (!r) {
		r = fr_elf_memory(img, len, &e);
		if (!r && !fr_elf_same_link(bin, e)) {
			elf_end(e);
			r = -ENOEXEC;
		}
		if (r)
			free(img);
	}
	if (r) {
		d->flags |= FR_DEBUG_BAD;
		return r;
	}
	d->e = e;
	d->mem = img;
	d->flags |= FR_DEBUG_MINI;
	return 0;
}

/* ---------------------------------------------------------------- search */

int debuginfo__open(int fd, Elf *bin, const struct fr_buildid *id,
		    const char *path_hint, uint64_t deadline_ns, struct debuginfo **out)
{
	char root[PATH_MAX];
	struct debuginfo *d;
	int r = -ENOENT;

	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->fd = -1;
	debuginfo__root(root, sizeof(root));
	if (root[0] && id->len)
		r = debuginfo__by_buildid(d, bin, id, root);
	if (r && r != -ENOMEM && path_hint)
		r = debuginfo__by_link(d, fd, bin, id, path_hint, root, deadline_ns);
	if (r && r != -ENOMEM)
		r = debuginfo__mini(d, bin);
	if (r == -ENOMEM) {
		debuginfo__free(d);
		return -ENOMEM;
	}
	*out = d;
	return 0;
}

Elf *debuginfo__elf(const struct debuginfo *d)
{
	return d ? d->e : NULL;
}

unsigned int debuginfo__flags(const struct debuginfo *d)
{
	return d ? d->flags : 0;
}

const char *debuginfo__path(const struct debuginfo *d, uid_t *uid)
{
	if (!d || !d->e || !d->path)
		return NULL;
	if (uid)
		*uid = d->uid;
	return d->path;
}

int debuginfo__stat(const struct debuginfo *d, struct stat *st)
{
	if (!d || d->fd < 0)
		return -ENOENT;
	return fstat(d->fd, st) ? -errno : 0;
}

int debuginfo__open_alt(const void *id, size_t len, const char *path)
{
	char root[PATH_MAX], cand[PATH_MAX], opened[PATH_MAX], rroot[PATH_MAX];
	int fd = -ENOENT;

	debuginfo__root(root, sizeof(root));
	if (!root[0])
		return -ENOENT;
	if (!buildid_path(root, id, len, cand))
		fd = open_buildid_file(root, cand, opened);
	/* A dwz file may have no build-id link: by its path, resolved inside the root. */
	if (fd < 0 && path && path[0] == '/' && strlen(path) < PATH_MAX &&
	    realpath(path, cand) && realpath(root, rroot) && path_inside(cand, rroot))
		fd = debug_open(cand, 0);
	return fd;
}

void debuginfo__free(struct debuginfo *d)
{
	if (!d)
		return;
	if (d->e)
		elf_end(d->e);
	if (d->fd >= 0)
		close(d->fd);
	free(d->mem);
	free(d->path);
	free(d);
}
