#!/usr/bin/env python3
"""bench/profemu.py OUT EMULATOR.py ARGS... - run the Argo CD emulator under cProfile, every thread of it
(the HTTP handlers, the controller loop, the timers), and write the merged statistics to OUT (pstats) when it
gets SIGUSR1 (then it exits).  argocost.sh uses it with EMU_PROFILE=OUT; read OUT with
`python3 -m pstats OUT` (sort cumtime, stats 30)."""
import cProfile
import os
import pstats
import signal
import sys
import threading

out, script = sys.argv[1], sys.argv[2]
profiles, plock = [], threading.Lock()


def profiled(orig):
    def run(self):
        p = cProfile.Profile()
        with plock:
            profiles.append(p)
        p.enable()
        try:
            orig(self)
        finally:
            p.disable()
    return run


threading.Timer.run = profiled(threading.Timer.run)
threading.Thread.run = profiled(threading.Thread.run)


def dump(*_):
    main.disable()
    with plock:
        ps = list(profiles)
    st = pstats.Stats(main)
    for p in ps:
        try:
            p.disable()
        except Exception:
            pass
        try:
            st.add(p)
        except TypeError:
            pass  # a thread that never ran profiled code
    st.dump_stats(out)
    os._exit(0)


sys.argv = sys.argv[2:]
sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
main = cProfile.Profile()
with open(script) as f:
    code = compile(f.read(), script, "exec")
signal.signal(signal.SIGUSR1, dump)
main.enable()
exec(code, {"__name__": "__main__", "__file__": script})
