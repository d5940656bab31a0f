#!/usr/bin/env python3
"""What the compiled code does: the machine-code claims of tests/sass_claims/*.txt, checked against the
SASS that cuobjdump prints. No GPU is needed: tests/test_sass_claims.py runs it in `make test` and CI.

A claim is a sentence of a comment or README about the machine code ("one load per iteration", "the
two chains stay scalar", "the struct is stored with one 16-byte store"), written as a line:

    program | kernel | arch | instruction | count | claim
    02_memory/bytes_in_flight | read_k<1> | sm_90 | LDG | max-loop ==1 | bytes_in_flight.cu:41 K = 1: one load in flight

- program: chapter/program of tests/manifest.txt; its .cu is compiled (below).
- kernel: a Python regular expression searched in each function's demangled name ("read_k<1>(",
  "^copy_tile\\("); at least one function must match, and every matching function must satisfy the
  count (a template's instantiations can be checked in one line).
- arch: sm_75, sm_80, sm_86, sm_89, sm_90 ...: the SASS of that architecture. Claims are for sm_90 and
  for an older architecture where the compiler does otherwise.
- instruction: a regular expression matched at the start of each instruction's opcode with its
  modifiers ("LDG", "LDG\\.E\\.128", "HFMA2(\\.|$)", "BAR\\.SYNC", "STL"), the predicate (@P0) removed;
  a pattern with a space in it is matched against the whole instruction, opcode and operands
  ("HFMA2 .*\\.H0_H0": a packed instruction that uses one half of its registers).
- count: [scope] OP N, OP one of == >= <= (a bare N means ==). scope: `function` (the default: every
  instruction of the function), `max-loop` (the loop body with the most matches: the instructions
  from a backward branch's target to the branch, so an unrolled loop shows its copies), or
  `before:REGEX` (the matches that come before the first instruction whose opcode REGEX matches, in
  address order: "all four loads are issued before the first store" is `LDG | before:STG ==4`).
- claim: where the sentence is (file:line or README section) and what it says.
Columns are separated by '|'; inside a regular expression an alternative is written '\\|'
("^void matrix_transpose_(shared\\|padded)<").

The SASS comes from the program as built when the binary holds that architecture's code (cuobjdump
-sass -arch), else from a cubin compiled here with the program's own make command line (make -n -B,
its flags, -cubin -arch=ARCH). cuobjdump (tools/cuda_tools.py): beside nvcc, in $CUDA_PATH/bin, on
PATH, or the PyPI package nvidia-cuda-cuobjdump (requirements.txt; make test installs it into .venv).

    tests/sass.py                           every claim; exit 0 if all hold
    tests/sass.py --chapter=02_memory       one chapter's file
    tests/sass.py --show PROGRAM ARCH [KERNEL-REGEX]   the SASS of a program's kernels (for writing claims)
"""
import argparse
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
from cuda_tools import find_tool, parse_sass, tool_env  # noqa: E402  (tools/exercises.py reads SASS too)
CLAIMS_DIR = ROOT / "tests" / "sass_claims"
OPS = {"==": lambda a, b: a == b, ">=": lambda a, b: a >= b, "<=": lambda a, b: a <= b}
SCOPES = ("function", "max-loop")  # and before:REGEX


@dataclass
class Claim:
    program: str
    kernel: str
    arch: str
    instruction: str
    scope: str
    op: str
    n: int
    text: str
    where: str  # file:line of the claim in tests/sass_claims/

    def __str__(self):
        return f"{self.program} {self.kernel} {self.arch} {self.instruction} {self.scope} {self.op}{self.n}"


def parse_count(spec, where):
    parts = spec.split()
    scope = "function"
    if parts and (parts[0] in SCOPES or parts[0].startswith("before:")):
        scope, parts = parts[0], parts[1:]
        if scope.startswith("before:"):
            re.compile(scope[len("before:"):])
    m = re.fullmatch(r"(==|>=|<=)?\s*(\d+)", " ".join(parts))
    if not m:
        raise ValueError(f"{where}: count '{spec}' is not [function|max-loop|before:REGEX] (==|>=|<=)N")
    return scope, m.group(1) or "==", int(m.group(2))


def load_claims(chapter=None, path=CLAIMS_DIR):
    claims = []
    for f in sorted(path.glob("*.txt")):
        if chapter and f.stem != chapter:
            continue
        for lineno, raw in enumerate(f.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            # columns split at '|'; a regex alternative is written '\|' (then the plain '|')
            cols = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line, maxsplit=5)]
            where = f"{f.relative_to(ROOT) if f.is_relative_to(ROOT) else f}:{lineno}"
            if len(cols) != 6:
                raise ValueError(f"{where}: expected 6 '|'-separated columns, got {len(cols)}")
            program, kernel, arch, instr, count, text = cols
            if not re.fullmatch(r"sm_\d+", arch):
                raise ValueError(f"{where}: arch '{arch}' is not sm_NN")
            re.compile(kernel), re.compile(instr)
            scope, op, n = parse_count(count, where)
            claims.append(Claim(program, kernel, arch, instr, scope, op, n, text, where))
    return claims


# ---- tools ---------------------------------------------------------------------------------------

def sh(cmd, cwd=ROOT, **kw):
    return subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, **kw)


# ---- compiling -----------------------------------------------------------------------------------

def compile_command(chapter_dir, program, arch):
    """argv (without nvcc) that compiles chapter_dir/program.cu to a cubin for arch, from the
    program's own make command line (its target-specific flags and OpenCV headers included)."""
    r = sh(["make", "-s", "--no-print-directory", "-n", "-B", "NVCC=nvcc", f"ARCH={arch}", program], cwd=chapter_dir)
    lines = [ln for ln in r.stdout.splitlines() if ln.startswith("nvcc ") and f"{program}.cu" in ln]
    if r.returncode != 0 or not lines:
        raise RuntimeError(f"make -n {program} in {chapter_dir} gave no nvcc line:\n{r.stdout}\n{r.stderr}")
    argv = shlex.split(lines[-1])[1:]
    out, i = [], 0
    while i < len(argv):
        a = argv[i]
        if a in ("-o", "-gencode", "-Xlinker") or a.startswith("-L"):
            i += 1 if a.startswith("-L") else 2
            continue
        if a.startswith(("-arch", "-gencode=", "-l")) or a.endswith((".o", ".a")) or a in ("-dc", "-c"):
            if a == "-dc":
                out.append("-rdc=true")
            i += 1
            continue
        out.append(a)
        i += 1
    return [a for a in out if not a.endswith(".cu")], f"{program}.cu"


def cubin(chapter_dir, program, arch, source=None, workdir=None):
    """Compiles program.cu (or `source`, a mutated copy's path) for arch; returns the cubin's path."""
    flags, src = compile_command(chapter_dir, program, arch)
    src = str(source) if source else src
    workdir = Path(workdir or tempfile.mkdtemp(prefix="sass_"))
    out = workdir / f"{program}.{arch}.cubin"
    r = sh(["nvcc", *flags, f"-arch={arch}", "-cubin", "-o", str(out), src], cwd=chapter_dir)
    if r.returncode != 0:
        raise RuntimeError(f"nvcc -cubin {src} for {arch} failed:\n{r.stderr[-3000:]}")
    return out


def binary_archs(binary):
    r = sh([find_tool("cuobjdump"), "--list-elf", str(binary)], env=tool_env())
    return set(re.findall(r"\.(sm_\d+a?)\.cubin", r.stdout))


# ---- reading SASS --------------------------------------------------------------------------------

def sass_text(path, arch):
    r = sh([find_tool("cuobjdump"), "-sass", "-arch", arch, str(path)], env=tool_env())
    if r.returncode != 0:
        raise RuntimeError(f"cuobjdump -sass -arch {arch} {path}: {r.stderr.strip()}")
    return r.stdout


def loops(instrs):
    """[(start, end)] address ranges of loop bodies: a branch back to an earlier address. The target
    is the branch's last 0x operand (`BRA 0x4b0`, `@P0 BRA !P2, 0x4b0`, `BRA P3, 0x4b0`); BRA.DIV (the
    jump to a warp-divergence fallback) and the branch-to-itself that ends every function are not
    loops. An outer loop's range contains its inner loops."""
    out = []
    for addr, op, rest in instrs:
        if not op.startswith("BRA") or op.startswith("BRA.DIV"):
            continue
        targets = re.findall(r"0x([0-9a-f]+)", rest)
        if targets and int(targets[-1], 16) < addr:
            out.append((int(targets[-1], 16), addr))
    return out


def count(instrs, pattern, scope):
    rx = re.compile(pattern)
    whole = " " in pattern  # operands too
    hits = [a for a, op, rest in instrs if rx.match(f"{op} {rest}" if whole else op)]
    if scope == "function":
        return len(hits)
    if scope.startswith("before:"):
        stop = re.compile(scope[len("before:"):])
        first = next((a for a, op, _ in instrs if stop.match(op)), None)
        return sum(1 for a in hits if first is None or a < first)
    ls = loops(instrs)
    if not ls:
        return None  # a max-loop claim about a function without a loop does not hold
    return max(sum(1 for a in hits if s <= a <= e) for s, e in ls)


class SassCache:
    """The parsed SASS of each (program, arch), from the built binary or a cubin compiled once."""

    def __init__(self, workdir=None):
        self.workdir = Path(workdir or tempfile.mkdtemp(prefix="sass_claims_"))
        self.cache = {}

    def get(self, program, arch):
        key = (program, arch)
        if key not in self.cache:
            chapter, name = program.split("/")
            binary = ROOT / chapter / name
            # the built program, if make says it is up to date (a stale build would test old code:
            # its .cu, common/'s headers or a flag changed since)
            fresh = binary.exists() and sh(["make", "-q", "--no-print-directory", name],
                                           cwd=ROOT / chapter).returncode == 0
            if fresh and arch in binary_archs(binary):
                path = binary
            else:
                path = cubin(ROOT / chapter, name, arch, workdir=self.workdir)
            self.cache[key] = parse_sass(sass_text(path, arch))
        return self.cache[key]


def check_claim(claim, funcs):
    """None if the claim holds, else why not."""
    rx = re.compile(claim.kernel)
    matched = {name: ins for name, ins in funcs.items() if rx.search(name)}
    if not matched:
        return f"no function matches '{claim.kernel}' (functions: {', '.join(sorted(funcs))[:400]})"
    bad = []
    for name, ins in matched.items():
        c = count(ins, claim.instruction, claim.scope)
        if c is None:
            bad.append(f"{name}: no loop")
        elif not OPS[claim.op](c, claim.n):
            bad.append(f"{name}: {c}")
    if bad:
        return f"expected {claim.scope} {claim.op}{claim.n} '{claim.instruction}', found " + "; ".join(bad)
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--chapter")
    ap.add_argument("--show", nargs="+", metavar="ARG")
    a = ap.parse_args()
    if not find_tool("cuobjdump"):
        print("sass: cuobjdump not found (beside nvcc, $CUDA_PATH/bin, PATH, or pip install nvidia-cuda-cuobjdump)")
        return 77
    cache = SassCache()
    if a.show:
        program, arch = a.show[0], a.show[1]
        rx = re.compile(a.show[2]) if len(a.show) > 2 else None
        for name, ins in cache.get(program, arch).items():
            if rx and not rx.search(name):
                continue
            print(f"== {name}  ({len(ins)} instructions; loops {loops(ins)})")
            for addr, op, rest in ins:
                print(f"  {addr:05x}  {op} {rest}")
        return 0
    claims = load_claims(a.chapter)
    failed = 0
    for c in claims:
        why = check_claim(c, cache.get(c.program, c.arch))
        if why:
            failed += 1
            print(f"FAILED {c.where}: {c}: {why}\n    claim: {c.text}")
    progs = len({c.program for c in claims})
    nvcc = sh(["nvcc", "--version"]).stdout.strip().splitlines()
    print(f"sass claims: {len(claims)} claims in {progs} programs, {len(claims) - failed} hold, {failed} do not "
          f"({nvcc[-1] if nvcc else 'nvcc not found'}; the counts are this compiler's)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
