# shellcheck shell=bash
# render TEMPLATE DEST NAME=VALUE...: writes DEST as TEMPLATE with every @NAME@ replaced by VALUE.
# One renderer for every HBase configuration the suite starts: up.sh and cluster.sh (bare JVMs) and
# docker/hbase/entrypoint.sh (containers) all fill the same templates through it.
render() {
  local tpl=$1 dest=$2 kv
  shift 2
  local exprs=()
  for kv in "$@"; do exprs+=(-e "s|@${kv%%=*}@|${kv#*=}|g"); done
  mkdir -p "$(dirname "$dest")"
  sed "${exprs[@]}" "$tpl" > "$dest.tmp"
  if grep -q '@[A-Z_]*@' "$dest.tmp"; then
    echo "render: $tpl: placeholders left: $(grep -o '@[A-Z_]*@' "$dest.tmp" | sort -u | tr '\n' ' ')" >&2
    return 1
  fi
  mv "$dest.tmp" "$dest"
}
