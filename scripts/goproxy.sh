#!/usr/bin/env bash
# The GOPROXY every go command of the project runs with. This machine's module proxy refuses the
# gohbase that go.mod pins (every version newer than 2022-05-17); ../shared/goproxy, beside the
# checkout where it exists, is a module proxy in the file:// layout that serves exactly that version.
# It goes first, and every other module comes from the proxy configured before (`go env GOPROXY`).
# The checksum database still checks what it serves, as for any module. Where ../shared/goproxy does
# not exist (a user's machine whose proxy serves gohbase), GOPROXY is left as it was.
#
#   source scripts/goproxy.sh    exports GOPROXY (the scripts)
#   bash scripts/goproxy.sh      prints it (the Makefile)
brine_goproxy() {
  local root dir current
  root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
  current=$(go env GOPROXY)
  [ -d "$root/../shared/goproxy" ] || { echo "$current"; return; }
  dir=$(cd "$root/../shared/goproxy" && pwd)
  case ",$current," in
    *",file://$dir,"*) echo "$current" ;;
    *) echo "file://$dir,$current" ;;
  esac
}
if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  brine_goproxy
else
  GOPROXY=$(brine_goproxy)
  export GOPROXY
fi
