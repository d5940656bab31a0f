#!/usr/bin/env python3
"""The chapter notebooks: notebooks/NN_name.py (jupytext percent format, the text kept and reviewed
in the repository) -> notebooks/NN_name.ipynb (what Colab, Kaggle and JupyterLab open; generated,
committed, without outputs).

    tools/notebooks.py build     write every .ipynb from its .py
    tools/notebooks.py check     exit 1 (naming the files) where an .ipynb is not the one build writes

The first cells (the GPU/driver/toolkit check, finding or cloning the tree) are the same in every
notebook and are kept once, in notebooks/setup_cells.py: a chapter's .py has one marker line
(SETUP_MARKER) where build puts them.

Needs jupytext (requirements.txt). The cells' ids are numbered (cell-0, cell-1, ...) so that the
same .py always gives the same .ipynb.
"""
import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def sources():
    return sorted(NOTEBOOKS.glob("0[0-9]_*.py"))


# The line of a chapter's .py where the cells of notebooks/setup_cells.py go (written once there: the
# GPU/driver/toolkit check and the cell that finds or clones the tree, the same in every notebook).
SETUP_MARKER = "# (here tools/notebooks.py puts the cells of notebooks/setup_cells.py: the same in every chapter)"


def expanded(py):
    """The chapter's .py text with the shared setup cells in place of its marker line."""
    text = Path(py).read_text()
    if text.count(SETUP_MARKER + "\n") != 1:
        raise SystemExit(f"{py}: needs the line {SETUP_MARKER!r} once")
    setup = (NOTEBOOKS / "setup_cells.py").read_text()
    setup = setup[setup.index("# %%"):]  # its own header comment stays out of the notebooks
    return text.replace(SETUP_MARKER + "\n", setup)


def render(py):
    """The .ipynb text generated from a jupytext .py file."""
    import jupytext
    import nbformat
    nb = jupytext.reads(expanded(py), fmt="py:percent")
    for i, cell in enumerate(nb.cells):
        cell["id"] = f"cell-{i}"
    nb.metadata.pop("jupytext", None)  # the .ipynb stands alone (Colab, Kaggle): no pairing metadata
    nb.metadata["language_info"] = {"name": "python"}
    # Colab opens a notebook with these fields on a GPU runtime, a T4 (keras-team/keras-io#1149,
    # NVIDIA/accelerated-computing-hub#59); the first cell still checks what it got.
    nb.metadata["accelerator"] = "GPU"
    nb.metadata["colab"] = {"gpuType": "T4", "provenance": []}
    return nbformat.writes(nb) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("action", choices=("build", "check"))
    a = p.parse_args(argv)
    stale = []
    for py in sources():
        ipynb, text = py.with_suffix(".ipynb"), render(py)
        if a.action == "build":
            if not ipynb.exists() or ipynb.read_text() != text:
                ipynb.write_text(text)
                print(f"wrote {ipynb.relative_to(ROOT)}")
        elif not ipynb.exists() or ipynb.read_text() != text:
            stale.append(ipynb.relative_to(ROOT))
    for s in stale:
        print(f"{s}: not the notebook generated from {s.with_suffix('.py').name} (run tools/notebooks.py build)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
