#!/usr/bin/env python3
"""tests/layers-selftest.py - tests/layers.py fails each broken layer it must.

A small engine tree (LAYERS: base, then argo) is built in a temporary folder,
checked clean, then broken one way at a time; each break must make
tests/layers.py exit 1 naming what is wrong, the ways it was once fooled
among them (an include by "../", by <>, through "base/../", a computed one,
a header in a nested folder, two files with one name in two folders, a
static inline function of a lower header calling up).  Run by tests/run.sh.
"""
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
CC = os.environ.get("CC", "cc")

CLEAN = {
    "LAYERS": "base\nargo\n",
    "base/a.h": "#ifndef A_H\n#define A_H\nint a_one(void);\n#endif\n",
    "base/a.c": '#include "base/a.h"\nint a_one(void) { return 1; }\n',
    "argo/b.h": "#ifndef B_H\n#define B_H\nint b_two(void);\n#endif\n",
    "argo/b.c": '#include "argo/b.h"\n#include "base/a.h"\nint b_two(void) { return a_one() + 1; }\n',
}

A_CALLS_B = '#include "base/a.h"\nint b_two(void);\nint a_one(void) { return b_two(); }\n'

BREAKS = [
    ("an upward include", {"base/a.c": '#include "argo/b.h"\n' + CLEAN["base/a.c"]},
     'base/a.c:1: #include "argo/b.h": base/ may not use argo/'),
    ("an unqualified include", {"argo/b.c": '#include "b.h"\n#include "base/a.h"\nint b_two(void) { return a_one() + 1; }\n'},
     'argo/b.c:1: #include "b.h": name it by its folder, in quotes ("argo/b.h")'),
    ("an include by ../", {"base/a.c": '#include "../argo/b.h"\n' + CLEAN["base/a.c"]},
     'base/a.c:1: #include "../argo/b.h": name it by its folder'),
    ("an include through base/../", {"base/a.c": '#include "base/../argo/b.h"\n' + CLEAN["base/a.c"]},
     'base/a.c:1: #include "base/../argo/b.h": name it by its folder, in quotes ("argo/b.h")'),
    ("an angle-bracket include", {"base/a.c": '#include <argo/b.h>\n' + CLEAN["base/a.c"]},
     'base/a.c:1: #include <argo/b.h>: name it by its folder, in quotes ("argo/b.h")'),
    ("a computed include", {"base/a.c": '#define H "argo/b.h"\n#include H\n' + CLEAN["base/a.c"]},
     'base/a.c:2: #include H: a computed #include'),
    ("a header in a nested folder", {"argo/deep/c.h": "int c(void);\n",
                                     "base/a.c": '#include "argo/deep/c.h"\n' + CLEAN["base/a.c"]},
     "engine/argo/deep/c.h: a source file in a folder inside a layer's folder"),
    ("an include cycle", {"base/a.h": '#ifndef A_H\n#define A_H\n#include "base/c.h"\nint a_one(void);\n#endif\n',
                          "base/c.h": '#ifndef C_H\n#define C_H\n#include "base/a.h"\n#endif\n'},
     "a cycle: base/a.h -> base/c.h -> base/a.h"),
    ("an upward call", {"base/a.c": A_CALLS_B},
     "engine/base/a.c calls b_two (engine/argo/b.c), a layer above it"),
    ("a call cycle", {"base/c.c": '#include "base/a.h"\nint c_three(void) { return a_one(); }\n',
                      "base/a.c": '#include "base/a.h"\nint c_three(void);\nint a_one(void) { return c_three() ? 1 : 0; }\n'},
     "files that call each other: engine/base/a.c, engine/base/c.c"),
    ("an upward call from a file named as one in the layer above",
     {"base/b.c": '#include "base/a.h"\nint b_two(void);\nint b_low(void) { return b_two(); }\n'},
     "engine/base/b.c calls b_two (engine/argo/b.c), a layer above it"),
    ("a static inline function of a lower header calling up",
     {"base/a.h": "#ifndef A_H\n#define A_H\nint b_two(void);\nstatic inline int a_up(void) { return b_two(); }\n"
                  "int a_one(void);\n#endif\n",
      "base/a.c": '#include "base/a.h"\nint a_one(void) { return a_up(); }\n'},
     "engine/base/a.c calls b_two (engine/argo/b.c), a layer above it"),
    ("a file over 900 lines", {"argo/b.c": CLEAN["argo/b.c"] + "/* */\n" * 900},
     "engine/argo/b.c: 903 lines, over 900"),
    ("a source file at the top", {"top.c": "int top(void) { return 0; }\n"},
     "engine/top.c: a source file outside the layers' folders"),
]


def build(tree, files):
    engine = os.path.join(tree, "engine")
    out = os.path.join(tree, "build")
    shutil.rmtree(tree, ignore_errors=True)
    for name, text in files.items():
        path = os.path.join(engine, name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(text)
    for folder in sorted(os.listdir(engine)):
        if not os.path.isdir(os.path.join(engine, folder)):
            continue
        for name in sorted(os.listdir(os.path.join(engine, folder))):
            if name.endswith(".c"):
                os.makedirs(os.path.join(out, folder), exist_ok=True)
                subprocess.run([CC, "-c", "-w", "-I", engine, "-o", os.path.join(out, folder, name[:-2] + ".o"),
                                os.path.join(engine, folder, name)], check=True)
    env = dict(os.environ, LAYERS_ENGINE=engine)
    r = subprocess.run([sys.executable, os.path.join(HERE, "layers.py"), out], env=env,
                       capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def main():
    failed = 0
    n = 0
    with tempfile.TemporaryDirectory() as tmp:
        tree = os.path.join(tmp, "t")
        rc, out = build(tree, CLEAN)
        n += 1
        if rc != 0:
            failed += 1
            print("not ok %d - a clean tree passes\n%s" % (n, out))
        else:
            print("ok %d - a clean tree passes" % n)
        for what, change, want in BREAKS:
            n += 1
            files = dict(CLEAN)
            files.update(change)
            rc, out = build(tree, files)
            if rc == 1 and want in out:
                print("ok %d - %s fails it" % (n, what))
            else:
                failed += 1
                print("not ok %d - %s fails it (exit %d, wanted '%s')" % (n, what, rc, want))
                print("".join("#   " + line + "\n" for line in out.splitlines()))
    print("%d passed, %d failed" % (n - failed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
