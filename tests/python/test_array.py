"""Arrays that stay on the device (engine/python/vkgemm/array.py) and the C ABI's buffer calls under them
(vkgemm_buffer_*, vkgemm_gemm_buffers): chains of three products on device arrays in every type against
float64 (each step within its bound, the chain within the sum of the steps'), transposes, batches, out= and
beta in place, the epilogue, and every refusal (engines mixed, NumPy and Arrays mixed, types, shapes, a closed
engine; at the C ABI: a buffer of another engine or of a destroyed one, ranges past the end or past 2^64).
Outputs are poisoned (0xff bytes: NaN in the float types) before each product. The seed is test_vkgemm's (VKGEMM_TEST_SEED).
"""

import ctypes
import gc

import numpy as np
import pytest

import vkgemm
from vkgemm import _capi
from test_vkgemm import SEED, TYPES, VALIDATION, check, is_integer, random, rng, unit_roundoff, values


@pytest.fixture(scope="module")
def engine():
    with vkgemm.Engine(validation=VALIDATION) as e:
        yield e
        assert e.validation_messages == 0, f"{e.validation_messages} validation messages"


@pytest.fixture(scope="module")
def other():
    """A second engine (the same device): its Arrays and buffers must not mix with the first's."""
    with vkgemm.Engine(validation=VALIDATION) as e:
        yield e
        assert e.validation_messages == 0, f"{e.validation_messages} validation messages"


def poisoned(engine, shape, dtype):
    """An Array whose every byte is 0xff (a NaN in f16, bf16, f32 and f64; -1 or 255 in the integers)."""
    return engine.asarray(np.full(int(np.prod(shape)) * np.dtype(dtype).itemsize, 0xFF, np.uint8).view(dtype)
                          .reshape(shape))


def out_name(dtype):
    """out_type that keeps a product's C in `dtype`, the next product's input type."""
    return {np.dtype(np.float16): "f16", np.dtype(np.uint16): "bf16"}.get(np.dtype(dtype))


def wrap(x):
    return (x + 2**31) % 2**32 - 2**31


@pytest.mark.parametrize("dtype,out_type", TYPES, ids=lambda v: str(np.dtype(v)) if isinstance(v, type) else str(v))
def test_chain_of_three(engine, dtype, out_type):
    """((A B) X) Y on the device, nothing downloaded between the products: each step within its own bound
    against float64 from its downloaded inputs, and the chain against float64 within the steps' bounds summed
    (exact for the integers, wrapped modulo 2^32 at each step as the device's int32 arithmetic)."""
    g = rng(101, np.dtype(dtype).num, 0 if out_type is None else 1)
    m, k1, k2, k3, n = 19, 23, 17, 21, 13  # odd sizes: no tile boundary falls on an edge
    a, b = random((m, k1), dtype, g), random((k1, k2), dtype, g)
    da, db = engine.asarray(a), engine.asarray(b)
    p1 = engine.matmul(da, db, out_type=out_type)
    assert isinstance(p1, vkgemm.Array) and p1.engine is engine and p1.shape == (m, k2)
    ct = p1.dtype  # the next two products multiply in C's type
    x, y = random((k2, k3), ct, g), random((k3, n), ct, g)
    p2, p3 = poisoned(engine, (m, k3), ct), poisoned(engine, (m, n), ct)
    assert engine.matmul(p1, engine.asarray(x), out_type=out_name(ct), out=p2) is p2
    assert engine.matmul(p2, engine.asarray(y), out_type=out_name(ct), out=p3) is p3
    h1, h2, h3 = p1.numpy(), p2.numpy(), p3.numpy()
    check(h1, a, b)
    check(h2, h1, x)
    check(h3, h2, y)
    if is_integer(a):
        chain = wrap(wrap(wrap(a.astype(np.int64) @ b.astype(np.int64)) @ x.astype(np.int64)) @ y.astype(np.int64))
        assert np.array_equal(h3.astype(np.int64), chain), f"seed {SEED}: the integer chain differs"
        return
    ref = ((values(a) @ values(b)) @ values(x)) @ values(y)
    mag = ((np.abs(values(a)) @ np.abs(values(b))) @ np.abs(values(x))) @ np.abs(values(y))
    gamma = 0.0
    for kk, (i, o) in zip((k1, k2, k3), ((a.dtype, ct), (ct, ct), (ct, ct))):
        u, u_out = unit_roundoff(i, o)
        gamma += (kk + 2) * u + u_out
    bad = ~(np.abs(values(h3) - ref) <= 1.01 * gamma * mag + 1e-30)
    assert not bad.any(), f"seed {SEED}: {bad.sum()} elements of the chain off, first at {np.argwhere(bad)[0]}"


@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
def test_transposes_and_batches(engine, ta, tb):
    """op(A) op(B) with A and B stored transposed; 3-D batches, and a 2-D operand serving every entry."""
    g = rng(102, ta, tb)
    m, n, k, batch = 9, 14, 33, 3
    a = random((batch, k, m) if ta else (batch, m, k), np.float32, g)
    b = random((n, k) if tb else (k, n), np.float32, g)
    got = engine.matmul(engine.asarray(a), engine.asarray(b), trans_a=ta, trans_b=tb)
    assert got.shape == (batch, m, n)
    check(got.numpy(), a, b, ta=ta, tb=tb)
    b3 = random((batch, n, k) if tb else (batch, k, n), np.float64, g)
    a2 = random((k, m) if ta else (m, k), np.float64, g)
    got = engine.matmul(engine.asarray(a2), engine.asarray(b3), trans_a=ta, trans_b=tb, alpha=-1.5)
    check(got.numpy(), a2, b3, alpha=-1.5, ta=ta, tb=tb)


def test_out_and_beta_in_place(engine):
    """out= is written and returned; beta != 0 with out=c reads c's old values on the device."""
    g = rng(103)
    a, b, c = random((12, 20), np.float32, g), random((20, 7), np.float32, g), random((12, 7), np.float32, g)
    da, db = engine.asarray(a), engine.asarray(b)
    out = poisoned(engine, (12, 7), np.float32)
    assert np.isnan(out.numpy()).all()
    assert engine.matmul(da, db, out=out) is out
    check(out.numpy(), a, b)
    dc = engine.asarray(c)
    assert engine.matmul(da, db, c=dc, out=dc, alpha=2, beta=-0.5) is dc
    check(dc.numpy(), a, b, c, alpha=2, beta=-0.5)
    got, t = engine.matmul(da, db, timing=True)
    assert isinstance(got, vkgemm.Array) and t.upload_ms == 0 and t.download_ms == 0 and t.kernel
    check(got.numpy(), a, b)


def test_epilogue_as_the_host_path(engine):
    """The fused epilogue (bias and activation; int8 dequantized per column) on Arrays gives the host path's
    bits: the same kernel on the same values."""
    g = rng(104)
    a, b = random((10, 24), np.float32, g), random((24, 11), np.float32, g)
    bias = g.uniform(-1, 1, 11).astype(np.float32)
    host = engine.matmul(a, b, bias=bias, activation="leaky-relu", slope=0.2)
    dev = engine.matmul(engine.asarray(a), engine.asarray(b), bias=bias, activation="leaky-relu", slope=0.2)
    assert np.array_equal(dev.numpy(), host)
    a8, b8 = random((6, 40), np.int8, g), random((40, 5), np.int8, g)
    scale = g.uniform(0.01, 0.1, 5).astype(np.float32)
    host = engine.matmul(a8, b8, out_type="f32", scale=scale, tensor_scale=0.5, activation="clamp", clamp=(-3, 3))
    dev = engine.matmul(engine.asarray(a8), engine.asarray(b8), out_type="f32", scale=scale, tensor_scale=0.5,
                        activation="clamp", clamp=(-3, 3))
    assert dev.dtype == np.float32 and np.array_equal(dev.numpy(), host)


def test_round_trip_and_empty(engine):
    g = rng(105)
    for dtype, _ in TYPES:
        x = random((2, 5, 3), dtype, g)
        d = vkgemm.asarray(x, engine=engine)
        assert d.shape == x.shape and d.dtype == x.dtype and d.nbytes == x.nbytes and d.ndim == 3
        assert np.array_equal(d.numpy(), x)
    assert vkgemm.asarray(d) is d and engine.asarray(d) is d
    x = np.asfortranarray(random((7, 4), np.float64, g))[::-1]  # strided views are uploaded C-ordered
    assert np.array_equal(engine.asarray(x).numpy(), x)
    z = engine.matmul(engine.asarray(np.zeros((0, 5), np.float32)), engine.asarray(np.ones((5, 3), np.float32)))
    assert z.shape == (0, 3) and z.numpy().shape == (0, 3)
    e = vkgemm.empty((4, 0), np.float32, engine=engine)
    assert e.numpy().shape == (4, 0) and "float32" in repr(e)


def refused(code, words, f, *args, **kwargs):
    with pytest.raises(vkgemm.Error) as e:
        f(*args, **kwargs)
    assert e.value.code == code, e.value
    for w in words:
        assert w in e.value.message, e.value.message
    return e.value.message


def test_python_refusals(engine, other):
    g = rng(106)
    a, b = random((4, 6), np.float32, g), random((6, 3), np.float32, g)
    da, db, ob = engine.asarray(a), engine.asarray(b), other.asarray(b)
    refused("invalid_argument", ["b lives on another engine", "do not mix"], engine.matmul, da, ob)
    refused("invalid_argument", ["a lives on another engine"], other.matmul, da, ob)
    refused("invalid_argument", ["another engine", "x.numpy()"], other.asarray, da)
    refused("invalid_argument", ["b is a ndarray", "both as Arrays"], engine.matmul, da, b)
    refused("invalid_argument", ["a is a ndarray", "both as Arrays"], engine.matmul, a, db)
    refused("invalid_argument", ["a is a ndarray"], engine.matmul, a, b, out=vkgemm.empty((4, 3), engine=engine))
    refused("unsupported_type", ["float32", "float64"], engine.matmul, da, engine.asarray(b.astype(np.float64)))
    refused("dimension_mismatch", ["6 != 4"], engine.matmul, da, engine.asarray(random((4, 3), np.float32, g)))
    refused("dimension_mismatch", ["out must be a float32", "(4, 3)"], engine.matmul, da, db,
            out=vkgemm.empty((3, 4), engine=engine))
    refused("dimension_mismatch", ["out must be a float32"], engine.matmul, da, db,
            out=vkgemm.empty((4, 3), np.float64, engine=engine))
    refused("invalid_argument", ["lives on another engine"], engine.matmul, da, db,
            out=vkgemm.empty((4, 3), engine=other))
    sq = engine.asarray(random((6, 6), np.float32, g))
    refused("invalid_argument", ["out is a", "another Array"], engine.matmul, sq, sq, out=sq)
    refused("invalid_argument", ["beta = 1 reads C, but no c"], engine.matmul, da, db, beta=1)
    dc = engine.asarray(random((4, 3), np.float32, g))
    refused("invalid_argument", ["pass out=c"], engine.matmul, da, db, c=dc, beta=0.5)
    refused("invalid_argument", ["not a NumPy array"], engine.asarray, [[1.0, 2.0]])
    refused("dimension_mismatch", ["1 dimensions"], engine.asarray, np.ones(3, np.float32))
    refused("unsupported_type", ["int64"], engine.asarray, np.ones((2, 2), np.int64))
    refused("dimension_mismatch", ["shape (2, -1)"], vkgemm.empty, (2, -1), engine=engine)
    refused("too_large", ["past the 2^64"], vkgemm.empty, (2**33, 2**33), np.float64, engine=engine)
    refused("too_large", ["maxMemoryAllocationSize"], vkgemm.empty, (2**31, 2**31), np.int8, engine=engine)


def test_closed_engine():
    """engine.close() frees its Arrays' memory: every later use is refused, and dropping them is safe."""
    e = vkgemm.Engine(validation=VALIDATION)
    d = e.asarray(np.ones((3, 3), np.float32))
    held = e.matmul(d, d)
    assert e.validation_messages == 0
    e.close()
    refused("invalid_argument", ["engine is closed"], d.numpy)
    refused("invalid_argument", ["engine is closed"], e.matmul, d, held)
    del d, held
    gc.collect()


# ---- the C ABI's buffer calls, through ctypes ----------------------------------------------------------------

def buffer(engine, nbytes):
    handle = ctypes.c_void_p()
    assert _capi.library().vkgemm_buffer_create(engine._live(), nbytes, ctypes.byref(handle)) == 0
    return handle


def c_refused(status, code, words):
    lib = _capi.library()
    message = lib.vkgemm_last_error().decode()
    assert lib.vkgemm_status_name(status).decode() == code, message
    for w in words:
        assert w in message, message


def operand(handle, offset=0):
    o = _capi.sized(_capi.Operand)
    o.buffer, o.offset = handle, offset
    return o


def desc(m, n, k):
    d = _capi.sized(_capi.GemmDesc)
    d.type, d.c_type, d.m, d.n, d.k, d.batch = vkgemm.F32, -1, m, n, k, 1
    d.stride_a = d.stride_b = d.stride_c = -1
    d.alpha = 1.0
    return d


def test_c_abi_buffers(engine, other):
    """vkgemm_gemm_buffers on buffers written and read through the C ABI, then each refusal at its door."""
    lib, h, ref = _capi.library(), engine._live(), ctypes.byref
    assert lib.vkgemm_abi_feature() >= 1
    g = rng(107)
    a, b = random((5, 8), np.float32, g), random((8, 4), np.float32, g)
    ba, bb, bc = buffer(engine, a.nbytes), buffer(engine, b.nbytes), buffer(engine, 5 * 4 * 4)
    assert lib.vkgemm_buffer_size(ba) == a.nbytes
    assert lib.vkgemm_buffer_write(h, ba, 0, a.ctypes.data, a.nbytes) == 0
    assert lib.vkgemm_buffer_write(h, bb, 0, b.ctypes.data, b.nbytes) == 0
    d = desc(5, 4, 8)
    oa, ob, oc = operand(ba), operand(bb), operand(bc)
    assert lib.vkgemm_gemm_buffers(h, ref(d), None, ref(oa), ref(ob), ref(oc), None, None, None) == 0
    c = np.full((5, 4), np.nan, np.float32)
    assert lib.vkgemm_buffer_read(h, bc, 0, c.ctypes.data, c.nbytes) == 0
    check(c, a, b)

    foreign = buffer(other, 64)
    c_refused(lib.vkgemm_gemm_buffers(h, ref(d), None, ref(oa), ref(operand(foreign)), ref(oc), None, None, None),
              "invalid_argument", ["vkgemm_gemm_buffers: b.buffer is no live buffer of this engine", "another engine"])
    c_refused(lib.vkgemm_buffer_write(h, foreign, 0, a.ctypes.data, 4), "invalid_argument",
              ["vkgemm_buffer_write: buffer is no live buffer of this engine"])
    c_refused(lib.vkgemm_buffer_read(h, foreign, 0, c.ctypes.data, 4), "invalid_argument",
              ["vkgemm_buffer_read: buffer is no live buffer"])
    lib.vkgemm_buffer_destroy(foreign)
    c_refused(lib.vkgemm_buffer_write(h, ba, 2**64 - 8, a.ctypes.data, 16), "invalid_argument",
              ["offset 18446744073709551608 + bytes 16 overflows 64 bits"])
    c_refused(lib.vkgemm_buffer_read(h, ba, 8, c.ctypes.data, a.nbytes), "invalid_argument",
              [f"passes the end of the {a.nbytes}-byte buffer", f"offset + bytes <= {a.nbytes}"])
    c_refused(lib.vkgemm_buffer_write(h, ba, 0, None, 4), "invalid_argument", ["data is null but bytes = 4"])
    assert lib.vkgemm_buffer_write(h, ba, a.nbytes, None, 0) == 0  # an empty range at the end is no copy
    handle = ctypes.c_void_p(1)
    c_refused(lib.vkgemm_buffer_create(h, 0, ref(handle)), "invalid_argument", ["bytes = 0", "at least 1 byte"])
    assert handle.value is None  # *out is null after a failure
    c_refused(lib.vkgemm_buffer_create(h, 2**64 - 1, ref(handle)), "too_large",
              ["bytes = 18446744073709551615 exceeds maxMemoryAllocationSize", engine.device.name])
    c_refused(lib.vkgemm_buffer_create(None, 4, ref(handle)), "invalid_argument", ["engine is null"])
    c_refused(lib.vkgemm_gemm_buffers(h, ref(d), None, None, ref(ob), ref(oc), None, None, None),
              "invalid_argument", ["a is null"])
    short = operand(ba)
    short.struct_size = 8
    c_refused(lib.vkgemm_gemm_buffers(h, ref(d), None, ref(short), ref(ob), ref(oc), None, None, None),
              "invalid_argument", ["a.struct_size = 8", "sizeof(vkgemm_operand)"])
    c_refused(lib.vkgemm_gemm_buffers(h, ref(d), None, ref(operand(None)), ref(ob), ref(oc), None, None, None),
              "invalid_argument", ["a.buffer is null"])
    c_refused(lib.vkgemm_gemm_buffers(h, ref(d), None, ref(operand(ba, 2)), ref(ob), ref(oc), None, None, None),
              "invalid_argument", ["offset 2 is not a multiple"])
    c_refused(lib.vkgemm_gemm_buffers(h, ref(d), None, ref(operand(ba, 4)), ref(ob), ref(oc), None, None, None),
              "buffer_too_small", ["A"])
    e = _capi.sized(_capi.Epilogue)
    e.bias, e.bias_type, e.tensor_scale = 1, vkgemm.F32, 1.0
    c_refused(lib.vkgemm_gemm_buffers(h, ref(d), ref(e), ref(oa), ref(ob), ref(oc), None, None, None),
              "invalid_argument", ["the epilogue reads the bias", "no bias buffer"])
    c_refused(lib.vkgemm_gemm_buffers(h, ref(d), ref(e), ref(oa), ref(ob), ref(oc), ref(operand(bc, 72)), None,
                                      None), "buffer_too_small", ["the bias", "needs 16 bytes from offset 72"])
    for x in (ba, bb, bc):
        lib.vkgemm_buffer_destroy(x)
    c_refused(lib.vkgemm_buffer_write(h, ba, 0, a.ctypes.data, 4), "invalid_argument", ["no live buffer"])


def test_c_abi_engine_destroyed_first():
    """Destroying an engine frees its live buffers' memory; their handles are then refused and destroyed safely."""
    lib = _capi.library()
    e = vkgemm.Engine(validation=VALIDATION)
    kept = buffer(e, 256)
    f = vkgemm.Engine(validation=VALIDATION)
    e.close()
    assert lib.vkgemm_buffer_size(kept) == 0
    c_refused(lib.vkgemm_buffer_write(f._live(), kept, 0, None, 0), "invalid_argument", ["no live buffer"])
    lib.vkgemm_buffer_destroy(kept)
    assert f.validation_messages == 0
    f.close()
