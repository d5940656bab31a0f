"""03_shared/plot_sgemm.py draws the SGEMM progression chart from a CSV fixture (no GPU needed)."""
import subprocess
import sys

import pytest
from conftest import ROOT

SCRIPT = ROOT / "03_shared" / "plot_sgemm.py"
FIXTURE = ROOT / "tests" / "fixtures" / "03_shared" / "sgemm_steps.csv"


def test_plot_sgemm_from_fixture(tmp_path):
    pytest.importorskip("matplotlib")
    png = tmp_path / "sgemm_steps.png"
    r = subprocess.run([sys.executable, str(SCRIPT), str(FIXTURE), "--out", str(png)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert png.exists() and png.stat().st_size > 1000
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_sgemm_rejects_other_csv(tmp_path):
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,m,n,k,ms,gflops,pct_of_cublas\nnaive,1,1,1,1,1,1\n")
    r = subprocess.run([sys.executable, str(SCRIPT), str(bad), "--out", str(tmp_path / "x.png")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "not a results.cuh CSV" in r.stderr
