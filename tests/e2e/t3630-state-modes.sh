#!/bin/bash
# shellcheck disable=SC2317 # functions run through t_ok and friends
# Files in the state folder and the cache are 0600, folders 0700, whatever
# the umask (state.db and its WAL, the lock, logs, cache bundles, the clone,
# the embedded remote, rendered/), and a state folder an older idpmake left
# open is closed again; what idpmake writes for the user (init, render -o)
# keeps the modes of the user's umask.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

# what under $1 group or others may use: "MODE TYPE PATH" lines, none expected
# (git's packs are 0400: private too)
open_to_others() {
	find "$1" ! -type l -perm /077 -printf '%m %y %p\n'
}
modes() { find "$1" ! -type l -printf '%m %y %P\n' | sort; }

umask 000
mkdistro d <<'EOF'
idpmake: 1
name: modes
packages:
  web:
    type: manifests
    path: packages/web
    namespace: apps
    hooks:
      post:
        - name: look
          run: 'ls "$IDPMAKE_RENDERED" >/dev/null && echo looked'
EOF
mkmanifest d/packages/web/deploy.yaml Deployment web
mkmanifest d/packages/web/cm.yaml ConfigMap web

t_ok "up under umask 000" idpmake -C d up
for f in state.db lock logs cache repo gitops.git rendered; do
	t_eq "the state holds $f" yes "$([ -e "d/.idpmake/$f" ] && echo yes)"
done
t_eq "the cache holds rendered bundles" yes "$(find d/.idpmake/cache -type f | grep -q . && echo yes)"
t_eq "nothing in the state folder is open to others" "" "$(open_to_others d/.idpmake)"
t_eq "the state folder is 0700" 700 "$(stat -c %a d/.idpmake)"
t_eq "state.db is 0600" 600 "$(stat -c %a d/.idpmake/state.db)"

# a state folder left open by an older idpmake (or a chmod) is closed again
chmod 755 d/.idpmake
chmod 644 d/.idpmake/state.db
mkmanifest d/packages/web/cm2.yaml ConfigMap web2
t_ok "up on a state folder left open" idpmake -C d up
t_eq "the state folder is 0700 again" 700 "$(stat -c %a d/.idpmake)"
t_eq "state.db is 0600 again" 600 "$(stat -c %a d/.idpmake/state.db)"
t_eq "what this run wrote is private" "" "$(open_to_others d/.idpmake/logs; open_to_others d/.idpmake/cache)"

# ---- what idpmake writes for the user keeps the user's umask ----------------
umask 022
t_ok "init under umask 022" idpmake init new
t_eq "init's files are 0644, its folders 0755" \
	"$(printf '%s\n' '644 f .gitignore' '644 f distro.yaml' '644 f packages/hello/configmap.yaml' \
		'644 f packages/namespaces/namespace.yaml' '755 d ' '755 d packages' '755 d packages/hello' \
		'755 d packages/namespaces' | sort)" "$(modes new)"
t_ok "render -o under umask 022" idpmake -C d render -o "$T/out"
t_eq "render -o's files are 0644" "" "$(find out -type f ! -perm 644 -printf '%m %p\n')"
t_eq "render -o's folders are 0755" "" "$(find out -type d ! -perm 755 -printf '%m %p\n')"
t_eq "render -o wrote the objects" 3 "$(find out -type f | wc -l)"
umask 027
t_ok "render -o under umask 027" idpmake -C d render -o "$T/out27"
t_eq "render -o's files are 0640, its folders 0750" "" \
	"$(find out27 \( -type f ! -perm 640 \) -o \( -type d ! -perm 750 \) -printf '%m %p\n')"

t_done
