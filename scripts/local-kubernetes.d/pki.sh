# local-kubernetes.d/pki.sh — sourced by local-kubernetes.sh: the cluster's certificates and
# kubeconfigs (a throw-away EC P-256 CA per cluster, under DIR/pki). Uses DIR, APISERVER,
# NODE_NAME and die from the main script.
# ---------------------------------------------------------------------------------------------
# Certificates and kubeconfigs (a throw-away EC P-256 CA per cluster)

make_ca() {
    local pki=$DIR/pki
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/ca.key" 2>/dev/null
    openssl req -x509 -new -key "$pki/ca.key" -subj "/CN=local-kubernetes-ca" -days 3650 -sha256 \
        -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n[ca]\nbasicConstraints=critical,CA:TRUE\nkeyUsage=critical,keyCertSign,cRLSign,digitalSignature\nsubjectKeyIdentifier=hash\n') \
        -extensions ca -out "$pki/ca.crt"
}

# issue_cert FILE SUBJECT clientAuth|serverAuth [SUBJECT-ALT-NAMES]: DIR/pki/FILE.{key,crt}.
issue_cert() {
    local file=$1 subject=$2 usage=$3 san=${4:-} pki=$DIR/pki ext
    mkdir -p "$(dirname "$pki/$file")"
    ext="basicConstraints=critical,CA:FALSE"$'\n'"keyUsage=critical,digitalSignature,keyEncipherment"
    ext+=$'\n'"extendedKeyUsage=$usage"$'\n'"authorityKeyIdentifier=keyid"
    [[ -z $san ]] || ext+=$'\n'"subjectAltName=$san"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/$file.key" 2>/dev/null
    openssl req -new -key "$pki/$file.key" -subj "$subject" -config <(printf '[req]\ndistinguished_name=dn\n[dn]\n') |
        openssl x509 -req -CA "$pki/ca.crt" -CAkey "$pki/ca.key" -set_serial "0x$(openssl rand -hex 16)" \
            -days 3650 -sha256 -extfile <(printf '%s\n' "$ext") -out "$pki/$file.crt" 2>/dev/null
    [[ -s $pki/$file.crt ]] || die "openssl could not issue $file"
}

# write_kubeconfig OUT CERT-FILE USER [NAMESPACE]: a self-contained kubeconfig (data inline).
write_kubeconfig() {
    local out=$1 cert=$DIR/pki/$2 user=$3 ns=${4:-default}
    cat >"$out.partial" <<EOF
apiVersion: v1
kind: Config
clusters:
- name: local
  cluster:
    server: $APISERVER
    certificate-authority-data: $(base64 -w0 <"$DIR/pki/ca.crt")
users:
- name: $user
  user:
    client-certificate-data: $(base64 -w0 <"$cert.crt")
    client-key-data: $(base64 -w0 <"$cert.key")
contexts:
- name: $user@local
  context:
    cluster: local
    user: $user
    namespace: $ns
current-context: $user@local
EOF
    chmod 600 "$out.partial"
    mv "$out.partial" "$out"
}

make_pki() {
    local pki=$DIR/pki
    make_ca
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$pki/service-account.key" 2>/dev/null
    openssl pkey -in "$pki/service-account.key" -pubout -out "$pki/service-account.pub" 2>/dev/null
    issue_cert apiserver "/CN=kube-apiserver" serverAuth \
        "IP:127.0.0.1,IP:127.100.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local"
    issue_cert apiserver-kubelet-client "/CN=kube-apiserver-kubelet-client/O=system:masters" clientAuth
    issue_cert kubelet-serving "/CN=$NODE_NAME" serverAuth "IP:127.0.0.1,DNS:localhost,DNS:$NODE_NAME"
    issue_cert admin "/CN=local-admin/O=system:masters" clientAuth
    issue_cert kubelet "/CN=system:node:$NODE_NAME/O=system:nodes" clientAuth
    issue_cert controller-manager "/CN=system:kube-controller-manager" clientAuth
    issue_cert scheduler "/CN=system:kube-scheduler" clientAuth
    write_kubeconfig "$DIR/kubeconfig" admin local-admin
    write_kubeconfig "$DIR/conf/kubelet.kubeconfig" kubelet "system:node:$NODE_NAME"
    write_kubeconfig "$DIR/conf/controller-manager.kubeconfig" controller-manager system:kube-controller-manager
    write_kubeconfig "$DIR/conf/scheduler.kubeconfig" scheduler system:kube-scheduler
}
