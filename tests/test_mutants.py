"""The mutants (tests/mutants.py): every program of the manifest is named, with mutants or as
timing-only with a reason; every mutant's edit applies to today's source. The mutants themselves run
on a GPU (tests/mutants.py, part of tools/gpu_check.sh): each must end FAILED."""
import pytest
from conftest import ROOT, load_manifest
import mutants as mut

MUTANTS = mut.load_mutants()
LIVE = [m for m in MUTANTS if not m.timing_only]


def test_every_program_is_named():
    named = {m.program for m in MUTANTS}
    missing = sorted(p.name for p in load_manifest() if p.name not in named)
    assert not missing, ("programs with no mutant and no timing-only reason in tests/mutants/:\n  " +
                         "\n  ".join(missing))


def test_only_manifest_programs():
    names = {p.name for p in load_manifest()}
    bad = [f"{m.where}: {m.program}" for m in MUTANTS if m.program not in names]
    assert not bad, "mutants of programs not in tests/manifest.txt:\n" + "\n".join(bad)


def test_names_unique():
    ids = [m.id for m in MUTANTS]
    assert len(ids) == len(set(ids)), sorted({i for i in ids if ids.count(i) > 1})


def test_timing_only_is_alone():
    """A program is either timing-only or has mutants, not both."""
    timing = {m.program for m in MUTANTS if m.timing_only}
    both = sorted(timing & {m.program for m in LIVE})
    assert not both, f"timing-only and with mutants: {both}"


@pytest.mark.parametrize("m", LIVE, ids=[m.id for m in LIVE])
def test_mutant_applies(m):
    src = ROOT / m.chapter / m.source
    assert src.exists(), f"{m.where}: {src} does not exist"
    text = src.read_text(encoding="utf-8")
    changed = mut.mutate_text(text, m.edits, m.id)
    assert changed != text, f"{m.where}: the edits change nothing"
