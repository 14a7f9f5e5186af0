#!/usr/bin/env bash
# Finds the Temporal CLI (the dev server) or builds it from its Go module, and prints its path.
# Order: $TEMPORAL_CLI_PATH, `temporal` on PATH, the cache below, else `go install` into that cache.
# The cache lives outside the work tree so that fresh clones on the same machine reuse one build.
set -euo pipefail

# v1.5.1 is the newest release whose go.mod has no replace directive (`go install pkg@version`
# refuses modules with one); the earlier ones are fallbacks if it cannot be built here.
versions=(${TEMPORAL_CLI_VERSIONS:-v1.5.1 v1.4.1 v1.3.0})
cache_root="${VPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vps-tools}"

if [ -n "${TEMPORAL_CLI_PATH:-}" ]; then
  if [ -x "$TEMPORAL_CLI_PATH" ]; then echo "$TEMPORAL_CLI_PATH"; exit 0; fi
  echo "TEMPORAL_CLI_PATH=$TEMPORAL_CLI_PATH is not an executable file" >&2
  exit 1
fi
if command -v temporal >/dev/null 2>&1; then command -v temporal; exit 0; fi
for v in "${versions[@]}"; do
  if [ -x "$cache_root/temporal-$v/temporal" ]; then echo "$cache_root/temporal-$v/temporal"; exit 0; fi
done

if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin "$HOME/go/bin"; do [ -x "$d/go" ] && PATH="$d:$PATH"; done
fi
command -v go >/dev/null 2>&1 || { echo "Temporal CLI not found and Go is not installed to build it" >&2; exit 1; }

for v in "${versions[@]}"; do
  dest="$cache_root/temporal-$v"
  mkdir -p "$dest.tmp"
  echo "building Temporal CLI $v with go install (one-time, cached in $dest)" >&2
  if GOBIN="$dest.tmp" GOFLAGS="${GOFLAGS:-} -trimpath" go install "github.com/temporalio/cli/cmd/temporal@$v" >&2; then
    rm -rf "$dest" && mv "$dest.tmp" "$dest"
    echo "$dest/temporal"
    exit 0
  fi
  echo "building Temporal CLI $v failed; trying the next release" >&2
  rm -rf "$dest.tmp"
done
echo "could not build any of: ${versions[*]}" >&2
exit 1
