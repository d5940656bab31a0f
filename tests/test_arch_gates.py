"""Gates that ask the binary too (issue 32; the manual's G 3.1, binary and PTX compatibility).

A kernel runs the code compiled for the virtual architecture of its PTX (__CUDA_ARCH__ = 10 x
ptxVersion), even when the driver JIT-compiles that PTX for a newer GPU. A program that compiles a
feature out under `#if __CUDA_ARCH__ >= N` must therefore ask the kernel (common/device.cuh:
kernel_has_arch, require_kernel_arch), not only the device. Built with -arch=compute_75 (what
`make ARCH=compute_75` does), cluster_dsmem and atomic_half compile; on a GPU of 9.0 the first skips
with the kernel's architecture as the reason and the second leaves the bfloat16 types out and passes.
"""
import re
import shutil
import subprocess

import pytest
from conftest import ROOT, gpu_probe, load_manifest

CHAPTERS = sorted(p for p in ROOT.glob("0*_*") if p.is_dir())


def sources():
    return [f for ch in CHAPTERS for f in sorted(ch.glob("*.cu"))]


def compiles_a_feature_out(text):
    """A `__CUDA_ARCH__ >= N` guard whose other branch traps or leaves a kernel that must not run."""
    return bool(re.search(r"__CUDA_ARCH__\s*>=\s*[789]00", text)) and bool(
        re.search(r"__trap\(\)|never launched|not launched", text))


def test_feature_gates_ask_the_kernel():
    found, missing = [], []
    for f in sources():
        text = f.read_text()
        if compiles_a_feature_out(text):
            found.append(f.relative_to(ROOT).as_posix())
            if not re.search(r"\b(kernel_has_arch|require_kernel_arch)\(", text):
                missing.append(found[-1])
    assert {"03_shared/cluster_dsmem.cu", "07_atomics/atomic_half.cu", "03_shared/memcpy_async.cu"} <= set(found)
    assert not missing, f"compile a feature out by __CUDA_ARCH__ but ask only the device: {missing}"


CASES = {
    # program: (what its output must say on a GPU of compute capability 9.0, exit code there)
    "03_shared/cluster_dsmem": ("cluster_dsmem's kernels were compiled for compute_75 (its PTX compiled for this 9.0 GPU)", 77),
    "07_atomics/atomic_half": ("__nv_bfloat16        skipped: its kernel was compiled for compute_75", 0),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_compute_75_build(name, tmp_path):
    nvcc = shutil.which("nvcc")
    if not nvcc:
        pytest.skip("nvcc not found")
    src = ROOT / (name + ".cu")
    exe = tmp_path / src.stem
    # The program's own one-line build (header-only), for PTX of compute_75 only.
    r = subprocess.run([nvcc, "-std=c++17", "-O3", "-arch=compute_75", "-Werror", "all-warnings", "-Xcompiler",
                        "-Wall,-Wextra", f"-I{ROOT / 'common'}", "-o", str(exe), str(src)],
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    has_gpu, _ = gpu_probe()
    run = subprocess.run([str(exe), "--help"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0
    if not has_gpu:
        run = subprocess.run([str(exe)], capture_output=True, text=True, timeout=60)
        assert run.returncode == 77, run.stdout + run.stderr
        return
    args = next(p.args for p in load_manifest() if p.name == name)  # the test arguments
    run = subprocess.run([str(exe)] + args, capture_output=True, text=True, timeout=120)
    banner = run.stdout.splitlines()[0] if run.stdout else ""
    if "| sm_90 |" not in banner:
        pytest.skip(f"the reasons are checked on a GPU of 9.0: {banner}")
    text, code = CASES[name]
    assert run.returncode == code and text in run.stdout, run.stdout[-3000:] + run.stderr[-2000:]
