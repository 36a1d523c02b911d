#!/usr/bin/env bash
# Writes an OCI image layout (image-spec v1.1: oci-layout, index.json, blobs/sha256/) holding one
# image with a single gzip layer, using only tar's output, gzip and sha256sum: what a container
# engine or umoci would write, for machines that have neither. The image config is kube-proxy's
# (entrypoint /usr/local/bin/kube-proxy, no shell involved).
#
# usage: write-oci-layout.sh LAYER_TAR LAYOUT_DIR TAG
#   LAYER_TAR   an uncompressed tar of the root filesystem (its sha256 is the config's diff_id)
#   LAYOUT_DIR  created; must not exist
#   TAG         the index's org.opencontainers.image.ref.name (e.g. 0.1.0)
# env: IMAGE_NAME (default kube-proxy-ts), IMAGE_ARCH (default from uname -m),
#      SOURCE_DATE_EPOCH (the image's creation time; default now)
set -euo pipefail

[[ $# -eq 3 ]] || { echo "usage: $0 LAYER_TAR LAYOUT_DIR TAG" >&2; exit 2; }
layer_tar=$1
layout=$2
tag=$3
name=${IMAGE_NAME:-kube-proxy-ts}

# Every value below lands in JSON unescaped, so only characters that need no escaping are accepted.
[[ "$tag" =~ ^[A-Za-z0-9_][A-Za-z0-9._-]{0,127}$ ]] || { echo "write-oci-layout: bad tag: $tag" >&2; exit 2; }
[[ "$name" =~ ^[a-z0-9][a-z0-9._/-]*$ ]] || { echo "write-oci-layout: bad IMAGE_NAME: $name" >&2; exit 2; }
[[ -f "$layer_tar" ]] || { echo "write-oci-layout: no such layer tar: $layer_tar" >&2; exit 2; }
[[ ! -e "$layout" ]] || { echo "write-oci-layout: $layout already exists" >&2; exit 2; }

case "${IMAGE_ARCH:-$(uname -m)}" in
  x86_64 | amd64) arch=amd64 ;;
  aarch64 | arm64) arch=arm64 ;;
  *) echo "write-oci-layout: unsupported architecture ${IMAGE_ARCH:-$(uname -m)}" >&2; exit 2 ;;
esac
epoch=${SOURCE_DATE_EPOCH:-$(date +%s)}
created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)

blobs="$layout/blobs/sha256"
mkdir -p "$blobs"

sha() { sha256sum "$1" | cut -d' ' -f1; }
size() { stat -c %s "$1"; }
# Stores a file as a blob under its digest and prints the digest.
put_blob() {
  local digest
  digest=$(sha "$1")
  mv "$1" "$blobs/$digest"
  echo "$digest"
}

diff_id=$(sha "$layer_tar")
# -n leaves the name and time out of the gzip header, so the same tar gives the same digest.
gzip -n -6 -c "$layer_tar" >"$layout/layer.tmp"
layer_size=$(size "$layout/layer.tmp")
layer_digest=$(put_blob "$layout/layer.tmp")

printf '%s' \
  '{"created":"'"$created"'","architecture":"'"$arch"'","os":"linux",' \
  '"config":{"Env":["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],' \
  '"Entrypoint":["/usr/local/bin/kube-proxy"],"WorkingDir":"/"},' \
  '"rootfs":{"type":"layers","diff_ids":["sha256:'"$diff_id"'"]},' \
  '"history":[{"created":"'"$created"'","created_by":"deploy/image/build-oci.sh"}]}' >"$layout/config.tmp"
config_size=$(size "$layout/config.tmp")
config_digest=$(put_blob "$layout/config.tmp")

printf '%s' \
  '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.manifest.v1+json",' \
  '"config":{"mediaType":"application/vnd.oci.image.config.v1+json","digest":"sha256:'"$config_digest"'","size":'"$config_size"'},' \
  '"layers":[{"mediaType":"application/vnd.oci.image.layer.v1.tar+gzip","digest":"sha256:'"$layer_digest"'","size":'"$layer_size"'}]}' \
  >"$layout/manifest.tmp"
manifest_size=$(size "$layout/manifest.tmp")
manifest_digest=$(put_blob "$layout/manifest.tmp")

# ref.name is the tag (as umoci and skopeo read it); containerd and docker load name the image from
# io.containerd.image.name.
printf '%s' \
  '{"schemaVersion":2,"mediaType":"application/vnd.oci.image.index.v1+json","manifests":[' \
  '{"mediaType":"application/vnd.oci.image.manifest.v1+json","digest":"sha256:'"$manifest_digest"'","size":'"$manifest_size"',' \
  '"platform":{"architecture":"'"$arch"'","os":"linux"},' \
  '"annotations":{"org.opencontainers.image.ref.name":"'"$tag"'","io.containerd.image.name":"'"$name:$tag"'"}}]}' \
  >"$layout/index.json"
printf '%s' '{"imageLayoutVersion":"1.0.0"}' >"$layout/oci-layout"
