#!/usr/bin/env bash
# Renders hbase-site.xml like scripts/hbase/up.sh does and runs HBase in the foreground, logging to
# stdout (docker logs).
#
# HBASE_ADVERTISE_HOST is the name the servers register in ZooKeeper and hbase:meta, i.e. the name
# clients dial. "localhost" (the default) suits clients on the Docker host, through the published ports;
# for clients in other containers on the compose network, set it to this service's name instead.
set -euo pipefail

home=${HBASE_HOME:-/opt/hbase}
data=${HBASE_DATA:-/data}
mkdir -p "$data/tmp" "$data/zk" "$home/conf"
sed -e "s|@DATA_DIR@|$data|g" \
  -e "s|@ZK_PORT@|2181|g" \
  -e "s|@MASTER_PORT@|16000|g" \
  -e "s|@RS_PORT@|16020|g" \
  -e "s|@ADVERTISE_HOST@|${HBASE_ADVERTISE_HOST:-localhost}|g" \
  -e "s|@BIND_ADDRESS@|0.0.0.0|g" \
  "$home/hbase-site.xml.in" > "$home/conf/hbase-site.xml"

# shellcheck source=../../scripts/hbase/jvm-flags.sh
source "$home/jvm-flags.sh"
# exec: java becomes PID 1 and gets `docker stop`'s SIGTERM directly, which runs HBase's shutdown hook.
exec java -Xms256m "-Xmx${HBASE_HEAP:-1g}" -XX:+UseG1GC "${HBASE_JVM_FLAGS[@]}" \
  -Djava.io.tmpdir="$data/tmp" \
  -Dlog4j2.configurationFile="$home/log4j2.properties" \
  -cp "$home/conf:$home/lib/*" \
  org.apache.hadoop.hbase.master.HMaster start
