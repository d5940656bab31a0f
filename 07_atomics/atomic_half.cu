// atomic_half - atomicAdd on __half, __half2, __nv_bfloat16 and __nv_bfloat162: every add rounds to
//               the type, so many threads adding the same small value stall where a float sum does not.
//
// Manual: N 6.3.1 原子操作 (1. atomicAdd: the __half2 / __half / __nv_bfloat162 / __nv_bfloat16
//         overloads; the pairs are atomic per __half / __nv_bfloat16 element, not as one 32-bit access; __half2
//         needs compute capability 6.x, __half 7.x, __nv_bfloat16 8.x).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o atomic_half atomic_half.cu
// Shows:  --threads threads each atomicAdd the same value v to cell i % cells (a random start per
//         cell). The order of the adds is undefined, but when every add is "s = round(s + v)" with
//         the same v, the order does not matter: after k adds a cell holds f^k(start), f(s) =
//         round(s + v). The CPU computes that sequence exactly (the sum of two such values is exact
//         in double; it is then rounded to nearest, ties to even, to the type's 11 (half), 8
//         (bfloat16) or 24 (float) significant bits), so every cell is checked for equality. The
//         table shows why half-precision accumulators need care: with v = 0.1, half stops growing
//         at 256 (an ulp there is 0.25: s + 0.1 rounds back to s), bfloat16 at 32, while float keeps
//         counting. The __half2 / __nv_bfloat162 rows add v to .x and 1.0 to .y of the same 32-bit
//         word: each half is rounded on its own, and 1.0 stalls on a tie (2048 + 1 is halfway between
//         2048 and 2050 in half: ties go to the even 2048; bfloat16: 256).
//         A lane that stalls ends at its stall value however many adds were lost before, so its
//         check cannot see lost adds; at the default size only float does not stall (a smaller
//         --threads keeps the lanes below their stall: 2003 on 7 cells the half lanes, not the
//         bfloat16 ones, which stall after fewer adds; 1401 on 7 cells every lane).
//         A version the GPU cannot run is skipped with its reason; the others still run.
// Build:  make atomic_half        Run: ./atomic_half [--threads=2^20] [--cells=4] [--value=0.1]
// Output: one row per type (cell 0: start, exact sum, GPU result, CPU model, where it stalls), a
//         check per type (all cells), PASSED.
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <algorithm>
#include <cfenv>
#include <cfloat>
#include <cmath>
#include <string>
#include <vector>
#include "common.cuh"

// ---- CPU model of one rounded add -------------------------------------------------------------
// A binary floating-point format: significand bits (with the implicit one), smallest normal exponent,
// largest finite value.
struct Format {
    int p, emin;
    double max;
};
const Format HALF{11, -14, 65504.0}, BF16{8, -126, 3.38953138925153547590470800371487866880e38}, FLOAT{24, -126, FLT_MAX};

// x rounded to nearest, ties to even, in format f (subnormals kept; overflow to infinity).
double round_to(double x, Format f) {
    if (x == 0 || !std::isfinite(x)) return x;
    int e;
    std::frexp(std::fabs(x), &e);                        // |x| = m * 2^e, m in [0.5, 1): leading bit 2^(e-1)
    double q = std::ldexp(1.0, std::max(e - 1, f.emin) - (f.p - 1));  // spacing of the format near x
    double r = std::nearbyint(x / q) * q;                 // x / q is exact; nearbyint: ties to even
    return std::fabs(r) > f.max ? std::copysign(INFINITY, x) : r;
}

struct Trace {
    double value;   // after k adds
    long long stall_after = -1;  // adds after which s + v rounded back to s (-1: never within k)
};

// k adds of v to start, each rounded: stops early once an add no longer changes the value (then
// none will: the same v is added to the same s).
Trace rounded_adds(double start, double v, long long k, Format f) {
    double s = start;
    for (long long j = 0; j < k; ++j) {
        double t = round_to(s + v, f);  // s + v is exact in double for these formats and magnitudes
        if (t == s) return {s, j};
        s = t;
    }
    return {s, -1};
}

// ---- device: the same add for every type; unsupported targets compile a trap, never launched ----
__device__ void atomic_add(float* a, float v) { atomicAdd(a, v); }
__device__ void atomic_add(__half* a, __half v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 700  // the __half overload exists from sm_70 (cuda_fp16.hpp)
    atomicAdd(a, v);
#else
    (void)a, (void)v;
    __trap();
#endif
}
// The machine code (SASS, tests/sass_claims/07_atomics.txt): float is one RED.ADD.F32 per thread
// (the result is unused); __half2 one ATOM.E.ADD.F16x2 (sm_75 .. sm_90: both halves in one 32-bit
// instruction, each rounded on its own); __nv_bfloat162 one ATOM.E.ADD.BF16x2 on sm_90 and a CAS
// loop on sm_80. The scalar __half and __nv_bfloat16 are a CAS loop on the containing 32-bit word on
// every target, sm_90 included: the PTX has atom.add.noftz.f16 / .bf16, which ptxas lowers to
// ATOM.E.CAS. The rounding is the same either way: each add is round(s + v) in the type.
__device__ void atomic_add(__half2* a, __half2 v) { atomicAdd(a, v); }  // the overload exists from sm_60
__device__ void atomic_add(__nv_bfloat16* a, __nv_bfloat16 v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800  // the notes: 8.x (CUDA 13's header: sm_70+)
    atomicAdd(a, v);
#else
    (void)a, (void)v;
    __trap();
#endif
}
__device__ void atomic_add(__nv_bfloat162* a, __nv_bfloat162 v) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 800
    atomicAdd(a, v);
#else
    (void)a, (void)v;
    __trap();
#endif
}

// Thread i adds v to cell i % ncells: thousands of threads on each address.
template <class T>
__global__ void add_same(T* cells, int ncells, T v, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomic_add(&cells[i % ncells], v);
}

// ---- host: conversions between double and each type (exact for values the type holds) ----------
float to_float(float x) { return x; }
float to_float(__half x) { return __half2float(x); }
float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }
template <class T> T from_double(double x);
template <> float from_double<float>(double x) { return (float)x; }
template <> __half from_double<__half>(double x) { return __float2half((float)x); }
template <> __nv_bfloat16 from_double<__nv_bfloat16>(double x) { return __float2bfloat16((float)x); }

// One scalar lane's expectation per cell and its report line.
struct Lane {
    std::string name;
    Format f;
    double v;                         // the added value, as the type holds it
    std::vector<double> start, want;  // per cell
    long long stall0 = -1;            // cell 0: adds before the stall
};

Lane make_lane(std::string name, Format f, double v_requested, const std::vector<long long>& k, uint32_t seed) {
    Lane l{std::move(name), f, round_to(v_requested, f), {}, {}};
    std::vector<double> r = random_vector<double>(k.size(), 0.5, 4.0, seed);
    for (size_t c = 0; c < k.size(); ++c) {
        l.start.push_back(round_to(r[c], f));
        Trace t = rounded_adds(l.start[c], l.v, k[c], f);
        l.want.push_back(t.value);
        if (c == 0) l.stall0 = t.stall_after;
    }
    return l;
}

void report(const Lane& l, long long k0, float got0) {
    double exact = l.start[0] + (double)k0 * l.v;
    char stall[64] = "no";
    if (l.stall0 >= 0) std::snprintf(stall, sizeof stall, "at %g after %lld adds", l.want[0], l.stall0);
    std::printf("  %-20s %10.7g %9.5g %14.8g %14.8g %14.8g  %s\n", l.name.c_str(), l.v, l.start[0], exact,
                (double)got0, l.want[0], stall);
}

void check_lane(Verdict& verdict, const Lane& l, const std::vector<float>& got) {
    std::vector<float> want(l.want.begin(), l.want.end());  // every expected value is a float exactly
    verdict.exact(l.name + ": all cells = model", want.data(), got.data(), got.size());
}

// Runs add_same<T> for a scalar type and checks it.
template <class T>
void run_scalar(Verdict& verdict, const Lane& l, int n, int nc, const std::vector<long long>& k) {
    std::vector<T> cells(nc);
    for (int c = 0; c < nc; ++c) cells[c] = from_double<T>(l.start[c]);
    T* d;
    CHECK(cudaMalloc(&d, nc * sizeof(T)));
    CHECK(cudaMemcpy(d, cells.data(), nc * sizeof(T), cudaMemcpyHostToDevice));
    add_same<T><<<(n + 255) / 256, 256>>>(d, nc, from_double<T>(l.v), n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(cells.data(), d, nc * sizeof(T), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d));
    std::vector<float> got(nc);
    for (int c = 0; c < nc; ++c) got[c] = to_float(cells[c]);
    report(l, k[0], got[0]);
    check_lane(verdict, l, got);
}

// Runs add_same on a pair type (__half2 / __nv_bfloat162): .x adds lx.v, .y adds ly.v.
template <class T2, class T>
void run_pair(Verdict& verdict, const Lane& lx, const Lane& ly, int n, int nc, const std::vector<long long>& k) {
    std::vector<T2> cells(nc);
    for (int c = 0; c < nc; ++c) cells[c] = T2(from_double<T>(lx.start[c]), from_double<T>(ly.start[c]));
    T2* d;
    CHECK(cudaMalloc(&d, nc * sizeof(T2)));
    CHECK(cudaMemcpy(d, cells.data(), nc * sizeof(T2), cudaMemcpyHostToDevice));
    add_same<T2><<<(n + 255) / 256, 256>>>(d, nc, T2(from_double<T>(lx.v), from_double<T>(ly.v)), n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(cells.data(), d, nc * sizeof(T2), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d));
    std::vector<float> gx(nc), gy(nc);
    for (int c = 0; c < nc; ++c) gx[c] = to_float(cells[c].x), gy[c] = to_float(cells[c].y);
    report(lx, k[0], gx[0]);
    report(ly, k[0], gy[0]);
    check_lane(verdict, lx, gx);
    check_lane(verdict, ly, gy);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "atomicAdd on half, half2, bfloat16, bfloat162 and float: the same value added by many threads, rounding against a CPU model.");
    int n = (int)args.integer("threads", 1 << 20, 1, 1 << 24, "threads, one atomicAdd each");
    int nc = (int)args.integer("cells", 4, 1, 4096, "addresses they share (thread i adds to cell i % cells)");
    double v = args.real("value", 0.1, 1e-3, 16.0, "the value every thread adds (rounded to each type)");
    args.parse_or_exit();
    DeviceInfo dev = select_device(args.device());
    std::fesetround(FE_TONEAREST);  // the default; nearbyint in round_to relies on it

    std::vector<long long> k(nc);  // adds per cell
    for (int c = 0; c < nc; ++c) k[c] = (n - c + nc - 1) / nc;
    std::printf("%d threads on %d cells (%lld adds on cell 0), each adds %g; cell 0 shown:\n", n, nc, k[0], v);
    std::printf("  %-20s %10s %9s %14s %14s %14s  %s\n", "type (lane)", "v as type", "start", "exact sum",
                "GPU", "CPU model", "stalls");
    Verdict verdict;

    Lane fl = make_lane("float", FLOAT, v, k, 1);
    run_scalar<float>(verdict, fl, n, nc, k);

    // A type runs only if the GPU has its atomicAdd and the kernel was compiled with it: below
    // sm_80 the bfloat16 overloads above compile to __trap(), so a build for compute_75 (make
    // ARCH=compute_75, PTX the driver JIT-compiles for a newer GPU) lacks them whatever the GPU is.
    // The kernel's ptxVersion says which code it holds (G 3.1, binary and PTX compatibility).
    int cc = dev.cc();
    auto runs = [&](const char* what, int need, const void* kernel) {
        if (cc < need) {
            std::printf("  %-20s skipped: atomicAdd on it needs compute capability %d.%d (N 6.3.1); this GPU is %d.%d\n",
                        what, need / 10, need % 10, cc / 10, cc % 10);
            return false;
        }
        if (!kernel_has_arch(kernel, need)) {
            std::printf("  %-20s skipped: its kernel was compiled for %s, where atomicAdd on it is compiled out "
                        "(needs %d.%d; G 3.1: build with make ARCH=sm_%d or ARCH=native)\n",
                        what, kernel_arch_text(kernel).c_str(), need / 10, need % 10, need);
            return false;
        }
        return true;
    };
    if (runs("__half", 70, (const void*)add_same<__half>))
        run_scalar<__half>(verdict, make_lane("__half", HALF, v, k, 2), n, nc, k);
    if (runs("__half2", 60, (const void*)add_same<__half2>))
        run_pair<__half2, __half>(verdict, make_lane("__half2 .x (+v)", HALF, v, k, 3),
                                  make_lane("__half2 .y (+1)", HALF, 1.0, k, 4), n, nc, k);
    if (runs("__nv_bfloat16", 80, (const void*)add_same<__nv_bfloat16>))
        run_scalar<__nv_bfloat16>(verdict, make_lane("__nv_bfloat16", BF16, v, k, 5), n, nc, k);
    if (runs("__nv_bfloat162", 80, (const void*)add_same<__nv_bfloat162>))
        run_pair<__nv_bfloat162, __nv_bfloat16>(verdict, make_lane("__nv_bfloat162 .x (+v)", BF16, v, k, 6),
                                                make_lane("__nv_bfloat162 .y (+1)", BF16, 1.0, k, 7), n, nc, k);
    std::printf("Every add rounds the cell to its type: once v is below half an ulp of the cell (or equal to\n"
                "it, with the cell's last bit even), s + v rounds back to s and the sum stops growing.\n");
    return verdict.finish();
}
