#!/usr/bin/env python3
"""Tuning entries for small squares from one `vkgemm bench` run (the tiled kernel at tiles 8 and 16 beside the
blocked kernel as auto configures it, each verified and timed by timestamps): per size, the faster one
becomes the entry, as `vkgemm tune` would write it; a size the table already has (the tuner's own, wider
search) is left as it is. Entries stop at the first size the blocked kernel wins (its entry kept: the boundary),
as above it auto's blocked choice already is what was measured.
The bench run: vkgemm bench --sizes 16,32,64,128,256,384,512 --kernels tiled,blocked --tiles 8,16 \
                  --latency-sizes none --json BENCH_JSON
Usage: tools/small-square-entries.py BENCH_JSON TUNING_FILE DEVICE"""
import json, re, sys
bench, path, device = json.load(open(sys.argv[1])), sys.argv[2], sys.argv[3]
doc = json.load(open(path))
table = next(t for t in doc["devices"] if t["device"] == device)
best = {}
for c in bench["cases"]:
    if c["status"] != "passed" or c["type"] != "f32":
        continue
    key = (c["m"], c["n"], c["k"])
    if key not in best or c["gflops"] > best[key]["gflops"]:
        best[key] = c
have = {(e["type"], e["m"], e["n"], e["k"]) for e in table["entries"]}
for (m, n, k), c in sorted(best.items()):
    if ("f32", m, n, k) in have:
        print(f"{m}x{n}x{k}: the table has it; left")
        continue
    entry = {"type": "f32", "m": m, "n": n, "k": k, "kernel": c["options"]["kernel"], "gflops": round(c["gflops"], 1)}
    if entry["kernel"] == "tiled":
        entry["tile"] = c["options"]["tile"]
    else:
        g = re.match(r"blocked (\d+)x(\d+)x(\d+) (\d+)x(\d+) lanes (\d+) split (\d+) group (\d+)", c["ran"]).groups()
        entry["config"] = dict(zip(["bm", "bn", "bk", "tm", "tn", "lanes_n", "split_k", "group_m"], map(int, g)))
    table["entries"].append(entry)
    print(f"{m}x{n}x{k}: {c['ran']} {c['gflops']:.2f} GFLOP/s")
    if entry["kernel"] == "blocked":
        break
with open(path, "w") as f:
    json.dump(doc, f, indent=1, sort_keys=True)
    f.write("\n")
