#!/usr/bin/env python3
"""Figure for 06_unified from the CSV that um_page_faults writes (no GPU needed to plot):

    ./um_page_faults --csv=figures/um_page_faults.csv
    python3 plot.py --page-faults figures/um_page_faults.csv --out figures     (or: make plots)

writes figures/um_page_faults.png: add() GB/s of the book's four managed-memory versions and of
the cudaMalloc baseline (log scale: the naive version is orders of magnitude slower), each bar
labelled with its GB/s and % of the baseline, and the book's Tesla P100 figures (N = 2^20:
5 GB/s with CPU initialization, 670 GB/s with the GPU init kernel) marked beside the measured ones.
The CSV is common/results.cuh's: header gpu,cc,driver,cuda,program,n,version,baseline,ms,rate,...
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import plotlib  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402

# The book's figures (the book chapter, Tesla P100, N = 2^20 floats): version number -> GB/s.
BOOK_P100 = {"1": 5.0, "2": 670.0}


def plot_page_faults(path, out):
    rows = plotlib.read_table(path)
    versions = [r for r in rows if r["baseline"] != "1"] + [r for r in rows if r["baseline"] == "1"]
    names = [r["version"] for r in versions]
    gbps = [float(r["rate"]) for r in versions]
    colors = ["tab:gray" if r["baseline"] == "1" else "tab:blue" for r in versions]
    fig, ax = plt.subplots(figsize=(9, 5))
    x = range(len(versions))
    bars = ax.bar(x, gbps, color=colors, width=0.6, label=f"measured, {rows[0]['gpu']}")
    for b, r in zip(bars, versions):
        pct = r.get("pct_of_baseline") or ""
        share = f"{float(pct):.1f}%" if pct and float(pct) < 10 else f"{float(pct or 0):.0f}%"
        label = f"{float(r['rate']):.1f} GB/s" + (f"\n{share}" if pct and r["baseline"] != "1" else "")
        ax.text(b.get_x() + b.get_width() / 2, b.get_height() * 1.08, label, ha="center", va="bottom", fontsize=8)
    # The book's P100 figures, next to the versions they belong to (the leading number of the name).
    book_x, book_y = [], []
    for i, r in enumerate(versions):
        key = r["version"].split(" ")[0]
        if key in BOOK_P100:
            book_x.append(i + 0.38)
            book_y.append(BOOK_P100[key])
    if book_x:
        ax.scatter(book_x, book_y, marker="_", s=400, linewidths=3, color="tab:red", zorder=3,
                   label="book, Tesla P100, N = 2^20 (5 -> 670 GB/s)")
        for bx, by in zip(book_x, book_y):
            ax.text(bx + 0.12, by, f"{by:.0f}", color="tab:red", va="center", fontsize=8)
    ax.set_yscale("log")
    ax.set_ylim(min(gbps + book_y) / 3, max(gbps) * 8)
    ax.set_xticks(list(x), [n.replace(" (", "\n(").replace(" + ", "\n+ ") for n in names], fontsize=8)
    ax.set_ylabel("add() GB/s (3 x 4 bytes per element, log scale)")
    n = int(float(rows[0].get("n", 0) or 0))
    ax.set_title(f"Unified memory: the first add() after each initialization, N = {n:,} floats")
    ax.legend(loc="upper left", fontsize=8)
    return plotlib.save(fig, out / "um_page_faults.png")


def draw(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = HERE / "figures"  # run with no options: redraw from the committed CSV
    p.add_argument("--page-faults", default=str(here / "um_page_faults.csv"),
                   help="CSV written by ./um_page_faults --csv=FILE (default figures/um_page_faults.csv)")
    p.add_argument("--out", default=str(here), help="output folder (default: this chapter's figures/)")
    a = p.parse_args(argv)
    plot_page_faults(a.page_faults, Path(a.out))


if __name__ == "__main__":
    sys.exit(plotlib.main(draw))
