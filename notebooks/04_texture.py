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
# # 04_texture: Texture and surface memory
#
# The lab of this chapter, run in a notebook: each program is built with the chapter's `make` and
# run; the lesson is in the chapter README (the link below, and the line that each program cell
# prints from its table). Run the cells in order. A program ends with `PASSED`, `FAILED: ...` or
# `SKIPPED: <reason>` (no GPU, or a feature this GPU lacks).

# (here tools/notebooks.py puts the cells of notebooks/setup_cells.py: the same in every chapter)

# %%
lab.setup("04_texture", REPO_URL)

# %% [markdown]
# ## The programs

# %%
lab.run("read_texels")

# %%
lab.run("negate_array")

# %%
lab.run("reverse_array")

# %%
lab.run("texture_rotate")

# %%
lab.run("image_scaling")

# %%
lab.run("addressing_modes")

# %%
lab.run("read_modes")

# %%
lab.run("layered_texture")

# %%
lab.run("cubemap")

# %%
lab.run("texture_gather")

# %%
lab.run("surface_copy")

# %%
lab.run("texture_coherency")

# %%
lab.run("sobel_texture")

# %%
lab.run("texture_float4")

# %%
lab.run("texture_pitch2d")

# %%
lab.run("texture_double")

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
# folder with `lab.sh("...")`, e.g. `lab.sh("./read_texels --help")`.

# %%
lab.exercises()

# %% [markdown]
# A **predict** exercise: write your prediction before measuring (it is not graded), then the measured value.

# %%
# lab.answer("tex1d_linear.predicted", "...")   # your prediction
# lab.answer("tex1d_linear.measured", "...")    # what the command in the exercises' README shows

# %% [markdown]
# A **fix** exercise: the lines that are yours to change in `wrap_mode.cu`.

# %%
lab.show("wrap_mode.cu")
# lab.edit("wrap_mode.cu", "the line as it is", "the line as you want it")

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
