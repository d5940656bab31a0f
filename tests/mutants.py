#!/usr/bin/env python3
"""Every check catches the bug its lesson is about: the mutants of tests/mutants/*.txt.

A mutant is a small change to a program's source that puts back the bug its section teaches (the
`__syncthreads()` deleted, the wait between a copy and the kernel dropped, the launch in the wrong
stream, the bounds test removed). Built and run at the program's test size on a GPU, every mutant
must end FAILED (exit 1): a check that passes with the bug in place does not check the lesson.
corrupt.h proves that a check can fail; a mutant proves that it fails for the right reason.

Each chapter's file (tests/mutants/NN_name.txt) names every program of the chapter in tests/manifest.txt
once or more, as a block:

    [03_shared/transpose] no-barrier
    lesson: without the barrier a warp reads tile elements that another warp has not written yet
    find: __syncthreads();
    replace:
    occurrence: 1

- find / replace: the text to change (exact, one line; \\n and \\t escapes for more); replace empty
  deletes it. Several find / replace pairs apply in order. The find text must occur exactly once in
  the file unless `occurrence: K` picks the K-th (1-based) or `occurrence: all` changes every one.
- file: the source to change (default: the program's .cu), relative to the chapter folder.
- args: the arguments to run it with (default: the manifest's test arguments).
- runs: how many times to run it at most (default 1); caught when one run ends FAILED (a race).
- stress: yes: built with the shared CUDA runtime and run under the ordering stress
  (tests/stress.py: a random delay in front of every asynchronous operation) - for ordering bugs,
  which a quiet GPU hides.
- expect: FAILED (the default: on a GPU) or sass: a claim of tests/sass_claims/ for this program no
  longer holds on the mutated source (no GPU: tests/test_sass_claims.py checks these in make test),
  or racecheck / synccheck: run under compute-sanitizer with that tool, caught when the tool reports
  an error (or the program fails). Only for a bug that the program's own check cannot see every time
  (a barrier removed between threads of one warp, whose results come out right by the schedule's
  luck), with `why:` saying so: the chapter's lab teaches that tool for that bug.
- fails: a regular expression the run's last line (the FAILED line) must match for the mutant to be
  caught (a FAILED from another check, or a CUDA error, is then "other"); with expect: sass, one
  of the claims the mutant breaks must match it (its text or instruction). For a mutant that could
  end FAILED for a reason that is not its lesson.
- lesson: what the mutant breaks, in a sentence.

A program whose lesson is only a timing (or a printout with nothing to get wrong) has one block
[chapter/program] timing-only, with `why:` the reason; it has no mutants.

    tests/mutants.py                        build and run every mutant (GPU), print each and a summary
    tests/mutants.py --chapter=05_streams   one chapter; --jobs=N builds in parallel
    tests/mutants.py --list                 the mutants and the timing-only programs, no GPU
    tests/mutants.py --apply NAME DIR       write the mutated chapter folder to DIR (to read or build it)
The mutated copies are built in .mutants/ (ignored by git); the summary line:
    mutants: P programs with mutants, M mutants, C caught, U not caught, S skipped (this GPU cannot
    run them: exit 77, e.g. two GPUs needed), B not built; T timing-only programs
"""
import argparse
import copy
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from manifest import load_manifest  # noqa: E402
import stress  # noqa: E402  (the preloaded library of `stress: yes` mutants)

MUTANTS_DIR = ROOT / "tests" / "mutants"
WORK = ROOT / ".mutants"
KEYS = {"lesson", "find", "replace", "occurrence", "file", "args", "runs", "stress", "expect", "why", "fails"}


@dataclass
class Mutant:
    program: str  # chapter/program
    name: str
    where: str
    lesson: str = ""
    edits: list = field(default_factory=list)  # [(find, replace, occurrence)]
    file: str = ""
    args: list = None
    runs: int = 1
    stress: bool = False
    expect: str = "FAILED"
    why: str = ""  # timing-only
    fails: str = ""  # regex: the FAILED line (or, expect: sass, a broken claim's text) that counts

    @property
    def chapter(self):
        return self.program.split("/")[0]

    @property
    def binary(self):
        return self.program.split("/")[1]

    @property
    def timing_only(self):
        return self.name == "timing-only"

    @property
    def id(self):
        return f"{self.program}:{self.name}"

    @property
    def source(self):
        return self.file or f"{self.binary}.cu"


def unescape(s):
    return s.replace("\\n", "\n").replace("\\t", "\t")


def load_mutants(chapter=None, path=MUTANTS_DIR):
    out = []
    for f in sorted(path.glob("*.txt")):
        if chapter and f.stem not in chapter.split(","):
            continue
        cur, pending = None, None
        for lineno, raw in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            where = f"{f.relative_to(ROOT)}:{lineno}"
            if raw.startswith("#") or not raw.strip():
                continue
            m = re.fullmatch(r"\[(\S+)\]\s+(\S+)\s*", raw)
            if m:
                if pending is not None:
                    raise ValueError(f"{where}: a find: without its replace:")
                cur = Mutant(m.group(1), m.group(2), where)
                out.append(cur)
                continue
            key, sep, value = raw.partition(":")
            key = key.strip()
            if not sep or key not in KEYS or cur is None:
                raise ValueError(f"{where}: expected '[chapter/program] name' or 'key: value' ({', '.join(sorted(KEYS))})")
            value = value[1:] if value.startswith(" ") else value
            if key == "find":
                if pending is not None:
                    raise ValueError(f"{where}: two find: lines without a replace:")
                pending = [unescape(value), None, None]
            elif key == "replace":
                if pending is None:
                    raise ValueError(f"{where}: replace: without a find:")
                pending[1] = unescape(value)
                cur.edits.append(pending)
                pending = None
            elif key == "occurrence":
                if not cur.edits:
                    raise ValueError(f"{where}: occurrence: belongs after a find:/replace: pair")
                cur.edits[-1][2] = value.strip()
            elif key == "args":
                cur.args = shlex.split(value)
            elif key == "runs":
                cur.runs = int(value)
            elif key == "stress":
                cur.stress = value.strip() == "yes"
            elif key == "expect":
                if value.strip() not in ("FAILED", "sass", "racecheck", "synccheck"):
                    raise ValueError(f"{where}: expect: FAILED, sass, racecheck or synccheck")
                cur.expect = value.strip()
            else:
                setattr(cur, key, value.strip())
        if pending is not None:
            raise ValueError(f"{f}: a find: without its replace: at the end")
    for m in out:
        if m.timing_only and (m.edits or not m.why):
            raise ValueError(f"{m.where}: a timing-only block has a why: and no edits")
        if not m.timing_only and (not m.edits or not m.lesson):
            raise ValueError(f"{m.where}: a mutant needs find:/replace: and lesson:")
        if m.expect in ("racecheck", "synccheck") and not m.why:
            raise ValueError(f"{m.where}: expect: {m.expect} needs why: (why the program's own check cannot see it)")
    return out


def mutate_text(text, edits, label=""):
    """Applies the edits; raises ValueError when a find text is missing or ambiguous."""
    for find, replace, occ in edits:
        n = text.count(find)
        if n == 0:
            raise ValueError(f"{label}: '{find}' not found")
        if occ == "all":
            text = text.replace(find, replace)
        elif occ:
            k = int(occ)
            if k < 1 or k > n:
                raise ValueError(f"{label}: occurrence {k} of '{find}', which occurs {n} times")
            i = -1
            for _ in range(k):
                i = text.index(find, i + 1)
            text = text[:i] + replace + text[i + len(find):]
        else:
            if n != 1:
                raise ValueError(f"{label}: '{find}' occurs {n} times (say occurrence: K or all)")
            text = text.replace(find, replace)
    return text


def prepare_root(work=WORK):
    """work/ with links to the tree's common/ and top-level makefiles, so that a chapter copy in
    work/NAME/ finds ../common.mk as it would in the tree."""
    work.mkdir(exist_ok=True)
    for name in ("common", "common.mk", "jobs.mk", "opencv.mk", "tests"):
        link = work / name
        if not link.exists() and not link.is_symlink():
            link.symlink_to(ROOT / name)
    return work


def apply(m, dest):
    """Writes the chapter folder of mutant m, mutated, to dest (sources only; subfolders linked)."""
    src_dir = ROOT / m.chapter
    if dest.exists():
        shutil.rmtree(dest)
    dest.mkdir(parents=True)
    for p in src_dir.iterdir():
        if p.is_dir():
            if p.name not in ("workspace",):
                (dest / p.name).symlink_to(p)
        elif p.suffix or p.name == "Makefile":
            shutil.copy2(p, dest / p.name)
    target = dest / m.source
    target.write_text(mutate_text(target.read_text(encoding="utf-8"), m.edits, m.id), encoding="utf-8")
    return dest


def build(m, work=WORK, extra=()):
    d = apply(m, work / f"{m.chapter}__{m.binary}__{m.name}")
    cmd = ["make", "--no-print-directory", "-C", str(d), m.binary, "WERROR="] + list(extra)
    if m.stress:
        cmd.append("CUDART=shared")
    r = subprocess.run(cmd, capture_output=True, text=True, env=dict(os.environ, MAKEFLAGS="", MAKELEVEL=""))
    return d, r.returncode, r.stdout + r.stderr


def run_one(m, d, args, timeout):
    env = dict(os.environ)
    tool = []
    if m.expect in ("racecheck", "synccheck"):
        tool = ["compute-sanitizer", "--tool", m.expect, "--error-exitcode", "99", "--print-limit", "5"]
        timeout *= 4
    if m.stress:
        env = stress.stress_env(env)
    try:
        r = subprocess.run(tool + [str(d / m.binary)] + args, capture_output=True, text=True, cwd=d, env=env,
                           timeout=timeout, errors="replace")
    except subprocess.TimeoutExpired:
        return None, f"timed out after {timeout} s", ""
    lines = r.stdout.strip().splitlines()
    if tool:  # --error-exitcode 99: the tool found errors (RACECHECK / ERROR SUMMARY: N errors)
        found = re.search(r"(\d+) errors?", "\n".join(l for l in (r.stdout + r.stderr).splitlines() if "SUMMARY" in l))
        if r.returncode == 99:
            return 1, f"FAILED: compute-sanitizer {m.expect}: {found.group(1) if found else 'some'} errors", r.stdout + r.stderr
    return r.returncode, lines[-1] if lines else "", r.stdout + r.stderr


def outcome(rc, last, fails=""):
    if rc == 1 and last.startswith("FAILED") and fails and not re.search(fails, last):
        return f"other (FAILED, but not as `fails:` says: {last[:80]})"
    if rc == 1 and last.startswith("FAILED: compute-sanitizer"):
        return "caught (" + last[len("FAILED: "):] + ")"
    if rc == 1 and last.startswith("FAILED: CUDA error"):
        return "caught (CUDA error)"
    if rc == 1 and last.startswith("FAILED"):
        return "caught"
    if rc == 0 and last == "PASSED":
        return "NOT CAUGHT"
    if rc == 77 and last.startswith("SKIPPED"):
        return f"skipped ({last[9:80]})"
    return f"other (exit {rc}: {last[:80]})"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chapter")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    ap.add_argument("--timeout", type=int, default=120)
    ap.add_argument("--list", action="store_true")
    ap.add_argument("--dry", action="store_true", help="apply every mutant's edits (no build, no GPU)")
    ap.add_argument("--apply", nargs=2, metavar=("NAME", "DIR"))
    ap.add_argument("--log", help="append every run's output to this file")
    ap.add_argument("--also-plain", action="store_true",
                    help="run each stress: yes mutant once more without the stress, to show what the stress adds")
    ap.add_argument("names", nargs="*", help="only these mutants (program:name or program)")
    a = ap.parse_args()
    mutants = load_mutants(a.chapter)
    programs = {p.name: p for p in load_manifest()}
    if a.names:
        mutants = [m for m in mutants if m.id in a.names or m.program in a.names]
    if a.apply:
        m = next(m for m in mutants if m.id == a.apply[0])
        prepare_root(Path(a.apply[1]).resolve().parent)
        print(apply(m, Path(a.apply[1]).resolve()))
        return 0
    live = [m for m in mutants if not m.timing_only]
    timing = [m for m in mutants if m.timing_only]
    if a.list:
        for m in mutants:
            print(f"{m.id:55} {'timing-only: ' + m.why if m.timing_only else m.lesson}")
        return 0
    if a.dry:
        bad = 0
        for m in live:
            try:
                mutate_text((ROOT / m.chapter / m.source).read_text(encoding="utf-8"), m.edits, m.id)
            except (ValueError, OSError) as e:
                bad += 1
                print(f"  {m.id}: {e}")
        print(f"mutants: {len(live)} mutants apply, {bad} do not; {len(timing)} timing-only programs")
        return 1 if bad else 0
    gpu = [m for m in live if m.expect != "sass"]
    prepare_root()
    log = open(a.log, "a") if a.log else None
    t0 = time.monotonic()
    with ThreadPoolExecutor(max(1, a.jobs)) as pool:
        builds = dict(zip([m.id for m in gpu], pool.map(build, gpu)))
    print(f"built {len(gpu)} mutants in {time.monotonic() - t0:.0f} s")
    results = []
    for m in gpu:
        d, rc, text = builds[m.id]
        if rc != 0:
            results.append((m, "not built", 0))
            print(f"  {m.id:55} not built: {text.strip().splitlines()[-1] if text.strip() else rc}")
            if log:
                log.write(f"===== {m.id} (build)\n{text}\n")
            continue
        args = m.args if m.args is not None else programs[m.program].args
        res, tries = None, 0
        for tries in range(1, m.runs + 1):
            rc, last, out = run_one(m, d, args, a.timeout)
            res = outcome(rc, last, m.fails)
            if log:
                log.write(f"===== {m.id} run {tries}: {res}\n{out}\n")
            if res.startswith(("caught", "skipped")):
                break
        results.append((m, res, tries))
        plain = ""
        if m.stress and a.also_plain:
            q = copy.copy(m)
            q.stress = False
            rc, last, out = run_one(q, d, args, a.timeout)
            plain = f"; without the stress: {outcome(rc, last, m.fails)}"
            if log:
                log.write(f"===== {m.id} without the stress: {outcome(rc, last, m.fails)}\n{out}\n")
        print(f"  {m.id:55} {res}{f' (run {tries} of {m.runs})' if m.runs > 1 else ''}{' [stress]' if m.stress else ''}{plain}")
    caught = sum(r.startswith("caught") for _, r, _ in results)
    by_tool = sum(r.startswith("caught (compute-sanitizer") for _, r, _ in results)
    unbuilt = sum(r == "not built" for _, r, _ in results)
    skipped = sum(r.startswith("skipped") for _, r, _ in results)
    print(f"mutants: {len({m.program for m in gpu})} programs with mutants, {len(gpu)} mutants, {caught} caught "
          f"({caught - by_tool} by the program's check, {by_tool} by compute-sanitizer), "
          f"{len(gpu) - caught - unbuilt - skipped} not caught, {skipped} skipped (this GPU cannot run them), "
          f"{unbuilt} not built; {len(timing)} timing-only programs; {time.monotonic() - t0:.0f} s")
    return 0 if caught + skipped == len(gpu) else 1


if __name__ == "__main__":
    sys.exit(main())
