#!/usr/bin/env python3
"""Self-test of the Argo CD API emulator: python3 tests/argocd-emu/test_emulator.py"""
import base64
import json
import os
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
EMU = os.path.join(HERE, "emulator.py")
REPO_URL = "https://git.example.com/gitops.git"


def b64(obj):
    return base64.urlsafe_b64encode(json.dumps(obj).encode()).rstrip(b"=").decode()


TOKEN = b64({"alg": "HS256", "typ": "JWT"}) + "." + b64({"iss": "argocd", "sub": "ci:apiKey"}) + ".c2lnbmF0dXJl"


def git(*args, cwd=None):
    env = dict(os.environ, GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@e", GIT_COMMITTER_NAME="t",
               GIT_COMMITTER_EMAIL="t@e", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")
    return subprocess.run(["git"] + list(args), cwd=cwd, env=env, check=True, capture_output=True,
                          text=True).stdout.strip()


def start_emulator(tmp, name, *extra):
    port_file = os.path.join(tmp, name + ".port")
    with open(os.path.join(tmp, name + ".log"), "w") as log:
        proc = subprocess.Popen([sys.executable, EMU, "--port", "0", "--token", TOKEN, "--user", "admin:secret",
                                 "--repo-map", "%s=%s" % (REPO_URL, os.path.join(tmp, "repo.git")),
                                 "--port-file", port_file] + list(extra), stderr=log)
    deadline = time.time() + 15
    while not os.path.exists(port_file):
        if time.time() > deadline or proc.poll() is not None:
            raise RuntimeError("emulator did not start")
        time.sleep(0.05)
    with open(port_file) as f:
        return proc, int(f.read())


class Client:
    def __init__(self, base, ctx=None):
        self.base, self.ctx = base, ctx

    def req(self, method, path, body=None, token=TOKEN, ctype="application/json", headers=None, raw=None):
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        r = urllib.request.Request(self.base + path, data=data, method=method)
        if ctype:
            r.add_header("Content-Type", ctype)
        if token:
            r.add_header("Authorization", "Bearer " + token)
        for k, v in (headers or {}).items():
            r.add_header(k, v)
        try:
            resp = urllib.request.urlopen(r, timeout=20, context=self.ctx)
            status, hdrs, payload = resp.status, resp.headers, resp.read()
        except urllib.error.HTTPError as e:
            status, hdrs, payload = e.code, e.headers, e.read()
        if (hdrs.get("Content-Type") or "").startswith("application/json"):
            return status, hdrs, json.loads(payload)
        return status, hdrs, payload.decode()


class EmulatorTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="argocd-emu-")
        bare, work = os.path.join(cls.tmp, "repo.git"), os.path.join(cls.tmp, "work")
        git("init", "--bare", "-q", "-b", "main", bare)
        git("clone", "-q", bare, work)
        os.makedirs(os.path.join(work, "in-cluster", "app1"))
        with open(os.path.join(work, "in-cluster", "app1", "cm.yaml"), "w") as f:
            f.write("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app1\n")
        with open(os.path.join(work, "README"), "w") as f:
            f.write("x\n")
        git("add", ".", cwd=work)
        git("commit", "-q", "-m", "init", cwd=work)
        git("push", "-q", "origin", "HEAD:main", cwd=work)
        cls.work, cls.sha = work, git("rev-parse", "HEAD", cwd=work)
        cls.proc, port = start_emulator(cls.tmp, "main", "--op-ms", "300", "--health-ms", "300",
                                        "--reconcile-ms", "50", "--delete-ms", "200")
        cls.base = "http://127.0.0.1:%d" % port
        cls.c = Client(cls.base)

    @classmethod
    def tearDownClass(cls):
        cls.proc.send_signal(signal.SIGTERM)
        try:
            rc = cls.proc.wait(10)
        finally:
            if cls.proc.poll() is None:
                cls.proc.kill()
        shutil.rmtree(cls.tmp, ignore_errors=True)
        if rc != 0:
            raise AssertionError("emulator exit code %r on SIGTERM" % rc)

    def setUp(self):
        self.assertEqual(self.c.req("POST", "/_emu/reset", {}, token=None)[0], 200)

    # -- helpers
    def app(self, name, path="in-cluster/app1", **spec):
        src = {"repoURL": REPO_URL, "path": path, "targetRevision": spec.pop("rev", "")}
        if spec.pop("chart", None):
            src = {"repoURL": "https://charts.example.com", "chart": "web", "targetRevision": "1.2.3"}
        body = {"apiVersion": "argoproj.io/v1alpha1", "kind": "Application",
                "metadata": {"name": name, "labels": spec.pop("labels", {"team": "a"})},
                "spec": dict({"project": "", "source": src,
                              "destination": {"server": "https://kubernetes.default.svc", "namespace": name}}, **spec)}
        return body

    def create(self, name, query="", **kw):
        st, _, body = self.c.req("POST", "/api/v1/applications" + query, self.app(name, **kw))
        self.assertEqual(st, 200, body)
        return body

    def get(self, name, query=""):
        return self.c.req("GET", "/api/v1/applications/" + name + query)

    def wait_for(self, name, pred, timeout=10):
        deadline = time.time() + timeout
        while True:
            st, _, a = self.get(name)
            self.assertEqual(st, 200, a)
            if pred(a):
                return a
            if time.time() > deadline:
                self.fail("timeout waiting on %s: %s" % (name, json.dumps(a)[:2000]))
            time.sleep(0.03)

    @staticmethod
    def done(a):
        os_ = a["status"].get("operationState") or {}
        return ("operation" not in a and os_.get("phase") in ("Succeeded", "Failed", "Error")
                and a["status"].get("reconciledAt", "") >= os_.get("finishedAt", "~"))

    def assertErr(self, resp, status, code, message=None, prefix=None):
        st, hdrs, body = resp
        self.assertEqual(st, status, body)
        self.assertEqual(hdrs.get("Content-Type"), "application/json")
        self.assertEqual(list(body.keys()), ["error", "code", "message"])
        self.assertEqual(body["code"], code)
        self.assertEqual(body["error"], body["message"])
        if message is not None:
            self.assertEqual(body["message"], message)
        if prefix is not None:
            self.assertTrue(body["message"].startswith(prefix), body["message"])

    # -- transport, router, auth
    def test_version_and_router(self):
        st, _, v = self.c.req("GET", "/api/version", token=None, ctype=None)
        self.assertEqual((st, v), (200, {"Version": "v3.6.0+37ee009"}))
        st, _, v = self.c.req("GET", "/api/version", ctype=None)
        self.assertIn("GoVersion", v)
        st, h, body = self.c.req("GET", "/api/v1/version")
        self.assertEqual((st, body, h.get("Content-Type")), (404, "Not Found\n", "text/plain; charset=utf-8"))
        st, _, body = self.c.req("POST", "/api/v1/applications/x", {})
        self.assertEqual((st, body), (405, "Method Not Allowed\n"))
        st, _, body = self.c.req("GET", "/api/v1/gpgkeys")
        self.assertEqual((st, body["code"]), (501, 12))

    def test_auth(self):
        no = self.c.req("GET", "/api/v1/applications", token=None)
        self.assertErr(no, 401, 16, "no session information")
        self.assertErr(self.c.req("GET", "/api/v1/applications", token="plain-secret"), 401, 16, "no session information")
        self.assertErr(self.c.req("GET", "/api/v1/applications", token=TOKEN[:-3] + "xyz"), 401, 16,
                       prefix="invalid session: ")
        expired = b64({"alg": "HS256"}) + "." + b64({"iss": "argocd", "sub": "x:apiKey", "exp": 1}) + ".c2ln"
        self.assertErr(self.c.req("GET", "/api/v1/applications", token=expired), 401, 16, prefix="invalid session: ")
        st, _, body = self.c.req("GET", "/api/v1/applications", token=None, headers={"Cookie": "argocd.token=" + TOKEN})
        self.assertEqual(st, 200)
        self.assertIn("items", body)
        self.assertErr(self.c.req("POST", "/api/v1/session", {"username": "admin", "password": "bad"}, token=None),
                       401, 16, "Invalid username or password")
        self.assertErr(self.c.req("POST", "/api/v1/session", {"username": "admin"}, token=None),
                       401, 16, "no credentials supplied")
        self.assertErr(self.c.req("POST", "/api/v1/session", {"username": "a" * 33, "password": "x"}, token=None),
                       400, 3, "Username is too long (32 bytes max)")
        st, h, body = self.c.req("POST", "/api/v1/session", {"username": "admin", "password": "secret"}, token=None)
        self.assertEqual(st, 200)
        self.assertTrue(h.get("Set-Cookie").startswith("argocd.token=" + body["token"] + "; path=/; SameSite=lax; httpOnly"))
        st, _, info = self.c.req("GET", "/api/v1/session/userinfo", token=body["token"])
        self.assertEqual(info, {"loggedIn": True, "username": "admin", "iss": "argocd"})
        self.assertEqual(self.c.req("GET", "/api/v1/session/userinfo", token=None)[2], {})
        part0, part1 = body["token"][:20], body["token"][20:]
        st, _, _ = self.c.req("GET", "/api/v1/applications", token=None,
                              headers={"Cookie": "argocd.token=2:%s; argocd.token-1=%s" % (part0, part1)})
        self.assertEqual(st, 200)

    def test_content_type_gate(self):
        for ctype in ("text/plain", "application/json; charset=utf-8", None):
            st, h, body = self.c.req("POST", "/api/v1/applications", self.app("ct"), token=None, ctype=ctype)
            self.assertEqual((st, body, h.get("Content-Type")), (415, "Invalid content type\n", "text/plain; charset=utf-8"))
        st, _, body = self.c.req("DELETE", "/api/v1/applications/nothing", token=None, ctype=None)
        self.assertEqual(st, 415)
        st, _, _ = self.c.req("POST", "/api/v1/applications", raw=b"{bad", token=None)
        self.assertEqual(st, 400)  # the gateway decodes the body before authentication

    # -- CRUD
    def test_create_upsert_get_update_delete(self):
        a = self.create("crud")
        self.assertEqual(a["metadata"]["namespace"], "argocd")
        self.assertEqual(a["spec"]["project"], "default")
        self.assertNotIn("targetRevision", a["spec"]["source"])
        uid = a["metadata"]["uid"]
        self.assertEqual(self.create("crud")["metadata"]["uid"], uid)  # idempotent
        changed = self.app("crud", labels={"env": "dev"})
        changed["spec"]["destination"]["namespace"] = "other"
        self.assertErr(self.c.req("POST", "/api/v1/applications", changed), 400, 3,
                       "existing application spec is different, use upsert flag to force update")
        st, _, a = self.c.req("POST", "/api/v1/applications?upsert=true", changed)
        self.assertEqual(st, 200, a)
        self.assertEqual(a["metadata"]["labels"], {"team": "a", "env": "dev"})
        self.assertEqual((a["metadata"]["uid"], a["metadata"]["generation"]), (uid, 2))
        self.assertErr(self.c.req("POST", "/api/v1/applications?upsert=yes", changed), 400, 3,
                       prefix="type mismatch, parameter: upsert")
        st, _, a = self.get("crud")
        self.assertEqual(a["spec"]["destination"]["namespace"], "other")
        self.assertEqual(a["status"]["sync"]["status"], "OutOfSync")
        self.assertEqual(a["status"]["sync"]["revision"], self.sha)
        self.assertEqual(a["status"]["health"]["status"], "Missing")
        self.assertErr(self.get("missing"), 403, 7, "permission denied")
        self.assertErr(self.get("missing", "?project=default"), 404, 5, 'applications.argoproj.io "missing" not found')
        self.assertErr(self.get("crud", "?project=other"), 404, 5)
        self.assertErr(self.get("crud", "?project=a&project=b"), 400, 3)
        upd = self.app("crud", labels={"only": "this"})
        upd["metadata"]["name"] = "ignored"
        st, _, a = self.c.req("PUT", "/api/v1/applications/crud", upd)
        self.assertEqual(st, 200, a)
        self.assertEqual((a["metadata"]["name"], a["metadata"]["labels"]), ("crud", {"only": "this"}))
        self.assertErr(self.c.req("PUT", "/api/v1/applications/nope", upd), 403, 7, "permission denied")
        # list
        self.create("crud-b", labels={"team": "b", "suite": "crud"})
        st, _, lst = self.c.req("GET", "/api/v1/applications?selector=suite%3Dcrud,team%20in%20(a,b),!gone")
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["crud-b"])
        st, _, lst = self.c.req("GET", "/api/v1/applications?name=crud&projects=default")
        self.assertEqual([i["metadata"]["name"] for i in lst["items"]], ["crud"])
        st, _, lst = self.c.req("GET", "/api/v1/applications?projects=nope")
        self.assertEqual(lst["items"], [])
        self.assertErr(self.c.req("GET", "/api/v1/applications?selector=a%20in%20b"), 500, 2,
                       prefix="error parsing the selector")
        # delete: cascade=false vanishes at once; cascading delete goes through deletionTimestamp
        self.assertEqual(self.c.req("DELETE", "/api/v1/applications/crud?cascade=false")[:3:2], (200, {}))
        self.assertErr(self.get("crud"), 403, 7, "permission denied")
        self.assertEqual(self.c.req("DELETE", "/api/v1/applications/crud-b")[0], 200)
        st, _, a = self.get("crud-b")
        if st == 200:
            self.assertIn("deletionTimestamp", a["metadata"])
            self.assertIn("resources-finalizer.argocd.argoproj.io", a["metadata"]["finalizers"])
            self.assertErr(self.c.req("POST", "/api/v1/applications/crud-b/sync", {}), 400, 9, "application is deleting")
        time.sleep(0.5)
        self.assertErr(self.get("crud-b"), 403, 7)
        self.assertErr(self.c.req("DELETE", "/api/v1/applications/crud-b"), 403, 7)
        self.assertErr(self.c.req("DELETE", "/api/v1/applications/x?cascade=false&propagationPolicy=foreground"),
                       400, 3, "cannot set propagation policy when cascading is disabled")

    def test_create_validation(self):
        bad = self.app("val")
        bad["spec"]["project"] = "nope"
        self.assertErr(self.c.req("POST", "/api/v1/applications", bad), 400, 3,
                       'app is not allowed in project "nope", or the project does not exist')
        self.assertErr(self.c.req("POST", "/api/v1/applications", self.app("")), 500, 2,
                       "error while validating and normalizing app: resource name may not be empty")
        bad = self.app("val")
        bad["spec"]["destination"]["name"] = "in-cluster"
        self.assertErr(self.c.req("POST", "/api/v1/applications", bad), 400, 3,
                       prefix="application destination spec for val is invalid: application destination can't have both")
        self.assertErr(self.c.req("POST", "/api/v1/applications", self.app("val", path="nope")), 400, 3,
                       "application spec for val is invalid: InvalidSpecError: Unable to generate manifests in nope: "
                       "rpc error: code = Unknown desc = nope: app path does not exist")
        self.assertErr(self.c.req("POST", "/api/v1/applications", self.app("val", rev="nope")), 400, 3,
                       prefix="application spec for val is invalid: InvalidSpecError: Unable to generate manifests")
        self.assertErr(self.c.req("POST", "/api/v1/applications", raw=b""), 500, 2,
                       "error creating application: application is nil in request")
        self.assertErr(self.c.req("POST", "/api/v1/applications", {"spec": "x"}), 400, 3,
                       "json: cannot unmarshal string into Go struct field Application.spec of type v1alpha1.ApplicationSpec")
        self.create("val-nv", "?validate=false", path="nope")

    # -- sync lifecycle
    def test_sync_lifecycle(self):
        self.create("life")
        st, _, a = self.c.req("POST", "/api/v1/applications/life/sync",
                              {"prune": True, "syncOptions": {"items": ["CreateNamespace=true"]},
                               "infos": [{"name": "ci", "value": "1"}]})
        self.assertEqual(st, 200, a)
        self.assertEqual(a["operation"]["sync"]["revision"], self.sha)
        self.assertEqual(a["operation"]["sync"]["syncOptions"], ["CreateNamespace=true"])
        self.assertEqual(a["operation"]["initiatedBy"], {"username": "ci"})
        self.assertNotIn("operationState", a["status"])
        a = self.wait_for("life", lambda a: (a["status"].get("operationState") or {}).get("phase") == "Running")
        self.assertIn("operation", a)
        self.assertIn("startedAt", a["status"]["operationState"])
        a = self.wait_for("life", self.done)
        os_ = a["status"]["operationState"]
        self.assertEqual(os_["phase"], "Succeeded")
        self.assertEqual(os_["syncResult"]["revision"], self.sha)
        self.assertRegex(os_["finishedAt"], r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")
        self.assertEqual(a["status"]["sync"]["status"], "Synced")
        self.assertEqual(a["status"]["sync"]["revision"], self.sha)
        self.assertEqual([h["revision"] for h in a["status"]["history"]], [self.sha])
        self.assertEqual(a["status"]["history"][0]["id"], 0)
        seen = {a["status"]["health"]["status"]}
        a = self.wait_for("life", lambda a: seen.add(a["status"]["health"]["status"]) or
                          a["status"]["health"]["status"] == "Healthy")
        self.assertIn("Progressing", seen)
        # a new commit is only seen after a refresh; the tree changed, so OutOfSync
        with open(os.path.join(self.work, "in-cluster", "app1", "cm2.yaml"), "w") as f:
            f.write("kind: ConfigMap\n")
        git("add", ".", cwd=self.work)
        git("commit", "-q", "-m", "second", cwd=self.work)
        git("push", "-q", "origin", "HEAD:main", cwd=self.work)
        new = git("rev-parse", "HEAD", cwd=self.work)
        self.assertEqual(self.get("life")[2]["status"]["sync"]["revision"], self.sha)
        a = self.get("life", "?refresh=normal")[2]
        self.assertEqual((a["status"]["sync"]["revision"], a["status"]["sync"]["status"]), (new, "OutOfSync"))
        # dry run: succeeds, no history
        self.c.req("POST", "/api/v1/applications/life/sync", {"dryRun": True})
        a = self.wait_for("life", self.done)
        self.assertEqual(a["status"]["operationState"]["message"], "successfully synced (dry run)")
        self.assertEqual(len(a["status"]["history"]), 1)
        # busy: a second sync while the first runs
        self.assertEqual(self.c.req("POST", "/api/v1/applications/life/sync", {})[0], 200)
        self.assertErr(self.c.req("POST", "/api/v1/applications/life/sync", {}), 400, 9,
                       "another operation is already in progress")
        a = self.wait_for("life", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced")
        self.assertEqual(a["status"]["sync"]["revision"], new)
        self.assertEqual(len(a["status"]["history"]), 2)

    def test_sync_bad_revision_and_path(self):
        self.create("badrev")
        self.assertErr(self.c.req("POST", "/api/v1/applications/badrev/sync", {"revision": "nope"}), 400, 9,
                       "error resolving repo revision: rpc error: code = Unknown desc = unable to resolve 'nope' to a commit SHA")
        self.assertErr(self.c.req("POST", "/api/v1/applications/ghost/sync", {}), 403, 7, "permission denied")
        self.assertErr(self.c.req("POST", "/api/v1/applications/badrev/sync", {"syncOptions": ["x"]}), 400, 3,
                       prefix="json: cannot unmarshal array into Go struct field ApplicationSyncRequest.syncOptions")
        st, _, a = self.c.req("POST", "/api/v1/applications/badrev/sync", {"revision": "f" * 40})
        self.assertEqual(st, 200, a)
        a = self.wait_for("badrev", self.done)
        self.assertEqual(a["status"]["operationState"]["phase"], "Error")
        self.assertIn("unable to resolve '%s' to a commit SHA" % ("f" * 40), a["status"]["operationState"]["message"])
        self.assertTrue(a["status"]["operationState"]["message"].startswith("ComparisonError: "))
        self.create("badpath", "?validate=false", path="in-cluster/nope")
        self.c.req("POST", "/api/v1/applications/badpath/sync", {})
        a = self.wait_for("badpath", self.done)
        self.assertEqual(a["status"]["operationState"]["phase"], "Error")
        self.assertIn("in-cluster/nope: app path does not exist", a["status"]["operationState"]["message"])
        self.assertEqual(a["status"]["sync"]["status"], "Unknown")
        self.assertEqual(a["status"]["conditions"][0]["type"], "ComparisonError")

    def test_terminate_and_helm(self):
        self.create("term")
        self.assertErr(self.c.req("DELETE", "/api/v1/applications/term/operation"), 400, 3,
                       "Unable to terminate operation. No operation is in progress")
        self.c.req("POST", "/api/v1/applications/term/sync", {})
        self.assertEqual(self.c.req("DELETE", "/api/v1/applications/term/operation")[:3:2], (200, {}))
        a = self.wait_for("term", self.done)
        self.assertEqual((a["status"]["operationState"]["phase"], a["status"]["operationState"]["message"]),
                         ("Failed", "Operation terminated"))
        self.create("helm", chart=True)
        st, _, a = self.c.req("POST", "/api/v1/applications/helm/sync", {})
        self.assertEqual(a["operation"]["sync"]["revision"], "1.2.3")
        a = self.wait_for("helm", lambda a: self.done(a) and a["status"]["health"]["status"] == "Healthy")
        self.assertEqual((a["status"]["sync"]["status"], a["status"]["sync"]["revision"]), ("Synced", "1.2.3"))
        self.assertEqual(a["status"]["sourceType"], "Helm")

    # -- faults and request log
    def fault(self, f):
        st, _, body = self.c.req("POST", "/_emu/fault", f, token=None)
        self.assertEqual(st, 200, body)

    def test_request_faults(self):
        self.fault({"path_regex": "^/api/v1/applications$", "method": "GET", "status": 503, "count": 2})
        self.assertErr(self.c.req("GET", "/api/v1/applications"), 503, 14)
        self.assertEqual(self.c.req("GET", "/api/version")[0], 200)
        self.assertErr(self.c.req("GET", "/api/v1/applications"), 503, 14)
        self.assertEqual(self.c.req("GET", "/api/v1/applications")[0], 200)
        self.fault({"status": 500, "message": "boom"})
        self.assertErr(self.c.req("GET", "/api/version"), 500, 2, "boom")
        self.fault({"delay_ms": 400, "path_regex": "version", "count": 1})
        t0 = time.time()
        self.assertEqual(self.c.req("GET", "/api/version")[0], 200)
        self.assertGreaterEqual(time.time() - t0, 0.35)
        self.fault({"drop": True})
        with self.assertRaises((urllib.error.URLError, ConnectionError, OSError)):
            self.c.req("GET", "/api/version")
        self.assertEqual(self.c.req("GET", "/api/version")[0], 200)
        st, _, lst = self.c.req("GET", "/_emu/faults", token=None)
        self.assertEqual(lst["requests"], [])

    def test_app_faults(self):
        self.create("deg")
        self.fault({"app": "deg", "health": "Degraded", "message": "Back-off pulling image"})
        self.c.req("POST", "/api/v1/applications/deg/sync", {})
        a = self.wait_for("deg", lambda a: self.done(a) and a["status"]["health"]["status"] in ("Healthy", "Degraded"))
        self.assertEqual(a["status"]["health"], dict(a["status"]["health"], status="Degraded", message="Back-off pulling image"))
        self.create("fail")
        self.fault({"app": "fail", "sync_fail": "one or more objects failed to apply"})
        self.c.req("POST", "/api/v1/applications/fail/sync", {})
        a = self.wait_for("fail", self.done)
        self.assertEqual((a["status"]["operationState"]["phase"], a["status"]["operationState"]["message"]),
                         ("Failed", "one or more objects failed to apply"))
        self.assertEqual(a["status"]["sync"]["status"], "OutOfSync")
        self.create("busy")
        self.fault({"app": "busy", "busy_for_ms": 600})
        self.assertErr(self.c.req("POST", "/api/v1/applications/busy/sync", {}), 400, 9,
                       "another operation is already in progress")
        a = self.wait_for("busy", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced")
        self.assertEqual(a["status"]["operationState"]["operation"]["initiatedBy"], {"automated": True})
        self.assertEqual(self.c.req("POST", "/api/v1/applications/busy/sync", {})[0], 200)
        self.wait_for("busy", self.done)
        self.fault({"app": "busy", "out_of_sync": True})
        self.assertEqual(self.get("busy", "?refresh=hard")[2]["status"]["sync"]["status"], "OutOfSync")
        st, _, body = self.c.req("POST", "/_emu/fault", {"app": "ghost", "busy_for_ms": 10}, token=None)
        self.assertEqual(st, 404)

    def test_request_log(self):
        self.c.req("POST", "/api/v1/applications/logme/sync", {"revision": "main"}, headers={"X-Trace": "42"})
        self.c.req("GET", "/api/v1/applications?projects=a&projects=b", token=None)
        st, _, log = self.c.req("GET", "/_emu/requests", token=None)
        self.assertEqual([(e["method"], e["path"]) for e in log],
                         [("POST", "/api/v1/applications/logme/sync"), ("GET", "/api/v1/applications")])
        self.assertEqual(log[0]["headers"]["Authorization"], "Bearer " + TOKEN)
        self.assertEqual(log[0]["headers"]["X-Trace"], "42")
        self.assertEqual(log[0]["body"], {"revision": "main"})
        self.assertEqual((log[0]["status"], log[1]["status"]), (403, 401))
        self.assertEqual(log[1]["query"], "projects=a&projects=b")
        self.assertNotIn("Authorization", log[1]["headers"])


class RootPathTlsTest(unittest.TestCase):
    def test_rootpath_and_tls(self):
        tmp = tempfile.mkdtemp(prefix="argocd-emu-tls-")
        try:
            cert, key = os.path.join(tmp, "c.pem"), os.path.join(tmp, "k.pem")
            try:
                subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", cert,
                                "-days", "1", "-subj", "/CN=127.0.0.1"], check=True, capture_output=True)
            except (OSError, subprocess.CalledProcessError):
                self.skipTest("openssl not available")
            proc, port = start_emulator(tmp, "tls", "--rootpath", "/argocd", "--tls-cert", cert, "--tls-key", key)
            try:
                ctx = ssl.create_default_context()
                ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
                c = Client("https://127.0.0.1:%d" % port, ctx)
                self.assertEqual(c.req("GET", "/argocd/api/version")[0], 200)
                self.assertEqual(c.req("GET", "/api/version")[0], 404)
                st, h, body = c.req("POST", "/argocd/api/v1/session", {"username": "admin", "password": "secret"})
                self.assertEqual(st, 200)
                self.assertTrue(h["Set-Cookie"].endswith("; path=/argocd; SameSite=lax; httpOnly; Secure"))
            finally:
                proc.terminate()
                self.assertEqual(proc.wait(10), 0)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
