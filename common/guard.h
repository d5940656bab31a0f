// guard.h - the guard lines of the exercises (issue 35): after a student's region, a line that stops
// the build when the region has replaced a name that the code after it calls.
//
// REGION_GUARD(witness_now) compiles only when `witness_now`, looked up where the line is, is the one
// entity ::witness_now: a region that declares a local of that name (in any form: `auto f{...}`,
// a structured binding, a parenthesised declarator) makes the address a run-time value, one that
// adds an overload of a non-template function makes `&witness_now` ambiguous, and either is an error
// of the compiler, not of a reading of the text. A same-signature definition is a redefinition (or, in
// the library build, a second definition at the link) - unless it is declared inline: the library
// build then inlines the region's copy where the region's file calls it and links the library's, and
// the guard sees one entity. For a function template write the specialization the code calls,
// REGION_GUARD(random_vector<float>): a second template of which that names one specialization makes
// it ambiguous; an explicit specialization (template <>) is the same entity, and a template with a
// further parameter that only the call's arguments deduce is not named by the guard at all.
// REGION_GUARD_TYPE(Verdict): the class is the library's (not its member templates' specializations).
// What it cannot see: those three forms (constexpr functions and friends defined in a class are
// inline too), a name that is not on a guard line (REGION_GUARD_RUNTIME, below, lists the runtime's), and a local
// variable (a buffer, n), which has no :: twin to compare with. tools/exercises.py refuses what it
// can recognise of them by their text: no template other than a __device__ / __global__ function
// template, no friend, no inline or constexpr host function named like one of the library, the runtime
// or the program, no such name in parentheses after a type, no class inside main (see its
// docstring). A reading of the text is not a proof: the review of each round found forms it had missed.
#pragma once
#include <type_traits>

template <auto A, auto B>
inline constexpr bool lab_same_entity = false;
template <auto A>
inline constexpr bool lab_same_entity<A, A> = true;

#define REGION_GUARD(fn_) \
    static_assert(::lab_same_entity<&fn_, &::fn_>, "the region redefines, overloads or hides " #fn_)
#define REGION_GUARD_TYPE(type_) \
    static_assert(::std::is_same<type_, ::type_>::value, "the region redefines or hides " #type_)

// The runtime's functions that the programs' checks and timings call after a region and that a guard
// can name (each one function, not overloaded, in the cuda_runtime.h of CUDA 12.2 to 13.5):
// REGION_GUARD_RUNTIME(); stops a region that overloads or hides any of them (an overload of cudaMemcpy
// for the check's counter type, say). Not among them, because cuda_runtime.h overloads them with
// templates: cudaMalloc, cudaMallocHost, cudaMallocManaged, cudaMallocPitch, cudaMemcpyToSymbol,
// cudaMemcpyFromSymbol (forbidden by name where the check reads the witness), cudaEventCreate,
// cudaCreateChannelDesc, cudaOccupancyMaxActiveBlocksPerMultiprocessor, and cudaMemcpyAsync (CUDA 13.5
// adds one); those rest on tools/exercises.py's reading of the text. A toolkit that adds an overload of
// a listed one makes every exercise fail to build here (make test-toolkits shows it): take it off.
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
