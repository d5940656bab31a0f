#!/usr/bin/env python3
"""Plots for 07_atomics from the CSV that the programs write with --csv=FILE (no GPU needed to plot).

    ./histogram --csv=figures/histogram.csv
    ./vector_sum --csv=figures/vector_sum.csv
    python3 plot.py --histogram figures/histogram.csv --vector-sum figures/vector_sum.csv --out figures

writes figures/histogram.png (input GB/s of each histogram version, uniform and skewed data side by
side, cudaMemcpy D2D as a line) and figures/vector_sum.png (GB/s of each sum, % of D2D). `make plots`
does all three. The CSV comes from common/results.cuh: a header starting with gpu,cc,driver,cuda,program,
one row per version; histogram versions are named "<data>: <version>".
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import plotlib  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402


def d2d_line(ax, rows):
    base = [r for r in rows if r["baseline"] == "1"]
    if not base:
        return None
    d2d = float(base[0]["rate"])
    ax.axhline(d2d, color="tab:red", ls="--", lw=1)
    ax.text(-0.45, d2d, f"cudaMemcpy D2D {d2d:.0f} GB/s (read + write)", color="tab:red", va="bottom", fontsize=8)
    return d2d


def plot_histogram(path, out):
    rows = plotlib.read_table(path)
    kernels = [r for r in rows if r["baseline"] != "1"]
    datasets, versions, rate = [], [], {}
    for r in kernels:
        data, _, version = r["version"].partition(": ")
        if data not in datasets:
            datasets.append(data)
        if version not in versions:
            versions.append(version)
        rate[(data, version)] = (float(r["rate"]), r["pct_of_baseline"])
    fig, ax = plt.subplots(figsize=(9, 4.8))
    width = 0.8 / max(len(datasets), 1)
    colors = ["tab:blue", "tab:orange", "tab:green", "tab:purple"]
    top = 0.0
    for k, data in enumerate(datasets):
        xs = [i + (k - (len(datasets) - 1) / 2) * width for i in range(len(versions))]
        vals = [rate.get((data, v), (0.0, ""))[0] for v in versions]
        top = max([top] + vals)
        bars = ax.bar(xs, vals, width, label=f"{data} bytes", color=colors[k % len(colors)])
        for b, v in zip(bars, versions):
            pct = rate.get((data, v), (0.0, ""))[1]
            if pct:
                ax.text(b.get_x() + b.get_width() / 2, b.get_height(), f"{float(pct):.0f}%", ha="center",
                        va="bottom", fontsize=7)
    d2d = d2d_line(ax, rows)
    ax.set_xticks(range(len(versions)), versions, rotation=12, ha="right", fontsize=8)
    ax.set_ylabel("input GB/s (bytes read)")
    ax.set_ylim(0, max(top, d2d or 0) * 1.15)
    r0 = rows[0]
    skew = float(r0.get("skew", "nan"))
    ax.set_title(f"256-bin histogram of {int(r0['n']) / 1e6:.0f} MB, {r0['gpu']}\n"
                 f"uniform vs skewed ({skew * 100:.0f}% one value); labels: % of cudaMemcpy D2D", fontsize=10)
    ax.legend(fontsize=8, loc="upper right")
    return plotlib.save(fig, out / "histogram.png")


def plot_vector_sum(path, out):
    rows = plotlib.read_table(path)
    kernels = [r for r in rows if r["baseline"] != "1"]
    names = [r["version"] for r in kernels]
    vals = [float(r["rate"]) for r in kernels]
    fig, ax = plt.subplots(figsize=(7, 4.5))
    bars = ax.bar(range(len(names)), vals, 0.6, color="tab:blue")
    for b, r in zip(bars, kernels):
        ax.text(b.get_x() + b.get_width() / 2, b.get_height(),
                f"{float(r['rate']):.0f} GB/s\n{float(r['pct_of_baseline'] or 0):.1f}% of D2D", ha="center",
                va="bottom", fontsize=8)
    d2d = d2d_line(ax, rows)
    ax.set_xticks(range(len(names)), names, fontsize=9)
    ax.set_ylabel("GB/s (bytes read)")
    ax.set_ylim(0, max(vals + [d2d or 0]) * 1.25)
    r0 = rows[0]
    ax.set_title(f"Sum of {int(r0['n'])} int32 with one atomicAdd per block, {r0['gpu']}", fontsize=10)
    return plotlib.save(fig, out / "vector_sum.png")


def draw(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = HERE / "figures"  # run with no options: redraw from the committed CSVs
    p.add_argument("--histogram", help="CSV written by ./histogram --csv=FILE")
    p.add_argument("--vector-sum", help="CSV written by ./vector_sum --csv=FILE")
    p.add_argument("--out", default=str(here), help="output folder (default: this chapter's figures/)")
    a = p.parse_args(argv)
    if not a.histogram and not a.vector_sum:
        a.histogram, a.vector_sum = str(here / "histogram.csv"), str(here / "vector_sum.csv")
    out = Path(a.out)
    if a.histogram:
        plot_histogram(a.histogram, out)
    if a.vector_sum:
        plot_vector_sum(a.vector_sum, out)


if __name__ == "__main__":
    sys.exit(plotlib.main(draw))
