#!/usr/bin/env bash
# ScaLAPACK's PBLAS timing program for PDGEMM (dpb3tim) with one MPI rank: its local GEMM through vkgemm (the
# drop-in BLAS preloaded) against the same program on the host's CPU with OpenBLAS (all its cores), at large
# sizes and distribution block sizes 256 to 4096; then the product checked by ScaLAPACK's own tester (dpb3tst,
# PDGEMM) through vkgemm at PBLAS_CHECK_N. Results: $OUT/pblas/ (each program's output, summary.txt, summary.json).
#
# Two steps, one script:
#   tools/gpu/run.sh pblas-timing --fetch [DIR]   here (Debian 12, network): DIR (default .pblas, git-ignored through
#       .git/info/exclude) gets Debian 12's .deb files of Open MPI, ScaLAPACK, OpenBLAS and what they load (about
#       20 MB), and bin/dpb3tim, bin/dpb3tst built from Debian's own scalapack source package with the memory
#       of their one work array raised (below). Needs gfortran, gcc and dpkg-source (dpkg-dev).
#   tools/gpu/run.sh pblas-timing [DIR]           on the GPU host (Ubuntu 24.04, glibc 2.39, no network): unpacks the
#       .deb files into / without replacing any file the host has (tar --skip-old-files: the host's newer
#       libraries stay), then runs. Debian 12's packages need glibc 2.36 and GCC 12's runtime, which the host's
#       are newer than. Needs build/release/lib (libvkgemm_blas.so.0) and the Vulkan loader (.gl, docs/gpu.md).
#
# Why the programs are rebuilt: Debian's dpb3tim and dpb3tst take every matrix from one static array of
# TOTMEM = 2,000,000 bytes (their source's default), so they time nothing above about 280 x 280 ("Not enough
# memory" at 1024). The rebuild sets that array to PBLAS_MEMSIZ doubles (default 2^31 - 1, the most the
# programs' 32-bit indices reach: 16 GiB, three 25000 x 25000 matrices) and changes nothing else; they link
# Debian's libscalapack-openmpi.so.2.2 as the packaged ones do.
#
# What one rank means: on a 1 x 1 process grid PDGEMM is one local dgemm of the whole M x N x K product, so
# the distribution block size changes the layout, not the GEMM (from two ranks up, each step of the K loop is
# its own dgemm of the local C by a panel of width NB: docs/distributed.md).
# The first test is a warm-up (the engine is created and its pipelines compiled in the first call, which the
# timer times): its row is reported and left out of the comparison.
#
# C = A B (alpha 1, beta 0: C is written, not read), every operand not transposed.
# Settings: PBLAS_CASES, the timed products as N:NB (M = N = K = N, distribution block NB; default "8192:256
# 8192:1024 8192:4096 16384:4096 24576:4096": every block size at 8192, the largest sizes at 4096, since on one
# rank the block size does not change the GEMM, and the timer generates each matrix serially, about 100 s for
# the three of 24576 at 60 ns an element); PBLAS_CHECK_N and PBLAS_CHECK_NBS (4096 and "4096": the tester's own
# check is serial, O(M N K) in Fortran loops, minutes at 4096, so it checks the product at that size, not at
# the timed ones); PBLAS_PHASES ("gpu cpu check": any of them, and "checked": the gpu phase again with every
# local GEMM's result judged on the host, VKGEMM_BLAS_CHECK=1, untimed; to split the work over several calls);
# PBLAS_RANKS (1: the timer on a 1 x R grid, R ranks, each its own GPU by its local rank) and PBLAS_LOGICAL_NB
# (4096: the K step of each local GEMM from two ranks up; keep it equal to NB, else PBLAS packs each step's
# blocks once more). VKGEMM_BLAS_VERBOSE (1) is the timed phase's (2: a line a call, vkgemm's PDGEMM's with the
# seconds of its gathers and local GEMM). GLIBC_TUNABLES, where set, goes to every rank (docs/distributed.md: PBLAS's workspace
# from a reused heap of huge pages instead of fresh pages each call). PBLAS_PDGEMM: whose PDGEMM the programs
# call: "vkgemm" (the default: libvkgemm_pblas preloaded before the drop-in BLAS, every plain product gathered
# and multiplied as one local GEMM a rank) or "scalapack" (the drop-in alone: ScaLAPACK's PDGEMM, its local
# GEMMs through vkgemm).
set -euo pipefail
cd "$(dirname "$0")/../../.."
root=$PWD

# The .deb files: Open MPI 4.1 and what its components load, ScaLAPACK for Open MPI, the Fortran runtime,
# OpenBLAS (its openblas-pthread folder holds libblas.so.3 and liblapack.so.3, chosen by LD_LIBRARY_PATH: an
# unpacked package runs no update-alternatives).
packages=(libscalapack-openmpi2.2 libopenmpi3 openmpi-bin openmpi-common libpmix2 libhwloc15 libhwloc-plugins
          libevent-2.1-7 libevent-core-2.1-7 libevent-pthreads-2.1-7 libfabric1 libucx0 libibverbs1
          ibverbs-providers librdmacm1 libpsm2-2 libpsm-infinipath1 libnl-3-200 libnl-route-3-200 libmunge2
          libxnvctrl0 ocl-icd-libopencl1 libgfortran5 libquadmath0 libopenblas0-pthread)

fetch() {
  local dest=$1
  mkdir -p "$dest/bin"
  dest=$(realpath "$dest")
  local apt_dir=$root/build/bookworm-apt
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/etc"
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  printf 'deb [signed-by=%s] http://deb.debian.org/debian bookworm main\ndeb-src [signed-by=%s] http://deb.debian.org/debian bookworm main\n' \
    "$keyring" "$keyring" > "$apt_dir/etc/sources.list"
  : > "$apt_dir/status"
  local opts=(-o "Dir::Etc::SourceList=$apt_dir/etc/sources.list" -o "Dir::Etc::SourceParts=/nonexistent"
              -o "Dir::State=$apt_dir" -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::State::status=$apt_dir/status"
              -o "Dir::Cache=$apt_dir/cache" -o "APT::Architecture=amd64" -o "APT::Sandbox::User=root"
              -o "Debug::NoLocking=1")
  apt-get "${opts[@]}" -qq update
  rm -f "$dest"/*.deb
  (cd "$dest" && apt-get "${opts[@]}" -qq download "${packages[@]}")
  # ScaLAPACK 2.2.1's source (Debian 12's version), its PBLAS testers rebuilt with a larger work array: from
  # Debian's source archive, else from the tag v2.2.1 of a git repository of ScaLAPACK (a clone or a mirror of
  # github.com/Reference-ScaLAPACK/scalapack) named by PBLAS_SCALAPACK_GIT, for a network that serves Debian's
  # binary packages but not its sources.
  local src
  src=$(mktemp -d "${TMPDIR:-/tmp}/pblas-src.XXXXXX")
  if [[ -n ${PBLAS_SCALAPACK_GIT:-} ]]; then
    mkdir "$src/scalapack"
    git -C "$PBLAS_SCALAPACK_GIT" archive v2.2.1 PBLAS | tar -x -C "$src/scalapack"
  elif ! (cd "$src" && apt-get "${opts[@]}" -qq source --download-only scalapack &&
          dpkg-source -q -x scalapack_*.dsc scalapack); then
    echo "pblas-timing: no source of scalapack from Debian's archive; set PBLAS_SCALAPACK_GIT to a git repository of"
    echo "  ScaLAPACK (github.com/Reference-ScaLAPACK/scalapack, which has the tag v2.2.1)"
    exit 1
  fi
  local lib=$src/lib
  mkdir -p "$lib"
  dpkg-deb -x "$dest"/libscalapack-openmpi2.2_*.deb "$lib"
  dpkg-deb -x "$dest"/libopenblas0-pthread_*.deb "$lib"
  local scalapack blas
  scalapack=$(ls "$lib"/usr/lib/x86_64-linux-gnu/libscalapack-openmpi.so.2.2)
  blas=$(ls "$lib"/usr/lib/x86_64-linux-gnu/openblas-pthread/libblas.so.3)  # the tester calls dtrsm_ itself
  local memsiz=${PBLAS_MEMSIZ:-2147483647} kind dir prog
  for kind in TIMING:dpb3tim:pdblas3tim.f:pdblastim.f:pblastim.f TESTING:dpb3tst:pdblas3tst.f:pdblastst.f:pblastst.f; do
    IFS=: read -r dir prog main helpers common <<< "$kind"
    local p=$src/scalapack/PBLAS/$dir
    sed -i -E "s/MEMSIZ = TOTMEM \/ DBLESZ/MEMSIZ = $memsiz/" "$p/$main"
    grep -q "MEMSIZ = $memsiz" "$p/$main" || { echo "pblas-timing: $main has no 'MEMSIZ = TOTMEM / DBLESZ' to raise"; exit 1; }
    local extra=()
    [[ $dir == TESTING ]] && extra=("$p/dlamch.f")
    gcc -O2 -c -DTestingPblas -I"$src/scalapack/PBLAS/SRC" "$src/scalapack/PBLAS/SRC/PTOOLS/PB_Cwarn.c" -o "$p/PB_Cwarn.o"
    gcc -O2 -c -DTestingPblas -I"$src/scalapack/PBLAS/SRC" "$src/scalapack/PBLAS/SRC/PTOOLS/PB_Cabort.c" -o "$p/PB_Cabort.o"
    # -mcmodel=medium: the work array is a static array above 2 GiB.
    gfortran -O2 -std=legacy -w -mcmodel=medium -o "$dest/bin/$prog" "$p/$main" "$p/$helpers" "$p/$common" "${extra[@]}" \
      "$p/PB_Cwarn.o" "$p/PB_Cabort.o" "$scalapack" "$blas" -Wl,--allow-shlib-undefined
  done
  rm -rf "$src"
  local rel exclude
  rel=$(realpath --relative-to="$root" "$dest")
  if [[ $rel != ..* ]] && exclude=$(git -C "$root" rev-parse --git-path info/exclude 2>/dev/null); then
    grep -qxF "/$rel/" "$exclude" 2>/dev/null || echo "/$rel/" >> "$exclude"
  fi
  du -sh "$dest"
  ls "$dest" "$dest/bin"
}

if [[ ${1:-} == --fetch ]]; then
  fetch "${2:-.pblas}"
  exit 0
fi

debs=$(realpath "${1:-.pblas}")
out=${OUT:-out/gpu}/pblas
mkdir -p "$out"
out=$(realpath "$out")
cases=${PBLAS_CASES:-8192:256 8192:1024 8192:4096 16384:4096 24576:4096}
check_nbs=${PBLAS_CHECK_NBS:-4096}
check_n=${PBLAS_CHECK_N:-4096}
ranks=${PBLAS_RANKS:-1}
logical_nb=${PBLAS_LOGICAL_NB:-4096}
phases=${PBLAS_PHASES:-gpu cpu check}
lib=$root/build/release/lib/libvkgemm_blas.so.0
[[ -f $lib ]] || { echo "pblas-timing: $lib is missing (carry build/release/lib)"; exit 1; }
pdgemm=${PBLAS_PDGEMM:-vkgemm}
case $pdgemm in
  vkgemm) preload="$root/build/release/lib/libvkgemm_pblas.so.0 $lib"
          [[ -f ${preload%% *} ]] || { echo "pblas-timing: ${preload%% *} is missing (carry build/release/lib)"; exit 1; } ;;
  scalapack) preload=$lib ;;
  *) echo "pblas-timing: PBLAS_PDGEMM='$pdgemm' is not 'vkgemm' or 'scalapack'"; exit 2 ;;
esac
[[ -x $debs/bin/dpb3tim ]] || { echo "pblas-timing: $debs/bin/dpb3tim is missing (tools/gpu/run.sh pblas-timing --fetch)"; exit 1; }

# PBLAS_UNPACK=0 leaves / as it is: a dry run where the packages are installed (on lavapipe: PBLAS_UNPACK=0
# VKGEMM_BLAS_THRESHOLD=0 PBLAS_CASES="512:128 512:256" PBLAS_CHECK_N=256 PBLAS_CHECK_NBS=128).
if [[ ${PBLAS_UNPACK:-1} != 0 ]]; then
  for f in "$debs"/*.deb; do
    dpkg-deb --fsys-tarfile "$f" | tar -x -C / --keep-directory-symlink --skip-old-files
  done
  ldconfig
fi
openblas=/usr/lib/x86_64-linux-gnu/openblas-pthread
# mpirun.openmpi, not mpirun: the plain name is a link update-alternatives makes, which unpacking does not run.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# The ranks of one node: shared memory and self, no network transport (the host has none to offer); a
# transport set in the environment wins (OMPI_MCA_pml=ucx: UCX's shared-memory transports).
export OMPI_MCA_btl=${OMPI_MCA_btl:-self,vader} OMPI_MCA_pml=${OMPI_MCA_pml:-ob1}
export OMPI_MCA_mca_base_component_show_load_errors=0
cores=$(nproc)
{
  echo "host: $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1); $(free -g | awk '/^Mem:/ {print $2}') GiB"
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
  "$root/build/release/vkgemm" devices 2>/dev/null | grep -E '^\[|^this process' || true
  mpirun.openmpi --version | head -1
} | tee "$out/host.txt"

# tim_dat <cases>: PDBLAS3TIM.dat for PDGEMM alone on one 1 x R grid: a warm-up test (the first case again),
# then each case N:NB (M = N = K = N, the distribution blocks MB = NB of A, B and C NB).
tim_dat() {
  local ms=() bs=() case
  for case in ${1%% *} $1; do ms+=("${case%%:*}") bs+=("${case##*:}"); done
  local count=${#ms[@]}
  ((count <= 20)) || { echo "pblas-timing: $count tests; the timer takes at most 20"; exit 1; }
  rep() { local v=$1; printf "%s " $(for ((i = 0; i < count; i++)); do echo "$v"; done); }
  cat <<EOF
'Level 3 PBLAS, Timing input file'
'vkgemm: PDGEMM on one rank, the first test a warm-up'
'PDBLAS3TIM.SUMM'	output file name (if any)
6		device out
$logical_nb		value of the logical computational blocksize NB
1		number of process grids (ordered pairs of P & Q)
1		values of P
$ranks		values of Q
1.0D0		value of ALPHA
0.0D0		value of BETA
$count		number of tests problems
$(rep "'N'")	values of DIAG
$(rep "'L'")	values of SIDE
$(rep "'N'")	values of TRANSA
$(rep "'N'")	values of TRANSB
$(rep "'U'")	values of UPLO
EOF
  local what
  for what in M N K; do echo "${ms[*]}	values of $what"; done
  local op
  for op in A B C; do
    echo "${ms[*]}	values of M_$op"
    echo "${ms[*]}	values of N_$op"
    for what in IMB INB MB NB; do echo "${bs[*]}	values of ${what}_$op"; done
    echo "$(rep 0)	values of RSRC_$op"
    echo "$(rep 0)	values of CSRC_$op"
    echo "$(rep 1)	values of I$op"
    echo "$(rep 1)	values of J$op"
  done
  echo "PDGEMM  T	put F for no test in the same column"
  for op in PDSYMM PDSYRK PDSYR2K PDTRMM PDTRSM PDGEADD PDTRADD; do printf '%-8sF\tput F for no test in the same column\n' "$op"; done
}

# run_tim <tag> [mpirun -x settings...]: dpb3tim with PBLAS_RANKS ranks in $out/<tag>/, its report to
# $out/<tag>.txt; where nvidia-smi is, each GPU's use sampled every half second meanwhile into $out/<tag>.smi.csv.
run_tim() {
  local tag=$1
  shift
  mkdir -p "$out/$tag"
  tim_dat "$cases" > "$out/$tag/PDBLAS3TIM.dat"
  local start=$SECONDS smi=
  if command -v nvidia-smi > /dev/null; then
    nvidia-smi --query-gpu=timestamp,index,utilization.gpu,memory.used --format=csv,noheader,nounits -lms 500 \
      > "$out/$tag.smi.csv" 2> /dev/null &
    smi=$!
  fi
  (cd "$out/$tag" && mpirun.openmpi -n "$ranks" --bind-to none -x LD_LIBRARY_PATH="$openblas" -x OPENBLAS_VERBOSE=2 \
    -x OMPI_MCA_btl -x OMPI_MCA_pml -x OMPI_MCA_mca_base_component_show_load_errors \
    ${GLIBC_TUNABLES:+-x GLIBC_TUNABLES} "$@" "$debs/bin/dpb3tim") \
    > "$out/$tag.txt" 2> "$out/$tag.stderr" || { echo "pblas-timing: dpb3tim ($tag) failed"; tail -20 "$out/$tag.stderr"; }
  [[ -z $smi ]] || kill "$smi" 2> /dev/null || true
  echo "pblas-timing: dpb3tim ($tag) took $((SECONDS - start)) s"
  grep -E '^  \|  PDGEMM|Not enough|GEMMs on the device|vkgemm-blas|vkgemm-pblas|Core:' "$out/$tag.txt" "$out/$tag.stderr" || true
}

for phase in $phases; do
  case $phase in
    gpu) run_tim gpu -x LD_PRELOAD="$preload" -x VKGEMM_BLAS_VERBOSE="${VKGEMM_BLAS_VERBOSE:-1}" -x OPENBLAS_NUM_THREADS="$cores" ;;
    # The same products again, each local GEMM's result judged on the host by the library's sampled check
    # (VKGEMM_BLAS_CHECK=1, docs/blas.md): not timed (the check's copy of C and its passes are in the call).
    checked) run_tim checked -x LD_PRELOAD="$preload" -x VKGEMM_BLAS_VERBOSE=1 -x VKGEMM_BLAS_CHECK=1 \
               -x OPENBLAS_NUM_THREADS="$cores" ;;
    cpu) run_tim cpu -x OPENBLAS_NUM_THREADS="$cores" ;;
    check)
      # ScaLAPACK's tester, PDGEMM alone through vkgemm at PBLAS_CHECK_N with each block size, error exits too,
      # on the 1 x PBLAS_RANKS grid, every GEMM routed (threshold 0: the tester's local GEMMs are small).
      mkdir -p "$out/check"
      awk -v n="$check_n" -v nbs="$check_nbs" -v ranks="$ranks" '
        BEGIN { split(nbs, b, " "); count = length(b) }
        function rep(v,   s, i) { s = ""; for (i = 1; i <= count; i++) s = s v " "; return s }
        function list(   s, i) { s = ""; for (i = 1; i <= count; i++) s = s b[i] " "; return s }
        /number of process grids/ { print "1\t\tnumber of process grids (ordered pairs of P & Q)"; next }
        /values of P$/ { print "1\t\tvalues of P"; next }
        /values of Q$/ { print ranks "\t\tvalues of Q"; next }
        /number of tests problems/ { print count "\t\tnumber of tests problems"; next }
        /values of (DIAG|SIDE|TRANSA|TRANSB|UPLO)$/ { print rep("'\''" ($1 ~ /U/ ? "U" : ($1 ~ /L/ ? "L" : "N")) "'\''") "\tvalues of " $NF; next }
        /values of [MNK]$/ || /values of [MN]_[ABC]$/ { print rep(n) "\tvalues of " $NF; next }
        /values of (IMB|INB|MB|NB)_[ABC]$/ { print list() "\tvalues of " $NF; next }
        /values of (RSRC|CSRC)_[ABC]$/ { print rep(0) "\tvalues of " $NF; next }
        /values of [IJ][ABC]$/ { print rep(1) "\tvalues of " $NF; next }
        /^PD/ { printf "%-8s%s\tput F for no test in the same column\n", $1, ($1 == "PDGEMM" ? "T" : "F"); next }
        { print }' /dev/stdin > "$out/check/PDBLAS3TST.dat" <<'EOF'
'Level 3 PBLAS, Testing input file'
'vkgemm: PDGEMM on one rank at the timed block sizes'
'PDBLAS3TST.SUMM'	output file name (if any)
6		device out
F		logical flag, T to stop on failures
T		logical flag, T to test error exits
0		verbosity, 0 for pass/fail, 1-3 for matrix dump on errors
10		the leading dimension gap
16.0            threshold value of test ratio
256		value of the logical computational blocksize NB
1		number of process grids (ordered pairs of P & Q)
1	values of P
1	values of Q
2.0D0		value of ALPHA
3.0D0		value of BETA
1		number of tests problems
'N'	values of DIAG
'L'	values of SIDE
'N'	values of TRANSA
'N'	values of TRANSB
'U'	values of UPLO
0	values of M
0	values of N
0	values of K
0	values of M_A
0	values of N_A
0	values of IMB_A
0	values of INB_A
0	values of MB_A
0	values of NB_A
0	values of RSRC_A
0	values of CSRC_A
0	values of IA
0	values of JA
0	values of M_B
0	values of N_B
0	values of IMB_B
0	values of INB_B
0	values of MB_B
0	values of NB_B
0	values of RSRC_B
0	values of CSRC_B
0	values of IB
0	values of JB
0	values of M_C
0	values of N_C
0	values of IMB_C
0	values of INB_C
0	values of MB_C
0	values of NB_C
0	values of RSRC_C
0	values of CSRC_C
0	values of IC
0	values of JC
PDGEMM  T
PDSYMM  F
PDSYRK  F
PDSYR2K F
PDTRMM  F
PDTRSM  F
PDGEADD F
PDTRADD F
EOF
      start=$SECONDS
      (cd "$out/check" && mpirun.openmpi -n "$ranks" --bind-to none -x LD_LIBRARY_PATH="$openblas" -x LD_PRELOAD="$preload" \
        -x VKGEMM_BLAS_VERBOSE=1 -x VKGEMM_BLAS_THRESHOLD=0 -x OMPI_MCA_btl -x OMPI_MCA_pml -x OMPI_MCA_mca_base_component_show_load_errors \
        "$debs/bin/dpb3tst") > "$out/check.txt" 2> "$out/check.stderr" || echo "pblas-timing: dpb3tst failed"
      echo "pblas-timing: dpb3tst took $((SECONDS - start)) s"
      grep -E 'PDGEMM +[0-9]|FAILED|SUSPECT|ERROR|GEMMs on the device|vkgemm-blas: device|vkgemm-pblas' "$out/check.txt" "$out/check.stderr" || true
      ;;
    *) echo "pblas-timing: unknown phase '$phase' (gpu, checked, cpu, check)"; exit 2 ;;
  esac
done

# The comparison: each test's wall-time GFLOP/s through vkgemm and on the CPU, the warm-up left out.
python3 - "$out" "$cases" "$check_n" "$ranks" "$pdgemm" <<'PY' | tee "$out/summary.txt"
import json, re, sys
from pathlib import Path
out, check_n, ranks = Path(sys.argv[1]), int(sys.argv[3]), int(sys.argv[4])
given = [tuple(map(int, c.split(":"))) for c in sys.argv[2].split()]
cases = [given[0] + ("warm-up",)] + [c + ("",) for c in given]
def rows(tag):
    p = out / f"{tag}.txt"
    if not p.exists():
        return None
    # One "|  PDGEMM  wall_s  wall_Mflops  cpu_s  cpu_Mflops" row per test that ran, "Not enough memory" otherwise.
    found, text = [], p.read_text()
    for block in re.split(r"Test number +\d+ started", text)[1:]:
        m = re.search(r"\|  PDGEMM +([-\d.]+) +([-\d.]+)", block)
        found.append((float(m.group(1)), float(m.group(2)) / 1e3) if m else None)
    return found
gpu, cpu = rows("gpu"), rows("cpu")
result = {"ranks": ranks, "pdgemm": sys.argv[5], "cases": []}
print(f"{'n':>6} {'NB':>5}  {'vkgemm s':>9} {'GFLOP/s':>9}  {'CPU s':>9} {'GFLOP/s':>9}  ratio")
for i, (n, nb, note) in enumerate(cases):
    g = gpu[i] if gpu and i < len(gpu) else None
    c = cpu[i] if cpu and i < len(cpu) else None
    ratio = g[1] / c[1] if g and c and c[1] > 0 else None
    result["cases"].append({"n": n, "nb": nb, "note": note, "vkgemm_s": g and g[0], "vkgemm_gflops": g and g[1],
                            "cpu_s": c and c[0], "cpu_gflops": c and c[1], "ratio": ratio})
    fmt = lambda v, f: format(v, f) if v is not None else "-"
    print(f"{n:>6} {nb:>5}  {fmt(g and g[0], '9.3f')} {fmt(g and g[1], '9.1f')}  {fmt(c and c[0], '9.3f')} "
          f"{fmt(c and c[1], '9.1f')}  {fmt(ratio, '.2f')} {note}")
check = out / "check.txt"
if check.exists():
    text = check.read_text()
    m = re.search(r"\|  PDGEMM +(\d+) +(\d+) +(\d+) +(\d+)", text)
    failures = re.findall(r"\*\*\*\*\*.*(?:FAILED|SUSPECT|ERROR).*", text)
    result["check"] = {"n": check_n, "summary": m.group(0) if m else None, "failures": failures,
                       "passed": bool(m) and m.group(1) == m.group(2) != "0" and m.group(3) == "0"
                                 and m.group(4) == "0" and not failures}
    print("check (dpb3tst, PDGEMM):", result["check"])
# Through vkgemm, every GEMM must have run on the device: none on the CPU BLAS, none fallen back; under the
# check, every one checked and none failed.
for tag in ("gpu", "checked", "check"):
    err = out / f"{tag}.stderr"
    if err.exists():
        lines = [l for l in err.read_text().splitlines() if l.startswith(("vkgemm-blas:", "vkgemm-pblas:"))]
        counts = [tuple(map(int, m.groups())) for l in lines
                  if (m := re.search(r"(\d+) GEMMs on the device.*?, (\d+) on the CPU BLAS, (\d+) fell back", l))]
        result[f"{tag}_library"] = lines
        result[f"{tag}_all_on_device"] = bool(counts) and all(d > 0 and c == 0 and f == 0 for d, c, f in counts)
        print(tag, *lines, f"every GEMM on the device: {result[f'{tag}_all_on_device']}", sep="\n  ")
        # vkgemm's PDGEMM: each rank's calls gathered and handed to ScaLAPACK's.
        result[f"{tag}_pdgemm_gathered"] = [tuple(map(int, m.groups())) for l in lines
                                            if (m := re.search(r"(\d+) P\?GEMM calls gathered.*?, (\d+) forwarded", l))]
        if tag == "checked":
            judged = [tuple(map(int, m.groups())) for l in lines
                      if (m := re.search(r"(\d+) checked on the host, (\d+) of them failed", l))]
            # vkgemm's PDGEMM streams its calls and judges each streamed result on the host (a result that fails
            # is said on its line as a stream that fell back); its ranks print no per-GEMM line.
            streamed = [(int(m.group(1)), int(c.group(1)), "fell back" in l) for l in lines
                        if (m := re.search(r"taken \((\d+) streamed", l))
                        and (c := re.search(r"(\d+) streamed results checked on the host", l))]
            result["checked_all_passed"] = (
                (len(judged) == len(counts) == ranks > 0 and
                 all(j == d and f == 0 for (j, f), (d, _, _) in zip(judged, counts))) or
                (len(streamed) == ranks > 0 and all(n > 0 and c == n and not f for n, c, f in streamed)))
            print(f"  every local GEMM checked, none failed: {result['checked_all_passed']}")
    smi = out / f"{tag}.smi.csv"
    if smi.exists():  # each GPU's busiest sample and the share of samples it was busy (utilization > 50 %)
        use = {}
        for line in smi.read_text().splitlines():
            f = [x.strip() for x in line.split(",")]
            if len(f) == 4 and f[2].isdigit():
                use.setdefault(f[1], []).append(int(f[2]))
        result[f"{tag}_gpu_use"] = {g: {"max_pct": max(u), "busy_share": sum(x > 50 for x in u) / len(u),
                                        "samples": len(u)} for g, u in use.items()}
        print(f"  GPU use during {tag}: {result[f'{tag}_gpu_use']}")
(out / "summary.json").write_text(json.dumps(result, indent=2) + "\n")
PY
