# common.mk - toolchain, GPU architecture and build rules shared by every chapter.
#
# A chapter Makefile sets PROGRAMS (one .cu file each), IMAGE_PROGRAMS (the subset that needs
# OpenCV) and any per-program extras as target-specific variables, then includes this file:
#     PROGRAMS := vector_add sobel_edge
#     IMAGE_PROGRAMS := sobel_edge
#     matmul_tiled: LDLIBS += -lcublas
#     include ../common.mk
#
# Architecture: the GPU in this machine (-arch=native) when there is one, otherwise a portable
# set (SASS for sm_75 .. sm_90 plus PTX that newer GPUs JIT-compile). `make ARCH=sm_90` picks one.
# `make DEBUG=1` adds -g and makes CHECK_LAUNCH() synchronize after every launch.
#
# common/ is compiled once: the bodies of its functions go into a library, common/build/
# liblab_common.a (common/lab_common.cpp), and the programs are compiled with -DLAB_COMMON_SEPARATE,
# which leaves only declarations and templates in the headers (common/build_mode.h says why: each
# program's five device passes and its host pass no longer parse and compile them). A program
# built on its own with the nvcc line at its top compiles the headers whole and needs no library.

COMMON_DIR := $(abspath $(dir $(lastword $(MAKEFILE_LIST)))common)
include $(COMMON_DIR)/../jobs.mk
CUDA_PATH ?= $(patsubst %/bin/nvcc,%,$(shell command -v nvcc 2>/dev/null))
NVCC ?= nvcc

PORTABLE_ARCH := -gencode arch=compute_75,code=sm_75 -gencode arch=compute_80,code=sm_80 \
                 -gencode arch=compute_86,code=sm_86 -gencode arch=compute_89,code=sm_89 \
                 -gencode arch=compute_90,code=[sm_90,compute_90]
ifeq ($(strip $(ARCH)),)
  HAVE_GPU := $(shell $(CUDA_PATH)/bin/__nvcc_device_query >/dev/null 2>&1 && echo yes)
  ARCH_FLAGS := $(if $(HAVE_GPU),-arch=native,$(PORTABLE_ARCH))
else
  ARCH_FLAGS := -arch=$(ARCH)
endif

# Host warnings on; any nvcc warning is an error.
NVCCFLAGS ?= -std=c++17 -O3 -lineinfo
# (WERROR= turns that off: tests/mutants.py builds deliberately broken copies, where a warning is expected.)
WERROR ?= -Werror all-warnings
NVCCFLAGS += $(ARCH_FLAGS) $(WERROR) -Xcompiler -Wall,-Wextra -I$(COMMON_DIR)
ifeq ($(DEBUG),1)
  NVCCFLAGS += -g -DCUDA_DEBUG_SYNC
endif
# `make CUDART=shared` links the CUDA runtime as a shared library (nvcc's default is static): the
# ordering stress (tests/stress.py) preloads a library in front of it, which a static runtime hides.
ifeq ($(CUDART),shared)
  NVCCFLAGS += -cudart shared
endif

# The library of common/'s bodies: compiled from the global flags (host code: no architecture, and
# none of a program's target-specific flags, which its prerequisites would otherwise inherit), once
# per DEBUG setting. Written under another name and renamed, so that two makes never link half a file.
# COMMON_MODE is the programs' side; a program whose flags change what the library's code means
# sets it empty and is built header-only (05_streams: --default-stream per-thread).
# The exercises built for a WORKSPACE (below) link a copy in WORKSPACE/.build: nothing is then
# written into this tree, which may be read-only.
LAB_LIB_NAME := liblab_common$(if $(filter 1,$(DEBUG)),-debug).a
LAB_COMMON_LIB := $(COMMON_DIR)/build/$(LAB_LIB_NAME)
EX_COMMON_LIB := $(if $(strip $(WORKSPACE)),$(abspath $(WORKSPACE))/.build/$(LAB_LIB_NAME),$(LAB_COMMON_LIB))
LAB_LIB_FLAGS := $(filter-out $(ARCH_FLAGS),$(NVCCFLAGS))
COMMON_MODE := -DLAB_COMMON_SEPARATE
NVCCFLAGS += $(COMMON_MODE)
LDLIBS += $(if $(COMMON_MODE),$(LAB_COMMON_LIB))

include $(dir $(lastword $(MAKEFILE_LIST)))opencv.mk

BUILD := $(if $(HAVE_OPENCV),$(PROGRAMS),$(filter-out $(IMAGE_PROGRAMS),$(PROGRAMS)))
# SLOW_PROGRAMS (a chapter sets it: the programs that take longest to compile) are started first, so
# that a parallel build does not end with one core compiling one of them while the other waits.
BUILD_ORDER := $(foreach p,$(SLOW_PROGRAMS),$(filter $(p),$(BUILD))) $(filter-out $(SLOW_PROGRAMS),$(BUILD))
COMMON_HEADERS := $(wildcard $(COMMON_DIR)/*.h $(COMMON_DIR)/*.cuh)

.DEFAULT_GOAL := all
.PHONY: all run test clean list image-programs profile opencv-notice lab-common

all: $(BUILD_ORDER) $(EXTRA_TARGETS) opencv-notice

opencv-notice:
ifneq ($(HAVE_OPENCV),yes)
  ifneq ($(strip $(IMAGE_PROGRAMS)),)
	@echo "notice: OpenCV not found (pkg-config opencv4, or OPENCV_DIR=...); not building $(IMAGE_PROGRAMS) - install libopencv-dev (Debian/Ubuntu), or make OPENCV_DIR=/where/opencv/is"
  endif
endif

$(IMAGE_PROGRAMS): NVCCFLAGS += $(OPENCV_CFLAGS)
$(IMAGE_PROGRAMS): LDLIBS += $(OPENCV_LIBS)

%: %.cu $(COMMON_HEADERS) $(LAB_COMMON_LIB)
	$(NVCC) $(NVCCFLAGS) -o $@ $< $(LDLIBS)
$(PROGRAMS): $(LAB_COMMON_LIB)

lab-common: $(LAB_COMMON_LIB)

# The ordering stress's preloaded library (tests/stress.py), for the programs' architectures; the
# top-level `make .stress/libordering_stress.so` comes here.
STRESS_LIB := $(abspath $(COMMON_DIR)/../.stress/libordering_stress.so)
.PHONY: stress-lib
stress-lib: $(STRESS_LIB)
	@:
$(STRESS_LIB): $(abspath $(COMMON_DIR)/../tests/stress/ordering_stress.cu)
	@mkdir -p $(@D)
	$(NVCC) -std=c++17 -O2 $(ARCH_FLAGS) $(WERROR) -Xcompiler -Wall,-Wextra,-fPIC -shared -cudart shared -o $@ $< -ldl
# The peak-memory library (tools/peak_memory.py): host code only, preloaded in front of the shared
# runtime like the stress's; the top-level `make .stress/libpeak_alloc.so` comes here.
PEAK_LIB := $(abspath $(COMMON_DIR)/../.stress/libpeak_alloc.so)
.PHONY: peak-lib
peak-lib: $(PEAK_LIB)
	@:
$(PEAK_LIB): $(abspath $(COMMON_DIR)/../tools/peak_memory/peak_alloc.cpp)
	@mkdir -p $(@D)
	$(NVCC) -std=c++17 -O2 $(WERROR) -Xcompiler -Wall,-Wextra,-fPIC -shared -cudart shared -o $@ $< -ldl -lpthread
$(sort $(LAB_COMMON_LIB) $(EX_COMMON_LIB)): $(COMMON_DIR)/lab_common.cpp $(COMMON_HEADERS)
	@mkdir -p $(@D)
	$(NVCC) $(LAB_LIB_FLAGS) -lib -o $@.tmp$$$$ $< && mv -f $@.tmp$$$$ $@

# Listings for the labs (lab.sh uses them; any program of any chapter works):
#   make transpose.sass   cuobjdump -sass of the program as built: the SASS that runs (one
#                         architecture on a GPU machine or with ARCH=..., else the portable five)
#   make transpose.regs   ptxas -v report: registers, spill stores/loads, stack and shared memory
#                         per kernel, for one architecture: ARCH when given, else this machine's
#                         GPU, else sm_90 (nvcc -Xptxas -v -c; compiled again every time)
LISTING_ARCH := $(if $(strip $(ARCH)),-arch=$(ARCH),$(if $(HAVE_GPU),-arch=native,-arch=sm_90))
CUOBJDUMP ?= cuobjdump
%.sass: %
	$(CUOBJDUMP) -sass $< > $@ || { rm -f $@; exit 1; }
%.regs: ARCH_FLAGS = $(LISTING_ARCH)
%.regs: %.cu $(COMMON_HEADERS) FORCE
	@$(NVCC) $(NVCCFLAGS) -Xptxas -v -c -o /dev/null $< 2> $@ || { cat $@; rm -f $@; exit 1; }
$(IMAGE_PROGRAMS:=.regs): NVCCFLAGS += $(OPENCV_CFLAGS)
.PHONY: FORCE
FORCE:

# Every program at its default (full) size; a skip (exit 77) is not a failure.
run: all
	@for p in $(BUILD); do echo "== $$p"; ./$$p; rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 77 ]; then echo "$$p exited $$rc"; exit 1; fi; done

# This chapter's part of the test suite (the top-level `make test` runs all of it).
test: all
	@$(MAKE) --no-print-directory -C .. test CHAPTER=$(notdir $(CURDIR))

# The chapter's lab (README "Lab"): ncu / compute-sanitizer / cuobjdump commands in lab.sh.
# `+`: lab.sh runs make (the listings), and that make shares this one's jobs; without the `+` make
# keeps its jobserver from the script, and the inner make warns "jobserver unavailable". (A `+`
# line runs under `make -n` too: `make -n profile` runs the lab.)
profile: all
	+./lab.sh

# Python with matplotlib for the plotting targets: the repository's .venv (make test creates it) if present.
PYTHON ?= $(if $(wildcard $(COMMON_DIR)/../.venv/bin/python),$(COMMON_DIR)/../.venv/bin/python,python3)

list:
	@for p in $(PROGRAMS); do echo $$p; done

# For tools/toolkit_check.py: whether OpenCV was found (yes / no), then the programs that need it.
image-programs:
	@echo $(if $(HAVE_OPENCV),yes,no) $(IMAGE_PROGRAMS)

# (the library in common/build is shared by every chapter: the top-level `make clean` removes it)
clean:
	rm -f $(PROGRAMS) $(EXTRA_TARGETS) $(CLEAN_EXTRA) *.o *.sass *.regs *.png *.csv

# `make results` (the top-level `make results` runs it in every chapter): each program listed in
# RESULTS writes its table to figures/NAME.csv, then a chapter with a `plots:` target runs it (its
# figure programs with --csv=figures/NAME.csv, then plot.py). A skipped program (77) is no error.
# RESULTS_ARGS_NAME: options for NAME's run (the size of the READMEs' figures where a program's
# default was made smaller to fit a 4 GB card).
.PHONY: results
results: $(filter $(BUILD),$(RESULTS))
	@mkdir -p figures
	@$(foreach p,$(filter $(BUILD),$(RESULTS)),echo "== ./$(p) --csv=figures/$(p).csv $(RESULTS_ARGS_$(p))"; \
	  ./$(p) --csv=figures/$(p).csv $(RESULTS_ARGS_$(p)); rc=$$?; \
	  if [ $$rc -ne 0 ] && [ $$rc -ne 77 ]; then echo "$(p) exited $$rc"; exit 1; fi;) true
	@if grep -q '^plots:' Makefile; then $(MAKE) --no-print-directory plots; fi

# Exercises (exercises/README.md; not part of `make all`). Students work on copies:
#   make workspace   copies exercises/*.cu and answers.txt into workspace/ (ignored by git); a file
#                    already there is kept, so re-running it never overwrites your work
#   make exercises   builds the copies in workspace/ (making it first if needed)
#   make check       builds them, then says for each exercise `solved` or `not yet` with a hint
#                    (tools/exercises.py; exit 0 only when all are solved)
# WORKSPACE=DIR (on the command line or in the environment) puts the copies, what they build and
# the hint count in DIR/<chapter> instead of workspace/: with it nothing is written into this tree,
# which can then be a shared read-only copy (one WORKSPACE per student). A relative DIR is taken
# from the folder make runs in (the top-level Makefile passes an absolute one).
# EX_SRC / EX_BIN choose other folders (the test suite builds exercises/ and exercises/solutions/).
# EX_FROM (the top-level `make check` sets it to NN_name/) goes in front of the relative paths that
# the copied / kept lines print, so that read from the repository root they name the chapter.
WS_DIR := $(if $(strip $(WORKSPACE)),$(abspath $(WORKSPACE))/$(notdir $(CURDIR)),workspace)
WS_SHOWN = $(if $(filter /%,$(WS_DIR)),$(WS_DIR),$(EX_FROM)$(WS_DIR))
EX_SRC ?= $(WS_DIR)
EX_BIN ?= $(EX_SRC)
EX_PROGRAMS = $(patsubst $(EX_SRC)/%.cu,$(EX_BIN)/%,$(wildcard $(EX_SRC)/*.cu))
.PHONY: workspace exercises exercises-build check
workspace:
	@if [ ! -f exercises/exercises.txt ]; then echo "$(notdir $(CURDIR)) has no exercises"; exit 1; fi
	@mkdir -p $(WS_DIR)
	@for f in exercises/*.cu exercises/answers.txt; do [ -e "$$f" ] || continue; \
	  if [ -e "$(WS_DIR)/$${f##*/}" ]; then [ -n "$(EX_QUIET)" ] || echo "kept     $(WS_SHOWN)/$${f##*/} (yours)"; \
	  else cp "$$f" $(WS_DIR)/ && echo "copied   $(EX_FROM)$$f -> $(WS_SHOWN)/"; fi; done
exercises:
	@$(if $(filter $(WS_DIR),$(EX_SRC)),$(MAKE) --no-print-directory workspace EX_QUIET=1 &&) $(MAKE) --no-print-directory exercises-build
exercises-build: $(EX_PROGRAMS)
$(EX_BIN)/%: LAB_COMMON_LIB = $(EX_COMMON_LIB)
# The compiler's output is kept in EX_BIN/.NAME.log, and a file that does not build leaves no program
# (not even an older one), so that the check says `not yet` with the compiler's first message for it
# while it grades the others: `make check` builds with -k, one warning (an error here) stops nothing else.
$(EX_BIN)/%: $(EX_SRC)/%.cu $(COMMON_HEADERS) $(EX_COMMON_LIB)
	@mkdir -p $(EX_BIN) && rm -f $@
	@echo "$(NVCC) $(NVCCFLAGS) -o $@ $< $(LDLIBS) $(EX_LDLIBS)"
	@$(NVCC) $(NVCCFLAGS) -o $@ $< $(LDLIBS) $(EX_LDLIBS) > $(EX_BIN)/.$*.log 2>&1; rc=$$?; \
	  cat $(EX_BIN)/.$*.log; if [ $$rc -ne 0 ]; then rm -f $@; exit $$rc; fi
check:
	@$(MAKE) --no-print-directory -k exercises || echo "$(notdir $(CURDIR)): some exercises did not build (above); the check says which"
	@$(PYTHON) $(COMMON_DIR)/../tools/exercises.py check $(CURDIR) --src=$(EX_SRC) --bin=$(EX_BIN)
