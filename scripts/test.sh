#!/usr/bin/env bash
# The whole suite: lint, unit tests, then the integration tests against a real HBase that this script
# starts (and always stops, even when a test fails) and the in-process Tablestore server, every go
# test with -race.
#
# HBase runs in Docker (docker-compose.yml, scripts/docker/hbase.sh) wherever a Docker engine answers,
# else as bare JVMs from Maven jars (scripts/hbase/up.sh, cluster.sh); the first lines say which.
# BRINE_HBASE_RUNTIME=docker|jars chooses. With Docker, the jar path still runs a smoke test, so that
# it cannot rot. When a test fails, every container's log is saved in .test-logs/docker/ and the end
# of each is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=goproxy.sh
source scripts/goproxy.sh
began=$SECONDS
# shellcheck source=hbase/runtime.sh
source scripts/hbase/runtime.sh
export BRINE_HBASE_RUNTIME=${BRINE_HBASE_RUNTIME:-$(detect_runtime)}
echo "test.sh: $(runtime_why)"
echo "test.sh: Go module cache $(go env GOMODCACHE)"
logs=.test-logs
# phase WHAT: how long the step just ended took, so that a slow run says where its time went.
phase_began=$SECONDS
phase() {
  echo "test.sh: phase: $1 took $((SECONDS - phase_began)) s"
  phase_began=$SECONDS
}
smoke_pid=
heavy_pid=
rm -rf "$logs" && mkdir -p "$logs"
status=0

# save_logs WHAT: after a failure, every container's docker logs into $logs/docker and their ends here.
logs_saved=0
save_logs() {
  [ "$status" != 0 ] && [ "$BRINE_HBASE_RUNTIME" = docker ] && [ "$logs_saved" = 0 ] || return 0
  logs_saved=1
  local f
  echo "test.sh: a test failed; the containers' logs ($1) are in $logs/docker/:"
  for f in $(bash scripts/docker/hbase.sh logs "$logs/docker"); do
    echo "----- $f (last 80 lines)"
    tail -n 80 "$f"
  done
}

# verdicts LOG: of a go test -v log, the figures and the verdicts (gohbase's own lines left in the
# file): every test's start and end, the tests' messages from any file (a helper's or testing's own,
# "race detected"), and the race detector's reports whole, which name no test.
verdicts() {
  awk '/^==================$/ { race = !race; print; next }
    race || /^(=== RUN|--- |PASS|FAIL|ok|panic)/ || /^[a-z][A-Za-z ()-]+: / || /^ +[A-Za-z0-9_]+\.go:[0-9]+: / { print }' "$1"
}

# races LOG...: the race detector's reports in the logs, short (each access and goroutine's first
# frames, paths from the repository or module root): printed last, after the containers' logs, so a
# failure's reason is in the part of the output a CI summary keeps.
races() {
  awk '/^==================$/ { race = !race; next }
    race && /^(WARNING|Write|Read|Previous|Goroutine|Atomic)/ { print; frames = 0; next }
    race && /^  [^ ]/ && frames < 7 { fn = $0; next }
    race && /^      / && frames < 7 { sub(/^ +/, ""); sub(/ \+0x[0-9a-f]+$/, ""); sub(/^.*\/(pkg\/mod|work\/main)\//, ""); print "  " fn " " $0; frames++; next }' "$@" 2>/dev/null
}

make --no-print-directory lint
phase lint

# Start HBase in the background while the unit tests run: its start (and, on a new machine, the
# image's build or Maven's download) is the slowest step.
make --no-print-directory hbase-up > "$logs/hbase-up.log" 2>&1 &
hbase_pid=$!
# With Docker, the jar path's smoke test needs Maven's jars too: fetch them meanwhile (network-bound).
smoke_cp_pid=
if [ "$BRINE_HBASE_RUNTIME" = docker ]; then
  (BRINE_HBASE_RUNTIME=jars bash -c 'here=scripts/hbase repo=$PWD; say() { echo "smoke: $*"; }; die() { echo "smoke: $*" >&2; exit 1; }
    source scripts/hbase/lib.sh; ensure_classpath') > "$logs/smoke-classpath.log" 2>&1 &
  smoke_cp_pid=$!
fi
cleanup() {
  wait "$hbase_pid" 2>/dev/null || true
  [ -z "$smoke_pid" ] || wait "$smoke_pid" 2>/dev/null || true
  [ -z "$heavy_pid" ] || wait "$heavy_pid" 2>/dev/null || true
  [ -z "$smoke_cp_pid" ] || wait "$smoke_cp_pid" 2>/dev/null || true
  save_logs "at exit"
  make --no-print-directory hbase-down > /dev/null 2>&1 || true
  make --no-print-directory cluster-down > /dev/null 2>&1 || true
  if [ "$BRINE_HBASE_RUNTIME" = docker ]; then
    BRINE_HBASE_RUNTIME=jars HBASE_BASE="$PWD/.hbase/smoke" bash scripts/hbase/down.sh > /dev/null 2>&1 || true
  fi
}
trap cleanup EXIT

go test -race -count=1 -timeout 10m ./... || status=$?
phase "unit tests (-race)"

if ! wait "$hbase_pid"; then
  cat "$logs/hbase-up.log"
  echo "test.sh: HBase did not start; the integration tests need it" >&2
  status=1
  exit 1
fi
cat "$logs/hbase-up.log"
phase "waiting for HBase"
# Only the packages with integration-tagged files: the rest ran above already.
mapfile -t pkgs < <(grep -rl --include='*.go' '^//go:build integration$' . | xargs -n1 dirname | sort -u)
echo "test.sh: integration packages: ${pkgs[*]}"
# With -race, as everything here: the gohbase of 2022 had a data race of its own (a pooled
# MultiRequest's context written after the reply returned it to the pool), today's has not (its
# region client no longer writes into the pooled multi after the send).
#
# The integration package's four longest tests (about 105 s of its 215 s) run in a second go test
# process beside the rest: the tests of one package run one after another, so with everything in one
# go test the integration package ran alone for the phase's last 90 s (268 s in all; split, about
# 200 s, 2026-11-28 on the 2-core machine). Not more at once than that third process: at -p 5 (196 s)
# the region splits and moves of the fault tests took 3 times as long, and gohbase left a region
# connection open after Close in TestHBaseImportUnderRegionChanges (1 run in 3). Table names are
# unique per process and test (hbasetest.Table).
heavy='^(TestHBase256Buckets|TestHBaseIndexCases|TestHBaseIndexRebucket|TestHBaseRebucketLive)$'
go test -race -v -count=1 -timeout 15m -tags integration -run "$heavy" ./integration > "$logs/integration-heavy.log" 2>&1 &
heavy_pid=$!
go test -race -count=1 -timeout 15m -tags integration -skip "^TestCluster|$heavy" "${pkgs[@]}" || status=$?
heavy_status=0
wait "$heavy_pid" || heavy_status=1
heavy_pid=
echo "test.sh: the integration package's longest tests, run beside the rest ($heavy):"
if [ "$heavy_status" = 0 ]; then
  grep -E '^(--- |ok|PASS)' "$logs/integration-heavy.log" || true
else
  cat "$logs/integration-heavy.log"
  status=1
fi
if [ "$(grep -c -- '^--- PASS' "$logs/integration-heavy.log")" != 4 ] && ! grep -q -- '^--- FAIL' "$logs/integration-heavy.log"; then
  echo "test.sh: want 4 of the integration package's tests to match $heavy (a renamed test?)" >&2
  status=1
fi
phase "integration tests"
# gohbase's own integration suite through the drop-in (issue: the drop-in behaves like gohbase): 48 of
# its 52 tests pass. Only these may fail, each for its reason:
#   TestChangingRegionServers, TestScannerRenewal: they fail on raw gohbase too; they need cluster
#     control ($HBASE_HOME/bin/local-regionservers.sh) that a standalone server has not.
#   TestScanWithStatsHandler: it keeps the last RPC's ScanStats, whose ScanMetrics are that RPC's alone
#     (gohbase's contract), and a salted scan is an RPC per bucket, not one.
#   TestScannerTimeout: the merge reads every bucket's first row before the first Next returns, so no
#     RPC is left to meet the expired lease (docs/drop-ins.md).
suite_may_fail=(TestChangingRegionServers TestScannerRenewal TestScanWithStatsHandler TestScannerTimeout)
if bash scripts/hbase/gohbase-suite.sh dropin > "$logs/gohbase-suite.log" 2>&1; then
  passed=$(grep -c ' PASS$' "$logs/gohbase-suite.log" || true)
  failed=$(grep ' FAIL$' "$logs/gohbase-suite.log" | grep -Ev "^($(IFS='|'; echo "${suite_may_fail[*]}")) " || true)
  echo "test.sh: gohbase's own suite through the drop-in: $passed passed"
  if [ "$passed" -lt 48 ] || [ -n "$failed" ]; then
    cat "$logs/gohbase-suite.log"
    echo "test.sh: gohbase's suite through the drop-in: want 48 passing and no failure but ${suite_may_fail[*]}" >&2
    status=1
  fi
else
  cat "$logs/gohbase-suite.log"
  status=1
fi
phase "gohbase's suite"

# The jar path's smoke test, where Docker served the suite: a bare-JVM server from Maven's jars on
# ports of its own, the driver's basic operations and region operations through admin.sh (the host's
# Maven classpath) against it. It runs beside the restart test below, which spends most of its time
# waiting for the Docker server to stop and start: nothing is shared but the 2 cores (about 45 s
# saved).
smoke() {
  local began=$SECONDS st=0
  local env=(BRINE_HBASE_RUNTIME=jars HBASE_BASE="$PWD/.hbase/smoke" HBASE_ZK_PORT=2291 HBASE_MASTER_PORT=16190 HBASE_RS_PORT=16192)
  if env "${env[@]}" bash scripts/hbase/up.sh > "$logs/smoke-up.log" 2>&1; then
    env "${env[@]}" BRINE_HBASE_ZK=127.0.0.1:2291 go test -race -count=1 -tags integration \
      -run '^(TestTableLifecycle|TestPutReadDelete|TestScanConformance|TestRegionChanges)$' ./backends/hbase/ || st=$?
  else
    cat "$logs/smoke-up.log"
    echo "test.sh: the jar path's server did not start" >&2
    st=1
  fi
  env "${env[@]}" bash scripts/hbase/down.sh > /dev/null 2>&1 || true
  echo "test.sh: the jar path's smoke test took $((SECONDS - began)) s"
  return "$st"
}
if [ "$BRINE_HBASE_RUNTIME" = docker ]; then
  if wait "$smoke_cp_pid"; then
    smoke > "$logs/smoke.log" 2>&1 &
    smoke_pid=$!
  else
    cat "$logs/smoke-classpath.log"
    echo "test.sh: the jar path's Maven classpath could not be fetched" >&2
    status=1
  fi
  smoke_cp_pid=
fi

# This test stops and restarts the standalone HBase server (down.sh/up.sh with HBASE_KEEP_DATA=1), so
# nothing else may be using that server; everywhere else it skips.
BRINE_HBASE_RESTART=1 go test -race -count=1 -tags integration -run '^TestHBaseRestartResume$' ./reliability/ || status=$?
save_logs "standalone server"
make --no-print-directory hbase-down
if [ -n "$smoke_pid" ]; then
  wait "$smoke_pid" || status=1
  smoke_pid=
  cat "$logs/smoke.log"
fi
phase "restart test and the jar path's smoke test"

# The multi-server tests, on the cluster (3 region servers): the standalone server goes first, so the
# two never share the 2 cores; -p 1 keeps the chaos test from killing servers under the spread test.
if make --no-print-directory cluster-up; then
  BRINE_HBASE_CLUSTER_ZK=127.0.0.1:${HBASE_CLUSTER_ZK_PORT:-2481} CHAOS=${CHAOS:-2m} \
    go test -race -p 1 -count=1 -timeout 25m -tags integration -run '^TestCluster' -v ./integration/ ./reliability/ \
    > "$logs/cluster-test.log" 2>&1 || status=$?
  # The figures and the verdicts; the whole log (gohbase's own lines included) stays in the file.
  verdicts "$logs/cluster-test.log"
else
  echo "test.sh: the cluster did not start" >&2
  status=1
fi
save_logs "cluster"
make --no-print-directory cluster-down > /dev/null 2>&1 || true
phase "multi-server part"

if [ "$status" != 0 ] && races "$logs"/*.log | grep -q .; then
  echo "test.sh: the race detector's reports, short (whole in $logs/):"
  races "$logs"/*.log
fi
echo "test.sh: whole suite took $((SECONDS - began)) s (exit $status)"
exit "$status"
