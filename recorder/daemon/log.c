// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * log.c - stderr logging with journal priorities. See log.h.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"

static const char *log_ident = "flightrecd";
static int log_max = LOG_INFO;
static bool log_journal;

/* Is stderr the stream JOURNAL_STREAM names ("dev:inode")? */
static bool stderr_is_journal(void)
{
	const char *js = getenv("JOURNAL_STREAM");
	unsigned long long dev, ino;
	struct stat st;

	if (!js || sscanf(js, "%llu:%llu", &dev, &ino) != 2)
		return false;
	if (fstat(STDERR_FILENO, &st))
		return false;
	return st.st_dev == dev && st.st_ino == ino;
}

void fr_log_init(const char *ident, int max_level)
{
	log_ident = ident;
	log_max = max_level;
	log_journal = stderr_is_journal();
}

void fr_log(int level, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	if (level > log_max)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (log_journal)
		fprintf(stderr, "<%d>%s\n", level, msg);
	else
		fprintf(stderr, "%s: %s\n", log_ident, msg);
}
