"""The repo-server's manifest cache, as Argo CD's reposerver and controller use it (issue 26).

Argo CD's controller asks the repo-server for an Application's manifests at the revision its source resolves to
(controller/state.go GetRepoObjs).  The repo-server caches generated manifests per revision and source, so a new
commit on the GitOps branch makes every Application on that repository generate again (a `git checkout --force`
of the whole repository, then the render), unless the Application carries the annotation
`argocd.argoproj.io/manifest-generate-paths`: then the controller first calls UpdateRevisionForPaths with the
synced revision (status.sync.revision), and the repo-server, when no file changed between the two commits under
the annotation's paths (util/app/path GetSourceRefreshPaths: ';'-separated, an absolute path from the repository's
top, a relative one from the source's path; AppFilesHaveChanged: a changed file equal to or under a path), moves
the cached manifests to the new revision instead (reposerver/repository UpdateRevisionForPaths).

`generations` counts the manifest generations, `by_commit` per commit, for /_emu/stats;
`manifest_generate_paths: false` (the emulator's config) ignores the annotation, as an Argo CD that had none.
"""
import copy
import os

from emucommon import sources_of

ANNOTATION = "argocd.argoproj.io/manifest-generate-paths"


def refresh_paths(app, spec):
    """GetSourceRefreshPaths for a single source, relative to the repository's top."""
    val = ((app.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION) or ""
    srcs = sources_of(spec)
    base = (srcs[0].get("path") or "") if srcs else ""
    out = []
    for item in val.split(";"):
        item = item.strip()
        if not item:
            continue
        if item.startswith("/"):
            out.append(item[1:].strip("/"))
        else:
            out.append(os.path.normpath(os.path.join(base, item)).strip("/"))
    return [p if p != "." else "" for p in out]


def files_changed_under(paths, files):
    for f in files:
        for p in paths:
            if p == "" or f == p or f.startswith(p + "/"):
                return True
    return False


class RepoServerMixin:
    def reposerver_init(self):
        self.manifest_cache = {}  # (app, source identity, commits) -> {rkey: object}
        self.generations, self.by_commit = 0, {}
        self.manifest_generate_paths = True
        self.diff_cache = {}  # (repository, old, new) -> changed files

    def reposerver_stats(self):
        return {"manifest_generations": self.generations, "by_commit": dict(self.by_commit)}

    def reposerver_reset(self):
        self.generations, self.by_commit = 0, {}

    def _changed_files(self, url, old, new):
        """The files changed between two commits: one `git diff` per pair (commits do not change), not one per
        Application (a one-package change over 400 clusters asks 2,000 times)."""
        key = (self.repos.local(url), old, new)
        if key not in self.diff_cache:
            rc, out = self.repos.git(key[0], "diff", "--name-only", old, new)
            if rc != 0:
                return None
            if len(self.diff_cache) >= 256:
                self.diff_cache.clear()
            self.diff_cache[key] = [f for f in out.split("\n") if f]
        return self.diff_cache[key]

    def repo_objects(self, rec, spec, shas):
        """The target objects at these commits, from the cache when Argo CD would have them there."""
        srcs = sources_of(spec)
        ident = repr([{k: v for k, v in sorted(s.items()) if k != "targetRevision"} for s in srcs])
        name = rec.obj["metadata"]["name"]
        key = (name, ident, tuple(shas))
        if key in self.manifest_cache:
            return copy.deepcopy(self.manifest_cache[key])
        sync = rec.obj["status"].get("sync") or {}
        synced = sync.get("revision") or ""
        paths = refresh_paths(rec.obj, spec) if self.manifest_generate_paths else []
        git_only = len(srcs) == 1 and not srcs[0].get("chart")
        old = (name, ident, (synced,))
        if paths and git_only and synced and old in self.manifest_cache:
            files = self._changed_files(srcs[0].get("repoURL"), synced, shas[0])
            if files is not None and not files_changed_under(paths, files):
                self.manifest_cache[key] = self.manifest_cache[old]
                return copy.deepcopy(self.manifest_cache[key])
        objs = self.target_objects(spec, shas)
        self.generations += 1
        for sha in shas:
            if sha:
                self.by_commit[sha] = self.by_commit.get(sha, 0) + 1
        self.manifest_cache[key] = objs
        return copy.deepcopy(objs)
