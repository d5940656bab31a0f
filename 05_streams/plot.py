#!/usr/bin/env python3
"""Plots for 05_streams from overlap's timeline CSV (no GPU needed to plot).

    ./overlap --timeline=figures/overlap_timeline.csv
    python3 plot.py --timeline figures/overlap_timeline.csv --out figures

writes figures/overlap_timeline.png: a Gantt chart per version (serial, the guide's two streams in
depth-first and breadth-first order, and the fastest version unless --versions names others), one
row per copy/compute engine and one per stream, H2D / kernel / D2H coloured, on one time axis; the
dashed line is the lower bound max(H2D, kernel, D2H) measured alone. `make plots` runs both steps.
Bars start where the op could start on its engine (overlap.cu explains how the times are derived
from the events) and end at the event recorded after it.
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import plotlib  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.patches import Patch  # noqa: E402

COLORS = {"H2D": "tab:blue", "kernel": "tab:green", "D2H": "tab:orange"}
ENGINE_ROWS = [("H2D", "copy H2D"), ("kernel", "compute"), ("D2H", "copy D2H")]


def read_timeline(path):
    """Rows of the timeline CSV (header starting with gpu,cc,driver,cuda,program), grouped by version in file order."""
    rows = plotlib.read_table(path, need=("version", "streams", "stream", "op", "start_ms", "end_ms"))
    versions = {}
    for r in rows:
        versions.setdefault(r["version"], []).append(r)
    return versions


def pick(versions, wanted):
    if wanted:
        missing = [w for w in wanted if w not in versions]
        if missing:
            raise ValueError(f"no such version in the timeline: {missing}; have: {list(versions)}")
        return wanted
    names = list(versions)
    chosen = [n for n in names if n.startswith("serial")]
    chosen += [n for n in names if n.startswith("2 streams x 1 chunk")]
    rest = [n for n in names if not n.startswith("serial")]
    if rest:
        best = min(rest, key=lambda n: float(versions[n][0].get("events_ms") or max(float(r["end_ms"]) for r in versions[n])))
        if best not in chosen:
            chosen.append(best)
    return chosen or names[:1]


def draw(ax, name, rows, xmax):
    nstreams = int(rows[0]["streams"])
    labels = [label for _, label in ENGINE_ROWS] + [f"stream {s}" for s in range(nstreams)]
    y_of = {label: i for i, label in enumerate(labels)}
    for r in rows:
        x0, x1 = float(r["start_ms"]), float(r["end_ms"])
        color = COLORS.get(r["op"], "tab:gray")
        engine_label = dict(ENGINE_ROWS).get(r["op"])
        for label in (engine_label, f"stream {r['stream']}"):
            if label in y_of:
                ax.broken_barh([(x0, max(x1 - x0, 1e-4))], (y_of[label] - 0.4, 0.8), facecolors=color,
                               edgecolor="white", linewidth=0.3)
    bound = float(rows[0].get("bound_ms") or 0)
    if bound > 0:
        ax.axvline(bound, color="black", ls="--", lw=1)
    ax.axhline(len(ENGINE_ROWS) - 0.5, color="gray", lw=0.5)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.set_ylim(len(labels) - 0.5, -0.5)
    ax.set_xlim(0, xmax)
    t = rows[0].get("table_ms")
    ev = rows[0].get("events_ms")
    title = name
    if t:
        title += f": {float(t):.2f} ms"
    if ev:
        title += f" ({float(ev):.2f} ms in this run with events)"
    ax.set_title(title, fontsize=9, loc="left")


def plot_timeline(path, out, wanted):
    versions = read_timeline(path)
    chosen = pick(versions, wanted)
    xmax = max(float(r["end_ms"]) for n in chosen for r in versions[n]) * 1.02
    heights = [3 + int(versions[n][0]["streams"]) for n in chosen]
    fig, axes = plt.subplots(len(chosen), 1, figsize=(11, 1.0 + 0.32 * sum(heights) + 0.5 * len(chosen)),
                             sharex=True, gridspec_kw={"height_ratios": heights}, squeeze=False)
    for ax, name in zip(axes[:, 0], chosen):
        draw(ax, name, versions[name], xmax)
    axes[-1, 0].set_xlabel("ms since the first op was issued")
    r0 = versions[chosen[0]][0]
    handles = [Patch(color=c, label=k) for k, c in COLORS.items()]
    handles.append(plt.Line2D([], [], color="black", ls="--", label="max(H2D, kernel, D2H) alone"))
    fig.legend(handles=handles, loc="upper right", ncol=4, fontsize=8)
    fig.suptitle(f"Copy/compute overlap, {r0['gpu']}: {int(r0['n']) * 4 / 2**20:.0f} MiB, --iters={r0['iters']}",
                 x=0.01, ha="left", fontsize=10)
    return plotlib.save(fig, out / "overlap_timeline.png", rect=(0, 0, 1, 0.95))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    here = HERE / "figures"  # run with no options: redraw from the committed CSV
    p.add_argument("--timeline", default=str(here / "overlap_timeline.csv"),
                   help="CSV written by ./overlap --timeline=FILE (default figures/overlap_timeline.csv)")
    p.add_argument("--versions", nargs="*", help="version names to draw (default: serial, the guide's pair, the fastest)")
    p.add_argument("--out", default=str(here), help="output folder (default: this chapter's figures/)")
    a = p.parse_args(argv)
    plot_timeline(a.timeline, Path(a.out), a.versions)


if __name__ == "__main__":
    sys.exit(plotlib.main(main))
