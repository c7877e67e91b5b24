#!/usr/bin/env bash
# The reference BLAS's own Level-3 testers (Debian's libblas-test: netlib's xblat3s, xblat3d and the CBLAS
# xscblat3, xdcblat3) with every GEMM routed to vkgemm: the drop-in library preloaded with the threshold at 0,
# error exits included (their own xerbla_/cblas_xerbla check the routine name and parameter number), under
# the validation layer. Passes when each tester's summary says every routine passed, with no failure line,
# no validation message, and the library's exit summary counts GEMMs on the device and none on the CPU
# BLAS (a GEMM that went to the CPU would pass the tester without testing vkgemm).
# A tester run without the library first must fail the same checks' device count (the check can fail).
# Usage: netlib.sh <libvkgemm_blas.so> <work dir>
set -euo pipefail
lib=$(realpath "$1")
work=$2
testers=/usr/lib/x86_64-linux-gnu/blas
if [[ ! -x $testers/xblat3s ]]; then
  echo "netlib: $testers/xblat3s is missing (install libblas-test: tools/install-deps.sh)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work"

# run <tester> <input> <summary file, or - for stdout> <gemm's name> <its PASSED lines> [env...]: runs it and
# checks its summary.
run() {
  local tester=$1 input=$2 summary=$3 gemm=$4 lines=$5
  shift 5
  local out=$work/$tester.stdout err=$work/$tester.stderr
  env "$@" "$testers/$tester" < "$testers/$input" > "$out" 2> "$err" || {
    echo "netlib: $tester exited with $?"; cat "$out" "$err"; return 1; }
  [[ $summary == - ]] && summary=$out
  if grep -nE 'FAIL|FATAL|\*\*\*\*\*\*' "$summary"; then
    echo "netlib: $tester reported failures (above; $summary)"; return 1
  fi
  if grep -qiE 'validation (error|warning)|VUID-' "$out" "$err"; then
    grep -iE 'validation|VUID-' "$out" "$err" | head -5; echo "netlib: $tester: validation messages"; return 1
  fi
  local passed
  passed=$(grep -cE "^ $gemm +PASSED THE (TESTS OF ERROR-EXITS|.*COMPUTATIONAL TESTS)" "$summary" || true)
  echo "netlib: $tester: $passed of $lines '$gemm PASSED' lines in $(basename "$summary")"
  (( passed == lines )) && grep -q 'END OF TESTS' "$summary" || {
    cat "$summary"; echo "netlib: $tester: not every test of $gemm passed"; return 1; }
  grep 'GEMMs on the device' "$err" || true
}

# check_routed <tester>: the library's summary says GEMMs ran on the device and none on the CPU BLAS.
check_routed() {
  local line
  line=$(grep 'GEMMs on the device' "$work/$1.stderr" || true)
  [[ $line =~ ([0-9]+)\ GEMMs\ on\ the\ device.*\ ([0-9]+)\ on\ the\ CPU\ BLAS,\ ([0-9]+)\ fell ]] || {
    echo "netlib: $1: no summary from the library"; return 1; }
  (( BASH_REMATCH[1] > 0 && BASH_REMATCH[2] == 0 && BASH_REMATCH[3] == 0 )) || {
    echo "netlib: $1: not every GEMM ran on the device: $line"; return 1; }
}

routed=(LD_PRELOAD="$lib" VKGEMM_BLAS_THRESHOLD=0 VKGEMM_BLAS_VERBOSE=1 VK_INSTANCE_LAYERS=VK_LAYER_KHRONOS_validation)
run xblat3s sblat3.in sblat3.out SGEMM 2 "${routed[@]}" && check_routed xblat3s
run xblat3d dblat3.in dblat3.out DGEMM 2 "${routed[@]}" && check_routed xblat3d
run xscblat3 sin3 - cblas_sgemm 3 "${routed[@]}" && check_routed xscblat3
run xdcblat3 din3 - cblas_dgemm 3 "${routed[@]}" && check_routed xdcblat3

# The check above can fail: the same tester without the library has no device count.
run xblat3s sblat3.in sblat3.out SGEMM 2 VKGEMM_BLAS_VERBOSE=1 >/dev/null
if check_routed xblat3s >/dev/null; then echo "netlib: the routing check passed without the library"; exit 1; fi
# ... and with the threshold above every tester's sizes (9^3), every GEMM goes to the CPU BLAS: counted there.
run xblat3s sblat3.in sblat3.out SGEMM 2 LD_PRELOAD="$lib" VKGEMM_BLAS_THRESHOLD=1000 VKGEMM_BLAS_VERBOSE=1 >/dev/null
if check_routed xblat3s >/dev/null; then echo "netlib: the routing check passed with the CPU BLAS"; exit 1; fi
grep -E ' 0 GEMMs on the device.* [1-9][0-9]* on the CPU BLAS' "$work/xblat3s.stderr"
echo "netlib: passed"
