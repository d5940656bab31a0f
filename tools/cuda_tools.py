"""Where the CUDA binary tools are (cuobjdump, nvdisasm): tools/exercises.py reads the machine code of
a student's kernel with cuobjdump, tests/sass.py the programs'. Host-only; no GPU needed."""
import functools
import os
import re
import shutil
import subprocess
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


# ---- reading SASS (cuobjdump -sass output) -------------------------------------------------------

INSTR = re.compile(r"^\s*/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")


def demangle(names):
    tool = shutil.which("c++filt") or shutil.which("cu++filt")
    if not tool or not names:
        return {n: n for n in names}
    r = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True)
    out = r.stdout.splitlines()
    return dict(zip(names, out)) if len(out) == len(names) else {n: n for n in names}


def parse_sass(text, demangled=True):
    """{function name: [(address, opcode with modifiers, operand text)]} of cuobjdump -sass output;
    the names demangled (c++filt) unless demangled=False. The same name in another ELF image of the
    file gets a suffix " [2]", " [3]"..."""
    funcs, cur = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function : (\S+)", line)
        if m:
            cur = m.group(1)
            k = 2
            while cur in funcs:  # the same name in another ELF image of the file: kept apart
                cur = f"{m.group(1)} [{k}]"
                k += 1
            funcs[cur] = []
            continue
        m = INSTR.match(line)
        if m and cur is not None:
            body = m.group(2).strip()
            body = re.sub(r"^@!?U?P[T0-9]+\s+", "", body)
            op, _, rest = body.partition(" ")
            funcs[cur].append((int(m.group(1), 16), op, rest))
    if not demangled:
        return funcs
    base = {k: k.split(" [")[0] for k in funcs}
    names = demangle(sorted(set(base.values())))
    return {names[base[k]] + k[len(base[k]):]: v for k, v in funcs.items()}
