#!/usr/bin/python3
"""The drop-in BLAS's entry points called directly (ctypes), each in its own process with its own settings:

- every exported GEMM (sgemm_, dgemm_, cblas_sgemm, cblas_dgemm, cblas_sgemm64_, cblas_dgemm64_,
  scipy_cblas_sgemm64_, scipy_cblas_dgemm64_) in both layouts and every op, with leading dimensions above the
  minimum, alpha and beta, on the device (threshold 0) and off it (threshold "never": the CPU BLAS, or for
  the ILP64 names, which Debian's BLAS lacks, the library's own loops with one warning);
- device failures fall back to the CPU with one warning and the right result: no device (VKGEMM_DEVICE naming
  none), and a policy the engine refuses (VKGEMM_BLAS_PRECISION);
- VKGEMM_BLAS_CPU the only library searched; a value VKGEMM_BLAS_THRESHOLD, _VERBOSE, _VALIDATION or _CHECK does not
  take: reported once, its default used;
- threads: four threads calling at once, on the device;
- MKL's strided batches and the 16-bit float routines (cblas_gemm_bf16bf16f32, cblas_sbgemm,
  cblas_gemm_f16f16f32), on the device and off it (the CPU BLAS's single GEMM, the library's loops);
- illegal arguments: sgemm_ calls the process's xerbla_ with the reference's parameter number; the quick
  returns leave C alone.
Under the validation layer (any message fails). Each result is checked against float64 products within (k + 2) u |A||B| + |beta| u |C|; C's elements outside
the product (the gaps of ldc) must come back as they were. The bound is shown to reject a moved result.
- VKGEMM_BLAS_CHECK=1: each device product judged on the host, and under a device that returns wrong results
  (tests/blas/wrong_result.cpp preloaded), each caught, said and recomputed on the CPU BLAS.
Usage: test_entry_points.py <libvkgemm_blas.so> <libvkgemm_test_wrong_result.so>   (run by CTest, label e2e)
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

HALF = {"cblas_gemm_bf16bf16f32": "bf16", "cblas_sbgemm": "bf16", "cblas_gemm_f16f16f32": "f16"}

def half_bits(x, kind):  # (bit patterns, their values) of 16-bit floats near x
    if kind == "f16":
        h = x.astype(np.float16)
        return h.view(np.uint16), h.astype(np.float64)
    bits = (x.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)  # truncated: exact values
    return bits, (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)

def stored(rows, cols, order, dtype, kind=None):
    # A matrix as stored, its leading dimension 3 above the minimum: (the buffer, the view of the values the
    # product reads, ld).
    x = np.asarray(rng.uniform(-1, 1, (rows + 3, cols + 3)), order=order)
    if kind:
        bits, vals = half_bits(x, kind)
        big, vals = np.asarray(bits, order=order), np.asarray(vals, order=order)
    else:
        big = np.asarray(x, dtype=dtype, order=order)
        vals = big
    ld = big.shape[0] if order == "F" else big.shape[1]
    return big, vals[:rows, :cols], ld

def one(name, layout, ta, tb, m, n, k):
    if "batch_strided" in name:
        return one_batch(name, layout, ta, tb, m, n, k)
    kind = HALF.get(name)
    dtype = np.float64 if "dgemm" in name else np.float32
    scalar = ctypes.c_double if dtype == np.float64 else ctypes.c_float
    alpha, beta = 0.75, -1.25
    # Operands as stored: column-major (Fortran) or row-major, leading dimensions 3 above the minimum.
    order = "F" if layout == "col" else "C"
    a_big, a, lda = stored(*((k, m) if ta else (m, k)), order, dtype, kind)
    b_big, b, ldb = stored(*((n, k) if tb else (k, n)), order, dtype, kind)
    c_big, _, ldc = stored(m, n, order, dtype)
    c = c_big[:m, :n]
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
        if kind:
            scalar = ctypes.c_float
        f(ctypes.c_int(101 if layout == "row" else 102), ctypes.c_int(112 if ta else 111), ctypes.c_int(113 if tb else 111),
          it(m), it(n), it(k), scalar(alpha), ptr(a_big), it(lda), ptr(b_big), it(ldb), scalar(beta), ptr(c_big), it(ldc))
    check(c, c0, a_op, b_op, alpha, beta, dtype, gap)
    return 1

def one_batch(name, layout, ta, tb, m, n, k, batch=3):
    # MKL's strided batch: entries stride elements apart (a gap of 5 after each), B broadcast (stride 0)
    # when ta and tb differ.
    dtype = np.float64 if "dgemm" in name else np.float32
    scalar = ctypes.c_double if dtype == np.float64 else ctypes.c_float
    alpha, beta = -0.5, 0.25
    col = layout == "col"
    def entries(rows, cols, broadcast=False):
        ld, other = (rows + 3, cols) if col else (cols + 3, rows)
        stride = 0 if broadcast else ld * other + 5
        flat = rng.uniform(-1, 1, (batch - 1) * stride + ld * other).astype(dtype)
        index = np.arange(flat.size)
        def view(x, e):
            seg = x[e * stride:e * stride + ld * other].reshape(other, ld)
            return seg.T[:rows, :cols] if col else seg[:rows, :cols]
        return flat, [view(flat, e) for e in range(batch)], [view(index, e) for e in range(batch)], ld, stride
    a_flat, a, _, lda, sa = entries(*((k, m) if ta else (m, k)))
    b_flat, b, _, ldb, sb = entries(*((n, k) if tb else (k, n)), broadcast=ta != tb)
    c_flat, c, c_index, ldc, sc = entries(m, n)
    c0 = [x.copy() for x in c]
    before = c_flat.copy()
    outside = np.ones(c_flat.size, bool)
    for idx in c_index:
        outside[idx.ravel()] = False
    it = ctypes.c_int
    f = getattr(lib, name)
    f.restype = None
    f(it(101 if layout == "row" else 102), it(112 if ta else 111), it(112 if tb else 111), it(m), it(n), it(k),
      scalar(alpha), ptr(a_flat), it(lda), it(sa), ptr(b_flat), it(ldb), it(sb), scalar(beta), ptr(c_flat), it(ldc),
      it(sc), it(batch))
    for e in range(batch):
        check(c[e], c0[e], a[e].T if ta else a[e], b[e].T if tb else b[e], alpha, beta, dtype,
              lambda: np.array_equal(c_flat[outside], before[outside]))
    return batch

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
# No xerbla_ in the global scope here: the first loaded object's is found (NumPy's own, which raises ValueError
# naming the routine and the parameter number; ctypes then fails the call, so the next line is not reached).
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
    assert not re.search(r", [1-9][0-9]* validation messages", p.stderr), f"{what}: validation messages"
    return int(re.search(r"(\d+) calls checked", p.stdout).group(1))


def main():
    lib, wrong_result = os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2])
    seed = os.environ.get("VKGEMM_TEST_SEED", "1127")
    print(f"entry-points: seed {seed}")
    lp64 = "sgemm_,dgemm_,cblas_sgemm,cblas_dgemm"
    ilp64 = "cblas_sgemm64_,cblas_dgemm64_,scipy_cblas_sgemm64_,scipy_cblas_dgemm64_"
    extra = "cblas_sgemm_batch_strided,cblas_dgemm_batch_strided,cblas_gemm_bf16bf16f32,cblas_sbgemm,cblas_gemm_f16f16f32"
    # Importing NumPy loads Debian's libblas.so.3: the CPU BLAS the library finds among the loaded objects.
    pre = "import numpy\n"
    on = {"VKGEMM_BLAS_THRESHOLD": "0", "VKGEMM_BLAS_VERBOSE": "1", "VKGEMM_BLAS_VALIDATION": "1"}

    p = child(pre + CHILD, [lib, f"{lp64},{ilp64},{extra}", "1", seed], on)
    n = expect(p, "every entry point on the device")
    batched = 2 * 8 * 2  # each strided batch (3 entries) checked as 3 calls, counted once
    assert summary(p.stderr) == (n - batched, 0, 0), summary(p.stderr)

    off = dict(on, VKGEMM_BLAS_THRESHOLD="never")
    p = child(pre + CHILD, [lib, lp64, "1", seed], off)
    n = expect(p, "LP64 on the CPU BLAS")
    assert summary(p.stderr) == (0, n, 0), summary(p.stderr)
    p = child(pre + CHILD, [lib, ilp64, "1", seed], off)
    n = expect(p, "ILP64 with no CPU BLAS: the library's loops")
    assert summary(p.stderr) == (0, n, 0) and p.stderr.count("no CPU BLAS has") == 4, p.stderr
    p = child(pre + CHILD, [lib, extra, "1", seed], off)
    n = expect(p, "batches and 16-bit floats off the device: the CPU BLAS's single GEMM, the library's loops")
    assert summary(p.stderr) == (0, n - batched, 0) and p.stderr.count("no CPU BLAS has") == 3, p.stderr

    # VKGEMM_BLAS_CPU names the only library searched: one that is not there leaves the LP64 names to the
    # library's own loops, though Debian's BLAS is loaded.
    p = child(pre + CHILD, [lib, lp64, "1", seed], dict(off, VKGEMM_BLAS_CPU="/nonexistent/libblas.so.3"))
    n = expect(p, "VKGEMM_BLAS_CPU naming no library: the library's loops")
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

    # A setting the library does not take: reported once, naming the variable, its value and what it takes,
    # and its default used in its place (the right results all the same).
    refusals = (("VKGEMM_BLAS_THRESHOLD", "12x", 'a count (m*n*k) or "never"', "1073741824"),
                ("VKGEMM_BLAS_VERBOSE", "loud", "0, 1 or 2", "0"),
                ("VKGEMM_BLAS_VALIDATION", "yes", "0 or 1", "0"),
                ("VKGEMM_BLAS_CHECK", "on", "0 or 1", "0"))
    for variable, value, takes, default in refusals:
        p = child(pre + CHILD, [lib, "sgemm_,cblas_dgemm", "1", seed], dict(on, **{variable: value}))
        n = expect(p, f"{variable}={value} refused")
        sentence = f"vkgemm-blas: {variable}={value} is not {takes}; using {default}\n"
        assert p.stderr.count(sentence) == 1, f"{variable}={value}: not refused once as {sentence!r}"
        if variable == "VKGEMM_BLAS_THRESHOLD":  # the default threshold leaves these small products on the CPU
            assert summary(p.stderr) == (0, n, 0), summary(p.stderr)
        elif variable == "VKGEMM_BLAS_VERBOSE":  # verbosity 0: no summary
            assert summary(p.stderr) is None, p.stderr
        elif variable == "VKGEMM_BLAS_CHECK":  # no check: the summary counts none
            assert summary(p.stderr) == (n, 0, 0) and "checked on the host" not in p.stderr, p.stderr
        else:  # no validation layer: the summary counts no messages
            assert summary(p.stderr) == (n, 0, 0) and "validation messages" not in p.stderr, p.stderr

    p = child(pre + CHILD, [lib, f"{lp64},{ilp64},{extra}", "4", seed], on)
    n = expect(p, "four threads on the device")
    assert summary(p.stderr) == (n - 4 * batched, 0, 0), summary(p.stderr)

    # VKGEMM_BLAS_CHECK=1: every device product judged on the host by the sampled check, none failing; then
    # under a device whose results are wrong (wrong_result.cpp preloaded: one element of each f32 or f64 C
    # moved off), every product fails the check, is said, and the program gets the CPU BLAS's result (which the
    # child checks; without the check's recomputing it fails there).
    checked = lambda err: tuple(map(int, re.search(r"(\d+) checked on the host, (\d+) of them failed", err).groups()))
    p = child(pre + CHILD, [lib, f"{lp64},{ilp64},{extra}", "1", seed], dict(on, VKGEMM_BLAS_CHECK="1"))
    n = expect(p, "every entry point on the device, each result checked on the host")
    assert summary(p.stderr) == (n - batched, 0, 0) and checked(p.stderr) == (n - batched, 0), p.stderr
    p = child(pre + CHILD, [lib, f"{lp64},{ilp64},{extra}", "1", seed],
              dict(on, VKGEMM_BLAS_CHECK="1", LD_PRELOAD=wrong_result))
    n = expect(p, "a device whose results are wrong, each caught by the check and recomputed on the CPU BLAS")
    calls = n - batched  # every C here is f32 or f64: every product fails
    assert p.stderr.count("FAILED the check, recomputed on the CPU BLAS") == calls, p.stderr
    assert summary(p.stderr) == (0, calls, 0) and checked(p.stderr) == (calls, calls), p.stderr

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
