#!/usr/bin/python3
"""tools/gpu/sets/bench-vs-cublas.py --combine: the published f32 set (measured in two parts: the square, ops and layout
groups, then the rest) combined again from its parts must equal the committed published-h200-f32.json; a case taken twice, a case missing and a file of
the wrong type are errors that name it; with --partial a missing case is listed and left out instead."""
import json
import os
import subprocess
import sys
import tempfile

SOURCE = os.environ.get("VKGEMM_SOURCE_DIR", os.path.join(os.path.dirname(__file__), ".."))
TOOL = os.path.join(SOURCE, "tools", "gpu", "sets", "bench-vs-cublas.py")
DIR = os.path.join(SOURCE, "tests", "data")
# The second part names its groups (skinny, batched, k-heavy, k-light) to exercise FILE:GROUPS.
PARTS = [os.path.join(DIR, "vs-cublas-f32-part-a.json"),
         os.path.join(DIR, "vs-cublas-f32-part-b.json") + ":skinny,batched,k-heavy,k-light"]


def combine(type_, parts, extra=()):
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "out.json")
        run = subprocess.run([sys.executable, TOOL, "--type", type_, "--combine", *parts, "--json", out, *extra],
                             capture_output=True, text=True)
        return run.returncode, run.stdout + run.stderr, (json.load(open(out)) if run.returncode == 0 else None)


def expect_error(type_, parts, words):
    code, text, _ = combine(type_, parts)
    assert code != 0 and words in text, f"expected an error with {words!r}, got {code}: {text}"


def main():
    code, text, result = combine("f32", PARTS)
    assert code == 0, text
    published = json.load(open(os.path.join(DIR, "published-h200-f32.json")))
    assert result["rows"] == published["rows"], "the combined rows differ from published-h200-f32.json's"
    assert result["summary"] == published["summary"], (result["summary"], published["summary"])
    assert result["summary"]["all"]["cases"] == 33
    expect_error("f32", [PARTS[0], PARTS[0]], "twice")
    expect_error("f32", PARTS[:1], "no row for 64x4096x4096 nn row")
    code, text, part = combine("f32", PARTS[:1], ["--partial"])
    assert code == 0, text
    part_a = json.load(open(PARTS[0]))
    assert part["complete"] is False and len(part["rows"]) == len(part_a["rows"]) == 18, part["summary"]
    assert part["summary"]["all"] == part_a["summary"]["all"], (part["summary"], part_a["summary"])
    assert "64x4096x4096 nn row" in part["missing"] and len(part["missing"]) == 33 - 18, part["missing"]
    assert "not measured" in text
    expect_error("f16", PARTS[:1], "holds f32 rows, not f16")
    print("combine: published-h200-f32.json rebuilt from its two parts; duplicate, missing, wrong type refused; --partial lists what is missing")


if __name__ == "__main__":
    main()
