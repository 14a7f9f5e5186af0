#!/usr/bin/env bash
# Builds the web console (console/ → console/dist) with Vite; the gateway serves the result at
# /console. Offline: everything it needs is in node_modules.
#
# Skipped when console/dist was built from the same sources and lockfile: a build empties the folder
# first, and a gateway serving from it meanwhile (a running `npm start`, another test suite) would
# answer 404 for files that are there. Extra arguments go to Vite, and always build.
set -euo pipefail
cd "$(dirname "$0")/.."
stamp_file=node_modules/.cache/vps-console/sources.sha256
stamp=$({
  find console -path console/dist -prune -o -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum
  sha256sum package-lock.json
} | sha256sum | cut -d' ' -f1)
if [ "$#" -eq 0 ] && [ -f console/dist/index.html ] && [ "$(cat "$stamp_file" 2>/dev/null)" = "$stamp" ]; then
  exit 0
fi
npx --no-install vite build --config console/vite.config.mts --logLevel warn "$@"
mkdir -p "$(dirname "$stamp_file")"
echo "$stamp" >"$stamp_file"
