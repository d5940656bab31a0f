"""The exercises of every chapter (NN_name/exercises/, checked by tools/exercises.py).

Without a GPU: every exercises.txt entry is complete, the files it names exist, the README lists
each exercise with its manual section, a solution changes the exercise only inside the line range
that its second hint points to, the predict answers are judged right (solutions) and not yet (the
blank answers.txt), and every exercise and solution builds without a warning.
With a GPU: the published exercises all come out `not yet` (a check that calls a buggy program
solved is a defect) and the solutions all `solved`, each by the check the exercise names, and each
fix/faster solution run with CUDA_LAB_CORRUPT=1 ends FAILED."""
import difflib
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import ROOT, gpu_probe

sys.path.insert(0, str(ROOT / "tools"))
import exercises as ex  # noqa: E402

CHAPTERS = sorted(p.name for p in ROOT.glob("0[0-9]_*") if p.is_dir())
WITH_EXERCISES = [c for c in CHAPTERS if (ROOT / c / "exercises" / "exercises.txt").exists()]
ENTRIES = [(c, e) for c in WITH_EXERCISES for e in ex.load(ROOT / c)]
IDS = [f"{c}/{e.name}" for c, e in ENTRIES]


def selected(config, chapter):
    want = config.getoption("--chapter")
    return want is None or want == chapter


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_every_chapter_has_exercises(chapter):
    entries = ex.load(ROOT / chapter) if chapter in WITH_EXERCISES else []
    assert len(entries) >= 4, f"{chapter}: {len(entries)} exercises, at least 4 wanted"
    kinds = {e.kind for e in entries}
    assert "predict" in kinds and "fix" in kinds, f"{chapter}: kinds {sorted(kinds)}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_readme_line_ranges_are_the_regions(chapter):
    """A `lines A-B` that the chapter's exercises README writes in an exercise's section is that
    exercise's region (exercises.txt `lines`): the regions move when the code around them does."""
    readme = (ROOT / chapter / "exercises" / "README.md").read_text()
    entries = {e.name: e for e in ex.load(ROOT / chapter)}
    stale = []
    for sec in re.split(r"(?m)^## ", readme)[1:]:
        name = re.match(r"[A-Za-z_0-9]+", sec)
        e = entries.get(name.group(0)) if name else None
        if not e or not e.lines:
            continue
        stale += [f"{e.name}: lines {m.group(1)}-{m.group(2)}, the region is {e.lines}"
                  for m in re.finditer(r"\blines (\d+)\s*-\s*(\d+)\b", sec) if f"{m.group(1)}-{m.group(2)}" != e.lines]
    assert not stale, stale


def test_every_kind_in_the_repository():
    assert {e.kind for _, e in ENTRIES} == set(ex.KINDS)


@pytest.mark.parametrize("chapter,entry", ENTRIES, ids=IDS)
def test_entry_complete(chapter, entry):
    assert entry.problems() == [], f"{chapter}/exercises/exercises.txt [{entry.name}]"
    d = ROOT / chapter / "exercises"
    readme = (d / "README.md").read_text()
    assert entry.name in readme, "README.md does not list this exercise"
    assert entry.section.split()[0] in readme
    if entry.kind == "predict":
        blank = ex.read_answers(d / "answers.txt")
        assert f"{entry.name}.predicted" in blank and f"{entry.name}.measured" in blank
        assert not blank[f"{entry.name}.predicted"] and not blank[f"{entry.name}.measured"], \
            "the published answers.txt must be blank"
        assert ex.check_predict(entry, d)[0] == "not yet"
        solved = ex.check_predict(entry, d / "solutions")
        assert solved[0] == "solved", f"solutions/answers.txt: {solved[1]}"
    else:
        src, sol = d / entry.source, d / "solutions" / entry.source
        assert src.exists() and sol.exists()
        text = src.read_text()
        assert text.startswith("//") and "make check" in text[:3000], \
            "the opening comment says what to do and how to check it (make check)"
        # The solution differs from the exercise only inside the lines hint2 points to.
        lo, hi = (int(x) for x in entry.lines.split("-"))
        assert f"{lo}" in entry.hint2 and f"{hi}" in entry.hint2, "hint2 names the line range"
        a, b = text.splitlines(), sol.read_text().splitlines()
        changed = [(i1, i2) for tag, i1, i2, _, _ in difflib.SequenceMatcher(None, a, b, autojunk=False).get_opcodes()
                   if tag != "equal"]
        assert changed, "the solution is the same as the exercise"
        for i1, i2 in changed:  # 0-based [i1, i2) in the exercise; an insertion has i1 == i2
            first, last = i1 + 1, max(i1 + 1, i2)
            assert lo <= first and last <= hi + 1, f"the solution changes lines {first}-{last}, outside {entry.lines}"
        # The region is fenced: the markers sit just outside `lines`, and the solution passes the fence.
        assert ex.fence(a) == (lo - 2, hi), f"the `your change` markers must be lines {lo - 1} and {hi + 1}"
        assert ex.tampering(entry, sol, src) == "", "the solution differs from the exercise outside its region"
        assert ex.missing_use(entry, sol) == "", "the solution lacks what the exercise's `uses` asks for"


def build(chapter, src, out):
    """make exercises for one folder; returns (returncode, output)."""
    # A make of its own, not a sub-make of `make test`: no jobserver to inherit (a sub-make started
    # from here would warn "jobserver unavailable"), and jobs.mk gives it every core.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEFILES")}
    args = ["make", "--no-print-directory", "-C", str(ROOT / chapter), "exercises-build",
            f"EX_SRC={src}", f"EX_BIN={out}"]
    if not gpu_probe()[0]:
        args.append("ARCH=sm_90")  # no GPU: one architecture is enough to prove it builds
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    return r.returncode, r.stdout + r.stderr


# The tests that use the build below run on one pytest-xdist worker (tools/run_tests.sh), which
# builds once; on several workers each would build everything again (a session fixture is per worker).
ONE_BUILD = pytest.mark.xdist_group("exercise-build")


@pytest.fixture(scope="session")
def built(tmp_path_factory, request):
    """Every chapter's exercises and solutions, built once: {(chapter, 'exercises'|'solutions'): dir}."""
    base = tmp_path_factory.mktemp("exercises")
    jobs = [(c, kind) for c in WITH_EXERCISES if selected(request.config, c) for kind in ("exercises", "solutions")]
    def one(job):
        c, kind = job
        src = ROOT / c / "exercises" / ("solutions" if kind == "solutions" else "")
        out = base / c / kind
        return job, (out, *build(c, src.resolve(), out))
    with ThreadPoolExecutor(max_workers=2) as pool:
        return dict(pool.map(one, jobs))


@ONE_BUILD
@pytest.mark.parametrize("chapter", WITH_EXERCISES)
@pytest.mark.parametrize("kind", ["exercises", "solutions"])
def test_builds_without_warnings(built, chapter, kind, request):
    if not selected(request.config, chapter):
        pytest.skip("another chapter selected")
    out, rc, log = built[(chapter, kind)]
    assert rc == 0, log[-3000:]
    warnings = [l for l in log.splitlines() if "warning" in l.lower() and not l.startswith("nvcc ")]
    assert warnings == [], "\n".join(warnings[:20])


@ONE_BUILD
@pytest.mark.parametrize("chapter", WITH_EXERCISES)
@pytest.mark.parametrize("kind", ["exercises", "solutions"])
def test_static_initialization_accepted(built, chapter, kind, request):
    """The published exercises and the solutions pass the check of the static initialization
    (tools/exercises.py static_init_problem): it must refuse only code of a region, never the library's."""
    if not selected(request.config, chapter):
        pytest.skip("another chapter selected")
    if not ex.shutil.which("objdump"):
        pytest.skip("objdump (binutils) is not installed")
    out, rc, log = built[(chapter, kind)]
    assert rc == 0, log[-3000:]
    programs = [out / e.program for e in ex.load(ROOT / chapter) if e.kind in ("fix", "faster")]
    assert programs and all(p.exists() for p in programs)
    refused = {p.name: ex.static_init_problem(p) for p in programs}
    assert not any(refused.values()), refused


@ONE_BUILD
@pytest.mark.parametrize("chapter", WITH_EXERCISES)
def test_solutions_pass_the_sass_rule(built, chapter, request):
    """Every solution's built kernel has the instructions its exercise's `sass` names (tools/exercises.py
    sass_missing, cuobjdump -sass): the rule must refuse only a region without the mechanism."""
    if not selected(request.config, chapter):
        pytest.skip("another chapter selected")
    if not ex.find_tool("cuobjdump"):
        pytest.skip("cuobjdump not found (the CUDA Toolkit's, or pip install nvidia-cuda-cuobjdump)")
    out, rc, log = built[(chapter, "solutions")]
    assert rc == 0, log[-3000:]
    with_sass = [e for e in ex.load(ROOT / chapter) if e.sass]
    if not with_sass:
        pytest.skip("no exercise of this chapter has a sass rule")
    for e in with_sass:
        listed, funcs = ex.region_sass(out / e.program, ex.region_kernels(e))
        assert listed and funcs, f"{e.name}: no SASS of the region's kernel found ({funcs})"
    refused = {e.name: ex.sass_missing(e, out / e.program) for e in with_sass}
    assert not any(refused.values()), refused


@pytest.fixture(scope="session")
def verdicts(built):
    """tools/exercises.py check on every built folder, on the GPU: {(chapter, kind): {name: line}}."""
    has, why = gpu_probe()
    if not has:
        pytest.skip(f"no GPU: {why}")
    def one(item):
        (c, kind), (out, rc, _) = item
        if rc != 0:
            return (c, kind), None
        src = ROOT / c / "exercises" / ("solutions" if kind == "solutions" else "")
        r = subprocess.run([sys.executable, str(ROOT / "tools" / "exercises.py"), "check", c,
                            f"--src={src}", f"--bin={out}", "--no-hints"],
                           capture_output=True, text=True, cwd=ROOT, timeout=1800)
        log_dir = os.environ.get("EXERCISE_LOG_DIR")  # keep every check's output (tools/gpu_check.sh sets it)
        if log_dir:
            os.makedirs(log_dir, exist_ok=True)
            with open(os.path.join(log_dir, f"{c}_{kind}.txt"), "w") as f:
                f.write(r.stdout + r.stderr)
        lines = {}
        for line in r.stdout.splitlines():
            name = line.split(" ", 1)[0]
            lines[name] = line
        return (c, kind), (r.returncode, lines, r.stdout + r.stderr)
    # Four chapter checks at once by default (what a shared GPU sees); EXERCISE_CHECK_WORKERS=1 runs
    # them alone, one after the other.
    with ThreadPoolExecutor(max_workers=int(os.environ.get("EXERCISE_CHECK_WORKERS", "4"))) as pool:
        return dict(pool.map(one, built.items()))


@ONE_BUILD
@pytest.mark.parametrize("chapter,entry", ENTRIES, ids=IDS)
def test_exercise_not_yet_solution_solved(verdicts, chapter, entry, request):
    if not selected(request.config, chapter):
        pytest.skip("another chapter selected")
    for kind, want in (("exercises", "not yet"), ("solutions", "solved")):
        v = verdicts[(chapter, kind)]
        assert v is not None, f"{kind} did not build"
        rc, lines, log = v
        line = lines.get(entry.name, "")
        got = re.sub(r"^\S+\s+", "", line)
        assert got.startswith(want), f"{kind}: expected '{want}', got: {line!r}\n{log[-2000:]}"


RUN_CHECKED = [(c, e) for c, e in ENTRIES if e.kind in ("fix", "faster")]


@ONE_BUILD
@pytest.mark.parametrize("chapter,entry", RUN_CHECKED, ids=[f"{c}/{e.name}" for c, e in RUN_CHECKED])
def test_solution_fails_when_corrupted(built, chapter, entry, request):
    """CUDA_LAB_CORRUPT=1 (common/corrupt.h): each solution, run as make check runs it, must end FAILED
    (exit 1) - a check of an exercise that cannot fail would grade a wrong region `solved`.
    tests/test_corruption.py does this for the programs of tests/manifest.txt, this for the exercises."""
    if not selected(request.config, chapter):
        pytest.skip("another chapter selected")
    has, why = gpu_probe()
    if not has:
        pytest.skip(f"no GPU: {why}")
    out, rc, log = built[(chapter, "solutions")]
    assert rc == 0, log[-3000:]
    r = subprocess.run([str(out / entry.program), *entry.args], cwd=out, capture_output=True, text=True,
                       env=dict(os.environ, CUDA_LAB_CORRUPT="1"), timeout=entry.timeout)
    if r.returncode == 77:
        pytest.skip((r.stdout.strip().splitlines() or [r.stderr.strip()])[-1])
    last = (r.stdout.strip().splitlines() or [""])[-1]
    assert r.returncode == 1 and last.startswith("FAILED"), f"exit {r.returncode}, last line {last!r}"
    # The timed rounds' checks (the faster exercises') must fail too, not only the first check: they
    # are the ones that catch a kernel that replays or skips work (lab_corrupt in each round's check).
    rounds = [l for l in r.stdout.splitlines() if l.startswith("  check") and re.search(r"\brounds\b", l)]
    assert rounds or entry.kind != "faster", "a faster exercise prints its timed rounds' check (`... rounds ...`)"
    still_ok = [l for l in rounds if not l.rstrip().endswith("MISMATCH")]
    assert not still_ok, f"round checks that CUDA_LAB_CORRUPT did not fail: {still_ok}"


# ---- tools/exercises.py itself, without a GPU: fake programs and a fake compute-sanitizer.

FAKE_SANITIZER = ('tool=$2; shift 2; while [ $# -gt 0 ] && [ ! -x "$1" ]; do shift; done\n'
                  '"$@" >/dev/null; n=${FAKE_ERRORS:-0}\n'
                  'if [ "$tool" = racecheck ]; then echo "========= RACECHECK SUMMARY: $n hazards displayed ($n errors, 0 warnings)";\n'
                  'else echo "========= ERROR SUMMARY: $n errors"; fi; [ "$n" = 0 ] || exit 99')

def fake_exercise(**keys):
    sec = {"kind": "fix", "section": "G 1.1 x", "title": "t", "source": "prog.cu", "args": "--n=3",
           "lines": "1-2", "hint1": "a", "hint2": "lines 1-2", **keys}
    return ex.Exercise("00_fake", "fake", sec)


def write_script(path, body):
    path.write_text("#!/bin/sh\n" + body + "\n")
    path.chmod(0o755)
    return path


@pytest.mark.parametrize("expect,value,ok", [
    ("32", "32", True), ("32", "32.0", True), ("32", "31", False), ("32", "", False),
    ("1.5 .. 2.5", "2", True), ("1.5 .. 2.5", "3", False), ("1.5 .. 2.5", "two", False),
    ("breadth-first | bfs", "Breadth First", True), ("breadth-first | bfs", "BFS", True),
    ("breadth-first | bfs", "depth-first", False)])
def test_matches(expect, value, ok):
    assert ex.matches(expect, value) is ok


@pytest.mark.parametrize("region,missing", [
    ("atomicAdd(c, 1u); __shared__ int s[1]; long long x;", ""),
    ("atomicInc(c, 9u); __shared__ int s[1]; long   long x;", ""),  # an alternative; spaces between words
    ("// atomicAdd(c, 1u)\n__shared__ int s[1]; long long x;", "atomicAdd|atomicInc"),  # in a comment only
    ('f("atomicAdd"); /* atomicInc */ __shared__ int s[1]; long long x;', "atomicAdd|atomicInc"),  # literal, comment
    ("atomicAdd_block(c, 1u); __shared__ int s[1]; long long x;", "atomicAdd|atomicInc"),  # a whole token only
    ("atomicAdd(c, 1u); long long x;", "__shared__"),
    ("atomicAdd(c, 1u); __shared__ int s[1]; long x; long y;", "long long"),
])
def test_uses_rule(tmp_path, region, missing):
    """`uses`: each entry's names are alternatives (|); the region's code, comments and literals removed,
    must hold one of them as whole tokens."""
    f = fake_exercise(uses="atomicAdd | atomicInc, __shared__,long long")
    assert f.uses == [["atomicAdd", "atomicInc"], ["__shared__"], ["long long"]] and f.problems() == []
    src = tmp_path / "prog.cu"
    src.write_text("\n".join(["int before;", ex.BEGIN_MARK + " ----", region, ex.END_MARK + " ----",
                               "int after = atomicAdd + __shared__;"]) + "\n")  # outside the region: not read
    why = ex.missing_use(f, src)
    if missing:
        assert f"does not use {missing} (" in why, why
    else:
        assert why == "", why


@pytest.mark.parametrize("region,why", [
    ("atomicAdd(c, 1u); __syncthreads();", ""),
    ("atomicAdd (c, 1u); __syncthreads ();", ""),  # a call with a space before (
    ("auto f = atomicAdd; __syncthreads();", "does not use atomicAdd()"),  # named, not called
    ("unsigned atomicAdd = 0; atomicAdd(c, 1u); __syncthreads();", "declares `atomicAdd` itself"),
    ("__device__ unsigned atomicAdd(unsigned* p, unsigned v) { return *p += v; } __syncthreads();",
     "declares `atomicAdd` itself"),
    ("atomicAdd(c, 1u); __shared__ long long __syncthreads; __syncthreads();", "declares `__syncthreads` itself"),
    ("atomicAdd(c, 1u); int* __syncthreads = nullptr; __syncthreads();", "declares `__syncthreads` itself"),
    ("atomicAdd(c, 1u); y = x * __syncthreads();", ""),  # a product, not a declaration through *
    ("atomicAdd(c, 1u); y = x & __syncthreads();", ""),
])
def test_uses_calls_and_own_declarations(tmp_path, region, why):
    """`NAME()` in uses must be called; a region that declares a uses name itself (a variable, a function
    of its own) is refused - the reading of the text would take it for CUDA's (review of 5826316)."""
    f = fake_exercise(uses="atomicAdd(), __syncthreads()")
    assert f.problems() == [] and f.uses == [["atomicAdd()"], ["__syncthreads()"]]
    src = tmp_path / "prog.cu"
    src.write_text("\n".join(["int before;", ex.BEGIN_MARK + " ----", region, ex.END_MARK + " ----"]) + "\n")
    got = ex.missing_use(f, src)
    assert (why in got) if why else got == "", got


def test_uses_entries_are_names():
    assert fake_exercise(uses="atomicAdd|atomic-Add").problems() == [
        "uses: `atomic-Add` is not a name (NAME, NAME() for a call, NS::NAME or words such as `long long`)"]
    assert fake_exercise(kind="predict", expect="1", uses="atomicAdd").problems() == [
        "uses is for a fix or faster exercise"]


def test_uses_after_a_passing_run(tmp_path, monkeypatch):
    """grade applies `uses` after the run: the unchanged racy_count shows its own failure (not a reason
    that names the fix); a region without an atomic whose program passes is `not yet` by the rule."""
    tools = tmp_path / "tools"
    tools.mkdir()
    write_script(tools / "compute-sanitizer", FAKE_SANITIZER)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    # the fake programs are shell scripts, with no machine code for the `sass` rule to read (a real
    # build's is read in test_solutions_pass_the_sass_rule and tests/test_exercises_cheats.py)
    monkeypatch.setattr(ex, "sass_missing", lambda e, binary: "")
    chapter = ROOT / "07_atomics"
    entry = next(e for e in ex.load(chapter) if e.name == "racy_count")
    work = tmp_path / "work"
    work.mkdir()
    (work / entry.source).write_text((chapter / "exercises" / entry.source).read_text())
    write_script(work / entry.program, "echo 'FAILED: GPU count == CPU count'; exit 1")
    status, why = ex.grade(chapter, entry, work, work)
    assert status == "not yet" and why.startswith("the program's own check"), why
    write_script(work / entry.program, "echo PASSED")
    status, why = ex.grade(chapter, entry, work, work)
    assert status == "not yet" and "does not use atomicAdd()|" in why, why
    (work / entry.source).write_text((chapter / "exercises" / "solutions" / entry.source).read_text())
    assert ex.grade(chapter, entry, work, work)[0] == "solved"


def test_check_program_verdicts(tmp_path, monkeypatch):
    tools = tmp_path / "tools"
    tools.mkdir()
    # The fake sanitizer runs the program, then prints the summary line its tool would print, with
    # as many errors as $FAKE_ERRORS says.
    write_script(tools / "compute-sanitizer", FAKE_SANITIZER)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    prog = tmp_path / "prog"
    e = fake_exercise(sanitizer="memcheck, racecheck")
    assert ex.check_program(e, prog)[0] == "not yet"  # not built
    write_script(prog, "echo checking; echo PASSED")
    assert ex.check_program(e, prog) == ("solved", "")
    monkeypatch.setenv("FAKE_ERRORS", "2")
    status, why = ex.check_program(e, prog)
    assert status == "not yet" and "memcheck reports 2 error" in why
    monkeypatch.setenv("FAKE_ERRORS", "0")
    write_script(prog, "echo 'FAILED: 3 of 9 differ'; exit 1")
    status, why = ex.check_program(e, prog)
    assert status == "not yet" and "FAILED: 3 of 9 differ" in why
    write_script(prog, "echo 'SKIPPED: no GPU'; exit 77")
    assert ex.check_program(e, prog) == ("skipped", "SKIPPED: no GPU")
    # faster: the measured figure against the target, best of 3 runs
    f = fake_exercise(kind="faster", measure=r"ratio: ([0-9.]+)", target=">= 0.5")
    write_script(prog, "echo 'ratio: 0.31'; echo PASSED")
    status, why = ex.check_program(f, prog)
    assert status == "not yet" and "measured 0.31" in why
    write_script(prog, "echo 'ratio: 0.72'; echo PASSED")
    assert ex.check_program(f, prog) == ("solved", "measured 0.72, the target is >= 0.5")


def test_graded_hints_and_exit_code(tmp_path, capsys):
    chapter = tmp_path / "00_fake"
    (chapter / "exercises").mkdir(parents=True)
    (chapter / "exercises" / "exercises.txt").write_text(
        "[guess]\nkind = predict\nsection = G 1.1 x\ntitle = t\nexpect = 32\nhint1 = FIRST\nhint2 = SECOND\n")
    work = chapter / "workspace"
    work.mkdir()
    (work / "answers.txt").write_text("guess.predicted = 16\nguess.measured = 8\n")
    args = lambda: type("A", (), {"chapter": str(chapter), "src": None, "bin": None, "only": None, "no_hints": False})
    assert ex.check(args()) == 1
    first = capsys.readouterr().out
    assert "not yet" in first and "FIRST" in first and "SECOND" not in first
    assert ex.check(args()) == 1
    assert "SECOND" in capsys.readouterr().out
    (work / "answers.txt").write_text("guess.predicted = 16\nguess.measured = 32\n")
    assert ex.check(args()) == 0
    assert "1 of 1 solved" in capsys.readouterr().out


# ---- the fence: a workspace file that differs from the published exercise outside the region.

FENCED = [(c, e) for c, e in ENTRIES if e.kind in ("fix", "faster")]


def passing_program(entry, path):
    """A fake build of the exercise that passes its check and meets its target, whatever the source says."""
    figure = ""
    if entry.kind == "faster":
        value = "1000" if entry.target.startswith(">=") else "0.001"
        figure = re.sub(r"\([^)]*\)", value, entry.measure).replace("\\", "")
        assert re.search(entry.measure, figure), figure
    return write_script(path, f"echo '{figure}'; echo PASSED")


def check_line_outside(lines, begin, end, words):
    """0-based index of the first line outside the region that contains one of `words`."""
    return next(i for i, l in enumerate(lines) if (i < begin or i > end) and any(w in l for w in words))


@pytest.mark.parametrize("chapter,entry", FENCED, ids=[f"{c}/{e.name}" for c, e in FENCED])
def test_tampering_is_not_yet(chapter, entry, tmp_path, monkeypatch):
    """The checker refuses, before running anything, a file whose text outside the region differs
    from the published exercise: the check or the timing edited, the markers gone, a macro in the
    region. Whitespace-only edits outside the region are tolerated."""
    tools = tmp_path / "tools"
    tools.mkdir()
    write_script(tools / "compute-sanitizer", FAKE_SANITIZER)
    monkeypatch.setenv("PATH", f"{tools}:{os.environ['PATH']}")
    # the fake programs are shell scripts, with no machine code for the `sass` rule to read (a real
    # build's is read in test_solutions_pass_the_sass_rule and tests/test_exercises_cheats.py)
    monkeypatch.setattr(ex, "sass_missing", lambda e, binary: "")
    chapter_dir = ROOT / chapter
    # The solution's text: the published exercise outside the region, and a region that keeps what
    # the exercise requires (launch_config's CHECK_LAUNCH(): the published region lacks it).
    published = (chapter_dir / "exercises" / "solutions" / entry.source).read_text().splitlines()
    begin, end = ex.fence(published)
    work = tmp_path / "work"
    work.mkdir()
    passing_program(entry, work / entry.program)

    def verdict(lines):
        (work / entry.source).write_text("\n".join(lines) + "\n")
        return ex.grade(chapter_dir, entry, work, work)

    assert verdict(published)[0] == "solved", "the fake program should pass when nothing was edited"
    # whitespace only: every line outside the region re-indented, blank lines added
    spaced = ["  " + l + "  " if (i < begin or i > end) else l for i, l in enumerate(published)]
    assert verdict(spaced[:end + 1] + ["", ""] + spaced[end + 1:])[0] == "solved"

    def refused(lines, *words):
        status, why = verdict(lines)
        assert status == "not yet", why
        assert all(w in why for w in words), why
        return why

    # the CPU check: its first line outside the region commented out
    k = check_line_outside(published, begin, end, ["verdict."])
    edited = published[:k] + ["// " + published[k]] + published[k + 1:]
    refused(edited, f"line {k + 1}", "outside the `your change` markers", f"exercises/{entry.source}")
    # the CPU check deleted
    refused(published[:k] + published[k + 1:], "outside the `your change` markers")
    if entry.kind == "faster":
        # the timing: the printed figure replaced by a constant, and the timed call changed
        label = entry.measure.split("(")[0]
        k = check_line_outside(published, begin, end, [label])
        refused(published[:k] + [f'    std::printf("{label}1000\\n");'] + published[k + 1:], f"line {k + 1}")
        k = check_line_outside(published, begin, end, ["bench_"])
        refused(published[:k] + [published[k].replace("bench_", "fake_bench_")] + published[k + 1:], f"line {k + 1}")
    # the markers removed
    refused(published[:begin] + published[begin + 1:end] + published[end + 1:], "markers")
    # a macro inside the region, which could rewrite the code after it
    refused(published[:begin + 1] + ["#define verdict fake"] + published[begin + 1:], "preprocessor")
    # a function of the library declared in the region (in the region's namespace it would not replace
    # the library's, but it reads as if it did; inside main, a local named like a name of the guard lines
    # at the end of the region's block), and one of the CUDA runtime
    local = ex.in_function_body("\n".join(published[:begin]))
    decl = ("auto Verdict = [] { return 0; };" if local else "int lab_corrupt_on() { return 0; }")
    refused(published[:begin + 1] + [decl] + published[begin + 1:], "your region declares")
    if local:  # the region is a block of its own: a local it declares ends there and hides nothing after it
        assert verdict(published[:begin + 1] + ["auto verdict = [] { return 0; };"] + published[begin + 1:])[0] == \
            "solved"
    decl = ("int cudaDeviceSynchronize = 0;" if local else "cudaError_t cudaDeviceSynchronize() { return cudaSuccess; }")
    refused(published[:begin + 1] + [decl] + published[begin + 1:], "`cudaDeviceSynchronize`")
    if not local:  # the forms that a guard line cannot see (common/guard.h): refused by their text
        refused(published[:begin + 1] + ["inline int lab_corrupt_on() { return 0; }"] + published[begin + 1:],
                "`inline lab_corrupt_on` on the host")
        refused(published[:begin + 1] + ["template <> int random_vector<int>(size_t, int, int, uint32_t);"] +
                published[begin + 1:], "explicit specialization")
        refused(published[:begin + 1] + ["template <class T> T gbps(T bytes, T ms) { return bytes / ms; }"] +
                published[begin + 1:], "a template that is not a __device__ or __global__ function")
        refused(published[:begin + 1] + ["cudaError_t (cudaMemcpy)(int* d, int* s, size_t, cudaMemcpyKind) { "
                "*d = *s; return cudaSuccess; }"] + published[begin + 1:], "`(cudaMemcpy)`")


# ---- the top-level `make check`: one table, a CSV, and a workspace outside a read-only tree.

def fake_nvcc(path):
    """A stand-in for nvcc that 'builds' a program which fails its own check."""
    return write_script(path, 'out=""; while [ $# -gt 0 ]; do [ "$1" = "-o" ] && out=$2; shift; done\n'
                              "printf '#!/bin/sh\\necho \"FAILED: fake build\"; exit 1\\n' > \"$out\"; chmod +x \"$out\"")


def snapshot(root):
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def copy_tree(tmp_path):
    """The parts of the repository that `make check` reads, copied into tmp_path/tree."""
    import shutil
    tree = tmp_path / "tree"
    tree.mkdir()
    for name in ("Makefile", "common.mk", "jobs.mk", "opencv.mk"):
        shutil.copy(ROOT / name, tree / name)
    shutil.copytree(ROOT / "common", tree / "common", ignore=shutil.ignore_patterns("build"))
    shutil.copytree(ROOT / "tools", tree / "tools", ignore=shutil.ignore_patterns("__pycache__"))
    for c in WITH_EXERCISES:
        (tree / c).mkdir()
        shutil.copy(ROOT / c / "Makefile", tree / c / "Makefile")
        shutil.copytree(ROOT / c / "exercises", tree / c / "exercises")
    return tree


def test_top_level_check_table_csv_and_outside_workspace(tmp_path):
    import csv
    tree = copy_tree(tmp_path)
    before = snapshot(tree)
    ws, grades = tmp_path / "student" / "cuda-ws", tmp_path / "grades.csv"
    nvcc = fake_nvcc(tmp_path / "nvcc")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEFILES")}
    env["WORKSPACE"] = str(ws)  # as an environment variable; CSV as a make variable

    def make(*args):
        r = subprocess.run(["make", "--no-print-directory", *args, f"NVCC={nvcc}", f"PYTHON={sys.executable}"],
                           cwd=tree, capture_output=True, text=True, env=env, timeout=600)
        return r.returncode, r.stdout + r.stderr

    rc, out = make("check", f"CSV={grades}")
    assert rc != 0, out  # nothing is solved yet
    n = len(ENTRIES)
    assert f"{n} exercises: 0 solved, {n} not yet" in out, out[-3000:]
    assert snapshot(tree) == before, "make check WORKSPACE=... wrote into the repository tree"
    for c in WITH_EXERCISES:
        assert (ws / c / "answers.txt").exists() and list((ws / c).glob("*.cu"))
    rows = list(csv.DictReader(grades.open()))
    assert [r["exercise"] for r in rows] == [e.name for _, e in ENTRIES]
    assert set(rows[0]) == {"chapter", "exercise", "kind", "status", "attempts", "reason"}
    assert all(r["status"] == "not yet" and r["attempts"] == "0" for r in rows)

    # A student solves a predict exercise, and misses a fix exercise twice in chapter checks.
    c0, predict = next((c, e) for c, e in ENTRIES if e.kind == "predict")
    c1, fix = next((c, e) for c, e in ENTRIES if e.kind == "fix")
    answer = predict.expect.split("|")[0].split("..")[0].strip()
    (ws / c0 / "answers.txt").write_text(f"{predict.name}.predicted = x\n{predict.name}.measured = {answer}\n")
    for _ in range(2):
        rc, out = make("-C", c1, "check")
        assert f"{fix.name}" in out and "not yet" in out, out[-2000:]
    assert (ws / c1 / ".attempts.json").exists()
    rc, out = make("check", f"CSV={grades}")
    assert snapshot(tree) == before
    rows = {r["exercise"]: r for r in csv.DictReader(grades.open())}
    assert rows[predict.name]["status"] == "solved", rows[predict.name]
    assert rows[fix.name]["status"] == "not yet" and rows[fix.name]["attempts"] == "2"
    assert "FAILED: fake build" in rows[fix.name]["reason"]
    line = next(l for l in out.splitlines() if l.split()[1:2] == [fix.name])
    assert line.split() == [c1, fix.name, "fix", "not", "yet", "2"], line


def test_top_level_check_in_tree(tmp_path):
    """Without WORKSPACE: only the chapters the student started (workspace/) are built, the others are
    listed as not started and get no workspace/; a skipped exercise's reason is printed under the
    table, and a file copied into a workspace is named with its chapter."""
    tree = copy_tree(tmp_path)
    nvcc = write_script(tmp_path / "nvcc", 'out=""; while [ $# -gt 0 ]; do [ "$1" = "-o" ] && out=$2; shift; done\n'
                        "printf '#!/bin/sh\\necho \"SKIPPED: no GPU here\"; exit 77\\n' > \"$out\"; chmod +x \"$out\"")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEFILES", "WORKSPACE")}
    started, others = WITH_EXERCISES[0], WITH_EXERCISES[1:]
    r = subprocess.run(["make", "--no-print-directory", "-C", started, "workspace"], cwd=tree, env=env,
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    (tree / started / "workspace" / "answers.txt").unlink()
    r = subprocess.run(["make", "--no-print-directory", "check", f"NVCC={nvcc}", f"PYTHON={sys.executable}"],
                       cwd=tree, env=env, capture_output=True, text=True, timeout=600)
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    assert f"copied   {started}/exercises/answers.txt -> {started}/workspace/" in out, out[-3000:]
    assert [c for c in others if (tree / c / "workspace").exists()] == [], "make check made a workspace/"
    # (an exercise whose published region lacks what it requires is `not yet` before it runs)
    programs = [e for c, e in ENTRIES if c == started and e.kind != "predict" and not e.required]
    names = ", ".join(f"{started}/{e.name}" for e in programs) if len(programs) <= 3 else f"{len(programs)} exercises"
    assert f"skipped ({names}): SKIPPED: no GPU here" in out, out[-3000:]
    assert f"not started (no workspace): {', '.join(others)}; make -C NN_name workspace starts one" in out
