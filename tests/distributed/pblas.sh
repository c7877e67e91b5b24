#!/usr/bin/env bash
# ScaLAPACK's PBLAS Level-3 testers (Debian's scalapack-mpi-test: spb3tst, dpb3tst, with their own input files
# PSBLAS3TST.dat, PDBLAS3TST.dat) under Open MPI's mpirun with 4 ranks, every rank's local GEMMs routed to vkgemm:
# the drop-in library preloaded with the threshold at 0, under the validation layer. Passes when:
#   - each tester's summary lists all 8 routines (P?GEMM, P?SYMM, P?SYRK, P?SYR2K, P?TRMM, P?TRSM, P?GEADD,
#     P?TRADD), each with as many tests as its input file asks for (problems x the process grids that fit in 4
#     ranks), all passed, none failed or skipped; as many "Computational check ... PASSED" and "Input-only
#     parameter check ... PASSED" lines; "Error-exit tests completed." and "End of Tests."; and no line of
#     failure (FAILED, ERROR, SUSPECT, FATAL, illegal input, not supported);
#   - each of the 4 ranks' exit summaries counts GEMMs on the device and none on the CPU BLAS or fallen back,
#     with 0 validation messages, and names its device and why (local rank r of 4, Open MPI's variables).
# The checks are shown to fail: a tester's output with one PASSED made FAILED, and one with a summary row
# taken out, are refused; the ranks' summaries of a run with the threshold at "never" are refused.
# Then two ranks on two logical devices (lavapipe's ICD listed twice, the second through a copy of its
# manifest: the loader then enumerates two devices): `vkgemm devices` under mpirun says rank 0 takes [0] and
# rank 1 takes [1], and dpb3tst on the process grids of 2 ranks passes with each rank's GEMMs on its own device.
# Then vkgemm's own PDGEMM (libvkgemm_pblas preloaded before the drop-in, docs/distributed.md): both testers
# again with their input files, every plain product taken by it (its exit summary counts them on every rank)
# and the rest by ScaLAPACK's, all passing; and the tester on PDBLAS3TST-gather.dat (plain products on 7 grids
# of up to 4 ranks: submatrix offsets inside blocks, first blocks of their own size, blocks of 1 and past the
# matrix, K distributed unlike A's columns) with every call taken (rank r counts the problems times the grids
# that hold it, none handed on), also on the two logical devices; and on PDBLAS3TST-stream.dat (one process
# row, K blocks of 256 and more, no leading-dimension gap) with every call streamed, in parts along N as narrow
# as 4 columns (VKGEMM_TEST_PBLAS_PART_COLUMNS: more device products than the same run in one part each), and
# in one part each (the rule's at these sizes) with each result judged on the host; both with every peer's
# piece read directly from its memory, and again (in one part each) sent as messages
# (VKGEMM_PBLAS_TRANSPORT=mpi). The count is shown to fail: the same run with VKGEMM_PBLAS=off is refused.
# Usage: pblas.sh <libvkgemm_blas.so> <vkgemm program> <work dir> <libvkgemm_pblas.so>
set -euo pipefail
lib=$(realpath "$1")
vkgemm=$(realpath "$2")
work=$3
pblas_lib=$(realpath "$4")
gather_dat=$(dirname "$(realpath "$0")")/PDBLAS3TST-gather.dat
testers=/usr/lib/x86_64-linux-gnu/scalapack/openmpi-tests/PBLAS
if [[ ! -x $testers/dpb3tst ]] || ! command -v mpirun.openmpi >/dev/null; then
  echo "pblas: $testers/dpb3tst or mpirun.openmpi is missing (install scalapack-mpi-test and openmpi-bin: tools/install-deps.sh)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" && cd "$work"
# Root in CI (Open MPI refuses it unless told), and 4 ranks on however many cores there are.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_rmaps_base_oversubscribe=1
routed=(-x LD_PRELOAD="$lib" -x VKGEMM_BLAS_THRESHOLD=0 -x VKGEMM_BLAS_VERBOSE=1 -x VKGEMM_BLAS_VALIDATION=1)

# check_tester <output> <input .dat> <ranks> <s|d> [routines...]: the tester's own summary says every test it was
# asked for passed (the routines: all 8 unless named).
check_tester() {
  local out=$1 dat=$2 ranks=$3 t=${4^^}
  shift 4
  local routines=("$@")
  ((${#routines[@]})) || routines=(GEMM SYMM SYRK SYR2K TRMM TRSM GEADD TRADD)
  if grep -nE 'FAILED|ERROR|SUSPECT|FATAL|[Ii]llegal|ILLEGAL|not supported' "$out" | grep -v 'TOTAL TESTS  PASSED   FAILED'; then
    echo "pblas: $out reports failures (above)"; return 1
  fi
  if grep -qE '^T[[:space:]].*test error exits' "$dat"; then
    grep -q '^  Error-exit tests completed\.' "$out" || { echo "pblas: $out: the error-exit tests did not complete"; return 1; }
  fi
  grep -q '^  End of Tests\.' "$out" || { echo "pblas: $out: no 'End of Tests.'"; return 1; }
  # Problems x the grids (P x Q, the first "number of process grids" of each list) that fit in the ranks.
  local problems grids expected
  problems=$(awk '/number of tests problems/ {print $1}' "$dat")
  grids=$(awk -v ranks="$ranks" '/number of process grids/ {n = $1} /values of P$/ {for (i = 1; i <= n; i++) p[i] = $i}
          /values of Q$/ {for (i = 1; i <= n; i++) if (p[i] * $i <= ranks) fit++} END {print fit + 0}' "$dat")
  expected=$((problems * grids))
  ((expected > 0)) || { echo "pblas: $dat asks for no test on $ranks ranks"; return 1; }
  local routine row
  for routine in "${routines[@]}"; do
    row=$(grep -E "^  \|  P${t}${routine} +[0-9]" "$out" || true)
    [[ $row =~ \|\ +P${t}${routine}\ +([0-9]+)\ +([0-9]+)\ +([0-9]+)\ +([0-9]+)$ ]] || {
      echo "pblas: $out: no summary row for P${t}${routine}"; return 1; }
    ((BASH_REMATCH[1] == expected && BASH_REMATCH[2] == expected && BASH_REMATCH[3] == 0 && BASH_REMATCH[4] == 0)) || {
      echo "pblas: $out: P${t}${routine}: '$row', not $expected tests all passed"; return 1; }
  done
  local computational input_only
  computational=$(grep -cE "Computational check: P${t}[A-Z0-9]+ +PASSED" "$out" || true)
  input_only=$(grep -cE "Input-only parameter check: P${t}[A-Z0-9]+ +PASSED" "$out" || true)
  local all=$((${#routines[@]} * expected))
  ((computational == all && input_only == all)) || {
    echo "pblas: $out: $computational computational and $input_only input-only checks passed, not $all"
    return 1; }
  echo "pblas: $(basename "$(dirname "$out")"): ${#routines[@]} routines x $expected tests passed"
}

# check_ranks <output folder> <ranks> <devices>: each rank's exit summary counts GEMMs on the device and none
# elsewhere, 0 validation messages, and rank r names device [r mod devices], chosen by its Open MPI local rank.
check_ranks() {
  local dir=$1 ranks=$2 devices=$3 r err line
  for ((r = 0; r < ranks; r++)); do
    err=$dir/1/rank.$r/stderr
    line=$(grep 'GEMMs on the device' "$err" 2>/dev/null || true)
    [[ $line =~ ([0-9]+)\ GEMMs\ on\ the\ device.*,\ ([0-9]+)\ on\ the\ CPU\ BLAS,\ ([0-9]+)\ fell ]] || {
      echo "pblas: rank $r: no summary from the library in $err"; return 1; }
    ((BASH_REMATCH[1] > 0 && BASH_REMATCH[2] == 0 && BASH_REMATCH[3] == 0)) || {
      echo "pblas: rank $r: not every GEMM ran on the device: $line"; return 1; }
    [[ $line == *", 0 validation messages" ]] || { echo "pblas: rank $r: validation messages: $line"; return 1; }
    line=$(grep '^vkgemm-blas: device ' "$err" || true)
    [[ $line == "vkgemm-blas: device [$((r % devices))] "*": local rank $r of $ranks (Open MPI: "* ]] || {
      echo "pblas: rank $r: not on device [$((r % devices))] by its local rank: '$line'"; return 1; }
    echo "pblas: rank $r: $(grep -o '[0-9]* GEMMs on the device' "$err"), device [$((r % devices))]"
  done
}

# check_gathered <output folder> <ranks> [<input .dat> [streamed|streamed-in-parts]]: each rank's vkgemm-pblas
# summary counts P?GEMM calls it took, none of them fallen back from the device; with an input file, exactly
# its problems times the grids that hold the rank (a grid of P x Q takes ranks 0 .. PQ-1), none handed to
# ScaLAPACK's, and with "streamed" every one of them streamed, some on the device buffers kept from the call
# before; with "streamed-in-parts" every one streamed (a later problem's parts may be wider than the first's,
# fewer of them, so that its buffers are made anew).
check_gathered() {
  local dir=$1 ranks=$2 dat=${3:-} how=${4:-} r line want
  for ((r = 0; r < ranks; r++)); do
    line=$(grep '^vkgemm-pblas: [0-9]* P?GEMM calls taken' "$dir/1/rank.$r/stderr" 2>/dev/null || true)
    [[ $line =~ ^vkgemm-pblas:\ ([0-9]+)\ P\?GEMM\ calls\ taken\ \(([0-9]+)\ streamed.*,\ ([0-9]+)\ forwarded ]] || {
      echo "pblas: rank $r: no vkgemm-pblas summary in $dir/1/rank.$r/stderr"; return 1; }
    local taken=${BASH_REMATCH[1]} streamed=${BASH_REMATCH[2]} forwarded=${BASH_REMATCH[3]}
    [[ $line != *"fell back"* ]] || { echo "pblas: rank $r: a streamed call fell back: $line"; return 1; }
    if [[ -z $dat ]]; then
      ((taken > 0)) || { echo "pblas: rank $r: no P?GEMM call taken: $line"; return 1; }
    else
      want=$(awk -v r="$r" '/number of tests problems/ {t = $1} /number of process grids/ {n = $1}
                /values of P$/ {for (i = 1; i <= n; i++) p[i] = $i}
                /values of Q$/ {for (i = 1; i <= n; i++) if (p[i] * $i > r) g++} END {print t * g}' "$dat")
      ((taken == want && forwarded == 0)) || {
        echo "pblas: rank $r: not the $want calls taken and none forwarded: $line"; return 1; }
      [[ $how != streamed* ]] || ((streamed == want)) || {
        echo "pblas: rank $r: not all $want calls streamed: $line"; return 1; }
      # The later problems are no larger than the first: their device buffers are the call before's.
      [[ $how != streamed || $line =~ \;\ ([1-9][0-9]*)\ streamed\ calls\ on\ the\ device\ buffers\ of\ the\ call\ before ]] || {
        echo "pblas: rank $r: no streamed call kept the device buffers of the call before: $line"; return 1; }
    fi
    echo "pblas: rank $r: ${line#vkgemm-pblas: }"
  done
}

# check_pieces <output folder> <ranks> <direct|mpi>: how each rank got its peers' pieces, from its summary:
# all read directly (where this machine lets a process read another's memory: not under Yama's ptrace_scope 2
# or 3, which the check then reports and passes over), or all as messages.
check_pieces() {
  local dir=$1 ranks=$2 how=$3 r line scope
  scope=$(cat /proc/sys/kernel/yama/ptrace_scope 2>/dev/null || echo 0)
  for ((r = 0; r < ranks; r++)); do
    line=$(grep '^vkgemm-pblas: [0-9]* P?GEMM calls taken' "$dir/1/rank.$r/stderr" 2>/dev/null || true)
    [[ $line =~ peers\'\ pieces\ ([0-9]+)\ read\ directly,\ ([0-9]+)\ as\ messages ]] || {
      echo "pblas: rank $r: no count of its peers' pieces: $line"; return 1; }
    local direct=${BASH_REMATCH[1]} messages=${BASH_REMATCH[2]}
    ((direct + messages > 0)) || { echo "pblas: rank $r: no peer's piece came: $line"; return 1; }
    if [[ $how == mpi ]]; then
      ((direct == 0)) || { echo "pblas: rank $r: pieces read directly under VKGEMM_PBLAS_TRANSPORT=mpi: $line"; return 1; }
    elif ((scope >= 2)); then
      echo "pblas: rank $r: direct reads not checked: Yama's ptrace_scope is $scope here (skipped)"
    else
      ((messages == 0)) || { echo "pblas: rank $r: pieces as messages where they can be read directly: $line"; return 1; }
    fi
  done
  echo "pblas: $(basename "$(dirname "$dir")"): every peer's piece $([[ $how == mpi ]] && echo "as messages" || echo "read directly")"
}

# run_tester <s|d> <ranks> <input .dat> <tag> [mpirun arguments...]: runs the tester there, its ranks' output in $work/<tag>.
run_tester() {
  local t=$1 ranks=$2 dat=$3 tag=$4
  shift 4
  mkdir -p "$work/$tag" && cp "$dat" "$work/$tag/P${t^^}BLAS3TST.dat"
  (cd "$work/$tag" && mpirun.openmpi -n "$ranks" --output-filename "$work/$tag/ranks" "$@" "$testers/${t}pb3tst" \
    > "$work/$tag/stdout" 2> "$work/$tag/stderr") || {
    echo "pblas: ${t}pb3tst ($tag) exited with $?"; cat "$work/$tag/stderr"; return 1; }
  # Rank 0 writes the tester's report; the others' stdout is empty.
  cp "$work/$tag/ranks/1/rank.0/stdout" "$work/$tag/report"
}

for t in s d; do
  run_tester $t 4 "$testers/P${t^^}BLAS3TST.dat" "$t-4" "${routed[@]}"
  check_tester "$work/$t-4/report" "$testers/P${t^^}BLAS3TST.dat" 4 $t
  check_ranks "$work/$t-4/ranks" 4 1
done

# The checks can fail: a PASSED turned FAILED, a routine's summary row gone, GEMMs left on the CPU BLAS.
sed '0,/Computational check: PDGEMM         PASSED/s//Computational check: PDGEMM         FAILED/' \
  "$work/d-4/report" > "$work/failed-report"
if check_tester "$work/failed-report" "$testers/PDBLAS3TST.dat" 4 d >/dev/null; then
  echo "pblas: a FAILED computational check passed the tester check"; exit 1
fi
grep -v '|  PDTRSM ' "$work/d-4/report" > "$work/missing-report"
if check_tester "$work/missing-report" "$testers/PDBLAS3TST.dat" 4 d >/dev/null; then
  echo "pblas: a missing summary row passed the tester check"; exit 1
fi
run_tester d 4 "$testers/PDBLAS3TST.dat" d-never -x LD_PRELOAD="$lib" -x VKGEMM_BLAS_THRESHOLD=never -x VKGEMM_BLAS_VERBOSE=1
check_tester "$work/d-never/report" "$testers/PDBLAS3TST.dat" 4 d >/dev/null
if check_ranks "$work/d-never/ranks" 4 1 >/dev/null; then
  echo "pblas: the routing check passed with every GEMM on the CPU BLAS"; exit 1
fi
echo "pblas: the checks refuse a failed test, a missing one, and GEMMs on the CPU BLAS"

# vkgemm's PDGEMM before ScaLAPACK's: the testers' own input files (the plain products gathered, the rest
# handed on), then the gathering input file, every call taken.
gathered=(-x LD_PRELOAD="$pblas_lib $lib" -x VKGEMM_BLAS_THRESHOLD=0 -x VKGEMM_BLAS_VERBOSE=1 -x VKGEMM_BLAS_VALIDATION=1)
# in_work <name>: tests/distributed/PDBLAS3TST-<name>.dat into the work folder, with its single-precision twin.
in_work() {
  local dat=$(dirname "$gather_dat")/PDBLAS3TST-$1.dat
  cp "$dat" "$work/PDBLAS3TST-$1.dat"
  sed -e 's/PDBLAS3TST/PSBLAS3TST/' -e 's/PD\([A-Z0-9]*\) /PS\1 /' -e 's/\([0-9]\)\.0D0/\1.0E0/' "$dat" > "$work/PSBLAS3TST-$1.dat"
}
in_work gather
for t in s d; do
  run_tester $t 4 "$testers/P${t^^}BLAS3TST.dat" "$t-4-gathered" "${gathered[@]}"
  check_tester "$work/$t-4-gathered/report" "$testers/P${t^^}BLAS3TST.dat" 4 $t
  check_ranks "$work/$t-4-gathered/ranks" 4 1
  check_gathered "$work/$t-4-gathered/ranks" 4
  run_tester $t 4 "$work/P${t^^}BLAS3TST-gather.dat" "$t-4-gather" "${gathered[@]}"
  check_tester "$work/$t-4-gather/report" "$work/P${t^^}BLAS3TST-gather.dat" 4 $t GEMM
  check_gathered "$work/$t-4-gather/ranks" 4 "$work/P${t^^}BLAS3TST-gather.dat"
done
# One process row, K blocks of 256 and more, no leading-dimension gap: every call streamed (its pieces of A
# multiplied on the device as they arrive), on 1 x 2, 1 x 3 and 1 x 4, in parts along N of 4 columns or more
# (the local n of 6 to 24: one part to four); then in one part each (the rule's, at these n), judged on the host.
in_work stream
parts=(-x VKGEMM_TEST_PBLAS_PART_COLUMNS=4)
for t in s d; do
  run_tester $t 4 "$work/P${t^^}BLAS3TST-stream.dat" "$t-4-stream" "${gathered[@]}" "${parts[@]}"
  check_tester "$work/$t-4-stream/report" "$work/P${t^^}BLAS3TST-stream.dat" 4 $t GEMM
  check_gathered "$work/$t-4-stream/ranks" 4 "$work/P${t^^}BLAS3TST-stream.dat" streamed-in-parts
done
check_pieces "$work/d-4-stream/ranks" 4 direct
check_pieces "$work/d-4-gather/ranks" 4 direct
# The same products with every piece sent as messages (a grid across machines takes this way).
for dat in stream gather; do
  run_tester d 4 "$work/PDBLAS3TST-$dat.dat" "d-4-$dat-mpi" "${gathered[@]}" -x VKGEMM_PBLAS_TRANSPORT=mpi
  check_tester "$work/d-4-$dat-mpi/report" "$work/PDBLAS3TST-$dat.dat" 4 d GEMM
  check_gathered "$work/d-4-$dat-mpi/ranks" 4 "$work/PDBLAS3TST-$dat.dat" "$([[ $dat == stream ]] && echo streamed)"
  check_pieces "$work/d-4-$dat-mpi/ranks" 4 mpi
done
# The drop-in's threshold holds for the streamed products too: at its default these small products stay on
# the CPU BLAS, none streamed, all passing.
run_tester d 4 "$work/PDBLAS3TST-stream.dat" d-4-stream-threshold -x LD_PRELOAD="$pblas_lib $lib" -x VKGEMM_BLAS_VERBOSE=1
check_tester "$work/d-4-stream-threshold/report" "$work/PDBLAS3TST-stream.dat" 4 d GEMM
for r in 0 1 2 3; do
  grep -q '^vkgemm-pblas: [0-9]* P?GEMM calls taken (0 streamed' "$work/d-4-stream-threshold/ranks/1/rank.$r/stderr" || {
    echo "pblas: rank $r: products under the drop-in's threshold streamed to the device"; exit 1; }
done
echo "pblas: under the drop-in's default threshold nothing is streamed"
run_tester d 4 "$work/PDBLAS3TST-stream.dat" d-4-stream-checked "${gathered[@]}" -x VKGEMM_BLAS_CHECK=1
check_tester "$work/d-4-stream-checked/report" "$work/PDBLAS3TST-stream.dat" 4 d GEMM
check_gathered "$work/d-4-stream-checked/ranks" 4 "$work/PDBLAS3TST-stream.dat" streamed
for r in 0 1 2 3; do
  want=$(grep -o '([0-9]* streamed' "$work/d-4-stream-checked/ranks/1/rank.$r/stderr" | tr -dc 0-9)
  grep -q "; $want streamed results checked on the host" "$work/d-4-stream-checked/ranks/1/rank.$r/stderr" || {
    echo "pblas: rank $r: not every streamed result checked on the host"; exit 1; }
done
echo "pblas: every streamed result passed the host's check"
# The same calls in parts ran more device products on every rank than in one part each.
products() { grep -o 'streamed in [0-9]* device products' "$work/$1/ranks/1/rank.$r/stderr" | tr -dc 0-9; }
for r in 0 1 2 3; do
  ((parts_run = $(products d-4-stream), whole = $(products d-4-stream-checked), parts_run > whole)) || {
    echo "pblas: rank $r: $parts_run device products in parts, not more than $whole in one part each"; exit 1; }
done
echo "pblas: the streamed products ran in parts (more device products than in one part each)"
# A device product that fails inside a stream (the test's knob: each rank's second device product fails as a
# refused one would; in parts, the first K block's product of the second part, its C and B written beside the
# first's): C stays as it came and the call is computed block by block, every result right.
run_tester d 4 "$work/PDBLAS3TST-stream.dat" d-4-stream-failed "${gathered[@]}" "${parts[@]}" \
  -x VKGEMM_TEST_PBLAS_FAIL_PRODUCT=2
check_tester "$work/d-4-stream-failed/report" "$work/PDBLAS3TST-stream.dat" 4 d GEMM
for r in 0 1 2 3; do
  line=$(grep '^vkgemm-pblas: [0-9]* P?GEMM calls taken' "$work/d-4-stream-failed/ranks/1/rank.$r/stderr" || true)
  [[ $line == *"; 1 streamed calls fell back to products block by block (the first: a product: failed by"* ]] || {
    echo "pblas: rank $r: the failed product's call did not fall back: $line"; exit 1; }
done
echo "pblas: a product failing inside a stream falls back to products block by block, every result right"
run_tester d 4 "$work/PDBLAS3TST-gather.dat" d-4-off "${gathered[@]}" -x VKGEMM_PBLAS=off
check_tester "$work/d-4-off/report" "$work/PDBLAS3TST-gather.dat" 4 d GEMM >/dev/null
if check_gathered "$work/d-4-off/ranks" 4 "$work/PDBLAS3TST-gather.dat" >/dev/null; then
  echo "pblas: the gathered count passed a run with every call handed to ScaLAPACK's"; exit 1
fi
echo "pblas: the gathered count refuses a run that handed every call on"
# Preloaded into a program without MPI (a preload exported to every process a shell starts), it loads and
# stays out of the way: it links no MPI, its references to the program's are weak.
LD_PRELOAD="$pblas_lib" /bin/true || { echo "pblas: a program without MPI does not start with $pblas_lib preloaded"; exit 1; }
echo "pblas: a program without MPI starts with the library preloaded"

# Two ranks, two logical devices: lavapipe's manifest and a copy of it (the loader reads one path once).
lvp=$(ls /usr/share/vulkan/icd.d/lvp_icd.*.json 2>/dev/null | head -1)
[[ -n $lvp ]] || { echo "pblas: no lavapipe manifest in /usr/share/vulkan/icd.d (mesa-vulkan-drivers)"; exit 1; }
cp "$lvp" "$work/second-lavapipe.json"
export VK_ICD_FILENAMES=$lvp:$work/second-lavapipe.json
mpirun.openmpi -n 2 --output-filename "$work/devices" "$vkgemm" devices > /dev/null
for r in 0 1; do
  line=$(grep '^this process takes' "$work/devices/1/rank.$r/stdout" || true)
  [[ $line == "this process takes [$r] "*": local rank $r of 2 (Open MPI: "*" mod the 2 CPU devices [0] [1]" ]] || {
    echo "pblas: vkgemm devices, rank $r of 2 on two devices: '$line'"; exit 1; }
  echo "pblas: ${line}"
done
# dpb3tst on the input file's process grids that fit in 2 ranks (1 x 2 and 2 x 1).
awk '/number of process grids/ {$1 = 2} /values of P$/ {$1 = 1; $2 = 2} /values of Q$/ {$1 = 2; $2 = 1} {print}' \
  "$testers/PDBLAS3TST.dat" > "$work/PDBLAS3TST-2.dat"
run_tester d 2 "$work/PDBLAS3TST-2.dat" d-2 "${routed[@]}" -x VK_ICD_FILENAMES
check_tester "$work/d-2/report" "$work/PDBLAS3TST-2.dat" 2 d
check_ranks "$work/d-2/ranks" 2 2
# vkgemm's PDGEMM on the gathering input file's grids of up to 2 ranks, each rank on its own device.
awk '/number of process grids/ {$1 = 3} /values of P$/ {$1 = 1; $2 = 2; $3 = 1} /values of Q$/ {$1 = 2; $2 = 1; $3 = 1} {print}' \
  "$gather_dat" > "$work/PDBLAS3TST-gather-2.dat"
run_tester d 2 "$work/PDBLAS3TST-gather-2.dat" d-2-gather "${gathered[@]}" -x VK_ICD_FILENAMES
check_tester "$work/d-2-gather/report" "$work/PDBLAS3TST-gather-2.dat" 2 d GEMM
check_ranks "$work/d-2-gather/ranks" 2 2
check_gathered "$work/d-2-gather/ranks" 2 "$work/PDBLAS3TST-gather-2.dat"
echo "pblas: passed"
