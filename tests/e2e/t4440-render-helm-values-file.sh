#!/bin/bash
# A helm package with `render: local`: its values (which may hold secrets) go
# to `helm template -f FILE` in a file that only the user can read (0600),
# created under TMPDIR and removed when helm is done, whether it succeeded or
# failed; none is left in the state folder (issue 12 #8). helm is a fake here
# that records its arguments, the mode and content of the -f file.
# shellcheck source=tests/e2e/lib.sh
. "$(dirname "$0")/lib.sh"

mkdistro d <<'EOF2'
idpmake: 1
name: helmlocal
packages:
  app:
    type: helm
    render: local
    chart: {repo: https://charts.example.com, name: thing, version: 1.0.0}
    values: [values/app.yaml]
    set: {db.token: s3cr3t-from-set}
    namespace: apps
EOF2
mkdir -p d/values bin tmp
printf 'db:\n  user: admin\n  password: hunter2-secret\n' >d/values/app.yaml

cat >bin/helm <<'EOF2'
#!/bin/sh
# a fake helm: records what it was given, prints one object (the log's path
# is written in below: children get an allowlisted environment, without T)
log=@LOG@
case $1 in version) echo v3.99.0; exit 0 ;; esac
printf 'argv:' >>"$log"
for a in "$@"; do printf ' [%s]' "$a" >>"$log"; done
echo >>"$log"
prev=
for a in "$@"; do
	if [ "$prev" = -f ]; then
		echo "file: $a" >>"$log"
		echo "mode: $(stat -c %a "$a")" >>"$log"
		sed 's/^/content: /' "$a" >>"$log"
	fi
	prev=$a
done
[ -e "$log.fail" ] && { echo "helm: failing as asked" >&2; exit 3; }
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: from-helm}\ndata: {a: "1"}\n'
EOF2
sed -i "s#@LOG@#$T/helm.log#" bin/helm && chmod +x bin/helm
export PATH=$T/bin:$PATH TMPDIR=$T/tmp

t_ok "up renders the chart with the fake helm" idpmake -C d up
t_grep "helm template got -f FILE" '^argv: \[template\] \[app\] \[thing\] .*\[-f\] \[' helm.log
t_grep "the file is under TMPDIR" "^file: $T/tmp/idpmake-values-" helm.log
t_grep "it was mode 0600" '^mode: 600$' helm.log
t_grep "the values file's secret reached helm" '^content: +password: hunter2-secret$' helm.log
t_grep "and the one from set" '^content: +token: s3cr3t-from-set$' helm.log
t_eq "nothing is left in TMPDIR" "" "$(ls -A tmp)"
t_eq "no values file in the state folder" "" "$(find d/.idpmake -name '*values*')"
t_eq "the secrets are in no file of the state folder" "" "$(grep -r -l -e hunter2 -e s3cr3t d/.idpmake 2>/dev/null)"
git -C d/.idpmake/gitops.git show main:in-cluster/app/configmap.from-helm.yaml >obj.yaml 2>&1
t_grep "helm's output was pushed" 'name: from-helm' obj.yaml

# a failing helm: the file is removed too
: >helm.log
echo "  extra: 1" >>d/values/app.yaml
touch "$T/helm.log.fail"
t_exit 1 "a failing helm fails the render" idpmake -C d up
rm -f "$T/helm.log.fail"
t_grep "helm was given a file" '^file: ' helm.log
t_eq "nothing is left in TMPDIR after a failure" "" "$(ls -A tmp)"

# a file planted at a predictable name is not followed or reused
ln -s "$T/planted-target" "$T/tmp/idpmake-values-XXXXXX.yaml"
: >helm.log
t_ok "up again" idpmake -C d up
t_ok "the planted link's target was not written" test ! -e "$T/planted-target"
t_eq "only the planted link is left" "idpmake-values-XXXXXX.yaml" "$(ls -A tmp)"
t_done
