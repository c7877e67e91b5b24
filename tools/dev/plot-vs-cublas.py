#!/usr/bin/env python3
"""The picture of vkgemm against cuBLAS: one panel per bench-vs-cublas.py JSON file (one type each), a bar
per case with its ratio vkgemm / cuBLAS, coloured by the case's group, the geometric mean of the judged
cases and, with --floor, the issue's minimum drawn as lines. Cases that failed are drawn as red crosses at 0.
Usage: tools/dev/plot-vs-cublas.py bench-f32.json bench-f16.json --out vs-cublas.png [--floor f32=0.8 --floor f16=0.35]
Needs python3-matplotlib (tools/install-deps.sh installs it).
"""
import argparse
import json
import sys

COLOURS = {"square": "#4c72b0", "ops": "#dd8452", "layout": "#55a868", "skinny": "#c44e52", "k-heavy": "#8172b3",
           "k-light": "#937860", "batched": "#da8bc3", "custom": "#8c8c8c"}


def case_label(r):
    batch = f"{r['batch']}×" if r.get("batch", 1) > 1 else ""
    ops = r["op_a"] + r["op_b"]
    return f"{batch}{r['m']}×{r['n']}×{r['k']} {ops}{' col' if r.get('layout') == 'col' else ''}"


def draw(ax, result, floor):
    rows = result["rows"]
    labels = [case_label(r) for r in rows]
    ratios = [r.get("ratio", 0.0) for r in rows]
    ys = range(len(rows))
    ax.barh(ys, ratios, color=[COLOURS.get(r.get("group", "custom"), "#8c8c8c") for r in rows],
            hatch=None, edgecolor=["black" if r.get("judged") else "none" for r in rows], linewidth=0.6)
    for y, r in zip(ys, rows):
        if r.get("failed"):
            ax.plot([0], [y], "x", color="red")
        else:
            ax.text(r["ratio"] + 0.01, y, f"{r['ratio']:.2f} {r.get('kernel', '')}", va="center", fontsize=6)
    ax.set_yticks(list(ys), labels, fontsize=6)
    ax.invert_yaxis()
    ax.axvline(1.0, color="black", linewidth=0.8)
    summary = result.get("summary", {}).get("judged")
    if summary:
        ax.axvline(summary["geomean"], color="#2ca02c", linestyle="--", linewidth=1,
                   label=f"geometric mean (judged) {summary['geomean']:.2f}")
    if floor is not None:
        ax.axvline(floor, color="#d62728", linestyle=":", linewidth=1, label=f"floor {floor:.2f}")
    # A set measured over several calls names every binary its rows came from.
    commit = ", ".join(dict.fromkeys(r.get("commit", "?") for r in rows)) or "?"
    device = rows[0].get("cuda_device", "") if rows else ""
    # A set measured in part (bench-vs-cublas.py --combine --partial) says so: its summary lacks cases.
    lacking = f"; {len(result['missing'])} cases not measured" if result.get("missing") else ""
    ax.set_title(f"{result.get('type', '?')}: vkgemm / cuBLAS per case ({device}, vkgemm {commit}{lacking})", fontsize=8)
    ax.set_xlabel("vkgemm / cuBLAS (GPU time per product; cuBLAS timed in bursts)", fontsize=7)
    ax.set_xlim(0, max(1.2, max(ratios, default=1.0)) + 0.6)  # room for the labels beside the legend
    from matplotlib.patches import Patch
    groups = dict.fromkeys(r.get("group", "custom") for r in rows)
    handles = ax.get_legend_handles_labels()[0] + [Patch(color=COLOURS.get(g, "#8c8c8c"), label=g) for g in groups]
    handles.append(Patch(facecolor="white", edgecolor="black", label="judged (outlined)"))
    ax.legend(handles=handles, fontsize=6, loc="lower right")


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("files", nargs="+", help="bench-vs-cublas.py --json files, one type each")
    p.add_argument("--out", required=True, help="the PNG to write")
    p.add_argument("--floor", action="append", default=[], help="TYPE=RATIO: the minimum to draw for a type")
    args = p.parse_args()
    floors = dict((t, float(v)) for t, v in (f.split("=") for f in args.floor))
    results = []
    for path in args.files:
        with open(path) as f:
            result = json.load(f)
        if not isinstance(result, dict) or "rows" not in result:
            raise SystemExit(f"plot-vs-cublas: {path} is not a bench-vs-cublas.py --json file of this version")
        results.append(result)
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only, no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise SystemExit("plot-vs-cublas: python3-matplotlib is not installed (tools/install-deps.sh installs it)")
    height = max(4.0, 0.16 * max(len(r["rows"]) for r in results) + 1.2)
    fig, axes = plt.subplots(1, len(results), figsize=(6.5 * len(results), height), squeeze=False)
    for ax, result in zip(axes[0], results):
        draw(ax, result, floors.get(result.get("type")))
    fig.tight_layout()
    fig.savefig(args.out, dpi=130)
    print(f"plot-vs-cublas: wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
