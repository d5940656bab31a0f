"""Host-side unit tests of common/ (tests/unit/test_common.cpp), run on the CPU."""
import subprocess

import pytest
from conftest import ROOT

EXE = ROOT / "tests" / "unit" / "test_common"


def cases():
    if not EXE.exists():
        return ["<not built>"]
    return subprocess.run([str(EXE), "--list"], capture_output=True, text=True, check=True).stdout.split()


@pytest.mark.parametrize("case", cases())
def test_unit(case):
    assert EXE.exists(), "tests/unit/test_common is not built (run make)"
    r = subprocess.run([str(EXE), case], capture_output=True, text=True, timeout=60)
    if r.returncode == 77:
        pytest.skip(r.stdout.strip())
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("argv,code,text", [
    (["--help"], 0, "usage:"),
    (["--n=7"], 0, "n=7"),
    (["--n=abc"], 2, "--n expects an integer, got 'abc'"),
    (["--n=0"], 2, "--n=0 is out of range [1, 1000]"),
    (["--n=1", "--what=2"], 2, "unknown option '--what'"),
])
def test_parser_exit_codes(argv, code, text):
    r = subprocess.run([str(EXE), "args"] + argv, capture_output=True, text=True, timeout=60)
    assert r.returncode == code
    assert text in (r.stdout if code == 0 else r.stderr)


def test_unreadable_image_exits_2(tmp_path):
    bad = tmp_path / "not_an_image.png"
    bad.write_text("this is not a PNG")
    for path in [str(bad), str(tmp_path / "missing.png")]:
        r = subprocess.run([str(EXE), "image", path], capture_output=True, text=True, timeout=60)
        if r.returncode == 77:
            pytest.skip(r.stdout.strip())
        assert r.returncode == 2 and "cannot read image" in r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("name,code,text", [
    ("", 0, "profile (none)"),
    ("t4", 0, "profile t4"),
    ("gtx1650", 0, "profile gtx1650"),
    ("t5", 2, "CUDA_LAB_PROFILE=t5 is not a known profile; known: t4, rtx3060-laptop-wsl, rtx4090, a100, gtx1650"),
])
def test_profile_names(name, code, text):
    """CUDA_LAB_PROFILE as select_device() reads it: an unknown name is a usage error (2) naming the known ones."""
    import os
    env = dict(os.environ, CUDA_LAB_PROFILE=name)
    r = subprocess.run([str(EXE), "profile"], capture_output=True, text=True, timeout=60, env=env)
    assert r.returncode == code, r.stdout + r.stderr
    assert text in (r.stdout if code == 0 else r.stderr)
