"""Source line references quoted in the READMEs still point at what they say; no GPU needed.

A README quotes `name.cu:N` (or `common/x.cuh:N`, `.../name.cu:N`) in program output (a FAILED line,
a compute-sanitizer frame) and in prose. When the source moves, the number goes stale and the lesson
points a reader at the wrong line. Every such reference in every README of the tree (the files git
lists: tracked, or untracked and not ignored) must resolve to one file of the tree and to a line of it
that holds what the quote says is there:

- `at FUNC(...)+0x... in FILE:N` (a compute-sanitizer frame): line N lies in the body of FUNC (the
  nearest definition above it that starts at column 0 names FUNC) and is a memory access (an index
  `x[...]`, a dereference `*p` or `p->`), the only kind of line such a report can name;
- `... at FILE:N` after `error` or `FAILED:` (what common/check.cuh prints): line N holds a checked
  call, `CHECK...(` (not a comment that mentions CHECK);
- in prose: a code span (`...`) in the same parenthesis as the reference (else the same sentence),
  if there is one, appears on line N ("(`cudaFuncGetAttributes`, compilation.cu:61)"); without a
  code span, line N is code (not blank, not a comment). A reference inside a code span (a FAILED
  line quoted in prose) takes the code spans of the parenthesis right after that span.

The exact line: quoted output (a fenced block, or a code span in prose) is tied to the prose around
it (the paragraphs between the neighbouring fenced blocks or headings). Prose that names a line of
the same file, as `FILE:M` or as `line M` (bound to the output's file), must name the output's
line: output at vector_add.cu:30 with prose "(vector_add.cu:28, the `i <= n` line)" fails. And
`line M is the `code`` / `line M, the `code`` must find that code on line M.

A file is resolved from the README's folder, then the repository root, then as the one file of the
tree whose path ends with the quoted one (prefixes such as `.../`, `../` or an absolute checkout
path are dropped); two candidates are an error: quote more of the path.
"""

import re
import subprocess

import pytest
from conftest import ROOT

SKIP_DIRS = {".git", ".venv", ".mutants", ".devlibs", ".toolkits", ".pytest_cache", "workspace",
             "node_modules", "results", "build"}
SOURCE_EXT = ("cu", "cuh", "h", "hpp", "cpp", "c")
REF = re.compile(r"((?:\.\.\./|[\w.\-]*/)*[\w.\-]+\.(?:" + "|".join(SOURCE_EXT) + r")):(\d+)(?![\d])")
FRAME = re.compile(r"\bat\s+([A-Za-z_][\w:]*)\s*(?:<[^>]*>)?\s*\(.*?\)\+0x[0-9a-f]+\s+in\s+$")
CHECKED = re.compile(r"\b(error|FAILED)\b.*\bat\s+$")
CHECK_CALL = re.compile(r"\bCHECK\w*\s*\(")
ACCESS = re.compile(r"[\w\])]\s*\[|->|(?:^|[=(,;{?:)]|\breturn)\s*\*+\s*\(?[A-Za-z_]")
CODE_SPAN = re.compile(r"`([^`]+)`")
LINE_WORD = re.compile(r"\bline (\d+)\b")
# "line 39 is the `sum +=` loop", "line 69, the `cudaMemcpy2DFromArray` after the launch"
LINE_SPAN = re.compile(r"\bline (\d+)(?:,|\s+is\b)?((?:\s+[A-Za-z']+){0,3}?)\s+`([^`]+)`")
DEF_LINE = re.compile(r"^(?![\s#/}{])(?!(?:if|for|while|switch|return)\b).*?\b([A-Za-z_]\w*)\s*\(")
KEYWORDS = {"__launch_bounds__", "__align__", "template", "alignas", "decltype", "sizeof"}


def tree_files():
    """The files of the working tree that git knows or would add (tracked, or untracked and not
    ignored), so that build outputs, downloaded toolkits and caches are never read. Without git
    (a copy of the tree): every file outside SKIP_DIRS and dot folders."""
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             cwd=ROOT, capture_output=True, check=True, timeout=60).stdout
        paths = [ROOT / x for x in out.decode().split("\0") if x]
    except (OSError, subprocess.SubprocessError):
        paths = [p for p in ROOT.rglob("*")
                 if not any(x in SKIP_DIRS or x.startswith(".") for x in p.relative_to(ROOT).parts[:-1])]
    return sorted(p for p in paths if p.is_file())


def readmes():
    return [p for p in tree_files() if re.fullmatch(r"README.*\.md", p.name)]


def source_files():
    return [p for p in tree_files() if p.suffix[1:] in SOURCE_EXT]


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


def on_line(span, line):
    """A code span is on a line: its text, blanks ignored; `...` in it stands for anything."""
    parts = [norm(x) for x in span.split("...") if norm(x)]
    rest = norm(line)
    for x in parts:
        k = rest.find(x)
        if k < 0:
            return False
        rest = rest[k + len(x):]
    return bool(parts)


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


def code_spans_at(text):
    """(start, end) of each code span of a prose chunk."""
    return [(m.start(), m.end()) for m in CODE_SPAN.finditer(text)]


def paren_after(text, j):
    """The text of a parenthesis that starts at j (blanks skipped), else None."""
    while j < len(text) and text[j] == " ":
        j += 1
    if j >= len(text) or text[j] != "(":
        return None
    depth, in_code = 0, False
    for k in range(j + 1, len(text)):
        c = text[k]
        if c == "`":
            in_code = not in_code
        elif not in_code and c == "(":
            depth += 1
        elif not in_code and c == ")":
            if depth == 0:
                return text[j + 1:k]
            depth -= 1
    return None


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
        inner = paren_after(text, start)
        if inner is not None:
            return inner
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
            out.append((no, None, True))  # a fence line: separates the outputs
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
    where_of = lambda no, quoted, n: (f"{readme.relative_to(ROOT) if ROOT in readme.parents else readme.name}"
                                      f":{no}: {quoted}:{n}")
    # Groups: each fenced block, each prose run (paragraphs between fences or headings).
    groups, cur, kind = [], [], None
    for no, chunk, in_code in blocks(text):
        k = "heading" if (not in_code and chunk.startswith("#")) else ("fence" if in_code else "prose")
        if chunk is None or k == "heading" or k != kind:
            if cur:
                groups.append((kind, cur))
            cur, kind = [], (None if chunk is None or k == "heading" else k)
            if chunk is None or k == "heading":
                groups.append(("break", []))
                continue
        cur.append((no, chunk))
    if cur:
        groups.append((kind, cur))

    outputs = []  # (group index, README line, quoted, path, n, text) of frames / FAILED lines
    prose_refs = []  # (group index, README line, path, n)
    line_words = []  # (group index, README line, m, code span or None)
    for gi, (kind, chunks) in enumerate(groups):
        for no, chunk in chunks:
            if kind == "prose":
                spans = {}
                for m in LINE_WORD.finditer(chunk):
                    spans[m.start()] = None
                for m in LINE_SPAN.finditer(chunk):
                    spans[m.start()] = m.group(3)
                for pos, sp in spans.items():
                    line_words.append((gi, no, int(LINE_WORD.match(chunk, pos).group(1)), sp))
            code_at = code_spans_at(chunk) if kind == "prose" else []
            for m in REF.finditer(chunk):
                quoted, n = m.group(1), int(m.group(2))
                where = where_of(no, quoted, n)
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
                in_span = next(((a, b) for a, b in code_at if a < m.start() < b), None)
                frame = FRAME.search(before)
                checked = CHECKED.search(before[-200:])
                if frame or checked:
                    outputs.append((gi, no, quoted, path, n, line, where))
                if frame:
                    func = frame.group(1).split("::")[-1]
                    names = enclosing_function(lines, n)
                    if func not in names:
                        found.append(f"{where}: the frame names {func}, but line {n} is in "
                                     f"{'/'.join(sorted(names)) or 'no function'}: {line.strip()!r}")
                    elif not (is_code(line) and ACCESS.search(line.split("//")[0])):
                        found.append(f"{where}: a sanitizer frame, but line {n} holds no memory access: "
                                     f"{line.strip()!r}")
                    continue
                if checked:
                    if not (is_code(line) and CHECK_CALL.search(line.split("//")[0])):
                        found.append(f"{where}: an error reported there, but line {n} holds no checked call: "
                                     f"{line.strip()!r}")
                        continue
                    after = paren_after(chunk, in_span[1]) if in_span else None
                    named = CODE_SPAN.findall(after) if after else []
                    if named and not any(on_line(s, line) for s in named):
                        found.append(f"{where}: line {n} is {line.strip()!r}, which has none of "
                                     + ", ".join(f"`{s}`" for s in named))
                    continue
                if kind == "prose":
                    prose_refs.append((gi, no, path, n))
                spans = [] if kind != "prose" else CODE_SPAN.findall(context(chunk, m.start()))
                if spans:
                    if not any(on_line(s, line) for s in spans):
                        found.append(f"{where}: line {n} is {line.strip()!r}, which has none of "
                                     + ", ".join(f"`{s}`" for s in spans))
                elif not is_code(line):
                    found.append(f"{where}: line {n} is not code: {line.strip()!r}")

    # The exact line: the prose next to an output (the runs of prose between the fences or headings
    # around it) that names a line of the output's file must name the output's line.
    def neighbours(gi):
        """Group indices of the prose next to group gi: the prose runs before and after it, up to
        the nearest fenced block or heading (fence lines themselves are breaks)."""
        out = set()
        for step in (-1, 1):
            g, seen_break = gi + step, 0
            while 0 <= g < len(groups):
                kind = groups[g][0]
                if kind == "fence":
                    break
                if kind == "break":
                    seen_break += 1
                    if seen_break > 1:  # the fence line of this block is the first break
                        break
                elif kind == "prose":
                    out.add(g)
                g += step
        return out

    for gi, no, quoted, path, n, line, where in outputs:
        around = neighbours(gi)
        paths_here = {p for g, _, _, p, _, _, _ in outputs if g == gi}
        lines_named = {m for g, _, p, m in prose_refs if g in around and p == path}
        for g, lno, m, sp in line_words:
            if g not in around:
                continue
            if any(g2 == gi and m == n2 for g2, _, _, _, n2, _, _ in outputs) or len(paths_here) == 1:
                lines_named.add(m)
        if lines_named and n not in lines_named:
            found.append(f"{where}: the prose next to this output names line(s) "
                         f"{', '.join(map(str, sorted(lines_named)))} of {path.relative_to(ROOT)}, not {n}")
    for g, lno, m, sp in line_words:
        if sp is None:
            continue
        cands = [(p, n2) for g2, _, _, p, n2, _, _ in outputs if g in neighbours(g2)]
        paths = {p for p, n2 in cands if n2 == m} or {p for p, _ in cands}
        if len(paths) != 1:
            continue
        path = paths.pop()
        lines = cache.setdefault(path, path.read_text(encoding="utf-8", errors="replace").splitlines())
        where = where_of(lno, path.name, m) + " (line " + str(m) + ")"
        if not 1 <= m <= len(lines):
            found.append(f"{where}: {path.relative_to(ROOT)} has {len(lines)} lines")
        elif not on_line(sp, lines[m - 1]):
            found.append(f"{where}: line {m} is {lines[m - 1].strip()!r}, which has no `{sp}`")
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
    n = next(i for i, ln in enumerate(src, 1) if "CHECK(loaded);  // cudaFuncGetAttributes" in ln)
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


def test_issue_31_item_11_fails():
    """The stale quotes of the planted-bug lab (issue 31, item 11) fail in the README's own text:
    the frame at any line of vector_add but the `i <= n` one (the function's first line, its index
    line, the #ifdef lines, the correct `i < n` line), the FAILED line at any line of Results::run
    but its cudaDeviceSynchronize (the review's stale 231, the CHECK_LAUNCH() line above it)."""
    files = source_files()
    readme = ROOT / "01_intro" / "README.md"
    text = readme.read_text(encoding="utf-8")
    assert problems(readme, text, files) == []
    src = (ROOT / "01_intro" / "vector_add.cu").read_text().splitlines()
    bug = next(i for i, ln in enumerate(src, 1) if "if (i <= n)" in ln)
    first = next(i for i, ln in enumerate(src, 1) if ln.startswith("__global__ void vector_add("))
    frame = f"+0x140 in vector_add.cu:{bug}\n"
    assert text.count(frame) == 1
    for n in range(first, first + 7):
        if n != bug:
            assert problems(readme, text.replace(frame, f"+0x140 in vector_add.cu:{n}\n"), files), n
    res = (ROOT / "common" / "results.cuh").read_text().splitlines()
    sync = next(i for i, ln in enumerate(res, 1) if "CHECK(cudaDeviceSynchronize())" in ln)
    assert "CHECK_LAUNCH()" in res[sync - 2]
    failed = f"cudaErrorLaunchFailure at ../common/results.cuh:{sync}\n"
    assert text.count(failed) == 1
    for n in (sync - 1, sync - 6, 231):
        if n != sync:
            assert problems(readme, text.replace(failed, failed.replace(f":{sync}", f":{n}")), files), n
    # a FAILED line needs a checked call, not a line that only mentions CHECK
    chk = (ROOT / "common" / "check.cuh").read_text().splitlines()
    com = next(i for i, ln in enumerate(chk, 1) if "CHECK_LAUNCH()" in ln and ln.startswith("//"))
    assert problems(readme, f"```\nFAILED: CUDA error x at ../common/check.cuh:{com}\n```\n", files)
    # "line M is the `code`" must find the code there
    bad = text.replace("the `i <= n` line", "the `i < n` line")
    assert problems(readme, bad, files)


def test_only_the_tree_is_read():
    """READMEs and sources come from the files git lists (tracked, untracked and not ignored):
    never a downloaded toolkit's, a cache's or a build's."""
    for p in readmes() + source_files():
        rel = p.relative_to(ROOT).parts
        assert not {".toolkits", ".pytest_cache", ".venv", ".devlibs", ".mutants"} & set(rel), p
        assert "workspace" not in rel[:-1], p
