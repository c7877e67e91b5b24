#!/usr/bin/python3
"""The names.drift test: every copy of an enumeration's names agrees with the engine's one table
(engine/include/vkgemm/names.hpp, read through the C ABI's vkgemm_enum_name): the C header's numbered
vkgemm_type, the Python module's constants and NumPy dtypes, the vkgemm program's choices, the shaders' type
table, and the error codes the Python module raises. Prints each difference and exits 1 when there is one.

Usage: names_drift.py BUILD_DIR SOURCE_DIR
"""
import ctypes
import os
import pathlib
import re
import subprocess
import sys


def library_names(lib_path):
    lib = ctypes.CDLL(str(lib_path))
    lib.vkgemm_enum_name.restype = ctypes.c_char_p
    lib.vkgemm_enum_name.argtypes = [ctypes.c_char_p, ctypes.c_int32]

    def listed(enumeration):
        out = []
        while (name := lib.vkgemm_enum_name(enumeration, len(out))) is not None:
            out.append(name.decode())
        return out

    names = {name: listed(name.encode()) for name in listed(None)}
    # Past either end, or a name that is no enumeration: null.
    names["refusals"] = [lib.vkgemm_enum_name(b"type", -1), lib.vkgemm_enum_name(b"types", 0),
                         lib.vkgemm_enum_name(None, len(names))]
    return names


def header_types(header):
    block = re.search(r"typedef enum vkgemm_type \{(.*?)\} vkgemm_type;", header.read_text(), re.S).group(1)
    return {name.lower(): int(value) for name, value in re.findall(r"VKGEMM_(\w+)\s*=\s*(\d+)", block)}


def cli_choices(program):
    text = subprocess.run([str(program), "run", "--help"], capture_output=True, text=True, check=True).stdout
    lines = {m.group(1): m.group(2) for m in re.finditer(r"^\s*--([\w-]+) \S+\s+(.*)$", text, re.M)}
    return lines


def check(names, build, src):
    found = []
    if any(r is not None for r in names.pop("refusals")):
        found.append("vkgemm_enum_name named a value past the end or an enumeration that does not exist")
    types = names["type"]
    if set(names) != {"type", "kernel", "activation", "bias_axis", "scale_axis", "precision", "wait_mode", "error"}:
        found.append(f"the library's enumerations are {sorted(names)}")
    if header_types(src / "engine/include/vkgemm/vkgemm.h") != {t: i for i, t in enumerate(types)}:
        found.append(f"vkgemm.h's vkgemm_type {header_types(src / 'engine/include/vkgemm/vkgemm.h')} is not the "
                     f"table's {types}")
    sys.path.insert(0, str(src / "engine/python"))
    import vkgemm  # noqa: E402 (the source tree's module, on the built library)
    module = {"type": vkgemm._TYPE_NAMES, "activation": vkgemm._ACTIVATIONS, "bias_axis": vkgemm._BIAS_AXES,
              "scale_axis": vkgemm._SCALE_AXES}
    for enumeration, theirs in module.items():
        if list(theirs) != names[enumeration]:
            found.append(f"the Python module's {enumeration} names {list(theirs)} are not the table's "
                         f"{names[enumeration]}")
    for i, t in enumerate(types):
        if getattr(vkgemm, t.upper(), None) != i:
            found.append(f"vkgemm.{t.upper()} is {getattr(vkgemm, t.upper(), None)}, not {i}")
    untyped = [t for i, t in enumerate(types) if i not in set(vkgemm._BY_DTYPE.values())]
    if untyped:
        found.append(f"the Python module's NumPy dtype map (_BY_DTYPE) has no dtype for {untyped}")
    try:
        vkgemm.version()  # loads the library: the module's own check of its names at load
    except OSError as e:
        found.append(f"the Python module refuses the library: {e}")
    sources = "".join(p.read_text() for p in (src / "engine/python/vkgemm").glob("*.py"))
    raised = set(re.findall(r'_fail\("(\w+)"', sources))
    if raised - set(names["error"]):
        found.append(f"the Python module raises codes the table lacks: {sorted(raised - set(names['error']))}")
    choices = cli_choices(build / "vkgemm")
    listed = {"type": ("type", types), "act": ("activation", names["activation"]),
              "kernel": ("kernel", names["kernel"]), "precision": ("precision", names["precision"])}
    for option, (enumeration, expected) in listed.items():
        words = set(re.findall(r"[\w-]+", choices.get(option, "")))
        if not set(expected) <= words:
            found.append(f"vkgemm run --{option} lists no {sorted(set(expected) - words)} ({enumeration})")
    shaders = (src / "shaders/CMakeLists.txt").read_text()
    for t in types:
        if not re.search(rf"\b{t}\b", shaders):
            found.append(f"shaders/CMakeLists.txt has no variant of type {t}")
    return found


def main():
    build, src = pathlib.Path(sys.argv[1]).resolve(), pathlib.Path(sys.argv[2]).resolve()
    lib = build / "lib" / "libvkgemm_c.so.0"
    os.environ["VKGEMM_LIBRARY"] = str(lib)
    names = library_names(lib)
    found = check(names, build, src)
    for line in found:
        print(line)
    if found:
        print(f"names.drift: {len(found)} copies differ from engine/include/vkgemm/names.hpp")
        return 1
    print("names.drift: " + "; ".join(f"{k} {len(v)}" for k, v in names.items()) + " names, every copy the same")
    return 0


if __name__ == "__main__":
    sys.exit(main())
