"""tools/profile_run.py on a made-up tree (no GPU needed): programs that pass, skip, fail and are
not built; the profile reaches them through CUDA_LAB_PROFILE; the summary line; the exit codes."""
import shutil
import subprocess
import sys

from conftest import ROOT

RUNNER = ROOT / "tools" / "profile_run.py"

PROGRAMS = {
    # name: shell body
    "01_x/ok": 'echo "GPU 0: Fake | sm_90 | profile $CUDA_LAB_PROFILE: Fake | code built for 7.5"; echo "args $*"; '
               'echo PASSED',
    "01_x/skips": 'echo "SKIPPED: thread block clusters need code compiled for 9.0"; exit 77',
    "02_y/fails": 'echo "FAILED: 3 of 5 differ"; exit 1',
    "02_y/no_banner_profile": 'echo "GPU 0: Fake | sm_90"; echo PASSED',
}


# A profile run on a build that is not the one it names (review of issue 32): each must FAIL under
# --profile t4 --build compute_75, and none is a failure without a profile.
BUILD_PROGRAMS = {
    "03_z/right_build": 'echo "GPU 0: Fake | sm_90 | profile $CUDA_LAB_PROFILE: Fake | code built for 7.5"; echo PASSED',
    "03_z/wrong_build": 'echo "GPU 0: Fake | sm_90 | profile $CUDA_LAB_PROFILE: Fake | code built for 9.0"; echo PASSED',
    "03_z/portable_build": 'echo "GPU 0: Fake | sm_90 | profile $CUDA_LAB_PROFILE: Fake | code built for 7.5 .. 9.0"; '
                           'echo PASSED',
    "03_z/newer_build": 'echo "GPU 0: Fake | sm_90 | profile $CUDA_LAB_PROFILE: Fake | code built for 9.0"; '
                        'echo "SKIPPED: this build has code for compute capability 9.0 and newer; Tesla T4 is 7.5"; '
                        'exit 77',
    "03_z/no_banner": 'echo PASSED',
    "03_z/own_arch": 'echo "GPU 0: Fake | sm_90 | profile $CUDA_LAB_PROFILE: Fake | code built for 7.5 .. 9.0"; '
                     'echo PASSED',
}


def tree(tmp_path, programs=PROGRAMS, extra=("02_y/image | --w=3 | w | opencv",)):
    (tmp_path / "common").mkdir()
    shutil.copy(ROOT / "common" / "profiles.h", tmp_path / "common" / "profiles.h")
    (tmp_path / "tests").mkdir()
    lines = []
    for name, body in programs.items():
        exe = tmp_path / name
        exe.parent.mkdir(exist_ok=True)
        exe.write_text("#!/bin/sh\n" + body + "\n")
        exe.chmod(0o755)
        lines.append(f"{name} | --n=7 | n | {'own-arch' if name.endswith('own_arch') else ''}")
    lines.extend(extra)
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


def test_profile_run_on_the_wrong_build_fails(tmp_path):
    """Under a profile: a banner whose "code built for" is not --build's architecture, a skip because
    the build is newer than the profile's GPU, and a PASSED without a banner are failures, not
    passes or skips; a program marked own-arch is not checked. Without a profile none of them is."""
    root = tree(tmp_path, BUILD_PROGRAMS, ())
    r = run("--root", str(root), "--profile", "t4", "--build", "compute_75", "--jobs", "2")
    assert r.returncode == 1, r.stdout + r.stderr
    status = {ln.split()[0]: ln.split(None, 1)[1] for ln in r.stdout.splitlines()[:-1]}
    assert status["03_z/right_build"] == "passed"
    assert status["03_z/own_arch"] == "passed"
    assert status["03_z/wrong_build"].startswith("FAILED: not the build --build names (compute_75): code built for 9.0")
    assert status["03_z/portable_build"].startswith("FAILED: not the build") and "7.5 .. 9.0" in status["03_z/portable_build"]
    assert status["03_z/newer_build"].startswith("FAILED: the build does not fit profile t4: this build has code for")
    assert status["03_z/no_banner"].startswith("FAILED: exit 0 under profile t4 without a banner")
    assert not any("run alone" in v for v in status.values())  # these cannot change when run alone
    assert r.stdout.splitlines()[-1] == "profile t4 (build compute_75): 2 passed, 0 skipped, 4 failed"
    # sm_XX names one architecture too; a label that is neither (native) is not checked
    r = run("--root", str(root), "--profile", "t4", "--build", "sm_75", "--only", "right_build")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run("--root", str(root), "--profile", "t4", "--build", "native", "--only", "wrong_build|portable")
    assert r.returncode == 0, r.stdout + r.stderr
    r = run("--root", str(root), "--build", "compute_75", "--jobs", "1")
    assert r.stdout.splitlines()[-1] == "profile none (build compute_75): 5 passed, 1 skipped, 0 failed", r.stdout
