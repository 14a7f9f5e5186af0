#!/usr/bin/env bash
# Finds the MinIO server (the S3-compatible store the tests and compose use) or builds it from its
# Go module, and prints its path. Order: $MINIO_PATH, `minio` on PATH, the cache below, else
# `go install` into that cache. Like the Temporal CLI, the build lives outside the work tree so
# that fresh clones on the same machine reuse it (about 4 minutes on 2 cores the first time).
set -euo pipefail

# The module has no tagged Go versions; this pseudo-version is the one `@latest` resolved to when
# the build was first proven here. `@latest` is the fallback.
versions=(${MINIO_VERSIONS:-v0.0.0-20260212201848-7aac2a2c5b7c latest})
cache_root="${VPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vps-tools}"

if [ -n "${MINIO_PATH:-}" ]; then
  if [ -x "$MINIO_PATH" ]; then echo "$MINIO_PATH"; exit 0; fi
  echo "MINIO_PATH=$MINIO_PATH is not an executable file" >&2
  exit 1
fi
if command -v minio >/dev/null 2>&1; then command -v minio; exit 0; fi
for v in "${versions[@]}"; do
  if [ -x "$cache_root/minio-$v/minio" ]; then echo "$cache_root/minio-$v/minio"; exit 0; fi
done

if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin "$HOME/go/bin"; do [ -x "$d/go" ] && PATH="$d:$PATH"; done
fi
command -v go >/dev/null 2>&1 || { echo "MinIO not found and Go is not installed to build it" >&2; exit 1; }

for v in "${versions[@]}"; do
  dest="$cache_root/minio-$v"
  mkdir -p "$dest.tmp"
  echo "building MinIO $v with go install (one-time, cached in $dest)" >&2
  if GOBIN="$dest.tmp" GOFLAGS="${GOFLAGS:-} -trimpath" go install "github.com/minio/minio@$v" >&2; then
    rm -rf "$dest" && mv "$dest.tmp" "$dest"
    echo "$dest/minio"
    exit 0
  fi
  echo "building MinIO $v failed; trying the next version" >&2
  rm -rf "$dest.tmp"
done
echo "could not build MinIO: ${versions[*]}" >&2
exit 1
