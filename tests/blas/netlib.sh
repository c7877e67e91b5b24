#!/usr/bin/env bash
# The reference BLAS's own Level-3 testers (Debian's libblas-test: netlib's xblat3s, xblat3d and the CBLAS
# xscblat3, xdcblat3) with every GEMM routed to vkgemm: the drop-in library preloaded with the threshold at 0,
# error exits included (their own xerbla_/cblas_xerbla check the routine name and parameter number), under
# the validation layer (VKGEMM_BLAS_VALIDATION=1: the engine counts its messages; the summary must say 0).
# Passes when each tester's summary says every GEMM test passed, with no failure line, and the library's exit
# summary counts GEMMs on the device and none on the CPU BLAS (a GEMM that went to the CPU would pass the
# tester without testing vkgemm).
# A tester run without the library first must fail the same checks' device count (the check can fail).
# Then the library as the libblas.so.3 alternative (LD_LIBRARY_PATH naming its folder, as the alternatives'
# link would): all 24 of netlib's testers (Level 1, 2 and 3, Fortran and CBLAS, the four types) must pass
# as many tests as with the reference library, every routine but GEMM through the forwarding trampolines.
# Usage: netlib.sh <libvkgemm_blas.so> <work dir> [<folder holding the alternative's libblas.so.3>]
set -euo pipefail
lib=$(realpath "$1")
work=$2
alternative=${3:+$(realpath "$3")}
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
  [[ $line == *", 0 validation messages" ]] || { echo "netlib: $1: validation messages: $line"; return 1; }
}

routed=(LD_PRELOAD="$lib" VKGEMM_BLAS_THRESHOLD=0 VKGEMM_BLAS_VERBOSE=1 VKGEMM_BLAS_VALIDATION=1)
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

# every_tester <tag> [env...]: runs the 24 testers, writing "<tester> <PASSED lines> <failure lines>" to
# $work/<tag>.counts.
every_tester() {
  local tag=$1 t input summary
  shift
  : > "$work/$tag.counts"
  for t in 1s 1d 1c 1z 2s 2d 2c 2z 3s 3d 3c 3z scblat1 dcblat1 ccblat1 zcblat1 scblat2 dcblat2 ccblat2 zcblat2 \
           scblat3 dcblat3 ccblat3 zcblat3; do
    case $t in
      1?|*cblat1) input=/dev/null summary=$work/$tag.$t.out ;;
      [23]?) input=$testers/${t:1}blat${t:0:1}.in summary=$work/${t:1}blat${t:0:1}.out ;;
      *) input=$testers/${t:0:1}in${t: -1} summary=$work/$tag.$t.out ;;
    esac
    local program=xblat$t
    [[ $t == *cblat* ]] && program=x$t
    env "$@" "$testers/$program" < "$input" > "$work/$tag.$t.out" 2> "$work/$tag.$t.err" || {
      echo "netlib: $program ($tag) exited with $?"; cat "$work/$tag.$t.err"; return 1; }
    echo "$program $(grep -c PASS "$summary" || true) $(grep -ciE 'fail|fatal' "$summary" || true)" >> "$work/$tag.counts"
  done
}
if [[ -n $alternative ]]; then
  every_tester reference
  every_tester alternative LD_LIBRARY_PATH="$alternative" VKGEMM_BLAS_THRESHOLD=0
  paste "$work/reference.counts" "$work/alternative.counts"
  cmp -s "$work/reference.counts" "$work/alternative.counts" || {
    echo "netlib: the alternative's testers differ from the reference's (above: tester, PASSED lines, failures)"; exit 1; }
  awk '$3 != 0 {bad = 1} END {exit bad}' "$work/reference.counts" || { echo "netlib: the reference failed"; exit 1; }
  # The GEMMs of the alternative's Level-3 runs went to the device.
  run xblat3d dblat3.in dblat3.out DGEMM 2 LD_LIBRARY_PATH="$alternative" VKGEMM_BLAS_THRESHOLD=0 VKGEMM_BLAS_VERBOSE=1 \
    VKGEMM_BLAS_VALIDATION=1 \
    && check_routed xblat3d
  run xscblat3 sin3 - cblas_sgemm 3 LD_LIBRARY_PATH="$alternative" VKGEMM_BLAS_THRESHOLD=0 VKGEMM_BLAS_VERBOSE=1 \
    VKGEMM_BLAS_VALIDATION=1 \
    && check_routed xscblat3
fi
# No device work at load time: a process that loads the library (preloaded, and as the alternative) but calls
# no GEMM never starts the Vulkan loader; one GEMM does (the check can fail).
loader_lines() { env VK_LOADER_DEBUG=all "$@" 2>&1 | grep -c 'Vulkan Loader Version' || true; }
(( $(loader_lines LD_PRELOAD="$lib" "$testers/xblat1d") == 0 )) || { echo "netlib: the library started Vulkan at load"; exit 1; }
(( $(loader_lines LD_PRELOAD="$lib" VKGEMM_BLAS_THRESHOLD=0 "$testers/xblat3d" < "$testers/dblat3.in") > 0 )) || {
  echo "netlib: the loader check saw no Vulkan where a GEMM ran"; exit 1; }
if [[ -n $alternative ]]; then
  (( $(loader_lines LD_LIBRARY_PATH="$alternative" "$testers/xblat1d") == 0 )) || {
    echo "netlib: the alternative started Vulkan at load"; exit 1; }
fi
echo "netlib: passed"
