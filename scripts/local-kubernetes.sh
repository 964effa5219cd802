#!/usr/bin/env bash
# local-kubernetes.sh — a real single-node Kubernetes (etcd, kube-apiserver,
# kube-controller-manager, kube-scheduler, containerd + runc, kubelet) on 127.0.0.1 only, with
# all of its state under one directory, for integration tests. Run as root.
#
#   up DIR                      start a fresh cluster; leaves DIR/kubeconfig (admin)
#   load DIR IMAGE.tar          import an OCI image archive; prints the image name(s)
#   user DIR NAME NAMESPACE     client cert + DIR/NAME.kubeconfig (CN=NAME, no rights)
#   kubectl DIR ARGS...         the script's kubectl with --kubeconfig DIR/kubeconfig
#   down DIR                    stop everything `up` started and clean up after it
#   env                         where the binaries are, and their versions
#
# The certificates (local-kubernetes.d/pki.sh) and what `down` does (local-kubernetes.d/teardown.sh)
# are sourced from beside this script.
#
# Environment: HEADROOM_CACHE_DIR (default ~/.cache/headroom) holds the built binaries and the
# pause image; LOCAL_KUBERNETES_LOG_MAX_SIZE (default 10Mi) and LOCAL_KUBERNETES_LOG_MAX_FILES
# (default 2) are the kubelet's containerLogMaxSize / containerLogMaxFiles.
#
# Pods run with hostNetwork: true and imagePullPolicy: Never (there is no pod network and no
# registry). Processes are recorded in DIR/pids/ and stopped by pid only. Logs: DIR/logs/.
# Exit codes: 0 ok, 1 failure, 2 bad usage or refused (e.g. a cluster already running).
set -euo pipefail

SCRIPTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
readonly SCRIPTS
readonly K8S_VERSION=v1.34.4
CACHE_ROOT=$(realpath -m "${HEADROOM_CACHE_DIR:-$HOME/.cache/headroom}")
readonly CACHE=$CACHE_ROOT/kubernetes/$K8S_VERSION
readonly BIN=$CACHE/bin
readonly PAUSE_IMAGE=localhost/headroom-pause:1
readonly PAUSE_TAR=$CACHE/images/headroom-pause-1.tar
readonly NODE_NAME=local-node
readonly APISERVER=https://127.0.0.1:6443
readonly PORTS=(2379 2380 6443 10250 10257 10259)
readonly SYSCTLS=(vm.overcommit_memory kernel.panic kernel.panic_on_oops)
readonly DEB_PACKAGES=(etcd-server containerd runc containernetworking-plugins)
readonly K8S_COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
readonly CNI_BIN_DIR=/usr/lib/cni
# Started in this order; stopped in the reverse one.
readonly COMPONENTS=(etcd containerd kube-apiserver kube-controller-manager kube-scheduler kubelet)
readonly MARKER=.local-kubernetes
# Host paths the kubelet and containerd create whatever they are told (the device-plugin socket
# path is fixed in the kubelet; shim sockets live in /run/containerd/s): those that did not
# exist before `up` are listed in DIR/host-dirs.created and removed by `down` when empty.
readonly HOST_DIRS=(/var/lib/kubelet/device-plugins /var/lib/kubelet /var/log/containers
    /run/containerd/s /run/containerd)
readonly DEVICE_PLUGIN_SOCKET=/var/lib/kubelet/device-plugins/kubelet.sock
readonly START_TIMEOUT_S=${LOCAL_KUBERNETES_START_TIMEOUT:-120}
readonly STOP_TIMEOUT_S=${LOCAL_KUBERNETES_STOP_TIMEOUT:-15}

DIR="" # the cluster's directory (absolute), set by set_dir
QUIET=false

# ---------------------------------------------------------------------------------------------
# Small helpers

UP_START="" # set while up runs: log lines then carry the seconds since up started
log() {
    $QUIET && return 0
    if [[ -n $UP_START ]]; then
        echo "local-kubernetes: [$(seconds_since "$UP_START") s] $*" >&2
    else
        echo "local-kubernetes: $*" >&2
    fi
}
die() { echo "local-kubernetes: $*" >&2; exit 1; }
refuse() { echo "local-kubernetes: $*" >&2; exit 2; }
usage() {
    echo "usage: $0 up DIR | load DIR IMAGE.tar | user DIR NAME NAMESPACE | kubectl DIR ARGS... | down DIR | env" >&2
    exit 2
}

now() { echo "${EPOCHREALTIME/,/.}"; }
seconds_since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# DIR must be absolute-able, free of whitespace, and short enough for the unix sockets under
# it (the longest is DIR/kubelet/device-plugins/kubelet.sock; the limit is 107 bytes).
set_dir() {
    [[ -n ${1:-} ]] || usage
    DIR=$(realpath -m "$1")
    [[ $DIR != / && $DIR =~ ^/[A-Za-z0-9._/+-]+$ ]] || refuse "DIR must be a plain path without spaces: $1"
    ((${#DIR} <= 64)) || refuse "DIR is too long for unix sockets (${#DIR} > 64 characters): $DIR"
}

require_root() { [[ $(id -u) == 0 ]] || refuse "must run as root (containers, mounts, cgroups)"; }

kubectl_admin() { "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" "$@"; }

ctr_cmd() { timeout 60 ctr --address "$DIR/run/containerd.sock" "$@"; }

# True when PID is a live (not zombie) process whose command line names DIR.
is_our_process() {
    local pid=$1 stat cmdline
    [[ $pid =~ ^[0-9]+$ ]] || return 1
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || return 1
    stat=${stat##*) }
    [[ ${stat%% *} != Z ]] || return 1
    cmdline=$(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline") || return 1
    [[ $cmdline == *"$DIR/"* ]]
}

# Prints the recorded pid of component NAME when that process is still alive.
live_pid() {
    local file=$DIR/pids/$1.pid pid
    [[ -f $file ]] || return 1
    pid=$(<"$file")
    is_our_process "$pid" || return 1
    echo "$pid"
}

any_component_alive() {
    local c
    for c in "${COMPONENTS[@]}"; do live_pid "$c" >/dev/null && return 0; done
    return 1
}

# Listening TCP ports among PORTS (from /proc/net/tcp{,6}; state 0A is LISTEN).
busy_ports() {
    local p hex
    for p in "${PORTS[@]}"; do
        printf -v hex '%04X' "$p"
        if awk -v h=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == h { found = 1 } END { exit !found }' \
            /proc/net/tcp /proc/net/tcp6 2>/dev/null; then
            echo "$p"
        fi
    done
}

# Starts component NAME detached (own session, cwd DIR, output to DIR/logs/NAME.log) and
# records its pid in DIR/pids/NAME.pid.
start_process() {
    local name=$1 pid
    shift
    (cd "$DIR" && exec setsid "$@" </dev/null >>"$DIR/logs/$name.log" 2>&1) &
    pid=$!
    echo "$pid" >"$DIR/pids/$name.pid"
    log "started $name (pid $pid)"
}

# wait_for COMPONENT WHAT COMMAND...: polls COMMAND until it succeeds; fails early when
# COMPONENT has exited, and after START_TIMEOUT_S.
wait_for() {
    local component=$1 what=$2 deadline
    shift 2
    deadline=$((SECONDS + START_TIMEOUT_S))
    until "$@" >/dev/null 2>&1; do
        if ! live_pid "$component" >/dev/null; then
            tail -n 15 "$DIR/logs/$component.log" >&2 || true
            die "$component exited while waiting for $what; see $DIR/logs/$component.log"
        fi
        ((SECONDS < deadline)) || die "timed out after ${START_TIMEOUT_S}s waiting for $what; see $DIR/logs/"
        sleep 0.1
    done
}

# ---------------------------------------------------------------------------------------------
# What the cluster is made of: Debian packages, the built binaries, the pause image

ensure_packages() {
    local missing=() p
    for p in "${DEB_PACKAGES[@]}"; do
        [[ $(dpkg-query -W -f '${Status}' "$p" 2>/dev/null) == "install ok installed" ]] || missing+=("$p")
    done
    ((${#missing[@]} == 0)) && return 0
    log "installing ${missing[*]} with apt-get"
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q --no-install-recommends "${missing[@]}" >&2 ||
        { apt-get update -q >&2 && apt-get install -y -q --no-install-recommends "${missing[@]}" >&2; } ||
        die "apt-get install ${missing[*]} failed"
}

binaries_built() {
    local c
    for c in "${K8S_COMMANDS[@]}"; do [[ -x $BIN/$c ]] || return 1; done
}

# Sets BINARIES_NOTE for up's last line.
BINARIES_NOTE="binaries cached"
ensure_binaries() {
    binaries_built && return 0
    local start
    start=$(now)
    log "building Kubernetes $K8S_VERSION (once; cached in $BIN)"
    HEADROOM_CACHE_DIR=$CACHE_ROOT "$SCRIPTS/build-kubernetes.sh" >/dev/null || die "building Kubernetes failed"
    binaries_built || die "the build left no binaries in $BIN"
    BINARIES_NOTE="binaries built in $(seconds_since "$start") s"
}

# The pod sandbox: a static program that sleeps until SIGTERM/SIGINT and reaps children.
ensure_pause_image() {
    [[ -s $PAUSE_TAR ]] && return 0
    if ! command -v gcc >/dev/null || [[ ! -f /usr/lib/x86_64-linux-gnu/libc.a ]]; then
        log "installing gcc and libc6-dev for the pause image"
        DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends gcc libc6-dev >&2 ||
            die "apt-get install gcc libc6-dev failed"
    fi
    local work
    work=$(mktemp -d)
    cat >"$work/pause.c" <<'EOF'
/* Pod sandbox for local-kubernetes.sh: holds the pod's namespaces until told to stop. */
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

static void stop(int sig) { (void)sig; _exit(0); }
static void reap(int sig) { (void)sig; while (waitpid(-1, 0, WNOHANG) > 0) {} }

int main(void) {
    struct sigaction sa = {0};
    sa.sa_handler = stop;
    sigaction(SIGTERM, &sa, 0);
    sigaction(SIGINT, &sa, 0);
    sa.sa_handler = reap;
    sa.sa_flags = SA_NOCLDSTOP | SA_RESTART;
    sigaction(SIGCHLD, &sa, 0);
    for (;;) pause();
}
EOF
    mkdir -p "$work/rootfs"
    gcc -static -Os -s -o "$work/rootfs/pause" "$work/pause.c" || { rm -rf "$work"; die "building the pause program failed"; }
    mkdir -p "$(dirname "$PAUSE_TAR")"
    "$SCRIPTS/oci-image.sh" "$PAUSE_IMAGE" "$PAUSE_TAR.$$.partial" "$work/rootfs" /pause >/dev/null ||
        { rm -rf "$work" "$PAUSE_TAR.$$.partial"; die "packing the pause image failed"; }
    mv "$PAUSE_TAR.$$.partial" "$PAUSE_TAR"
    rm -rf "$work"
    log "built the pause image $PAUSE_IMAGE into $PAUSE_TAR"
}

# ---------------------------------------------------------------------------------------------
# Certificates and kubeconfigs: local-kubernetes.d/pki.sh

# shellcheck source=scripts/local-kubernetes.d/pki.sh
source "$SCRIPTS/local-kubernetes.d/pki.sh"

# ---------------------------------------------------------------------------------------------
# The components

start_etcd() {
    start_process etcd etcd --name local --data-dir "$DIR/etcd" \
        --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
        --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
        --initial-cluster local=http://127.0.0.1:2380 --initial-cluster-state new \
        --unsafe-no-fsync --logger zap --log-outputs stderr
}
etcd_healthy() { curl -sf --max-time 2 http://127.0.0.1:2379/health | grep -q '"health":"true"'; }

write_containerd_config() {
    mkdir -p "$DIR/cni/net.d" "$DIR/containerd"
    cat >"$DIR/cni/net.d/10-loopback.conflist" <<'EOF'
{"cniVersion": "0.4.0", "name": "loopback", "plugins": [{"type": "loopback"}]}
EOF
    cat >"$DIR/containerd/config.toml" <<EOF
version = 2
root = "$DIR/containerd/root"
state = "$DIR/containerd/state"
disabled_plugins = ["io.containerd.snapshotter.v1.aufs", "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing"]

[grpc]
  address = "$DIR/run/containerd.sock"
[ttrpc]
  address = "$DIR/run/containerd.sock.ttrpc"
[debug]
  address = ""
[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = "$DIR/containerd/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE_IMAGE"
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = "$DIR/containerd/runc"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "$CNI_BIN_DIR"
    conf_dir = "$DIR/cni/net.d"
    max_conf_num = 1
EOF
}

start_containerd() {
    write_containerd_config
    start_process containerd containerd --config "$DIR/containerd/config.toml"
}
# The socket answers and the CRI plugin loaded (a bad config only shows as a skipped plugin).
containerd_ready() {
    [[ -S $DIR/run/containerd.sock ]] && ctr_cmd plugins ls | grep -Eq '^io\.containerd\.grpc\.v1[[:space:]]+cri[[:space:]].*[[:space:]]ok[[:space:]]*$'
}

# import_image TAR: imports into namespace k8s.io; prints the image name(s) it imported.
import_image() {
    local out names
    out=$(ctr_cmd -n k8s.io images import "$1" 2>&1) || { echo "$out" >&2; die "ctr images import $1 failed"; }
    names=$(sed -n 's/^unpacking \(.*\) (sha256:[0-9a-f]*)\.\.\.done$/\1/p' <<<"$out")
    [[ -n $names ]] || { echo "$out" >&2; die "ctr imported no named image from $1"; }
    echo "$names"
}

start_apiserver() {
    local pki=$DIR/pki
    start_process kube-apiserver "$BIN/kube-apiserver" \
        --etcd-servers=http://127.0.0.1:2379 \
        --bind-address=127.0.0.1 --advertise-address=127.0.0.1 --secure-port=6443 \
        --cert-dir="$pki/apiserver-generated" \
        --tls-cert-file="$pki/apiserver.crt" --tls-private-key-file="$pki/apiserver.key" \
        --client-ca-file="$pki/ca.crt" \
        --service-account-key-file="$pki/service-account.pub" \
        --service-account-signing-key-file="$pki/service-account.key" \
        --service-account-issuer=https://kubernetes.default.svc.cluster.local \
        --service-cluster-ip-range=127.100.0.0/24 \
        --endpoint-reconciler-type=none \
        --authorization-mode=Node,RBAC \
        --allow-privileged=false \
        --kubelet-client-certificate="$pki/apiserver-kubelet-client.crt" \
        --kubelet-client-key="$pki/apiserver-kubelet-client.key" \
        --kubelet-certificate-authority="$pki/ca.crt" \
        --kubelet-preferred-address-types=InternalIP,Hostname \
        --profiling=false
}
apiserver_ready() {
    curl -sf --max-time 2 --cacert "$DIR/pki/ca.crt" --cert "$DIR/pki/admin.crt" --key "$DIR/pki/admin.key" \
        "$APISERVER/readyz" | grep -qx ok
}

start_controller_manager() {
    local conf=$DIR/conf/controller-manager.kubeconfig pki=$DIR/pki
    start_process kube-controller-manager "$BIN/kube-controller-manager" \
        --kubeconfig="$conf" --authentication-kubeconfig="$conf" --authorization-kubeconfig="$conf" \
        --bind-address=127.0.0.1 --secure-port=10257 --leader-elect=false \
        --controllers='*,-nodeipam,-service-lb-controller,-cloud-node-lifecycle' \
        --use-service-account-credentials=true \
        --service-account-private-key-file="$pki/service-account.key" --root-ca-file="$pki/ca.crt" \
        --cluster-signing-cert-file="$pki/ca.crt" --cluster-signing-key-file="$pki/ca.key" \
        --flex-volume-plugin-dir="$DIR/controller-manager/volume-plugins" \
        --node-monitor-period=1s --kube-api-qps=200 --kube-api-burst=400 --profiling=false
}

start_scheduler() {
    local conf=$DIR/conf/scheduler.kubeconfig
    start_process kube-scheduler "$BIN/kube-scheduler" \
        --kubeconfig="$conf" --authentication-kubeconfig="$conf" --authorization-kubeconfig="$conf" \
        --bind-address=127.0.0.1 --secure-port=10259 --leader-elect=false --profiling=false
}

write_kubelet_config() {
    local size=${LOCAL_KUBERNETES_LOG_MAX_SIZE:-10Mi} files=${LOCAL_KUBERNETES_LOG_MAX_FILES:-2}
    cat >"$DIR/conf/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: 127.0.0.1
port: 10250
readOnlyPort: 0
healthzPort: 0
tlsCertFile: $DIR/pki/kubelet-serving.crt
tlsPrivateKeyFile: $DIR/pki/kubelet-serving.key
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: $DIR/pki/ca.crt
authorization:
  mode: Webhook
containerRuntimeEndpoint: unix://$DIR/run/containerd.sock
imageServiceEndpoint: unix://$DIR/run/containerd.sock
cgroupDriver: cgroupfs
failSwapOn: false
makeIPTablesUtilChains: false
podLogsDir: $DIR/pod-logs
containerLogMaxSize: $size
containerLogMaxFiles: $files
containerLogMonitorInterval: 5s
volumePluginDir: $DIR/kubelet/volume-plugins
clusterDomain: cluster.local
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard:
  memory.available: "1Mi"
  nodefs.available: "1%"
  nodefs.inodesFree: "1%"
  imagefs.available: "1%"
  imagefs.inodesFree: "1%"
EOF
}

start_kubelet() {
    write_kubelet_config
    start_process kubelet "$BIN/kubelet" \
        --config="$DIR/conf/kubelet.yaml" --kubeconfig="$DIR/conf/kubelet.kubeconfig" \
        --root-dir="$DIR/kubelet" --node-ip=127.0.0.1 --hostname-override="$NODE_NAME"
}

node_registered() { kubectl_admin get node "$NODE_NAME" -o name; }

# The kubelet refuses a loopback node IP, so the node gets no address and pods/log cannot reach
# the kubelet. Set the addresses once; the kubelet leaves them alone.
patch_node_addresses() {
    kubectl_admin patch node "$NODE_NAME" --subresource=status --type=merge \
        -p '{"status":{"addresses":[{"type":"InternalIP","address":"127.0.0.1"},{"type":"Hostname","address":"localhost"}]}}' \
        >/dev/null || die "could not patch the node's addresses"
}

# Ready, and the controller has lifted the not-ready taint: pods schedule at once.
node_schedulable() {
    local out
    out=$(kubectl_admin get node "$NODE_NAME" \
        -o 'jsonpath={.status.conditions[?(@.type=="Ready")].status} {.spec.taints}') || return 1
    [[ $out == "True " ]]
}

default_service_account() { kubectl_admin -n "${1:-default}" get serviceaccount default -o name; }

save_host_dirs() {
    local d
    for d in "${HOST_DIRS[@]}"; do [[ -e $d ]] || echo "$d"; done >"$DIR/host-dirs.created"
}

save_sysctls() {
    local s
    for s in "${SYSCTLS[@]}"; do echo "$s=$(<"/proc/sys/${s//.//}")"; done >"$DIR/sysctl.saved"
}

# ---------------------------------------------------------------------------------------------
# down: local-kubernetes.d/teardown.sh

# shellcheck source=scripts/local-kubernetes.d/teardown.sh
source "$SCRIPTS/local-kubernetes.d/teardown.sh"

# ---------------------------------------------------------------------------------------------
# Subcommands

# EXIT trap of up while it starts things: on failure, stop what it started.
on_up_exit() {
    local rc=$?
    trap - EXIT
    if ((rc != 0)); then
        echo "local-kubernetes: up failed; stopping what it started (logs stay in $DIR/logs)" >&2
        QUIET=true teardown || true
    fi
    exit "$rc"
}

cmd_up() {
    [[ $# == 1 ]] || usage
    set_dir "$1"
    require_root
    local size=${LOCAL_KUBERNETES_LOG_MAX_SIZE:-10Mi} files=${LOCAL_KUBERNETES_LOG_MAX_FILES:-2}
    [[ $size =~ ^[1-9][0-9]*(Ki|Mi|Gi)?$ ]] || refuse "LOCAL_KUBERNETES_LOG_MAX_SIZE must be like 10Mi, not: $size"
    [[ $files =~ ^[2-9]$|^[1-9][0-9]+$ ]] || refuse "LOCAL_KUBERNETES_LOG_MAX_FILES must be 2 or more, not: $files"
    local start busy
    start=$(now)
    UP_START=$start
    if [[ -d $DIR ]]; then
        any_component_alive && refuse "a cluster is already running in $DIR (run: $0 down $DIR)"
        [[ -f $DIR/$MARKER || -z $(ls -A "$DIR") ]] || refuse "$DIR is not empty and not a local-kubernetes directory"
    fi
    busy=$(busy_ports | tr '\n' ' ')
    [[ -z $busy ]] || refuse "ports in use by something else: ${busy% } (another cluster? run its down)"

    ensure_packages
    ensure_binaries
    ensure_pause_image

    # Start from a clean DIR: clean up after any earlier cluster there, then wipe its state.
    if [[ -f $DIR/$MARKER ]]; then
        QUIET=true teardown || die "could not clean up the earlier cluster in $DIR (try: $0 down $DIR)"
        [[ -z $(mounts_under_dir) ]] || die "something is still mounted under $DIR"
        find "$DIR" -mindepth 1 -maxdepth 1 -exec rm -rf --one-file-system {} +
    fi
    mkdir -p "$DIR"/{pki,conf,logs,pids,run,etcd,kubelet,pod-logs}
    chmod 700 "$DIR/pki" "$DIR/etcd"
    touch "$DIR/$MARKER"
    save_sysctls
    save_host_dirs

    # From here on, a failure or an interruption stops what was started.
    trap on_up_exit EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM

    make_pki
    start_etcd
    start_containerd
    wait_for etcd "etcd" etcd_healthy
    log "etcd healthy"
    start_apiserver
    wait_for containerd "containerd" containerd_ready
    import_image "$PAUSE_TAR" >/dev/null
    log "containerd ready, pause image imported"
    wait_for kube-apiserver "kube-apiserver /readyz" apiserver_ready
    log "kube-apiserver ready"
    start_controller_manager
    start_scheduler
    start_kubelet
    wait_for kubelet "the node to register" node_registered
    log "node registered"
    patch_node_addresses
    wait_for kubelet "the node to be Ready" node_schedulable
    log "node Ready"
    wait_for kube-controller-manager "the default service account" default_service_account default
    trap - EXIT INT TERM
    echo "local Kubernetes up in $(seconds_since "$start") s ($BINARIES_NOTE)"
}

cmd_down() {
    [[ $# == 1 ]] || usage
    set_dir "$1"
    require_root
    # Without the marker, up never got as far as starting anything here.
    if [[ ! -f $DIR/$MARKER ]]; then
        log "nothing to stop in $DIR"
        return 0
    fi
    local start
    start=$(now)
    teardown || die "down left something behind in $DIR (see above)"
    echo "local Kubernetes down in $(seconds_since "$start") s"
}

require_running() {
    binaries_built || die "Kubernetes binaries are not built (run: $0 up DIR)"
    live_pid kube-apiserver >/dev/null || die "no cluster is running in $DIR"
}

cmd_load() {
    [[ $# == 2 ]] || usage
    set_dir "$1"
    require_root
    [[ -f $2 ]] || refuse "no such image archive: $2"
    live_pid containerd >/dev/null || die "containerd is not running in $DIR"
    import_image "$2"
}

cmd_user() {
    [[ $# == 3 ]] || usage
    set_dir "$1"
    local name=$2 ns=$3
    [[ $name =~ ^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$ ]] || refuse "bad user name (lower-case letters, digits, - and .): $name"
    [[ $ns =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?$ && ${#ns} -le 63 ]] || refuse "bad namespace name: $ns"
    require_running
    issue_cert "users/$name" "/CN=$name" clientAuth
    write_kubeconfig "$DIR/$name.kubeconfig" "users/$name" "$name" "$ns"
    kubectl_admin get namespace "$ns" -o name >/dev/null 2>&1 ||
        kubectl_admin create namespace "$ns" >/dev/null || die "could not create namespace $ns"
    # Pods are refused until the namespace's default service account exists.
    wait_for kube-controller-manager "the default service account in $ns" default_service_account "$ns"
    echo "$DIR/$name.kubeconfig"
}

cmd_kubectl() {
    [[ $# -ge 1 ]] || usage
    set_dir "$1"
    shift
    binaries_built || die "Kubernetes binaries are not built (run: $0 up DIR)"
    exec "$BIN/kubectl" --kubeconfig "$DIR/kubeconfig" "$@"
}

deb_version() { dpkg-query -W -f '${Version}' "$1" 2>/dev/null || echo "not installed"; }

cmd_env() {
    [[ $# == 0 ]] || usage
    echo "cache: $CACHE"
    echo "bin: $BIN"
    local c
    for c in kube-apiserver kube-controller-manager kube-scheduler kubelet; do
        if [[ -x $BIN/$c ]]; then echo "$c: $("$BIN/$c" --version 2>&1 | head -n1)"; else echo "$c: not built"; fi
    done
    if [[ -x $BIN/kubectl ]]; then
        echo "kubectl: $("$BIN/kubectl" version --client 2>/dev/null | head -n1)"
    else
        echo "kubectl: not built"
    fi
    echo "etcd: $(command -v etcd || echo missing) (etcd-server $(deb_version etcd-server))"
    echo "containerd: $(command -v containerd || echo missing) ($(deb_version containerd))"
    echo "runc: $(command -v runc || echo missing) ($(deb_version runc))"
    echo "cni plugins: $CNI_BIN_DIR (containernetworking-plugins $(deb_version containernetworking-plugins))"
    if [[ -s $PAUSE_TAR ]]; then echo "pause image: $PAUSE_IMAGE ($PAUSE_TAR)"; else echo "pause image: $PAUSE_IMAGE (not built)"; fi
}

main() {
    [[ $# -ge 1 ]] || usage
    local cmd=$1
    shift
    case $cmd in
        up) cmd_up "$@" ;;
        down) cmd_down "$@" ;;
        load) cmd_load "$@" ;;
        user) cmd_user "$@" ;;
        kubectl) cmd_kubectl "$@" ;;
        env) cmd_env "$@" ;;
        -h | --help | help) usage ;;
        *) usage ;;
    esac
}

main "$@"
