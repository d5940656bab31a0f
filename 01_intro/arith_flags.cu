// arith_flags.cu - the standard math functions and their intrinsics, compiled once per set of nvcc
// math flags (part of arith_instructions; see arith_instructions.cu and arith_flags.h).
//
// Manual: G 5.4.1 算数指令 (-ftz, -prec-div, -prec-sqrt; the intrinsics; -use_fast_math).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common <math flags> -DARITH_BUILD=ftz
//              -DARITH_FLAGS='"<math flags>"' -c -o arith_flags_ftz.o arith_flags.cu
// The Makefile builds it four ways: arith_flags_default.o (no flag), arith_flags_ftz.o
// (-ftz=true), arith_flags_approx.o (-prec-div=false -prec-sqrt=false), arith_flags_fast.o
// (-use_fast_math, which implies -ftz=true -prec-div=false -prec-sqrt=false and compiles sinf,
// expf, ... as __sinf, __expf, ...). The source is the same; only the flags differ.
#include <cuda_runtime.h>
#include "arith_flags.h"
#include "check.cuh"

#ifndef ARITH_BUILD
#error "compile with -DARITH_BUILD=<name> (see the Makefile)"
#endif
#ifndef ARITH_FLAGS
#define ARITH_FLAGS ""
#endif
#define ARITH_CAT_(a, b) a##b
#define ARITH_CAT(a, b) ARITH_CAT_(a, b)

// A namespace per build: the kernels of the four objects must not share a (mangled) name.
namespace ARITH_CAT(arith_, ARITH_BUILD) {

template <int OP>
__device__ __forceinline__ float apply(float a, float y) {
    if constexpr (OP == OP_SINF || OP == OP_SINF_LARGE) return sinf(a);
    else if constexpr (OP == OP_SINF_INTR) return __sinf(a);
    else if constexpr (OP == OP_EXPF) return expf(a);
    else if constexpr (OP == OP_EXPF_INTR) return __expf(a);
    else if constexpr (OP == OP_DIV) return a / y;
    else if constexpr (OP == OP_DIV_INTR) return __fdividef(a, y);
    else if constexpr (OP == OP_SQRTF) return sqrtf(a);
    else if constexpr (OP == OP_RSQRT) return 1.0f / sqrtf(a);
    else return a * y;  // OP_MUL_DENORM
}

// The argument moves by h each round, so the compiler cannot hoist f out of the loop; __fmaf_rn
// and __fadd_rn are never contracted or reassociated, under any flag, so the CPU can redo the
// arguments and the sum exactly.
template <int OP>
__global__ void eval(const float* x, const float* y, float* out, long long n, int iters, float h) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    const float xi = x[i], yi = y[i];
    float acc = 0.0f;
    for (int r = 0; r < iters; ++r) acc = __fadd_rn(acc, apply<OP>(__fmaf_rn((float)r, h, xi), yi));
    out[i] = acc;
}

template <int OP>
void launch(const float* x, const float* y, float* out, long long n, int iters, float h) {
    const int block = 256;
    eval<OP><<<(unsigned)((n + block - 1) / block), block>>>(x, y, out, n, iters, h);
}

void run(int op, const float* x, const float* y, float* out, long long n, int iters, float h) {
    switch (op) {
        case OP_SINF: launch<OP_SINF>(x, y, out, n, iters, h); break;
        case OP_SINF_LARGE: launch<OP_SINF_LARGE>(x, y, out, n, iters, h); break;
        case OP_SINF_INTR: launch<OP_SINF_INTR>(x, y, out, n, iters, h); break;
        case OP_EXPF: launch<OP_EXPF>(x, y, out, n, iters, h); break;
        case OP_EXPF_INTR: launch<OP_EXPF_INTR>(x, y, out, n, iters, h); break;
        case OP_DIV: launch<OP_DIV>(x, y, out, n, iters, h); break;
        case OP_DIV_INTR: launch<OP_DIV_INTR>(x, y, out, n, iters, h); break;
        case OP_SQRTF: launch<OP_SQRTF>(x, y, out, n, iters, h); break;
        case OP_RSQRT: launch<OP_RSQRT>(x, y, out, n, iters, h); break;
        default: launch<OP_MUL_DENORM>(x, y, out, n, iters, h); break;
    }
    CHECK_LAUNCH();
}

}  // namespace

#define ARITH_STR_(a) #a
#define ARITH_STR(a) ARITH_STR_(a)
ArithBuild ARITH_CAT(arith_build_, ARITH_BUILD)() {
    return {ARITH_STR(ARITH_BUILD), ARITH_FLAGS, &ARITH_CAT(arith_, ARITH_BUILD)::run};
}
