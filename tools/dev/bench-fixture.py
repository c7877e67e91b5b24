#!/usr/bin/env python3
"""A recorded `vkgemm bench` run (its --json file) cut down to the fields the progress estimate's replay reads
(tests/test_bench.cpp, worst_recorded_error): the settings that size each case's work, when each steadiness
check ran, and per case its shape, type, kernel, status, segment and where its time went. The fixtures under
tests/data/default-bench-*.json are made with it, so a new record becomes one the same way:

    tools/dev/bench-fixture.py docs/results/h100/default-bench.json \\
        "docs/results/h100/default-bench.json (binary 6047373, H100, ...)" > tests/data/default-bench-h100-cold.json
"""
import json
import sys


def case_fields(c, latency):
    """One case's fields: shape, what ran, and its wall, inputs, check and warm-up (device busy) seconds."""
    out = {"n": c["n"]} if latency else {"m": c["m"], "n": c["n"], "k": c["k"]}
    out.update({key: c[key] for key in ("type", "kernel", "ran", "status", "segment", "wall_seconds", "data_seconds")})
    out["check_seconds"] = (c.get("verification") or {}).get("seconds", 0.0)
    if not latency:
        out["gpu_median_ms"] = (c.get("gpu_time") or {}).get("median", 0.0)
    if not latency or "warmup" in c:  # a latency case's warm-up is in records of versions since it was written
        out["warmup_busy_ms"] = (c.get("warmup") or {}).get("busy_ms", 0.0)
    return out


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: bench-fixture.py RECORD.json 'where it came from (binary, device, cache)'")
    with open(sys.argv[1]) as f:
        run = json.load(f)
    if not run.get("complete", False):
        sys.exit(f"{sys.argv[1]}: the run is incomplete; a replay needs every case")
    s = run["settings"]
    fixture = {
        "from": sys.argv[2] + ": the fields the progress estimate reads (tools/dev/bench-fixture.py)",
        "settings": {key: s[key] for key in ("repeat", "warmup", "warmup_ms", "verify_max", "latency_calls")},
        "steadiness_checks_at_s": [c["at_s"] for c in run["steadiness"]["checks"]],
        "cases": [case_fields(c, False) for c in run["cases"]],
        "latency": [case_fields(c, True) for c in run["latency"]],
    }
    json.dump(fixture, sys.stdout, separators=(",", ":"))
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
