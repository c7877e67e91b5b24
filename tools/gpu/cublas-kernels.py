#!/usr/bin/env python3
"""Which kernels cuBLAS runs for each case, and how long each takes: the tile, stage count and split-K that
NVIDIA's heuristics chose, to compare with vkgemm's configuration (docs/perf-notes.md). Same case options as
tools/bench-vs-cublas.py (--set/--groups or --shapes with --ops/--layout/--batch, --type), the same operands
and torch settings (TF32 off, fp16 reductions in fp32); each case is warmed, then profiled over --calls
products with torch.profiler. Prints per case every CUDA kernel it launched with its calls and mean time.
Usage (device tool): python3 tools/gpu/cublas-kernels.py --type f32 --shapes 1000 1024 [--json FILE]
"""
import argparse
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("bench", os.path.join(HERE, "..", "bench-vs-cublas.py"))
bench = importlib.util.module_from_spec(spec)
spec.loader.exec_module(bench)


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--set", default=bench.DEFAULT_SET)
    p.add_argument("--groups")
    p.add_argument("--shapes", nargs="+")
    p.add_argument("--ops", default="nn")
    p.add_argument("--layout", default="row", choices=["row", "col"])
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--type", default="f32", choices=["f32", "f64", "f16"])
    p.add_argument("--calls", type=int, default=20, help="profiled products per case")
    p.add_argument("--json", help="write the kernels per case here")
    return p.parse_args()


def kernels_of(torch, case, args):
    dtype = {"f32": torch.float32, "f64": torch.float64, "f16": torch.float16}[args.type]
    op_a, op_b, c = bench.cublas_operands(torch, case, dtype)
    for _ in range(10):
        torch.matmul(op_a, op_b, out=c)
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(args.calls):
            torch.matmul(op_a, op_b, out=c)
        torch.cuda.synchronize()
    rows = []
    for e in prof.key_averages():
        if e.device_type == torch.autograd.DeviceType.CUDA and e.count > 0:
            rows.append({"kernel": e.key, "calls": e.count,
                         "mean_us": getattr(e, "device_time", getattr(e, "cuda_time", 0.0))})
    return rows


def main():
    args = parse_args()
    import torch
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    out = []
    for case in bench.load_cases(args):
        rows = kernels_of(torch, case, args)
        name = f"{bench.label(case)} {case['op_a']}{case['op_b']} {case['layout']}"
        print(name)
        for r in rows:
            print(f"  {r['calls']:4} x {r['mean_us']:9.1f} us  {r['kernel']}")
        out.append({**case, "type": args.type, "kernels": rows})
        sys.stdout.flush()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": torch.cuda.get_device_name(0), "cases": out}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
