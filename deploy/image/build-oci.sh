#!/usr/bin/env bash
# Builds the image of deploy/image/Dockerfile without a container engine, as root:
#   1. a Debian bookworm root filesystem (mmdebstrap --variant=minbase, no recommends, docs/man/locales
#      left out as in debian:bookworm-slim) with the datapath tools kube-proxy runs;
#   2. Node 20: this machine's node binary (Debian 12's nodejs is 18), or NODE_BINARY=/path/to/node;
#   3. the app staged by stage-app.sh under /opt/kube-proxy-ts, and entrypoint.cjs as
#      /usr/local/bin/kube-proxy;
#   4. the root filesystem as one gzip layer of an OCI image layout (write-oci-layout.sh), packed as
#      an OCI archive.
# Output (under KUBE_PROXY_IMAGE_OUT, default <repo>/dist/image):
#   kube-proxy-ts-oci.tar   the OCI archive (skopeo copy oci-archive:…, podman load, docker load)
#   rootfs/                 the root filesystem, for chroot smoke tests
# env: KUBE_PROXY_IMAGE_SKIP_BUILD=1 (use the existing dist/), DEBIAN_MIRROR, DEBIAN_SECURITY_MIRROR,
#      NODE_BINARY, SOURCE_DATE_EPOCH.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
out=${KUBE_PROXY_IMAGE_OUT:-$repo/dist/image}
rootfs="$out/rootfs"
work="$out/.work"
archive="$out/kube-proxy-ts-oci.tar"

# Keep in step with the Dockerfile's apt-get install (deploy/image/src/image-definition.spec.ts checks it).
PACKAGES=(iptables ipset ipvsadm conntrack nftables iproute2)
SUITE=bookworm
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SECURITY_MIRROR=${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}
NODE_BIN=${NODE_BINARY:-$(command -v node || true)}

die() { echo "build-oci: $*" >&2; exit 1; }
t0=$(date +%s.%N)
last=$t0
step() {
  local now
  now=$(date +%s.%N)
  awk -v a="$last" -v b="$now" -v s="$1" 'BEGIN { printf "build-oci: %-34s %6.1f s\n", s, b - a }' >&2
  last=$now
}

[[ $(id -u) -eq 0 ]] || die "needs root (mmdebstrap --mode=root, chroot)"
command -v mmdebstrap >/dev/null || die "mmdebstrap is missing: apt-get install -y --no-install-recommends mmdebstrap"
for tool in tar gzip sha256sum npm; do
  command -v "$tool" >/dev/null || die "$tool is missing"
done
[[ -n "$NODE_BIN" && -x "$NODE_BIN" ]] || die "no node binary (set NODE_BINARY)"
node_version=$("$NODE_BIN" -p process.versions.node)
[[ "$node_version" == 20.* ]] || die "$NODE_BIN is Node $node_version; the image needs Node 20 (set NODE_BINARY)"
tag=$(node -p 'require(process.argv[1]).version' "$repo/apps/proxy/package.json")

# Only this script's own outputs are removed, and only under the output directory.
rm -rf -- "$rootfs" "$work" "$archive"
mkdir -p "$out" "$work"
trap 'rm -rf -- "$work"' EXIT

if [[ "${KUBE_PROXY_IMAGE_SKIP_BUILD:-}" != 1 ]]; then
  (cd "$repo" && NX_DAEMON=false NX_NO_CLOUD=true npx nx run proxy:build --outputStyle=static >&2)
  step "nx build proxy"
fi

include=$(IFS=,; echo "${PACKAGES[*]}")
# stdin from /dev/null: mmdebstrap reads sources.list from a non-terminal stdin.
mmdebstrap --mode=root --variant=minbase --include="$include" \
  --aptopt='APT::Install-Recommends "false"' \
  --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
  --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/info/*' \
  --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/lintian/*' \
  "$SUITE" "$rootfs" \
  "deb $MIRROR $SUITE main" "deb $MIRROR $SUITE-updates main" "deb $SECURITY_MIRROR $SUITE-security main" \
  </dev/null >&2
step "mmdebstrap (minbase + ${#PACKAGES[@]} packages)"

install -m 0755 "$NODE_BIN" "$rootfs/usr/local/bin/node"
chroot "$rootfs" /usr/local/bin/node --version >/dev/null || die "the copied node does not run in the rootfs (missing libraries?)"
step "node $node_version from $NODE_BIN"

"$here/stage-app.sh" "$repo" "$rootfs/opt/kube-proxy-ts" >&2
install -m 0755 "$here/entrypoint.cjs" "$rootfs/usr/local/bin/kube-proxy"
step "app (stage-app.sh)"

# /dev, /proc and /sys are the runtime's to mount; device nodes in a layer break rootless unpacking.
tar -C "$rootfs" --sort=name --numeric-owner --xattrs --xattrs-include='security.capability' \
  --exclude='./dev/*' --exclude='./proc/*' --exclude='./sys/*' --exclude='./run/*' --exclude='./tmp/*' \
  -cf "$work/layer.tar" .
step "layer tar"
"$here/write-oci-layout.sh" "$work/layer.tar" "$work/layout" "$tag"
step "OCI layout (gzip + sha256)"
tar -C "$work/layout" --sort=name --numeric-owner --owner=0 --group=0 -cf "$archive" oci-layout index.json blobs
step "OCI archive"

total=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')
printf 'build-oci: done in %.0f s: %s (%s), rootfs %s (%s)\n' "$total" \
  "$archive" "$(du -h "$archive" | cut -f1)" "$rootfs" "$(du -sh "$rootfs" | cut -f1)" >&2
