#!/usr/bin/env bash
# Runs every fuzz target of the module for the given time each (default 30s): go test -fuzz accepts
# one target per run.
set -euo pipefail
# shellcheck source=goproxy.sh
source "$(dirname "$0")/goproxy.sh"
cd "$(dirname "$0")/.."
fuzztime=${1:-30s}
for pkg in $(go list ./...); do
  for target in $(go test -list '^Fuzz' "$pkg" | grep '^Fuzz' || true); do
    echo "== $pkg $target ($fuzztime)"
    go test -run '^$' -fuzz "^${target}\$" -fuzztime "$fuzztime" -parallel 2 "$pkg"
  done
done
