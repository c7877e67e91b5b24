#!/usr/bin/env python3
"""Builds the vkgemm wheel from the module's files and libvkgemm_c.so.0, with the standard library alone (no
setuptools, no network: `pip install` of a source tree would fetch a build backend).

The wheel is tagged py3-none-<platform>: the module is pure Python over ctypes, so any Python 3 imports it,
and the one native file is the C library, which depends on no Python.

Usage: make_wheel.py <version> <out dir> <library> <module file>...
"""

import base64
import hashlib
import os
import sys
import sysconfig
import zipfile


def record_line(name, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def main():
    version, out_dir, library, modules = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
    platform = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    tag = f"py3-none-{platform}"
    info = f"vkgemm-{version}.dist-info"
    files = {f"vkgemm/{os.path.basename(m)}": open(m, "rb").read() for m in modules}
    files[f"vkgemm/{os.path.basename(library)}"] = open(library, "rb").read()
    files[f"{info}/METADATA"] = (
        f"Metadata-Version: 2.1\nName: vkgemm\nVersion: {version}\n"
        "Summary: GEMM on any Vulkan device, on NumPy arrays\nRequires-Python: >=3.8\nRequires-Dist: numpy\n"
    ).encode()
    files[f"{info}/WHEEL"] = (
        f"Wheel-Version: 1.0\nGenerator: vkgemm make_wheel.py\nRoot-Is-Purelib: false\nTag: {tag}\n"
    ).encode()
    record = [record_line(name, data) for name, data in files.items()] + [f"{info}/RECORD,,"]
    files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()

    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, f"vkgemm-{version}-{tag}.whl")
    temporary = f"{path}.{os.getpid()}.tmp"
    with zipfile.ZipFile(temporary, "w", zipfile.ZIP_DEFLATED) as wheel:
        for name, data in files.items():
            entry = zipfile.ZipInfo(name, date_time=(2020, 1, 1, 0, 0, 0))
            entry.external_attr = (0o755 if name.endswith(".so.0") else 0o644) << 16
            entry.compress_type = zipfile.ZIP_DEFLATED
            wheel.writestr(entry, data)
    os.replace(temporary, path)  # whole or not at all
    print(path)


if __name__ == "__main__":
    main()
