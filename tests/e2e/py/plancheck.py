#!/usr/bin/env python3
"""plancheck.py - does `up` do what `plan` said? (issue 32 #5; lib.sh's
IDPMAKE_PLANCHECK=1 mode wraps each `idpmake ... up` the e2e scripts run).

usage: plancheck.py PLAN.json PLAN_EXIT EVENTS UP_EXIT LOG.json [AFTER_EXIT AFTER.txt]

Prints one line per mismatch, "KIND: detail", nothing when up did what the
plan said:
  unplanned     a step up started that plan did not list;
  not-run       a step plan listed for certain (its reason neither "if ..."
                nor "..., unless ...")
                that a successful up did not start;
  unpredicted   up refused before the push (its run record says "refused"
                or "pre-flight failed") and plan neither exited 3 nor named
                a check it could not make;
  overpredicted plan exited 3 and up succeeded;
  not-settled   after a successful up, `plan --exit-code` still has work;
  plan-failed   plan crashed or gave no JSON (exit 2, a usage plan does not
                take, is no mismatch).
"""
import json
import sys


def load_plan(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def main(argv):
    plan_path, plan_exit, ev_path, up_exit, log_path = argv[1:6]
    after_exit = argv[6] if len(argv) > 6 else ""
    after_path = argv[7] if len(argv) > 7 else ""
    plan_exit, up_exit = int(plan_exit), int(up_exit)
    plan = load_plan(plan_path)
    out = []
    if plan_exit == 2:
        return 0    # plan refused these arguments (a usage it does not take): nothing to compare
    if plan is None and plan_exit == 3:
        plan = {"steps": []}    # refused before it listed anything (a kube context at another server)
    if plan is None and plan_exit == 1:
        # plan failed as up does (a render refused a symlink out of its folder): the same, or not
        if up_exit == 0:
            print("plan-failed: plan --json exited 1 with no JSON, and up succeeded")
        return 0
    if plan is None or plan_exit not in (0, 1, 3):
        print("plan-failed: plan --json exited %d%s" % (plan_exit, "" if plan is not None else " with no JSON"))
        return 0
    listed = {s["id"]: s.get("reason", "") for s in plan.get("steps", [])}
    started = []
    try:
        with open(ev_path) as f:
            for line in f:
                try:
                    e = json.loads(line)
                except ValueError:
                    continue
                if e.get("event") == "start":
                    started.append(e["id"])
    except OSError:
        pass
    for sid in started:
        if sid not in listed:
            out.append("unplanned: %s ran, plan did not list it" % sid)
    if up_exit == 0:
        for sid, why in sorted(listed.items()):
            if not why.startswith("if ") and ", unless " not in why and sid not in started:
                out.append("not-run: plan listed %s (%s), up did not run it" % (sid, why))
    summary = ""
    try:
        with open(log_path) as f:
            runs = [json.loads(l) for l in f if l.strip()]
        if runs:
            summary = max(runs, key=lambda r: r.get("run", 0)).get("summary", "") or ""
    except (OSError, ValueError):
        pass
    # a server that could not answer then (a fault the script injected for up alone) is no prediction's
    refused = up_exit == 1 and (summary.startswith("refused") or summary.startswith("pre-flight failed")) \
        and "could not say" not in summary
    if refused and plan_exit != 3 and not plan.get("not_checked"):
        out.append("unpredicted: up refused (%s), plan exited %d" % (summary, plan_exit))
    if plan_exit == 3 and up_exit == 0:
        out.append("overpredicted: plan exited 3, up succeeded")
    if up_exit == 0 and after_exit == "1":
        try:
            left = [l.rstrip("\n") for l in open(after_path) if l[:1].isalpha() and ":" in l and not l.startswith(("idpmake", "acting on"))]
        except OSError:
            left = []
        out.append("not-settled: plan --exit-code after a successful up: %s" % "; ".join(left[:5]))
    for line in out:
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
