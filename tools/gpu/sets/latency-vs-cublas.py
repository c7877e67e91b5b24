#!/usr/bin/env python3
"""One small product's host latency: vkgemm's per-call and plan paths beside cuBLAS's launch + synchronize,
f32 and f64, in one run on one NVIDIA GPU (docs/design/latency.md says what each figure is and what it is held to).

vkgemm: `vkgemm bench --sizes none --latency-sizes SIZES --latency-calls CALLS --types TYPES --kernels K` for
each K of --kernels (auto, and blocked: the kernel the small products' figures were first taken with), once
with the default wait (GemmOptions::wait automatic: polling up to 200 us on a GPU) and once with VKGEMM_WAIT=sleep
(the blocking wait), each writing its JSON under --out. Per row: Engine::gemm without timestamps (sync_us,
the product alone, as cuBLAS's; on the same buffers each call, so its command buffer is submitted again
unrecorded), the same on alternating C buffers (rerecord_us: recorded every call), with timestamps
(timed_sync_us) and their GPU time (gpu_us), the plan's submit + wait (plan_sync_us), and the bench's other
latency figures (record_us, plan_submit_us, plan_wait_us, timed_plan_us, inflight_us).

cuBLAS: torch.matmul(a, b, out=c) then torch.cuda.synchronize(), host-timed with time.perf_counter, --calls
times after --warmup-ms of the same loop (warmed by time: the GPU's clock rises over the first milliseconds), on
random inputs in [-1, 1), TF32 off; the median, and the 10th and 90th percentiles.

Prints a table per type and size (ratios vkgemm / cuBLAS) and writes --out/latency-vs-cublas.json (rows of
type, n, kernel, wait, the figures above, cublas_us, cublas_p10_us, cublas_p90_us, ratio, plan_ratio, and the
commit the vkgemm binary reports of itself). Needs python3 with torch (CUDA) and build/release/vkgemm; see
docs/gpu.md.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time


# The bench's latency figures each row carries (docs/bench.md, "End-to-end latency").
LATENCY_FIGURES = ("sync_us", "rerecord_us", "timed_sync_us", "gpu_us", "record_us", "submit_wait_us",
                   "plan_submit_us", "plan_wait_us", "plan_sync_us", "timed_plan_us", "inflight_us")


def cublas_latency(torch, dtype, n, calls, warmup_ms):
    """Host microseconds of torch.matmul launched and synchronized: median, p10, p90 of `calls`."""
    gen = torch.Generator(device="cuda").manual_seed(n)
    a = torch.rand((n, n), device="cuda", dtype=dtype, generator=gen) * 2 - 1
    b = torch.rand((n, n), device="cuda", dtype=dtype, generator=gen) * 2 - 1
    c = torch.empty((n, n), device="cuda", dtype=dtype)
    torch.cuda.synchronize()
    end = time.perf_counter() + warmup_ms / 1e3
    while time.perf_counter() < end:
        torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        torch.matmul(a, b, out=c)
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e6)
    times.sort()
    return statistics.median(times), times[len(times) // 10], times[(9 * len(times)) // 10]


def vkgemm_latency(args, kernel, wait):
    """One vkgemm bench process; returns its JSON (written under --out)."""
    path = os.path.join(args.out, f"latency-{kernel}-{wait}.json")
    cmd = [args.vkgemm, "bench", "--sizes", "none", "--types", args.types, "--kernels", kernel,
           "--latency-sizes", args.sizes, "--latency-calls", str(args.vkgemm_calls), "--json", path, "--no-progress"]
    env = dict(os.environ)
    if wait == "sleep":
        env["VKGEMM_WAIT"] = "sleep"
    else:
        env.pop("VKGEMM_WAIT", None)
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    sys.stderr.write(proc.stderr)
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout)
        raise SystemExit(f"latency-vs-cublas: {' '.join(cmd)} failed (exit {proc.returncode})")
    with open(path) as f:
        bench = json.load(f)
    if not bench.get("vkgemm", {}).get("commit"):
        raise SystemExit(f"latency-vs-cublas: {args.vkgemm} wrote no build_commit in its --json; rebuild it")
    return bench


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--vkgemm", default="build/release/vkgemm", help="the vkgemm program")
    p.add_argument("--types", default="f32,f64", help="element types (f32, f64)")
    p.add_argument("--sizes", default="16,64,256,1024", help="n of the n x n x n products")
    p.add_argument("--kernels", default="auto,blocked", help="vkgemm kernels, one bench run each")
    p.add_argument("--calls", type=int, default=1000, help="cuBLAS: timed calls per case (median)")
    p.add_argument("--vkgemm-calls", type=int, default=500, help="vkgemm: --latency-calls")
    p.add_argument("--warmup-ms", type=float, default=300.0, help="cuBLAS: the warming loop's length per case")
    p.add_argument("--out", default=os.environ.get("OUT", "out/gpu"), help="folder for the JSON files")
    args = p.parse_args()
    if args.calls < 500:
        raise SystemExit("latency-vs-cublas: --calls must be at least 500")
    os.makedirs(args.out, exist_ok=True)
    import torch  # after the arguments: --help works without it

    torch.backends.cuda.matmul.allow_tf32 = False
    dtypes = {"f32": torch.float32, "f64": torch.float64}
    types = args.types.split(",")
    sizes = [int(s) for s in args.sizes.split(",")]
    cublas = {}
    for t in types:
        for n in sizes:
            cublas[(t, n)] = cublas_latency(torch, dtypes[t], n, args.calls, args.warmup_ms)
    rows = []
    for kernel in args.kernels.split(","):
        for wait in ("auto", "sleep"):
            bench = vkgemm_latency(args, kernel, wait)
            for row in bench["latency"]:
                if row.get("sync_us") is None:
                    continue  # skipped (the kernel does not run the type here): its reason is in the JSON
                med, p10, p90 = cublas[(row["type"], row["n"])]
                ratio = lambda us: round(us / med, 3) if us else None
                figures = {k: row.get(k) for k in LATENCY_FIGURES}
                rows.append({"type": row["type"], "n": row["n"], "kernel": kernel, "config": row.get("config"),
                             "ran": row.get("ran"), "wait": wait, **figures, "cublas_us": round(med, 2),
                             "cublas_p10_us": round(p10, 2), "cublas_p90_us": round(p90, 2), "ratio": ratio(row["sync_us"]),
                             "plan_ratio": ratio(row.get("plan_sync_us")), "commit": bench["vkgemm"]["commit"],
                             "device": bench.get("device", {}).get("name") if isinstance(bench.get("device"), dict)
                             else bench.get("device")})
    nan = float("nan")
    print(f"{'type':>4} {'n':>5} {'kernel':>7} {'wait':>5} {'gemm us':>8} {'rerec us':>8} {'gemm+ts':>8} "
          f"{'gpu us':>7} {'plan us':>8} {'cuBLAS us':>9} {'p10':>6} {'p90':>6} {'gemm/cuBLAS':>11} {'plan/cuBLAS':>11}")
    for r in rows:
        print(f"{r['type']:>4} {r['n']:>5} {r['kernel']:>7} {r['wait']:>5} {r['sync_us']:>8.2f} "
              f"{r['rerecord_us'] or nan:>8.2f} "
              f"{r['timed_sync_us'] or nan:>8.2f} {r['gpu_us'] or nan:>7.2f} {r['plan_sync_us'] or nan:>8.2f} "
              f"{r['cublas_us']:>9.2f} {r['cublas_p10_us']:>6.1f} {r['cublas_p90_us']:>6.1f} "
              f"{r['ratio'] or nan:>11.3f} {r['plan_ratio'] or nan:>11.3f}")
    path = os.path.join(args.out, "latency-vs-cublas.json")
    fd, part = tempfile.mkstemp(dir=args.out, prefix=".latency-vs-cublas.", suffix=".part")  # O_EXCL, unique
    with os.fdopen(fd, "w") as f:
        json.dump({"rows": rows, "cublas_method": "host wall time of torch.matmul + torch.cuda.synchronize, "
                   f"median of {args.calls} after {args.warmup_ms} ms of the same loop"}, f, indent=1)
    os.chmod(part, 0o644)
    os.replace(part, path)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
