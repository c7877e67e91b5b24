#!/bin/sh
# How long the commands a new user runs first take on this machine, against the targets docs/bench.md
# states for a CPU device (lavapipe): `vkgemm bench --sizes 32,48` under 60 s, the default `vkgemm bench`
# under 3 minutes, `vkgemm demo` under 20 s, and tune's first progress line within 5 s of its start.
# Usage: tools/dev/bench-timings.sh [BINARY]   (default build/release/vkgemm). Prints the load average
# before each command: other work on the machine slows a CPU device.
set -eu
BINARY=${1:-build/release/vkgemm}
SCRATCH=$(mktemp -d)
trap 'rm -rf "$SCRATCH"' EXIT

timed() {  # timed NAME TARGET_SECONDS COMMAND...
  name=$1 target=$2
  shift 2
  load=$(cut -d' ' -f1-3 /proc/loadavg)
  start=$(date +%s.%N)
  "$@" > "$SCRATCH/out" 2> "$SCRATCH/err" || echo "$name: exit code $?" >&2
  end=$(date +%s.%N)
  echo "$name: $(awk -v a="$start" -v b="$end" 'BEGIN { printf "%.1f", b - a }') s (target < $target s; load average $load)"
}

timed "bench --sizes 32,48" 60 "$BINARY" bench --sizes 32,48 --no-progress
timed "bench (defaults)" 180 "$BINARY" bench --no-progress
timed "demo" 20 "$BINARY" demo

# tune: seconds from its start to its first progress line on stderr (it is stopped there).
load=$(cut -d' ' -f1-3 /proc/loadavg)
start=$(date +%s.%N)
"$BINARY" tune --sizes 64 --quick --out "$SCRATCH/tuning.json" > "$SCRATCH/tune-out" 2> "$SCRATCH/tune-err" &
pid=$!
while kill -0 "$pid" 2> /dev/null && ! grep -q '^tune: ' "$SCRATCH/tune-err"; do sleep 0.1; done
end=$(date +%s.%N)
kill "$pid" 2> /dev/null || true
wait "$pid" 2> /dev/null || true
grep -q '^tune: ' "$SCRATCH/tune-err" || echo "tune: no progress line before it ended" >&2
echo "tune's first progress line: $(echo "$end - $start" | bc) s (target < 5 s; load average $load)"
head -3 "$SCRATCH/tune-out"
head -1 "$SCRATCH/tune-err"
