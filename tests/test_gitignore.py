"""The .gitignore hides build outputs and nothing else: a new source, text file, image or script
in a chapter folder must show up in `git status`, and every program a chapter's Makefile builds
must not. Runs for every chapter folder, including ones added later, without any edit here."""
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from conftest import ROOT

CHAPTERS = sorted(p.name for p in ROOT.glob("0[0-9]_*") if p.is_dir())

# Files a chapter author may add; none of them may be ignored.
SOURCES = ["x.cu", "x.cuh", "x.h", "x.cpp", "x.hpp", "x.c", "x.txt", "x.md", "x.py", "x.sh",
           "x.png", "x.csv", "x.json", "x.ptx", "Makefile", "plot.py", "lab.sh", "README.md",
           "figures/x.png", "figures/x.csv", "figures/x", "data/x", "data/x.bin", "sub/dir/x.cu"]
# Build outputs (besides the programs themselves); all of them must be ignored.
OUTPUTS = ["x.o", "x.sass", "x.regs",
           # a student's workspace (make workspace): copies of the exercises and what they build
           "workspace/x.cu", "workspace/x", "workspace/answers.txt"]


def git(*args, stdin=None, cwd=ROOT):
    return subprocess.run(["git", "-C", str(cwd), *args], input=stdin, capture_output=True, text=True)


def not_own_checkout(root):
    """Why these tests cannot judge root's .gitignore, or None when root is the top of its own git
    checkout. An archive of the tree (git archive) unpacked outside any checkout has no git at all;
    unpacked inside another repository (a course repository that vendors this one), git would
    answer with that repository's rules and files, so the tests must not ask it either."""
    if shutil.which("git") is None:
        return "git is not installed"
    r = git("rev-parse", "--show-toplevel", cwd=root)
    if r.returncode != 0:
        return f"not a git checkout ({r.stderr.strip().splitlines()[-1] if r.stderr.strip() else 'git rev-parse failed'})"
    top = Path(r.stdout.strip()).resolve()
    if top != Path(root).resolve():
        return f"not the top of its own git checkout: {root} is inside {top}"
    return None


WHY_NOT = not_own_checkout(ROOT)
needs_checkout = pytest.mark.skipif(WHY_NOT is not None, reason=f".gitignore not tested: {WHY_NOT}")


def ignored(paths):
    """The subset of paths that .gitignore ignores (--no-index: judged by the rules, tracked or not)."""
    r = git("check-ignore", "--no-index", "--stdin", stdin="".join(p + "\n" for p in paths))
    assert r.returncode in (0, 1), r.stderr
    return set(r.stdout.split())


def programs(chapter):
    r = subprocess.run(["make", "-s", "--no-print-directory", "-C", str(ROOT / chapter), "list"],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    return r.stdout.split()


@needs_checkout
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_sources_are_not_ignored(chapter):
    paths = [f"{chapter}/{name}" for name in SOURCES]
    paths += [f"{chapter}/{p}.cu" for p in programs(chapter)]
    assert ignored(paths) == set(), "ignored although not a build output"


@needs_checkout
@pytest.mark.parametrize("chapter", CHAPTERS)
def test_build_outputs_are_ignored(chapter):
    paths = [f"{chapter}/{p}" for p in programs(chapter)] + [f"{chapter}/{name}" for name in OUTPUTS]
    assert set(paths) - ignored(paths) == set(), "build outputs that git would show as untracked"


@needs_checkout
def test_everything_ignored_in_a_chapter_is_a_build_output():
    """What git ignores right now in the chapter folders: programs, *.o / *.sass / *.regs, Python
    caches and a student's workspace/, nothing else."""
    outputs = {f"{c}/{p}" for c in CHAPTERS for p in programs(c)}
    r = git("status", "--ignored", "--porcelain", "--untracked-files=all", "--", *CHAPTERS)
    assert r.returncode == 0, r.stderr
    bad = []
    for line in r.stdout.splitlines():
        if not line.startswith("!! "):
            continue
        path = line[3:].strip('"')
        if path in outputs or re.search(r"\.(o|sass|regs)$|(^|/)__pycache__/|^0\d_[^/]+/workspace/", path):
            continue
        bad.append(path)
    assert bad == [], "ignored files that are not build outputs"


# The skip logic itself, on throwaway folders: it needs git, not a build.
@pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")
def test_skips_outside_its_own_checkout(tmp_path, monkeypatch):
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # git looks no higher than tmp_path
    plain = tmp_path / "plain" / "tree"  # an archive unpacked where there is no repository
    plain.mkdir(parents=True)
    assert "not a git checkout" in not_own_checkout(plain)
    outer = tmp_path / "course"  # ... and inside another repository
    (outer / "vendor" / "tree").mkdir(parents=True)
    assert git("init", "-q", cwd=outer).returncode == 0
    assert "not the top of its own git checkout" in not_own_checkout(outer / "vendor" / "tree")
    assert not_own_checkout(outer) is None  # the top of a checkout: the tests run
