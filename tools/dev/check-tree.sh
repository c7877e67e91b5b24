#!/usr/bin/env bash
# The tree's own rules, checked in a second without a build or a device (the `tree` test, label core):
#   - tools/ holds at most 8 entries besides folders: what the README points users to, and the build's
#     CMakeLists.txt; developer scripts live in tools/dev/, the GPU measurements in tools/gpu/ (one entry
#     point, tools/gpu/run.sh SET);
#   - each set tools/gpu/run.sh --list names is described in docs/results/README.md's table;
#   - the environment is read in four files only: the engine's (engine/src/engine/environment.cpp), the
#     drop-in BLAS's (engine/src/blaslib/blas_environment.cpp), vkgemm's PDGEMM's
#     (engine/src/pblas/settings.cpp) and the developer build's experiment knobs
#     (engine/src/kernels/experiments.cpp); no other file under engine/src calls getenv or secure_getenv.
# Usage: tools/dev/check-tree.sh [SOURCE_DIR]   (default: this checkout). Exit 1 naming each broken rule.
set -euo pipefail
src=$(cd "${1:-$(dirname "$0")/../..}" && pwd)
failures=0
fail() { echo "check-tree: $*" >&2; failures=$((failures + 1)); }

max_loose=8
mapfile -t loose < <(find "$src/tools" -mindepth 1 -maxdepth 1 ! -type d -printf '%f\n' | sort)
if ((${#loose[@]} > max_loose)); then
  fail "tools/ holds ${#loose[@]} entries besides folders, more than $max_loose (${loose[*]}): move developer" \
       "scripts to tools/dev/ and GPU measurements to tools/gpu/sets/ (behind tools/gpu/run.sh)"
fi

sets=$("$src/tools/gpu/run.sh" --list | awk '{ print $1 }') || fail "tools/gpu/run.sh --list failed"
for set in $sets; do
  grep -qF "| \`$set\` |" "$src/docs/results/README.md" ||
    fail "the GPU set $set (tools/gpu/run.sh --list) has no row in docs/results/README.md's table of sets"
done

readers=(engine/src/engine/environment.cpp engine/src/blaslib/blas_environment.cpp engine/src/pblas/settings.cpp
         engine/src/kernels/experiments.cpp)
while IFS= read -r hit; do
  file=${hit%%:*}
  allowed=0
  for reader in "${readers[@]}"; do [[ $file == "$reader" ]] && allowed=1; done
  ((allowed)) || fail "$hit: reads the environment; only ${readers[*]} may (take the value as an argument instead)"
done < <(cd "$src" && { grep -rnE '(^|[^A-Za-z0-9_])(secure_)?getenv[[:space:]]*\(' engine/src || true; })

((failures == 0)) || exit 1
echo "check-tree: tools/ holds ${#loose[@]} entries besides folders (at most $max_loose); $(wc -w <<<"$sets") GPU sets," \
     "each in docs/results/README.md; the environment read only in ${readers[*]}"
