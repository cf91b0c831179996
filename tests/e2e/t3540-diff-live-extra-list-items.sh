#!/bin/bash
# diff --live against a live list longer than the render's (issue 21 item 9;
# objdiff_project): items that exist only live, at the end of a list the
# render sets, are a difference, as Argo CD sees them (a list is compared
# whole), top-level (a Service's ports) or nested (a container's args):
# the object is a change, the extra items are shown as '-' lines, exit 1
# with --exit-code; with the list as rendered again nothing differs.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF
idpmake: 1
name: lists
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web, namespace: web}
EOF
mkdir -p d/packages/web
cat >d/packages/web/svc.yaml <<'EOF'
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports:
    - {name: http, port: 80}
EOF
cat >d/packages/web/job.yaml <<'EOF'
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec:
      restartPolicy: Never
      containers:
        - name: migrate
          image: migrate:1
          args: [--up]
EOF
cd d || exit 1

t_ok "setup: up" idpmake up
t_grep "setup: synced" ' 1 synced' "$OUTPUT"
t_exit 0 "diff --live right after up: nothing differs" idpmake diff --live --exit-code

# ---- a port added live, after the rendered one ------------------------------------
emu_post live '{"app": "in-cluster-web", "kind": "Service", "name": "web",
	"set": {"spec.ports": [{"name": "http", "port": 80}, {"name": "debug-Zq7", "port": 9999}]}}'
t_exit 1 "an extra live port is a difference" idpmake --color=never diff --live --exit-code
t_grep "the Service is a change" '^change +Service web/web$' "$STDOUT"
t_grep "the extra item is shown as removed by the sync" '^-.*debug-Zq7' "$STDOUT"
t_grep "with its port" '^-.*9999' "$STDOUT"
t_grep "the summary counts it" '^idpmake: 1 object differs? ' "$STDERR"
emu_post live '{"app": "in-cluster-web", "kind": "Service", "name": "web", "set": {"spec.ports": [{"name": "http", "port": 80}]}}'
t_exit 0 "the ports as rendered again: nothing differs" idpmake diff --live --exit-code

# ---- an argument added live to a container, nested in the pod template -------------
emu_post live '{"app": "in-cluster-web", "kind": "Job", "name": "migrate",
	"set": {"spec.template.spec.containers": [{"name": "migrate", "image": "migrate:1", "args": ["--up", "--force-Zq7"]}]}}'
t_exit 1 "an extra live argument is a difference" idpmake --color=never diff --live --exit-code
t_grep "the Job is a change" '^change +batch/Job web/migrate$' "$STDOUT"
t_grep "the extra argument is shown as removed by the sync" '^-.*--force-Zq7' "$STDOUT"
t_nogrep "the rendered one is not" '^-.*- --up$' "$STDOUT"
t_done
