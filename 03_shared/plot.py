#!/usr/bin/env python3
"""Plots for 03_shared from the programs' --csv output (no GPU needed to plot).

    ./transpose --csv > transpose.csv
    ./matmul_tiled --csv > matmul.csv
    python3 plot.py --transpose transpose.csv --matmul matmul.csv --out figures

writes figures/transpose.png (GB/s of each transpose variant, the cudaMemcpy D2D baseline as a
line) and figures/matmul.png (GFLOP/s of each kernel as % of cuBLAS). `make plots` does all three.
The programs also print a banner and check lines; only the CSV block (from its header line on) is read.
"""
import argparse
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402


def read_block(path, first_column):
    """Rows of the CSV block whose header starts with `first_column`, as dicts."""
    lines = Path(path).read_text().splitlines()
    start = next((i for i, l in enumerate(lines) if l.startswith(first_column + ",")), None)
    if start is None:
        sys.exit(f"{path}: no CSV header starting with '{first_column},'")
    block = []
    for line in lines[start:]:
        if "," not in line or line.startswith((" ", "PASSED", "FAILED", "SKIPPED")):
            break
        block.append(line)
    return list(csv.DictReader(block))


def plot_transpose(path, out):
    rows = read_block(path, "variant")
    base = [r for r in rows if r["variant"].startswith("cudaMemcpy")]
    kernels = [r for r in rows if not r["variant"].startswith("cudaMemcpy")]
    names = [r["variant"] for r in kernels]
    gbps = [float(r["gbps"]) for r in kernels]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bars = ax.barh(names[::-1], gbps[::-1], color="tab:blue")
    for b, r in zip(bars, kernels[::-1]):
        ax.text(b.get_width(), b.get_y() + b.get_height() / 2, f" {float(r['pct_of_d2d']):.0f}%", va="center")
    if base:
        d2d = float(base[0]["gbps"])
        ax.axvline(d2d, color="tab:red", ls="--")
        ax.set_xlim(0, max([d2d] + gbps) * 1.3)
        ax.text(d2d, len(names) - 0.5, f" cudaMemcpy D2D\n {d2d:.0f} GB/s", color="tab:red", va="top")
    r0 = rows[0]
    ax.set_xlabel("GB/s (bytes read + written)")
    ax.set_title(f"Matrix transpose {r0['rows']} x {r0['cols']} fp32 (% of cudaMemcpy D2D)")
    fig.tight_layout()
    fig.savefig(out / "transpose.png", dpi=120)
    plt.close(fig)


def plot_matmul(path, out):
    rows = read_block(path, "kernel")
    names = [r["kernel"] for r in rows]
    pct = [float(r["pct_of_cublas"]) for r in rows]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    bars = ax.bar(range(len(names)), pct, color=["tab:gray" if "cuBLAS" in n else "tab:blue" for n in names])
    for b, r in zip(bars, rows):
        ax.text(b.get_x() + b.get_width() / 2, b.get_height(), f"{float(r['gflops']):.0f}\nGFLOP/s",
                ha="center", va="bottom", fontsize=8)
    ax.set_xticks(range(len(names)), names, rotation=15, ha="right", fontsize=8)
    ax.set_ylabel("% of cuBLAS SGEMM (FP32)")
    ax.set_ylim(0, max(pct + [100]) * 1.2)
    r0 = rows[0]
    ax.set_title(f"SGEMM {r0['m']} x {r0['n']} x {r0['k']}: naive -> shared tiles -> register blocking")
    fig.tight_layout()
    fig.savefig(out / "matmul.png", dpi=120)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--transpose", help="CSV output of ./transpose --csv")
    p.add_argument("--matmul", help="CSV output of ./matmul_tiled --csv")
    p.add_argument("--out", default="figures", help="output folder (default figures)")
    a = p.parse_args()
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    if a.transpose:
        plot_transpose(a.transpose, out)
        print(f"wrote {out / 'transpose.png'}")
    if a.matmul:
        plot_matmul(a.matmul, out)
        print(f"wrote {out / 'matmul.png'}")


if __name__ == "__main__":
    main()
