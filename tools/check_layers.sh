#!/usr/bin/env bash
# Checks src/ against the layers docs/architecture.md draws (its "layers"
# block): a file includes only files of its own layer or of layers listed
# before it; a file under src/core includes no PostgreSQL header; no file is
# longer than PSW_MAX_LINES (500). Prints each violation; exits 1 if any.
#   tools/check_layers.sh [PG_INCLUDEDIR_SERVER]
# With the argument, an angle-bracket include in src/core that names a file
# in PostgreSQL's server include directory counts as a PostgreSQL header too.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
pg_inc=${1:-}
max_lines=${PSW_MAX_LINES:-500}

# The layers, lowest first: "name path..." lines between ```layers and ```.
# shellcheck disable=SC2016  # the backquotes are literal
mapfile -t layer_lines < <(sed -n '/^```layers$/,/^```$/p' docs/architecture.md | sed '1d;$d' | grep -v '^#')
[ "${#layer_lines[@]}" -gt 0 ] || { echo "docs/architecture.md has no layers block" >&2; exit 1; }

# layer_of FILE: the index of the layer whose path (a folder ending in /,
# or a file) covers FILE, the most specific path winning; -1 if none.
layer_of() {
  local f=$1 i best=-1 best_len=0 p
  for i in "${!layer_lines[@]}"; do
    for p in ${layer_lines[$i]#* }; do
      if [ "${p%/}" != "$p" ]; then
        case "$f" in "$p"*) ;; *) continue ;; esac
      else
        [ "$f" = "$p" ] || continue
      fi
      if [ "${#p}" -gt "$best_len" ]; then best=$i; best_len=${#p}; fi
    done
  done
  echo "$best"
}
layer_name() { [ "$1" -ge 0 ] && echo "${layer_lines[$1]%% *}" || echo "(none)"; }

bad=0
while IFS= read -r f; do
  lines=$(wc -l <"$f")
  if [ "$lines" -gt "$max_lines" ]; then
    echo "$f: $lines lines (at most $max_lines: split it by operation)"; bad=1
  fi
  own=$(layer_of "$f")
  if [ "$own" -lt 0 ]; then echo "$f: in no layer of docs/architecture.md"; bad=1; continue; fi
  dir=$(dirname "$f")
  while IFS= read -r inc; do
    target=$(realpath -m --relative-to="$root" "$dir/$inc")
    if [ -e "$target" ]; then
      to=$(layer_of "$target")
      if [ "$to" -gt "$own" ]; then
        echo "$f ($(layer_name "$own")) includes $target ($(layer_name "$to")): against the layers"; bad=1
      fi
    elif [ "${f#src/core/}" != "$f" ]; then
      echo "$f (core) includes \"$inc\", which is not in src/core: core is PostgreSQL-free"; bad=1
    fi
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$f")
  if [ -n "$pg_inc" ] && [ "${f#src/core/}" != "$f" ]; then
    while IFS= read -r inc; do
      if [ -e "$pg_inc/$inc" ]; then echo "$f (core) includes <$inc>, a PostgreSQL header"; bad=1; fi
    done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*<\([^>]*\)>.*/\1/p' "$f")
  fi
done < <(git ls-files 'src/*.h' 'src/*.cpp')
exit $bad
