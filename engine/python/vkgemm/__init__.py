"""vkgemm from Python: GEMM on any Vulkan device, on NumPy arrays (docs/python.md).

    import numpy as np, vkgemm
    c = vkgemm.matmul(a, b)                     # a new array: a @ b on the best device (or VKGEMM_DEVICE)
    e = vkgemm.Engine(device="llvmpipe")        # a chosen device
    c, t = e.matmul(a, b, trans_a=True, alpha=2, timing=True)   # t.gpu_ms: the product's GPU time

Pure Python over the C ABI (libvkgemm_c.so.0) through ctypes: it imports under any Python 3, and ctypes
releases the GIL while the device works.
"""

import collections
import ctypes
import threading

import numpy as np

from . import _capi

__all__ = ["Error", "Device", "Timing", "Engine", "devices", "matmul", "version"]

# vkgemm's element types (vkgemm.h's vkgemm_type) by NumPy dtype. uint16 stands for bf16 bit patterns where
# ml_dtypes is not installed (NumPy has no bfloat16 of its own).
# Numbered by position as the library numbers them (vkgemm_enum_name; a library whose names differ is refused
# at load, and the names.drift test compares these with the engine's table).
_TYPE_NAMES = ["f32", "i32", "f64", "f16", "bf16", "i8", "u8"]
F32, I32, F64, F16, BF16, I8, U8 = range(len(_TYPE_NAMES))
try:
    import ml_dtypes

    _BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # pragma: no cover - depends on the environment
    _BFLOAT16 = None
_BY_DTYPE = {np.dtype(np.float32): F32, np.dtype(np.int32): I32, np.dtype(np.float64): F64,
             np.dtype(np.float16): F16, np.dtype(np.uint16): BF16, np.dtype(np.int8): I8, np.dtype(np.uint8): U8}
if _BFLOAT16 is not None:
    _BY_DTYPE[_BFLOAT16] = BF16


class Error(Exception):
    """A refusal or failure: `code` is vkgemm's ErrorCode name ("invalid_leading_dimension", ...), `message`
    its sentence (the argument, the limit, the device)."""

    def __init__(self, code, message):
        super().__init__(f"{message} [{code}]")
        self.code = code
        self.message = message


Device = collections.namedtuple(
    "Device", "index name vendor type driver api_version device_local_memory max_allocation_size float64 float16 "
              "storage16 storage8 bfloat16 coopmat coopmat2 timestamps")
Timing = collections.namedtuple("Timing", "gpu_ms upload_ms download_ms kernel config")


def _check(status):
    if status != 0:
        lib = _capi.library()
        raise Error(lib.vkgemm_status_name(status).decode(), lib.vkgemm_last_error().decode(errors="replace"))


def _device(info):
    text = lambda b: b.decode(errors="replace")  # noqa: E731
    return Device(info.index, text(info.name), text(info.vendor), text(info.type), text(info.driver),
                  text(info.api_version), info.device_local_memory, info.max_allocation_size, bool(info.float64),
                  bool(info.float16), bool(info.storage16), bool(info.storage8), bool(info.bfloat16),
                  bool(info.coopmat), bool(info.coopmat2), bool(info.timestamps))


def version():
    """The library's version ("0.1.0")."""
    return _capi.library().vkgemm_version().decode()


def devices():
    """Every Vulkan device the loader reports, as Device tuples."""
    lib = _capi.library()
    count = ctypes.c_size_t(0)
    _check(lib.vkgemm_devices(None, 0, ctypes.byref(count)))
    infos = (_capi.DeviceInfo * max(1, count.value))()
    for info in infos:
        info.struct_size = ctypes.sizeof(_capi.DeviceInfo)
    _check(lib.vkgemm_devices(infos, len(infos), ctypes.byref(count)))
    return [_device(infos[i]) for i in range(min(count.value, len(infos)))]


# ---- operands: NumPy arrays as the BLAS description takes them -------------------------------------------

# array: the 3-D array the pointer is taken from; ld, stride: in elements (stride -1: packed); transposed: the
# stored matrices are the transposes of the operand's (the op flips); copied: array is a copy of the operand.
Operand = collections.namedtuple("Operand", "array ld stride transposed copied")


def _fail(code, message):
    raise Error(code, message)


# DLPack's device types whose memory the host reads (dlpack.h): kDLCPU, kDLCUDAHost (pinned), kDLROCMHost,
# kDLCUDAManaged; the names of the others, for the sentence that refuses them.
_DLPACK_HOST = {1, 3, 11, 13}
_DLPACK_NAMES = {2: "CUDA", 4: "OpenCL", 7: "Vulkan", 8: "Metal", 9: "VPI", 10: "ROCm", 12: "ExtDev", 14: "oneAPI",
                 15: "WebGPU", 16: "Hexagon"}


def _host_array(x, what):
    """x as a NumPy array: itself, or a host array of another library through DLPack (np.from_dlpack, no copy:
    a PyTorch CPU tensor, a JAX or CuPy pinned array); refused naming what x is where its memory is not the
    host's."""
    if isinstance(x, np.ndarray):
        return x
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        device, _ = x.__dlpack_device__()
        if int(device) not in _DLPACK_HOST:
            name = _DLPACK_NAMES.get(int(device), f"type {int(device)}")
            _fail("invalid_argument", f"{what} is a {type(x).__name__} in {name} device memory (DLPack), not host "
                                      "memory: vkgemm reads host arrays and its own Arrays; copy it to the host "
                                      "first (e.g. .cpu() or .get())")
        return np.from_dlpack(x)
    _fail("invalid_argument", f"{what} is a {type(x).__name__}, not a NumPy array or a host array with __dlpack__")


def _as_matrix_stack(x, name):
    x = _host_array(x, f"matmul: {name}")
    if x.ndim not in (2, 3):
        _fail("dimension_mismatch", f"matmul: {name} has {x.ndim} dimensions; a matrix has 2, a batch of them 3")
    return x


def _layout(x, row_major, may_transpose):
    """(ld, batch stride, transposed) describing x (3-D: batch, rows, cols) in the given layout, its matrices
    stored as they are or (may_transpose) as their transposes; None when the strides cannot be described."""
    item = x.itemsize
    if any(s % item for s in x.strides):
        return None
    sb, sr, sc = (s // item for s in x.strides)
    _, r, c = x.shape
    inner, outer, s_in, s_out = (c, r, sc, sr) if row_major else (r, c, sr, sc)
    for transposed in (False, True) if may_transpose else (False,):
        if transposed:  # the stored matrix is x's transpose: the axes trade roles
            inner, outer, s_in, s_out = outer, inner, s_out, s_in
        if (inner <= 1 or s_in == 1) and (outer <= 1 or s_out >= max(1, inner)) and sb >= 0:
            ld = s_out if outer > 1 else max(1, inner)
            return ld, (sb if x.shape[0] > 1 else 0), transposed
    return None


def _operand(x, row_major, batch, may_transpose=True):
    """x (2-D or 3-D) as the description takes it, copied only where its strides cannot be described."""
    x3 = x[np.newaxis] if x.ndim == 2 else x
    copied = False
    if x3.size == 0:  # nothing is read or written: a tight description
        inner = x3.shape[2] if row_major else x3.shape[1]
        return Operand(x3, max(1, inner), 0 if x.ndim == 2 else -1, False, False)
    found = _layout(x3, row_major, may_transpose)
    if found is None:
        x3 = np.ascontiguousarray(x3) if row_major else np.asfortranarray(x3.transpose(1, 2, 0)).transpose(2, 0, 1)
        copied = True
        found = _layout(x3, row_major, may_transpose)
    ld, stride, transposed = found
    if x.ndim == 2 and batch > 1:
        stride = 0  # one matrix for every batch entry
    return Operand(x3, ld, stride, transposed, copied)


_OUT_NAMES = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i32": np.int32}


def _out_dtype(in_type, in_dtype, out_type):
    if out_type is None:
        return {F16: np.dtype(np.float32), BF16: np.dtype(np.float32), I8: np.dtype(np.int32),
                U8: np.dtype(np.int32)}.get(in_type, in_dtype)
    if isinstance(out_type, str) and out_type == "bf16":  # the inputs' own dtype: uint16 bits or ml_dtypes'
        return in_dtype if in_type == BF16 else (_BFLOAT16 or np.dtype(np.uint16))
    return np.dtype(_OUT_NAMES.get(out_type, out_type) if isinstance(out_type, str) else out_type)


def _out_type_code(dt, in_type):
    if in_type == BF16 and dt in (np.dtype(np.uint16), _BFLOAT16):
        return BF16
    code = _BY_DTYPE.get(dt)
    if code is None or code == BF16:
        _fail("unsupported_type", f"matmul: C of {dt} is not a vkgemm type")
    return code


class Engine:
    """One Vulkan device and its buffers; matmul runs products on it. Thread-safe (calls run one at a time)."""

    def __init__(self, device=None, *, validation=False):
        """device: an index or part of a device's name (None: VKGEMM_DEVICE, else the best device).
        validation: VK_LAYER_KHRONOS_validation on, each message to stderr and counted (validation_messages)."""
        lib = _capi.library()
        options = _capi.sized(_capi.EngineOptions)
        options.device = None if device is None else str(device).encode()
        options.validation = 1 if validation else 0
        handle = ctypes.c_void_p()
        _check(lib.vkgemm_engine_create_with(ctypes.byref(options), ctypes.byref(handle)))
        self._handle = handle

    def close(self):
        """Frees the device now (else when the engine is garbage-collected), with the memory of its Arrays:
        they refuse every use after it."""
        if getattr(self, "_handle", None):
            _capi.library().vkgemm_engine_destroy(self._handle)
            self._handle = None

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def device(self):
        info = _capi.sized(_capi.DeviceInfo)
        _check(_capi.library().vkgemm_engine_device(self._live(), ctypes.byref(info)))
        return _device(info)

    @property
    def validation_messages(self):
        """The validation layer's messages so far (0 without validation)."""
        return int(_capi.library().vkgemm_engine_validation_messages(self._live()))

    def _live(self):
        if not self._handle:
            _fail("invalid_argument", "vkgemm.Engine: the engine is closed")
        return self._handle

    def asarray(self, x):
        """x, a NumPy array (2-D or 3-D, of a vkgemm type), uploaded once into a new vkgemm.Array on this
        engine's device (an Array of this engine is returned as it is)."""
        return array.upload(self, x)

    def matmul(self, a, b, *, c=None, out=None, alpha=1, beta=0, trans_a=False, trans_b=False, out_type=None,
               kernel="auto", tile=None, precision=None, timing=False, bias=None, bias_axis="col", activation=None,
               slope=0.01, clamp=None, scale=None, tensor_scale=None):
        """alpha * op(a) @ op(b) + beta * c, op(x) = x or x.T (the last two axes), on the device.

        a, b: 2-D matrices or 3-D batches (a 2-D one is used by every batch entry) of one vkgemm type:
        float32, float64, float16, bfloat16 (ml_dtypes.bfloat16, or uint16 bit patterns), int8, uint8, int32.
        c: C's values, read when beta != 0 (out= may be c itself). out: the array to write, else a new one.
        out_type: C's type where it may differ (f16 and bf16 inputs: "f16"/"bf16" instead of float32).
        timing: return (result, Timing) with the product's GPU time.
        The fused epilogue (docs/library.md): C = activation(alpha * scale * op(a) @ op(b) + beta * c + bias).
        bias: a 1-D float32 array (or C's dtype), n values (bias_axis "col") or m ("row"). activation: "relu",
        "leaky-relu" (slope), "gelu-tanh", "gelu-erf", "silu", "sigmoid", "tanh", "clamp" (clamp=(lo, hi)).
        scale (int8 a and b with out_type "f32" or "f16"): a number (per tensor) or a 1-D array of n (per
        column, times tensor_scale).
        Any strides NumPy can make are taken as they are where BLAS leading dimensions describe them, copied
        otherwise. Raises vkgemm.Error with vkgemm's code and sentence.
        vkgemm.Array operands (array.py) stay on the device: a, b, c and out all Arrays of this engine, the
        result an Array (out, else a new one); beta != 0 updates c in place (out=c)."""
        if any(isinstance(x, array.Array) for x in (a, b, c, out)):
            return array.matmul(self, a, b, c=c, out=out, alpha=alpha, beta=beta, trans_a=trans_a, trans_b=trans_b,
                                out_type=out_type, how=(kernel, tile, precision, timing),
                                epilogue_args=(bias, bias_axis, activation, slope, clamp, scale, tensor_scale))
        a = _as_matrix_stack(a, "a")
        b = _as_matrix_stack(b, "b")
        if a.dtype != b.dtype:
            _fail("unsupported_type", f"matmul: a is {a.dtype} but b is {b.dtype}; vkgemm multiplies one type")
        in_type = _BY_DTYPE.get(a.dtype)
        if in_type is None:
            _fail("unsupported_type", f"matmul: {a.dtype} is not a vkgemm type (float32, float64, float16, "
                                      "bfloat16 or uint16 bits, int8, uint8, int32)")
        shape = _product_shape(a, b, trans_a, trans_b)
        batch, m, n, k = shape
        dt = _out_dtype(in_type, a.dtype, out_type)
        out_code = _out_type_code(dt, in_type)
        result_shape = (m, n) if a.ndim == 2 and b.ndim == 2 else (batch, m, n)
        target = _target(out, c, beta, result_shape, dt)
        # The call's layout is C's: row-major unless C is only describable column-major (C is never taken
        # transposed: a copy where neither describes it).
        t3 = target[np.newaxis] if target.ndim == 2 else target
        row_major = target.size == 0 or _layout(t3, True, False) is not None or _layout(t3, False, False) is None
        ops = [_operand(x, row_major, batch) for x in (a, b)]
        co = _operand(target, row_major, batch, may_transpose=False)
        epilogue = _epilogue(bias, bias_axis, activation, slope, clamp, scale, tensor_scale, m, n)
        return self._run(ops, co, target, in_type, out_code, (trans_a, trans_b), shape, row_major,
                         (alpha, beta), (kernel, tile, precision, timing), epilogue)

    def _run(self, ops, co, target, in_type, out_code, trans, shape, row_major, scalars, how, epilogue=(None, None)):
        batch, m, n, k = shape
        kernel, tile, precision, timing = how
        d = _capi.sized(_capi.GemmDesc)
        d.type, d.c_type, d.column_major = in_type, out_code, 0 if row_major else 1
        d.trans_a = int(bool(trans[0]) != ops[0].transposed)
        d.trans_b = int(bool(trans[1]) != ops[1].transposed)
        d.m, d.n, d.k, d.batch = m, n, k, batch
        d.lda, d.ldb, d.ldc = ops[0].ld, ops[1].ld, co.ld
        d.stride_a, d.stride_b = ops[0].stride, ops[1].stride
        d.stride_c = co.stride if batch > 1 else -1
        d.alpha, d.beta = float(scalars[0]), float(scalars[1])
        o = _capi.sized(_capi.GemmOptions)
        o.kernel = str(kernel).encode()
        o.tile = int(tile or 0)
        o.timestamps = 1 if timing else 0
        o.precision = str(precision).encode() if precision else None
        t = _capi.sized(_capi.Timing)
        e, vectors = epilogue
        if e is None:
            _check(_capi.library().vkgemm_gemm(self._live(), ctypes.byref(d), ops[0].array.ctypes.data,
                                               ops[1].array.ctypes.data, co.array.ctypes.data, ctypes.byref(o),
                                               ctypes.byref(t)))
        else:
            _check(_capi.library().vkgemm_gemm_epilogue(
                self._live(), ctypes.byref(d), ctypes.byref(e), ops[0].array.ctypes.data, ops[1].array.ctypes.data,
                co.array.ctypes.data, None if vectors is None else vectors.ctypes.data, ctypes.byref(o),
                ctypes.byref(t)))
        if co.copied:  # C's strides could not be described: computed in a copy, written back
            target[...] = co.array.reshape(target.shape)
        if not timing:
            return target
        gpu = t.gpu_ms if t.gpu_timestamps else None
        return target, Timing(gpu, t.upload_ms, t.download_ms, t.kernel.decode(), t.config.decode())


_ACTIVATIONS = ["none", "relu", "leaky-relu", "gelu-tanh", "gelu-erf", "silu", "sigmoid", "tanh", "clamp"]
_BIAS_AXES = ["none", "per-column", "per-row"]
_SCALE_AXES = ["none", "per-tensor", "per-column"]
_capi.expected_names.update({"type": _TYPE_NAMES, "activation": _ACTIVATIONS, "bias_axis": _BIAS_AXES,
                             "scale_axis": _SCALE_AXES})


def _clamp_bounds(e, clamp):
    """clamp=(lo, hi) into e: both bounds needed (none has a default; 0 would zero C)."""
    bounds = tuple(clamp) if isinstance(clamp, (tuple, list)) else None
    if bounds is None or len(bounds) != 2:
        _fail("invalid_argument", f"matmul: activation 'clamp' needs clamp=(lo, hi), both bounds; got clamp={clamp!r}")
    missing = [name for name, v in zip(("lo", "hi"), bounds) if v is None]
    if missing:
        _fail("invalid_argument", f"matmul: activation 'clamp' needs both bounds, clamp=(lo, hi); "
                                  f"{' and '.join(missing)} {'is' if len(missing) == 1 else 'are'} missing")
    e.has_lo, e.has_hi, e.lo, e.hi = 1, 1, float(bounds[0]), float(bounds[1])


def _epilogue(bias, bias_axis, activation, slope, clamp, scale, tensor_scale, m, n):
    """matmul's epilogue as the C ABI's vkgemm_epilogue and its host vectors (the per-column scales, then the
    bias, in one byte array), or (None, None) for none. The engine checks the rest (types, K, finite values)."""
    name = "none" if activation is None else str(activation).replace("_", "-")
    if bias is None and name == "none" and scale is None:
        return None, None
    e = _capi.sized(_capi.Epilogue)
    if name not in _ACTIVATIONS:
        _fail("invalid_argument", f"matmul: activation {activation!r} is none of {', '.join(_ACTIVATIONS)}")
    e.activation, e.slope, e.bias_type, e.tensor_scale = _ACTIVATIONS.index(name), float(slope), F32, 1.0
    if name == "clamp":
        _clamp_bounds(e, clamp)
    parts = []
    if scale is not None:
        if np.ndim(scale) == 0:
            if tensor_scale is not None:
                _fail("invalid_argument", "matmul: tensor_scale goes with a per-column scale array")
            e.scale, e.tensor_scale = _SCALE_AXES.index("per-tensor"), float(scale)
        else:
            s = np.ascontiguousarray(scale, dtype=np.float32)
            if s.shape != (n,):
                _fail("invalid_argument", f"matmul: scale has shape {s.shape}; a per-column scale has n = {n} values")
            e.scale = _SCALE_AXES.index("per-column")
            e.tensor_scale = float(1.0 if tensor_scale is None else tensor_scale)
            parts.append(s.tobytes())
    if bias is not None:
        if bias_axis not in ("col", "row"):
            _fail("invalid_argument", f"matmul: bias_axis {bias_axis!r} is neither 'col' (n values) nor 'row' (m)")
        v = np.ascontiguousarray(bias)
        code = _BY_DTYPE.get(v.dtype)
        length = n if bias_axis == "col" else m
        if code is None or v.shape != (length,):
            _fail("invalid_argument", f"matmul: bias must be a 1-D array of {length} values (bias_axis "
                                      f"{bias_axis!r}), not {v.dtype} {v.shape}")
        e.bias, e.bias_type = _BIAS_AXES.index("per-column" if bias_axis == "col" else "per-row"), code
        raw = v.tobytes()
        parts.append(raw + b"\0" * (-len(raw) % 4))  # 2-byte biases are read as whole 32-bit words
    vectors = np.frombuffer(b"".join(parts), dtype=np.uint8).copy() if parts else None
    return e, vectors


def _product_shape(a, b, trans_a, trans_b):
    am, ak = (a.shape[-1], a.shape[-2]) if trans_a else (a.shape[-2], a.shape[-1])
    bk, bn = (b.shape[-1], b.shape[-2]) if trans_b else (b.shape[-2], b.shape[-1])
    if ak != bk:
        _fail("dimension_mismatch", f"matmul: op(a) is {am}x{ak} and op(b) is {bk}x{bn}: {ak} != {bk}")
    batches = {x.shape[0] for x in (a, b) if x.ndim == 3}
    if len(batches) > 1:
        _fail("dimension_mismatch", f"matmul: a has a batch of {a.shape[0]} but b of {b.shape[0]}")
    return (batches.pop() if batches else 1), am, bn, ak


def _target(out, c, beta, shape, dt):
    """The array C is computed in and returned: out (holding c where beta != 0), else a new one."""
    if beta != 0 and c is None:
        _fail("invalid_argument", f"matmul: beta = {beta} reads C, but no c was given")
    if c is not None:
        if not isinstance(c, np.ndarray) or c.shape != shape or c.dtype != dt:
            _fail("dimension_mismatch", f"matmul: c must be a {dt} array of shape {shape}, not "
                                        f"{getattr(c, 'dtype', type(c).__name__)} {getattr(c, 'shape', '')}")
    if out is None:
        out = np.array(c, order="C") if (c is not None and beta != 0) else np.empty(shape, dtype=dt)
    else:
        if not isinstance(out, np.ndarray) or out.shape != shape or out.dtype != dt:
            _fail("dimension_mismatch", f"matmul: out must be a {dt} array of shape {shape}, not "
                                        f"{getattr(out, 'dtype', type(out).__name__)} {getattr(out, 'shape', '')}")
        if not out.flags.writeable:
            _fail("invalid_argument", "matmul: out is read-only")
        if c is not None and beta != 0 and c is not out:
            out[...] = c
    return out


_default = None
_default_lock = threading.Lock()


def _default_engine():
    """The default engine (VKGEMM_DEVICE, else the best device), created at the first call that needs it."""
    global _default
    with _default_lock:
        if _default is None:
            _default = Engine()
        return _default


def matmul(a, b, **kwargs):
    """Engine.matmul on a default engine (VKGEMM_DEVICE, else the best device), created at the first call;
    on Arrays, on a's engine."""
    engine = a.engine if isinstance(a, array.Array) else _default_engine()
    return engine.matmul(a, b, **kwargs)


# Arrays on the device (array.py), imported last: it takes the helpers above.
from . import array  # noqa: E402
from .array import Array, asarray, empty  # noqa: E402

__all__ += ["Array", "asarray", "empty"]
