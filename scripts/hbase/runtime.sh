# shellcheck shell=bash
# Which HBase the scripts start: containers (docker-compose.yml) or bare JVMs from Maven jars.
#
#   hbase_runtime     what the scripts use: BRINE_HBASE_RUNTIME (docker or jars; jars when unset, so
#                     that a script run by hand does what its name says)
#   detect_runtime    what make and scripts/test.sh choose when BRINE_HBASE_RUNTIME is unset: docker
#                     wherever a Docker engine answers and a compose command exists, else jars
#   runtime_why       one line saying what was found, for the first lines of a test run
#   compose ARGS...   the compose command of this machine: `docker compose` (v2) if present, else
#                     docker-compose (1.29), always in the repository's folder and project (brine)
#
# Run as a command (bash runtime.sh), it prints detect_runtime's answer.
hbase_runtime() {
  case "${BRINE_HBASE_RUNTIME:-jars}" in
    docker | jars) echo "${BRINE_HBASE_RUNTIME:-jars}" ;;
    *) echo "BRINE_HBASE_RUNTIME=$BRINE_HBASE_RUNTIME: want docker or jars" >&2; return 1 ;;
  esac
}

detect_runtime() {
  if [ -n "${BRINE_HBASE_RUNTIME:-}" ]; then
    hbase_runtime
  elif docker_answers && compose_cmd > /dev/null; then
    echo docker
  else
    echo jars
  fi
}

docker_answers() { command -v docker > /dev/null && timeout 10 docker info > /dev/null 2>&1; }

compose_cmd() {
  if docker compose version > /dev/null 2>&1; then
    echo "docker compose"
  elif command -v docker-compose > /dev/null; then
    echo docker-compose
  else
    return 1
  fi
}

runtime_why() {
  local rt
  rt=$(detect_runtime) || return 1
  if [ "$rt" = docker ]; then
    echo "HBase in Docker: engine $(docker version -f '{{.Server.Version}}' 2>/dev/null), $($(compose_cmd) version --short 2>/dev/null | head -n1) ($(compose_cmd))"
  elif [ -n "${BRINE_HBASE_RUNTIME:-}" ]; then
    echo "HBase as bare JVMs from Maven jars (BRINE_HBASE_RUNTIME=jars)"
  elif ! docker_answers; then
    echo "no Docker engine answers (docker info): HBase as bare JVMs from Maven jars instead"
  else
    echo "no compose command (docker compose or docker-compose): HBase as bare JVMs from Maven jars instead"
  fi
}

compose() {
  local root
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
  # shellcheck disable=SC2046 # the command is one or two words
  (cd "$root" && COMPOSE_PROJECT_NAME=brine $(compose_cmd) "$@")
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  detect_runtime
fi
