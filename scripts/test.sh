#!/usr/bin/env bash
# The whole suite: lint, unit tests with -race, then the integration tests against a real HBase that
# this script starts (and always stops, even when a test fails) and the in-process Tablestore server.
set -euo pipefail
cd "$(dirname "$0")/.."
began=$SECONDS

make --no-print-directory lint

# Start HBase in the background while the unit tests run: its JVM start is the slowest step.
make --no-print-directory hbase-up > .hbase-up.log 2>&1 &
hbase_pid=$!
cleanup() {
  wait "$hbase_pid" 2>/dev/null || true
  make --no-print-directory hbase-down || true
}
trap cleanup EXIT

status=0
go test -race -count=1 -timeout 10m ./... || status=$?

if ! wait "$hbase_pid"; then
  cat .hbase-up.log
  echo "test.sh: HBase did not start; the integration tests need it" >&2
  exit 1
fi
cat .hbase-up.log
# Only the packages with integration-tagged files: the rest ran above already.
mapfile -t pkgs < <(grep -rl --include='*.go' '^//go:build.*integration' . | xargs -n1 dirname | sort -u)
echo "test.sh: integration packages: ${pkgs[*]}"
go test -race -count=1 -timeout 15m -tags integration "${pkgs[@]}" || status=$?
# Last and alone: this test stops and restarts the HBase server (down.sh/up.sh with HBASE_KEEP_DATA=1),
# so nothing else may be using it; everywhere else it skips.
BRINE_HBASE_RESTART=1 go test -race -count=1 -tags integration -run '^TestHBaseRestartResume$' ./reliability/ || status=$?

echo "test.sh: whole suite took $((SECONDS - began)) s (exit $status)"
exit "$status"
