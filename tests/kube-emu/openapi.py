"""The OpenAPI v3 documents kubectl reads before an apply (Python 3 standard library only).

kubectl (1.27 and later) validates what it applies by asking the server to (the fieldValidation query
parameter), once it has seen in /openapi/v3 that the server takes that parameter on the kind's PATCH:
root() lists one document per group-version, group_version() holds, for each resource, the item path with
the fieldValidation parameter (on the path and on the operation, as kube-apiserver has it) and a PATCH operation tagged x-kubernetes-group-version-kind.  Without
these kubectl downloads /openapi/v2 to validate on its side, and fails when there is none.

No schemas are given: kubectl then builds client-side apply patches from the types it knows (and JSON
merge patches for custom resources), and validation is left to the server, which here checks names,
namespaces and kinds, not unknown fields.
"""
import hashlib
import json


def _key(group, version):
    return "api/" + version if not group else "apis/%s/%s" % (group, version)


def group_version(types, group, version):
    paths = {}
    for t in types:
        if t.group != group or t.version != version:
            continue
        base = "/" + _key(group, version) + ("/namespaces/{namespace}/" if t.namespaced else "/") + t.plural
        params = [{"name": "name", "in": "path", "required": True, "schema": {"type": "string"}},
                  {"name": "fieldValidation", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
                  {"name": "fieldManager", "in": "query", "schema": {"type": "string", "uniqueItems": True}},
                  {"name": "force", "in": "query", "schema": {"type": "boolean", "uniqueItems": True}}]
        if t.namespaced:
            params.insert(1, {"name": "namespace", "in": "path", "required": True, "schema": {"type": "string"}})
        gvk = {"group": group, "version": version, "kind": t.kind}
        paths[base + "/{name}"] = {
            "parameters": params,
            "get": {"operationId": "read" + t.kind, "x-kubernetes-action": "get",
                    "x-kubernetes-group-version-kind": gvk, "responses": {"200": {"description": "OK"}}},
            "patch": {"operationId": "patch" + t.kind, "x-kubernetes-action": "patch", "parameters": params[-3:],
                      "x-kubernetes-group-version-kind": gvk, "responses": {"200": {"description": "OK"}}},
        }
    if not paths:
        return None
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.32.0"}, "paths": paths,
            "components": {"schemas": {}}}


def root(types):
    out = {}
    for gv in sorted({(t.group, t.version) for t in types}):
        doc = group_version(types, *gv)
        h = hashlib.sha512(json.dumps(doc, sort_keys=True).encode()).hexdigest()[:128].upper()
        out[_key(*gv)] = {"serverRelativeURL": "/openapi/v3/%s?hash=%s" % (_key(*gv), h)}
    return {"paths": out}
