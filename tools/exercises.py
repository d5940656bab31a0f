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
directive other than #pragma unroll inside the region is refused too (a macro could rewrite the
code after it). This guards the CPU check and the timing, which lie outside the region.

What the region may name (region_names): an allowlist. Every name in it must be C++'s or CUDA's own
(REGION_KEYWORDS, CUDA_NAMES, STD_NAMES after std::), one that the program's file or the library
uses, or one the region declares itself; none of DENIED_NAMES (what ends the process, starts
another, jumps, prints, or writes to a file or a descriptor, and the library's functions that print
a verdict or exit), no reserved name (leading underscore, __builtin_*) that is not CUDA's, no
extern, asm, goto or attribute other than the standard ones, no throw in a region inside main,
no host variable at namespace scope (namespace_variables: its initializer or constructor runs
before main; a const arithmetic one whose initializer calls nothing is accepted) and no host
declaration without a body there (T name(...); can be such a variable), and none of the
spellings that make the text read differently from what the compiler compiles (raw strings, digit
separators, backslash line joins, unbalanced brackets).

Where the region is compiled (every exercise file, outside its markers): at namespace scope the
region is a namespace of its own, `namespace yours { ... }`, and the code after it calls only the
names that the line `using yours::NAME;` after it lists (the kernel, the functions the exercise
asks for); inside main it is the body of a lambda, `auto your_region = [=, &d]() { ... };
your_region();`, which sees copies of main's variables (const: what it does to them, const_cast
included, changes the copies) except those the capture list names; a return leaves only it. The
functions that the using line names keep their published types (REGION_SIGNATURE, common/guard.h):
no parameter added - a default argument would be host code of the region's that runs at every
launch - none changed to a type with a constructor of the region's, no overload. The region cannot
close either early (its brackets must pair up inside it), nor hold a preprocessor directive other
than #pragma unroll, which must begin its line (a directive after a comment is refused too). So whatever the region declares, in whatever form, is a name of its own that
the code after it does not call - an overload of bench_turns_ms, a local cudaMemcpy, a second
definition of a library function (in the namespace its symbol is yours::..., and extern is
refused) - and an explicit specialization of a library template does not compile there (C++ allows
it only in the template's namespace); a region inside main cannot assign n = 0 before the check.
The compiler's name lookup decides this, not the reading of the text below. The guard lines at the
end of the region (REGION_GUARD, REGION_GUARD_RUNTIME, common/guard.h), inside that namespace or
function, stop the build when the region declares a name that the code after it calls, and check
says `not yet` naming it (guard_stop): not because the declaration could replace it, but so that a
student who tried learns that it would not; region_names refuses what it reads as such a
declaration too (replaced_names), with the forms a guard does not see (template <>, an inline or
constexpr host function named like one of the library, friend).

Code before main: besides the reading of the text (namespace_variables), check_program reads the
built program's static initialization (static_init_problem, with objdump: what its .init_array runs,
the C and CUDA runtimes' own entries aside (INIT_SKIP, exact names), followed into every function of the program it calls or
jumps to) and refuses a call or tail jump to anything but the library's own set-up (INIT_CALLS), a
loop, a computed jump, or a name of namespace yours - whatever the spelling of the variable
(`struct S s;`, `int (x){f()};`), whether g++ or clang laid the code out (the CUDA runtime's entries
are skipped by the names CUDA 13.0 gives them). Straight-line code without calls is not refused: it
can store to a global it can name that is not its own (none was found whose value changes a
verdict). Without objdump (binutils) that check is skipped.

A program's kernel may appear in a region only launched, NAME<<<...>>>, or as a whole argument of
an attribute, cache-configuration, name or occupancy call (KERNEL_QUERIES, kernel_misuse): its address would let a launch bypass the launch
check (a graph's kernel node, cudaLaunchKernel).

What the grader cannot rule out: the region is C++ compiled into the program's process and runs
with all its rights. The checks of its text (region_names, namespace_variables) approximate C++'s
grammar; code written to get past them - a write through an address computed at run time into the
program's memory - is not detected. The run's own check limits what such code could show: one verdict
line (the last) and, for a faster exercise, one line with the figure. Reading a solved region
stays the instructor's job.

Kinds of exercise and what `solved` means:
  predict  answers.txt holds NAME.predicted (anything, written before measuring: it is not graded)
           and NAME.measured, which must match `expect`;
  fix      the program passes its own CPU check (exit 0, last line PASSED) at `args`, every
           compute-sanitizer tool named in `sanitizer` reports no error, and the region has what
           `uses` names (a check of its text, below) and its machine code what `sass` names;
  faster   the same, and the figure that `measure` (a regular expression with one group) finds in
           its output meets `target` (e.g. `>= 1.5`); a run below target is repeated, best of 3.

The region may also not declare a name that the library (common/), the CUDA runtime or the program
outside the region uses, unless the published region declares it too (replaced_names: in its
namespace or function such a declaration replaces nothing, see above, but it reads as if it did;
a local counts only against the code after it in its function - the guard lines - and the macros
that code expands, and a __device__ or __global__ function only against what the program declares
at namespace scope and what device code can reach in the library); may not mention the exercise's
`forbidden` names (the program's record of the work its kernels did, e.g. a __device__ counter, or a
way around it: cudaMemcpyFromSymbol, or a stream capture or graph launch, which the required launch
check cannot follow; the cudaLaunchKernel family is denied to every region, DENIED_NAMES); and must
have each text of `required` (e.g. CHECK_LAUNCH()) as a statement of its
own at the region's level (a launch check may be in a block with its launch instead), a launch check
right after each launch in the same block, each launch a statement that is only the launch, and a
required assignment (wrap_mode's kernel line) the last statement of its block and the only one that
assigns its target (required_statement: a check of the text, which cannot tell whether the check
would fire). A fix exercise whose program's check a correct kernel of any shape passes lists in
`uses` the mechanism its fix is about (racy_count: an atomic function; sum_overflow: the shared-memory
tree's __shared__ and a block barrier; reduce_sync: the same): the region's code, comments and
literals removed, must hold, for each entry, one of its names (NAME|NAME: alternatives) as a whole token
- `NAME()` as a call, `NAME (` - and must not declare any of those names itself (a local `unsigned
atomicAdd` or a __device__ atomicInc of its own; missing_use). grade applies it after a run that
passed, so that an unchanged exercise shows its own failure rather than a reason that names the fix.
It reads the text only: a call in code that never runs passes it, and reading the region stays the
instructor's job. `sass` then reads the built program's machine code (sass_missing: cuobjdump -sass
of the published region's kernel, yours::NAME, with the device functions it calls - not a kernel of
the region's that nobody launches): the same mechanism as instructions (racy_count: an atomic on
global memory, ATOM/RED; sum_overflow and reduce_sync: STS, LDS and BAR.SYNC or BAR.RED), which no
function or variable of the region's own named atomicAdd or __syncthreads compiles to. It reads that
the instructions are there, not that they do the work. A file without machine code (a PTX-only
build), a cuobjdump that fails, or a kernel defined elsewhere than directly in the region is `not
yet`; without cuobjdump only the reading of the text remains.

exercises.txt keys: kind, section (manual section, number and title), title, source (fix/faster:
the .cu file), args, sanitizer (comma list), measure, target, expect (predict: a number, a range
`a .. b`, or words separated by `|`), hint1 (a pointer to the manual section), hint2 (where to
look: a line range of the source, or which figure to read), lines (fix/faster: the line range,
e.g. 40-52, that hint2 points to; the test suite checks that the solution differs from the
exercise only there), forbidden and required (comma lists, above; a required kernel launch may hold
commas inside its <<<...>>> and parentheses), uses (fix/faster: a comma list of entries, each one or
more names separated by `|`, e.g. `__shared__, __syncthreads()|__syncthreads_count()`: the region
must use one name of every entry, a NAME() as a call, above), sass (fix/faster: a comma list of
entries, each one or more SASS opcodes separated by `|`, e.g. `ATOM|RED`: the machine code of the
published region's kernel must hold one opcode of every entry, above), timeout (seconds per run).

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
import functools
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

from cuda_tools import find_tool, parse_sass, tool_env  # tools/cuda_tools.py: cuobjdump for the `sass` rule

ROOT = Path(__file__).resolve().parent.parent
KINDS = ("predict", "fix", "faster")
BEGIN_MARK, END_MARK = "// ---- your change: begin", "// ---- your change: end"
SANITIZERS = ("memcheck", "racecheck", "initcheck", "synccheck")


def split_list(text):
    """A comma list whose items may hold commas inside (), [] or <<<...>>> (a kernel launch)."""
    items, depth, cur, i = [], 0, "", 0
    while i < len(text):
        for tok, d in (("<<<", 1), (">>>", -1)):
            if text.startswith(tok, i):
                depth += d
                cur += tok
                i += 3
                break
        else:
            c = text[i]
            depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(c, 0)
            if c == "," and depth == 0:
                items.append(cur)
                cur = ""
            else:
                cur += c
            i += 1
    return items + [cur]


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
        self.required = [t.strip() for t in split_list(sec.get("required", "")) if t.strip()]
        # uses: a comma list of entries, each one or more names separated by | (alternatives)
        self.uses = [[n.strip() for n in e.split("|") if n.strip()] for e in sec.get("uses", "").split(",")
                     if e.strip()]
        # sass: a comma list of entries, each one or more SASS opcodes separated by | (alternatives)
        self.sass = [[n.strip() for n in e.split("|") if n.strip()] for e in sec.get("sass", "").split(",")
                     if e.strip()]

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
        for alternatives in self.uses:
            for n in alternatives:
                if not re.fullmatch(r"[A-Za-z_]\w*((\s*::\s*|\s+)[A-Za-z_]\w*)*|[A-Za-z_]\w*\(\)", n):
                    p.append(f"uses: `{n}` is not a name (NAME, NAME() for a call, NS::NAME or words such as "
                             f"`long long`)")
        if self.uses and self.kind not in ("fix", "faster"):
            p.append("uses is for a fix or faster exercise")
        for alternatives in self.sass:
            for n in alternatives:
                if not re.fullmatch(r"[A-Z][A-Z0-9_]*(\.[A-Z0-9_]+)*", n):
                    p.append(f"sass: `{n}` is not an opcode (ATOM, BAR.SYNC: capitals, dots)")
        if self.sass and self.kind not in ("fix", "faster"):
            p.append("sass is for a fix or faster exercise")
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
# Type keywords: a name in parentheses after one is declared (`int (n) = 3;`, `auto (f) = ...;`).
TYPE_WORDS = {"void", "bool", "char", "char16_t", "char32_t", "wchar_t", "short", "int", "long", "float", "double",
              "signed", "unsigned", "auto", "const", "volatile"}
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
TOKEN = re.compile(r"[A-Za-z_]\w*|::|->|<<=|>>=|<=|>=|\S")  # `a >= b` is not `>` then `=`


def strip_code(text):
    """The C++ text without comments, string and character literals (each replaced by a space)."""
    return re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', " ", text, flags=re.S)


def identifiers(text):
    return set(re.findall(r"[A-Za-z_]\w*", strip_code(text))) - KEYWORDS


def angle_end(tokens, k):
    """tokens[k] == "<": the index of the `>` that closes it as template arguments, or None when a `;`
    or an unmatched `)`, `]` or `}` comes first (then it is the operator: pad[N < 8], 1 << 2); a `<`
    or `>` inside parentheses, brackets or braces within them is an operator too (B = (2 < 1))."""
    depth, nest = 0, 0
    while k < len(tokens):
        x = tokens[k]
        nest += {"(": 1, ")": -1, "[": 1, "]": -1, "{": 1, "}": -1}.get(x, 0)
        if nest < 0 or x == ";" and not nest:
            return None
        depth += 0 if nest else {"<": 1, ">": -1}.get(x, 0)
        if depth == 0:
            return k
        k += 1
    return None


def angle_start(tokens, k):
    """tokens[k] == ">" closing template arguments: the index of their `<` (walking back)."""
    depth = 0
    while k >= 0:
        depth += {">": 1, "<": -1}.get(tokens[k], 0)
        if depth == 0:
            break
        k -= 1
    return k


def without_class_alignment(text):
    """The text with the alignment of a class dropped (struct __align__(32) Pixel {...}, struct alignas(16)
    V {...}): the scanner reads the class's name after its key."""
    return re.sub(r"\b(struct|class|union)\s+(?:__align__|alignas)\s*\([^()]*\)", r"\1", text)


def declared_names(text, local=False):
    """The names that C++ text declares at namespace scope (namespace and extern "C" blocks are
    looked into): functions and function templates (overloads and specialisations included),
    variables, types, aliases, and `operator` for an operator overload. A declaration inside a
    function, struct or class body is not one: it replaces nothing outside. local: the text is a
    function's body (a region inside main): the names it declares at its own level (`dim3 block(64);`,
    `auto f = ...;`), which hide those of the library and the program in the code after it; a call
    or an assignment (`CHECK(...)`, `grid = ...`) declares nothing."""
    text = without_class_alignment(text)
    names = set()
    tokens = TOKEN.findall(strip_code(text))
    opaque = 0          # braces entered that are a body (function, class, initializer)
    stack = []          # each open brace: True when it is a body
    first, last, found, init, paren, i = None, None, False, False, 0, 0

    def decltype_before(k):  # tokens[k] == ")" closes `decltype(...)`: a type
        depth = 0
        for j in range(k, -1, -1):
            depth += {")": 1, "(": -1}.get(tokens[j], 0)
            if depth == 0:
                return j >= 1 and tokens[j - 1] in ("decltype", "__typeof__", "typeof")
        return False

    def record(name):
        if not name or name in KEYWORDS:
            return
        if local:  # a declaration: a type (an identifier, `>`, `*`, `&`, decltype(...)) just before the name
            before = tokens[i - 2] if i >= 2 and tokens[i - 1] == name else ""
            if not (before in (">", "*", "&", "&&") or (re.fullmatch(r"[A-Za-z_]\w*", before) and before not in
                    ("return", "throw", "case", "goto", "delete", "new", "else", "do", "co_return")) or
                    before == ")" and decltype_before(i - 2)):
                return
        names.add(name)

    while i < len(tokens):
        t = tokens[i]
        if not opaque and not paren and t == "[" and i + 1 < len(tokens) and tokens[i + 1] == "[":
            while i + 1 < len(tokens) and not (tokens[i] == "]" and tokens[i + 1] == "]"):
                i += 1  # an attribute ([[maybe_unused]]): it declares nothing
            i += 2
            continue
        if local and not opaque and not paren and not found and not init and t == "[" and i >= 1 and (
                tokens[i - 1] == "auto" or tokens[i - 1] in ("&", "const", "volatile") and
                "auto" in tokens[max(0, i - 4):i - 1]):
            while i < len(tokens) and tokens[i] != "]":  # a structured binding: auto [a, b] = ...
                if re.fullmatch(r"[A-Za-z_]\w*", tokens[i]):
                    names.add(tokens[i])
                i += 1
            found = True
            i += 1
            continue
        k = 0  # a declarator in parentheses, once or more: auto (name) = ..., int ((n));
        while not opaque and not paren and not found and not init and t == "(" and i + k < len(tokens) and \
                tokens[i + k] == "(":
            k += 1
        if k and i >= 1 and i + 2 * k + 1 < len(tokens) and re.fullmatch(r"[A-Za-z_]\w*", tokens[i + k]) and \
                tokens[i + k] not in KEYWORDS and all(x == ")" for x in tokens[i + k + 1:i + 2 * k + 1]) and (
                tokens[i - 1] in ("&", "*") or tokens[i - 1] in TYPE_WORDS or tokens[i - 1] == ")" and
                decltype_before(i - 1) or local and re.fullmatch(r"[A-Za-z_]\w*", tokens[i - 1]) and
                tokens[i - 1] not in NOT_DECLARED | KEYWORDS and tokens[i + 2 * k + 1] in ("=", "{", "[")):
            names.add(tokens[i + k])
            found = True
            paren, i = 0, i + 2 * k + 1
            continue
        if t == "{":
            if local and not opaque and not found and not init and paren == 0 and last and tokens[i - 1] == last \
                    and first not in ("struct", "class", "union", "enum", "namespace"):
                record(last)  # brace initialisation: dim3 grid{4, 2}; auto f{[&] {...}};
                found = True
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
        elif t == "template" and i + 1 < len(tokens) and tokens[i + 1] == "<" and angle_end(tokens, i + 1) is not None:
            i = angle_end(tokens, i + 1)
        elif t == "operator" and paren == 0 and not init:
            names.add("operator")
            found = True
        elif t == "<" and paren == 0 and not init and tokens[i - 1] == last and angle_end(tokens, i) is not None:
            i = angle_end(tokens, i)  # template arguments (median<float>(...), std::vector<Args> x): `last` stays
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


# What a region's text may name (issue 35, review item 1): an allowlist, not a denylist. The region is
# C++ compiled into the program's process, so this reads its text and refuses what it can recognise;
# see "What the grader cannot rule out" in the module docstring.
# Keywords a region may use (asm, extern, goto, export, register and the attribute keywords are not
# among them: inline assembly, another linkage, a jump past the check, a constructor attribute).
REGION_KEYWORDS = (KEYWORDS | {"and", "or", "not", "xor", "bitand", "bitor", "compl", "and_eq", "or_eq", "xor_eq",
                               "not_eq", "constinit", "consteval", "char8_t", "noexcept", "nullptr"}) - {
    "asm", "extern", "goto", "export", "register", "__attribute__", "__declspec"}
# Statement words after which a name is used, not declared.
STATEMENT_WORDS = {"return", "else", "case", "goto", "new", "delete", "throw", "do", "co_return", "co_yield",
                   "co_await", "sizeof", "alignof", "decltype", "typeid", "operator", "not", "and", "or", "xor",
                   "bitand", "bitor", "compl", "static_assert", "noexcept", "alignas"}
TYPE_KEYWORDS = {"void", "bool", "char", "char8_t", "char16_t", "char32_t", "wchar_t", "short", "int", "long", "float",
                 "double", "signed", "unsigned", "auto", "size_t"}
DECL_SPECIFIERS = {"const", "volatile", "__restrict__", "static", "constexpr", "inline", "__device__", "__host__",
                   "__global__", "__shared__", "__constant__", "__managed__", "__forceinline__", "__noinline__",
                   "mutable", "typename", "struct", "class", "union", "enum", "thread_local", "constinit", "consteval"}
# Names no region may use even where the program uses them or the region seems to declare them: they end
# the process, start another, jump, print, or write to a file, a stream or a descriptor, or reach one.
DENIED_NAMES = PROCESS_NAMES | {
    "main", "printf", "fprintf", "vprintf", "vfprintf", "dprintf", "vdprintf", "puts", "fputs", "putchar", "putc",
    "fputc", "fwrite", "fflush", "perror", "psignal", "putchar_unlocked", "putc_unlocked", "fputc_unlocked",
    "fputs_unlocked", "fwrite_unlocked", "fflush_unlocked", "stdin", "wcout", "wcerr", "ostream", "ofstream",
    "fstream", "filebuf", "streambuf", "basic_ostream", "fopen", "fdopen", "freopen", "tmpfile", "setlinebuf",
    "setbuffer", "open", "openat", "creat", "pwrite", "writev", "pwritev", "sendfile", "splice", "tee", "vmsplice",
    "ioctl", "fcntl", "dup3", "syscall", "on_exit", "pthread_exit", "pthread_kill", "pthread_cancel",
    "pthread_sigqueue", "tkill", "tgkill", "killpg", "sigqueue", "alarm", "ualarm", "setitimer", "siglongjmp",
    "sigsetjmp", "getcontext", "setcontext", "swapcontext", "makecontext", "posix_spawn", "posix_spawnp", "clone",
    "daemon", "execvpe", "fexecve", "dlopen", "dlsym", "dlvsym", "mmap", "mprotect", "munmap", "mremap",
    "ptrace", "prctl", "err", "errx", "warn", "warnx", "verr", "verrx", "vwarn", "vwarnx", "error",
    "error_at_line", "unexpected", "set_unexpected", "jthread", "packaged_task", "invoke", "function",
    "include", "define",
    # the library's and the programs' functions that print a verdict, exit or skip
    "finish", "parse_or_exit", "skip", "require_cc", "require_kernel_arch", "select_device",
    "select_device_built_for", "check_cuda", "host_out_of_memory", "host_oom_handler_installed", "load_image",
    "save_image", "write_csv", "print", "usage", "add_usage", "cuGetProcAddress", "cudaGetDriverEntryPoint",
    "cudaGetDriverEntryPointByVersion", "driver_entry", "cudaLaunchHostFunc", "cudaStreamAddCallback",
    "cudaDeviceReset",
    # launches the required launch checks cannot follow (common/cuda_compat.cuh's loaded-kernel route)
    "launch_loaded", "load_kernel", "cudaGetKernel", "cudaGetFuncBySymbol", "cudaLaunchKernel",
    "cudaLaunchKernelEx", "cudaLaunchKernelExC", "cudaLaunchCooperativeKernel", "cuLaunchKernel",
    "cuLaunchKernelEx", "cuLaunchCooperativeKernel", "cuModuleGetFunction", "cuLibraryGetKernel",
    "cudaLibraryGetKernel", "wprintf", "fwprintf", "vwprintf", "vfwprintf", "putwchar", "putwc", "fputwc", "fputws",
    "basic_ofstream", "basic_fstream", "basic_filebuf", "wofstream", "wfstream", "ostream_iterator",
    "ostreambuf_iterator", "bsd_signal", "sysv_signal", "sigset", "timer_create", "thrd_create", "sleep"}
# Standard-library names a region may use after std:: (what these exercises' kernels and host code need).
STD_NAMES = {"min", "max", "swap", "vector", "array", "pair", "make_pair", "tuple", "initializer_list", "memset",
             "memcpy", "memmove", "abs", "fabs", "sqrt", "floor", "ceil", "round", "lround", "llround", "pow", "exp",
             "log", "log2", "fmin", "fmax", "clamp", "size_t", "ptrdiff_t", "int8_t", "int16_t", "int32_t",
             "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t", "uintptr_t", "numeric_limits", "fill",
             "fill_n", "copy", "copy_n", "accumulate", "iota", "sort", "begin", "end", "size", "data", "move",
             "forward", "min_element", "max_element", "count", "count_if", "equal", "nullptr_t", "unique_ptr",
             "make_unique", "string", "to_string", "ceil", "trunc", "isnan", "isfinite", "popcount", "bit_cast",
             "common_type_t", "is_same_v", "enable_if_t", "remove_cv_t", "decay_t", "declval", "integral_constant"}
# Members of a standard class template a region may name after `std::NAME<...>::`.
STD_MEMBER_NAMES = {"size_type", "difference_type", "value_type", "reference", "const_reference", "pointer",
                    "const_pointer", "iterator", "const_iterator", "reverse_iterator", "const_reverse_iterator",
                    "element_type", "first_type", "second_type", "infinity", "epsilon", "lowest", "quiet_NaN",
                    "digits", "is_signed"}
# C library names a region may use without std:: (<cassert>, <cstring>).
C_NAMES = {"assert", "memset", "memcpy"}
STD_CLASS_TEMPLATES = {"vector", "array", "pair", "tuple", "unique_ptr", "numeric_limits", "initializer_list"}
# CUDA's built-in variables, vector types, and device functions and intrinsics (the CUDA C++ Programming
# Guide's lists), and the standard attributes.
CUDA_NAMES = re.compile(
    r"(threadIdx|blockIdx|blockDim|gridDim|warpSize|dim3|clock|clock64|printf_never|"
    r"(u?(char|short|int|long|longlong)|float|double)[1-4]|make_(u?(char|short|int|long|longlong)|float|double)[1-4]|"
    r"atomic[A-Z]\w*|(tex|surf)(1D|2D|3D|Cubemap)\w*|tex1Dfetch|"
    r"r?sqrtf?|cbrtf?|rcbrtf?|exp(2|10|m1)?f?|log(2|10|1p)?f?|powf?|(a?(sin|cos|tan)h?)f?|atan2f?|sincosf?|"
    r"sincospif?|(sin|cos)pif?|floorf?|ceilf?|truncf?|roundf?|rintf?|l?lrintf?|l?lroundf?|nearbyintf?|fabsf?|"
    r"fminf?|fmaxf?|fmodf?|fmaf?|fdimf?|hypotf?|norm[34]?df?|rnorm[34]?df?|copysignf?|erfc?f?|erfc?invf?|"
    r"[lt]gammaf?|remainderf?|remquof?|ldexpf?|frexpf?|modff?|scalbl?nf?|ilogbf?|logbf?|nextafterf?|"
    r"isnan|isinf|isfinite|signbit|l?l?abs|u?l?l?(min|max)|fdividef|saturatef|"
    r"__(syncthreads(_count|_and|_or)?|syncwarp|shfl(_up|_down|_xor)?_sync|ballot_sync|any_sync|all_sync|"
    r"uni_sync|activemask|match_(any|all)_sync|reduce_(add|min|max|and|or|xor)_sync|threadfence(_block|_system)?|"
    r"nanosleep|ldg|ldcg|ldca|ldcs|ldlu|ldcv|stwb|stcg|stcs|stwt|popcll|popc|clzll|clz|ffsll|ffs|brevll|brev|"
    r"byte_perm|funnelshift_[lr]c?|u?mul24|u?mulhi|u?mul64hi|u?sad|u?r?hadd|dp4a|dp2a_(lo|hi)|isGlobal|isShared|"
    r"isConstant|isLocal|fdividef|(sin|cos|tan|exp|exp10|log|log2|log10|pow|saturate)f|"
    r"[fd](add|sub|mul|div|rcp|sqrt|fma|mul)_r[nzud]|fsqrt_r[nzud]|frsqrt_rn|"
    r"(float|double|int|uint|ll|ull|half|bfloat16|short|ushort)(2|_as_|as)\w+|"
    r"(float|int|uint|ll|ull)_as_(float|int|uint|longlong|double)|double_as_longlong|longlong_as_double|"
    r"(hi|lo)(loint|int)2double|double2(hi|lo)int|trap|assume|prof_trigger)|"
    r"maybe_unused|nodiscard|likely|unlikely|fallthrough|deprecated|unroll|nounroll|"
    r"u?int(8|16|32|64)_t|u?intptr_t|size_t|ptrdiff_t|"
    r"(U?(INT|LONG|LLONG|SHRT|CHAR)|SCHAR|FLT|DBL)_(MAX|MIN|EPSILON))")
_DECL_WORD = re.compile(r"[A-Za-z_]\w*")


def lowest_depth(code, o, c):
    """The lowest nesting depth of the brackets o/c reached in `code`, counted from 0 at its start."""
    depth = low = 0
    for ch in code:
        depth += 1 if ch == o else -1 if ch == c else 0
        low = min(low, depth)
    return low


def region_names(region_text, program_text, local, balance=None):
    """Why the region may not be graded by the names it uses, or '': every name in it must be C++'s or
    CUDA's (REGION_KEYWORDS, CUDA_NAMES, STD_NAMES after std::), one the program's file or the library
    (common/) uses, or one the region declares itself - and none of DENIED_NAMES, nor a reserved name
    (leading underscore) that is not CUDA's. Also refused: raw strings, digit separators and backslash
    line joins (they make the text read differently from what the compiler compiles), unbalanced
    brackets, attributes other than the standard ones, and, inside main, throw (it would end the
    program before the check)."""
    region_text = without_class_alignment(region_text)
    for n, line in enumerate(region_text.splitlines()):
        if line.rstrip().endswith("\\"):
            return "a line ending with a backslash (the compiler joins it to the next: write it on one line)"
    if re.search(r'(\b(u8|u|U|L)?R")', region_text):
        return "a raw string literal (R\"...\"): write an ordinary string"
    no_pp = "\n".join(l for l in region_text.splitlines() if not l.strip().startswith("#"))
    code = re.sub(r'//[^\n]*|/\*.*?\*/|"(?:\\.|[^"\\\n])*"|\'(?:\\.[^\'\n]{0,8}|[^\'\\\n])\'', " ", no_pp, flags=re.S)
    if re.search(r"%:|<%|%>|<:(?!:)|:>", code):
        return "a digraph (%: is #, <% is {, <: is [): write the characters themselves"
    for c, what in (("'", "a digit separator or a character literal of several characters"),
                    ('"', "a string that does not end on its line"), ("\\", "a backslash outside a string"),
                    ("/*", "a comment that is not closed in your region")):
        if c in code:
            return what
    tokens = re.findall(r"[A-Za-z_]\w*|::|->|&&|\[\[|\]\]|<<=|>>=|<=|>=|[0-9][\w.]*|\S", code)
    balance = balance or {}
    for o, c in (("(", ")"), ("{", "}"), ("[", "]")):
        if code.count(o) - code.count(c) != balance.get(o, 0):
            return f"`{o}` and `{c}` that do not pair up as in the published region: close what your region opens"
        if lowest_depth(code, o, c) < 0:  # `} ... {` pairs up in number, but closes what holds the region
            return (f"a `{c}` that closes what your region is in (its namespace or function; the published "
                    f"region closes nothing it did not open): close only what your region opens")
    program = identifiers(program_text)
    lib = library_names()
    word = lambda t: bool(_DECL_WORD.fullmatch(t))
    # The names the region declares: after a type (`int x`, `Foo x`, `float* x`, `std::vector<int> v`), or
    # after a comma in a declaration at the same bracket depth (`int a = 0, *b`).
    declared = set()

    def body_follows(k):  # tokens[k] == "(": the matching ")" is followed by a function body
        depth = 0
        while k < len(tokens):
            depth += {"(": 1, ")": -1}.get(tokens[k], 0)
            if depth == 0:
                break
            k += 1
        k += 1
        while k < len(tokens) and tokens[k] in ("const", "noexcept", "override", "final", "mutable", "->") or (
                k < len(tokens) and k > 0 and tokens[k - 1] == "->" and word(tokens[k])):
            k += 1
        return k < len(tokens) and tokens[k] == "{"

    def std_template(k):  # tokens[k] == ">" closes `std::NAME<...>`, NAME a class template of STD_NAMES
        depth = 0
        while k >= 0:
            depth += {">": 1, "<": -1}.get(tokens[k], 0)
            if depth == 0:
                break
            if tokens[k] in (";", "{", "}", "(", ")"):
                return False
            k -= 1
        return k >= 3 and tokens[k - 1] in STD_CLASS_TEMPLATES and tokens[k - 2] == "::" and tokens[k - 3] == "std"

    constructed = set()
    for i, t in enumerate(tokens):
        if not word(t) or t in REGION_KEYWORDS or i == 0:
            continue
        p = i - 1
        while p >= 0 and tokens[p] in ("*", "&", "&&", "const", "volatile", "__restrict__"):
            p -= 1
        if p < 0:
            continue
        prev, through_ptr = tokens[p], p != i - 1
        calls = i + 1 < len(tokens) and tokens[i + 1] == "("
        if prev == "," and not through_ptr or prev == "," and calls is False:
            # int a = 0, b: a declarator after a comma when the same list began with a declaration
            depth, q = 0, p - 1
            while q >= 0:
                depth += {")": 1, "]": 1, "}": 1, "(": -1, "[": -1, "{": -1}.get(tokens[q], 0)
                if depth < 0 or (depth == 0 and tokens[q] == ";"):
                    break
                q -= 1
            seg = tokens[q + 1:p]
            if len(seg) >= 2 and word(seg[0]) and seg[0] not in STATEMENT_WORDS and any(
                    x in declared and j > 0 and (word(seg[j - 1]) or seg[j - 1] in ("*", "&", ">"))
                    for j, x in enumerate(seg)):
                declared.add(t)
        elif word(prev) and prev not in STATEMENT_WORDS and not through_ptr:
            declared.add(t)  # two names in a row: only a declaration
        elif word(prev) and prev not in STATEMENT_WORDS and (prev in TYPE_KEYWORDS or prev in DECL_SPECIFIERS):
            declared.add(t)  # int* x: a type keyword cannot start an expression
        elif (word(prev) or prev == ">") and prev not in STATEMENT_WORDS and (not calls or body_follows(i + 1)):
            declared.add(t)  # Foo* x or T<U> x (a product or comparison cannot be called on)
        elif prev == ">" and not through_ptr and calls and std_template(p):
            declared.add(t)  # std::vector<int> v(n): a standard class template's object, constructed
            constructed.add(i)
    # Enumerators (enum [class] [NAME] [: TYPE] { A = 1, B }) and the names of a structured binding
    # (auto [a, b] = ...) are declared too.
    for i, t in enumerate(tokens):
        if t == "enum":
            k = i + 1
            while k < len(tokens) and tokens[k] not in ("{", ";"):
                k += 1
            depth, expect = 0, True
            while k < len(tokens):
                depth += {"{": 1, "(": 1, "[": 1, "}": -1, ")": -1, "]": -1}.get(tokens[k], 0)
                if depth == 0:
                    break
                if depth == 1 and word(tokens[k]) and expect:
                    declared.add(tokens[k])
                expect = depth == 1 and tokens[k] in ("{", ",")
                k += 1
        elif t == "[" and i >= 1 and (tokens[i - 1] == "auto" or tokens[i - 1] in ("&", "&&") and i >= 2 and
                                      tokens[i - 2] == "auto"):
            k = i + 1
            while k < len(tokens) and tokens[k] != "]":
                if word(tokens[k]):
                    declared.add(tokens[k])
                k += 1
    # The names the region declares that may be called: its functions and its lambdas. Any other name it
    # declares (a parameter, a variable) is not called: a call of one is a call of something else of that
    # name in another scope (a C library function named like one of its parameters).
    callable_ = {t for i, t in enumerate(tokens) if word(t) and i + 1 < len(tokens) and (
        tokens[i + 1] == "(" and body_follows(i + 1) or tokens[i + 1] == "=" and i + 2 < len(tokens) and tokens[i + 2] == "[")}
    # How many lambda bodies enclose each token (a lambda's `return` does not leave main).
    lambda_depth, stack, depth = [], [], 0
    for i, t in enumerate(tokens):
        if t == "{":
            k = i - 1
            a = k  # a trailing return type of several words (-> unsigned long long, -> std::vector<int>)
            while a >= 0 and a > i - 40 and tokens[a] not in (";", "{", "}", "->", "="):
                a -= 1
            if a >= 0 and tokens[a] == "->":  # a lambda's only: ] (params) [mutable|noexcept|constexpr] ->
                b = a - 1
                while b >= 0 and tokens[b] in ("mutable", "noexcept", "constexpr") or (
                        b >= 3 and tokens[b] == ")" and tokens[b - 3:b - 1] == ["noexcept", "("]):
                    b -= 4 if tokens[b] == ")" else 1  # noexcept(true)
                params_end = b
                if b >= 0 and tokens[b] == ")":
                    d = 0
                    while b >= 0:
                        d += {")": 1, "(": -1}.get(tokens[b], 0)
                        if d == 0:
                            break
                        b -= 1
                    c, d = b - 1, 0  # the `[` of that `]`: a lambda's, not a subscript's (v[0](1)->x)
                    while c >= 0:
                        d += {"]": 1, "[": -1}.get(tokens[c], 0)
                        if d == 0:
                            break
                        c -= 1
                    if b > 0 and tokens[b - 1] == "]" and c >= 0 and (c == 0 or tokens[c - 1] in (
                            "(", ",", "=", "{", ";", "return", "?", ":", "&&", "||", "!")):
                        k = params_end  # a lambda's `[` follows one of these; a subscript's follows a value
            while k >= 0 and (tokens[k] in ("mutable", "noexcept", "constexpr") or word(tokens[k]) and k > 0 and
                              tokens[k - 1] in ("->", "::")) or (k >= 0 and tokens[k] in ("->", "::")):
                k -= 1
            is_lambda = k >= 0 and tokens[k] == "]"
            if k >= 0 and tokens[k] == ")":
                d, k = 0, k
                while k >= 0:
                    d += {")": 1, "(": -1}.get(tokens[k], 0)
                    if d == 0:
                        break
                    k -= 1
                is_lambda = k > 0 and tokens[k - 1] == "]"
            stack.append(is_lambda)
            depth += is_lambda
        elif t == "}" and stack:
            depth -= stack.pop()
        lambda_depth.append(depth)
    # Every name, where it is used.
    for i, t in enumerate(tokens):
        if t == "[[" and not (i + 2 < len(tokens) and tokens[i + 1] in (
                "maybe_unused", "nodiscard", "likely", "unlikely", "fallthrough", "deprecated") and tokens[i + 2] == "]]"):
            return "an attribute other than [[maybe_unused]], [[nodiscard]], [[likely]], [[unlikely]], [[fallthrough]]"
        if not word(t):
            continue
        if t in ("asm", "__asm", "__asm__", "extern", "goto", "__attribute__", "__declspec", "export", "register"):
            return f"`{t}`"
        if local and t in ("co_return", "throw") and not lambda_depth[i]:
            return f"`{t}` inside main (the program's check after your region must run)"
        if t in REGION_KEYWORDS:
            continue
        member = i > 0 and tokens[i - 1] in (".", "->")
        qual = tokens[i - 2] if i >= 2 and tokens[i - 1] == "::" else None
        rooted = i >= 1 and tokens[i - 1] == "::" and (i < 2 or not word(tokens[i - 2]) and tokens[i - 2] != ">")
        if t in DENIED_NAMES or t.startswith("__builtin"):
            return f"`{t}`"
        if qual == ">" and t in STD_MEMBER_NAMES and std_template(i - 2):
            continue  # std::vector<float>::size_type, std::numeric_limits<float>::infinity
        if qual == "std":
            if t not in STD_NAMES:
                return f"`std::{t}`"
            continue
        if member or CUDA_NAMES.fullmatch(t) or t in ("std", "compat") or t in C_NAMES and not qual:
            continue
        if t.startswith("_") and t not in program:
            return f"`{t}`"
        if t in program or t in lib or re.fullmatch(r"cuda[A-Z]\w*|cu[A-Z]\w*", t):
            continue
        if t in declared and not rooted:
            is_call = i + 1 < len(tokens) and tokens[i + 1] == "(" and i not in constructed and not (
                word(tokens[i - 1]) and tokens[i - 1] not in STATEMENT_WORDS)
            if not is_call or t in callable_:
                continue
        return f"`{t}`"
    # Forms through which a region replaces, on the host, a function or class that the code after it
    # calls while the guard lines (common/guard.h) still see one entity (the fourth and fifth reviews of
    # issue 35): an explicit specialization, a host template, an inline definition (the library build
    # inlines the region's copy of a same-signature function and links the library's; constexpr and a
    # friend defined in a class are inline too), and a declarator that hides its name in parentheses.
    def declaration(k, forward):  # the tokens of the declaration around tokens[k], up to its "(" or body
        out = []
        while 0 <= k < len(tokens) and tokens[k] not in ((";", "{", "}", "(", "=") if forward else (";", "{", "}")):
            out.append(tokens[k])
            k += 1 if forward else -1
        return out

    def device_only(decl):
        return ("__device__" in decl or "__global__" in decl) and "__host__" not in decl

    types = program_and_library_types(program_text)

    def protected(n):  # a function or object of the library, the runtime or the program (not a type)
        return word(n) and n not in REGION_KEYWORDS and n not in types and not n.endswith("_t") and (
            n in lib or n in program or bool(RUNTIME_NAME.fullmatch(n)))

    # The types the region names itself (using NAME =, typedef ... NAME;, struct NAME).
    region_types = {tokens[k + 1] for k in range(len(tokens) - 2) if tokens[k] in ("struct", "class", "union", "enum")
                    or tokens[k] == "using" and tokens[k + 2] == "="}
    region_types |= {tokens[k - 1] for k in range(1, len(tokens)) if tokens[k] == ";" and "typedef" in
                     tokens[max(0, k - 12):k]}

    def names_type(k):  # tokens[k] can end a type: a type keyword, a type of the program, the library or
        x = tokens[k]     # the region, a *_t name, or `>` closing a class template's arguments
        if x == ">":
            k = angle_start(tokens, k)
            x = tokens[k - 1] if k >= 1 else ""
            return x in types or x in region_types or x in STD_CLASS_TEMPLATES or x in ("integral_constant",
                                                                                         "function", "tuple")
        return word(x) and (x in TYPE_KEYWORDS or x in types or x in region_types or x.endswith("_t"))

    def type_then_statement_start(k):  # tokens[..k] is a type (and * & const) that begins a declaration
        while k >= 0 and tokens[k] in ("*", "&", "&&", "const", "volatile", "__restrict__"):
            k -= 1
        if k < 0 or not names_type(k):
            return False
        while k >= 0:
            x = tokens[k]
            if x == ">":
                k = angle_start(tokens, k)
            elif x == "]]":  # an attribute: [[nodiscard]]
                while k >= 0 and tokens[k] != "[[":
                    k -= 1
            elif x == ")" and k >= 1:  # alignas(...), __launch_bounds__(...), decltype(...)
                depth = 0
                while k >= 0:
                    depth += {")": 1, "(": -1}.get(tokens[k], 0)
                    if depth == 0:
                        break
                    k -= 1
                k -= 1
                if k < 0 or tokens[k] not in ("alignas", "__launch_bounds__", "decltype", "__align__"):
                    return False
            elif x in (";", "{", "}", ":"):
                return True
            elif not (x in ("::", "*", "&", "&&") or word(x) and (x not in REGION_KEYWORDS or x in TYPE_KEYWORDS or
                                                                  x in DECL_SPECIFIERS)):
                return False
            k -= 1
        return True

    program_globals = declared_names(program_text)
    published = fence(program_text.splitlines())
    if published:  # the exercise's own functions (field_offset, upload) are the region's to define, inline too
        program_globals -= declared_names("\n".join(program_text.splitlines()[published[0] + 1:published[1]]))

    for i, t in enumerate(tokens):
        if t == "friend" and not device_only(declaration(i + 1, True)):
            return ("`friend`: a function defined in a class as a friend is inline, so one with the signature of a "
                    "function the library or the runtime defines replaces it where your region's file calls it, "
                    "and no guard line sees it")
        if t == "template":
            if tokens[i + 1:i + 3] == ["<", ">"]:
                return ("an explicit specialization (`template <>`): it replaces, for one type, a template of the "
                        "library or of the program (the check's Verdict::exact, random_vector) that the code after "
                        "your region calls")
            k = angle_end(tokens, i + 1) if i + 1 < len(tokens) and tokens[i + 1] == "<" else None
            k = i if k is None else k
            if not device_only(declaration(k + 1, True)):
                return ("a template that is not a __device__ or __global__ function: on the host it could overload "
                        "or specialise a function or class that the code after your region calls (write the host "
                        "code without templates)")
        elif t in ("inline", "__inline__", "__inline", "__forceinline__", "constexpr", "consteval") and not (
                i >= 1 and tokens[i - 1] == "if") and not device_only(
                declaration(i - 1, False) + [t] + declaration(i + 1, True)):
            after = declaration(i + 1, True)
            stop = tokens[i + 1 + len(after)] if i + 1 + len(after) < len(tokens) else ""
            named = [x for x in after if word(x) and x not in REGION_KEYWORDS][-1:]
            if stop == "(" and (not named or protected(named[0]) and (named[0] in lib or named[0] in program_globals
                                                                      or RUNTIME_NAME.fullmatch(named[0]))):
                return (f"`{' '.join([t] + named)}` on the host: an inline definition (constexpr is inline too) of a "
                        f"function that the library, the runtime or the program defines is compiled into your region's file in "
                        f"place of theirs, where no guard line sees it (rename it, or leave out `{t}`)")
            if stop != "(" and t in ("inline", "__inline__", "__inline") and not {"constexpr", "const"} & set(
                    declaration(i - 1, False) + after):
                return (f"`{t}` on a variable: its initializer would run before main (make it constexpr, or a "
                        f"local variable of a function)")
        elif t == "(" and type_then_statement_start(i - 1):
            j = i  # a declarator in parentheses, with pointer and reference marks: T (name)(...), T (*(name))(...)
            while j < len(tokens) and tokens[j] in ("(", "*", "&", "&&", "const"):
                j += 1
            opened = tokens[i:j].count("(")
            k = j + 1
            while k < len(tokens) and tokens[k] == ")" and k - j - 1 < opened:
                k += 1
            if j < len(tokens) and protected(tokens[j]) and k - j - 1 == opened and k < len(tokens) and \
                    tokens[k] in ("(", "=", "{", "[", ";", ","):
                return (f"`{tokens[j]}` in parentheses after a type (`{''.join(tokens[i:k])}`): a name of the "
                        f"library, the runtime or the program, which that declares again (write it without the "
                        f"parentheses)")
    return ""


@functools.lru_cache(maxsize=None)
def common_texts():
    """The text of every header and library source of common/ (read once per run of the grader)."""
    return tuple(f.read_text(errors="replace") for f in sorted((ROOT / "common").glob("*"))
                 if f.suffix in (".h", ".cuh", ".cpp"))


def program_and_library_types(program_text):
    """The names that the program's file and the library (common/) declare as types (struct, class,
    union, enum, using NAME =, typedef): `(NAME)(x)` with one of them is a cast, not a declarator."""
    names = set()
    for text in (program_text,) + common_texts():
        code = strip_code(text)
        names |= set(re.findall(r"\b(?:struct|class|union|enum(?:\s+class)?)\s+([A-Za-z_]\w*)", code))
        names |= set(re.findall(r"\busing\s+([A-Za-z_]\w*)\s*=", code))
        names |= set(re.findall(r"\btypedef\b[^;{}]*?\b([A-Za-z_]\w*)\s*;", code))
    return names


def namespace_variables(region_text):
    """The first variable that a region at namespace scope defines other than a constexpr, __device__,
    __constant__ or __managed__ one (a host variable's initializer or constructor runs before main), or ''."""
    code = strip_code("\n".join(l for l in region_text.splitlines() if not l.strip().startswith("#")))
    tokens = re.findall(r"[A-Za-z_]\w*|::|->|[0-9][\w.]*|\S", code)
    seg, depth = [], 0
    word = lambda t: bool(_DECL_WORD.fullmatch(t))
    # A static data member that is inline (C++17) is defined where its class is, and its initializer
    # runs before main like a namespace variable's: refused unless constexpr.
    for m in re.finditer(r"\binline\b([^;{}()=]*?)(=|\{|;)", code):
        before = code[max(0, code.rfind(";", 0, m.start()), code.rfind("{", 0, m.start()),
                          code.rfind("}", 0, m.start())):m.start()]
        if "constexpr" not in m.group(1) + before and "namespace" not in m.group(1):
            names = [x for x in re.findall(r"[A-Za-z_]\w*", m.group(1)) if x not in KEYWORDS]
            return names[-1] if names else "inline"
    for t in tokens:
        if t == "{" and depth == 0 and seg[:1] == ["namespace"]:
            seg = []  # a namespace block: look into it
        elif t == "{":
            depth += 1
            seg.append("{...}") if depth == 1 else None
        elif t == "}":
            if depth == 0:
                seg = []  # the end of a namespace block
            else:
                depth -= 1
                if depth == 0 and seg[:1] not in (["struct"], ["class"], ["union"], ["enum"], ["template"], ["typedef"]) \
                        and "=" not in seg and "(" in seg and len(seg) >= 2 and (
                            seg[-2] in (")", "const", "noexcept", "override", "final", "mutable", "{...}")
                            or "->" in seg[max(k for k, x in enumerate(seg) if x == ")"):]):
                    seg = []  # a function body ends the definition (a brace after `,` is an initializer)
        elif depth:
            pass
        elif t == ";":
            s, seg = seg, []
            if not s or s[0] in ("using", "typedef", "template", "static_assert", "namespace", "friend"):
                continue
            # the specifiers: the tokens before the first initializer or parameter list
            head = s[:min([s.index(x) for x in ("=", "(", "{...}") if x in s] or [len(s)])]
            if {"constexpr", "__device__", "__constant__", "__managed__", "__global__"} & set(head):
                continue
            if s[0] in ("struct", "class", "union", "enum") and (s[-1] == "{...}" or len(s) <= 3):
                continue  # a type (a declarator after its body is a variable)
            if constant_arithmetic(s):
                continue  # const int PAD = 1: initialized before any code runs
            if "(" in s and "=" not in s:
                # T name(...); without a body: a function's declaration, or a variable whose constructor
                # runs before main (int x(f());, S s(FIELDS);, S s("go");) - the text alone cannot tell
                # which without knowing every type, so neither is accepted.
                k = s.index("(")
                if k > 0 and word(s[k - 1]):
                    return "(" + s[k - 1]
            names = [x for x in (s[:s.index("=")] if "=" in s else s) if word(x) and x not in KEYWORDS]
            return names[-1] if names else s[0]
        else:
            seg.append(t)
    return ""


ARITHMETIC_WORDS = {"bool", "char", "short", "int", "long", "float", "double", "signed", "unsigned", "size_t",
                    "int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"}


def constant_arithmetic(s):
    """Whether the tokens `s` of a namespace-scope declaration (without its `;`) define only const
    variables of arithmetic type, each with an `=` initializer that calls nothing (literals, operators,
    names, sizeof): `const int PAD = 1, ROWS2 = 2 * ROWS;`. Its value is computed before any code runs."""
    k = 0
    while k < len(s) and s[k] in ("static", "const", "inline", "std", "::"):
        k += 1
    head = s[:k]
    while k < len(s) and s[k] in ARITHMETIC_WORDS | {"const"}:
        head.append(s[k])
        k += 1
    if "const" not in head or not set(head) & ARITHMETIC_WORDS or "{...}" in s:
        return False
    decls, depth, cur = [], 0, []
    for t in s[k:]:
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(t, 0)
        if t == "," and depth == 0:
            decls.append(cur)
            cur = []
        else:
            cur.append(t)
    decls.append(cur)
    for d in decls:
        if len(d) < 3 or not _DECL_WORD.fullmatch(d[0]) or d[1] != "=":
            return False
        init = d[2:]
        for j, t in enumerate(init):
            if (_DECL_WORD.fullmatch(t) or t == ")") and j + 1 < len(init) and init[j + 1] == "(" and \
                    t not in ("sizeof", "alignof"):
                return False  # a call, f(...) or (f)(...): code that would run before main
            if not (_DECL_WORD.fullmatch(t) or re.fullmatch(r"[0-9][\w.]*", t) or t in "+-*/%()<>=!&|^~?:"):
                return False
    return True


def library_names():
    """The names of common/ that a program's code can reach: what its headers and library source
    declare at namespace scope, and every identifier of its macros (a macro's body is compiled where
    it is used, e.g. CHECK's check_cuda). Their functions' local variables are not among them."""
    names = set()
    for text in common_texts():
        names |= declared_names(re.sub(r"^\s*#.*(?:\\\n.*)*", " ", text, flags=re.M))
        for macro in re.findall(r"^\s*#\s*define\s+(.*(?:\\\n.*)*)", text, flags=re.M):
            names |= identifiers(macro)
    return names


def library_device_names():
    """The names of common/ that device code can reach: its __device__ variables and its __device__
    (or __host__ __device__) functions, e.g. witness.cuh's gpu_witness and witness()."""
    names = set()
    for text in common_texts():
        names |= set(re.findall(r"__device__[^;{}()=]*?\b([A-Za-z_]\w*)\s*[(;=\[]", text))
    return names


def library_macros():
    """{name: the identifiers of its body} for every macro of common/ (its headers and library source)."""
    macros = {}
    for text in common_texts():
        for m in re.finditer(r"^\s*#\s*define\s+([A-Za-z_]\w*)(.*(?:\\\n.*)*)", text, flags=re.M):
            macros[m.group(1)] = macros.get(m.group(1), set()) | identifiers(m.group(2))
    return macros


def in_function_body(before):
    """Whether the code `before` a region leaves a function's body open (the region is inside main), as
    against only namespace blocks (the exercises' `namespace yours {` around a region at namespace scope)."""
    text, stack = strip_code(before), []
    for m in re.finditer(r"[{}]", text):
        if m.group(0) == "{":
            stack.append(bool(re.search(r"\bnamespace(\s+[A-Za-z_]\w*)?\s*$", text[:m.start()])))
        elif stack:
            stack.pop()
    return not all(stack)


def replaced_names(mine, theirs, f, g):
    """The names the student's region declares that the library or the program outside the region
    uses, other than those the published region declares (the kernel that is the exercise)."""
    region = "\n".join(mine[f[0] + 1:f[1]])
    local = in_function_body("\n".join(theirs[:g[0]]))
    allowed = declared_names("\n".join(theirs[g[0] + 1:g[1]]), local)
    after = strip_code("\n".join(theirs[g[1] + 1:]))
    if local:
        # A local name hides others only in the rest of its block: the code after the region up to the
        # brace that closes the block the region is in (other functions' parameters are not there).
        depth, k = 0, len(after)
        for k, c in enumerate(after):
            depth += {"{": 1, "}": -1}.get(c, 0)
            if depth < 0:
                break
        used = identifiers(after[:k])
        macros = library_macros()
        pending = [n for n in used if n in macros]
        while pending:  # a macro's body is compiled where it is expanded (CHECK's check_cuda)
            body = macros.get(pending.pop(), set())
            pending += [n for n in body - used if n in macros]
            used |= body
        return sorted(n for n in declared_names(region, True) - allowed
                      if n in used or RUNTIME_NAME.fullmatch(n))
    # At namespace scope: every name of the program and of the library. A __device__ or __global__
    # function cannot be called from host code, so it replaces none of the library's host functions and
    # none of main's locals: it is checked against what the program declares at namespace scope and
    # what device code can reach in the library (an overload of either could take a call of the
    # program's device code, e.g. of witness.cuh's witness()).
    outside = "\n".join(theirs[:g[0]]) + "\n" + after
    program = identifiers(outside)
    program_globals = declared_names(outside)
    device_only = device_functions(region)
    lib = library_names()
    lib_device = library_device_names()
    return sorted(n for n in declared_names(region) - allowed
                  if ((n in program_globals or n in lib_device) if n in device_only else (n in program or n in lib))
                  or RUNTIME_NAME.fullmatch(n) or n == "operator")


def device_functions(text):
    """The names of the functions that `text` defines as __device__ (not __host__ too) or __global__."""
    names = set()
    code = strip_code(text)
    for m in re.finditer(r"([A-Za-z_]\w*)\s*\(", code):
        start = max(code.rfind(";", 0, m.start()), code.rfind("}", 0, m.start()), code.rfind("{", 0, m.start()))
        head = code[start + 1:m.start()]
        if re.search(r"\b(__device__|__global__)\b", head) and not re.search(r"\b__host__\b", head):
            names.add(m.group(1))
    return names


def launch_form(stmt):
    """Whether the tokens of a statement are a kernel launch and nothing else: NAME[<...>]<<<...>>>(...);"""
    k = 1 if stmt and _DECL_WORD.fullmatch(stmt[0]) else len(stmt)
    if k < len(stmt) and stmt[k] == "<":
        depth = 0
        while k < len(stmt):
            depth += {"<": 1, ">": -1}.get(stmt[k], 0)
            k += 1
            if depth == 0:
                break
    for open_, close in (("<<<", ">>>"), ("(", ")")):
        if k >= len(stmt) or stmt[k] != open_:
            return False
        depth = 0
        while k < len(stmt):
            depth += {open_: 1, close: -1}.get(stmt[k], 0)
            k += 1
            if depth == 0:
                break
    return k == len(stmt) - 1 and stmt[-1] == ";"


def assigned_target(want):
    """The tokens that the statement `want` assigns to (`out [ i ]` in `if (i < n) out[i] = f(i);`), or []."""
    depth = 0
    for k, t in enumerate(want):
        depth += {"(": 1, "[": 1, ")": -1, "]": -1}.get(t, 0)
        if t == "=" and depth == 0 and want[k - 1] not in "=<>!" and want[k + 1] != "=":
            j = k
            while j > 0 and want[j - 1] != ")" and want[j - 1] != ";":
                j -= 1
            return want[j:k]  # after the condition of an `if`, if any
    return []


def required_statement(region, text, level=0):
    """Whether the region (without comments) has `text;` as a statement at brace depth `level` of the
    region (0: its own level, not inside an if, a loop or a block; 1: in a function's body, as the
    published region has it). For CHECK_LAUNCH(): every kernel launch is a statement that is only the
    launch (NAME<<<...>>>(...);) and is followed, in the same block, by CHECK_LAUNCH(); (the launch and
    its check may be inside a block together). For a statement that assigns (wrap_mode's
    `if (i < n) out[i] = tex1D<float>(...)`): it is the last statement of its block, and no other
    statement of the region assigns to the same target. A check of the text: it cannot tell whether the
    check would fire, nor follow a write through another name."""
    tokens = re.findall(r"[A-Za-z_]\w*|<<<|>>>|\S", region)
    want = re.findall(r"[A-Za-z_]\w*|<<<|>>>|\S", text) + [";"]
    check_launch = "CHECK_LAUNCH" in want
    target = [] if check_launch or "<<<" in want else assigned_target(want)
    if target:
        n = len(target)
        writes = sum(1 for k in range(len(tokens) - n) if tokens[k:k + n] == target and tokens[k + n] == "=" and (
            k + n + 1 >= len(tokens) or tokens[k + n + 1] != "=") or tokens[k:k + n] == target and
            tokens[k + n] in "+-*/%&|^" and k + n + 1 < len(tokens) and tokens[k + n + 1] == "=")
        if writes != 1:
            return False  # another statement writes what the required one writes
    depth, paren, stmt_start, found, launch_pending = 0, 0, 0, False, False
    for i, t in enumerate(tokens):
        if t == "(":
            paren += 1
        elif t == ")":
            paren -= 1
        elif t in ("{", "}"):
            if launch_pending and paren == 0:
                return False  # the launch's block ends (or a block starts) before its check
            depth += 1 if t == "{" else -1
            if paren == 0:
                stmt_start = i + 1
        elif t == ";" and paren == 0:
            stmt = tokens[stmt_start:i + 1]
            if launch_pending:
                if stmt != want:
                    return False  # a statement between the launch and its check
                found, launch_pending = True, False
            elif stmt == want and depth == level:
                if target and (i + 1 >= len(tokens) or tokens[i + 1] != "}"):
                    return False  # a statement after it in its block could overwrite what it wrote
                found = True
            if check_launch and "<<<" in stmt:
                if not launch_form(stmt):
                    return False  # the launch statement does something else too (launch, (void)cudaGetLastError();)
                launch_pending = True
            stmt_start = i + 1
    return found and not launch_pending


def required_level(region, text):
    """The brace depth at which the published region has `text;` as a statement (0 if it has none)."""
    return next((d for d in range(4) if required_statement(region, text, d)), 0)


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
        if mine[n].strip().startswith("#") and not re.fullmatch(
                r"#\s*pragma\s+(unroll(\s+(\d+|[A-Za-z_]\w*))?|nounroll)\s*(//.*)?", mine[n].strip()):
            return (f"{ex.source} line {n + 1}, inside your region, is a preprocessor directive: only #pragma unroll "
                    f"is allowed there (a macro could rewrite the check that follows)")
    # A directive after a comment (/**/ #pragma ...) is one too: every # of the code, comments and
    # literals removed, must begin a #pragma unroll line.
    for line in strip_code("\n".join(mine[f[0] + 1:f[1]])).splitlines():
        if "#" in line and not re.fullmatch(r"\s*#\s*pragma\s+(unroll(\s+(\d+|[A-Za-z_]\w*))?|nounroll)\s*", line):
            return (f"{ex.source}: your region has a preprocessor directive (`{line.strip()[:40]}`): only #pragma "
                    f"unroll is allowed there, on a line of its own (a macro or a pragma could rewrite the check "
                    f"that follows)")
    region_text = "\n".join(mine[f[0] + 1:f[1]])
    region = strip_code(region_text)
    local = in_function_body("\n".join(theirs[:g[0]]))
    published = strip_code("\n".join(l for l in theirs[g[0] + 1:g[1]] if not l.strip().startswith("#")))
    balance = {o: published.count(o) - published.count(c) for o, c in (("(", ")"), ("{", "}"), ("[", "]"))}
    problem = region_names(region_text, "\n".join(theirs), local, balance)
    if problem and not re.fullmatch(r"`[^`]+`", problem):  # not a name: what the region has
        return f"{ex.source}: your region has {problem}"
    if problem:
        return (f"{ex.source}: your region uses {problem}, which a region may not use: it may name only C++'s and "
                f"CUDA's own words, the program's and the library's names, and those it declares, and none that "
                f"ends the process, jumps past the check, prints or writes elsewhere (the program's own check must "
                f"have the last word)")
    variable = "" if local else namespace_variables(region_text)
    if variable.startswith("("):
        return (f"{ex.source}: your region declares `{variable[1:]}(...)` without a body at namespace scope: that is "
                f"a function's declaration or a host variable whose constructor would run before main, and this "
                f"check does not tell which. Write the function's definition there, with its body (or make the "
                f"variable constexpr, __device__ or __constant__)")
    if variable:
        return (f"{ex.source}: your region defines `{variable}`, a host variable at namespace scope: its initializer "
                f"or constructor would run before main. Make it constexpr, a __device__ or __constant__ variable, "
                f"or a local variable of a function")
    published_outside = strip_code("\n".join(theirs[:g[0]] + theirs[g[1] + 1:]))
    misused = kernel_misuse(region, published_outside)
    if misused:
        return (f"{ex.source}: your region names the program's kernel `{misused}` other than to launch it "
                f"({misused}<<<...>>>(...)) or to query its attributes or occupancy: through its address a launch "
                f"could bypass the launch check (a graph's kernel node, cudaLaunchKernel)")
    used = [n for n in ex.forbidden if re.search(r"\b" + re.escape(n) + r"\b", region)]
    if used:
        return (f"{ex.source}: your region uses `{used[0]}`, which this exercise keeps to the program (its "
                f"record of the work the GPU did, or a way around that record or around the launch check): leave "
                f"it to the code outside the region")
    published_region = strip_code("\n".join(theirs[g[0] + 1:g[1]]))
    missing = [t for t in ex.required if not required_statement(region, t, required_level(published_region, t))]
    if missing and required_level(published_region, missing[0]):
        return (f"{ex.source}: your region must keep `{missing[0]};` as published, a statement of its own in the "
                f"same function, the last of its block and the only one that assigns what it assigns (the exercise "
                f"asks for the fix elsewhere: see its opening comment; this is a check of the text)")
    if missing:
        return (f"{ex.source}: your region must have `{missing[0]};` as a statement of its own, not inside an if, "
                f"a loop or a block, and, if it is a launch check, right after every kernel launch in the same block "
                f"(the launch and its check may share a block), each launch a statement of its own "
                f"(NAME<<<...>>>(...);) (the exercise asks for it: see its opening comment; this is a check of the "
                f"text, not of what runs)")
    clash = replaced_names(mine, theirs, f, g)
    if clash:
        what = ", ".join(f"`{n}`" for n in clash[:5])
        return (f"{ex.source}: your region declares {what}, a name that the library (common/), the CUDA "
                f"runtime or the program outside your region uses. Inside your region's namespace or function "
                f"it would not replace theirs (the code after your region calls the library's and the "
                f"program's own), so it only misleads: rename it (or, for an operator, write a function)")
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


def has_tokens(tokens, name):
    """Whether the token list `tokens` holds the name `name` (one identifier, NS::NAME or `long long`)
    as whole tokens, in a row; `NAME()` (a function of CUDA's) only where a call follows, `NAME(`."""
    call = name.endswith("()")
    want = TOKEN.findall(name[:-2] if call else name) + (["("] if call else [])
    return any(tokens[k:k + len(want)] == want for k in range(len(tokens) - len(want) + 1))


def declares_itself(tokens, name):
    """Whether the region declares `name` (an identifier) as a variable or function of its own: after
    a type (`unsigned atomicAdd = 0;`, `__device__ unsigned atomicInc(unsigned* p, ...) {`, `__shared__
    long long __syncthreads_or;`), or after * or & that follow a type, as a variable (`int* atomicAdd;`)."""
    word = lambda t: bool(_DECL_WORD.fullmatch(t)) and t not in STATEMENT_WORDS
    for k in range(1, len(tokens)):
        if tokens[k] != name:
            continue
        if word(tokens[k - 1]):
            return True
        if (tokens[k - 1] in ("*", "&") and k >= 2 and word(tokens[k - 2]) and k + 1 < len(tokens) and
                tokens[k + 1] in ("=", ";", ",", ")", "[", "{")):
            return True
    return False


def missing_use(ex, src_file):
    """The exercise's `uses` rule: for each entry, the region's code (comments and literals removed)
    must hold one of its names as a whole token (`NAME()`: called), and none of the names of `uses`
    may be one the region declares itself (a local `unsigned atomicAdd` or a __device__ atomicInc of
    its own would satisfy a reading of the text). The reason for the first entry it lacks, or ''.
    A check of the text: a call in code that never runs passes it (the instructor reads the region)."""
    lines = src_file.read_text(errors="replace").splitlines()
    f = fence(lines)
    if not ex.uses or f is None:
        return ""
    tokens = TOKEN.findall(strip_code("\n".join(lines[f[0] + 1:f[1]])))
    for n in (n[:-2] if n.endswith("()") else n for alternatives in ex.uses for n in alternatives):
        if " " not in n and "::" not in n and n not in REGION_KEYWORDS and declares_itself(tokens, n):
            return (f"{ex.source}: your region declares `{n}` itself, a name of CUDA's that this exercise's "
                    f"check reads as the mechanism of its fix: give yours another name")
    for alternatives in ex.uses:
        if not any(has_tokens(tokens, n) for n in alternatives):
            what = "|".join(alternatives)
            return (f"{ex.source}: your region does not use {what} (the exercise's fix uses "
                    f"{'it' if len(alternatives) == 1 else 'one of them'}: a correct result without it is not "
                    f"what the exercise teaches - its section of exercises/README.md says what this check reads; "
                    f"a check of the text)")
    return ""


def region_kernels(ex):
    """The kernels of the exercise's published region (`__global__ ... NAME(`): the functions whose
    machine code the `sass` rule reads - a kernel of the region's own that the program never launches
    is not one of them."""
    published = ROOT / ex.chapter / "exercises" / ex.source
    if not ex.source or not published.exists():
        return []
    lines = published.read_text().splitlines()
    f = fence(lines)
    region = strip_code("\n".join(lines[f[0] + 1:f[1]])) if f else ""
    return re.findall(r"__global__\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?void\s+(?:__launch_bounds__\s*\([^)]*\)\s*)?"
                      r"([A-Za-z_]\w*)\s*\(", region)


def region_sass(binary, kernels=()):
    """What cuobjdump -sass shows of the built program: (listed, funcs) - listed, whether it printed
    machine code of any function; funcs, {mangled name: [opcode with modifiers]} of the kernels
    `kernels` defined directly in namespace yours (all of its functions when none is named), a
    kernel's listing holding the device functions it calls. (None, reason) when cuobjdump is not found
    (reason '') or fails (reason: its message)."""
    tool = find_tool("cuobjdump")
    if not tool:
        return None, ""
    try:
        r = subprocess.run([tool, "-sass", str(binary)], capture_output=True, text=True, env=tool_env(), timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return None, f"{tool} -sass {binary.name}: {e}"
    if r.returncode != 0:
        return None, f"{tool} -sass {binary.name}: {(r.stderr.strip() or r.stdout.strip())[:200]}"
    prefixes = [f"_ZN5yours{len(k)}{k}E" for k in kernels] or ["_ZN5yours"]
    listed = parse_sass(r.stdout, demangled=False)
    funcs = {name: [op for _, op, _ in body] for name, body in listed.items()
             if any(name.startswith(p) for p in prefixes)}
    return bool(listed), funcs


def sass_missing(ex, binary):
    """The exercise's `sass` rule: for each entry, the machine code of the published region's kernel
    (what cuobjdump -sass prints for yours::NAME, with the device functions it calls) must hold an
    instruction whose opcode is one of the entry's (ATOM is ATOM or ATOM.ANY.MODIFIERS). A function of
    the region's own named like CUDA's that is no atomic or barrier compiles to no such instruction;
    whether the instruction does
    the work, the rule cannot tell (an atomicAdd of 0 beside a serial count passes: the instructor
    reads the region). The reason for the first entry it lacks, or ''. Without cuobjdump: '' (only the
    `uses` reading of the text applies). `not yet` when cuobjdump fails, when the file holds no
    machine code (built for a compute_ architecture only), or when the kernel is not yours::NAME."""
    if not ex.sass:
        return ""
    kernels = region_kernels(ex)
    listed, funcs = region_sass(binary, kernels)
    names = ", ".join(kernels) or "your region's kernel"
    if listed is None:
        return (f"make check could not read the machine code of {names} ({funcs}): it reads it with the CUDA "
                f"Toolkit's cuobjdump, which must be able to read what your nvcc built") if funcs else ""
    if not listed:
        return (f"cuobjdump -sass {binary.name} shows no machine code (built for a compute_ architecture only, "
                f"PTX): delete {binary} and run make check again without ARCH=compute_XX (make does not rebuild a "
                f"program when only the flags changed), so that make check can read the instructions the "
                f"exercise's fix compiles to")
    if not funcs:
        return (f"cuobjdump -sass {binary.name} shows no kernel {names} defined directly in your region (in a "
                f"namespace of its own inside the region?): define {names} in the region itself, as published")
    ops = [op for body in funcs.values() for op in body]
    for alternatives in ex.sass:
        if not any(op == a or op.startswith(a + ".") for op in ops for a in alternatives):
            return (f"the machine code of {names}, the kernel the program launches (cuobjdump -sass {binary.name}, "
                    f"with the device functions it calls), has no {' or '.join(alternatives)} instruction, which "
                    f"the exercise's fix compiles to: the result "
                    f"is right, but not by the mechanism the exercise teaches - its section of exercises/README.md "
                    f"says what this check reads")
    return ""


KERNEL_QUERIES = {"cudaFuncGetAttributes", "cudaFuncSetAttribute", "cudaFuncSetCacheConfig",
                  "cudaOccupancyMaxPotentialBlockSize", "cudaOccupancyMaxPotentialBlockSizeVariableSMem",
                  "cudaOccupancyMaxActiveBlocksPerMultiprocessor", "cudaOccupancyAvailableDynamicSMemPerBlock",
                  "cudaOccupancyMaxActiveBlocksPerMultiprocessorWithFlags", "cudaOccupancyMaxPotentialBlockSizeWithFlags",
                  "cudaOccupancyMaxPotentialBlockSizeVariableSMemWithFlags", "cudaFuncGetName", "cudaFuncGetParamInfo"}


def kernel_misuse(region_code, program_code):
    """A kernel of the program (a __global__ function declared outside the region) that the region names
    other than in a launch, NAME<<<...>>>, or as an argument of an attribute or occupancy query: its
    address would let a launch bypass the launch check (a graph's kernel node, cudaLaunchKernel), or ''."""
    code = re.sub(r"__launch_bounds__\s*\([^()]*\)", " ", program_code)
    kernels = set(re.findall(r"__global__\s+[\w:<>\s]*?\b([A-Za-z_]\w*)\s*\(", code))
    for k in sorted(kernels):
        for m in re.finditer(r"\b" + re.escape(k) + r"\b", region_code):
            if re.match(r"\s*<<<", region_code[m.end():]):
                continue
            depth, j = 0, m.start() - 1
            while j >= 0 and not (region_code[j] == "(" and depth == 0):
                depth += {")": 1, "(": -1}.get(region_code[j], 0)
                j -= 1
            call = re.search(r"([A-Za-z_]\w*)\s*$", region_code[:max(j, 0)]) if j >= 0 else None
            whole = re.search(r"[(,]\s*&?\s*$", region_code[:m.start()]) and re.match(r"\s*[,)]", region_code[m.end():])
            if call and call.group(1) in KERNEL_QUERIES and whole:
                continue  # a whole argument of the query (fp = axpy_2d inside it would keep the address)
            return k
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
    """The compiler's first error or warning for `binary` (the build keeps its output in .NAME.log). When
    it is on a guard line (REGION_GUARD, common/guard.h), what the guard stopped: the name the region
    replaced, then the compiler's words."""
    log = binary.parent / f".{binary.name}.log"
    if not log.exists():
        return "no build log (make exercises builds it and shows why)"
    lines = log.read_text(errors="replace").splitlines()
    first = next((l for l in lines if re.search(r"\b(error|warning)\b", l, re.I)), None) or next(
        (l for l in lines if l.strip()), "the compiler printed nothing")
    guard = guard_stop(first, lines, binary.parent)
    twice = next((l for l in lines if "multiple definition of" in l), None)
    if not guard and twice and first.startswith("collect2"):  # the library build: a second definition
        name = re.search(r"multiple definition of [`'‘]([A-Za-z_]\w*)", twice)
        return (f"the link stopped: your region defines `{name.group(1) if name else '?'}` again, a function the "
                f"library (common/) defines")
    return guard if guard else first.strip()[:200]


def guard_stop(first, lines, folder):
    """'the guard at line N ...' when the compiler's first message `first` is on a REGION_GUARD line of
    its source file, else ''. The name: the one a static_assert message or the compiler's words give,
    else those the line guards."""
    m = re.match(r"\s*(.+?\.cu)(?:\((\d+)\)|:(\d+):)", first)
    if not m:
        return ""
    path = Path(m.group(1)) if Path(m.group(1)).is_absolute() else folder / m.group(1)
    try:
        source = path.read_text(errors="replace").splitlines()
        text = source[int(m.group(2) or m.group(3)) - 1]
    except (OSError, IndexError, ValueError):
        return ""
    guarded = re.findall(r"REGION_GUARD(?:_TYPE)?\(\s*([A-Za-z_]\w*)", text)
    if "REGION_GUARD_RUNTIME" in text:  # the runtime's functions, listed in common/guard.h
        macro = (ROOT / "common" / "guard.h").read_text(errors="replace").split("#define REGION_GUARD_RUNTIME", 1)[-1]
        guarded += re.findall(r"REGION_GUARD\(\s*([A-Za-z_]\w*)", macro)
    if not guarded:
        return ""
    at = m.group(0).strip()
    said = [l for l in lines if l.strip().startswith(at)]
    named = [n for n in guarded if any(re.search(r"\b" + n + r"\b", l[len(at):]) for l in said)] or guarded
    words = first.strip()[len(at):].lstrip(": ").strip()
    return (f"the guard at line {m.group(2) or m.group(3)} stopped the build: your region declares "
            f"{', '.join(f'`{n}`' for n in named)}, which the code after it calls; yours would not replace it "
            f"(the code after your region calls the library's and the program's own): rename it (the compiler: "
            f"{words[:120]})")


# What a program's static initialization may call: the library's inline variables (common/'s
# out-of-memory handler) and what <iostream> registers in some toolchains. Anything else, a loop or a
# symbol of namespace yours there is code of the region that would run before main.
INIT_CALLS = {"_ZSt15set_new_handlerPFvvE", "_ZNSt8ios_base4InitC1Ev", "__cxa_atexit", "atexit",
              "__cxa_guard_acquire", "__cxa_guard_release", "__cxa_guard_abort"}  # (clang guards inline variables)
# .init_array entries that are not the program's own C++ initialization, by their exact names: the C
# runtime's, the CUDA runtime's (statically linked; the names of CUDA 13.0's) and nvcc's registration
# of the file's kernels. The file's own initializers (_GLOBAL__sub_I_*, clang's __cxx_global_var_init*)
# are never skipped, whatever they are named after (a region's first function names them).
INIT_SKIP = re.compile(r"frame_dummy|__do_global_ctors_aux|register_tm_clones|libcudart_static_[0-9a-f]{40}|"
                       r"_ZL24__sti____cudaRegisterAllv")
INIT_OWN = ("_GLOBAL__sub_I_", "_GLOBAL__I_", "__cxx_global_var_init")


def static_init_problem(binary):
    """Why the built program's static initialization (what its .init_array runs before main, followed
    into every function of the program it calls or jumps to) holds code of the student's region, or ''.
    Read from the machine code with objdump, so it does not depend on how the region spelled a
    variable (issue 35: `struct Early started;`, `int (x){f()};`, ...): refused are a call or a tail
    jump to anything but INIT_CALLS or another function of the program (which is followed), a loop, a
    computed jump, and a symbol of namespace yours. '' too when objdump is missing or fails (the
    scanner's checks remain; see the module docstring)."""
    objdump = shutil.which("objdump")
    if not objdump:
        return ""
    dis = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(binary)], capture_output=True, text=True)
    arr = subprocess.run([objdump, "-s", "-j", ".init_array", str(binary)], capture_output=True, text=True)
    if dis.returncode != 0 or arr.returncode != 0:
        return ""
    functions, by_addr = {}, {}
    for block in re.split(r"\n(?=[0-9a-f]+ <)", dis.stdout):
        head = re.match(r"([0-9a-f]+) <([^>]+)>:", block)
        if not head:
            continue
        insns = []
        for line in block.splitlines()[1:]:
            m = re.match(r"\s*([0-9a-f]+):\s+(\S+)\s*(.*)", line)
            if m:
                insns.append((int(m.group(1), 16), m.group(2), m.group(3)))
        functions[head.group(2)] = insns
        by_addr[int(head.group(1), 16)] = head.group(2)
    words = "".join("".join(l.split()[1:5]) for l in arr.stdout.splitlines() if re.match(r"\s[0-9a-f]+ ", l))
    entries = [int.from_bytes(bytes.fromhex(words[k:k + 16]), "little") for k in range(0, len(words) - 15, 16)]
    todo = [by_addr[a] for a in entries
            if a in by_addr and (by_addr[a].startswith(INIT_OWN) or not INIT_SKIP.fullmatch(by_addr[a]))]
    if any(a not in by_addr for a in entries):
        return "starts at an address objdump does not name"
    seen = set()
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        seen.add(name)
        if "5yours" in name and not name.startswith(("_GLOBAL__sub_I_", "_GLOBAL__I_", "__cxx_global_var_init")):
            return f"runs `{name}`, a function of your region"  # (an initializer is named after the file's first function)
        insns = functions.get(name, [])
        addrs = {a for a, _, _ in insns}
        edges = {}
        for k, (a, op, args) in enumerate(insns):
            ref = re.search(r"<([^>+]+)(\+0x[0-9a-f]+)?>", args)
            sym = ref.group(1) if ref else ""
            inside = sym == name
            if "5yours" in sym and not inside:
                return f"refers to `{sym}`, a variable or function of your region"
            if (op.startswith("call") or op.startswith("j")) and "*" in args:
                return f"calls or jumps through a computed address (in {name})"
            target = re.match(r"([0-9a-f]+) <", args)
            if (op.startswith("call") or op.startswith("j")) and target and not inside:
                base = sym.replace("@plt", "")
                if sym.endswith("@plt") or base not in functions:
                    if base not in INIT_CALLS:
                        return f"calls `{base}`"
                else:
                    todo.append(base)  # a function of the program: what it does runs before main too
            succ = []
            if op.startswith("j") and target and int(target.group(1), 16) in addrs:
                succ.append(int(target.group(1), 16))
            if not (op.startswith("jmp") or op.startswith("ret")) and k + 1 < len(insns):
                succ.append(insns[k + 1][0])
            edges[a] = succ
        # a loop: a cycle in the flow between the function's instructions (iterative depth-first search)
        state = {}
        for start in (insns[0][0],) if insns else ():
            stack = [(start, iter(edges.get(start, [])))]
            state[start] = 1
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[node] = 2
                    stack.pop()
                elif state.get(nxt) == 1:
                    return f"loops (in {name})"
                elif nxt not in state:
                    state[nxt] = 1
                    stack.append((nxt, iter(edges.get(nxt, []))))
    return ""


def check_program(ex, binary):
    """'solved' / 'not yet' / 'skipped', and a reason."""
    if not binary.exists():
        return "not yet", f"{binary.name} did not build: {first_message(binary)}"
    early = static_init_problem(binary)
    if early:
        return "not yet", (f"code of your region would run before main: {binary.name}'s static initialization "
                           f"{early} - a host variable at namespace scope, or a class's static data member, whose "
                           f"constructor or initializer is not a constant. Make it constexpr, or a local variable "
                           f"of a function")
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
    status, why = check_program(ex, binary_dir / ex.program)
    # `uses` after a passing run: an unchanged exercise shows its own failure first, not a reason that
    # names the fix; a correct region without the exercise's mechanism is `not yet` all the same.
    if status == "solved" and (src / ex.source).exists():
        missing = missing_use(ex, src / ex.source)
        if missing:
            return "not yet", missing
    if status == "solved":
        missing = sass_missing(ex, binary_dir / ex.program)
        if missing:
            return "not yet", missing
    return status, why


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
