#!/usr/bin/python3
"""The drop-in BLAS's entry points called directly (ctypes), each in its own process with its own settings:

- every exported GEMM (sgemm_, dgemm_, cblas_sgemm, cblas_dgemm, cblas_sgemm64_, cblas_dgemm64_,
  scipy_cblas_sgemm64_, scipy_cblas_dgemm64_) in both layouts and every op, with leading dimensions above the
  minimum, alpha and beta, on the device (threshold 0) and off it (threshold "never": the CPU BLAS, or for
  the ILP64 names, which Debian's BLAS lacks, the library's own loops with one warning);
- device failures fall back to the CPU with one warning and the right result: no device (VKGEMM_DEVICE naming
  none), and a policy the engine refuses (VKGEMM_BLAS_PRECISION);
- threads: four threads calling at once, on the device;
- illegal arguments: sgemm_ calls the process's xerbla_ with the reference's parameter number; the quick
  returns leave C alone.
Under the validation layer (any message fails). Each result is checked against float64 products within (k + 2) u |A||B| + |beta| u |C|; C's elements outside
the product (the gaps of ldc) must come back as they were. The bound is shown to reject a moved result.
Usage: test_entry_points.py <libvkgemm_blas.so>   (run by CTest, label e2e)
"""

import os
import re
import subprocess
import sys

CHILD = r"""
import ctypes, sys, threading
import numpy as np

lib = ctypes.CDLL(sys.argv[1])
names, threads = sys.argv[2].split(","), int(sys.argv[3])
rng = np.random.default_rng(int(sys.argv[4]))
I32, I64 = ctypes.c_int, ctypes.c_int64
P = ctypes.c_void_p

def ptr(x):
    return x.ctypes.data_as(P)

def check(c, c0, a_op, b_op, alpha, beta, dtype, ldc_gap):
    ref = alpha * a_op.astype(np.float64) @ b_op.astype(np.float64) + beta * c0.astype(np.float64)
    mag = abs(alpha) * np.abs(a_op).astype(np.float64) @ np.abs(b_op) + abs(beta) * np.abs(c0)
    u = np.finfo(dtype).eps / 2
    bound = (a_op.shape[1] + 2) * u * mag + 1e-300
    assert (np.abs(c - ref) <= bound).all(), f"{np.abs(c - ref).max()} past the bound"
    assert ldc_gap(), "the gaps of ldc were written"

def one(name, layout, ta, tb, m, n, k):
    dtype = np.float64 if "dgemm" in name else np.float32
    scalar = ctypes.c_double if dtype == np.float64 else ctypes.c_float
    alpha, beta = 0.75, -1.25
    # Operands as stored: column-major (Fortran) or row-major, leading dimensions 3 above the minimum.
    order = "F" if layout == "col" else "C"
    def stored(rows, cols):
        big = np.asarray(rng.uniform(-1, 1, (rows + 3, cols + 3)), dtype=dtype, order=order)
        view = big[:rows, :cols]
        ld = (big.shape[0] if order == "F" else big.shape[1])
        return big, view, ld
    a_big, a, lda = stored(*(k, m) if ta else (m, k))
    b_big, b, ldb = stored(*(n, k) if tb else (k, n))
    c_big, c, ldc = stored(m, n)
    c_big_before = c_big.copy()
    c0 = c.copy()
    a_op, b_op = (a.T if ta else a), (b.T if tb else b)
    outside = np.ones(c_big.shape, bool)
    outside[:m, :n] = False
    gap = lambda: np.array_equal(c_big[outside], c_big_before[outside])
    f = getattr(lib, name)
    f.restype = None
    if name in ("sgemm_", "dgemm_"):
        assert layout == "col"
        ch = lambda t: ctypes.c_char_p(b"T" if t else b"n")
        iv = lambda v: ctypes.byref(I32(v))
        f(ch(ta), ch(tb), iv(m), iv(n), iv(k), ctypes.byref(scalar(alpha)), ptr(a_big), iv(lda), ptr(b_big), iv(ldb),
          ctypes.byref(scalar(beta)), ptr(c_big), iv(ldc), ctypes.c_size_t(1), ctypes.c_size_t(1))
    else:
        it = I64 if "64_" in name else I32
        f(ctypes.c_int(101 if layout == "row" else 102), ctypes.c_int(112 if ta else 111), ctypes.c_int(113 if tb else 111),
          it(m), it(n), it(k), scalar(alpha), ptr(a_big), it(lda), ptr(b_big), it(ldb), scalar(beta), ptr(c_big), it(ldc))
    check(c, c0, a_op, b_op, alpha, beta, dtype, gap)
    return 1

def work(results, i):
    try:
        count = 0
        for name in names:
            for layout in (("col",) if name.endswith("gemm_") else ("col", "row")):
                for ta in (False, True):
                    for tb in (False, True):
                        count += one(name, layout, ta, tb, 7 + i, 5, 9)
        results[i] = count
    except BaseException as e:  # a thread's exception would not fail the process: handed to the main thread
        results[i] = e

results = [0] * threads
ts = [threading.Thread(target=work, args=(results, i)) for i in range(threads)]
[t.start() for t in ts]
[t.join() for t in ts]
for r in results:
    if isinstance(r, BaseException):
        raise r
print(f"entry-points: {sum(results)} calls checked")
"""

XERBLA = r"""
import ctypes, sys
import numpy as np
lib = ctypes.CDLL(sys.argv[1])
calls = []
XERBLA = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.POINTER(ctypes.c_int), ctypes.c_size_t)
# No program-defined xerbla_ here: the process's BLAS (Debian's reference, loaded by NumPy) has the one found;
# its message names the routine and the parameter number, then it stops the process (the reference's XERBLA).
one = ctypes.byref(ctypes.c_int(1)); zero = ctypes.byref(ctypes.c_int(0)); two = ctypes.byref(ctypes.c_int(2))
x = np.zeros(16, np.float32)
p = x.ctypes.data_as(ctypes.c_void_p)
f = lib.sgemm_
f.restype = None
# A quick return (m = 0) with an otherwise legal call: nothing happens.
f(b"N", b"N", zero, two, two, ctypes.byref(ctypes.c_float(1)), p, one, p, two, ctypes.byref(ctypes.c_float(1)), p, one, 1, 1)
print("quick return: ok", flush=True)
# lda = 1 < m = 2: parameter 8.
f(b"N", b"N", two, two, two, ctypes.byref(ctypes.c_float(1)), p, one, p, two, ctypes.byref(ctypes.c_float(0)), p, two, 1, 1)
print("not reached")
"""


def child(code, args, env, timeout=600):
    e = dict(os.environ, **env)
    return subprocess.run(["/usr/bin/python3", "-c", code, *args], env=e, capture_output=True, text=True,
                          timeout=timeout)


def summary(stderr):
    m = re.search(r"(\d+) GEMMs on the device.*?, (\d+) on the CPU BLAS, (\d+) fell back", stderr)
    return tuple(map(int, m.groups())) if m else None


def expect(p, what):
    print(f"--- {what}\n{p.stdout}{p.stderr}")
    assert p.returncode == 0, f"{what}: exit {p.returncode}"
    assert not re.search(r"Validation (Error|Warning)|VUID-", p.stdout + p.stderr), f"{what}: validation messages"
    return int(re.search(r"(\d+) calls checked", p.stdout).group(1))


def main():
    lib = os.path.realpath(sys.argv[1])
    seed = os.environ.get("VKGEMM_TEST_SEED", "1127")
    print(f"entry-points: seed {seed}")
    lp64 = "sgemm_,dgemm_,cblas_sgemm,cblas_dgemm"
    ilp64 = "cblas_sgemm64_,cblas_dgemm64_,scipy_cblas_sgemm64_,scipy_cblas_dgemm64_"
    # Importing NumPy loads Debian's libblas.so.3: the CPU BLAS the library finds among the loaded objects.
    pre = "import numpy\n"
    on = {"VKGEMM_BLAS_THRESHOLD": "0", "VKGEMM_BLAS_VERBOSE": "1", "VK_INSTANCE_LAYERS": "VK_LAYER_KHRONOS_validation"}

    n = expect(child(pre + CHILD, [lib, f"{lp64},{ilp64}", "1", seed], on), "every entry point on the device")
    assert summary(child(pre + CHILD, [lib, f"{lp64},{ilp64}", "1", seed], on).stderr) == (n, 0, 0)

    off = dict(on, VKGEMM_BLAS_THRESHOLD="never")
    p = child(pre + CHILD, [lib, lp64, "1", seed], off)
    n = expect(p, "LP64 on the CPU BLAS")
    assert summary(p.stderr) == (0, n, 0), summary(p.stderr)
    p = child(pre + CHILD, [lib, ilp64, "1", seed], off)
    n = expect(p, "ILP64 with no CPU BLAS: the library's loops")
    assert summary(p.stderr) == (0, n, 0) and p.stderr.count("no CPU BLAS has") == 4, p.stderr

    # Device failures: one warning (VERBOSE 0), right results.
    quiet = {"VKGEMM_BLAS_THRESHOLD": "0"}
    for what, env in (("no device", {"VKGEMM_DEVICE": "no such device anywhere"}),
                      ("a refused policy", {"VKGEMM_BLAS_PRECISION": "bogus"})):
        p = child(pre + CHILD, [lib, lp64, "1", seed], dict(quiet, **env))
        expect(p, f"fallback: {what}")
        lines = [l for l in p.stderr.splitlines() if l.startswith("vkgemm-blas:")]
        assert len(lines) == 1, f"{what}: {len(lines)} warnings, not one"
        p = child(pre + CHILD, [lib, lp64, "1", seed], dict(quiet, VKGEMM_BLAS_VERBOSE="1", **env))
        fell = summary(p.stderr)
        assert fell and fell[0] == 0 and fell[1] > 0, fell

    p = child(pre + CHILD, [lib, f"{lp64},{ilp64}", "4", seed], on)
    n = expect(p, "four threads on the device")
    assert summary(p.stderr) == (n, 0, 0), summary(p.stderr)

    p = child(pre + XERBLA, [lib], {"VKGEMM_BLAS_THRESHOLD": "0"})
    print(f"--- xerbla\n{p.stdout}{p.stderr}")
    assert "quick return: ok" in p.stdout and "not reached" not in p.stdout
    assert re.search(r"SGEMM\s+parameter number\s+8 had an illegal value", p.stdout + p.stderr), "xerbla_'s message"

    # The bound rejects a result moved past it: the same check on a perturbed product fails.
    moved = CHILD.replace("    check(c, c0, a_op, b_op, alpha, beta, dtype, gap)",
                          "    c[0, 0] += 1e-3\n    check(c, c0, a_op, b_op, alpha, beta, dtype, gap)")
    p = child(pre + moved, [lib, "cblas_sgemm", "1", seed], on)
    assert p.returncode != 0 and "past the bound" in p.stderr, "a moved result passed"
    print("entry-points: passed")


if __name__ == "__main__":
    main()
