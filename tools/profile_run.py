#!/usr/bin/env python3
"""Runs every program of tests/manifest.txt at its test arguments under one device profile
(CUDA_LAB_PROFILE, common/profiles.h) in a built tree, and prints one line per program and a
summary:

    tools/profile_run.py --profile t4 --build compute_75 --jobs 4
    ...
    03_shared/cluster_dsmem          skipped: thread block clusters requires compute capability 9.0; Tesla T4 is 7.5
    ...
    profile t4 (build compute_75): 80 passed, 9 skipped, 0 failed

Build the tree first, e.g. `make ARCH=compute_75` (PTX for Turing that the driver JIT-compiles for
the GPU at hand: the kernels then run the code a Turing GPU would). Without --profile the programs
see the real GPU ("profile none").

A profile run must run the build it names, or its skips and passes say nothing about the profile's
GPU (a t4 run on an sm_90 build skips everything at select_device). So under --profile a program
FAILS when its banner does not name the profile, when it passes without a banner, when it skips
with "this build has code for ..." (the build is newer than the profile's GPU), or, with --build
compute_XX or sm_XX, when its banner's "code built for" (device.cuh, from __CUDA_ARCH_LIST__) is
not that one architecture (except a program marked own-arch in the manifest: its Makefile sets its
architectures whatever ARCH is).

A program passes when it exits 0 with PASSED as its last line, is skipped when it exits 77 (its
SKIPPED: line is the reason), and fails otherwise (its last line, or the exit code, or the
timeout). The programs run --jobs at a time; programs that time the GPU or size their buffers from
its free memory may fail beside others, so each failure is run again alone, and its line says so
when the second run's verdict is the one shown. Exit status: 0 when none failed, 1 otherwise,
2 for a usage error.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(HERE / "tests"))
from manifest import load_manifest  # noqa: E402


def profile_names(root):
    """The names profiles.h defines (the programs' own check exits 2 on any other)."""
    text = (root / "common" / "profiles.h").read_text()
    return re.findall(r"^profile\s+(\S+)", text, re.M)


def build_arch(build):
    """'compute_75' or 'sm_75' -> '7.5' (what the banner's "code built for" says); else None (no check)."""
    m = re.fullmatch(r"(?:compute|sm)_(\d+)(\d)[a-z]?", build or "")
    return f"{m.group(1)}.{m.group(2)}" if m else None


def run_one(root, program, profile, timeout, build=""):
    exe = root / program.name
    if not exe.exists():
        if program.options.get("opencv"):
            return {"status": "skipped", "reason": "not built (OpenCV not found at build time)", "seconds": 0.0}
        return {"status": "FAILED", "reason": "not built", "seconds": 0.0}
    env = dict(os.environ)
    env.pop("CUDA_LAB_PROFILE", None)
    if profile:
        env["CUDA_LAB_PROFILE"] = profile
    t = program.options.get("timeout")
    limit = float(t) if t not in (None, True) else timeout
    start = time.monotonic()
    try:
        r = subprocess.run([str(exe)] + list(program.args), capture_output=True, text=True, timeout=limit,
                           cwd=exe.parent, env=env)
    except subprocess.TimeoutExpired:
        return {"status": "FAILED", "reason": f"timed out after {limit:.0f} s", "seconds": limit, "output": ""}
    seconds = time.monotonic() - start
    lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
    last = lines[-1].strip() if lines else ""
    out = {"seconds": round(seconds, 2), "output": r.stdout[-4000:] + r.stderr[-2000:]}
    banner = next((ln for ln in lines if ln.startswith("GPU ")), "")
    built = re.search(r"\| code built for (\d+\.\d+(?: \.\. \d+\.\d+)?)", banner)
    want_arch = build_arch(build)
    skip_reason = next((ln.strip()[len("SKIPPED:"):].strip() for ln in reversed(lines) if ln.startswith("SKIPPED:")),
                       "")
    if profile and banner and f"profile {profile}:" not in banner:
        out.update(status="FAILED", reason=f"the banner does not name profile {profile}: {banner}")
    elif profile and not banner and r.returncode == 0:
        out.update(status="FAILED", reason=f"exit 0 under profile {profile} without a banner line (GPU ...)", alone=False)
    elif profile and r.returncode == 77 and skip_reason.startswith("this build has code for"):
        out.update(status="FAILED", reason=f"the build does not fit profile {profile}: {skip_reason}", alone=False)
    elif profile and banner and want_arch and not program.options.get("own-arch") and \
            (not built or built.group(1) != want_arch):
        found = built.group(1) if built else "no 'code built for' in the banner"
        out.update(status="FAILED", reason=f"not the build --build names ({build}): code built for {found}", alone=False)
    elif r.returncode == 0 and last == "PASSED":
        out.update(status="passed", reason="")
    elif r.returncode == 77:
        out.update(status="skipped", reason=skip_reason or "exit 77 without a SKIPPED: line")
    else:
        err = [ln for ln in r.stderr.splitlines() if ln.strip()]
        reason = last if last.startswith("FAILED") else (err[-1].strip() if err else last) or "no output"
        out.update(status="FAILED", reason=f"exit {r.returncode}: {reason}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, default=HERE, help="the built tree (default: this one)")
    ap.add_argument("--manifest", type=Path, default=None, help="default: ROOT/tests/manifest.txt")
    ap.add_argument("--profile", default="", help="a name from common/profiles.h; empty: the real GPU")
    ap.add_argument("--build", default="", help="what the tree was built for, e.g. compute_75: the summary's label, and "
                    "under --profile each program's banner must say it (compute_XX / sm_XX)")
    ap.add_argument("--jobs", type=int, default=4, help="programs at a time (default 4)")
    ap.add_argument("--timeout", type=float, default=120, help="seconds per program unless the manifest says")
    ap.add_argument("--only", default="", help="a regular expression: run only the programs it matches")
    ap.add_argument("--json", type=Path, default=None, help="also write every program's result here")
    ap.add_argument("--logs", type=Path, default=None, help="write each program's output to LOGS/<chapter>__<name>.txt")
    a = ap.parse_args()
    root = a.root.resolve()
    if a.jobs < 1:
        ap.error("--jobs must be at least 1")
    names = profile_names(root)
    if a.profile and a.profile not in names:
        ap.error(f"unknown profile {a.profile!r}; known: {', '.join(names)}")
    try:
        only = re.compile(a.only)
    except re.error as e:
        ap.error(f"--only: {e}")
    programs = [p for p in load_manifest(a.manifest or root / "tests" / "manifest.txt") if only.search(p.name)]
    if not programs:
        ap.error("no program of the manifest matches --only")

    with ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = list(pool.map(lambda p: run_one(root, p, a.profile, a.timeout, a.build), programs))
    for i, p in enumerate(programs):  # failures beside others: once more, alone
        alone = results[i].pop("alone", True)  # False: a failure that running alone cannot change
        if results[i]["status"] == "FAILED" and a.jobs > 1 and alone and results[i]["reason"] != "not built":
            again = run_one(root, p, a.profile, a.timeout, a.build)
            again.pop("alone", None)
            again["first_run"] = results[i]["reason"]
            results[i] = again

    width = max(len(p.name) for p in programs)
    counts = {"passed": 0, "skipped": 0, "FAILED": 0}
    for p, r in zip(programs, results):
        counts[r["status"]] += 1
        text = r["status"] + (f": {r['reason']}" if r["reason"] else "")
        if "first_run" in r:
            text += f"  (run alone; beside others: {r['first_run']})"
        print(f"{p.name:<{width}}  {text}", flush=True)
        if a.logs:
            a.logs.mkdir(parents=True, exist_ok=True)
            (a.logs / (p.name.replace("/", "__") + ".txt")).write_text(r.get("output", ""))
    label = f"profile {a.profile or 'none'}" + (f" (build {a.build})" if a.build else "")
    print(f"{label}: {counts['passed']} passed, {counts['skipped']} skipped, {counts['FAILED']} failed")
    if a.json:
        a.json.parent.mkdir(parents=True, exist_ok=True)
        a.json.write_text(json.dumps({"profile": a.profile or None, "build": a.build or None, "counts": counts,
                                      "programs": [{"program": p.name, **{k: v for k, v in r.items() if k != "output"}}
                                                   for p, r in zip(programs, results)]}, indent=1) + "\n")
    return 1 if counts["FAILED"] else 0


if __name__ == "__main__":
    sys.exit(main())
