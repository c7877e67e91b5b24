#!/usr/bin/env python3
"""The floors of engine/src (docs/architecture.md, "The floors"): each folder includes only its own headers,
those of folders on lower floors, the public headers (vkgemm/...) and the shaders' shared headers. engine/'s
headers are private to it: the floor above (capi, blaslib, pblas) reaches the engine through the public API alone. Prints each include that breaks the rule and exits 1 when there is one.

Usage: check-includes.py [SOURCE_ROOT]
"""
import pathlib
import re
import sys

# Lowest first; folders on one floor do not include each other.
FLOORS = [
    ["core", "files"],
    ["vk"],
    ["device"],
    ["tuning"],
    ["ozaki"],
    ["reference"],
    ["kernels"],
    ["plan", "peak"],
    ["engine"],
    ["capi", "blaslib", "pblas"],
]
PRIVATE = {"engine"}  # folders whose headers no other folder includes
FLOOR = {folder: level for level, folders in enumerate(FLOORS) for folder in folders}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.MULTILINE)


def violations(root):
    src = root / "engine" / "src"
    shared = {p.name for p in (root / "shaders").iterdir()}
    found = []
    folders = sorted(p.name for p in src.iterdir() if p.is_dir())
    for folder in folders:
        if folder not in FLOOR:
            found.append(f"engine/src/{folder}/: a folder on no floor; give it one in {pathlib.Path(__file__).name}")
            continue
        for path in sorted((src / folder).iterdir()):
            if path.suffix not in {".cpp", ".hpp", ".h", ".c", ".in"}:
                continue
            for target in INCLUDE.findall(path.read_text(errors="replace")):
                where = f"engine/src/{folder}/{path.name}: #include \"{target}\""
                head, _, rest = target.partition("/")
                if not rest:  # a bare name: beside the includer, or a shader header shared with the host
                    if not (src / folder / target).exists() and target not in shared:
                        found.append(f"{where}: neither in {folder}/ nor in shaders/; name its folder")
                    continue
                if head == "vkgemm":
                    continue
                if head not in FLOOR:
                    found.append(f"{where}: {head}/ is no folder of engine/src")
                elif head != folder and head in PRIVATE:
                    found.append(f"{where}: {head}/'s headers are private to it")
                elif head != folder and FLOOR[head] >= FLOOR[folder]:
                    relation = "the same floor" if FLOOR[head] == FLOOR[folder] else "a higher floor"
                    found.append(f"{where}: {head}/ is on {relation} (floor {FLOOR[head]}) than {folder}/ "
                                 f"(floor {FLOOR[folder]})")
    return found


def main():
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parents[2])
    found = violations(root)
    for line in found:
        print(line)
    if found:
        print(f"check-includes: {len(found)} include(s) break engine/src's floors (docs/architecture.md)")
        return 1
    print(f"check-includes: engine/src's includes go down its {len(FLOORS)} floors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
