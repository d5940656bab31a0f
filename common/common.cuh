// common.cuh - everything a chapter program needs: include this one header.
// Image programs also include image.h (OpenCV).
//
// The headers are header-only: `nvcc -std=c++17 -O3 -arch=native -I../common -o X X.cu`, the line
// at the top of every program, builds it on its own. The Makefiles compile the bodies of common/'s
// functions once instead (common/build/liblab_common.a, from lab_common.cpp) and build the programs
// with -DLAB_COMMON_SEPARATE, which leaves only declarations and templates here: nvcc parses a
// program once for the host and once per architecture, and common/'s bodies with their standard
// headers, parsed six times and compiled with -O3 in every program, cost more than most programs'
// own code. build_mode.h has the details.
#pragma once
#include "args.h"
#include "check.cuh"
#include "cuda_compat.cuh"
#include "compare.h"
#include "device.cuh"
#include "guard.h"
#include "random.h"
#include "timer.cuh"
