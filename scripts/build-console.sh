#!/usr/bin/env bash
# Builds the web console (console/ → console/dist) with Vite; the gateway serves the result at
# /console. Offline: everything it needs is in node_modules.
set -euo pipefail
cd "$(dirname "$0")/.."
exec npx --no-install vite build --config console/vite.config.mts --logLevel warn "$@"
