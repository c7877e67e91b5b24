#!/usr/bin/env python3
"""A change's before and after on one device in one call: two vkgemm binaries (two builds of one tree, or two
commits) alternated on the same `vkgemm run` products, each run checked, the median GPU time of each side and
their ratio per product. The way a prediction in a design page meets its measurement (docs/gpu.md).

Usage: tools/gpu/run.sh ab --before BIN --after BIN [--rounds N] [--out DIR] "NAME: RUN ARGS" ...
  Each case is a name and the arguments of one `vkgemm run` (the product, its kernel and options, --repeat),
  e.g. "thin-f16: --m 2073600 --n 64 --k 64 --type f16 --out-type f16 --kernel thin --repeat 400". Every run
  is checked: --verify is added (a product past a million elements is checked by sampling, --verify-max
  1000000) and a run that fails, is not verified or says its device's speed drifted is reported as such.
  Rounds alternate the order (before first, then after first), so that a drift of the device's clock does
  not favour one side. Each run warms the GPU by time first (vkgemm run's --warmup-ms, 200 ms on a GPU).

Writes DIR/ab.json (default $OUT, else the working folder): the device, each binary's path and the commit it
reports, and per case its arguments, each side's times by round, their medians, after / before, and whether
every run was verified and steady; prints the same as a table. Exits 1 when any run failed or was not
verified. Needs the binaries (carried: build/release/vkgemm and the other build's, e.g. under .calls/) and
.gl on the GPU host.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


def parse_case(text):
    name, sep, args = text.partition(":")
    if not sep or not name.strip() or not args.split():
        raise SystemExit(f"ab: the case {text!r} is not 'NAME: RUN ARGS' (a name, a colon, vkgemm run's arguments)")
    return name.strip(), args.split()


def version(binary):
    out = subprocess.run([binary, "--version"], capture_output=True, text=True, check=True).stdout.strip()
    return out


def run_once(binary, args):
    """One `vkgemm run`; returns (its JSON or None, the tail of its output when it failed)."""
    with tempfile.TemporaryDirectory(prefix="vkgemm-ab.") as folder:
        path = os.path.join(folder, "run.json")
        command = [binary, "run", *args, "--verify", "--verify-max", "1000000", "--json", path]
        done = subprocess.run(command, capture_output=True, text=True)
        if done.returncode != 0 or not os.path.isfile(path):
            return None, (done.stdout + done.stderr)[-800:]
        with open(path) as f:
            return json.load(f), ""


def steady(result):
    """vkgemm run's steadiness check (its calibration product before and after): absent where it ran none."""
    return bool(result.get("steadiness", {}).get("steady", True))


def measure(binaries, cases, rounds):
    rows = []
    for name, args in cases:
        row = {"case": name, "args": " ".join(args), "before_ms": [], "after_ms": [], "verified": True,
               "steady": True, "failures": []}
        for r in range(rounds):
            order = ("before", "after") if r % 2 == 0 else ("after", "before")
            for side in order:
                result, failure = run_once(binaries[side], args)
                if result is not None and result.get("median_ms") is None:
                    result, failure = None, "the run timed nothing (an empty product?)"
                if result is None:
                    row["failures"].append(f"{side}, round {r + 1}: {failure}")
                    row["verified"] = False
                    continue
                row[f"{side}_ms"].append(result["median_ms"])
                row.setdefault("device", result["device"])
                row.setdefault(f"{side}_kernel", f"{result['kernel']} ({result['config']})")
                row["verified"] &= bool(result.get("verified"))
                row["steady"] &= steady(result)
        for side in ("before", "after"):
            times = row[f"{side}_ms"]
            row[f"{side}_median_ms"] = statistics.median(times) if times else None
        b, a = row["before_median_ms"], row["after_median_ms"]
        row["after_over_before"] = a / b if a and b else None
        rows.append(row)
        print_row(row)
    return rows


def print_row(row):
    def ms(v):
        return f"{v:.4f}" if v is not None else "-"
    ratio = f"{row['after_over_before']:.3f}" if row["after_over_before"] else "-"
    flags = ("" if row["verified"] else " NOT VERIFIED") + ("" if row["steady"] else " unsteady")
    print(f"{row['case']:<28} before {ms(row['before_median_ms'])} ms  after {ms(row['after_median_ms'])} ms  "
          f"after/before {ratio}{flags}", flush=True)
    for failure in row["failures"]:
        print(f"  failed: {failure}", flush=True)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", required=True, help="the vkgemm binary before the change")
    parser.add_argument("--after", required=True, help="the vkgemm binary after the change")
    parser.add_argument("--rounds", type=int, default=2, help="runs of each case on each side, alternated")
    parser.add_argument("--out", default=os.environ.get("OUT", "."), help="where ab.json goes")
    parser.add_argument("cases", nargs="+", help="'NAME: RUN ARGS', one per product")
    args = parser.parse_args()
    if args.rounds < 1:
        raise SystemExit(f"ab: --rounds {args.rounds} is below 1")
    cases = [parse_case(c) for c in args.cases]
    binaries = {"before": args.before, "after": args.after}
    for side, binary in binaries.items():
        if not os.access(binary, os.X_OK):
            raise SystemExit(f"ab: --{side} {binary} is not an executable file")
    os.makedirs(args.out, exist_ok=True)
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    final = os.path.join(args.out, "ab.json")
    if os.path.lexists(final) and not os.path.isfile(final) or os.path.islink(final):
        raise SystemExit(f"ab: {final} is there and is not a regular file: give another --out")
    rows = measure(binaries, cases, args.rounds)
    report = {"what": "two vkgemm binaries alternated on the same vkgemm run products, each run checked",
              "date": started, "rounds": args.rounds,
              "before": {"binary": args.before, "version": version(args.before)},
              "after": {"binary": args.after, "version": version(args.after)},
              "method": "vkgemm run --verify (--verify-max 1000000) per run: the median GPU time of its timed "
                        "dispatches after its warm-up by time; each side's median over the rounds",
              "cases": rows}
    fd, private = tempfile.mkstemp(prefix=".ab.", suffix=".json", dir=args.out)
    with os.fdopen(fd, "w") as f:
        json.dump(report, f, indent=1)
    os.replace(private, final)
    print(f"ab: wrote {final}")
    return 0 if all(r["verified"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
