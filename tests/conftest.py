"""Shared pieces of the test suite: the program manifest (manifest.py), the GPU probe, --chapter."""
import subprocess

import pytest
from manifest import MANIFEST, ROOT, Program, load_manifest  # noqa: F401

def pytest_addoption(parser):
    parser.addoption("--chapter", default=None, help="test only this chapter, e.g. 01_intro")


def pytest_configure(config):
    # pytest-xdist's marker (tools/run_tests.sh runs --dist loadgroup), declared here so that a
    # pytest without xdist knows it too: the tests of one group run on one worker, one after another.
    config.addinivalue_line("markers", "xdist_group(name): run these tests on the same xdist worker")


def selected_programs(config):
    chapter = config.getoption("--chapter")
    return [p for p in load_manifest() if chapter is None or p.chapter == chapter]


def pytest_generate_tests(metafunc):
    if "program" in metafunc.fixturenames:
        progs = selected_programs(metafunc.config)
        metafunc.parametrize("program", progs, ids=[p.name for p in progs])


_probe = None


def gpu_probe():
    """(has_gpu, text): the probe's verdict, computed once per pytest run."""
    global _probe
    if _probe is None:
        exe = ROOT / "tests" / "gpu_probe"
        if not exe.exists():
            _probe = (False, "tests/gpu_probe is not built (run make)")
        else:
            r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
            _probe = (r.returncode == 0, r.stdout.strip() or r.stderr.strip())
    return _probe


def run(program, args, timeout=60):
    return subprocess.run([str(program.path)] + list(args), capture_output=True, text=True,
                          timeout=timeout, cwd=program.path.parent)


def require_built(program):
    if not program.path.exists():
        if program.options.get("opencv"):
            pytest.skip("not built: OpenCV not found (install libopencv-dev, or make OPENCV_DIR=...)")
        pytest.fail(f"{program.name} is not built (make should have built it)")


def pytest_report_header(config):
    has, text = gpu_probe()
    return f"GPU: {text}" if has else f"GPU: none ({text}); GPU tests will be skipped"
