# jobs.mk - parallel builds by default (included by the top-level Makefile and common.mk).
# Builds use every core (JOBS=1 for one job at a time): the portable build compiles each program
# for five architectures, minutes on a laptop without parallel jobs. Sub-makes share the jobs of
# the make that was typed; GNU make 4.4 and later also respect a -jN typed on the command line.
JOBS ?= $(shell nproc 2>/dev/null || echo 2)
ifeq ($(MAKELEVEL),0)
  ifeq ($(filter -j%,$(MAKEFLAGS)),)
    MAKEFLAGS += -j$(JOBS)
  endif
endif
