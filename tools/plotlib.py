"""plotlib - what every chapter's plot.py shares: read a results.cuh CSV, draw a bar chart of the
versions against their baseline or a sweep as lines, save a PNG (matplotlib, Agg backend).

A CSV written by `./program --csv=FILE` has the header
    gpu,cc,driver,cuda,program,<parameters>,version,baseline,ms,rate,unit,pct_of_baseline,speedup[,extra]
and one row per version. A chapter's plot.py:

    import sys; from pathlib import Path
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import plotlib
    rows = plotlib.read("figures/transpose.csv")
    plotlib.bars(rows, "figures/transpose.png", title="Matrix transpose")
"""
import csv
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")  # no display needed
import matplotlib.pyplot as plt  # noqa: E402

HEADER = ["gpu", "cc", "driver", "cuda", "program"]
UNITS = {"gbps": "GB/s", "gflops": "GFLOP/s", "gops": "GOP/s", "none": ""}


class CsvError(ValueError):
    pass


def read(path, program=None):
    """The rows of a results.cuh CSV as dicts (numbers stay strings); `program` keeps only its rows."""
    with open(path, newline="") as f:
        reader = csv.DictReader(f)
        if reader.fieldnames is None or reader.fieldnames[:5] != HEADER:
            raise CsvError(f"{path}: not a results CSV (the header must start with {','.join(HEADER)})")
        rows = [r for r in reader if program is None or r["program"] == program]
    if not rows:
        raise CsvError(f"{path}: no rows" + (f" for program {program}" if program else ""))
    return rows


def read_table(path, program=None, need=()):
    """Like read(), for a file whose CSV may follow other lines: a program's printed output, or
    comment lines (a fixture). The rows start at the first line that begins with the header;
    `need` lists columns that must be present besides it."""
    lines = Path(path).read_text().splitlines()
    start = next((i for i, line in enumerate(lines) if line.startswith(",".join(HEADER))), None)
    if start is None:
        raise CsvError(f"{path}: no CSV header starting with '{','.join(HEADER)}'")
    reader = csv.DictReader(lines[start:])
    missing = [c for c in need if c not in (reader.fieldnames or [])]
    if missing:
        raise CsvError(f"{path}: columns missing: {', '.join(missing)}")
    rows = [r for r in reader if program is None or r["program"] == program]
    if not rows:
        raise CsvError(f"{path}: no rows after the CSV header" + (f" for program {program}" if program else ""))
    return rows


def num(row, key):
    return float(row[key]) if row.get(key) not in (None, "") else float("nan")


def short_gpu(name):
    """'NVIDIA H100 80GB HBM3' -> 'H100'."""
    words = [w for w in name.split() if w.upper() not in ("NVIDIA", "GEFORCE", "TESLA", "QUADRO")]
    return words[0] if words else name


def gpu_label(rows):
    r = rows[0]
    return f"{r['gpu']}, CUDA {r['cuda']}"


def unit_of(rows):
    return UNITS.get(rows[0].get("unit", ""), "")


def bars(rows, out, title, xlabel=None, color_of=None, target_pct=None):
    """Horizontal bars: rate of each version, the baseline as a dashed line, % of it at each bar;
    target_pct: a dotted line at that % of the baseline (a performance target). The baseline's
    name and rate stand above the top bar, left of its line, so a long name stays in the figure."""
    base = [r for r in rows if r["baseline"] == "1"]
    vers = [r for r in rows if r["baseline"] != "1"]
    rates = [num(r, "rate") for r in vers]
    fig, ax = plt.subplots(figsize=(8, 0.9 + 0.45 * max(len(vers), 3)))
    colors = [color_of(r) if color_of else "tab:blue" for r in vers]
    bs = ax.barh([r["version"] for r in vers][::-1], rates[::-1], color=colors[::-1])
    for b, r in zip(bs, vers[::-1]):
        if r.get("pct_of_baseline"):
            ax.text(b.get_width(), b.get_y() + b.get_height() / 2, f" {num(r, 'pct_of_baseline'):.0f}%", va="center")
    top = max(rates + [0.0])
    if base:
        ref = num(base[0], "rate")
        top = max(top, ref)
        ax.axvline(ref, color="tab:red", ls="--")
        note = f"{base[0]['version']}: {ref:.0f} {unit_of(rows)} (dashed)"
        if target_pct is not None:
            ax.axvline(ref * target_pct / 100, color="tab:gray", ls=":")
            note += f", {target_pct:g}% of it (dotted)"
        ax.text(ref, len(vers) - 0.45, note + " ", color="tab:red", ha="right", va="bottom")
        ax.set_ylim(-0.6, len(vers) + 0.2)  # a free band above the top bar for the note
    ax.set_xlim(0, top * 1.3 if top > 0 else 1)
    ax.set_xlabel(xlabel or unit_of(rows))
    ax.set_title(f"{title}\n({gpu_label(rows)})", fontsize=10)
    return save(fig, out)


def lines(series, out, title, xlabel, ylabel, logx=False, hlines=(), ax=None):
    """series: {label: [(x, y), ...]}; hlines: [(y, label)] drawn dashed (a baseline)."""
    own = ax is None
    if own:
        fig, ax = plt.subplots(figsize=(7, 4.2))
    for label, pts in series.items():
        pts = sorted(pts)
        ax.plot([x for x, _ in pts], [y for _, y in pts], marker="o", markersize=3, label=label)
    for y, label in hlines:
        ax.axhline(y, color="gray", linestyle="--", label=label)
    if logx:
        ax.set_xscale("log", base=2)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_ylim(bottom=0)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    ax.set_title(title)
    return save(fig, out) if own else None


def save(fig, out, rect=None):
    """rect: the (left, bottom, right, top) part of the figure that tight_layout fills, leaving the
    rest for a suptitle or a figure legend."""
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout(rect=rect)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    print(f"wrote {out}")
    return out


def main(draw, argv=None):
    """Runs a chapter's draw() and turns a missing or malformed CSV into exit 2 with one line."""
    try:
        draw(argv)
    except (OSError, CsvError, KeyError, ValueError) as e:
        print(f"plot.py: error: {e}", file=sys.stderr)
        return 2
    return 0
