#!/usr/bin/env bash
# HBase's own HFile readers on local files, from the Maven jars of pom.xml, for the tests of
# backends/hbase/internal/hfile:
#
#   scripts/hbase/hfile.sh print [OPTIONS] -f file:///abs/path   HFilePrettyPrinter (`hbase hfile`):
#       -m meta (trailer, file info, mid-key), -p cells, -k key order check, -b block index,
#       -h block headers, -w ROW seek to ROW through the index, -v file delimiters
#   scripts/hbase/hfile.sh check PATH...                          HFileCheck.java: every block read with
#       HBase's checksum verification on, as a region server reads (the printer's reads skip it)
#
# The first run resolves the classpath with Maven (lib.sh's ensure_classpath, cached in .hbase/cache)
# and compiles HFileCheck.java; each call is then one JVM of about two seconds. Needs a JDK 11/17/21
# (lib.sh's pick_java) and Maven.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
die() { echo "hfile.sh: $*" >&2; exit 1; }
say() { echo "hfile.sh: $*" >&2; } # on stderr: the tests parse what the printer writes on stdout
command -v mvn > /dev/null || die "mvn not found (apt-get install maven)"
# shellcheck source=lib.sh
source "$here/lib.sh"
java=$(pick_java)
ensure_classpath
# shellcheck source=jvm-flags.sh
source "$here/jvm-flags.sh"
run() {
  exec "$java" -Xmx256m -XX:TieredStopAtLevel=1 -XX:+UseSerialGC "${HBASE_JVM_FLAGS[@]}" \
    -Dlog4j2.configurationFile="$here/log4j2-admin.properties" "$@"
}
case "${1:-}" in
  print) shift; run -cp "$(cat "$cpfile")" org.apache.hadoop.hbase.io.hfile.HFilePrettyPrinter "$@" ;;
  check)
    shift
    classes=$cache/hfilecheck-classes
    if [ ! -f "$classes/HFileCheck.class" ] || [ "$here/HFileCheck.java" -nt "$classes/HFileCheck.class" ] || [ "$cpfile" -nt "$classes/HFileCheck.class" ]; then
      rm -rf "$classes" && mkdir -p "$classes"
      "$(dirname "$java")/javac" -nowarn -d "$classes" -cp "$(cat "$cpfile")" "$here/HFileCheck.java" >&2
    fi
    run -cp "$classes:$(cat "$cpfile")" HFileCheck "$@"
    ;;
  *) die "usage: hfile.sh print [PRINTER OPTIONS] -f file:///PATH | check PATH..." ;;
esac
