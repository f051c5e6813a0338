#!/usr/bin/env bash
# The whole suite: lint, unit tests with -race, then the integration tests (without -race: gohbase's
# own race, below) against a real HBase that this script starts (and always stops, even when a test
# fails) and the in-process Tablestore server.
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
  make --no-print-directory cluster-down > /dev/null 2>&1 || true
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
mapfile -t pkgs < <(grep -rl --include='*.go' '^//go:build integration$' . | xargs -n1 dirname | sort -u)
echo "test.sh: integration packages: ${pkgs[*]}"
# Without -race, as the cluster tests below: the pinned gohbase has a data race of its own. Its
# region client's trySend writes a pooled MultiRequest's context in a deferred call after the reply
# has returned the MultiRequest to a package-wide pool (region/client.go:458, multi.go:27), from where
# any other region client of the process (another gohbase client, or a reconnected one) may already
# have taken it. Harmless (that context is a background span context, never cancelled), but the
# race detector fails whatever test is running, and with a dozen gohbase clients per test binary it
# did (1 fresh run in the series of 2026-11-23). brine's own code runs under -race in the unit run
# above, on the embedded, memory, faulty and Tablestore stores.
go test -count=1 -timeout 15m -tags integration -skip '^TestCluster' "${pkgs[@]}" || status=$?
# gohbase's own integration suite through the drop-in (issue: the drop-in behaves like gohbase). Every
# test must pass but TestChangingRegionServers, which fails on raw gohbase too: it needs cluster control.
if bash scripts/hbase/gohbase-suite.sh dropin > .gohbase-suite.log 2>&1; then
  passed=$(grep -c ' PASS$' .gohbase-suite.log || true)
  failed=$(grep ' FAIL$' .gohbase-suite.log | grep -v '^TestChangingRegionServers ' || true)
  echo "test.sh: gohbase's own suite through the drop-in: $passed passed"
  if [ "$passed" -lt 36 ] || [ -n "$failed" ]; then
    cat .gohbase-suite.log
    echo "test.sh: gohbase's suite through the drop-in: want 36 passing and no failure but TestChangingRegionServers" >&2
    status=1
  fi
else
  cat .gohbase-suite.log
  status=1
fi

# Last and alone: this test stops and restarts the HBase server (down.sh/up.sh with HBASE_KEEP_DATA=1),
# so nothing else may be using it; everywhere else it skips.
BRINE_HBASE_RESTART=1 go test -count=1 -tags integration -run '^TestHBaseRestartResume$' ./reliability/ || status=$?

# The multi-server tests, on the cluster of scripts/hbase/cluster.sh (3 region-server JVMs): the
# standalone server goes first, so the two never share the 2 cores; -p 1 keeps the chaos test from
# killing servers under the spread test. Without -race, for gohbase's race (above).
make --no-print-directory hbase-down
cluster_began=$SECONDS
if make --no-print-directory cluster-up; then
  BRINE_HBASE_CLUSTER_ZK=127.0.0.1:${HBASE_CLUSTER_ZK_PORT:-2481} CHAOS=${CHAOS:-2m} \
    go test -p 1 -count=1 -timeout 20m -tags integration -run '^TestCluster' -v ./integration/ ./reliability/ \
    > .cluster-test.log 2>&1 || status=$?
  # The figures and the verdicts; the whole log (gohbase's own lines included) stays in .cluster-test.log.
  grep -E '^(=== RUN|--- |PASS|FAIL|ok|panic)|^[a-z][A-Za-z ()-]+: |^    [a-z_]+_test\.go:' .cluster-test.log || true
else
  echo "test.sh: the cluster did not start" >&2
  status=1
fi
echo "test.sh: multi-server part took $((SECONDS - cluster_began)) s"

echo "test.sh: whole suite took $((SECONDS - began)) s (exit $status)"
exit "$status"
