"""Every program: bad input exits 2 before touching CUDA; without a GPU it skips (77); with a GPU
it passes its CPU check at the manifest's test sizes."""
import re
import subprocess

import pytest
from conftest import ROOT, gpu_probe, load_manifest, require_built, run

CHAPTERS = sorted(p.name for p in ROOT.glob("0[0-9]_*") if p.is_dir())


def expect_usage_error(r, pattern):
    assert r.returncode == 2, f"exit {r.returncode}, expected 2\nstdout:{r.stdout}\nstderr:{r.stderr}"
    assert re.search(pattern, r.stderr), f"stderr does not explain the error ({pattern}):\n{r.stderr}"
    assert "usage:" in r.stderr, "no usage after the error"
    assert r.stderr.count("error:") == 1, "more than one error line"
    assert "GPU " not in r.stdout, "the program touched the GPU before validating its arguments"


def test_help(program):
    require_built(program)
    r = run(program, ["--help"])
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage:") and "--device" in r.stdout


def test_unknown_option(program):
    require_built(program)
    expect_usage_error(run(program, ["--no-such-option=1"]), r"unknown option '--no-such-option'")


def test_non_numeric(program):
    require_built(program)
    opt = program.size or "device"
    expect_usage_error(run(program, [f"--{opt}=abc"]), rf"--{opt} expects")


@pytest.mark.parametrize("value,label", [("0", "zero"), ("-5", "negative"),
                                         ("99999999999999999999999", "overflow")])
def test_bad_size(program, value, label):
    require_built(program)
    if program.size is None:
        if label == "zero":
            pytest.skip("no size option (manifest says '-'); --device=0 is valid")
        opt = "device"
    else:
        opt = program.size
    expect_usage_error(run(program, [f"--{opt}={value}"]), rf"--{opt}=\S+ is out of range")


def test_no_gpu_skips(program):
    has_gpu, text = gpu_probe()
    if has_gpu:
        pytest.skip("a GPU is present (this test runs only without one)")
    require_built(program)
    r = run(program, program.args)
    assert r.returncode == 77, f"exit {r.returncode}\n{r.stdout}{r.stderr}"
    assert r.stdout.strip().splitlines()[-1].startswith("SKIPPED: "), r.stdout


def test_gpu_passes(program):
    has_gpu, text = gpu_probe()
    if not has_gpu:
        pytest.skip(f"needs a GPU: {text}")
    require_built(program)
    r = run(program, program.args, timeout=int(program.options.get("timeout", 120)))
    last = r.stdout.strip().splitlines()[-1] if r.stdout.strip() else ""
    if r.returncode == 77 and program.options.get("may-skip"):
        pytest.skip(f"program skipped: {last}")
    assert r.returncode == 0 and last == "PASSED", f"exit {r.returncode}\n{r.stdout[-3000:]}\n{r.stderr[-2000:]}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_manifest_lists_every_program(chapter, request):
    only = request.config.getoption("--chapter")
    if only and only != chapter:
        pytest.skip(f"--chapter={only}")
    listed = {p.name for p in load_manifest()}
    out = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT / chapter), "list"],
                         capture_output=True, text=True, check=True).stdout.split()
    in_makefile = {f"{chapter}/{p}" for p in out}
    built = {f"{chapter}/{f.name}" for f in (ROOT / chapter).iterdir()
             if f.is_file() and f.stat().st_mode & 0o111 and f.suffix not in (".sh", ".py")}
    ours = {n for n in listed if n.startswith(chapter + "/")}
    assert in_makefile - listed == set(), "programs in the Makefile but not in tests/manifest.txt"
    assert built - listed == set(), "built programs not in tests/manifest.txt"
    assert ours - in_makefile == set(), "manifest entries with no Makefile program"


def test_opening_comment_shows_nvcc(program):
    """The opening comment of the program's .cu gives the nvcc command line that builds it."""
    src = program.path.with_suffix(".cu")
    assert src.exists(), f"{src.name} missing: every program has a .cu file of its name"
    head = []
    for line in src.read_text(encoding="utf-8").splitlines():
        if not line.startswith("//"):
            break
        head.append(line)
    # A command may wrap: the file name must follow within the next three comment lines.
    assert any("nvcc -" in l and src.name in " ".join(head[i:i + 4]) for i, l in enumerate(head)), \
        f"no 'nvcc ... {src.name}' command line in the opening comment of {src.name}"


def test_only_takes_a_posix_regex(program):
    """--only (common/results.cuh) is a POSIX extended regular expression (regcomp, REG_EXTENDED):
    a malformed one exits 2 before any CUDA call; a well-formed one passes validation."""
    require_built(program)
    if "--only=" not in run(program, ["--help"]).stdout:
        pytest.skip("no --only option (not a results.cuh version table)")
    r = run(program, ["--only=(unclosed"])
    assert r.returncode == 2, f"exit {r.returncode}\n{r.stdout}{r.stderr}"
    assert "not a valid (POSIX extended) regular expression" in r.stderr, r.stderr
    assert "GPU " not in r.stdout, "the program touched the GPU before validating --only"
    if not gpu_probe()[0]:  # with a GPU this would run the program; test_gpu_passes does that
        r = run(program, program.args + ["--only=^(naive|x)|[0-9]+ .*$"])
        assert r.returncode == 77, f"exit {r.returncode}\n{r.stdout}{r.stderr}"
