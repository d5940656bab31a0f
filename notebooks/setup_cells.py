# The first two cells of every chapter's notebook (jupytext percent format): tools/notebooks.py puts
# them where a chapter's notebooks/NN_name.py has the line
#   # (here tools/notebooks.py puts the cells of notebooks/setup_cells.py: the same in every chapter)
# They must work before the repository is there (they find or clone it), so they are copied into
# each .ipynb rather than imported.

# %% [markdown]
# **1. The GPU, the driver and the toolkit.** Colab: *Runtime > Change runtime type > T4 GPU*.
# Kaggle: *Settings > Accelerator > GPU T4 x2* (not P100: it is sm_60, below this lab's sm_75).
# The programs are built by the nvcc of this runtime for the GPU in it (`-arch=native`).

# %%
# The first two cells are the same in every chapter's notebook: written once, in notebooks/setup_cells.py.
import os, re, shutil, subprocess
if not shutil.which("nvcc") and os.path.exists("/usr/local/cuda/bin/nvcc"):
    os.environ["PATH"] = "/usr/local/cuda/bin:" + os.environ["PATH"]  # Kaggle: the toolkit is not on PATH
def _out(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60).stdout
    except (OSError, subprocess.SubprocessError):
        return ""
smi = _out(["nvidia-smi"])
gpu = _out(["nvidia-smi", "--query-gpu=name,compute_cap,driver_version", "--format=csv,noheader"]).strip().splitlines()
if smi and not gpu:  # a driver older than the compute_cap field
    gpu = [g.replace(",", ", ?,", 1) for g in _out(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"]).strip().splitlines()]
nvcc = re.search(r"release (\d+)\.(\d+)", _out(["nvcc", "--version"]))
drv = re.search(r"CUDA Version: (\d+)\.(\d+)", smi)
print("GPU:    ", gpu[0] if gpu else "none")
print("driver: ", f"supports CUDA {drv[1]}.{drv[2]}" if drv else "none")
print("toolkit:", f"nvcc {nvcc[1]}.{nvcc[2]} ({shutil.which('nvcc')})" if nvcc else "no nvcc")
cc = gpu[0].split(",")[1].strip() if gpu and len(gpu[0].split(",")) > 1 else ""
sm = int(float(cc) * 10) if re.fullmatch(r"\d+\.\d+", cc) else None  # 7.5 -> 75, 12.0 -> 120
if not gpu or not drv:
    print("SKIPPED: no GPU in this runtime: Colab: Runtime > Change runtime type > T4 GPU; Kaggle: Settings > Accelerator > GPU T4 x2; then run again")
elif sm is not None and sm < 75:
    print(f"SKIPPED: this GPU is sm_{sm}, below this lab's sm_75: on Kaggle choose GPU T4 x2, not P100")
elif (int(drv[1]), int(drv[2])) < (12, 2):
    print(f"SKIPPED: the driver supports CUDA {drv[1]}.{drv[2]}: this lab needs a driver for CUDA 12.2 or newer")
elif not nvcc:
    print("SKIPPED: no CUDA toolkit (nvcc) here: use a runtime that has one (Colab, Kaggle), or install the CUDA Toolkit 12.2 or newer")
elif (int(nvcc[1]), int(nvcc[2])) < (12, 2):
    print(f"SKIPPED: nvcc {nvcc[1]}.{nvcc[2]} is older than this lab's 12.2: install a newer CUDA Toolkit")
elif int(drv[1]) < int(nvcc[1]):
    print(f"SKIPPED: the driver supports CUDA {drv[1]}.{drv[2]}, older than this nvcc ({nvcc[1]}.{nvcc[2]}): programs it builds "
          "cannot start" + (" (CUDA 13 needs a driver of the R580 branch or newer)" if int(nvcc[1]) == 13 else "")
          + f": use a CUDA {drv[1]}.x toolkit of 12.2 or newer (the runtime's own), or a newer driver")
elif sm is not None and sm not in {int(a) for a in re.findall(r"compute_(\d+)\b", _out(["nvcc", "--list-gpu-arch"]))}:
    print(f"SKIPPED: this GPU is sm_{sm}, which nvcc {nvcc[1]}.{nvcc[2]} cannot compile for (nvcc --list-gpu-arch): "
          "install a newer CUDA Toolkit")
else:
    if (int(drv[1]), int(drv[2])) < (int(nvcc[1]), int(nvcc[2])):
        print(f"note: the driver supports CUDA {drv[1]}.{drv[2]}, this nvcc is {nvcc[1]}.{nvcc[2]}: code built for this GPU "
              "(-arch=native, what the Makefiles do here) runs; PTX alone would not ('the provided PTX was compiled "
              "with an unsupported toolchain'): 01_intro's compilation (its forced-JIT row) and nvrtc_saxpy (its PTX "
              "row) show SKIPPED for that part")
    print("ready: GPU, driver and toolkit fit")

# %% [markdown]
# **2. The repository.** Inside a clone (JupyterLab opened in it), the notebook uses that tree;
# elsewhere (Colab, Kaggle) it clones `REPO_URL` below: set it to this repository's address.

# %%
import os, pathlib, subprocess, sys
REPO_URL = os.environ.get("CUDA_LAB_REPO_URL", "")  # this repository's git URL (https://github.com/OWNER/NAME)
def _root(start):
    return next((d for d in [start, *start.parents] if (d / "common.mk").exists() and (d / "tools" / "notebook_lab.py").exists()), None)
ROOT = _root(pathlib.Path.cwd().resolve())
if ROOT is None:
    if not REPO_URL:
        raise SystemExit("set REPO_URL in this cell to the repository's git URL, then run it again")
    ROOT = pathlib.Path.cwd() / pathlib.Path(REPO_URL.rstrip("/")).name.removesuffix(".git")
    if not ROOT.exists():
        subprocess.run(["git", "clone", "--depth", "1", REPO_URL, str(ROOT)], check=True)
sys.path.insert(0, str(ROOT / "tools"))
import notebook_lab as lab
