/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * cli.h - the flightrec commands. Each takes its own argv (argv[0] is the
 * command name) and returns the exit code: 0 ok, 1 runtime error, 2 usage.
 */
#ifndef FR_CLI_H
#define FR_CLI_H

#include <stdio.h>

#include "format.h"

struct view;

#define FR_EXIT_OK	0
#define FR_EXIT_FAIL	1
#define FR_EXIT_USAGE	2

int cmd_show(int argc, char **argv);
int cmd_events(int argc, char **argv);
int cmd_folded(int argc, char **argv);
int cmd_processes(int argc, char **argv);
int cmd_memory(int argc, char **argv);
int cmd_stalls(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_snapshot(int argc, char **argv);
int cmd_status(int argc, char **argv);

int cli_load(const char *path, struct fr_dump *d);
int cli_dump_arg(const char *cmd, int argc, char **argv, int optind_);
int cli_open_dump(const char *cmd, int argc, char **argv, int optind_, struct fr_dump *d);
int cli_open_view(const char *cmd, int argc, char **argv, int optind_, struct fr_dump *d,
		  struct view *v);
int cli_common_option(const char *cmd, int c, char **argv, void (*help)(FILE *out));
int cli_usage_error(const char *cmd, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
int cli_parse_u32(const char *s, uint32_t *v);

#endif /* FR_CLI_H */
