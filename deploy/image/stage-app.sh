#!/usr/bin/env bash
# Lays the built app out as the image runs it, under DEST (usually <rootfs>/opt/kube-proxy-ts):
# the workspace's package manifests and lockfile, the JavaScript of every runtime project's dist,
# and production node_modules installed from the lockfile (npm ci --omit=dev). The entrypoint
# (entrypoint.cjs, installed as /usr/local/bin/kube-proxy) is the caller's to install.
# The Dockerfile and build-oci.sh both call it, so the two images carry the same files.
# The workspace layout is kept (node_modules/@kube-proxy/* link to libs/* and apps/*) because that
# is how the built packages resolve each other; the workspaces that do not ship (tools, benchmarks,
# test libraries, e2e suites, image checks) only contribute their package.json, which npm ci needs
# to match the lockfile.
set -euo pipefail

usage() { echo "usage: $0 REPO_ROOT DEST" >&2; exit 2; }
[[ $# -eq 2 ]] || usage
src=$(cd "$1" && pwd)
dest=$2

[[ -f "$src/apps/proxy/dist/main.js" ]] || {
  echo "stage-app: $src/apps/proxy/dist/main.js is missing; build first: npx nx run proxy:build" >&2
  exit 1
}
if [[ -e "$dest" ]] && [[ -n "$(ls -A "$dest")" ]]; then
  echo "stage-app: $dest is not empty" >&2
  exit 1
fi
mkdir -p "$dest"

cp "$src/package.json" "$src/package-lock.json" "$dest/"
[[ -f "$src/LICENSE" ]] && cp "$src/LICENSE" "$dest/"

# The workspace globs come from package.json, so a project added there is staged without editing this.
mapfile -t patterns < <(node -e '
  const ws = JSON.parse(require("node:fs").readFileSync(process.argv[1], "utf8")).workspaces ?? [];
  process.stdout.write(ws.join("\n"));' "$src/package.json")
shopt -s nullglob
for pattern in "${patterns[@]}"; do
  for dir in "$src"/$pattern; do
    [[ -f "$dir/package.json" ]] || continue
    rel=${dir#"$src"/}
    mkdir -p "$dest/$rel"
    cp "$dir/package.json" "$dest/$rel/"
    # Only the runtime projects' JavaScript ships.
    case "$rel" in tools | tools/* | libs/testing/* | apps/*-e2e | deploy/*) continue ;; esac
    if [[ -d "$dir/dist" ]]; then
      cp -a "$dir/dist" "$dest/$rel/"
    fi
  done
done
shopt -u nullglob

# Declarations, source maps and build info point at sources the image does not carry.
find "$dest" -type f \( -name '*.d.ts' -o -name '*.d.ts.map' -o -name '*.js.map' -o -name '*.tsbuildinfo' \) -delete

(cd "$dest" && npm ci --omit=dev --ignore-scripts --no-audit --no-fund --prefer-offline --loglevel=error)
