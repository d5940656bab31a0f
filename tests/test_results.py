"""tools/results.py: merging program CSVs into results/<gpu>.csv and rewriting README blocks
(no GPU needed: fixture CSVs in tests/fixtures/)."""
import shutil
import sys

from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import results  # noqa: E402

FIX = ROOT / "tests" / "fixtures"


def chapter_copy(tmp_path, name="03_shared"):
    """A fake repository root with the fixture CSVs under NN_*/figures/ (collect reads the chapter from it)."""
    d = tmp_path / name / "figures"
    d.mkdir(parents=True)
    for p in (FIX / name).glob("*.csv"):
        shutil.copy(p, d / p.name)
    return d


def test_file_name_is_sanitized():
    assert results.file_name("NVIDIA H100 80GB HBM3") == "NVIDIA_H100_80GB_HBM3"
    assert results.file_name("NVIDIA GeForce RTX 4090 (laptop)/x") == "NVIDIA_GeForce_RTX_4090_laptop_x"


def test_collect_merges_and_replaces(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "ROOT", tmp_path)
    figs = chapter_copy(tmp_path)
    out = tmp_path / "results"
    csvs = sorted(figs.glob("*.csv"))
    results.collect(csvs, out)
    f = out / "NVIDIA_H100_80GB_HBM3.csv"
    first = results.read_results(f)
    assert {r["chapter"] for r in first} == {"03_shared"}
    assert {r["program"] for r in first} == {"transpose", "matmul_tiled"}
    assert any(r["params"] == "m=4096 n=4096 k=4096" for r in first)
    results.collect(csvs, out)  # the same run again: replaced, not duplicated
    assert len(results.read_results(f)) == len(first)
    # a new run of transpose with other numbers replaces only transpose's rows
    t = figs / "transpose.csv"
    t.write_text(t.read_text().replace(",2809.5,", ",2900.0,"))
    results.collect([t], out)
    again = results.read_results(f)
    assert len(again) == len(first)
    assert any(r["rate"] == "2900.0" for r in again) and not any(r["rate"] == "2809.5" for r in again)
    # another parameter set is kept next to the first; another GPU gets its own file
    t.write_text(t.read_text().replace(",8192,8192,", ",2048,2048,").replace("H100 80GB HBM3", "H200"))
    results.collect([t], out)
    assert (out / "NVIDIA_H200.csv").exists() and len(results.read_results(f)) == len(first)


def test_sweep_rows_keep_their_own_parameter(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "ROOT", tmp_path)
    figs = chapter_copy(tmp_path, "02_memory")
    results.collect(sorted(figs.glob("*.csv")), tmp_path / "results")
    rows = results.read_results(tmp_path / "results" / "NVIDIA_H100_80GB_HBM3.csv")
    co = [r for r in rows if r["program"] == "coalescing"]
    assert {r["params"] for r in co} == {"n=67108864 block=256"}
    assert any(r.get("offset") == "3" for r in co) and any(r.get("stride") == "32" for r in co)


def test_readme_rewrite_is_idempotent(tmp_path, monkeypatch):
    monkeypatch.setattr(results, "ROOT", tmp_path)
    for ch in ("02_memory", "03_shared"):
        chapter_copy(tmp_path, ch)
    results.collect(sorted(tmp_path.glob("*/figures/*.csv")), tmp_path / "results")
    readme = tmp_path / "README.md"
    text = ("# x\n\nbefore\n<!-- results:summary -->\nstale text\n<!-- /results -->\nmiddle\n"
            "<!-- results:03_shared/transpose -->\n<!-- /results -->\n<!-- results:09_none/nothing -->\n"
            "<!-- /results -->\nafter\n")
    readme.write_text(text)
    results.update([readme], tmp_path / "results")
    once = readme.read_text()
    assert "stale text" not in once and once.startswith("# x\n\nbefore\n") and once.endswith("after\n")
    assert "| `03_shared/transpose` rows=8192 cols=8192 setup=default | cudaMemcpy D2D | padded tile [64][64+1]: **96.9%** |" in once
    assert "| padded tile [32][32+1] | 196.9 us, 2727.1 GB/s, 94.0%, 6.51x |" in once
    assert "(no results for 09_none/nothing yet" in once
    results.update([readme], tmp_path / "results")
    assert readme.read_text() == once


def test_repository_readmes_are_up_to_date(tmp_path):
    """The committed README tables are what `make readme-results` writes from results/."""
    for p in [ROOT / "README.md"] + sorted(ROOT.glob("[0-9][0-9]_*/README.md")):
        text = p.read_text()
        assert results.rewrite(text, results.load_all(ROOT / "results")) == text, f"{p}: run make readme-results"


def test_not_a_results_csv_is_skipped(tmp_path):
    bad = tmp_path / "old.csv"
    bad.write_text("variant,rows\nx,1\n")
    assert results.read_program_csv(bad) is None


def test_make_results_without_gpu_says_so():
    import subprocess
    r = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT), "results", "GPU_QUERY=false"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no usable GPU" in r.stdout and "make readme-results" in r.stdout


def test_a_ceiling_is_never_the_headline():
    """baseline 2 (common/results.cuh as_ceiling(): transpose's plain copy) is timed and shown, but the
    summary's best version is the best of the others, even when the ceiling is faster."""
    rows = [dict(version="cudaMemcpy D2D", baseline="1", pct_of_baseline="100.00"),
            dict(version="copy kernel", baseline="2", pct_of_baseline="99.50"),
            dict(version="padded", baseline="0", pct_of_baseline="96.40"),
            dict(version="naive", baseline="0", pct_of_baseline="16.40")]
    assert results.best(rows) == "padded: **96.4%**"
