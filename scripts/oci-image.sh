#!/usr/bin/env bash
# oci-image.sh — packs a directory as a one-layer OCI image archive that
# `ctr -n k8s.io images import` (and so `local-kubernetes.sh load`) accepts. No registry,
# no Docker: oci-layout, index.json (with the io.containerd.image.name annotation) and
# sha256-named blobs (config, manifest, one uncompressed layer tar), all reproducible.
#
#   scripts/oci-image.sh NAME OUT.tar ROOTFS-DIR ENTRYPOINT [ARG...]
#
# NAME is normalised the way containerd's CRI looks images up: `pause:1` becomes
# `docker.io/library/pause:1`, `localhost/pause:1` stays as it is. Pods must name the same
# image (short or normalised) with imagePullPolicy: Never. Prints the normalised name.
set -euo pipefail

die() { echo "oci-image: $*" >&2; exit 1; }
usage() { echo "usage: $0 NAME OUT.tar ROOTFS-DIR ENTRYPOINT [ARG...]" >&2; exit 2; }

# docker.io/library/NAME:TAG rules of github.com/distribution/reference, for plain names.
normalise_name() {
    local name=$1 first
    [[ $name =~ ^[a-z0-9][a-z0-9._/:-]*$ ]] || die "bad image name: $name"
    [[ ${name##*/} == *:* ]] || name=$name:latest
    first=${name%%/*}
    if [[ $name != */* ]]; then
        name=docker.io/library/$name
    elif [[ $first != *.* && $first != *:* && $first != localhost ]]; then
        name=docker.io/$name
    fi
    echo "$name"
}

# JSON string list from arguments (paths and simple arguments: escapes \ and ").
json_list() {
    local out="" a
    for a in "$@"; do
        a=${a//\\/\\\\}
        a=${a//\"/\\\"}
        out+="${out:+,}\"$a\""
    done
    echo "[$out]"
}

# Moves FILE into blobs/sha256/<digest>; prints "<digest> <size>".
add_blob() {
    local dir=$1 file=$2 digest size
    digest=$(sha256sum "$file" | cut -d' ' -f1)
    size=$(stat -c %s "$file")
    mv "$file" "$dir/blobs/sha256/$digest"
    echo "$digest $size"
}

work=""

main() {
    [[ $# -ge 4 ]] || usage
    local name out rootfs
    local layer_digest layer_size config_digest config_size manifest_digest manifest_size
    name=$(normalise_name "$1")
    out=$2
    rootfs=$3
    shift 3
    [[ -d $rootfs ]] || die "not a directory: $rootfs"
    command -v sha256sum >/dev/null || die "sha256sum is missing"
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT # work is global: the trap runs after main returns
    mkdir -p "$work/image/blobs/sha256"

    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu \
        -cf "$work/layer.tar" -C "$rootfs" .
    read -r layer_digest layer_size < <(add_blob "$work/image" "$work/layer.tar")

    cat >"$work/config.json" <<EOF
{"architecture":"amd64","os":"linux","created":"1970-01-01T00:00:00Z","config":{"Entrypoint":$(json_list "$@"),"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],"WorkingDir":"/"},"rootfs":{"type":"layers","diff_ids":["sha256:$layer_digest"]},"history":[{"created":"1970-01-01T00:00:00Z","created_by":"scripts/oci-image.sh"}]}
EOF
    read -r config_digest config_size < <(add_blob "$work/image" "$work/config.json")

    cat >"$work/manifest.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json","config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:$config_digest","size":$config_size},"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar","digest":"sha256:$layer_digest","size":$layer_size}]}
EOF
    read -r manifest_digest manifest_size < <(add_blob "$work/image" "$work/manifest.json")

    echo '{"imageLayoutVersion":"1.0.0"}' >"$work/image/oci-layout"
    cat >"$work/image/index.json" <<EOF
{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:$manifest_digest","size":$manifest_size,"platform":{"architecture":"amd64","os":"linux"},"annotations":{"io.containerd.image.name":"$name","org.opencontainers.image.ref.name":"${name##*:}"}}]}
EOF
    tar --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 --format=gnu \
        -cf "$work/out.tar" -C "$work/image" oci-layout index.json blobs
    mkdir -p "$(dirname "$out")"
    mv "$work/out.tar" "$out"
    echo "$name"
}

main "$@"
