// build_mode.h - how common/'s headers are compiled: header-only (the default) or separately.
//
// Header-only, the default: `nvcc -std=c++17 -O3 -arch=native -I../common -o X X.cu` (the line at
// the top of every program) builds a program from its one .cu file. Every header then also holds
// the bodies of its functions, marked `inline` (LAB_INLINE) so that several files of one program
// may include them.
//
// Separately (the Makefiles): a header holds only declarations and templates when the program is
// compiled with -DLAB_COMMON_SEPARATE, and common/lab_common.cpp, which defines
// LAB_COMMON_IMPLEMENTATION, compiles the bodies once into a library that every program links.
// Why: nvcc compiles a .cu file's host code once and its device code once per architecture, and
// every pass parses everything the file includes. Parsing the heavy standard headers that only the
// bodies need (<sstream>, <fstream>, <chrono>, <random>) five times per program, and compiling the
// same bodies with -O3 into every program, cost more than compiling most programs' own code.
//
// Code that depends on a program's own flags stays in the headers in both modes: the CHECK_LAUNCH
// macro (CUDA_DEBUG_SYNC), select_device()'s __CUDA_ARCH_LIST__ check, cuda_compat.cuh
// (CUDA_LAB_DRIVER_API_ROUTE), corrupt.h and image.h. A program built with
// `--default-stream per-thread` (CUDA_API_PER_THREAD_DEFAULT_STREAM) is built header-only: the
// library's stream-0 calls would otherwise go to the legacy default stream, not the program's.
#pragma once

#if defined(LAB_COMMON_IMPLEMENTATION)
#define LAB_COMMON_BODIES 1  // lab_common.cpp: the one copy of the bodies, not inline
#define LAB_INLINE
#elif defined(LAB_COMMON_SEPARATE)
#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
#error "LAB_COMMON_SEPARATE with --default-stream per-thread: build this program header-only (the library uses the legacy default stream)"
#endif
#define LAB_COMMON_BODIES 0  // a program of the Makefile build: declarations only, bodies in the library
#define LAB_INLINE
#else
#define LAB_COMMON_BODIES 1  // header-only: every body here, inline
#define LAB_INLINE inline
#endif
