#!/usr/bin/env python3
"""Figures for chapter 02_memory from the CSV output of two programs:

    ./coalescing --csv       > figures/coalescing.csv
    ./pinned_bandwidth --csv > figures/pinned_bandwidth.csv
    python3 plot.py          (or: make plots, which does all three)

writes into figures/:
    pinned_bandwidth.png   H2D and D2H GB/s vs transfer size for pageable, pinned, registered and
                           write-combined memory: the book's pinned-vs-pageable shmoo
    coalescing_offset.png  copy GB/s vs offset (elements) with the cudaMemcpy D2D line
    coalescing_stride.png  useful copy GB/s vs stride (elements) with the cudaMemcpy D2D line

The programs also print their checks and PASSED into the same stream; lines that are not data
rows are skipped. A '# GPU: name' line, when present, goes into the titles.
"""
import argparse
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.ticker import LogLocator, NullFormatter  # noqa: E402

HERE = Path(__file__).resolve().parent


def read_rows(path, kinds):
    """(gpu_name, rows): rows are the CSV lines whose first field is one of `kinds`."""
    gpu, rows = "", []
    with open(path, newline="") as f:
        for line in f:
            line = line.strip()
            if line.startswith("# GPU:"):
                gpu = line[len("# GPU:"):].strip()
            if not line or line.startswith("#"):
                continue
            fields = next(csv.reader([line]))
            if fields and fields[0] in kinds:
                rows.append(fields)
    return gpu, rows


def plot_pinned(path, out_dir):
    gpu, rows = read_rows(path, {"H2D", "D2H"})
    if not rows:
        raise ValueError(f"{path}: no direction,memory,bytes,gbps rows")
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2), sharey=True)
    for ax, direction in zip(axes, ("H2D", "D2H")):
        memories = []
        for r in rows:
            if r[0] == direction and r[1] not in memories:
                memories.append(r[1])
        for mem in memories:
            pts = sorted((int(r[2]), float(r[3])) for r in rows if r[0] == direction and r[1] == mem)
            ax.plot([b / 1024 for b, _ in pts], [g for _, g in pts], marker="o", markersize=3, label=mem)
        ax.set_xscale("log", base=2)
        # A label at every factor of 4 overlaps ("128 KB512 KB"): label every factor of 16
        # (1 KB, 16 KB, 256 KB, 4 MB, 64 MB) and keep the powers of 2 as unlabelled minor ticks.
        ax.xaxis.set_major_locator(LogLocator(base=16))
        ax.xaxis.set_minor_locator(LogLocator(base=2))
        ax.xaxis.set_minor_formatter(NullFormatter())
        ax.xaxis.set_major_formatter(lambda kb, _: f"{kb / 1024:g} MB" if kb >= 1024 else f"{kb:g} KB")
        ax.set_xlabel("transfer size")
        ax.set_title(f"{'host to device' if direction == 'H2D' else 'device to host'}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend()
    axes[0].set_ylabel("bandwidth (GB/s)")
    fig.suptitle("pinned vs pageable host memory" + (f" ({gpu})" if gpu else ""))
    fig.tight_layout()
    out = out_dir / "pinned_bandwidth.png"
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return [out]


def plot_coalescing(path, out_dir):
    gpu, rows = read_rows(path, {"offset", "stride", "d2d", "vec4"})
    d2d = [float(r[3]) for r in rows if r[0] == "d2d"]
    outs = []
    for kind, xlabel, ylabel, fname in (
        ("offset", "offset (elements of 4 bytes)", "copy bandwidth (GB/s)", "coalescing_offset.png"),
        ("stride", "stride (elements of 4 bytes)", "useful bandwidth (GB/s)", "coalescing_stride.png"),
    ):
        pts = sorted((int(r[1]), float(r[3])) for r in rows if r[0] == kind)
        if not pts:
            raise ValueError(f"{path}: no '{kind}' rows")
        fig, ax = plt.subplots(figsize=(7, 4.2))
        ax.plot([p for p, _ in pts], [g for _, g in pts], marker="o", markersize=3, label=f"copy_{kind}")
        if d2d:
            ax.axhline(d2d[0], color="gray", linestyle="--", label="cudaMemcpy D2D")
        if kind == "stride":
            ax.set_xscale("log", base=2)
            ax.set_xticks([1, 2, 4, 8, 16, 32], ["1", "2", "4", "8", "16", "32"])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        ax.set_ylim(bottom=0)
        ax.grid(True, alpha=0.3)
        ax.legend()
        ax.set_title(f"global memory copy vs {kind}" + (f" ({gpu})" if gpu else ""))
        fig.tight_layout()
        out = out_dir / fname
        fig.savefig(out, dpi=120)
        plt.close(fig)
        outs.append(out)
    return outs


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--coalescing", default=str(HERE / "figures" / "coalescing.csv"), help="coalescing --csv output")
    p.add_argument("--pinned", default=str(HERE / "figures" / "pinned_bandwidth.csv"),
                   help="pinned_bandwidth --csv output")
    p.add_argument("--out", default=str(HERE / "figures"), help="directory for the PNG files")
    a = p.parse_args(argv)
    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    try:
        written = plot_pinned(a.pinned, out_dir) + plot_coalescing(a.coalescing, out_dir)
    except (OSError, ValueError, IndexError) as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    for w in written:
        print(f"wrote {w}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
