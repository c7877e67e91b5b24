#!/usr/bin/env python3
"""vkgemm against cuBLAS, side by side, in one run on one NVIDIA GPU.

Cases: by default the published shape set (tools/shape-sets/published.json, --set): per type, squares that
are not powers of two, every op combination, both layouts, tall and skinny, K-heavy and K-light, batched
small products (--cases-of another type: that type's cases, e.g. f16 on the bf16 shapes). --shapes N or MxNxK
(with --ops, --layout, --batch) compares other shapes instead.

For each case: `vkgemm run` (fresh random inputs, verified against the CPU reference first, then the median
of --repeat timestamped dispatches with a barrier between them, after --warmup-ms of untimed products) and
cuBLAS through PyTorch (random inputs, TF32 off, fp16 reductions in fp32, after the same --warmup-ms of
back-to-back products) timed in bursts: --bursts series of back-to-back products, each at least --burst-ms
long, between two CUDA events, the median of their per-product times. That is GPU time per product in a
sustained series, as vkgemm's timestamped series is; one product between two events, synchronized each
time, measures the host's launch gap instead (538 against 736 TFLOP/s fp16 at 4096^3 on one H200).
cuBLAS computes the same product in the same memory arrangement: a column-major call is the row-major
product C^T = op(B)^T op(A)^T on the same bytes, and a batch is torch.bmm over the same strided batch.
--type f16 compares fp16 products (A and B float16, fp32 accumulation) with cuBLAS HGEMM through
torch.matmul on float16 tensors; vkgemm's C is float16 too unless --out-type f32. --type bf16 likewise with
bfloat16 tensors (vkgemm's C bf16 unless --out-type f32). --type i8 sets vkgemm's i8 product (C i32) against
torch._int_mm (int8 in, int32 out; row-major NN products without a batch only, as _int_mm takes them, in
--shapes and in the set alike): a
PyTorch path, not necessarily cuBLAS's fastest int8 kernel, so quote it for what it is.
Each case runs --rounds times (separate vkgemm processes, the first verified, each followed by a cuBLAS
series), and the median of the rounds' medians is reported: a lone series sometimes reads at a low clock.

Prints a table of TFLOP/s with the ratio vkgemm / cuBLAS, then per type the geometric mean and minimum of
the ratio over every case and over the judged ones (every dimension >= 512, or a skinny case: the
cases the published floors are judged on), and writes JSON (--json, docs/vs-cublas.schema.json: a header
naming the device and the vkgemm commits, then the rows; tools/vkgemm-report reads it beside the bench's
results): each row carries m n k, op_a, op_b, layout, batch, group, judged, kernel,
config, cublas_method and the commit the vkgemm binary reports of itself (its build_commit, "-dirty"
included; a binary that reports none is an error, not "unknown"). tools/dev/plot-vs-cublas.py draws it.

--epilogue bias-gelu fuses a per-column bias and GELU (its tanh form) into both: vkgemm run --bias col --act
gelu-tanh, and cuBLASLt's fused epilogue through torch._addmm_activation(bias, op(A), op(B), use_gelu=True)
(row-major products without a batch, as addmm takes them); each row then names its epilogue.

Small products' latency (one synchronous call beside cuBLAS's launch + synchronize) is
tools/gpu/sets/latency-vs-cublas.py's.

Needs python3 with torch (CUDA) and a built vkgemm; see docs/gpu.md.
"""
import argparse
import datetime
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile

TOOLS = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tools/, from tools/gpu/sets/
DEFAULT_SET = os.path.join(TOOLS, "shape-sets", "published.json")


# --epilogue: the name each row carries for it (null: none).
EPILOGUES = {"none": None, "bias-gelu": "bias col, gelu-tanh"}


def parse_shape(text):
    dims = [int(x) for x in text.split("x")]
    if len(dims) == 1:
        dims = dims * 3
    if len(dims) != 3 or min(dims) <= 0:
        raise SystemExit(f"bench-vs-cublas: bad shape {text!r} (N or MxNxK)")
    return dims


def make_case(shape, ops="nn", layout="row", batch=1, group="custom"):
    if ops not in ("nn", "nt", "tn", "tt"):
        raise SystemExit(f"bench-vs-cublas: ops take nn, nt, tn, tt, not {ops!r}")
    if layout not in ("row", "col") or batch < 1:
        raise SystemExit(f"bench-vs-cublas: bad layout {layout!r} or batch {batch}")
    m, n, k = parse_shape(shape)
    judged = min(m, n, k) >= 512 or group == "skinny"
    return {"m": m, "n": n, "k": k, "op_a": ops[0], "op_b": ops[1], "layout": layout, "batch": batch,
            "group": group, "judged": judged}


def load_cases(args):
    """The cases to compare: --shapes (crossed with --ops) or the type's list in the shape-set file."""
    if args.shapes:
        return [make_case(s, ops, args.layout, args.batch) for s in args.shapes for ops in args.ops.split(",")]
    listed_type = args.cases_of or args.type
    with open(args.set) as f:
        listed = json.load(f).get(listed_type)
    if not listed:
        raise SystemExit(f"bench-vs-cublas: {args.set} has no cases for {listed_type}")
    groups = args.groups.split(",") if args.groups else None
    cases = [make_case(c["shape"], c.get("ops", "nn"), c.get("layout", "row"), c.get("batch", 1), c["group"])
             for c in listed if groups is None or c["group"] in groups]
    for c in cases:
        if args.type == "i8" and (c["op_a"], c["op_b"], c["layout"], c["batch"]) != ("n", "n", "row", 1):
            raise SystemExit(f"bench-vs-cublas: {args.set}'s i8 case {label(c)} ({c['op_a']}{c['op_b']}, "
                             f"{c['layout']}, batch {c['batch']}) is not a row-major NN product without a batch, "
                             "the only kind torch._int_mm computes")
    return cases


def label(case):
    batch = f"{case['batch']}*" if case["batch"] > 1 else ""
    return f"{batch}{case['m']}x{case['n']}x{case['k']}"


def run_vkgemm(binary, case, args, verify):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    cmd = [binary, "run", "--m", str(case["m"]), "--n", str(case["n"]), "--k", str(case["k"]), "--type", args.type,
           "--kernel", args.kernel, "--layout", case["layout"], "--repeat", str(args.repeat),
           "--warmup-ms", str(args.warmup_ms), "--json", path]
    if case["batch"] > 1:
        cmd += ["--batch", str(case["batch"])]
    if args.tile:
        cmd += ["--tile", str(args.tile)]
    if case["op_a"] == "t":
        cmd.append("--trans-a")
    if case["op_b"] == "t":
        cmd.append("--trans-b")
    if args.type in ("f16", "bf16"):
        cmd += ["--out-type", args.type if args.f16_accumulate else (args.out_type or args.type)]
    if args.f16_accumulate:
        cmd.append("--f16-accumulate")
    if args.epilogue == "bias-gelu":
        cmd += ["--bias", "col", "--act", "gelu-tanh"]
    if verify:
        cmd.append("--verify")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    try:
        with open(path) as f:
            record = json.load(f)
    except (OSError, json.JSONDecodeError):
        record = None
    os.unlink(path)
    if proc.returncode != 0 or record is None:
        sys.stderr.write(proc.stdout + proc.stderr)
        return None, proc.returncode
    return record, 0


def cublas_operands(torch, case, dtype):
    """op(A), op(B) and C as torch sees the case's bytes: a column-major call is the row-major product
    C^T = op(B)^T op(A)^T, i.e. the row-major problem n x m x k with the operands and their ops swapped."""
    m, n, k, ta, tb = case["m"], case["n"], case["k"], case["op_a"] == "t", case["op_b"] == "t"
    if case["layout"] == "col":
        m, n, ta, tb = n, m, tb, ta
    lead = (case["batch"],) if case["batch"] > 1 else ()
    # Stored as BLAS holds them: op(A) = A^T reads a k x m matrix, op(B) = B^T an n x k one.
    a = torch.rand(lead + ((k, m) if ta else (m, k)), device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand(lead + ((n, k) if tb else (k, n)), device="cuda", dtype=dtype) * 2 - 1
    op_a = a.transpose(-1, -2) if ta else a
    op_b = b.transpose(-1, -2) if tb else b
    return op_a, op_b, torch.empty(lead + (m, n), device="cuda", dtype=dtype)


def time_cublas(torch, case, args):
    """GPU time per product (ms; a batch is one product) of the case through cuBLAS, timed in bursts."""
    if args.type == "i8":
        a = torch.randint(-128, 128, (case["m"], case["k"]), device="cuda", dtype=torch.int8)
        b = torch.randint(-128, 128, (case["k"], case["n"]), device="cuda", dtype=torch.int8)

        def product():
            torch._int_mm(a, b)
    else:
        dtype = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16, "bf16": torch.bfloat16}[args.type]
        op_a, op_b, c = cublas_operands(torch, case, dtype)
        if args.epilogue == "bias-gelu":
            bias = torch.rand(case["n"], device="cuda", dtype=dtype) * 2 - 1

            def product():
                torch._addmm_activation(bias, op_a, op_b, use_gelu=True)
        else:
            def product():
                torch.matmul(op_a, op_b, out=c)

    def burst(count):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            product()
        end.record()
        end.synchronize()
        return start.elapsed_time(end)

    # Warm by time, as vkgemm's --warmup-ms does: back-to-back products until that much GPU time has run.
    per = burst(1)
    warmed = per
    while warmed < args.warmup_ms:
        count = max(1, int((args.warmup_ms - warmed) / max(per, 1e-3)))
        t = burst(count)
        warmed += t
        per = t / count
    count = max(1, int(args.burst_ms / max(per, 1e-3)) + 1)
    times = []
    for _ in range(args.bursts):
        t = burst(count)
        if t < args.burst_ms:  # the clock rose since the estimate: lengthen the bursts
            count = max(count + 1, int(count * args.burst_ms / max(t, 1e-3)) + 1)
            t = burst(count)
        times.append(t / count)
    return statistics.median(times)


def compare_case(torch, case, args):
    """One case: --rounds vkgemm processes (the first verified), each beside a cuBLAS series."""
    flop = 2.0 * case["m"] * case["n"] * case["k"] * case["batch"]
    ops = case["op_a"] + case["op_b"]
    records, cublas_rounds, code = [], [], 0
    for r in range(max(1, args.rounds)):
        record, code = run_vkgemm(args.vkgemm, case, args, verify=(r == 0 and not args.no_verify))
        cublas_rounds.append(time_cublas(torch, case, args))
        if record is None:
            break
        records.append(record)
    cublas_ms = statistics.median(cublas_rounds)
    cublas_tflops = flop / cublas_ms * 1e-9
    method = "burst" if args.epilogue == "none" else "burst, torch._addmm_activation (cuBLASLt's fused bias + GELU)"
    base = dict(case, type=args.type, cublas_method=method, cublas_tflops=round(cublas_tflops, 3),
                epilogue=EPILOGUES[args.epilogue])
    where = f"{label(case):>20} {ops:>3} {case['layout']:>3}"
    if code or not records:
        print(f"{where} {'FAILED (exit ' + str(code) + ')':<44} {'-':>8} {cublas_tflops:8.2f}", flush=True)
        return dict(base, failed=True)
    record = records[0]
    want = EPILOGUES[args.epilogue]
    bias = record.get("bias") or "none"
    done = None if bias == "none" else f"bias {bias}, {record.get('activation')}"
    if done != want:
        raise SystemExit(f"bench-vs-cublas: {args.vkgemm} ran the epilogue {done!r} where {want!r} was asked for")
    commit = record.get("build_commit")
    if not commit:
        raise SystemExit(f"bench-vs-cublas: {args.vkgemm} wrote no build_commit in its --json; rebuild it")
    vk_rounds = [flop / rec["median_ms"] * 1e-9 for rec in records]
    vk_tflops = statistics.median(vk_rounds)
    ratio = vk_tflops / cublas_tflops
    check = {True: "verified", False: "FAILED", None: "unverified"}[record["verified"]]
    if record.get("check") == "sampled":
        check += " (sampled)"
    kernel = f"{record['kernel']} {record['config']}"
    spread = "/".join(f"{x:.1f}" for x in vk_rounds)
    print(f"{where} {kernel[:44]:<44} {vk_tflops:8.2f} {cublas_tflops:8.2f} {ratio:6.3f}  {check}  ({spread})",
          flush=True)
    return dict(base, device=record["device"], driver=record["driver"],
                out_type=record.get("out_type", args.type), kernel=record["kernel"], config=record["config"],
                vkgemm_tflops=round(vk_tflops, 3), ratio=round(ratio, 4), vkgemm_median_ms=flop / vk_tflops * 1e-9,
                cublas_median_ms=cublas_ms, repeat=args.repeat, warmup_ms=args.warmup_ms, bursts=args.bursts,
                burst_ms=args.burst_ms, verified=record["verified"], check=record.get("check"), rounds=len(records),
                vkgemm_round_tflops=[round(x, 3) for x in vk_rounds],
                cublas_round_tflops=[round(flop / x * 1e-9, 3) for x in cublas_rounds],
                f16_accumulate=args.f16_accumulate, normwise_error=record.get("normwise_error"), commit=commit)


def summarize(rows):
    """Geometric mean and minimum of vkgemm / cuBLAS over every measured case and over the judged ones."""
    out = {}
    for name, pick in (("all", lambda r: True), ("judged", lambda r: r["judged"])):
        ratios = [(r["ratio"], label(r) + " " + r["op_a"] + r["op_b"] + " " + r["layout"])
                  for r in rows if "ratio" in r and pick(r)]
        if not ratios:
            continue
        worst = min(ratios)
        out[name] = {"cases": len(ratios), "geomean": round(math.exp(statistics.fmean(math.log(x) for x, _ in ratios)), 4),
                     "min": worst[0], "min_case": worst[1]}
    out["failed"] = sum(bool(r.get("failed")) for r in rows)
    return out


def case_key(r):
    return (r["m"], r["n"], r["k"], r["op_a"], r["op_b"], r["layout"], r["batch"])


def combine(args):
    """--combine: one result from the rows of several calls, FILE[:GROUP,GROUP] each (a set measured over
    several device calls), every case of the set's type exactly once, in the set's order."""
    wanted = {case_key(c): c for c in load_cases(args)}
    rows, sources = {}, []
    for spec in args.combine:
        path, _, groups = spec.partition(":")
        with open(path) as f:
            result = json.load(f)
        if result.get("type") != args.type:
            raise SystemExit(f"bench-vs-cublas: {path} holds {result.get('type')} rows, not {args.type}")
        taken = [r for r in result["rows"] if not groups or r["group"] in groups.split(",")]
        for r in taken:
            if case_key(r) not in wanted:
                raise SystemExit(f"bench-vs-cublas: {path}: {label(r)} {r['op_a']}{r['op_b']} {r['layout']} is not "
                                 f"a case of {args.set}'s {args.type} set")
            if case_key(r) in rows:
                raise SystemExit(f"bench-vs-cublas: {label(r)} {r['op_a']}{r['op_b']} {r['layout']} twice "
                                 f"(again in {path}): name the groups to take from each file")
            rows[case_key(r)] = r
        sources.append({"file": path, "groups": groups or "all", "rows": len(taken),
                        "commits": sorted({r.get("commit", "?") for r in taken})})
    missing = [f"{label(c)} {c['op_a']}{c['op_b']} {c['layout']}" for key, c in wanted.items() if key not in rows]
    if missing and not args.partial:
        raise SystemExit(f"bench-vs-cublas: no row for {', '.join(missing)} (--partial writes the set without them)")
    ordered = [rows[key] for key in wanted if key in rows]
    result = {"type": args.type, "summary": summarize(ordered), "complete": not missing, "combined_from": sources,
              "rows": ordered}
    if missing:
        result["missing"] = missing  # the summary covers the measured cases only: say which are not
    return result


def with_header(result):
    """The result with the header docs/vs-cublas.schema.json defines first: which device (one per file) and
    which vkgemm commits its rows come from, as vkgemm-report reads it."""
    measured = [r for r in result["rows"] if not r.get("failed")]
    devices = sorted({(r["device"], r["driver"]) for r in measured})
    if len(devices) > 1:
        raise SystemExit(f"bench-vs-cublas: rows of {len(devices)} devices in one result: {devices}")
    name, driver = devices[0] if devices else ("unknown", "")
    header = {"format": "vkgemm-vs-cublas", "format_version": 1, "device": {"name": name, "driver_version": driver},
              "commits": sorted({r["commit"] for r in measured})}
    return dict(header, **{k: v for k, v in result.items() if k not in header})


def write_json(args, result):
    if args.json and "summary" in result:
        result = with_header(result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)


def measured_result(args, rows, summary, complete):
    """The result of a measuring run (complete: every case done), naming the set's cases it ran (--cases-of)."""
    result = {"type": args.type, "summary": summary, "complete": complete, "rows": rows}
    if args.cases_of:
        result["cases_of"] = args.cases_of
    return result


def run_shapes(torch, args, meta):
    """Every case, the JSON rewritten after each (a run cut short keeps what it measured)."""
    rows = []
    print(f"{'case':>20} {'ops':>3} {'lay':>3} {'vkgemm kernel':<44} {'vkgemm':>8} {'cuBLAS':>8} {'ratio':>6}  check",
          flush=True)
    for case in load_cases(args):
        rows.append(dict(compare_case(torch, case, args), **meta))
        write_json(args, measured_result(args, rows, summarize(rows), complete=False))
    summary = summarize(rows)
    print(f"TFLOP/s; vkgemm from Vulkan timestamps (median of {args.repeat}), cuBLAS (torch.matmul, TF32 off, "
          f"fp16 reductions in fp32) from CUDA events around bursts of >= {args.burst_ms} ms (median of "
          f"{args.bursts}); both after {args.warmup_ms} ms of warm-up; the median of {args.rounds} rounds"
          + ("; vkgemm sums in fp16, cuBLAS in fp32" if args.f16_accumulate else ""))
    for name in ("all", "judged"):
        if name in summary:
            s = summary[name]
            print(f"{args.type} {name}: {s['cases']} cases, geometric mean {s['geomean']:.3f}, minimum {s['min']:.3f} "
                  f"({s['min_case']})")
    return rows, summary


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vkgemm", default="build/release/vkgemm", help="the vkgemm program")
    p.add_argument("--set", default=DEFAULT_SET, help="the shape-set file (default: the published set)")
    p.add_argument("--cases-of", choices=["f32", "f64", "f16", "bf16", "i8"],
                   help="the set's cases of this type instead of --type's (--type f16 --cases-of bf16: vkgemm's "
                        "and cuBLAS's f16 on the bf16 shapes, for the ratio of the two types)")
    p.add_argument("--groups", help="only these groups of the set, comma-separated (square, ops, layout, skinny, "
                   "k-heavy, k-light, batched)")
    p.add_argument("--shapes", nargs="+", help="N (square) or MxNxK: these instead of the set")
    p.add_argument("--ops", default="nn", help="with --shapes: op combinations, comma-separated: nn, nt, tn, tt "
                   "(t transposes that operand, BLAS op = T, for both vkgemm and cuBLAS)")
    p.add_argument("--layout", default="row", choices=["row", "col"], help="with --shapes: the call's layout")
    p.add_argument("--batch", type=int, default=1, help="with --shapes: products per call (strided batch)")
    p.add_argument("--type", default="f32", choices=["f32", "f64", "f16", "bf16", "i8"])
    p.add_argument("--out-type", choices=["f16", "bf16", "f32"],
                   help="f16 or bf16 inputs: vkgemm's C type (default the inputs' type, as cuBLAS gives)")
    p.add_argument("--kernel", default="auto", help="vkgemm kernel (default auto)")
    p.add_argument("--tile", type=int, help="vkgemm's tile for the kernel (vkgemm run --tile: tiled; coopmat 64, 128; "
                   "coopmat2 64, 128, 256); default chosen by shape")
    p.add_argument("--f16-accumulate", action="store_true",
                   help="f16: vkgemm sums in fp16 (C f16); cuBLAS HGEMM still sums in fp32, so say so when quoting")
    p.add_argument("--rounds", type=int, default=3,
                   help="separate vkgemm processes (and cuBLAS series) per case, the first verified; the median of "
                        "their medians is reported (a lone series sometimes reads at a low clock)")
    p.add_argument("--repeat", type=int, default=30, help="vkgemm's timed runs (median; at least 20)")
    p.add_argument("--warmup-ms", type=float, default=300,
                   help="untimed GPU time before timing, for both (an idle GPU clocks down); default 300")
    p.add_argument("--bursts", type=int, default=7, help="cuBLAS bursts (median; at least 5)")
    p.add_argument("--burst-ms", type=float, default=25, help="the least GPU time of one cuBLAS burst (at least 20)")
    p.add_argument("--epilogue", default="none", choices=sorted(EPILOGUES),
                   help="bias-gelu: a per-column bias and GELU fused into both (cuBLASLt's through "
                        "torch._addmm_activation); row-major products without a batch")
    p.add_argument("--no-verify", action="store_true", help="skip vkgemm's CPU check (not for reported numbers)")
    p.add_argument("--json", help="write the results here")
    p.add_argument("--combine", nargs="+", metavar="FILE[:GROUPS]",
                   help="no measuring: combine these results (each with the groups to take from it, "
                        "comma-separated; default all) into one of the set's --type cases, written to --json")
    p.add_argument("--partial", action="store_true",
                   help="with --combine: a case without a row is left out (the result says complete: false and "
                        "lists it under missing) instead of an error")
    args = p.parse_args()
    if args.repeat < 20:
        raise SystemExit("bench-vs-cublas: --repeat must be at least 20")
    if args.bursts < 5 or args.burst_ms < 20:
        raise SystemExit("bench-vs-cublas: at least 5 bursts of at least 20 ms")
    if args.f16_accumulate and args.type != "f16":
        raise SystemExit(f"bench-vs-cublas: --f16-accumulate is for --type f16, not {args.type}")
    if args.out_type and args.out_type not in ("f32", args.type):
        raise SystemExit(f"bench-vs-cublas: --out-type {args.out_type} with --type {args.type}: "
                         f"f16 and bf16 inputs take --out-type f32 or their own type")
    if args.cases_of and args.shapes:
        raise SystemExit("bench-vs-cublas: --cases-of picks cases from the set; --shapes names its own")
    if args.epilogue != "none" and not args.shapes:
        raise SystemExit(f"bench-vs-cublas: --epilogue {args.epilogue} takes --shapes (the set's cases include "
                         "column-major and batched products, which torch._addmm_activation does not compute)")
    if args.epilogue != "none" and (args.type not in ("f32", "f16", "bf16") or args.layout != "row" or args.batch != 1):
        raise SystemExit(f"bench-vs-cublas: --epilogue {args.epilogue} takes f32, f16 or bf16 products, --layout row "
                         f"and no --batch (what torch._addmm_activation computes), not --type {args.type} "
                         f"--layout {args.layout} --batch {args.batch}")
    if args.type == "i8" and (args.ops != "nn" or args.layout != "row" or args.batch != 1):
        raise SystemExit("bench-vs-cublas: --type i8 takes --ops nn, --layout row and no --batch "
                         "(the products torch._int_mm computes)")
    return args


def main():
    args = parse_args()
    if args.combine:
        result = combine(args)
        write_json(args, result)
        for name in ("all", "judged"):
            s = result["summary"][name]
            print(f"{args.type} {name}: {s['cases']} cases, geometric mean {s['geomean']:.3f}, minimum {s['min']:.3f} "
                  f"({s['min_case']})")
        if result.get("missing"):
            print(f"not measured, left out of the summary: {', '.join(result['missing'])}")
        return 0
    import torch  # late: --help works without it
    if not torch.cuda.is_available():
        raise SystemExit("bench-vs-cublas: no CUDA device for cuBLAS")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # Otherwise cuBLAS may reduce split-K partial sums in fp16, and "cuBLAS sums in fp32" would not hold.
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    meta = {"cuda_device": torch.cuda.get_device_name(0),
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")}
    rows, summary = run_shapes(torch, args, meta)
    failures = summary["failed"]
    result = measured_result(args, rows, summary, complete=True)
    write_json(args, result)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
