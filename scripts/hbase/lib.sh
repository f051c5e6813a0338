# shellcheck shell=bash
# What up.sh (standalone) and cluster.sh (ZooKeeper + master + N region servers) share: the JDK, the
# Maven classpath cache, the waitmeta probe and the pid-file helpers. Sourced; expects $here (this
# directory) and $repo (the module root) to be set, and defines say/die only if the caller has not.
HBASE_VERSION=2.6.4-hadoop3 # keep in step with pom.xml and docker/hbase/Dockerfile

cache=$repo/.hbase/cache # shared by every instance: Maven resolves the classpath once
cpfile=$cache/classpath.txt
waitmeta=$cache/waitmeta
mkdir -p "$cache"
# shellcheck source=../goproxy.sh
source "$repo/scripts/goproxy.sh"

# pick_java prints a java binary of a JDK HBase 2.6 runs on (11, 17 or 21), or dies.
pick_java() {
  local cand bin major
  for cand in "${HBASE_JAVA_HOME:-}" /usr/lib/jvm/java-17-openjdk-amd64 "${JAVA_HOME:-}"; do
    if [ -n "$cand" ] && [ -x "$cand/bin/java" ]; then
      bin=$cand/bin/java
      break
    fi
  done
  [ -n "${bin:-}" ] || bin=$(command -v java) || die "no java found; install a JDK 17 (apt-get install openjdk-17-jdk-headless)"
  major=$("$bin" -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ { print $2 }')
  case "$major" in
    11 | 17 | 21) ;;
    # Hadoop's security code does not run on JDK 23+ (Subject.getSubject no longer works).
    *) die "$bin is Java $major; HBase 2.6 with Hadoop 3 needs 11, 17 or 21 (set HBASE_JAVA_HOME)" ;;
  esac
  echo "$bin"
}

# ensure_classpath resolves the jars with Maven unless the cached classpath is newer than the pom: a
# warm start costs no JVM for mvn.
ensure_classpath() {
  # One resolution at a time: make test fetches the jars in the background while the unit tests run,
  # and the HFile tests (hfile.sh) may ask for them meanwhile; both write $cpfile.tmp.
  exec {cplock}> "$cache/classpath.lock"
  flock "$cplock"
  if [ ! -s "$cpfile" ] || [ "$here/pom.xml" -nt "$cpfile" ]; then
    command -v mvn >/dev/null || die "mvn not found (apt-get install maven)"
    say "resolving HBase $HBASE_VERSION jars with Maven (first run downloads ~200 MB into ~/.m2)"
    # Maven's output (escape codes even with -B -q) is shown only if it fails.
    if ! mvn -B -q -f "$here/pom.xml" dependency:build-classpath -Dmdep.outputFile="$cpfile.tmp" > "$cache/mvn.log" 2>&1; then
      cat "$cache/mvn.log" >&2
      die "mvn dependency:build-classpath failed (log above)"
    fi
    mv "$cpfile.tmp" "$cpfile"
  fi
  exec {cplock}>&-
}

# build_waitmeta builds the readiness probe (Go, gohbase) from this repo, so it uses the tests' client.
build_waitmeta() {
  (cd "$repo" && go build -o "$waitmeta" ./scripts/hbase/waitmeta)
}

# pid_alive PIDFILE: the pid file names a live process (a zombie, i.e. an exited JVM not yet reaped,
# is not one).
pid_alive() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 1
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null && [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" != Z ]
}

# pid_is_ours PIDFILE MARK: the pid file names a live JVM started with -D$MARK (a stale pid could
# have been reused by some other process, which must never be signalled).
pid_is_ours() {
  pid_alive "$1" && tr '\0' ' ' < "/proc/$(cat "$1")/cmdline" 2>/dev/null | grep -q -- "-D$2"
}

# port_busy PORT: something listens on 127.0.0.1:PORT.
port_busy() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# start_detached PIDFILE LOG CMD...: runs CMD in its own session (it must outlive the caller and must
# not get the terminal's SIGINT meant for make), stdin closed, output appended to LOG; bash -c writes
# its own pid and execs, so the pid file names the JVM itself.
start_detached() {
  local pidfile=$1 log=$2
  shift 2
  rm -f "$pidfile"
  setsid bash -c 'echo $$ > "$1"; shift; exec "$@"' _ "$pidfile" "$@" < /dev/null >> "$log" 2>&1 &
  for _ in $(seq 50); do [ -s "$pidfile" ] && return 0; sleep 0.1; done
  die "$* did not start; see $log"
}

# stop_pid PIDFILE GRACE: SIGTERM, then SIGKILL after GRACE seconds; returns once the process is gone.
stop_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq $(($2 * 4))); do pid_alive "$1" || return 0; sleep 0.25; done
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 40); do pid_alive "$1" || return 0; sleep 0.25; done
}

# kill_pid PIDFILE: SIGKILL, as a crash would; returns once the process is gone.
kill_pid() {
  local pid
  pid=$(cat "$1" 2>/dev/null) || return 0
  kill -KILL "$pid" 2>/dev/null || true
  for _ in $(seq 40); do pid_alive "$1" || return 0; sleep 0.25; done
}
