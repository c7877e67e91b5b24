#!/usr/bin/env python3
"""Fit a device's emulation cost model (tuning::EmulationCost, the "emulation" object of its tuning table in
engine/tuning/) to measured ozaki products: the way auto's choice between the emulated and the native product
is made to follow the device (docs/design/ozaki.md, "Choosing it").

Usage: tools/gpu/fit-emulation-cost.py FOLDER [--f64-gflops X --f32-gflops Y]
  FOLDER holds `vkgemm run --json` results named TYPE-MxNxK-ozaki.json (--kernel ozaki, default moduli) and,
  where measured, TYPE-MxNxK-native.json (the native auto product), as tools/gpu's call scripts write them.

The model (engine/src/kernels/ozaki.cpp, predicted_gain) is linear in its four coefficients:
  time = N * 2mnk * waste / int8_ops + split_ns * 1e-9 * (mk + kn) * N + merge_ns * 1e-9 * mn * N + fixed_us * 1e-6
with N the default moduli (f64 14, f32 7) and waste the 128 x 256 tiles' cover of C. The fit minimizes the
relative error of each product (rows weighted by 1 / time), coefficients kept non-negative (a negative one is
dropped and the rest fitted again). Prints the "emulation" object to paste and each product's predicted
against measured time, and the predicted and measured gain over native where both were run.
"""
import argparse
import glob
import json
import math
import os
import sys

MODULI = {"f64": 14, "f32": 7}


def features(kind, m, n, k):
    moduli = MODULI[kind]
    waste = math.ceil(m / 128) * 128 * math.ceil(n / 256) * 256 / (m * n)
    return [moduli * 2.0 * m * n * k * waste, 1e-9 * (m * k + k * n) * moduli, 1e-9 * m * n * moduli, 1e-6]


def load(folder):
    rows = {}
    for path in sorted(glob.glob(os.path.join(folder, "*-*-*.json"))):
        name = os.path.basename(path)[:-5]
        kind, shape, side = name.split("-", 2)
        with open(path) as f:
            run = json.load(f)
        if not run.get("verified", False):
            sys.exit(f"fit: {path} was not verified; fit only to checked products")
        rows.setdefault((kind, shape), {})[side] = run
    return rows


def solve(a, b):
    """a x = b by Gaussian elimination with partial pivoting (a few unknowns: no NumPy needed)."""
    size = len(b)
    m = [row[:] + [v] for row, v in zip(a, b)]
    for col in range(size):
        pivot = max(range(col, size), key=lambda r: abs(m[r][col]))
        m[col], m[pivot] = m[pivot], m[col]
        for r in range(size):
            if r != col and m[col][col] != 0:
                f = m[r][col] / m[col][col]
                m[r] = [vr - f * vc for vr, vc in zip(m[r], m[col])]
    return [m[i][size] / m[i][i] for i in range(size)]


def fit(x, t):
    """Least squares of the relative errors (rows weighted by 1 / t), coefficients non-negative."""
    active = list(range(len(x[0])))
    while True:
        rows = [[xi[j] / ti for j in active] for xi, ti in zip(x, t)]
        normal = [[sum(r[i] * r[j] for r in rows) for j in range(len(active))] for i in range(len(active))]
        coef = solve(normal, [sum(r[i] for r in rows) for i in range(len(active))])
        if min(coef) >= 0:
            out = [0.0] * len(x[0])
            for j, v in zip(active, coef):
                out[j] = v
            return out
        active.pop(coef.index(min(coef)))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("folder")
    args = parser.parse_args()
    rows = load(args.folder)
    measured = [(key, side) for key, side in rows.items() if "ozaki" in side]
    if len(measured) < 4:
        sys.exit(f"fit: {len(measured)} ozaki products in {args.folder}; four coefficients need at least four")
    x = [features(kind, *map(int, shape.split("x"))) for (kind, shape), _ in measured]
    t = [side["ozaki"]["median_ms"] * 1e-3 for _, side in measured]
    c = fit(x, t)
    model = {"int8_tops": round(1e-12 / c[0], 2) if c[0] > 0 else None, "split_ns": round(c[1], 6),
             "merge_ns": round(c[2], 6), "fixed_us": round(c[3], 1)}
    print(json.dumps(model))
    print(f"{'product':<22} {'measured ms':>11} {'predicted':>10} {'native ms':>10} {'gain':>6} {'predicted':>9}")
    for ((kind, shape), side), xi, ti in zip(measured, x, t):
        predicted = sum(a * b for a, b in zip(xi, c))
        native = side.get("native", {}).get("median_ms")
        gain = f"{native / (ti * 1e3):6.2f} {native / (predicted * 1e3):9.2f}" if native else ""
        print(f"{kind + ' ' + shape:<22} {ti * 1e3:11.3f} {predicted * 1e3:10.3f} {native or 0:10.3f} {gain}")


if __name__ == "__main__":
    main()
