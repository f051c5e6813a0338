#!/usr/bin/env bash
# The HBase of docker-compose.yml, driven the way scripts/hbase/up.sh, down.sh and cluster.sh drive
# bare JVMs: those scripts hand over to this one when the runtime is docker (runtime.sh), so tests
# and make targets use the same commands for both.
#
#   hbase.sh image                          the image (bases.sh first where no registry answers); cached
#   hbase.sh standalone up|down             the `hbase` service; HBASE_KEEP_DATA=1 keeps its volume and
#                                           shuts down in order (the master's shutdown RPC)
#   hbase.sh cluster up|down|status         zk, master, rs1..rs3 (profile cluster)
#   hbase.sh cluster rs stop|kill|start|pause|unpause N
#                                           docker stop (SIGTERM) | docker kill (SIGKILL) | docker start |
#                                           docker pause (frozen: a GC pause, or past its ZooKeeper
#                                           session if long) | docker unpause
#   hbase.sh cluster master restart         docker restart of the master; waits until it is initialized
#   hbase.sh admin ARGS...                  scripts/hbase/Admin.java (compiled into the image) in a
#                                           running container: what admin.sh runs in this runtime
#   hbase.sh logs DIR                       every container's `docker logs` into DIR/<service>.log
#   hbase.sh pids SERVICE...                the host pids of their JVMs, comma-separated (make bench)
#
# Environment as for up.sh and cluster.sh: HBASE_ZK_PORT (2181), HBASE_CLUSTER_ZK_PORT (2481),
# HBASE_CLUSTER_MASTER_PORT (16300), HBASE_UP_TIMEOUT (180), HBASE_KEEP_DATA, HBASE_BASE (where the
# instance file run/zk is written, $REPO/.hbase).
set -euo pipefail

docker_dir=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$docker_dir/../.." && pwd)
here=$repo/scripts/hbase # what lib.sh expects
say() { echo "docker-hbase: $*"; }
die() { echo "docker-hbase: $*" >&2; exit 1; }
# shellcheck source=../hbase/runtime.sh
source "$here/runtime.sh"
# shellcheck source=../hbase/lib.sh
source "$here/lib.sh"

timeout=${HBASE_UP_TIMEOUT:-180}
keep=${HBASE_KEEP_DATA:-0}
base=$(realpath -m "${HBASE_BASE:-$repo/.hbase}")
cluster_services=(zk master rs1 rs2 rs3)
began=$(date +%s.%N)
elapsed() { awk -v b="$began" -v n="$(date +%s.%N)" 'BEGIN { printf "%.1f", n - b }'; }

# cid SERVICE: the container of SERVICE in project brine, running or not (empty if none).
cid() { docker ps -aq --filter label=com.docker.compose.project=brine --filter "label=com.docker.compose.service=$1" | head -n1; }
state() { local c; c=$(cid "$1"); [ -n "$c" ] && docker inspect -f '{{.State.Status}}' "$c" 2>/dev/null || echo missing; }

image() {
  if ! docker image inspect brine/hbase:2.6.4-hadoop3 > /dev/null 2>&1 || [ "${BRINE_IMAGE_REBUILD:-0}" = 1 ]; then
    say "building the image brine/hbase:2.6.4-hadoop3 (once per machine)"
  fi
  local bases
  bases=$(bash "$docker_dir/bases.sh") || die "no base images (scripts/docker/bases.sh)"
  local build_began=$SECONDS
  # Always through compose: unchanged inputs hit docker's layer cache in a second or two.
  # shellcheck disable=SC2046 # BASE_MAVEN=... BASE_JRE=..., one word each
  if ! (export $(echo "$bases" | sed 's/^/BRINE_/') && compose build -q hbase) > "$repo/.hbase/image-build.log" 2>&1; then
    tail -n 40 "$repo/.hbase/image-build.log" >&2
    die "docker build failed (log above, full log in .hbase/image-build.log)"
  fi
  [ $((SECONDS - build_began)) -lt 10 ] || say "image built in $((SECONDS - build_began)) s"
}

# wait_log SERVICE PATTERN WHAT [SINCE]: until SERVICE's docker logs (since unix time SINCE) show
# PATTERN; dies with the log's end if the container stops or the time runs out.
wait_log() {
  local svc=$1 pattern=$2 what=$3 since=${4:-0} c deadline=$(($(date +%s) + timeout))
  c=$(cid "$svc")
  until docker logs --since "$since" "$c" 2>&1 | grep -q "$pattern"; do
    if [ "$(state "$svc")" != running ]; then
      docker logs --tail 60 "$c" >&2 || true
      die "$svc exited while waiting for $what (its log's end above)"
    fi
    [ "$(date +%s)" -lt "$deadline" ] || { docker logs --tail 60 "$c" >&2; die "no $what after ${timeout}s"; }
    sleep 0.5
  done
}

waitmeta_ready() { # ZK
  build_waitmeta
  local left=$((timeout - ${SECONDS:-0}))
  [ "$left" -gt 10 ] || left=60
  "$waitmeta" -zk "$1" -timeout "${left}s" || die "hbase:meta not readable through gohbase at $1"
}

standalone_up() {
  local zk=127.0.0.1:${HBASE_ZK_PORT:-2181}
  if [ "$(state hbase)" = running ] && build_waitmeta && "$waitmeta" -zk "$zk" -timeout 30s -quiet 2>/dev/null; then
    mkdir -p "$base/run" && echo "$zk" > "$base/run/zk"
    say "already running (ZooKeeper $zk); nothing to do"
    return 0
  fi
  image
  if [ "$keep" = 1 ] && [ "$(state hbase)" != missing ]; then
    say "HBASE_KEEP_DATA=1: starting on the existing volume"
  else
    compose kill hbase > /dev/null 2>&1 || true
    compose rm -fv hbase > /dev/null 2>&1 || true
    docker volume rm -f brine_hbase-data > /dev/null
    for p in "${HBASE_ZK_PORT:-2181}" "${HBASE_MASTER_PORT:-16000}" "${HBASE_RS_PORT:-16020}"; do
      port_busy "$p" && die "port $p is taken by another process (not this HBase); free it or set HBASE_*_PORT"
    done
  fi
  local since
  since=$(date +%s)
  compose up -d --no-build hbase > /dev/null 2>&1 || compose up -d --no-build hbase
  build_waitmeta &
  local build_pid=$!
  wait_log hbase "Master has completed initialization" "master initialization" "$since"
  wait "$build_pid" || die "could not build scripts/hbase/waitmeta"
  say "master initialized after $(elapsed) s"
  waitmeta_ready "$zk"
  mkdir -p "$base/run" && echo "$zk" > "$base/run/zk"
  say "ready in $(elapsed) s: container $(cid hbase | cut -c1-12), ZooKeeper $zk (export BRINE_HBASE_ZK=$zk)"
}

standalone_down() {
  local st
  st=$(state hbase)
  if [ "$st" = missing ]; then
    say "not running"
  elif [ "$keep" = 1 ]; then
    local c t0=$SECONDS
    c=$(cid hbase)
    if [ "$st" = running ] && admin_in hbase -zk "127.0.0.1:${HBASE_ZK_PORT:-2181}" -timeout 60 shutdown > /dev/null 2>&1; then
      say "asked the master to shut the cluster down (HBASE_KEEP_DATA=1)"
      docker wait "$c" > /dev/null & local w=$!
      for _ in $(seq 360); do kill -0 "$w" 2>/dev/null || break; sleep 0.25; done
      kill "$w" 2>/dev/null || true
    fi
    docker stop -t 60 "$c" > /dev/null
    say "stopped in $((SECONDS - t0)) s; HBASE_KEEP_DATA=1: kept the volume brine_hbase-data"
  else
    compose kill hbase > /dev/null 2>&1 || true
    compose rm -fv hbase > /dev/null 2>&1
    docker volume rm -f brine_hbase-data > /dev/null
    say "stopped and removed in $(elapsed) s"
  fi
}

zk_ok() { [ "$( (exec 3<>"/dev/tcp/127.0.0.1/$1" && echo ruok >&3 && timeout 2 cat <&3) 2>/dev/null)" = imok ]; }

cluster_up() {
  local zk=127.0.0.1:${HBASE_CLUSTER_ZK_PORT:-2481}
  if [ "$(state master)" = running ] && build_waitmeta && "$waitmeta" -zk "$zk" -timeout 30s -quiet 2>/dev/null; then
    say "cluster already running (ZooKeeper $zk); nothing to do"
    return 0
  fi
  image
  if [ "$keep" = 1 ] && [ "$(state master)" != missing ]; then
    say "HBASE_KEEP_DATA=1: starting on the existing volume"
  else
    compose --profile cluster kill "${cluster_services[@]}" > /dev/null 2>&1 || true
    compose --profile cluster rm -fv "${cluster_services[@]}" > /dev/null 2>&1 || true
    docker volume rm -f brine_cluster-data > /dev/null
  fi
  build_waitmeta &
  local build_pid=$!
  compose --profile cluster up -d --no-build zk > /dev/null 2>&1
  local deadline=$(($(date +%s) + timeout))
  until zk_ok "${HBASE_CLUSTER_ZK_PORT:-2481}"; do
    [ "$(state zk)" = running ] || { docker logs --tail 40 "$(cid zk)" >&2; die "ZooKeeper exited (log above)"; }
    [ "$(date +%s)" -lt "$deadline" ] || die "ZooKeeper not answering ruok after ${timeout}s"
    sleep 0.25
  done
  say "ZooKeeper $zk up after $(elapsed) s"
  local since
  since=$(date +%s)
  compose --profile cluster up -d --no-build master rs1 rs2 rs3 > /dev/null 2>&1
  wait "$build_pid" || die "could not build scripts/hbase/waitmeta"
  wait_log master "Master has completed initialization" "master initialization" "$since"
  say "master initialized after $(elapsed) s"
  waitmeta_ready "$zk"
  say "ready in $(elapsed) s: 3 region servers, ZooKeeper $zk (export BRINE_HBASE_CLUSTER_ZK=$zk)"
}

cluster_down() {
  if [ "$keep" = 1 ] && [ "$(state master)" = running ]; then
    admin_in zk -zk "127.0.0.1:${HBASE_CLUSTER_ZK_PORT:-2481}" -timeout 60 shutdown > /dev/null 2>&1 \
      || say "the shutdown RPC failed; stopping the containers"
    for s in master rs1 rs2 rs3 zk; do [ "$(state "$s")" = missing ] || docker stop -t 60 "$(cid "$s")" > /dev/null; done
    say "stopped in $(elapsed) s; HBASE_KEEP_DATA=1: kept the volume brine_cluster-data"
    return
  fi
  # The data goes anyway: SIGKILL, no shutdown (a paused container is killed as it is).
  compose --profile cluster kill "${cluster_services[@]}" > /dev/null 2>&1 || true
  compose --profile cluster rm -fv "${cluster_services[@]}" > /dev/null 2>&1 || true
  docker volume rm -f brine_cluster-data > /dev/null
  say "cluster stopped and removed in $(elapsed) s"
}

cluster_status() {
  local s
  for s in "${cluster_services[@]}"; do
    if [ "$(state "$s")" = running ]; then
      echo "$s up $(docker stats --no-stream --format 'mem={{.MemUsage}} cpu={{.CPUPerc}}' "$(cid "$s")")"
    else
      echo "$s $(state "$s")"
    fi
  done
}

rs() { # VERB N
  [[ "${2:-}" =~ ^[1-3]$ ]] || die "usage: cluster rs stop|kill|start|pause|unpause N (N in 1..3)"
  local svc=rs$2 c st
  c=$(cid "$svc")
  st=$(state "$svc")
  [ -n "$c" ] || die "$svc has no container; run cluster up first"
  case "$1" in
    stop) [ "$st" = running ] && docker stop -t 60 "$c" > /dev/null; say "stopped $svc gracefully in $(elapsed) s" ;;
    kill) [ "$st" = running ] || [ "$st" = paused ] && docker kill "$c" > /dev/null; say "killed $svc" ;;
    start)
      case "$st" in
        running) say "$svc already running" ;;
        paused) die "$svc is paused; unpause it first" ;;
        *) docker start "$c" > /dev/null; say "started $svc" ;;
      esac ;;
    pause)
      [ "$st" = running ] || die "$svc is $st; nothing to pause"
      docker pause "$c" > /dev/null; say "paused $svc" ;;
    unpause) # a no-op for one that is not paused, as for the bare JVMs
      if [ "$st" = paused ]; then docker unpause "$c" > /dev/null; say "unpaused $svc"; else say "$svc is $st; nothing to resume"; fi ;;
    *) die "usage: cluster rs stop|kill|start|pause|unpause N" ;;
  esac
}

master() {
  [ "${1:-}" = restart ] || die "usage: cluster master restart"
  local since
  since=$(date +%s)
  docker restart -t 60 "$(cid master)" > /dev/null
  wait_log master "Master has completed initialization" "master initialization after the restart" "$since"
  say "restarted the master; initialized after $(elapsed) s"
}

# admin_in SERVICE ARGS...: Admin in SERVICE's container (host network: -zk 127.0.0.1:PORT reaches
# any instance), stdin passed through for `serve`.
admin_in() {
  local svc=$1
  shift
  docker exec -i "$(cid "$svc")" bash -c 'source /opt/hbase/jvm-flags.sh
    exec java -Xmx256m -XX:TieredStopAtLevel=1 "${HBASE_JVM_FLAGS[@]}" \
      -Dlog4j2.configurationFile=/opt/hbase/log4j2-admin.properties -cp "/opt/hbase/admin:/opt/hbase/lib/*" Admin "$@"' _ "$@"
}

# admin: in ZooKeeper's container when the cluster runs (it is never killed, paused or restarted by
# the tests), else in the standalone server's.
admin() {
  local s
  for s in zk hbase; do
    [ "$(state "$s")" = running ] && { admin_in "$s" "$@"; return; }
  done
  die "no running container to run the admin tool in (zk or hbase)"
}

logs() {
  local dir=${1:?usage: hbase.sh logs DIR} c svc
  mkdir -p "$dir"
  for c in $(docker ps -aq --filter label=com.docker.compose.project=brine); do
    svc=$(docker inspect -f '{{ index .Config.Labels "com.docker.compose.service" }}' "$c")
    docker logs -t "$c" > "$dir/$svc.log" 2>&1 || true
    echo "$dir/$svc.log"
  done
}

# pids SERVICE...: the host pids of the services' JVMs (PID 1 of each container), comma-separated:
# what make bench gives brine bench --server-pid.
pids() {
  local s out=()
  for s in "$@"; do out+=("$(docker inspect -f '{{.State.Pid}}' "$(cid "$s")")"); done
  (IFS=,; echo "${out[*]}")
}

case "${1:-}" in
  image) image ;;
  pids) shift; pids "$@" ;;
  standalone)
    case "${2:-}" in up) standalone_up ;; down) standalone_down ;; *) die "usage: standalone up|down" ;; esac ;;
  cluster)
    case "${2:-}" in
      up) cluster_up ;;
      down) cluster_down ;;
      status) cluster_status ;;
      rs) rs "${3:-}" "${4:-}" ;;
      master) master "${3:-}" ;;
      *) die "usage: cluster up|down|status|rs VERB N|master restart" ;;
    esac ;;
  admin) shift; admin "$@" ;;
  logs) logs "${2:-}" ;;
  *) die "usage: hbase.sh image|standalone up|down|cluster ...|admin ARGS|logs DIR" ;;
esac
