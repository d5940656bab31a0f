"""The chapter tables of README.md and README.zh-CN.md (tools/readme_tables.py); no GPU needed.

Every program of tests/manifest.txt is in both tables, under its own chapter; the Chinese table has
a 知识点 for every program; the committed READMEs are exactly what `tools/readme_tables.py update`
writes, so an edit by hand or a program added to the manifest without `make readme-results` fails
here. The last tests feed the tool a manifest with one more program and check that it refuses."""
import re
import sys

import pytest
from conftest import ROOT, load_manifest

sys.path.insert(0, str(ROOT / "tools"))
import readme_tables as rt  # noqa: E402

PROGRAMS = [p.name for p in load_manifest()]


def block(path):
    found = rt.MARK.findall(path.read_text())
    assert len(found) == 1, f"{path.name}: expected one chapter-table block, found {len(found)}"
    return found[0][1]


def table_programs(path, column):
    """{chapter/program} named in the given column (0-based) of the chapter table's rows."""
    names, chapter = set(), None
    for line in block(path).splitlines():
        if not line.startswith("|") or set(line) <= set("|-: "):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        m = rt.CHAPTER_LINK.search(cells[0])
        if m:
            chapter = m.group(1)
        if chapter is None:
            continue  # the header
        for name in re.findall(r"[a-z0-9_]+", cells[column].replace("`", " ")):
            names.add(f"{chapter}/{name}")
    return names


@pytest.mark.parametrize("path,column", [(rt.README, 2), (rt.README_ZH, 2)], ids=["README.md", "README.zh-CN.md"])
def test_every_manifest_program_is_in_the_table(path, column):
    names = table_programs(path, column)
    missing = [p for p in PROGRAMS if p not in names]
    assert not missing, f"{path.name}: the chapter table leaves out {missing}"
    extra = sorted(names - set(PROGRAMS))
    assert not extra, f"{path.name}: the chapter table names {extra}, which tests/manifest.txt does not"


def test_every_program_has_a_point():
    rows = [cells for cells in (l.strip().strip("|").split("|") for l in block(rt.README_ZH).splitlines()[2:])]
    assert len(rows) == len(PROGRAMS), f"README.zh-CN.md: {len(rows)} table rows for {len(PROGRAMS)} programs"
    for cells in rows:
        assert len(cells) == 4, f"README.zh-CN.md: a chapter-table row with {len(cells)} cells: {cells}"
        point = cells[3].strip()
        assert len(point) >= 10 and re.search(r"[\u4e00-\u9fff]", point), \
            f"README.zh-CN.md: {cells[2].strip()} has no 知识点 in Chinese: {point!r}"


def test_source_matches_the_manifest():
    problems = rt.zh_problems(rt.parse_zh(), rt.manifest_by_chapter())
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path,fn", [(rt.README, rt.rewrite_en), (rt.README_ZH, rt.rewrite_zh)],
                         ids=["README.md", "README.zh-CN.md"])
def test_committed_table_is_generated(path, fn):
    text = path.read_text()
    assert fn(text) == text, (f"{path.name}: the chapter table is not what tools/readme_tables.py writes; "
                              f"run `make readme-results` (or python3 tools/readme_tables.py update)")


def test_only_the_table_block_changes():
    text = rt.README.read_text()
    stale = text.replace(", atomic_half |", " |", 1)
    assert stale != text
    assert rt.rewrite_en(stale) == text


def with_extra_program():
    by = rt.manifest_by_chapter()
    by["01_intro"] = by["01_intro"] + ["new_program"]
    return by


def test_a_new_manifest_program_fails_both():
    by = with_extra_program()
    en = rt.rewrite_en(rt.README.read_text(), by)
    assert "new_program" in block_text(en)  # the English column follows the manifest by itself ...
    assert rt.rewrite_en(rt.README.read_text()) != en  # ... so the committed README is then stale
    with pytest.raises(rt.TableError, match="01_intro/new_program"):
        rt.rewrite_zh(rt.README_ZH.read_text(), by_chapter=by)  # ... and the Chinese one needs its line


def test_a_dropped_line_fails():
    chapters = rt.parse_zh()
    chapter, groups = chapters[3]
    groups[0][1].pop()
    problems = rt.zh_problems(chapters, rt.manifest_by_chapter())
    assert any("has no line" in p for p in problems), problems


def block_text(text):
    return rt.MARK.search(text).group(2)
