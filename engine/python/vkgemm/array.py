"""vkgemm.Array: matrices that stay on the device between products (docs/python.md, "Arrays on the device").

An Array is a C-ordered matrix (2-D) or batch of matrices (3-D) of one vkgemm type in a device buffer of one
Engine (the C ABI's vkgemm_buffer). engine.asarray(x) uploads a NumPy array once; engine.matmul on Arrays runs
on the buffers and returns an Array, so a chain of products crosses the bus twice (the first upload, the last
download) instead of three times a product; .numpy() downloads. Host arrays of other libraries come in
through DLPack (np.from_dlpack); an Array exports none: its memory is a Vulkan buffer of vkgemm's own device,
which no other library opens in place.
"""

import ctypes
import math

import numpy as np

from . import _capi
from . import (Error, Timing, _BY_DTYPE, _check, _default_engine, _epilogue, _fail, _host_array, _out_dtype,
               _out_type_code, _product_shape)

_UINT64_LIMIT = 2**64


def _engine_name(engine):
    """The device an engine runs on, for a sentence (a closed engine says so)."""
    try:
        return f"'{engine.device.name}'"
    except Error:
        return "a closed engine"


class Array:
    """A matrix or batch of matrices on one Engine's device: `shape` (2-D, or 3-D: batch, rows, cols), `dtype`
    (a NumPy dtype of a vkgemm type), `engine`. Made by engine.asarray(x), vkgemm.asarray, vkgemm.empty and by
    matmul on Arrays; .numpy() downloads it. Its device memory is freed when the last reference to it goes, or
    with its engine (engine.close()), after which every use of it is refused."""

    def __init__(self, engine, shape, dtype):
        """An uninitialized Array (vkgemm.empty is the public way)."""
        self._handle = None
        dt = np.dtype(dtype)
        if dt not in _BY_DTYPE:
            _fail("unsupported_type", f"vkgemm.Array: {dt} is not a vkgemm type (float32, float64, float16, "
                                      "bfloat16 or uint16 bits, int8, uint8, int32)")
        shape = tuple(shape)
        if len(shape) not in (2, 3) or not all(isinstance(d, (int, np.integer)) and d >= 0 for d in shape):
            _fail("dimension_mismatch", f"vkgemm.Array: shape {shape} is no matrix (rows, cols) or batch of them "
                                        "(batch, rows, cols) of whole numbers >= 0")
        shape = tuple(int(d) for d in shape)
        nbytes = math.prod(shape) * dt.itemsize
        if nbytes >= _UINT64_LIMIT:
            _fail("too_large", f"vkgemm.Array: shape {shape} of {dt} is {nbytes} bytes, past the 2^64 a buffer's "
                               "size can say; split it into smaller arrays")
        lib = _capi.library()
        handle = ctypes.c_void_p()
        # An empty array still owns one byte: a Vulkan buffer is never empty, and nothing reads or writes it.
        _check(lib.vkgemm_buffer_create(engine._live(), max(1, nbytes), ctypes.byref(handle)))
        self._handle, self._destroy = handle, lib.vkgemm_buffer_destroy
        self._engine, self._shape, self._dtype, self._nbytes = engine, shape, dt, nbytes

    def __del__(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle:
            try:
                self._destroy(handle)
            except Exception:  # noqa: BLE001 - interpreter shutdown
                pass

    shape = property(lambda self: self._shape)
    dtype = property(lambda self: self._dtype)
    engine = property(lambda self: self._engine, doc="the Engine whose device holds the array")
    ndim = property(lambda self: len(self._shape))
    size = property(lambda self: math.prod(self._shape))
    nbytes = property(lambda self: self._nbytes)

    def __repr__(self):
        return f"vkgemm.Array(shape={self._shape}, dtype={self._dtype}, device={_engine_name(self._engine)})"

    def _live(self, what):
        """(engine handle, buffer handle), or refused once the engine is closed."""
        if not self._engine._handle:
            _fail("invalid_argument", f"{what}: the array's engine is closed, and its device memory with it; make "
                                      "the array again on an open engine")
        return self._engine._handle, self._handle

    def numpy(self):
        """The array downloaded into a new C-ordered NumPy array of its shape and dtype."""
        engine, buffer = self._live("vkgemm.Array.numpy")
        host = np.empty(self._shape, dtype=self._dtype)
        _check(_capi.library().vkgemm_buffer_read(engine, buffer, 0, host.ctypes.data, self._nbytes))
        return host

    def _upload(self, host):
        engine, buffer = self._live("vkgemm.asarray")
        _check(_capi.library().vkgemm_buffer_write(engine, buffer, 0, host.ctypes.data, self._nbytes))


def upload(engine, x):
    """engine.asarray(x): x (a NumPy array, 2-D or 3-D, of a vkgemm type) copied once into a new Array; an
    Array of this engine as it is."""
    if isinstance(x, Array):
        if x.engine is not engine:
            _fail("invalid_argument", f"vkgemm.asarray: x is an Array of another engine ({_engine_name(x.engine)}) "
                                      f"than {_engine_name(engine)}; Arrays do not move between engines: pass "
                                      "x.numpy() to upload its values")
        return x
    x = _host_array(x, "vkgemm.asarray: x")
    if x.ndim not in (2, 3):
        _fail("dimension_mismatch", f"vkgemm.asarray: x has {x.ndim} dimensions; a matrix has 2, a batch of them 3")
    array = Array(engine, x.shape, x.dtype)
    array._upload(np.ascontiguousarray(x))
    return array


def asarray(x, engine=None):
    """x as an Array: uploaded to `engine` (None: x's own engine when x is an Array, else the default engine,
    the one vkgemm.matmul uses)."""
    if engine is None:
        engine = x.engine if isinstance(x, Array) else _default_engine()
    return upload(engine, x)


def empty(shape, dtype=np.float32, engine=None):
    """A new Array of `shape` and `dtype` on `engine` (None: the default engine), its values undefined: an
    out= to write."""
    return Array(_default_engine() if engine is None else engine, shape, dtype)


# ---- matmul on Arrays --------------------------------------------------------------------------------------

def _own(engine, x, name):
    """x, an Array of `engine`, or refused naming the argument and the fix."""
    if not isinstance(x, Array):
        _fail("invalid_argument", f"matmul: {name} is a {type(x).__name__} but the call runs on vkgemm.Arrays; "
                                  f"pass it as one (engine.asarray({name})), or pass NumPy arrays alone")
    if x.engine is not engine:
        _fail("invalid_argument", f"matmul: {name} lives on another engine ({_engine_name(x.engine)}) than the "
                                  f"call's ({_engine_name(engine)}); Arrays of two engines do not mix: upload "
                                  f"{name}.numpy() to this one")
    return x


def _result(engine, a, b, c, out, beta, shape, dt):
    """The Array C is computed in: out (holding C's values where beta != 0: c must be out), else a new one."""
    want = f"a {dt} vkgemm.Array of shape {shape}"
    for name, x in (("c", c), ("out", out)):
        if x is not None and (_own(engine, x, name).shape != shape or x.dtype != dt):
            _fail("dimension_mismatch", f"matmul: {name} must be {want}, not {x.dtype} {x.shape}")
    if out is a or out is b:
        _fail("invalid_argument", f"matmul: out is {'a' if out is a else 'b'}, which the product reads while it "
                                  "writes C; pass another Array as out")
    if beta != 0:
        if c is None:
            _fail("invalid_argument", f"matmul: beta = {beta} reads C, but no c was given")
        if out is not c:
            _fail("invalid_argument", f"matmul: beta = {beta} reads c, a vkgemm.Array, which is updated in place: "
                                      "pass out=c (there is no device copy of c into a new Array)")
    return out if out is not None else Array(engine, shape, dt)


def _operand(x, batch):
    """A C-ordered Array as the descriptor takes it: (vkgemm_operand, ld, batch stride in elements)."""
    o = _capi.sized(_capi.Operand)
    o.buffer, o.offset = x._live("matmul")[1], 0
    rows, cols = x.shape[-2:]
    stride = rows * cols if x.ndim == 3 else (0 if batch > 1 else -1)  # a 2-D operand serves every entry
    return o, max(1, cols), stride


def matmul(engine, a, b, *, c, out, alpha, beta, trans_a, trans_b, out_type, how, epilogue_args):
    """Engine.matmul where an operand is an Array: every operand an Array of `engine`, the result an Array."""
    for name, x, other in (("a", a, b), ("b", b, a)):
        if not isinstance(x, Array) and isinstance(other, Array):
            _fail("invalid_argument", f"matmul: {name} is a {type(x).__name__} but the other operand is a "
                                      f"vkgemm.Array; pass both as Arrays (engine.asarray({name})) or both as "
                                      "NumPy arrays (.numpy())")
        _own(engine, x, name)
    if a.dtype != b.dtype:
        _fail("unsupported_type", f"matmul: a is {a.dtype} but b is {b.dtype}; vkgemm multiplies one type")
    in_type = _BY_DTYPE[a.dtype]
    batch, m, n, k = _product_shape(a, b, trans_a, trans_b)
    dt = _out_dtype(in_type, a.dtype, out_type)
    out_code = _out_type_code(dt, in_type)
    shape = (m, n) if a.ndim == 2 and b.ndim == 2 else (batch, m, n)
    target = _result(engine, a, b, c, out, beta, shape, dt)
    e, vectors = _epilogue(*epilogue_args, m, n)

    d = _capi.sized(_capi.GemmDesc)
    d.type, d.c_type, d.column_major = in_type, out_code, 0
    d.trans_a, d.trans_b = int(bool(trans_a)), int(bool(trans_b))
    d.m, d.n, d.k, d.batch = m, n, k, batch
    (oa, d.lda, d.stride_a), (ob, d.ldb, d.stride_b) = _operand(a, batch), _operand(b, batch)
    oc, d.ldc, _ = _operand(target, batch)
    d.stride_c = m * n if batch > 1 else -1
    d.alpha, d.beta = float(alpha), float(beta)
    kernel, tile, precision, timing = how
    o = _capi.sized(_capi.GemmOptions)
    o.kernel, o.tile, o.timestamps = str(kernel).encode(), int(tile or 0), 1 if timing else 0
    o.precision = str(precision).encode() if precision else None
    t = _capi.sized(_capi.Timing)
    lib = _capi.library()
    # The epilogue's vectors (n scales, the bias) cross with each call: a buffer of their own for its length.
    held = None
    if vectors is not None:
        held = upload(engine, vectors.reshape(1, -1))
    ov = _operand(held, 1)[0] if held is not None else None
    _check(lib.vkgemm_gemm_buffers(engine._live(), ctypes.byref(d), None if e is None else ctypes.byref(e),
                                   ctypes.byref(oa), ctypes.byref(ob), ctypes.byref(oc),
                                   None if ov is None else ctypes.byref(ov), ctypes.byref(o), ctypes.byref(t)))
    if not timing:
        return target
    gpu = t.gpu_ms if t.gpu_timestamps else None
    return target, Timing(gpu, t.upload_ms, t.download_ms, t.kernel.decode(), t.config.decode())


__all__ = ["Array", "asarray", "empty"]
