// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * control.c - the control socket. See control.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "control.h"

struct client {
	int fd;			/* -1: free */
	bool waiting;		/* request read; the daemon owes a reply */
	uint64_t since;		/* CLOCK_BOOTTIME ns of accept */
	size_t len;
	char buf[FR_CONTROL_LINE_MAX + 1];
};

struct control {
	int lfd;
	char *path;
	struct client cl[FR_CONTROL_CLIENTS];
	struct control_stats st;
};

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_BOOTTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

/* The socket's directory: create it 0700, refuse anything but a directory. */
static int make_dir(const char *path, char *err, size_t errlen)
{
	char copy[PATH_MAX];
	struct stat st;
	char *dir;

	snprintf(copy, sizeof(copy), "%s", path);
	dir = dirname(copy);
	if (mkdir(dir, 0700) && errno != EEXIST) {
		snprintf(err, errlen, "failed to create '%s': %s", dir, strerror(errno));
		return -errno;
	}
	if (lstat(dir, &st)) {
		snprintf(err, errlen, "failed to stat '%s': %s", dir, strerror(errno));
		return -errno;
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, errlen, "failed to use '%s': not a directory", dir);
		return -ENOTDIR;
	}
	return 0;
}

/* A leftover socket from an earlier run is removed; anything else is not. */
static int clear_path(const char *path, char *err, size_t errlen)
{
	struct stat st;

	if (lstat(path, &st))
		return errno == ENOENT ? 0 : -errno;
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, errlen, "failed to bind '%s': it exists and is not a socket", path);
		return -EEXIST;
	}
	if (unlink(path)) {
		snprintf(err, errlen, "failed to remove stale socket '%s': %s", path, strerror(errno));
		return -errno;
	}
	return 0;
}

/*
 * control__new() - listen on @path (mode 0600, its directory 0700).
 * Returns NULL, sets errno and describes the failure in @err.
 */
struct control *control__new(const char *path, char *err, size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct control *c;
	mode_t old;
	int e;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "failed to bind '%s': path too long for a unix socket", path);
		errno = ENAMETOOLONG;
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	for (int i = 0; i < FR_CONTROL_CLIENTS; i++)
		c->cl[i].fd = -1;
	c->lfd = -1;
	c->path = strdup(path);
	e = c->path ? make_dir(path, err, errlen) : -ENOMEM;
	if (!e)
		e = clear_path(path, err, errlen);
	if (e)
		goto fail;
	c->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->lfd < 0) {
		e = -errno;
		snprintf(err, errlen, "failed to create socket: %s", strerror(-e));
		goto fail;
	}
	strcpy(sa.sun_path, path);
	old = umask(0177);
	e = bind(c->lfd, (struct sockaddr *)&sa, sizeof(sa)) ? -errno : 0;
	umask(old);
	if (!e && chmod(path, 0600))
		e = -errno;
	if (!e && listen(c->lfd, 64))
		e = -errno;
	if (e) {
		snprintf(err, errlen, "failed to listen on '%s': %s", path, strerror(-e));
		goto fail;
	}
	return c;
fail:
	control__free(c);
	errno = -e;
	return NULL;
}

void control__free(struct control *c)
{
	if (!c)
		return;
	for (int i = 0; i < FR_CONTROL_CLIENTS; i++)
		if (c->cl[i].fd >= 0)
			close(c->cl[i].fd);
	if (c->lfd >= 0) {
		close(c->lfd);
		unlink(c->path);
	}
	free(c->path);
	free(c);
}

int control__fd(const struct control *c)
{
	return c->lfd;
}

static struct client *client_of(struct control *c, int id)
{
	if (id < 1 || id > FR_CONTROL_CLIENTS || c->cl[id - 1].fd < 0)
		return NULL;
	return &c->cl[id - 1];
}

/*
 * Refuse a connection with a one-line reason. Half-close first and drop
 * what the peer already sent: closing with unread input would reset the
 * connection and the peer might never read why.
 */
static void refuse(int fd, const char *why)
{
	char sink[256];

	if (send(fd, why, strlen(why), MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* the peer is gone; nothing to tell */
	}
	shutdown(fd, SHUT_WR);
	while (recv(fd, sink, sizeof(sink), MSG_DONTWAIT) > 0)
		;
	close(fd);
}

/*
 * control__accept() - take one pending connection. Only root may talk to
 * the daemon: others get "error" and are closed. Returns 0 with the new
 * client's @id and @fd (to watch for input), -EAGAIN when none is pending,
 * -EPERM or -EBUSY for a refused peer, or -errno.
 */
int control__accept(struct control *c, int *id, int *fd)
{
	struct ucred cred;
	socklen_t len = sizeof(cred);
	struct timeval tv = { .tv_sec = 1 };
	int s, i;

	s = accept4(c->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
	if (s < 0)
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	if (getsockopt(s, SOL_SOCKET, SO_PEERCRED, &cred, &len) || cred.uid != 0) {
		c->st.refused++;
		refuse(s, "error permission denied: the control socket is for root only\n");
		return -EPERM;
	}
	for (i = 0; i < FR_CONTROL_CLIENTS && c->cl[i].fd >= 0; i++)
		;
	if (i == FR_CONTROL_CLIENTS) {
		c->st.refused++;
		refuse(s, "error busy: too many clients\n");
		return -EBUSY;
	}
	setsockopt(s, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	c->cl[i] = (struct client){ .fd = s, .since = now_ns() };
	c->st.accepted++;
	*id = i + 1;
	*fd = s;
	return 0;
}

static int parse(char *line, struct control_req *req)
{
	char *rest;

	memset(req, 0, sizeof(*req));
	line[strcspn(line, "\r\n")] = 0;
	rest = line + strcspn(line, " \t");
	if (*rest)
		*rest++ = 0;
	rest += strspn(rest, " \t");
	if (!strcmp(line, "snapshot")) {
		req->verb = FR_CTL_SNAPSHOT;
		snprintf(req->reason, sizeof(req->reason), "%s", rest);
		return 0;
	}
	if (!strcmp(line, "status") && (!*rest || !strcmp(rest, "json"))) {
		req->verb = FR_CTL_STATUS;
		req->json = *rest;
		return 0;
	}
	return -EINVAL;
}

/*
 * control__read() - the client's socket is readable. Returns 1 when a
 * whole request line was read into @req (the client now waits for a
 * reply), 0 when more bytes are needed, -EINVAL for a malformed request,
 * -EMSGSIZE for one longer than FR_CONTROL_LINE_MAX, -ECONNRESET when the
 * client left. On any error the caller replies (if it can) and closes.
 */
int control__read(struct control *c, int id, struct control_req *req)
{
	struct client *cl = client_of(c, id);
	ssize_t n;
	char *nl;

	if (!cl)
		return -EBADF;
	if (cl->waiting)
		return 0;
	n = read(cl->fd, cl->buf + cl->len, FR_CONTROL_LINE_MAX - cl->len);
	if (n < 0)
		return errno == EAGAIN || errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ECONNRESET;
	cl->len += n;
	cl->buf[cl->len] = 0;
	nl = memchr(cl->buf, '\n', cl->len);
	if (!nl) {
		if (cl->len < FR_CONTROL_LINE_MAX)
			return 0;
		c->st.bad++;
		return -EMSGSIZE;
	}
	*nl = 0;
	if (parse(cl->buf, req)) {
		c->st.bad++;
		return -EINVAL;
	}
	cl->waiting = true;
	return 1;
}

/* control__reply() - send @text (bounded wait). Returns 0 or -errno. */
int control__reply(struct control *c, int id, const char *text)
{
	struct client *cl = client_of(c, id);
	size_t len = strlen(text), off = 0;
	int fl;

	if (!cl)
		return -EBADF;
	fl = fcntl(cl->fd, F_GETFL);
	if (fl >= 0)
		fcntl(cl->fd, F_SETFL, fl & ~O_NONBLOCK);
	while (off < len) {
		ssize_t n = send(cl->fd, text + off, len - off, MSG_NOSIGNAL);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		off += n;
	}
	return 0;
}

void control__close(struct control *c, int id)
{
	struct client *cl = client_of(c, id);

	if (!cl)
		return;
	close(cl->fd);
	cl->fd = -1;
}

bool control__alive(const struct control *c, int id)
{
	return client_of((struct control *)c, id) != NULL;
}

/*
 * control__expire() - drop clients that did not send a whole request
 * within FR_CONTROL_REQ_TIMEOUT_NS. Clients waiting for a reply stay.
 */
void control__expire(struct control *c, uint64_t now)
{
	for (int i = 0; i < FR_CONTROL_CLIENTS; i++) {
		struct client *cl = &c->cl[i];

		if (cl->fd < 0 || cl->waiting || now - cl->since < FR_CONTROL_REQ_TIMEOUT_NS)
			continue;
		c->st.timeouts++;
		refuse(cl->fd, "error timeout: no request line\n");
		cl->fd = -1;
	}
}

const struct control_stats *control__stats(const struct control *c)
{
	return &c->st;
}
