#!/usr/bin/env bash
# Finds the Temporal CLI (the dev server) or builds it from its Go module, and prints its path
# (TEMPORAL_CLI_PATH, `temporal` on PATH, the cache, else `go install`; see go-tool.sh).
set -euo pipefail
# v1.5.1 is the newest release whose go.mod has no replace directive (`go install pkg@version`
# refuses modules with one); the earlier ones are fallbacks if it cannot be built here.
# shellcheck disable=SC2086
exec bash "$(dirname "$0")/go-tool.sh" temporal github.com/temporalio/cli/cmd/temporal TEMPORAL_CLI_PATH ${TEMPORAL_CLI_VERSIONS:-v1.5.1 v1.4.1 v1.3.0}
