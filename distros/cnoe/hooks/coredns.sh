#!/bin/sh
# ingress-nginx post hook: inside the cluster, ${host} and *.${host} resolve
# to the ingress-nginx controller's Service (as idpbuilder's CoreDNS
# rewrite), so the URLs in the browser and in the cluster are the same.
set -eu
host=$IDPMAKE_VAR_HOST
ns=$IDPMAKE_NAMESPACE
svc="ingress-nginx-controller.$ns.svc.cluster.local"
cf=$(kubectl -n kube-system get configmap coredns -o jsonpath='{.data.Corefile}')
case $cf in
*"rewrite name $host $svc"*) echo "coredns: already rewrites $host"; exit 0 ;;
esac
rules="rewrite name $host $svc\n    rewrite name regex (.*)\\\\.$(printf '%s' "$host" | sed 's/\./\\\\./g') $svc answer auto"
new=$(printf '%s\n' "$cf" | sed "s|^\(\s*\)ready|\1$rules\n\1ready|")
kubectl -n kube-system create configmap coredns --from-literal=Corefile="$new" --dry-run=client -o yaml |
	# a field manager of no distro's: deploy: kubectl counts idpmake and idpmake/NAME as owners
	kubectl apply --server-side --force-conflicts --field-manager=idpmake-hook -f -
kubectl -n kube-system rollout restart deployment coredns
echo "coredns: $host and *.$host now resolve to $svc"
