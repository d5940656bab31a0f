# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown]
# # 06_unified: Unified memory
#
# The lab of this chapter, run in a notebook: each program is built with the chapter's `make` and
# run; the lesson is in the chapter README (the link below, and the line that each program cell
# prints from its table). Run the cells in order. A program ends with `PASSED`, `FAILED: ...` or
# `SKIPPED: <reason>` (no GPU, or a feature this GPU lacks).

# (here tools/notebooks.py puts the cells of notebooks/setup_cells.py: the same in every chapter)

# %%
lab.setup("06_unified", REPO_URL)

# %% [markdown]
# ## The programs

# %%
lab.run("um_page_faults")

# %%
lab.run("um_advise")

# %%
lab.run("um_oversubscription")

# %%
lab.run("managed_matmul")

# %%
lab.run("uva")

# %%
lab.run("ipc")

# %% [markdown]
# ## Figures
# The chapter's `make plots`: the programs write `--csv` files, the chapter's `plot.py` draws them
# (into `notebooks/output/`, so the committed figures of the chapter stay as they are).

# %%
lab.figures()

# %% [markdown]
# ## Exercises
# `make workspace` copies the exercises into your workspace (it never overwrites your copies); the
# exercises' README says what each asks. Edit your copy (the file browser, or `lab.edit`), then
# `make check`: each exercise says `solved` or `not yet` with a hint (a pointer to the manual the
# first time, where to look the second time). A command of the exercises' README runs in the chapter
# folder with `lab.sh("...")`, e.g. `lab.sh("./um_page_faults --help")`.

# %%
lab.exercises()

# %% [markdown]
# A **predict** exercise: write your prediction before measuring (it is not graded), then the measured value.

# %%
# lab.answer("prefetch_speedup.predicted", "...")   # your prediction
# lab.answer("prefetch_speedup.measured", "...")    # what the command in the exercises' README shows

# %% [markdown]
# A **faster** exercise: the lines that are yours to change in `prefetch_add.cu`.

# %%
lab.show("prefetch_add.cu")
# lab.edit("prefetch_add.cu", "the line as it is", "the line as you want it")

# %%
lab.check()

# %% [markdown]
# ## Lab: Nsight Compute and compute-sanitizer
# The chapter's `make profile` (its `lab.sh`). Where this runtime has no Nsight Compute, or keeps the
# GPU's performance counters for administrators (`ERR_NVGPUCTRPERM`), the ncu steps are left out
# and a line says why; the compute-sanitizer steps run wherever the toolkit has it.

# %%
lab.profile()

# %% [markdown]
# ## Summary

# %%
lab.summary()
