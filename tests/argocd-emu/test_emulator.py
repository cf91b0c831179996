#!/usr/bin/env python3
"""Self-test of the Argo CD API emulator: python3 tests/argocd-emu/test_emulator.py"""
import base64
import json
import os
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.parse
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


def start_emulator(tmp, name, *extra, strict_namespaces=False):
    """the emulator on a free port: (process, port); its clusters have every namespace (as lib.sh's), unless
    strict_namespaces (Argo CD's own rule: a sync into a namespace the cluster lacks fails)"""
    port_file = os.path.join(tmp, name + ".port")
    with open(os.path.join(tmp, name + ".log"), "w") as log:
        proc = subprocess.Popen([sys.executable, EMU, "--port", "0", "--token", TOKEN, "--user", "admin:secret",
                                 "--repo-map", "%s=%s" % (REPO_URL, os.path.join(tmp, "repo.git")),
                                 "--port-file", port_file] + ([] if strict_namespaces else ["--namespaces-exist"]) + list(extra),
                                stderr=log)
    deadline = time.time() + 15
    while not os.path.exists(port_file):
        if time.time() > deadline or proc.poll() is not None:
            raise RuntimeError("emulator did not start")
        time.sleep(0.05)
    with open(port_file) as f:
        return proc, int(f.read())


# -- recorded answers of a real Argo CD (recorded/README.md): the shapes the emulator is compared with
RECORDED = os.path.join(HERE, "recorded")


def recorded(name):
    with open(os.path.join(RECORDED, name)) as f:
        return json.load(f)


class Shape:
    """Argo CD's own schema of its answers (recorded/swagger-definitions.json) and enum values
    (recorded/enums.json).  differences(value, definition) lists, one string each: a key Argo CD does not
    have at that path (an invented or misspelt field), a value of another JSON type than Argo CD's, and a
    value outside Argo CD's enum at the paths enums.json names.  encoding/json writes Go's nil slices and
    maps as null, so null is taken for arrays and objects, never for strings, numbers or booleans."""
    TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,), "array": (list,),
             "object": (dict,)}
    # Go types with their own MarshalJSON: any JSON value (the schema shows their protobuf form)
    FREE = ("v1JSON", "runtimeRawExtension")

    def __init__(self):
        self.defs = recorded("swagger-definitions.json")["definitions"]
        e = recorded("enums.json")
        self.enum_values, self.enum_paths = e["enums"], e["paths"]

    def resolve(self, schema):
        """(type, properties, additionalProperties, items) of a schema, $ref and allOf followed"""
        while "$ref" in schema:
            name = schema["$ref"].split("/")[-1]
            if name in self.FREE:
                return None, {}, None, None
            schema = self.defs[name]
        props = dict(schema.get("properties") or {})
        if props.get("metadata", {}).get("$ref", "").endswith("/v1ObjectMeta"):
            # metav1.TypeMeta is inline in Go and absent from the schema
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
        for part in schema.get("allOf") or []:
            t, pp, _, _ = self.resolve(part)
            props.update(pp)
        typ = schema.get("type") or ("object" if props else None)
        return typ, props, schema.get("additionalProperties"), schema.get("items")

    def differences(self, value, definition, kind=None, path=""):
        out = []
        self._walk(value, {"$ref": "#/definitions/" + definition}, path, out)
        for where, enum in (self.enum_paths.get(kind) or {}).items():
            allowed = self.enum_values[enum]["values"]
            for at, v in self.at(value, where):
                if v not in allowed:
                    out.append("%s: %r is not one of Argo CD's %s values %s" % (at, v, enum, allowed))
        return out

    def _walk(self, v, schema, path, out):
        typ, props, extra, items = self.resolve(schema)
        where = path or "(top)"
        if v is None:
            if typ in ("array", "object"):
                return
            out.append("%s: null where Argo CD has a %s" % (where, typ))
            return
        if typ is None:
            return  # free-form (a raw JSON value)
        if typ == "integer" and isinstance(v, bool) or not isinstance(v, self.TYPES[typ]):
            out.append("%s: a %s where Argo CD has a %s" % (where, type(v).__name__, typ))
            return
        if typ == "array":
            for i, x in enumerate(v):
                self._walk(x, items or {}, "%s[%d]" % (path, i), out)
        elif typ == "object" and props:
            for k, x in v.items():
                if k not in props:
                    out.append("%s: Argo CD has no such field" % ((path + "." if path else "") + k))
                else:
                    self._walk(x, props[k], (path + "." if path else "") + k, out)
        elif typ == "object" and isinstance(extra, dict):
            for k, x in v.items():
                self._walk(x, extra, "%s[%s]" % (path, k), out)

    @staticmethod
    def at(value, where):
        """the (path, value) pairs a dotted path with [] (every item) names in value"""
        found = [("", value)]
        for part in where.split("."):
            many = part.endswith("[]")
            key = part[:-2] if many else part
            nxt = []
            for p, v in found:
                if isinstance(v, dict) and key in v:
                    w, q = v[key], (p + "." if p else "") + key
                    if many:
                        nxt.extend(("%s[%d]" % (q, i), x) for i, x in enumerate(w or []))
                    else:
                        nxt.append((q, w))
            found = nxt
        return found

    @staticmethod
    def paths(value, prefix=""):
        """every key path of value, lists as [] (the items merged)"""
        out = set()
        if isinstance(value, dict):
            for k, v in value.items():
                q = (prefix + "." if prefix else "") + k
                out.add(q)
                out |= Shape.paths(v, q)
        elif isinstance(value, list):
            for v in value:
                out |= Shape.paths(v, prefix + "[]")
        return out


SHAPE = None


def shape():
    global SHAPE
    if SHAPE is None:
        SHAPE = Shape()
    return SHAPE


# the keys a real Argo CD's Application carries once a sync of a git source finished (recorded/application-get.json
# has each of them; they are not omitempty in Argo CD's types, or always set by then).  Not apiVersion and kind:
# the recording (kubectl's) has them, an object from an informer's cache, which the API server answers with, may not
APP_SYNCED_KEYS = [
    "metadata.name", "metadata.namespace", "metadata.uid", "metadata.resourceVersion",
    "metadata.creationTimestamp", "metadata.generation",
    "spec.project", "spec.destination.namespace", "spec.source.repoURL", "spec.source.path", "spec.source.targetRevision",
    "status.sync.status", "status.sync.revision", "status.sync.comparedTo.source.repoURL",
    "status.sync.comparedTo.destination.namespace",
    "status.health.status", "status.reconciledAt", "status.sourceType", "status.summary", "status.controllerNamespace",
    "status.resources[].kind", "status.resources[].name", "status.resources[].namespace", "status.resources[].version",
    "status.resources[].status",
    "status.history[].id", "status.history[].revision", "status.history[].deployedAt", "status.history[].deployStartedAt",
    "status.history[].source.repoURL",
    "status.operationState.phase", "status.operationState.message", "status.operationState.startedAt",
    "status.operationState.finishedAt", "status.operationState.operation.sync.revision",
    "status.operationState.operation.initiatedBy", "status.operationState.syncResult.revision",
    "status.operationState.syncResult.source.repoURL",
    "status.operationState.syncResult.resources[].group", "status.operationState.syncResult.resources[].version",
    "status.operationState.syncResult.resources[].kind", "status.operationState.syncResult.resources[].namespace",
    "status.operationState.syncResult.resources[].name", "status.operationState.syncResult.resources[].status",
    "status.operationState.syncResult.resources[].message", "status.operationState.syncResult.resources[].syncPhase",
    "status.operationState.syncResult.resources[].hookPhase",
]


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
        cls.proc, port = start_emulator(cls.tmp, "main", "--app-namespace", "apps", "--op-ms", "300", "--health-ms", "300",
                                        "--reconcile-ms", "50", "--delete-ms", "200")
        cls.base = "http://127.0.0.1:%d" % port
        cls.c = Client(cls.base)
        cls.defaults = cls.c.req("GET", "/_emu/config", token=None)[2]

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
        st, _, cfg = self.c.req("POST", "/_emu/config", self.defaults, token=None)
        self.assertEqual(st, 200, cfg)
        self.sha = git("rev-parse", "HEAD", cwd=self.work)  # other tests push commits

    def configure(self, **kw):
        st, _, cfg = self.c.req("POST", "/_emu/config", kw, token=None)
        self.assertEqual(st, 200, cfg)
        return cfg

    @staticmethod
    def poll(cond, what, timeout=10):
        deadline = time.time() + timeout
        while not cond():
            if time.time() > deadline:
                raise AssertionError("timeout waiting for " + what)
            time.sleep(0.02)

    def commit(self, files, msg):
        """Write (or, for None, remove) files in the work tree, commit and push; returns the new SHA."""
        for path, text in files.items():
            full = os.path.join(self.work, path)
            if text is None:
                os.remove(full)
                continue
            os.makedirs(os.path.dirname(full), exist_ok=True)
            with open(full, "w") as f:
                f.write(text)
        git("add", "-A", ".", cwd=self.work)
        git("commit", "-q", "-m", msg, cwd=self.work)
        git("push", "-q", "origin", "HEAD:main", cwd=self.work)
        return git("rev-parse", "HEAD", cwd=self.work)

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
        self.assertErr(self.c.req("GET", "/api/v1/applications", token="a.b"), 401, 16, "no session information")
        # the token must come as "Bearer <JWT>": the bare JWT in Authorization is no token at all
        self.assertErr(self.c.req("GET", "/api/v1/applications", token=None, headers={"Authorization": TOKEN}),
                       401, 16, "no session information")
        self.assertErr(self.c.req("GET", "/api/v1/applications", token=None, headers={"Authorization": "bearer " + TOKEN}),
                       401, 16, "no session information")
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
        self.configure(delete_ms=5000)  # long enough to observe the deleting state without racing it
        self.assertEqual(self.c.req("DELETE", "/api/v1/applications/crud-b")[0], 200)
        st, _, a = self.get("crud-b")
        self.assertEqual(st, 200, a)
        self.assertIn("deletionTimestamp", a["metadata"])
        self.assertIn("resources-finalizer.argocd.argoproj.io", a["metadata"]["finalizers"])
        self.assertErr(self.c.req("POST", "/api/v1/applications/crud-b/sync", {}), 400, 9, "application is deleting")
        self.configure(delete_ms=200)
        self.c.req("DELETE", "/api/v1/applications/crud-b")  # the finalizer runs again with the short delay
        self.poll(lambda: self.get("crud-b")[0] == 403, "crud-b to be gone")
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

    def test_html_fault(self):
        page = "<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>"
        self.fault({"path_regex": "^/api/version$", "status": 502, "body": page})
        st, hdrs, body = self.c.req("GET", "/api/version")
        self.assertEqual(st, 502)
        self.assertEqual(hdrs.get("Content-Type"), "text/html")
        self.assertEqual(body, page)
        self.assertEqual(self.c.req("GET", "/api/version")[0], 200)
        self.fault({"status": 503, "body": "down", "content_type": "text/plain; charset=utf-8", "count": 1})
        st, hdrs, body = self.c.req("GET", "/api/version")
        self.assertEqual((st, hdrs.get("Content-Type"), body), (503, "text/plain; charset=utf-8", "down"))
        for bad in ({"body": "x"}, {"status": 502, "body": 3}, {"content_type": "text/html", "delay_ms": 1}):
            st, _, _ = self.c.req("POST", "/_emu/fault", bad, token=None)
            self.assertEqual(st, 400, bad)

    def test_app_faults(self):
        self.create("deg")
        self.fault({"app": "deg", "health": "Degraded", "message": "Back-off pulling image"})
        self.c.req("POST", "/api/v1/applications/deg/sync", {})
        a = self.wait_for("deg", lambda a: self.done(a) and a["status"]["health"]["status"] in ("Healthy", "Degraded"))
        self.assertEqual(a["status"]["health"], dict(a["status"]["health"], status="Degraded", message="Back-off pulling image"))
        # "now": a Healthy application degrades without a sync
        self.fault({"app": "deg", "health": "Healthy", "now": True})
        self.assertEqual(self.c.req("GET", "/api/v1/applications/deg")[2]["status"]["health"]["status"], "Healthy")
        self.fault({"app": "deg", "health": "Degraded", "message": "CrashLoopBackOff", "now": True})
        h = self.c.req("GET", "/api/v1/applications/deg")[2]["status"]["health"]
        self.assertEqual((h["status"], h["message"]), ("Degraded", "CrashLoopBackOff"))
        self.assertEqual(self.c.req("POST", "/_emu/fault", {"app": "nosuch", "health": "Degraded", "now": True},
                                    token=None)[0], 404)
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

    # -- issue 7 §8: clusters
    def watch(self, server):
        """Argo CD's cache watches `server` though no Application deploys there (else: Unknown, no API versions)"""
        st, _, out = self.c.req("POST", "/_emu/cluster", {"server": server, "watched": True}, token=None)
        self.assertEqual(st, 200, out)

    def test_clusters_api(self):
        self.watch("https://kubernetes.default.svc")
        st, _, lst = self.c.req("GET", "/api/v1/clusters")
        self.assertEqual([c["server"] for c in lst["items"]], ["https://kubernetes.default.svc"])
        self.assertIn("apps/v1/Deployment", lst["items"][0]["info"]["apiVersions"])
        self.assertIn("rbac.authorization.k8s.io/v1", lst["items"][0]["info"]["apiVersions"])
        srv = "https://eu-1.example.com:6443"
        body = {"server": srv, "name": "eu-1", "labels": {"env": "prod"},
                "config": {"bearerToken": "s3cret-token", "password": "pw",
                           "tlsClientConfig": {"insecure": False, "keyData": "a2V5",
                                               "caData": "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCk1JSUJmYWtlCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"}}}
        st, _, cl = self.c.req("POST", "/api/v1/clusters", body)
        self.assertEqual(st, 200, cl)
        self.assertEqual(cl["config"], {"tlsClientConfig": {"insecure": False}})
        self.assertNotIn("s3cret-token", json.dumps(cl))
        self.assertEqual(self.c.req("POST", "/api/v1/clusters", body)[0], 200)  # equal: idempotent
        body2 = dict(body, labels={"env": "dev"})
        self.assertErr(self.c.req("POST", "/api/v1/clusters", body2), 400, 3,
                       prefix="existing cluster spec is different; use upsert flag to force update")
        st, _, cl = self.c.req("POST", "/api/v1/clusters?upsert=true", body2)
        self.assertEqual((st, cl["labels"]), (200, {"env": "dev"}))
        enc = urllib.parse.quote(srv, safe="")
        self.watch(srv)
        st, _, cl = self.c.req("GET", "/api/v1/clusters/" + enc)
        self.assertEqual((st, cl["name"], cl["info"]["connectionState"]["status"]), (200, "eu-1", "Successful"))
        self.assertIn("v1/ConfigMap", cl["info"]["apiVersions"])
        st, _, cl = self.c.req("GET", "/api/v1/clusters/eu-1?id.type=name")
        self.assertEqual((st, cl["server"]), (200, srv))
        self.assertErr(self.c.req("GET", "/api/v1/clusters/nope?id.type=name"), 403, 7, "permission denied")
        # PUT with updatedFields changes those fields only: the stored token stays
        st, _, cl = self.c.req("PUT", "/api/v1/clusters/eu-1?id.type=name&updatedFields=labels&updatedFields=annotations",
                               {"server": srv, "labels": {"env": "qa", "tier": "1"}, "annotations": {"a": "b"},
                                "name": "ignored"})
        self.assertEqual(st, 200, cl)
        self.assertEqual((cl["name"], cl["labels"], cl["annotations"]), ("eu-1", {"env": "qa", "tier": "1"}, {"a": "b"}))
        st, _, raw = self.c.req("GET", "/_emu/config", token=None)
        self.configure(api_versions=["v1", "v1/ConfigMap"])
        self.assertEqual(self.c.req("GET", "/api/v1/clusters/" + enc)[2]["info"]["apiVersions"], ["v1", "v1/ConfigMap"])
        self.assertEqual(self.c.req("DELETE", "/api/v1/clusters/" + enc)[:3:2], (200, {}))
        self.assertErr(self.c.req("GET", "/api/v1/clusters/" + enc), 403, 7, "permission denied")
        self.assertEqual(self.c.req("DELETE", "/api/v1/clusters/" + urllib.parse.quote("https://kubernetes.default.svc", safe=""))[0], 200)
        self.assertEqual(len(self.c.req("GET", "/api/v1/clusters")[2]["items"]), 1)  # in-cluster always exists

    # -- issue 8 §7: a cluster's info.apiVersions, per cluster
    def test_cluster_api_versions(self):
        srv = "https://api-1.example.com:6443"
        enc = urllib.parse.quote(srv, safe="")
        self.assertEqual(self.c.req("POST", "/api/v1/clusters", {"server": srv, "name": "api-1"})[0], 200)
        self.watch(srv)
        self.watch("https://kubernetes.default.svc")
        try:
            info = lambda path: self.c.req("GET", path)[2]["info"]["apiVersions"]  # noqa: E731
            default = info("/api/v1/clusters/" + enc)
            for v in ("v1", "v1/ConfigMap", "apps/v1", "apps/v1/Deployment", "batch/v1/Job",
                      "networking.k8s.io/v1/Ingress", "rbac.authorization.k8s.io/v1/ClusterRole",
                      "apiextensions.k8s.io/v1/CustomResourceDefinition"):
                self.assertIn(v, default)
            self.assertEqual(default, sorted(default))
            st, _, out = self.c.req("POST", "/_emu/cluster", {"name": "api-1", "api_versions": ["v1", "v1/ConfigMap"]},
                                    token=None)
            self.assertEqual(st, 200, out)
            self.assertEqual(info("/api/v1/clusters/" + enc), ["v1", "v1/ConfigMap"])
            self.assertEqual(info("/api/v1/clusters/api-1?id.type=name"), ["v1", "v1/ConfigMap"])
            lst = {c["server"]: c["info"]["apiVersions"] for c in self.c.req("GET", "/api/v1/clusters")[2]["items"]}
            self.assertEqual(lst[srv], ["v1", "v1/ConfigMap"])
            self.assertEqual(lst["https://kubernetes.default.svc"], default)  # the other cluster keeps the default
            # an upsert of the cluster's secret keeps what its cache reports
            self.assertEqual(self.c.req("POST", "/api/v1/clusters?upsert=true",
                                        {"server": srv, "name": "api-1", "labels": {"a": "b"}})[0], 200)
            self.assertEqual(info("/api/v1/clusters/" + enc), ["v1", "v1/ConfigMap"])
            self.assertEqual(self.c.req("POST", "/_emu/cluster", {"server": srv, "api_versions": []}, token=None)[0], 200)
            self.assertEqual(info("/api/v1/clusters/" + enc), [])
            self.assertEqual(self.c.req("POST", "/_emu/cluster", {"server": srv, "api_versions": None}, token=None)[0], 200)
            self.assertEqual(info("/api/v1/clusters/" + enc), default)
            self.assertEqual(self.c.req("POST", "/_emu/cluster", {"name": "nope", "api_versions": []}, token=None)[0], 404)
            self.assertEqual(self.c.req("POST", "/_emu/cluster", {"api_versions": []}, token=None)[0], 400)
            self.assertEqual(self.c.req("POST", "/_emu/cluster", {"name": "api-1", "api_versions": "v1"}, token=None)[0],
                             400)
        finally:
            self.c.req("POST", "/_emu/cluster", {"server": srv, "api_versions": None}, token=None)
            self.c.req("DELETE", "/api/v1/clusters/" + enc)

    def test_unknown_cluster(self):
        bad = self.app("farapp")
        bad["spec"]["destination"]["server"] = "https://far.example.com"
        self.assertErr(self.c.req("POST", "/api/v1/applications", bad), 400, 3,
                       'application destination spec for farapp is invalid: error getting cluster by server '
                       '"https://far.example.com": rpc error: code = NotFound desc = cluster "https://far.example.com" not found')
        self.assertErr(self.c.req("POST", "/api/v1/applications?validate=false", bad), 400, 3,
                       prefix="application destination spec for farapp is invalid")
        named = self.app("farapp")
        named["spec"]["destination"] = {"name": "far", "namespace": "x"}
        self.assertErr(self.c.req("POST", "/api/v1/applications", named), 400, 3,
                       "application destination spec for farapp is invalid: there are no clusters with this name: far")
        self.assertEqual(self.c.req("POST", "/api/v1/clusters", {"server": "https://far.example.com", "name": "far"})[0], 200)
        try:
            self.assertEqual(self.c.req("POST", "/api/v1/applications", bad)[0], 200)
            self.assertEqual(self.c.req("POST", "/api/v1/applications?upsert=true", named)[0], 200)
        finally:
            self.c.req("DELETE", "/api/v1/clusters/" + urllib.parse.quote("https://far.example.com", safe=""))

    def test_hooks_not_managed(self):
        """gitops-engine hook.IsHook: objects annotated argocd.argoproj.io/hook (unless only Skip) or helm.sh/hook
        (not crd-install) are hooks: a sync runs them; managed-resources and the comparison leave them out"""
        def obj(name, ann):
            return ("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: %s\n  annotations:\n    %s\ndata:\n  k: v\n"
                    % (name, ann))
        self.commit({"in-cluster/hooks/pre.yaml": obj("pre", "argocd.argoproj.io/hook: PreSync"),
                     "in-cluster/hooks/helm.yaml": obj("helmhook", "helm.sh/hook: pre-install"),
                     "in-cluster/hooks/crd.yaml": obj("crdinstall", "helm.sh/hook: crd-install"),
                     "in-cluster/hooks/skip.yaml": obj("skipped", "argocd.argoproj.io/hook: Skip"),
                     # GetAnnotationCSVs trims and drops duplicates: Skip only
                     "in-cluster/hooks/skip2.yaml": obj("skiptwice", "argocd.argoproj.io/hook: 'Skip, Skip'"),
                     "in-cluster/hooks/plain.yaml": obj("plain", "x: y")}, "hooks")
        self.create("hooks", path="in-cluster/hooks")
        names = lambda: sorted(i["name"] for i in self.c.req(  # noqa: E731
            "GET", "/api/v1/applications/hooks/managed-resources")[2].get("items", []))
        self.assertEqual(names(), ["crdinstall", "plain", "skipped", "skiptwice"])
        self.c.req("POST", "/api/v1/applications/hooks/sync", {})
        a = self.wait_for("hooks", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced")
        self.assertEqual(sorted(r["name"] for r in a["status"]["resources"]), ["crdinstall", "plain", "skipped", "skiptwice"])
        self.assertEqual(names(), ["crdinstall", "plain", "skipped", "skiptwice"])

    # -- issue 34 items 4 and 8: resource tracking methods, 3.x fine-grained resource deletion
    def test_tracking_and_resource_delete_rbac(self):
        """resource_tracking.go SetAppInstance per tracking method (the marks never make a difference);
        getAppLiveResource: DELETE .../resource checks delete/GROUP/KIND/NS/NAME, `delete` first only with
        fine-grained inheritance (2.x)"""
        self.commit({"in-cluster/trk/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c\n"
                     "  labels:\n    team: a\ndata:\n  k: v\n"}, "trk")
        self.create("trk", path="in-cluster/trk")

        def meta():
            mr = self.c.req("GET", "/api/v1/applications/trk/managed-resources?name=c")[2]["items"][0]
            return json.loads(mr["liveState"])["metadata"], mr.get("modified", False)
        for method, label, ann in (("label", "trk", None), ("annotation+label", "trk", "trk:/ConfigMap:trk/c"),
                                   ("annotation", None, "trk:/ConfigMap:trk/c")):
            self.configure(tracking_method=method)
            self.c.req("POST", "/api/v1/applications/trk/sync", {})
            self.wait_for("trk", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced")
            m, modified = meta()
            self.assertEqual((m["labels"].get("app.kubernetes.io/instance"),
                              (m.get("annotations") or {}).get("argocd.argoproj.io/tracking-id"), modified),
                             (label, ann, False), method)
        q = "/api/v1/applications/trk/resource?namespace=trk&resourceName=c&version=v1&group=&kind=ConfigMap&project=default"
        # 3.x (inheritance disabled): only delete/GROUP/KIND/NS/NAME counts
        self.configure(rbac_deny=["applications, delete/*, default/trk"])
        self.assertErr(self.c.req("DELETE", q), 403, 7, "permission denied")
        # 2.x: `delete`, else the fine-grained action
        self.configure(rbac_deny=["applications, delete, default/trk", "applications, delete//ConfigMap/trk/c, *"],
                       rbac_fine_grained_inheritance=True)
        self.assertErr(self.c.req("DELETE", q), 403, 7, "permission denied")
        self.configure(rbac_deny=["applications, delete/*, default/trk"])
        self.assertEqual(self.c.req("DELETE", q)[0], 200)
        self.c.req("POST", "/api/v1/applications/trk/sync", {})
        self.wait_for("trk", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced")
        # 3.x: a plain `delete` refused does not matter
        self.configure(rbac_deny=["applications, delete, default/trk"], rbac_fine_grained_inheritance=False)
        self.assertEqual(self.c.req("DELETE", q)[0], 200)
        self.configure(rbac_deny=[], rbac_fine_grained_inheritance=False)

    # -- issue 11 §3: resource model, managed-resources, resource-tree, drift
    def test_resource_model(self):
        secret = ("apiVersion: v1\nkind: Secret\nmetadata:\n  name: creds\ntype: Opaque\n"
                  "data:\n  user: YWRtaW4=\n  pass: c2VjcmV0\n")
        deploy = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  labels:\n    app: web\n"
                  "spec:\n  replicas: 2\n  selector:\n    matchLabels:\n      app: web\n  template:\n"
                  "    metadata:\n      labels:\n        app: web\n    spec:\n      containers:\n"
                  "        - name: web\n          image: busybox:1.36\n")
        role = "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: reader\nrules: []\n"
        self.commit({"in-cluster/res/secret.yaml": secret, "in-cluster/res/deploy.yaml": deploy,
                     "in-cluster/res/role.yaml": role, "in-cluster/res/cm.yaml":
                     "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: extra\ndata:\n  k: v\n"}, "res")
        self.create("res", path="in-cluster/res")
        st, _, mr = self.c.req("GET", "/api/v1/applications/res/managed-resources")
        self.assertEqual(st, 200, mr)
        self.assertEqual(sorted((i["kind"], i.get("namespace", ""), i["name"]) for i in mr["items"]),
                         [("ClusterRole", "", "reader"), ("ConfigMap", "res", "extra"), ("Deployment", "res", "web"),
                          ("Secret", "res", "creds")])
        for i in mr["items"]:
            self.assertEqual((i["liveState"], i["normalizedLiveState"]), ("null", "null"))
            self.assertNotEqual(i["targetState"], "null")
        self.assertEqual(self.c.req("GET", "/api/v1/applications/res/resource-tree")[2], {})
        self.c.req("POST", "/api/v1/applications/res/sync", {})
        a = self.wait_for("res", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced")
        sr = a["status"]["operationState"]["syncResult"]["resources"]
        self.assertIn({"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "res", "name": "web",
                       "status": "Synced", "message": "deployment/web created", "hookPhase": "Running", "syncPhase": "Sync"}, sr)
        res = {r["name"]: r for r in a["status"]["resources"]}
        self.assertEqual(res["web"], {"group": "apps", "version": "v1", "kind": "Deployment", "namespace": "res",
                                      "name": "web", "status": "Synced"})  # its health: in the resource tree (appTree)
        self.assertNotIn("namespace", res["reader"])
        # managed-resources: live objects, Secrets masked as Argo CD masks them
        st, _, mr = self.c.req("GET", "/api/v1/applications/res/managed-resources?kind=Secret")
        self.assertEqual(len(mr["items"]), 1)
        sec = mr["items"][0]
        live, target = json.loads(sec["liveState"]), json.loads(sec["targetState"])
        self.assertEqual(live["data"], {"user": "++++++++", "pass": "++++++++"})
        self.assertEqual(target["data"], live["data"])
        self.assertNotIn("YWRtaW4", json.dumps(mr))
        self.assertIn("uid", live["metadata"])
        self.assertEqual(json.loads(sec["normalizedLiveState"])["data"]["user"], "++++++++")
        tree = self.c.req("GET", "/api/v1/applications/res/resource-tree")[2]
        kinds = sorted(n["kind"] for n in tree["nodes"])
        self.assertEqual(kinds, ["ClusterRole", "ConfigMap", "Deployment", "ReplicaSet", "Secret"])
        # drift: an extra label does not count; a changed field does; a deleted object does
        self.assertEqual(self.c.req("POST", "/_emu/live", {"app": "res", "kind": "Deployment", "name": "web",
                                                           "labels": {"other": "ctl"}}, token=None)[0], 200)
        self.assertEqual(self.get("res")[2]["status"]["sync"]["status"], "Synced")
        self.c.req("POST", "/_emu/live", {"app": "res", "kind": "Deployment", "name": "web", "set": {"spec.replicas": 5}},
                   token=None)
        a = self.get("res")[2]
        self.assertEqual(a["status"]["sync"]["status"], "OutOfSync")
        mr = self.c.req("GET", "/api/v1/applications/res/managed-resources?kind=Deployment")[2]["items"][0]
        self.assertTrue(mr["modified"])
        self.assertEqual(json.loads(mr["liveState"])["spec"]["replicas"], 5)
        self.c.req("POST", "/_emu/live", {"app": "res", "kind": "Secret", "name": "creds", "set": {"data.pass": "b3RoZXI="}},
                   token=None)
        sec = self.c.req("GET", "/api/v1/applications/res/managed-resources?kind=Secret")[2]["items"][0]
        self.assertEqual((json.loads(sec["targetState"])["data"]["pass"], json.loads(sec["liveState"])["data"]["pass"]),
                         ("++++++++", "++++++++++++"))  # values differ: runs of different length
        self.c.req("POST", "/_emu/live", {"app": "res", "kind": "ConfigMap", "name": "extra", "delete": True}, token=None)
        cm = self.c.req("GET", "/api/v1/applications/res/managed-resources?name=extra")[2]["items"][0]
        self.assertEqual(cm["liveState"], "null")
        self.assertEqual(self.c.req("POST", "/_emu/live", {"app": "res", "kind": "Pod", "name": "x", "delete": True},
                                    token=None)[0], 404)
        self.c.req("POST", "/api/v1/applications/res/sync", {})
        a = self.wait_for("res", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced")
        # prune: false with a removed object leaves the app OutOfSync with requiresPruning
        new = self.commit({"in-cluster/res/cm.yaml": None}, "drop cm")
        a = self.get("res", "?refresh=normal")[2]
        self.assertEqual((a["status"]["sync"]["revision"], a["status"]["sync"]["status"]), (new, "OutOfSync"))
        extra = [r for r in a["status"]["resources"] if r["name"] == "extra"][0]
        self.assertEqual((extra["status"], extra.get("requiresPruning")), ("OutOfSync", True))
        mr = self.c.req("GET", "/api/v1/applications/res/managed-resources?name=extra")[2]["items"][0]
        self.assertEqual(mr["targetState"], "null")
        self.c.req("POST", "/api/v1/applications/res/sync", {})
        a = self.wait_for("res", lambda a: self.done(a) and a["status"]["sync"]["revision"] == new)
        self.assertEqual(a["status"]["operationState"]["phase"], "Succeeded")
        self.assertEqual(a["status"]["sync"]["status"], "OutOfSync")
        self.assertIn({"group": "", "version": "v1", "kind": "ConfigMap", "namespace": "res", "name": "extra",
                       "status": "PruneSkipped", "message": "ignored (requires pruning)", "hookPhase": "Running",
                       "syncPhase": "Sync"}, a["status"]["operationState"]["syncResult"]["resources"])
        self.c.req("POST", "/api/v1/applications/res/sync", {"prune": True})
        a = self.wait_for("res", lambda a: self.done(a) and a["status"]["operationState"]["operation"]["sync"].get("prune"))
        self.assertEqual(a["status"]["sync"]["status"], "Synced")
        self.assertNotIn("extra", [r["name"] for r in a["status"]["resources"]])

    # -- issue 11 §3: controller loop, stale comparisons, pending operations, retries
    def test_automated_sync(self):
        self.commit({"in-cluster/auto/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: auto\n"}, "auto")
        self.create("auto", path="in-cluster/auto", rev="main", syncPolicy={"automated": {"prune": True}})
        # the controller starts its own sync at once: the client's sync right after the upsert meets code 9
        self.assertErr(self.c.req("POST", "/api/v1/applications/auto/sync", {}), 400, 9,
                       "another operation is already in progress")
        # (Healthy too: the health check's end reconciles once more, which would see a commit made before it)
        a = self.wait_for("auto", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced" and
                          a["status"]["health"]["status"] == "Healthy")
        self.assertEqual(a["status"]["operationState"]["operation"]["initiatedBy"], {"automated": True})
        first = a["status"]["sync"]["revision"]
        # a new commit: stale until a refresh or the reconcile interval
        new = self.commit({"in-cluster/auto/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: auto\n"
                                                      "data:\n  k: v\n"}, "auto 2")
        self.assertEqual(self.get("auto")[2]["status"]["sync"]["revision"], first)
        self.configure(resync_ms=100)
        a = self.wait_for("auto", lambda a: self.done(a) and (a["status"]["operationState"].get("syncResult") or {})
                          .get("revision") == new and a["status"]["sync"]["status"] == "Synced")
        self.assertEqual(len(a["status"]["history"]), 2)
        self.configure(resync_ms=0)
        self.c.req("POST", "/_emu/live", {"app": "auto", "kind": "ConfigMap", "name": "auto", "set": {"data.k": "w"}},
                   token=None)
        a = self.get("auto")[2]  # no selfHeal: the drift stays, no new operation for an attempted revision
        self.assertEqual((a["status"]["sync"]["status"], "operation" in a), ("OutOfSync", False))

    def test_pending_operation(self):
        self.configure(start_ms=400)
        self.create("pend")
        st, _, a = self.c.req("POST", "/api/v1/applications/pend/sync", {})
        self.assertEqual(st, 200, a)
        st, _, a = self.get("pend")
        self.assertIn("operation", a)
        self.assertNotIn("operationState", a["status"])
        self.wait_for("pend", lambda a: (a["status"].get("operationState") or {}).get("phase") == "Running")
        self.wait_for("pend", self.done)

    def test_same_second(self):
        # Argo CD can finish an operation in the second of the comparison before it: the "done" test then
        # passes on a stale sync status; the emulator reproduces it on request
        self.configure(same_second=True, op_ms=0, reconcile_ms=3000)
        for i in range(30):
            # start just after a second boundary: create, get and sync then fit in one second even when the
            # machine is loaded (the coincidence is what the test is after; it used to miss under load)
            time.sleep(1.02 - time.time() % 1)
            self.create("same%d" % i)
            a = self.get("same%d" % i)[2]
            self.c.req("POST", "/api/v1/applications/same%d/sync" % i, {})
            b = self.wait_for("same%d" % i, lambda a: "finishedAt" in (a["status"].get("operationState") or {}))
            if b["status"]["operationState"]["finishedAt"] == a["status"]["reconciledAt"]:
                self.assertTrue(self.done(b))
                self.assertEqual(b["status"]["sync"]["status"], "OutOfSync")  # stale, although the sync succeeded
                return
        self.fail("never saw finishedAt == reconciledAt")

    def test_retries(self):
        self.create("retry")
        self.fault({"app": "retry", "sync_fail": "one or more objects failed to apply", "times": 1})
        self.c.req("POST", "/api/v1/applications/retry/sync", {"retryStrategy": {"limit": 2}})
        a = self.wait_for("retry", lambda a: (a["status"].get("operationState") or {}).get("retryCount") == 1)
        os_ = a["status"]["operationState"]
        if os_["phase"] == "Running" and "finishedAt" in os_:
            self.assertRegex(os_["message"], r"^one or more objects failed to apply\. Retrying attempt #1 at \d+:\d\d[AP]M\.$")
            self.assertIn("operation", a)
        a = self.wait_for("retry", self.done)
        self.assertEqual((a["status"]["operationState"]["phase"], a["status"]["operationState"]["retryCount"]),
                         ("Succeeded", 1))
        self.fault({"app": "retry", "sync_fail": "boom"})
        self.configure(retry_ms=1000)
        self.c.req("POST", "/api/v1/applications/retry/sync", {"retryStrategy": {"limit": 1}})
        a = self.wait_for("retry", lambda a: (a["status"].get("operationState") or {}).get("retryCount") == 1 and
                          "finishedAt" in a["status"]["operationState"])
        self.assertEqual(a["status"]["operationState"]["phase"], "Running")  # Running with a finishedAt
        a = self.wait_for("retry", self.done)
        self.assertEqual((a["status"]["operationState"]["phase"], a["status"]["operationState"]["message"]),
                         ("Failed", "boom (retried 1 times)."))

    # -- issue 11 §3: repository credentials
    def test_repo_creds(self):
        self.configure(require_repo_creds=True)
        self.assertErr(self.c.req("POST", "/api/v1/applications", self.app("priv")), 400, 3,
                       'application spec for priv is invalid: InvalidSpecError: repository not accessible: repositories '
                       'not accessible: &Repository{Repo: "%s", Type: "", Name: "", Project: ""}: rpc error: code = '
                       'Unknown desc = error testing repository connectivity: authentication required' % REPO_URL)
        self.create("priv", "?validate=false")
        self.c.req("POST", "/api/v1/applications/priv/sync", {"revision": self.sha})
        a = self.wait_for("priv", self.done)
        self.assertEqual(a["status"]["operationState"]["phase"], "Error")
        self.assertIn("failed to list refs: authentication required", a["status"]["operationState"]["message"])
        self.assertErr(self.c.req("POST", "/api/v1/applications/priv/sync", {}), 400, 9,
                       "error resolving repo revision: rpc error: code = Unknown desc = failed to list refs: authentication required")
        st, _, r = self.c.req("POST", "/api/v1/repositories", {"repo": REPO_URL, "username": "git", "password": "tok1"})
        self.assertEqual(st, 200, r)
        self.assertNotIn("password", r)
        self.assertEqual(r["username"], "git")
        self.assertErr(self.c.req("POST", "/api/v1/repositories", {"repo": REPO_URL, "username": "git", "password": "tok2"}),
                       400, 3, "existing repository spec is different; use upsert flag to force update")
        self.assertEqual(self.c.req("POST", "/api/v1/repositories?upsert=true",
                                    {"repo": REPO_URL, "username": "git", "password": "tok2"})[0], 200)
        self.assertEqual([x["repo"] for x in self.c.req("GET", "/api/v1/repositories")[2]["items"]], [REPO_URL])
        self.c.req("POST", "/api/v1/applications/priv/sync", {})
        a = self.wait_for("priv", lambda a: self.done(a) and a["status"]["sync"]["status"] == "Synced")
        self.assertEqual(a["status"]["operationState"]["phase"], "Succeeded")
        enc = urllib.parse.quote(REPO_URL, safe="")
        self.assertEqual(self.c.req("DELETE", "/api/v1/repositories/" + enc)[0], 200)
        self.assertErr(self.c.req("GET", "/api/v1/repositories/" + enc), 403, 7)

    # -- ApplicationSets
    def appset(self, name, generators, template, gotemplate, ns=None, query=""):
        body = {"metadata": {"name": name}, "spec": {"goTemplate": gotemplate, "generators": generators,
                                                     "template": template}}
        if ns:
            body["metadata"]["namespace"] = ns
        return self.c.req("POST", "/api/v1/applicationsets" + query, body)

    def generated(self, name, pred=lambda a: True, query=""):
        """waits for the ApplicationSet controller to have generated (or changed) an Application"""
        out = []
        def ok():
            st, _, a = self.get(name, query)
            if st == 200 and pred(a):
                out.append(a)
            return bool(out)
        self.poll(ok, "the generated Application " + name)
        return out[0]

    def set_status(self, name, query=""):
        """waits for the controller to have written the set's status"""
        out = []
        def ok():
            st, _, s = self.c.req("GET", "/api/v1/applicationsets/" + name + query)
            if st == 200 and s.get("status", {}).get("conditions"):
                out.append(s)
            return bool(out)
        self.poll(ok, "the status of ApplicationSet " + name)
        return out[0]

    @staticmethod
    def tmpl(n, ns, label="l"):
        return {"metadata": {"name": n, "labels": {"set": label}},
                "spec": {"project": "default", "source": {"repoURL": REPO_URL, "path": "in-cluster/app1"},
                         "destination": {"server": "https://kubernetes.default.svc", "namespace": ns}}}

    def test_applicationsets(self):
        tmpl = self.tmpl
        st, _, s = self.appset("envs", [{"list": {"elements": [{"env": "dev", "x": {"y": "1"}}, {"env": "qa", "x": {"y": "2"}}]}}],
                               tmpl("web-{{.env}}", "ns-{{ .x.y }}"), True)
        self.assertEqual(st, 200, s)
        self.generated("web-qa")
        st, _, lst = self.c.req("GET", "/api/v1/applications?selector=set%3Dl")
        self.assertEqual([(a["metadata"]["name"], a["spec"]["destination"]["namespace"]) for a in lst["items"]],
                         [("web-dev", "ns-1"), ("web-qa", "ns-2")])
        self.assertEqual(lst["items"][0]["metadata"]["ownerReferences"][0]["kind"], "ApplicationSet")
        s = self.set_status("envs")
        self.assertEqual([r["name"] for r in s["status"]["resources"]], ["web-dev", "web-qa"])
        # fasttemplate: {{env}}; unknown keys stay as they are
        st, _, s = self.appset("fast", [{"list": {"elements": [{"env": "stage"}]}}], tmpl("fast-{{ env }}", "{{nope}}"), False)
        self.assertEqual(st, 200, s)
        self.assertEqual(self.generated("fast-stage")["spec"]["destination"]["namespace"], "{{nope}}")
        # upsert: one element less deletes its Application
        body = {"metadata": {"name": "envs"}, "spec": {"goTemplate": True, "template": tmpl("web-{{.env}}", "n"),
                                                       "generators": [{"list": {"elements": [{"env": "dev"}]}}]}}
        self.assertErr(self.c.req("POST", "/api/v1/applicationsets", body), 400, 3,
                       "existing ApplicationSet spec is different, use upsert flag to force update")
        self.assertEqual(self.c.req("POST", "/api/v1/applicationsets?upsert=true", body)[0], 200)
        self.generated("web-dev", lambda a: a["spec"]["destination"]["namespace"] == "n")
        self.poll(lambda: self.get("web-qa")[0] == 403, "web-qa deleted")
        self.assertErr(self.get("web-qa"), 403, 7)
        # go template with a missing key fails the generation
        st, _, s = self.appset("bad", [{"list": {"elements": [{"env": "dev"}]}}], tmpl("b-{{.nope}}", "n"), True)
        self.assertEqual(st, 200, s)
        self.assertIn('map has no entry for key "nope"', self.set_status("bad")["status"]["conditions"][0]["message"])
        # cluster generator: registered clusters matching the selector (in-cluster never matches a selector)
        for n in ("c1", "c2"):
            self.c.req("POST", "/api/v1/clusters", {"server": "https://%s.example.com" % n, "name": n,
                                                    "labels": {"env": "prod" if n == "c1" else "dev"}})
        try:
            t = tmpl("cl-{{.name}}", "{{.metadata.labels.env}}")
            t["spec"]["destination"] = {"server": "{{.server}}", "namespace": "{{.metadata.labels.env}}"}
            st, _, s = self.appset("cl", [{"clusters": {"selector": {"matchLabels": {"env": "prod"}}}}], t, True)
            self.assertEqual(st, 200, s)
            a = self.generated("cl-c1")
            self.assertEqual(a["spec"]["destination"], {"server": "https://c1.example.com", "namespace": "prod"})
            self.assertErr(self.get("cl-c2"), 403, 7)
            st, _, s = self.appset("all", [{"clusters": {}}], tmpl("all-{{name}}", "x"), False)
            s = self.set_status("all")
            self.assertEqual(sorted(r["name"] for r in s["status"]["resources"]), ["all-c1", "all-c2", "all-in-cluster"])
        finally:
            for n in ("c1", "c2"):
                self.c.req("DELETE", "/api/v1/clusters/" + urllib.parse.quote("https://%s.example.com" % n, safe=""))
        self.assertEqual(self.c.req("GET", "/api/v1/applicationsets/envs")[0], 200)
        self.assertEqual(self.c.req("DELETE", "/api/v1/applicationsets/envs")[:3:2], (200, {}))
        self.poll(lambda: self.get("web-dev")[0] == 403, "web-dev deleted with its set")
        self.assertErr(self.c.req("GET", "/api/v1/applicationsets/envs"), 404, 5,
                       'error getting ApplicationSet: applicationsets.argoproj.io "envs" not found')
        self.assertErr(self.appset("git", [{"git": {"repoURL": REPO_URL}}], tmpl("g", "n"), True), 501, 12)

    def test_applicationset_controller_is_later(self):
        """server/applicationset only stores the set; the controller generates and updates its Applications
        afterwards (appset_ms), so right after the POST the Applications are as they were"""
        self.configure(appset_ms=400)
        els = lambda rev: [{"list": {"elements": [{"env": "dev", "rev": rev}]}}]  # noqa: E731
        t = self.tmpl("late-{{.env}}", "n", "late")
        t["spec"]["source"]["targetRevision"] = "{{.rev}}"
        st, _, s = self.appset("late", els("main"), t, True)
        self.assertEqual(st, 200, s)
        self.assertEqual(s["status"], {})  # not generated yet: no resources, no conditions
        self.assertErr(self.get("late-dev"), 403, 7)
        self.assertErr(self.get("late-dev", "?project=default"), 404, 5)
        self.generated("late-dev")
        # an update moves the Application only later, too
        st, _, s = self.appset("late", els(self.sha), t, True, query="?upsert=true")
        self.assertEqual(st, 200, s)
        self.assertEqual(self.get("late-dev")[2]["spec"]["source"]["targetRevision"], "main")
        a = self.generated("late-dev", lambda a: a["spec"]["source"]["targetRevision"] == self.sha)
        self.assertEqual(a["metadata"]["ownerReferences"][0]["uid"], s["metadata"]["uid"])

    def test_applicationset_owns_its_applications(self):
        """applicationset_controller.go: the controller Owns() its Applications, so one deleted while its
        element is still in the generator is created again (and, automated, synced again); an element gone
        from the generator deletes its Application (deleteInCluster, policy "sync" by default), through the
        resources finalizer RenderTemplateParams adds, and it is not created again; deleting the set deletes
        what is left (garbage collection); preserveResourcesOnDeletion leaves the finalizer out"""
        self.configure(appset_ms=100, delete_ms=100)
        t = self.tmpl("own-{{.env}}", "n", "own")
        t["spec"]["syncPolicy"] = {"automated": {}}
        els = lambda *envs: [{"list": {"elements": [{"env": e} for e in envs]}}]  # noqa: E731
        self.assertEqual(self.appset("own", els("a", "b"), t, True)[0], 200)
        a = self.generated("own-a", lambda a: a.get("status", {}).get("operationState", {}).get("phase") == "Succeeded")
        self.assertEqual(a["metadata"]["finalizers"], ["resources-finalizer.argocd.argoproj.io"])
        self.generated("own-b")
        # a delete of the Application alone: the set makes it again, with a new uid, and syncs it again
        self.assertEqual(self.c.req("DELETE", "/api/v1/applications/own-a?cascade=true")[0], 200)
        again = self.generated("own-a", lambda x: x["metadata"]["uid"] != a["metadata"]["uid"] and
                               x.get("status", {}).get("operationState", {}).get("phase") == "Succeeded")
        self.assertEqual(again["metadata"]["ownerReferences"][0]["kind"], "ApplicationSet")
        # the element leaves the generator: the controller deletes it (deletionTimestamp, then gone), for good
        st, _, s = self.appset("own", els("b"), t, True, query="?upsert=true")
        self.assertEqual(st, 200, s)
        self.poll(lambda: self.get("own-a")[0] == 403, "own-a deleted by the controller")
        time.sleep(0.5)  # several controller delays
        self.assertErr(self.get("own-a"), 403, 7)
        self.assertEqual(self.get("own-b")[0], 200)
        # the set deleted: the garbage collector deletes the Application it still owns
        self.assertEqual(self.c.req("DELETE", "/api/v1/applicationsets/own")[0], 200)
        self.poll(lambda: self.get("own-b")[0] == 403, "own-b deleted with its set")
        # preserveResourcesOnDeletion: no resources finalizer on the generated Application
        body = {"metadata": {"name": "keep"}, "spec": {"goTemplate": True, "generators": els("k"),
                                                       "template": self.tmpl("keep-{{.env}}", "n", "keep"),
                                                       "syncPolicy": {"preserveResourcesOnDeletion": True}}}
        self.assertEqual(self.c.req("POST", "/api/v1/applicationsets", body)[0], 200)
        self.assertNotIn("finalizers", self.generated("keep-k")["metadata"])
        # applicationsSync create-update: an element gone leaves its Application, and so does the set's deletion
        body["spec"]["syncPolicy"] = {"applicationsSync": "create-update"}
        body["spec"]["generators"] = els()
        self.assertEqual(self.c.req("POST", "/api/v1/applicationsets?upsert=true", body)[0], 200)
        time.sleep(0.4)
        self.assertEqual(self.get("keep-k")[0], 200)
        self.assertEqual(self.c.req("DELETE", "/api/v1/applicationsets/keep")[0], 200)
        time.sleep(0.3)
        st, _, k = self.get("keep-k")
        self.assertEqual((st, k["metadata"].get("ownerReferences")), (200, None))
        self.assertEqual(self.c.req("DELETE", "/api/v1/applications/keep-k")[0], 200)

    def test_applicationset_namespaces(self):
        """appsetNamespace: a set outside the control namespace is found only with it; a namespace that is
        not enabled is refused (a plain error: HTTP 500), on create and on get"""
        t = self.tmpl("gx-{{.env}}", "n", "gx")
        st, _, s = self.appset("nsset", [{"list": {"elements": [{"env": "dev"}]}}], t, True, ns="team")
        self.assertErr((st, _, s), 500, 2, "namespace 'team' is not permitted")
        self.assertErr(self.c.req("GET", "/api/v1/applicationsets/x?appsetNamespace=team"), 500, 2,
                       "namespace 'team' is not permitted")
        st, _, s = self.appset("nsset", [{"list": {"elements": [{"env": "dev"}]}}], t, True, ns="apps")
        self.assertEqual(st, 200, s)
        self.assertErr(self.c.req("GET", "/api/v1/applicationsets/nsset"), 404, 5)
        st, _, got = self.c.req("GET", "/api/v1/applicationsets/nsset?appsetNamespace=apps")
        self.assertEqual((st, got["metadata"]["namespace"]), (200, "apps"), got)
        a = self.generated("gx-dev", query="?appNamespace=apps")
        self.assertEqual(a["metadata"]["namespace"], "apps")
        self.assertErr(self.c.req("DELETE", "/api/v1/applicationsets/nsset"), 404, 5)
        self.assertEqual(self.c.req("DELETE", "/api/v1/applicationsets/nsset?appsetNamespace=apps")[0], 200)

    def test_rbac(self):
        """getAppEnforceRBAC: with project= a refusal is a bare 403 and a missing Application a 404; without
        project= both are the bare 403; a refused action on a visible Application names the permission"""
        self.create("rb")
        self.configure(rbac_deny=["applications, delete, default/rb"])
        self.assertErr(self.c.req("DELETE", "/api/v1/applications/rb?project=default"), 403, 7,
                       prefix="permission denied: applications, delete, default/rb, sub: ")
        self.assertEqual(self.get("rb")[0], 200)
        self.configure(rbac_deny=["applications, *, default/rb"])
        self.assertErr(self.c.req("DELETE", "/api/v1/applications/rb?project=default"), 403, 7, "permission denied")
        self.assertErr(self.get("rb", "?project=default"), 403, 7, "permission denied")
        self.assertErr(self.get("rb"), 403, 7, "permission denied")
        self.assertErr(self.get("nope", "?project=default"), 404, 5, 'applications.argoproj.io "nope" not found')
        self.assertErr(self.get("nope"), 403, 7, "permission denied")
        # refused in the Application's own project, asked with another one: "not found in that project"
        self.configure(rbac_deny=["applications, get, default/*"])
        self.assertErr(self.get("rb", "?project=other"), 404, 5)
        self.configure(rbac_deny=["applications, sync, default/rb"])
        self.assertErr(self.c.req("POST", "/api/v1/applications/rb/sync", {}), 403, 7,
                       prefix="permission denied: applications, sync, default/rb")
        self.configure(rbac_deny=[])
        self.assertEqual(self.c.req("DELETE", "/api/v1/applications/rb?project=default")[0], 200)
        # ApplicationSets: the template's project names them
        self.configure(rbac_deny=["applicationsets, create, default/*"])
        self.assertErr(self.appset("rbs", [{"list": {"elements": [{"env": "x"}]}}], self.tmpl("r-{{.env}}", "n", "r"), True),
                       403, 7, prefix="permission denied: applicationsets, create, default/rbs")


    # -- the recorded answers of a real Argo CD (recorded/): same keys at the same paths, same types, same enums
    def assertShape(self, value, definition, kind=None):
        diffs = shape().differences(value, definition, kind)
        self.assertEqual(diffs, [], "the emulator's %s differs from Argo CD's:\n  %s\n%s" %
                         (definition, "\n  ".join(diffs), json.dumps(value, indent=1)[:3000]))

    REC_FILES = {
        "rec/app/cm.yaml": "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: rec\ndata:\n  a: '1'\n",
        "rec/app/svc.yaml": "apiVersion: v1\nkind: Service\nmetadata:\n  name: rec\nspec:\n  ports:\n  - port: 80\n",
        "rec/app/deploy.yaml": ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: rec\nspec:\n  replicas: 1\n"
                                "  template:\n    spec:\n      containers:\n      - name: web\n        image: nginx:1\n"),
    }

    def synced_app(self, name):
        """an Application of a ConfigMap, a Service and a Deployment at targetRevision main, synced, Healthy:
        the situation of recorded/application-get.json"""
        if not os.path.exists(os.path.join(self.work, "rec", "app", "cm.yaml")):
            self.sha = self.commit(self.REC_FILES, "recorded situation")
        self.configure(op_ms=30, health_ms=30)  # the answers' shapes do not depend on the pace (setUp restores it)
        self.create(name, path="rec/app", rev="main")
        st, _, a = self.c.req("POST", "/api/v1/applications/%s/sync" % name, {})
        self.assertEqual(st, 200, a)
        return self.wait_for(name, lambda a: self.done(a) and a["status"]["health"]["status"] == "Healthy")

    def test_recorded_reference(self):
        """the recordings check themselves: the real Application fits Argo CD's schema and has every key
        APP_SYNCED_KEYS asks of the emulator; a field Argo CD lacks, a wrong type, a value off the enum are seen"""
        app = recorded("application-get.json")["body"]
        self.assertEqual(shape().differences(app, "v1alpha1Application", "Application"), [])
        self.assertEqual(sorted(set(APP_SYNCED_KEYS) - Shape.paths(app)), [])
        bad = json.loads(json.dumps(app))
        bad["status"]["sync"]["stauts"] = "Synced"
        bad["status"]["health"]["status"] = "Fine"
        bad["status"]["history"][0]["id"] = "23"
        bad["status"]["resources"][0]["status"] = None
        self.assertEqual(sorted(shape().differences(bad, "v1alpha1Application", "Application")), sorted([
            "status.sync.stauts: Argo CD has no such field",
            "status.health.status: 'Fine' is not one of Argo CD's health values "
            "['Unknown', 'Progressing', 'Healthy', 'Suspended', 'Degraded', 'Missing']",
            "status.history[0].id: a str where Argo CD has a integer",
            "status.resources[0].status: null where Argo CD has a string",
            "status.resources[0].status: None is not one of Argo CD's sync values ['Unknown', 'Synced', 'OutOfSync']"]))
        errs = recorded("errors.json")
        for a in errs["answers"]:
            self.assertEqual(errs["http_of_grpc"][str(a["code"])], a["http"], a["name"])
            self.assertRegex(a["message"], a["message_re"])

    def test_recorded_application_get(self):
        a = self.synced_app("rec-get")
        self.assertShape(a, "v1alpha1Application", "Application")
        self.assertEqual(sorted(set(APP_SYNCED_KEYS) - Shape.paths(a)), [],
                         "keys a real Argo CD's synced Application has, missing here")
        self.assertEqual(sorted((r["kind"], r.get("group", "")) for r in a["status"]["resources"]),
                         [("ConfigMap", ""), ("Deployment", "apps"), ("Service", "")])
        # Argo CD 3's default (recorded/application-status-v3.json): the resources' health is in the resource tree
        v3 = recorded("application-status-v3.json")["body"]["status"]
        self.assertEqual(a["status"].get("resourceHealthSource"), v3["resourceHealthSource"])
        self.assertIn("lastTransitionTime", a["status"]["health"])
        # ... so status.resources carry none (a recorded Argo CD 2 Application, application-get.json, has it there)
        self.assertEqual([r["kind"] for r in a["status"]["resources"] if "health" in r], [])
        st, _, t = self.c.req("GET", "/api/v1/applications/%s/resource-tree" % a["metadata"]["name"])
        self.assertEqual(sorted(n["kind"] for n in t["nodes"] if n.get("health")), ["Deployment", "ReplicaSet", "Service"])
        # where the emulator still differs: test_recorded_todo.py (summary.images, a null empty repository list)

    def test_recorded_application_list(self):
        self.synced_app("rec-list")
        st, _, lst = self.c.req("GET", "/api/v1/applications")
        self.assertEqual(st, 200, lst)
        self.assertShape(lst, "v1alpha1ApplicationList")
        self.assertIn("items", lst)
        for a in lst["items"]:
            self.assertShape(a, "v1alpha1Application", "Application")

    def assertRecordedError(self, resp, name):
        rec = next(a for a in recorded("errors.json")["answers"] if a["name"] == name)
        body = recorded("errors.json")["body"]
        st, hdrs, got = resp
        self.assertEqual((st, hdrs.get("Content-Type")), (rec["http"], "application/json"), got)
        self.assertShape(got, "runtimeError")
        self.assertEqual(sorted(got), sorted(body["keys"]), "the error's keys")
        self.assertEqual(got["code"], rec["code"])
        self.assertEqual(got["error"], got["message"])
        self.assertRegex(got["message"], rec["message_re"])

    def test_recorded_errors(self):
        self.assertRecordedError(self.get("rec-nope", "?project=default"), "application-not-found")
        self.assertRecordedError(self.get("rec-nope"), "permission-denied-bare")
        self.create("rec-err", syncPolicy={"automated": {"prune": False, "selfHeal": False}}, rev="main")
        self.configure(rbac_deny=["applications, delete, default/rec-err"])
        self.assertRecordedError(self.c.req("DELETE", "/api/v1/applications/rec-err?project=default"),
                                 "permission-denied-detailed")
        self.configure(rbac_deny=[])
        self.assertRecordedError(self.c.req("POST", "/api/v1/applications/rec-err/sync", {"revision": self.sha}),
                                 "auto-sync-refusal")
        self.assertRecordedError(self.c.req("POST", "/api/v1/applications", self.app("rec-err")),
                                 "application-spec-different")
        self.create("rec-busy")
        self.assertEqual(self.c.req("POST", "/api/v1/applications/rec-busy/sync", {})[0], 200)
        self.assertRecordedError(self.c.req("POST", "/api/v1/applications/rec-busy/sync", {}), "operation-in-progress")
        self.assertRecordedError(self.c.req("GET", "/api/v1/clusters/" + urllib.parse.quote("https://nope.example", safe="")),
                                 "cluster-missing")
        cl = {"server": "https://rec.example:6443", "name": "rec", "config": {"bearerToken": "t"}}
        self.assertEqual(self.c.req("POST", "/api/v1/clusters", cl)[0], 200)
        self.addCleanup(self.c.req, "DELETE", "/api/v1/clusters/" + urllib.parse.quote(cl["server"], safe=""))
        self.assertRecordedError(self.c.req("POST", "/api/v1/clusters", dict(cl, labels={"a": "b"})),
                                 "cluster-spec-different")
        tmpl = self.tmpl("rec-e-{{.env}}", "n", "rece")
        self.assertEqual(self.appset("rec-eset", [{"list": {"elements": [{"env": "a"}]}}], tmpl, True)[0], 200)
        self.assertRecordedError(self.appset("rec-eset", [{"list": {"elements": [{"env": "b"}]}}], tmpl, True),
                                 "applicationset-spec-different")

    def test_recorded_clusters(self):
        self.synced_app("rec-cl")
        st, _, lst = self.c.req("GET", "/api/v1/clusters")
        self.assertEqual(st, 200, lst)
        self.assertShape(lst, "v1alpha1ClusterList")
        for cl in lst["items"]:
            self.assertShape(cl, "v1alpha1Cluster", "Cluster")
        st, _, cl = self.c.req("GET", "/api/v1/clusters/" + urllib.parse.quote("https://kubernetes.default.svc", safe=""))
        self.assertEqual(st, 200, cl)
        self.assertShape(cl, "v1alpha1Cluster", "Cluster")

    def test_recorded_repositories(self):
        url = "https://git.example.com/recorded.git"  # not REPO_URL: its credentials would outlive the test
        st, _, r = self.c.req("POST", "/api/v1/repositories", {"repo": url, "type": "git", "username": "git",
                                                               "password": "s3cret-pw"})
        self.addCleanup(self.c.req, "DELETE", "/api/v1/repositories/" + urllib.parse.quote(url, safe=""))
        self.assertEqual(st, 200, r)
        self.assertShape(r, "v1alpha1Repository", "Repository")
        st, _, lst = self.c.req("GET", "/api/v1/repositories")
        self.assertEqual(st, 200, lst)
        self.assertShape(lst, "v1alpha1RepositoryList")
        for r in lst["items"]:
            self.assertShape(r, "v1alpha1Repository", "Repository")

    def test_recorded_applicationset(self):
        st, _, s = self.appset("rec-set", [{"list": {"elements": [{"env": "dev"}]}}], self.tmpl("rec-{{.env}}", "n", "rec"),
                               True)
        self.assertEqual(st, 200, s)
        self.assertShape(s, "v1alpha1ApplicationSet")
        self.assertShape(self.set_status("rec-set"), "v1alpha1ApplicationSet")

    def test_recorded_version_and_userinfo(self):
        st, _, v = self.c.req("GET", "/api/version", ctype=None)
        self.assertEqual(st, 200, v)
        self.assertShape(v, "versionVersionMessage")
        st, _, u = self.c.req("GET", "/api/v1/session/userinfo")
        self.assertEqual(st, 200, u)
        self.assertShape(u, "sessionGetUserInfoResponse")
        self.assertIs(u.get("loggedIn"), True)

    def test_recorded_managed_resources_and_tree(self):
        self.synced_app("rec-res")
        st, _, m = self.c.req("GET", "/api/v1/applications/rec-res/managed-resources")
        self.assertEqual(st, 200, m)
        self.assertShape(m, "applicationManagedResourcesResponse")
        self.assertTrue(m.get("items"), m)
        st, _, t = self.c.req("GET", "/api/v1/applications/rec-res/resource-tree")
        self.assertEqual(st, 200, t)
        self.assertShape(t, "v1alpha1ApplicationTree", "ApplicationTree")
        self.assertTrue(t.get("nodes"), t)

class YamlFallbackTest(unittest.TestCase):
    """The block-YAML reader used when PyYAML is absent reads what idpmake writes, and refuses what it cannot."""
    def test_block_yaml(self):
        sys.path.insert(0, HERE)
        import resources
        saved, resources._yaml = resources._yaml, None
        try:
            docs = resources.load_yaml_docs("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\n  labels:\n"
                                            "    'x.io/y': \"1\"\ndata:\n  s: |\n    l1\n    l2\n  n: 3\n  b: true\n"
                                            "  e: ~\nlist:\n  - name: c\n    args:\n      - -x\n  - plain\n---\nkind: B\n")
            self.assertEqual(docs, [{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "labels": {"x.io/y": "1"}},
                                     "data": {"s": "l1\nl2\n", "n": 3, "b": True, "e": None},
                                     "list": [{"name": "c", "args": ["-x"]}, "plain"]}, {"kind": "B"}])
            with self.assertRaises(ValueError):
                resources.load_yaml_docs("metadata: {name: x}\n")
        finally:
            resources._yaml = saved


class RepoServerModelTest(unittest.TestCase):
    """manifest-generate-paths as Argo CD reads it (util/app/path GetSourceRefreshPaths, AppFilesHaveChanged)."""
    def test_refresh_paths_and_changes(self):
        sys.path.insert(0, HERE)
        import reposerver
        app = {"metadata": {"annotations": {reposerver.ANNOTATION: "/_shared/web; .;../other ;"}}}
        spec = {"source": {"repoURL": REPO_URL, "path": "c1/web"}}
        self.assertEqual(reposerver.refresh_paths(app, spec), ["_shared/web", "c1/web", "c1/other"])
        self.assertEqual(reposerver.refresh_paths({"metadata": {}}, spec), [])
        paths = ["_shared/web"]
        self.assertTrue(reposerver.files_changed_under(paths, ["_shared/web/cm.yaml"]))
        self.assertTrue(reposerver.files_changed_under(paths, ["_shared/web"]))
        self.assertFalse(reposerver.files_changed_under(paths, ["_shared/web-1234/cm.yaml", "_shared/db/x.yaml"]))
        self.assertTrue(reposerver.files_changed_under([""], ["anything.yaml"]))


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
                # clients that connect and send nothing, or half a ClientHello: the handshake is in each
                # connection's thread (Handler.setup), so the next client is answered at once (as kube-emu's)
                stalled = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(3)]
                stalled[-1].sendall(b"\x16\x03\x01\x02\x00")
                try:
                    t0 = time.time()
                    self.assertEqual(Client("https://127.0.0.1:%d" % port, ctx).req("GET", "/argocd/api/version")[0], 200)
                    self.assertLess(time.time() - t0, 5)
                finally:
                    for s in stalled:
                        s.close()
            finally:
                proc.terminate()
                self.assertEqual(proc.wait(10), 0)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
