#!/usr/bin/env bash
# Stop the standalone HBase that up.sh started and remove its data (the jar classpath cache stays).
# Graceful first: SIGTERM runs HBase's shutdown hooks (the master flushes its store and stops the
# embedded ZooKeeper within ~2 s); after HBASE_DOWN_GRACE seconds (default 10) SIGKILL. The wait is
# short on purpose: in one JVM the master's hook stops ZooKeeper before the region server's hook runs,
# and the region server then spends ~20 s retrying ZooKeeper before it exits, for data that down.sh
# deletes anyway. Safe to run when nothing is running.
#
# HBASE_KEEP_DATA=1: stop for a restart on the same data (`HBASE_KEEP_DATA=1 up.sh`), and keep data/.
# Then the stop is the cluster's own orderly shutdown, not a signal: Admin.shutdown() (the master's
# shutdown RPC, sent by scripts/hbase/admin.sh's shutdown command to the ZooKeeper address up.sh
# recorded for this instance in run/zk, so it can only reach this instance) makes the region server
# flush and close every region while ZooKeeper is still up, then the master stops, then the JVM exits
# by itself. Only if that RPC fails is SIGTERM sent; SIGKILL comes after HBASE_DOWN_GRACE (default 90
# in this mode). Either way the WALs are on disk, and the next start replays whatever was not flushed.
#
# Environment: HBASE_BASE (default $REPO/.hbase) selects the instance, as in up.sh; HBASE_DOWN_GRACE;
# HBASE_KEEP_DATA; HBASE_JAVA_HOME.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# With BRINE_HBASE_RUNTIME=docker (make and scripts/test.sh set it wherever a Docker engine answers:
# runtime.sh), the same command drives the containers of docker-compose.yml instead.
# shellcheck source=runtime.sh
source "$here/runtime.sh"
rt=$(hbase_runtime) || exit 1
[ "$rt" = docker ] && exec bash "$repo/scripts/docker/hbase.sh" standalone down
base=$(realpath -m "${HBASE_BASE:-$repo/.hbase}") # absolute: hbase.rootdir is a file:// URL
pidfile=$base/run/hbase.pid
keep=${HBASE_KEEP_DATA:-0}
if [ "$keep" = 1 ]; then
  grace=${HBASE_DOWN_GRACE:-90}
else
  grace=${HBASE_DOWN_GRACE:-10}
fi

say() { echo "hbase-down: $*"; }
# running: the process exists and is not a zombie (an exited JVM stays one until init reaps it, and
# kill -0 still succeeds on it).
running() { kill -0 "$1" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

# shutdown_rpc asks the master of this instance (its ZooKeeper address in $base/run/zk, written by
# up.sh) to shut the cluster down in order: the admin tool's shutdown, as the Docker path sends it.
shutdown_rpc() {
  [ -s "$base/run/zk" ] || return 1
  BRINE_HBASE_RUNTIME=jars timeout 90 bash "$here/admin.sh" -zk "$(cat "$base/run/zk")" -timeout 60 shutdown \
    > "$base/run/shutdown.log" 2>&1
}

if [ -s "$pidfile" ]; then
  pid=$(cat "$pidfile")
  # Only signal the process if it is still our JVM (a stale pid could have been reused).
  if running "$pid" && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- '-Dproc_brine_hbase'; then
    began=$(date +%s)
    if [ "$keep" = 1 ] && shutdown_rpc; then
      say "asked the master of pid $pid to shut the cluster down (HBASE_KEEP_DATA=1)"
    else
      [ "$keep" = 1 ] && say "the shutdown RPC failed ($base/run/shutdown.log); sending SIGTERM"
      kill -TERM "$pid" 2>/dev/null || true
    fi
    for _ in $(seq $((grace * 4))); do
      running "$pid" || break
      sleep 0.25
    done
    if running "$pid"; then
      say "pid $pid still shutting down after ${grace}s; sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      for _ in $(seq 40); do running "$pid" || break; sleep 0.25; done
    fi
    say "stopped HBase (pid $pid) in $(($(date +%s) - began)) s"
  else
    say "pid file names no running HBase; cleaning up"
  fi
  rm -f "$pidfile"
else
  say "not running"
fi

if [ "$keep" = 1 ]; then
  say "HBASE_KEEP_DATA=1: kept $base/data"
else
  rm -rf "$base/data"
fi
