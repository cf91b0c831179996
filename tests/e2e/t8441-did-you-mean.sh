#!/bin/bash
# "did you mean" everywhere a name is looked up (issue 37 item 2), by the one
# rule (closest() in base/util.c: edit distance with a swap of neighbours as
# one edit; of equally near words, the one sharing the longest start): long
# options, contexts (--context and context use), step ids (explain) and the
# distro's top-level keys, where 'packs' is 'packages', not 'vars'.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<EOF2
idpmake: 1
name: dym
clusters: {in-cluster: {}}
packages:
  hello: {type: manifests, path: packages/hello}
EOF2
mkmanifest d/packages/hello/cm.yaml ConfigMap hello

# ---- options ----------------------------------------------------------------------------
t_exit 2 "plan --refrsh" idpmake -C d plan --refrsh
t_grep "did you mean --refresh" "unknown option '--refrsh'; did you mean '--refresh'\?" "$STDERR"
t_exit 2 "--hlep" idpmake -C d --hlep
t_grep "did you mean --help" "unknown option '--hlep'; did you mean '--help'\?" "$STDERR"
t_exit 2 "--formt=json, with its value" idpmake -C d graph --formt=json
t_grep "did you mean --format" "unknown option '--formt'; did you mean '--format'\?" "$STDERR"
t_exit 2 "far from any option" idpmake -C d plan --zzzzzzzzzz
t_grep "unknown" "unknown option '--zzzzzzzzzz'" "$STDERR"
t_nogrep "no suggestion" "did you mean" "$STDERR"
t_exit 2 "a missing argument is still said" idpmake -C d graph --format
t_grep "requires an argument" "option '--format' requires an argument" "$STDERR"
t_exit 2 "a short option unknown" idpmake -C d plan -x
t_grep "invalid option" "invalid option -- 'x'" "$STDERR"

# ---- contexts ---------------------------------------------------------------------------
export HOME=$T/home
mkdir -p "$HOME"
t_ok "a context prod" idpmake context add prod --argocd-server https://argocd.example --git-remote https://git.example/r.git
t_exit 2 "--context prd" idpmake -C d --context prd plan
t_grep "did you mean prod (--context)" "no context 'prd'; did you mean 'prod'\?" "$STDERR"
t_exit 2 "context use prdo" idpmake context use prdo
t_grep "did you mean prod (context use)" "no context 'prdo'; did you mean 'prod'\?" "$STDERR"

# ---- step ids ---------------------------------------------------------------------------
t_exit 2 "explain a swapped step name" idpmake -C d explain in-cluster/hello:snyc
t_grep "did you mean :sync" "no step 'in-cluster/hello:snyc'; did you mean 'in-cluster/hello:sync'\?" "$STDERR"

# ---- top-level keys ---------------------------------------------------------------------
mkdistro k <<EOF2
idpmake: 1
name: dym
clusters: {in-cluster: {}}
packs:
  hello: {type: manifests, path: packages/hello}
EOF2
t_exit 2 "packs:" idpmake -C k validate
t_grep "did you mean packages" "unknown key 'packs'.*did you mean 'packages'\?" "$STDERR"
t_nogrep "not vars" "did you mean 'vars'" "$STDERR"

t_done
