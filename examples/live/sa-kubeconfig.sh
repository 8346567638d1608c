#!/bin/sh
# Writes a kubeconfig for one of deploy/'s ServiceAccounts, so `kubetide run` runs with exactly the
# privileges deploy/rbac grants it (as its Deployment would), not as the admin.
#   examples/live/sa-kubeconfig.sh cluster-autoscaler|hpa|escalator|shadow [ADMIN_KUBECONFIG] > FILE
# (shadow: the read-only account of deploy/shadow/rbac)
# Needs kubectl on PATH and `kubectl apply -k deploy/rbac` done (Kubernetes 1.20 mints a token Secret
# per ServiceAccount; the controller-manager does it within seconds).
set -eu
component=${1:?usage: sa-kubeconfig.sh cluster-autoscaler|hpa|escalator|shadow [ADMIN_KUBECONFIG]}
admin=${2:-${KUBECONFIG:-$HOME/.kube/config}}
account=kubetide-$component
k() { kubectl --kubeconfig "$admin" "$@"; }
secret=$(k -n kubetide get serviceaccount "$account" -o jsonpath='{.secrets[0].name}')
if [ -z "$secret" ]; then
  echo "sa-kubeconfig.sh: ServiceAccount kubetide/$account has no token yet: apply deploy/rbac, retry" >&2
  exit 1
fi
token=$(k -n kubetide get secret "$secret" -o jsonpath='{.data.token}' | base64 -d)
server=$(k config view --minify --raw -o jsonpath='{.clusters[0].cluster.server}')
ca=$(k config view --minify --raw -o jsonpath='{.clusters[0].cluster.certificate-authority-data}')
cat <<YAML
apiVersion: v1
kind: Config
clusters: [{name: cluster, cluster: {server: "$server", certificate-authority-data: "$ca"}}]
users: [{name: $account, user: {token: "$token"}}]
contexts: [{name: $account, context: {cluster: cluster, user: $account, namespace: kubetide}}]
current-context: $account
YAML
