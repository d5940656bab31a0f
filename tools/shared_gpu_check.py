#!/usr/bin/env python3
"""Do the "make it faster" grades hold on a GPU that several students share? (one GPU call)

    tools/shared_gpu_check.py [--at-once=4] [--copies=2] [--log-dir=DIR] [--only=NAME[,NAME]]

Builds every faster exercise and its solution (exercises/ and exercises/solutions/, into a
temporary folder: nothing is written into the tree), then runs tools/exercises.py check on them:
first each program alone, one at a time; then --copies copies of each solution and of each
published exercise, --at-once checks at the same time on the one GPU (a pool: as one check ends the
next starts, the jobs ordered so that each exercise runs beside the others). Prints, per check,
`solved` or `not yet` with the measured figure, and one summary line; exit 0 when every solution
is solved and every published exercise is not yet, alone and shared. --log-dir keeps every check's
output. On an H100 it takes about two minutes.
"""
import argparse
import re
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import exercises as ex  # noqa: E402

EXPECT = {"solutions": "solved", "exercises": "not yet"}


def build(job):
    chapter, entry, kind, out = job
    src = ROOT / chapter / "exercises" / ("solutions" if kind == "solutions" else "")
    r = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT / chapter), f"EX_SRC={src}",
                        f"EX_BIN={out}", str(out / entry.program)], capture_output=True, text=True)
    return r.returncode, r.stdout + r.stderr


def check(job):
    """Runs one check; returns (status, figure or reason, seconds, start, end, output)."""
    chapter, entry, kind, out = job
    src = ROOT / chapter / "exercises" / ("solutions" if kind == "solutions" else "")
    t0 = time.time()
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "exercises.py"), "check", chapter, f"--src={src}",
                        f"--bin={out}", f"--only={entry.name}", "--no-hints"], capture_output=True, text=True)
    t1 = time.time()
    line = next((l for l in r.stdout.splitlines() if l.split(" ", 1)[0] == entry.name), "")
    rest = line[len(entry.name):].strip()
    status = "solved" if rest.startswith("solved") else "skipped" if rest.startswith("skipped") else "not yet"
    m = re.search(r"measured ([0-9.eE+-]+)", rest)
    reason = rest.split(":", 1)[-1].replace("the program's own check:", "").strip()
    what = m.group(1) if m else f"({reason[:40] or 'no verdict line'})"
    return status, what, t1 - t0, t0, t1, r.stdout + r.stderr


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--at-once", type=int, default=4)
    ap.add_argument("--copies", type=int, default=2)
    ap.add_argument("--log-dir")
    ap.add_argument("--only")
    a = ap.parse_args()
    chapters = sorted(p.name for p in ROOT.glob("0[0-9]_*") if (p / "exercises" / "exercises.txt").exists())
    faster = [(c, e) for c in chapters for e in ex.load(ROOT / c) if e.kind == "faster"]
    if a.only:
        faster = [(c, e) for c, e in faster if e.name in a.only.split(",")]
    tmp = Path(tempfile.mkdtemp(prefix="shared_gpu_check_"))
    t_start = time.time()
    programs = [(c, e, kind, tmp / c / kind) for c, e in faster for kind in ("solutions", "exercises")]
    with ThreadPoolExecutor(max_workers=8) as pool:
        built = list(pool.map(build, programs))
    failed = [(p, log) for p, (rc, log) in zip(programs, built) if rc != 0]
    for (c, e, kind, _), log in failed:
        print(f"BUILD FAILED: {c}/{kind}/{e.source}\n{log[-2000:]}")
    if failed:
        return 1
    print(f"built {len(programs)} programs ({time.time() - t_start:.0f} s); "
          f"{len(faster)} faster exercises, each checked alone, then {a.copies} solution and {a.copies} exercise "
          f"copies of each, {a.at_once} checks at once on one GPU")
    logs = {}

    alone = {}
    for p in programs:
        alone[p[:3]] = check(p)
        logs[(p[0], p[1].name, p[2], "alone")] = alone[p[:3]][5]
    # Round-robin order: copy k of every exercise (solution, then published) before copy k + 1, so
    # that the checks running together are of different exercises and kinds.
    jobs = [(c, e, kind, tmp / c / kind, k) for k in range(a.copies) for c, e in faster
            for kind in ("solutions", "exercises")]
    t_shared = time.time()
    with ThreadPoolExecutor(max_workers=a.at_once) as pool:
        shared = list(pool.map(lambda j: check(j[:4]), jobs))
    t_shared = time.time() - t_shared
    for j, s in zip(jobs, shared):
        logs[(j[0], j[1].name, j[2], f"shared{j[4] + 1}")] = s[5]

    width = max(len(f"{c}/{e.name}") for c, e in faster)
    head = "  ".join(f"shared #{k + 1:<12}" for k in range(a.copies))
    print(f"{'exercise':<{width}}  {'copy':<9} {'alone':<20} {head}  (checks overlapping each shared one)")
    ok = {"solutions": [0, 0], "exercises": [0, 0]}
    all_good = True
    for c, e in faster:
        for kind in ("solutions", "exercises"):
            al = alone[(c, e, kind)]
            good = al[0] == EXPECT[kind]
            cells, beside = [], []
            for j, s in zip(jobs, shared):
                if j[:3] != (c, e, kind):
                    continue
                cells.append(f"{s[0]} {s[1]}")
                # how many other checks overlapped this one (its time shared with them)
                beside.append(str(sum(1 for o in shared if o is not s and o[3] < s[4] and o[4] > s[3])))
                ok[kind][1] += 1
                if s[0] == EXPECT[kind]:
                    ok[kind][0] += 1
                else:
                    good = False
            all_good &= good
            print(f"{c + '/' + e.name:<{width}}  {kind[:-1]:<9} {al[0] + ' ' + al[1]:<20} "
                  + "  ".join(f"{x:<21}" for x in cells) + f"  ({', '.join(beside)})" + ("" if good else "  <-- unexpected"))
    if a.log_dir:
        d = Path(a.log_dir)
        d.mkdir(parents=True, exist_ok=True)
        for (c, name, kind, run), text in logs.items():
            (d / f"{c}_{name}_{kind}_{run}.txt").write_text(text)
    print(f"target: {', '.join(f'{e.name} {e.target}' for _, e in faster)}")
    print(f"shared GPU: {ok['solutions'][0]} solutions solved of {ok['solutions'][1]}, "
          f"{ok['exercises'][0]} exercises not yet of {ok['exercises'][1]} "
          f"({len(jobs)} checks, {a.at_once} at once, {t_shared:.0f} s; alone: "
          f"{sum(alone[p[:3]][0] == EXPECT[p[2]] for p in programs)} of {len(programs)} as expected; "
          f"total {time.time() - t_start:.0f} s)")
    return 0 if all_good else 1


if __name__ == "__main__":
    sys.exit(main())
