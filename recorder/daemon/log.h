/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * log.h - the daemon's log: one line per message on stderr, with syslog
 * priority prefixes ("<3>") when stderr is the journal (JOURNAL_STREAM),
 * plain lines otherwise. Only main() and the daemon loop log.
 */
#ifndef FR_LOG_H
#define FR_LOG_H

#include <syslog.h>

void fr_log_init(const char *ident, int max_level);
void fr_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#define fr_err(...)	fr_log(LOG_ERR, __VA_ARGS__)
#define fr_warn(...)	fr_log(LOG_WARNING, __VA_ARGS__)
#define fr_info(...)	fr_log(LOG_INFO, __VA_ARGS__)
#define fr_debug(...)	fr_log(LOG_DEBUG, __VA_ARGS__)

#endif /* FR_LOG_H */
