#!/usr/bin/env python3
"""bench/emufast.py EMULATOR.py ARGS... - the Argo CD emulator, with its git look-ups by commit memoised.

At 500 to 2,000 Applications the emulator spends its time under its one lock in `git` subprocesses (profiled
with bench/profemu.py: 3 per comparison, about 80 ms each on 2 loaded CPUs, so a round of comparisons over 2,000
Applications took minutes and every API request waited for the lock).  Two of the three ask about a commit or a
tree by its id, whose answer never changes: Repos.tree(url, sha, path) and Repos.source_type(url, tree).  This
wrapper answers those from a cache after the first time (a failure is not cached), and leaves everything else
as it is: the branch is still resolved by `git rev-parse` at each comparison, and the repo-server model counts
generations as before.  argocost.sh uses it (EMU_FAST=0 runs the emulator as is).
"""
import os
import runpy
import sys

script = sys.argv[1]
sys.argv = sys.argv[1:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
mod = runpy.run_path(script, run_name="emulator")  # defines the classes, does not start main()
Repos = mod["Repos"]


def memo(fn):
    cache = {}

    def wrapped(self, *args):
        key = (self.local(args[0]),) + args[1:]
        if key not in cache:
            cache[key] = fn(self, *args)
        return cache[key]
    return wrapped


Repos.tree = memo(Repos.tree)
Repos.source_type = memo(Repos.source_type)
sys.exit(mod["main"]())
