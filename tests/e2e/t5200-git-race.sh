#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Another operator pushes to the GitOps repository too. A remote change that
# touches none of idpmake's package folders: idpmake rebuilds its commit on the
# new head and pushes (both commits kept). A remote change inside one of its
# package folders: idpmake stops, naming the folder and the remote commit, and
# the remote is left as it was. Both when the other push landed before the run
# (the run's fetch sees it) and when it lands between the run's fetch and its
# push (a pre-receive hook on the server makes that race happen: the push is
# refused, idpmake fetches again).
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_git_server
url=$(new_remote gitops) || t_bail "new_remote failed"
srv=$T/git-srv/repos/gitops.git
export IDPMAKE_GIT_USERNAME=$GIT_USER IDPMAKE_GIT_TOKEN=$GIT_PASS

# The server-side race: when $T/race holds a path, the next push's pre-receive
# hook first lands another commit on main that writes that path (as if another
# operator's push won the race), so the push being received is refused.
cat >"$srv/hooks/pre-receive" <<EOF
#!/bin/sh
cat >/dev/null
[ -f "$T/race" ] || exit 0
path=\$(cat "$T/race")
rm -f "$T/race"
env -u GIT_QUARANTINE_PATH -u GIT_OBJECT_DIRECTORY -u GIT_ALTERNATE_OBJECT_DIRECTORIES \\
	GIT_AUTHOR_NAME=racer GIT_AUTHOR_EMAIL=racer@example.com \\
	GIT_COMMITTER_NAME=racer GIT_COMMITTER_EMAIL=racer@example.com \\
	GIT_INDEX_FILE="$T/race-index" sh -e -c '
	old=\$(git rev-parse refs/heads/main)
	git read-tree "\$old"
	blob=\$(echo "written by the racer" | git hash-object -w --stdin)
	git update-index --add --cacheinfo "100644,\$blob,\$1"
	tree=\$(git write-tree)
	new=\$(git commit-tree "\$tree" -p "\$old" -m "racer: \$1")
	git update-ref refs/heads/main "\$new" "\$old"
	echo "\$new" >"$T/race-commit"
' racer "\$path" >>"$T/race.log" 2>&1
rm -f "$T/race-index"
exit 0
EOF
chmod +x "$srv/hooks/pre-receive"

mkdistro d <<EOF
idpmake: 1
name: race
git:
  remote: $url
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
  db:
    type: manifests
    path: packages/db
    namespace: data
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/db/cm.yaml ConfigMap db

remote_head() { git -C "$srv" rev-parse main; }
up() { timeout 60 "$IDPMAKE" -C "$T/d" up; }
n=0
change() { n=$((n + 1)); printf '  change%d: "%d"\n' "$n" "$n" >>"d/packages/$1/cm.yaml"; }
# web has no cm.yaml yet: give it one
mkmanifest d/packages/web/cm.yaml ConfigMap web-config

t_ok "first up" up
t_ok "a second clone" git clone -q "$(authurl "$url")" other

# ---- someone pushed to another folder before the run ------------------------------
mkdir -p other/docs
echo "hello from another operator" >other/docs/README.md
git -C other add docs/README.md && git -C other commit -q -m "docs: add a README"
t_ok "the other operator pushes docs/README.md" git -C other push -q origin main
theirs=$(remote_head)
change web
t_ok "up after a change to web" up
ours=$(remote_head)
t_ok "idpmake pushed a commit" test "$ours" != "$theirs"
t_eq "on top of the other operator's commit" "$theirs" "$(git -C "$srv" rev-parse main~1)"
t_eq "their file is still there" "hello from another operator" "$(git -C "$srv" show main:docs/README.md 2>&1)"
t_ok "with our change" sh -c "git -C '$srv' show main:in-cluster/web/configmap.web-config.yaml | grep -q change1"

# ---- someone pushed to another folder between the run's fetch and its push ------------
echo racer/notes.txt >"$T/race"
change db
before=$(remote_head)
t_ok "up while another push lands during ours (other folder)" up
t_ok "the race did happen" test -s "$T/race-commit" -a ! -e "$T/race"
racer=$(cat "$T/race-commit" 2>/dev/null)
t_eq "idpmake rebuilt on the racer's commit" "$racer" "$(git -C "$srv" rev-parse main~1 2>&1)"
t_eq "which is on top of the previous head" "$before" "$(git -C "$srv" rev-parse main~2 2>&1)"
t_ok "the racer's file is there" git -C "$srv" cat-file -e main:racer/notes.txt
t_ok "with our change" sh -c "git -C '$srv' show main:in-cluster/db/configmap.db.yaml | grep -q change2"
t_ok "and the README" git -C "$srv" cat-file -e main:docs/README.md
h=$(remote_head)
t_ok "a further up is a no-op" up
t_grep "0 rendered" '^idpmake: 0 rendered' "$STDOUT"
t_eq "no commit" "$h" "$(remote_head)"

# ---- someone hand-edited a file in idpmake's folder before the run ----------------------
t_ok "the second clone pulls" git -C other pull -q --ff-only origin main
sed -i 's/replicas: 1/replicas: 7/' other/in-cluster/web/deployment.web.yaml
git -C other commit -q -am "hotfix: scale web by hand"
t_ok "the other operator pushes a hand edit of in-cluster/web" git -C other push -q origin main
hand=$(remote_head)
change web
t_exit 1 "up with a change to web fails (exit 1)" up
cp "$OUTPUT" "$T/conflict.out"
t_grep "naming the folder in-cluster/web" 'in-cluster/web([^:]|$)' "$T/conflict.out"
t_grep "and the remote commit (${hand:0:7})" "${hand:0:7}" "$T/conflict.out"
t_eq "the remote is unchanged" "$hand" "$(remote_head)"
t_eq "the hand edit is still there" 7 \
	"$(git -C "$srv" show main:in-cluster/web/deployment.web.yaml | sed -n 's/.*replicas: //p')"
t_exit 1 "up again fails again: nothing was recorded as pushed" up
t_eq "the remote is still unchanged" "$hand" "$(remote_head)"

# ---- a racer hand-edits idpmake's folder between the run's fetch and its push --------------
# (a fresh distro state on a fresh remote, so the conflict above does not interfere)
url2=$(new_remote gitops2) || t_bail "new_remote failed"
srv2=$T/git-srv/repos/gitops2.git
cp "$srv/hooks/pre-receive" "$srv2/hooks/pre-receive"
mkdistro e <<EOF
idpmake: 1
name: race2
git:
  remote: $url2
packages:
  api:
    type: manifests
    path: packages/api
    namespace: apps
EOF
mkmanifest e/packages/api/cm.yaml ConfigMap api
t_ok "first up of a second distro" timeout 60 "$IDPMAKE" -C "$T/e" up
first=$(git -C "$srv2" rev-parse main)
echo in-cluster/api/configmap.api.yaml >"$T/race"
rm -f "$T/race-commit"
printf '  more: "1"\n' >>e/packages/api/cm.yaml
t_exit 1 "up while a racer rewrites one of our files fails (exit 1)" timeout 60 "$IDPMAKE" -C "$T/e" up
cp "$OUTPUT" "$T/conflict2.out"
racer=$(cat "$T/race-commit" 2>/dev/null)
t_ok "the race did happen" test -n "$racer"
t_grep "naming the folder in-cluster/api" 'in-cluster/api([^:]|$)' "$T/conflict2.out"
t_grep "and the racer's commit (${racer:0:7})" "${racer:0:7}" "$T/conflict2.out"
t_eq "the remote holds the racer's commit, nothing else" "$racer" "$(git -C "$srv2" rev-parse main)"
t_eq "on top of ours" "$first" "$(git -C "$srv2" rev-parse main~1)"
t_eq "the racer's content is intact" "written by the racer" \
	"$(git -C "$srv2" show main:in-cluster/api/configmap.api.yaml 2>&1)"

t_done
