#!/usr/bin/env bash
# The GPU measurements, one entry point (docs/gpu.md; what each set produced: docs/results/README.md).
# Usage: tools/gpu/run.sh SET [ARGS...]   runs the set's script, tools/gpu/sets/SET.sh or SET.py, with ARGS
#        tools/gpu/run.sh --list          names the sets, each with what it measures
# Each set's opening comment gives its arguments, what it needs carried (build/release, .gl) and where its
# results go ($OUT). The shell scripts they share are in tools/gpu/lib/. An unknown set is refused, naming
# the known ones.
set -euo pipefail
sets_dir=$(cd "$(dirname "$0")" && pwd)/sets

# The sets, NAME|what it measures: one line each, in the order --list prints them. Every script under sets/
# has a line here and every line a script (checked on each call, so neither can go missing unseen).
sets=(
  "check-and-bench|the GPU suites lavapipe cannot run, fp16, and vkgemm against cuBLAS, in phases"
  "check-fp16|each cooperative-matrix kernel verified over edge shapes, then fp16 products timed"
  "ab|a change's before and after: two vkgemm binaries alternated on the same products, each checked"
  "bench-vs-cublas|vkgemm against cuBLAS (PyTorch) side by side on the published shape set or given shapes"
  "published|a share of the published shape set against cuBLAS in one device call, packed under \$OUT"
  "latency-vs-cublas|one small product's host latency, per call and through a plan, beside cuBLAS's"
  "default-bench|the default vkgemm bench timed end to end, its progress estimate held to the time left"
  "bench-ozaki|the emulated f64/f32 product (ozaki): whether the device can, its time, spread inputs, cuBLAS"
  "epilogue|fused epilogues and the network example's chained layers, beside PyTorch"
  "dequant|dequantized int8 products and the network example on cooperative matrices"
  "blas-numpy|NumPy's a @ b through the preloaded drop-in BLAS and the Python module, and the crossover"
  "pblas-timing|ScaLAPACK's PDGEMM timing through the drop-in BLAS against OpenBLAS (--fetch: here, first)"
  "mma-path|f16 GEMM on the warp-level MMA in CUDA (Triton): what Vulkan's instruction path allows"
  "fetch-vulkan-layer|here, not on the GPU: a newer Vulkan loader and validation layer into .gl to carry"
)

fail() { echo "tools/gpu/run.sh: $*" >&2; exit 2; }
names() { local entry; for entry in "${sets[@]}"; do printf '%s\n' "${entry%%|*}"; done; }
known() { names | paste -sd, - | sed 's/,/, /g'; }
is_set() { local entry; for entry in "${sets[@]}"; do [[ ${entry%%|*} == "$1" ]] && return 0; done; return 1; }
script_of() {  # script_of NAME: the set's script, or nothing
  local file
  for file in "$sets_dir/$1.sh" "$sets_dir/$1.py"; do
    [[ -f $file ]] && { printf '%s\n' "$file"; return; }
  done
  return 0
}
check_table() {  # the table above and the scripts under sets/ name the same sets
  local name file
  while read -r name; do
    [[ -n $(script_of "$name") ]] || fail "set $name is listed but $sets_dir has no $name.sh or $name.py"
  done < <(names)
  for file in "$sets_dir"/*; do
    name=$(basename "${file%.*}")
    is_set "$name" || fail "$file is no listed set: give it a line in this script's table"
  done
}

check_table
case ${1-} in
  "" | -h | --help)
    sed -n '3,4p' "$0" | sed 's/^# *//'
    echo "sets: $(known)"
    [[ -n ${1-} ]] || exit 2
    exit 0 ;;
  --list)
    for entry in "${sets[@]}"; do printf '%-20s %s\n' "${entry%%|*}" "${entry#*|}"; done
    exit 0 ;;
  -*) fail "unknown option $1: give a set's name, or --list" ;;
esac
set_name=$1
shift
script=$(script_of "$set_name")
if ! is_set "$set_name" || [[ -z $script ]]; then
  fail "no set named '$set_name'; the sets are: $(known) (tools/gpu/run.sh --list says what each measures)"
fi
case $script in
  *.py) exec python3 "$script" "$@" ;;
  *) exec bash "$script" "$@" ;;
esac
