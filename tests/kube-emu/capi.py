"""A fake Cluster API controller for the Kubernetes emulator (kubeemu.py --capi; standard library only).

The management cluster is the emulator's root face; it serves the CRDs of capicrds.py.  Every
--capi-ms milliseconds (one tick) a thread moves each Cluster one step, under Store.lock:
  tick 0: finalizer cluster.cluster.x-k8s.io, phase Pending;
  then:   Provisioning (infrastructureProvisioned, InfrastructureReady, spec.controlPlaneEndpoint);
  then:   Provisioned + controlPlaneInitialized: a KubeadmControlPlane <name>-xxxx, the Secret
          <name>-kubeconfig (owned by it) and the workload face https://127.0.0.1:PORT/k8s/<name>;
  then:   one Machine a tick (control plane first, then each MachineDeployment's workers), each with a
          Node on the workload face, NotReady until a CNI DaemonSet lands there; a version change
          replaces one machine a tick (ControlPlaneUpgradePending, then MachineDeploymentsUpgradePending);
  DELETE: Deleting, one machine a tick, then the finalizer goes, with the Secret and generated objects.
Webhooks (admit): version decrease, +2 minors, change while rolling out, the ClusterTopology gate,
variables against the ClusterClass; a missing class is a warning.  Control API: control().
"""
import base64
import copy
import hashlib
import os
import re
import shutil
import ssl
import subprocess
import tempfile
import threading
import time

import capicrds
from capicrds import CORE
from store import ApiError, ResType, Store, ts

FINALIZER = "cluster.cluster.x-k8s.io"
CNI_NAMES = ("calico-node", "cilium", "kube-flannel-ds")
JSON_TYPES = {"string": (str,), "integer": (int,), "number": (int, float), "boolean": (bool,),
              "object": (dict,), "array": (list,)}


def rand(n=5):
    return "".join("bcdfghjklmnpqrstvwxz2456789"[b % 27] for b in os.urandom(n))


def semver(v):
    m = re.match(r"^v?(\d+)\.(\d+)\.(\d+)", v or "")
    return tuple(int(x) for x in m.groups()) if m else None


class MgmtStore(Store):
    """the management cluster's store: the controller sees each write; a Cluster is read in the version asked"""
    capi = None

    def react(self, res, obj):
        super().react(res, obj)
        if self.capi is not None and res.group == CORE and res.kind == "Cluster":
            capicrds.to_storage(obj)
            self.capi.keep_status(obj)

    def view(self, res, obj):
        out = super().view(res, obj)
        if self.capi is not None and res.group == CORE and res.kind == "Cluster":
            out = capicrds.cluster_view(out, res.version)
        return out


class FaceStore(Store):
    """a workload cluster's store: Nodes, and a token controller for service-account-token Secrets"""
    ca_pem = b""

    def __init__(self, ca_pem, lock):
        self.ca_pem = ca_pem
        super().__init__()
        self.lock = lock    # one lock for the management cluster and its workload clusters
        self.types.append(ResType("", "v1", "nodes", "Node", False, ["no"]))

    def react(self, res, obj):
        super().react(res, obj)
        md = obj["metadata"]
        if res.kind == "Secret" and not res.group and obj.get("type") == "kubernetes.io/service-account-token" \
                and (md.get("annotations") or {}).get("kubernetes.io/service-account.name"):
            data = obj.get("data") or {}
            if not data.get("token"):
                data["token"] = base64.b64encode(("sa-" + rand(24)).encode()).decode()
            data["ca.crt"] = base64.b64encode(self.ca_pem).decode()
            data["namespace"] = base64.b64encode(md.get("namespace", "").encode()).decode()
            obj["data"] = data

    def tokens(self):
        out = {}
        for (g, k, ns, name), o in self.objects.items():
            if k == "Secret" and not g and o.get("type") == "kubernetes.io/service-account-token":
                t = (o.get("data") or {}).get("token")
                sa = ((o["metadata"].get("annotations") or {}).get("kubernetes.io/service-account.name"))
                if t:
                    out[base64.b64decode(t).decode()] = "system:serviceaccount:%s:%s" % (ns, sa)
        return out


class ClientCA:
    """the emulator's CA for client certificates (openssl), trusted by the server with CERT_OPTIONAL"""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="kubeemu-capi-ca.")
        self.cert, self.key = self.dir + "/ca.pem", self.dir + "/ca.key"
        self.run("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days",
                 "3650", "-subj", "/CN=kubeemu-capi-client-ca", "-addext", "basicConstraints=critical,CA:TRUE",
                 "-addext", "keyUsage=critical,keyCertSign,cRLSign", "-keyout", self.key, "-out", self.cert)

    def run(self, *args):
        subprocess.run(["openssl"] + list(args), check=True, capture_output=True)

    def issue(self, cn, org, days=365):
        """(cert PEM, key PEM, sha256 of the DER certificate) of a new client certificate, valid for days"""
        d = tempfile.mkdtemp(dir=self.dir)
        try:
            with open(d + "/ext", "w") as f:
                f.write("basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\n"
                        "extendedKeyUsage=clientAuth\n")
            self.run("req", "-new", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-subj",
                     "/O=%s/CN=%s" % (org, cn), "-keyout", d + "/k", "-out", d + "/csr")
            self.run("x509", "-req", "-in", d + "/csr", "-CA", self.cert, "-CAkey", self.key, "-set_serial",
                     str(int.from_bytes(os.urandom(8), "big")), "-days", str(days), "-extfile", d + "/ext", "-out",
                     d + "/c")
            with open(d + "/c") as f:
                cert = f.read()
            with open(d + "/k") as f:
                key = f.read()
        finally:
            shutil.rmtree(d, ignore_errors=True)
        return cert, key, hashlib.sha256(ssl.PEM_cert_to_DER_cert(cert)).hexdigest()

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class Face:
    def __init__(self, name, ca_pem, lock):
        self.name, self.store = name, FaceStore(ca_pem, lock)
        self.token = "adm-" + rand(24)
        self.cert = None            # (cert PEM, key PEM, sha256) with a client CA
        self.expired = False

    def user(self, token):
        if token == self.token and not self.expired:
            return self.name + "-admin"
        return self.store.tokens().get(token)

    def cert_user(self, der):
        """the user of a verified client certificate (DER), or None"""
        if self.cert and not self.expired and hashlib.sha256(der).hexdigest() == self.cert[2]:
            return "kubernetes-admin"
        return None


class State:
    """what the controller knows of one Cluster (one incarnation: one uid)"""

    def __init__(self, ns, name, uid):
        self.ns, self.name, self.uid = ns, name, uid
        self.step = "new"
        self.fail = None            # (reason, message) from fail_provision
        self.stuck = None           # message from stuck_delete
        self.kcp = "%s-%s" % (name, rand())
        self.cp = []                # [{"name", "version"}]
        self.md = {}                # md name -> {"object": name, "machines": [...]}
        self.face = None
        self.deleting = False
        self.conds = {}             # type -> condition
        self.status = None
        self.observed = 0
        self.class_missing = False
        self.version, self.cp_desired, self.md_desired = "", 1, {}
        self.generation, self.face_cni, self.kcp_uid = 1, False, ""


class Capi:
    def __init__(self, emu, ms=200, api="v1beta2", gate=True, ca_pem=b"", client_ca=None):
        self.emu, self.ms, self.api, self.gate, self.ca_pem = emu, ms, api, gate, ca_pem
        self.gate0 = gate
        self.client_ca = client_ca  # ClientCA: the kubeconfigs carry a client certificate too
        self.clusters = {}          # (ns, name) -> State
        self.faces = {}             # cluster name -> Face (answering)
        self.events = {}            # "ns/name" -> [{"t", "time", "event"}], kept after deletion until a reset
        self.unreachable = False
        self.port = 0
        self.listen = self.close = None     # kubeemu.py: a listener of a Cluster's own, and its end
        emu.store.capi = self
        self.install()
        self.thread = threading.Thread(target=self.loop, daemon=True)
        self.thread.start()

    # ---- set-up -------------------------------------------------------------------------------------------
    def install(self):
        st = self.emu.store
        with st.lock:
            crd = st.find("apiextensions.k8s.io", "v1", "customresourcedefinitions")
            for c in capicrds.crds(self.api):
                st.write(crd, "", c)

    def reset(self, objects):
        """the faults go (and the gate is the command line's again); with objects (the store emptied), the
        clusters, their faces and events go too, and the CRDs are installed again"""
        with self.emu.store.lock:
            self.unreachable, self.gate = False, self.gate0
            for s in self.clusters.values():
                s.fail = s.stuck = None
                if s.face is not None:
                    s.face.expired = False
            if objects:
                for s in self.clusters.values():
                    self.unlisten(s)
                self.clusters, self.faces, self.events = {}, {}, {}
                self.install()

    def res(self, kind, group=CORE):
        return self.emu.store.by_kind(group, kind)

    def event(self, s, what):
        now = time.time()
        self.events.setdefault("%s/%s" % (s.ns, s.name), []).append(
            {"t": now, "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + ".%03dZ" % (now % 1 * 1000),
             "event": what, "uid": s.uid})

    def server(self, s):
        """the workload face's URL: each Cluster's own listener (spec.controlPlaneEndpoint), as a real cluster has
        its own endpoint; a Cluster made again gets another (issue 35 #5, issue 33 #7)"""
        return "https://127.0.0.1:%d/k8s/%s" % (getattr(s, "port", 0) or self.port, s.name)

    def endpoint(self, s):
        """a listener of its own for Cluster s (kubeemu.py's listen), once: its port"""
        if not getattr(s, "port", 0):
            s.port = self.listen(s.name) if self.listen is not None else self.port
        return s.port

    def unlisten(self, s):
        if getattr(s, "port", 0) and self.close is not None and s.port != self.port:
            self.close(s.port)
        s.port = 0

    # ---- webhooks -------------------------------------------------------------------------------------------
    def admit(self, st, res, ns, obj):
        """the Cluster webhooks: raise ApiError 422, or return warnings"""
        if st is not self.emu.store or res.group != CORE or res.kind != "Cluster":
            return []
        name = obj["metadata"].get("name", "")
        spec = copy.deepcopy(obj.get("spec") or {})
        capicrds._spec_to_v1beta2(spec)
        topo = spec.get("topology")
        old = st.objects.get(st.key(res, ns, name))
        causes, warnings = [], []
        if topo is not None and not self.gate:
            causes.append(("spec.topology", "Forbidden: can be set only if the ClusterTopology feature flag is "
                           "enabled"))
        if isinstance(topo, dict):
            new_v = topo.get("version")
            old_v = ((old or {}).get("spec") or {}).get("topology", {}).get("version") if old else None
            if semver(new_v) is None:
                causes.append(("spec.topology.version", 'Invalid value: "%s": must be a valid semantic version'
                               % new_v))
            elif old_v and semver(old_v) and new_v != old_v:
                a, b = semver(old_v), semver(new_v)
                s = self.clusters.get((ns, name))
                if b < a:
                    causes.append(("spec.topology.version", 'Invalid value: "%s": version cannot be decreased from '
                                   '"%s" to "%s"' % (new_v, old_v, new_v)))
                elif b[:2] > (a[0], a[1] + 1):
                    causes.append(("spec.topology.version", 'Invalid value: "%s": version cannot be increased from '
                                   '"%s" to "%s"' % (new_v, old_v, new_v)))
                elif s is not None and self.rolling(s, old_v):
                    causes.append(("spec.topology.version", 'Forbidden: version cannot be changed: %s' %
                                   self.rolling(s, old_v)))
            cref = topo.get("classRef") or {}
            cname, cns = cref.get("name"), cref.get("namespace") or ns
            cc_res = self.res("ClusterClass")
            cc = st.objects.get(st.key(cc_res, cns, cname)) if cname and cc_res else None
            if cname and cc is None:
                warnings.append("Cluster refers to ClusterClass %s/%s, but this ClusterClass does not exist. Cluster "
                                "topology has not been fully validated. The ClusterClass must be created to "
                                "reconcile the Cluster" % (cns, cname))
            elif cc is not None:
                decl = {v.get("name"): v for v in (cc.get("spec") or {}).get("variables") or []}
                for i, var in enumerate(topo.get("variables") or []):
                    vn = var.get("name")
                    if vn not in decl:
                        causes.append(("spec.topology.variables[%s]" % vn, 'Invalid value: "%s": variable is not '
                                       'defined' % vn))
                        continue
                    typ = (((decl[vn].get("schema") or {}).get("openAPIV3Schema")) or {}).get("type")
                    val = var.get("value")
                    ok = JSON_TYPES.get(typ, (object,))
                    if typ and (not isinstance(val, ok) or (isinstance(val, bool) and typ != "boolean")):
                        causes.append(("spec.topology.variables[%s].value" % vn, 'Invalid value: %s: must be of '
                                       'type %s' % (repr(val), typ)))
                for vn, d in decl.items():
                    if d.get("required") and vn not in {v.get("name") for v in topo.get("variables") or []}:
                        causes.append(("spec.topology.variables", 'Required value: required variable "%s" must '
                                       'be set' % vn))
        if causes:
            raise ApiError(422, "Invalid", 'Cluster.cluster.x-k8s.io "%s" is invalid: %s' % (
                name, ", ".join("%s: %s" % c for c in causes)), {"name": name, "group": CORE, "kind": "Cluster",
                                                                 "causes": [{"field": f, "message": m,
                                                                             "reason": "FieldValueInvalid"}
                                                                            for f, m in causes]})
        return warnings

    def rolling(self, s, version):
        """why the version cannot change from version now ("" when it can)"""
        old = [m for m in s.cp if m["version"] != version]
        if old or len(s.cp) != s.cp_desired:
            return "KubeadmControlPlane %s/%s is upgrading to %s" % (s.ns, s.kcp, version) if old else \
                "KubeadmControlPlane %s/%s is scaling" % (s.ns, s.kcp)
        mds = [d["object"] for n, d in s.md.items() if any(m["version"] != version for m in d["machines"])]
        if mds:
            return "MachineDeployment(s) %s are upgrading to %s" % (", ".join(sorted(mds)), version)
        return ""

    # ---- the controller -----------------------------------------------------------------------------------
    def loop(self):
        while True:
            time.sleep(self.ms / 1000.0)
            st = self.emu.store
            with st.lock:
                try:
                    self.tick()
                except Exception as e:  # noqa: BLE001 - a fixture's controller keeps going, and says why
                    import traceback
                    traceback.print_exc()
                    self.tick_error = repr(e)

    def keep_status(self, obj):
        """a write by a client keeps the status the controller wrote"""
        s = self.clusters.get((obj["metadata"].get("namespace", ""), obj["metadata"].get("name")))
        if s is not None and s.uid == obj["metadata"].get("uid") and s.status is not None:
            obj["status"] = copy.deepcopy(s.status)

    def tick(self):
        st = self.emu.store
        res = self.res("Cluster")
        if res is None:
            return
        live = {(k[2], k[3]): o for k, o in st.objects.items() if k[0] == CORE and k[1] == "Cluster"}
        for key in list(self.clusters):
            s = self.clusters[key]
            o = live.get(key)
            if o is None or o["metadata"]["uid"] != s.uid:
                self.gone(s)
        for key, o in sorted(live.items()):
            s = self.clusters.get(key)
            if s is None:
                s = self.clusters[key] = State(key[0], key[1], o["metadata"]["uid"])
                self.event(s, "created")
            self.advance(s, o)
        for s in self.clusters.values():
            if s.face is not None:
                self.face_tick(s)

    def gone(self, s):
        """the Cluster went: its generated objects, its Secret and its face go too"""
        st = self.emu.store
        for (g, k, ns, name), o in list(st.objects.items()):
            if ns != s.ns:
                continue
            labels = o["metadata"].get("labels") or {}
            owned = any(r.get("uid") == s.uid for r in o["metadata"].get("ownerReferences") or [])
            if owned or labels.get("cluster.x-k8s.io/cluster-name") == s.name and \
                    labels.get("emu.idpmake.io/generated") == "true" or \
                    (k == "Secret" and not g and name == s.name + "-kubeconfig"):
                t = st.by_kind(g, k)
                if t is not None:
                    st.delete(t, ns, name, force=True)
        if self.faces.get(s.name) is s.face:
            self.faces.pop(s.name, None)
        s.face = None
        self.unlisten(s)
        self.clusters.pop((s.ns, s.name), None)
        self.event(s, "deleted")

    def desired(self, s, o):
        topo = (o.get("spec") or {}).get("topology") or {}
        if not topo:
            return self.desired_raw(s, o)
        s.version = topo.get("version") or "v1.33.0"
        s.cp_desired = int((topo.get("controlPlane") or {}).get("replicas", 1) or 0)
        s.md_desired = {}
        for md in ((topo.get("workers") or {}).get("machineDeployments") or []):
            if md.get("name"):
                s.md_desired[md["name"]] = (int(md.get("replicas", 1) or 0), md.get("class", ""))
        cref = topo.get("classRef") or {}
        cc_res = self.res("ClusterClass")
        st = self.emu.store
        s.class_missing = bool(cref.get("name")) and (cc_res is None or st.key(
            cc_res, cref.get("namespace") or s.ns, cref["name"]) not in st.objects)

    def desired_raw(self, s, o):
        """a Cluster without topology (raw manifests: idpmake's create.spec): the KubeadmControlPlane its
        controlPlaneRef names gives the version and replicas, the MachineDeployments of spec.clusterName the
        workers; the controller rolls those objects instead of making its own"""
        st = self.emu.store
        ref = (o.get("spec") or {}).get("controlPlaneRef") or {}
        kres = self.res("KubeadmControlPlane", "controlplane." + CORE)
        k = st.objects.get(st.key(kres, s.ns, ref["name"])) if kres is not None and ref.get("name") else None
        ks = (k or {}).get("spec") or {}
        if k is not None:
            s.kcp = ref["name"]
        s.version = ks.get("version") or "v1.33.0"
        s.cp_desired = int(ks.get("replicas", 1) or 0)
        s.md_desired = {}
        for (g, kind, ns, name), md in list(st.objects.items()):
            labels = md["metadata"].get("labels") or {}
            if kind == "MachineDeployment" and ns == s.ns and (md.get("spec") or {}).get("clusterName") == s.name \
                    and labels.get("emu.idpmake.io/generated") != "true":
                s.md_desired[name] = (int(md["spec"].get("replicas", 1) or 0), "")
                s.md.setdefault(name, {"object": name, "machines": []})
        s.class_missing = False

    def advance(self, s, o):
        st = self.emu.store
        res = self.res("Cluster")
        obj = copy.deepcopy(o)
        md = obj["metadata"]
        self.desired(s, obj)
        if md.get("deletionTimestamp"):
            return self.deleting(s, obj)
        if s.step == "new":
            if FINALIZER not in (md.get("finalizers") or []):
                md.setdefault("finalizers", []).append(FINALIZER)
            s.step = "pending"
            self.event(s, "phase Pending")
        elif s.step == "pending" and s.fail is None:
            s.step = "provisioning"
            obj.setdefault("spec", {})["controlPlaneEndpoint"] = {"host": "127.0.0.1", "port": self.endpoint(s)}
            self.event(s, "phase Provisioning")
            self.event(s, "infrastructureProvisioned")
        elif s.step == "provisioning" and s.fail is None:
            s.step = "provisioned"
            self.initialize(s, obj)
            self.event(s, "phase Provisioned")
            self.event(s, "controlPlaneInitialized")
        elif s.step == "provisioned":
            self.rollout(s)
        self.set_status(s, obj)
        st.write(res, s.ns, obj)

    def initialize(self, s, obj):
        st = self.emu.store
        kcp = self.res("KubeadmControlPlane", "controlplane." + CORE)
        labels = {"cluster.x-k8s.io/cluster-name": s.name, "emu.idpmake.io/generated": "true"}
        owner = [{"apiVersion": obj["apiVersion"], "kind": "Cluster", "name": s.name, "uid": s.uid,
                  "controller": True, "blockOwnerDeletion": True}]
        mine = st.objects.get(st.key(kcp, s.ns, s.kcp))    # a raw Cluster's own (desired_raw)
        if mine is not None:
            mine = copy.deepcopy(mine)
            mine["status"] = {"initialization": {"controlPlaneInitialized": True}}
            k, _ = st.write(kcp, s.ns, mine)
        else:
            k, _ = st.write(kcp, s.ns, {"metadata": {"name": s.kcp, "namespace": s.ns, "labels": dict(labels),
                                                     "ownerReferences": owner},
                                        "spec": {"replicas": s.cp_desired, "version": s.version},
                                        "status": {"initialization": {"controlPlaneInitialized": True}}})
        s.kcp_uid = k["metadata"]["uid"]
        s.face = Face(s.name, self.ca_pem, self.emu.store.lock)
        self.faces[s.name] = s.face
        self.write_secret(s)
        self.add_machine(s, None)

    def write_secret(self, s):
        st = self.emu.store
        ca = base64.b64encode(self.ca_pem).decode()
        cert = ""
        if self.client_ca is not None:
            s.face.cert = self.client_ca.issue("kubernetes-admin", "system:masters", getattr(s, "cert_days", 365))
            cert = "    client-certificate-data: %s\n    client-key-data: %s\n" % (
                base64.b64encode(s.face.cert[0].encode()).decode(), base64.b64encode(s.face.cert[1].encode()).decode())
        user, ctx = s.name + "-admin", "%s-admin@%s" % (s.name, s.name)
        kc = ("apiVersion: v1\nkind: Config\nclusters:\n- name: %s\n  cluster:\n    server: %s\n"
              "    certificate-authority-data: %s\ncontexts:\n- name: %s\n  context:\n    cluster: %s\n"
              "    user: %s\ncurrent-context: %s\nusers:\n- name: %s\n  user:\n    token: %s\n%s" %
              (s.name, self.server(s), ca, ctx, s.name, user, ctx, user, s.face.token, cert))
        sec = st.by_kind("", "Secret")
        st.write(sec, s.ns, {"metadata": {"name": s.name + "-kubeconfig", "namespace": s.ns,
                                          "labels": {"cluster.x-k8s.io/cluster-name": s.name},
                                          "ownerReferences": [{"apiVersion": "controlplane.%s/%s" % (
                                              CORE, self.res("KubeadmControlPlane", "controlplane." + CORE).version),
                                              "kind": "KubeadmControlPlane", "name": s.kcp, "uid": s.kcp_uid,
                                              "controller": True, "blockOwnerDeletion": True}]},
                             "type": "cluster.x-k8s.io/secret",
                             "data": {"value": base64.b64encode(kc.encode()).decode()}})

    # ---- machines -------------------------------------------------------------------------------------------
    def add_machine(self, s, mdname):
        st = self.emu.store
        name = "%s-%s" % (s.kcp if mdname is None else s.md[mdname]["object"], rand())
        m = {"name": name, "version": s.version}
        (s.cp if mdname is None else s.md[mdname]["machines"]).append(m)
        labels = {"cluster.x-k8s.io/cluster-name": s.name, "emu.idpmake.io/generated": "true"}
        if mdname is None:
            labels["cluster.x-k8s.io/control-plane"] = ""
        else:
            labels["cluster.x-k8s.io/deployment-name"] = s.md[mdname]["object"]
        st.write(self.res("Machine"), s.ns, {"metadata": {"name": name, "namespace": s.ns, "labels": labels},
                                             "spec": {"clusterName": s.name, "version": s.version},
                                             "status": {"phase": "Running", "nodeRef": {"kind": "Node",
                                                                                        "name": name}}})
        if s.face is not None:
            self.write_node(s, m)
        self.event(s, "machine %s created (%s)" % (name, s.version))

    def drop_machine(self, s, mdname, m):
        st = self.emu.store
        (s.cp if mdname is None else s.md[mdname]["machines"]).remove(m)
        t = self.res("Machine")
        if st.exists(t, s.ns, m["name"]):
            st.delete(t, s.ns, m["name"], force=True)
        if s.face is not None and st is not None:
            node = s.face.store.find("", "v1", "nodes")
            if s.face.store.exists(node, "", m["name"]):
                s.face.store.delete(node, "", m["name"])
        self.event(s, "machine %s deleted" % m["name"])

    def write_node(self, s, m, ready=None):
        fs = s.face.store
        if ready is None:
            ready = s.face_cni
        node = {"metadata": {"name": m["name"], "labels": {"kubernetes.io/hostname": m["name"]}},
                "spec": {} if ready else {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
                "status": {"nodeInfo": {"kubeletVersion": m["version"]},
                           "conditions": [{"type": "Ready", "status": "True" if ready else "False",
                                           "reason": "KubeletReady" if ready else "KubeletNotReady",
                                           "message": "kubelet is posting ready status" if ready else
                                           "container runtime network not ready: NetworkReady=false reason:"
                                           "NetworkPluginNotReady message:Network plugin returns error: cni "
                                           "plugin not initialized"}]}}
        if m in s.cp:
            node["metadata"]["labels"]["node-role.kubernetes.io/control-plane"] = ""
        fs.write(fs.find("", "v1", "nodes"), "", node)

    def rollout(self, s):
        """one machine action a tick: control plane first (scale, then upgrade), then each MachineDeployment"""
        st = self.emu.store
        for n, (want, cls) in sorted(s.md_desired.items()):
            if n not in s.md:
                obj = "%s-%s-%s" % (s.name, n, rand())
                s.md[n] = {"object": obj, "machines": []}
                st.write(self.res("MachineDeployment"), s.ns, {
                    "metadata": {"name": obj, "namespace": s.ns, "labels": {
                        "cluster.x-k8s.io/cluster-name": s.name, "emu.idpmake.io/generated": "true",
                        "topology.cluster.x-k8s.io/deployment-name": n}},
                    "spec": {"clusterName": s.name, "replicas": want, "template": {"spec": {"version": s.version}}}})
        if len(s.cp) < s.cp_desired:
            return self.add_machine(s, None)
        old = [m for m in s.cp if m["version"] != s.version]
        if old:
            self.add_machine(s, None)
            return self.drop_machine(s, None, old[0])
        if len(s.cp) > s.cp_desired:
            return self.drop_machine(s, None, s.cp[0])
        for n, d in sorted(s.md.items()):
            want = s.md_desired.get(n, (0, ""))[0]
            if len(d["machines"]) < want:
                return self.add_machine(s, n)
            old = [m for m in d["machines"] if m["version"] != s.version]
            if old:
                self.add_machine(s, n)
                return self.drop_machine(s, n, old[0])
            if len(d["machines"]) > want:
                return self.drop_machine(s, n, d["machines"][0])

    def deleting(self, s, obj):
        st = self.emu.store
        res = self.res("Cluster")
        if not s.deleting:
            s.deleting = True
            self.event(s, "phase Deleting")
        for n, d in sorted(s.md.items()):
            if d["machines"]:
                self.drop_machine(s, n, d["machines"][-1])
                break
        else:
            if s.cp:
                self.drop_machine(s, None, s.cp[-1])
            elif not s.stuck:
                self.set_status(s, obj)
                obj["metadata"]["finalizers"] = [f for f in obj["metadata"].get("finalizers") or [] if f != FINALIZER]
                st.write(res, s.ns, obj)
                if not st.exists(res, s.ns, s.name):
                    self.gone(s)
                return
        self.set_status(s, obj)
        st.write(res, s.ns, obj)

    def face_tick(self, s):
        fs = s.face.store
        cni = any(k == "DaemonSet" and g == "apps" and (
            (o["metadata"].get("labels") or {}).get("emu.idpmake.io/cni") == "true" or name in CNI_NAMES)
            for (g, k, ns, name), o in fs.objects.items())
        if cni != s.face_cni:
            s.face_cni = cni
            self.event(s, "cni %s" % ("present" if cni else "absent"))
            for m in s.cp + [m for d in s.md.values() for m in d["machines"]]:
                self.write_node(s, m, cni)

    # ---- status ---------------------------------------------------------------------------------------------
    def cond(self, s, t, ok, reason, message="", severity=None):
        status = "True" if ok is True else "False" if ok is False else "Unknown"
        old = s.conds.get(t)
        c = {"type": t, "status": status, "reason": reason, "message": message,
             "lastTransitionTime": old["lastTransitionTime"] if old and old["status"] == status else ts(),
             "observedGeneration": s.generation}
        if severity:
            c["x-severity"] = severity
        s.conds[t] = c
        return c

    def set_status(self, s, obj):
        s.generation = obj["metadata"].get("generation", 1)
        init = s.step == "provisioned"
        infra = s.step in ("provisioning", "provisioned")
        cni = s.face_cni
        conds = []
        if s.fail:
            conds.append(self.cond(s, "InfrastructureReady", False, s.fail[0], s.fail[1], "Error"))
        else:
            conds.append(self.cond(s, "InfrastructureReady", infra, "Ready" if infra else "NotReady",
                                   "" if infra else "DockerCluster status.initialization.provisioned is false"))
        conds.append(self.cond(s, "ControlPlaneInitialized", init, "Initialized" if init else "NotInitialized",
                               "" if init else "Control plane not yet initialized"))
        cp_up = sum(m["version"] == s.version for m in s.cp)
        cp_ready = len(s.cp) if cni else 0
        conds.append(self.cond(s, "ControlPlaneAvailable", init and cp_ready > 0, "Available" if cp_ready else
                               "NotAvailable", "" if cp_ready else "KubeadmControlPlane nodes are not ready"))
        w_desired = sum(d[0] for d in s.md_desired.values())
        w_all = [m for d in s.md.values() for m in d["machines"]]
        w_up = sum(m["version"] == s.version for m in w_all)
        w_ready = len(w_all) if cni else 0
        workers_ok = init and w_ready >= w_desired and len(w_all) == w_desired
        conds.append(self.cond(s, "WorkersAvailable", workers_ok, "Available" if workers_ok else "NotAvailable",
                               "" if workers_ok else "%d of %d worker nodes Ready (no CNI)" % (w_ready, w_desired)
                               if not cni else "%d of %d workers available" % (w_ready, w_desired)))
        cp_utd = init and cp_up == s.cp_desired and len(s.cp) == s.cp_desired
        w_utd = init and w_up == w_desired and len(w_all) == w_desired
        conds.append(self.cond(s, "ControlPlaneMachinesUpToDate", cp_utd, "UpToDate" if cp_utd else "NotUpToDate",
                               "" if cp_utd else "%d of %d control plane machines up to date" % (cp_up, s.cp_desired)))
        conds.append(self.cond(s, "WorkerMachinesUpToDate", w_utd, "UpToDate" if w_utd else "NotUpToDate",
                               "" if w_utd else "%d of %d worker machines up to date" % (w_up, w_desired)))
        upgrading = init and (any(m["version"] != s.version for m in s.cp + w_all))
        conds.append(self.cond(s, "RollingOut", upgrading, "RollingOut" if upgrading else "NotRollingOut",
                               "Rolling out to %s" % s.version if upgrading else ""))
        if s.class_missing:
            topo = self.cond(s, "TopologyReconciled", False, "ClusterClassNotReconciled",
                             "ClusterClass not found or not reconciled yet")
        elif init and any(m["version"] != s.version for m in s.cp):
            topo = self.cond(s, "TopologyReconciled", False, "ControlPlaneUpgradePending",
                             "Control plane rollout and upgrade to version %s on hold." % s.version)
        elif init and any(m["version"] != s.version for m in w_all):
            topo = self.cond(s, "TopologyReconciled", False, "MachineDeploymentsUpgradePending",
                             "MachineDeployment(s) %s rollout and upgrade to version %s on hold." % (
                                 ", ".join(sorted(d["object"] for d in s.md.values())), s.version))
        else:
            topo = self.cond(s, "TopologyReconciled", True, "ReconcileSucceeded")
        conds.append(topo)
        conds.append(self.cond(s, "RemoteConnectionProbe", init, "ProbeSucceeded" if init else "ProbeFailed"))
        avail = init and cni and workers_ok and topo["status"] == "True" and cp_ready > 0 and not s.fail
        conds.append(self.cond(s, "Available", avail, "Available" if avail else "NotAvailable"))
        if s.deleting:
            if s.stuck and not s.cp and not any(d["machines"] for d in s.md.values()):
                r = s.stuck.split(":", 1)[0].strip() or "DeletionFailed"
                conds.append(self.cond(s, "Deleting", False, r, s.stuck))
            else:
                conds.append(self.cond(s, "Deleting", True, "WaitingForWorkersDeletion" if w_all else
                                       "WaitingForControlPlaneDeletion"))
        phase = "Deleting" if s.deleting else {"new": "Pending", "pending": "Pending", "provisioning":
                                               "Provisioning", "provisioned": "Provisioned"}[s.step]
        converged = init and topo["status"] == "True" and cp_utd and w_utd and not upgrading
        if converged or s.step != "provisioned":
            s.observed = s.generation
        status = {"phase": phase, "observedGeneration": s.observed, "conditions": conds,
                  "initialization": {"infrastructureProvisioned": infra, "controlPlaneInitialized": init},
                  "controlPlane": {"desiredReplicas": s.cp_desired, "replicas": len(s.cp), "upToDateReplicas": cp_up,
                                   "readyReplicas": cp_ready, "availableReplicas": cp_ready},
                  "workers": {"desiredReplicas": w_desired, "replicas": len(w_all), "upToDateReplicas": w_up,
                              "readyReplicas": w_ready, "availableReplicas": w_ready}}
        if s.status is None or status != s.status:
            s.status = status
        obj["status"] = copy.deepcopy(status)
        if init:
            self.children_status(s, cp_ready, cni)
        last = [e["event"] for e in self.events.get("%s/%s" % (s.ns, s.name), [])[-40:]]
        for c in conds:
            tag = "condition %s %s %s" % (c["type"], c["status"], c["reason"])
            prev = [e for e in last if e.startswith("condition %s " % c["type"])]
            if not prev or prev[-1] != tag:
                self.event(s, tag)

    def children_status(self, s, cp_ready, cni):
        """the KubeadmControlPlane's and the MachineDeployments' spec and status follow the Cluster's"""
        st = self.emu.store
        kres = self.res("KubeadmControlPlane", "controlplane." + CORE)
        k = st.objects.get(st.key(kres, s.ns, s.kcp)) if kres else None
        if k is not None:
            k = copy.deepcopy(k)
            up = sum(m["version"] == s.version for m in s.cp)
            k["spec"].update(replicas=s.cp_desired, version=s.version)
            k["status"] = {"initialization": {"controlPlaneInitialized": True}, "replicas": len(s.cp),
                           "upToDateReplicas": up, "readyReplicas": cp_ready, "availableReplicas": cp_ready,
                           "version": min((m["version"] for m in s.cp), key=semver, default=s.version),
                           "observedGeneration": k["metadata"].get("generation", 1)}
            st.write(kres, s.ns, k)
        mres = self.res("MachineDeployment")
        for n, d in s.md.items():
            o = st.objects.get(st.key(mres, s.ns, d["object"])) if mres else None
            if o is None:
                continue
            o = copy.deepcopy(o)
            want = s.md_desired.get(n, (0, ""))[0]
            ms = d["machines"]
            ready = len(ms) if cni else 0
            o["spec"]["replicas"] = want
            o["spec"].setdefault("template", {}).setdefault("spec", {})["version"] = s.version
            o["status"] = {"replicas": len(ms), "upToDateReplicas": sum(m["version"] == s.version for m in ms),
                           "readyReplicas": ready, "availableReplicas": ready,
                           "phase": "Running" if len(ms) == want else "ScalingUp" if len(ms) < want else "ScalingDown",
                           "observedGeneration": o["metadata"].get("generation", 1)}
            st.write(mres, s.ns, o)

    # ---- control API ----------------------------------------------------------------------------------------
    def state(self):
        out = {"unreachable": self.unreachable, "topology_gate": self.gate, "api": self.api, "clusters": {}}
        for key, evs in self.events.items():
            ns, name = key.split("/", 1)
            s = self.clusters.get((ns, name))
            d = {"namespace": ns, "name": name, "events": evs, "exists": s is not None}
            if s is not None:
                d.update(uid=s.uid, step=s.step, phase=(s.status or {}).get("phase"), answering=s.face is not None,
                         server=self.server(s), version=getattr(s, "version", None), kcp=s.kcp,
                         control_plane=[dict(m) for m in s.cp],
                         workers={n: [dict(m) for m in d2["machines"]] for n, d2 in s.md.items()},
                         cni=s.face_cni, deleting=s.deleting)
            out["clusters"][key] = d
        return out

    def find(self, body):
        name, ns = body.get("cluster"), body.get("namespace")
        hits = [s for (n, nm), s in self.clusters.items() if nm == name and (ns is None or n == ns)]
        if not hits:
            raise KeyError("no such cluster: %s" % name)
        return hits[0]

    def control(self, method, body):
        """(code, answer) of GET/POST /_emu/capi"""
        if method == "GET":
            return 200, self.state()
        if not isinstance(body, dict):
            return 400, {"error": "a JSON object is needed"}
        known = {"cluster", "namespace", "fail_provision", "rotate_kubeconfig", "client_cert_days", "expire_credentials",
                 "delete_out_of_band", "stuck_delete", "unreachable", "providers"}
        if set(body) - known:
            return 400, {"error": "unknown fields: %s" % sorted(set(body) - known)}
        if "unreachable" in body:
            self.unreachable = bool(body["unreachable"])
        if "providers" in body:
            self.providers(body["providers"])
        if "cluster" not in body:
            return 200, self.state()
        try:
            s = self.find(body)
        except KeyError as e:
            return 404, {"error": str(e)}
        st = self.emu.store
        if body.get("fail_provision"):
            r, _, m = str(body["fail_provision"]).partition(":")
            s.fail = (r.strip(), m.strip() or r.strip())
            self.event(s, "fail_provision %s" % r.strip())
        if body.get("stuck_delete"):
            s.stuck = str(body["stuck_delete"])
            self.event(s, "stuck_delete")
        if "client_cert_days" in body:    # the next client certificate's validity (a rotation writes one)
            s.cert_days = int(body["client_cert_days"])
        if body.get("rotate_kubeconfig") and s.face is not None:
            s.face.token = "adm-" + rand(24)
            s.face.expired = False
            self.write_secret(s)
            self.event(s, "kubeconfig rotated")
        if "expire_credentials" in body and s.face is not None:
            s.face.expired = bool(body["expire_credentials"])
            self.event(s, "credentials expired" if s.face.expired else "credentials renewed")
        if body.get("delete_out_of_band"):
            res = self.res("Cluster")
            if st.exists(res, s.ns, s.name):
                st.delete(res, s.ns, s.name, force=True)
            self.gone(s)
            self.event(s, "deleted out of band")
        return 200, self.state()

    def providers(self, p):
        """{"clusterctl": [{name, type, version, [namespace], [providerName]}], "operator": [{kind, name,
        [namespace], version, [installed]}], "topology_gate": bool}: stored as a management cluster has them"""
        st = self.emu.store
        nsr = st.find("", "v1", "namespaces")
        for prov in (p.get("clusterctl") or []) + (p.get("operator") or []):
            ns = prov.get("namespace", "capi-system")
            if not st.exists(nsr, "", ns):
                st.write(nsr, "", {"metadata": {"name": ns}})
        for prov in p.get("clusterctl") or []:
            ns = prov.get("namespace", "capi-system")
            pn = prov.get("providerName") or (prov["name"].split("-", 1)[-1] if "-" in prov["name"] else prov["name"])
            st.write(self.res("Provider", "clusterctl." + CORE), ns, {
                "metadata": {"name": prov["name"], "namespace": ns, "labels": {
                    "clusterctl.cluster.x-k8s.io": "", "cluster.x-k8s.io/provider": prov["name"]}},
                "providerName": prov.get("providerName") or pn, "type": prov.get("type", "CoreProvider"),
                "version": prov.get("version", "v1.11.0"), "watchedNamespace": prov.get("watchedNamespace", "")})
        for prov in p.get("operator") or []:
            ns = prov.get("namespace", "capi-system")
            done = prov.get("installed", True)
            st.write(self.res(prov.get("kind", "CoreProvider"), "operator." + CORE), ns, {
                "metadata": {"name": prov["name"], "namespace": ns},
                "spec": {"version": prov.get("version", "v1.11.0")},
                "status": {"installedVersion": prov.get("version", "v1.11.0") if done else None,
                           "conditions": [{"type": t, "status": "True" if done else "False",
                                           "lastTransitionTime": ts(), "reason": "" if done else "Installing"}
                                          for t in ("PreflightCheckPassed", "ProviderInstalled", "Ready")]}})
        if "topology_gate" in p:
            self.gate = bool(p["topology_gate"])
            if not st.exists(nsr, "", "capi-system"):
                st.write(nsr, "", {"metadata": {"name": "capi-system"}})
            st.write(st.by_kind("apps", "Deployment"), "capi-system", {
                "metadata": {"name": "capi-controller-manager", "namespace": "capi-system",
                             "labels": {"cluster.x-k8s.io/provider": "cluster-api"}},
                "spec": {"replicas": 1, "selector": {"matchLabels": {"control-plane": "controller-manager"}},
                         "template": {"metadata": {"labels": {"control-plane": "controller-manager"}},
                                      "spec": {"containers": [{"name": "manager", "image":
                                                               "registry.k8s.io/cluster-api/cluster-api-controller:"
                                                               "v1.11.0",
                                                               "args": ["--leader-elect",
                                                                        "--feature-gates=MachinePool=true,"
                                                                        "ClusterTopology=%s" % str(self.gate).lower()
                                                                        ]}]}}}})
