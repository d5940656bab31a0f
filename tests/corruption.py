#!/usr/bin/env python3
"""Every check can fail: runs programs with CUDA_LAB_CORRUPT=1 (common/corrupt.h), which corrupts one
element of the GPU data each check compares. Every program must then end with a line `FAILED: ...`
after a failed check line, and exit 1; one that still passes has a check that compares nothing.

tests/test_corruption.py runs this under `make test` (one test per manifest program) and, when
CORRUPTION_LOG names a file, appends one line per program to it; tools/gpu_check.sh prints the
summary of that file. Run alone (on a GPU machine, after make):
    tests/corruption.py [--chapter=03_shared] [PROGRAM ...]     every program, then the summary
    tests/corruption.py --summary FILE                          the summary of a CORRUPTION_LOG file
"""
import argparse
import os
import re
import subprocess
import sys
from pathlib import Path

from manifest import load_manifest  # tests/manifest.py, next to this script (on sys.path when run)

# A check line of common/compare.h that failed: "  check <what>  MISMATCH" or "... 3 of 100 differ: ...".
FAILED_CHECK = re.compile(r"^  check .*(?: MISMATCH$| \d+ of \d+ differ: )", re.M)
OUTCOMES = ("FAILED", "skipped", "PASSED", "other")


def run_corrupted(program, timeout=120):
    """(outcome, detail, stdout, stderr) of one run at the program's test arguments.
    outcome: FAILED (the expected one: exit 1, last line FAILED, a check line failed), skipped (exit
    77 of a may-skip program), PASSED (a check that compares nothing), other (anything else)."""
    env = dict(os.environ, CUDA_LAB_CORRUPT="1")
    try:
        r = subprocess.run([str(program.path)] + list(program.args), capture_output=True, text=True,
                           timeout=timeout, cwd=program.path.parent, env=env)
    except subprocess.TimeoutExpired:
        return "other", f"timed out after {timeout} s", "", ""
    lines = r.stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    if r.returncode == 77 and program.options.get("may-skip"):
        return "skipped", last, r.stdout, r.stderr
    if r.returncode == 0 and last == "PASSED":
        return "PASSED", "PASSED with CUDA_LAB_CORRUPT=1: a check compares nothing", r.stdout, r.stderr
    if r.returncode != 1 or not last.startswith("FAILED"):
        return "other", f"exit {r.returncode}, last line '{last}'", r.stdout, r.stderr
    if last.startswith(("FAILED: CUDA error", "FAILED: out of memory")):
        return "other", f"failed, but not in a check: '{last}'", r.stdout, r.stderr
    if not FAILED_CHECK.search(r.stdout):
        return "other", f"'{last}' with no failed check line", r.stdout, r.stderr
    return "FAILED", last, r.stdout, r.stderr


def summary(rows):
    """The summary line of (program, outcome, detail) rows."""
    n = {o: sum(1 for _, out, _ in rows if out == o) for o in OUTCOMES}
    return (f"corruption: {len(rows)} programs, {n['FAILED']} FAILED (exit 1), {n['skipped']} skipped (exit 77), "
            f"{n['PASSED']} still PASSED, {n['other']} other")


def print_report(rows):
    """One line per program that did not fail as it must, then the summary. True if none."""
    for name, outcome, detail in rows:
        if outcome != "FAILED":
            print(f"  {name}: {outcome}: {detail}")
    print(summary(rows))
    return all(o in ("FAILED", "skipped") for _, o, _ in rows)


def read_log(path):
    rows = []
    for line in Path(path).read_text().splitlines():
        name, outcome, detail = (line.split("\t") + ["", ""])[:3]
        rows.append((name, outcome, detail))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("programs", nargs="*", help="chapter/program names (default: all)")
    ap.add_argument("--chapter")
    ap.add_argument("--summary", metavar="FILE", help="print the summary of a CORRUPTION_LOG file and exit")
    a = ap.parse_args()
    if a.summary:
        if not Path(a.summary).exists() or not Path(a.summary).read_text().strip():
            print("corruption: not run (no GPU, or make test did not reach tests/test_corruption.py)")
            return 1
        return 0 if print_report(read_log(a.summary)) else 1
    rows = []
    for p in load_manifest():
        if (a.chapter and p.chapter != a.chapter) or (a.programs and p.name not in a.programs):
            continue
        if not p.path.exists():
            rows.append((p.name, "other", "not built"))
            continue
        outcome, detail, _, _ = run_corrupted(p, int(p.options.get("timeout", 120)))
        print(f"{p.name}: {outcome}: {detail}", flush=True)
        rows.append((p.name, outcome, detail))
    return 0 if print_report(rows) else 1


if __name__ == "__main__":
    sys.exit(main())
