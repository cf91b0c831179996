#!/usr/bin/env python3
"""Re-extract the recorded shapes from a clone of github.com/argoproj/argo-cd.

    python3 extract.py GIT_DIR [COMMIT]

GIT_DIR is the clone's git directory (a bare mirror will do), COMMIT the
commit to read (default HEAD).  Writes, next to this script:
  swagger-definitions.json  the definitions of assets/swagger.json that the
                            answers the emulator gives are made of
                            (everything reachable from ROOTS)
  application-get.json      controller/testdata/diff-cache.yaml as JSON: an
                            Application recorded from a real Argo CD, status
                            included (the API answers GET with that object)
  application-status-v3.json  Argo CD 3's default status, from the upgrade
                            notes (docs/operator-manual/upgrading/2.14-3.0.md)
Not run by the tests: the files it writes are committed.
"""
import json
import os
import subprocess
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
ROOTS = ["v1alpha1Application", "v1alpha1ApplicationList", "v1alpha1Cluster", "v1alpha1ClusterList",
         "v1alpha1RepositoryList", "v1alpha1ApplicationSet", "versionVersionMessage", "sessionGetUserInfoResponse",
         "applicationManagedResourcesResponse", "v1alpha1ApplicationTree", "runtimeError"]


def show(gitdir, commit, path):
    return subprocess.run(["git", "--git-dir", gitdir, "show", "%s:%s" % (commit, path)], check=True,
                          capture_output=True).stdout


def refs(node, out):
    if isinstance(node, dict):
        for k, v in node.items():
            if k == "$ref" and isinstance(v, str):
                out.add(v.split("/")[-1])
            else:
                refs(v, out)
    elif isinstance(node, list):
        for v in node:
            refs(v, out)


def main():
    gitdir, commit = sys.argv[1], sys.argv[2] if len(sys.argv) > 2 else "HEAD"
    commit = subprocess.run(["git", "--git-dir", gitdir, "rev-parse", commit], check=True, capture_output=True,
                            text=True).stdout.strip()
    defs = json.loads(show(gitdir, commit, "assets/swagger.json"))["definitions"]
    keep, todo = set(), list(ROOTS)
    while todo:
        name = todo.pop()
        if name in keep:
            continue
        keep.add(name)
        found = set()
        refs(defs[name], found)
        todo.extend(found - keep)
    def bare(node):  # the shape only: descriptions and titles dropped
        if isinstance(node, dict):
            return {k: bare(v) for k, v in node.items() if k not in ("description", "title")}
        return [bare(v) for v in node] if isinstance(node, list) else node
    out = {"source": {"repository": "github.com/argoproj/argo-cd", "path": "assets/swagger.json", "commit": commit},
           "roots": ROOTS, "definitions": {k: bare(defs[k]) for k in sorted(keep)}}
    with open(os.path.join(HERE, "swagger-definitions.json"), "w") as f:
        json.dump(out, f, indent=1, sort_keys=True)
        f.write("\n")
    app = yaml.safe_load(show(gitdir, commit, "controller/testdata/diff-cache.yaml"))
    with open(os.path.join(HERE, "application-get.json"), "w") as f:
        json.dump({"source": {"repository": "github.com/argoproj/argo-cd", "path": "controller/testdata/diff-cache.yaml",
                              "commit": commit}, "body": app}, f, indent=1, sort_keys=True)
        f.write("\n")
    # Argo CD 3's default status (health kept in the resource tree, not in status.resources): the second
    # example of "Health status in the Application CR" in the 2.14 to 3.0 upgrade notes
    doc = "docs/operator-manual/upgrading/2.14-3.0.md"
    text = show(gitdir, commit, doc).decode()
    part = text[text.index("Example of a status field in the Application CR _not_ persisting health"):]
    block = part[part.index("```yaml") + len("```yaml"):]
    block = block[:block.index("```")]
    with open(os.path.join(HERE, "application-status-v3.json"), "w") as f:
        json.dump({"source": {"repository": "github.com/argoproj/argo-cd", "path": doc, "commit": commit,
                              "what": "the example of a status field not persisting health (Argo CD 3's default)"},
                   "body": yaml.safe_load(block)}, f, indent=1, sort_keys=True)
        f.write("\n")


if __name__ == "__main__":
    main()
