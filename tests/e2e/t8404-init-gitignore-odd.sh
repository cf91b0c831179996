#!/bin/bash
# init's .gitignore when the folder's is odd (review of issue 25's init):
# a folder, a FIFO or a symlink there is left alone with a warning and init
# still succeeds (it failed after writing the distro, so that a second
# init refused, or waited forever on the FIFO, or replaced the symlink by a
# copy); an existing file is appended to in place, its other bytes (NULs
# among them), its mode and its CRLF line ends kept; a CRLF or '/.idpmake'
# line counts as there.  validate's ${name} warning is said once per
# package, not once per cluster it goes to.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdir -p dir/.gitignore
t_ok "init where .gitignore is a folder: succeeds" idpmake init dir
t_grep "warning that it is left alone" 'dir/.gitignore is not a regular file \(a folder\): left as it is' "$STDERR"
t_nogrep "not claiming to have written it" 'in .gitignore' "$STDOUT"
t_ok "the distro it wrote is whole" idpmake -C dir validate

mkdir fifo && mkfifo fifo/.gitignore
t_ok "init where .gitignore is a FIFO: does not wait on it" timeout 20 "$IDPMAKE" init fifo
t_grep "warning" 'fifo/.gitignore is not a regular file \(a FIFO' "$STDERR"

printf 'shared\n' >shared-ignore
mkdir link && ln -s ../shared-ignore link/.gitignore
t_ok "init where .gitignore is a symlink" idpmake init link
t_eq "the symlink stays a symlink" "../shared-ignore" "$(readlink link/.gitignore)"
t_eq "and what it points at is not written" "shared" "$(cat shared-ignore)"

mkdir nul && printf 'a\0b\nc\n' >nul/.gitignore && chmod 600 nul/.gitignore
t_ok "init where .gitignore has a NUL" idpmake init nul
t_eq "every byte kept, .idpmake/ added" "$(printf 'a\0b\nc\n.idpmake/\n' | od -c)" "$(od -c <nul/.gitignore)"
t_eq "its mode kept" "600" "$(stat -c %a nul/.gitignore)"

mkdir crlf && printf 'x\r\n/.idpmake\r\n' >crlf/.gitignore
t_ok "init where a CRLF .gitignore names /.idpmake" idpmake init crlf
t_eq "it is there already: left as it was" "$(printf 'x\r\n/.idpmake\r\n' | od -c)" "$(od -c <crlf/.gitignore)"
mkdir crlf2 && printf 'x\r\ny' >crlf2/.gitignore
t_ok "init where a CRLF .gitignore does not name it" idpmake init crlf2
t_eq "added with the file's line ends" "$(printf 'x\r\ny\r\n.idpmake/\r\n' | od -c)" "$(od -c <crlf2/.gitignore)"

# validate's ${name} warning in a fleet: once per package, not once per cluster
cp -R "$top/examples/fleet" fleet && printf '# ${region}\n' >>fleet/packages/readonly-rbac/clusterrole.yaml
t_ok "validate the fleet example with \${region} in a manifest" idpmake -C fleet validate
t_eq "one warning, not one per cluster" 1 "$(grep -c 'warning: \${region} is left as it is' "$STDERR")"
t_done
