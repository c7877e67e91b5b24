#!/usr/bin/python3
"""Debian's NumPy under the drop-in BLAS: a @ b (float32, float64; plain, transposed and strided operands, a
batch through np.matmul) runs through cblas_sgemm/cblas_dgemm of the preloaded library on the device
(threshold 0), under the validation layer, and matches a reference computed without BLAS (elementwise
products summed in float64 / longdouble). The library's exit summary must count every product on the device.
The check is shown to fail: the same run without the library has no device count.

Usage: test_numpy_preload.py <libvkgemm_blas.so>   (run by CTest, label e2e)
"""

import os
import re
import subprocess
import sys

CHILD = r"""
import sys
import numpy as np
seed = int(sys.argv[1])
rng = np.random.default_rng(seed)
products = 0
def reference(a, b):  # no BLAS: products summed in long double
    return (a.astype(np.longdouble)[..., :, :, None] * b.astype(np.longdouble)[..., None, :, :]).sum(axis=-2)
def check(c, a, b, dtype):
    ref = reference(a, b)
    mag = (np.abs(a).astype(np.longdouble)[..., :, :, None] * np.abs(b)[..., None, :, :]).sum(axis=-2)
    eps = np.finfo(dtype).eps / 2
    bound = (a.shape[-1] + 2) * eps * mag + np.finfo(dtype).tiny
    bad = np.abs(c - ref) > bound
    assert c.dtype == dtype and not bad.any(), f"seed {seed}: {dtype} {a.shape}@{b.shape}: {np.argwhere(bad)[:3]}"
for dtype in (np.float32, np.float64):
    for m, n, k in ((64, 48, 80), (2, 33, 7), (129, 3, 65)):  # m, n > 1: NumPy takes gemv for vectors
        a = rng.uniform(-1, 1, (m, k)).astype(dtype)
        b = rng.uniform(-1, 1, (k, n)).astype(dtype)
        check(a @ b, a, b, dtype); products += 1
        check(a.T.copy().T @ b, a, b, dtype); products += 1          # Fortran-ordered a
        at = rng.uniform(-1, 1, (k, m)).astype(dtype)
        check(at.T @ b, at.T, b, dtype); products += 1              # a transposed view
    big = rng.uniform(-1, 1, (96, 160)).astype(dtype)
    check(big[::2, 1:81] @ big[1:81, :40], big[::2, 1:81], big[1:81, :40], dtype); products += 1  # strided
    x = rng.uniform(-1, 1, (3, 20, 30)).astype(dtype)
    y = rng.uniform(-1, 1, (3, 30, 10)).astype(dtype)
    check(np.matmul(x, y), x, y, dtype); products += 3                # a batch: one GEMM per entry
a = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
b = rng.uniform(-1, 1, (16, 16)).astype(np.float32)
c = a @ b; products += 1
c[3, 4] += np.float32(1e-4)  # past the bound, (16 + 2) 2^-24 16 = 1.7e-5: the check must reject it
try:
    check(c, a, b, np.float32)
    raise SystemExit("numpy-preload: the bound passed a wrong result")
except AssertionError:
    pass
print(f"numpy-preload: {products} products checked (seed {seed})")
"""


def run(env_extra, seed):
    env = dict(os.environ, **env_extra)
    return subprocess.run(["/usr/bin/python3", "-c", CHILD, str(seed)], env=env, capture_output=True, text=True,
                          timeout=600)


def device_count(stderr):
    m = re.search(r"(\d+) GEMMs on the device.*?, (\d+) on the CPU BLAS, (\d+) fell back", stderr)
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


def main():
    lib = os.path.realpath(sys.argv[1])
    seed = int(os.environ.get("VKGEMM_TEST_SEED", "20261127"))
    print(f"numpy-preload: seed {seed}")
    routed = run({"LD_PRELOAD": lib, "VKGEMM_BLAS_THRESHOLD": "0", "VKGEMM_BLAS_VERBOSE": "1",
                  "VKGEMM_BLAS_VALIDATION": "1"}, seed)
    print(routed.stdout + routed.stderr)
    assert routed.returncode == 0, "the child failed"
    assert re.search(r", 0 validation messages", routed.stderr), "validation messages (or no count of them)"
    checked = int(re.search(r"(\d+) products checked", routed.stdout).group(1))
    counts = device_count(routed.stderr)
    # One GEMM per product checked, each on the device.
    assert counts and counts[0] == checked and counts[1] == 0 and counts[2] == 0, f"not all on the device: {counts}"

    # The emulated precision policy reaches the engine: every product still on the device and right (auto
    # emulates where the device's cost model says so, the span guard keeping the native accuracy).
    emulated = run({"LD_PRELOAD": lib, "VKGEMM_BLAS_THRESHOLD": "0", "VKGEMM_BLAS_VERBOSE": "1",
                    "VKGEMM_BLAS_VALIDATION": "1", "VKGEMM_BLAS_PRECISION": "emulated"}, seed)
    print(emulated.stdout + emulated.stderr)
    assert emulated.returncode == 0, "the child failed with VKGEMM_BLAS_PRECISION=emulated"
    counts = device_count(emulated.stderr)
    assert counts and counts[0] == checked and counts[1] == 0 and counts[2] == 0, f"emulated: {counts}"

    # The check fails without the library: no summary, so no device count.
    plain = run({"VKGEMM_BLAS_VERBOSE": "1"}, seed)
    assert plain.returncode == 0 and device_count(plain.stderr) is None, "the device check passed without the library"
    print("numpy-preload: passed")


if __name__ == "__main__":
    main()
