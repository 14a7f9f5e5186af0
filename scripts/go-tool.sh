#!/usr/bin/env bash
# Finds a server we build from its Go module (the Temporal CLI, MinIO) or builds it, and prints its
# path. Usage: go-tool.sh <binary> <module path> <path variable> <version>...
# Order: $<path variable>, <binary> on PATH, the cache below, else `go install <module>@<version>`
# into that cache, trying each version in turn. The cache lives outside the work tree so that
# fresh clones on the same machine reuse one build; nothing is downloaded as a binary.
set -euo pipefail
binary="$1"; module="$2"; path_var="$3"; shift 3
versions=("$@")
cache_root="${VPS_TOOLS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/vps-tools}"

explicit="${!path_var:-}"
if [ -n "$explicit" ]; then
  if [ -x "$explicit" ]; then echo "$explicit"; exit 0; fi
  echo "$path_var=$explicit is not an executable file" >&2
  exit 1
fi
if command -v "$binary" >/dev/null 2>&1; then command -v "$binary"; exit 0; fi
for v in "${versions[@]}"; do
  if [ -x "$cache_root/$binary-$v/$binary" ]; then echo "$cache_root/$binary-$v/$binary"; exit 0; fi
done

if ! command -v go >/dev/null 2>&1; then
  for d in /usr/local/go/bin "$HOME/go/bin"; do [ -x "$d/go" ] && PATH="$d:$PATH"; done
fi
command -v go >/dev/null 2>&1 || { echo "$binary not found and Go is not installed to build it" >&2; exit 1; }

for v in "${versions[@]}"; do
  dest="$cache_root/$binary-$v"
  # A build folder of its own: two set-ups on one machine (a test run and the preparation script)
  # may build at once; each publishes its binary by a rename, and the last one stays.
  mkdir -p "$cache_root"
  build="$(mktemp -d "$dest.build.XXXXXX")"
  echo "building $binary $v with go install (one-time, cached in $dest)" >&2
  if GOBIN="$build" GOFLAGS="${GOFLAGS:-} -trimpath" go install "$module@$v" >&2; then
    # Renaming a file over another is atomic, so a reader sees one whole binary or the other.
    mkdir -p "$dest" && mv -f "$build/$binary" "$dest/$binary"
    rm -rf "$build"
    echo "$dest/$binary"
    exit 0
  fi
  echo "building $binary $v failed; trying the next version" >&2
  rm -rf "$build"
done
echo "could not build $binary: ${versions[*]}" >&2
exit 1
