#!/usr/bin/env bash
# A pseudo-distributed HBase from the same Maven jars as up.sh: ZooKeeper, one HMaster and N region
# servers (default 3), each its own JVM with its own ports, pid file and log, all bound to 127.0.0.1,
# sharing one rootdir on the local file system (hbase.cluster.distributed=true). For the tests that
# need real servers to die: salting's spread over servers, the chaos test, the raw-gohbase control.
#
#   scripts/hbase/cluster.sh up              start (idempotent); wait until gohbase reads hbase:meta
#   scripts/hbase/cluster.sh down            stop everything and remove the data
#   scripts/hbase/cluster.sh status          one line per process
#   scripts/hbase/cluster.sh rs stop N       region server N (1-based): SIGTERM, its graceful shutdown
#   scripts/hbase/cluster.sh rs kill N       region server N: SIGKILL, as a crash
#   scripts/hbase/cluster.sh rs start N      region server N again, same port and configuration (a no-op
#                                            for a running one, so also after it exited on its own)
#   scripts/hbase/cluster.sh rs pause N      region server N frozen (SIGSTOP), as in a long GC pause
#   scripts/hbase/cluster.sh rs unpause N    region server N running again (SIGCONT); a no-op if it is
#                                            not running. Paused past its ZooKeeper session (30 s), it
#                                            finds the session expired on waking and aborts: exits.
#   scripts/hbase/cluster.sh master restart  the master stopped (SIGTERM, waited for) and started again;
#                                            returns once the new one has completed initialization
#
# Layout (gitignored, under $REPO/.hbase like the standalone server; the classpath cache is shared):
#   $HBASE_CLUSTER_BASE/run/<zk|master|rsN>/   conf/, <name>.pid, <name>.log
#   $HBASE_CLUSTER_BASE/data/                  hbase.rootdir, ZooKeeper data, one tmp dir per process
#
# Environment (all optional):
#   HBASE_REGIONSERVERS (3)   region servers started by `up`
#   HBASE_CLUSTER_BASE        ($REPO/.hbase/cluster)
#   HBASE_CLUSTER_ZK_PORT (2481), HBASE_CLUSTER_MASTER_PORT (16300); region server N listens on
#                             HBASE_CLUSTER_RS_PORT (16320) + 10*(N-1)
#   HBASE_CLUSTER_RS_HEAP (512m), HBASE_CLUSTER_MASTER_HEAP (384m)
#   HBASE_KEEP_DATA=1         down: the cluster's own orderly shutdown, data kept; up: start on it
#   HBASE_UP_TIMEOUT (180)    seconds to wait for readiness
#
# Corrections to shared/notes/hbase-pseudo-distributed.md found by running it here: see the README
# ("A multi-server HBase") for start time and RSS measured on the 2-core machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
say() { echo "cluster: $*"; }
die() { echo "cluster: $*" >&2; exit 1; }
# shellcheck source=lib.sh
source "$here/lib.sh"
# With BRINE_HBASE_RUNTIME=docker (make and scripts/test.sh set it wherever a Docker engine answers:
# runtime.sh), the same command drives the containers of docker-compose.yml instead.
# shellcheck source=runtime.sh
source "$here/runtime.sh"
rt=$(hbase_runtime) || exit 1
[ "$rt" = docker ] && exec bash "$repo/scripts/docker/hbase.sh" cluster "$@"

base=$(realpath -m "${HBASE_CLUSTER_BASE:-$repo/.hbase/cluster}") # absolute: hbase.rootdir is a file:// URL
run=$base/run
data=$base/data
nrs=${HBASE_REGIONSERVERS:-3}
zk_port=${HBASE_CLUSTER_ZK_PORT:-2481}
master_port=${HBASE_CLUSTER_MASTER_PORT:-16300}
rs_port0=${HBASE_CLUSTER_RS_PORT:-16320}
rs_heap=${HBASE_CLUSTER_RS_HEAP:-512m}
master_heap=${HBASE_CLUSTER_MASTER_HEAP:-384m}
timeout=${HBASE_UP_TIMEOUT:-180}
keep=${HBASE_KEEP_DATA:-0}
zk=127.0.0.1:$zk_port
mark=proc_brine_cluster # every JVM of this script carries -D$mark.<name>

began=$(date +%s.%N)
elapsed() { awk -v b="$began" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - b }'; }

pidfile() { echo "$run/$1/$1.pid"; }
logfile() { echo "$run/$1/$1.log"; }
rs_port() { echo $((rs_port0 + 10 * ($1 - 1))); }
ours() { pid_is_ours "$(pidfile "$1")" "$mark.$1"; }
# the region servers that have a run directory (started at least once), in order
rs_names() { (cd "$run" 2>/dev/null && ls -d rs* 2>/dev/null | sort -V) || true; }

# shellcheck source=render.sh
source "$here/render.sh"

# conf NAME RS_PORT: the process's own conf dir (hbase-site.xml, log4j2.properties).
conf() {
  local name=$1 port=$2
  mkdir -p "$data/tmp-$name"
  render "$here/hbase-site-cluster.xml.in" "$run/$name/conf/hbase-site.xml" DATA_DIR="$data" TMP_DIR="$data/tmp-$name" \
    ZK_PORT="$zk_port" MASTER_PORT="$master_port" RS_PORT="$port" RS_COUNT="$nrs"
  cp "$here/log4j2.properties" "$run/$name/conf/log4j2.properties"
}

# start_jvm NAME HEAP MAIN ARGS...: one JVM of the cluster, detached, its conf dir first on the
# classpath so its hbase-site.xml and log4j2.properties win.
start_jvm() {
  local name=$1 heap=$2
  shift 2
  local conf=$run/$name/conf
  # shellcheck source=jvm-flags.sh
  source "$here/jvm-flags.sh"
  [ "$keep" = 1 ] && [ -s "$(logfile "$name")" ] && mv "$(logfile "$name")" "$(logfile "$name").prev"
  # keep the log of the previous process (a crash, an abort) for the post-mortem
  [ "$keep" != 1 ] && [ -s "$(logfile "$name")" ] && cat "$(logfile "$name")" >> "$(logfile "$name").prev"
  : > "$(logfile "$name")"
  start_detached "$(pidfile "$name")" "$(logfile "$name")" \
    "$java_bin" -Xms64m "-Xmx$heap" -XX:+UseG1GC "${HBASE_JVM_FLAGS[@]}" \
    -Djava.io.tmpdir="$data/tmp-$name" -Dlog4j2.configurationFile="$conf/log4j2.properties" \
    -Dhbase.log.dir="$run/$name" -Dzookeeper.admin.enableServer=false "-D$mark.$name" \
    -cp "$conf:$(cat "$cpfile")" "$@"
}

start_zk() {
  mkdir -p "$run/zk/conf" "$data/zk" "$data/tmp-zk"
  render "$here/zoo.cfg.in" "$run/zk/conf/zoo.cfg" DATA_DIR="$data" ZK_PORT="$zk_port" BIND_ADDRESS=127.0.0.1
  cp "$here/log4j2.properties" "$run/zk/conf/log4j2.properties"
  start_jvm zk 128m org.apache.zookeeper.server.quorum.QuorumPeerMain "$run/zk/conf/zoo.cfg"
}

zk_ok() { [ "$( (exec 3<>"/dev/tcp/127.0.0.1/$zk_port" && echo ruok >&3 && timeout 2 cat <&3) 2>/dev/null)" = imok ]; }

start_rs() {
  local n=$1 name=rs$1
  ours "$name" && { say "$name already running (pid $(cat "$(pidfile "$name")"))"; return 0; }
  port_busy "$(rs_port "$n")" && die "port $(rs_port "$n") of $name is taken by another process"
  conf "$name" "$(rs_port "$n")"
  start_jvm "$name" "$rs_heap" org.apache.hadoop.hbase.regionserver.HRegionServer start
}

# pause_rs N / unpause_rs N: SIGSTOP / SIGCONT of region server N's JVM.
pause_rs() {
  ours "rs$1" || die "rs$1 is not running; nothing to pause"
  kill -STOP "$(cat "$(pidfile "rs$1")")"
}
unpause_rs() {
  ours "rs$1" || { say "rs$1 is not running; nothing to resume"; return 0; }
  kill -CONT "$(cat "$(pidfile "rs$1")")"
}

# restart_master: stop the master (its shutdown hook; the region servers keep serving and wait for
# a master), start it the way `up` does, and wait until the new one has completed initialization.
restart_master() {
  ours zk || die "ZooKeeper is not running; start the cluster with: scripts/hbase/cluster.sh up"
  ensure_classpath
  if ours master; then
    stop_pid "$(pidfile master)" 60
    ! ours master || die "the master did not stop"
  fi
  port_busy "$master_port" && die "port $master_port of the master is taken by another process"
  conf master "$rs_port0"
  start_jvm master "$master_heap" org.apache.hadoop.hbase.master.HMaster start
  wait_log master "Master has completed initialization" "master initialization"
}

wait_log() { # NAME PATTERN WHAT: wait until NAME's log has PATTERN, or die
  local deadline=$(($(date +%s) + timeout))
  until grep -q "$2" "$(logfile "$1")"; do
    if ! ours "$1"; then
      tail -n 40 "$(logfile "$1")" >&2
      die "$1 exited while waiting for $3 (log above: $(logfile "$1"))"
    fi
    [ "$(date +%s)" -lt "$deadline" ] || { tail -n 40 "$(logfile "$1")" >&2; die "no $3 after ${timeout}s"; }
    sleep 0.25
  done
}

up() {
  if ours master && "$waitmeta" -zk "$zk" -timeout 30s -quiet 2>/dev/null; then
    say "already running (ZooKeeper $zk); nothing to do"
    return 0
  fi
  ours master && die "the master is alive but HBase does not answer; run scripts/hbase/cluster.sh down first"
  for p in "$zk_port" "$master_port"; do
    port_busy "$p" && die "port $p is taken by another process; free it or set HBASE_CLUSTER_*_PORT"
  done
  ensure_classpath
  if [ "$keep" = 1 ] && [ -d "$data/hbase" ]; then
    say "HBASE_KEEP_DATA=1: starting on the existing data in $data"
  else
    rm -rf "$data" "$run"
  fi
  mkdir -p "$run" "$data"
  build_waitmeta &
  local build_pid=$!

  start_zk
  local deadline=$(($(date +%s) + timeout))
  until zk_ok; do
    ours zk || { tail -n 40 "$(logfile zk)" >&2; die "ZooKeeper exited (log above)"; }
    [ "$(date +%s)" -lt "$deadline" ] || die "ZooKeeper not answering ruok after ${timeout}s"
    sleep 0.25
  done
  say "ZooKeeper $zk up after $(elapsed) s"
  # The master and the region servers start together: region servers retry until the master is up.
  conf master "$rs_port0"
  start_jvm master "$master_heap" org.apache.hadoop.hbase.master.HMaster start
  for n in $(seq "$nrs"); do start_rs "$n"; done
  say "started the master and $nrs region servers (logs under $run), waiting for them"
  wait "$build_pid" || die "could not build scripts/hbase/waitmeta"
  wait_log master "Master has completed initialization" "master initialization"
  say "master initialized after $(elapsed) s"
  local left=$((deadline - $(date +%s)))
  [ "$left" -gt 5 ] || left=5
  "$waitmeta" -zk "$zk" -timeout "${left}s" || die "hbase:meta not readable through gohbase"
  say "ready in $(elapsed) s: $nrs region servers, ZooKeeper $zk (export BRINE_HBASE_CLUSTER_ZK=$zk)"
}

down() {
  local names=(master $(rs_names))
  for name in "${names[@]}"; do ours "$name" && kill -CONT "$(cat "$(pidfile "$name")")"; done # paused ones
  if [ "$keep" = 1 ] && ours master; then
    # The cluster's orderly shutdown: region servers flush and close their regions while ZooKeeper
    # is still up, then the master stops. (A plain `HMaster stop` refuses without --shutDownCluster.)
    # shellcheck source=jvm-flags.sh
    source "$here/jvm-flags.sh"
    timeout 90 "$java_bin" -Xmx128m -XX:TieredStopAtLevel=1 "${HBASE_JVM_FLAGS[@]}" \
      -Dlog4j2.configurationFile="$here/log4j2-admin.properties" \
      -cp "$run/master/conf:$(cat "$cpfile")" org.apache.hadoop.hbase.master.HMaster stop --shutDownCluster \
      > "$run/shutdown.log" 2>&1 || say "the shutdown RPC failed ($run/shutdown.log); signalling"
    for name in "${names[@]}"; do ours "$name" && stop_pid "$(pidfile "$name")" 60; done
  else
    # Data is deleted anyway: no orderly shutdown, just fast.
    for name in "${names[@]}"; do ours "$name" && kill -TERM "$(cat "$(pidfile "$name")")" 2>/dev/null; done
    for name in "${names[@]}"; do ours "$name" && stop_pid "$(pidfile "$name")" 5; done
  fi
  ours zk && stop_pid "$(pidfile zk)" 10
  say "stopped in $(elapsed) s"
  if [ "$keep" = 1 ]; then
    say "HBASE_KEEP_DATA=1: kept $data"
  else
    rm -rf "$data"
  fi
}

status() {
  local name
  for name in zk master $(rs_names); do
    if ours "$name"; then
      local pid rss
      pid=$(cat "$(pidfile "$name")")
      rss=$(awk '/VmRSS/ { printf "%d MiB", $2 / 1024 }' "/proc/$pid/status")
      echo "$name up pid=$pid rss=$rss"
    else
      echo "$name down"
    fi
  done
}

java_bin=$(pick_java)
case "${1:-}" in
  up) up ;;
  down) down ;;
  status) status ;;
  rs)
    [ $# -eq 3 ] && [[ "$3" =~ ^[1-9][0-9]*$ ]] || die "usage: cluster.sh rs start|stop|kill|pause|unpause N"
    name=rs$3
    case "$2" in
      start) ensure_classpath; start_rs "$3"; say "started $name (pid $(cat "$(pidfile "$name")"))" ;;
      stop)
        # a paused one gets its SIGTERM only once it runs again
        ours "$name" && kill -CONT "$(cat "$(pidfile "$name")")" && stop_pid "$(pidfile "$name")" 60
        say "stopped $name gracefully in $(elapsed) s"
        ;;
      kill) ours "$name" && kill_pid "$(pidfile "$name")"; say "killed $name" ;;
      pause) pause_rs "$3"; say "paused $name" ;;
      unpause) unpause_rs "$3"; say "resumed $name" ;;
      *) die "usage: cluster.sh rs start|stop|kill|pause|unpause N" ;;
    esac
    ;;
  master)
    [ $# -eq 2 ] && [ "$2" = restart ] || die "usage: cluster.sh master restart"
    restart_master
    say "restarted the master in $(elapsed) s"
    ;;
  *) die "usage: cluster.sh up|down|status|rs start|stop|kill|pause|unpause N|master restart" ;;
esac
