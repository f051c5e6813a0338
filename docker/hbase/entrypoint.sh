#!/usr/bin/env bash
# One image, four roles, each one JVM in the foreground logging to stdout (docker logs):
#   standalone     master + region server + ZooKeeper in one JVM (the `hbase` service)
#   zookeeper      the cluster's ZooKeeper            master        the cluster's HMaster
#   regionserver   one region server of the cluster
# and `health`, the healthcheck: the role's ports accept connections.
#
# The configuration is rendered from the same templates and JVM flags as scripts/hbase/up.sh and
# cluster.sh (render.sh), so a container runs what the bare-JVM path runs. With host networking (the
# compose file's default) every port binds to HBASE_BIND_ADDRESS, 127.0.0.1; the servers register as
# HBASE_ADVERTISE_HOST (localhost), the name clients dial.
#
# Environment: HBASE_ROLE (standalone), HBASE_NAME (tmp dir and log name; the role by default),
# HBASE_ZK_PORT (2181), HBASE_MASTER_PORT (16000), HBASE_RS_PORT (16020), HBASE_RS_COUNT (region
# servers the cluster's master waits for, 3), HBASE_HEAP (1g), HBASE_BIND_ADDRESS, HBASE_ADVERTISE_HOST.
set -euo pipefail

home=${HBASE_HOME:-/opt/hbase}
data=${HBASE_DATA:-/data}
role=${HBASE_ROLE:-standalone}
name=${HBASE_NAME:-$role}
zk_port=${HBASE_ZK_PORT:-2181}
master_port=${HBASE_MASTER_PORT:-16000}
rs_port=${HBASE_RS_PORT:-16020}
bind=${HBASE_BIND_ADDRESS:-127.0.0.1}
advertise=${HBASE_ADVERTISE_HOST:-localhost}

if [ "${1:-}" = health ]; then
  case $role in
    standalone) ports="$zk_port $rs_port" ;;
    zookeeper) ports=$zk_port ;;
    master) ports=$master_port ;;
    regionserver) ports=$rs_port ;;
  esac
  for p in $ports; do (exec 3<>"/dev/tcp/$bind/$p") 2>/dev/null || exit 1; done
  exit 0
fi

# shellcheck source=../../scripts/hbase/render.sh
source "$home/render.sh"
# shellcheck source=../../scripts/hbase/jvm-flags.sh
source "$home/jvm-flags.sh"
conf=$home/conf/$name
tmp=$data/tmp-$name
mkdir -p "$conf" "$tmp" "$data/zk"
cp "$home/log4j2.properties" "$conf/"

case $role in
  standalone)
    render "$home/hbase-site.xml.in" "$conf/hbase-site.xml" DATA_DIR="$data" ZK_PORT="$zk_port" \
      MASTER_PORT="$master_port" RS_PORT="$rs_port" ADVERTISE_HOST="$advertise" BIND_ADDRESS="$bind"
    main=(org.apache.hadoop.hbase.master.HMaster start) ;;
  zookeeper)
    render "$home/zoo.cfg.in" "$conf/zoo.cfg" DATA_DIR="$data" ZK_PORT="$zk_port" BIND_ADDRESS="$bind"
    main=(org.apache.zookeeper.server.quorum.QuorumPeerMain "$conf/zoo.cfg") ;;
  master | regionserver)
    render "$home/hbase-site-cluster.xml.in" "$conf/hbase-site.xml" DATA_DIR="$data" TMP_DIR="$tmp" \
      ZK_PORT="$zk_port" MASTER_PORT="$master_port" RS_PORT="$rs_port" RS_COUNT="${HBASE_RS_COUNT:-3}"
    if [ "$role" = master ]; then
      main=(org.apache.hadoop.hbase.master.HMaster start)
    else
      main=(org.apache.hadoop.hbase.regionserver.HRegionServer start)
    fi ;;
  *) echo "entrypoint: unknown HBASE_ROLE=$role (standalone, zookeeper, master, regionserver)" >&2; exit 2 ;;
esac

# exec: java becomes PID 1, so `docker stop` (SIGTERM) runs HBase's shutdown hook, `docker kill`
# is a crash, and `docker pause` freezes exactly the server.
exec java -Xms64m "-Xmx${HBASE_HEAP:-1g}" -XX:+UseG1GC "${HBASE_JVM_FLAGS[@]}" \
  -Djava.io.tmpdir="$tmp" -Dlog4j2.configurationFile="$conf/log4j2.properties" \
  -Dzookeeper.admin.enableServer=false \
  -cp "$conf:$home/lib/*" "${main[@]}"
