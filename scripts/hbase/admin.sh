#!/usr/bin/env bash
# Region operations gohbase cannot send (split, flush, major compact, move, close/open a region), through
# HBase's Java client: Admin.java, compiled on first use against the classpath up.sh cached.
#
#   scripts/hbase/admin.sh [-zk host:port] [-timeout seconds] regions|split|flush|compact|move|close|open TABLE [KEY]
#
# KEY is in HBase's binary-string form (printable ASCII as is, other bytes as \xNN). ZooKeeper defaults to
# $BRINE_HBASE_ZK, else 127.0.0.1:2181. Each call starts a JVM: about 1-3 s on top of the operation.
# Any instance (HBASE_BASE of up.sh) is reached by its ZooKeeper address alone: this script needs only
# the classpath cache, which stays under $REPO/.hbase/cache for every instance.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# With BRINE_HBASE_RUNTIME=docker (make and scripts/test.sh set it wherever a Docker engine answers:
# runtime.sh), the same command drives the containers of docker-compose.yml instead.
# shellcheck source=runtime.sh
source "$here/runtime.sh"
rt=$(hbase_runtime) || exit 1
[ "$rt" = docker ] && exec bash "$repo/scripts/docker/hbase.sh" admin "$@"
cache=$repo/.hbase/cache
cpfile=$cache/classpath.txt
classes=$cache/admin-classes

java_home=${HBASE_JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}
[ -x "$java_home/bin/java" ] || java_home=${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")}

if [ ! -s "$cpfile" ] || [ "$here/pom.xml" -nt "$cpfile" ]; then
  mkdir -p "$cache"
  mvn -B -q -f "$here/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cpfile.tmp" > "$cache/mvn.log" 2>&1 \
    || { cat "$cache/mvn.log" >&2; exit 1; }
  mv "$cpfile.tmp" "$cpfile"
fi
if [ ! -f "$classes/Admin.class" ] || [ "$here/Admin.java" -nt "$classes/Admin.class" ] || [ "$cpfile" -nt "$classes/Admin.class" ]; then
  rm -rf "$classes" && mkdir -p "$classes"
  "$java_home/bin/javac" -nowarn -d "$classes" -cp "$(cat "$cpfile")" "$here/Admin.java" >&2
fi

# The client's shaded Netty wants the same JDK openings as the server.
# shellcheck source=jvm-flags.sh
source "$here/jvm-flags.sh"
exec "$java_home/bin/java" -Xmx256m -XX:TieredStopAtLevel=1 "${HBASE_JVM_FLAGS[@]}" \
  -Dlog4j2.configurationFile="$here/log4j2-admin.properties" \
  -cp "$classes:$(cat "$cpfile")" Admin "$@"
