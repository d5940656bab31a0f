"""What comments and READMEs say about the machine code holds: tests/sass_claims/*.txt, checked against
the SASS that cuobjdump prints (tests/sass.py says how). No GPU needed; cuobjdump comes from the CUDA
Toolkit or the PyPI package nvidia-cuda-cuobjdump (requirements.txt). Also: every `expect: sass`
mutant of tests/mutants/ (a planted change, e.g. a `#pragma unroll 1` removed) makes one of its
program's claims fail, so the claims can fail."""
import os
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from conftest import ROOT, load_manifest
import sass
import mutants as mut

CLAIMS = sass.load_claims()
SASS_MUTANTS = [m for m in mut.load_mutants() if m.expect == "sass"]
_cache = None
_mutant_results = None
# One pytest process (a GPU machine runs the tests one at a time; JOBS=1): the cubins of the claims
# and of the sass mutants are compiled up front on every core, not one by one as the tests reach
# them (that took ~4 minutes of a GPU machine's `make test`). Under pytest-xdist each worker
# compiles only what its own tests need.
PREFETCH = not os.environ.get("PYTEST_XDIST_WORKER")


def _jobs():
    """JOBS if it is a positive number, else the cores this process may run on."""
    j = os.environ.get("JOBS", "")
    if j.isdigit() and int(j) > 0:
        return int(j)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


JOBS = _jobs()


def _selected(program, only):
    return not only or program.startswith(only + "/")


def cache(only=None):
    """The SASS cache; with prefetching, the claims of the selected chapter (--chapter) are compiled
    up front, all at once."""
    global _cache
    if _cache is None:
        _cache = sass.SassCache()
        if PREFETCH and sass.find_tool("cuobjdump"):
            keys = sorted({(c.program, c.arch) for c in CLAIMS if _selected(c.program, only)})
            with ThreadPoolExecutor(JOBS) as pool:
                # errors (a program that does not compile here) surface again in its own test
                list(pool.map(lambda k: _try(_cache.get, *k), keys))
    return _cache


def _try(f, *a):
    try:
        return f(*a)
    except Exception as e:  # noqa: BLE001 - reported by the test that needs it
        return e


def mutant_broken(m):
    """The claims of m.program that fail on the mutated source, over every arch they name."""
    claims = [c for c in CLAIMS if c.program == m.program]
    with tempfile.TemporaryDirectory() as tmp:
        work = mut.prepare_root(Path(tmp))
        d = mut.apply(m, work / m.chapter)
        broken = []
        for arch in sorted({c.arch for c in claims}):
            funcs = sass.parse_sass(sass.sass_text(sass.cubin(d, m.binary, arch, workdir=tmp), arch))
            broken += [c for c in claims if c.arch == arch and sass.check_claim(c, funcs)]
    return broken


def mutant_result(m, only=None):
    global _mutant_results
    if _mutant_results is None:
        _mutant_results = {}
        if PREFETCH:
            chosen = [x for x in SASS_MUTANTS if not only or x.chapter == only]
            with ThreadPoolExecutor(JOBS) as pool:
                _mutant_results = dict(zip([x.id for x in chosen],
                                           pool.map(lambda x: _try(mutant_broken, x), chosen)))
    if m.id not in _mutant_results:
        _mutant_results[m.id] = _try(mutant_broken, m)
    r = _mutant_results[m.id]
    if isinstance(r, Exception):
        raise r
    return r


def need_cuobjdump():
    if not sass.find_tool("cuobjdump"):
        pytest.skip("cuobjdump not found (CUDA Toolkit, or pip install nvidia-cuda-cuobjdump: make test's .venv has it)")


def test_claims_name_manifest_programs():
    names = {p.name for p in load_manifest()}
    assert CLAIMS, "no machine-code claims in tests/sass_claims/"
    bad = [f"{c.where}: {c.program}" for c in CLAIMS if c.program not in names]
    assert not bad, "claims of programs that are not in tests/manifest.txt:\n" + "\n".join(bad)


@pytest.mark.parametrize("claimed", sorted({c.program for c in CLAIMS}))
def test_claims_hold(claimed, request):
    program = claimed
    only = request.config.getoption("--chapter")
    if only and not program.startswith(only + "/"):
        pytest.skip(f"--chapter={only}")
    need_cuobjdump()
    claims = [c for c in CLAIMS if c.program == program]
    chapter, name = program.split("/")
    if any(p.name == program and p.options.get("opencv") for p in load_manifest()) and \
            not (ROOT / chapter / name).exists():
        pytest.skip("needs OpenCV (not built here)")
    failed = []
    for c in claims:
        why = sass.check_claim(c, cache(only).get(c.program, c.arch))
        if why:
            failed.append(f"{c.where}: {why}\n    claim: {c.text}")
    assert not failed, f"{len(failed)} of {len(claims)} claims do not hold:\n" + "\n".join(failed)


def test_a_planted_change_is_caught():
    assert SASS_MUTANTS, "no `expect: sass` mutant: nothing shows that the claims test can fail"


@pytest.mark.parametrize("m", SASS_MUTANTS, ids=[m.id for m in SASS_MUTANTS])
def test_sass_mutant_breaks_a_claim(m, request):
    """The planted change, compiled for each arch its program's claims name: at least one claim fails."""
    only = request.config.getoption("--chapter")
    if only and m.chapter != only:
        pytest.skip(f"--chapter={only}")
    need_cuobjdump()
    claims = [c for c in CLAIMS if c.program == m.program]
    assert claims, f"{m.where}: expect: sass, but {m.program} has no claims"
    broken = mutant_result(m, only)
    assert broken, f"{m.id} ({m.lesson}): every claim of {m.program} still holds on the mutated source"
    if m.fails:
        import re
        named = [c for c in broken if re.search(m.fails, c.text) or re.search(m.fails, c.instruction)]
        assert named, (f"{m.id}: claims broke ({'; '.join(c.text for c in broken)}), but none that `fails: "
                       f"{m.fails}` names")
