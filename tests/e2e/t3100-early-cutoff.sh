#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Early cutoff: a change that renders identically (keys reordered, a comment)
# re-runs the render, but nothing downstream: no commit, no `when: changed`
# hook. A real change still runs both.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF'
idpmake: 1
name: cutoff
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
    hooks:
      pre:
        - name: count-pre
          run: echo pre >>pre-count.txt
          when: changed
      post:
        - name: count-post
          run: echo post >>post-count.txt
  db:
    type: manifests
    path: packages/db
    namespace: data
EOF
mkdir -p d/packages/web
cat >d/packages/web/cm.yaml <<'EOF'
apiVersion: v1
kind: ConfigMap
metadata:
  name: web-config
data:
  alpha: "1"
  beta: "2"
  gamma: "3"
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/db/cm.yaml ConfigMap db

bare=$T/d/.idpmake/gitops.git
commits() { git -C "$bare" rev-list --count main 2>/dev/null || echo 0; }
lines() { if [ -f "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi; }
up() { idpmake -C "$T/d" up "$@"; }

t_ok "first up" up
t_eq "one commit" 1 "$(commits)"
t_eq "the pre hook (when: changed) ran once" 1 "$(lines d/pre-count.txt)"
t_eq "the post hook (when defaults to changed) ran once" 1 "$(lines d/post-count.txt)"
head1=$(git -C "$bare" rev-parse main)

# ---- keys reordered ---------------------------------------------------------
cat >d/packages/web/cm.yaml <<'EOF'
kind: ConfigMap
data:
  gamma: "3"
  alpha: "1"
  beta: "2"
metadata:
  name: web-config
apiVersion: v1
EOF
t_ok "up after reordering keys" up
t_grep "the render runs" '^idpmake: 1 rendered' "$STDOUT"
t_grep "it is web's" 'in-cluster/web:render' "$STDOUT"
t_grep "nothing is pushed" '^idpmake: .*nothing pushed' "$STDOUT"
t_eq "no new commit" 1 "$(commits)"
t_eq "the remote head did not move" "$head1" "$(git -C "$bare" rev-parse main)"
t_eq "the when: changed pre hook did not run" 1 "$(lines d/pre-count.txt)"
t_eq "the post hook did not run" 1 "$(lines d/post-count.txt)"
t_nogrep "no hook step is reported" 'in-cluster/web:(pre|post):' "$STDOUT"

t_ok "up again" up
t_grep "the new key was recorded: nothing to render" '^idpmake: 0 rendered' "$STDOUT"

# ---- a comment --------------------------------------------------------------
sed -i '1i # the web configuration, reviewed by the platform team' d/packages/web/cm.yaml
echo '# trailing comment' >>d/packages/web/deploy.yaml
t_ok "up after adding comments" up --json
cp "$STDOUT" "$T/up.json"
python3 - "$T/up.json" >"$T/events.txt" <<'EOF'
import json, sys
for line in open(sys.argv[1]):
    line = line.strip()
    if line:
        o = json.loads(line)
        print(o.get("event"), o.get("id", ""))
EOF
t_grep "the render starts" '^start in-cluster/web:render$' "$T/events.txt"
t_nogrep "no hook starts" '^start in-cluster/web:(pre|post):' "$T/events.txt"
t_nogrep "no push starts" '^start push' "$T/events.txt"
t_ok "the summary says nothing was pushed" python3 -c '
import json, sys
last = [json.loads(l) for l in open(sys.argv[1]) if l.strip()][-1]
assert last["event"] == "summary", last
assert last["pushed"] is None, last
assert last["rendered"] == 1, last
assert last["hooks"] == 0, last
' "$T/up.json"
t_eq "still no new commit" 1 "$(commits)"
t_eq "the pre hook still ran once" 1 "$(lines d/pre-count.txt)"

# ---- a real change -------------------------------------------------------------
sed -i 's/beta: "2"/beta: "22"/' d/packages/web/cm.yaml
t_ok "up after a real change" up
t_grep "renders web" '^idpmake: 1 rendered' "$STDOUT"
t_grep "pushes a commit" '1 commit pushed' "$STDOUT"
t_eq "a new commit" 2 "$(commits)"
t_eq "the pre hook ran again" 2 "$(lines d/pre-count.txt)"
t_eq "the post hook ran again" 2 "$(lines d/post-count.txt)"
# (and the keys index, .idpmake/keys, which every commit that changes content updates)
t_eq "the commit changes only the ConfigMap" "in-cluster/web/configmap.web-config.yaml" \
	"$(git -C "$bare" diff --name-only main~1 main -- . ':!.idpmake')"
t_grep "and the keys index has web's new key" "^in-cluster/web [0-9a-f]{32} " \
	"$(git -C "$bare" show main:.idpmake/keys >"$T/keys"; echo "$T/keys")"

# ---- a change back to a state that renders like the pushed one -------------------
sed -i 's/beta: "22"/beta: "2"/' d/packages/web/cm.yaml
t_ok "up after reverting the change" up
t_grep "pushes the revert" '1 commit pushed' "$STDOUT"
t_eq "a third commit" 3 "$(commits)"
t_eq "whose package folders are the first commit's" "$(git -C "$bare" rev-parse "$head1:in-cluster")" \
	"$(git -C "$bare" rev-parse 'main:in-cluster')"

t_done
