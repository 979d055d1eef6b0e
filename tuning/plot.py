#!/usr/bin/env python3
"""Plots obsidian-tune results (JSONL) as PNG files.

For every family and problem group in the results (GPU points with status "ok"):
  <family>_heatmaps.png   median time (us) over variant x threads per block, one panel per size
                          (the size parameter: elements per block, image size, ...); cells of
                          points that were skipped, pruned or wrong are blank; * marks kernels
                          with fewer threads than their widest loop (virtualized)
  <family>_best.png       the best time over thread counts of each variant, against the size
                          (the paper's Figures 6 and 9, top), and the thread count that won

usage: tuning/plot.py RESULTS.jsonl [MORE.jsonl ...] [-o OUT_DIR]
Needs matplotlib and pandas.
"""
import argparse
import json
import math
import os
import sys

try:
    import matplotlib

    matplotlib.use("Agg")  # files only: no display needed
    import matplotlib.pyplot as plt
    import pandas as pd
except ImportError as e:  # say what to install rather than a traceback
    sys.exit(f"plot.py needs matplotlib and pandas ({e}); pip install matplotlib pandas")


def load(paths):
    rows = []
    for path in paths:
        if not os.path.exists(path):
            sys.exit(f"plot.py: no such results file: {path}")
        with open(path) as f:
            for number, line in enumerate(f, start=1):
                line = line.strip()
                if not line:
                    continue
                try:
                    j = json.loads(line)
                except json.JSONDecodeError:
                    continue  # a line cut short by an interrupted sweep
                # A JSON line that lacks a field: named, as obsidian-tune names it.
                if not isinstance(j, dict):
                    sys.exit(f"plot.py: {path}:{number}: a results line must be a JSON object")
                if j.get("mode") != "gpu":
                    continue
                fields = ("family", "group", "sizeParam", "size", "label", "threads", "status")
                absent = [k for k in fields if k not in j]
                if absent:
                    sys.exit(f'plot.py: {path}:{number}: no "{absent[0]}" (a results line has '
                             + ", ".join(fields) + ")")
                t = j.get("time_ms", {})
                try:
                    us = float(t["median"]) * 1e3 if "median" in t else math.nan
                except (TypeError, ValueError):
                    sys.exit(f'plot.py: {path}:{number}: "time_ms" must be {{"median": ms, ...}}')
                rows.append(
                    {
                        "family": j["family"],
                        "group": j["group"],
                        "sizeParam": j["sizeParam"],
                        "size": j["size"],
                        "label": j["label"],
                        "threads": j["threads"],
                        "status": j["status"],
                        "us": us,
                        "gbps": j.get("gbps", math.nan),
                        "virtualized": bool(j.get("virtualized", False)),
                    }
                )
    return pd.DataFrame(rows)


def problem(group, size_param):
    """The group without the size parameter: one figure per problem (type, n, ...)."""
    parts = [p for p in group.split() if not p.startswith(size_param + "=")]
    return " ".join(parts)


def heatmaps(df, family, out):
    files = []
    df = df.assign(problem=[problem(g, s) for g, s in zip(df.group, df.sizeParam)])
    for prob, d in df.groupby("problem"):
        sizes = sorted(d["size"].unique())
        labels = list(dict.fromkeys(d.sort_values("label")["label"]))
        threads = sorted(d["threads"].unique())
        cols = min(len(sizes), 4)
        rows = math.ceil(len(sizes) / cols)
        fig, axes = plt.subplots(
            rows, cols, figsize=(4.2 * cols, 0.45 * len(labels) * rows + 1.6 * rows), squeeze=False
        )
        for ax in axes.flat[len(sizes):]:
            ax.axis("off")
        for ax, size in zip(axes.flat, sizes):
            grid = (
                d[d["size"] == size]
                .pivot_table(index="label", columns="threads", values="us", aggfunc="min")
                .reindex(index=labels, columns=threads)
            )
            im = ax.imshow(grid.values, aspect="auto", cmap="viridis_r")
            ax.set_xticks(range(len(threads)), [str(t) for t in threads], fontsize=7)
            ax.set_yticks(range(len(labels)), labels, fontsize=7)
            ax.set_xlabel("threads per block", fontsize=8)
            ax.set_title(f"{d.sizeParam.iloc[0]} = {size}", fontsize=9)
            virt = (
                d[d["size"] == size]
                .pivot_table(index="label", columns="threads", values="virtualized", aggfunc="max")
                .reindex(index=labels, columns=threads)
            )
            best, lo, hi = grid.min().min(), *im.get_clim()
            for (i, j), v in pd.DataFrame(grid.values).stack().items():
                light = (v - lo) < 0.5 * (hi - lo)  # viridis_r: small times are light cells
                text = (f"{v:.0f}" if v >= 100 else f"{v:.1f}") + ("*" if virt.iat[i, j] == True else "")
                ax.text(j, i, text, ha="center", va="center",
                        fontsize=6, fontweight="bold" if v == best else "normal",
                        color="red" if v == best else ("black" if light else "white"))
            fig.colorbar(im, ax=ax, label="median us", shrink=0.8)
        fig.suptitle(f"{family} {prob}: median time (us; best in red; * virtualized threads)", fontsize=10)
        fig.tight_layout()
        name = os.path.join(out, f"{family}{'_' + prob.replace(' ', '_').replace('=', '') if prob else ''}_heatmaps.png")
        fig.savefig(name, dpi=120)
        plt.close(fig)
        files.append(name)
    return files


def best_curves(df, family, out):
    files = []
    df = df.assign(problem=[problem(g, s) for g, s in zip(df.group, df.sizeParam)])
    for prob, d in df.groupby("problem"):
        best = d.loc[d.groupby(["label", "size"])["us"].idxmin()]
        fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4.2))
        for label, b in best.groupby("label"):
            b = b.sort_values("size")
            ax.plot(b["size"], b["us"], marker="o", label=label)
            ax2.plot(b["size"], b["threads"], marker="o", label=label)
        for a in (ax, ax2):
            a.set_xscale("log", base=2)
            a.set_xlabel(d.sizeParam.iloc[0])
            a.grid(True, alpha=0.3)
        ax.set_yscale("log")
        ax.set_ylabel("best median time (us)")
        ax.set_title("best time over thread counts")
        ax2.set_yscale("log", base=2)
        ax2.set_ylabel("threads per block of the best time")
        ax2.set_title("the thread count that won")
        ax.legend(fontsize=7)
        fig.suptitle(f"{family} {prob}", fontsize=10)
        fig.tight_layout()
        name = os.path.join(out, f"{family}{'_' + prob.replace(' ', '_').replace('=', '') if prob else ''}_best.png")
        fig.savefig(name, dpi=120)
        plt.close(fig)
        files.append(name)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="obsidian-tune results files (JSONL)")
    ap.add_argument("-o", "--out", default="plots", help="directory for the PNG files")
    a = ap.parse_args()
    df = load(a.results)
    ok = df[df["status"] == "ok"] if len(df) else df
    if ok.empty:
        sys.exit("plot.py: no GPU point with status ok in " + ", ".join(a.results))
    os.makedirs(a.out, exist_ok=True)
    for family, d in ok.groupby("family"):
        for name in heatmaps(d, family, a.out) + best_curves(d, family, a.out):
            print("wrote", name)


if __name__ == "__main__":
    main()
