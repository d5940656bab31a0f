"""Every check can fail: with CUDA_LAB_CORRUPT=1 (common/corrupt.h) one element of the GPU data each
check compares is corrupted, and every program at its test arguments must print a last line
`FAILED: ...` (after a failed check line) and exit 1. A program that still passes has a check that
compares nothing. GPU only; tests/corruption.py holds the run and its classification, and with
CORRUPTION_LOG=FILE in the environment each program's outcome is appended to FILE (the summary
tools/gpu_check.sh prints)."""
import os

import pytest
from conftest import gpu_probe, require_built
from corruption import run_corrupted


def test_corruption_fails(program):
    has_gpu, text = gpu_probe()
    if not has_gpu:
        pytest.skip(f"needs a GPU: {text}")
    require_built(program)
    outcome, detail, out, err = run_corrupted(program, int(program.options.get("timeout", 120)))
    log = os.environ.get("CORRUPTION_LOG")
    if log:
        with open(log, "a") as f:
            f.write(f"{program.name}\t{outcome}\t{detail}\n")
    if outcome == "skipped":
        pytest.skip(f"program skipped: {detail}")
    assert outcome == "FAILED", f"{outcome}: {detail}\n{out[-3000:]}\n{err[-2000:]}"
