"""The Chinese entry (README.zh-CN.md) and the bilingual glossary (GLOSSARY.md); no GPU needed.

Both files exist; README.md and every chapter README link to them near the top; every program they
name is in tests/manifest.txt (a renamed or removed program fails here, not in front of a reader);
every ncu metric the glossary names is one a chapter's lab.sh, README or exercises uses; every
relative link in the two files points to a file that exists; every program the glossary names, in a
table or a note, is in the manifest and links to its own source; the Chinese entry states the
toolkit floor README.md states and shows every `make` command of README.md's code blocks (the
instructors' `make check WORKSPACE=... CSV=...` and `make plots` included)."""
import re

import pytest
from conftest import ROOT, load_manifest

ZH = ROOT / "README.zh-CN.md"
GLOSSARY = ROOT / "GLOSSARY.md"
CHAPTERS = sorted(p.name for p in ROOT.glob("0[0-9]_*") if p.is_dir())
PROGRAMS = {p.name for p in load_manifest()}
TOP_LINES = 5  # "near the top": the link line sits within the first lines of a README

LINK = re.compile(r"\]\(([^)\s]+)\)")
METRIC = re.compile(r"`([a-z0-9]+__[a-z0-9_.]+)`")


def table_rows(text):
    """The cells of every markdown table row that is neither a header nor a separator."""
    rows, header_next = [], False
    for line in text.splitlines():
        if not line.startswith("|"):
            header_next = True
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if header_next or set(line) <= set("|-: "):
            header_next = False
            continue
        rows.append(cells)
    return rows


def test_files_exist():
    for f in (ZH, GLOSSARY):
        assert f.is_file() and f.read_text().strip(), f"{f.name} is missing or empty"


def test_top_readme_links_both():
    top = "\n".join((ROOT / "README.md").read_text().splitlines()[:TOP_LINES])
    for target in ("README.zh-CN.md", "GLOSSARY.md"):
        assert f"]({target})" in top, f"README.md: no link to {target} in its first {TOP_LINES} lines"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_chapter_readme_links_both(chapter):
    top = "\n".join((ROOT / chapter / "README.md").read_text().splitlines()[:TOP_LINES])
    for target in ("../GLOSSARY.md", "../README.zh-CN.md"):
        assert f"]({target})" in top, f"{chapter}/README.md: no link to {target} in its first {TOP_LINES} lines"


def test_glossary_programs_are_in_the_manifest():
    rows = table_rows(GLOSSARY.read_text())
    assert len(rows) >= 30, f"GLOSSARY.md: only {len(rows)} terms"
    for cells in rows:
        names = re.findall(r"`(\d\d_[a-z0-9_]+/[a-z0-9_]+)`", cells[-1])
        assert names, f"GLOSSARY.md: no program for the row {cells[:2]}"
        for name in names:
            assert name in PROGRAMS, f"GLOSSARY.md names {name}, which tests/manifest.txt does not list"


def test_glossary_metrics_are_used_by_a_chapter():
    used = "".join(f.read_text() for pattern in ("0*/lab.sh", "0*/README.md", "0*/exercises/exercises.txt",
                                                  "0*/exercises/README.md") for f in ROOT.glob(pattern))
    metrics = set(METRIC.findall(GLOSSARY.read_text()))
    assert metrics, "GLOSSARY.md names no ncu metric"
    missing = sorted(m for m in metrics if m not in used)
    assert not missing, f"GLOSSARY.md names ncu metrics no chapter uses: {missing}"


def test_zh_chapter_table_names_existing_programs():
    section = ZH.read_text().split("\n## 各章与手册章节", 1)[1].split("\n## ", 1)[0]
    chapter, seen = None, set()
    for first, _sections, programs, *_points in table_rows(section):
        m = re.search(r"\[(\d\d_[a-z0-9_]+)\]", first)
        if m:
            chapter = m.group(1)
            seen.add(chapter)
        if chapter is None:
            continue
        for prog in re.findall(r"`([a-z0-9_]+)`", programs):
            assert f"{chapter}/{prog}" in PROGRAMS, f"README.zh-CN.md: {chapter}/{prog} is not in tests/manifest.txt"
    assert seen == set(CHAPTERS), f"README.zh-CN.md chapter table: has {sorted(seen)}, the repository {CHAPTERS}"


@pytest.mark.parametrize("doc", [ZH, GLOSSARY], ids=lambda p: p.name)
def test_relative_links_resolve(doc):
    for target in LINK.findall(doc.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = target.split("#")[0]
        assert (ROOT / path).exists(), f"{doc.name}: link to {target}, which does not exist"


PROGRAM_LINK = re.compile(r"\[`(\d\d_[a-z0-9_]+/[a-z0-9_]+)`\]\(([^)\s]+)\)")


def test_glossary_program_names_and_links():
    """Notes included: a program named anywhere in the glossary exists, and its link is its .cu file."""
    text = GLOSSARY.read_text()
    for name in re.findall(r"`(\d\d_[a-z0-9_]+/[a-z0-9_]+)`", text):
        assert name in PROGRAMS, f"GLOSSARY.md names {name}, which tests/manifest.txt does not list"
    links = PROGRAM_LINK.findall(text)
    assert links, "GLOSSARY.md links no program"
    for name, target in links:
        assert target == f"{name}.cu", f"GLOSSARY.md: [`{name}`] links to {target}, not {name}.cu"


def test_zh_states_the_toolkit_floor_of_readme():
    m = re.search(r"CUDA Toolkit \((\d+\.\d+) or newer", (ROOT / "README.md").read_text())
    assert m, "README.md: no 'CUDA Toolkit (X.Y or newer' in its quick start"
    assert f"CUDA Toolkit（{m.group(1)} 或更新" in ZH.read_text(), \
        f"README.zh-CN.md: the quick start does not give README.md's minimum CUDA {m.group(1)}"


def make_commands(text):
    """('make', target, variables) of every make line in the markdown's ```sh blocks."""
    found = set()
    for block in re.findall(r"```sh\n(.*?)```", text, re.S):
        for line in block.splitlines():
            words = line.split("#", 1)[0].split()
            if words[:1] != ["make"]:
                continue
            args = [w for w in words[1:] if not w.startswith("-")]
            target = next((w for w in args if "=" not in w), "")
            found.add((target, tuple(sorted(w.split("=", 1)[0] for w in args if "=" in w))))
    return found


def test_zh_shows_every_make_command_of_readme():
    english, chinese = make_commands((ROOT / "README.md").read_text()), make_commands(ZH.read_text())
    assert english, "README.md: no make command in its ```sh blocks"
    missing = sorted(english - chinese)
    assert not missing, f"README.zh-CN.md: README.md's commands (target, variables) {missing} are not in its ```sh blocks"

