/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * util.h - small helpers shared by the recorder, the CLI and the tests.
 */
#ifndef FR_UTIL_H
#define FR_UTIL_H

#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define FR_ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))
#define FR_MIN(a, b)		((a) < (b) ? (a) : (b))
#define FR_MAX(a, b)		((a) > (b) ? (a) : (b))
#define FR_ALIGN(x, a)		(((x) + (a) - 1) & ~((__typeof__(x))(a) - 1))
#define FR_NSEC_PER_SEC		((uint64_t)1000000000)
#define FR_NSEC_PER_MSEC	((uint64_t)1000000)
#define FR_UNUSED		__attribute__((unused))
#define FR_LIKELY(x)		__builtin_expect(!!(x), 1)
#define FR_UNLIKELY(x)		__builtin_expect(!!(x), 0)

static inline uint64_t fr_clock_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * FR_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/* The trace clock: what bpf_ktime_get_boot_ns() returns. */
static inline uint64_t fr_boottime_ns(void)
{
	return fr_clock_ns(CLOCK_BOOTTIME);
}

static inline uint64_t fr_mix64(uint64_t v)
{
	v *= 0xff51afd7ed558ccdULL;
	return v ^ (v >> 32);
}

/*
 * fr_hash64() - a fast 64-bit hash of @len bytes (not cryptographic).
 * Four independent lanes take 32 bytes a step (stacks are hundreds of
 * bytes and hashed on every sample), the tail 8 bytes at a time; used to
 * intern stacks and strings.
 */
static inline uint64_t fr_hash64(const void *data, size_t len, uint64_t seed)
{
	const unsigned char *p = data;
	uint64_t h = seed ^ (len * 0x9e3779b97f4a7c15ULL);
	uint64_t v;

	if (len >= 32) {
		uint64_t a = h, b = h ^ 0x1, c = h ^ 0x2, d = h ^ 0x3, x[4];

		while (len >= 32) {
			memcpy(x, p, 32);
			a = (a ^ fr_mix64(x[0])) * 0xc4ceb9fe1a85ec53ULL;
			b = (b ^ fr_mix64(x[1])) * 0xc4ceb9fe1a85ec53ULL;
			c = (c ^ fr_mix64(x[2])) * 0xc4ceb9fe1a85ec53ULL;
			d = (d ^ fr_mix64(x[3])) * 0xc4ceb9fe1a85ec53ULL;
			p += 32;
			len -= 32;
		}
		h = fr_mix64(a) ^ fr_mix64(b + 1) ^ fr_mix64(c + 2) ^ fr_mix64(d + 3);
	}
	while (len >= 8) {
		memcpy(&v, p, 8);
		v *= 0xff51afd7ed558ccdULL;
		v ^= v >> 32;
		h = (h ^ v) * 0xc4ceb9fe1a85ec53ULL;
		h ^= h >> 29;
		p += 8;
		len -= 8;
	}
	if (len) {
		v = 0;
		memcpy(&v, p, len);
		v *= 0xff51afd7ed558ccdULL;
		v ^= v >> 32;
		h = (h ^ v) * 0xc4ceb9fe1a85ec53ULL;
	}
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	return h;
}

/*
 * fr_grow() - make room for @need elements of @size bytes in *@p, which
 * holds *@cap, doubling. Returns 0 or -ENOMEM (also on size overflow).
 */
static inline int fr_grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t ncap = *cap ? *cap : 16;
	void *np;

	if (need <= *cap)
		return 0;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -ENOMEM;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / size)
		return -ENOMEM;
	np = realloc(*p, ncap * size);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

/* fr_grow32() - fr_grow() for a 32-bit count. 0 or -ENOMEM. */
static inline int fr_grow32(void **p, uint32_t *cap, uint32_t need, size_t size)
{
	size_t c = *cap;
	int r = fr_grow(p, &c, need, size);

	if (!r)
		*cap = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
	return r;
}

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_send_signal
#define SYS_pidfd_send_signal 424
#endif

/* fr_pidfd_open() - a pidfd for @pid; -1 and errno on failure, like libc. */
static inline int fr_pidfd_open(int pid)
{
	return (int)syscall(SYS_pidfd_open, pid, 0);
}

/* fr_pidfd_signal() - send @sig (0: probe) through @pidfd; 0, or -1 and errno. */
static inline int fr_pidfd_signal(int pidfd, int sig)
{
	return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
}

/* Copy a possibly unterminated fixed-size string into a C string. */
static inline void fr_strlcpy(char *dst, const char *src, size_t size)
{
	size_t n;

	if (!size)
		return;
	n = strnlen(src, size - 1);
	memcpy(dst, src, n);
	dst[n] = 0;
}

/*
 * fr_utf8_len() - the length of the well-formed UTF-8 sequence at @s (@n
 * bytes left, n >= 1): 1..4, or 0 for a byte that does not start one
 * (overlong forms, surrogates and code points past U+10FFFF included).
 * Text a process chose is escaped through it before anyone sees it.
 */
static inline size_t fr_utf8_len(const unsigned char *s, size_t n)
{
	unsigned char c = s[0];
	uint32_t cp, min;
	size_t len;

	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, cp = c & 0x1f, min = 0x80;
	else if ((c & 0xf0) == 0xe0)
		len = 3, cp = c & 0x0f, min = 0x800;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, cp = c & 0x07, min = 0x10000;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return len;
}

/* fr_is_c1() - whether the 2-byte sequence at @s is a C1 control, U+0080..U+009F. */
static inline int fr_is_c1(const unsigned char *s)
{
	return s[0] == 0xc2 && s[1] >= 0x80 && s[1] <= 0x9f;
}

/* How long a stop waits for a worker thread before leaving it behind. */
#define FR_STOP_WAIT_NS		(2 * FR_NSEC_PER_SEC)

/*
 * fr_upper_bound() - in @n items of @size bytes at @base, sorted by the
 * uint64_t at byte @off of each, how many have a key <= @key: the item whose
 * range may hold @key is the one before that count (none when it is 0). The
 * symbol tables, perf maps, process maps and DWARF ranges all look up so.
 */
static inline size_t fr_upper_bound(const void *base, size_t n, size_t size, size_t off,
				    uint64_t key)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		uint64_t k;

		memcpy(&k, (const char *)base + mid * size + off, sizeof(k));
		if (k <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/*
 * fr_join_bounded() - pthread_join(@t) for at most @ns. Returns 0, or
 * -ETIMEDOUT when it still runs (it is then neither joined nor detached:
 * the caller leaves it and whatever it uses alone).
 */
static inline int fr_join_bounded(pthread_t t, uint64_t ns)
{
	uint64_t when = fr_clock_ns(CLOCK_REALTIME) + ns;
	struct timespec ts = {
		.tv_sec = (time_t)(when / FR_NSEC_PER_SEC),
		.tv_nsec = (long)(when % FR_NSEC_PER_SEC),
	};

	return -pthread_timedjoin_np(t, NULL, &ts);
}

/*
 * fr_resident_bytes() - how many bytes of the pages covering [@p, @p +
 * @len) are resident (mincore()); 0 for what it cannot tell.
 */
static inline uint64_t fr_resident_bytes(const void *p, size_t len)
{
	size_t pg = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(pg - 1);
	size_t n = (((uintptr_t)p + len + pg - 1) & ~(uintptr_t)(pg - 1)) - a;
	unsigned char vec[4096];
	uint64_t bytes = 0;

	if (!p || !len)
		return 0;
	for (size_t off = 0; off < n; off += sizeof(vec) * pg) {
		size_t part = FR_MIN(n - off, sizeof(vec) * pg);

		if (mincore((void *)(a + off), part, vec))
			return bytes;
		for (size_t i = 0; i < part / pg; i++)
			bytes += (vec[i] & 1) * pg;
	}
	return bytes;
}

#endif /* FR_UTIL_H */
