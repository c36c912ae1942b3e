// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_untrusted.c - the one way flightrecd opens files other users
 * control (recorder/symbols/untrusted.c), on real files, FIFOs, devices, symlinks
 * and hard links in a private directory; then the same through the
 * component walk that stands in for openat2 on older kernels. Needs root
 * for the owner cases (chown to nobody's uid).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <sys/wait.h>

#include "perfmap.h"
#include "procinfo.h"
#include "symbols.h"
#include "tap.h"
#include "untrusted.h"
#include "util.h"

#define NOBODY	65534

static char dir[64];

static const char *at(const char *name)
{
	static char buf[4][256];
	static int k;

	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", dir, name);
	return buf[k];
}

static void put(const char *name, const char *text, mode_t mode, uid_t uid)
{
	int fd = open(at(name), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, mode);

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    fchown(fd, uid, 0) || fchmod(fd, mode)) {
		perror(at(name));
		exit(1);
	}
	close(fd);
}

static uint64_t refused(enum fr_refusal r)
{
	struct untrusted_stats st;

	untrusted__stats(&st);
	return st.refused[r];
}

/* Open @name (in dir) by @rule; the fd is closed, the result returned. */
static int try_open(const char *path, const struct fr_untrusted_rule *rule)
{
	int fd = untrusted__open(AT_FDCWD, path, rule, NULL);

	if (fd >= 0) {
		close(fd);
		return 0;
	}
	return fd;
}

static void test_types(const char *how)
{
	const struct fr_untrusted_rule any = { 0 };
	uint64_t links = refused(FR_REFUSED_LINK), types = refused(FR_REFUSED_TYPE);
	char buf[64];
	struct stat st;
	ssize_t n;
	int fd;

	fd = untrusted__open(AT_FDCWD, at("plain"), &any, &st);
	ok(fd >= 0, "%s: a regular file opens", how);
	if (fd >= 0) {
		n = untrusted__read(fd, buf, sizeof(buf) - 1, 0);
		buf[n > 0 ? n : 0] = 0;
		is_str(buf, "hello\n", "%s: and reads back", how);
		ok(fcntl(fd, F_GETFL) & O_NONBLOCK, "%s: opened O_NONBLOCK", how);
		ok(fcntl(fd, F_GETFD) & FD_CLOEXEC, "%s: opened O_CLOEXEC", how);
		is_int(st.st_size, 6, "%s: its fstat is returned", how);
		close(fd);
	}
	is_int(try_open(at("link-to-plain"), &any), -ELOOP, "%s: a symlink as last component is refused", how);
	is_int(try_open(at("linkdir/plain"), &any), -ELOOP, "%s: a symlink in the middle of the path is refused", how);
	is_int(refused(FR_REFUSED_LINK) - links, 2, "%s: both counted as 'link'", how);
	/* A FIFO would block an open for reading: alarm() turns a hang into a failure. */
	alarm(5);
	is_int(try_open(at("fifo"), &any), -EINVAL, "%s: a FIFO is refused, without blocking", how);
	alarm(0);
	is_int(try_open("/dev/null", &any), -EINVAL, "%s: a character device is refused", how);
	is_int(try_open(dir, &any), -EINVAL, "%s: a directory is refused", how);
	is_int(refused(FR_REFUSED_TYPE) - types, 3, "%s: those counted as 'type'", how);
	is_int(try_open(at("absent"), &any), -ENOENT, "%s: a missing file is -ENOENT, not a refusal", how);
}

static void test_rules(const char *how)
{
	struct fr_untrusted_rule own = { .check_owner = true, .uid = NOBODY, .max_bytes = 1 << 20 };
	struct fr_untrusted_rule other = own;
	uint64_t owners = refused(FR_REFUSED_OWNER), sizes = refused(FR_REFUSED_SIZE);

	other.uid = 1000;
	is_int(try_open(at("nobody-file"), &own), 0, "%s: a file of the process's uid passes the owner rule", how);
	is_int(try_open(at("nobody-file"), &other), -EPERM, "%s: another uid's file does not", how);
	is_int(try_open(at("root-public"), &own), 0, "%s: root's world-readable file with one link passes", how);
	is_int(try_open(at("root-secret"), &own), -EPERM, "%s: root's 0600 file does not", how);
	is_int(try_open(at("root-public-linked"), &own), -EPERM,
	       "%s: root's world-readable file with a second (hard) link does not", how);
	is_int(try_open(at("secret-hardlink"), &own), -EPERM,
	       "%s: a hard link to root's 0600 file does not", how);
	is_int(refused(FR_REFUSED_OWNER) - owners, 4, "%s: four counted as 'owner'", how);
	is_int(try_open(at("sparse-10g"), &own), -EFBIG, "%s: a 10 GiB sparse file is refused by its size", how);
	is_int(refused(FR_REFUSED_SIZE) - sizes, 1, "%s: counted as 'size'", how);
}

static void test_in_root(const char *how)
{
	const struct fr_untrusted_rule in_root = { .in_root = true };
	int rootfd = open(dir, O_PATH | O_DIRECTORY | O_CLOEXEC);
	int fd;

	fd = untrusted__open(rootfd, "/sub/inner", &in_root, NULL);
	ok(fd >= 0, "%s: an absolute path resolves inside the given root", how);
	if (fd >= 0)
		close(fd);
	fd = untrusted__open(rootfd, "/sub/abs-link", &in_root, NULL);
	is_int(fd, -ELOOP, "%s: an absolute symlink inside the root is refused", how);
	if (fd >= 0)
		close(fd);
	close(rootfd);
}

static void test_kernel_links(void)
{
	const struct fr_untrusted_rule any = { 0 };
	const struct fr_untrusted_rule kernel = { .kernel_link = true, .max_bytes = FR_ELF_MAX_BYTES };
	char path[64];
	int fd = open(at("plain"), O_RDONLY | O_CLOEXEC);

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	is_int(try_open(path, &any), -ELOOP, "a /proc magic link is refused as a path a process wrote");
	is_int(try_open(path, &kernel), 0, "and followed where the kernel chose it (kernel_link)");
	close(fd);
	fd = open("/dev/zero", O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	is_int(try_open(path, &kernel), -EINVAL, "a kernel link to a device is refused by type");
	close(fd);
}

static void test_reads(void)
{
	const struct fr_untrusted_rule any = { 0 };
	char buf[8], *all = NULL;
	size_t len = 0;
	int fd = untrusted__open(AT_FDCWD, at("plain"), &any, NULL);

	is_int(untrusted__read(fd, buf, 3, 0), 3, "a read stops at its byte bound");
	is_int(untrusted__read(fd, buf, sizeof(buf), 1), -ETIMEDOUT, "and at its deadline");
	is_int(untrusted__slurp(fd, 5, 0, &all, &len), -EFBIG, "slurp refuses a file above its bound");
	is_int(untrusted__slurp(fd, 64, 0, &all, &len), 0, "and reads one within it");
	ok(all && len == 6 && !strcmp(all, "hello\n"), "whole and NUL-terminated");
	free(all);
	close(fd);
}

static void test_perfmap(void)
{
	struct perfmap *p;

	alarm(5);
	p = perfmap__load(at("fifo"));
	alarm(0);
	ok(!p && errno == EINVAL, "perfmap__load of a FIFO fails at once (EINVAL)");
	p = perfmap__load(at("link-to-map"));
	ok(!p && errno == ELOOP, "perfmap__load through a symlink fails (ELOOP)");
	p = perfmap__load(at("map"));
	ok(p && perfmap__lookup(p, 0x1008, NULL) && !strcmp(perfmap__lookup(p, 0x1008, NULL), "jitted"),
	   "perfmap__load of a real map works");
	perfmap__free(p);
}

/* The start of process @pid as proc_meta__read() takes it (ns from field 22's ticks). */
static uint64_t start_of(pid_t pid)
{
	char buf[1024], path[64], *p;
	unsigned long long v = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	f = fopen(path, "re");

	if (!f || !fgets(buf, sizeof(buf), f))
		exit(1);
	fclose(f);
	p = strrchr(buf, ')') + 2;
	for (int field = 3; field < 22; field++)
		p = strchr(p, ' ') + 1;
	sscanf(p, "%llu", &v);
	return v * (FR_NSEC_PER_SEC / (uint64_t)sysconf(_SC_CLK_TCK));
}

static uint64_t self_start(void)
{
	return start_of(getpid());
}

/*
 * A process whose memory is gone (here a zombie; an exiting process is in
 * that state from exit_mm on, still running) has no mappings to read:
 * such a read is refused as gone, so that it never replaces the facts
 * read while the process ran.
 */
static void test_read_exited(void)
{
	struct symcache *sc = symcache__new();
	struct proc_meta *m = NULL;
	pid_t pid = fork();
	uint64_t start;
	char path[64];
	int err;

	if (pid == 0)
		_exit(0);
	start = pid > 0 ? start_of(pid) : 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	for (int i = 0; i < 200; i++) {	/* until it is a zombie: its maps are empty */
		FILE *f = fopen(path, "re");
		int c = f ? fgetc(f) : EOF;

		if (f)
			fclose(f);
		if (c == EOF)
			break;
		usleep(5000);
	}
	err = proc_meta__read((uint32_t)pid, start, sc, FR_META_MAPS, 0, &m);
	is_int(err, -ESRCH, "a read of a process without its memory (a zombie) is refused as gone");
	proc_meta__put(m);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	symcache__free(sc);
}

/* A /proc read past its deadline loads no binary, and says how many it left. */
static void test_read_deadline(void)
{
	struct symcache *sc = symcache__new();
	struct proc_meta *m = NULL;
	size_t exec_files = 0, loaded = 0;

	if (!ok(!proc_meta__read(getpid(), self_start(), sc, FR_META_MAPS, 0, &m) && m && m->img,
		"a /proc read of this process with no deadline"))
		return;
	for (size_t i = 0; i < m->img->maps->n; i++) {
		const struct fr_mapping *mp = &m->img->maps->m[i];

		exec_files += (mp->prot & PROT_EXEC) && mp->path && mp->path[0] == '/';
		loaded += m->img->syms[i] != NULL;
	}
	ok(exec_files >= 2 && loaded >= 2 && !m->img->skipped,
	   "loads every executable file mapping (%zu of %zu), skipping none", loaded, exec_files);
	ok(m->has_uid && m->uid == 0, "and records the owner of /proc/PID (uid %u)", (unsigned)m->uid);
	proc_meta__put(m);
	m = NULL;
	if (ok(!proc_meta__read(getpid(), self_start(), sc, FR_META_MAPS, 1, &m) && m && m->img,
	       "a read whose deadline has passed still succeeds")) {
		loaded = 0;
		for (size_t i = 0; i < m->img->maps->n; i++)
			loaded += m->img->syms[i] != NULL;
		is_int(loaded, 0, "but loads no binary");
		is_int(m->img->skipped, exec_files, "and counts every one it left");
	}
	proc_meta__put(m);
	symcache__free(sc);
}

static void setup(void)
{
	int fd;

	snprintf(dir, sizeof(dir), "/tmp/fr-untrusted-XXXXXX");
	if (!mkdtemp(dir))
		exit(1);
	chmod(dir, 0755);
	put("plain", "hello\n", 0644, 0);
	put("map", "1000 10 jitted\n", 0644, 0);
	put("nobody-file", "x\n", 0600, NOBODY);
	put("root-public", "x\n", 0644, 0);
	put("root-public-linked", "x\n", 0644, 0);
	put("root-secret", "secret\n", 0600, 0);
	if (link(at("root-public-linked"), at("second-link")) ||
	    link(at("root-secret"), at("secret-hardlink")) ||
	    symlink(at("plain"), at("link-to-plain")) || symlink("map", at("link-to-map")) ||
	    symlink(dir, at("linkdir")) || mkfifo(at("fifo"), 0644) ||
	    mkdir(at("sub"), 0755) || symlink("/plain", at("sub/abs-link"))) {
		perror("setup");
		exit(1);
	}
	put("sub/inner", "in\n", 0644, 0);
	fd = open(at("sparse-10g"), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	if (fd < 0 || ftruncate(fd, 10LL << 30) || fchown(fd, NOBODY, 0)) {
		perror("sparse");
		exit(1);
	}
	close(fd);
}

static void teardown(void)
{
	static const char *const names[] = {
		"plain", "map", "nobody-file", "root-public", "root-public-linked", "second-link",
		"root-secret", "secret-hardlink", "link-to-plain", "link-to-map", "linkdir", "fifo",
		"sub/inner", "sub/abs-link", "sparse-10g",
	};

	for (size_t i = 0; i < FR_ARRAY_SIZE(names); i++)
		unlink(at(names[i]));
	rmdir(at("sub"));
	rmdir(dir);
}

int main(void)
{
	if (geteuid())
		tap_skip_all("needs root to give files to other users");
	setup();
	test_types("openat2");
	test_rules("openat2");
	test_in_root("openat2");
	test_kernel_links();
	test_reads();
	test_perfmap();
	test_read_deadline();
	test_read_exited();
	untrusted__force_walk(true);
	test_types("walk");
	test_rules("walk");
	test_in_root("walk");
	untrusted__force_walk(false);
	teardown();
	return tap_done_testing();
}
