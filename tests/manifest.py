"""tests/manifest.txt, parsed: used by the test suite (conftest.py) and tests/sanitize.py.

Each line:  chapter/program | test arguments | size option | options
- test arguments: small sizes, including ones that are not a multiple of the block size;
- size option: the option that sets the problem size (used for the bad-input tests), or '-';
- options, separated by ';':
    opencv          the program needs OpenCV (not built without it: its tests are skipped)
    may-skip        exit 77 is a valid outcome on a GPU machine (a feature the GPU may lack)
    nosan=TOOLS     compute-sanitizer tools not to run (comma list, or 'all') ...
                    ('leaks': memcheck runs, without its leak check)
    why=TEXT        ... and the reason, which tools/gpu_check.sh prints
    api-errors      the program makes failing CUDA API calls on purpose (to show the error codes):
                    compute-sanitizer runs it with --report-api-errors no, still checking its kernels
    timeout=S       seconds the GPU test may take (default 120)
    own-arch        its Makefile builds it for architectures of its own whatever ARCH is
                    (01_intro/compilation): tools/profile_run.py does not check its "code built for"

tests/sweep.txt, the size sweep (load_sweep below; its header says the format), names every program
of the manifest once more with the edge sizes tests/sweep.py runs it at.
"""
import shlex
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MANIFEST = ROOT / "tests" / "manifest.txt"

@dataclass
class Program:
    name: str  # chapter/program
    args: list
    size: str  # option name without dashes, or None
    options: dict = field(default_factory=dict)

    @property
    def chapter(self):
        return self.name.split("/")[0]

    @property
    def path(self):
        return ROOT / self.name

    def __str__(self):
        return self.name

def load_manifest(path=MANIFEST):
    programs = []
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        cols = [c.strip() for c in line.split("|")]
        if len(cols) != 4:
            raise ValueError(f"{path}:{lineno}: expected 4 '|'-separated columns, got {len(cols)}")
        name, args, size, opts = cols
        options = {}
        for item in filter(None, (o.strip() for o in opts.split(";"))):
            key, _, value = item.partition("=")
            options[key.strip()] = value.strip() if value else True
        programs.append(Program(name, shlex.split(args), None if size in ("", "-") else size, options))
    return programs



SWEEP = ROOT / "tests" / "sweep.txt"
SWEEP_KINDS = ("small", "big", "max")


@dataclass
class SweepRun:
    program: Program
    kind: str  # small (also under memcheck), big, or max (alone; out of memory is a valid outcome)
    args: list  # the program's arguments: the line's common ones, then the run's own

    @property
    def label(self):
        return f"{self.program.name} {' '.join(self.args)}"


def load_sweep(path=SWEEP, programs=None):
    """tests/sweep.txt as SweepRun objects, in file order. Each line: program | common | runs;
    runs separated by ';', each optionally marked 'big:' or 'max:' (see the file's header)."""
    by_name = {p.name: p for p in (programs if programs is not None else load_manifest())}
    runs = []
    for lineno, raw in enumerate(path.read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        cols = [c.strip() for c in line.split("|")]
        if len(cols) != 3:
            raise ValueError(f"{path}:{lineno}: expected 3 '|'-separated columns, got {len(cols)}")
        name, common, spec = cols
        if name not in by_name:
            raise ValueError(f"{path}:{lineno}: {name} is not in tests/manifest.txt")
        for item in filter(None, (s.strip() for s in spec.split(";"))):
            kind, sep, rest = item.partition(":")
            if sep and kind.strip() in ("big", "max"):
                kind, item = kind.strip(), rest.strip()
            else:
                kind = "small"
            if not item:
                raise ValueError(f"{path}:{lineno}: an empty run")
            runs.append(SweepRun(by_name[name], kind, shlex.split(common) + shlex.split(item)))
    return runs


def option_names(args):
    """The option names of an argument list: ['--n=5', '--reps=1'] -> ['n', 'reps']."""
    return [a[2:].partition("=")[0] for a in args]
