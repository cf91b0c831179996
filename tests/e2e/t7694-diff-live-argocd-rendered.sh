#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# diff --live (issue 8 §1) and a package whose objects Argo CD renders (a
# helm chart): idpmake has no objects of it to compare, but a pending change
# to it (a chart bump) is still a difference: it is listed ("changes ...:
# not compared"), counted by --exit-code (1, not 0), kept in --json and in
# -o FILE for --from; once up, it is no difference (exit 0), nor for a
# fresh runner whose empty state knows no key (the GitOps repository holds
# the render).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF
idpmake: 1
name: charts
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  podinfo:
    type: helm
    chart: {repo: https://charts.example.com, name: podinfo, version: 6.5.0}
    set: {ui.message: hello}
    namespace: podinfo
    sync: {wait: synced}
  web: {type: manifests, path: packages/web}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web
cd d || exit 1
git init -q -b main . && git add -A && git -c user.name=t -c user.email=t@t commit -qm distro || t_bail "git commit failed"
t_ok "setup: up" idpmake up

t_exit 0 "diff --live --exit-code right after up: nothing differs" idpmake diff --live --exit-code
t_grep "the chart's package is said not compared" 'in-cluster/podinfo:render: rendered by Argo CD .*: not compared' "$STDERR"
t_nogrep "and not listed as changing" 'changes' "$STDOUT"

# a fresh runner (an empty state folder) knows no key: the GitOps repository says nothing changed
mv .idpmake "$T/state.kept" || t_bail "cannot move the state"
t_exit 0 "an empty state: diff --live --exit-code: nothing differs" idpmake --color=never diff --live --exit-code
t_nogrep "nothing listed as changing" 'changes' "$STDOUT"
rm -rf .idpmake && mv "$T/state.kept" .idpmake || t_bail "cannot restore the state"

sed -i 's/version: 6.5.0/version: 6.6.0/' distro.yaml
t_exit 1 "a chart bump: diff --live --exit-code exits 1" idpmake --color=never diff --live --exit-code
t_grep "the Application is listed as changing" \
	'^application in-cluster-podinfo \(in-cluster/podinfo\): changes \(chart, values or source\); Argo CD renders its objects: not compared$' "$STDOUT"
t_grep "the summary counts it" 'and 1 Application whose objects Argo CD renders changes' "$STDERR"
t_ok "--json" idpmake diff --live --json
t_eq "--json lists it" "in-cluster-podinfo" \
	"$(python3 -c 'import json,sys; print(" ".join(a["name"] for a in json.load(open(sys.argv[1]))["uncompared"]))' "$STDOUT")"
t_ok "-o FILE" idpmake diff --live -o saved.json
kill "$EMU_PID" && wait "$EMU_PID" 2>/dev/null
t_exit 1 "--from FILE --exit-code, offline: 1" idpmake diff --from saved.json --exit-code
t_grep "--from lists it" '^application in-cluster-podinfo \(in-cluster/podinfo\): changes' "$STDOUT"
t_done
