#!/usr/bin/env python3
"""tests/soak/model.py: the reference model of tests/e2e/t9000-soak.sh.

The model holds a small distro as data (model.json): vars, clusters with
profiles and vars, profiles, and manifests packages with files, a namespace,
rewrite rules that put variables in the files, needs and a post hook.  It
writes that distro to a folder, changes it at random (one edit a round, from
a seeded RNG, so that a seed replays the same sequence), and says, from the
spec alone (distro.md, fleet.md, engine.md), what the GitOps repository must
hold and which Applications Argo CD must have:

- a package goes to a cluster when one of the cluster's profiles lists it;
- its folder is CLUSTER/PACKAGE, or _shared/PACKAGE when it goes to two or
  more clusters and renders alike on all of them (same namespace and same
  values of the variables it uses: fleet.md "Renders once, stored once"),
  or else one folder for each group of two or more clusters that render it
  alike; the spec does not name that folder, so the model writes it
  _shared/PACKAGE-{N} and `check` matches it to a _shared/PACKAGE-XXXXXXXX
  folder of the remote holding the group's render (the Applications of the
  group must all point at one such folder, t9000's check_apps);
- one file per object, KIND.NAME.yaml in lower case, the object as written
  with the rewrite rules applied (`@DOMAIN@` -> ${domain}, `@TIER@` ->
  ${tier}, with the cluster's vars over the distro's);
- the Application of CLUSTER/PACKAGE is CLUSTER-PACKAGE, at that folder.

    model.py init SEED DIR         a new model (DIR/../model.json) and distro in DIR
    model.py round SEED N DIR      round N: one edit; prints what it did, then,
                                   on a second line, the fault to inject (or "none")
    model.py check DIR GITDIR REV  the tree of REV equals the model's render
    model.py apps DIR              the expected Applications, "NAME FOLDER" lines
"""
import json
import posixpath
import os
import random
import re
import subprocess
import sys

import yaml

CLUSTERS = ["c1", "c2", "c3"]
PACKAGES = ["p1", "p2", "p3", "p4", "p5", "p6"]
FAULTS = ["http5xx", "busy", "degraded", "token", "kill9", "pusher"]


def model_path(d):
    return os.path.join(os.path.dirname(os.path.abspath(d)), "model.json")


def load(d):
    with open(model_path(d)) as f:
        return json.load(f)


def save(d, m):
    with open(model_path(d) + ".tmp", "w") as f:
        json.dump(m, f, indent=1, sort_keys=True)
    os.replace(model_path(d) + ".tmp", model_path(d))


def initial(rng):
    pk = {}
    for i, p in enumerate(PACKAGES):
        files = {"cm.yaml": [{"kind": "ConfigMap", "name": "%s-cm" % p,
                              "data": {"host": "%s.@DOMAIN@" % p, "n": "0"}}],
                 "svc.yaml": [{"kind": "Service", "name": "%s-svc" % p, "data": None}]}
        pk[p] = {"files": files, "namespace": "ns-%s" % p if i % 2 else "ns-${tier}",
                 "rewrite": i != 3, "needs": [PACKAGES[i - 1]] if i in (1, 2, 4) else [],
                 "hook": {"version": 0, "when": "changed"} if i in (2, 5) else None}
    return {"vars": {"domain": "d0.example", "tier": "t0"},
            "clusters": {"c1": {"profiles": ["core", "apps"], "vars": {}},
                         "c2": {"profiles": ["core", "apps"], "vars": {}},
                         "c3": {"profiles": ["core"], "vars": {"domain": "c3.example"}}},
            "profiles": {"core": ["p1", "p2", "p3"], "apps": ["p4", "p5", "p6"]},
            "packages": pk, "gen": 0}


# ---- writing the distro ---------------------------------------------------
def k8s(o):
    api = "v1"
    out = {"apiVersion": api, "kind": o["kind"], "metadata": {"name": o["name"]}}
    if o["kind"] == "ConfigMap":
        out["data"] = dict(o["data"])
    elif o["kind"] == "Service":
        out["spec"] = {"selector": {"app": o["name"]}, "ports": [{"port": 80}]}
    return out


def write(d, m):
    """The distro folder from the model: distro.yaml, packages/, hooks/ (stale files removed)."""
    pk = m["packages"]
    doc = {"idpmake": 1, "name": "soak", "vars": m["vars"],
           "git": {"remote": m["remote"]}, "argocd": {"repo-url": "file://" + m["remote"]},
           "clusters": {}, "profiles": m["profiles"], "packages": {}}
    for c in CLUSTERS:
        cl = m["clusters"][c]
        doc["clusters"][c] = {"server": "https://%s.example:6443" % c, "profiles": cl["profiles"]}
        if cl["vars"]:
            doc["clusters"][c]["vars"] = cl["vars"]
    for p in PACKAGES:
        x = pk[p]
        e = {"type": "manifests", "path": "packages/" + p, "namespace": x["namespace"],
             "sync": {"options": ["CreateNamespace=true"], "prune": True, "timeout": 30}}
        if x["rewrite"]:
            e["rewrite"] = [{"match": "@DOMAIN@", "replace": "${domain}"},
                            {"match": "@TIER@", "replace": "${tier}"}]
        if x["needs"]:
            e["needs"] = x["needs"]
        if x["hook"]:
            e["hooks"] = {"post": [{"name": "note", "run": "./hooks/%s.sh" % p,
                                    "inputs": ["hooks/%s.sh" % p], "when": x["hook"]["when"]}]}
        doc["packages"][p] = e
        folder = os.path.join(d, "packages", p)
        os.makedirs(folder, exist_ok=True)
        for f in os.listdir(folder):
            if f not in x["files"]:
                os.unlink(os.path.join(folder, f))
        for f, objs in x["files"].items():
            text = yaml.safe_dump_all([k8s(o) for o in objs], sort_keys=True)
            put(os.path.join(folder, f), text)
        hook = os.path.join(d, "hooks", p + ".sh")
        if x["hook"]:
            os.makedirs(os.path.dirname(hook), exist_ok=True)
            put(hook, '#!/bin/sh\n# version %d\necho "%s %s $IDPMAKE_VAR_DOMAIN" >>hooks.log\n'
                % (x["hook"]["version"], p, x["hook"]["version"]))
            os.chmod(hook, 0o755)
        elif os.path.exists(hook):
            os.unlink(hook)
    put(os.path.join(d, "distro.yaml"), yaml.safe_dump(doc, sort_keys=False))


def put(path, text):
    try:
        with open(path) as f:
            if f.read() == text:
                return  # unchanged: keep its mtime
    except OSError:
        pass
    with open(path, "w") as f:
        f.write(text)


# ---- what the distro renders to --------------------------------------------
def cluster_vars(m, c):
    v = dict(m["vars"])
    v.update(m["clusters"][c]["vars"])
    return v


def expand(s, v):
    return re.sub(r"\$\{([A-Za-z0-9_-]+)\}", lambda g: v[g.group(1)], s)


def used_vars(x):
    text = x["namespace"] + (" ${domain} ${tier}" if x["rewrite"] else "")
    return sorted(set(re.findall(r"\$\{([A-Za-z0-9_-]+)\}", text)))


def placements(m):
    """{(cluster, package): folder}"""
    out = {}
    for p in PACKAGES:
        x = m["packages"][p]
        cs = [c for c in CLUSTERS if any(p in m["profiles"].get(pr, []) for pr in m["clusters"][c]["profiles"])]
        groups = {}
        for c in cs:
            groups.setdefault(json.dumps([expand(x["namespace"], cluster_vars(m, c))] +
                                         [cluster_vars(m, c)[n] for n in used_vars(x)]), []).append(c)
        for gi, (_, members) in enumerate(sorted(groups.items())):
            for c in members:
                if len(members) < 2:
                    out[(c, p)] = c + "/" + p
                elif len(groups) == 1:
                    out[(c, p)] = "_shared/" + p
                else:
                    out[(c, p)] = "_shared/%s-{%d}" % (p, gi)
    return out


def resolve(want, names, gitdir, rev):
    """want's _shared/PACKAGE-{N} folders, each matched to a _shared/PACKAGE-XXXXXXXX
    folder among names (the remote's files) with the same files and objects"""
    groups = sorted({posixpath.dirname(n) for n in want if "-{" in n})
    if not groups:
        return want
    actual = {}
    for n in names:
        f = posixpath.dirname(n)
        if re.match(r"^_shared/[^/]+-[0-9a-f]{8}$", f):
            actual.setdefault(f, []).append(n)
    used, mapping = set(), {}
    for g in groups:
        p = g[len("_shared/"):].rsplit("-{", 1)[0]
        files = {posixpath.basename(n): want[n] for n in want if posixpath.dirname(n) == g}
        for a in sorted(actual):
            if a in used or a.rsplit("-", 1)[0] != "_shared/" + p or \
                    sorted(posixpath.basename(n) for n in actual[a]) != sorted(files):
                continue
            if all(yaml.safe_load(subprocess.run(["git", "-C", gitdir, "show", "%s:%s" % (rev, n)], check=True,
                                                 capture_output=True, text=True).stdout) ==
                   files[posixpath.basename(n)] for n in actual[a]):
                mapping[g] = a
                used.add(a)
                break
    # a group whose folder differs (a file missing, an object changed): the
    # candidate sharing most file names, so that check names the real files
    for g in groups:
        if g in mapping:
            continue
        p = g[len("_shared/"):].rsplit("-{", 1)[0]
        files = {posixpath.basename(n) for n in want if posixpath.dirname(n) == g}
        best = sorted((-len(files & {posixpath.basename(n) for n in actual[a]}), a) for a in actual
                      if a not in used and a.rsplit("-", 1)[0] == "_shared/" + p)
        if best and best[0][0] < 0:
            mapping[g] = best[0][1]
            used.add(best[0][1])
    return {posixpath.join(mapping.get(posixpath.dirname(n), posixpath.dirname(n)), posixpath.basename(n)): o
            for n, o in want.items()}


def render(m):
    """{path in the repository: object}"""
    tree = {}
    for (c, p), folder in placements(m).items():
        x, v = m["packages"][p], cluster_vars(m, c)
        for objs in x["files"].values():
            for o in objs:
                obj = k8s(o)
                if x["rewrite"] and obj.get("data"):
                    obj["data"] = {k: s.replace("@DOMAIN@", v["domain"]).replace("@TIER@", v["tier"])
                                   for k, s in obj["data"].items()}
                tree["%s/%s.%s.yaml" % (folder, o["kind"].lower(), o["name"].lower())] = obj
    return tree


def valid(m):
    """needs stay on the cluster (distro.md: a need is a package of the same cluster)"""
    pl = placements(m)
    return all((c, n) in pl for (c, p) in pl for n in m["packages"][p]["needs"])


# ---- the edits ---------------------------------------------------------------
def edit(m, rng):
    m["gen"] += 1
    g = m["gen"]
    kind = rng.choice(["file", "file", "file", "var", "need", "profile", "hook"])
    p = rng.choice(PACKAGES)
    x = m["packages"][p]
    if kind == "file":
        what = rng.choice(["value", "key", "add", "remove"])
        f = rng.choice(sorted(x["files"]))
        cms = [o for o in x["files"][f] if o["kind"] == "ConfigMap"]
        if what == "add" or not cms:
            x["files"]["f%d.yaml" % g] = [{"kind": "ConfigMap", "name": "%s-g%d" % (p, g),
                                           "data": {"v": "%d" % g, "at": "@TIER@.@DOMAIN@"}}]
            return "file: %s gets f%d.yaml" % (p, g)
        if what == "remove" and len(x["files"]) > 1:
            del x["files"][f]
            return "file: %s loses %s" % (p, f)
        o = rng.choice(cms)
        if what == "key":
            o["data"]["k%d" % g] = rng.choice(["plain%d" % g, "@DOMAIN@", "x-@TIER@"])
            return "file: %s/%s: new key in %s" % (p, f, o["name"])
        k = rng.choice(sorted(o["data"]))
        o["data"][k] = "v%d" % g
        return "file: %s/%s: %s.%s = v%d" % (p, f, o["name"], k, g)
    if kind == "var":
        what = rng.choice(["domain", "tier", "cluster"])
        if what == "cluster":
            c = rng.choice(CLUSTERS)
            cv = m["clusters"][c]["vars"]
            if cv and rng.random() < 0.5:
                cv.clear()
                return "var: %s drops its vars" % c
            n = rng.choice(["domain", "tier"])
            cv[n] = "%s%d.%s" % (n[0], g, c) if n == "domain" else "t%d" % g
            return "var: %s sets %s=%s" % (c, n, cv[n])
        m["vars"][what] = "d%d.example" % g if what == "domain" else "t%d" % g
        return "var: %s=%s" % (what, m["vars"][what])
    if kind == "need":
        i = PACKAGES.index(p)
        if x["needs"] and rng.random() < 0.5:
            n = x["needs"].pop()
            return "need: %s no longer needs %s" % (p, n)
        if i == 0:
            return "need: none (p1 needs nothing)"
        n = PACKAGES[rng.randrange(i)]
        if n in x["needs"]:
            return "need: %s already needs %s" % (p, n)
        x["needs"].append(n)
        return "need: %s needs %s" % (p, n)
    if kind == "profile":
        what = rng.choice(["move", "cluster"])
        if what == "move":
            for pr in m["profiles"].values():
                if p in pr:
                    pr.remove(p)
            to = rng.choice(sorted(m["profiles"]))
            m["profiles"][to].append(p)
            m["profiles"][to].sort()
            return "profile: %s moves to %s" % (p, to)
        c = rng.choice(CLUSTERS)
        prs = rng.choice([["core"], ["apps"], ["core", "apps"]])
        m["clusters"][c]["profiles"] = prs
        return "profile: %s takes %s" % (c, ",".join(prs))
    if x["hook"] and rng.random() < 0.2:
        x["hook"] = None
        return "hook: %s loses its hook" % p
    h = x["hook"] or {"version": 0, "when": "changed"}
    h["version"] = g
    h["when"] = rng.choice(["changed", "changed", "once"])
    x["hook"] = h
    return "hook: %s's hook, version %d, when %s" % (p, g, h["when"])


def do_round(seed, n, d):
    m = load(d)
    rng = random.Random("%s:%s" % (seed, n))
    fault = rng.choice(FAULTS) if rng.random() < 0.45 else "none"
    for _ in range(20):
        cand = json.loads(json.dumps(m))
        what = edit(cand, rng)
        if valid(cand):
            break
    else:
        cand, what = m, "no edit (none of 20 tries kept needs on their clusters)"
    # the fault's parameters from the same RNG: which app (one of the edited
    # package's, when it has any, so that the fault meets a sync), how many, when
    pl = placements(cand)
    edited = re.findall(r"\b(p[0-9])\b", what)
    apps = sorted("%s-%s" % cp for cp in pl if cp[1] in edited) or sorted("%s-%s" % cp for cp in pl)
    print(what)
    print(fault, rng.choice(apps) if apps else "-", rng.randrange(1, 4), rng.randrange(0, 8))
    write(d, cand)
    save(d, cand)


def check(d, gitdir, rev):
    m = load(d)
    names = subprocess.run(["git", "-C", gitdir, "ls-tree", "-r", "--name-only", rev],
                           check=True, capture_output=True, text=True).stdout.split()
    want = resolve(render(m), names, gitdir, rev)
    bad = 0
    # the keys index (.idpmake/keys) is idpmake's, not the model's: checked apart below
    got = [n for n in names if not n.startswith("other/") and not n.startswith(".idpmake/")]
    for n in sorted(set(want) - set(got)):
        print("missing: %s" % n)
        bad += 1
    for n in sorted(set(got) - set(want)):
        print("unexpected: %s" % n)
        bad += 1
    for n in sorted(set(want) & set(got)):
        text = subprocess.run(["git", "-C", gitdir, "show", "%s:%s" % (rev, n)],
                              check=True, capture_output=True, text=True).stdout
        obj = yaml.safe_load(text)
        if obj != want[n]:
            print("differs: %s\n  model: %s\n  remote: %s" % (n, json.dumps(want[n], sort_keys=True),
                                                            json.dumps(obj, sort_keys=True)))
            bad += 1
    # the index names every folder of the model, each with the tree the remote holds there
    idx = subprocess.run(["git", "-C", gitdir, "show", "%s:.idpmake/keys" % rev],
                         capture_output=True, text=True).stdout.splitlines()
    if not idx or idx[0] != "idpmake-keys 1":
        print("the keys index .idpmake/keys is missing or has no header")
        bad += 1
    trees = {}
    for line in idx[1:]:
        f = line.rsplit(" ", 3)
        trees[f[0]] = f[3] if len(f) == 4 else ""
    for folder in sorted({posixpath.dirname(n) for n in want}):
        tree = subprocess.run(["git", "-C", gitdir, "rev-parse", "%s:%s" % (rev, folder)],
                              capture_output=True, text=True).stdout.strip()
        if trees.get(folder) != tree:
            print("keys index: %s has tree %s, the remote %s" % (folder, trees.get(folder), tree))
            bad += 1
    print("checked %d files of the model, %d in the tree: %d differences" % (len(want), len(got), bad))
    return 1 if bad else 0


def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "init" and len(argv) == 5:
        seed, d, remote = argv[2], argv[3], argv[4]
        m = initial(random.Random(seed))
        m["remote"] = remote
        os.makedirs(d, exist_ok=True)
        write(d, m)
        save(d, m)
        return 0
    if cmd == "round" and len(argv) == 5:
        do_round(argv[2], argv[3], argv[4])
        return 0
    if cmd == "check" and len(argv) == 5:
        return check(argv[2], argv[3], argv[4])
    if cmd == "apps" and len(argv) == 3:
        for (c, p), folder in sorted(placements(load(argv[2])).items()):
            print("%s-%s %s" % (c, p, folder))
        return 0
    sys.stderr.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
