// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * crc32c.c - CRC-32C (Castagnoli), the checksum of every section (format.h).
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

static uint32_t crc_table[8][256];

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;

		for (int k = 0; k < 8; k++)
			c = c & 1 ? (c >> 1) ^ 0x82f63b78 : c >> 1;
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^
					  crc_table[0][crc_table[t - 1][i] & 0xff];
}

#if defined(__x86_64__) && defined(__GNUC__)
/*
 * crc32c_sse42() - the same with the CPU's crc32 instruction (SSE4.2, on
 * every x86-64 CPU since 2008): 8 bytes a cycle or so, where the tables
 * take 1-2 GB/s; a dump checksums every section's bytes (4 ms of a bench
 * dump's 190). No library of Debian's offers CRC-32C (zlib's is CRC-32).
 */
__attribute__((target("sse4.2")))
static uint32_t crc32c_sse42(uint32_t crc, const uint8_t *p, size_t len)
{
	uint64_t c = ~crc;

	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		c = __builtin_ia32_crc32di(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_ia32_crc32qi((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#endif

/* fr_crc32c() - CRC-32C (Castagnoli) of @buf, continuing from @crc (start 0). */
uint32_t fr_crc32c(uint32_t crc, const void *buf, size_t len)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	const uint8_t *p = buf;

#if defined(__x86_64__) && defined(__GNUC__)
	if (__builtin_cpu_supports("sse4.2"))
		return crc32c_sse42(crc, p, len);
#endif
	pthread_once(&once, crc_init);
	crc = ~crc;
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	while (len >= 8) {
		uint64_t v;

		memcpy(&v, p, 8);
		v ^= crc;
		crc = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^
		      crc_table[5][(v >> 16) & 0xff] ^ crc_table[4][(v >> 24) & 0xff] ^
		      crc_table[3][(v >> 32) & 0xff] ^ crc_table[2][(v >> 40) & 0xff] ^
		      crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
		p += 8;
		len -= 8;
	}
#endif
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}
