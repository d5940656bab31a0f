#!/usr/bin/env python3
"""results.py - the no-GPU half of `make results`: merge the programs' CSV files into one file per
GPU and rewrite the README result tables from those files.

    python3 tools/results.py collect [CSV ...]   merge CSVs (default: every NN_*/figures/*.csv) into
                                                 results/<gpu>.csv, replacing that GPU's earlier rows
                                                 of the same program and parameters
    python3 tools/results.py update              rewrite every README block between
                                                 <!-- results:CHAPTER/PROGRAM [key=value ...] --> and
                                                 <!-- /results --> (one table per program, a column per
                                                 GPU) and <!-- results:summary --> (best version per
                                                 program and GPU) from results/*.csv

A CSV (written by a program's --csv=FILE, common/results.cuh) has the header
gpu,cc,driver,cuda,program,<parameters>,version,baseline,ms,rate,unit,pct_of_baseline,speedup[,extra].
"""
import argparse
import csv
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
HEAD = ["gpu", "cc", "driver", "cuda", "program"]
FIXED = ["gpu", "cc", "driver", "cuda", "chapter", "program", "params"]
UNITS = {"gbps": "GB/s", "gflops": "GFLOP/s", "gops": "GOP/s"}


def file_name(gpu):
    """'NVIDIA H100 80GB HBM3' -> 'NVIDIA_H100_80GB_HBM3' (letters, digits, '-', '_' only)."""
    return re.sub(r"[^A-Za-z0-9-]+", "_", gpu).strip("_") or "unknown_gpu"


def short_gpu(name):
    words = [w for w in name.split() if w.upper() not in ("NVIDIA", "GEFORCE", "TESLA", "QUADRO")]
    return words[0] if words else name


def read_program_csv(path, root=None):
    """Rows of one program CSV in the merged form: chapter and params (the table's parameters:
    those with one value in every row of the program; the rest stay as per-row columns)."""
    with open(path, newline="") as f:
        r = csv.DictReader(f)
        if r.fieldnames is None or r.fieldnames[:5] != HEAD or not {"version", "baseline", "ms", "rate", "unit"} <= set(r.fieldnames):
            return None  # not a results.cuh version table (a timeline, an old file): ignored
        names = r.fieldnames[5:r.fieldnames.index("version")]
        rows = list(r)
    try:
        chapter = Path(path).resolve().relative_to(root or ROOT).parts[0]
    except ValueError:
        chapter = ""
    out = []
    for prog in dict.fromkeys(x["program"] for x in rows):
        mine = [x for x in rows if x["program"] == prog]
        fixed = [k for k in names if all(x[k] != "" and x[k] == mine[0][k] for x in mine)]
        for x in mine:
            y = dict(x)
            y["chapter"] = chapter
            y["params"] = " ".join(f"{k}={x[k]}" for k in fixed)
            for k in names:
                if k in fixed or y[k] == "":
                    y.pop(k)
            out.append(y)
    return out


def read_results(path):
    if not Path(path).exists():
        return []
    with open(path, newline="") as f:
        return [{k: v for k, v in row.items() if v not in (None, "")} | {k: row[k] for k in FIXED if k in row}
                for row in csv.DictReader(f)]


def write_results(path, rows):
    keys = list(FIXED)
    for row in rows:
        keys += [k for k in row if k not in keys]
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, keys, lineterminator="\n", restval="")
        w.writeheader()
        w.writerows(rows)


def merge(old, new):
    """old rows minus those of the same gpu, program and params as any new row, then the new rows."""
    replaced = {(r["gpu"], r["program"], r["params"]) for r in new}
    return [r for r in old if (r["gpu"], r["program"], r["params"]) not in replaced] + new


def collect(csvs, results_dir):
    by_gpu = {}
    for p in csvs:
        rows = read_program_csv(p)
        if rows is None:
            print(f"results.py: skipping {p} (not a results.cuh CSV)")
            continue
        for r in rows:
            by_gpu.setdefault(r["gpu"], []).append(r)
    for gpu, rows in by_gpu.items():
        path = results_dir / (file_name(gpu) + ".csv")
        write_results(path, merge(read_results(path), rows))
        print(f"results.py: {len(rows)} rows -> {path.relative_to(ROOT) if path.is_relative_to(ROOT) else path}")
    return sorted(by_gpu)


def load_all(results_dir):
    rows = []
    for p in sorted(results_dir.glob("*.csv")):
        rows += read_results(p)
    return rows


def gpus_of(rows):
    """GPUs in a stable order: the H100 (the READMEs' reference) first, then by name."""
    return sorted(dict.fromkeys(r["gpu"] for r in rows), key=lambda g: (0 if "H100" in g else 1, g))


def f(row, key):
    try:
        return float(row.get(key, ""))
    except ValueError:
        return None


def cell(row, us):
    ms, rate, pct, x = f(row, "ms"), f(row, "rate"), f(row, "pct_of_baseline"), f(row, "speedup")
    parts = [f"{1e3 * ms:.1f} us" if us else f"{ms:.3f} ms"] if ms is not None else []
    unit = UNITS.get(row.get("unit", ""))
    if unit and rate is not None:
        parts.append(f"{rate:.1f} {unit}")
    if pct is not None and row.get("baseline") != "1":
        parts.append(f"{pct:.1f}%")
    if x is not None and row.get("baseline") != "1":
        parts.append(f"{x:.2f}x")
    return ", ".join(parts)


def program_table(rows, spec):
    """The version table of one program: a row per version, a column per GPU."""
    chapter, _, program = spec[0].rpartition("/")
    filters = dict(kv.split("=", 1) for kv in spec[1:])
    mine = [r for r in rows if r["program"] == program and (not chapter or r["chapter"] == chapter)
            and all(r.get(k) == v or f"{k}={v}" in r["params"].split() for k, v in filters.items())]
    if not mine:
        return [f"(no results for {spec[0]} yet: run `make results` on a GPU)"]
    lines = []
    for params in dict.fromkeys(r["params"] for r in mine):
        sel = [r for r in mine if r["params"] == params]
        gpus = gpus_of(sel)
        base = next((r["version"] for r in sel if r.get("baseline") == "1"), None)
        ref = next((r["version"] for r in sel if r.get("speedup") and f(r, "speedup") == 1.0), None)
        us = max(f(r, "ms") or 0 for r in sel) < 10  # microseconds read better for short kernels
        what = "time, rate" + (f", % of {base}" if base else "") + (f", x {ref}" if ref else "")
        lines.append(f"`{program}` {params} ({what}):" if params else f"`{program}` ({what}):")
        lines.append("")
        lines.append("| version | " + " | ".join(short_gpu(g) for g in gpus) + " |")
        lines.append("|---|" + "---|" * len(gpus))
        for v in dict.fromkeys(r["version"] for r in sel):
            cells = [next((cell(r, us) for r in sel if r["version"] == v and r["gpu"] == g), "not measured") for g in gpus]
            lines.append(f"| {v} | " + " | ".join(cells) + " |")
        lines.append("")
    return lines[:-1]


def best(sel):
    """The headline of one program on one GPU: the best non-baseline version against the baseline
    (or, without a baseline, the largest speedup). Baseline 2 marks a ceiling (transpose's plain copy
    with the same tiling: common/results.cuh as_ceiling()), which is never the headline."""
    vers = [r for r in sel if r.get("baseline") not in ("1", "2")]
    with_pct = [r for r in vers if f(r, "pct_of_baseline") is not None]
    if with_pct:
        b = max(with_pct, key=lambda r: f(r, "pct_of_baseline"))
        return f"{b['version']}: **{f(b, 'pct_of_baseline'):.1f}%**"
    with_x = [r for r in vers if f(r, "speedup") is not None]
    if with_x:
        b = max(with_x, key=lambda r: f(r, "speedup"))
        return f"{b['version']}: **{f(b, 'speedup'):.2f}x**"
    return None


def summary_table(rows):
    gpus = gpus_of(rows)
    if not gpus:
        return ["(no results yet: run `make results` on a GPU)"]
    lines = ["| program | compared with | " + " | ".join(short_gpu(g) for g in gpus) + " |",
             "|---|---|" + "---|" * len(gpus)]
    keys = dict.fromkeys((r["chapter"], r["program"], r["params"]) for r in rows)
    for chapter, program, params in sorted(keys):
        sel = [r for r in rows if (r["chapter"], r["program"], r["params"]) == (chapter, program, params)]
        if all(r.get("unit") == "none" for r in sel):
            continue  # times only (overlap, graphs): no rate to rank by; the program prints its headline
        cells = [best([r for r in sel if r["gpu"] == g]) or "" for g in gpus]
        if not any(cells):
            continue  # a sweep without a baseline (its figure shows it)
        base = next((r["version"] for r in sel if r.get("baseline") == "1"), None)
        ref = next((r for r in sel if r.get("speedup") and f(r, "speedup") == 1.0), None)
        against = base or (f"x {ref['version']}" if ref else "")
        lines.append(f"| `{chapter}/{program}` {params} | {against} | " + " | ".join(c or "not measured" for c in cells)
                     + " |")
    lines.append("")
    lines.append("GPUs: " + "; ".join(f"{short_gpu(g)} = {g} (CUDA {next(r['cuda'] for r in rows if r['gpu'] == g)})"
                                        for g in gpus) + ".")
    return lines


MARK = re.compile(r"(<!-- results:(.*?) -->\n)(.*?)(<!-- /results -->)", re.S)


def rewrite(text, rows):
    def repl(m):
        spec = m.group(2).split()
        body = summary_table(rows) if spec[0] == "summary" else program_table(rows, spec)
        return m.group(1) + "\n".join(body) + "\n" + m.group(4)
    return MARK.sub(repl, text)


def update(readmes, results_dir):
    rows = load_all(results_dir)
    for p in readmes:
        old = p.read_text()
        new = rewrite(old, rows)
        if new != old:
            p.write_text(new)
            print(f"results.py: rewrote the result tables in {p.relative_to(ROOT) if p.is_relative_to(ROOT) else p}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["collect", "update"])
    ap.add_argument("files", nargs="*", help="collect: CSV files; update: README files (default: all)")
    ap.add_argument("--results", default=str(ROOT / "results"), help="folder of the per-GPU files")
    a = ap.parse_args(argv)
    results_dir = Path(a.results)
    if a.command == "collect":
        files = a.files or sorted(ROOT.glob("[0-9][0-9]_*/figures/*.csv"))
        collect(files, results_dir)
    else:
        files = [Path(x) for x in a.files] or [ROOT / "README.md"] + sorted(ROOT.glob("[0-9][0-9]_*/README.md"))
        update(files, results_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
