#!/bin/bash
# A hook's key covers the script it runs however the command reaches it:
# through an interpreter named by its path (/bin/sh a.sh), a wrapper whose
# options take values (timeout 60, env X=1, nice -n 10), the shell's `.`,
# or a `cd DIR` before it (the script is found from DIR).  Each was missed
# (review of issue 20 item 4): an edit to the script left the key as it
# was, so `up --plan` ran the edited script.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<EOF
idpmake: 1
name: hooked
packages:
  web:
    type: manifests
    path: packages/web
    namespace: web
    hooks:
      post:
        - {name: abs, run: '/bin/sh a.sh', when: once}
        - {name: cd, run: 'cd scripts && ./b.sh', when: once}
        - {name: timeout, run: 'timeout 60 ./c.sh', when: once}
        - {name: env, run: 'env X=1 ./e.sh', when: once}
        - {name: dot, run: '. ./f.sh', when: once}
        - {name: nice, run: 'nice -n 10 ./g.sh', when: once}
        - {name: assign, run: 'X=\$HOME ./h.sh', when: once}
EOF
mkmanifest d/packages/web/cm.yaml ConfigMap web web
mkdir d/scripts
for f in a c e f g h; do echo true >"d/$f.sh"; chmod +x "d/$f.sh"; done
echo true >d/scripts/b.sh
chmod +x d/scripts/b.sh
cd d || exit 1
t_ok "the first up" idpmake up
t_ok "plan -o: nothing to do" idpmake --exit-code plan -o plan.json
for hs in abs:a.sh cd:scripts/b.sh timeout:c.sh env:e.sh dot:f.sh nice:g.sh assign:h.sh; do
	echo 'echo EDITED' >>"${hs#*:}"
done
t_ok "plan after the edits" idpmake plan
for hs in abs:a.sh cd:scripts/b.sh timeout:c.sh env:e.sh dot:f.sh nice:g.sh assign:h.sh; do
	t_grep "${hs%%:*}: an edit to ${hs#*:} runs the hook again" "post:${hs%%:*}: " "$STDOUT"
done
t_exit 2 "up --plan of the plan made before the edits: refused" idpmake up --plan plan.json
t_grep "naming a hook" 'refused: in-cluster/web:post:' "$STDERR"
t_done
