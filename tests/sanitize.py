#!/usr/bin/env python3
"""Runs compute-sanitizer (memcheck with leak checking, racecheck, initcheck, synccheck) over every
program in tests/manifest.txt at its test arguments, several at a time, and prints a table.

A program is left out of a tool only through the manifest (`nosan=TOOLS; why=REASON`), and the
table prints the reason. Exit 0 if no run found an error, 1 otherwise.
    tests/sanitize.py [--chapter=03_shared] [--jobs=4] [--log=FILE] [PROGRAM ...]
"""
import argparse
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from manifest import load_manifest  # tests/manifest.py, next to this script (on sys.path when run)

TOOLS = ["memcheck", "racecheck", "initcheck", "synccheck"]
EXTRA = {"memcheck": ["--leak-check", "full"], "racecheck": ["--racecheck-report", "all"]}


def run_one(prog, tool, timeout):
    api = ["--report-api-errors", "no"] if prog.options.get("api-errors") else []
    extra = EXTRA.get(tool, [])
    if tool == "memcheck" and "leaks" in str(prog.options.get("nosan", "")).split(","):
        extra = ["--leak-check", "no"]  # memcheck still runs; only its leak report is left out
    cmd = ["compute-sanitizer", "--tool", tool, *extra, *api, "--error-exitcode", "99",
           "--print-limit", "20", str(prog.path), *prog.args]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, cwd=prog.path.parent)
    except subprocess.TimeoutExpired:
        return "timeout", f"timed out after {timeout}s"
    out = r.stdout + r.stderr
    # racecheck ends with "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)",
    # the other tools with "ERROR SUMMARY: N errors"; a hazard of either severity counts.
    m = re.search(r"ERROR SUMMARY: (\d+) error", out) or re.search(r"RACECHECK SUMMARY: (\d+) hazard", out)
    errors = int(m.group(1)) if m else None
    if r.returncode == 77:
        return "skip", out
    if errors:
        return f"{errors} err", out
    if r.returncode == 99:
        return "errors", out
    if r.returncode != 0 or errors is None:
        return f"rc={r.returncode}", out
    return "0", out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("programs", nargs="*", help="chapter/program names (default: all)")
    ap.add_argument("--chapter")
    ap.add_argument("--jobs", type=int, default=4)
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--log", help="write the output of every run that was not clean here")
    a = ap.parse_args()

    progs = [p for p in load_manifest() if (not a.chapter or p.chapter == a.chapter)
             and (not a.programs or p.name in a.programs)]
    jobs, excluded, missing = [], {}, []
    for p in progs:
        if not p.path.exists():
            missing.append(p.name)
            continue
        nosan = str(p.options.get("nosan", ""))
        skip_tools = TOOLS if nosan == "all" else [t for t in nosan.split(",") if t]
        if "leaks" in skip_tools:
            excluded[(p.name, "leaks")] = p.options.get("why", "no reason given")
        for t in TOOLS:
            if t in skip_tools:
                excluded[(p.name, t)] = p.options.get("why", "no reason given")
            else:
                jobs.append((p, t))

    with ThreadPoolExecutor(max_workers=a.jobs) as ex:
        results = dict(zip([(p.name, t) for p, t in jobs],
                           ex.map(lambda j: run_one(j[0], j[1], a.timeout), jobs)))

    width = max([len(p.name) for p in progs] + [10])
    print(f"{'program':<{width}}  " + "  ".join(f"{t:>9}" for t in TOOLS))
    bad, reasons = [], []
    for p in progs:
        if p.name in missing:
            print(f"{p.name:<{width}}  not built")
            continue
        cells = []
        for t in TOOLS:
            if (p.name, t) in excluded:
                cells.append(f"{'excluded':>9}")
                if excluded[(p.name, t)] not in [r for _, r in reasons if _ == p.name]:
                    reasons.append((p.name, excluded[(p.name, t)]))
                continue
            status, out = results[(p.name, t)]
            cells.append(f"{status:>9}")
            if status not in ("0", "skip"):
                bad.append((p.name, t, status, out))
        print(f"{p.name:<{width}}  " + "  ".join(cells))
    for (name, t), why in excluded.items():
        if t == "leaks":
            reasons.append((name, "memcheck without its leak check: " + why))
    for name, why in reasons:
        print(f"  excluded {name}: {why}")
    if a.log:
        with open(a.log, "w") as f:
            for name, t, status, out in bad:
                f.write(f"===== {name} [{t}] {status}\n{out}\n")
    runs = len(jobs)
    print(f"sanitizer: {runs} runs, {runs - len(bad)} clean, {len(bad)} with errors or failures, "
          f"{len(excluded)} excluded by the manifest, {len(missing)} programs not built")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
