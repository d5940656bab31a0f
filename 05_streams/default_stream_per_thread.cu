// default_stream_per_thread - default_stream.cu built with --default-stream per-thread.
//
// Manual: G 3.2.6.5.2 默认流 (the per-thread default stream).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common --default-stream per-thread
//              -o default_stream_per_thread default_stream_per_thread.cu
// Shows:  the same program as default_stream (read default_stream.cu), compiled so that stream 0
//         is each host thread's own ordinary stream: nvcc defines CUDA_API_PER_THREAD_DEFAULT_STREAM
//         and the program's expectations follow it. Nothing between kernels A and B serializes
//         them, except an explicit cudaStreamLegacy, which is the NULL stream in both builds.
// Build:  make default_stream_per_thread
// Run:    ./default_stream_per_thread [--spin-ms=20]
// Output: as default_stream, with "per-thread" in its build line; PASSED.
#ifndef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "build with nvcc --default-stream per-thread (make default_stream_per_thread does)"
#endif
#include "default_stream.cu"
