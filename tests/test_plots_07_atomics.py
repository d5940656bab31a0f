"""07_atomics/plot.py draws the histogram and vector_sum figures from CSV fixtures (no GPU needed)."""
import subprocess
import sys

import pytest
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "07_atomics"
PLOT = ROOT / "07_atomics" / "plot.py"


def test_plots_from_fixtures(tmp_path):
    pytest.importorskip("matplotlib")
    r = subprocess.run([sys.executable, str(PLOT), "--histogram", str(FIXTURES / "histogram.csv"),
                        "--vector-sum", str(FIXTURES / "vector_sum.csv"), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("histogram.png", "vector_sum.png"):
        png = tmp_path / name
        assert png.exists() and png.stat().st_size > 1000, f"{name} missing or empty"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_rejects_output_without_csv(tmp_path):
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.csv"
    bad.write_text("SKIPPED: no usable CUDA device\n")
    r = subprocess.run([sys.executable, str(PLOT), "--histogram", str(bad), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "no CSV header" in r.stderr
