#!/usr/bin/env bash
# The two base images docker/hbase/Dockerfile builds from, for a machine that cannot pull them.
#
#   scripts/docker/bases.sh     prints two build arguments, BASE_MAVEN=IMAGE and BASE_JRE=IMAGE
#
# The Dockerfile's defaults are the public images users pull (maven:3.9-eclipse-temurin-17,
# eclipse-temurin:17-jre). Where they are present or can be pulled, those are printed. Where no image
# registry answers, equivalent bases are built once per machine from Debian's packages and reused:
#   brine-base/jre:17-bookworm     debootstrap minbase + openjdk-17-jre-headless + ca-certificates
#   brine-base/maven:17-bookworm   the same + openjdk-17-jdk-headless + maven
# Both trust the host's extra CA certificates (/usr/local/share/ca-certificates): on machines whose
# egress re-signs TLS, Maven inside the build reaches Maven Central only so. Rebuilt when those
# certificates change (a label records their hash). Needs root (debootstrap) and a Docker engine.
#
# Environment: BRINE_BASE_MIRROR (http://deb.debian.org/debian), BRINE_BASE_SUITE (bookworm),
# BRINE_BASE_PULL=0 to skip the pull attempt.
set -euo pipefail

say() { echo "bases: $*" >&2; }
die() { echo "bases: $*" >&2; exit 1; }

public_maven=maven:3.9-eclipse-temurin-17
public_jre=eclipse-temurin:17-jre
suite=${BRINE_BASE_SUITE:-bookworm}
mirror=${BRINE_BASE_MIRROR:-http://deb.debian.org/debian}
local_jre=brine-base/jre:17-$suite
local_maven=brine-base/maven:17-$suite

have() { docker image inspect "$1" > /dev/null 2>&1; }

# 1. The public images, if present or pullable (a registry that cannot be reached fails fast).
if have "$public_maven" && have "$public_jre"; then
  echo "BASE_MAVEN=$public_maven"; echo "BASE_JRE=$public_jre"; exit 0
fi
if [ "${BRINE_BASE_PULL:-1}" = 1 ] && timeout 60 docker pull -q "$public_jre" > /dev/null 2>&1 \
  && timeout 300 docker pull -q "$public_maven" > /dev/null 2>&1; then
  echo "BASE_MAVEN=$public_maven"; echo "BASE_JRE=$public_jre"; exit 0
fi

# 2. Local bases from Debian's packages, built once per machine.
certs=/usr/local/share/ca-certificates
certhash=$( (cat "$certs"/*.crt 2>/dev/null || true) | sha256sum | cut -c1-16)
current() { [ "$(docker image inspect -f '{{ index .Config.Labels "brine.certs" }}' "$1" 2>/dev/null)" = "$certhash" ]; }
if current "$local_jre" && current "$local_maven"; then
  echo "BASE_MAVEN=$local_maven"; echo "BASE_JRE=$local_jre"; exit 0
fi

[ "$(id -u)" = 0 ] || die "building the local bases needs root (debootstrap); or make $public_jre and $public_maven pullable"
command -v debootstrap > /dev/null || die "debootstrap not found (apt-get install debootstrap)"
began=$SECONDS
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

say "no registry: building $local_jre and $local_maven from Debian $suite (once per machine)"
# The JDK and Maven come from the same debootstrap: apt inside a container would need its own mirror
# access and CA setup. The JRE image is the same root file system without them.
debootstrap_into() { # DIR PACKAGES
  debootstrap --variant=minbase --include="$2" "$suite" "$1" "$mirror" > "$work/debootstrap-$(basename "$1").log" 2>&1 \
    || { tail -n 30 "$work/debootstrap-$(basename "$1").log" >&2; die "debootstrap of $1 failed"; }
  rm -rf "$1"/var/cache/apt/archives/*.deb "$1"/var/lib/apt/lists/*
}
debootstrap_into "$work/jre" openjdk-17-jre-headless,ca-certificates &
jre_pid=$!
debootstrap_into "$work/maven" openjdk-17-jdk-headless,maven,ca-certificates
wait "$jre_pid"
say "root file systems built in $((SECONDS - began)) s"

# The host's extra CAs go in through a Dockerfile, so that update-ca-certificates (and the JDK's
# cacerts hook of ca-certificates-java) runs inside the image, with /proc.
mkdir -p "$work/ctx/certs"
cp "$certs"/*.crt "$work/ctx/certs/" 2>/dev/null || true
cat > "$work/ctx/Dockerfile" <<'DOCKERFILE'
ARG RAW
FROM ${RAW}
ARG CERTS
LABEL brine.certs=${CERTS}
COPY certs/ /usr/local/share/ca-certificates/
RUN update-ca-certificates > /dev/null
ENV JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64 LANG=C.UTF-8
DOCKERFILE
for kind in jre maven; do
  tar -C "$work/$kind" -c . | docker import - "brine-base/raw-$kind:$suite" > /dev/null
  tag=$local_jre
  [ "$kind" = maven ] && tag=$local_maven
  docker build -q --network host --build-arg RAW="brine-base/raw-$kind:$suite" --build-arg CERTS="$certhash" \
    -t "$tag" "$work/ctx" > /dev/null
  docker image rm "brine-base/raw-$kind:$suite" > /dev/null
done
say "built $local_jre and $local_maven in $((SECONDS - began)) s"
echo "BASE_MAVEN=$local_maven"; echo "BASE_JRE=$local_jre"
