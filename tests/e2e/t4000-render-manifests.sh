#!/bin/bash
# Rendering `manifests` packages: one file per object, KIND.NAME.yaml in lower
# case (NAMESPACE.KIND.NAME.yaml on a collision); multi-document files split;
# stable order and formatting (sorted keys, identical bytes on a re-render and
# from a reordered or restyled source); objects without apiVersion, kind or
# metadata.name are errors naming the file; render to stdout and -o DIR;
# render changes no state; rewrite (PCRE2) with ${var} in replace.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p d/packages/m/sub
cd d || exit 1
cat >distro.yaml <<'EOF'
idpmake: 1
name: render
vars: {domain: prod.example}
packages:
  m:
    type: manifests
    path: packages/m
    namespace: apps
    rewrite:
      - {match: 'dev\.example', replace: '${domain}'}
      - {match: 'NS=(\w+)', replace: 'ns-$1-${namespace}-${cluster}'}
      - {match: '(?<=image: )busybox(?=:)', replace: 'registry.local/busybox'}
  other:
    type: manifests
    path: packages/other
EOF
cat >packages/m/multi.yaml <<'EOF'
# three objects and an empty document
apiVersion: v1
kind: ConfigMap
metadata:
  namespace: one
  name: shared
data:
  z: "1"
  a: "true"
  url: https://web.dev.example/x
  n: NS=foo
  img: "image: busybox:1.36"
  plain: "image: busybox"
---
apiVersion: v1
kind: ConfigMap
metadata: {name: shared, namespace: two}
data: {b: x}
---
---
kind: Service
apiVersion: v1
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80, name: http}]
  publishNotReadyAddresses: true
EOF
cat >packages/m/sub/deploy.json <<'EOF'
{"apiVersion": "apps/v1", "kind": "Deployment",
 "metadata": {"name": "web", "labels": {"app": "web"}},
 "spec": {"replicas": 2, "selector": {"matchLabels": {"app": "web"}}}}
EOF
mkmanifest packages/m/sub/secret.yml Secret creds
echo 'not a manifest: ignored' >packages/m/README.md
echo 'echo ignored' >packages/m/sub/script.sh
mkmanifest packages/other/cm.yaml ConfigMap other

# ---- render to stdout --------------------------------------------------------
t_ok "render (to stdout)" idpmake render
cp "$STDOUT" render.out
t_grep "a document per object, headed by its path" '^# in-cluster/m/service\.web\.yaml$' render.out
t_grep "documents are separated by ---" '^---$' render.out
t_grep "the JSON file's Deployment" '^# in-cluster/m/deployment\.web\.yaml$' render.out
t_grep "the .yml file's Secret" '^# in-cluster/m/secret\.creds\.yaml$' render.out
t_grep "names collide: the namespace comes first (one)" '^# in-cluster/m/one\.configmap\.shared\.yaml$' render.out
t_grep "and (two)" '^# in-cluster/m/two\.configmap\.shared\.yaml$' render.out
t_grep "the other package" '^# in-cluster/other/configmap\.other\.yaml$' render.out
t_nogrep "README.md is not an object" 'not a manifest' render.out
t_nogrep "a comment of the source is not copied" 'three objects' render.out
t_eq "6 objects in all" 6 "$(grep -c '^# in-cluster/' render.out)"
t_ok "render wrote no state database" test ! -e .idpmake/state.db
t_ok "render made no GitOps commit" test ! -e .idpmake/gitops.git/refs/heads/main

# ---- render -o DIR ------------------------------------------------------------
t_ok "render -o out" idpmake render -o out
(cd out && find . -type f | LC_ALL=C sort) >files.txt
cat >files.want <<'EOF'
./in-cluster/m/deployment.web.yaml
./in-cluster/m/one.configmap.shared.yaml
./in-cluster/m/secret.creds.yaml
./in-cluster/m/service.web.yaml
./in-cluster/m/two.configmap.shared.yaml
./in-cluster/other/configmap.other.yaml
EOF
t_eq "one file per object under out/in-cluster/PKG/, KIND.NAME.yaml in lower case" \
	"$(cat files.want)" "$(cat files.txt)"
t_grep "the multi-document file is split: the Service is alone in its file" '^kind: Service$' out/in-cluster/m/service.web.yaml
t_nogrep "with no other object" '^kind: ConfigMap$' out/in-cluster/m/service.web.yaml
t_nogrep "a file holds one document (no ---)" '^---' out/in-cluster/m/service.web.yaml
t_ok "render -o wrote no state database" test ! -e .idpmake/state.db

# Every file is one YAML document with sorted keys and the source's types.
python3 - out >check.txt 2>&1 <<'EOF'
import os, sys, yaml
root = sys.argv[1]
def keys_sorted(node, path):
    if isinstance(node, yaml.MappingNode):
        ks = [k.value for k, _ in node.value]
        if ks != sorted(ks):
            print("unsorted", path, ks)
        for k, v in node.value:
            keys_sorted(v, path + "." + k.value)
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            keys_sorted(v, "%s[%d]" % (path, i))
for dp, _, fs in os.walk(root):
    for f in sorted(fs):
        p = os.path.join(dp, f)
        text = open(p).read()
        docs = list(yaml.compose_all(text))
        print("docs", f, len(docs))
        keys_sorted(docs[0], f)
        if not text.endswith("\n") or text.endswith("\n\n"):
            print("badend", f)
        if "\t" in text:
            print("tab", f)
cm = yaml.safe_load(open(os.path.join(root, "in-cluster/m/one.configmap.shared.yaml")))
print("z", repr(cm["data"]["z"]))
print("a", repr(cm["data"]["a"]))
print("name", cm["metadata"]["name"])
svc = yaml.safe_load(open(os.path.join(root, "in-cluster/m/service.web.yaml")))
print("port", repr(svc["spec"]["ports"][0]["port"]))
print("pnra", repr(svc["spec"]["publishNotReadyAddresses"]))
dep = yaml.safe_load(open(os.path.join(root, "in-cluster/m/deployment.web.yaml")))
print("replicas", repr(dep["spec"]["replicas"]))
print("url", cm["data"]["url"])
print("n", cm["data"]["n"])
print("img", cm["data"]["img"])
print("plain", cm["data"]["plain"])
EOF
t_nogrep "each file is one YAML document" '^docs .* [02-9]' check.txt
t_nogrep "keys are sorted at every level" '^unsorted' check.txt
t_nogrep "each file ends with one newline" '^badend' check.txt
t_nogrep "no tabs" '^tab' check.txt
t_grep "the string \"1\" stays a string" "^z '1'$" check.txt
t_grep "the string \"true\" stays a string" "^a 'true'$" check.txt
t_grep "the number 80 stays a number" '^port 80$' check.txt
t_grep "the boolean stays a boolean" '^pnra True$' check.txt
t_grep "the JSON number stays a number" '^replicas 2$' check.txt
t_grep "the name is inside the file" '^name shared$' check.txt

# ---- rewrite: PCRE2 substitutions, ${var} in replace -----------------------------------
t_grep "rewrite with \${domain}" '^url https://web\.prod\.example/x$' check.txt
t_grep "rewrite with a capture group, \${namespace} and \${cluster}" '^n ns-foo-apps-in-cluster$' check.txt
t_grep "rewrite with PCRE2 look-behind and look-ahead" '^img image: registry\.local/busybox:1\.36$' check.txt
t_grep "the look-ahead keeps what does not match" '^plain image: busybox$' check.txt

# ---- stable: a re-render gives identical bytes --------------------------------------------
t_ok "render -o out2 again" idpmake render -o out2
t_ok "identical bytes" diff -r out out2
t_ok "render to stdout again" idpmake render
cp "$STDOUT" render2.out
t_ok "identical stdout" cmp render.out render2.out

# ---- stable: a reordered source gives the same output -----------------------------------
cp -R packages/m m.orig
cat >packages/m/multi.yaml <<'EOF'
kind: Service
metadata:
  name: web
apiVersion: v1
spec:
  publishNotReadyAddresses: true
  ports:
    - name: http
      port: 80
  selector:
    app: web
---
data:
  plain: "image: busybox"
  img: "image: busybox:1.36"
  n: NS=foo
  url: https://web.dev.example/x
  a: "true"
  z: "1"
metadata:
  name: shared
  namespace: one
kind: ConfigMap
apiVersion: v1
---
data: {b: x}
apiVersion: v1
kind: ConfigMap
metadata: {namespace: two, name: shared}
EOF
t_ok "render -o out3 from the reordered file" idpmake render -o out3
t_ok "reordered keys and documents: identical output" diff -r out out3

# the same objects, restyled: other quotes, flow and block styles, JSON.
cat >packages/m/multi.yaml <<'EOF'
{"apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
 "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "name": "http"}],
          "publishNotReadyAddresses": true}}
---
apiVersion: "v1"
kind: 'ConfigMap'
metadata: {namespace: "one", name: 'shared'}
data:
  z: '1'
  a: 'true'
  url: "https://web.dev.example/x"
  n: 'NS=foo'
  img: 'image: busybox:1.36'
  plain: 'image: busybox'
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: shared
  namespace: two
data:
  b: "x"
EOF
t_ok "render -o out4 from the restyled file" idpmake render -o out4
t_ok "restyled source (quotes, flow style, JSON): identical output" diff -r out out4
rm -rf packages/m && mv m.orig packages/m

# ---- render -o an existing folder: stale files go -----------------------------------------
t_ok "render -o out again, after removing the Secret" sh -c "rm packages/m/sub/secret.yml && '$IDPMAKE' render -o out"
t_ok "the Secret's file is gone from out/in-cluster/m" test ! -e out/in-cluster/m/secret.creds.yaml
mkmanifest packages/m/sub/secret.yml Secret creds

# ---- collisions are resolved only where needed ------------------------------------------------
mkdir -p packages/other/more
mkmanifest packages/other/more/cm.yaml ConfigMap other kube-system
t_ok "two ConfigMaps 'other', one in kube-system, one without namespace" idpmake render -o out5
t_ok "the namespaced one is kube-system.configmap.other.yaml" test -f out5/in-cluster/other/kube-system.configmap.other.yaml
t_eq "the folder holds two files, one per object" 2 "$(find out5/in-cluster/other -type f | wc -l)"
t_grep "kube-system's file holds kube-system's object" '^  namespace: kube-system$' out5/in-cluster/other/kube-system.configmap.other.yaml
# the other object's file, whatever its name (the engine calls it _.configmap.other.yaml)
t_ok "the collision leaves no plain configmap.other.yaml for kube-system's" test ! -e out5/in-cluster/other/configmap.other.yaml
other_file=$(find out5/in-cluster/other -type f ! -name 'kube-system.*' | head -n 1)
t_ok "the object without namespace has a file of its own ($other_file)" test -n "$other_file"
t_nogrep "which holds no kube-system object" kube-system "${other_file:-/nonexistent}"
t_ok "m's unique names stay short" test -f out5/in-cluster/m/service.web.yaml
rm -rf packages/other/more

# ---- objects without apiVersion, kind or metadata.name ---------------------------------------
bad_object() {
	local desc=$1
	cat >packages/m/bad.yaml
	t_exit 1 "$desc: render exits 1" idpmake render
	t_grep "$desc: the error names the file" 'packages/m/bad\.yaml:[0-9]+:[0-9]+: error: ' "$STDERR"
	t_exit 1 "$desc: render -o exits 1" idpmake render -o outbad
	rm -f packages/m/bad.yaml
}
bad_object "no kind" <<'EOF'
apiVersion: v1
metadata: {name: nokind}
EOF
t_grep "no kind: the error says what is missing" 'kind' "$STDERR"
bad_object "no metadata.name" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {namespace: x}
EOF
t_grep "no metadata.name: the error says what is missing" 'metadata\.name' "$STDERR"
bad_object "no apiVersion" <<'EOF'
kind: ConfigMap
metadata: {name: noapi}
EOF
bad_object "the bad object is the second document" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: fine}
---
apiVersion: v1
kind: ConfigMap
metadata: {}
EOF
t_grep "the error points at the second document (line 5)" 'packages/m/bad\.yaml:5:[0-9]+: error: ' "$STDERR"
bad_object "malformed YAML in a manifest" <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata: {name: x
EOF
t_grep "malformed YAML: says so" 'malformed YAML' "$STDERR"
t_ok "a failed render wrote no state" test ! -e .idpmake/state.db

# ---- render TARGET -----------------------------------------------------------------------------
t_ok "render other" idpmake render other
t_grep "renders other" '^# in-cluster/other/configmap\.other\.yaml$' "$STDOUT"
t_nogrep "and only other" '^# in-cluster/m/' "$STDOUT"

# ---- clusters, cluster vars and git.path ------------------------------------------------------
mkdir -p "$T/multi/packages/web"
mkmanifest "$T/multi/packages/web/cm.yaml" ConfigMap web
echo '  url: https://web.dev.example/' >>"$T/multi/packages/web/cm.yaml"
mkdistro "$T/multi" <<'EOF'
idpmake: 1
name: multi
vars: {domain: prod.example}
git:
  path: "clusters/${cluster}/apps/${package}"
clusters:
  eu: {server: https://eu.example, vars: {domain: eu.example}}
  us: {server: https://us.example}
packages:
  web:
    type: manifests
    path: packages/web
    rewrite:
      - {match: 'dev\.example', replace: '${domain}'}
EOF
t_ok "render -o out, two clusters and a git.path" idpmake -C "$T/multi" render -o out
t_ok "files go under out/GIT.PATH (eu)" test -f "$T/multi/out/clusters/eu/apps/web/configmap.web.yaml"
t_ok "and (us)" test -f "$T/multi/out/clusters/us/apps/web/configmap.web.yaml"
t_grep "eu's cluster var overrides the distro's" 'https://web\.eu\.example/' "$T/multi/out/clusters/eu/apps/web/configmap.web.yaml"
t_grep "us has the distro's" 'https://web\.prod\.example/' "$T/multi/out/clusters/us/apps/web/configmap.web.yaml"
t_ok "render -o only eu/web" idpmake -C "$T/multi" render -o only eu/web
t_ok "renders eu" test -f "$T/multi/only/clusters/eu/apps/web/configmap.web.yaml"
t_ok "and not us" test ! -e "$T/multi/only/clusters/us"

# ---- up, then render: no state change --------------------------------------------------------
t_ok "up" idpmake up
t_ok "up made a commit" git --git-dir=.idpmake/gitops.git rev-parse --verify -q main
head=$(git --git-dir=.idpmake/gitops.git rev-parse main)
git --git-dir=.idpmake/gitops.git ls-tree -r --name-only main | grep -v "^\.idpmake/" >tree.txt
t_eq "the commit holds the same files as render -o" "$(sed 's#^\./##' files.want)" "$(cat tree.txt)"
t_eq "with the same bytes (the Service)" "$(cat out/in-cluster/m/service.web.yaml)" \
	"$(git --git-dir=.idpmake/gitops.git show main:in-cluster/m/service.web.yaml)"
sum=$(cksum <.idpmake/state.db)
echo '  extra: "1"' >>packages/other/cm.yaml
t_ok "render after a change" idpmake render -o out6
t_grep "render shows the change" 'extra' out6/in-cluster/other/configmap.other.yaml
t_eq "render left state.db as it was" "$sum" "$(cksum <.idpmake/state.db)"
t_eq "render made no commit" "$head" "$(git --git-dir=.idpmake/gitops.git rev-parse main)"
t_ok "plan" idpmake plan --json
t_grep "plan still has other's render to do" '"in-cluster/other:render"' "$STDOUT"
t_nogrep "and not m's" '"in-cluster/m:render"' "$STDOUT"


# ---- a rewrite that would multiply the text: an error, not gigabytes (fuzz-rewrite) ----------
# The empty pattern matches at each of 20,000 places; a 20 kB replacement there
# would make 400 MB (and libyaml a long time).  A rewrite may make a text 4 times
# its size and 4 MiB more.
mkdir -p "$T/rwbig/packages/w"
python3 -c 'print("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: w}\ndata: {x: " + "y" * 20000 + "}")' \
	>"$T/rwbig/packages/w/cm.yaml"
python3 - "$T/rwbig/distro.yaml" <<'EOF2'
import sys
open(sys.argv[1], "w").write("""idpmake: 1
name: rwbig
packages:
  w:
    type: manifests
    path: packages/w
    rewrite:
      - {match: '', replace: '%s'}
""" % ("z" * 20000))
EOF2
t_exit 1 "a multiplying rewrite: render exits 1" timeout 10 "$IDPMAKE" -C "$T/rwbig" render
t_grep "and says why" "rewrite '' would make the text larger than 4274556 bytes \(4 times its 20063 bytes and 4 MiB more; does it match the empty string\?\)" "$OUTPUT"
t_nogrep "with no sanitizer report" 'runtime error|AddressSanitizer' "$OUTPUT"

t_done
