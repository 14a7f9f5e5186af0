#!/usr/bin/env bash
# Makes this machine ready for the test suite: a Node.js as new as package.json's engines (npm ci
# installs it on Linux x64; see node.sh), the local Postgres server running, the Temporal CLI and
# MinIO present (each built once from its Go module if absent), Debian's Chromium for the browser
# tests, the RPC code generated, and the SDK and CLI packages built (sdk/dist, cli/dist).
set -euo pipefail
cd "$(dirname "$0")/.."

# The Node that npm scripts run (node_modules/.bin first on PATH): stop here, with what to do,
# rather than fail inside the suite.
bash scripts/node.sh >/dev/null

pg_host=127.0.0.1
pg_port=5432
if ! pg_isready -h "$pg_host" -p "$pg_port" -q 2>/dev/null; then
  if command -v pg_ctlcluster >/dev/null 2>&1 && [ -d /etc/postgresql ]; then
    echo "starting the local Postgres cluster" >&2
    pg_ctlcluster --skip-systemctl-redirect "$(ls /etc/postgresql | head -n 1)" main start
  fi
  for _ in $(seq 1 30); do
    pg_isready -h "$pg_host" -p "$pg_port" -q 2>/dev/null && break
    sleep 1
  done
  pg_isready -h "$pg_host" -p "$pg_port" -q || { echo "Postgres is not reachable at $pg_host:$pg_port" >&2; exit 1; }
fi

if [ -z "${TEMPORAL_ADDRESS:-}" ]; then
  bash scripts/temporal-cli.sh >/dev/null
fi
# The S3-compatible store of the media tests, unless TEST_S3_ENDPOINT names a running one.
if [ -z "${TEST_S3_ENDPOINT:-}" ]; then
  bash scripts/minio.sh >/dev/null
fi

# Debian packages the suite uses: Chromium for the browser tests (driven by playwright-core, which
# downloads no browser), and docker-compose, which validates docker-compose.yml without an engine.
packages=()
[ -z "${VPS_CHROMIUM:-}" ] && [ ! -x /usr/bin/chromium ] && packages+=(chromium)
command -v docker-compose >/dev/null 2>&1 || packages+=(docker-compose)
if [ "${#packages[@]}" -gt 0 ]; then
  echo "installing Debian's ${packages[*]} for the tests" >&2
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${packages[@]}" >/dev/null
fi

npx --no-install buf generate
node scripts/build-packages.cjs
