/* SPDX-License-Identifier: MIT */
/*
 * tap.h - a minimal TAP producer for the unit tests.
 *
 * Each test program calls tap_plan() or tap_done_testing() and reports every
 * check with ok()/is_int()/is_str(). The exit status is non-zero when any
 * check failed, so meson's 'tap' protocol and plain shells agree.
 */
#ifndef FR_TAP_H
#define FR_TAP_H

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int tap__n;
static int tap__failed;

static inline void tap_plan(int n)
{
	printf("1..%d\n", n);
	fflush(stdout);
}

static inline int tap__report(int pass, const char *fmt, va_list ap)
{
	tap__n++;
	if (!pass)
		tap__failed++;
	printf("%s %d - ", pass ? "ok" : "not ok", tap__n);
	vprintf(fmt, ap);
	printf("\n");
	fflush(stdout);
	return pass;
}

/* ok() - report one check; returns the check's truth value. */
static inline __attribute__((format(printf, 2, 3)))
int ok(int pass, const char *fmt, ...)
{
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = tap__report(pass, fmt, ap);
	va_end(ap);
	return r;
}

#define is_int(got, want, ...) ({					\
	long long g__ = (long long)(got), w__ = (long long)(want);	\
	int r__ = ok(g__ == w__, __VA_ARGS__);				\
	if (!r__)							\
		printf("#   got %lld, want %lld\n", g__, w__);		\
	r__;								\
})

#define is_str(got, want, ...) ({					\
	const char *g__ = (got), *w__ = (want);				\
	int r__ = ok(g__ && w__ && !strcmp(g__, w__), __VA_ARGS__);	\
	if (!r__)							\
		printf("#   got '%s', want '%s'\n", g__ ? g__ : "(null)",	\
		       w__ ? w__ : "(null)");				\
	r__;								\
})

/* contains() - check that @hay holds @needle. */
#define contains(hay, needle, ...) ({					\
	const char *h__ = (hay), *n__ = (needle);			\
	int r__ = ok(h__ && n__ && strstr(h__, n__), __VA_ARGS__);	\
	if (!r__)							\
		printf("#   '%s' does not contain '%s'\n",		\
		       h__ ? h__ : "(null)", n__ ? n__ : "(null)");	\
	r__;								\
})

static inline void tap_diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
}

/* tap_skip_all() - the whole program cannot run here; say why and exit 0. */
static inline void tap_skip_all(const char *why)
{
	printf("1..0 # SKIP %s\n", why);
	fflush(stdout);
	exit(0);
}

static inline void tap_skip(int n, const char *why)
{
	for (int i = 0; i < n; i++) {
		tap__n++;
		printf("ok %d # SKIP %s\n", tap__n, why);
	}
	fflush(stdout);
}

/*
 * survives() - run statement @stmt in a child process: true when it
 * returned and the child exited 0, false when it crashed, aborted or hung
 * past 10 s (a sanitizer report ends the child too). For calls whose only
 * contract is to be harmless, such as a destructor given NULL.
 */
#define survives(stmt) ({						\
	int s__ = -1;							\
	pid_t p__;							\
	fflush(NULL);							\
	p__ = fork();							\
	if (p__ == 0) {							\
		alarm(10);						\
		stmt;							\
		_exit(0);						\
	}								\
	p__ > 0 && waitpid(p__, &s__, 0) == p__ &&			\
		WIFEXITED(s__) && WEXITSTATUS(s__) == 0;		\
})

/* tap_done_testing() - print the trailing plan; returns the exit status. */
static inline int tap_done_testing(void)
{
	printf("1..%d\n", tap__n);
	fflush(stdout);
	return tap__failed ? 1 : 0;
}

#endif /* FR_TAP_H */
