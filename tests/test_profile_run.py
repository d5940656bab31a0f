"""tools/profile_run.py on a made-up tree (no GPU needed): programs that pass, skip, fail and are
not built; the profile reaches them through CUDA_LAB_PROFILE; the summary line; the exit codes."""
import shutil
import subprocess
import sys

from conftest import ROOT

RUNNER = ROOT / "tools" / "profile_run.py"

PROGRAMS = {
    # name: shell body
    "01_x/ok": 'echo "GPU 0: Fake | sm_90 | profile $CUDA_LAB_PROFILE: Fake"; echo "args $*"; echo PASSED',
    "01_x/skips": 'echo "SKIPPED: thread block clusters need code compiled for 9.0"; exit 77',
    "02_y/fails": 'echo "FAILED: 3 of 5 differ"; exit 1',
    "02_y/no_banner_profile": 'echo "GPU 0: Fake | sm_90"; echo PASSED',
}


def tree(tmp_path):
    (tmp_path / "common").mkdir()
    shutil.copy(ROOT / "common" / "profiles.h", tmp_path / "common" / "profiles.h")
    (tmp_path / "tests").mkdir()
    lines = []
    for name, body in PROGRAMS.items():
        exe = tmp_path / name
        exe.parent.mkdir(exist_ok=True)
        exe.write_text("#!/bin/sh\n" + body + "\n")
        exe.chmod(0o755)
        lines.append(f"{name} | --n=7 | n |")
    lines.append("02_y/image | --w=3 | w | opencv")
    (tmp_path / "tests" / "manifest.txt").write_text("\n".join(lines) + "\n")
    return tmp_path


def run(*args):
    return subprocess.run([sys.executable, str(RUNNER)] + list(args), capture_output=True, text=True, timeout=60)


def test_lines_and_summary(tmp_path):
    root = tree(tmp_path)
    r = run("--root", str(root), "--profile", "t4", "--build", "compute_75", "--jobs", "2",
            "--json", str(tmp_path / "out.json"))
    assert r.returncode == 1, r.stdout + r.stderr
    out = r.stdout.splitlines()
    assert out[0].split() == ["01_x/ok", "passed"]
    assert out[1].endswith("skipped: thread block clusters need code compiled for 9.0")
    assert "FAILED: exit 1: FAILED: 3 of 5 differ" in out[2] and "run alone" in out[2]
    assert "does not name profile t4" in out[3]
    assert "skipped: not built (OpenCV" in out[4]
    assert out[-1] == "profile t4 (build compute_75): 1 passed, 2 skipped, 2 failed"
    assert '"profile": "t4"' in (tmp_path / "out.json").read_text()


def test_no_profile_and_only(tmp_path):
    root = tree(tmp_path)
    r = run("--root", str(root), "--only", "^01_x/", "--jobs", "1")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == "profile none: 1 passed, 1 skipped, 0 failed"


def test_usage_errors(tmp_path):
    root = tree(tmp_path)
    r = run("--root", str(root), "--profile", "t5")
    assert r.returncode == 2 and "unknown profile 't5'; known: t4, rtx3060-laptop-wsl" in r.stderr
    assert run("--root", str(root), "--only", "nothing-matches").returncode == 2
    assert run("--root", str(root), "--jobs", "0").returncode == 2
