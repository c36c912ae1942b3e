// SPDX-License-Identifier: LGPL-2.1-or-later
/*
 * test_cgroup.c - cgroup identity and the system's memory: /proc/PID/cgroup
 * as v1, v2 and hybrid machines write it, container ids from the paths the
 * runtimes make, and the readings of /proc/meminfo, /proc/vmstat and this
 * process's own cgroup against what the files say.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cgroup.h"
#include "meminfo.h"
#include "tap.h"

#define ID64	"0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"

static void test_parse(void)
{
	static const struct {
		const char *text, *v2, *memcg, *container;
		bool v1;
	} cases[] = {
		{ "0::/system.slice/nginx.service\n", "/system.slice/nginx.service",
		  "/system.slice/nginx.service", NULL, false },
		{ "12:memory:/user.slice\n11:cpu,cpuacct:/\n0::/user.slice/session-3.scope\n",
		  "/user.slice/session-3.scope", "/user.slice", NULL, true },
		{ "5:blkio:/\n4:cpuset,memory:/docker/" ID64 "\n1:name=systemd:/x\n",
		  NULL, "/docker/" ID64, ID64, true },
		{ "0::/system.slice/docker-" ID64 ".scope\n", "/system.slice/docker-" ID64 ".scope",
		  "/system.slice/docker-" ID64 ".scope", ID64, false },
		{ "0::/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod1234.slice/cri-containerd-"
		  ID64 ".scope\n", NULL, NULL, ID64, false },
		{ "0::/machine.slice/machine-web1.scope\n", NULL, NULL, "web1", false },
		{ "0::/\n", "/", "/", NULL, false },
		{ "", NULL, NULL, NULL, false },
		/* a memory controller name inside another word is not memory */
		{ "3:memoryless:/a\n0::/b\n", "/b", "/b", NULL, false },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cgroup_ident c;
		bool good;

		if (!is_int(cgroup__parse(cases[i].text, &c), 0, "parse case %zu", i))
			continue;
		good = (!cases[i].v2 || (c.v2 && !strcmp(c.v2, cases[i].v2))) &&
		       (!cases[i].memcg || (c.memcg && !strcmp(c.memcg, cases[i].memcg))) &&
		       (cases[i].container ? c.container && !strcmp(c.container, cases[i].container) :
					     !c.container) &&
		       c.memcg_v1 == cases[i].v1;
		ok(good, "case %zu: v2 '%s', memory '%s'%s, container '%s'", i, c.v2 ? c.v2 : "-",
		   c.memcg ? c.memcg : "-", c.memcg_v1 ? " (v1)" : "", c.container ? c.container : "-");
		cgroup__ident_free(&c);
	}
}

static void test_container_ids(void)
{
	char out[128];

	is_int(cgroup__container_id("/docker/" ID64 "a", out, sizeof(out)), 0,
	       "65 hex-or-more characters are no id");
	is_int(cgroup__container_id("/a/" ID64, out, 64), 0, "no room for the id: none");
	is_int(cgroup__container_id("/crio-" ID64 ".scope/init", out, sizeof(out)), 1,
	       "the id of an outer component");
	is_str(out, ID64, "is the 64 hex digits");
	is_int(cgroup__container_id("/libpod-" ID64 ".scope", out, sizeof(out)), 1, "podman's scope");
	is_int(cgroup__container_id("/machine-.scope", out, sizeof(out)), 0, "an empty machine name is none");
	is_int(cgroup__container_id("/user.slice/user-0.slice", out, sizeof(out)), 0, "a user slice is none");
}

/* The value of @key in /proc/meminfo (kB) or /proc/vmstat, read here; -1: none. */
static long long read_key(const char *path, const char *key, bool prefix)
{
	char line[256];
	long long sum = -1;
	FILE *f = fopen(path, "r");

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f)) {
		size_t n = strlen(key);

		if (!strncmp(line, key, n) && (prefix || line[n] == ' ' || line[n] == ':'))
			sum = (sum < 0 ? 0 : sum) + strtoll(line + n + (prefix ? strcspn(line + n, " ") : 1),
							     NULL, 10);
	}
	fclose(f);
	return sum;
}

static void test_meminfo(void)
{
	struct fr_dump_memsys m;
	long long total = read_key("/proc/meminfo", "MemTotal", false);
	long long stall0 = read_key("/proc/vmstat", "allocstall_", true), stall1;
	long long kill = read_key("/proc/vmstat", "oom_kill", false);

	if (!is_int(meminfo__read(&m), 0, "meminfo__read"))
		return;
	stall1 = read_key("/proc/vmstat", "allocstall_", true);
	ok(total > 0 && m.v[FR_MSYS_MEM_TOTAL] == (uint64_t)total * 1024,
	   "MemTotal in bytes (%llu kB)", total);
	ok(m.v[FR_MSYS_MEM_AVAILABLE] > 0 && m.v[FR_MSYS_MEM_AVAILABLE] <= m.v[FR_MSYS_MEM_TOTAL],
	   "MemAvailable within MemTotal");
	ok(stall0 >= 0 && m.v[FR_MSYS_ALLOCSTALL] >= (uint64_t)stall0 &&
	   m.v[FR_MSYS_ALLOCSTALL] <= (uint64_t)stall1,
	   "allocstall is the sum of allocstall_* (%llu)", (unsigned long long)m.v[FR_MSYS_ALLOCSTALL]);
	ok(kill >= 0 && m.v[FR_MSYS_OOM_KILL] >= (uint64_t)kill, "oom_kill as /proc/vmstat has it");
}

/* Our own memory cgroup, read as the daemon reads it, against its files. */
static void test_own_memcg(void)
{
	char text[4096], root[4096], path[8192];
	struct cgroup_ident c;
	struct fr_dump_memcg mc;
	bool v1;
	FILE *f = fopen("/proc/self/cgroup", "r");
	size_t n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	int err;

	if (f)
		fclose(f);
	text[n] = 0;
	if (cgroup__memory_root(root, sizeof(root), &v1)) {
		tap_skip(3, "no memory cgroup hierarchy is mounted");
		return;
	}
	if (!is_int(cgroup__parse(text, &c), 0, "our /proc/self/cgroup parses") || !c.memcg) {
		cgroup__ident_free(&c);
		return;
	}
	err = cgroup__read_memory(c.memcg, &mc);
	if (err && !strcmp(c.memcg, "/") && !v1) {
		tap_skip(2, "the v2 root has no memory.current");
		cgroup__ident_free(&c);
		return;
	}
	is_int(err, 0, "our memory cgroup '%s' reads (%s)", c.memcg, v1 ? "v1" : "v2");
	snprintf(path, sizeof(path), "%s%s/%s", root, c.memcg,
		 v1 ? "memory.limit_in_bytes" : "memory.max");
	f = fopen(path, "r");
	n = f ? fread(text, 1, sizeof(text) - 1, f) : 0;
	if (f)
		fclose(f);
	text[n] = 0;
	ok(!err && (strncmp(text, "max", 3) ? mc.limit == strtoull(text, NULL, 10) :
					      (mc.flags & FR_DMCG_UNLIMITED)) && mc.usage > 0,
	   "its limit as %s says, usage %llu", path, (unsigned long long)mc.usage);
	cgroup__ident_free(&c);
}

int main(void)
{
	test_parse();
	test_container_ids();
	test_meminfo();
	test_own_memcg();
	return tap_done_testing();
}
