// lab_common.cpp - the bodies of common/'s functions, compiled once into the library that the
// Makefiles link into every program (build_mode.h says why; common.mk builds it).
//
// A program built by the Makefiles is compiled with -DLAB_COMMON_SEPARATE: the headers then
// declare these functions and this file defines them. A program compiled on its own with the
// one-line nvcc command at its top needs none of this: the headers are then header-only.
// Host code only: nvcc compiles it with the host compiler, once, whatever the architectures.
#define LAB_COMMON_IMPLEMENTATION
#include "args.h"
#include "check.cuh"
#include "compare.h"
#include "device.cuh"
#include "random.h"
#include "timer.cuh"
#include "results.cuh"
