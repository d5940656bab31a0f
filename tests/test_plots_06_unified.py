"""06_unified/plot.py draws the um_page_faults figure from a CSV fixture (no GPU needed)."""
import subprocess
import sys

import pytest
from conftest import ROOT

SCRIPT = ROOT / "06_unified" / "plot.py"
FIXTURES = ROOT / "tests" / "fixtures" / "06_unified"


def test_plot_from_fixture(tmp_path):
    pytest.importorskip("matplotlib")
    r = subprocess.run([sys.executable, str(SCRIPT), "--page-faults", str(FIXTURES / "um_page_faults.csv"),
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    png = tmp_path / "um_page_faults.png"
    assert png.exists(), f"not written\n{r.stdout}{r.stderr}"
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 10_000, f"only {len(data)} bytes: an empty plot?"
    assert "um_page_faults.png" in r.stdout


def test_plot_rejects_missing_csv_header(tmp_path):
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.csv"
    bad.write_text("SKIPPED: no usable CUDA device\n")
    r = subprocess.run([sys.executable, str(SCRIPT), "--page-faults", str(bad), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "no CSV header" in r.stderr
