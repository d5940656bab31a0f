"""The size sweep (tests/sweep.txt), checked on the host: every program has one, it parses, and every
option it names is one the program's --help lists, with a value inside the listed range; the max
runs use the largest value --help allows for the manifest's size option. Without a GPU the large
runs' arguments must pass the program's own validation (exit 77, not 2). tools/gpu_check.sh --sweep
runs the sweep on a GPU."""
import re

import pytest
from conftest import gpu_probe, require_built, run
from manifest import load_sweep, option_names

RUNS = load_sweep()
HELP_LINE = re.compile(r"^\s+--([\w-]+)(?:=(INT|NUM|STR))?\s.*?(?:\(default [^,)]*(?:, range (\S+?)\.\.(\S+))?\))?$")


def runs_of(program):
    return [r for r in RUNS if r.program.name == program.name]


def value(text):
    if re.fullmatch(r"2\^\d+", text):
        return 2 ** int(text[2:])
    return float(text)


def help_options(program):
    """{name: (type, lo, hi)} from the program's --help."""
    r = run(program, ["--help"])
    assert r.returncode == 0, r.stderr
    opts = {}
    for line in r.stdout.splitlines():
        m = HELP_LINE.match(line)
        if m:
            name, typ, lo, hi = m.groups()
            opts[name] = (typ, None if lo is None else float(lo), None if hi is None else float(hi))
    return opts


def test_sweep_covers_every_program(program):
    runs = runs_of(program)
    kinds = {r.kind for r in runs}
    assert {"small", "max"} <= kinds, f"tests/sweep.txt: {program.name} needs small runs and a max: run"
    if program.size:
        for r in runs:
            assert program.size in option_names(r.args), f"a sweep run without --{program.size}: {r.label}"


def test_sweep_options_exist_and_fit(program):
    require_built(program)
    opts = help_options(program)
    for r in runs_of(program):
        for arg in r.args:
            assert arg.startswith("--") and "=" in arg, f"{r.label}: '{arg}' is not --name=value"
            name, _, text = arg[2:].partition("=")
            assert name in opts, f"{r.label}: --{name} is not an option of {program.name} (see its --help)"
            typ, lo, hi = opts[name]
            if typ in ("INT", "NUM") and lo is not None:
                assert lo <= value(text) <= hi, f"{r.label}: --{name}={text} is outside {lo:g}..{hi:g}"
    if program.size:
        typ, lo, hi = opts[program.size]
        for r in runs_of(program):
            if r.kind == "max":
                given = dict(a[2:].partition("=")[::2] for a in r.args)
                if value(given[program.size]) != hi:
                    continue  # a second max run that maximises another option
                break
        else:
            pytest.fail(f"no max: run with --{program.size} at its --help maximum {hi:g}")


def test_sweep_arguments_validate_without_gpu(program):
    has_gpu, _ = gpu_probe()
    if has_gpu:
        pytest.skip("a GPU is present: tools/gpu_check.sh --sweep runs these")
    require_built(program)
    for r in runs_of(program):
        # Limits across options (width * height <= 2^28, ...) bite at the large sizes; the small ones
        # the range test above covers, and each run costs a process start (1.5 s with cuBLAS).
        if r.kind == "small":
            continue
        if r.kind == "max" and program.options.get("opencv"):
            continue  # draws its synthetic picture before looking for a GPU: seconds at the largest size
        res = run(program, r.args)
        assert res.returncode == 77, f"{r.label}: exit {res.returncode}, expected 77 (skipped, no GPU)\n{res.stderr}"
