#!/usr/bin/env python3
"""The peak device memory of every program at its default size (GPU): does each fit a small card?

Builds the tree with the shared CUDA runtime (make CUDART=shared, in .stress/tree, as tests/stress.py
does) and the preloaded library tools/peak_memory/peak_alloc.cpp, then runs every program of
tests/manifest.txt with NO arguments (its defaults: what a learner runs first), --jobs at once,
each with the library preloaded. The library counts the live bytes of the runtime's allocation
calls (cudaMalloc*, arrays, cudaMallocAsync; managed memory apart) and keeps their maximum; a program
that forks (a child process that uses CUDA) counts the sum of its processes' peaks. It also samples
NVML: the memory NVML charges to the process (context and libraries included), where NVML sees the
process's pid. CUDA_LAB_STRESS=1 is set, as under the ordering stress: with --jobs programs sharing
the GPU, a program prints its timing claims but does not assert them (common/device.cuh
cuda_tool_attached(); 05_streams/dynamic_parallelism then leaves out its child processes, which
allocate a few bytes).

A program that failed or timed out among the others is run again alone (its row says so). Before
all that, one program at a time (nothing else on the GPU), --context-programs at their test
arguments: the GPU's used memory (NVML) at its highest, minus its use when the library loaded (before
the program's context), minus the program's allocations, is what the context and the libraries
(cuBLAS) take on this GPU; printed under the table.

A program fits a card of C GiB when its peak (device + managed) is at most C GiB minus --reserve-mib
(default 1024 MiB: the context, the display a laptop's desktop keeps on the same GPU, and what
Windows reserves under WSL2; the context's part is the measured line under the table).

    tools/peak_memory.py [--jobs=16] [--timeout=200] [--out=results/peak_memory] [--tree=DIR]
                         [--reserve-mib=1024] [--budget=S] [PROGRAM ...]
Writes OUT/peak_memory.csv and OUT/peak_memory.txt; last line:
    peak memory: P programs: N measured (F fit 4 GB), S skipped, T timed out (partial), X failed, B not built,
                 R not run
Without a GPU every program is reported as skipped (its own exit 77) and the table has no figures.
Exit status: 0 when every measured program fits the 4 GB budget, 1 otherwise.
"""
import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from manifest import load_manifest  # noqa: E402

LIB = ROOT / ".stress" / "libpeak_alloc.so"
MIB = 1 << 20
CARDS_GIB = (4, 6)  # the smallest cards of the device profiles: GTX 1650 (4 GB), RTX 3060 laptop (6 GB)
# Their resident threads (SMs x max threads per SM, common/profiles.h: gtx1650 14 x 1024,
# rtx3060-laptop-wsl 30 x 1536): a stack limit a program raises (cudaDeviceSetLimit) is reserved
# for each of them, so the stack counts at that card's size in its fits column.
CARD_THREADS = {4: 14 * 1024, 6: 30 * 1536}
COLUMNS = ["program", "status", "processes", "device_mib", "managed_mib", "peak_mib", "reserved_mib",
           "nvml_process_mib", "fits_4gb", "fits_6gb", "note"]


def build_lib():
    r = subprocess.run(["make", "--no-print-directory", str(LIB.relative_to(ROOT))], cwd=ROOT, capture_output=True,
                       text=True, env=dict(os.environ, MAKEFLAGS="", MAKELEVEL=""))
    if r.returncode != 0:
        raise RuntimeError(f"building {LIB.name} failed:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")
    return LIB


def read_reports(folder):
    """The library's files in `folder` (one per process), as dicts of ints."""
    out = []
    for f in sorted(Path(folder).glob("peak.*")):
        if f.name.endswith(".tmp"):
            continue
        d = {}
        for line in f.read_text().splitlines():
            k, _, v = line.partition("=")
            try:
                d[k] = int(v)
            except ValueError:
                pass
        if "combined_peak" in d:
            out.append(d)
    return out


def status_of(rc, stdout):
    lines = stdout.strip().splitlines()
    last = lines[-1] if lines else ""
    if rc is None:
        return "timeout", ""
    if rc == 0 and last == "PASSED":
        return "passed", ""
    if rc == 77:
        return "skipped", last[:160]
    return "failed", f"exit {rc}: {last[:160]}"


def run_one(path, args, env, timeout):
    try:
        r = subprocess.run([str(path)] + list(args), cwd=path.parent, env=env, capture_output=True, text=True,
                           timeout=timeout, errors="replace")
        return r.returncode, r.stdout
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out


def fits(peak_bytes, card_gib, reserve_mib):
    return "yes" if peak_bytes <= card_gib * 1024 * MIB - reserve_mib * MIB else "NO"


def measure(prog, tree, lib, timeout, reserve_mib, work, deadline=None):
    """One program at its defaults under the library: a row of the table. Past `deadline` (a
    time.monotonic() value) it is not started, and a run never outlasts it."""
    if deadline is not None:
        timeout = min(timeout, int(deadline - time.monotonic()))
        if timeout < 5:
            return {"program": prog.name, "status": "not run", "note": "the time budget (--budget) ran out"}
    folder = Path(tempfile.mkdtemp(prefix=prog.name.replace("/", "_") + ".", dir=work))
    env = dict(os.environ, LD_PRELOAD=str(lib) + (":" + os.environ["LD_PRELOAD"] if os.environ.get("LD_PRELOAD")
                                                  else ""), CUDA_LAB_PEAK_DIR=str(folder),
               CUDA_LAB_STRESS="1")
    t0 = time.monotonic()
    rc, stdout = run_one(tree / prog.name, [], env, timeout)
    status, note = status_of(rc, stdout)
    # the processes that used the GPU: every process the library was loaded into leaves a report
    # (a shell, a child that only prints), and one that allocated nothing and that NVML never saw
    # holding GPU memory says nothing about the program's memory
    reps = [r for r in read_reports(folder)
            if r.get("allocs", 0) > 0 or r.get("nvml_process_peak", -1) > 0 or r.get("stack_limit", 0) > 0
            or r.get("heap_limit", 0) > 0]
    row = {"program": prog.name, "status": status, "processes": len(reps), "note": note}
    if status == "timeout":
        row["note"] = f"stopped after {timeout} s: the peak until then"
    if reps and status != "skipped":
        dev = sum(r["device_peak"] for r in reps)
        man = sum(r["managed_peak"] for r in reps)
        peak = sum(r["combined_peak"] for r in reps)
        nv = [r.get("nvml_process_peak", -1) for r in reps]
        # a raised stack limit is reserved for every resident thread, the device malloc heap whole
        stack = sum(r.get("stack_limit", 0) for r in reps)
        heap = sum(r.get("heap_limit", 0) for r in reps)
        here = sum(r.get("stack_limit", 0) * r.get("resident_threads", 0) + r.get("heap_limit", 0) for r in reps)
        row.update(device_mib=f"{dev / MIB:.1f}", managed_mib=f"{man / MIB:.1f}", peak_mib=f"{peak / MIB:.1f}",
                   reserved_mib=f"{here / MIB:.1f}",
                   nvml_process_mib=f"{sum(nv) / MIB:.1f}" if all(v >= 0 for v in nv) else "",
                   **{f"fits_{c}gb": fits(peak + stack * CARD_THREADS[c] + heap, c, reserve_mib) for c in CARDS_GIB})
    row["seconds"] = time.monotonic() - t0
    return row


def context_lines(progs, tree, lib, timeout, work):
    """Each program alone, at its test arguments: the GPU's used memory (NVML, its highest sample)
    minus the used memory when the library loaded (before the program's context), minus what the
    program allocated = what its context and libraries take."""
    lines = []
    for prog in progs:
        if not (tree / prog.name).exists():
            continue
        folder = Path(tempfile.mkdtemp(prefix="ctx.", dir=work))
        env = dict(os.environ, LD_PRELOAD=str(lib), CUDA_LAB_PEAK_DIR=str(folder))
        rc, stdout = run_one(tree / prog.name, prog.args, env, min(timeout, 60))
        reps = read_reports(folder)
        status, _ = status_of(rc, stdout)
        if status != "passed" or len(reps) != 1 or min(reps[0].get("nvml_device_used_first", -1),
                                                       reps[0].get("nvml_device_used_max", -1)) < 0:
            why = status if status != "passed" else "no NVML figure (libnvidia-ml.so.1 absent?)"
            lines.append(f"context + libraries, {prog.name}: not measured ({why})")
            continue
        r = reps[0]
        used = (r["nvml_device_used_max"] - r["nvml_device_used_first"]) / MIB
        alloc = r["combined_peak"] / MIB
        nv = r["nvml_process_peak"]
        lines.append(f"context + libraries, {prog.name} alone at {' '.join(prog.args)}: GPU used +{used:.0f} MiB "
                     f"(NVML, 10 ms samples) - {alloc:.0f} MiB allocated = {used - alloc:.0f} MiB"
                     + (f"; NVML's figure for the process: {nv / MIB:.0f} MiB" if nv >= 0 else ""))
    return lines


def write_table(rows, out, reserve_mib, extra):
    out.mkdir(parents=True, exist_ok=True)
    with open(out / "peak_memory.csv", "w", newline="") as f:
        w = csv.DictWriter(f, COLUMNS, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: r.get(k, "") for k in COLUMNS})
    widths = [max(len(c), *(len(str(r.get(c, ""))) for r in rows)) for c in COLUMNS[:-1]]
    text = ["peak device memory of each program at its defaults (MiB = 2^20 bytes; the allocations the "
            "runtime API made: tools/peak_memory/peak_alloc.cpp says what that leaves out)",
            "reserved: a raised cudaLimitStackSize x this GPU's resident threads + cudaLimitMallocHeapSize",
            f"fits C GB: peak (device + managed) + the raised stack x that card's resident threads + the heap"
            f" <= C GiB - {reserve_mib} MiB", ""]
    text.append("  ".join(c.ljust(w) for c, w in zip(COLUMNS, widths)) + "  note")
    for r in rows:
        text.append("  ".join(str(r.get(c, "")).ljust(w) for c, w in zip(COLUMNS, widths)) + "  " + r.get("note", ""))
    text += [""] + extra
    (out / "peak_memory.txt").write_text("\n".join(text) + "\n")
    return text


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("programs", nargs="*")
    ap.add_argument("--jobs", type=int, default=16)
    ap.add_argument("--timeout", type=int, default=200, help="seconds per program (its peak so far is kept)")
    ap.add_argument("--out", default=str(ROOT / "results" / "peak_memory"))
    ap.add_argument("--tree", help="a tree already built with make CUDART=shared (default: build .stress/tree)")
    ap.add_argument("--reserve-mib", type=int, default=1024)
    ap.add_argument("--budget", type=int, default=0,
                    help="seconds for the build and all the runs (0: no limit); programs not started by then "
                         "are 'not run'")
    ap.add_argument("--context-programs", default="01_intro/hello_gpu,01_intro/vector_add,03_shared/sgemm_steps")
    a = ap.parse_args()
    manifest = load_manifest()
    known = {p.name: p for p in manifest}
    unknown = [n for n in a.programs if n not in known]
    if unknown:
        print(f"peak_memory: not in tests/manifest.txt: {' '.join(unknown)}", file=sys.stderr)
        return 2
    progs = [p for p in manifest if not a.programs or p.name in a.programs]
    t_build = time.monotonic()
    try:
        lib = build_lib()
        if a.tree:
            tree = Path(a.tree).resolve()
        else:
            import stress  # tests/stress.py: the same copy of the tree, built with the shared runtime
            tree = stress.build_tree(os.cpu_count() or 4)
    except RuntimeError as e:
        print(f"peak memory: not run: {e}")
        return 1
    print(f"peak memory: the tree and the library built in {time.monotonic() - t_build:.0f} s", flush=True)
    t0 = time.monotonic()
    deadline = t_build + a.budget if a.budget > 0 else None
    with tempfile.TemporaryDirectory(prefix="peak_memory.") as work:
        # First, while the GPU is idle: the context lines (a few seconds).
        extra = context_lines([known[n] for n in a.context_programs.split(",") if n in known], tree, lib,
                              a.timeout, work)
        built = [p for p in progs if (tree / p.name).exists()]
        with ThreadPoolExecutor(a.jobs) as pool:
            res = {r["program"]: r for r in pool.map(
                lambda p: measure(p, tree, lib, a.timeout, a.reserve_mib, work, deadline), built)}
        # A run that failed or timed out while sharing the GPU (a timing claim, or slowness) is run
        # again alone, while the time budget lasts; its row then says so.
        for p in built:
            if res[p.name]["status"] in ("failed", "timeout"):
                again = measure(p, tree, lib, a.timeout, a.reserve_mib, work, deadline)
                if again["status"] != "not run":
                    again["note"] = (f"run again alone (with {a.jobs} at once: {res[p.name]['status']}); "
                                     + again["note"]).rstrip("; ")
                    res[p.name] = again
        rows = [res.get(p.name, {"program": p.name, "status": "not built", "note": "not built (OpenCV?)"})
                for p in progs]
    n = {s: sum(r["status"] == s for r in rows)
         for s in ("passed", "skipped", "timeout", "failed", "not built", "not run")}
    measured = [r for r in rows if r.get("peak_mib")]
    big = [r for r in measured if r["fits_4gb"] != "yes"]
    summary = (f"peak memory: {len(rows)} programs: {len(measured)} measured ({len(measured) - len(big)} fit 4 GB), "
               f"{n['skipped']} skipped, {n['timeout']} timed out (partial), {n['failed']} failed, "
               f"{n['not built']} not built, {n['not run']} not run; {time.monotonic() - t0:.0f} s")
    text = write_table(rows, Path(a.out), a.reserve_mib, extra + [summary])
    print("\n".join(text))
    return 1 if big else 0


if __name__ == "__main__":
    sys.exit(main())
