#!/usr/bin/env bash
# Usage: tools/run-tests.sh [--quick] [ctest options...]
# --quick: the quick tier, for a change's first look (minutes, not CI's run): the build of what the suites
#   run (vkgemm_tests and vkgemm, in build/quick: below) and every suite once, in the core validation pass
#   only, the grids sampled (VKGEMM_TEST_GRID_SAMPLE, default 8: one product in 8) and so the costliest items
#   of a few suites (VKGEMM_TEST_QUICK_SAMPLE, default 8: one tuner candidate's pipeline in 8, one 6000x6000
#   product of 4, one of the two products past the device's workgroup counts, one call of each kernel on the
#   engines with lowered limits, one or two sizes of each op combination of the blocked kernel, one or two of
#   the program's six `run --verify` calls; tests/support.hpp), another slice each run by the seed each suite
#   prints; no synchronization or GPU-assisted validation, no end-to-end tests,
#   no Mesa 26 pass, no sanitizer build, no fuzzing. What it leaves out, CI's full run (below, the default)
#   still runs.
# Without it: installs what is missing, builds, and runs everything CI runs, timing each part:
#   1-3. the whole suite (Release, build/release) in three validation passes, each a CTest label:
#        core (VK_LAYER_KHRONOS_validation as is), sync (synchronization validation), gpuav (GPU-assisted);
#   4.   the end-to-end tests (label e2e, Release): vkgemm bench with vkgemm-report, the README's
#        commands (tools/dev/check-readme.sh), the graphics example, the installed package;
#   5.   the coopmat and support suites on Mesa 26's lavapipe, which has VK_KHR_cooperative_matrix
#        (tools/dev/coopmat-lavapipe.sh: a Debian trixie root prepared once under build/);
#   6.   the suite's core pass again in the AddressSanitizer + UndefinedBehaviorSanitizer build (build/asan:
#        clang, which also builds the fuzzers), LeakSanitizer on;
#   7.   the .npy and argument-parser fuzzers from that build, FUZZ_SECONDS each (tools/dev/run-fuzz.sh).
# Every registered test carries one of the labels these passes run (checked first: a test no pass would
# run fails the script). A case that cannot run here is a skip, counted apart by CTest; the skips and why
# are listed at the end. VKGEMM_TEST_EXPECT (default below: what CI's lavapipe and toolchain must have)
# makes the support suite fail when a kernel, type or embedded shader is lost; set it to the empty string
# on a machine that lacks some of them, and the support suite reports itself skipped.
# The tests run on whatever Vulkan device is best here (lavapipe on a machine without a GPU; set
# VKGEMM_DEVICE to choose). Extra arguments go to every ctest run (e.g. -R shapes).
set -euo pipefail
cd "$(dirname "$0")/.."
quick=0
if [ "${1-}" = "--quick" ]; then
  quick=1
  shift
fi
tools/install-deps.sh
jobs="$(nproc)"
timings=()
times_file=$(mktemp)
trap 'rm -f "$times_file"' EXIT
children_cpu=0
read_children_cpu() {  # children_cpu: the CPU seconds (user + system) of every child this shell has waited for
  times >"$times_file"  # (in this shell: a command substitution would ask a subshell, which has no children)
  children_cpu=$(tail -n 1 "$times_file" | awk '{ split($1, u, /[ms]/); split($2, s, /[ms]/); printf "%.0f", u[1] * 60 + u[2] + s[1] * 60 + s[2] }')
}
timed() {  # timed NAME COMMAND...: runs it, records its wall time and the CPU time of what it ran
  local name="$1" start end cpu
  shift
  start=$(date +%s)
  read_children_cpu
  cpu=$children_cpu
  "$@"
  end=$(date +%s)
  read_children_cpu
  cpu=$((children_cpu - cpu))
  timings+=("$name: $((end - start)) s, $cpu s of CPU")
  echo "run-tests: $name took $((end - start)) s, $cpu s of CPU"
}

export VKGEMM_TEST_EXPECT="${VKGEMM_TEST_EXPECT-kernels=naive,tiled,blocked types=f32,i32,f64,f16 dot8=tiled spirv=coopmat,coopmat2}"
export VKGEMM_TEST_SKIP_LOG="$PWD/build/test-skips.log"
mkdir -p build && : >"$VKGEMM_TEST_SKIP_LOG"

# The quick tier builds in build/quick (the quick preset: Release with Debian's shared libfmt, -O1,
# precompiled headers and the program's files unity-built, cmake/quick_build.cmake; never carried off this
# machine), CI's run in build/release.
preset=release
((quick)) && preset=quick
cmake --preset "$preset" >/dev/null
if ((quick)); then
  timed "quick build (build/quick: vkgemm_tests, vkgemm)" cmake --build --preset quick -j "$jobs" --target vkgemm_tests vkgemm_program
else
  timed "release build" cmake --build --preset release -j "$jobs"
fi
passes='^(core|sync|gpuav|e2e)$'
orphans=$(ctest --preset "$preset" -N -LE "$passes" | sed -n 's/^ *Test *#[0-9]*: //p')
if [ -n "$orphans" ]; then
  echo "run-tests: these registered tests carry no label a pass runs ($passes):" >&2
  echo "$orphans" >&2
  exit 1
fi
report() {  # the timings and the skips, at the end of either tier
  printf 'run-tests: %s\n' "${timings[@]}"
  if [ -s "$VKGEMM_TEST_SKIP_LOG" ]; then
    echo "run-tests: skipped, and why (each counted by CTest as a skip, not a pass):"
    sort "$VKGEMM_TEST_SKIP_LOG" | uniq -c | sed 's/^/  /'
  else
    echo "run-tests: nothing was skipped"
  fi
}
if ((quick)); then
  export VKGEMM_TEST_GRID_SAMPLE="${VKGEMM_TEST_GRID_SAMPLE:-8}" VKGEMM_TEST_QUICK_SAMPLE="${VKGEMM_TEST_QUICK_SAMPLE:-8}"
  timed "pass core (quick: grids 1 in $VKGEMM_TEST_GRID_SAMPLE, costliest items 1 in $VKGEMM_TEST_QUICK_SAMPLE)" \
    ctest --preset quick -j "$jobs" -L '^core$' "$@"
  report
  echo "run-tests: the quick tier; CI runs the full one (tools/run-tests.sh without --quick)"
  exit 0
fi
for pass in core sync gpuav e2e; do
  timed "pass $pass" ctest --preset release -j "$jobs" -L "^$pass\$" "$@"
done
# The KHR cooperative-matrix kernel where Debian 12's lavapipe cannot run it: Mesa 26's lavapipe in a trixie
# root (prepared once under build/), under its newer validation layer.
timed "coopmat pass (lavapipe 26, VK_KHR_cooperative_matrix)" tools/dev/coopmat-lavapipe.sh

cmake --preset asan >/dev/null
timed "asan build" cmake --build --preset asan -j "$jobs"
# Keep the driver and the layer loaded to the end so LeakSanitizer can scan them (tools/vkgemm/keep_loaded.hpp).
lib_dir="$(dirname "$(find /usr/lib -name libvulkan_lvp.so -print -quit 2>/dev/null || echo /usr/lib/x)")"
export VKGEMM_KEEP_LOADED="$lib_dir/libvulkan_lvp.so:libVkLayer_khronos_validation.so"
export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0"
export LSAN_OPTIONS="suppressions=$PWD/tests/lsan.supp:print_suppressions=0"  # the layer's own leaks, and why
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
# The BLAS grids check one product in 8 here (tests/support.hpp's grid_sample): this pass is for the host's
# memory and undefined behaviour on each path of a call, and the release passes run the whole grid.
export VKGEMM_TEST_GRID_SAMPLE=8
timed "asan+ubsan pass (core)" ctest --preset asan -j "$jobs" -L "^core\$" "$@"
unset VKGEMM_KEEP_LOADED ASAN_OPTIONS LSAN_OPTIONS UBSAN_OPTIONS VKGEMM_TEST_GRID_SAMPLE

timed "fuzzing" tools/dev/run-fuzz.sh

report
