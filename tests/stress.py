#!/usr/bin/env python3
"""Ordering under an adversarial schedule (GPU): every program must pass when stream timing is hostile.

Two modes, each run --repeat times per program at its test arguments (tests/manifest.txt):
  shim    the tree built again with the shared CUDA runtime (make CUDART=shared, in .stress/tree),
          each program run with tests/stress/ordering_stress.cu preloaded: a spin kernel of random
          length in front of every asynchronous operation (in its stream) and every memset/copy on
          the legacy stream. An order the program never stated (legacy-stream work, then a
          non-blocking stream; a device memset assumed finished) then breaks.
  shared  the programs as built (make), --copies copies of each at once on the one GPU: a lab, where
          the GPU is shared and every program is slower than alone.
A run passes when it exits 0 with PASSED last (or 77 with SKIPPED for a may-skip program). Under
the shim CUDA_LAB_STRESS=1 is set: programs then print, but do not assert, their timing claims (as
under compute-sanitizer: common/device.cuh cuda_tool_attached()).

    tests/stress.py [--mode=shim,shared] [--repeat=2] [--copies=8] [--jobs=4] [--chapter=05_streams]
                    [--log-dir=DIR] [PROGRAM ...]
Summary lines:
    stress (shim): P programs x R runs: N passed, S skipped, F failed
    stress (8 at once): P programs x R rounds x 8 copies: N passed, S skipped, F failed
tests/mutants.py uses stress_env() and build_shim() for its `stress: yes` mutants.
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from manifest import load_manifest  # noqa: E402

STRESS = ROOT / ".stress"
SHIM = STRESS / "libordering_stress.so"
SHIM_SRC = ROOT / "tests" / "stress" / "ordering_stress.cu"


def build_shim():
    """Builds the preload library (once per source change); raises on failure."""
    r = subprocess.run(["make", "--no-print-directory", str(SHIM.relative_to(ROOT))], cwd=ROOT,
                       capture_output=True, text=True, env=dict(os.environ, MAKEFLAGS="", MAKELEVEL=""))
    if r.returncode != 0:
        raise RuntimeError(f"building {SHIM.name} failed:\n{r.stderr}")
    return SHIM


def stress_env(env=None):
    env = dict(os.environ if env is None else env)
    env["LD_PRELOAD"] = str(build_shim()) + (":" + env["LD_PRELOAD"] if env.get("LD_PRELOAD") else "")
    env["CUDA_LAB_STRESS"] = "1"
    env["CUDA_LAB_STRESS_VERBOSE"] = "1"  # the library's count at exit: a run it delayed nothing in fails
    return env


def build_tree(jobs):
    """A copy of the tree's sources in .stress/tree, built with the shared CUDA runtime."""
    tree = STRESS / "tree"
    files = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"], cwd=ROOT,
                           capture_output=True, text=True, check=True).stdout.split("\n")
    for f in filter(None, files):
        src, dst = ROOT / f, tree / f
        if not src.is_file():
            continue
        if not dst.exists() or dst.read_bytes() != src.read_bytes():
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)
    if (ROOT / ".devlibs").exists() and not (tree / ".devlibs").exists():
        (tree / ".devlibs").symlink_to(ROOT / ".devlibs")
    r = subprocess.run(["make", f"-j{jobs}", "all", "CUDART=shared"], cwd=tree, capture_output=True, text=True,
                       env=dict(os.environ, MAKEFLAGS="", MAKELEVEL=""))
    if r.returncode != 0:
        raise RuntimeError(f"building .stress/tree failed:\n{r.stdout[-2000:]}{r.stderr[-3000:]}")
    return tree


DELAYED = re.compile(r"ordering_stress: (\d+) operations, (\d+) delayed")


def judge(program, rc, stdout, out=None):
    """passed / skipped / a reason. With `out` (stdout + stderr of a run under the library), a run in
    which the library delayed nothing fails: the stress was not there."""
    lines = stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    if out is not None and rc == 0:
        m = DELAYED.search(out)
        if not m or int(m.group(2)) == 0:
            return "the stress library delayed nothing (" + (m.group(0) if m else "no report: not preloaded?") + ")"
    if rc == 0 and last == "PASSED":
        return "passed"
    if rc == 77 and last.startswith("SKIPPED") and program.options.get("may-skip"):
        return "skipped"
    return "timeout" if rc is None else f"exit {rc}: {last[:120]}"


def run(path, args, env, timeout):
    try:
        r = subprocess.run([str(path)] + list(args), cwd=path.parent, env=env, capture_output=True, text=True,
                           timeout=timeout, errors="replace")
        return r.returncode, r.stdout, r.stdout + r.stderr
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--mode", default="shim,shared")
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--copies", type=int, default=8)
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=300)
    ap.add_argument("--chapter")
    ap.add_argument("--log-dir", default="gpu_check_out")
    a = ap.parse_args()
    known = {p.name for p in load_manifest()}
    unknown = [n for n in a.programs if n not in known]
    if unknown:
        print(f"stress: not in tests/manifest.txt: {' '.join(unknown)}", file=sys.stderr)
        return 2
    progs = [p for p in load_manifest() if (not a.chapter or p.chapter in a.chapter.split(","))
             and (not a.programs or p.name in a.programs)]
    log_dir = Path(a.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    modes = a.mode.split(",")
    ok = True
    if "shim" in modes:
        t0 = time.monotonic()
        log = open(log_dir / "stress_shim.log", "w")
        try:
            tree = build_tree(os.cpu_count() or 4)
            env = stress_env()
        except RuntimeError as e:
            print(f"stress (shim): not run: {e}")
            return 1
        jobs = [(p, k) for k in range(a.repeat) for p in progs if (tree / p.name).exists()]
        missing = [p.name for p in progs if not (tree / p.name).exists()]

        def one(job):
            p, k = job
            e = dict(env, CUDA_LAB_STRESS_SEED=str(1000 * k + zlib.crc32(p.name.encode()) % 1000))
            rc, stdout, out = run(tree / p.name, p.args, e, a.timeout)
            v = judge(p, rc, stdout, out)
            log.write(f"===== {p.name} run {k + 1}: {v}\n{out}\n")
            log.flush()
            return p, v

        with ThreadPoolExecutor(a.jobs) as pool:
            res = list(pool.map(one, jobs))
        bad = [(p, v) for p, v in res if v not in ("passed", "skipped")]
        for p, v in bad:
            print(f"  shim    {p.name}: {v}")
        for name in missing:
            print(f"  shim    {name}: not built (OpenCV?)")
        n = {s: sum(v == s for _, v in res) for s in ("passed", "skipped")}
        print(f"stress (shim): {len(progs) - len(missing)} programs x {a.repeat} runs: {n['passed']} passed, "
              f"{n['skipped']} skipped, {len(bad)} failed; {len(missing)} not built; {time.monotonic() - t0:.0f} s")
        ok &= not bad
    if "shared" in modes:
        t0 = time.monotonic()
        log = open(log_dir / "stress_shared.log", "w")
        res = []
        built = [p for p in progs if p.path.exists()]
        for k in range(a.repeat):
            for p in built:
                with ThreadPoolExecutor(a.copies) as pool:
                    outs = list(pool.map(lambda _: run(p.path, p.args, dict(os.environ), a.timeout), range(a.copies)))
                for c, (rc, stdout, out) in enumerate(outs):
                    v = judge(p, rc, stdout)
                    res.append((p, v))
                    if v not in ("passed", "skipped"):
                        print(f"  shared  {p.name} (round {k + 1}, copy {c + 1}): {v}", flush=True)
                    log.write(f"===== {p.name} round {k + 1} copy {c + 1}: {v}\n{out}\n")
                log.flush()
        bad = [v for _, v in res if v not in ("passed", "skipped")]
        n = {s: sum(v == s for _, v in res) for s in ("passed", "skipped")}
        print(f"stress ({a.copies} at once): {len(built)} programs x {a.repeat} rounds x {a.copies} copies: "
              f"{n['passed']} passed, {n['skipped']} skipped, {len(bad)} failed; {time.monotonic() - t0:.0f} s")
        ok &= not bad
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
