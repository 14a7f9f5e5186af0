#!/usr/bin/env bash
# Finds the MinIO server (the S3-compatible store of the tests and benchmarks) or builds it from
# its Go module, and prints its path (MINIO_PATH, `minio` on PATH, the cache, else `go install`;
# see go-tool.sh). The first build takes about 4 minutes on 2 cores.
set -euo pipefail
# The module has no tagged Go versions: this pseudo-version is what `@latest` resolved to when the
# build was first proven here; `latest` is the fallback.
# shellcheck disable=SC2086
exec bash "$(dirname "$0")/go-tool.sh" minio github.com/minio/minio MINIO_PATH ${MINIO_VERSIONS:-v0.0.0-20260212201848-7aac2a2c5b7c latest}
