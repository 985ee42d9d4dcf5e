#!/usr/bin/env bash
# Checks what a release build of pg_stat_waits.so exports (nm -D
# --defined-only): only what PostgreSQL looks up in it, which is _PG_init,
# Pg_magic_func, the background-worker entry the sampler registers
# (bgw_function_name in src/), and each C function that extension/*.sql
# names with its pg_finfo_ record. Prints every other exported symbol (a test
# entry point, say) and every named function missing; exits 1 if any.
#   tools/check_exports.sh LIBRARY
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
lib=${1:?usage: tools/check_exports.sh LIBRARY}

mapfile -t sql < <(sed -n "s/.*'MODULE_PATHNAME', *'\([A-Za-z0-9_]*\)'.*/\1/p" "$root"/extension/*.sql | sort -u)
mapfile -t workers < <(grep -rhoE 'bgw_function_name, "[A-Za-z0-9_]+"' "$root/src" --include='*.cpp' |
                       sed 's/.*"\(.*\)"/\1/' | sort -u)
if [ "${#sql[@]}" -eq 0 ] || [ "${#workers[@]}" -eq 0 ]; then echo "no SQL function or no worker entry found" >&2; exit 1; fi
allowed=$(printf '%s\n' _PG_init Pg_magic_func "${workers[@]}" "${sql[@]}" "${sql[@]/#/pg_finfo_}" | sort -u)
exported=$(nm -D --defined-only "$lib" | awk '{print $NF}' | sort -u)
[ -n "$exported" ] || { echo "$lib: no exported symbol (not a library?)" >&2; exit 1; }

bad=0
while IFS= read -r s; do
  echo "$lib exports $s: not a function of extension/*.sql nor one PostgreSQL looks up"; bad=1
done < <(comm -13 <(echo "$allowed") <(echo "$exported"))
while IFS= read -r s; do
  echo "$lib lacks $s, which extension/*.sql or the sampler's registration names"; bad=1
done < <(comm -23 <(echo "$allowed") <(echo "$exported"))
exit $bad
