#!/usr/bin/env python3
"""Figures for 02_memory from the programs' CSV files (no GPU needed to plot).

    ./coalescing --csv=figures/coalescing.csv
    ./pinned_bandwidth --csv=figures/pinned_bandwidth.csv
    python3 plot.py                  (or: make plots, which does all three)

writes into figures/:
    pinned_bandwidth.png   H2D and D2H GB/s vs transfer size for pageable, pinned, registered and
                           write-combined memory: the book's pinned-vs-pageable shmoo
    coalescing_offset.png  copy GB/s vs offset (elements) with the cudaMemcpy D2D line
    coalescing_stride.png  useful copy GB/s vs stride (elements) with the cudaMemcpy D2D line
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import plotlib  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import LogLocator, NullFormatter  # noqa: E402


def plot_pinned(path, out_dir):
    rows = [r for r in plotlib.read(path, "pinned_bandwidth") if r.get("direction")]
    if not rows:
        raise plotlib.CsvError(f"{path}: no rows with a direction column")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, direction in zip(axes, ("H2D", "D2H")):
        series = {}
        for r in rows:
            if r["direction"] == direction:
                series.setdefault(r["memory"], []).append((int(r["bytes"]) / 1024, plotlib.num(r, "rate")))
        plotlib.lines(series, None, "host to device" if direction == "H2D" else "device to host", "transfer size",
                      "bandwidth (GB/s)" if direction == "H2D" else "", logx=True, ax=ax)
        # A label at every factor of 4 overlaps ("128 KB512 KB"): label every factor of 16
        # (1 KB, 16 KB, 256 KB, 4 MB, 64 MB) and keep the powers of 2 as unlabelled minor ticks.
        ax.xaxis.set_major_locator(LogLocator(base=16))
        ax.xaxis.set_minor_locator(LogLocator(base=2))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.xaxis.set_major_formatter(lambda kb, _: f"{kb / 1024:g} MB" if kb >= 1024 else f"{kb:g} KB")
    fig.suptitle(f"pinned vs pageable host memory ({plotlib.gpu_label(rows)})")
    return [plotlib.save(fig, out_dir / "pinned_bandwidth.png")]


def plot_coalescing(path, out_dir):
    rows = plotlib.read(path, "coalescing")
    d2d = [plotlib.num(r, "rate") for r in rows if r["baseline"] == "1"]
    outs = []
    for kind, xlabel, ylabel, fname in (
        ("offset", "offset (elements of 4 bytes)", "copy bandwidth (GB/s)", "coalescing_offset.png"),
        ("stride", "stride (elements of 4 bytes)", "useful bandwidth (GB/s)", "coalescing_stride.png"),
    ):
        pts = [(int(r[kind]), plotlib.num(r, "rate")) for r in rows if r.get(kind)]
        if not pts:
            raise plotlib.CsvError(f"{path}: no '{kind}' rows")
        fig, ax = plt.subplots(figsize=(7, 4.2))
        plotlib.lines({f"copy_{kind}": pts}, None, f"global memory copy vs {kind} ({plotlib.gpu_label(rows)})",
                      xlabel, ylabel, logx=kind == "stride", hlines=[(d2d[0], "cudaMemcpy D2D")] if d2d else [], ax=ax)
        if kind == "stride":
            ax.set_xticks([1, 2, 4, 8, 16, 32], ["1", "2", "4", "8", "16", "32"])
        ax.title.set_fontsize(10)
        outs.append(plotlib.save(fig, out_dir / fname))
    return outs


def draw(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--coalescing", default=str(HERE / "figures" / "coalescing.csv"), help="./coalescing --csv=FILE")
    p.add_argument("--pinned", default=str(HERE / "figures" / "pinned_bandwidth.csv"),
                   help="./pinned_bandwidth --csv=FILE")
    p.add_argument("--out", default=str(HERE / "figures"), help="directory for the PNG files")
    a = p.parse_args(argv)
    out_dir = Path(a.out)
    plot_pinned(a.pinned, out_dir)
    plot_coalescing(a.coalescing, out_dir)


if __name__ == "__main__":
    sys.exit(plotlib.main(draw))
