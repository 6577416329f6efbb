#!/bin/sh
# Lays out the image's file tree under ROOT from ferry's tarball (`npm run package`). The
# Dockerfile's build stage runs this, and test/deploy/install.test.ts runs the same script into a
# temp folder, so that `npm test` checks the tree without a Docker engine.
#
#   deploy/image/layout.sh TARBALL ROOT
#
# ROOT/opt/ferry      ferry and its production dependencies (npm install --global --prefix), its
#                     command at ROOT/opt/ferry/bin/ferry; read-only at run time
# ROOT/var/lib/ferry  the state directory (FERRY_STATE_DIR), where ferry writes
set -eu
if [ "$#" -ne 2 ]; then
  echo "usage: $0 TARBALL ROOT" >&2
  exit 2
fi
tarball=$1
root=$2
# npm 11 asks for the native addon's install script to be allowed; npm 10 has no such setting.
allow=
case "$(npm --version)" in
  1[0-9].*) [ "$(npm --version | cut -d. -f1)" -ge 11 ] && allow=--allow-scripts=better-sqlite3 ;;
esac
mkdir -p "$root/opt/ferry" "$root/var/lib/ferry"
npm install --global --prefix "$root/opt/ferry" --omit=dev --no-audit --no-fund --prefer-offline $allow "$tarball"
# What compiling the native addon left behind is not needed to run it.
addon="$root/opt/ferry/lib/node_modules/ferry/node_modules/better-sqlite3"
rm -rf "$addon/build/Release/obj" "$addon/build/Release/obj.target" "$addon/build/Release/.deps" \
  "$addon/build/Release/test_extension.node" "$addon/build/Release/sqlite3.a" "$addon/deps" "$addon/src"
