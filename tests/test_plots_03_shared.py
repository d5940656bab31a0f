"""03_shared/plot.py draws the transpose, matmul and SGEMM-progression figures from CSV fixtures
(no GPU needed)."""
import subprocess
import sys

import pytest
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "03_shared"
PLOT = ROOT / "03_shared" / "plot.py"
GOOD = {"--transpose": FIXTURES / "transpose.csv", "--matmul": FIXTURES / "matmul_tiled.csv",
        "--sgemm": FIXTURES / "sgemm_steps.csv"}


def plot(tmp_path, **replace):
    """plot.py on the fixtures, with the CSV of some options replaced (sgemm="..." -> --sgemm)."""
    files = {**GOOD, **{f"--{k}": v for k, v in replace.items()}}
    args = [x for opt, path in files.items() for x in (opt, str(path))]
    return subprocess.run([sys.executable, str(PLOT), *args, "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)


def test_plots_from_fixtures(tmp_path):
    pytest.importorskip("matplotlib")
    r = plot(tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    for name in ("transpose.png", "matmul.png", "sgemm_steps.png"):
        png = tmp_path / name
        assert png.exists() and png.stat().st_size > 1000, f"{name} missing or empty"
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_plot_rejects_missing_csv_block(tmp_path):
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.csv"
    bad.write_text("SKIPPED: no usable CUDA device\n")
    r = plot(tmp_path, transpose=bad)
    assert r.returncode == 2 and "not a results CSV" in r.stderr


def test_plot_sgemm_rejects_other_csv(tmp_path):
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.csv"
    bad.write_text("kernel,m,n,k,ms,gflops,pct_of_cublas\nnaive,1,1,1,1,1,1\n")
    r = plot(tmp_path, sgemm=bad)
    assert r.returncode == 2 and "no CSV header" in r.stderr
