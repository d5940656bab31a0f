"""The cheating suite of the exercises (issue 35): ways to get `solved` without doing what the
exercise asks, kept as fixtures, each of which the checker must call `not yet` with a reason that
names what it detected.

tests/fixtures/cheats/EXERCISE/CHEAT.cu replaces the lines between the `your change` markers of
NN_name/exercises/EXERCISE.cu. Its first three lines say what it is:
    // cheat: what it does
    // detected: words (comma-separated) that the `not yet` reason must contain
    // needs: none (the checks of the text refuse it: the fence and name checks before anything runs, or
    //        the exercise's `uses` rule, which make check applies after a run that passed) | build (the checks of
    //        the text let it through; a guard line after the region, common/guard.h, stops its build)
    //        | binary (it builds, and the check of the built program's static initialization refuses
    //        it before it runs: code of the region before main) | sass (it builds and passes the checks of
    //        the text, `uses` included, and the exercise's `sass` rule - the machine code of the region's
    //        kernel, cuobjdump -sass - refuses it; make check applies it after a run that passed)
    //        | gpu (only a run can)
and, optionally, a fourth:
    // scanner: words that the fence and name checks' reason contains
for a cheat that needs a run or a build and that the checks of the text now refuse as well: the test
asserts both - the refusal, and the build's or (on a GPU) the run's own `not yet`, bypassing the text
checks, so that the guard and the run-time check stay tested.
A `needs: build` cheat is built without a GPU (the Makefile's flags); the build must fail and the
check's reason (the compiler's first message, which names the guard's name) contain `detected`.
Without a GPU every cheat that needs one is still built (with the Makefile's flags: it must build
without a warning, or it would prove nothing) and must pass the fence and name checks (so that only
the run can catch it) unless it has a `scanner:` line; its run is skipped.

tests/fixtures/solution_like/EXERCISE/NAME.cu: regions that do what the exercise asks in a way the
checks of the text must not refuse (the review of issue 35 found correct regions refused); each is
accepted by the fence and name checks, and builds with the Makefile's flags without a warning. Also here: `make check` of a chapter in which one workspace
file does not build grades the others."""
import os
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
from conftest import ROOT, gpu_probe

sys.path.insert(0, str(ROOT / "tools"))
import exercises as ex  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures" / "cheats"
CHAPTERS = sorted(p.name for p in ROOT.glob("0[0-9]_*") if (p / "exercises" / "exercises.txt").exists())
ENTRIES = {e.name: (c, e) for c in CHAPTERS for e in ex.load(ROOT / c)}
# The fix and faster exercises that the issue found could be passed without doing the work.
MUST_HAVE_CHEATS = {"memcpy_bytes", "transpose_pad", "warp_branch", "aos_layout", "pinned_pipeline", "histogram_privatize",
                    "prefetch_add", "launch_config", "shared_bytes", "async_read", "managed_sync", "graph_params",
                    "wrap_mode", "racy_count", "sum_overflow", "reduce_sync"}


def parse(path):
    head = path.read_text().splitlines()[:4]
    keys = {}
    for line in head:
        m = re.match(r"//\s*(cheat|detected|needs|scanner):\s*(.*)", line)
        if m:
            keys[m.group(1)] = m.group(2).strip()
    return keys


CHEATS = sorted(FIXTURES.glob("*/*.cu"))
IDS = [f"{p.parent.name}/{p.stem}" for p in CHEATS]


def cheated_lines(path):
    """The published exercise with its region replaced by the fixture."""
    chapter, entry = ENTRIES[path.parent.name]
    published = (ROOT / chapter / "exercises" / entry.source).read_text().splitlines()
    begin, end = ex.fence(published)
    return published[:begin + 1] + path.read_text().splitlines() + published[end:]


def test_fixtures_well_formed():
    assert CHEATS, "no fixtures"
    for p in CHEATS:
        keys = parse(p)
        assert p.parent.name in ENTRIES, f"{p}: no exercise {p.parent.name}"
        assert ENTRIES[p.parent.name][1].kind in ("fix", "faster")
        assert keys.get("cheat") and keys.get("detected") and keys.get("needs") in ("none", "build", "binary", "sass",
                                                                               "gpu"), \
            f"{p}: {keys}"
    assert MUST_HAVE_CHEATS <= {p.parent.name for p in CHEATS}
    faster = {n for n, (_, e) in ENTRIES.items() if e.kind == "faster"}
    overloaded = {p.parent.name for p in CHEATS if p.stem == "overload_bench"}
    assert faster <= overloaded, f"every faster exercise has the bench_turns_ms overload cheat: {faster - overloaded}"


@pytest.mark.parametrize("path", CHEATS, ids=IDS)
def test_fence_and_names(path, tmp_path):
    """needs: none - refused before anything runs, with a reason that names it; needs: build or gpu - passes
    the fence and the name checks (only the build's guard or the run can catch it)."""
    chapter, entry = ENTRIES[path.parent.name]
    keys = parse(path)
    work = tmp_path / entry.source
    work.write_text("\n".join(cheated_lines(path)) + "\n")
    why = ex.tampering(entry, work, ROOT / chapter / "exercises" / entry.source)
    if keys["needs"] == "none" and not why:
        why = ex.missing_use(entry, work)  # the `uses` rule: a check of the text that grade applies after the run
    if keys["needs"] == "sass":  # the text, `uses` included, lets it through: only the machine code tells
        assert why == "" and ex.missing_use(entry, work) == "", why or ex.missing_use(entry, work)
    words = keys["detected"] if keys["needs"] == "none" else keys.get("scanner")
    if words:
        assert why, "the fence and name checks let it through"
        for w in words.split(","):
            assert w.strip() in why, why
    else:
        assert why == "", why


SOLUTION_LIKE = sorted((ROOT / "tests" / "fixtures" / "solution_like").glob("*/*.cu"))


@pytest.mark.parametrize("path", SOLUTION_LIKE, ids=[f"{p.parent.name}/{p.stem}" for p in SOLUTION_LIKE])
def test_solution_like_regions_pass_the_checks(path, tmp_path):
    """A correct region written another way than the solution is not refused by the checks of the text."""
    chapter, entry = ENTRIES[path.parent.name]
    work = tmp_path / entry.source
    work.write_text("\n".join(cheated_lines(path)) + "\n")
    assert ex.tampering(entry, work, ROOT / chapter / "exercises" / entry.source) == ""
    assert ex.missing_use(entry, work) == ""


def build_each(paths, base):
    """Each region of `paths` spliced into its exercise in a folder of its own under base, built with the
    Makefile's flags (CHEAT_BUILD_JOBS at a time): {path: (folder, rc, log)}."""
    def one(path):
        chapter, entry = ENTRIES[path.parent.name]
        folder = base / f"{path.parent.name}__{path.stem}"
        folder.mkdir()
        (folder / entry.source).write_text("\n".join(cheated_lines(path)) + "\n")
        return path, (folder, *build(chapter, folder))

    workers = int(os.environ.get("CHEAT_BUILD_JOBS", "2"))
    with ThreadPoolExecutor(max_workers=workers) as pool:
        return dict(pool.map(one, paths))


@pytest.fixture(scope="session")
def built_solution_like(tmp_path_factory):
    """Every solution-like region in a workspace folder of its own, built: {path: (folder, rc, log)}."""
    return build_each(SOLUTION_LIKE, tmp_path_factory.mktemp("solution_like"))


@pytest.mark.xdist_group("exercise-build")
@pytest.mark.parametrize("path", SOLUTION_LIKE, ids=[f"{p.parent.name}/{p.stem}" for p in SOLUTION_LIKE])
def test_solution_like_regions_build(built_solution_like, path):
    """A correct region written another way builds with the Makefile's flags, without a warning: a build
    check (a guard line, REGION_SIGNATURE, the region's const copies) that refused it would be a false
    refusal no text check shows. Where the exercise has a `sass` rule, the built kernel passes it too."""
    folder, rc, log = built_solution_like[path]
    assert rc == 0, log[-3000:]
    warnings = [l for l in log.splitlines() if "warning" in l.lower() and not l.startswith("nvcc ")]
    assert warnings == [], "\n".join(warnings[:20])
    chapter, entry = ENTRIES[path.parent.name]
    if entry.sass and ex.find_tool("cuobjdump"):  # and its machine code has what the sass rule asks for
        assert ex.sass_missing(entry, folder / entry.program) == ""


def build(chapter, folder):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEFILES")}
    args = ["make", "--no-print-directory", "-C", str(ROOT / chapter), "exercises-build", f"EX_SRC={folder}",
            f"EX_BIN={folder}"]
    if not gpu_probe()[0]:
        args.append("ARCH=sm_90")
    r = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    return r.returncode, r.stdout + r.stderr


BUILD_CHEATS = [p for p in CHEATS if parse(p)["needs"] == "build"]


@pytest.mark.xdist_group("exercise-build")
@pytest.mark.parametrize("path", BUILD_CHEATS, ids=[f"{p.parent.name}/{p.stem}" for p in BUILD_CHEATS])
def test_cheat_stopped_by_the_guard(path, tmp_path):
    """A region that replaces a name the code after it calls, in a form the text checks do not read: the
    guard line after the region (common/guard.h) stops the build (or, for a second definition of a
    library function, the link), and the check's `not yet` says which name (tools/exercises.py's
    first_message and guard_stop)."""
    chapter, entry = ENTRIES[path.parent.name]
    (tmp_path / entry.source).write_text("\n".join(cheated_lines(path)) + "\n")
    rc, log = build(chapter, tmp_path)
    assert rc != 0, "the cheat built: " + log[-2000:]
    if parse(path).get("scanner"):  # refused by the text checks too: grade the build alone
        status, reason = ex.check_program(entry, tmp_path / entry.program)
    else:
        status, reason = ex.grade(ROOT / chapter, entry, tmp_path, tmp_path)
    assert status == "not yet", reason
    for w in parse(path)["detected"].split(","):
        assert w.strip() in reason, reason


SASS_CHEATS = [p for p in CHEATS if parse(p)["needs"] == "sass"]


@pytest.mark.xdist_group("exercise-build")
@pytest.mark.parametrize("path", SASS_CHEATS, ids=[f"{p.parent.name}/{p.stem}" for p in SASS_CHEATS])
def test_cheat_refused_by_its_machine_code(path, tmp_path, monkeypatch):
    """A region that names the mechanism without using it in the kernel (an atomicAdd or a __syncthreads
    of its own, an atomic in a kernel nobody launches): it builds, and grade - the run taken as passed -
    says `not yet` by the exercise's `sass` rule (tools/exercises.py sass_missing, cuobjdump -sass of the
    built program's kernel), no GPU needed."""
    if not ex.find_tool("cuobjdump"):
        pytest.skip("cuobjdump not found (the CUDA Toolkit's, or pip install nvidia-cuda-cuobjdump)")
    chapter, entry = ENTRIES[path.parent.name]
    (tmp_path / entry.source).write_text("\n".join(cheated_lines(path)) + "\n")
    rc, log = build(chapter, tmp_path)
    assert rc == 0, log[-3000:]
    monkeypatch.setattr(ex, "check_program", lambda e, binary: ("solved", ""))  # the run: a GPU's
    status, reason = ex.grade(ROOT / chapter, entry, tmp_path, tmp_path)
    assert status == "not yet", reason
    for w in parse(path)["detected"].split(","):
        assert w.strip() in reason, reason


@pytest.mark.xdist_group("exercise-build")
def test_sass_rule_kernel_in_a_nested_namespace(tmp_path, monkeypatch):
    """A correct kernel defined in a namespace of the region's own and exported with a using line
    builds, but its machine code is not yours::count_above: the rule says so (it used to tell the
    student to rebuild for an sm_ architecture, which could not help; fourth review of c10d17e)."""
    if not ex.find_tool("cuobjdump"):
        pytest.skip("cuobjdump not found (the CUDA Toolkit's, or pip install nvidia-cuda-cuobjdump)")
    chapter, entry = ENTRIES["racy_count"]
    published = (ROOT / chapter / "exercises" / entry.source).read_text().splitlines()
    begin, end = ex.fence(published)
    region = ["namespace impl {",
              "__global__ void count_above(const int* __restrict__ in, int n, int threshold, unsigned* count) {",
              "    int i = blockIdx.x * BLOCK + threadIdx.x;",
              "    if (i < n && in[i] > threshold) atomicAdd(count, 1u);",
              "}",
              "}  // namespace impl",
              "using impl::count_above;"]
    (tmp_path / entry.source).write_text("\n".join(published[:begin + 1] + region + published[end:]) + "\n")
    assert ex.tampering(entry, tmp_path / entry.source, ROOT / chapter / "exercises" / entry.source) == ""
    rc, log = build(chapter, tmp_path)
    assert rc == 0, log[-3000:]
    monkeypatch.setattr(ex, "check_program", lambda e, binary: ("solved", ""))
    status, reason = ex.grade(ROOT / chapter, entry, tmp_path, tmp_path)
    assert status == "not yet" and "defined directly in your region" in reason, reason


def test_sass_rule_when_cuobjdump_fails(tmp_path, monkeypatch):
    """A cuobjdump that cannot read the program is `not yet` with its message, not `solved` unread."""
    fake = tmp_path / "cuobjdump"
    fake.write_text("#!/bin/sh\necho 'cuobjdump fatal: cannot read this ELF' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(ex, "find_tool", lambda name: str(fake))
    chapter, entry = ENTRIES["racy_count"]
    reason = ex.sass_missing(entry, tmp_path / entry.program)
    assert "could not read the machine code of count_above" in reason and "cannot read this ELF" in reason, reason


@pytest.mark.xdist_group("exercise-build")
def test_sass_rule_wants_machine_code(tmp_path, monkeypatch):
    """A PTX-only build (ARCH=compute_90) holds no SASS of the kernel: the sass rule cannot be read, and
    grade says `not yet` with how to build, rather than `solved` unread (third review of 4ebad3b)."""
    if not ex.find_tool("cuobjdump"):
        pytest.skip("cuobjdump not found (the CUDA Toolkit's, or pip install nvidia-cuda-cuobjdump)")
    chapter, entry = ENTRIES["racy_count"]
    (tmp_path / entry.source).write_text((ROOT / chapter / "exercises" / "solutions" / entry.source).read_text())
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEFILES")}
    r = subprocess.run(["make", "--no-print-directory", "-C", str(ROOT / chapter), "exercises-build",
                        f"EX_SRC={tmp_path}", f"EX_BIN={tmp_path}", "ARCH=compute_90"],
                       capture_output=True, text=True, env=env, timeout=1800)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    monkeypatch.setattr(ex, "check_program", lambda e, binary: ("solved", ""))
    status, reason = ex.grade(ROOT / chapter, entry, tmp_path, tmp_path)
    assert status == "not yet" and "shows no machine code" in reason and "compute_XX" in reason, reason


BINARY_CHEATS = [p for p in CHEATS if parse(p)["needs"] == "binary"]


@pytest.mark.xdist_group("exercise-build")
@pytest.mark.parametrize("path", BINARY_CHEATS, ids=[f"{p.parent.name}/{p.stem}" for p in BINARY_CHEATS])
def test_cheat_refused_by_its_static_initialization(path, tmp_path):
    """A region whose code would run before main in a form the text checks do not read (an object of
    an elaborated class type, a declarator in parentheses...): it builds, and the check reads the
    built program's static initialization (tools/exercises.py static_init_problem, objdump) and says
    `not yet` before running anything - no GPU needed."""
    if not ex.shutil.which("objdump"):
        pytest.skip("objdump (binutils) is not installed: the check of the static initialization is skipped")
    chapter, entry = ENTRIES[path.parent.name]
    (tmp_path / entry.source).write_text("\n".join(cheated_lines(path)) + "\n")
    rc, log = build(chapter, tmp_path)
    assert rc == 0, log[-3000:]
    status, reason = ex.grade(ROOT / chapter, entry, tmp_path, tmp_path)
    assert status == "not yet", reason
    for w in parse(path)["detected"].split(","):
        assert w.strip() in reason, reason


RUN_CHEATS = [p for p in CHEATS if parse(p)["needs"] == "gpu"]
RUN_IDS = [f"{p.parent.name}/{p.stem}" for p in RUN_CHEATS]


@pytest.mark.parametrize("path", RUN_CHEATS, ids=RUN_IDS)
def test_run_cheat_reason_is_printed_somewhere(path):
    """A run cheat's `detected` words are in a string literal of the exercise program or of the grader: a
    message reworded in the program (c749b57: "in all N timed rounds" -> "all N rounds, warm-ups and
    timed") fails here, on a machine without a GPU, unless another literal (a --help text) still holds the
    old words - the GPU run that grades the cheat is the full check."""
    chapter, entry = ENTRIES[path.parent.name]
    texts = [(ROOT / chapter / "exercises" / entry.source).read_text(), (ROOT / "tools" / "exercises.py").read_text()]
    # the string literals only: a comment that says "timed rounds" prints nothing
    printed = "\n".join(m for t in texts for m in re.findall(r'"((?:[^"\\\n]|\\.)*)"', t))
    for w in parse(path)["detected"].split(","):
        # words with a number or half a parenthesis (the comma list cut `field_offset(R, 0)`): a message the
        # program builds from pieces (`"field_offset" + at(k) + " lies outside ..."`), checked piece by
        # piece between the numbers and punctuation it fills in; other words must be one literal's text
        w = w.strip()
        composed = re.search(r"\d", w) or w.count("(") != w.count(")")
        pieces = [w] if w in printed or not composed else [f.strip() for f in re.split(r"[(),]|\d+", w)]
        for piece in filter(None, pieces):
            assert piece in printed, f"{path.name}: `{piece}` is printed by neither {entry.source} nor the grader"


@pytest.fixture(scope="session")
def built_cheats(tmp_path_factory):
    """Every cheat that needs a run, in a workspace folder of its own, built: {path: (folder, rc, log)}."""
    return build_each(RUN_CHEATS, tmp_path_factory.mktemp("cheats"))


@pytest.mark.xdist_group("exercise-build")
@pytest.mark.parametrize("path", RUN_CHEATS, ids=RUN_IDS)
def test_cheat_builds_and_is_caught(built_cheats, path):
    folder, rc, log = built_cheats[path]
    assert rc == 0, log[-3000:]
    warnings = [l for l in log.splitlines() if "warning" in l.lower() and not l.startswith("nvcc ")]
    assert warnings == [], "\n".join(warnings[:20])
    has, why = gpu_probe()
    if not has:
        pytest.skip(f"built; the run needs a GPU: {why}")
    chapter, entry = ENTRIES[path.parent.name]
    if parse(path).get("scanner"):  # refused by the text checks too: grade the run alone
        status, reason = ex.check_program(entry, folder / entry.program)
    else:
        status, reason = ex.grade(ROOT / chapter, entry, folder, folder)
    log_dir = os.environ.get("EXERCISE_LOG_DIR")
    if log_dir:
        os.makedirs(log_dir, exist_ok=True)
        with open(os.path.join(log_dir, "cheats.txt"), "a") as f:
            f.write(f"{path.parent.name}/{path.stem}: {status}: {reason}\n")
    if status == "skipped":
        pytest.skip(reason)
    assert status == "not yet", f"the cheat was graded {status}: {reason}"
    for w in parse(path)["detected"].split(","):
        assert w.strip() in reason, reason


@pytest.mark.parametrize("text,local,want", [
    ("__global__ void __launch_bounds__(256) work(const float* in) { int a = f(3); }", False, {"work"}),
    ("template <class T = int> T pick(T a) { return a; }", False, {"pick"}),
    ("namespace { std::vector<double> bench_turns_ms(std::initializer_list<FnRef> f, int r) { return {}; } }",
     False, {"bench_turns_ms"}),
    ("template <> double median<float>(std::vector<double> v) { return 0; }", False, {"median"}),
    ("struct S { int check; void run(); } s;", False, {"S", "s"}),
    ("__constant__ float table[32]; __device__ int count = 0; using Alias = int; using namespace std;", False,
     {"table", "count", "Alias"}),
    ('extern "C" { int cudaMemcpy(void* p); }', False, {"cudaMemcpy"}),
    ("float4 operator+(float4 a, float4 b) { return a; }", False, {"operator"}),
    ("dim3 block(32, 8); CHECK(cudaMalloc(&d, 4)); grid = 5; std::min(a, b); return f(x); auto g = [] {};",
     True, {"block", "g"}),
    ("for (int i = 0; i < n; ++i) { float v = 1; } if (x) { int w; }", True, set()),
    # second review of issue 35, item 1: structured bindings and parenthesised declarators
    ("[[maybe_unused]] auto [witness_sum, best] = std::make_pair(1, 0);", True, {"witness_sum", "best"}),
    ("const auto& [a, b] = p; auto&& [c] = q;", True, {"a", "b", "c"}),
    ("auto (witness_now) = [&] { return 0; }; int (n) = 3; CHECK(cudaFree(d)); cudaFree(d); if (x) {}", True,
     {"witness_now", "n"}),
    ("double (bench_turns_ms)(std::initializer_list<FnRef> f, int r) { return 0; }", False, {"bench_turns_ms"}),
    # third review: brace initialisation, a decltype(...) type, `auto const [...]`, doubled parentheses
    ("auto witness_now{[&] { return 0; }}; float* h_x{p}; dim3 grid{1, 2}; if (a) { b(); } x = T{2}; do {} while (0);",
     True, {"witness_now", "h_x", "grid"}),
    ("decltype(g) witness_sum = g; auto const [a, b] = p; auto ((witness)) = f; return T{1}; f(a)(b);", True,
     {"witness_sum", "a", "b", "witness"}),
    ("decltype(std::vector<double>()) (bench_turns_ms)(std::initializer_list<FnRef> r, int) { return {}; }", False,
     {"bench_turns_ms"}),
])
def test_declared_names(text, local, want):
    assert ex.declared_names(text, local) == want


def test_one_verdict_and_one_figure(tmp_path):
    """A program whose output has a second verdict line or a second figure (printed by the region's
    code or a kernel's printf) is `not yet`, whatever its last line says."""
    from test_exercises import fake_exercise, write_script
    prog = tmp_path / "prog"
    f = fake_exercise(kind="faster", measure=r"ratio: ([0-9.]+)", target=">= 0.5")
    write_script(prog, "echo 'ratio: 0.72'; echo PASSED")
    assert ex.check_program(f, prog)[0] == "solved"
    write_script(prog, "echo 'ratio: 9.9'; echo PASSED; echo 'ratio: 0.72'; echo PASSED")
    status, why = ex.check_program(f, prog)
    assert status == "not yet" and "2 verdict lines" in why, why
    write_script(prog, "echo 'ratio: 9.9'; echo 'ratio: 0.72'; echo PASSED")
    status, why = ex.check_program(f, prog)
    assert status == "not yet" and "2 lines that match" in why, why


# ---- `make check` when one workspace file does not build: that one is `not yet` with the compiler's
# first message, the others are still graded.

def test_one_file_that_does_not_build_stops_nothing_else(tmp_path):
    from test_exercises import copy_tree, write_script
    tree = copy_tree(tmp_path)
    # A stand-in for nvcc: a source with `unused_here` fails as -Werror would; the others build a
    # program that skips (no GPU), so that the check has something to grade.
    nvcc = write_script(tmp_path / "nvcc", 'out=""; src=""; for a in "$@"; do case "$a" in *.cu) src=$a;; esac; done\n'
                        'while [ $# -gt 0 ]; do [ "$1" = "-o" ] && out=$2; shift; done\n'
                        'if [ -n "$src" ] && grep -q unused_here "$src"; then\n'
                        '  echo "$src(30): error #177-D: variable \\"unused_here\\" was declared but never referenced" >&2\n'
                        '  echo "1 error detected in the compilation of \\"$src\\"." >&2; exit 1; fi\n'
                        "printf '#!/bin/sh\\necho \"SKIPPED: no GPU here\"; exit 77\\n' > \"$out\"; chmod +x \"$out\"")
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL", "MAKEFILES", "WORKSPACE")}
    chapter = "06_unified"
    make = lambda *a: subprocess.run(["make", "--no-print-directory", "-C", str(tree / chapter), *a, f"NVCC={nvcc}",
                                      f"PYTHON={sys.executable}"], env=env, capture_output=True, text=True, timeout=600)
    r = make("workspace")
    assert r.returncode == 0, r.stdout + r.stderr
    src = tree / chapter / "workspace" / "prefetch_add.cu"
    lines = src.read_text().splitlines()
    begin, _ = ex.fence(lines)
    assert lines[begin + 1].startswith("void prepare(")  # an unused local in the region's function
    src.write_text("\n".join(lines[:begin + 2] + ["    int unused_here = 0;"] + lines[begin + 2:]) + "\n")
    r = make("check")
    out = r.stdout + r.stderr
    assert r.returncode != 0, out
    line = next(l for l in out.splitlines() if l.startswith("prefetch_add "))
    assert "not yet: prefetch_add did not build:" in line and "error #177-D" in line, line
    line = next(l for l in out.splitlines() if l.startswith("managed_sync "))
    assert "skipped" in line, out  # still graded (no GPU: skipped)
    assert not (tree / chapter / "workspace" / "prefetch_add").exists(), "a failed build left a program"


def test_region_names_second_review(tmp_path):
    """Second review of issue 35: what correct regions write (items 6, 7) is accepted; the reason for
    unbalanced brackets reads as one (item 9)."""
    program = "int main() { std::vector<int> h; return 0; }"
    for text, local in (("enum { PAD = 1 }; __shared__ float t[32][32 + PAD];", False),
                        ("enum class Mode : int { A = 1, B }; Mode m = Mode::B; (void)m;", True),
                        ("std::vector<float>::size_type s = h.size(); std::vector<int>::iterator it = h.begin();",
                         True),
                        ("int d = 0, e = 1; memset(&d, 0, sizeof d); memcpy(&d, &e, 4); assert(d == 1);", True),
                        ("auto [a, b] = std::make_pair(1, 2); int c = a + b; (void)c;", True)):
        assert ex.region_names(text, program, local) == "", text
    assert ex.region_names("std::vector<int>::exit(0);", program, True) == "`exit`"
    for text in ("const int PAD = 1;", "static const int PAD = 1, ROWS2 = 2 * PAD;",
                 "static const unsigned long N = sizeof(int) * 4;"):
        assert ex.namespace_variables(text) == "", text
    for text, name in (("const int PAD = start();", "PAD"), ("int PAD = 1;", "PAD"), ("const int X{f()};", "X"),
                       ("const Timer t = 1;", "t")):
        assert ex.namespace_variables(text) == name, text
    chapter, entry = ENTRIES["launch_config"]
    work = ROOT / chapter / "exercises" / entry.source
    lines = work.read_text().splitlines()
    begin, end = ex.fence(lines)
    bad = tmp_path / entry.source
    bad.write_text("\n".join(lines[:begin + 1] + ["    dim3 block(64, 16;"] + lines[end:]) + "\n")
    why = ex.tampering(entry, bad, work)
    assert "do not pair up" in why and "which a region may not use" not in why, why


def test_local_clashes_after_the_region_only():
    """Second review of issue 35, item 5: a local clashes with what the code after the region uses,
    with the bodies of the macros it expands (CHECK: check_cuda) and with the CUDA runtime, not with
    every name of the library (stream, start, base)."""
    theirs = ["int main() {", ex.BEGIN_MARK + " ----", "    int a = 0;", ex.END_MARK + " ----",
              "    CHECK(cudaFree(0));", "    return a;", "}"]
    mine = theirs[:2] + ["    auto check_cuda = 1; cudaStream_t stream = 0; int start = 1, base = 2;",
                         "    auto [a, cudaFree] = std::make_pair(1, 2);"] + theirs[3:]
    assert ex.replaced_names(mine, theirs, ex.fence(mine), ex.fence(theirs)) == ["check_cuda", "cudaFree"]


@pytest.mark.parametrize("region,ok", [
    ("k<<<g, b>>>(x); CHECK_LAUNCH();", True),
    ("if (n > 0) { k<<<g, b>>>(x); CHECK_LAUNCH(); }", True),
    ("k<<<g, b>>>(x), (void)cudaGetLastError(); CHECK_LAUNCH();", False),
    ("if (n > 0) k<<<g, b>>>(x); CHECK_LAUNCH();", False),
    ("if (n > 0) { k<<<g, b>>>(x); } CHECK_LAUNCH();", False),
    ("k<<<g, b>>>(x); if (n < 0) CHECK_LAUNCH();", False),
])
def test_required_launch_check(region, ok):
    assert ex.required_statement(region, "CHECK_LAUNCH()") == ok


def test_required_assignment_is_the_last_write():
    want = "if (i < n) out[i] = f(i)"
    assert ex.required_statement("{ int i = 0; if (i < n) out[i] = f(i); }", want, 1)
    assert not ex.required_statement("{ int i = 0; if (i < n) out[i] = f(i); out[i] = 0; }", want, 1)
    assert not ex.required_statement("{ int i = 0; if (i < n) out[i] = f(i); if (i < n) out[i] += 1; }", want, 1)
    assert not ex.required_statement("{ int i = 0; if (i < n) out[i] = f(i); g(); }", want, 1)


# ---- region_names on small texts: what a correct region writes is accepted, what reaches outside the
# program is refused (the reason names it).

@pytest.mark.parametrize("text,local,refused", [
    ("dim3 block(64, 16); int a = 0, b = a; float* p = nullptr, *q = p; (void)b; (void)q;", True, ""),
    ("std::vector<int> v(8); v[0] = 1; auto w = std::vector<int>(4); (void)w;", True, ""),
    ("auto f = [&](int k) { return k + 1; }; int r = f(2); (void)r;", True, ""),
    ("__device__ int twice(int x) { return 2 * x; }\n__global__ void k(int* o) { o[0] = twice(o[0]); }", False, ""),
    ("int helper(int a) { return (int)(a * getpid()); }", False, "`getpid`"),
    ("long hide(long getpid) { return getpid; }\nlong use() { return getpid(); }", False, "`getpid`"),
    ("auto p = &getpid; (void)p;", True, "`getpid`"),
    ("if (h.empty()) return;", True, ""),  # inside main the region is a function of its own: return leaves it
    ("throw 1;", True, "`throw` inside main"),
    ("std::printf(\"PASSED\\n\");", True, "`printf`"),
    ("std::cout << 1;", True, "`cout`"),
    ("std::ofstream(\"/dev/stdout\") << 1;", True, "`ofstream`"),
    ("::exit(0);", True, "`exit`"),
    ("static int x = (__builtin_trap(), 0);", False, "`__builtin_trap`"),
    ('extern "C" int puts(const char*);', False, "`extern`"),
    ("[[gnu::constructor]] void early() {}", False, "an attribute"),
    ("int a = 1'000;", True, "digit separator"),
    ("%:define hidden 1", True, "a digraph"),
    ("for (int k = 0; k < 4; ++k) { int j = k; (void)j; }", True, ""),
    ("__global__ void k(const float* __restrict__ in, float* out, int n) { int i = threadIdx.x; uint32_t u = 0;\n"
     "    float v = __shfl_down_sync(0xffffffffu, in[i], 16); out[i] = fminf(v, FLT_MAX) + min(n, (int)u);\n"
     "    __syncthreads(); atomicAdd(out, __ldg(in)); }", False, ""),
])
def test_region_names(text, local, refused):
    program = "int main() { std::vector<int> h; return 0; }"
    why = ex.region_names(text, program, local)
    assert (refused in why) if refused else why == "", why
