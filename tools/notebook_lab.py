"""notebook_lab - what the chapter notebooks (notebooks/NN_name.py, .ipynb) call after their first two
cells: build a program with the chapter's Makefile, run it with its output shown, draw the chapter's
figures from the programs' --csv output with the chapter's own plot.py, the exercises (workspace,
an edit, make check with its hints) and the lab (make profile) where the runtime allows it.

Everything runs through `make` in the chapter folder, so a program is built exactly as the chapter
README says: with the nvcc on PATH (the notebook's own toolkit) and -arch=native when a GPU is
present (common.mk). A program that make test already built is not built again.

Environment (the test suite, tests/test_notebooks.py, sets them; a learner needs none):
    CUDA_LAB_NOTEBOOK_SIZES=test   run each program with its test arguments (tests/manifest.txt)
                                   instead of its default size
    CUDA_LAB_NOTEBOOK_OUT=DIR      where the figures' CSV and PNG files go (default notebooks/output)
    CUDA_LAB_WORKSPACE=DIR         the exercises' copies go to DIR/<chapter> (make WORKSPACE=DIR)
                                   instead of <chapter>/workspace
    CUDA_LAB_NOTEBOOK_LAB=skip     leave out make check and the lab's make profile (one line says so;
                                   the test suite checks the exercises and the sanitizers elsewhere)
"""
import os
import codecs
import re
import select
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
import manifest  # noqa: E402  (tests/manifest.py: the programs and their test arguments)

# The chapter's `make plots` rule (its Makefile), with figures/ replaced by the notebook's output
# folder: (program, arguments) to run, then plot.py's arguments (None: the program draws itself).
# tests/test_notebooks.py checks that the programs are those of the Makefile's rule.
PLOTS = {
    "02_memory": ([("coalescing", "--csv={o}/coalescing.csv"),
                   ("pinned_bandwidth", "--csv={o}/pinned_bandwidth.csv"),
                   ("bytes_in_flight", "--csv={o}/bytes_in_flight.csv")],
                  "--coalescing {o}/coalescing.csv --pinned {o}/pinned_bandwidth.csv "
                  "--bytes-in-flight {o}/bytes_in_flight.csv --out {o}"),
    "03_shared": ([("transpose", "--csv={o}/transpose.csv"), ("matmul_tiled", "--csv={o}/matmul_tiled.csv"),
                   ("sgemm_steps", "--csv={o}/sgemm_steps.csv")],
                  "--transpose {o}/transpose.csv --matmul {o}/matmul_tiled.csv --sgemm {o}/sgemm_steps.csv --out {o}"),
    "04_texture": ([("image_scaling", "--width=160 --height=120 --ratio=4 --reps=1 --out={o}/scaling")], None),
    "05_streams": ([("overlap", "--csv={o}/overlap.csv --timeline={o}/overlap_timeline.csv")],
                   "--timeline {o}/overlap_timeline.csv --out {o}"),
    "06_unified": ([("um_page_faults", "--csv={o}/um_page_faults.csv")], "--page-faults {o}/um_page_faults.csv --out {o}"),
    "07_atomics": ([("histogram", "--csv={o}/histogram.csv"), ("vector_sum", "--csv={o}/vector_sum.csv")],
                   "--histogram {o}/histogram.csv --vector-sum {o}/vector_sum.csv --out {o}"),
}

_chapter = None
REPO_URL = ""
results = {}  # "NN_name/program" -> "PASSED" / "SKIPPED: ..." / "FAILED: ..." (the last line)


def setup(chapter, repo_url=""):
    """Selects the chapter (its folder name) and says where its lesson is."""
    global _chapter, REPO_URL
    if not (ROOT / chapter / "Makefile").exists():
        raise ValueError(f"no chapter {chapter} in {ROOT}")
    _chapter, REPO_URL = chapter, repo_url.rstrip("/").removesuffix(".git")
    print(f"repository: {ROOT}\nchapter:    {chapter}; the lesson: {readme_link()}")
    print(f"nvcc:       {shutil.which('nvcc') or 'not on PATH'}")


def readme_link(anchor=""):
    """The chapter README: on GitHub when the repository came from there, else the local file."""
    if REPO_URL.startswith("https://github.com/"):
        return f"{REPO_URL}/blob/HEAD/{_chapter}/README.md{anchor}"
    return f"{ROOT / _chapter / 'README.md'}{anchor}"


def _sh(cmd, cwd=None, env=None, timeout=900, show=True):
    """Runs cmd (a list), shows its output as it comes; returns (exit code, output). After timeout
    seconds (or when the cell is interrupted) the command and every process it started are killed
    (it runs in a process group of its own): exit code 124 and a line "(stopped after N s)"."""
    if show:
        rel = Path(cwd).relative_to(ROOT) if cwd and Path(cwd).is_relative_to(ROOT) else cwd
        where = f"(cd {rel} && " if cwd and str(rel) != "." else ""
        print(f"$ {where}{shlex.join(str(c) for c in cmd)}{')' if where else ''}", flush=True)
    env = {**os.environ, **(env or {})}
    for k in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL"):  # a make that started the tests is not ours
        env.pop(k, None)
    p = subprocess.Popen([str(c) for c in cmd], cwd=cwd, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, start_new_session=True)
    # The command's own session does not get the signals sent to ours (a runner's SIGTERM, a group
    # kill): while it runs, SIGTERM and SIGHUP raise here, so that the `finally` below kills it too.
    def _raise(signum, frame):
        raise KeyboardInterrupt(f"signal {signum}")
    saved = {}
    if threading.current_thread() is threading.main_thread():
        for sig in (signal.SIGTERM, signal.SIGHUP):
            saved[sig] = signal.signal(sig, _raise)
    decode = codecs.getincrementaldecoder("utf-8")(errors="replace")
    chunks, fd, deadline = [], p.stdout.fileno(), time.monotonic() + timeout
    rc = None
    try:
        while True:  # read with the deadline in force: a program that hangs must not hang the cell
            left = deadline - time.monotonic()
            if left <= 0:
                break
            if not select.select([fd], [], [], min(left, 1.0))[0]:
                continue
            data = os.read(fd, 65536)
            if not data:  # end of output: the command closed it (it normally exits now)
                try:
                    rc = p.wait(timeout=max(deadline - time.monotonic(), 0.01))
                except subprocess.TimeoutExpired:
                    pass
                break
            text = decode.decode(data)
            chunks.append(text)
            if show:
                print(text, end="", flush=True)
    finally:
        if rc is None:  # the deadline passed, or the cell was interrupted: the whole group goes
            try:
                os.killpg(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            p.wait()
            print(f"\n(stopped after {timeout} s)" if time.monotonic() >= deadline else "\n(stopped)", flush=True)
            rc = 124
        p.stdout.close()
        for sig, handler in saved.items():
            signal.signal(sig, handler)
    return rc, "".join(chunks) + decode.decode(b"", final=True)


def _make(*targets, show=True):
    return _sh(["make", "--no-print-directory", *targets], cwd=ROOT / _chapter, show=show)


def has_gpu():
    """Whether the CUDA runtime finds a usable GPU (nvcc's own device query, as common.mk asks)."""
    nvcc = shutil.which("nvcc")
    if not nvcc:
        return False
    query = Path(nvcc).resolve().parent / "__nvcc_device_query"
    return query.exists() and subprocess.run([str(query)], capture_output=True).returncode == 0


def _image_programs():
    rc, out = _make("image-programs", show=False)
    words = out.split()
    return (words[0] == "yes" if words else False), set(words[1:])


def _what_it_shows(program):
    """The chapter README's own line for the program (its table's third column), if it has one."""
    try:
        text = (ROOT / _chapter / "README.md").read_text()
    except OSError:
        return ""
    cell = r"((?:\\\||[^|\n])*)"  # a table cell; \| is a | inside it
    name = f"`{re.escape(program)}`"
    # the row that starts with the program's name, else one whose first cell names it
    # (`hello_multi` (`hello_multi.cu` + ...), `default_stream` + `default_stream_per_thread`)
    m = (re.search(rf"^\| {name} \|{cell}\|{cell}\|", text, re.M) or
         re.search(rf"^\|(?:\\\||[^|\n])*{name}(?:\\\||[^|\n])*\|{cell}\|{cell}\|", text, re.M))
    return m.group(2).strip().replace("\\|", "|") if m else ""


def run(program, args=None):
    """make PROGRAM in the chapter, then run it with its output shown, ending with a line
    `[exit N] <its verdict>`. args: a string of arguments (default: the program's default size, or
    its test arguments under CUDA_LAB_NOTEBOOK_SIZES=test)."""
    _run(program, args)


def _run(program, args=None):
    key = f"{_chapter}/{program}"
    if args is None:
        args = ""
        if os.environ.get("CUDA_LAB_NOTEBOOK_SIZES") == "test":
            entry = next((e for e in manifest.load_manifest() if e.name == key), None)
            args = shlex.join(entry.args) if entry else ""
    shows = _what_it_shows(program)
    if shows:
        print(f"what to look at (README): {shows}")
    have_cv, image = _image_programs()
    if program in image and not have_cv:
        verdict = ("SKIPPED: needs OpenCV, which make did not find (Colab / Debian / Ubuntu: "
                   "!apt-get install -y libopencv-dev, then run this cell again)")
        print(verdict)
        results[key] = verdict
        return verdict
    rc, out = _make(program)
    if rc != 0:
        verdict = f"FAILED: make {program} exited {rc}"
        print(verdict)
        results[key] = verdict
        return verdict
    rc, out = _sh([f"./{program}", *shlex.split(args)], cwd=ROOT / _chapter)
    last = out.strip().splitlines()[-1] if out.strip() else ""
    verdict = last if re.match(r"(PASSED|FAILED|SKIPPED)\b", last) else f"FAILED: exit {rc}, no verdict line"
    if rc not in (0, 77) and not verdict.startswith("FAILED"):
        verdict = f"FAILED: exit {rc} ({last})"
    print(f"[exit {rc}] {verdict}")
    results[key] = verdict
    return verdict


def sh(command):
    """Runs a shell command (a line of the exercises' README: make ..., ncu ..., ./program ...) in
    the chapter folder, with its output shown."""
    _sh(["bash", "-c", command], cwd=ROOT / _chapter)


def out_dir():
    d = Path(os.environ.get("CUDA_LAB_NOTEBOOK_OUT") or ROOT / "notebooks" / "output") / _chapter
    d.mkdir(parents=True, exist_ok=True)
    return d


def figures():
    """The chapter's `make plots`, into the notebook's output folder; shows the PNG files inline
    (or one line saying why there is nothing to draw)."""
    if _chapter not in PLOTS:
        print(f"SKIPPED: {_chapter} draws no figures (its Makefile has no plots rule)")
        return
    runs, plot_args = PLOTS[_chapter]
    o = out_dir()
    for f in list(o.glob("*.png")) + list(o.glob("*.csv")):
        f.unlink()  # what is shown below is this run's
    for program, args in runs:
        verdict = _run(program, args.format(o=shlex.quote(str(o))))
        if not verdict.startswith("PASSED"):
            print(f"SKIPPED: no figures: {program} ended '{verdict}'" if verdict.startswith("SKIPPED")
                  else f"FAILED: no figures: {program} ended '{verdict}'")
            return
    if plot_args:
        rc, _ = _sh([sys.executable, "plot.py", *shlex.split(plot_args.format(o=shlex.quote(str(o))))], cwd=ROOT / _chapter)
        if rc != 0:
            print(f"FAILED: plot.py exited {rc}")
            return
    pngs = sorted(o.rglob("*.png"))
    try:
        from IPython.display import Image, display
        for p in pngs:
            print(p.name)
            display(Image(filename=str(p)))
    except ImportError:
        pass
    print(f"figures: {len(pngs)} PNG file(s) in {o}")


def _ws_args():
    ws = os.environ.get("CUDA_LAB_WORKSPACE")
    return [f"WORKSPACE={ws}"] if ws else []


def workspace_dir():
    ws = os.environ.get("CUDA_LAB_WORKSPACE")
    return Path(ws) / _chapter if ws else ROOT / _chapter / "workspace"


def exercises():
    """make workspace (copies the exercises; never overwrites yours), then the list of them; each
    step ends with its `[exit N]` line, and a step that fails, or an empty list, with a FAILED line."""
    rc, _ = _make("workspace", *_ws_args())
    print(f"[exit {rc}] make workspace")
    if rc != 0:
        print(f"FAILED: make workspace exited {rc}: no copies of the exercises to edit")
    rc, out = _sh([sys.executable, "tools/exercises.py", "list", _chapter], cwd=ROOT)
    listed = len(out.strip().splitlines()) if rc == 0 else 0
    print(f"[exit {rc}] {listed} exercise(s) listed")
    if rc != 0 or listed == 0:
        print(f"FAILED: tools/exercises.py list {_chapter} " + (f"exited {rc}" if rc else "listed no exercise"))
    print(f"your copies: {workspace_dir()}  (the exercises' README: {readme_link().replace('README.md', 'exercises/README.md')})")


def show(source):
    """Prints the lines of your copy of SOURCE (e.g. 'matmul_bounds.cu') between the
    `// ---- your change` marks, with their line numbers: the lines that are yours to edit."""
    path = workspace_dir() / source
    lines = path.read_text().splitlines()
    inside = False
    for i, line in enumerate(lines, 1):
        if "// ---- your change: begin" in line:
            inside = True
        if inside:
            print(f"{i:4} {line}")
        if "// ---- your change: end" in line:
            inside = False
    print(f"(edit {path}: in Colab or JupyterLab open it from the file browser, or call lab.edit)")


def edit(source, old, new):
    """Replaces the text OLD by NEW in your copy of SOURCE (exactly once)."""
    path = workspace_dir() / source
    text = path.read_text()
    if text.count(old) != 1:
        raise ValueError(f"{path}: the text to replace occurs {text.count(old)} times (it must occur once)")
    path.write_text(text.replace(old, new))
    print(f"{path}: replaced 1 occurrence")


def answer(key, value):
    """Writes KEY = VALUE (e.g. 'idle_threads.predicted', '100') into your answers.txt."""
    path = workspace_dir() / "answers.txt"
    lines = path.read_text().splitlines() if path.exists() else []
    pat = re.compile(rf"^\s*{re.escape(key)}\s*=")
    lines = [line for line in lines if not pat.match(line)] + [f"{key} = {value}"]
    path.write_text("\n".join(lines) + "\n")
    print(f"{path}: {key} = {value}")


def check():
    """make check: each exercise `solved`, `not yet` (with a hint: the first time a pointer to the
    manual, then where to look) or `skipped` with the reason."""
    if not has_gpu():
        print("SKIPPED: make check runs the exercises' programs on a GPU, and this runtime has none")
        return
    if os.environ.get("CUDA_LAB_NOTEBOOK_LAB") == "skip":
        print("SKIPPED: make check (CUDA_LAB_NOTEBOOK_LAB=skip)")
        return
    # a limit of an hour (the lab's build and runs were not timed on a small GPU): a cell that hangs
    # still ends, with "(stopped after 3600 s)"
    rc, _ = _sh(["make", "--no-print-directory", "check", *_ws_args()], cwd=ROOT / _chapter, timeout=3600)
    print(f"[make check exited {rc}: 0 when every exercise is solved]")


def profile():
    """The chapter's lab (make profile: lab.sh) where this runtime allows it, else one line why."""
    if not has_gpu():
        print("SKIPPED: the lab profiles and checks kernels on a GPU, and this runtime has none")
        return
    if os.environ.get("CUDA_LAB_NOTEBOOK_LAB") == "skip":
        print("SKIPPED: the lab (CUDA_LAB_NOTEBOOK_LAB=skip)")
        return
    san = shutil.which("compute-sanitizer")
    print(f"compute-sanitizer: {san or 'not found: the lab leaves its steps out'}")
    ncu = shutil.which("ncu")
    if not ncu:
        print("ncu: not installed (Nsight Compute is not part of this runtime): the lab leaves its steps out")
    else:
        print(ncu_probe(ncu))
    # lab.sh runs its ncu steps whenever ncu is on PATH: where the probe failed, they print ncu's own error
    rc, _ = _sh(["make", "--no-print-directory", "profile"], cwd=ROOT / _chapter, timeout=3600)
    print(f"[make profile exited {rc}]")


def ncu_probe(ncu):
    """One line: whether ncu reads a metric here (01_intro's vector_add, gpu__time_duration.sum)."""
    rc, _ = _sh(["make", "-s", "-C", str(ROOT / "01_intro"), "vector_add"], timeout=300, show=False)
    if rc != 0:
        return f"ncu: not probed (make vector_add in 01_intro exited {rc})"
    cmd = [ncu, "--metrics", "gpu__time_duration.sum", "-c", "1", str(ROOT / "01_intro" / "vector_add"),
           "--n=1000", "--reps=1"]
    rc, out = _sh(cmd, timeout=300, show=False)
    if rc == 0 and re.search(r"^\s+gpu__time_duration\.sum\s+\S+\s+[\d.,]+\s*$", out, re.M):
        return f"ncu: {ncu} (counters readable: the probe read gpu__time_duration.sum)"
    if "ERR_NVGPUCTRPERM" in out:
        return ("ncu: ERR_NVGPUCTRPERM: this runtime keeps the GPU performance counters for administrators, "
                "and a notebook cannot change that (the driver's NVreg_RestrictProfilingToAdminUsers): "
                "the lab's ncu steps below fail with the same error; the exercises' README quotes the H100 figures")
    last = [ln for ln in out.strip().splitlines() if ln.strip()][-3:]
    return (f"ncu: the probe ({shlex.join(cmd[:-3])} vector_add) exited {rc} without the metric: "
            + " | ".join(last) + "; the lab's ncu steps below show ncu's own messages")


def summary():
    """One line per program run in this notebook."""
    for k, v in results.items():
        print(f"{k:40} {v}")
    n = {s: sum(v.startswith(s) for v in results.values()) for s in ("PASSED", "SKIPPED", "FAILED")}
    print(f"{len(results)} runs: {n['PASSED']} PASSED, {n['SKIPPED']} SKIPPED, {n['FAILED']} FAILED")
