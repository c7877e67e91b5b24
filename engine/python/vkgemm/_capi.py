"""The C ABI (engine/include/vkgemm/vkgemm.h) through ctypes: the library, found once, and its structures.

ctypes releases the GIL for the length of every foreign call, so other Python threads run while the device
works. The structures here mirror vkgemm.h field for field; each is passed with its struct_size set.
"""

import ctypes
import os
import sysconfig
import threading

ABI_VERSION = 2
LIBRARY = "libvkgemm_c.so.0"


class DeviceInfo(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("index", ctypes.c_uint32),
        ("name", ctypes.c_char * 256),
        ("vendor", ctypes.c_char * 64),
        ("type", ctypes.c_char * 32),
        ("driver", ctypes.c_char * 256),
        ("api_version", ctypes.c_char * 32),
        ("device_local_memory", ctypes.c_uint64),
        ("max_allocation_size", ctypes.c_uint64),
        ("float64", ctypes.c_uint32),
        ("float16", ctypes.c_uint32),
        ("storage16", ctypes.c_uint32),
        ("storage8", ctypes.c_uint32),
        ("bfloat16", ctypes.c_uint32),
        ("coopmat", ctypes.c_uint32),
        ("coopmat2", ctypes.c_uint32),
        ("timestamps", ctypes.c_uint32),
    ]


class EngineOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("device", ctypes.c_char_p),
        ("validation", ctypes.c_uint32),
    ]


class GemmDesc(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("type", ctypes.c_int32),
        ("c_type", ctypes.c_int32),
        ("column_major", ctypes.c_int32),
        ("trans_a", ctypes.c_int32),
        ("trans_b", ctypes.c_int32),
        ("m", ctypes.c_int64),
        ("n", ctypes.c_int64),
        ("k", ctypes.c_int64),
        ("lda", ctypes.c_int64),
        ("ldb", ctypes.c_int64),
        ("ldc", ctypes.c_int64),
        ("alpha", ctypes.c_double),
        ("beta", ctypes.c_double),
        ("batch", ctypes.c_int64),
        ("stride_a", ctypes.c_int64),
        ("stride_b", ctypes.c_int64),
        ("stride_c", ctypes.c_int64),
    ]


class Epilogue(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("bias", ctypes.c_int32),
        ("bias_type", ctypes.c_int32),
        ("activation", ctypes.c_int32),
        ("slope", ctypes.c_double),
        ("has_lo", ctypes.c_int32),
        ("has_hi", ctypes.c_int32),
        ("lo", ctypes.c_double),
        ("hi", ctypes.c_double),
        ("scale", ctypes.c_int32),
        ("tensor_scale", ctypes.c_double),
    ]


class GemmOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("kernel", ctypes.c_char_p),
        ("tile", ctypes.c_uint32),
        ("timestamps", ctypes.c_uint32),
        ("precision", ctypes.c_char_p),
    ]


class Timing(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("gpu_timestamps", ctypes.c_uint32),
        ("gpu_ms", ctypes.c_double),
        ("upload_ms", ctypes.c_double),
        ("download_ms", ctypes.c_double),
        ("submit_wait_ms", ctypes.c_double),
        ("kernel", ctypes.c_char * 32),
        ("config", ctypes.c_char * 160),
    ]


class Operand(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_uint32),
        ("buffer", ctypes.c_void_p),
        ("offset", ctypes.c_uint64),
    ]


# The compatible additions this module needs (vkgemm.h's VKGEMM_C_ABI_FEATURE): 1, the device buffers; 2, the
# enumerations' names.
ABI_FEATURE = 2

# The spellings this module numbers by position (the package's __init__.py sets them): a library whose
# enumerations differ (vkgemm_enum_name, from the engine's one table vkgemm/names.hpp) is refused at load.
expected_names = {}


def sized(structure):
    """A zeroed instance of `structure` with its struct_size set."""
    s = structure()
    s.struct_size = ctypes.sizeof(structure)
    return s


def _candidates():
    """Where the library may be, first found wins: VKGEMM_LIBRARY; beside this module (the wheel, the build
    folder's python/); the installed prefix's lib/ (the .deb: /usr/lib/python3/dist-packages/vkgemm and
    /usr/lib); the loader's own search (LD_LIBRARY_PATH, the system's folders)."""
    here = os.path.dirname(os.path.abspath(__file__))
    if os.environ.get("VKGEMM_LIBRARY"):
        return [os.environ["VKGEMM_LIBRARY"]]
    prefix_lib = os.path.normpath(os.path.join(here, "..", "..", ".."))
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    return [
        os.path.join(here, LIBRARY),
        os.path.join(prefix_lib, LIBRARY),
        os.path.join(prefix_lib, multiarch, LIBRARY),
        LIBRARY,
    ]


_lock = threading.Lock()
_lib = None


def _declare(lib):
    p, c = ctypes.POINTER, ctypes
    sig = {
        "vkgemm_abi_version": (c.c_int32, []),
        "vkgemm_abi_feature": (c.c_int32, []),
        "vkgemm_version": (c.c_char_p, []),
        "vkgemm_devices": (c.c_int32, [p(DeviceInfo), c.c_size_t, p(c.c_size_t)]),
        "vkgemm_engine_create": (c.c_int32, [c.c_char_p, p(c.c_void_p)]),
        "vkgemm_engine_create_with": (c.c_int32, [p(EngineOptions), p(c.c_void_p)]),
        "vkgemm_engine_validation_messages": (c.c_uint64, [c.c_void_p]),
        "vkgemm_engine_destroy": (None, [c.c_void_p]),
        "vkgemm_engine_device": (c.c_int32, [c.c_void_p, p(DeviceInfo)]),
        "vkgemm_gemm": (c.c_int32, [c.c_void_p, p(GemmDesc), c.c_void_p, c.c_void_p, c.c_void_p,
                                    p(GemmOptions), p(Timing)]),
        "vkgemm_gemm_epilogue": (c.c_int32, [c.c_void_p, p(GemmDesc), p(Epilogue), c.c_void_p, c.c_void_p,
                                             c.c_void_p, c.c_void_p, p(GemmOptions), p(Timing)]),
        "vkgemm_buffer_create": (c.c_int32, [c.c_void_p, c.c_uint64, p(c.c_void_p)]),
        "vkgemm_buffer_destroy": (None, [c.c_void_p]),
        "vkgemm_buffer_size": (c.c_uint64, [c.c_void_p]),
        "vkgemm_buffer_write": (c.c_int32, [c.c_void_p, c.c_void_p, c.c_uint64, c.c_void_p, c.c_uint64]),
        "vkgemm_buffer_read": (c.c_int32, [c.c_void_p, c.c_void_p, c.c_uint64, c.c_void_p, c.c_uint64]),
        "vkgemm_gemm_buffers": (c.c_int32, [c.c_void_p, p(GemmDesc), p(Epilogue), p(Operand), p(Operand), p(Operand),
                                            p(Operand), p(GemmOptions), p(Timing)]),
        "vkgemm_last_error": (c.c_char_p, []),
        "vkgemm_status_name": (c.c_char_p, [c.c_int32]),
        "vkgemm_type_size": (c.c_size_t, [c.c_int32]),
        "vkgemm_enum_name": (c.c_char_p, [c.c_char_p, c.c_int32]),
    }
    for name, (restype, argtypes) in sig.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = restype, argtypes


def _refuse_level(lib):
    """Why this module cannot use lib's C ABI (another version, or a feature level below ABI_FEATURE: a
    library without vkgemm_abi_feature is of level 0), or None."""
    lib.vkgemm_abi_version.restype = ctypes.c_int32
    if lib.vkgemm_abi_version() != ABI_VERSION:
        return f"C ABI version {lib.vkgemm_abi_version()}, this module speaks {ABI_VERSION}"
    feature = 0
    if hasattr(lib, "vkgemm_abi_feature"):
        lib.vkgemm_abi_feature.restype = ctypes.c_int32
        feature = lib.vkgemm_abi_feature()
    if feature < ABI_FEATURE:
        return f"C ABI feature level {feature}, this module needs {ABI_FEATURE} (a newer libvkgemm_c)"
    return None


def enum_names(lib, enumeration):
    """The spellings of `enumeration` in `lib`, in the order of their numbers (vkgemm_enum_name)."""
    out = []
    while True:
        name = lib.vkgemm_enum_name(enumeration.encode(), len(out))
        if name is None:
            return out
        out.append(name.decode())


def _refuse_names(lib):
    """Why lib's enumerations differ from the ones this module numbers by position, or None."""
    for enumeration, names in expected_names.items():
        theirs = enum_names(lib, enumeration)
        if theirs != list(names):
            return (f"its {enumeration} names {theirs} differ from this module's {list(names)} (a module and a "
                    "library of different builds)")
    return None


def library():
    """The loaded C library (loaded at the first call that needs it, never at import)."""
    global _lib
    with _lock:
        if _lib is None:
            errors = []
            for path in _candidates():
                if os.sep in path and not os.path.exists(path):
                    continue
                try:
                    lib = ctypes.CDLL(path)
                except OSError as e:
                    errors.append(f"{path}: {e}")
                    continue
                refusal = _refuse_level(lib)
                if not refusal:
                    _declare(lib)
                    refusal = _refuse_names(lib)
                if refusal:
                    errors.append(f"{path}: {refusal}")
                    continue
                _lib = lib
                break
            if _lib is None:
                raise OSError(f"vkgemm: cannot load {LIBRARY} (set VKGEMM_LIBRARY to its path): " + "; ".join(errors))
        return _lib
