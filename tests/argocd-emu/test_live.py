#!/usr/bin/env python3
"""Self-test of the Argo CD emulator's live clusters (--live-clusters, live.py) against the Kubernetes API emulator
(tests/kube-emu/kubeemu.py over https): python3 tests/argocd-emu/test_live.py

Skipped (each test counted as skipped) when openssl is not on PATH.
"""
import base64
import json
import os
import shutil
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
KUBE_EMU = os.environ.get("KUBE_EMU") or os.path.join(HERE, "..", "kube-emu", "kubeemu.py")
OPENSSL = shutil.which("openssl")
KTOKEN = "kube-live-token-0123456789"
sys.path.insert(0, HERE)
from test_emulator import REPO_URL, TOKEN, Client, git, start_emulator  # noqa: E402


def make_tls(d):
    """a CA and a server certificate for 127.0.0.1 (as tests/kube-emu/test_kubeemu.py)"""
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run = lambda *a: subprocess.run([OPENSSL] + list(a), check=True, capture_output=True)  # noqa: E731
    run("req", "-x509", *ec, "-days", "2", "-subj", "/CN=live test ca", "-addext",
        "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
        "-keyout", d + "/ca.key", "-out", d + "/ca.pem")
    with open(d + "/server.ext", "w") as f:
        f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                "subjectAltName=IP:127.0.0.1\n")
    run("req", "-new", *ec, "-subj", "/CN=127.0.0.1", "-keyout", d + "/server.key", "-out", d + "/server.csr")
    run("x509", "-req", "-in", d + "/server.csr", "-CA", d + "/ca.pem", "-CAkey", d + "/ca.key", "-set_serial", "2",
        "-days", "2", "-extfile", d + "/server.ext", "-out", d + "/server.pem")


def start_kube(tmp, name):
    port_file = os.path.join(tmp, name + ".port")
    with open(os.path.join(tmp, name + ".log"), "w") as log:
        proc = subprocess.Popen([sys.executable, KUBE_EMU, "--port", "0", "--port-file", port_file, "--token", KTOKEN,
                                 "--tls-cert", tmp + "/server.pem", "--tls-key", tmp + "/server.key"], stderr=log)
    deadline = time.time() + 15
    while not os.path.exists(port_file):
        if time.time() > deadline or proc.poll() is not None:
            raise RuntimeError("kube emulator did not start")
        time.sleep(0.05)
    with open(port_file) as f:
        return proc, "https://127.0.0.1:%d" % int(f.read())


def cm(name, wave=None, data=None):
    o = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": data or {"k": "v"}}
    if wave is not None:
        o["metadata"]["annotations"] = {"argocd.argoproj.io/sync-wave": str(wave)}
    return o


DEPLOY = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"},
          "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
                   "template": {"metadata": {"labels": {"app": "web"}},
                                "spec": {"containers": [{"name": "c", "image": "nginx"}]}}}}
SECRET = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web-secret"},
          "data": {"value": base64.b64encode(b"kubeconfig-bytes").decode()}}
CRD = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
       "metadata": {"name": "clusters.cluster.x-k8s.io"},
       "spec": {"group": "cluster.x-k8s.io", "scope": "Namespaced",
                "names": {"plural": "clusters", "singular": "cluster", "kind": "Cluster", "listKind": "ClusterList"},
                "versions": [{"name": "v1beta2", "served": True, "storage": True, "subresources": {"status": {}},
                              "schema": {"openAPIV3Schema": {"type": "object",
                                                             "x-kubernetes-preserve-unknown-fields": True}}}]}}
CAPI_CLUSTER = {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster",
                "metadata": {"name": "eu-1", "annotations": {"argocd.argoproj.io/sync-wave": "1"}},
                "spec": {"topology": {"classRef": {"name": "quick-start"}, "version": "v1.32.0"}}}
FILES = {"web": [cm("web-cm"), DEPLOY, SECRET], "pa": [cm("pa-1"), cm("pa-2")], "pb": [cm("pa-1")],
         "cas": [cm("cas-low"), cm("cas-high", wave=5)], "far": [cm("far-cm")], "capi": [CRD, CAPI_CLUSTER],
         "inc": [cm("inc-cm")], "lt": [cm("lt-cm")]}


def poll(fn, what, timeout=10):
    deadline, last = time.time() + timeout, None
    while time.time() < deadline:
        last = fn()
        if last:
            return last
        time.sleep(0.05)
    raise AssertionError("timed out waiting for %s (last: %r)" % (what, last))


@unittest.skipUnless(OPENSSL, "openssl not on PATH")
class LiveTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="argocd-live-")
        make_tls(cls.tmp)
        with open(cls.tmp + "/ca.pem", "rb") as f:
            cls.ca = base64.b64encode(f.read()).decode()
        cls.kctx = ssl.create_default_context(cafile=cls.tmp + "/ca.pem")
        bare, work = os.path.join(cls.tmp, "repo.git"), os.path.join(cls.tmp, "work")
        git("init", "--bare", "-q", "-b", "main", bare)
        git("clone", "-q", bare, work)
        for d, objs in FILES.items():
            os.makedirs(os.path.join(work, d))
            for o in objs:
                with open(os.path.join(work, d, "%s-%s.json" % (o["kind"].lower(), o["metadata"]["name"])), "w") as f:
                    json.dump(o, f)
        git("add", ".", cwd=work)
        git("commit", "-q", "-m", "init", cwd=work)
        git("push", "-q", "origin", "HEAD:main", cwd=work)
        cls.kproc, cls.kube = start_kube(cls.tmp, "kube")
        cls.procs = [cls.kproc]
        proc, port = start_emulator(cls.tmp, "argocd", "--live-clusters", "--op-ms", "30", "--health-ms", "30",
                                    "--reconcile-ms", "20", "--delete-ms", "30", "--resync-ms", "0",
                                    "--same-second")
        cls.procs.append(proc)
        cls.argo = Client("http://127.0.0.1:%d" % port)
        st, _, body = cls.register(cls.kube, KTOKEN)
        assert st == 200, body

    @classmethod
    def tearDownClass(cls):
        for p in cls.procs:
            if p.poll() is None:
                p.terminate()
                p.wait(10)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    # -- helpers
    @classmethod
    def register(cls, server, token, upsert=True):
        return cls.argo.req("POST", "/api/v1/clusters?upsert=%s" % str(upsert).lower(), {
            "server": server, "name": "c-%s" % server.rsplit(":", 1)[1],
            "config": {"bearerToken": token, "tlsClientConfig": {"caData": cls.ca}}})

    def kreq(self, method, path, body=None, server=None, ctype="application/json"):
        r = urllib.request.Request((server or self.kube) + path, method=method,
                                   data=json.dumps(body).encode() if body is not None else None)
        r.add_header("Authorization", "Bearer " + KTOKEN)
        r.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(r, timeout=10, context=self.kctx) as resp:
                return resp.status, json.loads(resp.read() or b"{}")
        except urllib.error.HTTPError as e:
            return e.code, json.loads(e.read() or b"{}")

    def kget_cm(self, name):
        return self.kreq("GET", "/api/v1/namespaces/default/configmaps/" + name)

    def create_app(self, name, path, server=None):
        st, _, body = self.argo.req("POST", "/api/v1/applications", {
            "metadata": {"name": name}, "spec": {"project": "default",
                                                 "source": {"repoURL": REPO_URL, "path": path, "targetRevision": "main"},
                                                 "destination": {"server": server or self.kube, "namespace": "default"}}})
        self.assertEqual(st, 200, body)

    def app(self, name, refresh=False):
        st, _, body = self.argo.req("GET", "/api/v1/applications/%s%s" % (name, "?refresh=normal" if refresh else ""))
        return body if st == 200 else None

    def sync(self, name, prune=False, options=None):
        st, _, body = self.argo.req("POST", "/api/v1/applications/%s/sync" % name,
                                    {"prune": prune, "syncOptions": {"items": options or []}})
        self.assertEqual(st, 200, body)
        return poll(lambda: (lambda a: a if a["status"].get("operationState", {}).get("phase") in ("Succeeded", "Failed")
                             and not a.get("operation") else None)(self.app(name)), "sync of " + name)

    def resource_q(self, kind, name, group="", version="v1"):
        return "namespace=default&resourceName=%s&version=%s&group=%s&kind=%s" % (name, version, group, kind)

    # -- tests
    def test_register_token_and_unreachable(self):
        st, _, body = self.register(self.kube, "wrong-token")
        self.assertEqual(st, 500, body)
        self.assertEqual(body["code"], 2)
        self.assertEqual(body["message"], "error getting server version: failed to get server version: Unauthorized")
        st, _, body = self.register(self.kube, KTOKEN)
        self.assertEqual(st, 200, body)
        self.assertEqual(body["server"], self.kube)
        st, _, body = self.register("https://127.0.0.1:1", KTOKEN)
        self.assertEqual(st, 500, body)
        self.assertEqual(body["message"], 'error getting server version: failed to get server version: Get '
                         '"https://127.0.0.1:1/version?timeout=32s": dial tcp 127.0.0.1:1: connect: connection refused')
        # a CA that did not sign the server's certificate
        with open(self.tmp + "/server.pem", "rb") as f:
            other = base64.b64encode(f.read()).decode()
        st, _, body = self.argo.req("POST", "/api/v1/clusters?upsert=true", {
            "server": self.kube, "name": "x", "config": {"bearerToken": KTOKEN, "tlsClientConfig": {"caData": other}}})
        self.assertEqual(st, 500, body)
        self.assertIn("x509: certificate signed by unknown authority", body["message"])
        # a client certificate (certData/keyData) is loaded and presented; one that is not PEM is refused
        with open(self.tmp + "/server.key", "rb") as f:
            key = base64.b64encode(f.read()).decode()
        for cert, want in ((other, 200), (base64.b64encode(b"junk").decode(), 500)):
            st, _, body = self.argo.req("POST", "/api/v1/clusters?upsert=true", {
                "server": self.kube, "name": "c", "config": {"bearerToken": KTOKEN, "tlsClientConfig": {
                    "caData": self.ca, "certData": cert, "keyData": key}}})
            self.assertEqual(st, want, body)
        self.assertEqual(body["message"], "error getting server version: failed to create discovery client: tls: "
                         "failed to find any PEM data in certificate input")
        st, _, body = self.register(self.kube, KTOKEN)
        self.assertEqual(st, 200, body)

    def test_sync_applies_resource_api_tree(self):
        self.create_app("web", "web")
        a = self.sync("web")
        self.assertEqual(a["status"]["operationState"]["phase"], "Succeeded", a["status"]["operationState"])
        st, obj = self.kget_cm("web-cm")
        self.assertEqual(st, 200, obj)
        self.assertEqual(obj["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"], "web:/ConfigMap:default/web-cm")
        self.assertIn("argocd-controller", [m["manager"] for m in obj["metadata"]["managedFields"]])
        st, dep = self.kreq("GET", "/apis/apps/v1/namespaces/default/deployments/web")
        self.assertEqual(st, 200, dep)
        self.assertEqual(dep["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"], "web:apps/Deployment:default/web")
        msgs = {r["name"]: r["message"] for r in a["status"]["operationState"]["syncResult"]["resources"]}
        self.assertEqual(msgs["web"], "deployment.apps/web serverside-applied")
        poll(lambda: (lambda x: x["status"]["sync"]["status"] == "Synced" and x["status"]["health"]["status"] == "Healthy")(
            self.app("web", refresh=True)), "web Synced and Healthy")
        # GET resource: live, with status; a Secret masked
        st, _, body = self.argo.req("GET", "/api/v1/applications/web/resource?" + self.resource_q("Deployment", "web", "apps"))
        self.assertEqual(st, 200, body)
        m = json.loads(body["manifest"])
        self.assertEqual(m["metadata"]["uid"], dep["metadata"]["uid"])
        self.assertIn("status", m)
        st, _, body = self.argo.req("GET", "/api/v1/applications/web/resource?" + self.resource_q("Secret", "web-secret"))
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body["manifest"])["data"], {"value": "++++++++"})
        self.assertNotIn("a3ViZWNvbmZpZy1ieXRlcw", body["manifest"])
        st, _, body = self.argo.req("GET", "/api/v1/applications/web/resource?" + self.resource_q("ConfigMap", "nope"))
        self.assertEqual((st, body["code"]), (400, 3), body)
        self.assertEqual(body["message"], "ConfigMap  nope not found as part of application web")
        # an owner-ref child (as the kubeconfig Secret a KubeadmControlPlane owns) is in the tree, and readable
        self.assertEqual(self.kreq("POST", "/_emu/object", {
            "apiVersion": "v1", "kind": "Secret", "metadata": {"name": "web-kubeconfig", "namespace": "default",
                                                               "ownerReferences": [{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web",
                                                                                    "uid": dep["metadata"]["uid"]}]},
            "data": {"value": "c2VjcmV0"}})[0], 200)
        st, _, tree = self.argo.req("GET", "/api/v1/applications/web/resource-tree")
        self.assertEqual(st, 200, tree)
        child = [n for n in tree["nodes"] if n["name"] == "web-kubeconfig"]
        self.assertEqual(len(child), 1, tree)
        self.assertEqual(child[0]["parentRefs"][0]["uid"], dep["metadata"]["uid"])
        self.assertTrue(child[0]["uid"] and child[0]["resourceVersion"])
        depnode = [n for n in tree["nodes"] if n["kind"] == "Deployment"][0]
        self.assertEqual(depnode["health"]["status"], "Healthy")
        st, _, body = self.argo.req("GET", "/api/v1/applications/web/resource?" + self.resource_q("Secret", "web-kubeconfig"))
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body["manifest"])["data"], {"value": "++++++++"})
        # deleted out of band: OutOfSync, the resource Missing
        self.assertEqual(self.kreq("DELETE", "/api/v1/namespaces/default/configmaps/web-cm")[0], 200)
        a = poll(lambda: (lambda x: x if x["status"]["sync"]["status"] == "OutOfSync" else None)(self.app("web", refresh=True)),
                 "web OutOfSync")
        r = [r for r in a["status"]["resources"] if r["name"] == "web-cm"][0]
        self.assertEqual(r["status"], "OutOfSync")
        # DELETE resource
        st, _, body = self.argo.req("DELETE", "/api/v1/applications/web/resource?" + self.resource_q("Deployment", "web", "apps"))
        self.assertEqual(st, 200, body)
        self.assertEqual(self.kreq("GET", "/apis/apps/v1/namespaces/default/deployments/web")[0], 404)

    def test_label_tracking_and_fine_grained_delete(self):
        """--tracking-method label (2.x): the instance label marks and finds the app's objects; a resource DELETE
        checks delete/GROUP/KIND/NS/NAME (3.x)"""
        self.argo.req("POST", "/_emu/config", {"tracking_method": "label"})
        try:
            self.create_app("lt", "lt")
            a = self.sync("lt")
            self.assertEqual(a["status"]["operationState"]["phase"], "Succeeded", a["status"]["operationState"])
            st, obj = self.kget_cm("lt-cm")
            self.assertEqual((obj["metadata"]["labels"]["app.kubernetes.io/instance"],
                              "argocd.argoproj.io/tracking-id" in (obj["metadata"].get("annotations") or {})), ("lt", False))
            poll(lambda: (lambda x: x["status"]["sync"]["status"] == "Synced")(self.app("lt", refresh=True)), "lt Synced")
            st, _, mr = self.argo.req("GET", "/api/v1/applications/lt/managed-resources")
            self.assertEqual([(i["name"], bool(i.get("modified"))) for i in mr["items"]], [("lt-cm", False)])
            q = "/api/v1/applications/lt/resource?project=default&" + self.resource_q("ConfigMap", "lt-cm")
            self.argo.req("POST", "/_emu/config", {"rbac_deny": ["applications, delete/*, default/lt"]})
            st, _, body = self.argo.req("DELETE", q)
            self.assertEqual((st, body.get("message")), (403, "permission denied"))
            self.argo.req("POST", "/_emu/config", {"rbac_deny": ["applications, delete, default/lt"]})
            self.assertEqual(self.argo.req("DELETE", q)[0], 200)
            self.assertEqual(self.kget_cm("lt-cm")[0], 404)
        finally:
            self.argo.req("POST", "/_emu/config", {"tracking_method": "annotation", "rbac_deny": []})

    def test_prune_and_prune_last(self):
        self.create_app("pa", "pa")
        a = self.sync("pa")
        self.assertEqual(a["status"]["operationState"]["phase"], "Succeeded")
        self.assertEqual(self.kget_cm("pa-2")[0], 200)
        st, _, body = self.argo.req("PUT", "/api/v1/applications/pa/spec", dict(a["spec"], source=dict(a["spec"]["source"], path="pb")))
        self.assertEqual(st, 200, body)
        a = self.sync("pa")
        res = {r["name"]: r for r in a["status"]["operationState"]["syncResult"]["resources"]}
        self.assertEqual(res["pa-2"]["status"], "PruneSkipped")
        self.assertEqual(self.kget_cm("pa-2")[0], 200)
        # a selective sync prunes only what it selects
        st, _, body = self.argo.req("POST", "/api/v1/applications/pa/sync", {"prune": True, "resources": [
            {"group": "", "kind": "ConfigMap", "namespace": "default", "name": "pa-1"}]})
        self.assertEqual(st, 200, body)
        poll(lambda: (lambda x: not x.get("operation") and x["status"]["operationState"]["phase"] == "Succeeded")(
            self.app("pa")), "selective sync")
        self.assertEqual(self.kget_cm("pa-2")[0], 200)
        a = self.sync("pa", prune=True, options=["PruneLast=true"])
        res = a["status"]["operationState"]["syncResult"]["resources"]
        self.assertEqual([(r["name"], r["status"]) for r in res], [("pa-1", "Synced"), ("pa-2", "Pruned")])
        self.assertEqual(self.kget_cm("pa-2")[0], 404)
        self.assertEqual(self.kget_cm("pa-1")[0], 200)

    def test_sync_error_fails_operation(self):
        self.kreq("POST", "/_emu/fault", {"fail": 1, "status": 500, "message": "etcd is down",
                                          "path_regex": "configmaps/far-cm"})
        self.create_app("far", "far")
        a = self.sync("far")
        os_ = a["status"]["operationState"]
        self.assertEqual(os_["phase"], "Failed", os_)
        self.assertEqual(os_["message"], "one or more objects failed to apply (dry run)")
        self.assertEqual(os_["syncResult"]["resources"][0]["message"], "etcd is down")
        a = self.sync("far")
        self.assertEqual(a["status"]["operationState"]["phase"], "Succeeded")

    def test_cascade_waits_for_finalizer_in_reverse_wave_order(self):
        self.create_app("cas", "cas")
        self.assertEqual(self.sync("cas")["status"]["operationState"]["phase"], "Succeeded")
        st, high = self.kget_cm("cas-high")
        self.assertEqual(st, 200)
        high["metadata"]["finalizers"] = ["example.com/hold"]
        high["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
        self.assertEqual(self.kreq("POST", "/_emu/object", high)[0], 200)
        st, _, body = self.argo.req("DELETE", "/api/v1/applications/cas?cascade=true&propagationPolicy=foreground")
        self.assertEqual(st, 200, body)
        # the wave-5 object is being deleted (its finalizer): wave 0 waits, the app stays with a deletionTimestamp
        deadline = time.time() + 0.6
        while time.time() < deadline:
            a = self.app("cas")
            self.assertIsNotNone(a)
            self.assertTrue(a["metadata"].get("deletionTimestamp"))
            self.assertEqual(self.kget_cm("cas-low")[0], 200)
            time.sleep(0.1)
        high = self.kget_cm("cas-high")[1]
        high["metadata"]["finalizers"] = []
        self.kreq("POST", "/_emu/object", high)
        if self.kget_cm("cas-high")[0] == 200:      # a store that keeps a finalized object until it is deleted
            self.kreq("DELETE", "/api/v1/namespaces/default/configmaps/cas-high")
        poll(lambda: self.kget_cm("cas-low")[0] == 404, "cas-low deleted")
        poll(lambda: self.app("cas") is None, "cas gone")

    def test_cluster_health_and_out_of_band_delete_seen_without_refresh(self):
        self.create_app("capi", "capi")
        a = self.sync("capi")
        self.assertEqual(a["status"]["operationState"]["phase"], "Succeeded", a["status"]["operationState"])
        st, cl = self.kreq("GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/eu-1")
        self.assertEqual(st, 200, cl)

        def tree_health():
            st, _, tree = self.argo.req("GET", "/api/v1/applications/capi/resource-tree")
            return [n.get("health", {}).get("status") for n in tree.get("nodes", []) if n["kind"] == "Cluster"]
        self.assertEqual(tree_health(), ["Progressing"])
        poll(lambda: self.app("capi")["status"]["health"]["status"] == "Progressing", "app Progressing")
        for phase, want in (("Provisioned", "Healthy"), ("Failed", "Degraded")):
            cl = self.kreq("GET", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/eu-1")[1]
            cl["status"] = {"phase": phase}
            self.assertEqual(self.kreq("POST", "/_emu/object", cl)[0], 200)
            self.assertEqual(tree_health(), [want])
            poll(lambda: self.app("capi")["status"]["health"]["status"] == want, "app " + want)
        cl["status"] = {"phase": "Provisioned", "conditions": [{"type": "Ready", "status": "False", "message": "m"}]}
        self.kreq("POST", "/_emu/object", cl)
        self.assertEqual(tree_health(), ["Degraded"])    # Argo CD <= 3.5.1: any Ready=False
        cl["status"] = {"phase": "Provisioned"}
        cl["spec"]["paused"] = True
        self.kreq("POST", "/_emu/object", cl)
        self.assertEqual(tree_health(), ["Suspended"])
        st, _, body = self.argo.req("GET", "/api/v1/applications/capi/resource?namespace=default&resourceName=eu-1&"
                                    "version=v1beta2&group=cluster.x-k8s.io&kind=Cluster")
        self.assertEqual(st, 200, body)
        self.assertEqual(json.loads(body["manifest"])["status"]["phase"], "Provisioned")
        # the cluster cache follows the cluster: a deletion out of band is seen without a refresh; nothing
        # changed, the app is left alone (no new resourceVersion)
        a = poll(lambda: (lambda x: x if x["status"]["health"]["status"] == "Suspended" else None)(self.app("capi")),
                 "app Suspended")
        self.assertEqual(a["status"]["sync"]["status"], "Synced")
        time.sleep(0.7)
        self.assertEqual(self.app("capi")["metadata"]["resourceVersion"], a["metadata"]["resourceVersion"])
        self.kreq("DELETE", "/apis/cluster.x-k8s.io/v1beta2/namespaces/default/clusters/eu-1")
        poll(lambda: self.app("capi")["status"]["sync"]["status"] == "OutOfSync", "capi OutOfSync", timeout=5)

    def test_in_cluster_destination(self):
        proc, port = start_emulator(self.tmp, "argocd-in", "--live-clusters", "--op-ms", "30", "--health-ms", "30",
                                    "--same-second", "--in-cluster-kube", self.kube, "--in-cluster-kube-token", KTOKEN,
                                    "--in-cluster-kube-ca", self.tmp + "/ca.pem")
        self.procs.append(proc)
        argo = Client("http://127.0.0.1:%d" % port)
        st, _, body = argo.req("POST", "/api/v1/applications", {
            "metadata": {"name": "inc"}, "spec": {"project": "default", "source": {
                "repoURL": REPO_URL, "path": "inc", "targetRevision": "main"}, "destination": {
                "server": "https://kubernetes.default.svc", "namespace": "default"}}})
        self.assertEqual(st, 200, body)
        self.assertEqual(argo.req("POST", "/api/v1/applications/inc/sync", {})[0], 200)
        poll(lambda: self.kget_cm("inc-cm")[0] == 200, "inc-cm applied to the in-cluster kube")
        self.assertEqual(self.kget_cm("inc-cm")[1]["metadata"]["annotations"]["argocd.argoproj.io/tracking-id"],
                         "inc:/ConfigMap:default/inc-cm")

    def test_unregistered_destination_dropped_at_once(self):
        server = self.kube.replace("127.0.0.1", "localhost")    # not in the certificate: insecure
        st, _, body = self.argo.req("POST", "/api/v1/clusters", {
            "server": server, "name": "alias", "config": {"bearerToken": KTOKEN, "tlsClientConfig": {"insecure": True}}})
        self.assertEqual(st, 200, body)
        self.create_app("orphan", "far", server)
        st, _, body = self.argo.req("DELETE", "/api/v1/clusters/" + urllib.parse.quote(server, safe=""))
        self.assertEqual(st, 200, body)
        st, _, body = self.argo.req("DELETE", "/api/v1/applications/orphan?cascade=true")
        self.assertEqual(st, 200, body)
        self.assertIsNone(self.app("orphan"))

    def test_unreachable_destination(self):
        proc, server = start_kube(self.tmp, "kube2")
        self.procs.append(proc)
        st, _, body = self.register(server, KTOKEN)
        self.assertEqual(st, 200, body)
        self.create_app("gone", "far", server)
        self.assertEqual(self.sync("gone")["status"]["operationState"]["phase"], "Succeeded")
        proc.terminate()
        proc.wait(10)
        a = poll(lambda: (lambda x: x if x["status"]["health"]["status"] == "Unknown" else None)(self.app("gone", refresh=True)),
                 "gone Unknown")
        conds = [c for c in a["status"].get("conditions", []) if c["type"] == "ComparisonError"]
        self.assertEqual(conds[0]["message"], "failed to sync cluster %s: connection refused" % server)
        # a registered but unreachable destination blocks the cascade; once unregistered, the app is dropped
        st, _, body = self.argo.req("DELETE", "/api/v1/applications/gone?cascade=true")
        self.assertEqual(st, 200, body)
        time.sleep(0.3)
        self.assertIsNotNone(self.app("gone"))
        st, _, body = self.argo.req("DELETE", "/api/v1/clusters/" + urllib.parse.quote(server, safe=""))
        self.assertEqual(st, 200, body)
        poll(lambda: self.app("gone") is None, "gone dropped")


if __name__ == "__main__":
    unittest.main()
