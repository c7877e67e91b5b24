"""The Python module (engine/python/vkgemm) on the default device (lavapipe here): every type, batches,
strides, out=, bad input, 0-size arrays, NaN; each result against a reference in float64 (exact int64 for the
integer types, wrapped modulo 2^32), outputs poisoned first. The seed is printed; VKGEMM_TEST_SEED sets it.
Run: PYTHONPATH=build/release/python python3 -m pytest tests/python (CTest: python.module, label e2e).
"""

import ctypes
import os
import threading
import time

import numpy as np
import pytest

import vkgemm

SEED = int(os.environ.get("VKGEMM_TEST_SEED", "1127"))
print(f"vkgemm python tests: seed {SEED}")


VALIDATION = os.environ.get("VKGEMM_TEST_VALIDATION", "1") != "0"


@pytest.fixture(scope="module")
def engine():
    # Under the validation layer, as the C++ suites run: any message fails the suite.
    with vkgemm.Engine(validation=VALIDATION) as e:
        yield e
        assert e.validation_messages == 0, f"{e.validation_messages} validation messages"


def rng(*salt):
    return np.random.default_rng([SEED, *salt])


def bf16_bits(x):
    """float32 -> bfloat16 bit patterns (uint16), rounded to nearest even."""
    u = x.astype(np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def bf16_value(bits):
    return (bits.astype(np.uint32) << 16).view(np.float32)


def values(x):
    """What the device multiplies: bf16 bit patterns decoded, everything else as it is, in float64."""
    return bf16_value(x).astype(np.float64) if x.dtype == np.uint16 else x.astype(np.float64)


def is_integer(x):
    return x.dtype in (np.int8, np.uint8, np.int32)  # uint16 holds bf16 bit patterns


def op(x, t):
    return np.swapaxes(x, -1, -2) if t else x


def reference(a, b, c, alpha, beta, ta, tb):
    if is_integer(a):  # exact: int64 sums, then wrapped modulo 2^32 as the device's int32 arithmetic
        p = np.matmul(op(a, ta).astype(np.int64), op(b, tb).astype(np.int64)) * int(alpha)
        if beta:
            p = p + int(beta) * c.astype(np.int64)
        return ((p + 2**31) % 2**32 - 2**31).astype(np.int64), np.zeros(p.shape)
    pa, pb = op(values(a), ta), op(values(b), tb)
    ref = alpha * np.matmul(pa, pb)
    mag = abs(alpha) * np.matmul(np.abs(pa), np.abs(pb))
    if beta:
        ref = ref + beta * values(c)
        mag = mag + abs(beta) * np.abs(values(c))
    return ref, mag


def unit_roundoff(in_dtype, out_dtype):
    """(the sums' unit roundoff, the output rounding's) for a product of this type."""
    sums = 2.0**-53 if in_dtype == np.float64 else 2.0**-24
    out = {np.dtype(np.float16): 2.0**-11, np.dtype(np.uint16): 2.0**-8}.get(np.dtype(out_dtype), 0.0)
    return sums, out


def check(got, a, b, c=None, alpha=1, beta=0, ta=False, tb=False):
    """Raises AssertionError when `got` is not alpha op(a) op(b) + beta c within the error bound."""
    ref, mag = reference(a, b, c, alpha, beta, ta, tb)
    if is_integer(a):
        assert np.array_equal(got.astype(np.int64), ref), f"seed {SEED}: integer result differs"
        return
    k = op(a, ta).shape[-1]
    u, u_out = unit_roundoff(a.dtype, got.dtype)
    bound = (k + 2) * u * mag + u_out * np.abs(ref) + 1e-30
    err = np.abs(values(got) - ref)
    bad = ~(err <= bound)
    assert not bad.any(), f"seed {SEED}: {bad.sum()} elements off, first at {np.argwhere(bad)[0]}"


def random(shape, dtype, g):
    if dtype == np.uint16:
        return bf16_bits(g.uniform(-1, 1, shape))
    if np.dtype(dtype).kind == "i":
        lo, hi = (-128, 128) if dtype == np.int8 else (-1000, 1000)
        return g.integers(lo, hi, shape).astype(dtype)
    if np.dtype(dtype).kind == "u":
        return g.integers(0, 256, shape).astype(dtype)
    return g.uniform(-1, 1, shape).astype(dtype)


TYPES = [(np.float32, None), (np.float64, None), (np.float16, None), (np.float16, "f16"), (np.uint16, None),
         (np.uint16, "bf16"), (np.int8, None), (np.uint8, None), (np.int32, None)]


def test_devices():
    ds = vkgemm.devices()
    assert ds and all(d.name for d in ds)
    assert vkgemm.version().count(".") == 2


@pytest.mark.parametrize("dtype,out_type", TYPES)
def test_every_type(engine, dtype, out_type):
    g = rng(1, TYPES.index((dtype, out_type)))
    a, b = random((19, 23), dtype, g), random((23, 17), dtype, g)
    got = engine.matmul(a, b, out_type=out_type)
    check(got, a, b)
    c = np.array(got)  # beta reads C (of C's type)
    alpha, beta = (3, -2) if is_integer(a) else (0.5, 1.5)
    got2 = engine.matmul(a, b, c=c, alpha=alpha, beta=beta, out_type=out_type)
    check(got2, a, b, c, alpha, beta)


@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("tb", [False, True])
def test_every_op(engine, ta, tb):
    g = rng(2, ta, tb)
    a = random((13, 21) if not ta else (21, 13), np.float32, g)
    b = random((21, 8) if not tb else (8, 21), np.float32, g)
    out = np.full((13, 8), np.nan, np.float32)  # poisoned
    got = engine.matmul(a, b, trans_a=ta, trans_b=tb, out=out)
    assert got is out
    check(got, a, b, ta=ta, tb=tb)


def test_batched_and_broadcast(engine):
    g = rng(3)
    a, b = random((4, 9, 12), np.float32, g), random((4, 12, 7), np.float32, g)
    check(engine.matmul(a, b), a, b)
    b2 = random((12, 7), np.float32, g)  # one B for every entry
    got = engine.matmul(a, b2)
    assert got.shape == (4, 9, 7)
    check(got, a, np.broadcast_to(b2, (4, 12, 7)))
    a2 = random((9, 12), np.float64, g)
    b3 = random((3, 12, 5), np.float64, g)
    check(engine.matmul(a2, b3), np.broadcast_to(a2, (3, 9, 12)), b3)


def test_strides_and_orders(engine):
    g = rng(4)
    big = random((40, 50), np.float32, g)
    cases = [
        (np.asfortranarray(big[:10, :12]), big[:12, :9]),     # Fortran-ordered A
        (big[:10, :12], np.asfortranarray(big[:12, :9])),     # Fortran-ordered B
        (big[::2, 1:13], big[3:15, ::3]),                     # strided views (ld, step)
        (big[:12, :10].T, big[:9, :12].T),                    # transposed views
        (big[::-1, :12][:10], big[:12, ::-1][:, :9]),         # negative strides: copied
    ]
    for a, b in cases:
        check(engine.matmul(a, b), a, b)
    # Fortran-ordered out (a column-major call) and a strided out (copied and written back).
    a, b = big[:10, :12], big[:12, :9]
    out = np.asfortranarray(np.full((10, 9), np.nan, np.float32))
    check(engine.matmul(a, b, out=out), a, b)
    holder = np.full((20, 18), np.nan, np.float32)
    got = engine.matmul(a, b, out=holder[::2, ::2])
    check(got, a, b)
    assert np.isnan(holder[1::2]).all(), "elements outside out= were written"
    # A batch of strided views, and out = c in place.
    stack = random((6, 20, 20), np.float32, g)
    a, b = stack[::2, :8, :5], stack[1::2, 2:7, ::3]
    check(engine.matmul(a, b), a, b)
    c = random((3, 8, 7), np.float32, g)
    c0 = c.copy()
    assert engine.matmul(a, b, c=c, out=c, beta=1) is c
    check(c, a, b, c0, 1, 1)


def test_bad_input(engine):
    f32 = np.ones((4, 4), np.float32)
    with pytest.raises(vkgemm.Error) as e:
        engine.matmul(f32, np.ones((4, 4), np.float64))
    assert e.value.code == "unsupported_type"
    for dtype in (np.int64, np.complex64, np.bool_):
        with pytest.raises(vkgemm.Error, match="not a vkgemm type"):
            engine.matmul(np.ones((2, 2), dtype), np.ones((2, 2), dtype))
    with pytest.raises(vkgemm.Error) as e:
        engine.matmul(f32, np.ones((5, 3), np.float32))
    assert e.value.code == "dimension_mismatch" and "4 != 5" in e.value.message
    with pytest.raises(vkgemm.Error, match="dimensions"):
        engine.matmul(np.ones(4, np.float32), f32)
    with pytest.raises(vkgemm.Error, match="batch"):
        engine.matmul(np.ones((2, 4, 4), np.float32), np.ones((3, 4, 4), np.float32))
    with pytest.raises(vkgemm.Error, match="reads C"):
        engine.matmul(f32, f32, beta=1)
    with pytest.raises(vkgemm.Error, match="out must be"):
        engine.matmul(f32, f32, out=np.ones((4, 5), np.float32))
    with pytest.raises(vkgemm.Error, match="not a NumPy array"):
        engine.matmul([[1.0]], f32)
    # Refusals of the engine itself carry its code and sentence through the C ABI.
    with pytest.raises(vkgemm.Error) as e:
        engine.matmul(f32, f32, kernel="fastest")
    assert e.value.code == "invalid_argument" and "fastest" in e.value.message
    with pytest.raises(vkgemm.Error) as e:
        engine.matmul(f32, f32, precision="emulated-f64")
    assert e.value.code == "invalid_argument" and "native, emulated" in e.value.message
    with pytest.raises(vkgemm.Error) as e:
        engine.matmul(np.ones((4, 4), np.int32), np.ones((4, 4), np.int32), alpha=0.5)
    assert e.value.code == "invalid_argument" and "alpha" in e.value.message
    with pytest.raises(vkgemm.Error) as e:
        vkgemm.Engine(device="no such device anywhere")
    assert e.value.code == "device_not_found"


class _DLPackOnly:
    """A host array of another library as vkgemm sees it: __dlpack__ and __dlpack_device__ only (device_type 1,
    kDLCPU; or another to be refused)."""

    def __init__(self, x, device_type=1):
        self._x, self._device = x, device_type

    def __dlpack__(self, **kwargs):
        return self._x.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return (self._device, 0)


def test_dlpack_host_arrays(engine):
    """Host arrays of other libraries through DLPack: taken without a copy on the Python side, right; device
    memory of another API refused, naming it."""
    rng = np.random.default_rng(61)
    a, b = rng.uniform(-1, 1, (9, 7)).astype(np.float32), rng.uniform(-1, 1, (7, 5)).astype(np.float32)
    c = engine.matmul(_DLPackOnly(a), _DLPackOnly(b))
    assert np.allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    d = engine.asarray(_DLPackOnly(a))
    assert np.array_equal(d.numpy(), a)
    for device, name in ((2, "CUDA"), (10, "ROCm"), (99, "type 99")):
        with pytest.raises(vkgemm.Error) as e:
            engine.matmul(_DLPackOnly(a, device), b)
        assert e.value.code == "invalid_argument" and name in e.value.message and "not host memory" in e.value.message
        with pytest.raises(vkgemm.Error, match="not host memory"):
            engine.asarray(_DLPackOnly(a, device))
    try:
        import torch
    except ImportError:
        return
    t = torch.from_numpy(a)  # a PyTorch CPU tensor, where PyTorch is installed (the GPU host)
    assert np.allclose(engine.matmul(t, b), a @ b, rtol=1e-5, atol=1e-5)


def test_emulated_precision(engine):
    """precision="emulated" and kernel="ozaki" through the module: right within the native bound, and a
    row whose exponents spread past what the moduli cover refused by the span guard to the native kernel
    (the same bits as kernel="auto")."""
    rng = np.random.default_rng(20261129)
    a, b = rng.uniform(-1, 1, (40, 96)), rng.uniform(-1, 1, (96, 24))
    bound = (96 + 2) * 2.0 ** -53 * (np.abs(a) @ np.abs(b))
    for options in ({"precision": "emulated"}, {"kernel": "ozaki"}, {"kernel": "ozaki", "precision": "emulated"}):
        c = engine.matmul(a, b, **options)
        assert (np.abs(c - a @ b) <= 2 * bound).all(), options
    spread = a * np.exp2(rng.integers(-60, 61, a.shape))
    native = engine.matmul(spread, b)
    assert np.array_equal(engine.matmul(spread, b, kernel="ozaki"), native)


def test_past_the_allocation_limit_in_blocks():
    """A product whose matrices pass what the device allocates at once runs in blocks that fit (here under a
    limit lowered to 96 KiB, VKGEMM_TEST_MAX_ALLOCATION, read when an engine is made): transposes, beta, f64."""
    os.environ["VKGEMM_TEST_MAX_ALLOCATION"] = str(96 << 10)
    try:
        small = vkgemm.Engine(validation=VALIDATION)
    finally:
        del os.environ["VKGEMM_TEST_MAX_ALLOCATION"]
    with small:
        g = rng(96)
        for dtype, ta, tb, beta in ((np.float32, False, False, 0), (np.float32, True, True, 0.5),
                                    (np.float64, False, True, 2)):
            a = random((230, 170) if ta else (170, 230), dtype, g)
            b = random((140, 230) if tb else (230, 140), dtype, g)
            c = random((170, 140), dtype, g)
            got, t = small.matmul(a, b, c=c, beta=beta, trans_a=ta, trans_b=tb, timing=True)
            assert "blocks of" in t.config, t.config
            check(got, a, b, c, 1, beta, ta, tb)
        assert small.validation_messages == 0


def test_zero_size(engine):
    z = engine.matmul(np.ones((0, 3), np.float32), np.ones((3, 4), np.float32))
    assert z.shape == (0, 4)
    z = engine.matmul(np.ones((2, 3), np.float32), np.ones((3, 0), np.float32))
    assert z.shape == (2, 0)
    # k = 0: an empty sum, so C = beta C (and zeros with beta 0, whatever out held).
    out = np.full((2, 5), np.nan, np.float32)
    got = engine.matmul(np.ones((2, 0), np.float32), np.ones((0, 5), np.float32), out=out)
    assert (got == 0).all()
    c = np.full((2, 5), 3.0, np.float32)
    got = engine.matmul(np.ones((2, 0), np.float32), np.ones((0, 5), np.float32), c=c, beta=2)
    assert (got == 6).all()
    assert engine.matmul(np.ones((0, 2, 2), np.float32), np.ones((0, 2, 2), np.float32)).shape == (0, 2, 2)


def test_nan(engine):
    a, b = np.ones((3, 4), np.float32), np.ones((4, 2), np.float32)
    c = np.full((3, 2), np.nan, np.float32)
    assert (engine.matmul(a, b, c=c, beta=0) == 4).all()  # beta 0 never reads C
    a[1, 2] = np.nan
    got = engine.matmul(a, b)
    assert np.isnan(got[1]).all() and (got[[0, 2]] == 4).all()


def test_timing(engine):
    a = np.ones((64, 64), np.float32)
    got, t = engine.matmul(a, a, timing=True)
    assert (got == 64).all()
    assert t.kernel and t.kernel != "auto"
    assert t.gpu_ms is None or t.gpu_ms >= 0
    if engine.device.timestamps:
        assert t.gpu_ms is not None


def test_module_matmul_and_threads(engine):
    # The default engine, from several threads at once; the GIL is released while each runs.
    a = random((160, 160), np.float32, rng(5))
    results, ticks = [None] * 3, [0]

    def work(i):
        results[i] = vkgemm.matmul(a, a)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(3)]
    for t in threads:
        t.start()
    while any(t.is_alive() for t in threads):
        ticks[0] += 1
        time.sleep(0)
    for t in threads:
        t.join()
    assert ticks[0] > 0  # this thread ran while the products did
    for r in results:
        check(r, a, a)


def test_the_check_can_fail(engine):
    """Each bound rejects a wrong result: one element moved past it, for a float and an integer type."""
    g = rng(6)
    a, b = random((8, 30), np.float32, g), random((30, 6), np.float32, g)
    got = engine.matmul(a, b)
    got[2, 3] += 64 * 2.0**-24 * np.abs(a[2]) @ np.abs(b[:, 3])
    with pytest.raises(AssertionError):
        check(got, a, b)
    a, b = random((5, 7), np.int8, g), random((7, 4), np.int8, g)
    got = engine.matmul(a, b)
    got[0, 0] += 1
    with pytest.raises(AssertionError):
        check(got, a, b)
    a16, b16 = random((5, 9), np.float16, g), random((9, 4), np.float16, g)
    got = engine.matmul(a16, b16, out_type="f16")
    got[1, 1] = np.float16(float(got[1, 1]) * (1 + 2.0**-9) + 2.0**-9)
    with pytest.raises(AssertionError):
        check(got, a16, b16)


def test_gil_released(engine):
    """Another Python thread runs while the device works: this thread's clock readings fall inside the call's
    span. A foreign call holding the GIL leaves none there (shown with ctypes.PyDLL, which holds it)."""
    a = random((512, 512), np.float32, rng(7))  # about a second on lavapipe
    span, result = [], []
    done = threading.Event()

    def work():
        begin = time.perf_counter()
        result.append(engine.matmul(a, a))
        span.extend([begin, time.perf_counter()])
        done.set()

    readings = []
    t = threading.Thread(target=work)
    t.start()
    while not done.is_set():
        readings.append(time.perf_counter())
        for _ in range(1000):
            pass
    t.join()
    check(result[0], a, a)
    begin, end = span[0] + 0.01, span[1] - 0.01  # a switch interval's slack at each end
    inside = sum(begin < r < end for r in readings)
    print(f"gil: {inside} readings inside the {span[1] - span[0]:.3f} s call")
    assert end - begin < 0.05 or inside >= 10, f"{inside} readings inside the call: the GIL was held"


def test_epilogue_and_dequantization(engine):
    """The fused epilogue through the C ABI: f32 with a bias and GELU (tanh form) against float64 numpy; i8 into
    f32 and f16 with per-column scales, a bias and ReLU against the exact int64 sums; each bound checked to
    fail on the scale skipped; refusals name the argument."""
    g = rng(45)
    a = g.uniform(-1, 1, (37, 29)).astype(np.float32)
    b = g.uniform(-1, 1, (29, 45)).astype(np.float32)
    bias = g.uniform(-1, 1, 45).astype(np.float32)
    got = engine.matmul(a, b, bias=bias, activation="gelu-tanh")
    x = a.astype(np.float64) @ b.astype(np.float64) + bias
    want = 0.5 * x * (1 + np.tanh(0.7978845608028654 * (x + 0.044715 * x ** 3)))
    assert np.max(np.abs(got - want)) < 1e-5
    qa = g.integers(-128, 128, (37, 29), dtype=np.int8)
    qb = g.integers(-128, 128, (29, 45), dtype=np.int8)
    scales = g.uniform(1 / 128, 1 / 8, 45).astype(np.float32)
    sums = qa.astype(np.int64) @ qb.astype(np.int64)
    for out_type, tol in (("f32", 1e-5), ("f16", 2e-3)):
        got = engine.matmul(qa, qb, out_type=out_type, scale=scales, tensor_scale=1 / 4096, bias=bias, activation="relu")
        want = np.maximum(sums * scales.astype(np.float64) / 4096 + bias, 0)
        err = np.abs(got.astype(np.float64) - want)
        assert np.all(err <= tol * (1 + np.abs(want))), f"{out_type}: worst {err.max()}"
        skipped = np.maximum(sums / 4096 + bias, 0)  # the scale skipped: far outside the same bound
        assert np.any(np.abs(got.astype(np.float64) - skipped) > tol * (1 + np.abs(skipped)))
    got = engine.matmul(qa, qb, out_type="f32", scale=0.5)  # per tensor, no vectors
    assert np.array_equal(got, (sums * 0.5).astype(np.float32))
    with pytest.raises(vkgemm.Error) as e:
        engine.matmul(a, b, scale=0.5)
    assert "applies to an i8 or u8 product" in str(e.value)
    with pytest.raises(vkgemm.Error) as e:
        engine.matmul(qa, qb, out_type="f32", scale=scales[:3])
    assert "n = 45 values" in str(e.value)
    with pytest.raises(vkgemm.Error) as e:
        engine.matmul(a, b, activation="swish")
    assert "activation 'swish'" in str(e.value)


def test_epilogue_parameters_in_f64(engine):
    """An f64 product's leaky ReLU slope and clamp bounds are doubles (0.7, not the float nearest it): the
    result within the f64 bound of float64 numpy, where a float parameter would err by about 1e-8."""
    g = rng(46)
    a = g.uniform(-1, 1, (37, 29))
    b = g.uniform(-1, 1, (29, 45))
    x = 3 * (a @ b)
    mag = 3 * (np.abs(a) @ np.abs(b))
    bound = 31 * 2.0**-53 * mag + 2.0**-53 * np.abs(x)
    got = engine.matmul(a, b, alpha=3, activation="leaky-relu", slope=0.7)
    assert np.all(np.abs(got - np.where(x >= 0, x, 0.7 * x)) <= 0.7 * bound + 1e-300)
    got = engine.matmul(a, b, alpha=3, activation="clamp", clamp=(-0.3, 0.7))
    want = np.clip(x, -0.3, 0.7)
    assert np.any(want == 0.7) and np.any(want == -0.3)
    assert np.all(np.abs(got - want) <= bound)
    as_float = np.clip(x, np.float32(-0.3), np.float32(0.7))  # the bounds as floats: outside the bound
    assert np.any(np.abs(as_float - want) > bound)


def test_clamp_needs_both_bounds(engine):
    """activation="clamp" without both bounds is refused, naming the missing one (a default of 0 would zero C):
    by matmul, and by the C ABI itself when a vkgemm_epilogue leaves has_lo or has_hi 0."""
    a = np.ones((4, 4), np.float32)
    for clamp, missing in ((None, "got clamp=None"), ((None, 0.7), "lo is missing"), ((-0.3, None), "hi is missing"),
                           ((None, None), "lo and hi are missing"), (0.7, "got clamp=0.7")):
        with pytest.raises(vkgemm.Error) as e:
            engine.matmul(a, a, activation="clamp", clamp=clamp)
        assert e.value.code == "invalid_argument" and missing in str(e.value), str(e.value)
    from vkgemm import _capi
    d = _capi.sized(_capi.GemmDesc)
    d.type, d.c_type, d.m, d.n, d.k, d.alpha, d.batch = 0, -1, 4, 4, 4, 1.0, 1
    d.stride_a = d.stride_b = d.stride_c = -1
    c = np.zeros((4, 4), np.float32)
    for has_lo, has_hi, missing in ((0, 1, "lo is not set"), (1, 0, "hi is not set"), (0, 0, "lo and hi are not set")):
        e = _capi.sized(_capi.Epilogue)
        e.activation, e.bias_type, e.tensor_scale = 8, 0, 1.0
        e.has_lo, e.has_hi, e.lo, e.hi = has_lo, has_hi, -0.3, 0.7
        status = _capi.library().vkgemm_gemm_epilogue(engine._live(), ctypes.byref(d), ctypes.byref(e), a.ctypes.data,
                                                      a.ctypes.data, c.ctypes.data, None, None, None)
        message = _capi.library().vkgemm_last_error().decode()
        assert _capi.library().vkgemm_status_name(status).decode() == "invalid_argument", message
        assert "clamp needs both bounds" in message and missing in message, message
    assert not c.any()  # refused before any work


# The failures the fault layer injects (VkResult, its name, the vkgemm.Error code that must follow).
FAULTS = {-1: ("VK_ERROR_OUT_OF_HOST_MEMORY", "out_of_memory"), -2: ("VK_ERROR_OUT_OF_DEVICE_MEMORY", "out_of_memory"),
          -4: ("VK_ERROR_DEVICE_LOST", "device_lost"), -5: ("VK_ERROR_MEMORY_MAP_FAILED", "vulkan_error")}


def fault_layer(folder):
    """The test-only fault layer (tests/fault_layer) in the loader's chain of every instance made from now on in
    this process, and its controls (the library the loader loads)."""
    for var, value in (("VK_ADD_LAYER_PATH", folder), ("VK_INSTANCE_LAYERS", "VK_LAYER_VKGEMM_fault")):
        os.environ[var] = ":".join(v for v in (value, os.environ.get(var)) if v)
    lib = ctypes.CDLL(os.path.join(folder, "libvkgemm_fault_layer.so"))
    lib.vkgemm_fault_arm.argtypes = [ctypes.c_uint64, ctypes.c_int32, ctypes.c_char_p]
    lib.vkgemm_fault_disarm.restype = ctypes.c_bool
    lib.vkgemm_fault_injected.restype = ctypes.c_uint64
    lib.vkgemm_fault_call.argtypes, lib.vkgemm_fault_call.restype = [ctypes.c_uint64], ctypes.c_char_p
    lib.vkgemm_fault_fails.argtypes, lib.vkgemm_fault_fails.restype = [ctypes.c_char_p], ctypes.c_uint32
    return lib


def test_driver_failures():
    """Every counted Vulkan call of an engine's creation and a matmul failed in turn (the fault layer): a
    vkgemm.Error naming the call and the result, then the engine works (out of memory) or says the device is
    lost on every later call; never a wrong result. The engines run without validation: the loader names the
    layer through the messenger (the C++ faults suite walks the same calls under validation)."""
    folder = os.environ.get("VKGEMM_FAULT_LAYER_DIR")
    if not folder:
        pytest.skip("VKGEMM_FAULT_LAYER_DIR is not set (tests/python/run.sh sets it to the build's fault layer)")
    layer = fault_layer(folder)
    g = rng(47)
    a, b = g.uniform(-1, 1, (21, 13)).astype(np.float32), g.uniform(-1, 1, (13, 17)).astype(np.float32)

    def run(e):
        check(e.matmul(a, b), a, b)

    layer.vkgemm_fault_arm(0, 0, None)
    with vkgemm.Engine() as e:
        run(e)
    layer.vkgemm_fault_disarm()
    trace = []
    while (name := layer.vkgemm_fault_call(len(trace) + 1)) is not None:
        trace.append(name.decode())
    counts = {"out_of_memory": 0, "device_lost": 0, "vulkan_error": 0, "refused engines": 0, "not reached": 0}
    for n, function in enumerate(trace, 1):
        fails = layer.vkgemm_fault_fails(function.encode())
        results = [(-1 if n % 2 else -2)] if fails & 3 == 3 else [-1] if fails & 1 else [-2] if fails & 2 else []
        results += [r for bit, r in ((4, -4), (8, -5)) if fails & bit]
        for r in results:
            result, code = FAULTS[r]
            where = f"call {n} ({function}) failed with {result}"
            layer.vkgemm_fault_arm(n, r, function.encode())
            e, error = None, None
            try:
                e = vkgemm.Engine()
                run(e)
            except vkgemm.Error as err:
                error = err
            finally:
                layer.vkgemm_fault_disarm()
            if layer.vkgemm_fault_injected() == 0:  # polls depend on timing: call n was another function
                assert error is None, f"{where}: not reached, yet {error}"
                counts["not reached"] += 1
                continue
            assert error is not None, f"{where}: the failure was swallowed"
            assert error.code == code and function in error.message and result in error.message, f"{where}: {error}"
            if e is None:
                counts["refused engines"] += 1
                continue
            if r == -4:
                with pytest.raises(vkgemm.Error) as later:
                    run(e)
                assert later.value.code == "device_lost", f"{where}, then: {later.value}"
            else:
                run(e)  # the engine works again
            e.close()
            counts[code] += 1
    print(f"python driver failures: {len(trace)} calls walked, {sum(counts.values())} runs: "
          + ", ".join(f"{v} {k}" for k, v in counts.items()))
    assert counts["device_lost"] > 0 and counts["out_of_memory"] > 0
