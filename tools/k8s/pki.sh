#!/usr/bin/env bash
# Writes the local cluster's PKI and kubeconfigs into DIR with openssl (P-256 keys, fast to make):
# a CA; the apiserver's serving cert (SANs: 127.0.0.1, the gateway IP pods reach it on, the first
# Service IP, kubernetes.default.svc…); client certs for admin (O=system:masters), the apiserver
# towards kubelets, controller-manager, scheduler, kube-proxy and the kubelet
# (O=system:nodes, CN=system:node:NODE); the kubelet's serving cert; the service-account key pair;
# and one kubeconfig per client, certificates embedded, pointing at API_URL.
# Usage: tools/k8s/pki.sh DIR NODE NODE_IP API_URL API_SERVICE_IP
case "${1:-}" in -h | --help) sed -n '2,/^[^#]/s/^# \{0,1\}//p' "$0"; exit 0 ;; esac
set -euo pipefail
[ $# -eq 5 ] || { echo "usage: $0 DIR NODE NODE_IP API_URL API_SERVICE_IP" >&2; exit 2; }
dir=$1 node=$2 node_ip=$3 api_url=$4 api_service_ip=$5
mkdir -p "$dir"
cd "$dir"
umask 077

key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1.key" 2>/dev/null; }

openssl_config() { # extensions…: a config whose [ext] section holds them
  printf '[req]\ndistinguished_name = dn\n[dn]\n[ext]\n'
  printf '%s\n' "$@"
}

ca() {
  key ca
  openssl req -x509 -new -key ca.key -subj "/CN=gatehouse-local-k8s-ca" -days 3650 -sha256 \
    -config <(openssl_config basicConstraints=critical,CA:TRUE keyUsage=critical,keyCertSign,cRLSign \
      subjectKeyIdentifier=hash) -extensions ext -out ca.crt
}

# name, subject, extendedKeyUsage, [subjectAltName]: a key and a certificate signed by the CA.
cert() {
  local name=$1 subject=$2 usage=$3 san=${4:-}
  # shellcheck disable=SC2054 # commas separate the values of one extension
  local extensions=(basicConstraints=critical,CA:FALSE keyUsage=critical,digitalSignature,keyEncipherment
    "extendedKeyUsage=$usage" authorityKeyIdentifier=keyid)
  [ -n "$san" ] && extensions+=("subjectAltName=$san")
  key "$name"
  openssl req -new -key "$name.key" -subj "$subject" -config <(openssl_config) |
    openssl x509 -req -CA ca.crt -CAkey ca.key -set_serial "0x$(openssl rand -hex 16)" -days 3650 -sha256 \
      -extfile <(openssl_config "${extensions[@]}") -extensions ext -out "$name.crt" 2>/dev/null
}

kubeconfig() { # name, user: a kubeconfig with the client cert of that name embedded
  cat >"$1.kubeconfig" <<YAML
apiVersion: v1
kind: Config
clusters:
- name: gatehouse-local
  cluster:
    server: $api_url
    certificate-authority-data: $(base64 -w0 ca.crt)
users:
- name: $2
  user:
    client-certificate-data: $(base64 -w0 "$1.crt")
    client-key-data: $(base64 -w0 "$1.key")
contexts:
- name: gatehouse-local
  context: {cluster: gatehouse-local, user: $2}
current-context: gatehouse-local
YAML
}

ca
cert apiserver "/CN=kube-apiserver" serverAuth \
  "IP:127.0.0.1,IP:$node_ip,IP:$api_service_ip,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
cert apiserver-kubelet-client "/O=system:masters/CN=kube-apiserver-kubelet-client" clientAuth
cert kubelet-serving "/CN=$node" serverAuth "IP:$node_ip,DNS:$node"
cert admin "/O=system:masters/CN=admin" clientAuth
cert controller-manager "/CN=system:kube-controller-manager" clientAuth
cert scheduler "/CN=system:kube-scheduler" clientAuth
cert kube-proxy "/CN=system:kube-proxy" clientAuth
cert kubelet "/O=system:nodes/CN=system:node:$node" clientAuth
key service-account
openssl pkey -in service-account.key -pubout -out service-account.pub
kubeconfig admin admin
kubeconfig controller-manager system:kube-controller-manager
kubeconfig scheduler system:kube-scheduler
kubeconfig kube-proxy system:kube-proxy
kubeconfig kubelet "system:node:$node"
