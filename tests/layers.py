#!/usr/bin/env python3
"""tests/layers.py [BUILDDIR] - engine/ kept in its layers (engine/LAYERS).

Checks, each printed as "ok N - ..." or "not ok N - ..." with the file and
line at fault, then "N passed, N failed":

  1. every source file is in a folder engine/LAYERS names (none at the top);
  2. every #include of an engine header, found as the compiler finds it
     (the file's folder, then -Iengine; "../", "base/../" and <> resolved),
     names it in quotes by its folder ("base/util.h"), and that folder is
     the file's own or one listed above it in engine/LAYERS (a lower layer):
     never one below; no computed #include, no header in a nested folder;
  3. no cycle of #includes between the engine's headers;
  4. no file over 900 lines;
  5. with BUILDDIR (the plain build's objects, `nm`): no call from a file to
     a function defined in a higher layer, and no cycle of calls between
     files (a function of a.c calling b.c that calls back into a.c).

LAYERS_ENGINE=DIR checks another tree (tests/layers-selftest.py).
Run by tests/run.sh (ninja test).  Exit 0 when every check passed.
"""
import os
import re
import subprocess
import sys

TOP = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ENGINE = os.path.realpath(os.environ.get("LAYERS_ENGINE") or os.path.join(TOP, "engine"))	# another tree: the self-test
MAX_LINES = 900
INCLUDE = re.compile(r'^\s*#\s*include\b\s*(.*)')
INCLUDE_NAME = re.compile(r'(["<])([^">]+)[">]')

results = []


def check(ok, what, why=()):
    results.append((ok, what, list(why)))


def layers():
    order = []
    with open(os.path.join(ENGINE, "LAYERS")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                order.append(line)
    return order


def sources():
    for folder in sorted(os.listdir(ENGINE)):
        path = os.path.join(ENGINE, folder)
        if os.path.isdir(path):
            for name in sorted(os.listdir(path)):
                if name.endswith((".c", ".h")) and os.path.isfile(os.path.join(path, name)):
                    yield folder, name


def nested():
    """source files deeper than engine/FOLDER/: neither built nor checked"""
    for root, dirs, names in os.walk(ENGINE):
        dirs.sort()
        if os.path.relpath(root, ENGINE).count(os.sep) >= 1:
            for n in sorted(names):
                if n.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(root, n), ENGINE)


def resolve(path, kind, inc):
    """the engine file an #include names, as the compiler finds it (-Iengine), or None"""
    tries = [os.path.join(ENGINE, inc)]
    if kind == '"':
        tries.insert(0, os.path.join(ENGINE, os.path.dirname(path), inc))
    for t in tries:
        if os.path.isfile(t):
            real = os.path.realpath(t)
            if real.startswith(ENGINE + os.sep):
                return os.path.relpath(real, ENGINE)
            return None
    return None


def main():
    order = layers()
    rank = {f: i for i, f in enumerate(order)}
    files = list(sources())
    known = {"%s/%s" % (f, n) for f, n in files}
    by_name = {}
    for f, n in files:
        by_name.setdefault(n, []).append("%s/%s" % (f, n))

    # 1. folders
    stray = [n for n in sorted(os.listdir(ENGINE))
             if os.path.isfile(os.path.join(ENGINE, n)) and n.endswith((".c", ".h"))]
    unknown = sorted({f for f, _ in files if f not in rank})
    deep = list(nested())
    check(not stray and not unknown and not deep, "every engine file is in a folder engine/LAYERS names",
          ["engine/%s: a source file outside the layers' folders" % n for n in stray] +
          ["engine/%s: a source file in a folder inside a layer's folder (neither built nor checked)" % n
           for n in deep] +
          ["engine/%s/: a folder engine/LAYERS does not name" % f for f in unknown])

    # 2. includes: by folder, never upwards
    bad = []
    edges = {}
    for f, n in files:
        path = "%s/%s" % (f, n)
        with open(os.path.join(ENGINE, f, n), errors="replace") as fh:
            for lineno, line in enumerate(fh, 1):
                m = INCLUDE.match(line)
                if not m:
                    continue
                n2 = INCLUDE_NAME.match(m.group(1))
                if not n2:
                    bad.append('engine/%s:%d: #include %s: a computed #include (write the header\'s name)'
                               % (path, lineno, m.group(1).strip()))
                    continue
                kind, inc = n2.group(1), n2.group(2)
                got = resolve(path, kind, inc)
                if got is None:
                    if kind == '"' and os.path.basename(inc) in by_name:
                        bad.append('engine/%s:%d: #include %s%s%s: name it by its folder ("%s")'
                                   % (path, lineno, kind, inc, ">" if kind == "<" else '"',
                                      by_name[os.path.basename(inc)][0]))
                    continue	# not an engine header (a generated file, a system one)
                if got not in known:
                    bad.append('engine/%s:%d: #include %s%s%s: engine/%s is not in a layer\'s folder'
                               % (path, lineno, kind, inc, ">" if kind == "<" else '"', got))
                    continue
                if kind != '"' or inc != got:
                    bad.append('engine/%s:%d: #include %s%s%s: name it by its folder, in quotes ("%s")'
                               % (path, lineno, kind, inc, ">" if kind == "<" else '"', got))
                if got.endswith(".c"):
                    bad.append('engine/%s:%d: #include "%s": a .c file included' % (path, lineno, got))
                inc = got
                to = inc.split("/", 1)[0]
                if f in rank and to in rank and rank[to] > rank[f]:
                    bad.append('engine/%s:%d: #include "%s": %s/ may not use %s/, a layer above it '
                               '(engine/LAYERS)' % (path, lineno, inc, f, to))
                if n.endswith(".h"):
                    edges.setdefault(path, []).append((inc, lineno))
    check(not bad, "each #include names an engine header by its folder, in its layer or one below", bad)

    # 3. include cycles between headers
    cycles = []
    state = {}

    def visit(h, stack):
        state[h] = 1
        stack.append(h)
        for to, lineno in edges.get(h, []):
            if state.get(to) == 1:
                cycles.append(" -> ".join(stack[stack.index(to):] + [to]))
            elif not state.get(to):
                visit(to, stack)
        stack.pop()
        state[h] = 2

    for h in sorted(edges):
        if not state.get(h):
            visit(h, [])
    check(not cycles, "no #include cycle between the engine's headers",
          ["a cycle: %s" % c for c in cycles])

    # 4. sizes
    long_files = []
    for f, n in files:
        with open(os.path.join(ENGINE, f, n), errors="replace") as fh:
            count = sum(1 for _ in fh)
        if count > MAX_LINES:
            long_files.append("engine/%s/%s: %d lines, over %d: split it by concept" % (f, n, count, MAX_LINES))
    check(not long_files, "no engine file over %d lines" % MAX_LINES, long_files)

    # 5. calls, from the objects
    if len(sys.argv) > 1:
        calls_check(sys.argv[1], files, rank)

    failed = 0
    for i, (ok, what, why) in enumerate(results, 1):
        print("%s %d - %s" % ("ok" if ok else "not ok", i, what))
        for w in why:
            print("#   %s" % w)
        failed += not ok
    print("%d passed, %d failed" % (len(results) - failed, failed))
    return 1 if failed else 0


def calls_check(builddir, files, rank):
    # a file is FOLDER/STEM (two folders may each have a STEM.c)
    folder_of = {"%s/%s" % (f, n[:-2]): f for f, n in files if n.endswith(".c")}
    defs, undef = {}, {}
    missing = []
    for stem, f in sorted(folder_of.items()):
        if stem == "base/embedgen":
            continue	# a build-time program of its own, not in the library
        obj = os.path.join(builddir, "main.o" if stem == "cmd/main" else "%s.o" % stem)
        if not os.path.exists(obj):
            missing.append(obj)
            continue
        out = subprocess.run(["nm", obj], capture_output=True, text=True, check=True).stdout
        for line in out.splitlines():
            p = line.split()
            if len(p) == 3 and p[1] in ("T", "D", "B", "R", "C", "G", "S", "V", "W", "u", "i"):
                defs[p[2]] = stem
            elif len(p) == 2 and p[0] in ("U", "w", "v"):
                undef.setdefault(stem, set()).add(p[1])
    check(not missing, "the objects of every engine file are built (%s)" % builddir,
          ["%s is missing: build it (ninja)" % m for m in missing])
    calls = {}
    up = []
    for stem, names in sorted(undef.items()):
        for sym in sorted(names):
            to = defs.get(sym)
            if not to or to == stem:
                continue
            calls.setdefault(stem, {}).setdefault(to, []).append(sym)
    for stem in sorted(calls):
        for to, syms in sorted(calls[stem].items()):
            a, b = folder_of[stem], folder_of[to]
            if rank.get(b, 0) > rank.get(a, 0):
                up.append("engine/%s.c calls %s (engine/%s.c), a layer above it"
                          % (stem, ", ".join(syms), to))
    check(not up, "no engine file calls a function of a layer above its own", up)

    # strongly connected components of the file call graph (Tarjan)
    index, low, stack, on, comps = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in calls.get(v, {}):
            if w not in index:
                strong(w)
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
                comps.append(sorted(comp))

    for v in sorted(calls):
        if v not in index:
            strong(v)
    why = []
    for comp in comps:
        why.append("files that call each other: %s" % ", ".join("engine/" + c + ".c" for c in comp))
        for a in comp:
            for b in comp:
                if b in calls.get(a, {}):
                    why.append("  engine/%s.c -> engine/%s.c: %s" % (a, b, ", ".join(calls[a][b])))
    check(not comps, "no cycle of calls between engine files", why)


if __name__ == "__main__":
    sys.exit(main())
