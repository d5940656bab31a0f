"""05_streams/plot.py draws overlap's Gantt chart from a small synthetic timeline CSV (no GPU needed)."""
import subprocess
import sys

import pytest
from conftest import ROOT

FIXTURES = ROOT / "tests" / "fixtures" / "05_streams"
PLOT = ROOT / "05_streams" / "plot.py"


def test_timeline_plot_from_fixture(tmp_path):
    pytest.importorskip("matplotlib")
    r = subprocess.run([sys.executable, str(PLOT), "--timeline", str(FIXTURES / "overlap_timeline.csv"),
                        "--out", str(tmp_path)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    png = tmp_path / "overlap_timeline.png"
    assert png.exists() and png.stat().st_size > 1000, "overlap_timeline.png missing or empty"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_timeline_plot_named_version(tmp_path):
    pytest.importorskip("matplotlib")
    r = subprocess.run([sys.executable, str(PLOT), "--timeline", str(FIXTURES / "overlap_timeline.csv"),
                        "--versions", "4 streams, 8 chunks, depth-first", "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    assert (tmp_path / "overlap_timeline.png").exists()


def test_timeline_plot_rejects_missing_csv_block(tmp_path):
    pytest.importorskip("matplotlib")
    bad = tmp_path / "bad.csv"
    bad.write_text("SKIPPED: no usable CUDA device\n")
    r = subprocess.run([sys.executable, str(PLOT), "--timeline", str(bad), "--out", str(tmp_path)],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode != 0 and "no CSV header" in r.stderr
