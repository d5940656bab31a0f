// check.cuh - CUDA error checking.
//
// Every CUDA runtime call returns a cudaError_t that is easy to ignore; an ignored error
// resurfaces much later at an unrelated call. CHECK(call) stops the program at the failing
// line and prints the file, the line, the call's text, the error's name and its description,
// then exits 1. Kernel launches return nothing: put CHECK_LAUNCH() right after <<<...>>>.
// It catches configuration errors (too many threads, too much shared memory) at once. Errors
// that happen while the kernel runs (an out-of-bounds access) surface only at the next
// synchronizing call; build with `make DEBUG=1` (defines CUDA_DEBUG_SYNC) and CHECK_LAUNCH()
// also synchronizes, so such an error is reported at the launch that caused it.
//
// Running out of memory is not a bug but a size too large for this machine, so it gets one line,
// "FAILED: out of memory ...", and exit 1: a failed cudaMalloc* (cudaErrorMemoryAllocation) says how
// much the GPU has free; a failed host allocation (std::vector, new) lands in the new-handler
// installed below instead of an uncaught std::bad_alloc, which would abort with a core dump.
#pragma once
#include <cstdio>
#include <cstdlib>
#include <new>
#include <cuda_runtime.h>
#include "build_mode.h"

// Prints the failing call and exits 1 (a failed allocation: one "FAILED: out of memory" line).
LAB_INLINE void check_cuda(cudaError_t err, const char* call, const char* file, int line);

#define CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)

LAB_INLINE void host_out_of_memory();
inline const bool host_oom_handler_installed = (std::set_new_handler(host_out_of_memory), true);

#ifdef CUDA_DEBUG_SYNC
#define CHECK_LAUNCH()                                                             \
    do {                                                                           \
        check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__);       \
        check_cuda(cudaDeviceSynchronize(), "kernel execution", __FILE__, __LINE__); \
    } while (0)
#else
#define CHECK_LAUNCH() check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#endif

// ---- the bodies: inline here (header-only), or compiled once into the library (build_mode.h) ----
#if LAB_COMMON_BODIES
LAB_INLINE void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
    if (err == cudaErrorMemoryAllocation) {
        size_t free_b = 0, total_b = 0;
        if (cudaMemGetInfo(&free_b, &total_b) != cudaSuccess) free_b = total_b = 0;
        std::printf("FAILED: out of memory: %s at %s:%d; the GPU has %.1f GB free of %.1f GB\n", call, file, line,
                    free_b / 1e9, total_b / 1e9);
        std::exit(1);
    }
    if (err != cudaSuccess) {
        std::fprintf(stderr, "CUDA error at %s:%d\n  call:  %s\n  error: %s (%s)\n", file, line,
                     call, cudaGetErrorName(err), cudaGetErrorString(err));
        std::printf("FAILED: CUDA error %s at %s:%d\n", cudaGetErrorName(err), file, line);
        std::exit(1);
    }
}

LAB_INLINE void host_out_of_memory() {
    std::printf("FAILED: out of memory: a host allocation failed (the size is too large for this machine)\n");
    std::exit(1);
}
#endif  // LAB_COMMON_BODIES
