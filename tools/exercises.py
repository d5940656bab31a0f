#!/usr/bin/env python3
"""Checks a chapter's exercises and says, for each, `solved` or `not yet: <what failed>` with a hint.

    make -C 03_shared check          (what students type: builds workspace/, then runs this)
    make check [WORKSPACE=DIR] [CSV=FILE]   (top level: every chapter, one table; see `table`)
    tools/exercises.py check 03_shared [--src=DIR] [--bin=DIR] [--only=NAME[,NAME]] [--no-hints]
    tools/exercises.py table [CHAPTER ...] [--workspace=DIR] [--csv=FILE]
    tools/exercises.py list 03_shared

The exercises of a chapter are described in NN_name/exercises/exercises.txt (one [section] per
exercise; the format is below). --src is the folder with the student's files (the .cu copies and
answers.txt; default NN_name/workspace, made by `make workspace`), --bin the folder with the
programs built from them (default: the same). The test suite points both at exercises/ (every
exercise must come out `not yet`) and at exercises/solutions/ (every one `solved`).

The student's region: every fix/faster .cu marks the lines that are the student's to change with
`// ---- your change: begin` ... `// ---- your change: end ----` (`lines` in exercises.txt is the
range strictly between the two). Before running anything, check compares the rest of the
workspace file with the published exercise (NN_name/exercises/SOURCE), line by line after dropping
blank lines and collapsing runs of spaces and tabs (so re-indenting or blank lines are tolerated,
nothing else), and says `not yet` with the first differing line when they differ. A preprocessor
directive other than #pragma inside the region is refused too (a macro could rewrite the code
after it). This guards the CPU check and the timing, which lie outside the region; it cannot stop
code inside the region from printing a verdict of its own (reading a solved region stays the
instructor's job); what it can print is limited by the run's check: one verdict line (the last) and,
for a faster exercise, one line with the figure, or `not yet`.

Kinds of exercise and what `solved` means:
  predict  answers.txt holds NAME.predicted (anything, written before measuring: it is not graded)
           and NAME.measured, which must match `expect`;
  fix      the program passes its own CPU check (exit 0, last line PASSED) at `args`, and every
           compute-sanitizer tool named in `sanitizer` reports no error;
  faster   the same, and the figure that `measure` (a regular expression with one group) finds in
           its output meets `target` (e.g. `>= 1.5`); a run below target is repeated, best of 3.

The region may also not declare a name that the library (common/), the CUDA runtime or the program
outside the region uses, unless the published region declares it too (an overload of bench_turns_ms,
a local `auto CHECK = ...` or a global `int verdict` would replace what the check or the timing
calls); may not use a name that ends the process or takes over its output (exit, atexit, dup2,
stdout, ...: PROCESS_NAMES); may not mention the exercise's `forbidden` names (the program's record
of the work its kernels did, e.g. a __device__ counter, or a way around it); and must keep each
text of `required` (e.g. CHECK_LAUNCH()).

exercises.txt keys: kind, section (manual section, number and title), title, source (fix/faster:
the .cu file), args, sanitizer (comma list), measure, target, expect (predict: a number, a range
`a .. b`, or words separated by `|`), hint1 (a pointer to the manual section), hint2 (where to
look: a line range of the source, or which figure to read), lines (fix/faster: the line range,
e.g. 40-52, that hint2 points to; the test suite checks that the solution differs from the
exercise only there), forbidden and required (comma lists, above), timeout (seconds per run).

Hints are graded: the first `not yet` of an exercise shows hint1, later ones hint2 as well. The
count is kept in BIN/.attempts.json. Exit status: 0 all solved, 1 some not yet, 77 none not yet
but some could not run (no GPU, or a feature it lacks: the reason is printed), 2 usage.

`table` checks every chapter (or those named) and prints one table: chapter, exercise, kind,
status, attempts - the `not yet` count of BIN/.attempts.json, i.e. how many chapter checks found
it not yet (2 or more: the student has seen the line-range hint) - then, under it, the reason of
every `skipped` (one line per reason: no GPU, a feature the GPU lacks) and the chapters without a
workspace (their rows say `not yet`). It shows no hints and changes no count, so an instructor can
run it on a student's workspace. --workspace=DIR: the student's files are in DIR/NN_name (`make
workspace WORKSPACE=DIR` puts them there), else in NN_name/workspace. --csv=FILE also writes the
table, with each `not yet`'s and `skipped`'s reason, as CSV.
"""
import argparse
import configparser
import csv
import json
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("predict", "fix", "faster")
BEGIN_MARK, END_MARK = "// ---- your change: begin", "// ---- your change: end"
SANITIZERS = ("memcheck", "racecheck", "initcheck", "synccheck")


class Exercise:
    def __init__(self, chapter, name, sec):
        self.chapter, self.name = chapter, name
        self.kind = sec.get("kind", "")
        self.section = sec.get("section", "")
        self.title = sec.get("title", "")
        self.source = sec.get("source", "")
        self.args = sec.get("args", "").split()
        self.sanitizer = [t.strip() for t in sec.get("sanitizer", "").split(",") if t.strip()]
        self.measure = sec.get("measure", "")
        self.target = sec.get("target", "")
        self.expect = sec.get("expect", "")
        self.hint1 = sec.get("hint1", "")
        self.hint2 = sec.get("hint2", "")
        self.lines = sec.get("lines", "")
        self.timeout = int(sec.get("timeout", "120"))
        self.forbidden = [t.strip() for t in sec.get("forbidden", "").split(",") if t.strip()]
        self.required = [t.strip() for t in sec.get("required", "").split(",") if t.strip()]

    @property
    def program(self):
        return self.source[:-3] if self.source.endswith(".cu") else self.source

    def problems(self):
        """What is wrong with this entry of exercises.txt (empty list: nothing)."""
        p = []
        if self.kind not in KINDS:
            p.append(f"kind must be one of {', '.join(KINDS)}")
        for key in ("section", "title", "hint1", "hint2"):
            if not getattr(self, key):
                p.append(f"{key} missing")
        if self.kind == "predict":
            if not self.expect:
                p.append("a predict exercise needs expect")
        elif self.kind in ("fix", "faster"):
            if not self.source.endswith(".cu"):
                p.append("source must name a .cu file")
            if not re.fullmatch(r"\d+-\d+", self.lines):
                p.append("lines must be a range such as 40-52")
            for t in self.sanitizer:
                if t not in SANITIZERS:
                    p.append(f"unknown sanitizer tool {t}")
        if self.kind == "faster":
            if not self.measure or not re.fullmatch(r"(>=|<=)\s*[0-9.]+", self.target):
                p.append("a faster exercise needs measure and target (>= X or <= X)")
            elif re.compile(self.measure).groups != 1:
                p.append("measure needs exactly one group")
        return p


def load(chapter_dir):
    spec = Path(chapter_dir) / "exercises" / "exercises.txt"
    cp = configparser.ConfigParser(interpolation=None, inline_comment_prefixes=None)
    cp.optionxform = str
    cp.read_string(spec.read_text())
    return [Exercise(Path(chapter_dir).name, name, cp[name]) for name in cp.sections()]


def read_answers(path):
    answers = {}
    if path.exists():
        for line in path.read_text().splitlines():
            if line.strip().startswith("#") or "=" not in line:
                continue
            key, _, value = line.partition("=")
            answers[key.strip()] = value.strip()
    return answers


def matches(expect, value):
    value = value.strip()
    if not value:
        return False
    if ".." in expect:
        lo, hi = (float(x) for x in expect.split(".."))
        try:
            return lo <= float(value) <= hi
        except ValueError:
            return False
    try:
        return abs(float(value) - float(expect)) <= 1e-9 * max(1.0, abs(float(expect)))
    except ValueError:
        norm = lambda s: " ".join(s.lower().replace("_", " ").replace("-", " ").split())
        return norm(value) in {norm(w) for w in expect.split("|")}


def run(cmd, cwd, timeout):
    try:
        r = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout, errors="replace")
        return r.returncode, r.stdout, r.stderr
    except subprocess.TimeoutExpired:
        return None, "", f"timed out after {timeout} s"


def last_line(text):
    lines = text.strip().splitlines()
    return lines[-1] if lines else ""


def fence(lines):
    """0-based indices (begin, end) of the two marker lines, or None if they are not one each, in order."""
    b = [i for i, l in enumerate(lines) if l.strip().startswith(BEGIN_MARK)]
    e = [i for i, l in enumerate(lines) if l.strip().startswith(END_MARK)]
    return (b[0], e[0]) if len(b) == 1 and len(e) == 1 and b[0] < e[0] else None


def outside_region(lines, begin, end):
    """(line number, text with whitespace runs collapsed) of every non-blank line outside the region."""
    return [(i + 1, " ".join(l.split())) for i, l in enumerate(lines) if (i <= begin or i >= end) and l.strip()]


KEYWORDS = set("""alignas alignof asm auto bool break case catch char char16_t char32_t class const constexpr
const_cast continue decltype default delete do double dynamic_cast else enum explicit export extern false float
for friend goto if inline int long mutable namespace new noexcept nullptr operator private protected public
register reinterpret_cast return short signed sizeof static static_assert static_cast struct switch template this
thread_local throw true try typedef typeid typename union unsigned using virtual void volatile wchar_t while
__global__ __device__ __host__ __shared__ __constant__ __managed__ __forceinline__ __noinline__ __restrict__
__launch_bounds__ __align__ __attribute__ __declspec __cluster_dims__ __grid_constant__ final override""".split())
# An identifier before a parenthesised argument that declares nothing (__launch_bounds__(256) kernel(...)).
NOT_DECLARED = {"__launch_bounds__", "__align__", "__attribute__", "alignas", "decltype", "sizeof", "alignof",
                "__declspec", "__cluster_dims__", "noexcept", "static_assert"}
# Names no region may use: they end the process, hand it to another, or take over its output, so that
# a verdict printed by the region could be the one make check reads.
PROCESS_NAMES = {"exit", "_exit", "_Exit", "quick_exit", "atexit", "at_quick_exit", "abort", "terminate",
                 "set_terminate", "signal", "sigaction", "raise", "kill", "fork", "vfork", "system", "popen",
                 "execl", "execlp", "execle", "execv", "execvp", "execve", "longjmp", "setjmp", "freopen", "fclose",
                 "dup", "dup2", "close", "setvbuf", "setbuf", "stdout", "stderr", "cout", "cerr", "clog", "rdbuf",
                 "write", "pthread_create", "thread", "async"}
# Names of the CUDA runtime and driver: a region that defines one replaces what the program calls.
RUNTIME_NAME = re.compile(r"(cuda|cu[A-Z]|__cuda|__nv|nv[A-Z])\w*")
TOKEN = re.compile(r"[A-Za-z_]\w*|::|\S")


def strip_code(text):
    """The C++ text without comments, string and character literals (each replaced by a space)."""
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', " ", text, flags=re.S)


def identifiers(text):
    return set(re.findall(r"[A-Za-z_]\w*", strip_code(text))) - KEYWORDS


def declared_names(text, local=False):
    """The names that C++ text declares at namespace scope (namespace and extern "C" blocks are
    looked into): functions and function templates (overloads and specialisations included),
    variables, types, aliases, and `operator` for an operator overload. A declaration inside a
    function, struct or class body is not one: it replaces nothing outside. local: the text is a
    function's body (a region inside main): the names it declares at its own level (`dim3 block(64);`,
    `auto f = ...;`), which hide those of the library and the program in the code after it; a call
    or an assignment (`CHECK(...)`, `grid = ...`) declares nothing."""
    names = set()
    tokens = TOKEN.findall(strip_code(text))
    opaque = 0          # braces entered that are a body (function, class, initializer)
    stack = []          # each open brace: True when it is a body
    first, last, found, init, paren, i = None, None, False, False, 0, 0

    def record(name):
        if not name or name in KEYWORDS:
            return
        if local:  # a declaration: a type (an identifier, `>`, `*`, `&`) just before the name
            before = tokens[i - 2] if i >= 2 and tokens[i - 1] == name else ""
            if not (before in (">", "*", "&", "&&") or (re.fullmatch(r"[A-Za-z_]\w*", before) and before not in
                    ("return", "throw", "case", "goto", "delete", "new", "else", "do", "co_return"))):
                return
        names.add(name)

    while i < len(tokens):
        t = tokens[i]
        if t == "{":
            transparent = not opaque and not found and not init and first in ("namespace", "extern", "inline")
            if not opaque and not found and not init and not transparent and paren == 0 and (
                    not local or first in ("struct", "class", "union", "enum")):
                if last and last not in KEYWORDS:
                    names.add(last)  # struct / class / union / enum NAME {
            stack.append(not transparent)
            opaque += not transparent
            if transparent:
                first, last, found, init, paren = None, None, False, False, 0
        elif t == "}":
            if stack:
                opaque -= stack.pop()
            if not opaque and not init:  # a body ends the statement; `struct S {...} s;` declares s next
                first, last, found, paren = None, None, False, 0
        elif opaque:
            pass
        elif t == "template" and i + 1 < len(tokens) and tokens[i + 1] == "<":
            depth, i = 0, i + 1
            while i < len(tokens):
                depth += {"<": 1, ">": -1}.get(tokens[i], 0)
                if depth == 0:
                    break
                i += 1
        elif t == "operator" and paren == 0 and not init:
            names.add("operator")
            found = True
        elif t == "<" and paren == 0 and not init and tokens[i - 1] == last:
            depth = 0  # template arguments (median<float>(...), std::vector<Args> x): `last` stays
            while i < len(tokens):
                depth += {"<": 1, ">": -1}.get(tokens[i], 0)
                if depth == 0:
                    break
                i += 1
        elif t == "(":
            if paren == 0 and not found and not init and last not in NOT_DECLARED:
                record(last)
                found = True
            paren += 1
        elif t == ")":
            paren = max(0, paren - 1)
        elif paren:
            pass
        elif t in ("=", "["):
            if not found and not init:
                record(last)
                found = True
            init = init or t == "="
        elif t in (";", ","):
            if not found and not init and first != "using":
                record(last)
            found, init = False, False
            if t == ";":
                first, last = None, None
        else:
            if first is None:
                first = t
            if re.fullmatch(r"[A-Za-z_]\w*", t):
                last = t
        i += 1
    return names


def library_names():
    """The names of common/ that a program's code can reach: what its headers and library source
    declare at namespace scope, and every identifier of its macros (a macro's body is compiled where
    it is used, e.g. CHECK's check_cuda). Their functions' local variables are not among them."""
    names = set()
    for f in sorted((ROOT / "common").glob("*")):
        if f.suffix in (".h", ".cuh", ".cpp"):
            text = f.read_text(errors="replace")
            names |= declared_names(re.sub(r"^\s*#.*(?:\\\n.*)*", " ", text, flags=re.M))
            for macro in re.findall(r"^\s*#\s*define\s+(.*(?:\\\n.*)*)", text, flags=re.M):
                names |= identifiers(macro)
    return names


def replaced_names(mine, theirs, f, g):
    """The names the student's region declares that the library or the program outside the region
    uses, other than those the published region declares (the kernel that is the exercise)."""
    region = "\n".join(mine[f[0] + 1:f[1]])
    before = strip_code("\n".join(theirs[:g[0]]))
    local = before.count("{") > before.count("}")  # the region is inside a function's body
    allowed = declared_names("\n".join(theirs[g[0] + 1:g[1]]), local)
    outside = identifiers("\n".join(theirs[:g[0]] + theirs[g[1] + 1:]))
    used = outside | library_names()
    return sorted(n for n in declared_names(region, local) - allowed
                  if n in used or RUNTIME_NAME.fullmatch(n) or n == "operator")


def tampering(ex, src_file, published_file):
    """Why the student's file may not be graded (it differs from the published exercise outside the
    region, or the region holds a preprocessor directive), or '' when it may."""
    mine, theirs = src_file.read_text(errors="replace").splitlines(), published_file.read_text().splitlines()
    f, g = fence(mine), fence(theirs)
    if g is None:
        return f"exercises/{ex.source} has no `your change` markers (a defect of the exercise)"
    if f is None:
        return (f"{ex.source}: the markers `{BEGIN_MARK} ----` and `{END_MARK} ----` must appear once each, "
                f"in that order, as in exercises/{ex.source}; put them back around your change")
    for n in range(f[0] + 1, f[1]):
        words = mine[n].strip().lstrip("#").split()
        if mine[n].strip().startswith("#") and (not words or words[0] != "pragma"):
            return (f"{ex.source} line {n + 1}, inside your region, is a preprocessor directive: only #pragma "
                    f"is allowed there (a macro could rewrite the check that follows)")
    region = strip_code("\n".join(mine[f[0] + 1:f[1]]))
    process = sorted(PROCESS_NAMES & set(re.findall(r"[A-Za-z_]\w*", region)))
    if process:
        return (f"{ex.source}: your region uses `{process[0]}`, which ends the process, starts another or takes "
                f"over its output: the program's own check must have the last word; leave it out")
    used = [n for n in ex.forbidden if re.search(r"\b" + re.escape(n) + r"\b", region)]
    if used:
        return (f"{ex.source}: your region uses `{used[0]}`, which this exercise keeps to the program (its "
                f"record of the work the GPU did, or a way around that record): leave it to the code outside "
                f"the region")
    missing = [t for t in ex.required if " ".join(t.split()) not in " ".join(region.split())]
    if missing:
        return f"{ex.source}: your region must keep `{missing[0]}` (the exercise asks for it: see its opening comment)"
    clash = replaced_names(mine, theirs, f, g)
    if clash:
        what = ", ".join(f"`{n}`" for n in clash[:5])
        return (f"{ex.source}: your region declares {what}, a name that the library (common/), the CUDA "
                f"runtime or the program outside your region uses: a definition or overload there could "
                f"replace what the check or the timing calls. Rename it (or, for an operator, write a function)")
    a, b = outside_region(mine, *f), outside_region(theirs, *g)
    for k in range(max(len(a), len(b))):
        if k < len(a) and k < len(b) and a[k][1] == b[k][1]:
            continue
        mine_at = f"line {a[k][0]}" if k < len(a) else "the end of the file"
        theirs_at = f"line {b[k][0]} (`{b[k][1][:60]}`)" if k < len(b) else "the end of the file"
        return (f"{ex.source} {mine_at}, outside the `your change` markers, is not the published exercise's "
                f"{theirs_at}: only the lines between the markers are yours; restore the rest from "
                f"exercises/{ex.source}")
    return ""


def check_predict(ex, src):
    answers = read_answers(src / "answers.txt")
    if not answers.get(f"{ex.name}.predicted"):
        return "not yet", f"write your prediction first: {ex.name}.predicted = ... in answers.txt"
    measured = answers.get(f"{ex.name}.measured", "")
    if not measured:
        return "not yet", f"now measure, and write {ex.name}.measured = ... in answers.txt"
    if not matches(ex.expect, measured):
        return "not yet", f"{ex.name}.measured = {measured} is not what the measurement shows"
    return "solved", ""


def first_message(binary):
    """The compiler's first error or warning for `binary` (the build keeps its output in .NAME.log)."""
    log = binary.parent / f".{binary.name}.log"
    if not log.exists():
        return "no build log (make exercises builds it and shows why)"
    lines = log.read_text(errors="replace").splitlines()
    first = next((l for l in lines if re.search(r"\b(error|warning)\b", l, re.I)), None) or next(
        (l for l in lines if l.strip()), "the compiler printed nothing")
    return first.strip()[:200]


def check_program(ex, binary):
    """'solved' / 'not yet' / 'skipped', and a reason."""
    if not binary.exists():
        return "not yet", f"{binary.name} did not build: {first_message(binary)}"
    best = None
    for attempt in range(3 if ex.kind == "faster" else 1):
        rc, out, err = run([str(binary), *ex.args], binary.parent, ex.timeout)
        if rc == 77:
            return "skipped", last_line(out) or last_line(err)
        if rc is None:
            return "not yet", f"./{binary.name} {' '.join(ex.args)}: {err}"
        if rc != 0 or last_line(out) != "PASSED":
            what = last_line(out) or last_line(err) or "no output"
            if rc < 0:
                what = f"crashed (signal {-rc})"
            return "not yet", f"the program's own check: {what[:120]}"
        # The program prints its verdict once (and a faster one its figure once): a second one was
        # printed by something else (the region's code, a kernel's printf).
        verdicts = [l for l in out.splitlines() if l.strip() == "PASSED" or l.startswith("FAILED")]
        if len(verdicts) != 1:
            return "not yet", (f"the output has {len(verdicts)} verdict lines (PASSED / FAILED); only the program "
                               f"prints one")
        if ex.kind != "faster":
            break
        found = re.findall(ex.measure, out)
        if not found:
            return "not yet", f"the output has no line that matches {ex.measure!r}"
        if len(found) > 1:
            return "not yet", (f"the output has {len(found)} lines that match {ex.measure!r}; only the program "
                               f"prints its figure, once")
        value = float(found[-1])
        best = value if best is None else (max(best, value) if ex.target.startswith(">=") else min(best, value))
        op, goal = ex.target[:2], float(ex.target[2:])
        if (best >= goal) if op == ">=" else (best <= goal):
            break
    measured = ""
    if ex.kind == "faster":
        op, goal = ex.target[:2], float(ex.target[2:])
        if not ((best >= goal) if op == ">=" else (best <= goal)):
            return "not yet", f"measured {best:g}, the target is {op} {goal:g} (best of 3 runs)"
        measured = f"measured {best:g}, the target is {op} {goal:g}"
    for tool in ex.sanitizer:
        cmd = ["compute-sanitizer", "--tool", tool, "--error-exitcode", "99", "--print-limit", "5"]
        cmd += {"memcheck": ["--leak-check", "full"], "racecheck": ["--racecheck-report", "all"]}.get(tool, [])
        rc, out, err = run(cmd + [str(binary), *ex.args], binary.parent, 5 * ex.timeout)
        if rc is None:
            return "not yet", f"compute-sanitizer --tool {tool}: {err}"
        if rc == 77:
            return "skipped", last_line(out)
        # racecheck ends with "RACECHECK SUMMARY: N hazards displayed (E errors, W warnings)", the
        # other tools with "ERROR SUMMARY: N errors"; a hazard of either severity counts.
        text = out + err
        m = re.search(r"ERROR SUMMARY: (\d+) error", text) or re.search(r"RACECHECK SUMMARY: (\d+) hazard", text)
        if not m or int(m.group(1)) or rc != 0:
            n = m.group(1) if m else "?"
            what = "hazard(s)" if tool == "racecheck" else "error(s)"
            return "not yet", f"compute-sanitizer --tool {tool} reports {n} {what}" + (
                f"; the program exited {rc}" if rc not in (0, 99) else "")
    return "solved", measured


def chapter_dir(name):
    return Path(name).resolve() if Path(name).is_dir() else ROOT / name


def read_attempts(binary_dir):
    try:
        return json.loads((binary_dir / ".attempts.json").read_text())
    except (OSError, ValueError):
        return {}


def grade(chapter, ex, src, binary_dir):
    """(status, why) of one exercise: 'solved' / 'not yet' / 'skipped'."""
    if ex.kind == "predict":
        return check_predict(ex, src)
    if (src / ex.source).exists():
        why = tampering(ex, src / ex.source, chapter / "exercises" / ex.source)
        if why:
            return "not yet", why
    return check_program(ex, binary_dir / ex.program)


def check(args):
    chapter = chapter_dir(args.chapter)
    if not (chapter / "exercises" / "exercises.txt").exists():
        print(f"{chapter.name}: no exercises/exercises.txt", file=sys.stderr)
        return 2
    src = Path(args.src).resolve() if args.src else chapter / "workspace"
    binary_dir = Path(args.bin).resolve() if args.bin else src
    if not src.is_dir():
        print(f"{src} does not exist: make -C {chapter.name} workspace copies the exercises there", file=sys.stderr)
        return 2
    exercises = load(chapter)
    only = set(args.only.split(",")) if args.only else None
    if only and only - {e.name for e in exercises}:
        print(f"no such exercise: {', '.join(sorted(only - {e.name for e in exercises}))}", file=sys.stderr)
        return 2
    attempts = read_attempts(binary_dir)
    width = max(len(e.name) for e in exercises)
    t0 = time.monotonic()
    counts = {"solved": 0, "not yet": 0, "skipped": 0}
    for ex in exercises:
        if only and ex.name not in only:
            continue
        status, why = grade(chapter, ex, src, binary_dir)
        counts[status] += 1
        detail = (f" ({why})" if status == "solved" else f": {why}") if why else ""
        print(f"{ex.name:<{width}}  {status}{detail}", flush=True)
        if status == "not yet":
            attempts[ex.name] = attempts.get(ex.name, 0) + 1
            if not args.no_hints:
                print(f"{'':<{width}}  hint: {ex.hint1}")
                if attempts[ex.name] >= 2:
                    print(f"{'':<{width}}  hint: {ex.hint2}")
    if not args.no_hints:
        try:
            (binary_dir / ".attempts.json").write_text(json.dumps(attempts, indent=1) + "\n")
        except OSError:
            pass
    total = sum(counts.values())
    print(f"{chapter.name}: {counts['solved']} of {total} solved"
          + (f", {counts['skipped']} skipped" if counts["skipped"] else "") + f" ({time.monotonic() - t0:.0f} s)")
    if counts["not yet"]:
        return 1
    return 77 if counts["skipped"] else 0


def table(args):
    """Every chapter's check in one table (and a CSV file); changes no attempt count, shows no hints."""
    names = args.chapters or sorted(p.name for p in ROOT.glob("0[0-9]_*") if (p / "exercises" / "exercises.txt").exists())
    rows, missing = [], []
    start = lambda name: f"make -C {name} workspace" + (f" WORKSPACE={args.workspace}" if args.workspace else "")
    for name in names:
        chapter = chapter_dir(name)
        if not (chapter / "exercises" / "exercises.txt").exists():
            print(f"{name}: no exercises/exercises.txt", file=sys.stderr)
            return 2
        src = Path(args.workspace).resolve() / chapter.name if args.workspace else chapter / "workspace"
        attempts = read_attempts(src)
        t0, solved = time.monotonic(), 0
        exercises = load(chapter)
        if not src.is_dir():
            missing.append(chapter.name)
        for ex in exercises:
            if src.is_dir():
                status, why = grade(chapter, ex, src, src)
            else:
                status, why = "not yet", f"no workspace ({src}): {start(chapter.name)}"
            solved += status == "solved"
            rows.append({"chapter": chapter.name, "exercise": ex.name, "kind": ex.kind, "status": status,
                         "attempts": attempts.get(ex.name, 0), "reason": why})
        done = "no workspace" if not src.is_dir() else f"{solved} of {len(exercises)} solved"
        print(f"checked {chapter.name}: {done} ({time.monotonic() - t0:.0f} s)", file=sys.stderr, flush=True)
    cols = ("chapter", "exercise", "kind", "status", "attempts")
    w = {c: max(len(c), *(len(str(r[c])) for r in rows)) for c in cols}
    print("  ".join(f"{c:<{w[c]}}" for c in cols))
    for r in rows:
        print("  ".join(f"{str(r[c]):<{w[c]}}" for c in cols).rstrip())
    counts = {s: sum(r["status"] == s for r in rows) for s in ("solved", "not yet", "skipped")}
    print(f"{len(rows)} exercises: {counts['solved']} solved, {counts['not yet']} not yet"
          + (f", {counts['skipped']} skipped" if counts["skipped"] else "") + ".")
    # Why: a skipped program's own reason (no GPU, a feature the GPU lacks), one line per reason, and
    # the chapters not started. A `not yet`'s reason is the chapter check's to give, with its hints.
    skipped = {}
    for r in rows:
        if r["status"] == "skipped":
            skipped.setdefault(r["reason"] or "(no reason printed)", []).append(f"{r['chapter']}/{r['exercise']}")
    for why, these in skipped.items():
        which = ", ".join(these) if len(these) <= 3 else f"{len(these)} exercises"
        print(f"skipped ({which}): {why}")
    if missing:
        print(f"not started (no workspace): {', '.join(missing)}; {start('NN_name')} starts one")
    print("Why not yet, with hints: make -C NN_name check" + (f" WORKSPACE={args.workspace}" if args.workspace else ""))
    if args.csv:
        with open(args.csv, "w", newline="") as f:
            out = csv.DictWriter(f, fieldnames=[*cols, "reason"])
            out.writeheader()
            out.writerows(rows)
        print(f"wrote {args.csv}")
    if counts["not yet"]:
        return 1
    return 77 if counts["skipped"] else 0


def list_(args):
    chapter = chapter_dir(args.chapter)
    for ex in load(chapter):
        print(f"{ex.name:<24} {ex.kind:<8} {ex.section}  {ex.title}")
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("check")
    c.add_argument("chapter")
    c.add_argument("--src")
    c.add_argument("--bin")
    c.add_argument("--only")
    c.add_argument("--no-hints", action="store_true")
    c.set_defaults(func=check)
    tb = sub.add_parser("table")
    tb.add_argument("chapters", nargs="*")
    tb.add_argument("--workspace")
    tb.add_argument("--csv")
    tb.set_defaults(func=table)
    l = sub.add_parser("list")
    l.add_argument("chapter")
    l.set_defaults(func=list_)
    a = ap.parse_args()
    return a.func(a)


if __name__ == "__main__":
    sys.exit(main())
