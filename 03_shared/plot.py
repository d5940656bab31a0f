#!/usr/bin/env python3
"""Figures for 03_shared from the programs' CSV files (no GPU needed to plot).

    ./transpose --csv=figures/transpose.csv
    ./matmul_tiled --csv=figures/matmul_tiled.csv
    python3 plot.py                  (or: make plots, which does all three)

writes figures/transpose.png (GB/s of each transpose version, the cudaMemcpy D2D baseline as a
line) and figures/matmul.png (GFLOP/s of each kernel, % of cuBLAS at each bar).
"""
import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import plotlib  # noqa: E402


def draw(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--transpose", default=str(HERE / "figures" / "transpose.csv"), help="./transpose --csv=FILE")
    p.add_argument("--matmul", default=str(HERE / "figures" / "matmul_tiled.csv"), help="./matmul_tiled --csv=FILE")
    p.add_argument("--out", default=str(HERE / "figures"), help="output folder (default figures/)")
    a = p.parse_args(argv)
    out = Path(a.out)
    rows = plotlib.read(a.transpose, "transpose")
    r0 = rows[0]
    plotlib.bars(rows, out / "transpose.png", f"Matrix transpose {r0['rows']} x {r0['cols']} fp32 (% of cudaMemcpy D2D)",
                 xlabel="GB/s (bytes read + written)")
    rows = plotlib.read(a.matmul, "matmul_tiled")
    r0 = rows[0]
    plotlib.bars(rows, out / "matmul.png",
                 f"SGEMM {r0['m']} x {r0['n']} x {r0['k']}: naive -> shared tiles -> register blocking (% of cuBLAS)",
                 xlabel="GFLOP/s (FP32)")


if __name__ == "__main__":
    sys.exit(plotlib.main(draw))
