// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * cmd_control.c - "flightrec snapshot" and "flightrec status": talk to a
 * running flightrecd over its control socket (root only).
 */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "control.h"

#define FR_SNAPSHOT_TIMEOUT_S	120

static const char *default_socket(void)
{
	const char *env = getenv("FLIGHTREC_SOCKET");

	return env && *env ? env : FR_CONTROL_DEFAULT_PATH;
}

/*
 * Send @request to the daemon at @path and read its whole reply (it closes
 * when done) into a malloc'd string. Returns an exit code; prints why on
 * failure.
 */
static int ask(const char *path, const char *request, int timeout_s, char **reply)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t len = 0, cap = 4096;
	char *buf = NULL;
	time_t end = time(NULL) + timeout_s;
	int fd, rc = FR_EXIT_FAIL, send_err = 0;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "flightrec: socket path '%s' is too long\n", path);
		return FR_EXIT_USAGE;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa))) {
		fprintf(stderr, "flightrec: failed to connect to '%s': %s%s\n", path, strerror(errno),
			errno == ENOENT || errno == ECONNREFUSED ? " (is flightrecd running?)" :
			errno == EACCES ? " (the control socket is for root)" : "");
		goto out;
	}
	/* A refused client may find the reply already there and the peer gone. */
	if (send(fd, request, strlen(request), MSG_NOSIGNAL) < 0) {
		send_err = errno;
		if (send_err != EPIPE && send_err != ECONNRESET) {
			fprintf(stderr, "flightrec: failed to send to '%s': %s\n", path,
				strerror(send_err));
			goto out;
		}
	}
	buf = malloc(cap);
	if (!buf)
		goto out;
	for (;;) {
		struct pollfd pfd = { .fd = fd, .events = POLLIN };
		int left = (int)(end - time(NULL));
		ssize_t n;

		if (left <= 0 || poll(&pfd, 1, left * 1000) <= 0) {
			fprintf(stderr, "flightrec: no answer from '%s' within %d s\n", path, timeout_s);
			goto out;
		}
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (!nb)
				goto out;
			buf = nb;
		}
		n = read(fd, buf + len, cap - 1 - len);
		if (n < 0 && errno == ECONNRESET && len)
			break;	/* the daemon said its piece and hung up */
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && !send_err) {
			fprintf(stderr, "flightrec: failed to read from '%s': %s\n", path, strerror(errno));
			goto out;
		}
		if (n <= 0)
			break;
		len += n;
	}
	if (send_err && !len) {
		fprintf(stderr, "flightrec: failed to send to '%s': %s\n", path, strerror(send_err));
		goto out;
	}
	buf[len] = 0;
	*reply = buf;
	buf = NULL;
	rc = FR_EXIT_OK;
out:
	free(buf);
	if (fd >= 0)
		close(fd);
	return rc;
}

/* An "error ..." reply goes to stderr and fails the command. */
static int relay(char *reply)
{
	if (!strncmp(reply, "error ", 6)) {
		fprintf(stderr, "flightrec: %s", reply + 6);
		free(reply);
		return FR_EXIT_FAIL;
	}
	return FR_EXIT_OK;
}

static void snapshot_usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec snapshot [--reason TEXT] [--socket PATH] [--timeout SECONDS]\n"
		"\n"
		"Ask flightrecd for a dump now and print its path once it is durable.\n"
		"Requests that arrive while a dump is being prepared share it.\n"
		"\n"
		"  --reason TEXT      recorded in the dump's trigger\n"
		"  --socket PATH      control socket (default $FLIGHTREC_SOCKET or\n"
		"                     " FR_CONTROL_DEFAULT_PATH ")\n"
		"  --timeout SECONDS  give up after this long (default %d)\n"
		"  --help             show this help\n"
		"  --version          show the version\n", FR_SNAPSHOT_TIMEOUT_S);
}

int cmd_snapshot(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "reason", required_argument, NULL, 'r' },
		{ "socket", required_argument, NULL, 's' },
		{ "timeout", required_argument, NULL, 't' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *path = default_socket(), *reason = "";
	uint32_t timeout = FR_SNAPSHOT_TIMEOUT_S;
	char req[FR_CONTROL_LINE_MAX], *reply = NULL;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'r':
			reason = optarg;
			break;
		case 's':
			path = optarg;
			break;
		case 't':
			if (cli_parse_u32(optarg, &timeout) || !timeout)
				return cli_usage_error("snapshot", "--timeout needs a positive number of seconds, not '%s'",
						       optarg);
			break;
		default:
			return cli_common_option("snapshot", c, argv, snapshot_usage);
		}
	}
	if (optind != argc)
		return cli_usage_error("snapshot", "unexpected argument '%s'", argv[optind]);
	if (strchr(reason, '\n') || strlen(reason) > FR_CONTROL_LINE_MAX - 16)
		return cli_usage_error("snapshot", "--reason must be one line of at most %d bytes",
				       FR_CONTROL_LINE_MAX - 16);
	snprintf(req, sizeof(req), "snapshot %s\n", reason);
	rc = ask(path, req, timeout, &reply);
	if (rc)
		return rc;
	rc = relay(reply);
	if (rc)
		return rc;
	if (strncmp(reply, "ok ", 3)) {
		fprintf(stderr, "flightrec: unexpected answer: %s", reply);
		free(reply);
		return FR_EXIT_FAIL;
	}
	fputs(reply + 3, stdout);
	free(reply);
	return FR_EXIT_OK;
}

static void status_usage(FILE *f)
{
	fprintf(f,
		"Usage: flightrec status [--json] [--socket PATH]\n"
		"\n"
		"Show what flightrecd is doing: recording state, window fill, event\n"
		"rates and losses, every trigger with its state and last firing, and\n"
		"the recent dumps.\n"
		"\n"
		"  --json         one JSON object\n"
		"  --socket PATH  control socket (default $FLIGHTREC_SOCKET or\n"
		"                 " FR_CONTROL_DEFAULT_PATH ")\n"
		"  --help         show this help\n"
		"  --version      show the version\n");
}

int cmd_status(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "socket", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{}
	};
	const char *path = default_socket();
	char *reply = NULL;
	bool json = false;
	int c, rc;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":", opts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 's':
			path = optarg;
			break;
		default:
			return cli_common_option("status", c, argv, status_usage);
		}
	}
	if (optind != argc)
		return cli_usage_error("status", "unexpected argument '%s'", argv[optind]);
	rc = ask(path, json ? "status json\n" : "status\n", 10, &reply);
	if (rc)
		return rc;
	rc = relay(reply);
	if (rc)
		return rc;
	fputs(reply, stdout);
	free(reply);
	return FR_EXIT_OK;
}
