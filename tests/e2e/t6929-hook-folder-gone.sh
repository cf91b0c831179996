#!/bin/bash
# A hook whose folder (that of the distro file that defines it) is gone
# when it is to run, or is a file now, fails naming that folder and why,
# not "'/bin/sh' not found on PATH".  (Found in review.)
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro base <<'EOF'
idpmake: 1
name: base
packages:
  b:
    type: manifests
    path: packages/b
    hooks:
      pre:
        - {name: hi, run: 'echo hi'}
EOF
mkmanifest base/packages/b/cm.yaml ConfigMap b
mkdistro d <<'EOF'
idpmake: 1
name: child
extends: ../base
packages:
  a:
    type: manifests
    path: packages/a
    hooks:
      pre:
        - {name: gone, run: 'rm -rf ../base'}
  b: {needs: [a]}
EOF
mkmanifest d/packages/a/cm.yaml ConfigMap a
t_exit 1 "the hook whose folder vanished fails" idpmake -C d up -j 1
t_grep "naming the folder and why" "in-cluster/b:pre:hi: cannot run '/bin/sh' in the folder '[^']*base': No such file or directory" "$OUTPUT"
t_nogrep "not a shell missing from PATH" "not found on PATH" "$OUTPUT"

# a folder that is a file now
mkdistro base <<'EOF'
idpmake: 1
name: base
packages:
  b:
    type: manifests
    path: packages/b
    hooks:
      pre:
        - {name: hi, run: 'echo hi'}
EOF
mkmanifest base/packages/b/cm.yaml ConfigMap b
mkdistro d <<'EOF'
idpmake: 1
name: child
extends: ../base
packages:
  a:
    type: manifests
    path: packages/a
    hooks:
      pre:
        - {name: gone, run: 'rm -rf ../base && echo > ../base'}
  b: {needs: [a]}
EOF
t_exit 1 "the hook whose folder is a file now fails" idpmake -C d up -j 1
t_grep "saying so" "in-cluster/b:pre:hi: cannot run '/bin/sh' in the folder '[^']*base': Not a directory" "$OUTPUT"
t_done
