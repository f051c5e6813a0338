#!/usr/bin/env bash
# Run gohbase's own integration suite (integration_test.go of the gohbase version go.mod pins, read
# from the module cache at run time, never committed here) against the HBase at $BRINE_HBASE_ZK,
# on raw gohbase and through brine's drop-in (backends/hbase/dropin), and print which tests pass.
#
#   BRINE_HBASE_ZK=127.0.0.1:2181 scripts/hbase/gohbase-suite.sh [raw|dropin|both] [go test -run regex]
#
# The drop-in run applies exactly two adaptations to the copied file (sed lines below):
#   - client construction, the one-line swap a gohbase program makes: gohbase.NewClient(zk, opts...)
#     becomes dropin.NewClient(zk, opts...) (and the file imports backends/hbase/dropin);
#   - table creation: TestMain's CreateTable of the test table becomes suiteCreateTable (in
#     scripts/hbase/gohbase-suite/adapt_test.go), which creates it through brine (salted by
#     $BRINE_SUITE_SALT, default hash:8, with gohbase's family defaults).
# Every test body and assertion runs as gohbase wrote it. go vet is off for the copied file: Go 1.26's
# printf check rejects a line of it (t.Errorf with a non-constant format), which is not brine's to fix.
#
# Environment: BRINE_HBASE_ZK (required), BRINE_SUITE_SALT (hash:8), BRINE_SUITE_OUT (a directory to
# keep the logs and the pass lists in; default: a temporary one, removed).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../goproxy.sh
source "$repo/scripts/goproxy.sh"
zk=${BRINE_HBASE_ZK:?set BRINE_HBASE_ZK to the ZooKeeper quorum of a running HBase}
mode=${1:-both}
run=${2:-.}
case $mode in raw|dropin|both) ;; *) echo "usage: $0 [raw|dropin|both] [regex]" >&2; exit 2 ;; esac

# The throwaway modules below resolve brine's module graph offline: fetch it first (a fresh module
# cache has none of it).
(cd "$repo" && go mod download && go list -m all > /dev/null)
gohbase_dir=$(cd "$repo" && go list -m -f '{{.Dir}}' github.com/tsuna/gohbase)
gohbase_ver=$(cd "$repo" && go list -m -f '{{.Version}}' github.com/tsuna/gohbase)
graph=$(cd "$repo" && go list -m -f '{{.Path}} {{.Version}}' all)
src=$gohbase_dir/integration_test.go
[ -f "$src" ] || { echo "gohbase-suite: $src not found (go mod download github.com/tsuna/gohbase)" >&2; exit 1; }

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=${BRINE_SUITE_OUT:-$tmp/out}
mkdir -p "$out"

# A throwaway module beside the repo: brine by replace, every other version as brine's go.mod pins it.
setup() { # setup DIR
  local d=$1
  mkdir -p "$d"
  sed -e 's#^module .*#module gohbasesuite#' "$repo/go.mod" > "$d/go.mod"
  cp "$repo/go.sum" "$d/go.sum"
  printf 'require github.com/brine-kv/brine v0.0.0\nreplace github.com/brine-kv/brine => %s\n' "$repo" >> "$d/go.mod"
  cp "$src" "$d/integration_test.go"
  chmod u+w "$d/integration_test.go"
  # Modules the suite imports that brine does not (testify): required at the version brine's
  # graph already selects, so the graph stays brine's; then fetched, with what they import, while
  # the proxy is still reachable (the runs below are offline).
  local imp mod
  for imp in $(sed -n '/^import (/,/^)/p' "$src" | grep -o '"[^"]*\.[^"]*"' | tr -d '"'); do
    mod=$(awk -v imp="$imp" 'index(imp "/", $1 "/") == 1 && length($1) > length(best) { best = $1; line = $0 }
      END { print line }' <<<"$graph")
    [ -n "$mod" ] || { echo "gohbase-suite: no module of brine's graph provides $imp" >&2; exit 1; }
    grep -qE "^[[:space:]]*(require[[:space:]]+)?${mod%% *}[[:space:]]" "$d/go.mod" || echo "require $mod" >> "$d/go.mod"
  done
  (cd "$d" && GOFLAGS=-mod=mod go list -deps -test -tags integration,gohbasesuite . > /dev/null)
}

runsuite() { # runsuite NAME DIR [tags]
  local name=$1 d=$2 tags=$3
  echo "gohbase-suite: $name run (gohbase $gohbase_ver, HBase at $zk)" >&2
  (cd "$d" && GOFLAGS=-mod=mod GOPROXY=off BRINE_SUITE_ZK="$zk" \
    go test -vet=off -tags "$tags" -count=1 -p 1 -timeout 30m -v -run "$run" . -args -host="$zk") \
    > "$out/$name.log" 2>&1 || true
  # Top-level results only (subtests are indented).
  grep -E '^--- (PASS|FAIL|SKIP): Test' "$out/$name.log" | awk '{sub(":", "", $2); print $3, $2}' | sort > "$out/$name.txt" || true
  if ! grep -qE '^(ok|FAIL|PASS)' "$out/$name.log"; then
    echo "gohbase-suite: the $name run did not finish; the end of its log:" >&2
    tail -n 30 "$out/$name.log" >&2
  fi
}

if [ "$mode" != dropin ]; then
  setup "$tmp/raw"
  runsuite raw "$tmp/raw" integration
fi
if [ "$mode" != raw ]; then
  setup "$tmp/dropin"
  cp "$here/gohbase-suite/adapt_test.go" "$tmp/dropin/"
  sed -i \
    -e 's/gohbase\.NewClient(/dropin.NewClient(/g' \
    -e 's#^\t"github.com/tsuna/gohbase"$#&\n\t"github.com/brine-kv/brine/backends/hbase/dropin"#' \
    -e 's/err = CreateTable(ac, table, \[\]string{"cf", "cf1", "cf2"})/err = suiteCreateTable(ac, table, []string{"cf", "cf1", "cf2"})/' \
    "$tmp/dropin/integration_test.go"
  grep -q 'suiteCreateTable(ac, table' "$tmp/dropin/integration_test.go" ||
    { echo "gohbase-suite: the table-creation line of $src has changed; update the sed line" >&2; exit 1; }
  grep -q 'brine/backends/hbase/dropin"$' "$tmp/dropin/integration_test.go" ||
    { echo "gohbase-suite: the gohbase import line of $src has changed; update the sed line" >&2; exit 1; }
  runsuite dropin "$tmp/dropin" "integration,gohbasesuite"
fi

# One line per test: name, raw result, drop-in result.
if [ "$mode" = both ]; then
  join -a1 -a2 -e - -o 0,1.2,2.2 "$out/raw.txt" "$out/dropin.txt" > "$out/table.txt"
  { echo TEST RAW DROPIN; cat "$out/table.txt"; } | column -t
  echo "raw passes $(grep -c ' PASS' "$out/raw.txt" || true) of $(wc -l < "$out/raw.txt");" \
    "drop-in passes $(grep -c ' PASS' "$out/dropin.txt" || true) of $(wc -l < "$out/dropin.txt");" \
    "both pass $(awk '$2=="PASS" && $3=="PASS"' "$out/table.txt" | wc -l)"
else
  cat "$out/$mode.txt"
fi
