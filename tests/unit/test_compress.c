// SPDX-License-Identifier: MIT
/*
 * test_compress.c - LZ4 frame compression through real dump files, checked
 * against our decompressor and the `lz4` CLI, plus the decompressor's
 * rejection of damaged input with precise messages, and garbage fuzzing.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <lz4frame.h>

#include "lz4out.h"
#include "lz4read.h"
#include "tap.h"
#include "writer.h"

#define FR_MIB		(1024 * 1024)
#define FR_MAX_OUT	(64 * FR_MIB)

static char tdir[] = "/tmp/fr-compress-XXXXXX";
static int tdirfd = -1;
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	uint64_t x = rng_state;

	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

static void fill_random(unsigned char *p, size_t len)
{
	for (size_t i = 0; i < len; i++)
		p[i] = (unsigned char)(rng() >> 56);
}

/* Text from a small vocabulary: compresses, but not to nothing. */
static void fill_words(unsigned char *p, size_t len)
{
	static const char *const words[] = {
		"pid ", "exec ", "fork ", "exit ", "oom ", "stack ", "0x7f3a ",
		"memory ", "pressure ", "cpu ", "sched ", "kworker/1:2 ", "\n",
	};
	size_t off = 0, n;
	const char *w;

	while (off < len) {
		w = words[rng() % (sizeof(words) / sizeof(words[0]))];
		n = strlen(w);
		if (n > len - off)
			n = len - off;
		memcpy(p + off, w, n);
		off += n;
	}
}

static uint32_t le32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	       (uint32_t)p[3] << 24;
}

static void put_le32(unsigned char *p, uint32_t v)
{
	p[0] = (unsigned char)v;
	p[1] = (unsigned char)(v >> 8);
	p[2] = (unsigned char)(v >> 16);
	p[3] = (unsigned char)(v >> 24);
}

static void path_of(char *buf, size_t len, const char *name)
{
	snprintf(buf, len, "%s/%s", tdir, name);
}

static int slurp(const char *path, unsigned char **out, size_t *len)
{
	struct stat st;
	unsigned char *p;
	size_t got = 0;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !(p = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -EIO;
	}
	while (got < (size_t)st.st_size && (n = read(fd, p + got, (size_t)st.st_size - got)) > 0)
		got += (size_t)n;
	close(fd);
	*out = p;
	*len = got;
	return got == (size_t)st.st_size ? 0 : -EIO;
}

static int spill(const char *name, const void *data, size_t len)
{
	char path[256];
	int fd, err = 0;

	path_of(path, sizeof(path), name);
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0)
		return -errno;
	if (len && write(fd, data, len) != (ssize_t)len)
		err = -EIO;
	close(fd);
	return err;
}

/* Compress @len bytes into dump @name in pieces of odd sizes. 0 or -errno. */
static int compress_to(const char *name, const void *data, size_t len,
		       uint64_t *bytes_in)
{
	static const size_t pieces[] = { 1, 777777, 3 * FR_MIB + 1, 4096, 13 };
	const unsigned char *p = data;
	struct dumpfile *f;
	struct lz4out *z;
	size_t off = 0, n;
	int err = 0;

	f = dumpfile__create(tdirfd, name, 0600, 0);
	if (!f)
		return -errno;
	z = lz4out__new(f);
	if (!z) {
		err = -errno;
		dumpfile__abort(f);
		return err;
	}
	for (unsigned i = 0; off < len && !err; i++) {
		n = pieces[i % (sizeof(pieces) / sizeof(pieces[0]))];
		if (n > len - off)
			n = len - off;
		err = lz4out__write(z, p + off, n);
		off += n;
	}
	if (!err)
		err = lz4out__finish(z);
	*bytes_in = lz4out__bytes_in(z);
	lz4out__free(z);
	if (err) {
		dumpfile__abort(f);
		return err;
	}
	return dumpfile__commit(f);
}

static bool have_lz4_cli(void)
{
	return system("command -v lz4 >/dev/null 2>&1") == 0;
}

/* Run a shell command; true when it exited 0. */
static bool run_ok(const char *cmd)
{
	int st = system(cmd);

	return st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static void roundtrip(const char *what, const char *name, const unsigned char *data,
		      size_t len, bool cli)
{
	char path[256], cmd[700], msg[512];
	unsigned char *cli_out = NULL;
	size_t out_len = 0, cli_len = 0;
	uint64_t in = 0;
	void *out = NULL;
	int ret;

	ret = compress_to(name, data, len, &in);
	is_int(ret, 0, "%s: compress into %s and commit", what, name);
	is_int(in, len, "%s: lz4out__bytes_in counts every byte", what);
	path_of(path, sizeof(path), name);
	ret = lz4_decompress_file(path, FR_MAX_OUT, &out, &out_len, msg, sizeof(msg));
	if (!is_int(ret, 0, "%s: lz4_decompress_file succeeds", what))
		tap_diag("%s", msg);
	ok(!ret && out && out_len == len && !memcmp(out, data, len),
	   "%s: decompressed bytes are identical (%zu bytes)", what, out_len);
	free(out);
	if (!cli) {
		tap_skip(2, "the lz4 CLI is not installed");
		return;
	}
	snprintf(cmd, sizeof(cmd), "lz4 -q -t '%s'", path);
	ok(run_ok(cmd), "%s: lz4 -t accepts the file", what);
	snprintf(cmd, sizeof(cmd), "lz4 -q -d -c '%s' > '%s.cli'", path, path);
	ok(run_ok(cmd) && !slurp(strcat(path, ".cli"), &cli_out, &cli_len) &&
	   cli_len == len && !memcmp(cli_out, data, len),
	   "%s: lz4 -d -c gives identical bytes", what);
	free(cli_out);
	unlink(path);
}

/* Positions inside one valid frame made by lz4out. */
struct frame_map {
	size_t hsize;		/* header length including magic */
	size_t block[8];	/* block offsets */
	unsigned nblocks;
	size_t end;		/* end mark offset */
	size_t len;
};

/* Walk the frame @p of @len bytes independently of the code under test. */
static bool frame_map(const unsigned char *p, size_t len, struct frame_map *m)
{
	unsigned char flg = p[4];
	size_t pos, size;

	memset(m, 0, sizeof(*m));
	m->len = len;
	m->hsize = 7 + (flg & 0x08 ? 8 : 0) + (flg & 0x01 ? 4 : 0);
	pos = m->hsize;
	while (pos + 4 <= len && (size = le32(p + pos) & 0x7fffffff)) {
		if (m->nblocks < 8)
			m->block[m->nblocks++] = pos;
		pos += 4 + size + (flg & 0x10 ? 4 : 0);
	}
	m->end = pos;
	return pos + 4 + (flg & 0x04 ? 4 : 0) == len;
}

/*
 * Decompress @len bytes at @data (as a file named @name) and check the code
 * and that the message holds @w1 and @w2 (w2 may be NULL).
 */
static void reject(const char *what, const char *name, const void *data, size_t len,
		   size_t max_out, int want, const char *w1, const char *w2)
{
	char path[256], msg[512] = "";
	void *sentinel = &sentinel, *out = sentinel;
	size_t out_len = 12345;
	int ret;

	if (spill(name, data, len)) {
		ok(0, "%s: write %s", what, name);
		return;
	}
	path_of(path, sizeof(path), name);
	ret = lz4_decompress_file(path, max_out, &out, &out_len, msg, sizeof(msg));
	if (!ok(ret == want && out == sentinel && out_len == 12345 &&
		strstr(msg, w1) && (!w2 || strstr(msg, w2)) && strstr(msg, path),
		"%s: %s", what, strerror(-want)))
		tap_diag("got %d (%s), message: %s; want '%s'%s%s", ret,
			 strerror(-ret), msg, w1, w2 ? " and " : "", w2 ? w2 : "");
	else
		tap_diag("%s", msg);
	if (ret == 0)
		free(out);
	unlink(path);
}

static void test_rejections(const unsigned char *ref, size_t rl)
{
	struct frame_map m;
	unsigned char *b = malloc(rl + 64);
	char w[64], w2[64];
	bool parsed = frame_map(ref, rl, &m);

	if (!ok(parsed && m.nblocks >= 3,
		"reference frame parses: %u blocks, end mark at %zu", m.nblocks, m.end))
		goto out;
	ok(!(le32(ref + m.block[1]) & 0x80000000u),
	   "the second block of the reference frame is compressed");
	ok(ref[4] == 0x54 && ref[5] == 0x60,
	   "header: version 1, linked blocks, block+content checksums, 1 MiB blocks (FLG 0x%02x BD 0x%02x)",
	   ref[4], ref[5]);

	memcpy(b, ref, rl);
	b[0] ^= 0xff;
	reject("wrong magic", "magic.lz4", b, rl, FR_MAX_OUT, -EBADMSG,
	       "bad magic number", "at byte 0");

	reject("empty file", "empty.lz4", b, 0, FR_MAX_OUT, -EBADMSG, "empty", "byte 0");
	memset(b, 0, 4096);
	reject("file of zeros", "zeros.lz4", b, 4096, FR_MAX_OUT, -EBADMSG,
	       "bad magic number 0x00000000", "at byte 0");

	reject("truncated inside the magic", "t-magic.lz4", ref, 2, FR_MAX_OUT, -EPROTO,
	       "truncated", "magic number incomplete");
	reject("truncated inside the header", "t-hdr.lz4", ref, 6, FR_MAX_OUT, -EPROTO,
	       "truncated", "header at byte 0");
	snprintf(w, sizeof(w), "block header at byte %zu", m.block[1]);
	reject("truncated inside a block header", "t-bhdr.lz4", ref, m.block[1] + 2,
	       FR_MAX_OUT, -EPROTO, "truncated", w);
	snprintf(w, sizeof(w), "block at byte %zu is incomplete", m.block[1]);
	snprintf(w2, sizeof(w2), "input ends at byte %zu", m.block[1] + 104);
	reject("truncated mid-block", "t-block.lz4", ref, m.block[1] + 104, FR_MAX_OUT,
	       -EPROTO, w, w2);
	snprintf(w, sizeof(w), "block header at byte %zu", m.end);
	reject("truncated before the end mark", "t-end.lz4", ref, m.end, FR_MAX_OUT,
	       -EPROTO, "truncated", w);
	snprintf(w, sizeof(w), "content checksum at byte %zu is incomplete", m.end + 4);
	reject("truncated before the content checksum", "t-cc.lz4", ref, m.end + 4,
	       FR_MAX_OUT, -EPROTO, "truncated", w);
	reject("truncated inside the content checksum", "t-cc2.lz4", ref, rl - 1,
	       FR_MAX_OUT, -EPROTO, "truncated", w);

	memcpy(b, ref, rl);
	b[m.block[1] + 4 + 1000] ^= 0x01;
	snprintf(w, sizeof(w), "block at byte %zu", m.block[1]);
	reject("flipped byte in a compressed block", "flip-block.lz4", b, rl,
	       FR_MAX_OUT, -EBADMSG, "block checksum mismatch", w);

	memcpy(b, ref, rl);
	b[rl - 1] ^= 0x80;
	snprintf(w, sizeof(w), "at byte %zu", m.end + 4);
	reject("flipped content checksum", "flip-cc.lz4", b, rl, FR_MAX_OUT, -EBADMSG,
	       "content checksum mismatch", w);

	memcpy(b, ref, rl);
	b[m.hsize - 1] ^= 0x01;
	reject("flipped header checksum", "flip-hc.lz4", b, rl, FR_MAX_OUT, -EBADMSG,
	       "header checksum mismatch", "header at byte 0");

	memcpy(b, ref, rl);
	put_le32(b + m.block[0], 2 * FR_MIB);
	snprintf(w, sizeof(w), "block at byte %zu declares %d bytes", m.block[0], 2 * FR_MIB);
	reject("block size above the maximum", "bsize.lz4", b, rl, FR_MAX_OUT, -EBADMSG,
	       w, "maximum");

	memcpy(b, ref, rl);
	memcpy(b + rl, "garbage!", 8);
	snprintf(w, sizeof(w), "trailing garbage at byte %zu", rl);
	reject("trailing garbage", "trail.lz4", b, rl + 8, FR_MAX_OUT, -EBADMSG, w, NULL);
	memcpy(b + rl, "xy", 2);
	reject("two stray trailing bytes", "trail2.lz4", b, rl + 2, FR_MAX_OUT, -EBADMSG,
	       w, "2 bytes");
	memcpy(b + rl, ref, 32);
	reject("a second frame after the first", "second.lz4", b, rl + 32, FR_MAX_OUT,
	       -EBADMSG, w, "second LZ4 frame");
	put_le32(b + rl, 0x184D2A50u);
	put_le32(b + rl + 4, 100);
	snprintf(w, sizeof(w), "skippable frame at byte %zu", rl);
	reject("truncated trailing skippable frame", "t-skip.lz4", b, rl + 20,
	       FR_MAX_OUT, -EPROTO, "truncated", w);

	reject("max_out exceeded", "big.lz4", ref, rl, FR_MIB, -EFBIG,
	       "exceeds the limit of 1048576 bytes", "block at byte");
out:
	free(b);
}

/* Skippable frames before and after the frame are ignored. */
static void test_skippable(const unsigned char *ref, size_t rl,
			   const unsigned char *plain, size_t plen)
{
	unsigned char *b = malloc(rl + 64);
	char msg[512] = "";
	size_t out_len = 0;
	void *out = NULL;
	int ret;

	put_le32(b, 0x184D2A5Au);
	put_le32(b + 4, 6);
	memcpy(b + 8, "flight", 6);
	memcpy(b + 14, ref, rl);
	put_le32(b + 14 + rl, 0x184D2A5Fu);
	put_le32(b + 18 + rl, 0);
	ret = lz4_decompress_mem(b, rl + 22, FR_MAX_OUT, &out, &out_len, msg, sizeof(msg));
	if (!ok(!ret && out_len == plen && !memcmp(out, plain, plen),
		"skippable frames before and after the frame are ignored"))
		tap_diag("%d: %s", ret, msg);
	if (!ret)
		free(out);
	ret = lz4_decompress_mem(b, 14, FR_MAX_OUT, &out, &out_len, msg, sizeof(msg));
	ok(ret == -EBADMSG && strstr(msg, "no LZ4 frame"),
	   "only a skippable frame: -EBADMSG, no LZ4 frame (%s)", msg);
	free(b);
}

/* A frame without block checksums, whose first block is all 0xff. */
static void test_corrupt_data(void)
{
	LZ4F_preferences_t prefs = { .frameInfo = {
		.blockSizeID = LZ4F_max64KB,
		.contentChecksumFlag = LZ4F_contentChecksumEnabled,
	} };
	size_t in_len = 200000, cap = LZ4F_compressFrameBound(in_len, &prefs), n;
	unsigned char *in = malloc(in_len), *z = malloc(cap);
	struct frame_map m;
	char w[64];
	bool parsed;

	fill_words(in, in_len);
	n = LZ4F_compressFrame(z, cap, in, in_len, &prefs);
	parsed = !LZ4F_isError(n) && frame_map(z, n, &m);
	if (!ok(parsed && m.nblocks >= 2 &&
		!(le32(z + m.block[0]) & 0x80000000u),
		"frame without block checksums: %u blocks", m.nblocks))
		goto out;
	memset(z + m.block[0] + 4, 0xff, le32(z + m.block[0]));
	snprintf(w, sizeof(w), "block at byte %zu", m.block[0]);
	reject("garbage inside an unchecksummed block", "corrupt.lz4", z, n,
	       FR_MAX_OUT, -EBADMSG, "corrupt data", w);
out:
	free(z);
	free(in);
}

/* XXH32 for inputs under 16 bytes (frame descriptors), seed 0. */
static uint32_t xxh32_short(const unsigned char *p, size_t len)
{
	const uint32_t p1 = 2654435761u, p2 = 2246822519u, p3 = 3266489917u,
		       p4 = 668265263u, p5 = 374761393u;
	uint32_t h = p5 + (uint32_t)len;

	for (; len >= 4; p += 4, len -= 4) {
		h += le32(p) * p3;
		h = ((h << 17) | (h >> 15)) * p4;
	}
	for (; len; p++, len--) {
		h += *p * p5;
		h = ((h << 11) | (h >> 21)) * p1;
	}
	h ^= h >> 15;
	h *= p2;
	h ^= h >> 13;
	h *= p3;
	h ^= h >> 16;
	return h;
}

/* Frames that declare their content size (lz4out does not, `lz4 --content-size` does). */
static void test_content_size(void)
{
	LZ4F_preferences_t prefs = { .frameInfo = {
		.blockSizeID = LZ4F_max64KB,
		.contentChecksumFlag = LZ4F_contentChecksumEnabled,
		.contentSize = 300000,
	} };
	size_t in_len = 300000, cap = LZ4F_compressFrameBound(in_len, &prefs), n;
	unsigned char *in = malloc(in_len), *z = malloc(cap);
	char msg[512] = "";
	size_t out_len = 0;
	void *out = NULL;
	int ret;

	fill_words(in, in_len);
	n = LZ4F_compressFrame(z, cap, in, in_len, &prefs);
	ret = LZ4F_isError(n) ? -EIO :
	      lz4_decompress_mem(z, n, in_len, &out, &out_len, msg, sizeof(msg));
	if (!ok(!ret && out_len == in_len && !memcmp(out, in, in_len),
		"a frame declaring its content size round-trips"))
		tap_diag("%d: %s", ret, msg);
	if (!ret)
		free(out);
	ret = lz4_decompress_mem(z, n, in_len - 1, &out, &out_len, msg, sizeof(msg));
	ok(ret == -EFBIG && strstr(msg, "declares 300000 bytes"),
	   "a declared size above max_out is -EFBIG before decoding (%s)", msg);
	/* descriptor: FLG BD, 8 bytes of content size, then the header
	 * checksum (second byte of its XXH32) at byte 14 */
	ok(!LZ4F_isError(n) && z[4] & 0x08 && z[14] == (unsigned char)(xxh32_short(z + 4, 10) >> 8),
	   "the test's header checksum matches liblz4's");
	z[6] += 1;	/* declare 300001 bytes */
	z[14] = (unsigned char)(xxh32_short(z + 4, 10) >> 8);
	ret = LZ4F_isError(n) ? -EIO :
	      lz4_decompress_mem(z, n, FR_MAX_OUT, &out, &out_len, msg, sizeof(msg));
	if (ret == 0)
		free(out);
	ok(ret == -EBADMSG && strstr(msg, "content size mismatch") &&
	   strstr(msg, "declares 300001 bytes, the frame holds 300000"),
	   "a header declaring too many bytes is rejected (%s)", msg);
	z[6] -= 2;	/* declare 299999 bytes */
	z[14] = (unsigned char)(xxh32_short(z + 4, 10) >> 8);
	ret = LZ4F_isError(n) ? -EIO :
	      lz4_decompress_mem(z, n, FR_MAX_OUT, &out, &out_len, msg, sizeof(msg));
	if (ret == 0)
		free(out);
	ok(ret == -EBADMSG && strstr(msg, "content size mismatch"),
	   "a header declaring too few bytes is rejected (%s)", msg);
	free(z);
	free(in);
}

/* Decompress @len bytes; a violation is a success without output or a
 * failure without a message. ASan catches the rest. */
static bool fuzz_one(const unsigned char *p, size_t len)
{
	char msg[256];
	size_t out_len = 0;
	void *out = NULL;
	int ret;

	msg[0] = '\0';
	ret = lz4_decompress_mem(p, len, 16 * FR_MIB, &out, &out_len, msg, sizeof(msg));
	if (!ret) {
		bool good = out != NULL;

		free(out);
		return good;
	}
	return ret < 0 && msg[0];
}

static void test_fuzz(const unsigned char *valid, size_t vlen, const char *what)
{
	unsigned char *b = malloc(vlen + 8192);
	unsigned bad = 0, i, k, runs = 0;
	size_t len;

	for (i = 0; i < 3000; i++, runs++) {		/* pure garbage */
		len = (size_t)(rng() % 8192);
		fill_random(b, len);
		if (i % 3 == 0 && len >= 4)
			put_le32(b, LZ4F_MAGICNUMBER);	/* get past the magic */
		if (i % 3 == 1 && len >= 8) {
			put_le32(b, LZ4F_MAGICNUMBER);
			memcpy(b + 4, valid + 4, 3);	/* and past the header */
		}
		bad += !fuzz_one(b, len);
	}
	for (i = 0; i < 1500; i++, runs++) {		/* mutated valid frames */
		memcpy(b, valid, vlen);
		for (k = 1 + (unsigned)(rng() % 8); k; k--)
			b[rng() % vlen] ^= (unsigned char)(1u << (rng() % 8));
		len = i % 2 ? vlen : (size_t)(rng() % (vlen + 1));
		bad += !fuzz_one(b, len);
	}
	ok(bad == 0, "%s: %u garbage/mutated inputs, no crash, every rejection has a message (%u bad)",
	   what, runs, bad);
	free(b);
}

static void test_fuzz_all(void)
{
	LZ4F_preferences_t bare = { .frameInfo = { .blockSizeID = LZ4F_max64KB } };
	size_t in_len = 150000, cap = LZ4F_compressFrameBound(in_len, &bare), n;
	unsigned char *in = malloc(in_len), *z = malloc(cap), *v = NULL;
	char path[256];
	uint64_t bytes_in;
	size_t vlen = 0;

	fill_words(in, in_len);
	if (!compress_to("fuzz.lz4", in, in_len, &bytes_in)) {
		path_of(path, sizeof(path), "fuzz.lz4");
		if (!slurp(path, &v, &vlen))
			test_fuzz(v, vlen, "checksummed frame");
		unlink(path);
	}
	if (!v)
		ok(0, "make the checksummed fuzz seed");
	n = LZ4F_compressFrame(z, cap, in, in_len, &bare);
	if (ok(!LZ4F_isError(n), "make the checksum-free fuzz seed"))
		test_fuzz(z, n, "checksum-free frame (reaches the block decoder)");
	free(v);
	free(z);
	free(in);
}

/* io_rchar() - bytes this process has read so far (rchar of /proc/self/io),
 * or -1 when the kernel keeps no per-task I/O accounting. */
static long long io_rchar(void)
{
	char line[128];
	long long v = -1;
	FILE *f = fopen("/proc/self/io", "re");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "rchar: %lld", &v) == 1)
			break;
	fclose(f);
	return v;
}

/*
 * A file larger than any frame of max_out bytes of content can be is refused
 * from its size, before it is read (an 8 GiB sparse file); an incompressible
 * frame of exactly max_out bytes, larger than max_out itself, still loads.
 */
static void test_file_size(size_t rnd_len)
{
	const long long big = 8LL << 30;
	void *sentinel = &sentinel, *out = sentinel;
	char path[256], msg[512] = "", want[64];
	long long before, after;
	size_t out_len = 12345;
	struct stat st;
	int fd, ret;

	path_of(path, sizeof(path), "random.dump");
	if (stat(path, &st))
		st.st_size = 0;
	ret = lz4_decompress_file(path, rnd_len, &out, &out_len, msg, sizeof(msg));
	if (!ok(ret == 0 && out_len == rnd_len && (size_t)st.st_size > rnd_len,
		"an incompressible frame of exactly max_out bytes (file of %lld bytes) loads",
		(long long)st.st_size))
		tap_diag("%d: %s", ret, msg);
	if (ret == 0)
		free(out);
	out = sentinel;
	out_len = 12345;

	path_of(path, sizeof(path), "sparse.lz4");
	fd = open(path, O_CREAT | O_TRUNC | O_WRONLY | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, "\x04\x22\x4d\x18", 4) != 4 || ftruncate(fd, big)) {
		tap_diag("failed to make the 8 GiB sparse file '%s': %s", path,
			 strerror(errno));
		tap_skip(3, "this file system cannot hold an 8 GiB sparse file");
		if (fd >= 0)
			close(fd);
		unlink(path);
		return;
	}
	close(fd);
	before = io_rchar();
	ret = lz4_decompress_file(path, FR_MAX_OUT, &out, &out_len, msg, sizeof(msg));
	after = io_rchar();
	ok(ret == -EFBIG && out == sentinel && out_len == 12345,
	   "an 8 GiB file with max_out 64 MiB is -EFBIG");
	snprintf(want, sizeof(want), "%lld bytes", big);
	if (!ok(strstr(msg, path) && strstr(msg, want),
		"the message names the file and its size"))
		tap_diag("message: %s", msg);
	if (ret == 0)
		free(out);
	if (before < 0 || after < 0)
		tap_skip(1, "/proc/self/io is absent: no per-task I/O accounting");
	else
		ok(after - before < 65536,
		   "the 8 GiB file is refused without being read (%lld bytes read)",
		   after - before);
	unlink(path);
}

/*
 * One compressor, allocated once, writes frame after frame (a dump after
 * another, allocating nothing): each file decompresses to its own input,
 * the one given up midway included.
 */
static void test_reused(const unsigned char *rnd, size_t rl, const unsigned char *txt, size_t tl)
{
	static const char *const names[] = { "reuse1.dump", "reuse-abandoned.dump", "reuse2.dump" };
	const unsigned char *data[] = { txt, rnd, rnd };
	size_t lens[] = { tl, rl / 2, rl };
	struct lz4out *z = lz4out__alloc();
	bool all = z != NULL;

	for (int i = 0; i < 3 && all; i++) {
		struct dumpfile *f = dumpfile__create(tdirfd, names[i], 0600, 0);
		char path[256], msg[512];
		size_t out_len = 0;
		void *out = NULL;

		all = f && !lz4out__begin(z, f) && !lz4out__write(z, data[i], lens[i]) &&
		      lz4out__bytes_in(z) == lens[i];
		if (i == 1) {	/* given up before its end: the next frame is whole */
			dumpfile__abort(f);
			continue;
		}
		all = all && !lz4out__finish(z) && !dumpfile__commit(f);
		path_of(path, sizeof(path), names[i]);
		all = all && !lz4_decompress_file(path, FR_MAX_OUT, &out, &out_len, msg, sizeof(msg)) &&
		      out_len == lens[i] && !memcmp(out, data[i], lens[i]);
		free(out);
		unlink(path);
	}
	ok(all, "one compressor from lz4out__alloc() writes frame after frame, each whole, "
	   "one given up midway between them");
	lz4out__free(z);
}

static void test_misc(void)
{
	char msg[256] = "", path[256];
	size_t out_len;
	void *out;

	path_of(path, sizeof(path), "does-not-exist.lz4");
	is_int(lz4_decompress_file(path, FR_MAX_OUT, &out, &out_len, msg, sizeof(msg)),
	       -ENOENT, "a missing file is -ENOENT");
	contains(msg, "failed to open '", "the message reads failed to open '<path>'");
	ok(!lz4out__new(NULL) && errno == EINVAL, "lz4out__new(NULL) is EINVAL");
	ok(survives(lz4out__free(NULL)), "lz4out__free(NULL) is a no-op");
	{
		struct dumpfile *f = dumpfile__create(tdirfd, "twice.lz4", 0600, 0);
		struct lz4out *z = f ? lz4out__new(f) : NULL;

		ok(z && !lz4out__finish(z) && lz4out__finish(z) == -EINVAL &&
		   lz4out__write(z, "x", 1) == -EINVAL,
		   "finish twice and write after finish are -EINVAL");
		lz4out__free(z);
		dumpfile__abort(f);
	}
}

int main(void)
{
	const size_t rnd_len = 3 * FR_MIB, txt_len = 20 * FR_MIB, ref_len = 2 * FR_MIB + 500000;
	unsigned char *rnd = malloc(rnd_len), *txt = malloc(txt_len);
	unsigned char *refin = malloc(ref_len), *ref = NULL;
	char path[256], msg[512];
	size_t rl = 0, out_len, off = 0;
	uint64_t in;
	bool cli;
	void *out;
	struct stat st;

	if (!rnd || !txt || !refin)
		tap_skip_all("out of memory for the test inputs");
	if (!mkdtemp(tdir))
		tap_skip_all("mkdtemp failed");
	tdirfd = open(tdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	cli = have_lz4_cli();
	if (!cli)
		tap_diag("the lz4 CLI is not installed: CLI checks skipped");

	fill_random(rnd, rnd_len);
	while (off < txt_len)
		off += (size_t)snprintf((char *)txt + off, txt_len - off,
					"line %zu: the quick brown fox jumps\n", off / 37 % 1000);
	roundtrip("empty input", "empty.dump", (const unsigned char *)"", 0, cli);
	roundtrip("1 byte", "one.dump", (const unsigned char *)"Z", 1, cli);
	roundtrip("random 3 MiB", "random.dump", rnd, rnd_len, cli);
	roundtrip("compressible 20 MiB", "text.dump", txt, txt_len, cli);
	path_of(path, sizeof(path), "text.dump");
	if (stat(path, &st))
		st.st_size = -1;
	ok(st.st_size > 0 && st.st_size < (off_t)(txt_len / 20),
	   "compressible 20 MiB shrinks to %lld bytes", (long long)st.st_size);
	out = NULL;
	ok(!lz4_decompress_file(path, txt_len, &out, &out_len, msg, sizeof(msg)) &&
	   out_len == txt_len, "max_out equal to the content size is accepted");
	free(out);
	is_int(lz4_decompress_file(path, txt_len - 1, &out, &out_len, msg, sizeof(msg)),
	       -EFBIG, "max_out one byte short is -EFBIG");
	contains(msg, "exceeds the limit of", "the -EFBIG message names the limit");

	fill_words(refin, ref_len);
	ok(!compress_to("ref.dump", refin, ref_len, &in), "compress the reference frame");
	path_of(path, sizeof(path), "ref.dump");
	if (!slurp(path, &ref, &rl)) {
		test_rejections(ref, rl);
		test_skippable(ref, rl, refin, ref_len);
	} else {
		ok(0, "read the reference frame");
	}
	test_corrupt_data();
	test_content_size();
	test_fuzz_all();
	test_file_size(rnd_len);
	test_reused(rnd, rnd_len, txt, txt_len);
	test_misc();

	for (const char *const *n = (const char *const[]){ "empty.dump", "one.dump",
	     "random.dump", "text.dump", "ref.dump", NULL }; *n; n++)
		unlinkat(tdirfd, *n, 0);
	close(tdirfd);
	if (rmdir(tdir))
		tap_diag("failed to remove '%s': %s", tdir, strerror(errno));
	free(ref);
	free(refin);
	free(txt);
	free(rnd);
	return tap_done_testing();
}
