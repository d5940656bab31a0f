#!/usr/bin/env python3
"""The chapter tables of README.md and README.zh-CN.md, written from one source so that they
cannot drift from the programs the Makefiles build.

- README.md, between `<!-- chapter-table ... -->` and `<!-- /chapter-table -->`: the programs
  column of each chapter's row is the chapter's programs in tests/manifest.txt, in its order; the
  other columns (chapter, manual topics, needs beyond CC 7.5) are prose and are kept as written.
- README.zh-CN.md, between the same markers: the whole table, one row per program, written from
  tests/programs_zh.txt (row groups with their manual sections, one 知识点 per program). That file
  must name every program of the manifest exactly once, under its own chapter.

  python3 tools/readme_tables.py update   rewrite both blocks (make readme-results runs it)
  python3 tools/readme_tables.py check    exit 1 if a block differs from what update would write
"""
import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
from manifest import load_manifest  # noqa: E402

README = ROOT / "README.md"
README_ZH = ROOT / "README.zh-CN.md"
SOURCE_ZH = ROOT / "tests" / "programs_zh.txt"

MARK = re.compile(r"(<!-- chapter-table(?:[^>]*)? -->\n)(.*?)(<!-- /chapter-table -->)", re.S)
CHAPTER_LINK = re.compile(r"\[(\d\d_[a-z0-9_]+)\]")
ZH_HEADER = ["| 章 | 手册章节 | 程序 | 知识点 |", "|---|---|---|---|"]


class TableError(Exception):
    pass


def manifest_by_chapter(programs=None):
    """{chapter: [program, ...]} in manifest order."""
    out = {}
    for p in programs if programs is not None else load_manifest():
        chapter, name = p.name.split("/")
        out.setdefault(chapter, []).append(name)
    return out


def parse_zh(path=SOURCE_ZH):
    """tests/programs_zh.txt as [(chapter, [(sections, [(program, 知识点), ...]), ...]), ...]."""
    chapters = []
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        where = f"{path.name}:{lineno}"
        if not line or line.startswith("#"):
            continue
        if line.startswith("[") and line.endswith("]"):
            chapters.append((line[1:-1].strip(), []))
        elif line.startswith(">"):
            if not chapters:
                raise TableError(f"{where}: a row group before the first [chapter]")
            chapters[-1][1].append((line[1:].strip(), []))
        else:
            if not chapters or not chapters[-1][1]:
                raise TableError(f"{where}: a program line before its '> manual sections' line")
            name, sep, point = (c.strip() for c in line.partition("|"))
            if not sep or not name or not point:
                raise TableError(f"{where}: expected 'program | 知识点', got {line!r}")
            if "|" in point:
                raise TableError(f"{where}: '|' inside the 知识点 would split the table cell")
            chapters[-1][1][-1][1].append((name, point))
    return chapters


def zh_problems(chapters, by_chapter):
    """What is wrong in the parsed source against the manifest: a list of sentences."""
    problems, seen = [], {}
    for chapter, groups in chapters:
        if chapter not in by_chapter:
            problems.append(f"{SOURCE_ZH.name}: [{chapter}] is no chapter of tests/manifest.txt")
        if not groups:
            problems.append(f"{SOURCE_ZH.name}: [{chapter}] has no row group")
        for sections, rows in groups:
            if not rows:
                problems.append(f"{SOURCE_ZH.name}: the group '{sections}' of {chapter} has no program")
            for name, _ in rows:
                full = f"{chapter}/{name}"
                if full in seen:
                    problems.append(f"{SOURCE_ZH.name}: {full} is listed twice")
                seen[full] = True
    wanted = {f"{c}/{p}" for c, progs in by_chapter.items() for p in progs}
    for full in sorted(wanted - set(seen)):
        problems.append(f"{SOURCE_ZH.name}: {full} (in tests/manifest.txt) has no line, so no row in "
                        f"README.zh-CN.md's chapter table")
    for full in sorted(set(seen) - wanted):
        problems.append(f"{SOURCE_ZH.name}: {full} is not in tests/manifest.txt")
    order = [c for c, _ in chapters]
    if sorted(order) != order or len(set(order)) != len(order):
        problems.append(f"{SOURCE_ZH.name}: chapters out of order or repeated: {order}")
    return problems


def zh_table(chapters):
    lines = list(ZH_HEADER)
    for chapter, groups in chapters:
        first_of_chapter = True
        for sections, rows in groups:
            for i, (name, point) in enumerate(rows):
                c = f"[{chapter}]({chapter}/README.md)" if first_of_chapter else ""
                s = sections if i == 0 else ""
                lines.append("|" + "|".join(f" {x} " if x else " " for x in (c, s, f"`{name}`", point)) + "|")
                first_of_chapter = False
    return lines


def en_table(body, by_chapter):
    """The English table with each row's programs cell (the third) rewritten from the manifest."""
    out, seen = [], []
    for line in body.splitlines():
        m = CHAPTER_LINK.search(line) if line.startswith("|") else None
        if m:
            chapter = m.group(1)
            cells = line.strip().strip("|").split("|")
            if len(cells) != 4:
                raise TableError(f"README.md chapter table: the row of {chapter} has {len(cells)} cells, not 4")
            if chapter not in by_chapter:
                raise TableError(f"README.md chapter table: {chapter} is no chapter of tests/manifest.txt")
            cells[2] = " " + ", ".join(by_chapter[chapter]) + " "
            line = "|" + "|".join(cells) + "|"
            seen.append(chapter)
        out.append(line)
    missing = sorted(set(by_chapter) - set(seen))
    if missing:
        raise TableError(f"README.md chapter table: no row for {missing}")
    return out


def rewrite(text, make_lines, name):
    blocks = MARK.findall(text)
    if len(blocks) != 1:
        raise TableError(f"{name}: expected one <!-- chapter-table --> ... <!-- /chapter-table --> block, "
                         f"found {len(blocks)}")
    return MARK.sub(lambda m: m.group(1) + "\n".join(make_lines(m.group(2))) + "\n" + m.group(3), text)


def rewrite_en(text, by_chapter=None):
    by_chapter = by_chapter if by_chapter is not None else manifest_by_chapter()
    return rewrite(text, lambda body: en_table(body, by_chapter), "README.md")


def rewrite_zh(text, chapters=None, by_chapter=None):
    chapters = chapters if chapters is not None else parse_zh()
    by_chapter = by_chapter if by_chapter is not None else manifest_by_chapter()
    problems = zh_problems(chapters, by_chapter)
    if problems:
        raise TableError("\n".join(problems))
    return rewrite(text, lambda _body: zh_table(chapters), "README.zh-CN.md")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("command", choices=["update", "check"])
    a = ap.parse_args(argv)
    stale = []
    try:
        for path, fn in ((README, rewrite_en), (README_ZH, rewrite_zh)):
            old = path.read_text()
            new = fn(old)
            if new != old:
                if a.command == "update":
                    path.write_text(new)
                    print(f"readme_tables.py: rewrote the chapter table of {path.name}")
                else:
                    stale.append(path.name)
    except TableError as e:
        print(f"readme_tables.py: {e}", file=sys.stderr)
        return 1
    if stale:
        print(f"readme_tables.py: the chapter table of {', '.join(stale)} is not what "
              f"'python3 tools/readme_tables.py update' writes", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
