#!/usr/bin/env bash
# Makes a Docker engine answer on this machine, for CI (.ci/run) and fresh machines of this project:
# installs Debian's docker.io and docker-compose if missing and starts dockerd if none answers.
#
#   scripts/docker/engine.sh start    prints "started" if it started dockerd, "running" if one answered
#   scripts/docker/engine.sh stop     stops the dockerd that start started (its pid file), nothing else
#
# dockerd runs with --bridge=none --iptables=false: no docker0 bridge on a private-range subnet, no
# firewall changes. Containers use host networking and bind to 127.0.0.1 (docker-compose.yml).
# Needs root; without it (or without apt), it says so and exits 1, and make test uses the jar path.
set -euo pipefail
pidfile=/run/brine-dockerd.pid
log=/tmp/brine-dockerd.log
say() { echo "engine: $*" >&2; }

answers() { timeout 10 docker info > /dev/null 2>&1; }

start() {
  if command -v docker > /dev/null && answers; then echo running; return; fi
  [ "$(id -u)" = 0 ] || { say "not root: cannot install or start a Docker engine"; exit 1; }
  if ! command -v dockerd > /dev/null || ! command -v docker-compose > /dev/null || ! command -v debootstrap > /dev/null; then
    say "installing docker.io, docker-compose and debootstrap (Debian)"
    local began=$SECONDS
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq docker.io docker-compose debootstrap; } \
      > /tmp/brine-apt.log 2>&1 || { tail -n 20 /tmp/brine-apt.log >&2; say "apt-get install failed"; exit 1; }
    say "installed in $((SECONDS - began)) s"
  fi
  # Debian's package may have started its own daemon (systemd); only start one if none answers.
  if ! answers; then
    setsid dockerd --bridge=none --iptables=false > "$log" 2>&1 < /dev/null &
    echo $! > "$pidfile"
    for _ in $(seq 120); do answers && break; sleep 0.5; done
    answers || { tail -n 20 "$log" >&2; say "dockerd did not answer within 60 s"; exit 1; }
    echo started
    return
  fi
  echo running
}

stop() {
  [ -s "$pidfile" ] || return 0
  local pid
  pid=$(cat "$pidfile")
  kill -TERM "$pid" 2>/dev/null || true
  for _ in $(seq 60); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
  rm -f "$pidfile"
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: engine.sh start|stop" >&2; exit 2 ;;
esac
