#!/usr/bin/env python3
"""Compiles every .cu file of the tree against other CUDA toolkits' headers, without a GPU.

The tree is built with the installed CUDA (13.0) only; the README promises 12.x too. This check
takes each chapter's compile commands from its Makefile (`make -n -B`, so per-program flags such
as -rdc=true, --default-stream per-thread and the OpenCV include path are the Makefile's own),
for the programs, exercises/ and exercises/solutions/, plus tests/gpu_probe.cu, and runs each
through nvcc's host pass (`nvcc -cuda`: cudafe++ checks the host code, cicc compiles the device code; no
link) with another toolkit's runtime headers first on the include path. The library of common/'s
bodies (common/lab_common.cpp, which the programs link; common.mk) is host code: it is compiled
to an object (`nvcc -c`) the same way, once. The architecture is
compute_90 (ARCH=compute_90: cicc compiles the device code to PTX, ptxas is not run), except where
a Makefile names its own (compilation.cu's five). The toolkits:

  12.x  the installed nvcc with the runtime headers of nvidia-cuda-runtime-cu12 of that version,
        nvidia-cuda-nvrtc-cu12 of its major.minor, and the CCCL of nvidia-cuda-cccl-cu12 12.9
        (older CCCL does not work with nvcc 13's own front end);
  13.x  a whole newer toolchain from PyPI: nvidia-cuda-nvcc, -crt, nvvm, -runtime, -nvrtc and
        nvidia-cuda-cccl, run with its own nvcc.

cuBLAS's headers come from nvidia-cublas[-cu12], the newest release of the toolkit's major.minor
(its wheel is ~500 MB: only the headers are kept; shared libraries are never unpacked).

The packages are downloaded once into .toolkits/ (ignored by git). A toolkit whose packages cannot
be downloaded is reported `SKIPPED` with pip's reason. Exit 0: every file compiled with every
toolkit that could be set up; 1: a file failed (its first error lines are printed).

  tools/toolkit_check.py                      the default toolkits (DEFAULT below)
  tools/toolkit_check.py --toolkits=12.0.146  one runtime version (any nvidia-cuda-runtime-cu12)
  tools/toolkit_check.py --only=FILE.cu ...   just these files, with the chapter flags of FILE's
                                              folder (tests use it for a synthetic file)
"""
import argparse
import concurrent.futures as cf
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / ".toolkits"
CCCL12 = "12.9.27"
# The oldest 12.x that builds the whole tree, the newest 12.x, and the newest 13.x on PyPI when
# this was written (newer than the installed 13.0). 12.0 / 12.1 lack the cudaMemLocation forms of
# prefetch / advise and cudaMemLocationTypeHost, which chapter 06 needs (README "Quick start").
DEFAULT = ["12.2.140", "12.9.79", "13.5.37"]
# 13.x: nvidia-cuda-cccl is not numbered like the toolkit; the newest one at the time.
CCCL13 = {"13.5.37": "13.3.5.0.6"}
TOOLKIT_NOTE = "the packages are from the Python package index"


def sh(cmd, cwd=ROOT, **kw):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw)


# ---- the compile commands, from the Makefiles ----------------------------------------------------

def make_lines(args, cwd=ROOT):
    r = sh(["make", "-s", "--no-print-directory", "-n", "-B", "NVCC=nvcc", "ARCH=compute_90"] + args, cwd=cwd)
    if r.returncode != 0:
        raise SystemExit(f"toolkit_check: make {' '.join(args)} failed in {cwd}:\n{r.stderr}")
    return [ln for ln in r.stdout.splitlines() if ln.startswith("nvcc ")]


def to_job(line, cwd):
    """(cwd, source, argv without nvcc) for one nvcc command that compiles a .cu file (or common/'s
    library, a .cpp), else None."""
    # the command alone: an exercise's rule goes on after it (`> .NAME.log 2>&1; rc=$?; \`, the
    # rest of that shell line on the next), and the library's rule has `&& mv ...`
    line = re.split(r"\s(?:>|&&|;|2>)", line, maxsplit=1)[0]
    argv = shlex.split(line)[1:]
    sources = [a for a in argv if a.endswith((".cu", ".cpp"))]
    if not sources:
        return None  # a link step (hello_multi.o ...)
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a == "-o":
            i += 2
            continue
        # objects and libraries linked with it (arith_instructions' four arith_flags builds, common/'s
        # library), and -lib (the library is compiled to an object here)
        if a.endswith((".o", ".a")) or a == "-lib":
            i += 1
            continue
        if a == "-dc":  # separate compilation: an object with relocatable device code
            a = "-rdc=true"
        out.append(a)
        i += 1
    return (Path(cwd), (Path(cwd) / sources[0]).resolve(), out)


def collect_jobs():
    jobs = []
    for chapter in sorted(ROOT.glob("0[0-9]_*/Makefile")):
        d = chapter.parent
        progs = sh(["make", "-s", "--no-print-directory", "list"], cwd=d).stdout.split()
        for ln in make_lines(progs, cwd=d):
            jobs.append(to_job(ln, d))
        for src in ("exercises", "exercises/solutions"):
            if list((d / src).glob("*.cu")):
                for ln in make_lines([f"EX_SRC={src}", "EX_BIN=/nonexistent", "exercises-build"], cwd=d):
                    jobs.append(to_job(ln, d))
    for ln in make_lines(["tests/gpu_probe", ".stress/libordering_stress.so"]):
        jobs.append(to_job(ln, ROOT))
    seen, unique = set(), []  # common/'s library is in every chapter's commands: compiled once
    for j in jobs:
        if j and (j[1], tuple(j[2])) not in seen:  # (arith_flags.cu is compiled four ways: four jobs)
            seen.add((j[1], tuple(j[2])))
            unique.append(j)
    return unique


def tracked_cu():
    """The project's .cu files: git's list where the tree is a checkout, else every .cu under ROOT.
    Either way without hidden folders (.toolkits, a maintainer's scratch) and students' workspace/
    copies (make workspace), which are not the project's sources."""
    r = sh(["git", "ls-files", "--cached", "--others", "--exclude-standard", "*.cu"])
    if r.returncode == 0 and r.stdout.strip():
        files = [ROOT / p for p in r.stdout.split()]
    else:
        files = list(ROOT.rglob("*.cu"))
    return {p.resolve() for p in files
            if not any(part.startswith(".") or part == "workspace" for part in p.relative_to(ROOT).parts[:-1])}


# ---- toolkits ------------------------------------------------------------------------------------

def pip_download(specs, dest):
    dest.mkdir(parents=True, exist_ok=True)
    for spec in specs:
        r = sh([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "--disable-pip-version-check",
                "-d", str(dest), spec])
        if r.returncode != 0:
            lines = [ln for ln in (r.stderr or r.stdout).splitlines() if ln.strip()]
            return f"pip download {spec}: {lines[-1] if lines else 'failed'}"
    return None


def extract(whl, dest, include_only):
    """Unpacks a wheel's headers (include_only), or all of it but its shared libraries."""
    with zipfile.ZipFile(whl) as z:
            for info in z.infolist():
                name = info.filename
                if include_only and "/include/" not in name:
                    continue
                if ".dist-info/" in name or name.endswith("/") or "/lib/" in name:
                    continue
                target = dest / name
                target.parent.mkdir(parents=True, exist_ok=True)
                with z.open(info) as src, open(target, "wb") as out:
                    shutil.copyfileobj(src, out)
                mode = info.external_attr >> 16
                if mode & 0o111:
                    target.chmod(target.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)


def setup(version):
    """(nvcc, extra flags, description) or (None, None, reason)."""
    dest = CACHE / f"cuda-{version}"
    stamp = dest / ".complete"
    major = version.split(".")[0]
    wheels = CACHE / "wheels"
    minor = ".".join(version.split(".")[:2])
    # cuBLAS is numbered on its own; its newest release of the toolkit's major.minor.
    if major == "12":
        specs = [f"nvidia-cuda-runtime-cu12=={version}", f"nvidia-cuda-nvrtc-cu12=={minor}.*",
                 f"nvidia-cuda-cccl-cu12=={CCCL12}", f"nvidia-cublas-cu12=={minor}.*"]
    elif major == "13":
        cccl = CCCL13.get(version)
        specs = [f"nvidia-cuda-{p}=={version}" for p in ("nvcc", "crt", "runtime", "nvrtc")]
        specs += [f"nvidia-nvvm=={version}", f"nvidia-cuda-cccl=={cccl}" if cccl else "nvidia-cuda-cccl",
                  f"nvidia-cublas=={minor}.*"]
    else:
        return None, None, f"unknown toolkit version {version}"
    if not stamp.exists():
        shutil.rmtree(wheels, ignore_errors=True)  # one toolkit's wheels at a time (cuBLAS: ~500 MB)
        why = pip_download(specs, wheels)
        if why:
            return None, None, why
        shutil.rmtree(dest, ignore_errors=True)
        got = []
        for whl in sorted(wheels.glob("*.whl")):
            extract(whl, dest, include_only=major == "12" or "cublas" in whl.name)
            got.append("==".join(whl.name.split("-")[:2]))
        shutil.rmtree(wheels, ignore_errors=True)
        stamp.write_text(" ".join(got) + "\n")
    desc = open(stamp).read().strip()
    if major == "12":
        flags = [f"-I{dest / 'nvidia' / p / 'include'}" for p in ("cuda_runtime", "cuda_nvrtc", "cublas")]
        return "nvcc", flags + ["-isystem", str(dest / "nvidia/cuda_cccl/include")], desc
    nvcc = dest / "nvidia" / "cu13" / "bin" / "nvcc"  # its nvcc.profile finds include/ and nvvm/
    if not nvcc.exists():
        return None, None, f"{nvcc} missing after install"
    return str(nvcc), [], desc


# ---- running -------------------------------------------------------------------------------------

def compile_one(nvcc, extra, job, tmp):
    cwd, src, argv = job
    host_only = src.suffix == ".cpp"  # common/lab_common.cpp: the host compiler, to an object
    out = Path(tmp) / (re.sub(r"[^A-Za-z0-9_.]", "_", str(src.relative_to(ROOT))) + (".o" if host_only else ".ii"))
    cmd = [nvcc, "-c" if host_only else "-cuda"] + extra + argv + ["-o", str(out)]
    r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True)
    return r.returncode, (r.stderr + r.stdout).strip()


def run_toolkit(version, jobs, workers, skipped):
    t0 = time.time()
    nvcc, extra, desc = setup(version)
    t_setup = time.time() - t0
    if nvcc is None:
        print(f"toolkit {version}: SKIPPED ({desc})")
        return None
    fails = []
    with tempfile.TemporaryDirectory(prefix="toolkit_check_") as tmp:
        with cf.ThreadPoolExecutor(max_workers=workers) as pool:
            futs = {pool.submit(compile_one, nvcc, extra, j, tmp): j for j in jobs}
            for f in cf.as_completed(futs):
                rc, text = f.result()
                if rc != 0:
                    fails.append((futs[f][1], text))
    dt = time.time() - t0
    for src, text in sorted(fails):
        errs = [ln for ln in text.splitlines() if "error" in ln] or text.splitlines()
        print(f"  FAIL {version}: {src.relative_to(ROOT)}")
        for ln in errs[:4]:
            print(f"      {ln.strip()[:160]}")
    cc = sh([nvcc, "--version"]).stdout.strip().splitlines()[-1:]  # "Build cuda_13.0.r13.0/..."
    skip_note = f", {len(skipped)} skipped ({'; '.join(skipped)})" if skipped else ""
    print(f"toolkit {version}: {len(jobs) - len(fails)} of {len(jobs)} files compiled, {len(fails)} failed"
          f"{skip_note} in {dt:.1f} s (setup {t_setup:.1f} s; nvcc {cc[0].split()[-1] if cc else '?'}; {desc})")
    return len(fails)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--toolkits", default=os.environ.get("TOOLKITS", ",".join(DEFAULT)).replace(" ", ","),
                    help="comma-separated versions (nvidia-cuda-runtime[-cu12] versions)")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--only", nargs="*", help="compile only these .cu files (paths; common/lab_common.cpp too)")
    args = ap.parse_args()
    t0 = time.time()

    all_jobs = collect_jobs()
    skipped = []
    image = []  # (chapter folder, program) of the programs that need OpenCV, when it is missing
    for mk in sorted(ROOT.glob("0[0-9]_*/Makefile")):
        have, *progs = sh(["make", "-s", "--no-print-directory", "image-programs"], cwd=mk.parent).stdout.split()
        if have != "yes":
            image += [mk.parent / (p + ".cu") for p in progs]
    if image:
        all_jobs = [j for j in all_jobs if j[1] not in image]
        skipped.append(f"{len(image)} OpenCV programs: OpenCV not found")
    if args.only:
        wanted = [Path(p).resolve() for p in args.only]
        jobs = []
        for w in wanted:
            same = [j for j in collect_jobs() if j[1] == w]
            if same:
                jobs.append(same[0])
            else:  # in no Makefile (a test's synthetic file): the flags of 01_intro/vector_add
                base = next(j for j in all_jobs if j[1].name == "vector_add.cu")[2]
                jobs.append((w.parent, w, [a for a in base if not a.endswith(".cu")] + [str(w)]))
    else:
        jobs = all_jobs
        missing = tracked_cu() - {j[1] for j in jobs} - {p.resolve() for p in ROOT.glob("tests/fixtures/**/*.cu")}
        if missing:
            print("toolkit_check: .cu files that no Makefile compiles (add them to one):")
            for p in sorted(missing):
                print(f"  {p.relative_to(ROOT)}")
            return 1
    print(f"toolkit_check: {len(jobs)} files (.cu: nvcc -cuda; common/'s library: nvcc -c), {args.jobs} at a time; "
          f"{TOOLKIT_NOTE}")
    failed, ran = 0, 0
    for v in [v for v in args.toolkits.split(",") if v]:
        n = run_toolkit(v, jobs, args.jobs, skipped if not args.only else [])
        if n is not None:
            ran += 1
            failed += n
    print(f"toolkit_check: {ran} toolkits checked, {failed} failures, {time.time() - t0:.1f} s in all")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
