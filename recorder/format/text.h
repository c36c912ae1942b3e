/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * text.h - strings a process chose (comm, command line, file, cgroup,
 * thread and symbol names), escaped before a person sees them as text, so
 * that none can send a terminal sequence or forge a line. JSON output has
 * its own escaping (json.h).
 */
#ifndef FR_TEXT_H
#define FR_TEXT_H

#include <stddef.h>

const char *fr_text_escape(const char *s, char *buf, size_t len);

#endif /* FR_TEXT_H */
