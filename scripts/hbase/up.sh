#!/usr/bin/env bash
# Start a standalone HBase (master + region server + embedded ZooKeeper in one JVM) for brine's tests,
# from Maven Central jars: no tarball, no docker. Idempotent: if it is already up, say so and exit 0.
#
#   scripts/hbase/up.sh          start, wait until hbase:meta is readable through gohbase, print the time
#   scripts/hbase/down.sh        stop it and remove its data
#
#   HBASE_KEEP_DATA=1 scripts/hbase/down.sh && HBASE_KEEP_DATA=1 scripts/hbase/up.sh
#                                a graceful restart on the same data (tables and rows survive)
#
# Layout (gitignored):
#   $REPO/.hbase/cache/  classpath.txt, the waitmeta binary, compiled Admin classes (kept by down.sh;
#                        always here, shared by every instance, so Maven resolves the classpath once)
#   $HBASE_BASE/run/     conf/ (rendered hbase-site.xml, log4j2.properties), hbase.pid, hbase.log
#   $HBASE_BASE/data/    hbase.rootdir, ZooKeeper data, tmp (removed by down.sh unless HBASE_KEEP_DATA=1)
#
# Environment (all optional):
#   HBASE_ZK_PORT (2181), HBASE_MASTER_PORT (16000), HBASE_RS_PORT (16020)
#   HBASE_BASE         where run/ and data/ live ($REPO/.hbase). A second instance beside the default
#                      one needs its own base and ports, e.g. HBASE_BASE=/tmp/hbase2 HBASE_ZK_PORT=2281
#                      HBASE_MASTER_PORT=16100 HBASE_RS_PORT=16120 (give down.sh the same HBASE_BASE).
#   HBASE_KEEP_DATA=1  start on the existing data/ (left by `HBASE_KEEP_DATA=1 down.sh`) instead of
#                      wiping it: the master replays the WALs and reassigns the tables' regions.
#   HBASE_UP_TIMEOUT   seconds to wait for readiness (180)
#   HBASE_HEAP         -Xmx of the JVM (1g)
#   HBASE_JAVA_HOME    a JDK 17 (default: /usr/lib/jvm/java-17-openjdk-amd64, then JAVA_HOME, then PATH)
#
# Corrections to shared/notes/hbase-standalone.md, found by running it here:
#   - 2.6.2-hadoop3 does not exist on Maven Central: of 2.6.x only 2.6.0, 2.6.1 and 2.6.4 have -hadoop3
#     artifacts (2.6.2/2.6.3/2.6.5/2.6.6 are Hadoop 2.10 builds only). Pinned: 2.6.4-hadoop3 (Hadoop 3.4.2).
#   - The Maven graph brings reload4j + slf4j-reload4j (via Hadoop's YARN/MapReduce jars): excluded in the
#     pom, else SLF4J sees two bindings and org.apache.log4j exists twice beside log4j-1.2-api.
#   - The embedded ZooKeeper binds to the loopback host unless
#     hbase.zookeeper.property.clientPortAddress is set (matters for Docker, where it must be 0.0.0.0).
#   - The log4j2 jars (api, core, slf4j-impl, 1.2-api) are indeed needed: without an SLF4J binding
#     HBase logs nothing and the readiness line below never shows.
#   - The machine has a second JDK (Temurin 25) beside 17; Hadoop's security code does not run on
#     JDK 23+ (Subject.getSubject no longer works), so the JDK is picked explicitly below.
#   - Standalone mode gives ZooKeeper sessions 10 s (zookeeper.session.timeout.localHBaseCluster); a
#     host stall of 7.5 s (2 cores shared with compilers) expired the region server's session and it
#     aborted, killing the cluster. hbase-site.xml.in raises it to 60 s.
#   - hbase.master.wait.on.regionservers.maxtostart=1 lets the master stop waiting for more region
#     servers as soon as the single one has checked in (the default waits out a 4.5 s timeout).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# With BRINE_HBASE_RUNTIME=docker (make and scripts/test.sh set it wherever a Docker engine answers:
# runtime.sh), the same command drives the containers of docker-compose.yml instead.
# shellcheck source=runtime.sh
source "$here/runtime.sh"
rt=$(hbase_runtime) || exit 1
[ "$rt" = docker ] && exec bash "$repo/scripts/docker/hbase.sh" standalone up
base=$(realpath -m "${HBASE_BASE:-$repo/.hbase}") # absolute: hbase.rootdir is a file:// URL
run=$base/run
data=$base/data
pidfile=$run/hbase.pid
logfile=$run/hbase.log

zk_port=${HBASE_ZK_PORT:-2181}
master_port=${HBASE_MASTER_PORT:-16000}
rs_port=${HBASE_RS_PORT:-16020}
timeout=${HBASE_UP_TIMEOUT:-180}
heap=${HBASE_HEAP:-1g}
zk=127.0.0.1:$zk_port

began=$(date +%s.%N)
elapsed() { awk -v b="$began" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - b }'; }
say() { echo "hbase-up: $*"; }
die() { echo "hbase-up: $*" >&2; exit 1; }

# shellcheck source=lib.sh
source "$here/lib.sh"
mkdir -p "$run"
java_bin=$(pick_java)
alive() { pid_alive "$pidfile"; }

# --- already running? ----------------------------------------------------------------------------------
if alive; then
  build_waitmeta
  if "$waitmeta" -zk "$zk" -timeout 30s -quiet; then
    say "already running (pid $(cat "$pidfile"), ZooKeeper $zk); nothing to do"
    exit 0
  fi
  die "pid $(cat "$pidfile") is alive but HBase does not answer; run scripts/hbase/down.sh first"
fi
rm -f "$pidfile"

for p in "$zk_port" "$master_port" "$rs_port"; do
  port_busy "$p" && die "port $p is taken by another process (not our HBase); free it or set HBASE_*_PORT"
done

# --- classpath (Maven, cached) -------------------------------------------------------------------------
ensure_classpath

# --- configuration -----------------------------------------------------------------------------------
keep=${HBASE_KEEP_DATA:-0}
if [ "$keep" = 1 ] && [ -d "$data/hbase" ]; then
  say "HBASE_KEEP_DATA=1: starting on the existing data in $data"
else
  rm -rf "$data"
fi
mkdir -p "$data/tmp" "$data/zk" "$run/conf"
# shellcheck source=render.sh
source "$here/render.sh"
render "$here/hbase-site.xml.in" "$run/conf/hbase-site.xml" DATA_DIR="$data" ZK_PORT="$zk_port" \
  MASTER_PORT="$master_port" RS_PORT="$rs_port" ADVERTISE_HOST=localhost BIND_ADDRESS=127.0.0.1
cp "$here/log4j2.properties" "$run/conf/log4j2.properties"

# --- JVM flags ---------------------------------------------------------------------------------------
# The JDK 17 openings and why each is needed: jvm-flags.sh (shared with admin.sh and the Docker image).
# shellcheck source=jvm-flags.sh
source "$here/jvm-flags.sh"
jvm_flags=(
  -Xms256m "-Xmx$heap" -XX:+UseG1GC
  "${HBASE_JVM_FLAGS[@]}"
  -Djava.io.tmpdir="$data/tmp"
  -Dlog4j2.configurationFile="$run/conf/log4j2.properties"
  -Dhbase.log.dir="$run"
  # Marks the process, so that down.sh signals only this JVM and `ps` shows what it is.
  -Dproc_brine_hbase
)

# --- start ---------------------------------------------------------------------------------------------
# Build the probe while the JVM boots (both take seconds, on different cores).
build_waitmeta &
build_pid=$!

# A restart on kept data keeps the previous run's log (its shutdown) beside the new one.
[ "$keep" = 1 ] && [ -s "$logfile" ] && mv "$logfile" "$logfile.prev"
: > "$logfile"
start_detached "$pidfile" "$logfile" \
  "$java_bin" "${jvm_flags[@]}" -cp "$run/conf:$(cat "$cpfile")" \
  org.apache.hadoop.hbase.master.HMaster start
pid=$(cat "$pidfile")
say "started HBase $HBASE_VERSION (pid $pid, log $logfile), waiting for it"

wait "$build_pid" || die "could not build scripts/hbase/waitmeta"

deadline=$(($(date +%s) + timeout))
until grep -q "Master has completed initialization" "$logfile"; do
  if ! alive; then
    tail -n 60 "$logfile" >&2
    die "HBase exited during start-up (log above, full log in $logfile)"
  fi
  # An aborted master leaves the JVM (and its ZooKeeper) running: no use waiting out the timeout.
  if grep -q 'ABORTING master' "$logfile"; then
    grep -m1 -A3 'ABORTING master' "$logfile" >&2
    die "the master aborted during start-up (above; full log in $logfile); stop it with scripts/hbase/down.sh"
  fi
  if [ "$(date +%s)" -ge "$deadline" ]; then
    tail -n 60 "$logfile" >&2
    die "HBase not initialized after ${timeout}s (log above); stop it with scripts/hbase/down.sh"
  fi
  sleep 0.25
done
say "master initialized after $(elapsed) s"

left=$((deadline - $(date +%s)))
[ "$left" -gt 5 ] || left=5
if ! "$waitmeta" -zk "$zk" -timeout "${left}s"; then
  tail -n 60 "$logfile" >&2
  die "hbase:meta not readable through gohbase (log above)"
fi
echo "$zk" > "$run/zk" # the instance file: which server these scripts manage
say "ready in $(elapsed) s: ZooKeeper $zk (export BRINE_HBASE_ZK=$zk)"
