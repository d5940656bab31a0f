"""02_memory/plot.py turns the CSV output of coalescing, pinned_bandwidth and bytes_in_flight into PNG
figures. Tested without a GPU on small CSV files in tests/fixtures/02_memory/ (bytes_in_flight.csv is
synthetic: rates from a Little's-law model, not a measurement)."""
import subprocess
import sys

import pytest
from conftest import ROOT

pytest.importorskip("matplotlib")

SCRIPT = ROOT / "02_memory" / "plot.py"
FIXTURES = ROOT / "tests" / "fixtures" / "02_memory"
FIGURES = ("pinned_bandwidth.png", "coalescing_offset.png", "coalescing_stride.png", "bytes_in_flight.png")


def plot(tmp_path, coalescing, pinned, bytes_in_flight=FIXTURES / "bytes_in_flight.csv"):
    return subprocess.run([sys.executable, str(SCRIPT), "--coalescing", str(coalescing), "--pinned", str(pinned),
                           "--bytes-in-flight", str(bytes_in_flight), "--out", str(tmp_path)],
                          capture_output=True, text=True, timeout=120)


def test_plots_from_fixtures(tmp_path):
    r = plot(tmp_path, FIXTURES / "coalescing.csv", FIXTURES / "pinned_bandwidth.csv")
    assert r.returncode == 0, r.stderr
    for name in FIGURES:
        png = tmp_path / name
        assert png.exists(), f"{name} not written\n{r.stdout}{r.stderr}"
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{name} is not a PNG"
        assert len(data) > 10_000, f"{name} is only {len(data)} bytes: an empty plot?"
        assert name in r.stdout


def test_csv_without_rows_is_an_error(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("PASSED\n")
    r = plot(tmp_path, FIXTURES / "coalescing.csv", empty)
    assert r.returncode == 2
    assert "error:" in r.stderr


def test_bytes_in_flight_csv_without_its_columns_is_an_error(tmp_path):
    """A CSV of another program given as --bytes-in-flight: exit 2 with one line, no figure."""
    r = plot(tmp_path, FIXTURES / "coalescing.csv", FIXTURES / "pinned_bandwidth.csv",
             bytes_in_flight=FIXTURES / "coalescing.csv")
    assert r.returncode == 2
    assert "error:" in r.stderr
    assert not (tmp_path / "bytes_in_flight.png").exists()
