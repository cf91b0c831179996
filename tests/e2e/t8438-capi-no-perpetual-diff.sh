#!/bin/bash
# What `render`, `diff` and `validate --live` show of the clusters Cluster API
# makes is what `up` pushes and what its sync accepts (issue 32 items 2, 3),
# against the emulators of t8420 and the example's distro:
#   validate  on a fresh management cluster, where the namespace fleet is made
#             by the syncs (CreateNamespace=true): accepted, nothing made;
#   no diff   after a successful up: plan, diff and diff --live all exit 0;
#             render prints exactly what up pushed, byte for byte, the class
#             revision and the Clusters' classRef included;
#   target    render mgmt/cluster-eu-1 prints that Cluster alone;
#   revision  after a class change, while us-1 still names the old revision (its
#             sync failed): render and diff keep it; once no Cluster names it,
#             plan and diff agree it goes; after the run that drops it, no diff.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

start_capi_emulators
kget() { kubectl --request-timeout=10s "$@"; }
cp -R "$top/examples/capi" "$T/capi" || t_bail "cannot copy examples/capi"
rm -rf "$T/capi/.idpmake"
cd "$T/capi" || exit 1
sed -i "s|^name: capi-fleet|name: capi-fleet\ngit: {remote: \"$bare\"}\nargocd: {repo-url: \"file://$bare\"}|" distro.yaml
capi_clusterctl_init true
rev_of() { kget get clusters.cluster.x-k8s.io -n fleet "$1" -o jsonpath='{.spec.topology.classRef.name}' | sed 's/^quick-start-//'; }

# ---- validate --live on a fresh management cluster ------------------------------
t_fail "the management cluster has no namespace fleet" kget get namespace fleet
t_ok "validate --live: the namespace the syncs create counts as present" idpmake validate --live
t_grep "the class revision accepted" "mgmt/capi-classes:render: [0-9]+ objects accepted by 'mgmt'" "$OUTPUT"
t_grep "the Cluster accepted" "mgmt/cluster-eu-1:render: 1 object accepted by 'mgmt'" "$OUTPUT"
t_nogrep "no namespace error" 'namespaces "fleet" not found' "$OUTPUT"
t_fail "nothing was made: still no namespace fleet" kget get namespace fleet

# ---- no diff after a successful up ----------------------------------------------
t_ok "up makes both clusters" idpmake up -j 4
h1=$(rev_of eu-1)
t_ok "eu-1 names a class revision" test -n "$h1"
# no_diff WHEN: plan, diff and diff --live say nothing is to be done; render is what was pushed
no_diff() {
	local when=$1 f
	t_ok "$when: plan --exit-code" idpmake plan --exit-code
	t_ok "$when: diff --exit-code" idpmake diff --exit-code
	t_grep "$when: diff counts nothing" "0 objects differ from the GitOps repository" "$OUTPUT"
	t_ok "$when: diff --live --exit-code" idpmake diff --live --exit-code
	rm -rf "$T/rendered" "$T/pushed"
	mkdir -p "$T/pushed"
	t_ok "$when: render -o" idpmake render -o "$T/rendered"
	git --git-dir="$bare" archive main | tar -x -C "$T/pushed" || t_bail "cannot read the pushed tree"
	: >"$T/why"
	(cd "$T/pushed" && find . -path ./.idpmake -prune -o -type f -print | sort) >"$T/pushed.list"
	(cd "$T/rendered" && find . -type f | sort) >"$T/rendered.list"
	diff "$T/pushed.list" "$T/rendered.list" >>"$T/why" 2>&1 && diff -r -x .idpmake "$T/pushed" "$T/rendered" >>"$T/why" 2>&1
	t_report $? "$when: render writes the pushed tree byte for byte" "$T/why"
}
no_diff "after create"
t_ok "render mgmt/cluster-eu-1" idpmake render mgmt/cluster-eu-1
cp "$STDOUT" "$T/eu1.render"
grep -A1 '^    classRef:$' "$T/eu1.render" >"$T/eu1.classref"
t_grep "it prints the revised classRef" "^      name: quick-start-$h1\$" "$T/eu1.classref"
t_nogrep "and not the class package" "capi-classes|ClusterClass|quick-start-control-plane" "$T/eu1.render"
t_eq "only eu-1's Cluster" "# mgmt/cluster-eu-1/cluster.eu-1.yaml" "$(grep '^# ' "$T/eu1.render" | tr '\n' ' ' | sed 's/ $//')"
git --git-dir="$bare" show main:mgmt/cluster-eu-1/cluster.eu-1.yaml >"$T/eu1.pushed"
printf -- '---\n# mgmt/cluster-eu-1/cluster.eu-1.yaml\n' | cat - "$T/eu1.pushed" | cmp - "$T/eu1.render" >"$T/why" 2>&1
t_report $? "byte for byte what up pushed" "$T/why"

# ---- a class change: the old revision stays while a Cluster names it, then goes ------
sed -i 's/^spec: {template: {spec: {}}}$/spec: {template: {spec: {customImage: kindest\/node:v1.33.1}}}/' \
	packages/capi-classes/quick-start.yaml
emu_post fault '{"path_regex": "/applications/mgmt-cluster-us-1/sync$", "status": 500, "count": 100, "message": "sync refused by the test"}'
t_exit 1 "a class change: up moves eu-1; us-1's sync fails" idpmake up
emu_reset
h2=$(rev_of eu-1)
t_ok "eu-1 on a new revision" test -n "$h2" -a "$h2" != "$h1"
t_eq "us-1 still names the old one" "$h1" "$(rev_of us-1)"
t_ok "diff --exit-code: the old revision, which us-1 names, is kept" idpmake diff --exit-code
t_ok "render of the class package" idpmake render mgmt/capi-classes
t_grep "shows the kept revision" "^# mgmt/capi-classes/$h1/clusterclass.quick-start-$h1.yaml" "$STDOUT"
t_grep "and the new one" "^# mgmt/capi-classes/$h2/clusterclass.quick-start-$h2.yaml" "$STDOUT"
t_ok "the next up moves us-1" idpmake up
t_eq "us-1 names the new revision" "$h2" "$(rev_of us-1)"
# no synced Cluster names the old revision now: plan and diff both say its folder goes
t_exit 1 "plan --exit-code: the class renders again" idpmake plan --exit-code
t_grep "to drop the old revision" "class revision $h1 is named by no synced Cluster any more" "$OUTPUT"
t_exit 1 "diff --exit-code: as plan says" idpmake diff --exit-code
t_grep "the old revision's files go" "^--- a/mgmt/capi-classes/$h1/clusterclass.quick-start-$h1.yaml" "$STDOUT"
t_nogrep "nothing else differs" "^\+\+\+ b/" "$STDOUT"
t_ok "the next up drops it" idpmake up
t_fail "its folder is gone" git --git-dir="$bare" cat-file -e "main:mgmt/capi-classes/$h1"
no_diff "after the class change"
t_done
