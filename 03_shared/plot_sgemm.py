#!/usr/bin/env python3
"""Chart of the SGEMM progression from ./sgemm_steps --csv=FILE (no GPU needed to plot).

    ./sgemm_steps --csv=figures/sgemm_steps.csv
    python3 plot_sgemm.py figures/sgemm_steps.csv --out figures/sgemm_steps.png

One bar per step (and cuBLAS, grey) at its % of cuBLAS SGEMM FP32, labelled with GFLOP/s; a dashed
line at the 90% target. Reads the results.cuh CSV (header gpu,cc,driver,cuda,program,...); lines
starting with '#' are skipped. `make plots` runs both commands.
"""
import argparse
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

NEEDED = {"gpu", "program", "m", "n", "k", "version", "baseline", "rate", "pct_of_baseline"}


def read_rows(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(line for line in f if not line.startswith("#")))
    if not rows or not NEEDED <= set(rows[0]):
        sys.exit(f"{path}: not a results.cuh CSV of sgemm_steps (needs columns {', '.join(sorted(NEEDED))})")
    return rows


def plot(rows, out):
    names = [r["version"] for r in rows]
    pct = [float(r["pct_of_baseline"] or 0) for r in rows]
    base = [r["baseline"] == "1" for r in rows]
    fig, ax = plt.subplots(figsize=(10, 5))
    bars = ax.bar(range(len(rows)), pct, color=["tab:gray" if b else "tab:blue" for b in base])
    for bar, r in zip(bars, rows):
        ax.text(bar.get_x() + bar.get_width() / 2, bar.get_height(), f"{float(r['rate']):.0f}\nGFLOP/s",
                ha="center", va="bottom", fontsize=7)
    ax.axhline(90, color="tab:red", ls="--", lw=1)
    ax.text(-0.45, 91, "90% target", color="tab:red", ha="left", va="bottom", fontsize=8)
    ax.set_xticks(range(len(rows)), names, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("% of cuBLAS SGEMM (FP32, no TF32)")
    ax.set_ylim(0, max(pct + [100]) * 1.2)
    r0 = rows[0]
    ax.set_title(f"SGEMM {r0['m']} x {r0['n']} x {r0['k']} step by step, {r0['gpu']}")
    fig.tight_layout()
    fig.savefig(out, dpi=120)
    plt.close(fig)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("csv", help="CSV written by ./sgemm_steps --csv=FILE")
    p.add_argument("--out", default="figures/sgemm_steps.png", help="PNG to write (default figures/sgemm_steps.png)")
    a = p.parse_args()
    out = Path(a.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    plot(read_rows(a.csv), out)
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
