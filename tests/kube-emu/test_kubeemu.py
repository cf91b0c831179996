#!/usr/bin/env python3
"""Self-test of the Kubernetes API emulator, driven by the real kubectl: python3 tests/kube-emu/test_kubeemu.py

Skipped (each test counted as skipped) when kubectl or openssl is not on PATH.
"""
import base64
import json
import os
import shutil
import socket
import ssl
import subprocess
import sys
import tempfile
import time
import unittest
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
EMU = os.path.join(HERE, "kubeemu.py")
TOKEN = "kubeemu-test-token-0123456789"
KUBECTL = shutil.which("kubectl")
OPENSSL = shutil.which("openssl")
sys.path.insert(0, HERE)
import patch  # noqa: E402


def make_tls(d):
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda *a: subprocess.run([OPENSSL] + list(a), check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", *ec, "-days", "2", "-subj", "/CN=kubeemu test ca", "-addext",
        "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", d + "/ca.key", "-out", d + "/ca.pem")
    with open(d + "/server.ext", "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1\n")
    run("req", "-new", *ec, "-subj", "/CN=127.0.0.1", "-keyout", d + "/server.key", "-out", d + "/server.csr")
    run("x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key", "-set_serial", "2",
        "-days", "2", "-extfile", d + "/server.ext", "-out", d + "/server.pem")


def kubeconfig(path, server, ca, token):
    with open(path, "w") as f:
        f.write("apiVersion: v1\nkind: Config\ncurrent-context: emu\nclusters:\n- name: emu\n  cluster: "
                "{server: \"%s\", certificate-authority: \"%s\"}\ncontexts:\n- name: emu\n  context: {cluster: emu, "
                "user: u}\nusers:\n- name: u\n  user: {token: \"%s\"}\n" % (server, ca, token))


class PatchTest(unittest.TestCase):
    """patch.py without a server"""

    def test_merge_patch(self):
        self.assertEqual(patch.merge_patch({"a": 1, "b": {"c": 2}}, {"a": None, "b": {"d": 3}}), {"b": {"c": 2, "d": 3}})

    def test_json_patch(self):
        doc = {"a": [1, 2]}
        self.assertEqual(patch.json_patch(doc, [{"op": "add", "path": "/a/-", "value": 3},
                                                {"op": "replace", "path": "/a/0", "value": 0}]), {"a": [0, 2, 3]})
        with self.assertRaises(patch.PatchError):
            patch.json_patch(doc, [{"op": "test", "path": "/a/0", "value": 9}])

    def test_strategic_merge_by_name(self):
        live = {"containers": [{"name": "a", "image": "x"}, {"name": "b", "image": "y"}]}
        p = {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}],
             "containers": [{"name": "b", "image": "z"}, {"name": "a", "$patch": "delete"}]}
        self.assertEqual(patch.strategic_merge(live, p), {"containers": [{"name": "b", "image": "z"}]})

    def test_server_side_apply_removes_what_it_no_longer_applies(self):
        live = {"data": {"a": "1", "b": "2", "other": "x"}}
        self.assertEqual(patch.server_side_apply(live, {"data": {"a": "1"}}, {"data": {"a": "1", "b": "2"}}),
                         {"data": {"a": "1", "other": "x"}})


@unittest.skipUnless(KUBECTL and OPENSSL, "kubectl or openssl not on PATH")
class KubectlTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="kubeemu-test.")
        make_tls(cls.tmp)
        port_file = os.path.join(cls.tmp, "port")
        cls.log = open(os.path.join(cls.tmp, "emu.log"), "w")
        cls.proc = subprocess.Popen([sys.executable, EMU, "--port", "0", "--port-file", port_file, "--token", TOKEN,
                                     "--tls-cert", cls.tmp + "/server.pem", "--tls-key", cls.tmp + "/server.key"],
                                    stderr=cls.log)
        deadline = time.time() + 30
        while not os.path.exists(port_file):
            if time.time() > deadline or cls.proc.poll() is not None:
                raise RuntimeError("the emulator did not start")
            time.sleep(0.05)
        with open(port_file) as f:
            cls.server = "https://127.0.0.1:%d" % int(f.read())
        cls.ssl = ssl.create_default_context(cafile=cls.tmp + "/ca.pem")
        cls.kc = os.path.join(cls.tmp, "kubeconfig")
        kubeconfig(cls.kc, cls.server, cls.tmp + "/ca.pem", TOKEN)
        cls.bad = os.path.join(cls.tmp, "kubeconfig.bad")
        kubeconfig(cls.bad, cls.server, cls.tmp + "/ca.pem", "wrong-token")
        cls.home = os.path.join(cls.tmp, "home")
        os.mkdir(cls.home)

    @classmethod
    def tearDownClass(cls):
        cls.proc.terminate()
        cls.proc.wait(30)
        cls.log.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.control("reset", {})

    def control(self, what, body=None):
        r = urllib.request.Request(self.server + "/_emu/" + what, method="POST" if body is not None else "GET",
                                   data=json.dumps(body).encode() if body is not None else None)
        with urllib.request.urlopen(r, context=self.ssl, timeout=30) as resp:
            return json.load(resp)

    def api(self, method, path, body=None, token=TOKEN, ctype="application/json"):
        r = urllib.request.Request(self.server + path, method=method,
                                   data=json.dumps(body).encode() if body is not None else None)
        if token:
            r.add_header("Authorization", "Bearer " + token)
        r.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(r, context=self.ssl, timeout=30) as resp:
                return resp.status, json.load(resp)
        except urllib.error.HTTPError as e:
            return e.code, json.load(e)

    def kubectl(self, *args, kc=None, stdin=None):
        env = {"PATH": os.environ.get("PATH", ""), "HOME": self.home, "KUBECONFIG": kc or self.kc}
        return subprocess.run([KUBECTL, "--request-timeout=20s"] + list(args), env=env, input=stdin,
                              capture_output=True, text=True, timeout=120)

    def stored(self, kind, name):
        return [o for o in self.control("state") if o["kind"] == kind and o["metadata"]["name"] == name]

    def write(self, name, text):
        path = os.path.join(self.tmp, name)
        with open(path, "w") as f:
            f.write(text)
        return path

    def test_a_stalled_tls_client_does_not_hold_the_others(self):
        # clients that connect and send nothing (no ClientHello, or half of one): the emulator's one
        # accepting thread must not wait on their handshake, so another client is answered at once
        host, port = self.server[len("https://"):].rsplit(":", 1)
        stalled = [socket.create_connection((host, int(port)), timeout=5) for _ in range(3)]
        stalled[-1].sendall(b"\x16\x03\x01\x02\x00")    # a TLS record header, then nothing
        try:
            t0 = time.time()
            r = urllib.request.Request(self.server + "/version", headers={"Authorization": "Bearer " + TOKEN})
            try:
                with urllib.request.urlopen(r, context=self.ssl, timeout=5) as resp:
                    status = resp.status
            except OSError as e:
                status = "no answer within 5 s: %s" % e
            self.assertEqual(status, 200)
            self.assertLess(time.time() - t0, 5)
        finally:
            for s in stalled:
                s.close()

    def test_version(self):
        r = self.kubectl("version", "-o", "json")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(json.loads(r.stdout)["serverVersion"]["gitVersion"], "v1.32.0-kubeemu")

    def test_server_side_apply_get_delete(self):
        f = self.write("ssa.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa, namespace: default}\n"
                                   "data: {a: '1', b: '2'}\n")
        r = self.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=idpmake", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("configmap/ssa serverside-applied", r.stdout)
        [obj] = self.stored("ConfigMap", "ssa")
        self.assertEqual(obj["data"], {"a": "1", "b": "2"})
        md = obj["metadata"]
        self.assertTrue(md["uid"] and md["creationTimestamp"] and md["resourceVersion"])
        self.assertEqual([m["manager"] for m in md["managedFields"]], ["idpmake"])
        rv = md["resourceVersion"]
        r = self.kubectl("apply", "--server-side", "--field-manager=idpmake", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.stored("ConfigMap", "ssa")[0]["metadata"]["resourceVersion"], rv, "a no-op apply")
        self.write("ssa.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ssa, namespace: default}\n"
                               "data: {a: '1'}\n")
        r = self.kubectl("apply", "--server-side", "--field-manager=idpmake", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.stored("ConfigMap", "ssa")[0]["data"], {"a": "1"}, "b is no longer applied")
        r = self.kubectl("get", "configmap", "ssa", "-n", "default", "-o", "jsonpath={.data.a}")
        self.assertEqual((r.returncode, r.stdout), (0, "1"), r.stderr)
        r = self.kubectl("delete", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.stored("ConfigMap", "ssa"), [])
        r = self.kubectl("get", "configmap", "ssa", "-n", "default")
        self.assertEqual(r.returncode, 1)
        self.assertIn('configmaps "ssa" not found', r.stderr)

    def test_managed_fields_time_only_when_the_apply_changed_the_object(self):
        # the apiserver's rule (managedfieldsupdater.go Apply; kubernetes/kubernetes#127938): a second
        # manager applying what is already there gets an entry with no time; the first keeps its own
        f = self.write("mf.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mf, namespace: default}\n"
                                  "data: {a: '1'}\n")

        def entries():
            [obj] = self.stored("ConfigMap", "mf")
            return {m["manager"]: m.get("time") for m in obj["metadata"]["managedFields"]}, obj

        def apply(manager):
            r = self.kubectl("apply", "--server-side", "--force-conflicts", "--field-manager=" + manager, "-f", f)
            self.assertEqual(r.returncode, 0, r.stderr)

        apply("one")
        first, obj = entries()
        self.assertTrue(first["one"], "a create is a change: the applier's time")
        rv = obj["metadata"]["resourceVersion"]
        time.sleep(1.1)
        apply("two")
        now, obj = entries()
        self.assertEqual(set(now), {"one", "two"}, "the second applier has its entry")
        self.assertIsNone(now["two"], "the same content: no time for the second applier")
        self.assertEqual(now["one"], first["one"], "the first applier's time is kept")
        self.assertNotEqual(obj["metadata"]["resourceVersion"], rv, "its new entry is a write")
        self.assertEqual([m["manager"] for m in obj["metadata"]["managedFields"]], ["two", "one"],
                         "the apiserver's order: an entry with no time first")
        apply("one")
        self.assertEqual(entries()[0], now, "one again, the same content: nothing changes, no time")
        self.write("mf.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: mf, namespace: default}\n"
                              "data: {a: '2'}\n")
        apply("two")
        after, _ = entries()
        self.assertTrue(after["two"] and after["two"] > first["one"], "a change: the applier's new time")
        self.assertEqual(after["one"], first["one"])
        # an update (here a merge patch) that changes nothing adds no entry; one that changes stamps its time
        r = self.kubectl("patch", "configmap", "mf", "-n", "default", "--type=merge", "-p", '{"data":{"a":"2"}}',
                         "--field-manager=three")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("three", entries()[0], "a no-op update")
        r = self.kubectl("patch", "configmap", "mf", "-n", "default", "--type=merge", "-p", '{"data":{"b":"3"}}',
                         "--field-manager=three")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(entries()[0].get("three"), "an update that changed the object")

    def test_client_side_apply_and_rollout(self):
        f = self.write("dep.yaml", """apiVersion: v1
kind: Namespace
metadata: {name: web}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: web}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec: {containers: [{name: web, image: "busybox:1.36"}]}
""")
        r = self.kubectl("apply", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        [dep] = self.stored("Deployment", "web")
        self.assertIn("kubectl.kubernetes.io/last-applied-configuration", dep["metadata"]["annotations"])
        self.assertEqual(dep["metadata"]["generation"], 1)
        with open(f) as fh:
            text = fh.read().replace("replicas: 2", "replicas: 3").replace("busybox:1.36", "busybox:1.37")
        self.write("dep.yaml", text)
        r = self.kubectl("apply", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        [dep] = self.stored("Deployment", "web")
        self.assertEqual((dep["spec"]["replicas"], dep["metadata"]["generation"]), (3, 2))
        self.assertEqual(dep["spec"]["template"]["spec"]["containers"], [{"name": "web", "image": "busybox:1.37"}])
        r = self.kubectl("rollout", "status", "-n", "web", "deployment/web", "--timeout=30s")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("successfully rolled out", r.stdout)
        r = self.kubectl("delete", "namespace", "web")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.stored("Deployment", "web"), [], "the namespace's objects go with it")

    def test_custom_resource_definition(self):
        f = self.write("crd.yaml", """apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.com}
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget}
  versions: [{name: v1, served: true, storage: true, schema: {openAPIV3Schema: {type: object}}}]
""")
        r = self.kubectl("apply", "--server-side", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.kubectl("wait", "--for", "condition=established", "--timeout=30s", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        w = self.write("w.yaml", "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: default}\n"
                                 "spec: {size: 3}\n")
        r = self.kubectl("apply", "--server-side", "-f", w)
        self.assertEqual(r.returncode, 0, r.stderr)
        r = self.kubectl("get", "widgets", "-n", "default", "-o", "name")
        self.assertEqual((r.returncode, r.stdout.strip()), (0, "widget.example.com/w1"), r.stderr)
        r = self.kubectl("delete", "-f", f)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.stored("Widget", "w1"), [], "a CRD's objects go with it")

    def test_wrong_token_is_401(self):
        f = self.write("t.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: t, namespace: default}\n")
        r = self.kubectl("apply", "--server-side", "-f", f, kc=self.bad)
        self.assertEqual(r.returncode, 1)
        self.assertIn("the server has asked for the client to provide credentials", r.stderr)
        self.assertEqual(self.stored("ConfigMap", "t"), [])
        code, body = self.api("GET", "/api/v1/namespaces", token="wrong")
        self.assertEqual((code, body["kind"], body["reason"]), (401, "Status", "Unauthorized"))
        code, body = self.api("GET", "/api/v1/namespaces", token=None)
        self.assertEqual((code, body["reason"]), (403, "Forbidden"), "anonymous")
        self.assertEqual(self.api("GET", "/version", token=None)[0], 200, "anonymous may read the version")

    def test_missing_namespace_is_404(self):
        f = self.write("ns.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x, namespace: nope}\n")
        for args in (["apply", "--server-side"], ["apply"], ["create"]):
            r = self.kubectl(*args, "-f", f)
            self.assertEqual(r.returncode, 1, args)
            self.assertIn('namespaces "nope" not found', r.stderr)
        code, body = self.api("POST", "/api/v1/namespaces/nope/configmaps", {"metadata": {"name": "x"}})
        self.assertEqual((code, body["reason"], body["details"]), (404, "NotFound", {"name": "nope", "kind": "namespaces"}))

    def test_status_errors(self):
        cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dup"}}
        self.assertEqual(self.api("POST", "/api/v1/namespaces/default/configmaps", cm)[0], 201)
        code, body = self.api("POST", "/api/v1/namespaces/default/configmaps", cm)
        self.assertEqual((code, body["reason"]), (409, "AlreadyExists"))
        cm["metadata"]["resourceVersion"] = "1"
        code, body = self.api("PUT", "/api/v1/namespaces/default/configmaps/dup", cm)
        self.assertEqual((code, body["reason"]), (409, "Conflict"))
        code, body = self.api("POST", "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "Bad_Name"}})
        self.assertEqual((code, body["reason"]), (422, "Invalid"))
        code, body = self.api("PATCH", "/api/v1/namespaces/default/configmaps/dup", {"data": {"a": "b"}},
                              ctype="application/merge-patch+json")
        self.assertEqual(code, 200)
        self.assertEqual(body["data"], {"a": "b"})

    def test_kubectl_create_sends_protobuf(self):
        """kubectl create secret/configmap/namespace POST protobuf (proto.py); answered with JSON"""
        r = self.kubectl("create", "namespace", "pb")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.stored("Namespace", "pb")[0]["status"], {"phase": "Active"})
        posts = [q for q in self.control("requests") if q["method"] == "POST"]
        self.assertEqual(posts[-1]["content_type"], "application/vnd.kubernetes.protobuf")
        r = self.kubectl("-n", "pb", "create", "secret", "generic", "s", "--from-literal=password=p w",
                         "--from-literal=user=u")
        self.assertEqual(r.returncode, 0, r.stderr)
        [sec] = self.stored("Secret", "s")
        self.assertEqual((sec["type"], sec["data"]), ("Opaque", {"password": "cCB3", "user": "dQ=="}))
        r = self.kubectl("-n", "pb", "get", "secret", "s", "-o", "jsonpath={.data.password}")
        self.assertEqual((r.returncode, r.stdout), (0, "cCB3"), r.stderr)
        r = self.kubectl("-n", "pb", "create", "secret", "generic", "s", "--from-literal=password=other")
        self.assertEqual(r.returncode, 1)
        self.assertIn('secrets "s" already exists', r.stderr)
        self.assertEqual(self.stored("Secret", "s")[0]["data"]["password"], "cCB3")
        r = self.kubectl("-n", "nope", "create", "secret", "generic", "s", "--from-literal=a=b")
        self.assertEqual(r.returncode, 1)
        self.assertIn('namespaces "nope" not found', r.stderr)
        crt, key = self.tmp + "/t.crt", self.tmp + "/t.key"
        subprocess.run([OPENSSL, "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-days", "1", "-subj", "/CN=x", "-keyout", key, "-out", crt],
                       check=True, capture_output=True)
        r = self.kubectl("-n", "pb", "create", "secret", "tls", "t", "--cert", crt, "--key", key)
        self.assertEqual(r.returncode, 0, r.stderr)
        [tls] = self.stored("Secret", "t")
        with open(crt, "rb") as f:
            self.assertEqual((tls["type"], base64.b64decode(tls["data"]["tls.crt"])), ("kubernetes.io/tls", f.read()))
        r = self.kubectl("-n", "pb", "create", "configmap", "c", "--from-literal=Corefile=.:53 {\n}\n",
                         "--from-file=bin=" + key)
        self.assertEqual(r.returncode, 0, r.stderr)
        [cm] = self.stored("ConfigMap", "c")
        with open(key) as f:
            self.assertEqual(cm["data"], {"Corefile": ".:53 {\n}\n", "bin": f.read()})
        code, body = self.api("POST", "/api/v1/namespaces/pb/secrets", None)
        self.assertEqual(code, 400, "an empty JSON body")
        r = urllib.request.Request(self.server + "/api/v1/namespaces/pb/secrets", method="POST",
                                   data=b"k8s\x00\x0a\x08\x0a\x02v1\x12\x02Xx")
        r.add_header("Authorization", "Bearer " + TOKEN)
        r.add_header("Content-Type", "application/vnd.kubernetes.protobuf")
        with self.assertRaises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(r, context=self.ssl, timeout=30)
        self.assertEqual((e.exception.code, json.load(e.exception)["reason"]), (415, "UnsupportedMediaType"))

    def test_rollout_restart(self):
        """kubectl rollout restart: a strategic-merge PATCH of the pod template's annotations"""
        f = self.write("rr.yaml", "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: rr, namespace: default}\n"
                                  "spec:\n  selector: {matchLabels: {app: rr}}\n  template:\n    metadata: {labels: "
                                  "{app: rr}}\n    spec: {containers: [{name: rr, image: x}]}\n")
        self.assertEqual(self.kubectl("apply", "--server-side", "-f", f).returncode, 0)
        r = self.kubectl("-n", "default", "rollout", "restart", "deployment", "rr")
        self.assertEqual(r.returncode, 0, r.stderr)
        [dep] = self.stored("Deployment", "rr")
        self.assertIn("kubectl.kubernetes.io/restartedAt", dep["spec"]["template"]["metadata"]["annotations"])
        self.assertEqual(dep["spec"]["template"]["metadata"]["labels"], {"app": "rr"})
        self.assertEqual(dep["metadata"]["generation"], 2)
        patches = [q for q in self.control("requests") if q["method"] == "PATCH"]
        self.assertEqual(patches[-1]["content_type"], "application/strategic-merge-patch+json")

    def test_faults(self):
        f = self.write("f.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: f, namespace: default}\n")
        self.control("fault", {"refuse": {"kind": "ConfigMap"}})
        r = self.kubectl("apply", "--server-side", "-f", f)
        self.assertEqual(r.returncode, 1)
        self.assertIn('configmaps "f" is forbidden', r.stderr)
        self.control("reset", {})
        self.control("fault", {"fail": 1, "message": "etcdserver: request timed out"})
        code, body = self.api("GET", "/api/v1/namespaces/default/configmaps")
        self.assertEqual((code, body["message"]), (500, "etcdserver: request timed out"))
        self.assertEqual(self.api("GET", "/api/v1/namespaces/default/configmaps")[0], 200, "only the next one")
        self.control("fault", {"delay_ms": 300})
        t0 = time.monotonic()
        self.api("GET", "/version")
        self.assertGreaterEqual(time.monotonic() - t0, 0.3)
        self.control("fault", {"delay_ms": 0, "down": True})
        r = self.kubectl("version", "--request-timeout=2s")
        self.assertEqual(r.returncode, 1)
        self.assertNotIn("Server Version", r.stdout)
        self.control("reset", {})
        self.assertEqual(self.kubectl("version").returncode, 0)


if __name__ == "__main__":
    unittest.main(verbosity=2)
