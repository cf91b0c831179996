#!/bin/bash
# Argo CD's auto-sync retries and gives up (issue 21 item 8): an automated
# operation runs with syncPolicy.retry, else limit 5, with a backoff; once it
# has given up, Argo CD does not sync that revision and source again by
# itself.  idpmake, refused ("another operation is already in progress"),
# shows each retry, and when Argo CD gives up fails at once with the
# operation's message and the retries, with no sync of its own; when its
# timeout comes first, it says the operation is Argo CD's failing auto-sync.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_gitops_argocd
mkdistro d <<EOF
idpmake: 1
name: auto
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
packages:
  web: {type: manifests, path: packages/web, namespace: web, sync: {automated: true, timeout: 120}}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap cfg
cd d || exit 1
syncs() { emu_posts '/sync$'; }

# ---- retries that end: Argo CD gives up, idpmake says so at once --------------
emu_post config '{"retry_ms": 20}'
emu_post fault '{"app": "in-cluster-web", "sync_fail": "one or more objects failed to apply: boom"}'
t_exit 1 "the automated sync fails after its retries: up fails" idpmake up
t_grep "the operation's failure and the retries, named" \
	"in-cluster/web:sync: Argo CD's automated sync of application 'in-cluster-web' to [0-9a-f]{12} failed after 5 retries: one or more objects failed to apply: boom \(retried 5 times\)" "$OUTPUT"
t_grep "each retry was shown" "Argo CD's automated sync failed and retries \(retry 5, limit 5\)" "$OUTPUT"
t_eq "idpmake started no sync of its own (its one POST was refused)" 1 "$(syncs)"

# ---- retries that outlast the step's timeout: the timeout says whose -------
emu_reset
emu_post reset '{"apps": true}'
emu_post config '{"retry_ms": 600000}'
emu_post fault '{"app": "in-cluster-web", "sync_fail": "boom again"}'
sed -i 's/timeout: 120/timeout: 3/' distro.yaml
t_exit 1 "the step's timeout comes first" idpmake up
t_grep "the timeout names Argo CD's failing auto-sync and its message" \
	"in-cluster/web:sync: timed out after 3 s waiting for another operation on application 'in-cluster-web' to finish .*; it is Argo CD's automated sync, failing: boom again. Retrying attempt #1" "$OUTPUT"
t_done
