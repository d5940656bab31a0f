"""Source line references quoted in the READMEs still point at what they say; no GPU needed.

A README quotes `name.cu:N` (or `common/x.cuh:N`, `.../name.cu:N`) in program output (a FAILED line,
a compute-sanitizer frame) and in prose. When the source moves, the number goes stale and the lesson
points a reader at the wrong line. Every such reference in every README (the top-level ones, every
chapter's and every exercises/ README) must resolve to one file of the tree and to a line of it that
holds what the quote says is there:

- `at FUNC(...)+0x... in FILE:N` (a compute-sanitizer frame): line N lies in the body of FUNC, i.e.
  the nearest definition above it that starts at column 0 names FUNC;
- `... at FILE:N` after `error` or `FAILED:` (what common/check.cuh prints): line N holds a checked
  call (CHECK, CHECK_LAUNCH, ...);
- in prose: a code span (`...`) in the same parenthesis as the reference (else the same sentence),
  if there is one, appears on line N ("(`cudaFuncGetAttributes`, compilation.cu:61)"); without a
  code span, line N is code (not blank, not a comment).

A file is resolved from the README's folder, then the repository root, then as the one file of the
tree whose path ends with the quoted one (prefixes such as `.../`, `../` or an absolute checkout
path are dropped); two candidates are an error: quote more of the path.
"""
import re

import pytest
from conftest import ROOT

SKIP_DIRS = {".git", ".venv", ".mutants", ".devlibs", "workspace", "node_modules", "results"}
SOURCE_EXT = ("cu", "cuh", "h", "hpp", "cpp", "c")
REF = re.compile(r"((?:\.\.\./|[\w.\-]*/)*[\w.\-]+\.(?:" + "|".join(SOURCE_EXT) + r")):(\d+)(?![\d])")
FRAME = re.compile(r"\bat\s+([A-Za-z_][\w:]*)\s*(?:<[^>]*>)?\s*\(.*?\)\+0x[0-9a-f]+\s+in\s+$")
CHECKED = re.compile(r"\b(error|FAILED)\b.*\bat\s+$")
CODE_SPAN = re.compile(r"`([^`]+)`")
DEF_LINE = re.compile(r"^(?![\s#/}{])(?!(?:if|for|while|switch|return)\b).*?\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"__launch_bounds__", "__align__", "template", "alignas", "decltype", "sizeof"}


def readmes():
    out = []
    for p in sorted(ROOT.rglob("README*.md")):
        if not SKIP_DIRS & set(p.relative_to(ROOT).parts[:-1]):
            out.append(p)
    return out


def source_files():
    files = []
    for ext in SOURCE_EXT:
        for p in ROOT.rglob(f"*.{ext}"):
            if not SKIP_DIRS & set(p.relative_to(ROOT).parts):
                files.append(p)
    return files


def resolve(readme, quoted, files):
    """The file a quoted path names, or (None, why)."""
    q = re.sub(r"^(\.\.\./|/)+", "", quoted)
    for base in (readme.parent, ROOT):
        p = (base / q).resolve()
        if p.is_file() and ROOT in p.parents:
            return p, None
    parts = [x for x in q.split("/") if x not in ("..", ".")]
    for k in range(len(parts), 0, -1):  # the longest suffix of the quoted path that some file has
        tail = "/".join(parts[-k:])
        hits = [f for f in files if f.as_posix().endswith("/" + tail)]
        if len(hits) == 1:
            return hits[0], None
        if len(hits) > 1:
            near = [f for f in hits if readme.parent in f.parents]
            if len(near) == 1:
                return near[0], None
            return None, f"'{quoted}' is ambiguous: " + ", ".join(str(f.relative_to(ROOT)) for f in hits)
    return None, f"'{quoted}' names no file of the tree"


def norm(s):
    return re.sub(r"\s+", "", s)


def is_code(line):
    s = line.strip()
    return bool(s) and not s.startswith(("//", "/*", "*"))


def enclosing_function(lines, n):
    """The names called or defined on the nearest column-0 definition line at or above line n."""
    for i in range(n - 1, -1, -1):
        m = DEF_LINE.match(lines[i])
        if m and not lines[i].rstrip().endswith(";"):
            return {x for x in re.findall(r"\b([A-Za-z_]\w*)\s*\(", lines[i]) if x not in KEYWORDS}
    return set()


def context(text, pos):
    """The text of the parenthesis around pos (code spans skipped), else of its sentence."""
    depth, start = 0, None
    i, in_code = pos - 1, False
    while i >= 0:
        c = text[i]
        if c == "`":
            in_code = not in_code
        elif not in_code and c == ")":
            depth += 1
        elif not in_code and c == "(":
            if depth == 0:
                start = i
                break
            depth -= 1
        i -= 1
    if start is not None:
        depth, j, in_code = 0, pos, False
        while j < len(text):
            c = text[j]
            if c == "`":
                in_code = not in_code
            elif not in_code and c == "(":
                depth += 1
            elif not in_code and c == ")":
                if depth == 0:
                    return text[start + 1:j]
                depth -= 1
            j += 1
    a = max(text.rfind(". ", 0, pos), text.rfind(": ", 0, pos))
    b = min([x for x in (text.find(". ", pos), text.find("; ", pos)) if x >= 0] or [len(text)])
    return text[a + 1:b]


def blocks(text):
    """(first README line number, text, in a code block) for each paragraph and code line."""
    out, para, para_line, fence = [], [], 0, False
    for no, line in enumerate(text.splitlines(), 1):
        if line.lstrip().startswith("```"):
            if para:
                out.append((para_line, " ".join(para), False))
                para = []
            fence = not fence
            continue
        if fence:
            out.append((no, line, True))
        elif not line.strip() or line.lstrip().startswith("|"):
            if para:
                out.append((para_line, " ".join(para), False))
                para = []
            if line.strip():
                out.append((no, line, False))
        else:
            if not para:
                para_line = no
            para.append(line.strip())
    if para:
        out.append((para_line, " ".join(para), False))
    return out


def problems(readme, text, files, cache=None):
    cache = {} if cache is None else cache
    found = []
    for no, chunk, in_code in blocks(text):
        for m in REF.finditer(chunk):
            quoted, n = m.group(1), int(m.group(2))
            where = f"{readme.relative_to(ROOT) if ROOT in readme.parents else readme.name}:{no}: {quoted}:{n}"
            path, why = resolve(readme, quoted, files)
            if path is None:
                found.append(f"{where}: {why}")
                continue
            lines = cache.setdefault(path, path.read_text(encoding="utf-8", errors="replace").splitlines())
            if not 1 <= n <= len(lines):
                found.append(f"{where}: {path.relative_to(ROOT)} has {len(lines)} lines")
                continue
            line = lines[n - 1]
            before = chunk[:m.start()]
            frame = FRAME.search(before)
            if frame:
                func = frame.group(1).split("::")[-1]
                names = enclosing_function(lines, n)
                if func not in names:
                    found.append(f"{where}: the frame names {func}, but line {n} is in "
                                 f"{'/'.join(sorted(names)) or 'no function'}: {line.strip()!r}")
                continue
            if CHECKED.search(before[-200:]):
                if "CHECK" not in line:
                    found.append(f"{where}: an error reported there, but line {n} holds no checked call: "
                                 f"{line.strip()!r}")
                continue
            spans = [] if in_code else CODE_SPAN.findall(context(chunk, m.start()))
            if spans:
                if not any(norm(s) in norm(line) for s in spans):
                    found.append(f"{where}: line {n} is {line.strip()!r}, which has none of "
                                 + ", ".join(f"`{s}`" for s in spans))
            elif not is_code(line):
                found.append(f"{where}: line {n} is not code: {line.strip()!r}")
    return found


@pytest.fixture(scope="module")
def files():
    return source_files()


@pytest.mark.parametrize("readme", readmes(), ids=lambda p: str(p.relative_to(ROOT)))
def test_quoted_lines_current(readme, files):
    found = problems(readme, readme.read_text(encoding="utf-8"), files)
    assert not found, "stale source line references:\n  " + "\n  ".join(found)


def test_a_stale_quote_fails(files):
    """The rules above catch a quote whose line moved (the three kinds of reference)."""
    readme = ROOT / "01_intro" / "README.md"
    src = (ROOT / "01_intro" / "compilation.cu").read_text().splitlines()
    n = next(i for i, ln in enumerate(src, 1) if "CHECK(cudaFuncGetAttributes" in ln)
    good = f"both runs fail at the first load (`cudaFuncGetAttributes`, compilation.cu:{n}).\n"
    assert problems(readme, good, files) == []
    assert problems(readme, good.replace(f":{n})", f":{n - 4})"), files)
    src = (ROOT / "01_intro" / "vector_add.cu").read_text().splitlines()
    k = next(i for i, ln in enumerate(src, 1) if "if (i <= n)" in ln)
    frame = "```\n=========     at vector_add(const float *, float *)+0x140 in vector_add.cu:{}\n```\n"
    assert problems(readme, frame.format(k), files) == []
    assert problems(readme, frame.format(k + 40), files)  # in main, not in the kernel
    assert problems(readme, "```\nFAILED: CUDA error cudaErrorLaunchFailure at vector_add.cu:1\n```\n", files)
    assert problems(readme, "(see nothing_here.cu:3)\n", files)
