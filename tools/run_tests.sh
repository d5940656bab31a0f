#!/usr/bin/env bash
# Runs the test suite with a Python that has pytest, matplotlib, cuobjdump (tests/sass.py) and the
# notebook packages (jupytext, nbformat, nbclient, ipykernel: tests/test_notebooks.py runs every
# chapter's notebook, and without them those tests would only report themselves skipped). If the
# system python3 lacks them, it creates .venv from requirements.txt (once; again when requirements.txt changes) and
# uses that. Offline with no way to install, a python3 that has pytest alone still runs
# everything but the plotting and notebook tests, which report themselves skipped. Arguments go to pytest
# (--chapter=NN_name selects one chapter). `run_tests.sh --setup` only makes the Python ready
# (.venv as above; always exit 0: a failure is reported when the tests start): the top-level
# `make test` runs it while the programs compile, so that the tests find it ready.
# Without a GPU the tests start processes and compile the exercises, nothing else: with
# pytest-xdist (requirements.txt) they run on every core (JOBS=N sets how many, JOBS=1 one at a
# time). With a GPU they run one at a time, as before: programs that time the GPU, or size their
# allocations from its free memory, must not share it with each other.
set -u
cd "$(dirname "$0")/.."
venv=.venv
pick() {
    for py in "${PYTHON:-}" "$venv/bin/python" python3; do
        [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 && "$py" -c "$1" 2>/dev/null && { echo "$py"; return 0; }
    done
    return 1
}
install() {  # requirements.txt into .venv; the stamp records the requirements.txt it installed
    "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements.txt >&2 &&
        cp requirements.txt "$venv/requirements.installed"
}
setup() {  # sets py, making or updating .venv where needed; 1: no python3 with pytest at all
    # $1: setup (run_tests.sh --setup) or tests. A failed --setup leaves $venv/setup-failed, so that
    # the tests of the same `make test` do not try again (offline, that costs seconds for nothing).
    # Ready: pytest, matplotlib, the notebook packages, and cuobjdump + nvdisasm (CUDA Toolkit or PyPI;
    # tests/sass.py finds them).
    py=$(pick 'import pytest, matplotlib, jupytext, nbformat, nbclient, ipykernel, sys; sys.path.insert(0, "tests"); import sass; assert sass.find_tool("cuobjdump") and sass.find_tool("nvdisasm")') || {
        local tried=no
        [ "$1" = tests ] && [ -e "$venv/setup-failed" ] && tried=yes
        rm -f "$venv/setup-failed"
        if [ $tried = no ] && echo "run_tests: pytest, matplotlib, the notebook packages or cuobjdump missing; creating $venv from requirements.txt" >&2 &&
            python3 -m venv "$venv" >&2 && install; then
            py=$venv/bin/python
        else
            [ "$1" = setup ] && [ -d "$venv" ] && touch "$venv/setup-failed"
            echo "run_tests: could not install requirements (offline?); plotting and notebook tests may be skipped" >&2
            py=$(pick 'import pytest') || { echo "run_tests: no python3 with pytest available" >&2; return 1; }
        fi
    }
    # A .venv made from an older requirements.txt: bring it up to date once (failing that, e.g.
    # offline, it is used as it is and the tests run one at a time).
    if [ "$py" = "$venv/bin/python" ] && ! cmp -s requirements.txt "$venv/requirements.installed"; then
        echo "run_tests: requirements.txt changed; updating $venv" >&2
        install || { echo "run_tests: could not update $venv; using it as it is" >&2; cp requirements.txt "$venv/requirements.installed"; }
    fi
}
if [ "${1:-}" = "--setup" ]; then
    setup setup
    exit 0
fi
setup tests || exit 1
parallel=()
jobs=${JOBS:-$(nproc 2>/dev/null || echo 1)}
if [ "$jobs" -gt 1 ] && "$py" -c 'import xdist' 2>/dev/null; then
    tests/gpu_probe >/dev/null 2>&1
    # 77: no usable GPU. The exercise tests that share one build stay on one worker (loadgroup).
    [ $? = 77 ] && parallel=(-n "$jobs" --dist loadgroup)
fi
# The makes that the tests start are makes of their own: without the flags of the make that runs
# this script (`make -C DIR test` puts -w in them, and every `make list` would then print
# "Entering directory" lines into the program lists the tests read).
unset MAKEFLAGS MFLAGS MAKELEVEL
exec "$py" -m pytest tests -q -rs -p no:cacheprovider ${parallel[@]+"${parallel[@]}"} "$@"
