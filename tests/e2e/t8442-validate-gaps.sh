#!/bin/bash
# What validate and pre-flight miss (issue 37 item 5): a package namespace
# that is not a DNS-1123 label is an error at its distro line (Argo CD would
# refuse it at sync); an empty package folder is a warning at its path; the
# refusal to send a credential over plain http (IDPMAKE_GIT_ALLOW_HTTP not 1)
# is made in pre-flight, before any render, and plan predicts it; a missing
# git token, with the state lost (the keys index read first), is said once.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# ---- namespaces -------------------------------------------------------------------------
mkdistro n <<EOF2
idpmake: 1
name: gaps
clusters: {in-cluster: {}, prod: {vars: {env: Prod}}}
packages:
  web: {type: manifests, path: packages/web, namespace: Foo_Bar}
  db: {type: manifests, path: packages/db, namespace: 'db-\${env}'}
  ok: {type: manifests, path: packages/ok, namespace: apps-1}
vars: {env: dev}
EOF2
for p in web db ok; do mkmanifest "n/packages/$p/cm.yaml" ConfigMap "$p"; done
t_exit 2 "validate: a namespace that is not a DNS-1123 label" idpmake -C n validate
t_grep "at its line, file:line:col" "^distro\.yaml:5:57: error: namespace 'Foo_Bar' is not a DNS-1123 label" "$STDERR"
t_grep "expanded on the cluster that makes it bad" \
	"^distro\.yaml:6:55: error: namespace 'db-Prod' \(db-\\\$\{env\} on cluster 'prod'\) is not a DNS-1123 label" "$STDERR"
t_eq "said once a package" 2 "$(grep -c 'is not a DNS-1123 label' "$STDERR")"
t_nogrep "a good one passes" "apps-1" "$STDERR"
t_exit 2 "up refuses it too, before anything" idpmake -C n up
t_grep "the same error" "namespace 'Foo_Bar' is not a DNS-1123 label" "$STDERR"

# ---- an empty package folder ------------------------------------------------------------
mkdistro e <<EOF2
idpmake: 1
name: gaps
clusters: {in-cluster: {}}
packages:
  web: {type: manifests, path: packages/web}
  empty:
    type: manifests
    path: packages/empty
EOF2
mkmanifest e/packages/web/cm.yaml ConfigMap web
mkdir -p e/packages/empty && touch e/packages/empty/.gitkeep
t_ok "validate: an empty folder is no error" idpmake -C e validate
t_grep "a warning at the package's path" \
	"^distro\.yaml:8:11: warning: package 'empty': its folder packages/empty is empty, so it renders nothing" "$STDERR"
t_nogrep "not for one with files" "package 'web'" "$STDERR"
t_ok "validate --json: valid" idpmake -C e validate --json
cp "$STDOUT" validate.json
t_ok "the warning as data, at its line and column" python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
w = [x for x in d["diagnostics"] if x["severity"] == "warning" and "packages/empty is empty" in x["message"]]
assert d["valid"] and len(w) == 1 and w[0]["line"] == 8 and w[0]["column"] == 11, d' validate.json

# ---- plain http and a credential: pre-flight --------------------------------------------
start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
mkdistro d <<EOF2
idpmake: 1
name: gaps
git:
  remote: $url
packages:
  web: {type: manifests, path: packages/web}
EOF2
mkmanifest d/packages/web/cm.yaml ConfigMap web
up() { env "$@" timeout 30 "$IDPMAKE" -C "$T/d" up; }
plan() { env "$@" timeout 30 "$IDPMAKE" -C "$T/d" plan; }
good=(IDPMAKE_GIT_USERNAME="$GIT_USER" IDPMAKE_GIT_TOKEN="$GIT_PASS")

t_exit 1 "up: a token over plain http without IDPMAKE_GIT_ALLOW_HTTP" up -u IDPMAKE_GIT_ALLOW_HTTP "${good[@]}"
t_grep "refused in pre-flight" \
	"error: push: refusing to send IDPMAKE_GIT_TOKEN to 127\.0\.0\.1 over plain http .*IDPMAKE_GIT_ALLOW_HTTP=1" "$STDERR"
t_grep "before any render" "pre-flight: 1 problem; nothing was rendered" "$STDERR"
t_nogrep "nothing rendered" "rendered|render in-cluster" "$STDOUT"
t_eq "said once" 1 "$(grep -c 'over plain http' "$OUTPUT")"
t_exit 3 "plan predicts it (exit 3: up would refuse)" plan -u IDPMAKE_GIT_ALLOW_HTTP "${good[@]}"
t_grep "plan: the same problem" "error: push: refusing to send IDPMAKE_GIT_TOKEN to 127\.0\.0\.1 over plain http" "$STDERR"
t_grep "plan: up would refuse" "plan: up would refuse before the push: 1 problem" "$STDERR"
t_ok "with IDPMAKE_GIT_ALLOW_HTTP=1 it goes" up "${good[@]}"

# ---- a missing token, the state lost: said once -----------------------------------------
rm -rf d/.idpmake
t_exit 1 "up without a token, the keys index to read first" up
t_grep "pre-flight names the token" "asks for credentials \(HTTP 401\).*IDPMAKE_GIT_TOKEN" "$STDERR"
t_eq "one message of the credential" 1 "$(grep -c 'IDPMAKE_GIT_TOKEN' "$STDERR")"
t_nogrep "no 'rendering' next to 'nothing was rendered'" "rendering" "$STDERR"
t_nogrep "no fetch error" "cannot fetch" "$STDERR"

# secrets with no kubeconfig names what kubectl used, not a context that does not exist (issue 37 #4)
mkdistro nokube <<'EOF'
idpmake: 1
name: nokube
packages:
  a: {type: manifests, path: p}
EOF
mkmanifest nokube/p/cm.yaml ConfigMap a
t_run env -u KUBECONFIG "$IDPMAKE" -C nokube secrets
t_grep "secrets says kubectl had no kubeconfig" "on cluster 'in-cluster' \(no kubeconfig: kubectl's in-cluster configuration\)" "$OUTPUT"
t_nogrep "not a context named in-cluster" '\(context in-cluster\)' "$OUTPUT"
t_done
