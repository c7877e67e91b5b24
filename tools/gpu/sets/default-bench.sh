#!/bin/bash
# The default `vkgemm bench` (no --sizes: every type the device runs, auto and each kernel that applies at
# 256, 1024 and 4096, naive and tiled up to 1024^3; docs/bench.md) timed end to end on a GPU, and its
# progress estimate held against what happened. From the repository root with build/release carried; results
# under $OUT (default out/gpu/default-bench):
#   default.json      the results (each case's wall_seconds and data_seconds among them)
#   default.txt       the table and summary (stdout)
#   progress.txt      one progress line per case (stderr): cases done, time spent, the estimate of the rest
#   eta.txt           each estimate against the time the sweep then took, and the verdict
# The promise judged: the whole command under 3 minutes, and every estimate from the tenth case on within
# 30 % of the time that was in fact left. tools/dev/bench-fixture.py cuts default.json to a fixture the bench
# suite replays through the estimate (tests/data/default-bench-*.json).
# Usage: tools/gpu/run.sh default-bench; COLD=1 tools/gpu/run.sh default-bench runs it as on a fresh host, with the
# driver's shader cache empty (NVIDIA's: __GL_SHADER_DISK_CACHE_PATH, else under XDG_CACHE_HOME; Mesa's under
# XDG_CACHE_HOME). vkgemm keeps no pipeline cache on disk.
set -u
OUT=${OUT:-out/gpu/default-bench}
VKGEMM=${VKGEMM:-build/release/vkgemm}
mkdir -p "$OUT"
if [ "${COLD:-0}" = 1 ]; then
  cache=$(mktemp -d)
  trap 'rm -rf "$cache"' EXIT
  export __GL_SHADER_DISK_CACHE_PATH="$cache/nvidia" XDG_CACHE_HOME="$cache/xdg"
  mkdir -p "$__GL_SHADER_DISK_CACHE_PATH" "$XDG_CACHE_HOME"
  echo "driver shader caches empty: $cache"
fi
start=$(date +%s.%N)
"$VKGEMM" bench --json "$OUT/default.json" >"$OUT/default.txt" 2>"$OUT/progress.txt"
status=$?
end=$(date +%s.%N)
wall=$(python3 -c "print(round($end - $start, 1))")
echo "default bench: exit $status, $wall s (limit 180 s)" | tee "$OUT/eta.txt"
grep "^bench: built" "$OUT/progress.txt" | tee -a "$OUT/eta.txt"
tail -n 8 "$OUT/default.txt"
python3 - "$OUT/progress.txt" "$wall" <<'EOF' | tee -a "$OUT/eta.txt"
import re, sys
def seconds(text):  # Progress::duration_text: 42s, 1m05s, 1h02m
    m = re.fullmatch(r"(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?", text)
    h, mi, s = (int(g) if g else 0 for g in m.groups())
    return 3600 * h + 60 * mi + s
lines = [re.search(r"bench: (\d+)/(\d+) cases done .*, (\S+) in, about (\S+) left", l) for l in open(sys.argv[1])]
rows = [(int(m[1]), int(m[2]), seconds(m[3]), seconds(m[4])) for m in lines if m]
if not rows:
    sys.exit("no progress lines")
end = rows[-1][2]  # the sweep's end, on the progress clock
worst = 0.0
for done, total, spent, left in rows:
    truth = end - spent
    error = (left - truth) / truth if truth >= 10 else 0.0  # the last seconds: rounding, not the model
    if done >= 10:
        worst = max(worst, abs(error))
    if done in (1, 5, 10) or done % 10 == 0 or done == total:
        print(f"{done:4d}/{total}: {spent:4d} s in, estimated {left:4d} s left, took {truth:4d} s ({100 * error:+.0f} %)")
print(f"sweep {end} s on the progress clock; worst estimate from the tenth case on: {100 * worst:.0f} % off (limit 30 %)")
sys.exit(0 if worst <= 0.3 else 1)
EOF
eta=${PIPESTATUS[0]}
python3 -c "import sys; sys.exit(0 if $wall < 180 else 1)" || status=1
[ "$eta" -eq 0 ] || status=1
exit "$status"
