# Top-level Makefile: builds every chapter and runs the one test command, `make test`.
#   make              build all chapters (on every core; make JOBS=1 for one job at a time)
#   make test         build, then run the test suite (pytest; sets up a virtualenv if needed)
#   make run          run every program at its default size
#   make gpu-check    on a GPU machine: build, make test, compute-sanitizer, summary table
#   make check        every chapter's exercises: builds the student's copies, checks them, prints
#                     one table (chapter, exercise, kind, status, attempts) and why any was skipped;
#                     CSV=FILE also writes it as CSV; WORKSPACE=DIR: the copies are in DIR/<chapter>
#                     (made there for every chapter; nothing is then written into this tree), else
#                     in <chapter>/workspace (only where there is one: a chapter without it is
#                     listed as not yet, with the `make -C <chapter> workspace` that starts it)
#   make results      on a GPU machine: run the programs that feed figures and tables, add their
#                     rows to results/<gpu>.csv, redraw every figure, rewrite the README tables
#   make readme-results   no GPU needed: redraw the figures and rewrite the README tables from
#                     the CSV files already in the repository, and the chapter tables of
#                     README.md and README.zh-CN.md from tests/manifest.txt and tests/programs_zh.txt
#   make test-toolkits    no GPU needed: compile every .cu file against CUDA 12.x (oldest and
#                     newest) and the newest 13.x headers from the Python package index
#                     (tools/toolkit_check.py; packages cached in .toolkits/), then its tests
#   make clean
include jobs.mk
CHAPTERS := $(wildcard 0[0-9]_*)
CUDA_PATH ?= $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null))

.PHONY: all test test-toolkits run clean gpu-check check results readme-results lab-common python-env $(CHAPTERS)

all: lab-common $(CHAPTERS) tests/gpu_probe tests/unit/test_common

# common/'s library (common.mk, common/build_mode.h): built once, before the chapters start, so
# that chapters built in parallel never race to build it.
lab-common:
	@$(MAKE) --no-print-directory -f common.mk lab-common

$(CHAPTERS): lab-common
	@$(MAKE) --no-print-directory -C $@ all

# `make test CHAPTER=03_shared` (what a chapter's `make test` calls) builds and tests one chapter.
# The Python of the tests (.venv, tools/run_tests.sh --setup) is made while the programs compile.
test: python-env lab-common $(if $(CHAPTER),$(CHAPTER),$(CHAPTERS)) tests/gpu_probe tests/unit/test_common
	@tools/run_tests.sh $(if $(CHAPTER),--chapter=$(CHAPTER))

python-env:
	@tools/run_tests.sh --setup

run: all
	@for d in $(CHAPTERS); do $(MAKE) --no-print-directory -C $$d run || exit 1; done

gpu-check:
	@tools/gpu_check.sh

# Python with matplotlib: the .venv that `make test` creates, if present.
PYTHON ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)

# Every chapter's exercises in one table (tools/exercises.py table). A chapter whose copies do not
# build is still checked (its programs then say `not built`); the exit status is the table's.
# Without WORKSPACE, a chapter is built only if the student made its workspace/ (make -C NN_name
# workspace): a check never adds workspace/ to a chapter the student has not started. WORKSPACE=DIR
# names the student's folder for every chapter: each chapter's copies are made there if missing.
# Each chapter's build starts with a line naming it (EX_FROM: the copied lines name it too).
EX_CHAPTERS := $(patsubst %/exercises/exercises.txt,%,$(wildcard 0[0-9]_*/exercises/exercises.txt))
WS_ARG := $(if $(strip $(WORKSPACE)),WORKSPACE=$(abspath $(WORKSPACE)))
check:
	@for d in $(EX_CHAPTERS); do \
	  if [ -z "$(WS_ARG)" ] && [ ! -d $$d/workspace ]; then continue; fi; \
	  echo "== make -C $$d exercises$(if $(WS_ARG), $(WS_ARG))"; \
	  $(MAKE) --no-print-directory -k -C $$d exercises $(WS_ARG) EX_FROM=$$d/ || \
	  echo "$$d: some exercises did not build (see above)"; done
	@$(PYTHON) tools/exercises.py table $(EX_CHAPTERS) $(if $(strip $(WORKSPACE)),--workspace=$(abspath $(WORKSPACE))) \
	  $(if $(strip $(CSV)),--csv=$(abspath $(CSV)))

# Whether a usable GPU is here (nvcc's own device query; tests override it).
GPU_QUERY ?= $(CUDA_PATH)/bin/__nvcc_device_query

results:
	@if ! $(GPU_QUERY) >/dev/null 2>&1; then \
	  echo "make results: no usable GPU on this machine, nothing measured (results/ is unchanged)."; \
	  echo "  'make readme-results' redraws the figures and README tables from the files in results/."; \
	  exit 0; fi; \
	for d in $(CHAPTERS); do $(MAKE) --no-print-directory -C $$d results || exit 1; done; \
	$(PYTHON) tools/results.py collect && $(MAKE) --no-print-directory readme-results

test-toolkits:
	@$(PYTHON) tools/toolkit_check.py
	@TOOLKIT_CHECK=1 $(PYTHON) -m pytest tests/test_toolkits.py -q -rs -p no:cacheprovider

readme-results:
	@for d in $(CHAPTERS); do if [ -f $$d/plot.py ]; then $(PYTHON) $$d/plot.py || exit 1; fi; done
	@$(PYTHON) tools/results.py update
	@$(PYTHON) tools/readme_tables.py update

# Asks the CUDA runtime whether a usable GPU is here (exit 0) or why not (exit 77).
tests/gpu_probe: tests/gpu_probe.cu
	nvcc -std=c++17 -O2 -Werror all-warnings -o $@ $<

# The ordering stress's preloaded library (tests/stress.py; not part of `all`): built by common.mk's
# rule, which chooses the architecture as for the programs (this GPU, ARCH=..., or the portable set).
.PHONY: .stress/libordering_stress.so
.stress/libordering_stress.so:
	@$(MAKE) --no-print-directory -f common.mk stress-lib

# The peak-memory library (tools/peak_memory.py), by common.mk's rule.
.PHONY: .stress/libpeak_alloc.so
.stress/libpeak_alloc.so:
	@$(MAKE) --no-print-directory -f common.mk peak-lib

# Host-side unit tests of common/ (no GPU needed).
include opencv.mk
UNIT_FLAGS := -std=c++17 -O1 -Wall -Wextra -Werror -Icommon -isystem $(CUDA_PATH)/include
ifeq ($(HAVE_OPENCV),yes)
  UNIT_FLAGS += $(OPENCV_CFLAGS)
  UNIT_LIBS := $(OPENCV_LIBS)
else
  UNIT_FLAGS += -DNO_OPENCV
endif
tests/unit/test_common: tests/unit/test_common.cpp $(wildcard common/*.h common/*.cuh)
	$(CXX) $(UNIT_FLAGS) -o $@ $< $(UNIT_LIBS)

clean:
	@for d in $(CHAPTERS); do $(MAKE) --no-print-directory -C $$d clean; done
	rm -f tests/gpu_probe tests/unit/test_common
	rm -rf common/build
