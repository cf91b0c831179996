"""The Cluster API CustomResourceDefinitions the emulator serves with --capi, and the conversion of a
Cluster between its two served versions (Python 3 standard library only).

crds(api) returns the CRD objects to store in the management cluster: cluster.x-k8s.io (Cluster,
ClusterClass, MachineDeployment, Machine; v1beta2 preferred and v1beta1 served, or v1beta1 alone when
api == "v1beta1", as CAPI 1.10), controlplane (KubeadmControlPlane, KubeadmControlPlaneTemplate),
bootstrap (KubeadmConfig, KubeadmConfigTemplate), infrastructure (DockerCluster, DockerClusterTemplate,
DockerMachine, DockerMachineTemplate), clusterctl's Provider and the cluster-api-operator's kinds.

A Cluster is stored in the v1beta2 shape (spec.topology.classRef, status as capi.py writes it) and
converted on read (cluster_view) to the version asked for.
"""
import copy

CORE = "cluster.x-k8s.io"
OPERATOR_KINDS = ["CoreProvider", "BootstrapProvider", "ControlPlaneProvider", "InfrastructureProvider",
                  "AddonProvider", "IPAMProvider", "RuntimeExtensionProvider"]


def _crd(group, kind, plural, versions, namespaced=True, short=(), categories=("cluster-api",)):
    names = {"plural": plural, "singular": kind.lower(), "kind": kind, "listKind": kind + "List"}
    if short:
        names["shortNames"] = list(short)
    if categories:
        names["categories"] = list(categories)
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "%s.%s" % (plural, group),
                         "labels": {"cluster.x-k8s.io/provider": "cluster-api", "clusterctl.cluster.x-k8s.io": ""}},
            "spec": {"group": group, "scope": "Namespaced" if namespaced else "Cluster", "names": names,
                     "versions": [{"name": v, "served": True, "storage": i == 0,
                                   "subresources": {"status": {}},
                                   "schema": {"openAPIV3Schema": {"type": "object",
                                                                  "x-kubernetes-preserve-unknown-fields": True}}}
                                  for i, v in enumerate(versions)]}}


def crds(api="v1beta2"):
    core = ["v1beta1"] if api == "v1beta1" else ["v1beta2", "v1beta1"]
    out = [
        _crd(CORE, "Cluster", "clusters", core, short=["cl"]),
        _crd(CORE, "ClusterClass", "clusterclasses", core, short=["cc"]),
        _crd(CORE, "MachineDeployment", "machinedeployments", core, short=["md"]),
        _crd(CORE, "MachineSet", "machinesets", core, short=["ms"]),
        _crd(CORE, "Machine", "machines", core, short=["ma"]),
        _crd(CORE, "MachineHealthCheck", "machinehealthchecks", core, short=["mhc"]),
        _crd("addons." + CORE, "ClusterResourceSet", "clusterresourcesets", core[-1:] if api == "v1beta1" else core),
        _crd("controlplane." + CORE, "KubeadmControlPlane", "kubeadmcontrolplanes", core, short=["kcp"]),
        _crd("controlplane." + CORE, "KubeadmControlPlaneTemplate", "kubeadmcontrolplanetemplates", core),
        _crd("bootstrap." + CORE, "KubeadmConfig", "kubeadmconfigs", core),
        _crd("bootstrap." + CORE, "KubeadmConfigTemplate", "kubeadmconfigtemplates", core),
        _crd("infrastructure." + CORE, "DockerCluster", "dockerclusters", core),
        _crd("infrastructure." + CORE, "DockerClusterTemplate", "dockerclustertemplates", core),
        _crd("infrastructure." + CORE, "DockerMachine", "dockermachines", core),
        _crd("infrastructure." + CORE, "DockerMachineTemplate", "dockermachinetemplates", core),
        _crd("clusterctl." + CORE, "Provider", "providers", ["v1alpha3"], categories=()),
    ]
    for k in OPERATOR_KINDS:
        out.append(_crd("operator." + CORE, k, k.lower() + "s", ["v1alpha2"], categories=()))
    return out


# ---- Cluster conversion --------------------------------------------------------------------------
def _spec_to_v1beta2(spec):
    topo = spec.get("topology")
    if isinstance(topo, dict) and ("class" in topo or "classNamespace" in topo):
        ref = topo.setdefault("classRef", {})
        if "class" in topo:
            ref["name"] = topo.pop("class")
        if "classNamespace" in topo:
            ref["namespace"] = topo.pop("classNamespace")
        topo.pop("rolloutAfter", None)
    for f in ("controlPlaneRef", "infrastructureRef"):
        r = spec.get(f)
        if isinstance(r, dict) and "apiVersion" in r:
            spec[f] = {"apiGroup": r["apiVersion"].rpartition("/")[0], "kind": r.get("kind"), "name": r.get("name")}


def _spec_to_v1beta1(spec, ns):
    topo = spec.get("topology")
    if isinstance(topo, dict) and "classRef" in topo:
        ref = topo.pop("classRef") or {}
        if "name" in ref:
            topo["class"] = ref["name"]
        if ref.get("namespace"):
            topo["classNamespace"] = ref["namespace"]
    for f in ("controlPlaneRef", "infrastructureRef"):
        r = spec.get(f)
        if isinstance(r, dict) and "apiGroup" in r:
            ver = "v1beta1"
            spec[f] = {"apiVersion": "%s/%s" % (r["apiGroup"], ver), "kind": r.get("kind"), "name": r.get("name"),
                       "namespace": ns}


def to_storage(obj):
    """a Cluster as written (either version) -> the stored (v1beta2) shape of its spec"""
    if isinstance(obj.get("spec"), dict):
        _spec_to_v1beta2(obj["spec"])


def v1beta1_conditions(st):
    """the v1beta1 (CAPI 1.10) conditions of a v1beta2 status: severity on False ones, Ready as a summary"""
    conds = {c["type"]: c for c in st.get("conditions") or []}
    out = []

    def add(t, src, severity="Info"):
        c = conds.get(src)
        if c is None:
            return
        d = {"type": t, "status": c["status"], "lastTransitionTime": c.get("lastTransitionTime")}
        if c["status"] != "True":
            d["reason"], d["message"] = c.get("reason", ""), c.get("message", "")
            d["severity"] = c.get("x-severity") or severity
        out.append(d)
    init = conds.get("ControlPlaneInitialized", {}).get("status") == "True"
    infra = conds.get("InfrastructureReady") or {}
    failed = infra.get("x-severity") == "Error"
    ready = {"type": "Ready", "status": "True" if init and infra.get("status") == "True" else "False",
             "lastTransitionTime": infra.get("lastTransitionTime")}
    if ready["status"] == "False":
        src = infra if infra.get("status") != "True" else conds.get("ControlPlaneInitialized") or {}
        ready.update(reason=src.get("reason") or "WaitingForControlPlane", message=src.get("message", ""),
                     severity="Error" if failed else "Info")
    out.append(ready)
    add("ControlPlaneInitialized", "ControlPlaneInitialized")
    add("ControlPlaneReady", "ControlPlaneAvailable")
    add("InfrastructureReady", "InfrastructureReady")
    add("TopologyReconciled", "TopologyReconciled")
    return out


def cluster_view(obj, version):
    """the stored Cluster as the version asked for shows it (a copy)"""
    out = copy.deepcopy(obj)
    ns = out.get("metadata", {}).get("namespace", "")
    spec = out.get("spec")
    st = out.get("status")
    clean = [{k: v for k, v in c.items() if not k.startswith("x-")} for c in (st or {}).get("conditions") or []]
    if version == "v1beta1":
        if isinstance(spec, dict):
            _spec_to_v1beta1(spec, ns)
        if isinstance(st, dict):
            init = st.get("initialization") or {}
            v1 = {"phase": st.get("phase"), "infrastructureReady": bool(init.get("infrastructureProvisioned")),
                  "controlPlaneReady": bool(init.get("controlPlaneInitialized")),
                  "conditions": v1beta1_conditions(st), "v1beta2": {"conditions": clean}}
            if "observedGeneration" in st:
                v1["observedGeneration"] = st["observedGeneration"]
            out["status"] = v1
    elif isinstance(st, dict):
        if isinstance(spec, dict):
            _spec_to_v1beta2(spec)
        st["conditions"] = clean
        st["deprecated"] = {"v1beta1": {"conditions": v1beta1_conditions(obj.get("status") or {})}}
    return out
