#!/usr/bin/env python3
"""vkgemm against cuBLAS, side by side, in one run on one NVIDIA GPU.

For each shape: `vkgemm run` (fresh random inputs, verified against the CPU reference first, then the median
of --repeat timestamped dispatches with a barrier between them, after --warmup) and cuBLAS through PyTorch
(random inputs, TF32 off, CUDA events around each product, the median of --repeat after --warmup).
--type f16 compares fp16 products (A and B float16, fp32 accumulation) with cuBLAS HGEMM through
torch.matmul on float16 tensors; vkgemm's C is float16 too unless --out-type f32 (default shapes: the
square ones and 4096x512x14336).
Each shape runs --rounds times (separate vkgemm processes, the first verified, each followed by a cuBLAS series),
and the median of the rounds' medians is reported: a lone series sometimes reads at a low clock.
Prints a table of TFLOP/s with the ratio vkgemm / cuBLAS and writes JSON (--json).
Needs python3 with torch (CUDA) and a built vkgemm; see docs/gpu.md.
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


def run_vkgemm(binary, m, n, k, args, verify):
    with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
        path = f.name
    cmd = [binary, "run", "--m", str(m), "--n", str(n), "--k", str(k), "--type", args.type, "--kernel", args.kernel,
           "--repeat", str(args.repeat), "--warmup", str(args.warmup), "--json", path]
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


def time_cublas(torch, m, n, k, args):
    dtype = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16}[args.type]
    a = torch.rand((m, k), device="cuda", dtype=dtype) * 2 - 1
    b = torch.rand((k, n), device="cuda", dtype=dtype) * 2 - 1
    c = torch.empty((m, n), device="cuda", dtype=dtype)
    for _ in range(args.warmup):
        torch.matmul(a, b, out=c)
    torch.cuda.synchronize()
    times = []
    for _ in range(args.repeat):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        torch.matmul(a, b, out=c)
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


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
    p.add_argument("--repeat", type=int, default=30, help="timed runs of each (median; at least 20)")
    p.add_argument("--warmup", type=int, default=30, help="untimed runs first, for both (the GPU clocks up)")
    p.add_argument("--no-verify", action="store_true", help="skip vkgemm's CPU check (not for reported numbers)")
    p.add_argument("--commit", default="unknown", help="the vkgemm commit, recorded in the JSON")
    p.add_argument("--json", help="write the results here")
    args = p.parse_args()
    if args.shapes is None:
        args.shapes = F16_SHAPES if args.type == "f16" else DEFAULT_SHAPES
    if args.repeat < 20:
        raise SystemExit("bench-vs-cublas: --repeat must be at least 20")

    import torch  # late: --help works without it
    if not torch.cuda.is_available():
        raise SystemExit("bench-vs-cublas: no CUDA device for cuBLAS")
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    gpu = torch.cuda.get_device_name(0)
    date = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")

    rows, failures = [], 0
    print(f"{'m x n x k':>20} {'vkgemm kernel':<40} {'vkgemm':>9} {'cuBLAS':>9} {'ratio':>6}  check")
    for text in args.shapes:
        m, n, k = parse_shape(text)
        flop = 2.0 * m * n * k
        records, cublas_rounds, code = [], [], 0
        for r in range(max(1, args.rounds)):
            record, code = run_vkgemm(args.vkgemm, m, n, k, args, verify=(r == 0 and not args.no_verify))
            cublas_rounds.append(time_cublas(torch, m, n, k, args))
            if record is None:
                break
            records.append(record)
        cublas_ms = statistics.median(cublas_rounds)
        cublas_tflops = flop / cublas_ms * 1e-9
        record = None if code else records[0]
        if record is None:
            failures += 1
            print(f"{f'{m}x{n}x{k}':>20} {'FAILED (exit ' + str(code) + ')':<40} {'-':>9} {cublas_tflops:9.2f}")
            rows.append({"m": m, "n": n, "k": k, "failed": True, "cublas_tflops": cublas_tflops})
            continue
        vk_rounds = [flop / rec["median_ms"] * 1e-9 for rec in records]
        vk_tflops = statistics.median(vk_rounds)
        ratio = vk_tflops / cublas_tflops
        check = {True: "verified", False: "FAILED", None: "unverified"}[record["verified"]]
        kernel = f"{record['kernel']} {record['config']}"
        spread = "/".join(f"{x:.1f}" for x in vk_rounds)
        print(f"{f'{m}x{n}x{k}':>20} {kernel:<40} {vk_tflops:9.2f} {cublas_tflops:9.2f} {ratio:6.3f}  {check}"
              f"  (vkgemm rounds {spread})")
        rows.append({"device": record["device"], "driver": record["driver"], "cuda_device": gpu, "type": args.type,
                     "out_type": record.get("out_type", args.type), "m": m, "n": n, "k": k, "kernel": record["kernel"], "config": record["config"],
                     "vkgemm_tflops": round(vk_tflops, 3), "cublas_tflops": round(cublas_tflops, 3),
                     "ratio": round(ratio, 4), "vkgemm_median_ms": flop / vk_tflops * 1e-9,
                     "cublas_median_ms": cublas_ms, "repeat": args.repeat, "verified": record["verified"],
                     "rounds": len(records), "vkgemm_round_tflops": [round(x, 3) for x in vk_rounds],
                     "cublas_round_tflops": [round(flop / x * 1e-9, 3) for x in cublas_rounds],
                     "f16_accumulate": args.f16_accumulate,
                     "normwise_error": record.get("normwise_error"), "date": date, "commit": args.commit})
    print("TFLOP/s; vkgemm from Vulkan timestamps, cuBLAS (torch.matmul, TF32 off) from CUDA events; "
          f"medians of {args.repeat} after {args.warmup} warm-up runs, the median of {args.rounds} rounds"
          + ("; vkgemm sums in fp16, cuBLAS in fp32" if args.f16_accumulate else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
