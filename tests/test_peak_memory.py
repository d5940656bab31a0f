"""Every program at its defaults fits a 4 GB card (no GPU needed): results/peak_memory/peak_memory.csv,
written on a GPU machine by tools/peak_memory.py (tools/gpu_check.sh regenerates it), names every
program of tests/manifest.txt, each measured (or skipped where the manifest allows it), and no peak is
above the budget of the smallest card of the device profiles. Also: the preloaded library that
measures counts what it should (a fake runtime stands in for the GPU)."""
import csv
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from conftest import ROOT, load_manifest

TABLE = ROOT / "results" / "peak_memory" / "peak_memory.csv"
# The smallest card of the device profiles: a GTX 1650, 4 GB. Of its 4096 MiB, the allocations may
# take all but RESERVE_MIB, left for the context (tools/peak_memory.py measures it on the GPU and
# prints it under the table), the display of a desktop that runs on the same GPU, and what Windows
# keeps under WSL2. The same figure is tools/peak_memory.py's --reserve-mib default.
CARD_MIB = 4096
RESERVE_MIB = 1024
BUDGET_MIB = CARD_MIB - RESERVE_MIB


def table():
    if not TABLE.exists():
        pytest.fail(f"{TABLE.relative_to(ROOT)} is missing: run tools/peak_memory.py on a GPU machine "
                    f"(tools/gpu_check.sh does) and commit what it writes")
    with open(TABLE, newline="") as f:
        return {r["program"]: r for r in csv.DictReader(f)}


def unmeasured(rows, manifest):
    """Programs of the manifest without a usable row: missing, failed, timed out, or skipped where the
    manifest does not allow it."""
    bad = []
    for p in manifest:
        r = rows.get(p.name)
        if r is None:
            bad.append(f"{p.name}: not in the table")
        elif r["status"] == "skipped" and not p.options.get("may-skip"):
            bad.append(f"{p.name}: skipped, and the manifest does not allow it ({r['note']})")
        elif r["status"] not in ("passed", "skipped"):
            bad.append(f"{p.name}: {r['status']} ({r['note']})")
        elif r["status"] == "passed" and not r["peak_mib"]:
            bad.append(f"{p.name}: passed without a peak figure")
    return bad


def too_big(rows):
    return [f"{name}: {float(r['peak_mib']):.0f} MiB" for name, r in rows.items()
            if r["peak_mib"] and float(r["peak_mib"]) > BUDGET_MIB]


def test_every_program_measured():
    bad = unmeasured(table(), load_manifest())
    assert not bad, f"{TABLE.relative_to(ROOT)}:\n" + "\n".join(bad)


def test_every_default_fits_4gb():
    big = too_big(table())
    assert not big, (f"defaults above {BUDGET_MIB} MiB ({CARD_MIB} MiB card - {RESERVE_MIB} MiB): make the "
                     f"default smaller, or size from the free memory and say so:\n" + "\n".join(big))


def test_table_columns_agree():
    """fits_4gb says what peak_mib says (a table edited by hand, or written with another reserve)."""
    bad = [name for name, r in table().items() if r["peak_mib"]
           and (r["fits_4gb"] == "yes") != (float(r["peak_mib"]) <= BUDGET_MIB)]
    assert not bad, "fits_4gb disagrees with peak_mib and the budget here: " + ", ".join(bad)


def test_checks_can_fail():
    """The two checks on a table made up here: a program missing, one failed, one skipped without
    may-skip, one too big; a may-skip program skipped and one just at the budget pass."""
    m = load_manifest()
    may = next(p for p in m if p.options.get("may-skip"))
    must = [p for p in m if not p.options.get("may-skip")][:4]
    row = lambda name, status, peak: {"program": name, "status": status, "peak_mib": peak, "note": ""}
    rows = {must[0].name: row(must[0].name, "passed", f"{BUDGET_MIB + 0.1}"),
            must[1].name: row(must[1].name, "failed", "12.0"),
            must[2].name: row(must[2].name, "skipped", ""),
            must[3].name: row(must[3].name, "passed", f"{BUDGET_MIB}"),
            may.name: row(may.name, "skipped", "")}
    bad = unmeasured(rows, [must[0], must[1], must[2], must[3], may] + [p for p in m if p.name not in rows][:1])
    assert [b.split(":")[0] for b in bad] == [must[1].name, must[2].name, next(p.name for p in m if p.name not in rows)]
    assert [b.split(":")[0] for b in too_big(rows)] == [must[0].name]


# ---- the library itself, in front of a fake runtime ----
FAKE_RT = r"""
#include <stdlib.h>
typedef int err;
err cudaMalloc(void** p, size_t n) { *p = malloc(n ? n : 1); return 0; }
err cudaMallocManaged(void** p, size_t n, unsigned f) { (void)f; *p = malloc(n ? n : 1); return 0; }
err cudaMallocPitch(void** p, size_t* pitch, size_t w, size_t h) { *pitch = (w + 511) / 512 * 512; *p = malloc(*pitch * h); return 0; }
err cudaFree(void* p) { if (p == (void*)0x1234) return 1; free(p); return 0; }  /* 1: not an allocation */
err cudaDeviceReset(void) { return 0; }
"""
PROGRAM = r"""
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>
typedef int err;
err cudaMalloc(void**, size_t); err cudaMallocManaged(void**, size_t, unsigned);
err cudaMallocPitch(void**, size_t*, size_t, size_t); err cudaFree(void*); err cudaDeviceReset(void);
int main(void) {
    pid_t pid = fork();  /* as call_stack does: a child that uses "CUDA" on its own, then _exit */
    if (pid == 0) { void* c; cudaMalloc(&c, 7 << 20); _exit(0); }
    waitpid(pid, NULL, 0);
    void *a, *b, *m, *p; size_t pitch;
    cudaMalloc(&a, 100 << 20);
    cudaMalloc(&b, 50 << 20);
    cudaFree(a);                          /* live 50 MiB, peak 150 */
    cudaMallocManaged(&m, 30 << 20, 1);   /* live 50 + 30 managed */
    cudaMallocPitch(&p, &pitch, 1000, 1024 * 10);  /* 1024 x 10240 rows = 10 MiB */
    cudaFree(b); cudaFree(m);
    cudaFree((void*)0x1234);              /* fails: counts nothing */
    cudaDeviceReset();                    /* frees the rest */
    cudaMalloc(&a, 1 << 20);
    printf("PASSED\n");
    return 0;
}
"""


def build_fake(tmp_path):
    """The library, a fake runtime and a program that calls it: tmp_path/prog."""
    if not shutil.which("nvcc"):
        pytest.skip("nvcc not found")
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler")
    r = subprocess.run(["make", "--no-print-directory", ".stress/libpeak_alloc.so"], cwd=ROOT, capture_output=True,
                       text=True, env=dict(os.environ, MAKEFLAGS="", MAKELEVEL=""))
    assert r.returncode == 0, r.stdout + r.stderr
    (tmp_path / "fake_rt.c").write_text(textwrap.dedent(FAKE_RT))
    (tmp_path / "prog.c").write_text(textwrap.dedent(PROGRAM))
    subprocess.run([cc, "-shared", "-fPIC", "-o", str(tmp_path / "libfake_rt.so"), str(tmp_path / "fake_rt.c")],
                   check=True)
    subprocess.run([cc, "-o", str(tmp_path / "prog"), str(tmp_path / "prog.c"), f"-L{tmp_path}", "-lfake_rt",
                    f"-Wl,-rpath,{tmp_path}"], check=True)
    return tmp_path / "prog"


def test_library_counts(tmp_path):
    build_fake(tmp_path)
    out = tmp_path / "peaks"
    out.mkdir()
    env = dict(os.environ, LD_PRELOAD=str(ROOT / ".stress" / "libpeak_alloc.so"), CUDA_LAB_PEAK_DIR=str(out))
    r = subprocess.run([str(tmp_path / "prog")], env=env, capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    reports = {}
    for f in out.glob("peak.*"):
        d = dict(line.split("=", 1) for line in f.read_text().split())
        reports[int(d["pid"])] = {k: int(v) for k, v in d.items()}
    assert len(reports) == 2, f"one report per process expected: {sorted(reports)}"
    parent = next(d for d in reports.values() if d["done"] == 1)
    child = next(d for d in reports.values() if d is not parent)
    mib = 1 << 20
    assert child["combined_peak"] == 7 * mib and child["ppid"] == parent["pid"]
    assert parent["device_peak"] == 150 * mib
    assert parent["managed_peak"] == 30 * mib
    assert parent["combined_peak"] == 150 * mib  # 50 + 30 + 10 = 90 later: less than 150
    assert parent["allocs"] == 5


def test_tool_rows(tmp_path):
    """tools/peak_memory.py over a made-up tree: a program that allocates (the fake one: its two
    processes' peaks add up), one that fails among the others and passes alone, one that skips, one
    not built."""
    prog = build_fake(tmp_path)
    tree = tmp_path / "tree" / "01_intro"
    tree.mkdir(parents=True)
    shutil.copy(prog, tree / "vector_add")
    flaky = tree / "hello_gpu"
    flaky.write_text(f"#!/bin/sh\nif [ -e {tmp_path}/ran ]; then echo PASSED; exit 0; fi\n"
                     f"touch {tmp_path}/ran; echo 'FAILED: a timing claim'; exit 1\n")
    skip = tree / "call_stack"
    skip.write_text("#!/bin/sh\necho 'SKIPPED: no usable CUDA device'; exit 77\n")
    for f in (flaky, skip):
        f.chmod(0o755)
    names = ["01_intro/vector_add", "01_intro/hello_gpu", "01_intro/call_stack", "01_intro/hello_multi"]
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "peak_memory.py"), f"--tree={tmp_path / 'tree'}",
                        f"--out={tmp_path / 'out'}", "--jobs=2", "--context-programs=", *names],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    with open(tmp_path / "out" / "peak_memory.csv", newline="") as f:
        rows = {row["program"]: row for row in csv.DictReader(f)}
    assert list(rows) == sorted(names, key=[p.name for p in load_manifest()].index)
    va = rows["01_intro/vector_add"]
    assert (va["status"], va["processes"], va["device_mib"], va["managed_mib"], va["peak_mib"], va["fits_4gb"]) == \
        ("passed", "2", "157.0", "30.0", "157.0", "yes")
    assert rows["01_intro/hello_gpu"]["status"] == "passed"
    assert rows["01_intro/hello_gpu"]["note"].startswith("run again alone (with 2 at once: failed)")
    assert rows["01_intro/call_stack"]["status"] == "skipped" and not rows["01_intro/call_stack"]["peak_mib"]
    assert rows["01_intro/hello_multi"]["status"] == "not built"
    assert "1 measured (1 fit 4 GB), 1 skipped" in r.stdout.splitlines()[-1]
