// arith_instructions - what an arithmetic instruction costs, and what the math flags trade away.
//
// Manual: G 5.4.1 算数指令 (arithmetic instructions); G 5.4 最大化指令吞吐量.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o arith_instructions arith_instructions.cu
//              arith_flags_default.o arith_flags_ftz.o arith_flags_approx.o arith_flags_fast.o
//          (the four objects are arith_flags.cu compiled with four sets of math flags: see the
//          Makefile and arith_flags.cu; `make arith_instructions` builds all five)
// Shows:  1. sinf, expf, x / y, sqrtf, 1 / sqrtf and a multiply with a denormal result, and the
//            intrinsics __sinf, __expf, __fdividef, each compiled four ways (no flag, -ftz=true,
//            -prec-div=false -prec-sqrt=false, -use_fast_math): the maximum error against a
//            double-precision CPU reference, checked against the bound NVIDIA's Programming Guide
//            documents for it (its appendix "Mathematical Functions"; the translation stops at
//            chapter 5), and the throughput. -use_fast_math turns sinf into __sinf and x / y into
//            the approximate division; -ftz=true flushes the denormal product to 0.
//         2. sinf's slow path: |x| > 105615 takes the long argument reduction (G 5.4.1).
//         3. a literal without the f suffix: v * 0.999 + 0.001 on a float computes in double
//            (conversions + DFMA in the SASS: make arith_instructions.sass, README lab).
//         4. i % n against i & (n - 1) for a power of two n known only at run time, and i % 1024.
//         5. __half2 with __hfma2 (two halves per instruction) against scalar __half with __hfma
//            (one chain per thread, so that nvcc cannot pack two of them into one HFMA2), timed with
//            --half-rounds rounds per thread (milliseconds of HFMA2s, not the launch and the loads),
//            each as a share of the GPU's FP16 peak.
//         Every result is checked: 1 against the documented error bounds (and the timed runs on a
//         sample of elements), 3-5 exactly against the CPU (5 also after the timed round count, on
//         a sample of elements; h * a + b reaches its fixed point within about 64 rounds with these
//         inputs, so that sample confirms the result, not the number of rounds).
// Build:  make arith_instructions
// Run:    ./arith_instructions [--n=2^20] [--iters=64] [--half-rounds=65536] [--reps=10]
// Output: two tables (max error, Gop/s) of 10 operations x 4 builds; three short comparisons; PASSED.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <string>
#include <vector>
#include <cuda_fp16.h>
#include "arith_flags.h"
#include "common.cuh"

// ---------------------------------------------------------------------------------------------
// Part 1: the flag builds. The CPU reference in double, and the documented error bounds.

struct OpInfo {
    const char* name;
    double lo, hi;    // x range
    double ylo, yhi;  // y range (the second operand of / and *)
};
static const OpInfo kOps[OP_COUNT] = {
    {"sinf(x) |x|<=pi", -M_PI, M_PI, 1, 1},
    {"sinf(x) x>2^17", 131072.0, 8388608.0, 1, 1},
    {"__sinf(x) |x|<=pi", -M_PI, M_PI, 1, 1},
    {"expf(x)", -20, 20, 1, 1},
    {"__expf(x)", -20, 20, 1, 1},
    {"x / y", -100, 100, 0.01, 100},
    {"__fdividef(x, y)", -100, 100, 0.01, 100},
    {"sqrtf(x)", 0.01, 10000, 1, 1},
    {"1.0f / sqrtf(x)", 0.01, 10000, 1, 1},
    {"x * y (denormal)", 1e-20, 2e-20, 1e-20, 2e-20},
};

static double ref_op(int op, double a, double y) {
    switch (op) {
        case OP_SINF: case OP_SINF_LARGE: case OP_SINF_INTR: return std::sin(a);
        case OP_EXPF: case OP_EXPF_INTR: return std::exp(a);
        case OP_DIV: case OP_DIV_INTR: return a / y;
        case OP_SQRTF: return std::sqrt(a);
        case OP_RSQRT: return 1.0 / std::sqrt(a);
        default: return a * y;  // exact in double for these floats
    }
}

// The documented maximum error of op in build b (0 default, 1 -ftz, 2 -prec-*=false, 3 fast math),
// from the Programming Guide's tables: ULP = ulps from the correctly rounded float; ABS = absolute
// error (the __sinf bound, valid for |x| <= pi); ZERO = every result flushed to 0; NONE = no bound
// documented (__sinf far outside [-pi, pi]).
enum BoundKind { ULP, ABS, ZERO, NONE };
struct Bound {
    BoundKind kind;
    double v;
};
static Bound bound_of(int op, int b, double x) {
    const bool fast = b == 3, approx = b >= 2, ftz = b == 1 || b == 3;
    const double sin_abs = std::exp2(-21.41);
    const double exp_intr = 2 + std::floor(std::fabs(1.173 * x));
    switch (op) {
        case OP_SINF: return fast ? Bound{ABS, sin_abs} : Bound{ULP, 2};
        case OP_SINF_LARGE: return fast ? Bound{NONE, 0} : Bound{ULP, 2};
        case OP_SINF_INTR: return {ABS, sin_abs};
        case OP_EXPF: return fast ? Bound{ULP, exp_intr} : Bound{ULP, 2};
        case OP_EXPF_INTR: return {ULP, exp_intr};
        case OP_DIV: return {ULP, approx ? 2.0 : 0.0};
        case OP_DIV_INTR: return {ULP, 2};
        case OP_SQRTF: return {ULP, approx ? 1.0 : 0.0};  // 1 ulp with -prec-sqrt=false on cc >= 5.2
        case OP_RSQRT: return {ULP, 2};                   // rsqrtf's bound; two IEEE ops stay below it
        default: return ftz ? Bound{ZERO, 0} : Bound{ULP, 0};
    }
}

// Distance in ulps between two floats: the difference of their positions on the number line.
static long long ulp_distance(float a, float b) {
    auto ord = [](float f) {
        int32_t i;
        std::memcpy(&i, &f, 4);
        return i < 0 ? -(long long)(i & 0x7fffffff) : (long long)i;
    };
    return std::llabs(ord(a) - ord(b));
}
static double ulp_of(float c) {
    float a = std::fabs(c);
    return (double)std::nextafter(a, INFINITY) - a;
}

struct Cell {
    double max_err = 0;  // ulps, or the absolute error for ABS
    bool ok = true;
    double gops = 0;
};

// ---------------------------------------------------------------------------------------------
// Part 3: a literal without the f suffix. Both kernels run the same recurrence on a float; in the
// first, 0.999 and 0.001 are doubles, so v is converted to double, the multiply-add runs in double
// (DFMA) and the result is rounded back to float - every round (C++ promotion rules).
__global__ void poly_float_literals(float* v, long long n, int rounds) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = v[i];
    for (int r = 0; r < rounds; ++r) x = x * 0.999f + 0.001f;
    v[i] = x;
}
__global__ void poly_double_literals(float* v, long long n, int rounds) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float x = v[i];
    for (int r = 0; r < rounds; ++r) x = x * 0.999 + 0.001;  // no f: double arithmetic
    v[i] = x;
}

// Part 4: i % n and i & (n - 1). The values come from an LCG so the compiler cannot fold them.
template <int KIND>  // 0: v % n, 1: v & (n - 1), 2: v % 1024 (a literal)
__global__ void mod_kernel(const uint32_t* in, uint32_t* out, long long count, uint32_t n, int rounds) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= count) return;
    uint32_t v = in[i], acc = 0;
    for (int r = 0; r < rounds; ++r) {
        v = v * 1664525u + 1013904223u;
        if constexpr (KIND == 0) acc += v % n;
        else if constexpr (KIND == 1) acc += v & (n - 1);
        else acc += v % 1024u;
    }
    out[i] = acc;
}

// Part 5: h = h * a + b on halves: one half per thread with __hfma, or two per thread with __hfma2.
// The scalar kernel has one chain per thread on purpose: given two independent __hfma chains in one
// thread, nvcc packs them into the HFMA2 that __hfma2 issues (two halves per instruction), and the
// comparison would set packed against packed. One chain has nothing to pack with: its HFMA2 uses one
// of its two halves (`.H0_H0` operands; SASS has no scalar HFMA opcode since sm_75). Twice the threads, the same
// FMAs: an instruction of the scalar kernel does half the work of one of hfma_vector's.
// The rounds loop of both is unrolled 16 times: 16 HFMA2 and 3 other instructions (counter, compare,
// branch) per iteration (tests/sass_claims/01_intro.txt): 16 of every 19 issue slots at most. On the
// H100 __hfma2 reached 45.5% of the FP16 peak and __hfma 23.7%, about half of that bound; what limits
// them is not measured (hfma_vector's SASS alternates HFMA2.MMA and HFMA2, two pipes; hfma_scalar's
// is plain HFMA2).
__global__ void hfma_scalar(__half* h, const __half* a, const __half* b, long long halves, int rounds) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= halves) return;
    __half x = h[i];
    const __half av = a[i], bv = b[i];
    for (int r = 0; r < rounds; ++r) x = __hfma(x, av, bv);
    h[i] = x;
}
__global__ void hfma_vector(__half2* h, const __half2* a, const __half2* b, long long pairs, int rounds) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= pairs) return;
    __half2 x = h[i];
    const __half2 av = a[i], bv = b[i];
    for (int r = 0; r < rounds; ++r) x = __hfma2(x, av, bv);
    h[i] = x;
}

static unsigned grid_for(long long n, int block) { return (unsigned)((n + block - 1) / block); }

// Results per clock per SM of "16-bit floating-point add, multiply, multiply-add" (the Programming
// Guide's arithmetic-instruction throughput table; an HFMA2 gives two): 128 on sm_7x, 256 on sm_80
// and sm_90, i.e. one HFMA2 per clock per scheduler on sm_90. 0 where this program does not know it.
static int fp16_results_per_sm(int major, int minor) {
    if (major == 7) return 128;
    if ((major == 8 || major == 9) && minor == 0) return 256;
    return 0;
}

// Rounds v to the nearest half (11 significant bits, ties to even) for v in the normal half range:
// the result is exact in float, so the last conversion does not round again.
static __half round_to_half(double v) {
    int e;
    std::frexp(v, &e);
    return __float2half_rn((float)std::ldexp(std::nearbyint(std::ldexp(v, 11 - e)), e - 11));
}

int main(int argc, char** argv) {
    Args args(argc, argv,
              "Math functions vs intrinsics under four sets of nvcc flags (max error, throughput); sinf's slow "
              "path; a double literal; i % n vs i & (n-1); __half2 vs __half.");
    long long n = args.integer("n", 1LL << 20, 1, 1LL << 24, "elements per operation");
    int iters = (int)args.integer("iters", 64, 1, 1024, "evaluations per thread in the timed runs");
    int half_rounds = (int)args.integer("half-rounds", 1 << 16, 1, 1 << 22,
                                        "rounds per thread of the timed __hfma / __hfma2 kernels (part 5)");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    const ArithBuild builds[4] = {arith_build_default(), arith_build_ftz(), arith_build_approx(), arith_build_fast()};
    std::printf("n = %lld elements per operation, %d evaluations per thread when timed\n", n, iters);
    for (const ArithBuild& b : builds)
        std::printf("  build %-8s nvcc %s\n", b.name, *b.flags ? b.flags : "(no math flag)");
    Verdict verdict;

    // ---- Part 1 and 2: every operation in every build ----
    float *d_x, *d_y, *d_out;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    std::vector<float> out(n);
    Cell cells[OP_COUNT][4];
    const long long samples = std::min(n, 256LL), sample_step = std::max(1LL, n / samples);
    for (int op = 0; op < OP_COUNT; ++op) {
        const OpInfo& o = kOps[op];
        const float h = (float)((o.hi - o.lo) / 65536.0);  // the argument's step per round
        // x stays in [lo, hi] for every round of the timed loop.
        std::vector<float> x = random_vector<float>(n, (float)o.lo, (float)(o.hi - (iters + 1.0) * h), 10 + op);
        std::vector<float> y = random_vector<float>(n, (float)o.ylo, (float)o.yhi, 40 + op);
        std::vector<double> ref(n);
        for (long long i = 0; i < n; ++i) ref[i] = ref_op(op, x[i], y[i]);
        CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(d_y, y.data(), n * sizeof(float), cudaMemcpyHostToDevice));
        for (int b = 0; b < 4; ++b) {
            Cell& c = cells[op][b];
            // Accuracy: one evaluation per element, every element compared.
            CHECK(cudaMemset(d_out, 0xff, n * sizeof(float)));  // NaN: an element not written fails
            builds[b].run(op, d_x, d_y, d_out, n, 1, h);
            CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
            lab_corrupt(out.data(), n);  // CUDA_LAB_CORRUPT (corrupt.h): the bound check must be able to fail
            for (long long i = 0; i < n; ++i) {
                Bound bd = bound_of(op, b, x[i]);
                if (bd.kind == ABS || bd.kind == NONE) {
                    double e = std::fabs((double)out[i] - ref[i]);
                    if (!(e <= c.max_err)) c.max_err = std::isnan(e) ? INFINITY : e;
                    if (bd.kind == ABS && !(e <= bd.v)) c.ok = false;
                } else if (bd.kind == ZERO) {
                    if (out[i] != 0.0f) c.ok = false, c.max_err += 1;  // counts the non-zero results
                } else {
                    double e = std::isnan(out[i]) ? INFINITY : (double)ulp_distance(out[i], (float)ref[i]);
                    c.max_err = std::max(c.max_err, e);
                    if (e > bd.v) c.ok = false;
                }
            }
            // Throughput: iters evaluations per thread; the sum is checked on a sample of elements
            // against the CPU's, allowing each term its documented error and the float summation
            // its own (iters x 2^-24 x the sum of |terms|).
            double ms = bench_ms([&] { builds[b].run(op, d_x, d_y, d_out, n, iters, h); }, reps);
            c.gops = (double)n * iters / (ms * 1e6);
            CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
            for (long long i = 0; i < n; i += sample_step) {
                double sum = 0, abs_sum = 0, tol = 0;
                bool zero = false, unbounded = false;
                for (int r = 0; r < iters; ++r) {
                    float a = std::fmaf((float)r, h, x[i]);
                    double f = ref_op(op, a, y[i]);
                    Bound bd = bound_of(op, b, a);
                    sum += f;
                    abs_sum += std::fabs(f);
                    if (bd.kind == ULP) tol += (bd.v + 1) * ulp_of((float)f);
                    else if (bd.kind == ABS) tol += bd.v;
                    zero |= bd.kind == ZERO;
                    unbounded |= bd.kind == NONE;
                }
                tol += iters * std::exp2(-24) * abs_sum;
                if (zero ? out[i] != 0.0f : !unbounded && !(std::fabs(out[i] - sum) <= tol)) c.ok = false;
            }
        }
    }
    const char* heads[4] = {"no flag", "-ftz=true", "-prec-*=false", "-use_fast_math"};
    std::printf("\nmax error vs the double CPU reference: ulps from the correctly rounded float,\n"
                "'abs 2^k' absolute error, '0s' = all results flushed to 0; '*' = over the documented bound\n");
    std::printf("%-19s", "operation");
    for (auto hd : heads) std::printf(" %15s", hd);
    std::printf("\n");
    for (int op = 0; op < OP_COUNT; ++op) {
        std::printf("%-19s", kOps[op].name);
        for (int b = 0; b < 4; ++b) {
            const Cell& c = cells[op][b];
            Bound bd = bound_of(op, b, 0);
            char txt[32];
            if (bd.kind == ABS || bd.kind == NONE)
                std::snprintf(txt, sizeof txt, "abs 2^%.1f", c.max_err > 0 ? std::log2(c.max_err) : -INFINITY);
            else if (bd.kind == ZERO)
                std::snprintf(txt, sizeof txt, c.max_err == 0 ? "0s" : "%.0f not 0", c.max_err);
            else
                std::snprintf(txt, sizeof txt, "%.0f", c.max_err);
            std::printf(" %14s%s", txt, c.ok ? " " : "*");
        }
        std::printf("\n");
    }
    std::printf("\nthroughput, Gop/s (%d evaluations per thread)\n%-19s", iters, "operation");
    for (auto hd : heads) std::printf(" %15s", hd);
    std::printf("\n");
    for (int op = 0; op < OP_COUNT; ++op) {
        std::printf("%-19s", kOps[op].name);
        for (int b = 0; b < 4; ++b) std::printf(" %15.1f", cells[op][b].gops);
        std::printf("\n");
    }
    for (int b = 0; b < 4; ++b) {
        bool ok = true;
        for (int op = 0; op < OP_COUNT; ++op) ok &= cells[op][b].ok;
        verdict.check(ok, std::string("build ") + builds[b].name + ": all within bounds");
    }
    const double slow = cells[OP_SINF][0].gops / cells[OP_SINF_LARGE][0].gops;
    std::printf("sinf slow path (x > 2^17 vs |x| <= pi, no flag): %.1fx slower (guide: an order of magnitude)\n",
                slow);
    std::printf("sinf -> __sinf (-use_fast_math vs no flag): %.1fx faster\n",
                cells[OP_SINF][3].gops / cells[OP_SINF][0].gops);
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_out));

    const int block = 256, rounds = iters;
    // ---- Part 3: a literal without f ----
    {
        std::vector<float> v = random_vector<float>(n, 0.5f, 2.0f, 3), rf(v), rd(v), got(n);
        for (long long i = 0; i < n; ++i)
            for (int r = 0; r < rounds; ++r) {
                rf[i] = std::fmaf(rf[i], 0.999f, 0.001f);                    // FFMA
                rd[i] = (float)std::fma((double)rd[i], 0.999, 0.001);        // F2F, DFMA, F2F
            }
        float* d_v;
        CHECK(cudaMalloc(&d_v, n * sizeof(float)));
        auto load = [&] { CHECK(cudaMemcpy(d_v, v.data(), n * sizeof(float), cudaMemcpyHostToDevice)); };
        auto runf = [&] { poly_float_literals<<<grid_for(n, block), block>>>(d_v, n, rounds); };
        auto rund = [&] { poly_double_literals<<<grid_for(n, block), block>>>(d_v, n, rounds); };
        load();
        runf();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(got.data(), d_v, n * sizeof(float), cudaMemcpyDeviceToHost));
        verdict.exact("0.999f / 0.001f (float)", rf.data(), got.data(), n);
        load();
        rund();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(got.data(), d_v, n * sizeof(float), cudaMemcpyDeviceToHost));
        verdict.exact("0.999 / 0.001 (double)", rd.data(), got.data(), n);
        double tf = bench_ms(runf, reps), td = bench_ms(rund, reps);
        std::printf("literal without f: x = x * 0.999f + 0.001f %.3f ms; x * 0.999 + 0.001 %.3f ms: %.1fx slower\n",
                    tf, td, td / tf);
        CHECK(cudaFree(d_v));
    }
    // ---- Part 4: i % n vs i & (n - 1) ----
    {
        const uint32_t m = 1024;  // a power of two, passed at run time to kinds 0 and 1
        std::vector<uint32_t> in = random_vector<uint32_t>(n, 0u, 0xffffffffu, 4), ref(n), got(n);
        for (long long i = 0; i < n; ++i) {
            uint32_t v = in[i], acc = 0;
            for (int r = 0; r < rounds; ++r) v = v * 1664525u + 1013904223u, acc += v % m;
            ref[i] = acc;
        }
        uint32_t *d_in, *d_o;
        CHECK(cudaMalloc(&d_in, n * sizeof(uint32_t)));
        CHECK(cudaMalloc(&d_o, n * sizeof(uint32_t)));
        CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
        auto k0 = [&] { mod_kernel<0><<<grid_for(n, block), block>>>(d_in, d_o, n, m, rounds); };
        auto k1 = [&] { mod_kernel<1><<<grid_for(n, block), block>>>(d_in, d_o, n, m, rounds); };
        auto k2 = [&] { mod_kernel<2><<<grid_for(n, block), block>>>(d_in, d_o, n, m, rounds); };
        const char* names[3] = {"v % n (n = 1024 at run time)", "v & (n - 1)", "v % 1024 (literal)"};
        std::function<void()> ks[3] = {k0, k1, k2};
        double t[3];
        for (int k = 0; k < 3; ++k) {
            CHECK(cudaMemset(d_o, 0xff, n * sizeof(uint32_t)));
            ks[k]();
            CHECK_LAUNCH();
            CHECK(cudaMemcpy(got.data(), d_o, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
            verdict.exact(names[k], ref.data(), got.data(), n);
        }
        for (int k = 0; k < 3; ++k) t[k] = bench_ms(ks[k], reps);
        std::printf("integer modulo: %% n %.3f ms, & (n-1) %.3f ms (%.1fx faster), %% 1024 literal %.3f ms (%.1fx)\n",
                    t[0], t[1], t[0] / t[1], t[2], t[0] / t[2]);
        CHECK(cudaFree(d_in));
        CHECK(cudaFree(d_o));
    }
    // ---- Part 5: __half2 + __hfma2 vs scalar __half ----
    // Checked exactly twice: every element after `rounds` rounds, and a sample of elements after the
    // timed kernels' half_rounds (every element would cost the CPU minutes). The timed runs use
    // half_rounds: at the default n each kernel then runs for milliseconds of HFMA2s, so that its
    // time is the instructions', not the launch's or the loads of h, a and b.
    {
        const long long pairs = (n + 1) / 2, halves = 2 * pairs;
        std::vector<float> hf = random_vector<float>(halves, 0.5f, 2.0f, 5), af = random_vector<float>(halves, 0.5f, 0.9f, 6),
                           bf = random_vector<float>(halves, 0.1f, 0.5f, 7);
        std::vector<__half> h(halves), a(halves), b(halves), ref(halves), got(halves);
        for (long long i = 0; i < halves; ++i) {
            h[i] = __float2half_rn(hf[i]);
            a[i] = __float2half_rn(af[i]);
            b[i] = __float2half_rn(bf[i]);
        }
        // h * a + b is exact in double (11-bit significands of close magnitudes), so one rounding to
        // half reproduces the hardware's fused multiply-add.
        auto cpu = [&](long long i, int rr) {
            __half x = h[i];
            for (int r = 0; r < rr; ++r)
                x = round_to_half((double)__half2float(x) * __half2float(a[i]) + __half2float(b[i]));
            return x;
        };
        for (long long i = 0; i < halves; ++i) ref[i] = cpu(i, rounds);
        __half *d_h, *d_a, *d_b;
        const size_t bytes = halves * sizeof(__half);
        CHECK(cudaMalloc(&d_h, bytes));
        CHECK(cudaMalloc(&d_a, bytes));
        CHECK(cudaMalloc(&d_b, bytes));
        CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));
        auto launch = [&](int k, int rr) {
            if (k == 0)
                hfma_scalar<<<grid_for(halves, block), block>>>(d_h, d_a, d_b, halves, rr);
            else
                hfma_vector<<<grid_for(pairs, block), block>>>((__half2*)d_h, (const __half2*)d_a,
                                                               (const __half2*)d_b, pairs, rr);
        };
        const char* names[2] = {"__hfma (scalar __half)", "__hfma2 (__half2)"};
        std::vector<uint16_t> ref_bits(halves), got_bits(halves);
        std::memcpy(ref_bits.data(), ref.data(), bytes);
        // The sample: 256 elements spread over the array, and the last one.
        std::vector<long long> idx;
        for (long long j = 0; j < 256 && j < halves; ++j) idx.push_back(j * halves / std::min<long long>(256, halves));
        if (idx.back() != halves - 1) idx.push_back(halves - 1);
        std::vector<uint16_t> sref(idx.size()), sgot(idx.size());
        for (size_t j = 0; j < idx.size(); ++j) {
            __half x = cpu(idx[j], half_rounds);
            std::memcpy(&sref[j], &x, sizeof x);
        }
        for (int k = 0; k < 2; ++k) {
            CHECK(cudaMemcpy(d_h, h.data(), bytes, cudaMemcpyHostToDevice));
            launch(k, rounds);
            CHECK_LAUNCH();
            CHECK(cudaMemcpy(got.data(), d_h, bytes, cudaMemcpyDeviceToHost));
            std::memcpy(got_bits.data(), got.data(), bytes);
            verdict.exact(names[k], ref_bits.data(), got_bits.data(), halves);
            CHECK(cudaMemcpy(d_h, h.data(), bytes, cudaMemcpyHostToDevice));
            launch(k, half_rounds);
            CHECK_LAUNCH();
            CHECK(cudaMemcpy(got.data(), d_h, bytes, cudaMemcpyDeviceToHost));
            for (size_t j = 0; j < idx.size(); ++j) std::memcpy(&sgot[j], &got[idx[j]], sizeof(uint16_t));
            verdict.exact(std::string(names[k]) + ", " + std::to_string(half_rounds) + " rounds (sampled)",
                          sref.data(), sgot.data(), (long long)idx.size());
        }
        double t[2];
        for (int k = 0; k < 2; ++k) t[k] = bench_ms([&] { launch(k, half_rounds); }, reps);
        const cudaDeviceProp& p = dev.real;  // the peak of the GPU measured, also under a profile (device.cuh)
        const int per_sm = fp16_results_per_sm(p.major, p.minor);
        const double peak = p.multiProcessorCount * 2.0 * per_sm * dev.sm_clock_khz / 1e6;  // GFLOP/s
        const double flops = 2.0 * halves * half_rounds;
        std::printf("half precision, %d rounds per thread (", half_rounds);
        if (per_sm > 0)
            std::printf("FP16 peak %.0f GFLOP/s = %d SMs x %d results x 2 x %.0f MHz", peak, p.multiProcessorCount,
                        per_sm, dev.sm_clock_khz / 1e3);
        else
            std::printf("FP16 peak of sm_%d%d not known to this program", p.major, p.minor);
        std::printf("):\n");
        const char* rows[2] = {"__hfma  (1 half/thread) ", "__hfma2 (2 halves/thread)"};
        for (int k = 0; k < 2; ++k) {
            std::printf("  %s %8.3f ms %8.0f GFLOP/s", rows[k], t[k], flops / (t[k] * 1e6));
            if (per_sm > 0) std::printf(" %5.1f%% of the FP16 peak", 100 * flops / (t[k] * 1e6) / peak);
            std::printf("\n");
        }
        std::printf("  __hfma / __hfma2 time: %.2fx (the same FMAs in half the HFMA2 instructions)\n", t[0] / t[1]);
        CHECK(cudaFree(d_h));
        CHECK(cudaFree(d_a));
        CHECK(cudaFree(d_b));
    }
    return verdict.finish();
}
