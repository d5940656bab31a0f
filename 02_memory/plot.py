#!/usr/bin/env python3
"""Figures for 02_memory from the programs' CSV files (no GPU needed to plot).

    ./coalescing --csv=figures/coalescing.csv
    ./pinned_bandwidth --csv=figures/pinned_bandwidth.csv
    ./bytes_in_flight --csv=figures/bytes_in_flight.csv
    python3 plot.py                  (or: make plots, which does all of it)

writes into figures/:
    pinned_bandwidth.png   H2D and D2H GB/s vs transfer size for pageable, pinned, registered and
                           write-combined memory: the book's pinned-vs-pageable shmoo
    coalescing_offset.png  copy GB/s vs offset (elements) with the cudaMemcpy D2D line
    coalescing_stride.png  useful copy GB/s vs stride (elements) with the cudaMemcpy D2D line
    bytes_in_flight.png    read GB/s vs bytes in flight per SM, one line per number of independent
                           loads per thread, with the theoretical peak, 90% of it, Little's law's
                           bytes (measured DRAM latency x peak / SMs) and the book's 6 KB (V100)
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


def plot_bytes_in_flight(path, out_dir):
    rows = [r for r in plotlib.read(path, "bytes_in_flight") if r.get("bytes_in_flight_per_sm")]
    if not rows:
        raise plotlib.CsvError(f"{path}: no rows with a bytes_in_flight_per_sm column")
    series = {}
    for r in rows:
        k = int(r["loads_per_thread"])
        series.setdefault(k, []).append((plotlib.num(r, "bytes_in_flight_per_sm") / 1024, plotlib.num(r, "rate")))
    peak, latency, sms = (plotlib.num(rows[0], c) for c in ("peak_gbps", "dram_latency_ns", "sms"))
    fig, ax = plt.subplots(figsize=(8, 4.6))
    plotlib.lines({f"{k} load{'s' if k > 1 else ''} per thread": series[k] for k in sorted(series)}, None,
                  f"DRAM read bandwidth vs bytes in flight ({plotlib.gpu_label(rows)})",
                  "bytes in flight per SM (KB) = resident warps x 32 x loads per thread x 4 B", "GB/s", logx=True,
                  hlines=[(peak, f"theoretical peak {peak:.0f} GB/s")], ax=ax)
    ax.axhline(0.9 * peak, color="tab:green", ls="--", label="90% of peak")
    little = latency * peak / sms / 1024  # ns x GB/s = bytes
    ax.axvline(little, color="tab:red", ls=":", label=f"Little's law: {latency:.0f} ns x peak / {sms:.0f} SMs = {little:.1f} KB")
    ax.axvline(6, color="tab:gray", ls="-.", label="book, V100: ~6 KB for 90% of peak")
    ax.legend(fontsize=8)
    ax.title.set_fontsize(10)
    ax.xaxis.set_major_formatter(lambda kb, _: f"{kb:g}")
    return [plotlib.save(fig, out_dir / "bytes_in_flight.png")]


def draw(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--coalescing", default=str(HERE / "figures" / "coalescing.csv"), help="./coalescing --csv=FILE")
    p.add_argument("--pinned", default=str(HERE / "figures" / "pinned_bandwidth.csv"),
                   help="./pinned_bandwidth --csv=FILE")
    p.add_argument("--bytes-in-flight", default=None,
                   help="./bytes_in_flight --csv=FILE (default figures/bytes_in_flight.csv, skipped if absent)")
    p.add_argument("--out", default=str(HERE / "figures"), help="directory for the PNG files")
    a = p.parse_args(argv)
    out_dir = Path(a.out)
    plot_pinned(a.pinned, out_dir)
    plot_coalescing(a.coalescing, out_dir)
    bif = Path(a.bytes_in_flight or HERE / "figures" / "bytes_in_flight.csv")
    if a.bytes_in_flight is None and not bif.exists():  # no GPU run of it committed yet
        print(f"note: {bif} not found (make plots on a GPU writes it): bytes_in_flight.png not drawn")
    else:
        plot_bytes_in_flight(bif, out_dir)


if __name__ == "__main__":
    sys.exit(plotlib.main(draw))
