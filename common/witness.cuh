// witness.cuh - the exercises' record that a kernel did the work (issue 35: a result computed on the
// CPU, copied in, or written twice must not pass a "fix" exercise's check).
//
// Every element a kernel writes adds witness(its address, its bits) to gpu_witness (atomicAdd); the
// program then compares gpu_witness with witness_sum() of the result it downloaded. The hash is the
// splitmix64 finalizer of the address times a constant, xor the bits: a value written at another
// address, or missing, or counted twice, changes the sum.
// Include it in one translation unit of a program only: it defines the __device__ variable.
#pragma once
#include <cstring>
#include <cuda_runtime.h>
#include "check.cuh"

__device__ unsigned long long gpu_witness;

__host__ __device__ inline unsigned long long witness(const void* where, unsigned bits) {
    unsigned long long x = (unsigned long long)(size_t)where * 0x9e3779b97f4a7c15ull ^ bits;
    x ^= x >> 31;  // the splitmix64 finalizer
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 32;
    return x;
}

// The sum that the elements got[0..n) give at their device addresses d[0..n): witness_sum(d, got, n)
// for float, int or unsigned elements. It is an object, not a function template, so that a student's
// region can neither overload it nor specialise it, and REGION_GUARD(witness_sum) (guard.h) after the
// region stops a region that hides it.
inline unsigned long long witness_bytes(const void* d, const void* got, long long n) {
    unsigned long long sum = 0;
    for (long long i = 0; i < n; ++i) {
        unsigned bits;
        std::memcpy(&bits, static_cast<const char*>(got) + 4 * i, 4);
        sum += witness(static_cast<const char*>(d) + 4 * i, bits);
    }
    return sum;
}
struct WitnessSum {
    unsigned long long operator()(const float* d, const float* got, long long n) const {
        return witness_bytes(d, got, n);
    }
    unsigned long long operator()(const int* d, const int* got, long long n) const {
        return witness_bytes(d, got, n);
    }
    unsigned long long operator()(const unsigned* d, const unsigned* got, long long n) const {
        return witness_bytes(d, got, n);
    }
};
inline constexpr WitnessSum witness_sum{};

// gpu_witness as it is now, read in a stream of its own that waits for no other (a snapshot: a
// kernel still running has added only what it wrote so far).
inline unsigned long long witness_now() {
    cudaStream_t t;
    CHECK(cudaStreamCreateWithFlags(&t, cudaStreamNonBlocking));
    unsigned long long v = 0;
    CHECK(cudaMemcpyFromSymbolAsync(&v, gpu_witness, sizeof v, 0, cudaMemcpyDeviceToHost, t));
    CHECK(cudaStreamSynchronize(t));
    CHECK(cudaStreamDestroy(t));
    return v;
}
