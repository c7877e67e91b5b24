#!/usr/bin/env python3
"""vkgemm against cuBLAS, side by side, in one run on one NVIDIA GPU.

For each shape and op combination: `vkgemm run` (fresh random inputs, verified against the CPU reference
first, then the median of --repeat timestamped dispatches with a barrier between them, after --warmup-ms of
untimed products) and cuBLAS through PyTorch (random inputs, TF32 off, fp16 reductions in fp32, after the same
--warmup-ms of back-to-back products) timed in bursts: --bursts series of back-to-back products, each at least
--burst-ms long, between two CUDA events, the median of their per-product times. That is GPU time per product
in a sustained series, as vkgemm's timestamped series is; one product between two events, synchronized each
time, measures the host's launch gap instead (538 against 736 TFLOP/s fp16 at 4096^3 on one H200).
--type f16 compares fp16 products (A and B float16, fp32 accumulation) with cuBLAS HGEMM through
torch.matmul on float16 tensors; vkgemm's C is float16 too unless --out-type f32 (default shapes: the
square ones and 4096x512x14336).
Each shape runs --rounds times (separate vkgemm processes, the first verified, each followed by a cuBLAS series),
and the median of the rounds' medians is reported: a lone series sometimes reads at a low clock.
Prints a table of TFLOP/s with the ratio vkgemm / cuBLAS and writes JSON (--json): each row carries the shape,
op_a, op_b, layout, batch, kernel, config, cublas_method and the commit the vkgemm binary reports of itself
(its build_commit, "-dirty" included; a binary that reports none is an error, not "unknown").
Needs python3 with torch (CUDA) and a built vkgemm; see README.md, "Running on a real GPU".
"""
import argparse
import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile

F16_SHAPES = ["1024", "2048", "4096", "8192", "4096x512x14336"]
DEFAULT_SHAPES = ["1024", "2048", "4096", "8192", "4096x4096x1024", "8192x1024x8192", "1024x8192x8192",
                  "127x4096x4096"]


def parse_shape(text):
    dims = [int(x) for x in text.split("x")]
    if len(dims) == 1:
        dims = dims * 3
    if len(dims) != 3 or min(dims) <= 0:
        raise SystemExit(f"bench-vs-cublas: bad shape {text!r} (N or MxNxK)")
    return dims


def run_vkgemm(binary, m, n, k, ops, args, verify):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    cmd = [binary, "run", "--m", str(m), "--n", str(n), "--k", str(k), "--type", args.type, "--kernel", args.kernel,
           "--repeat", str(args.repeat), "--warmup-ms", str(args.warmup_ms), "--json", path]
    if ops[0] == "t":
        cmd.append("--trans-a")
    if ops[1] == "t":
        cmd.append("--trans-b")
    if args.type == "f16":
        cmd += ["--out-type", "f16" if args.f16_accumulate else args.out_type]
    if args.f16_accumulate:
        cmd.append("--f16-accumulate")
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


def time_cublas(torch, m, n, k, ops, args):
    """GPU time per product (ms) of torch.matmul with op(A), op(B) as `ops` says, timed in bursts."""
    dtype = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16}[args.type]
    # Stored as BLAS would hold them: op(A) = A^T reads a k x m matrix, op(B) = B^T an n x k one.
    a = torch.rand((k, m) if ops[0] == "t" else (m, k), device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand((n, k) if ops[1] == "t" else (k, n), device="cuda", dtype=dtype) * 2 - 1
    op_a, op_b = (a.t() if ops[0] == "t" else a), (b.t() if ops[1] == "t" else b)
    c = torch.empty((m, n), device="cuda", dtype=dtype)

    def burst(count):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(count):
            torch.matmul(op_a, op_b, out=c)
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


def compare_shape(torch, shape, ops, args):
    """One shape and op combination: --rounds vkgemm processes (the first verified), each beside a cuBLAS series."""
    m, n, k = shape
    flop = 2.0 * m * n * k
    records, cublas_rounds, code = [], [], 0
    for r in range(max(1, args.rounds)):
        record, code = run_vkgemm(args.vkgemm, m, n, k, ops, args, verify=(r == 0 and not args.no_verify))
        cublas_rounds.append(time_cublas(torch, m, n, k, ops, args))
        if record is None:
            break
        records.append(record)
    cublas_ms = statistics.median(cublas_rounds)
    cublas_tflops = flop / cublas_ms * 1e-9
    base = {"type": args.type, "m": m, "n": n, "k": k, "op_a": ops[0], "op_b": ops[1], "layout": "row", "batch": 1,
            "cublas_method": "burst", "cublas_tflops": round(cublas_tflops, 3)}
    if code or not records:
        print(f"{f'{m}x{n}x{k}':>20} {ops:>3} {'FAILED (exit ' + str(code) + ')':<40} {'-':>9} {cublas_tflops:9.2f}")
        return dict(base, failed=True)
    record = records[0]
    commit = record.get("build_commit")
    if not commit:
        raise SystemExit(f"bench-vs-cublas: {args.vkgemm} wrote no build_commit in its --json; rebuild it")
    vk_rounds = [flop / rec["median_ms"] * 1e-9 for rec in records]
    vk_tflops = statistics.median(vk_rounds)
    ratio = vk_tflops / cublas_tflops
    check = {True: "verified", False: "FAILED", None: "unverified"}[record["verified"]]
    kernel = f"{record['kernel']} {record['config']}"
    spread = "/".join(f"{x:.1f}" for x in vk_rounds)
    print(f"{f'{m}x{n}x{k}':>20} {ops:>3} {kernel:<40} {vk_tflops:9.2f} {cublas_tflops:9.2f} {ratio:6.3f}  {check}"
          f"  (vkgemm rounds {spread})")
    return dict(base, device=record["device"], driver=record["driver"],
                out_type=record.get("out_type", args.type), kernel=record["kernel"], config=record["config"],
                vkgemm_tflops=round(vk_tflops, 3), ratio=round(ratio, 4), vkgemm_median_ms=flop / vk_tflops * 1e-9,
                cublas_median_ms=cublas_ms, repeat=args.repeat, warmup_ms=args.warmup_ms, bursts=args.bursts,
                burst_ms=args.burst_ms, verified=record["verified"], rounds=len(records),
                vkgemm_round_tflops=[round(x, 3) for x in vk_rounds],
                cublas_round_tflops=[round(flop / x * 1e-9, 3) for x in cublas_rounds],
                f16_accumulate=args.f16_accumulate, normwise_error=record.get("normwise_error"), commit=commit)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vkgemm", default="build/release/vkgemm", help="the vkgemm program")
    p.add_argument("--shapes", nargs="+", help="N (square) or MxNxK (default: the issue's shapes for the type)")
    p.add_argument("--type", default="f32", choices=["f32", "f64", "f16"])
    p.add_argument("--out-type", default="f16", choices=["f16", "f32"],
                   help="f16 inputs: vkgemm's C type (default f16, as cuBLAS HGEMM gives)")
    p.add_argument("--kernel", default="auto", help="vkgemm kernel (default auto)")
    p.add_argument("--f16-accumulate", action="store_true",
                   help="f16: vkgemm sums in fp16 (C f16); cuBLAS HGEMM still sums in fp32, so say so when quoting")
    p.add_argument("--rounds", type=int, default=3,
                   help="separate vkgemm processes (and cuBLAS series) per shape, the first verified; the median of "
                        "their medians is reported (a lone series sometimes reads at a low clock)")
    p.add_argument("--ops", default="nn", help="op combinations, comma-separated: nn, nt, tn, tt (default nn); "
                   "t transposes that operand (BLAS op(A) = A^T) for both vkgemm and cuBLAS")
    p.add_argument("--repeat", type=int, default=30, help="vkgemm's timed runs (median; at least 20)")
    p.add_argument("--warmup-ms", type=float, default=300,
                   help="untimed GPU time before timing, for both (an idle GPU clocks down); default 300")
    p.add_argument("--bursts", type=int, default=7, help="cuBLAS bursts (median; at least 5)")
    p.add_argument("--burst-ms", type=float, default=25, help="the least GPU time of one cuBLAS burst (at least 20)")
    p.add_argument("--no-verify", action="store_true", help="skip vkgemm's CPU check (not for reported numbers)")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    if args.shapes is None:
        args.shapes = F16_SHAPES if args.type == "f16" else DEFAULT_SHAPES
    if args.repeat < 20:
        raise SystemExit("bench-vs-cublas: --repeat must be at least 20")
    if args.bursts < 5 or args.burst_ms < 20:
        raise SystemExit("bench-vs-cublas: at least 5 bursts of at least 20 ms")
    ops_list = args.ops.split(",")
    if any(o not in ("nn", "nt", "tn", "tt") for o in ops_list):
        raise SystemExit(f"bench-vs-cublas: --ops takes nn, nt, tn, tt, not {args.ops!r}")

    import torch  # late: --help works without it
    if not torch.cuda.is_available():
        raise SystemExit("bench-vs-cublas: no CUDA device for cuBLAS")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    # Otherwise cuBLAS may reduce split-K partial sums in fp16, and "cuBLAS sums in fp32" would not hold.
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    gpu = torch.cuda.get_device_name(0)
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")

    rows, failures = [], 0
    print(f"{'m x n x k':>20} {'ops':>3} {'vkgemm kernel':<40} {'vkgemm':>9} {'cuBLAS':>9} {'ratio':>6}  check")
    for text in args.shapes:
        for ops in ops_list:
            row = compare_shape(torch, parse_shape(text), ops, args)
            row.update(cuda_device=gpu, date=date)
            failures += bool(row.get("failed"))
            rows.append(row)
    print(f"TFLOP/s; vkgemm from Vulkan timestamps (median of {args.repeat}), cuBLAS (torch.matmul, TF32 off, "
          f"fp16 reductions in fp32) from CUDA events around bursts of >= {args.burst_ms} ms (median of "
          f"{args.bursts}); both after {args.warmup_ms} ms of warm-up; the median of {args.rounds} rounds"
          + ("; vkgemm sums in fp16, cuBLAS in fp32" if args.f16_accumulate else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
