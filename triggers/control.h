/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * control.h - the control socket: a unix stream socket, mode 0600 in a
 * 0700 directory, for root only (checked with SO_PEERCRED). A client sends
 * one request line and reads the reply until the daemon closes:
 *
 *   snapshot [REASON]   ->  "ok PATH" once the dump is durable, or "error MSG"
 *   status [json]       ->  the daemon's state, as text or one JSON object
 *
 * Requests are bounded (FR_CONTROL_LINE_MAX) and a client that does not
 * finish its request in time is dropped. The daemon's loop owns the fds.
 */
#ifndef FR_CONTROL_H
#define FR_CONTROL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FR_CONTROL_DEFAULT_PATH	"/run/flightrec/control.sock"
#define FR_CONTROL_LINE_MAX	1024
#define FR_CONTROL_CLIENTS	128
#define FR_CONTROL_REQ_TIMEOUT_NS	(5 * 1000 * 1000 * 1000ULL)

enum control_verb {
	FR_CTL_SNAPSHOT = 1,
	FR_CTL_STATUS,
};

struct control_req {
	enum control_verb verb;
	bool json;
	char reason[FR_CONTROL_LINE_MAX];
};

struct control_stats {
	uint64_t accepted;
	uint64_t refused;	/* not root, or too many clients */
	uint64_t bad;		/* malformed or oversized requests */
	uint64_t timeouts;
};

struct control;

struct control *control__new(const char *path, char *err, size_t errlen);
void control__free(struct control *c);
int control__fd(const struct control *c);
int control__accept(struct control *c, int *id, int *fd);
int control__read(struct control *c, int id, struct control_req *req);
int control__reply(struct control *c, int id, const char *text);
void control__close(struct control *c, int id);
bool control__alive(const struct control *c, int id);
void control__expire(struct control *c, uint64_t now);
const struct control_stats *control__stats(const struct control *c);

#endif /* FR_CONTROL_H */
