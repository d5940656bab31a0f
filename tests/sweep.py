#!/usr/bin/env python3
"""Runs the size sweep of tests/sweep.txt on the GPU: every program at size 1, a small odd size, just
past a block or tile boundary, thin 2D shapes and the largest values its --help allows.

Small and big runs go several at a time (--jobs); max runs two at a time (--max-jobs; a run that
found the GPU out of memory beside another is run again alone, so the verdict is its own).
A run passes when it exits 0 with PASSED as its last line (77 with SKIPPED where the manifest says
may-skip); a max run that does not fit this machine may instead exit 1 with one line
"FAILED: out of memory: ...". Anything else fails: another exit code, a crash, a timeout. The small
runs also go under compute-sanitizer memcheck (leak check on; the manifest's nosan and api-errors
apply). Prints one line per run that did not pass, the slowest runs, and a summary; the output of
every run is written under --log-dir. Exit 0 if every run passed and memcheck found nothing.
    tests/sweep.py [--chapter=03_shared] [--jobs=4] [--max-jobs=2] [--timeout=180] [--no-memcheck] [--log-dir=DIR] [PROGRAM ...]
"""
import argparse
import re
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from manifest import load_sweep

OOM = re.compile(r"^FAILED: out of memory")


def execute(cmd, cwd, timeout):
    t0 = time.monotonic()
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=cwd, errors="replace")
        rc, out = r.returncode, r.stdout + ("\n--- stderr\n" + r.stderr if r.stderr else "")
        stdout = r.stdout
    except subprocess.TimeoutExpired as e:
        rc, stdout = None, (e.stdout or b"").decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        out = stdout + f"\n--- timed out after {timeout}s"
    return rc, stdout, out, time.monotonic() - t0


def judge(run, rc, stdout):
    """'passed', 'skipped', 'oom' or a reason for failing."""
    lines = stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    if rc is None:
        return "timeout"
    if rc == 0 and last == "PASSED":
        return "passed"
    if rc == 77 and last.startswith("SKIPPED: ") and run.program.options.get("may-skip"):
        return "skipped"
    if rc == 1 and run.kind == "max" and OOM.match(last) and sum(l.startswith("FAILED") for l in lines) == 1:
        return "oom"
    if rc < 0:
        return f"crashed (signal {-rc})"
    return f"exit {rc}: {last[:100]}"


_progress = {"file": None, "lock": threading.Lock()}


def progress(what, status, secs, label):
    """One line per finished run in progress.log (and, unless it passed, on stdout), written as it
    happens: a sweep stopped by an outer time limit still leaves what it had done."""
    line = f"{what:<8} {secs:6.1f} s  {status[:60]:<12}  {label}"
    with _progress["lock"]:
        if _progress["file"]:
            _progress["file"].write(line + "\n")
            _progress["file"].flush()
        if status not in ("passed", "clean", "skipped") and what != "max":  # max runs: printed by max_run
            print(line, flush=True)


def sweep_one(run, timeout):
    rc, stdout, out, secs = execute([str(run.program.path), *run.args], run.program.path.parent, timeout)
    status = judge(run, rc, stdout)
    progress(run.kind, status, secs, run.label)
    return status, out, secs


def memcheck_one(run, timeout):
    api = ["--report-api-errors", "no"] if run.program.options.get("api-errors") else []
    leaks = "no" if "leaks" in str(run.program.options.get("nosan", "")).split(",") else "full"
    cmd = ["compute-sanitizer", "--tool", "memcheck", "--leak-check", leaks, *api, "--error-exitcode", "99",
           "--print-limit", "20", str(run.program.path), *run.args]
    rc, stdout, out, secs = execute(cmd, run.program.path.parent, timeout)
    m = re.search(r"ERROR SUMMARY: (\d+) error", out)
    if rc is None:
        status = "timeout"
    elif rc == 77 and run.program.options.get("may-skip"):
        status = "clean"
    elif m and int(m.group(1)) == 0 and rc == 0:
        status = "clean"
    else:
        status = f"{m.group(1)} errors" if m else f"exit {rc}"
    progress("memcheck", status, secs, run.label)
    return status, out, secs


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("programs", nargs="*", help="chapter/program names (default: all)")
    ap.add_argument("--chapter", help="one chapter, or several separated by commas")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--max-jobs", type=int, default=2,
                    help="max runs at a time (default 2: none of them needs half of an 80 GB GPU; "
                         "a run out of memory is run again alone)")
    ap.add_argument("--timeout", type=int, default=180, help="seconds per run (memcheck runs get 3x)")
    ap.add_argument("--no-memcheck", action="store_true")
    ap.add_argument("--memcheck-only", action="store_true", help="only memcheck at the small sizes")
    ap.add_argument("--log-dir", default="gpu_check_out", help="sweep.log, memcheck.log and progress.log go here")
    a = ap.parse_args()

    probe = Path(__file__).resolve().parent / "gpu_probe"
    if probe.exists():
        r = subprocess.run([str(probe)], capture_output=True, text=True)
        if r.returncode != 0:
            print(f"sweep: no GPU here ({(r.stdout + r.stderr).strip()}); nothing run")
            return 77
    chapters = a.chapter.split(",") if a.chapter else None
    runs = [r for r in load_sweep() if (not chapters or r.program.chapter in chapters)
            and (not a.programs or r.program.name in a.programs)]
    missing = sorted({r.program.name for r in runs if not r.program.path.exists()})
    runs = [r for r in runs if r.program.path.exists()]
    parallel = [r for r in runs if r.kind != "max"] if not a.memcheck_only else []
    serial = [r for r in runs if r.kind == "max"] if not a.memcheck_only else []
    log_dir = Path(a.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    _progress["file"] = open(log_dir / "progress.log", "w")

    t0 = time.monotonic()
    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        results = list(ex.map(lambda r: sweep_one(r, a.timeout), parallel))
    def max_run(r):
        res = sweep_one(r, a.timeout)
        print(f"  max  {res[0]:<8.8} {res[2]:6.1f} s  {r.label}", flush=True)
        return res
    with ThreadPoolExecutor(max_workers=a.max_jobs) as ex:
        max_results = list(ex.map(max_run, serial))
    for k, r in enumerate(serial):  # out of memory next to another max run: confirm it alone
        if max_results[k][0] == "oom" and a.max_jobs > 1:
            max_results[k] = max_run(r)
    results += max_results
    ordered = parallel + serial

    mem = []
    if not a.no_memcheck:
        todo = [r for r in runs if r.kind == "small" and
                not {"all", "memcheck"} & set(str(r.program.options.get("nosan", "")).split(","))]
        with ThreadPoolExecutor(max_workers=a.jobs) as ex:
            mem = list(zip(todo, ex.map(lambda r: memcheck_one(r, 3 * a.timeout), todo)))
    secs_all = time.monotonic() - t0

    with open(log_dir / "sweep.log", "w") as f:
        for r, (status, out, secs) in zip(ordered, results):
            f.write(f"===== [{r.kind}] {r.label}: {status} ({secs:.1f} s)\n{out}\n")
    with open(log_dir / "memcheck.log", "w") as f:
        for r, (status, out, secs) in mem:
            f.write(f"===== {r.label}: {status} ({secs:.1f} s)\n{out}\n")

    count = {k: 0 for k in ("passed", "oom", "skipped", "failed")}
    for r, (status, out, secs) in zip(ordered, results):
        key = status if status in count else "failed"
        count[key] += 1
        if key == "failed":
            print(f"FAILED [{r.kind}] {r.label}: {status}")
        elif key == "oom":
            print(f"oom    [{r.kind}] {r.label}: {out.strip().splitlines()[-1][:150]}")
    bad_mem = [(r, s) for r, (s, _, _) in mem if s != "clean"]
    for r, s in bad_mem:
        print(f"MEMCHECK {r.label}: {s}")
    slow = sorted(zip(ordered, results), key=lambda x: -x[1][2])[:5]
    print("slowest: " + "; ".join(f"{r.program.name} [{r.kind}] {res[2]:.0f} s" for r, res in slow))
    for name in missing:
        print(f"not built: {name}")
    print(f"sweep: {len(results)} runs, {count['passed']} passed, {count['oom']} out-of-memory (exit 1, one line), "
          f"{count['skipped']} skipped (may-skip), {count['failed']} failed; "
          + (f"memcheck: {len(mem)} runs, {len(mem) - len(bad_mem)} clean; " if not a.no_memcheck else "")
          + f"{len(missing)} programs not built; {secs_all:.0f} s")
    return 1 if count["failed"] or bad_mem or missing else 0


if __name__ == "__main__":
    sys.exit(main())
