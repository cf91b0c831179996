#!/usr/bin/env python3
"""Self-test of the emulator's fake Cluster API (kubeemu.py --capi), driven by the real kubectl:
python3 tests/kube-emu/test_capi.py

Skipped (each test counted as skipped) when kubectl or openssl is not on PATH.
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
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_kubeemu import KUBECTL, OPENSSL, kubeconfig, make_tls  # noqa: E402

EMU = os.path.join(HERE, "kubeemu.py")
TOKEN = "capi-test-token-0123456789"
MS = 50


def cluster_yaml(name, version="v1.33.2", ns="fleet", cp=1, workers=2, api="v1beta2", variables=None, cls="quick-start"):
    """a Cluster as JSON (which is YAML)"""
    topo = {"version": version, "controlPlane": {"replicas": cp}, "workers": {"machineDeployments": [
        {"class": "default-worker", "name": "md-0", "replicas": workers}]}}
    if api == "v1beta2":
        topo["classRef"] = {"name": cls}
    else:
        topo["class"] = cls
    if variables is not None:
        topo["variables"] = variables
    return json.dumps({"apiVersion": "cluster.x-k8s.io/" + api, "kind": "Cluster",
                       "metadata": {"name": name, "namespace": ns}, "spec": {"topology": topo}})


class Emulator:
    def __init__(self, tmp, *flags):
        self.tmp = tmp
        port_file = os.path.join(tmp, "port")
        if os.path.exists(port_file):
            os.unlink(port_file)
        self.log = open(os.path.join(tmp, "emu.log"), "a")
        self.proc = subprocess.Popen([sys.executable, EMU, "--port", "0", "--port-file", port_file, "--token", TOKEN,
                                      "--tls-cert", tmp + "/server.pem", "--tls-key", tmp + "/server.key",
                                      "--ca-cert", tmp + "/ca.pem", "--capi", "--capi-ms", str(MS)] + list(flags),
                                     stderr=self.log)
        deadline = time.time() + 30
        while not os.path.exists(port_file):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("the emulator did not start")
            time.sleep(0.05)
        with open(port_file) as f:
            self.server = "https://127.0.0.1:%d" % int(f.read())
        self.ssl = ssl.create_default_context(cafile=tmp + "/ca.pem")
        self.kc = os.path.join(tmp, "kubeconfig")
        kubeconfig(self.kc, self.server, tmp + "/ca.pem", TOKEN)

    def stop(self):
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()

    def control(self, what, body=None):
        r = urllib.request.Request(self.server + "/_emu/" + what, method="POST" if body is not None else "GET",
                                   data=json.dumps(body).encode() if body is not None else None)
        with urllib.request.urlopen(r, context=self.ssl, timeout=30) as resp:
            return json.load(resp)


@unittest.skipUnless(KUBECTL and OPENSSL, "kubectl or openssl not on PATH")
class CapiTest(unittest.TestCase):
    flags = ()
    api = "v1beta2"

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="capi-test.")
        make_tls(cls.tmp)
        cls.emu = Emulator(cls.tmp, *cls.flags)
        cls.home = os.path.join(cls.tmp, "home")
        os.mkdir(cls.home)

    @classmethod
    def tearDownClass(cls):
        cls.emu.stop()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def setUp(self):
        self.emu.control("reset", {"objects": True})
        self.kubectl("create", "namespace", "fleet")
        self.kubectl("-n", "fleet", "create", "-f", "-", stdin=json.dumps({
            "apiVersion": "cluster.x-k8s.io/%s" % self.api, "kind": "ClusterClass",
            "metadata": {"name": "quick-start"}, "spec": {}}))

    def get(self, path):
        """a GET straight to the emulator (faster than kubectl, for what changes each tick)"""
        r = urllib.request.Request(self.emu.server + path, headers={"Authorization": "Bearer " + TOKEN})
        with urllib.request.urlopen(r, context=self.emu.ssl, timeout=30) as resp:
            return json.load(resp)

    def kubectl(self, *args, stdin=None, kc=None, check=True):
        p = subprocess.run([KUBECTL, "--kubeconfig", kc or self.emu.kc] + list(args), input=stdin,
                           capture_output=True, text=True, timeout=60, env=dict(os.environ, HOME=self.home))
        if check and p.returncode != 0:
            self.fail("kubectl %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
        return p

    def apply(self, text, check=True, *extra):
        return self.kubectl("apply", "--server-side", "--field-manager", "idpmake", "-f", "-", *extra,
                            stdin=text, check=check)

    def cluster(self, name, ns="fleet"):
        return json.loads(self.kubectl("-n", ns, "get", "clusters.cluster.x-k8s.io", name, "-o", "json").stdout)

    def wait(self, what, fn, timeout=20):
        deadline = time.time() + timeout
        while True:
            v = fn()
            if v:
                return v
            if time.time() > deadline:
                self.fail("timed out waiting for %s" % what)
            time.sleep(MS / 1000.0)

    def state(self, name, ns="fleet"):
        return self.emu.control("capi")["clusters"].get("%s/%s" % (ns, name)) or {}

    def cond(self, obj, t):
        return next((c for c in obj["status"].get("conditions") or [] if c["type"] == t), {})

    def workload_kubeconfig(self, name, ns="fleet"):
        sec = json.loads(self.kubectl("-n", ns, "get", "secret", name + "-kubeconfig", "-o", "json").stdout)
        path = os.path.join(self.tmp, name + ".kubeconfig")
        with open(path, "wb") as f:
            f.write(base64.b64decode(sec["data"]["value"]))
        return path, sec

    def provisioned(self, name, **kw):
        self.apply(cluster_yaml(name, api=self.api, **kw))
        self.wait("controlPlaneInitialized", lambda: self.state(name).get("step") == "provisioned")
        return self.workload_kubeconfig(name)

    def face_answers(self, kc, path="/api/v1/namespaces"):
        """whether the server of kubeconfig kc answers (straight: kubectl retries a dropped connection for
        seconds); kubectl itself talks to a face that answers in the tests that use one"""
        server = token = None
        with open(kc) as f:
            for line in f:
                line = line.strip()
                if line.startswith("server:"):
                    server = line.split(None, 1)[1]
                if line.startswith("token:"):
                    token = line.split(None, 1)[1]
        r = urllib.request.Request(server + path, headers={"Authorization": "Bearer " + token})
        try:
            with urllib.request.urlopen(r, context=self.emu.ssl, timeout=10) as resp:
                return resp.status == 200
        except urllib.error.HTTPError as e:
            return e.code != 401 and e.code
        except (urllib.error.URLError, ConnectionError, OSError):
            return False

    def converged(self, name):
        c = self.cluster(name)
        st = c["status"]
        if self.api == "v1beta1":
            conds = st.get("v1beta2", {}).get("conditions") or []
        else:
            conds = st.get("conditions") or []
        topo = next((x for x in conds if x["type"] == "TopologyReconciled"), {})
        return st.get("observedGeneration") == c["metadata"]["generation"] and topo.get("status") == "True" and \
            not any(x["type"] == "RollingOut" and x["status"] == "True" for x in conds)

    # ---- the tests ----------------------------------------------------------------------------------------------
    def test_face_answers_from_control_plane_initialized(self):
        """the register latency a test can measure: the face answers from the controlPlaneInitialized event on"""
        self.apply(cluster_yaml("r-1", api=self.api))
        self.wait("the state", lambda: self.state("r-1"))
        probe = os.path.join(self.tmp, "probe.kubeconfig")
        first = None
        deadline = time.time() + 20
        while first is None:
            self.assertLess(time.time(), deadline)
            sec = self.get("/api/v1/namespaces/fleet/secrets")["items"]
            sec = [x for x in sec if x["metadata"]["name"] == "r-1-kubeconfig"]
            if sec:
                with open(probe, "wb") as f:
                    f.write(base64.b64decode(sec[0]["data"]["value"]))
                if self.face_answers(probe):
                    first = time.time()
        t = [e["t"] for e in self.state("r-1")["events"] if e["event"] == "controlPlaneInitialized"]
        self.assertEqual(len(t), 1)
        self.assertGreaterEqual(first, t[0])
        self.assertLess(first - t[0], 2.0)

    def test_discovery_and_crds(self):
        p = self.kubectl("api-versions")
        want = {"cluster.x-k8s.io/v1beta1"} if self.api == "v1beta1" else {"cluster.x-k8s.io/v1beta2",
                                                                            "cluster.x-k8s.io/v1beta1"}
        self.assertTrue(want <= set(p.stdout.split()), p.stdout)
        if self.api == "v1beta1":
            self.assertNotIn("cluster.x-k8s.io/v1beta2", p.stdout.split())
        p = self.kubectl("api-resources", "--api-group", "controlplane.cluster.x-k8s.io")
        self.assertIn("kubeadmcontrolplanes", p.stdout)

    def test_provision_kubeconfig_nodes_cni(self):
        self.apply(cluster_yaml("eu-3", api=self.api, cp=1, workers=2))
        t0 = time.time()
        self.wait("the kubeconfig Secret", lambda: self.kubectl("-n", "fleet", "get", "secret", "eu-3-kubeconfig",
                                                                check=False).returncode == 0)
        self.assertLess(time.time() - t0, 10)
        kc, sec = self.workload_kubeconfig("eu-3")
        self.assertEqual(sec["type"], "cluster.x-k8s.io/secret")
        self.assertEqual(sec["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"], "eu-3")
        self.assertEqual(sec["metadata"]["ownerReferences"][0]["kind"], "KubeadmControlPlane")
        with open(kc) as f:
            text = f.read()
        self.assertIn("eu-3-admin@eu-3", text)
        c = self.cluster("eu-3")
        # its own endpoint, as a real workload cluster has: the Secret's server is spec.controlPlaneEndpoint
        ep = c["spec"]["controlPlaneEndpoint"]
        self.assertIn("server: https://%s:%d/k8s/eu-3" % (ep["host"], ep["port"]), text)
        self.assertNotIn("server: %s/k8s/eu-3" % self.emu.server, text)
        # which answers for eu-3 alone
        other = "https://%s:%d/k8s/other/api" % (ep["host"], ep["port"])
        p = subprocess.run(["curl", "-sk", "-o", "/dev/null", "-w", "%{http_code}", other], capture_output=True,
                           text=True, timeout=20)
        self.assertEqual(p.stdout, "404")
        self.assertIn("cluster.cluster.x-k8s.io", c["metadata"]["finalizers"])
        if self.api == "v1beta2":
            self.assertTrue(c["status"]["initialization"]["controlPlaneInitialized"])
            self.assertEqual(self.cond(c, "ControlPlaneInitialized")["status"], "True")
        else:
            self.assertTrue(c["status"]["controlPlaneReady"])
            self.assertTrue(c["status"]["infrastructureReady"])
        self.assertEqual(c["status"]["phase"], "Provisioned")
        evs = [e["event"] for e in self.state("eu-3")["events"]]
        for e in ("phase Pending", "phase Provisioning", "phase Provisioned", "controlPlaneInitialized"):
            self.assertIn(e, evs)
        # the workload cluster: 3 nodes, NotReady without a CNI
        nodes = lambda: json.loads(self.kubectl("get", "nodes", "-o", "json", kc=kc).stdout)["items"]  # noqa: E731
        self.wait("3 nodes", lambda: len(nodes()) == 3)
        self.assertTrue(all(n["status"]["conditions"][0]["status"] == "False" for n in nodes()))
        if self.api == "v1beta2":
            self.assertEqual(self.cond(self.cluster("eu-3"), "WorkersAvailable")["status"], "False")
            self.assertEqual(self.cond(self.cluster("eu-3"), "Available")["status"], "False")
        self.kubectl("-n", "kube-system", "create", "-f", "-", kc=kc, stdin=json.dumps({
            "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "calico-node"},
            "spec": {"selector": {"matchLabels": {"k": "calico"}}, "template": {
                "metadata": {"labels": {"k": "calico"}}, "spec": {"containers": [{"name": "c", "image": "i"}]}}}}))
        self.wait("nodes Ready", lambda: all(n["status"]["conditions"][0]["status"] == "True" for n in nodes()))
        if self.api == "v1beta2":
            self.wait("Available", lambda: self.cond(self.cluster("eu-3"), "Available").get("status") == "True"
                      or self.cond(self.cluster("eu-3"), "Available").get("reason") == "NotAvailable" and
                      self.cond(self.cluster("eu-3"), "TopologyReconciled").get("reason") == "ClusterClassNotReconciled")
            self.assertEqual(self.cond(self.cluster("eu-3"), "WorkersAvailable")["status"], "True")

    def test_face_before_init_and_token_controller(self):
        self.apply(cluster_yaml("ap-1", api=self.api))
        self.emu.control("capi", {"cluster": "ap-1", "fail_provision": "QuotaExceeded: no more vCPUs"}) \
            if self.wait("state", lambda: self.state("ap-1")) else None
        kc = os.path.join(self.tmp, "early.kubeconfig")
        with open(kc, "w") as f:
            f.write("server: %s/k8s/ap-1\ntoken: x\n" % self.emu.server)
        time.sleep(MS * 6 / 1000.0)
        self.assertFalse(self.face_answers(kc))
        c = self.cluster("ap-1")
        self.assertNotEqual(c["status"].get("phase"), "Provisioned")
        if self.api == "v1beta2":
            self.assertEqual(self.cond(c, "InfrastructureReady")["reason"], "QuotaExceeded")
            self.assertEqual(self.cond(c, "InfrastructureReady")["message"], "no more vCPUs")
        else:
            ready = self.cond(c, "Ready")
            self.assertEqual((ready["status"], ready["severity"]), ("False", "Error"))
        # another cluster: argocd cluster add's service account and its token
        kc, _ = self.provisioned("ap-2")
        self.assertTrue(self.face_answers(kc))
        self.kubectl("-n", "kube-system", "create", "serviceaccount", "argocd-manager", kc=kc)
        self.kubectl("create", "clusterrole", "argocd-manager-role", "--verb=*", "--resource=*.*", kc=kc)
        self.kubectl("create", "clusterrolebinding", "argocd-manager-role-binding", "--clusterrole=argocd-manager-role",
                     "--serviceaccount=kube-system:argocd-manager", kc=kc)
        crb = json.loads(self.kubectl("get", "clusterrolebinding", "argocd-manager-role-binding", "-o", "json",
                                      kc=kc).stdout)
        self.assertEqual(crb["subjects"], [{"kind": "ServiceAccount", "name": "argocd-manager",
                                            "namespace": "kube-system"}])
        self.assertEqual(crb["roleRef"]["name"], "argocd-manager-role")
        cr = json.loads(self.kubectl("get", "clusterrole", "argocd-manager-role", "-o", "json", kc=kc).stdout)
        self.assertEqual(cr["rules"][0]["verbs"], ["*"])
        self.kubectl("-n", "kube-system", "create", "-f", "-", kc=kc, stdin=json.dumps({
            "apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/service-account-token",
            "metadata": {"name": "argocd-manager-long-lived-token",
                         "annotations": {"kubernetes.io/service-account.name": "argocd-manager"}}}))
        sec = json.loads(self.kubectl("-n", "kube-system", "get", "secret", "argocd-manager-long-lived-token", "-o",
                                      "json", kc=kc).stdout)
        tok = base64.b64decode(sec["data"]["token"]).decode()
        self.assertTrue(sec["data"]["ca.crt"])
        sa = os.path.join(self.tmp, "sa.kubeconfig")
        kubeconfig(sa, self.emu.server + "/k8s/ap-2", self.tmp + "/ca.pem", tok)
        self.kubectl("get", "nodes", kc=sa)
        kubeconfig(sa, self.emu.server + "/k8s/ap-2", self.tmp + "/ca.pem", tok + "x")
        self.assertIn("You must be logged in to the server", self.kubectl("get", "nodes", kc=sa, check=False).stderr)

    def test_version_bump_rolls_one_machine_a_tick(self):
        self.provisioned("eu-4", cp=3, workers=2)
        self.wait("converged", lambda: self.converged("eu-4"))
        self.assertIn("version cannot be decreased from", self.apply(cluster_yaml(
            "eu-4", api=self.api, version="v1.32.0", cp=3), check=False).stderr)
        p = self.apply(cluster_yaml("eu-4", api=self.api, version="v1.35.0", cp=3), check=False)
        self.assertIn('version cannot be increased from "v1.33.2" to "v1.35.0"', p.stderr)
        self.assertIn("version cannot be increased", self.apply(cluster_yaml(
            "eu-4", api=self.api, version="v1.35.0", cp=3), False, "--dry-run=server").stderr)
        gen = self.cluster("eu-4")["metadata"]["generation"]
        # straight through (kubectl is slower than a few ticks): a change while rolling out is refused
        def ssa(version):
            r = urllib.request.Request(
                self.emu.server + "/apis/cluster.x-k8s.io/%s/namespaces/fleet/clusters/eu-4?fieldManager=idpmake&"
                "force=true" % self.api, method="PATCH", data=cluster_yaml("eu-4", api=self.api, version=version,
                                                                           cp=3).encode(),
                headers={"Authorization": "Bearer " + TOKEN, "Content-Type": "application/apply-patch+yaml"})
            with urllib.request.urlopen(r, context=self.emu.ssl, timeout=30) as resp:
                return json.load(resp)
        self.assertEqual(ssa("v1.34.0")["metadata"]["generation"], gen + 1)
        with self.assertRaises(urllib.error.HTTPError) as e:
            ssa("v1.34.1")
        self.assertEqual(e.exception.code, 422)
        self.assertIn("version cannot be changed: KubeadmControlPlane", json.load(e.exception)["message"])
        seen, reasons = set(), set()
        deadline = time.time() + 20
        while not self.converged("eu-4"):
            self.assertLess(time.time(), deadline, "no convergence")
            st = self.state("eu-4")
            seen.add(sum(m["version"] == "v1.34.0" for m in st["control_plane"]))
            c = self.cluster("eu-4")
            self.assertEqual(c["status"]["phase"], "Provisioned")
            conds = c["status"]["conditions"] if self.api == "v1beta2" else c["status"]["v1beta2"]["conditions"]
            reasons |= {x["reason"] for x in conds if x["type"] == "TopologyReconciled"}
        evs = self.state("eu-4")["events"]
        ups = [e["t"] for e in evs if e["event"].startswith("machine") and "created (v1.34.0)" in e["event"]]
        self.assertEqual(len(ups), 5)
        self.assertTrue(all(b - a >= MS / 1000.0 * 0.8 for a, b in zip(ups, ups[1:])), ups)
        ev = [e["event"] for e in evs]
        self.assertIn("condition TopologyReconciled False ControlPlaneUpgradePending", ev)
        self.assertIn("condition TopologyReconciled False MachineDeploymentsUpgradePending", ev)
        c = self.cluster("eu-4")
        kcp = json.loads(self.kubectl("-n", "fleet", "get", "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
                                      "-o", "json").stdout)["items"]
        self.assertEqual([(k["status"]["version"], k["status"]["upToDateReplicas"]) for k in kcp], [("v1.34.0", 3)])
        if self.api == "v1beta2":
            self.assertEqual(c["status"]["controlPlane"]["upToDateReplicas"], 3)
            self.assertEqual(c["status"]["workers"]["upToDateReplicas"], 2)

    def test_raw_cluster_rolls_its_own_objects(self):
        """a Cluster without topology (idpmake's create.spec): the KubeadmControlPlane its controlPlaneRef names
        and the MachineDeployments of spec.clusterName are its own; the controller rolls them, makes none"""
        if self.api != "v1beta2":
            self.skipTest("v1beta2 only")
        objs = [
            {"apiVersion": "controlplane.cluster.x-k8s.io/v1beta2", "kind": "KubeadmControlPlane",
             "metadata": {"name": "raw-1-cp", "namespace": "fleet"}, "spec": {"replicas": 1, "version": "v1.34.1"}},
            {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "MachineDeployment",
             "metadata": {"name": "raw-1-md", "namespace": "fleet"},
             "spec": {"clusterName": "raw-1", "replicas": 2, "template": {"spec": {"version": "v1.34.1"}}}},
            {"apiVersion": "cluster.x-k8s.io/v1beta2", "kind": "Cluster", "metadata": {"name": "raw-1",
                                                                                     "namespace": "fleet"},
             "spec": {"controlPlaneRef": {"apiGroup": "controlplane.cluster.x-k8s.io", "kind": "KubeadmControlPlane",
                                          "name": "raw-1-cp"}}}]
        for o in objs:
            self.apply(json.dumps(o))
        self.wait("controlPlaneInitialized", lambda: self.state("raw-1").get("step") == "provisioned")
        self.wait("converged", lambda: self.converged("raw-1"))
        kcps = json.loads(self.kubectl("-n", "fleet", "get", "kubeadmcontrolplanes.controlplane.cluster.x-k8s.io",
                                       "-o", "json").stdout)["items"]
        self.assertEqual([(k["metadata"]["name"], k["spec"]["version"], k["status"]["version"]) for k in kcps],
                         [("raw-1-cp", "v1.34.1", "v1.34.1")])
        mds = json.loads(self.kubectl("-n", "fleet", "get", "machinedeployments.cluster.x-k8s.io",
                                      "-o", "json").stdout)["items"]
        self.assertEqual([(m["metadata"]["name"], m["status"]["replicas"]) for m in mds], [("raw-1-md", 2)])
        st = self.state("raw-1")
        self.assertEqual(sorted(m["version"] for m in st["control_plane"]), ["v1.34.1"])

    def test_webhooks_gate_and_variables(self):
        self.kubectl("-n", "fleet", "create", "-f", "-", stdin=json.dumps({
            "apiVersion": "cluster.x-k8s.io/%s" % self.api, "kind": "ClusterClass",
            "metadata": {"name": "typed"}, "spec": {"variables": [
                {"name": "region", "required": False, "schema": {"openAPIV3Schema": {"type": "string"}}}]}}))
        p = self.apply(cluster_yaml("v-1", api=self.api, cls="typed", variables=[{"name": "zone", "value": "a"}]),
                       check=False)
        self.assertIn('variable is not defined', p.stderr)
        p = self.apply(cluster_yaml("v-1", api=self.api, cls="typed", variables=[{"name": "region", "value": 3}]),
                       check=False)
        self.assertIn('must be of type string', p.stderr)
        p = self.apply(cluster_yaml("v-1", api=self.api, cls="typed", variables=[{"name": "region", "value": "eu"}]))
        self.assertNotIn("Warning", p.stderr)
        p = self.apply(cluster_yaml("v-2", api=self.api, cls="missing"))
        self.assertIn("Warning: Cluster refers to ClusterClass fleet/missing", p.stderr)
        self.wait("ClusterClassNotReconciled", lambda: "condition TopologyReconciled False ClusterClassNotReconciled"
                  in [e["event"] for e in self.state("v-2").get("events", [])])
        self.emu.control("capi", {"providers": {"topology_gate": False, "clusterctl": [
            {"name": "cluster-api", "type": "CoreProvider", "version": "v1.11.0"}]}})
        p = self.apply(cluster_yaml("v-3", api=self.api), check=False)
        self.assertIn("can be set only if the ClusterTopology feature flag is enabled", p.stderr)
        d = json.loads(self.kubectl("-n", "capi-system", "get", "deployment", "capi-controller-manager", "-o",
                                    "json").stdout)
        self.assertIn("ClusterTopology=false", d["spec"]["template"]["spec"]["containers"][0]["args"][1])
        pr = json.loads(self.kubectl("get", "providers.clusterctl.cluster.x-k8s.io", "-A", "-o", "json").stdout)
        self.assertEqual([i["type"] for i in pr["items"]], ["CoreProvider"])

    def test_delete_with_finalizer_and_stuck(self):
        kc, _ = self.provisioned("d-1", cp=1, workers=2)
        self.assertTrue(self.face_answers(kc))
        r = urllib.request.Request(self.emu.server + "/apis/cluster.x-k8s.io/%s/namespaces/fleet/clusters/d-1" %
                                   self.api, method="DELETE", headers={"Authorization": "Bearer " + TOKEN})
        with urllib.request.urlopen(r, context=self.emu.ssl, timeout=30) as resp:
            c = json.load(resp)
        self.assertTrue(c["metadata"].get("deletionTimestamp"))
        self.wait("gone", lambda: self.kubectl("-n", "fleet", "get", "clusters.cluster.x-k8s.io", "d-1",
                                               check=False).returncode != 0)
        self.assertIn("NotFound", self.kubectl("-n", "fleet", "get", "secret", "d-1-kubeconfig", check=False).stderr)
        self.assertFalse(self.face_answers(kc))
        ev = [e["event"] for e in self.state("d-1")["events"]]
        self.assertIn("phase Deleting", ev)
        self.assertEqual(ev[-1], "deleted")
        # kubectl's delete waits for the finalizer
        self.provisioned("d-0", cp=1, workers=1)
        self.kubectl("-n", "fleet", "delete", "clusters.cluster.x-k8s.io", "d-0", "--timeout=20s")
        self.assertNotEqual(self.kubectl("-n", "fleet", "get", "clusters.cluster.x-k8s.io", "d-0",
                                         check=False).returncode, 0)
        self.assertEqual(json.loads(self.kubectl("-n", "fleet", "get", "machines.cluster.x-k8s.io", "-o",
                                                 "json").stdout)["items"], [])
        # stuck
        self.provisioned("d-2", cp=1, workers=1)
        self.emu.control("capi", {"cluster": "d-2", "stuck_delete": "DependencyViolation: the VPC has dependencies"})
        p = self.kubectl("-n", "fleet", "delete", "clusters.cluster.x-k8s.io", "d-2", "--timeout=1s", check=False)
        self.assertNotEqual(p.returncode, 0)

        def stuck():
            c = self.cluster("d-2")
            conds = c["status"].get("conditions") if self.api == "v1beta2" else c["status"]["v1beta2"]["conditions"]
            d = next((x for x in conds if x["type"] == "Deleting"), {})
            return d.get("status") == "False" and "the VPC has dependencies" in d.get("message", "")
        self.wait("Deleting False", stuck)
        self.assertEqual(self.cluster("d-2")["status"]["phase"], "Deleting")
        # a reset (objects kept) clears the fault: the deletion completes
        self.emu.control("reset", {})
        self.wait("d-2 gone", lambda: self.kubectl("-n", "fleet", "get", "clusters.cluster.x-k8s.io", "d-2",
                                                   check=False).returncode != 0)

    def cert_only(self, kc, name):
        """the kubeconfig kc without its token: its client certificate alone"""
        out = os.path.join(self.tmp, name)
        with open(kc) as f, open(out, "w") as g:
            g.write("".join(line for line in f if not line.strip().startswith("token:")))
        return out

    def test_faults(self):
        kc, sec = self.provisioned("f-1")
        self.assertTrue(self.face_answers(kc))
        with open(kc) as f:
            self.assertIn("client-certificate-data:", f.read())
        cert1 = self.cert_only(kc, "cert1.kubeconfig")
        self.assertIn("f-1-", self.kubectl("get", "nodes", kc=cert1).stdout)
        self.emu.control("capi", {"cluster": "f-1", "expire_credentials": True})
        self.assertIn("You must be logged in to the server", self.kubectl("get", "nodes", kc=kc, check=False).stderr)
        self.emu.control("capi", {"cluster": "f-1", "rotate_kubeconfig": True})
        kc2, sec2 = self.workload_kubeconfig("f-1")
        self.assertNotEqual(sec["metadata"]["resourceVersion"], sec2["metadata"]["resourceVersion"])
        self.assertEqual(sec["metadata"]["uid"], sec2["metadata"]["uid"])
        self.kubectl("get", "nodes", kc=kc2)
        self.kubectl("get", "nodes", kc=self.cert_only(kc2, "cert2.kubeconfig"))
        self.assertIn("You must be logged in to the server", self.kubectl("get", "nodes", kc=cert1,
                                                                           check=False).stderr)
        # the old credential (the same file name was overwritten: make it again from the old Secret)
        old = os.path.join(self.tmp, "old.kubeconfig")
        with open(old, "wb") as f:
            f.write(base64.b64decode(sec["data"]["value"]))
        self.assertIn("You must be logged in to the server", self.kubectl("get", "nodes", kc=old, check=False).stderr)
        self.emu.control("capi", {"unreachable": True})
        mgmt = os.path.join(self.tmp, "mgmt.kubeconfig")
        with open(mgmt, "w") as f:
            f.write("server: %s\ntoken: %s\n" % (self.emu.server, TOKEN))
        self.assertFalse(self.face_answers(mgmt))
        self.assertTrue(self.face_answers(kc2))    # the workload cluster still answers
        self.emu.control("reset", {})
        self.assertTrue(self.face_answers(mgmt))
        self.emu.control("capi", {"unreachable": True})
        self.emu.control("capi", {"unreachable": False})
        self.kubectl("get", "ns")
        self.emu.control("capi", {"cluster": "f-1", "delete_out_of_band": True})
        self.assertNotEqual(self.kubectl("-n", "fleet", "get", "clusters.cluster.x-k8s.io", "f-1",
                                         check=False).returncode, 0)
        self.assertNotEqual(self.kubectl("-n", "fleet", "get", "secret", "f-1-kubeconfig", check=False).returncode, 0)
        self.assertFalse(self.face_answers(kc2))


    def test_v1beta1_served_beside_v1beta2(self):
        self.provisioned("w-1")
        c = self.get("/apis/cluster.x-k8s.io/v1beta1/namespaces/fleet/clusters/w-1")
        self.assertEqual(c["apiVersion"], "cluster.x-k8s.io/v1beta1")
        self.assertEqual(c["spec"]["topology"]["class"], "quick-start")
        self.assertTrue(c["status"]["controlPlaneReady"])
        self.assertIn("Ready", [x["type"] for x in c["status"]["conditions"]])
        c = self.get("/apis/cluster.x-k8s.io/v1beta2/namespaces/fleet/clusters/w-1")
        self.assertEqual(c["spec"]["topology"]["classRef"]["name"], "quick-start")
        self.assertTrue(c["status"]["initialization"]["controlPlaneInitialized"])


class CapiV1beta1Test(CapiTest):
    """--capi-api v1beta1: CAPI 1.10, v1beta1 only, its status shape"""
    flags = ("--capi-api", "v1beta1")
    api = "v1beta1"
    test_v1beta1_served_beside_v1beta2 = None    # v1beta2 is not served

    def test_provisioning_ready_info(self):
        self.apply(cluster_yaml("b-1", api="v1beta1"))
        seen = set()
        deadline = time.time() + 20
        while self.state("b-1").get("step") != "provisioned":
            self.assertLess(time.time(), deadline)
            c = self.get("/apis/cluster.x-k8s.io/v1beta1/namespaces/fleet/clusters/b-1")
            r = self.cond(c, "Ready") if c.get("status") else {}
            if r:
                seen.add((r["status"], r.get("severity")))
        self.assertIn(("False", "Info"), seen)
        self.assertEqual(self.cluster("b-1")["spec"]["topology"]["class"], "quick-start")


if __name__ == "__main__":
    unittest.main(verbosity=2)
