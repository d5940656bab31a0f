#!/usr/bin/env python3
"""Figures for 03_shared from the programs' CSV files (no GPU needed to plot).

    ./transpose --csv=figures/transpose.csv
    ./matmul_tiled --csv=figures/matmul_tiled.csv
    ./sgemm_steps --csv=figures/sgemm_steps.csv
    python3 plot.py                  (or: make plots, which does all four)

writes figures/transpose.png (GB/s of each transpose version, the cudaMemcpy D2D baseline as a
line), figures/matmul.png (GFLOP/s of each kernel, % of cuBLAS at each bar) and
figures/sgemm_steps.png (each step of the SGEMM progression, % of cuBLAS, the 90% target dotted).
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
    p.add_argument("--sgemm", default=str(HERE / "figures" / "sgemm_steps.csv"), help="./sgemm_steps --csv=FILE")
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
                 f"Tiled SGEMM {r0['m']} x {r0['n']} x {r0['k']}, three kernels (% of cuBLAS)",
                 xlabel="GFLOP/s (FP32)")
    rows = plotlib.read_table(a.sgemm, "sgemm_steps")
    r0 = rows[0]
    plotlib.bars(rows, out / "sgemm_steps.png", f"SGEMM {r0['m']} x {r0['n']} x {r0['k']} step by step (% of cuBLAS)",
                 xlabel="GFLOP/s (FP32, no TF32)", target_pct=90)


if __name__ == "__main__":
    sys.exit(plotlib.main(draw))
