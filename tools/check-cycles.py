#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""check-cycles.py - no cycles between the project's source files.

    tools/check-cycles.py [--graph] [--tap] [BUILD_DIR]      default build

Two graphs, both over the files of bpf/, conf/, recorder/, triggers/ and
tools/ (tests and benchmarks aside):
  includes  file -> each project header it #includes (from the sources);
  calls     file -> each file that defines a function or object it uses,
            read from the object files of BUILD_DIR with nm: a use of a
            symbol that another source file defines is an edge between the
            two files (a header's inline functions count for the header).
Two more are drawn from both: modules (a header and the .c file of the
same name are one node, so an inline helper in daemon.h counts as
daemon.c's and hides no cycle) and folders (recorder/<stage>, conf,
triggers, tools, bpf).
A cycle in any (two or more nodes that reach each other) is printed and
makes the exit status 1; --graph prints every edge too, --tap reports the
two checks as TAP (meson runs it so: tests/meson.build). Exit status 2 when
BUILD_DIR holds no object files (build first: ninja -C BUILD_DIR).
"""
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIRS = ("bpf", "conf", "recorder", "triggers", "tools")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def sources():
    """Project C sources and headers, relative to ROOT (tests and benchmarks aside)."""
    out = []
    for d in DIRS:
        for dirpath, dirs, files in os.walk(os.path.join(ROOT, d)):
            dirs[:] = [x for x in dirs if x != "bench"]
            for f in files:
                if f.endswith((".c", ".h")) and not f.endswith(".bpf.c"):
                    out.append(os.path.relpath(os.path.join(dirpath, f), ROOT))
    return sorted(out)


def include_graph(files):
    by_name = {}
    for f in files:
        by_name.setdefault(os.path.basename(f), []).append(f)
    graph = {f: set() for f in files}
    for f in files:
        with open(os.path.join(ROOT, f), errors="replace") as fh:
            text = fh.read()
        for inc in INCLUDE.findall(text):
            rel = os.path.normpath(os.path.join(os.path.dirname(f), inc))
            if rel in graph:
                target = rel
            elif len(by_name.get(os.path.basename(inc), [])) == 1:
                target = by_name[os.path.basename(inc)][0]
            else:
                continue        # a generated or system header
            if target != f:
                graph[f].add(target)
    return graph


def call_graph(build, files):
    """Edges between source files from the symbols their objects define and use."""
    objs = []
    for dirpath, _, names in os.walk(build):
        if "/tests/" in dirpath + "/" or "bench" in dirpath or "build-fuzz" in dirpath:
            continue
        objs += [os.path.join(dirpath, n) for n in names if n.endswith(".c.o")]
    known = set(files)
    src_of = {}
    for o in objs:
        # meson names objects after their path below the meson.build: dump_encoder.c.o
        base = os.path.basename(o)[:-2]
        match = [f for f in known if f.endswith(".c") and
                 ("_" + f.replace("/", "_")).endswith("_" + base)]
        if len(match) == 1:
            src_of[o] = match[0]
    defs, uses = {}, {}
    for o, src in src_of.items():
        out = subprocess.run(["nm", "-P", o], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) < 2:
                continue
            sym, kind = parts[0], parts[1]
            if kind == "U":
                uses.setdefault(src, set()).add(sym)
            elif kind in "TDBR":
                defs.setdefault(sym, set()).add(src)
    graph = {f: set() for f in src_of.values()}
    for src, syms in uses.items():
        for s in syms:
            for d in defs.get(s, ()):
                if d != src:
                    graph[src].add(d)
    return graph, len(src_of)


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def collapse(graphs, node):
    """The union of @graphs with each file mapped to node(file); no self-edges."""
    out = {}
    for g in graphs:
        for f, targets in g.items():
            a = node(f)
            out.setdefault(a, set())
            for t in targets:
                b = node(t)
                out.setdefault(b, set())
                if a != b:
                    out[a].add(b)
    return out


def module_of(f):
    return os.path.splitext(f)[0]


def folder_of(f):
    parts = f.split(os.sep)
    return os.sep.join(parts[:2]) if parts[0] == "recorder" else parts[0]


def main():
    flags = {a for a in sys.argv[1:] if a.startswith("--")}
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    show, tap = "--graph" in flags, "--tap" in flags
    build = os.path.abspath(args[0] if args else os.path.join(ROOT, "build"))
    files = sources()
    inc = include_graph(files)
    calls, nobj = call_graph(build, files)
    if not nobj:
        print(f"check-cycles: no object files under '{build}': build first", file=sys.stderr)
        return 2
    bad = 0
    graphs = (("include", inc), ("call", calls),
              ("module", collapse((inc, calls), module_of)),
              ("folder", collapse((inc, calls), folder_of)))
    if tap:
        print(f"1..{len(graphs)}")
    for n, (name, graph) in enumerate(graphs, 1):
        if show:
            for f in sorted(graph):
                for t in sorted(graph[f]):
                    print(f"{name}: {f} -> {t}")
        found = cycles(graph)
        summary = (f"{name} graph: {len(graph)} nodes, {sum(map(len, graph.values()))} edges, "
                   f"{len(found)} cycles")
        if tap:
            print(f"{'not ok' if found else 'ok'} {n} - no {name} cycles ({summary})")
        for comp in found:
            edges = [f"{a} -> {b}" for a in comp for b in sorted(graph[a]) if b in comp]
            print(f"{'# ' if tap else ''}{name} cycle among {len(comp)} nodes: " + "; ".join(edges))
        if not tap:
            print(summary)
        bad += len(found)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
