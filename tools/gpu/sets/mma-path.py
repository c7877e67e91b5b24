#!/usr/bin/env python3
"""What the instruction path Vulkan reaches gives f16 GEMM with fp32 sums on an NVIDIA GPU, measured in CUDA.

Vulkan's cooperative matrices on Hopper compile to the warp-level MMA (mma.sync) with loads staged through at
most 48 KiB of shared memory a workgroup; cuBLAS's f16 kernels use wgmma and TMA, which Vulkan does not
expose. Triton can be told to emit the warp-level MMA (DISABLE_MMA_V3=1), with any number of shared-memory
stages, so one tile can be timed under Vulkan's 48 KiB and with CUDA's 227 KiB: the first says what the
instruction path allows under Vulkan's limits, the second what more staging would give it.
Every configuration is checked against torch.matmul first; its PTX is searched for mma.sync and wgmma, so a
row says which path it took. Timing: bursts of back-to-back products of at least --burst-ms between two CUDA
events, the median of --bursts, after --warmup-ms of the kernel. Run from a machine with PyTorch and Triton:
  tools/gpu/run.sh mma-path --json out.json
and the same tiles on wgmma, for a control: DISABLE_MMA_V3=0 tools/gpu/run.sh mma-path --configs 2 --json w.json
"""
import argparse
import json
import os
import statistics
import sys

os.environ.setdefault("DISABLE_MMA_V3", "1")  # read by Triton's compiler: the warp-level MMA on Hopper

import torch  # noqa: E402
import triton  # noqa: E402
import triton.language as tl  # noqa: E402

# (BM, BN, BK, stages, warps): Triton's S stages hold S - 1 buffers of a K step (1 where S is 1).
# 128x256 as vkgemm's coopmat2 tile, within Vulkan's 48 KiB and beyond it; 128x128 of 4 warps within it.
CONFIGS = [(128, 256, 32, 2, 8), (128, 256, 64, 1, 8), (128, 256, 64, 3, 8), (128, 256, 32, 4, 8),
           (256, 128, 64, 3, 8), (128, 128, 64, 4, 8), (128, 128, 32, 3, 4), (128, 256, 32, 3, 8),
           (256, 128, 32, 3, 8), (128, 128, 32, 4, 4), (128, 128, 64, 2, 4), (64, 256, 32, 4, 4)]


@triton.jit
def matmul_kernel(a, b, c, M, N, K, lda, ldb, ldc, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  GROUP: tl.constexpr):
    pid = tl.program_id(0)
    grid_m, grid_n = tl.cdiv(M, BM), tl.cdiv(N, BN)
    width = GROUP * grid_n
    first = (pid // width) * GROUP
    rows = min(grid_m - first, GROUP)
    pm = first + (pid % width) % rows
    pn = (pid % width) // rows
    rm = pm * BM + tl.arange(0, BM)
    rn = pn * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    pa = a + rm[:, None] * lda + rk[None, :]
    pb = b + rk[:, None] * ldb + rn[None, :]
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for _ in range(0, tl.cdiv(K, BK)):
        acc += tl.dot(tl.load(pa), tl.load(pb))
        pa += BK
        pb += BK * ldb
    tl.store(c + rm[:, None] * ldc + rn[None, :], acc.to(tl.float16))


def launch(a, b, c, cfg):
    bm, bn, bk, stages, warps = cfg
    m, k = a.shape
    n = b.shape[1]
    grid = (triton.cdiv(m, bm) * triton.cdiv(n, bn),)
    return matmul_kernel[grid](a, b, c, m, n, k, a.stride(0), b.stride(0), c.stride(0), BM=bm, BN=bn, BK=bk,
                               GROUP=8, num_stages=stages, num_warps=warps)


def burst_ms(fn, count):
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(count):
        fn()
    end.record()
    torch.cuda.synchronize()
    return start.elapsed_time(end)


def time_product(fn, args):
    """Median ms per product over bursts of at least args.burst_ms, after args.warmup_ms of it."""
    per = burst_ms(fn, 3) / 3
    burst_ms(fn, max(1, int(args.warmup_ms / max(per, 1e-3))))
    per = burst_ms(fn, 10) / 10
    count = max(1, int(args.burst_ms / max(per, 1e-3)) + 1)
    return statistics.median(burst_ms(fn, count) / count for _ in range(args.bursts))


def measure(shape, cfg, args):
    m, n, k = shape
    torch.manual_seed(m + n + k)
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    c = torch.full((m, n), float("nan"), device="cuda", dtype=torch.float16)
    kernel = launch(a, b, c, cfg)
    ref = torch.matmul(a.float(), b.float())
    err = ((c.float() - ref).abs() / (ref.abs() + k ** 0.5)).max().item()
    ptx = kernel.asm.get("ptx", "")
    path = "wgmma" if "wgmma" in ptx else "mma.sync" if "mma.sync" in ptx else "unknown"
    ms = time_product(lambda: launch(a, b, c, cfg), args)
    smem = getattr(kernel, "metadata", None)
    smem = getattr(smem, "shared", None) if smem is not None else None
    bm, bn, bk, stages, warps = cfg
    return dict(shape=f"{m}x{n}x{k}", ops="nn", layout="row", batch=1, type="f16", out_type="f16", sums="fp32",
                kernel="triton", config=f"{bm}x{bn}x{bk} stages {stages} warps {warps}", path=path,
                shared_bytes=smem, registers=getattr(kernel, "n_regs", None),
                spilled=getattr(kernel, "n_spills", None), median_ms=round(ms, 5), tflops=round(2 * m * n * k / ms / 1e9, 1),
                max_scaled_error=err, verified=err < 1e-2, method=f"burst >= {args.burst_ms} ms, median of "
                f"{args.bursts}, after {args.warmup_ms} ms")


def cublas(shape, args):
    m, n, k = shape
    torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = False
    a = torch.randn(m, k, device="cuda", dtype=torch.float16)
    b = torch.randn(k, n, device="cuda", dtype=torch.float16)
    ms = time_product(lambda: torch.matmul(a, b), args)
    return dict(shape=f"{m}x{n}x{k}", type="f16", out_type="f16", sums="fp32", kernel="cublas",
                median_ms=round(ms, 5), tflops=round(2 * m * n * k / ms / 1e9, 1))


def parse_shape(text):
    """N (a cube) or MxNxK."""
    parts = [int(x) for x in text.lower().split("x")]
    if len(parts) == 1:
        return parts * 3
    if len(parts) != 3 or min(parts) < 1:
        raise argparse.ArgumentTypeError(f"a shape is N or MxNxK, not {text}")
    return parts


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--shapes", type=parse_shape, nargs="+", default=[[4096] * 3, [8192] * 3],
                    help="N (a cube) or MxNxK, each a multiple of every tile's sides")
    ap.add_argument("--bursts", type=int, default=5)
    ap.add_argument("--burst-ms", type=float, default=25)
    ap.add_argument("--warmup-ms", type=float, default=300)
    ap.add_argument("--configs", type=int, nargs="+", help="indexes into CONFIGS (default: all)")
    ap.add_argument("--json", required=True)
    args = ap.parse_args()
    rows = []
    for shape in args.shapes:
        rows.append(cublas(shape, args))
        print(json.dumps(rows[-1]), flush=True)
        for cfg in [CONFIGS[i] for i in args.configs] if args.configs else CONFIGS:
            try:
                rows.append(measure(shape, cfg, args))
            except Exception as e:  # a tile the compiler refuses (too much shared memory): a row saying so
                rows.append(dict(shape="x".join(map(str, shape)), config=str(cfg), error=str(e).splitlines()[0][:200]))
            print(json.dumps(rows[-1]), flush=True)
    header = dict(device=torch.cuda.get_device_name(), triton=triton.__version__, torch=torch.__version__,
                  disable_mma_v3=os.environ.get("DISABLE_MMA_V3"))
    with open(args.json, "w") as f:
        json.dump(dict(header, rows=rows), f, indent=1)
    return 0 if all(r.get("verified", True) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
