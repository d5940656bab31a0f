#!/usr/bin/env bash
# Runs the test suite with a Python that has pytest and matplotlib. If the system python3 lacks
# them, it creates .venv from requirements.txt (once) and uses that. Offline with no way to
# install, a python3 that has pytest alone still runs everything but the plotting tests, which
# report themselves skipped. Arguments go to pytest (--chapter=NN_name selects one chapter).
set -u
cd "$(dirname "$0")/.."
venv=.venv
pick() {
    for py in "${PYTHON:-}" "$venv/bin/python" python3; do
        [ -n "$py" ] && command -v "$py" >/dev/null 2>&1 && "$py" -c "$1" 2>/dev/null && { echo "$py"; return 0; }
    done
    return 1
}
py=$(pick 'import pytest, matplotlib') || {
    echo "run_tests: pytest/matplotlib missing; creating $venv from requirements.txt" >&2
    if python3 -m venv "$venv" >&2 && "$venv/bin/python" -m pip install -q --disable-pip-version-check -r requirements.txt >&2; then
        py=$venv/bin/python
    else
        echo "run_tests: could not install requirements (offline?); plotting tests will be skipped" >&2
        py=$(pick 'import pytest') || { echo "run_tests: no python3 with pytest available" >&2; exit 1; }
    fi
}
exec "$py" -m pytest tests -q -rs -p no:cacheprovider "$@"
