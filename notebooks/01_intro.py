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
# # 01_intro: Introduction: threads, blocks, the first kernels
#
# The lab of this chapter, run in a notebook: each program is built with the chapter's `make` and
# run; the lesson is in the chapter README (the link below, and the line that each program cell
# prints from its table). Run the cells in order. A program ends with `PASSED`, `FAILED: ...` or
# `SKIPPED: <reason>` (no GPU, or a feature this GPU lacks).

# (here tools/notebooks.py puts the cells of notebooks/setup_cells.py: the same in every chapter)

# %%
lab.setup("01_intro", REPO_URL)

# %% [markdown]
# ## The programs

# %%
lab.run("vector_add")

# %%
lab.run("hello_gpu")

# %%
lab.run("hello_multi")

# %%
lab.run("device_query")

# %%
lab.run("thread_indexing")

# %%
lab.run("mat_add_2d")

# %%
lab.run("matmul_naive")

# %%
lab.run("error_checking")

# %%
lab.run("call_stack")

# %%
lab.run("runtime_init")

# %%
lab.run("compilation")

# %%
lab.run("nvrtc_saxpy")

# %%
lab.run("block_scheduling")

# %%
lab.run("warp_divergence")

# %%
lab.run("occupancy")

# %%
lab.run("rgb_to_gray")

# %%
lab.run("sobel_edge")

# %%
lab.run("arith_instructions")

# %%
lab.run("latency_hiding")

# %%
lab.run("flop_byte")

# %%
lab.run("block_size")

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
# folder with `lab.sh("...")`, e.g. `lab.sh("./vector_add --help")`.

# %%
lab.exercises()

# %% [markdown]
# A **predict** exercise: write your prediction before measuring (it is not graded), then the measured value.

# %%
# lab.answer("idle_threads.predicted", "...")   # your prediction
# lab.answer("idle_threads.measured", "...")    # what the command in the exercises' README shows

# %% [markdown]
# A **fix** exercise: the lines that are yours to change in `matmul_bounds.cu`.

# %%
lab.show("matmul_bounds.cu")
# lab.edit("matmul_bounds.cu", "the line as it is", "the line as you want it")

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
