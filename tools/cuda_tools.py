"""Where the CUDA binary tools are (cuobjdump, nvdisasm): tools/exercises.py reads the machine code of
a student's kernel with cuobjdump, tests/sass.py the programs'. Host-only; no GPU needed."""
import functools
import os
import shutil
import sys
from pathlib import Path


@functools.lru_cache(None)
def find_tool(name):
    """A CUDA binary tool (cuobjdump, nvdisasm): next to the nvcc on PATH (normally the toolkit that
    built the programs, which can read what it built; make's NVCC= can name another), $CUDA_PATH/bin,
    PATH, or a PyPI package nvidia-cuda-NAME (nvidia/cu*/bin/NAME on sys.path). None if nowhere."""
    dirs = []
    nvcc = shutil.which("nvcc")
    if nvcc:
        dirs.append(Path(nvcc).resolve().parent)
    if os.environ.get("CUDA_PATH"):
        dirs.append(Path(os.environ["CUDA_PATH"]) / "bin")
    for d in dirs:
        if (d / name).is_file() and os.access(d / name, os.X_OK):
            return str(d / name)
    p = shutil.which(name)
    if p:
        return p
    dirs = []
    for d in sys.path:
        dirs += sorted(Path(d).glob("nvidia/cu*/bin"), reverse=True) if d and Path(d).is_dir() else []
    for d in dirs:
        if (d / name).is_file() and os.access(d / name, os.X_OK):
            return str(d / name)
    return None


def tool_env():
    """Environment for cuobjdump: its nvdisasm (which -sass may use) on PATH too."""
    env = dict(os.environ)
    extra = [str(Path(t).parent) for t in (find_tool("cuobjdump"), find_tool("nvdisasm")) if t]
    env["PATH"] = os.pathsep.join(extra + [env.get("PATH", "")])
    return env
