#!/usr/bin/env bash
# Usage: tools/dev/time-quick-tier.sh [DIR]
# What the quick tier costs a fresh machine, measured: a clone of this checkout's HEAD into DIR (default a new
# folder under /tmp), built without ccache and tested with empty shader caches (XDG_CACHE_HOME holds Mesa's
# and the validation layer's), running tools/install-deps.sh then tools/run-tests.sh --quick there, timed
# as a whole: wall time, the CPU time of everything it ran (what it would take on an idle machine is about
# that over the cores, where the work runs side by side), and the load average before and after (other work
# on the machine stretches the wall time). Packages already installed are not installed again; the shader
# toolchain (tools/install-toolchain.sh) is, into the clone.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$(mktemp -d /tmp/vkgemm-quick.XXXXXX)}
git clone -q "$src" "$dir/vkgemm"
export CCACHE_DISABLE=1 XDG_CACHE_HOME="$dir/cache"
unset CMAKE_CXX_COMPILER_LAUNCHER CMAKE_C_COMPILER_LAUNCHER
mkdir -p "$XDG_CACHE_HOME"
cd "$dir/vkgemm"
echo "time-quick-tier: $(git log --oneline -1) in $dir, $(nproc) cores, load before: $(cut -d' ' -f1-3 /proc/loadavg)"
start=$(date +%s)
status=0
TIMEFORMAT='time-quick-tier: wall %R s, CPU %U s user + %S s system'
time (tools/install-deps.sh >/dev/null && tools/run-tests.sh --quick) || status=$?
echo "time-quick-tier: exit $status, $(($(date +%s) - start)) s from the clone, load after: $(cut -d' ' -f1-3 /proc/loadavg)"
exit "$status"
