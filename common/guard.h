// guard.h - the guard lines of the exercises (issue 35), at the end of a student's region.
//
// The region is compiled in a namespace of its own (namespace yours, at namespace scope) or in a
// function of its own (a lambda, inside main), so nothing it declares can replace a name that the
// code after it calls: that code sees only what the `using yours::NAME;` line names. The guard
// lines, inside that namespace or function, make the attempt a build error with the name: an
// overload or a local that could not work, reported as such.
//
// REGION_GUARD(witness_now) compiles only when `witness_now`, looked up where the line is, is the one
// entity ::witness_now: a region that declares a name of that spelling (a local in any form, an
// overload, a function of the same signature - in namespace yours each is yours::witness_now) makes
// the lookup find the region's, and the static_assert stops the build (for a non-static local of a
// region inside main the compiler stops first, with its own error: such a local is no valid template
// argument). For a function template write
// the specialization the code calls, REGION_GUARD(random_vector<float>). REGION_GUARD_TYPE(Verdict):
// the same for a class. A name that is not on a guard line is not reported this way (the exercise's
// check, tools/exercises.py, refuses the declarations it reads by their text), but it still replaces
// nothing outside the region.
#pragma once
#include <type_traits>

template <auto A, auto B>
inline constexpr bool lab_same_entity = false;
template <auto A>
inline constexpr bool lab_same_entity<A, A> = true;

#define REGION_GUARD(fn_) \
    static_assert(::lab_same_entity<&fn_, &::fn_>, "the region declares " #fn_ ", a name the code after it calls")
#define REGION_GUARD_TYPE(type_) \
    static_assert(::std::is_same<type_, ::type_>::value, "the region declares " #type_ ", a name the code after it calls")

// REGION_SIGNATURE(work, void (*)(const uint32_t*, uint32_t*, long long, int)), after the `using` line:
// the function the program calls keeps its published type - no parameter added (a default argument
// is code of the region's that runs on the host at every call, `k<<<g, b>>>(x)` included), none
// whose type has a constructor of the region's, and no overload (&work would be ambiguous); a host
// function may add noexcept (nvcc refuses it on a __global__ one).
#define REGION_SIGNATURE(fn_, type_)                                                                  \
    static_assert(::std::is_same<decltype(&fn_), type_>::value ||                                       \
                      ::std::is_same<decltype(&fn_), type_ noexcept>::value,                            \
                  #fn_ " must keep its published signature: no parameter added or changed, no overload")

// The runtime's functions that the programs' checks and timings call after a region and that a guard
// can name (each one function, not overloaded, in the cuda_runtime.h of CUDA 12.2 to 13.5). The ones
// that cuda_runtime.h overloads with templates cannot be named by a guard (cudaMalloc, cudaMallocHost,
// cudaMallocManaged, cudaMallocPitch, cudaMemcpyToSymbol, cudaMemcpyFromSymbol, cudaEventCreate,
// cudaCreateChannelDesc, cudaOccupancyMaxActiveBlocksPerMultiprocessor, and cudaMemcpyAsync in CUDA
// 13.5). A toolkit that adds an overload of a listed one makes every exercise fail to build here
// (make test-toolkits shows it): take it off.
#define REGION_GUARD_RUNTIME()                                                                            \
    REGION_GUARD(cudaMemcpy); REGION_GUARD(cudaMemcpy2D); REGION_GUARD(cudaMemcpy2DToArray);             \
    REGION_GUARD(cudaMemcpy2DFromArray); REGION_GUARD(cudaMemset); REGION_GUARD(cudaMemsetAsync);         \
    REGION_GUARD(cudaDeviceSynchronize); REGION_GUARD(cudaStreamSynchronize);                             \
    REGION_GUARD(cudaEventSynchronize); REGION_GUARD(cudaEventRecord); REGION_GUARD(cudaEventElapsedTime); \
    REGION_GUARD(cudaGetTextureObjectTextureDesc); REGION_GUARD(cudaGetLastError);                        \
    REGION_GUARD(cudaPeekAtLastError); REGION_GUARD(cudaFree); REGION_GUARD(cudaFreeHost);                \
    REGION_GUARD(cudaFreeArray); REGION_GUARD(cudaMallocArray); REGION_GUARD(cudaCreateTextureObject);    \
    REGION_GUARD(cudaCreateSurfaceObject); REGION_GUARD(cudaDestroyTextureObject);                        \
    REGION_GUARD(cudaDestroySurfaceObject); REGION_GUARD(cudaStreamCreate); REGION_GUARD(cudaStreamDestroy); \
    REGION_GUARD(cudaEventDestroy); REGION_GUARD(cudaGraphExecDestroy)
