#!/usr/bin/env python3
"""Argo CD API server emulator: a test fixture for idpmake (Python 3 standard library only).

Emulates the REST/JSON face of argocd-server (v3.6.0, same endpoints as v3.5.1) as described
by /work/shared/argocd/API.md and swagger.json: paths, bodies, error shapes and codes, Bearer /
cookie auth, application CRUD with upsert, sync and the operation lifecycle.  Git revisions
are resolved against real local repositories given with --repo-map URL=PATH.

    python3 emulator.py --port 0 --token TOKEN [--user admin:password] [--repo-map URL=PATH ...]
        [--port-file FILE] [--tls-cert F --tls-key F] [--rootpath /argocd]
        [--op-ms 300] [--health-ms 300] [--start-ms 0] [--reconcile-ms 100] [--delete-ms 300]
        [--appset-ms 250] [--rbac-deny "RESOURCE, ACTION, OBJECT" ...] [--rbac-fine-grained-inheritance]
        [--tracking-method annotation|label|annotation+label]
        [--cluster NAME=URL ...] [--resync-ms 180000] [--retry-ms 200] [--same-second]
        [--require-repo-creds] [--repo-creds URL=USER:PASS ...] [--api-versions v1,v1/ConfigMap,...]
        [--live-clusters [--in-cluster-kube URL --in-cluster-kube-token T --in-cluster-kube-ca FILE]]

Modules: resources.py (live objects, managed-resources, resource-tree, drift), fleet.py (clusters,
repositories, ApplicationSets), live.py (live clusters), emucommon.py (shared helpers).

Live clusters (opt-in: --live-clusters, or POST /_emu/config {"live_clusters": true}; off, every behaviour below is
the in-memory model's): a registered cluster whose server is a loopback https URL (and https://kubernetes.default.svc
when --in-cluster-kube URL is given, with --in-cluster-kube-token and --in-cluster-kube-ca) is a real API server
(tests/kube-emu/kubeemu.py), reached with the cluster config's bearerToken, caData, insecure, certData/keyData.
Cluster create/upsert/update GET {server}/version; a sync dry-runs, then server-side applies (fieldManager
argocd-controller, force) the revision's objects in sync-wave and kind order with the tracking-id annotation
APP:GROUP/KIND:NS/NAME, and prunes (PruneLast=true last); comparison, managed-resources and resource-tree read the
cluster (tracked objects and their owner-ref children); GET/DELETE /api/v1/applications/{name}/resource act on the
live object (Secrets masked); a cascaded delete goes in reverse sync-wave order, waiting for objects with a
deletionTimestamp; an unreachable destination is ComparisonError "failed to sync cluster S: connection refused",
health Unknown, and blocks the cascade; an unregistered one is dropped at once.  See live.py's docstring.  An Application with syncPolicy.automated is
synced by the emulated controller whenever a comparison finds it OutOfSync at a revision and source not yet
attempted (Emu.auto_sync: retry limit 5 by default, backoff, the SyncError of a failed attempt, self-heal backoff).

As Argo CD (v3.6 source, read for this):
  - ApplicationSets: POST only stores the set (its status as it was); the ApplicationSet controller generates,
    updates and deletes its Applications --appset-ms later (default 250), as the set's applicationsSync policy
    allows (default sync), and makes one deleted while its element remains again (fleet.py).  appsetNamespace (default argocd)
    names the set's namespace; one not enabled (--app-namespace) is a plain error, HTTP 500.
  - RBAC (server/application getAppEnforceRBAC, util/rbac EnforceErr): everything is allowed but what a
    --rbac-deny "RESOURCE, ACTION, OBJECT" rule (fnmatch globs; OBJECT as RBACName: PROJECT/NAME, or
    PROJECT/NAMESPACE/NAME outside argocd) refuses.  With project= in the query a missing Application is a
    404 and a refused get a bare 403 "permission denied"; without it both are the bare 403; an action refused
    on an Application the account may get (delete, sync, create, update) is "permission denied: applications,
    ACTION, OBJECT, sub: USER".  DELETE .../resource checks delete/GROUP/KIND/NAMESPACE/NAME as 3.x does (a
    refusal is the bare 403, or 404 with project=); --rbac-fine-grained-inheritance (2.x) tries `delete` first
    (live.py resource_lookup).
  - Resource tracking (argocd-cm application.resourceTrackingMethod, --tracking-method or config tracking_method):
    annotation (3.x default) the tracking-id annotation, label (2.x default) the label app.kubernetes.io/instance
    set to the Application's name, annotation+label both (resources.py set_tracking); comparisons ignore the marks.
  - Clusters (server/cluster Create, Update): before a cluster is saved, a create, an upsert, an update and a
    labels-only PUT (with the stored credentials) reach it (kubectl GetServerVersion).  A loopback server is
    dialled for real; cluster_tokens {SERVER: TOKEN} (config) is the one bearer token that server accepts;
    caData must be base64 (HTTP 400 "illegal base64 data ...") of PEM.  A failure is HTTP 500, code 2:
    "error getting server version: failed to get server version: ..." (update: "failed to get server version: ...").
  - Namespaces: a cluster has default, kube-system, kube-public, kube-node-lease and argocd, the namespaces its
    Applications synced (Namespace objects), those CreateNamespace=true made (the destination namespace), and
    those POST /_emu/cluster {"namespaces": [...]} adds.  A sync with an object in another namespace fails as
    gitops-engine's dry run does: phase Failed "one or more objects failed to apply (dry run)", the object's
    result SyncFailed 'namespaces "X" not found' (retried per syncPolicy.retry).  --namespaces-exist (config
    namespaces_exist) makes every namespace exist.
  - Cluster info (controller/clusterinfoupdater.go): a cluster no Application deploys to (and no api_versions
    set for it, not "watched" by POST /_emu/cluster) is connectionState Unknown "Cluster has no applications and is not being monitored.", with no
    apiVersions nor serverVersion.
  - Hooks (argocd.argoproj.io/hook unless only Skip, helm.sh/hook but crd-install) are neither compared nor
    listed in managed-resources; a sync does not run them here.

Control API (never under --rootpath, not recorded in /_emu/requests, never faulted):
    POST /_emu/fault     JSON object (or list of objects):
        {"path_regex": RE, "method": M, "status": 503, "count": N, "code": C, "message": S}
        {"path_regex": RE, "status": 502, "body": "<html>...</html>", "content_type": "text/html"}
        {"delay_ms": MS, "path_regex": RE, "method": M, "count": N}
        {"drop": true, "path_regex": RE, "method": M, "count": N}
        {"app": NAME, "health": "Degraded", "message": S, ["now": true]}  {"app": NAME, "sync_fail": S}
        {"app": NAME, "busy_for_ms": MS}  {"app": NAME, "out_of_sync": true}  {"app": NAME, "clear": true}
        {"app": NAME, "report_revision": SHA}: every comparison reports Synced at SHA
        {"app": NAME, "drop_sync": true}: the next sync is accepted (200, with its operation) and never runs
        {"app": NAME, "report_revisions": [SHA, ...]}: the same for a multi-source app, source by source
      Request faults match the raw request path (before --rootpath stripping, query excluded) with re.search
      and the method (any if absent); they act before everything else (415, router, auth).  count defaults
      to 1 for status/drop and to unlimited (-1) for a pure delay.  status faults answer the Argo error
      JSON {"error","code","message"}; code defaults to the gRPC code of that HTTP status; with "body"
      they answer that text as is instead, as Content-Type content_type (default text/html), as a
      proxy in front of Argo CD does (nginx's 502 page).  App faults
      (health, sync_fail) persist until reset/clear and apply to every later sync of that app name;
      busy_for_ms starts an automated operation now; out_of_sync marks live drift and reconciles now;
      health with "now" also sets the application's health now (a workload that degrades after its sync).
    GET  /_emu/faults    active faults          GET /_emu/requests   request log (each: seq, time, t (epoch seconds, float), method, path, ...)
    POST /_emu/reset     clears log and faults ({"apps": true} also deletes all applications)
    POST /_emu/quiet     {"on": true}: requests are answered unlogged and take no counted request fault, until
                         {"on": false} (the e2e harness's plan check asks with it, lib.sh plancheck)
    GET  /_emu/apps      raw stored applications
    GET  /_emu/stats     the repo-server model's manifest generations (reposerver.py): {"manifest_generations": N,
                         "by_commit": {sha: N}}, reset by /_emu/reset; watch streams open now and opened in all
                         ({"watchers", "watch_opens"}: watch.py, GET /api/v1/stream/applications; config
                         stream_drop_after N, stream_buffer true, keepalive_ms).  {"manifest_generate_paths": false} in
                         /_emu/config ignores the annotation, as an Argo CD without it
    GET,POST /_emu/config  settings changed at run time: {"cluster_tokens": {SERVER: TOKEN}, "start_ms": 500, "resync_ms": 100, "same_second": true,
                         "require_repo_creds": true, "api_versions": [...], "op_ms", "health_ms", "reconcile_ms",
                         "delete_ms", "retry_ms", "appset_ms", "rbac_deny": ["applications, delete, *"],
                         "live_clusters": true, "live_resync_ms": 300 (how often live apps are checked for changes)}
    POST /_emu/cluster   one cluster's info.apiVersions: {"server": S or "name": N, "api_versions": [...]}
                         (null: the emulator-wide list again; CRDs synced to it still add their kinds)
    POST /_emu/live      live drift: {"app": A, "kind": K, "name": N, ["namespace", "group"], "set": {"spec.replicas": 3}}
                         or "labels": {k: v}, or "delete": true; or {"app": A, "create": OBJECT}
"""
import argparse
import base64
import calendar
import copy
import hashlib
import hmac
import json
import fnmatch
import os
import posixpath
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, unquote, urlsplit

VERSION = "v3.6.0+37ee009"
FINALIZERS = ("resources-finalizer.argocd.argoproj.io",
              "resources-finalizer.argocd.argoproj.io/foreground",
              "resources-finalizer.argocd.argoproj.io/background")
GRPC_TO_HTTP = {0: 200, 1: 408, 2: 500, 3: 400, 4: 504, 5: 404, 6: 409, 7: 403, 8: 429, 9: 400,
                10: 409, 11: 400, 12: 501, 13: 500, 14: 503, 15: 500, 16: 401}
HTTP_TO_GRPC = {400: 3, 401: 16, 403: 7, 404: 5, 408: 1, 409: 10, 412: 9, 429: 8, 500: 2,
                501: 12, 503: 14, 504: 4}

# Every HTTP path/method argocd-server serves under /api/ (from swagger.json); used for the
# router-level 404/405 decision.  Implemented handlers are listed in HANDLERS further down.
ROUTE_TEXT = """
GET v1/account GET v1/account/can-i/{resource}/{action}/{subresource} PUT v1/account/password
GET v1/account/{name} POST v1/account/{name}/token DELETE v1/account/{name}/token/{id}
GET,POST v1/applications POST v1/applications/manifestsWithFiles
GET v1/applications/{appName}/server-side-diff PUT v1/applications/{application.metadata.name}
GET v1/applications/{applicationName}/managed-resources
GET v1/applications/{applicationName}/resource-tree GET,DELETE,PATCH v1/applications/{name}
GET v1/applications/{name}/events GET v1/applications/{name}/links GET v1/applications/{name}/logs
GET v1/applications/{name}/manifests DELETE v1/applications/{name}/operation
GET v1/applications/{name}/pods/{podName}/logs GET,POST,DELETE v1/applications/{name}/resource
GET,POST v1/applications/{name}/resource/actions POST v1/applications/{name}/resource/actions/v2
GET v1/applications/{name}/resource/links
GET v1/applications/{name}/revisions/{revision}/chartdetails
GET v1/applications/{name}/revisions/{revision}/metadata
GET v1/applications/{name}/revisions/{revision}/ocimetadata POST v1/applications/{name}/rollback
PUT v1/applications/{name}/spec POST v1/applications/{name}/sync
GET v1/applications/{name}/syncwindows GET,POST v1/applicationsets POST v1/applicationsets/generate
GET,DELETE v1/applicationsets/{name} GET v1/applicationsets/{name}/events
GET v1/applicationsets/{name}/resource-tree GET,POST,DELETE v1/certificates GET,POST v1/clusters
GET,PUT,DELETE v1/clusters/{id.value} POST v1/clusters/{id.value}/invalidate-cache
POST v1/clusters/{id.value}/rotate-auth GET,POST,DELETE v1/gpgkeys GET v1/gpgkeys/{keyID}
GET v1/notifications/services GET v1/notifications/templates GET v1/notifications/triggers
GET,POST v1/projects GET,DELETE v1/projects/{name} GET v1/projects/{name}/detailed
GET v1/projects/{name}/events GET v1/projects/{name}/globalprojects GET v1/projects/{name}/links
GET v1/projects/{name}/syncwindows PUT v1/projects/{project.metadata.name}
POST v1/projects/{project}/roles/{role}/token DELETE v1/projects/{project}/roles/{role}/token/{iat}
GET,POST v1/repocreds PUT v1/repocreds/{creds.url} DELETE v1/repocreds/{url}
GET,POST v1/repositories PUT v1/repositories/{repo.repo} GET,DELETE v1/repositories/{repo}
GET v1/repositories/{repo}/apps GET v1/repositories/{repo}/helmcharts
GET v1/repositories/{repo}/oci-tags GET v1/repositories/{repo}/refs
POST v1/repositories/{repo}/validate POST v1/repositories/{source.repoURL}/appdetails
POST,DELETE v1/session GET v1/session/userinfo GET v1/settings GET v1/settings/plugins
GET v1/stream/applications GET v1/stream/applications/{applicationName}/resource-tree
GET v1/stream/applicationsets GET,POST v1/write-repocreds PUT v1/write-repocreds/{creds.url}
DELETE v1/write-repocreds/{url} GET,POST v1/write-repositories PUT v1/write-repositories/{repo.repo}
GET,DELETE v1/write-repositories/{repo} POST v1/write-repositories/{repo}/validate GET version
"""
_toks = ROUTE_TEXT.split()
ROUTES = [(_toks[i + 1], _toks[i + 1].split("/"), set(_toks[i].split(","))) for i in range(0, len(_toks), 2)]


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from emucommon import (ApiError, GitError, ts, gojson, ordered, prune, sources_of, norm_url,  # noqa: E402
                       CONTROL_NS, IN_CLUSTER)
from resources import TRACKING_METHODS, ResourcesMixin  # noqa: E402
from fleet import FleetMixin, AUTH_REQUIRED  # noqa: E402
from reposerver import RepoServerMixin  # noqa: E402
from live import LiveMixin  # noqa: E402
from watch import serve_watch  # noqa: E402


def rfc3339(t):
    try:
        return float(calendar.timegm(time.strptime(t or "", "%Y-%m-%dT%H:%M:%SZ")))
    except ValueError:
        return 0.0


def b64url(b):
    return base64.urlsafe_b64encode(b).rstrip(b"=").decode()


def b64json(part):
    try:
        return json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
    except Exception:
        return None


GO_BOOLS = dict([(v, True) for v in ("1", "t", "T", "TRUE", "true", "True")] +
                [(v, False) for v in ("0", "f", "F", "FALSE", "false", "False")])  # strconv.ParseBool


# ---------------------------------------------------------------------------- JSON decoding
def T(go, **fields):
    return ("obj", go, fields)


STR, BOOL, INT = ("str", "string"), ("bool", "bool"), ("int", "int64")
STRS = ("arr", "[]string", STR)
SMAP = ("map", "map[string]string", STR)
SRC = T("v1alpha1.ApplicationSource", repoURL=STR, path=STR, targetRevision=STR, chart=STR, ref=STR,
        name=STR, helm=T("v1alpha1.ApplicationSourceHelm", valueFiles=STRS, releaseName=STR, values=STR),
        kustomize=T("v1alpha1.ApplicationSourceKustomize"), directory=T("v1alpha1.ApplicationSourceDirectory"),
        plugin=T("v1alpha1.ApplicationSourcePlugin"))
SPEC = T("v1alpha1.ApplicationSpec", project=STR, source=SRC, sources=("arr", "v1alpha1.ApplicationSources", SRC),
         destination=T("v1alpha1.ApplicationDestination", server=STR, namespace=STR, name=STR),
         syncPolicy=T("v1alpha1.SyncPolicy", syncOptions=("arr", "v1alpha1.SyncOptions", STR),
                      automated=T("v1alpha1.SyncPolicyAutomated", prune=BOOL, selfHeal=BOOL, allowEmpty=BOOL),
                      retry=T("v1alpha1.RetryStrategy", limit=INT)),
         revisionHistoryLimit=INT, ignoreDifferences=("arr", "v1alpha1.IgnoreDifferences", T("v1alpha1.ResourceIgnoreDifferences")))
APP = T("v1alpha1.Application", metadata=T("v1.ObjectMeta", name=STR, namespace=STR, labels=SMAP,
                                           annotations=SMAP, finalizers=STRS), spec=SPEC)
SYNC = T("application.ApplicationSyncRequest", name=STR, revision=STR, dryRun=BOOL, prune=BOOL,
         strategy=T("v1alpha1.SyncStrategy"), resources=("arr", "[]*v1alpha1.SyncOperationResource",
                                                         T("v1alpha1.SyncOperationResource", group=STR, kind=STR, name=STR, namespace=STR)),
         retryStrategy=T("v1alpha1.RetryStrategy", limit=INT), syncOptions=T("application.SyncOptions", items=STRS),
         infos=("arr", "[]*v1alpha1.Info", T("v1alpha1.Info", name=STR, value=STR)), appNamespace=STR, project=STR,
         revisions=STRS, sourcePositions=("arr", "[]int64", INT))
SESSION = T("session.SessionCreateRequest", username=STR, password=STR, token=STR)
CLUSTER = T("v1alpha1.Cluster", server=STR, name=STR, namespaces=STRS, labels=SMAP, annotations=SMAP, project=STR,
            config=T("v1alpha1.ClusterConfig", username=STR, password=STR, bearerToken=STR,
                     tlsClientConfig=T("v1alpha1.TLSClientConfig", insecure=BOOL, caData=STR, certData=STR, keyData=STR)))
REPO = T("v1alpha1.Repository", repo=STR, username=STR, password=STR, type=STR, name=STR, project=STR, insecure=BOOL)
APPSET = T("v1alpha1.ApplicationSet", metadata=T("v1.ObjectMeta", name=STR, namespace=STR, labels=SMAP),
           spec=T("v1alpha1.ApplicationSetSpec", goTemplate=BOOL, generators=("arr", "[]v1alpha1.ApplicationSetGenerator",
                                                                           T("v1alpha1.ApplicationSetGenerator"))))


def _jtype(v):
    return "bool" if isinstance(v, bool) else {str: "string", list: "array", dict: "object"}.get(type(v), "number")


def typecheck(v, sch, root, path):
    """Return the Go decoder's error text for the first type mismatch, or None."""
    if v is None:
        return None
    kind, go = sch[0], sch[1]
    ok = {"str": str, "bool": bool, "obj": dict, "map": dict, "arr": list}.get(kind)
    if (not isinstance(v, ok)) if ok else (isinstance(v, bool) or not isinstance(v, int)):
        if not path:
            return "json: cannot unmarshal %s into Go value of type %s" % (_jtype(v), go)
        return "json: cannot unmarshal %s into Go struct field %s.%s of type %s" % (_jtype(v), root, path, go)
    sub = lambda k: (path + "." + k) if path else k  # noqa: E731
    if kind == "obj":
        for k, x in v.items():
            if k in sch[2]:
                e = typecheck(x, sch[2][k], root, sub(k))
                if e:
                    return e
    elif kind in ("arr", "map"):
        for x in (v if kind == "arr" else v.values()):
            e = typecheck(x, sch[2], root, path)
            if e:
                return e
    return None


def decode_body(raw, sch):
    text = raw.decode("utf-8", "replace")
    if not text.strip():
        return None  # io.EOF: the gateway treats it as "all defaults"
    try:
        val = json.loads(text)
    except json.JSONDecodeError as e:
        if e.pos >= len(text.rstrip()):
            raise ApiError(3, "unexpected EOF")
        what = {"Expecting value": "looking for beginning of value",
                "Expecting ':' delimiter": "after object key",
                "Expecting property name enclosed in double quotes": "looking for beginning of object key string",
                "Extra data": "after top-level value"}.get(e.msg, "after object key:value pair")
        raise ApiError(3, "invalid character %r %s" % (text[e.pos], what))
    err = typecheck(val, sch, sch[1].split(".")[-1], "")
    if err:
        raise ApiError(3, err)
    return val


# ---------------------------------------------------------------------------- git
class Repos:
    def __init__(self, pairs):
        self.map = {norm_url(u): p for u, p in pairs}
        self.guard = None
        # answers by commit and tree id never change: each `git` look-up is made once (a failure is not kept);
        # the branch is still resolved at each comparison (resolve)
        self.memo = {}

    def memoised(self, what, url, *args):
        key = (what, self.local(url)) + args
        if key not in self.memo:
            self.memo[key] = getattr(self, "_" + what)(url, *args)
        return self.memo[key]

    def local(self, url):
        if self.guard:
            self.guard(url)
        p = self.map.get(norm_url(url))
        if p is None:
            raise GitError("failed to list refs: repository not found")
        return p

    @staticmethod
    def git(path, *args):
        r = subprocess.run(["git", "-C", path] + list(args), capture_output=True, text=True, timeout=60)
        return r.returncode, r.stdout.strip()

    def resolve(self, url, rev):
        rev = rev or "HEAD"
        rc, out = self.git(self.local(url), "rev-parse", "--verify", "--quiet", rev + "^{commit}")
        if rc != 0 or not out:
            raise GitError("unable to resolve '%s' to a commit SHA" % rev)
        return out

    def tree(self, url, sha, path):
        return self.memoised("tree", url, sha, path)

    def source_type(self, url, tree):
        return self.memoised("source_type", url, tree)

    def _tree(self, url, sha, path):
        """Tree id of the app path at commit sha, failing like the repo-server does: util/app/path/path.go Path
        (called by reposerver/repository/repository.go's repo operation for GenerateManifest) says "PATH: app path
        does not exist" of a path the commit lacks, as of a folder a later commit removed while an Application of
        the branch still names it (issue 33 item 5); controller/state.go CompareAppState then sets the
        ComparisonError "Failed to load target state: ..." and sync status Unknown (comparison_error, reconcile)."""
        repo, path = self.local(url), path or ""
        if path.startswith("/"):
            raise GitError("%s: app path is absolute" % path)
        clean = posixpath.normpath(path) if path else "."
        if clean == ".." or clean.startswith("../"):
            raise GitError("%s: app path outside root" % path)
        if clean == ".":
            return self.git(repo, "rev-parse", sha + "^{tree}")[1]
        rc, out = self.git(repo, "ls-tree", sha, "--", clean)
        if rc != 0 or not out:
            raise GitError("%s: app path does not exist" % path)
        mode_type_obj = out.split("\t")[0].split()
        if mode_type_obj[1] != "tree":
            raise GitError("%s: app path is not a directory" % path)
        return mode_type_obj[2]

    def _source_type(self, url, tree):
        names = set(self.git(self.local(url), "ls-tree", "--name-only", tree)[1].split("\n"))
        if names & {"kustomization.yaml", "kustomization.yml", "Kustomization"}:
            return "Kustomize"
        return "Helm" if "Chart.yaml" in names else "Directory"


# ---------------------------------------------------------------------------- state
class Rec:
    def __init__(self, obj):
        self.obj = obj            # {"metadata", "spec", "status", ["operation"]}
        self.deployed = None      # comparison keys of what the last successful sync deployed
        self.drift = False        # live drift injected via /_emu/fault out_of_sync
        self.seq = 0              # bumps cancel pending lifecycle timers
        self.keys = None          # keys of the running operation
        self.op_ms = None         # duration override of the running operation (busy fault)
        self.live = {}            # the live objects: rkey -> object (resources.py)
        self.target = None        # target objects of the last comparison
        self.op_target = None     # target objects of the running operation
        self.reconciled = 0.0     # time of the last comparison (for the reconcile interval)


class Emu(LiveMixin, ResourcesMixin, FleetMixin, RepoServerMixin):
    def __init__(self, a):
        self.lock = threading.RLock()
        self.apps, self.rv, self.log, self.faults, self.app_faults, self.fault_id = {}, 1000, [], [], {}, 0
        self.quiet = False
        self.secret = os.urandom(32)
        self.token = a.token
        self.users = dict(u.split(":", 1) for u in a.user)
        self.projects = {"default"} | set(a.project)
        self.namespaces = {CONTROL_NS} | set(a.app_namespace)
        self.repos = Repos(m.split("=", 1) for m in a.repo_map)
        self.op_ms, self.health_ms, self.start_ms = a.op_ms, a.health_ms, a.start_ms
        self.reconcile_ms, self.delete_ms = a.reconcile_ms, a.delete_ms
        self.resync_ms, self.retry_ms, self.same_second = a.resync_ms, a.retry_ms, a.same_second
        self.selfheal_ms = a.selfheal_ms
        self.rbac_deny = list(a.rbac_deny)
        self.tracking_method = a.tracking_method
        self.rbac_fine_grained_inheritance = a.rbac_fine_grained_inheritance
        self.fleet_init(a)
        self.live_init(a)
        self.reposerver_init()
        self.watchers, self.watch_opens = 0, 0
        self.stream_drop_after, self.stream_buffer, self.keepalive_ms = 0, False, 15000
        self.repos.guard = self.repo_guard
        threading.Thread(target=self.controller_loop, daemon=True).start()
        self.tls, self.rootpath = bool(a.tls_cert), a.rootpath.rstrip("/")
        self.content_types = {t.strip().lower() for t in a.api_content_types.split(";") if t.strip()}

    # -- timers
    def later(self, ms, fn, *args):
        def run():
            with self.lock:
                fn(*args)
        t = threading.Timer(max(ms, 0) / 1000.0, run)
        t.daemon = True
        t.start()

    def touch(self, rec):
        self.rv += 1
        rec.obj["metadata"]["resourceVersion"] = str(self.rv)

    # -- auth
    def make_token(self, user):
        now = int(time.time())
        claims = {"iss": "argocd", "sub": user + ":login", "exp": now + 86400, "nbf": now, "iat": now, "jti": str(uuid.uuid4())}
        head = b64url(gojson({"alg": "HS256", "typ": "JWT"})) + "." + b64url(gojson(claims))
        return head + "." + b64url(hmac.new(self.secret, head.encode(), hashlib.sha256).digest())

    def authenticate(self, headers):
        """(username, None) for a valid session, (None, ApiError) otherwise."""
        tok = None
        auth = headers.get("Authorization")
        if auth is not None:
            # server.go getToken: only "Bearer " values that split into three dot-separated parts
            if auth.startswith("Bearer ") and len(auth[7:].split(".", 2)) == 3:
                tok = auth[7:]
        if tok is None:
            cookies = {}
            for c in headers.get_all("Cookie") or []:
                for part in c.split(";"):
                    k, _, v = part.strip().partition("=")
                    cookies.setdefault(k, v)
            t = cookies.get("argocd.token")
            if t and re.match(r"^\d+:", t):
                n, _, t = t.partition(":")
                t += "".join(cookies.get("argocd.token-%d" % i, "") for i in range(1, int(n)))
            if t and t.count(".") >= 2:
                tok = t
        if tok is None:
            return None, ApiError(16, "no session information")
        parts = tok.split(".")
        claims = b64json(parts[1]) if len(parts) == 3 else None
        sig = b64url(hmac.new(self.secret, (parts[0] + "." + parts[1]).encode(), hashlib.sha256).digest())
        if tok != self.token and not (len(parts) == 3 and hmac.compare_digest(sig, parts[2])):
            if not isinstance(claims, dict):
                return None, ApiError(16, "invalid session: token is malformed: could not JSON decode claim")
            if claims.get("iss") not in (None, "argocd"):
                return None, ApiError(16, "invalid session: failed to verify the token")
            return None, ApiError(16, "invalid session: token signature is invalid: signature is invalid")
        claims = claims if isinstance(claims, dict) else {}
        if isinstance(claims.get("exp"), (int, float)) and claims["exp"] < time.time():
            return None, ApiError(16, "invalid session: token has invalid claims: token is expired")
        return (str(claims.get("sub") or "admin").split(":")[0] or "admin"), None

    # -- applications: lookup and validation
    # -- RBAC (util/rbac EnforceErr; server/application getAppEnforceRBAC)
    @staticmethod
    def rbac_name(project, ns, name):
        """security.RBACName: project/name in the control namespace, else project/namespace/name."""
        return "%s/%s" % (project, name) if ns == CONTROL_NS else "%s/%s/%s" % (project, ns, name)

    def allowed(self, resource, action, obj):
        """Everything is allowed but what a --rbac-deny rule "RESOURCE, ACTION, OBJECT" (globs) matches."""
        for rule in self.rbac_deny:
            parts = [x.strip() for x in rule.split(",", 2)]
            if len(parts) == 3 and fnmatch.fnmatchcase(resource, parts[0]) and \
                    fnmatch.fnmatchcase(action, parts[1]) and fnmatch.fnmatchcase(obj, parts[2]):
                return False
        return True

    def enforce(self, user, resource, action, obj):
        """EnforceErr: the 403 that names what was refused and to whom."""
        if not self.allowed(resource, action, obj):
            raise ApiError(7, "permission denied: %s, %s, %s, sub: %s" % (resource, action, obj, user or "admin"))

    # -- applications: lookup and validation
    def lookup(self, name, ns, project, action="get"):
        """getAppEnforceRBAC: with a project, a missing Application is a 404 and a refusal a bare 403; without
        one, both are the bare 403 (the server does not say whether it exists)."""
        ns = ns or CONTROL_NS
        denied, missing = ApiError(7, "permission denied"), ApiError(5, 'applications.argoproj.io "%s" not found' % name)
        if project and not self.allowed("applications", action, self.rbac_name(project, ns, name)):
            raise denied
        rec = self.apps.get((ns, name)) if ns in self.namespaces else None
        if ns not in self.namespaces:
            raise denied
        if rec is None:
            raise missing if project else denied
        real = rec.obj["spec"].get("project") or "default"
        if not self.allowed("applications", action, self.rbac_name(real, ns, name)):
            raise missing if project else denied
        if project and real != project:
            raise missing
        return rec

    def normalize(self, body):
        body = body if isinstance(body, dict) else {}
        m = body.get("metadata") or {}
        meta = {k: copy.deepcopy(m[k]) for k in ("name", "namespace", "labels", "annotations", "finalizers") if m.get(k)}
        spec = prune(copy.deepcopy(body.get("spec") or {}))
        spec["project"] = spec.get("project") or "default"
        spec.setdefault("destination", {})
        if spec.get("syncPolicy") == {}:
            del spec["syncPolicy"]
        for s in sources_of(spec):
            for k in ("helm", "kustomize", "directory"):
                if s.get(k) == {}:
                    del s[k]
        spec = ordered(spec, ["source", "destination", "project", "syncPolicy", "ignoreDifferences", "info",
                              "revisionHistoryLimit", "sources"])
        return meta, spec

    def validate(self, meta, spec, validate):
        name, proj = meta.get("name", ""), spec["project"]
        if proj not in self.projects:
            raise ApiError(3, 'app is not allowed in project "%s", or the project does not exist' % proj)
        if not name:
            raise ApiError(2, "error while validating and normalizing app: resource name may not be empty")
        d = spec.get("destination") or {}
        why = None
        if d.get("name") and d.get("server"):
            why = "application destination can't have both name and server defined: %s %s" % (d["name"], d["server"])
        elif d.get("name") and self.dest_error(spec):
            why = self.dest_error(spec)
        elif not d.get("name") and not d.get("server"):
            why = "Destination server missing from app spec"
        elif d.get("server") and not self.cluster_by_server(d["server"].rstrip("/")):
            srv = d["server"].rstrip("/")
            why = 'error getting cluster by server "%s": rpc error: code = NotFound desc = cluster "%s" not found' % (
                d["server"], srv)
        if why:
            raise ApiError(3, "application destination spec for %s is invalid: %s" % (name, why))
        conds = []
        srcs = sources_of(spec)
        if not srcs or any(not s.get("repoURL") or not (s.get("path") or s.get("chart") or s.get("ref")) for s in srcs):
            conds.append("spec.source.repoURL and either spec.source.path, spec.source.chart, or spec.source.ref are required")
        elif validate:
            for s in srcs:
                if s.get("chart") or (s.get("ref") and not s.get("path")):
                    continue
                try:
                    self.repos.tree(s["repoURL"], self.repos.resolve(s["repoURL"], s.get("targetRevision")), s.get("path"))
                except GitError as e:
                    if str(e) == "failed to list refs: " + AUTH_REQUIRED:
                        conds.append("repository not accessible: repositories not accessible: &Repository{Repo: %s, "
                                     'Type: "", Name: "", Project: ""}: rpc error: code = Unknown desc = error testing '
                                     "repository connectivity: %s" % (json.dumps(s["repoURL"]), AUTH_REQUIRED))
                    elif str(e).startswith("failed to list refs"):
                        conds.append("repository not accessible: %s" % e)
                    else:
                        conds.append("Unable to generate manifests in %s: rpc error: code = Unknown desc = %s" % (s.get("path", ""), e))
        if conds:
            raise ApiError(3, "application spec for %s is invalid: %s" % (name, ";".join("InvalidSpecError: " + c for c in conds)))
        ns = meta.get("namespace") or CONTROL_NS
        if ns not in self.namespaces:
            raise ApiError(2, "namespace '%s' is not permitted" % ns)

    # -- rendering
    def render(self, rec):
        o = rec.obj
        st = o["status"]
        sync = st.get("sync") or {"status": "", "comparedTo": {"source": {"repoURL": ""}, "destination": {}}}
        shown = self.app_faults.get(o["metadata"]["name"], {}).get("report_revision")
        if shown and not o["spec"].get("sources"):
            # a repo server answering from another revision (a stale cache, a moved tag): Synced, there
            sync = dict(sync, status="Synced", revision=shown)
        shown = self.app_faults.get(o["metadata"]["name"], {}).get("report_revisions")
        if shown and len(shown) == len(o["spec"].get("sources") or []):
            sync = dict(sync, status="Synced", revisions=shown)
        status = dict(st, sync=sync, health=st.get("health") or {}, summary=st.get("summary") or {},
                      sourceHydrator=st.get("sourceHydrator") or {})
        status = ordered(status, ["resources", "sync", "health", "history", "conditions", "reconciledAt",
                                  "operationState", "observedAt", "sourceType", "summary", "resourceHealthSource",
                                  "sourceTypes", "controllerNamespace", "sourceHydrator"])
        meta = ordered(o["metadata"], ["name", "namespace", "uid", "resourceVersion", "generation", "creationTimestamp",
                                       "deletionTimestamp", "deletionGracePeriodSeconds", "labels", "annotations", "finalizers"])
        if "operationState" in status:
            status["operationState"] = ordered(status["operationState"], ["operation", "phase", "message", "syncResult",
                                                                          "startedAt", "finishedAt", "retryCount"])
        out = {"metadata": meta, "spec": o["spec"], "status": status}
        if o.get("operation"):
            out["operation"] = o["operation"]
        return copy.deepcopy(out)

    # -- controller
    def targets(self, spec, revs=None):
        """Comparison targets per source: (revision, key, sourceType).  GitError carries the source index."""
        srcs = sources_of(spec)
        out = []
        for i, s in enumerate(srcs):
            rev = (revs[i] if revs else None) or s.get("targetRevision") or ""
            ident = json.dumps({k: v for k, v in s.items() if k != "targetRevision"}, sort_keys=True)
            if s.get("chart"):
                out.append((rev, ident + "@" + rev, "Helm"))
                continue
            try:
                sha = self.repos.resolve(s.get("repoURL"), rev)
                tree = self.repos.tree(s.get("repoURL"), sha, s.get("path"))
                stype = "Plugin" if s.get("plugin") else self.repos.source_type(s.get("repoURL"), tree)
            except GitError as e:
                e.index, e.total = i + 1, len(srcs)
                raise
            out.append((sha, ident + "@" + tree, stype))
        return out

    @staticmethod
    def comparison_error(e):
        return ("Failed to load target state: failed to generate manifest for source %d of %d: "
                "rpc error: code = Unknown desc = %s" % (e.index, e.total, e))

    def set_condition(self, st, ctype, msg):
        conds = [c for c in st.get("conditions", []) if c["type"] != ctype]
        if msg:
            conds.append({"type": ctype, "message": msg, "lastTransitionTime": ts()})
        if conds:
            st["conditions"] = conds
        else:
            st.pop("conditions", None)

    def reconcile(self, rec):
        app, now = rec.obj, ts()
        spec, st = app["spec"], app["status"]
        multi = bool(spec.get("sources"))
        compared = {"sources": sources_of(spec)} if multi else {"source": spec.get("source") or {"repoURL": ""}}
        compared = ordered(dict(compared, destination=spec.get("destination") or {}), ["source", "destination", "sources"])
        sync = {"status": "Unknown", "comparedTo": copy.deepcopy(compared)}
        rec.reconciled = time.time()
        live_err = self.live_refresh(rec) if self.live_clusters else None   # live.py: the destination's objects
        try:
            tg = self.targets(spec)
            try:
                rec.target = self.repo_objects(rec, spec, [r for r, _, _ in tg])
            except GitError as e:
                e.index, e.total = 1, len(tg)
                raise
        except GitError as e:
            self.set_condition(st, "ComparisonError", self.comparison_error(e))
        else:
            if live_err:
                self.set_condition(st, "ComparisonError", live_err)
                st["health"] = {"status": "Unknown", "lastTransitionTime": now}
            else:
                self.set_condition(st, "ComparisonError", None)
                resources, ok = self.compare_resources(rec, rec.target)
                if resources:
                    # Argo CD 3 (resourceHealthSource appTree, controller.resource.health.persist false) keeps the
                    # resources' health in the resource tree only: status.resources carry none
                    st["resources"] = [{k: v for k, v in r.items() if k != "health"} for r in resources]
                else:
                    st.pop("resources", None)
                sync["status"] = "Synced" if rec.deployed == [k for _, k, _ in tg] and ok and not rec.drift else "OutOfSync"
                if rec.deployed is not None and (st.get("health") or {}).get("status") == "Healthy" and \
                        any((r.get("health") or {}).get("status") == "Missing" for r in resources):
                    st["health"] = {"status": "Missing", "lastTransitionTime": now}
                if multi:
                    sync["revisions"] = [r for r, _, _ in tg]
                    st["sourceTypes"] = [t for _, _, t in tg]
                elif tg:
                    sync["revision"] = tg[0][0]
                if tg:
                    st["sourceType"] = tg[0][2]
        if rec.deployed is None and not (st.get("health") or {}).get("status"):
            st["health"] = {"status": "Missing", "lastTransitionTime": now}
        st.update(sync=sync, reconciledAt=now, resourceHealthSource="appTree", controllerNamespace=CONTROL_NS)
        self.touch(rec)
        self.auto_sync(rec)

    # -- the application controller: reconcile interval and automated sync
    def controller_loop(self):
        while True:
            time.sleep(0.05)
            with self.lock:
                if self.resync_ms <= 0:
                    continue
                now = time.time()
                for rec in list(self.apps.values()):
                    if now - rec.reconciled >= self.resync_ms / 1000.0 and not rec.obj.get("operation"):
                        self.reconcile(rec)

    def auto_sync(self, rec):
        """controller/appcontroller.go autoSync: an OutOfSync app with automated sync on gets an operation (retry:
        syncPolicy.retry, else limit 5) unless alreadyAttemptedSync: the last operation synced the same revision(s)
        AND the same source(s).  Then a failed one is not retried (condition SyncError "Failed last sync attempt to
        [REV]: MSG"), a successful one is re-synced only with selfHeal, after the self-heal backoff (selfheal_ms,
        factor 3, cap 150x: 2 s, 6 s, ... 300 s in Argo CD) counted by selfHealAttemptsCount; the first is at once."""
        app = rec.obj
        spec, st = app["spec"], app["status"]
        auto = (spec.get("syncPolicy") or {}).get("automated")
        if auto is None or not auto.get("enabled", True) or app.get("operation") or \
                app["metadata"].get("deletionTimestamp") or st["sync"]["status"] != "OutOfSync":
            return
        multi = bool(spec.get("sources"))
        rev = st["sync"].get("revisions") if multi else st["sync"].get("revision")
        last = st.get("operationState") or {}
        res = last.get("syncResult") or {}
        done = res.get("revisions" if multi else "revision")
        same_src = (res.get("sources") == spec.get("sources")) if multi else (res.get("source") == spec.get("source"))
        attempted = bool(last) and (done == rev and same_src if res else last.get("phase") in ("Succeeded", "Failed", "Error"))
        if last and attempted and last.get("phase") in ("Running", "Terminating"):
            return
        heal = 0
        if last and attempted:
            if last.get("phase") != "Succeeded":
                self.set_condition(st, "SyncError", "Failed last sync attempt to [%s]: %s" % (
                    " ".join(rev) if multi else rev, last.get("message") or ""))
                return
            if not auto.get("selfHeal"):
                return  # "Skipping auto-sync: most recent sync already to ..."
            heal = int((last.get("operation") or {}).get("sync", {}).get("selfHealAttemptsCount") or 0)
            delay = min(self.selfheal_ms * 3 ** (heal - 1), self.selfheal_ms * 150) if heal else 0
            since = time.time() - rfc3339(last.get("finishedAt"))
            if delay / 1000.0 - since > 0:
                key = (app["metadata"]["namespace"], app["metadata"]["name"])
                self.later(delay - since * 1000 + 5, self.heal_again, key, rec.seq)
                return  # "Skipping auto-sync: already attempted sync to ... (retrying in ...)"
            heal += 1
        if not auto.get("prune") and all(r.get("requiresPruning") for r in st.get("resources", [])
                                         if r.get("status") == "OutOfSync") and not rec.drift and \
                any(r.get("requiresPruning") for r in st.get("resources", [])):
            return  # "Skipping sync attempt ...: need to prune extra resources only but automated prune is disabled"
        sync = {"revisions": rev} if multi else {"revision": rev}
        if auto.get("prune"):
            sync["prune"] = True
        opts = (spec.get("syncPolicy") or {}).get("syncOptions")
        if opts:
            sync["syncOptions"] = opts
        if heal:
            sync["selfHealAttemptsCount"] = heal
        sync.update({"sources": copy.deepcopy(spec["sources"])} if multi else {"source": copy.deepcopy(spec.get("source"))})
        op = {"sync": sync, "initiatedBy": {"automated": True},
              "retry": (spec.get("syncPolicy") or {}).get("retry") or {"limit": 5}}
        self.set_condition(st, "SyncError", None)
        self.start_op((app["metadata"]["namespace"], app["metadata"]["name"]), rec, op)()

    def heal_again(self, key, seq):
        rec = self.apps.get(key)
        if rec is not None and rec.seq == seq and not rec.obj.get("operation"):
            self.reconcile(rec)

    def set_health(self, rec, status, message=None):
        if self.live_clusters:
            status, message = self.live_set_health(rec, status, message)
        rec.obj["status"]["health"] = dict([("status", status)] + ([("message", message)] if message else []) +
                                           [("lastTransitionTime", ts())])

    def start_op(self, key, rec, op, duration=None):
        rec.seq += 1
        rec.op_ms = duration
        rec.obj["operation"] = op
        rec.obj["status"].pop("operationState", None)
        self.touch(rec)
        if self.start_ms > 0:
            self.later(self.start_ms, self.op_begin, key, rec.seq)
            return lambda: None
        return lambda: self.op_begin(key, rec.seq)

    def op_begin(self, key, seq):
        rec = self.apps.get(key)
        if rec is None or rec.seq != seq or not rec.obj.get("operation"):
            return
        app, now = rec.obj, ts()
        op, st = app["operation"], app["status"]
        so = op.get("sync") or {}
        state = {"operation": copy.deepcopy(op), "phase": "Running", "message": "one or more tasks are running",
                 "startedAt": now}
        st["operationState"] = state
        multi = bool(app["spec"].get("sources"))
        bad = self.dest_error(app["spec"])
        if bad:
            # controller/sync.go SyncAppState: GetDestinationCluster fails the operation
            state.update(phase="Error", message="Failed to get destination cluster: " + bad, finishedAt=now)
            app.pop("operation", None)
            self.reconcile(rec)
            return
        try:
            tg = self.targets(app["spec"], so.get("revisions") if multi else [so.get("revision")])
        except GitError as e:
            msg = self.comparison_error(e)
            state.update(phase="Error", message="ComparisonError: " + msg, finishedAt=now)
            app.pop("operation", None)
            self.reconcile(rec)  # the failed comparison is the reconciliation
            return
        try:
            rec.op_target = self.repo_objects(rec, app["spec"], [r for r, _, _ in tg])
        except GitError as e:
            state.update(phase="Error", message="ComparisonError: " + str(e), finishedAt=now)
            app.pop("operation", None)
            self.reconcile(rec)
            return
        res = {"revisions": [r for r, _, _ in tg], "sources": sources_of(app["spec"])} if multi else \
            {"revision": tg[0][0] if tg else "", "source": app["spec"].get("source") or {}}
        state["syncResult"] = copy.deepcopy(res)
        rec.keys = [k for _, k, _ in tg]
        self.touch(rec)
        self.later(self.op_ms if rec.op_ms is None else rec.op_ms, self.op_end, key, seq)

    def stale_guard(self, rec, fn, *args):
        """Keep the "done" test of API.md 5.8 sound at second precision: never let finishedAt fall in the
        same second as the pre-operation reconciledAt (retry just after the next second boundary)."""
        if rec.obj["status"].get("reconciledAt") == ts() and self.reconcile_ms > 0 and not self.same_second:
            self.later(1000 - (time.time() % 1) * 1000 + 5, fn, *args)
            return True
        return False

    def op_end(self, key, seq):
        rec = self.apps.get(key)
        if rec is None or rec.seq != seq or not rec.obj.get("operation") or self.stale_guard(rec, self.op_end, key, seq):
            return
        app, now = rec.obj, ts()
        st, op = app["status"], app["operation"]
        so, state = op.get("sync") or {}, st["operationState"]
        fault = self.app_faults.get(app["metadata"]["name"], {})
        failing = fault.get("sync_fail") and fault.get("times", -1) != 0
        if failing and fault.get("times", -1) > 0:
            fault["times"] -= 1
        fail_msg = fault["sync_fail"] if failing else None
        if not failing:
            sel = {(r.get("group") or "", r.get("kind") or "", r.get("namespace") or "", r.get("name") or "")
                   for r in so.get("resources") or []}
            target = {k: v for k, v in (rec.op_target or {}).items()
                      if not sel or k in sel or (k[0], k[1], "", k[3]) in sel}
            live = self.live_app(rec) if self.live_clusters else None
            missing = None if live else self.missing_namespaces(app["spec"], target, so.get("syncOptions"))
            if live and not so.get("dryRun"):
                fail_msg, live_results = self.live_sync(rec, target, so, sel)
                state["syncResult"]["resources"] = live_results
            if missing:
                # gitops-engine: the dry run of every task first; an object into a namespace the cluster lacks fails
                fail_msg = "one or more objects failed to apply (dry run)"
                state["syncResult"]["resources"] = [
                    dict(self.res_entry(o, "SyncFailed", 'namespaces "%s" not found' % ns), hookPhase="Failed")
                    for ns, objs in sorted(missing.items()) for o in objs]
        if fail_msg:
            limit = int((op.get("retry") or {}).get("limit") or 0)
            n = int(state.get("retryCount") or 0)
            if limit < 0 or n < limit:
                # a failed attempt that will be retried: still Running, with a finishedAt and a retryCount
                # RetryStrategy.NextRetryAt: backoff duration (5 s) x factor (2) ^ n, at most maxDuration (3 m)
                wait = min(self.retry_ms * 2 ** n, self.retry_ms * 36)
                at = time.time() + wait / 1000.0
                state.update(phase="Running", retryCount=n + 1, finishedAt=now, message="%s. Retrying attempt #%d at %s." % (
                    fail_msg, n + 1, time.strftime("%I:%M%p", time.gmtime(at)).lstrip("0")))
                self.touch(rec)
                self.later(wait, self.op_retry, key, seq)
                return
            state.update(phase="Failed", message=fail_msg + (" (retried %d times)." % n if n else ""))
        else:
            state.update(phase="Succeeded", message="successfully synced (dry run)" if so.get("dryRun")
                         else "successfully synced (all tasks run)")
        state["finishedAt"] = now
        del app["operation"]
        deployed = state["phase"] == "Succeeded" and not so.get("dryRun")
        if deployed:
            rec.deployed, rec.drift = rec.keys, False
            dest = (app["spec"].get("destination") or {}).get("namespace")
            if dest and "CreateNamespace=true" in (so.get("syncOptions") or []):
                self.cluster_namespaces.setdefault(self.dest_server(app["spec"]), set()).add(dest)
            target = rec.op_target or {}
            sel = {(r.get("group") or "", r.get("kind") or "", r.get("namespace") or "", r.get("name") or "")
                   for r in so.get("resources") or []}
            if sel:
                target = {k: v for k, v in target.items() if k in sel or (k[0], k[1], "", k[3]) in sel}
                kept = {k: v for k, v in rec.live.items() if k not in target}
            if live:
                results, sel = state["syncResult"].get("resources"), None
            else:
                results = self.apply_live(rec, target, bool(so.get("prune")))
            if sel:
                rec.live.update(kept)
                results = [r for r in results if r["status"] == "Synced"]
            if results:
                state["syncResult"]["resources"] = results
            if not so.get("resources"):
                hist = st.setdefault("history", [])
                h = {"revision": so.get("revision"), "deployedAt": now, "id": hist[-1]["id"] + 1 if hist else 0,
                     "source": copy.deepcopy(app["spec"].get("source")), "deployStartedAt": state["startedAt"]}
                if app["spec"].get("sources"):
                    h = {"deployedAt": now, "id": h["id"], "deployStartedAt": state["startedAt"],
                         "sources": copy.deepcopy(app["spec"]["sources"]), "revisions": so.get("revisions")}
                h["initiatedBy"] = op.get("initiatedBy") or {}
                hist.append(h)
                limit = app["spec"].get("revisionHistoryLimit", 10)
                del hist[:max(len(hist) - max(limit, 0), 0)]
        self.touch(rec)
        self.later(self.reconcile_ms, self.op_after, key, seq, deployed)

    def op_retry(self, key, seq):
        rec = self.apps.get(key)
        if rec is None or rec.seq != seq or not rec.obj.get("operation"):
            return
        state = rec.obj["status"]["operationState"]
        state.pop("finishedAt", None)
        state["message"] = "one or more tasks are running"
        self.touch(rec)
        self.later(self.op_ms if rec.op_ms is None else rec.op_ms, self.op_end, key, seq)

    def op_after(self, key, seq, deployed):
        rec = self.apps.get(key)
        if rec is None:
            return
        self.reconcile(rec)
        if deployed and rec.seq == seq:
            self.set_health(rec, "Progressing")
            self.later(self.health_ms, self.health_end, key, seq)

    def health_end(self, key, seq):
        rec = self.apps.get(key)
        if rec is None or rec.seq != seq:
            return
        f = self.app_faults.get(rec.obj["metadata"]["name"], {})
        self.reconcile(rec)
        self.set_health(rec, f.get("health") or "Healthy", f.get("message"))

    def terminate_end(self, key, seq):
        rec = self.apps.get(key)
        if rec is None or rec.seq != seq or not rec.obj.get("operation") or \
                self.stale_guard(rec, self.terminate_end, key, seq):
            return
        rec.obj["status"]["operationState"].update(phase="Failed", message="Operation terminated", finishedAt=ts())
        del rec.obj["operation"]
        self.touch(rec)
        self.later(self.reconcile_ms, self.op_after, key, seq, False)

    def finalize(self, key, rec):
        if self.apps.get(key) is not rec:
            return
        if self.live_clusters and not self.live_finalize(rec):
            self.later(100, self.finalize, key, rec)     # live.py: a wave still being deleted, or unreachable
            return
        fins = [f for f in rec.obj["metadata"].get("finalizers", []) if f not in FINALIZERS]
        if fins:
            rec.obj["metadata"]["finalizers"] = fins
            self.touch(rec)
        else:
            del self.apps[key]
            self.appset_app_gone(rec)   # fleet.py: its ApplicationSet's controller hears of it

    # ------------------------------------------------------------------------ handlers
    def h_version(self, c):
        if c.user is None:
            return {"Version": VERSION}
        return {"Version": VERSION, "BuildDate": "2026-08-22T00:00:00Z", "GitCommit": "37ee0097cf851bc2dd7665fc081bbce61a7e836e",
                "GitTreeState": "clean", "GoVersion": "go1.25.0", "Compiler": "gc", "Platform": "linux/amd64",
                "KustomizeVersion": "v5.7.1 2025-07-23T00:00:00Z", "HelmVersion": "v3.18.4+gd80839c",
                "KubectlVersion": "v0.34.0", "JsonnetVersion": "v0.21.0"}

    def h_session_create(self, c):
        b = c.body or {}
        if b.get("token"):
            raise ApiError(16, "token-based session creation no longer supported. please upgrade argocd cli to v0.7+")
        user, pw = b.get("username") or "", b.get("password") or ""
        if not user or not pw:
            raise ApiError(16, "no credentials supplied")
        if len(user.encode()) > 32:
            raise ApiError(3, "Username is too long (32 bytes max)")
        if self.users.get(user) != pw:
            raise ApiError(16, "Invalid username or password")
        tok = self.make_token(user)
        cookie = "argocd.token=%s; path=%s; SameSite=lax; httpOnly" % (tok, self.rootpath or "/")
        c.headers_out.append(("Set-Cookie", cookie + ("; Secure" if self.tls else "")))
        return {"token": tok}

    def h_userinfo(self, c):
        return {} if c.user is None else {"loggedIn": True, "username": c.user, "iss": "argocd"}

    def h_list(self, c):
        names, repo, ns = c.q("name"), c.q("repo"), c.q("appNamespace")
        projects = c.qall("project") or c.qall("projects")
        reqs = parse_selector(c.q("selector"))
        items = []
        for (ans, aname), rec in sorted(self.apps.items(), key=lambda kv: (kv[0][1], kv[0][0])):
            o = rec.obj
            if (names and aname != names) or (ns and ans != ns) or (projects and o["spec"]["project"] not in projects):
                continue
            if repo and not any(norm_url(s.get("repoURL")) == norm_url(repo) for s in sources_of(o["spec"])):
                continue
            if not sel_match(reqs, o["metadata"].get("labels") or {}):
                continue
            items.append(self.render(rec))
        return {"metadata": {"resourceVersion": str(self.rv)}, "items": items}

    def h_get(self, c):
        projects = c.qall("project") or c.qall("projects")
        if len(projects) > 1:
            raise ApiError(3, "multiple projects specified - the get endpoint accepts either zero or one project")
        rec = self.lookup(c.params["name"], c.q("appNamespace"), projects[0] if projects else "")
        if c.q("refresh"):
            self.reconcile(rec)  # the real server blocks until the controller re-reconciled
        return self.render(rec)

    def h_create(self, c):
        if c.body is None:
            raise ApiError(2, "error creating application: application is nil in request")
        meta, spec = self.normalize(c.body)
        self.validate(meta, spec, c.bools["validate"])
        ns = meta.get("namespace") or CONTROL_NS
        meta["namespace"] = ns
        key = (ns, meta["name"])
        rec = self.apps.get(key)
        rbac = self.rbac_name(spec["project"], ns, meta["name"])
        self.enforce(c.user, "applications", "create", rbac)
        if rec is None:
            if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", meta["name"]) \
                    or len(meta["name"]) > 253:
                raise ApiError(3, 'error creating application: Application.argoproj.io "%s" is invalid: metadata.name: '
                               'Invalid value: "%s": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric '
                               "characters, '-' or '.', and must start and end with an alphanumeric character"
                               % (meta["name"], meta["name"]))
            return self.new_rec(meta, spec)
        old = rec.obj["metadata"]
        same = (rec.obj["spec"] == spec and (old.get("labels") or {}) == (meta.get("labels") or {})
                and (old.get("annotations") or {}) == (meta.get("annotations") or {})
                and (old.get("finalizers") or []) == (meta.get("finalizers") or []))
        if same:
            return self.render(rec)
        if not c.bools["upsert"]:
            raise ApiError(3, "existing application spec is different, use upsert flag to force update")
        self.enforce(c.user, "applications", "update", rbac)
        for k in ("labels", "annotations"):
            merged = dict(old.get(k) or {}, **(meta.get(k) or {}))
            if merged:
                old[k] = merged
        return self.apply_update(rec, spec, meta.get("finalizers"))

    def new_rec(self, meta, spec):
        meta.update(uid=str(uuid.uuid4()), generation=1, creationTimestamp=ts())
        rec = self.apps[(meta["namespace"], meta["name"])] = Rec({"metadata": meta, "spec": spec, "status": {}})
        self.touch(rec)
        out = self.render(rec)
        self.reconcile(rec)
        return out

    def apply_update(self, rec, spec, finalizers, labels=None, annotations=None, replace_meta=False):
        meta = rec.obj["metadata"]
        if replace_meta:
            for k, v in (("labels", labels), ("annotations", annotations)):
                meta.pop(k, None)
                if v:
                    meta[k] = v
        meta.pop("finalizers", None)
        if finalizers:
            meta["finalizers"] = finalizers
        if spec != rec.obj["spec"]:
            meta["generation"] = meta.get("generation", 1) + 1
        rec.obj["spec"] = spec
        self.touch(rec)
        out = self.render(rec)
        self.reconcile(rec)
        return out

    def h_update(self, c):
        body = c.body if isinstance(c.body, dict) else {}
        meta, spec = self.normalize(body)
        meta["name"] = c.params["application.metadata.name"]
        rec = self.lookup(meta["name"], meta.get("namespace"), c.q("project"))
        self.validate(meta, spec, c.bools["validate"])
        return self.apply_update(rec, spec, meta.get("finalizers"), meta.get("labels"), meta.get("annotations"), True)

    def h_update_spec(self, c):
        rec = self.lookup(c.params["name"], c.q("appNamespace"), c.q("project"))
        meta = dict(rec.obj["metadata"])
        _, spec = self.normalize({"spec": c.body or {}})
        self.validate(meta, spec, c.bools["validate"])
        self.apply_update(rec, spec, meta.get("finalizers"))
        return copy.deepcopy(rec.obj["spec"])

    def h_delete(self, c):
        cascade, pol = c.bools["cascade"], c.q("propagationPolicy")
        if not cascade and pol:
            raise ApiError(3, "cannot set propagation policy when cascading is disabled")
        if pol.lower() not in ("", "foreground", "background"):
            raise ApiError(3, "invalid propagation policy: %s" % pol)
        rec = self.lookup(c.params["name"], c.q("appNamespace"), c.q("project"))
        meta = rec.obj["metadata"]
        self.enforce(c.user, "applications", "delete", self.rbac_name(rec.obj["spec"]["project"], meta["namespace"], meta["name"]))
        key = (meta["namespace"], meta["name"])
        fins = list(meta.get("finalizers") or [])
        if cascade:
            if not any(f in FINALIZERS for f in fins):
                fins.append(FINALIZERS[{"": 0, "foreground": 1, "background": 2}[pol.lower()]])
        else:
            fins = [f for f in fins if f not in FINALIZERS]
        if self.live_clusters and not self.live_registered(rec):
            fins = [f for f in fins if f not in FINALIZERS]   # live.py: "removed from undefined cluster", at once
        meta.pop("finalizers", None)
        if not fins:
            rec.seq += 1
            del self.apps[key]
            self.appset_app_gone(rec)
            return {}
        meta["finalizers"] = fins
        if not meta.get("deletionTimestamp"):
            meta.update(deletionTimestamp=ts(), deletionGracePeriodSeconds=0)
        self.touch(rec)
        if any(f in FINALIZERS for f in fins):
            self.later(self.delete_ms, self.finalize, key, rec)
        return {}

    def h_sync(self, c):
        b = c.body or {}
        rec = self.lookup(c.params["name"], b.get("appNamespace"), b.get("project"))
        app = rec.obj
        spec = app["spec"]
        self.enforce(c.user, "applications", "sync", self.rbac_name(spec["project"], app["metadata"]["namespace"],
                                                                     app["metadata"]["name"]))
        if app["metadata"].get("deletionTimestamp"):
            raise ApiError(9, "application is deleting")
        auto = (spec.get("syncPolicy") or {}).get("automated")
        target = (spec.get("source") or {}).get("targetRevision") or "HEAD"
        rev = b.get("revision") or ""
        if auto is not None and auto.get("enabled", True) and not b.get("dryRun") and rev and rev != target \
                and not spec.get("sources"):
            raise ApiError(9, "Cannot sync to %s: auto-sync currently set to %s" % (rev, target))
        srcs = sources_of(spec)
        multi = bool(spec.get("sources"))
        revs = [s.get("targetRevision") or "" for s in srcs]
        if multi:
            for pos, r in zip(b.get("sourcePositions") or [], b.get("revisions") or []):
                if pos <= 0 or pos > len(srcs):
                    raise ApiError(2, "source position is out of range")
                revs[pos - 1] = r
        elif srcs and rev:
            revs[0] = rev
        resolved = []
        for s, r in zip(srcs, revs):
            if s.get("chart") or re.fullmatch(r"[0-9a-f]{40}", r or ""):
                resolved.append(r)
                continue
            try:
                resolved.append(self.repos.resolve(s.get("repoURL"), r))
            except GitError as e:
                raise ApiError(9, "error resolving repo revision: rpc error: code = Unknown desc = %s" % e)
        if app.get("operation"):
            raise ApiError(9, "another operation is already in progress")
        items = (b.get("syncOptions") or {}).get("items")
        sync = {"revision": resolved[0] if resolved and not multi else None, "prune": b.get("prune"),
                "dryRun": b.get("dryRun"), "syncStrategy": b.get("strategy"), "resources": b.get("resources"),
                "source": None if multi else copy.deepcopy(spec.get("source")),
                "syncOptions": items if items is not None else (spec.get("syncPolicy") or {}).get("syncOptions"),
                "sources": copy.deepcopy(srcs) if multi else None, "revisions": resolved if multi else None}
        op = {"sync": prune(sync), "initiatedBy": {"username": c.user}}
        if b.get("infos"):
            op["info"] = b["infos"]
        retry = b.get("retryStrategy") or (spec.get("syncPolicy") or {}).get("retry")
        if retry:
            op["retry"] = retry
        key = (app["metadata"]["namespace"], app["metadata"]["name"])
        fault = self.app_faults.get(app["metadata"]["name"], {})
        if fault.pop("drop_sync", None):
            # accepted, then gone before the controller started it (terminated, or dropped by the
            # controller): the answer shows the operation; the application keeps its last operationState
            out = self.render(rec)
            out["operation"] = copy.deepcopy(op)
            return out
        begin = self.start_op(key, rec, op)
        out = self.render(rec)
        begin()
        return out

    def h_terminate(self, c):
        rec = self.lookup(c.params["name"], c.q("appNamespace"), c.q("project"), "sync")
        state = rec.obj["status"].get("operationState")
        if not rec.obj.get("operation") or not state:
            raise ApiError(3, "Unable to terminate operation. No operation is in progress")
        state.update(phase="Terminating", message="operation is terminating")
        rec.seq += 1
        self.touch(rec)
        meta = rec.obj["metadata"]
        self.later(min(self.op_ms, 100), self.terminate_end, (meta["namespace"], meta["name"]), rec.seq)
        return {}

    # ------------------------------------------------------------------------ control API
    SETTINGS = {"op_ms": int, "health_ms": int, "start_ms": int, "reconcile_ms": int, "delete_ms": int,
                "resync_ms": int, "retry_ms": int, "same_second": bool, "require_repo_creds": bool, "api_versions": list,
                "manifest_generate_paths": bool, "stream_drop_after": int, "stream_buffer": bool, "keepalive_ms": int,
                "appset_ms": int, "rbac_deny": list, "cluster_tokens": dict, "namespaces_exist": bool,
                "selfheal_ms": int, "live_clusters": bool,
                "live_resync_ms": int, "tracking_method": str, "rbac_fine_grained_inheritance": bool}

    def config(self):
        return {k: getattr(self, k) for k in self.SETTINGS}

    def configure(self, payload):
        if not isinstance(payload, dict):
            raise ValueError("config must be a JSON object")
        for k, v in payload.items():
            typ = self.SETTINGS.get(k)
            if typ is None:
                raise ValueError("unknown setting %r (known: %s)" % (k, ", ".join(sorted(self.SETTINGS))))
            if not isinstance(v, typ) or (typ is int and isinstance(v, bool)):
                raise ValueError("setting %r needs a %s" % (k, typ.__name__))
        if payload.get("tracking_method", "annotation") not in TRACKING_METHODS:
            raise ValueError("tracking_method is one of %s" % ", ".join(TRACKING_METHODS))
        for k, v in payload.items():
            setattr(self, k, v)
        return self.config()

    def add_fault(self, f):
        if not isinstance(f, dict):
            raise ValueError("fault must be a JSON object")
        if "app" in f:
            name = f["app"]
            af = self.app_faults.setdefault(name, {})
            if f.get("clear"):
                self.app_faults.pop(name, None)
            if "health" in f:
                af.update(health=f["health"], message=f.get("message"))
                if f.get("now"):
                    recs = [r for (ns, n), r in self.apps.items() if n == name]
                    if not recs:
                        raise LookupError("no application %r" % name)
                    self.set_health(recs[0], f["health"], f.get("message"))
                    self.touch(recs[0])
            if "sync_fail" in f:
                af["sync_fail"] = f["sync_fail"]
                af["times"] = int(f.get("times", -1))
            if f.get("drop_sync"):
                af["drop_sync"] = True
            if "report_revision" in f:
                af["report_revision"] = str(f["report_revision"])
            if "report_revisions" in f:
                af["report_revisions"] = [str(r) for r in f["report_revisions"]]
            if "busy_for_ms" in f or "out_of_sync" in f:
                recs = [r for (ns, n), r in self.apps.items() if n == name and ns == (f.get("appNamespace") or ns)]
                if not recs:
                    raise LookupError("no application %r" % name)
                rec = recs[0]
                key = (rec.obj["metadata"]["namespace"], name)
                if "out_of_sync" in f:
                    rec.drift = bool(f["out_of_sync"])
                    self.reconcile(rec)
                if "busy_for_ms" in f:
                    if rec.obj.get("operation"):
                        raise ValueError("application %r already has an operation" % name)
                    try:
                        rev = [r for r, _, _ in self.targets(rec.obj["spec"])]
                    except GitError:
                        rev = [s.get("targetRevision") or "HEAD" for s in sources_of(rec.obj["spec"])]
                    sync = {"revisions": rev} if rec.obj["spec"].get("sources") else {"revision": rev[0] if rev else ""}
                    op = {"sync": sync, "initiatedBy": {"automated": True}, "retry": {"limit": 5}}
                    self.start_op(key, rec, op, int(f["busy_for_ms"]))()
            return {"ok": True}
        if not any(k in f for k in ("status", "delay_ms", "drop")):
            raise ValueError("fault needs one of status, delay_ms, drop or app")
        if "status" in f and int(f["status"]) not in range(100, 600):
            raise ValueError("bad status")
        if ("body" in f or "content_type" in f) and ("status" not in f or not isinstance(f.get("body"), str)):
            raise ValueError("body (a string) and content_type go with a status")
        re.compile(f.get("path_regex") or "")
        self.fault_id += 1
        count = f.get("count", -1 if ("delay_ms" in f and "status" not in f and not f.get("drop")) else 1)
        rec = dict(f, id=self.fault_id, count=int(count), method=(f.get("method") or "").upper())
        self.faults.append(rec)
        return {"ok": True, "id": self.fault_id}

    def take_faults(self, method, path, quiet=False):
        """the faults a request meets; quiet (the harness's plan): only those with no count (a state, not
        an event), none taken"""
        delay, final = 0, None
        for f in self.faults:
            if f["count"] == 0 or (f["method"] and f["method"] != method) or (quiet and f["count"] > 0):
                continue
            if f.get("path_regex") and not re.search(f["path_regex"], path):
                continue
            if final is not None and (f.get("drop") or "status" in f):
                continue
            f["count"] -= 1 if f["count"] > 0 else 0
            delay += int(f.get("delay_ms") or 0)
            if f.get("drop") or "status" in f:
                final = f
        self.faults = [f for f in self.faults if f["count"] != 0]
        return delay, final


def parse_selector(sel):
    reqs, parts, depth, cur = [], [], 0, ""
    if not sel.strip():
        return reqs
    for ch in sel:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    key = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
    for p in (x.strip() for x in parts):
        m = re.fullmatch(r"(%s)\s+(in|notin)\s+\(([^()]*)\)" % key, p)
        if m:
            reqs.append((m.group(1), m.group(3), {v.strip() for v in m.group(4).split(",") if v.strip()}))
            continue
        m = re.fullmatch(r"(%s)\s*(==|=|!=)\s*([-A-Za-z0-9_.]*)" % key, p)
        if m:
            reqs.append((m.group(1), "!=" if m.group(3) == "!=" else "=", m.group(4)))
            continue
        m = re.fullmatch(r"(!?)\s*(%s)" % key, p)
        if m:
            reqs.append((m.group(2), "!" if m.group(1) else "exists", None))
            continue
        raise ApiError(2, "error parsing the selector: unable to parse requirement: invalid requirement %s" % json.dumps(p))
    return reqs


def sel_match(reqs, labels):
    for k, op, v in reqs:
        has, val = k in labels, labels.get(k)
        if ((op == "=" and val != v) or (op == "!=" and has and val == v) or (op == "in" and val not in v)
                or (op == "notin" and has and val in v) or (op == "exists" and not has) or (op == "!" and has)):
            return False
    return True


# (handler, body schema or None, needs auth, boolean query params with defaults)
HANDLERS = {
    ("GET", "version"): ("h_version", None, False, {}),
    ("POST", "v1/session"): ("h_session_create", SESSION, False, {}),
    ("DELETE", "v1/session"): (lambda emu, c: {}, None, False, {}),
    ("GET", "v1/session/userinfo"): ("h_userinfo", None, False, {}),
    ("GET", "v1/applications"): ("h_list", None, True, {}),
    ("POST", "v1/applications"): ("h_create", APP, True, {"upsert": False, "validate": True}),
    ("GET", "v1/applications/{name}"): ("h_get", None, True, {}),
    ("PUT", "v1/applications/{application.metadata.name}"): ("h_update", APP, True, {"validate": True}),
    ("PUT", "v1/applications/{name}/spec"): ("h_update_spec", SPEC, True, {"validate": True}),
    ("DELETE", "v1/applications/{name}"): ("h_delete", None, True, {"cascade": True}),
    ("POST", "v1/applications/{name}/sync"): ("h_sync", SYNC, True, {}),
    ("DELETE", "v1/applications/{name}/operation"): ("h_terminate", None, True, {}),
    ("GET", "v1/applications/{applicationName}/managed-resources"): ("h_managed_resources", None, True, {}),
    ("GET", "v1/applications/{applicationName}/resource-tree"): ("h_resource_tree", None, True, {}),
    ("GET", "v1/applications/{name}/resource"): ("h_resource_get", None, True, {}),
    ("DELETE", "v1/applications/{name}/resource"): ("h_resource_delete", None, True, {}),
    ("GET", "v1/clusters"): ("h_cluster_list", None, True, {}),
    ("POST", "v1/clusters"): ("h_cluster_create", CLUSTER, True, {"upsert": False}),
    ("GET", "v1/clusters/{id.value}"): ("h_cluster_get", None, True, {}),
    ("PUT", "v1/clusters/{id.value}"): ("h_cluster_update", CLUSTER, True, {}),
    ("DELETE", "v1/clusters/{id.value}"): ("h_cluster_delete", None, True, {}),
    ("GET", "v1/repositories"): ("h_repo_list", None, True, {}),
    ("POST", "v1/repositories"): ("h_repo_create", REPO, True, {"upsert": False, "credsOnly": False}),
    ("GET", "v1/repositories/{repo}"): ("h_repo_get", None, True, {}),
    ("DELETE", "v1/repositories/{repo}"): ("h_repo_delete", None, True, {}),
    ("GET", "v1/applicationsets"): ("h_appset_list", None, True, {}),
    ("POST", "v1/applicationsets"): ("h_appset_create", APPSET, True, {"upsert": False, "dryRun": False}),
    ("GET", "v1/applicationsets/{name}"): ("h_appset_get", None, True, {}),
    ("DELETE", "v1/applicationsets/{name}"): ("h_appset_delete", None, True, {}),
}


class Ctx:
    def __init__(self, params, query, body, user, bools):
        self.params, self.query, self.body, self.user, self.bools = params, query, body, user, bools
        self.headers_out = []

    def qall(self, name):
        return self.query.get(name, [])

    def q(self, name):
        v = self.query.get(name)
        return v[0] if v else ""


def camel(k):
    return re.sub(r"_([a-z])", lambda m: m.group(1).upper(), k)


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    timeout = 120

    def setup(self):
        super().setup()
        self.tls_failed = False
        if isinstance(self.request, ssl.SSLSocket):
            try:
                self.request.do_handshake()
            except (ssl.SSLError, OSError) as e:
                self.tls_failed = True
                sys.stderr.write("%s TLS handshake failed: %s\n" % (ts(), e))

    def handle(self):
        if not self.tls_failed:
            super().handle()

    def log_message(self, fmt, *args):
        pass

    def send_response(self, code, message=None):
        self.send_response_only(code, message)
        self.send_header("Date", self.date_time_string())

    def do_any(self):
        emu = self.server.emu
        method, t0 = self.command, time.time()
        u = urlsplit(self.path)
        path, rawq = u.path, u.query
        body = self.read_body()
        if path == "/_emu" or path.startswith("/_emu/"):
            status, ctype, data, extra = self.control(emu, method, path, body)
            self.send(status, ctype, data, extra)
            sys.stderr.write("%s %s %s -> %d (control)\n" % (ts(), method, self.path, status))
            return
        try:
            parsed = json.loads(body) if body.strip() else None
        except ValueError:
            parsed = None
        entry = {"seq": len(emu.log) + 1, "time": ts(), "t": time.time(), "method": method, "path": path, "query": rawq,
                 "args": parse_qs(rawq, keep_blank_values=True), "headers": dict(self.headers.items()),
                 "body": parsed}
        if body.strip() and parsed is None:
            entry["body_raw"] = body.decode("utf-8", "replace")
        with emu.lock:
            if emu.quiet:
                # the harness's own plan (lib.sh plancheck): not logged, no counted fault taken
                delay, fault = emu.take_faults(method, path, quiet=True)
            else:
                entry["seq"] = len(emu.log) + 1
                emu.log.append(entry)
                delay, fault = emu.take_faults(method, path)
        if delay:
            time.sleep(delay / 1000.0)
        if fault is not None and fault.get("drop"):
            entry["status"] = "dropped"
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sys.stderr.write("%s %s %s -> dropped\n" % (ts(), method, self.path))
            return
        if fault is not None:
            st = int(fault["status"])
            code = int(fault.get("code", HTTP_TO_GRPC.get(st, 2)))
            msg = fault.get("message") or "emulated fault: HTTP %d" % st
            if "body" in fault:
                status, ctype, data, extra = st, fault.get("content_type") or "text/html", fault["body"].encode(), []
            else:
                status, ctype, data, extra = st, "application/json", gojson({"error": msg, "code": code, "message": msg}), []
        elif method == "GET" and path == emu.rootpath + "/api/v1/stream/applications" and \
                emu.authenticate(self.headers)[1] is None:
            entry["status"] = 200
            sys.stderr.write("%s %s %s -> 200 (stream)\n" % (ts(), method, self.path))
            return serve_watch(self, emu, rawq, parse_selector, sel_match, CONTROL_NS)
        else:
            status, ctype, data, extra = self.dispatch(emu, method, path, rawq, body)
        entry["status"] = status
        if method == "POST" and path.endswith("/sync") and status == 200:
            # for the tests: the commit a sync without "revision" (the targetRevision) resolved to
            try:
                entry["synced_revision"] = ((json.loads(data).get("operation") or {}).get("sync") or {}).get("revision")
            except (ValueError, TypeError, AttributeError):
                pass
        self.send(status, ctype, data, extra)
        sys.stderr.write("%s %s %s -> %d (%d ms)\n" % (ts(), method, self.path, status, (time.time() - t0) * 1000))

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = do_OPTIONS = do_any

    def read_body(self):
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            data = b""
            while True:
                n = int(self.rfile.readline().split(b";")[0].strip() or b"0", 16)
                if n == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(n)
                self.rfile.readline()
        n = int(self.headers.get("Content-Length") or 0)
        return self.rfile.read(n) if n > 0 else b""

    def send(self, status, ctype, data, extra=()):
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        for k, v in extra:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    @staticmethod
    def text(status, msg):
        return status, "text/plain; charset=utf-8", (msg + "\n").encode(), [("X-Content-Type-Options", "nosniff")]

    def dispatch(self, emu, method, path, rawq, body):
        if emu.rootpath:
            if not path.startswith(emu.rootpath + "/"):
                return self.text(404, "404 page not found")
            path = path[len(emu.rootpath):]
        if not path.startswith("/api/"):
            return self.text(404, "404 page not found")
        if method != "GET" and emu.content_types and \
                (self.headers.get("Content-Type") or "").lower() not in emu.content_types:
            return self.text(415, "Invalid content type")
        segs = [unquote(s) for s in path[5:].split("/")]
        matches = [(pat, ms, sp) for pat, sp, ms in ROUTES if len(sp) == len(segs) and
                   all(p == s or (p.startswith("{") and s) for p, s in zip(sp, segs))]
        if not matches:
            return self.text(404, "Not Found")
        cand = sorted([m for m in matches if method in m[1]], key=lambda m: -sum(not p.startswith("{") for p in m[2]))
        if not cand:
            return self.text(405, "Method Not Allowed")
        pat, _, sp = cand[0]
        params = {p[1:-1]: s for p, s in zip(sp, segs) if p.startswith("{")}
        query = {}
        for k, v in parse_qs(rawq, keep_blank_values=True).items():
            query.setdefault(camel(k), []).extend(v)
        fn, schema, needs_auth, bool_defaults = HANDLERS.get((method, pat), (None, None, True, {}))
        hdrs = [("Grpc-Metadata-Content-Type", "application/grpc")]
        try:
            data = decode_body(body, schema) if schema is not None else None
            bools = {}
            for k, d in bool_defaults.items():
                v = query.get(k)
                bools[k] = GO_BOOLS.get(v[0]) if v and v[0] != "" else d
                if bools[k] is None:
                    raise ApiError(3, 'type mismatch, parameter: %s, error: strconv.ParseBool: parsing "%s": invalid syntax' % (k, v[0]))
            user, err = emu.authenticate(self.headers)
            if needs_auth and err is not None:
                raise err
            if fn is None:
                raise ApiError(12, "%s /api/%s is not implemented by the Argo CD emulator" % (method, pat))
            ctx = Ctx(params, query, data, user, bools)
            with emu.lock:
                result = fn(emu, ctx) if callable(fn) else getattr(emu, fn)(ctx)
            return 200, "application/json", gojson(result), hdrs + ctx.headers_out
        except Exception as e:  # noqa: BLE001 - any bug surfaces as an Internal error, not a dropped connection
            if not isinstance(e, ApiError):
                import traceback
                traceback.print_exc()
                e = ApiError(13, "emulator internal error: %r" % e)
            return GRPC_TO_HTTP.get(e.code, 500), "application/json", \
                gojson({"error": e.message, "code": e.code, "message": e.message}), hdrs

    def control(self, emu, method, path, body):
        def js(status, obj):
            return status, "application/json", json.dumps(obj, indent=1).encode(), []
        try:
            payload = json.loads(body) if body.strip() else {}
        except ValueError as e:
            return js(400, {"error": "bad JSON: %s" % e})
        with emu.lock:
            if method == "GET" and path == "/_emu/requests":
                return js(200, emu.log)
            if method == "GET" and path == "/_emu/stats":
                return js(200, dict(emu.reposerver_stats(), watchers=emu.watchers, watch_opens=emu.watch_opens))
            if method == "GET" and path == "/_emu/faults":
                return js(200, {"requests": emu.faults, "apps": emu.app_faults})
            if method == "GET" and path == "/_emu/apps":
                return js(200, [emu.render(r) for _, r in sorted(emu.apps.items())])
            if method == "POST" and path == "/_emu/quiet":
                emu.quiet = bool(isinstance(payload, dict) and payload.get("on"))
                return js(200, {"ok": True, "quiet": emu.quiet})
            if method == "POST" and path == "/_emu/reset":
                emu.log, emu.faults, emu.app_faults = [], [], {}
                emu.reposerver_reset()
                if isinstance(payload, dict) and payload.get("apps"):
                    for r in emu.apps.values():
                        r.seq += 1
                    emu.apps, emu.appsets = {}, {}
                return js(200, {"ok": True})
            if method == "GET" and path == "/_emu/config":
                return js(200, emu.config())
            if method == "POST" and path == "/_emu/config":
                try:
                    return js(200, emu.configure(payload))
                except (ValueError, TypeError) as e:
                    return js(400, {"error": str(e)})
            if method == "POST" and path == "/_emu/cluster":
                try:
                    return js(200, emu.set_cluster_api(payload))
                except LookupError as e:
                    return js(404, {"error": str(e)})
                except (ValueError, TypeError, AttributeError) as e:
                    return js(400, {"error": str(e)})
            if method == "POST" and path == "/_emu/live":
                try:
                    return js(200, emu.inject_live(payload))
                except LookupError as e:
                    return js(404, {"error": str(e)})
                except (ValueError, TypeError, AttributeError) as e:
                    return js(400, {"error": str(e)})
            if method == "POST" and path == "/_emu/fault":
                try:
                    res = [emu.add_fault(f) for f in (payload if isinstance(payload, list) else [payload])]
                except LookupError as e:
                    return js(404, {"error": str(e)})
                except (ValueError, TypeError, re.error) as e:
                    return js(400, {"error": str(e)})
                return js(200, res[0] if len(res) == 1 else res)
        return js(404, {"error": "unknown control endpoint %s %s" % (method, path)})


def main(argv=None):
    ap = argparse.ArgumentParser(description="Argo CD API server emulator (test fixture)")
    ap.add_argument("--host", default="127.0.0.1")
    ap.add_argument("--port", type=int, default=0, help="0 = pick a free port (see --port-file)")
    ap.add_argument("--port-file", help="write the listening port here once listening")
    ap.add_argument("--token", required=True, help="static bearer token accepted (must look like a JWT: a.b.c)")
    ap.add_argument("--user", action="append", default=[], help="USER:PASSWORD for POST /api/v1/session")
    ap.add_argument("--repo-map", action="append", default=[], help="REPOURL=LOCALPATH (repeatable)")
    ap.add_argument("--tls-cert")
    ap.add_argument("--tls-key")
    ap.add_argument("--rootpath", default="", help="serve everything under this prefix, e.g. /argocd")
    ap.add_argument("--op-ms", type=int, default=300, help="time an operation stays Running")
    ap.add_argument("--health-ms", type=int, default=300, help="time health stays Progressing after a sync")
    ap.add_argument("--start-ms", type=int, default=0, help="delay before the controller picks up an operation")
    ap.add_argument("--reconcile-ms", type=int, default=100, help="delay between operation end and re-comparison")
    ap.add_argument("--delete-ms", type=int, default=300, help="time a cascading delete takes")
    ap.add_argument("--appset-ms", type=int, default=250,
                    help="delay before the ApplicationSet controller generates the Applications of a stored set")
    ap.add_argument("--rbac-deny", action="append", default=[],
                    help='RBAC: refuse "RESOURCE, ACTION, OBJECT" (globs, e.g. "applications, delete, default/*")')
    ap.add_argument("--rbac-fine-grained-inheritance", action="store_true",
                    help="argocd-cm server.rbac.disableApplicationFineGrainedRBACInheritance: false (2.x default): a "
                         "resource DELETE is allowed by `delete`, else by `delete/GROUP/KIND/NS/NAME`; default (3.x): "
                         "only the latter")
    ap.add_argument("--tracking-method", choices=("annotation", "label", "annotation+label"), default="annotation",
                    help="argocd-cm application.resourceTrackingMethod (3.x default annotation, 2.x label)")
    ap.add_argument("--project", action="append", default=[], help="extra AppProject names (default always exists)")
    ap.add_argument("--app-namespace", action="append", default=[], help="extra enabled application namespaces")
    ap.add_argument("--cluster", action="append", default=[], help="extra registered cluster NAME=URL")
    ap.add_argument("--namespaces-exist", action="store_true",
                    help="every namespace exists on every cluster (default: as Argo CD, a sync into a namespace the "
                         "cluster lacks fails unless CreateNamespace=true or the sync applies it)")
    ap.add_argument("--resync-ms", type=int, default=180000,
                    help="reconcile interval (timeout.reconciliation), 0 = only on events and refresh")
    ap.add_argument("--retry-ms", type=int, default=200,
                    help="first back-off between retries of a failed sync, doubling, at most 36x (Argo CD: 5 s, 3 m)")
    ap.add_argument("--selfheal-ms", type=int, default=2000,
                    help="self-heal backoff: the second self-heal at the same revision waits this, x3 each, at most "
                         "150x (Argo CD: 2 s, cap 300 s); the first is at once")
    ap.add_argument("--same-second", action="store_true",
                    help="let finishedAt fall in the second of the pre-operation reconciledAt, as Argo CD can")
    ap.add_argument("--require-repo-creds", action="store_true",
                    help="repositories must be registered (POST /api/v1/repositories) before use")
    ap.add_argument("--repo-creds", action="append", default=[],
                    help="URL=USER:PASSWORD the repository accepts (default: any non-empty pair)")
    ap.add_argument("--api-versions", default="", help="comma-separated cluster info.apiVersions (default: core groups)")
    ap.add_argument("--live-clusters", action="store_true",
                    help="registered loopback https clusters are real API servers (live.py): dialled, applied to, read")
    ap.add_argument("--in-cluster-kube", default="", help="with --live-clusters: the API server of "
                    "https://kubernetes.default.svc (URL)")
    ap.add_argument("--in-cluster-kube-token", default="", help="its bearer token")
    ap.add_argument("--in-cluster-kube-ca", default="", help="its CA certificate (PEM file; none: insecure)")
    ap.add_argument("--api-content-types", default="application/json", help="';'-separated allow-list, empty = no check")
    a = ap.parse_args(argv)
    if bool(a.tls_cert) != bool(a.tls_key):
        ap.error("--tls-cert and --tls-key go together")
    for opt, vals in (("--repo-map", a.repo_map), ("--cluster", a.cluster)):
        if any("=" not in v for v in vals):
            ap.error("%s needs NAME=VALUE" % opt)
    if any(":" not in u for u in a.user):
        ap.error("--user needs USER:PASSWORD")
    if a.token.count(".") < 2:
        sys.stderr.write("warning: --token is not JWT-shaped; Argo CD ignores such bearer values, so will the emulator\n")
    emu = Emu(a)
    srv = ThreadingHTTPServer((a.host, a.port), Handler)
    srv.daemon_threads = True
    srv.emu = emu
    if a.tls_cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(a.tls_cert, a.tls_key)
        srv.socket = ctx.wrap_socket(srv.socket, server_side=True, do_handshake_on_connect=False)
    port = srv.server_address[1]
    if a.port_file:
        tmp = a.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.replace(tmp, a.port_file)

    def stop(signum, frame):
        raise SystemExit(0)
    signal.signal(signal.SIGTERM, stop)
    sys.stderr.write("argocd-emu listening on %s://%s:%d%s\n" % ("https" if a.tls_cert else "http", a.host, port, a.rootpath))
    try:
        srv.serve_forever(poll_interval=0.2)
    except (SystemExit, KeyboardInterrupt):
        pass
    finally:
        srv.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
