#!/usr/bin/env bash
# build-kubernetes.sh — builds kube-apiserver, kube-controller-manager, kube-scheduler, kubelet
# and kubectl at one fixed version from the Go module proxy, and caches them outside the work
# tree in ${HEADROOM_CACHE_DIR:-$HOME/.cache/headroom}/kubernetes/<version>/bin/.
#
#   scripts/build-kubernetes.sh          build (only what is missing) and print the bin dir
#   scripts/build-kubernetes.sh --force  rebuild even if the binaries are there
#
# How: a scratch Go module (in the cache dir, never in the repository) that requires
# k8s.io/kubernetes with a `replace` for each of its staging modules (the list is read from
# k8s.io/kubernetes's own go.mod), a tools.go importing the cmd packages, `go mod tidy`, then
# one `go build -trimpath` under `nice` with the version stamped in by -ldflags.
# Cold (empty module and build caches): about 6.5 min on 2 cores (7 min of CPU), 3.1 GB Go
# build cache, 740 MB module cache, 400 MB of binaries. With a warm Go build cache: seconds.
set -euo pipefail

readonly K8S_VERSION=v1.34.4
readonly STAGING_VERSION=v0.34.4 # staging modules are tagged v0.<minor>.<patch>
readonly COMMANDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)

die() { echo "build-kubernetes: $*" >&2; exit 1; }
usage() { echo "usage: $0 [--force]" >&2; exit 2; }

cache_root() { echo "${HEADROOM_CACHE_DIR:-$HOME/.cache/headroom}/kubernetes/$K8S_VERSION"; }

all_built() {
    local bin=$1 cmd
    for cmd in "${COMMANDS[@]}"; do [[ -x $bin/$cmd ]] || return 1; done
}

# Writes go.mod and tools.go of the scratch module into $1.
write_module() {
    local mod=$1 k8s_dir replaces
    k8s_dir=$(go mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
        sed -n 's/^[[:space:]]*"Dir": "\(.*\)",\{0,1\}$/\1/p') ||
        die "go mod download k8s.io/kubernetes@$K8S_VERSION failed"
    [[ -n $k8s_dir && -f $k8s_dir/go.mod ]] || die "could not download k8s.io/kubernetes@$K8S_VERSION"
    # Every `k8s.io/NAME => ./staging/src/k8s.io/NAME` line of its replace block.
    replaces=$(sed -n 's#^[[:space:]]*\(k8s\.io/[^[:space:]]*\)[[:space:]]*=>[[:space:]]*\./staging/.*#\1#p' \
        "$k8s_dir/go.mod")
    [[ -n $replaces ]] || die "no staging replace block in $k8s_dir/go.mod"
    {
        echo "module headroom.local/kubernetes-build"
        echo
        echo "go 1.24.0"
        echo
        echo "require k8s.io/kubernetes $K8S_VERSION"
        echo
        echo "replace ("
        local m
        for m in $replaces; do echo "	$m => $m $STAGING_VERSION"; done
        echo ")"
    } >"$mod/go.mod"
    {
        echo "//go:build tools"
        echo
        echo "// Package tools pins the Kubernetes commands this module builds."
        echo "package tools"
        echo
        echo "import ("
        local cmd
        for cmd in "${COMMANDS[@]}"; do echo "	_ \"k8s.io/kubernetes/cmd/$cmd\""; done
        echo ")"
    } >"$mod/tools.go"
    echo "build-kubernetes: $(wc -w <<<"$replaces") staging modules replaced" >&2
}

build() {
    local root mod bin tmp cmd pkgs=() minor
    root=$(cache_root)
    mod=$root/module
    bin=$root/bin
    command -v go >/dev/null || die "go is not on PATH"
    mkdir -p "$mod"
    export GOTOOLCHAIN=${GOTOOLCHAIN:-local} GOFLAGS="${GOFLAGS:-} -mod=mod"
    write_module "$mod"
    (cd "$mod" && go mod tidy) || die "go mod tidy failed in $mod"
    minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
    local x=(
        "-X k8s.io/component-base/version.gitVersion=$K8S_VERSION"
        "-X k8s.io/component-base/version.gitMajor=1"
        "-X k8s.io/component-base/version.gitMinor=$minor"
        "-X k8s.io/component-base/version.gitTreeState=clean"
        "-X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"
        "-X k8s.io/client-go/pkg/version.gitMajor=1"
        "-X k8s.io/client-go/pkg/version.gitMinor=$minor"
        "-X k8s.io/client-go/pkg/version.gitTreeState=clean"
    )
    for cmd in "${COMMANDS[@]}"; do pkgs+=("k8s.io/kubernetes/cmd/$cmd"); done
    # Build into a temporary dir, then move into place: a half-built bin/ never looks complete.
    tmp=$root/bin.partial
    rm -rf "$tmp"
    mkdir -p "$tmp"
    echo "build-kubernetes: building ${COMMANDS[*]} $K8S_VERSION (nice, this takes a while cold)" >&2
    (cd "$mod" && CGO_ENABLED=0 nice -n 19 go build -trimpath -o "$tmp/" \
        -ldflags "-s -w ${x[*]}" "${pkgs[@]}") || die "go build failed"
    all_built "$tmp" || die "go build left no binaries in $tmp"
    rm -rf "$bin"
    mv "$tmp" "$bin"
}

main() {
    local force=false
    case $# in
        0) ;;
        1) [[ $1 == --force ]] || usage; force=true ;;
        *) usage ;;
    esac
    local bin start
    bin=$(cache_root)/bin
    # One build at a time per cache dir; a second caller waits, then finds the binaries there.
    mkdir -p "$(cache_root)"
    exec 9>"$(cache_root)/.build.lock"
    flock 9
    if $force || ! all_built "$bin"; then
        start=$(date +%s)
        build
        echo "build-kubernetes: built in $(($(date +%s) - start)) s into $bin" >&2
    fi
    echo "$bin"
}

main "$@"
