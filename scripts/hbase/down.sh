#!/usr/bin/env bash
# Stop the standalone HBase that up.sh started and remove its data (the jar classpath cache stays).
# Graceful first: SIGTERM runs HBase's shutdown hooks (the master flushes its store and stops the
# embedded ZooKeeper within ~2 s); after HBASE_DOWN_GRACE seconds (default 10) SIGKILL. The wait is
# short on purpose: in one JVM the master's hook stops ZooKeeper before the region server's hook runs,
# and the region server then spends ~20 s retrying ZooKeeper before it exits, for data that down.sh
# deletes anyway. Safe to run when nothing is running.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
base=$repo/.hbase
pidfile=$base/run/hbase.pid
grace=${HBASE_DOWN_GRACE:-10}

say() { echo "hbase-down: $*"; }
# running: the process exists and is not a zombie (an exited JVM stays one until init reaps it, and
# kill -0 still succeeds on it).
running() { kill -0 "$1" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$1/stat" 2>/dev/null)" != Z ]; }

if [ -s "$pidfile" ]; then
  pid=$(cat "$pidfile")
  # Only signal the process if it is still our JVM (a stale pid could have been reused).
  if running "$pid" && tr '\0' ' ' < "/proc/$pid/cmdline" 2>/dev/null | grep -q -- '-Dproc_brine_hbase'; then
    began=$(date +%s)
    kill -TERM "$pid" 2>/dev/null || true
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

rm -rf "$base/data"
