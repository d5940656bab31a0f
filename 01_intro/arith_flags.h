// arith_flags.h - what arith_instructions.cu and arith_flags.cu share: the operations that
// arith_flags.cu evaluates, and the entry points of its four builds.
//
// arith_flags.cu is compiled four times, each time with other nvcc math flags (01_intro/Makefile:
// none, -ftz=true, -prec-div=false -prec-sqrt=false, -use_fast_math), into four objects whose
// functions carry the build's name: arith_run_default, arith_run_ftz, ... Flags act on a whole
// translation unit, so the same source lines are compiled four ways and linked into one program.
#pragma once

enum ArithOp {
    OP_SINF,         // sinf(x), |x| <= pi: the fast path of the argument reduction
    OP_SINF_LARGE,   // sinf(x), |x| > 105615: the slow path (G 5.4.1)
    OP_SINF_INTR,    // __sinf(x), |x| <= pi
    OP_EXPF,         // expf(x)
    OP_EXPF_INTR,    // __expf(x)
    OP_DIV,          // x / y
    OP_DIV_INTR,     // __fdividef(x, y)
    OP_SQRTF,        // sqrtf(x)
    OP_RSQRT,        // 1.0f / sqrtf(x)
    OP_MUL_DENORM,   // x * y with a denormal result (what -ftz=true flushes)
    OP_COUNT
};

// One build of arith_flags.cu: the nvcc flags it was compiled with (the Makefile passes them in as
// text, so the program prints what was really used) and its launcher. run() launches one thread per
// element: out[i] = sum over r < iters of f(x[i] + r * h, y[i]), summed with __fadd_rn; iters = 1
// gives out[i] = f(x[i], y[i]) for the accuracy check.
struct ArithBuild {
    const char* name;
    const char* flags;
    void (*run)(int op, const float* x, const float* y, float* out, long long n, int iters, float h);
};

ArithBuild arith_build_default();
ArithBuild arith_build_ftz();
ArithBuild arith_build_approx();
ArithBuild arith_build_fast();
