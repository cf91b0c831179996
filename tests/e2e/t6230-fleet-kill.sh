#!/bin/bash
# kill -9 in the middle of a rollout, again and again (a fixed seed, printed;
# FLEET_KILL_SEED=N replays another): each run is killed once the Argo CD
# emulator has seen a random number of requests; after the loop an up
# converges, every Application is at the last commit and Healthy, and over
# the whole request log no Application was ever synced to a commit before
# every Application of the earlier waves had been synced to it (an
# automated Application counts as synced to the commit it is pinned to).
# e2e: long
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

export IDPMAKE_ARGOCD_POLL_MS=20 IDPMAKE_ARGOCD_BACKOFF_MS=20
seed=${FLEET_KILL_SEED:-6230}
echo "# seed $seed (FLEET_KILL_SEED=$seed replays it)"
RANDOM=$seed

bare=$T/gitops.git
git init -q --bare -b main "$bare" || t_bail "git init failed"
ARGOCD_TEST_TOKEN="eyJhbGciOiJIUzI1NiJ9.$(random_string).$(random_string)"
start_argocd_emulator --repo-map "$bare=$bare" --repo-map "file://$bare=$bare" --op-ms 60 --health-ms 60 --reconcile-ms 10 \
	--cluster a=https://a:6443 --cluster b1=https://b1:6443 --cluster b2=https://b2:6443 --cluster c=https://c:6443
export ARGOCD_AUTH_TOKEN=$ARGOCD_TEST_TOKEN
mkdistro d <<EOF
idpmake: 1
name: killed
git: {remote: "$bare"}
argocd: {repo-url: "file://$bare"}
clusters:
  a: {server: "https://a:6443"}
  b1: {server: "https://b1:6443", labels: {ring: b}}
  b2: {server: "https://b2:6443", labels: {ring: b}}
  c: {server: "https://c:6443"}
rollout:
  waves:
    - {name: first, clusters: [a]}
    - {name: second, selector: {ring: b}, max-parallel: 1}
    - {name: third, clusters: [c]}
packages:
  base: {type: manifests, path: packages/base}
  app: {type: manifests, path: packages/app, needs: [base], sync: {automated: true}}
EOF
mkmanifest d/packages/base/cm.yaml ConfigMap base
mkmanifest d/packages/app/cm.yaml ConfigMap app
cd d || exit 1
nreq() { curl -sS -f "http://$ARGOCD_SERVER/_emu/requests" | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))'; }

kills=0
for round in $(seq 1 10); do
	[ $((RANDOM % 3)) = 0 ] || echo "  r$round: \"$round\"" >>"packages/$([ $((RANDOM % 2)) = 0 ] && echo base || echo app)/cm.yaml"
	at=$(( $(nreq) + 1 + RANDOM % 40 ))
	setsid "$IDPMAKE" up -j 4 >"$T/run$round.log" 2>&1 &
	pid=$!
	t_wait_for 30 sh -c "[ \$(curl -sS -f http://$ARGOCD_SERVER/_emu/requests | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))') -ge $at ] || ! kill -0 $pid 2>/dev/null" >/dev/null 2>&1
	if kill -0 "$pid" 2>/dev/null; then
		kill -9 -- "-$pid" 2>/dev/null
		kills=$((kills + 1))
	fi
	wait "$pid" 2>/dev/null
done
echo "# $kills of 10 runs killed in flight"
[ "$kills" -ge 3 ]
t_report $? "at least 3 runs were killed in flight ($kills)"
# this test's own runs: those working in its scratch folder (other tests may run the same binary)
left=
for p in $(pgrep -f "$IDPMAKE up"); do
	case $(readlink "/proc/$p/cwd" 2>/dev/null) in "$T"/*) left="$left $p" ;; esac
done
if [ -n "$left" ]; then
	echo "idpmake still running:$left" >"$T/.why"
	t_report 1 "no idpmake left running" "$T/.why"
else
	t_report 0 "no idpmake left running"
fi

t_ok "an up after the kills converges" idpmake up -j 4 --wait
t_ok "then a no-op" idpmake up
t_grep "nothing left to do" 'idpmake: 0 rendered, nothing pushed, 0 synced' "$OUTPUT"
head=$(git --git-dir="$bare" rev-parse main)
curl -sS -f -H "Authorization: Bearer $ARGOCD_AUTH_TOKEN" "http://$ARGOCD_SERVER/api/v1/applications" >"$T/apps.json" ||
	t_bail "cannot list the Applications"
# the content of a package's folder at a commit (the tree's id)
cat >"$T/tree.py" <<'PY'
import subprocess, functools
@functools.lru_cache(maxsize=None)
def tree(git_dir, rev, path):
    r = subprocess.run(["git", "--git-dir", git_dir, "rev-parse", "%s:%s" % (rev, path)],
                       capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None
PY
t_ok "every Application holds the last commit's content and is Healthy" python3 -c '
import json, sys
sys.path.insert(0, sys.argv[3])
from tree import tree
apps = json.load(open(sys.argv[1]))["items"]
assert len(apps) == 8, len(apps)
for a in apps:
    st, path = a["status"], a["spec"]["source"]["path"]
    assert st["sync"]["status"] == "Synced", (a["metadata"]["name"], st["sync"])
    assert tree(sys.argv[4], st["sync"]["revision"], path) == tree(sys.argv[4], sys.argv[2], path), \
        (a["metadata"]["name"], "synced at", st["sync"]["revision"], "whose", path, "differs from the head")
    assert st["health"]["status"] == "Healthy", (a["metadata"]["name"], st["health"])' \
	"$T/apps.json" "$head" "$T" "$bare"
curl -sS -f "http://$ARGOCD_SERVER/_emu/requests" >"$T/req.json" || t_bail "no request log"
t_ok "no Application got content before every Application of the earlier waves had it" python3 -c '
import json, sys
sys.path.insert(0, sys.argv[2])
from tree import tree
log = json.load(open(sys.argv[1]))
wave = {"a": 0, "b1": 1, "b2": 1, "c": 2}
had = set()   # (app, tree) an app was synced to
bad, n = [], 0
for e in sorted(log, key=lambda e: e["seq"]):
    body = e.get("body") or {}
    if e["method"] == "POST" and e["path"].endswith("/sync"):
        # a sync without a revision (the run pushed nothing) goes to what its targetRevision resolved to
        app, rev = e["path"].split("/")[4], body.get("revision") or e.get("synced_revision")
    elif e["method"] == "POST" and e["path"] == "/api/v1/applications" and \
            (body.get("spec") or {}).get("syncPolicy", {}).get("automated") is not None:
        # an automated Application moves by itself to the commit it is pinned to
        app, rev = body["metadata"]["name"], body["spec"]["source"].get("targetRevision")
        if not rev or len(rev) != 40:
            bad.append((e["seq"], app, "automated but not pinned to a commit: %r" % rev))
            continue
    else:
        continue
    if not rev:
        continue
    cluster, pkg = app.split("-", 1)
    t = tree(sys.argv[3], rev, "_shared/" + pkg)
    n += 1
    for other, w in wave.items():
        if w < wave[cluster] and ("%s-%s" % (other, pkg), t) not in had:
            bad.append((e["seq"], app, rev[:7], "before %s-%s had it" % (other, pkg)))
    had.add((app, t))
assert not bad, bad[:5]
print(n, "syncs checked")' "$T/req.json" "$T" "$bare"
t_done
