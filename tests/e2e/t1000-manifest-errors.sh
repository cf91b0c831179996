#!/bin/bash
# Manifest errors: every kind of bad distro.yaml is refused with
# `FILE:LINE:COL: error: ...` on stderr and exit 2 by validate, plan and up,
# and nothing is written (no GitOps repository, no state). A good distro
# validates with exit 0.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

n=0

mkmanifest "$T/template/packages/a/cm.yaml" ConfigMap a
mkmanifest "$T/template/packages/b/cm.yaml" ConfigMap b

# newdistro: a fresh distro folder $d with two package folders (packages/a,
# packages/b), each holding one ConfigMap; distro.yaml from stdin.
newdistro() {
	n=$((n + 1))
	d=$T/c$n
	cp -R "$T/template" "$d"
	cat >"$d/distro.yaml"
}

# bad DESC LOC RE: distro.yaml from stdin; `validate` exits 2 and prints, on
# stderr, distro.yaml:LOC: error: ...RE (LOC is LINE:COL, or "" for any).
bad() {
	newdistro
	check "$@"
}

# check DESC LOC RE: the same on the distro $d as it is.
check() {
	local desc=$1 loc=${2:-[0-9]+:[0-9]+} re=$3
	t_exit 2 "$desc: validate exits 2" idpmake -C "$d" validate
	t_grep "$desc: stderr has distro.yaml:$loc: error: /$re/" "^distro\.yaml:$loc: error: .*$re" "$STDERR"
}

# refused DESC: plan and up on the last distro exit 2 with the same error,
# and leave neither a GitOps repository nor a state database behind.
refused() {
	local desc=$1
	t_exit 2 "$desc: plan exits 2" idpmake -C "$d" plan
	t_grep "$desc: plan prints the located error" '^distro\.yaml:[0-9]+:[0-9]+: error: ' "$STDERR"
	t_exit 2 "$desc: up exits 2" idpmake -C "$d" up
	t_grep "$desc: up prints the located error" '^distro\.yaml:[0-9]+:[0-9]+: error: ' "$STDERR"
	t_exit 2 "$desc: up by default (no command) exits 2" idpmake -C "$d"
	t_ok "$desc: a refused up leaves no .idpmake/gitops.git" test ! -e "$d/.idpmake/gitops.git"
	t_ok "$desc: a refused up leaves no .idpmake/state.db" test ! -e "$d/.idpmake/state.db"
}

# ---- a good distro -------------------------------------------------------
newdistro <<'EOF'
idpmake: 1
name: good
description: a distro that validates
vars: {domain: example.com, env: prod}
packages:
  a:
    type: manifests
    path: packages/a
    namespace: "a-${env}"
  b:
    type: manifests
    path: packages/b
    needs: [a]
    rewrite:
      - {match: 'b', replace: '${domain}'}
EOF
t_exit 0 "a good distro validates with exit 0" idpmake -C "$d" validate
t_nogrep "and prints no error" 'error' "$OUTPUT"
t_exit 0 "validate with -f names the manifest" idpmake -C "$d" -f distro.yaml validate
good=$d

# ---- malformed YAML -------------------------------------------------------
bad "malformed YAML (unclosed flow sequence)" "" 'malformed YAML' <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/a, needs: [b
EOF
refused "malformed YAML"

bad "malformed YAML (a tab in the indentation)" 6:1 'malformed YAML' <<EOF
idpmake: 1
name: demo
packages:
  a:
    type: manifests
$(printf '\t')path: packages/a
EOF

bad "malformed YAML (bad indentation)" 7:4 'malformed YAML' <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
   oops: x
EOF

bad "a duplicate package key" 7:3 "duplicate key 'a'" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
  a:
    type: manifests
    path: packages/b
EOF

bad "an empty manifest" "" 'empty' </dev/null

# ---- unknown keys, with "did you mean" -------------------------------------
bad "unknown top-level key pakages" 3:1 "unknown key 'pakages'.*did you mean 'packages'" <<'EOF'
idpmake: 1
name: demo
pakages:
  a: {type: manifests, path: packages/a}
EOF
refused "pakages"

bad "unknown package key namespce" 7:5 "unknown key 'namespce'.*did you mean 'namespace'" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
    namespce: apps
EOF

bad "unknown key in sync (wiat)" 7:12 "unknown key 'wiat'.*did you mean 'wait'" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
    sync: {wiat: healthy}
EOF

bad "unknown key in a cluster (sever)" 4:9 "unknown key 'sever'.*did you mean 'server'" <<'EOF'
idpmake: 1
name: demo
clusters:
  one: {sever: https://one.example}
packages:
  a: {type: manifests, path: packages/a}
EOF

bad "an unknown key unlike any other" 3:1 "unknown key 'zzzzzzzz'" <<'EOF'
idpmake: 1
name: demo
zzzzzzzz: 1
packages:
  a: {type: manifests, path: packages/a}
EOF
t_nogrep "an unknown key unlike any other: no absurd suggestion" "zzzzzzzz'; did you mean" "$STDERR"

bad "an unknown package type" 5:11 "unknown package type 'kustomise'.*did you mean 'kustomize'" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: kustomise
    path: packages/a
EOF

# ---- names ----------------------------------------------------------------
bad "a distro name that is not a DNS-1123 label" 2:7 "'Demo_x' is not a DNS-1123 label" <<'EOF'
idpmake: 1
name: Demo_x
packages:
  a: {type: manifests, path: packages/a}
EOF

bad "a package name that is not a DNS-1123 label" 4:3 "'A_b' is not a DNS-1123 label" <<'EOF'
idpmake: 1
name: demo
packages:
  A_b:
    type: manifests
    path: packages/a
EOF
refused "bad package name"

bad "a package name that ends with '-'" 4:3 "'web-' is not a DNS-1123 label" <<'EOF'
idpmake: 1
name: demo
packages:
  web-: {type: manifests, path: packages/a}
EOF

long=$(printf 'x%.0s' $(seq 64))
bad "a package name of 64 characters" 4:3 "not a DNS-1123 label" <<EOF
idpmake: 1
name: demo
packages:
  $long: {type: manifests, path: packages/a}
EOF

bad "a cluster name that is not a DNS-1123 label" 4:3 "'In_Cluster' is not a DNS-1123 label" <<'EOF'
idpmake: 1
name: demo
clusters:
  In_Cluster: {server: https://x.example}
packages:
  a: {type: manifests, path: packages/a}
EOF

bad "no name" "" "needs a 'name'" <<'EOF'
idpmake: 1
packages:
  a: {type: manifests, path: packages/a}
EOF

# ---- needs and cycles -----------------------------------------------------
bad "needs names a package that does not exist" 4:50 "needs 'zzz'.*not a package" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/a, needs: [zzz]}
EOF
refused "needs zzz"

bad "needs a package on a cluster that does not exist" "" "no cluster 'other'" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/a, needs: [other/b]}
  b: {type: manifests, path: packages/b}
EOF

bad "a two-package cycle" "" "dependency cycle: (a -> b -> a|b -> a -> b)\$" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/a, needs: [b]}
  b: {type: manifests, path: packages/b, needs: [a]}
EOF
refused "cycle"

bad "a three-package cycle" "" "dependency cycle: (a -> b -> c -> a|b -> c -> a -> b|c -> a -> b -> c)\$" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/a, needs: [b]}
  b: {type: manifests, path: packages/a, needs: [c]}
  c: {type: manifests, path: packages/a, needs: [a]}
EOF

bad "a package that needs itself" 4:50 "dependency cycle: a -> a\$" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/a, needs: [a]}
EOF

# ---- paths ----------------------------------------------------------------
bad "a path with '..' out of the distro folder" 4:30 "'\.\./c1' escapes the distro folder" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: ../c1}
EOF
refused "path .."

bad "a path that climbs out and back in" "" "escapes the distro folder" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/../../c1/packages/a}
EOF

bad "an absolute path" 4:30 "'/etc' is absolute" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: /etc}
EOF

mkmanifest "$T/outside/x/cm.yaml" ConfigMap outside
newdistro <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: link}
EOF
ln -s ../outside "$d/link"
check "a path that escapes through a symlink" 4:30 "'link' escapes the distro folder through a symlink"
refused "symlink path"

newdistro <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/out/x}
EOF
ln -s ../../outside "$d/packages/out"
check "a symlink deeper in the path" 4:30 "escapes the distro folder"

bad "a path that does not exist" 4:30 "'packages/nope' does not exist" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/nope}
EOF

# ---- variables ------------------------------------------------------------
bad "an undefined variable in namespace" 7:16 "undefined variable '\\$\\{nope\\}'" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
    namespace: "${nope}"
EOF

bad "an undefined variable in rewrite.replace" 9:18 "undefined variable '\\$\\{nope\\}'" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
    rewrite:
      - match: 'x'
        replace: '${nope}'
EOF

bad "an undefined variable in set" 7:16 "undefined variable '\\$\\{nope\\}'" <<'EOF'
idpmake: 1
name: demo
packages:
  h:
    type: helm
    chart: {repo: https://charts.example, name: web, version: 1.0.0}
    set: {a.b: "${nope}"}
EOF
refused "undefined var in set"

bad "an undefined variable in git.path" 4:9 "undefined variable '\\$\\{nope\\}'" <<'EOF'
idpmake: 1
name: demo
git:
  path: "${cluster}/${nope}/${package}"
packages:
  a: {type: manifests, path: packages/a}
EOF

bad "a variable defined on one cluster only" "" "undefined variable '\\$\\{region\\}'" <<'EOF'
idpmake: 1
name: demo
clusters:
  one: {server: https://one.example, vars: {region: eu}}
  two: {server: https://two.example}
packages:
  a:
    type: manifests
    path: packages/a
    namespace: "app-${region}"
EOF

bad "an unterminated \${" "" "unterminated" <<'EOF'
idpmake: 1
name: demo
vars: {x: y}
packages:
  a:
    type: manifests
    path: packages/a
    namespace: "app-${x"
EOF

bad "setting a built-in variable" "3:(8|17)" "'cluster' is a built-in variable" <<'EOF'
idpmake: 1
name: demo
vars: {cluster: x}
packages:
  a: {type: manifests, path: packages/a}
EOF

# ---- the format version ---------------------------------------------------
bad "a missing format version" 1:1 "missing format version" <<'EOF'
name: demo
packages:
  a: {type: manifests, path: packages/a}
EOF
refused "missing version"

bad "format version 2" 1:10 "unsupported format version '2'" <<'EOF'
idpmake: 2
name: demo
packages:
  a: {type: manifests, path: packages/a}
EOF

bad "format version 'one'" 1:10 "unsupported format version" <<'EOF'
idpmake: one
name: demo
EOF

# ---- sources ---------------------------------------------------------------
bad "two sources in a package" 5:5 "exactly one source.*has 2" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
    git: {url: https://git.example/x.git, ref: main}
EOF
refused "two sources"

bad "no source in a package" "" "exactly one source.*has 0" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests}
EOF

bad "a package without a type" "" "needs a 'type'" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {path: packages/a}
EOF

# ---- wrong types ------------------------------------------------------------
bad "needs: a string" 8:12 "needs must be a list" <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/a}
  b:
    type: manifests
    path: packages/b
    needs: a
EOF
refused "needs a string"

bad "labels: a number" 7:13 "labels must be a map" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
    labels: 3
EOF

bad "namespace: a list" 7:16 "namespace must be a string" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
    namespace: [x]
EOF

bad "packages: a list" 3:11 "packages must be a map" <<'EOF'
idpmake: 1
name: demo
packages: [a]
EOF

bad "hook when: sometimes" "" "when must be changed, once or always" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    type: manifests
    path: packages/a
    hooks:
      post:
        - {name: x, run: "true", when: sometimes}
EOF

bad "a profile that names no package" "" "profile 'core' names 'zzz'" <<'EOF'
idpmake: 1
name: demo
profiles:
  core: [zzz]
packages:
  a: {type: manifests, path: packages/a}
EOF

# ---- an argocd-app package whose Application makes a package name that is no label ----
# (the error was printed while its files were read quietly, and dropped)
newdistro <<'EOF'
idpmake: 1
name: demo
packages:
  a: {type: manifests, path: packages/a}
  apps: {type: argocd-app, path: apps}
EOF
mkdir -p "$d/apps"
printf 'apiVersion: argoproj.io/v1alpha1\nkind: Application\nmetadata: {name: foo.bar}\nspec: {}\n' >"$d/apps/app.yaml"
check "argocd-app: Application foo.bar makes package apps-foo.bar" 5:3 "makes the package name 'apps-foo.bar', which is not a DNS-1123 label"

# ---- several errors are reported at once ------------------------------------
bad "two unknown keys" 5:5 "unknown key 'namespce'" <<'EOF'
idpmake: 1
name: demo
packages:
  a:
    namespce: x
    type: manifests
    path: packages/a
  b:
    type: manifests
    path: packages/b
    lables: {tier: x}
EOF
t_grep "two unknown keys: both are reported" "^distro\.yaml:11:5: error: .*unknown key 'lables'.*did you mean 'labels'" "$STDERR"

# ---- no distro at all, and the good distro once more -------------------------
mkdir -p "$T/empty"
t_exit 2 "no distro.yaml: exit 2" idpmake -C "$T/empty" validate
t_grep "no distro.yaml: the error names the file" 'distro\.yaml' "$STDERR"
t_exit 2 "-f names a missing file: exit 2" idpmake -C "$good" -f nope.yaml validate
t_grep "-f names a missing file: the error names it" 'nope\.yaml' "$STDERR"
t_ok "the good distro still validates" idpmake -C "$good" validate
t_ok "validate wrote no GitOps repository" test ! -e "$good/.idpmake/gitops.git"

t_done
