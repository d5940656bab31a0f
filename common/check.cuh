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
#pragma once
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>

inline void check_cuda(cudaError_t err, const char* call, const char* file, int line) {
    if (err != cudaSuccess) {
        std::fprintf(stderr, "CUDA error at %s:%d\n  call:  %s\n  error: %s (%s)\n", file, line,
                     call, cudaGetErrorName(err), cudaGetErrorString(err));
        std::printf("FAILED: CUDA error %s at %s:%d\n", cudaGetErrorName(err), file, line);
        std::exit(1);
    }
}

#define CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)

#ifdef CUDA_DEBUG_SYNC
#define CHECK_LAUNCH()                                                             \
    do {                                                                           \
        check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__);       \
        check_cuda(cudaDeviceSynchronize(), "kernel execution", __FILE__, __LINE__); \
    } while (0)
#else
#define CHECK_LAUNCH() check_cuda(cudaGetLastError(), "kernel launch", __FILE__, __LINE__)
#endif
