"""03_shared/plot.py draws the transpose and matmul figures from CSV fixtures (no GPU needed)."""
import subprocess
import sys

import pytest
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "03_shared"


def test_plots_from_fixtures(tmp_path):
    pytest.importorskip("matplotlib")
    r = subprocess.run([sys.executable, str(ROOT / "03_shared" / "plot.py"),
                        "--transpose", str(FIXTURES / "transpose.csv"),
                        "--matmul", str(FIXTURES / "matmul_tiled.csv"), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("transpose.png", "matmul.png"):
        png = tmp_path / name
        assert png.exists() and png.stat().st_size > 1000, f"{name} missing or empty"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_rejects_missing_csv_block(tmp_path):
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.csv"
    bad.write_text("SKIPPED: no usable CUDA device\n")
    r = subprocess.run([sys.executable, str(ROOT / "03_shared" / "plot.py"), "--transpose", str(bad),
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "not a results CSV" in r.stderr
