"""The toolkit check (tools/toolkit_check.py, `make test-toolkits`): CUDA 12.x and newer 13.x headers.

The whole-tree compile is `make test-toolkits` itself (minutes, downloads into .toolkits/); these
tests prove the check's own behaviour on two synthetic files in tests/fixtures/toolkits/: a CUDA
13-only call fails it with every 12.x toolkit, the same call through common/cuda_compat.cuh passes
everywhere. They download CUDA packages, so they run only under `make test-toolkits`
(TOOLKIT_CHECK=1) and report themselves skipped in `make test`."""
import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT

sys.path.insert(0, str(ROOT / "tools"))
import toolkit_check  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "toolkits"
TWELVE = [v for v in toolkit_check.DEFAULT if v.startswith("12.")]
needs_check = pytest.mark.skipif(os.environ.get("TOOLKIT_CHECK") != "1",
                                 reason="downloads CUDA packages: run by make test-toolkits (TOOLKIT_CHECK=1)")


def check(*args):
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "toolkit_check.py"), *args],
                       capture_output=True, text=True, cwd=ROOT, timeout=1800)
    if "SKIPPED" in r.stdout and "FAIL" not in r.stdout:
        pytest.skip("toolkit packages could not be installed: " + r.stdout.strip().splitlines()[-2])
    return r


def test_defaults_cover_oldest_and_newest_12_and_a_13():
    assert len(TWELVE) >= 2 and any(v.startswith("13.") for v in toolkit_check.DEFAULT)


def test_every_cu_file_has_a_compile_command():
    """Every tracked .cu file (fixtures aside) is compiled by some Makefile rule the check reads."""
    jobs = toolkit_check.collect_jobs()
    covered = {j[1] for j in jobs}
    fixtures = {p.resolve() for p in ROOT.glob("tests/fixtures/**/*.cu")}
    assert toolkit_check.tracked_cu() - covered - fixtures == set()
    # the per-program flags come from the Makefiles
    flags = {j[1].name: j[2] for j in jobs}
    assert "-rdc=true" in flags["dynamic_parallelism.cu"] and "-rdc=true" in flags["hello_multi_device.cu"]
    assert "per-thread" in flags["default_stream_per_thread.cu"]


@needs_check
def test_cuda13_only_call_fails_with_cuda12_headers():
    r = check("--toolkits=" + ",".join(TWELVE), "--only", str(FIXTURES / "graph_edges_13only.cu"))
    print(r.stdout)
    assert r.returncode == 1, r.stdout + r.stderr
    for v in TWELVE:
        assert f"FAIL {v}: tests/fixtures/toolkits/graph_edges_13only.cu" in r.stdout
    assert re.search(r"too many arguments|incompatible with parameter", r.stdout)


@needs_check
def test_cuda13_only_call_passes_with_cuda13_and_compat_passes_everywhere():
    thirteen = [v for v in toolkit_check.DEFAULT if v.startswith("13.")]
    r = check("--toolkits=" + ",".join(thirteen), "--only", str(FIXTURES / "graph_edges_13only.cu"))
    assert r.returncode == 0, r.stdout + r.stderr
    r = check("--toolkits=" + ",".join(toolkit_check.DEFAULT), "--only", str(FIXTURES / "graph_edges_compat.cu"))
    print(r.stdout)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(re.findall(r"^toolkit \S+: 1 of 1 files compiled, 0 failed", r.stdout, re.M)) == len(
        toolkit_check.DEFAULT)
