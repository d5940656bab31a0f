// atomic_cas - atomic operations the hardware does not have, built from atomicCAS retry loops.
//
// Manual: N 6.3.1 原子操作 (8. atomicCAS: "old == compare ? val : old", returns old); G 4.1 SIMT
//         架构 (the read-modify-writes of one address are serialized in an undefined order).
// Shows:  the compare-and-swap loop: read the current value, compute the new one, try to swap it in
//         with atomicCAS; if another thread changed the value in between, atomicCAS returns that
//         value and the loop retries with it. Any function of (old, val) becomes atomic this way.
//           float max       there is no atomicMax(float*): CAS on the float's 32 bits, compared as
//                           floats (next to it the bit trick: for floats >= 0 the int order of the
//                           bits is the float order, for < 0 the unsigned order reversed)
//           saturating add  unsigned add that clamps at a limit instead of wrapping
//           argmax          the largest value and the index of its first occurrence, updated
//                           together: 64-bit CAS on a (value, index) pair
//         Random data (negative floats included), many threads on few addresses; every result equals
//         the CPU's. Times show what a retry loop costs against a native atomic.
// Build:  make atomic_cas   (nvcc -std=c++17 -O3 -arch=native -I../common -o atomic_cas atomic_cas.cu)
// Run:    ./atomic_cas [--n=2^22] [--cells=16] [--reps=5]
// Output: a check line per operation, times (CAS loop vs bit trick vs native int atomicMax), PASSED.
#include <algorithm>
#include <cfloat>
#include <climits>
#include <cstdint>
#include <cstring>
#include <vector>
#include "common.cuh"

constexpr int BLOCK = 256;

// float max with a CAS loop. The loop exits as soon as the stored value is already >= val: a thread
// whose value does not beat what it reads issues no CAS at all (how many do: the program counts the
// attempts in an untimed run, `tries` non-null; the timed kernel passes none).
__device__ float atomic_max_float_cas(float* addr, float val, unsigned long long* tries = nullptr) {
    int* a = reinterpret_cast<int*>(addr);
    int old = *a;  // a guess; atomicCAS hands back the real value if it is stale
    while (__int_as_float(old) < val) {
        if (tries) atomicAdd(tries, 1ull);
        int assumed = old;
        old = atomicCAS(a, assumed, __float_as_int(val));
        if (old == assumed) break;  // swapped in
    }
    return __int_as_float(old);
}

// The bit trick (no loop): IEEE floats of the same sign compare like their bits as sign-magnitude
// integers. For val >= 0 a signed-int max works (every negative float is a negative int); for
// val < 0 an unsigned min works (negative floats have the sign bit set, so they are above every
// positive as unsigned, and among themselves a larger magnitude is a larger unsigned). -0.0 and
// NaN need care; the data here has neither.
__device__ void atomic_max_float_bits(float* addr, float val) {
    if (val >= 0.f) atomicMax(reinterpret_cast<int*>(addr), __float_as_int(val));
    else atomicMin(reinterpret_cast<unsigned*>(addr), __float_as_uint(val));
}

// Saturating add: old + val, clamped at `limit` (no wrap). Order-independent for val >= 0: the
// result is min(start + sum, limit).
__device__ unsigned atomic_add_saturate(unsigned* addr, unsigned val, unsigned limit) {
    unsigned old = *addr, assumed;
    do {
        assumed = old;
        unsigned long long s = (unsigned long long)assumed + val;
        unsigned next = s > limit ? limit : (unsigned)s;
        if (next == assumed) break;  // already saturated: nothing to write
        old = atomicCAS(addr, assumed, next);
    } while (old != assumed);
    return old;
}

// argmax: value in the high 32 bits, index in the low 32, swapped as one 64-bit word so that the
// value and its index can never come from two different threads.
struct ArgMax {
    float value;
    unsigned index;
};
__host__ __device__ inline bool better(ArgMax a, ArgMax b) {  // a replaces b?
    return a.value > b.value || (a.value == b.value && a.index < b.index);
}
__device__ inline unsigned long long pack(ArgMax a) {
    return ((unsigned long long)__float_as_uint(a.value) << 32) | a.index;
}
__device__ inline ArgMax unpack(unsigned long long w) { return {__uint_as_float((unsigned)(w >> 32)), (unsigned)w}; }

__device__ void atomic_argmax(unsigned long long* addr, ArgMax cand) {
    unsigned long long old = *addr, assumed;
    while (better(cand, unpack(old))) {
        assumed = old;
        old = atomicCAS(addr, assumed, pack(cand));
        if (old == assumed) break;
    }
}

__global__ void max_cas(float* cells, int nc, const float* x, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) atomic_max_float_cas(&cells[i % nc], x[i]);
}
// The same, counting the CAS attempts (not timed).
__global__ void max_cas_counted(float* cells, int nc, const float* x, int n, unsigned long long* tries) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) atomic_max_float_cas(&cells[i % nc], x[i], tries);
}
__global__ void max_bits(float* cells, int nc, const float* x, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) atomic_max_float_bits(&cells[i % nc], x[i]);
}
// For scale: the native atomicMax on ints (the same number of atomics).
__global__ void max_native_int(int* cells, int nc, const int* x, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) atomicMax(&cells[i % nc], x[i]);
}
__global__ void add_saturate(unsigned* cells, int nc, const unsigned* x, int n, unsigned limit) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) atomic_add_saturate(&cells[i % nc], x[i], limit);
}
__global__ void argmax(unsigned long long* cells, int nc, const float* x, int n) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) atomic_argmax(&cells[i % nc], ArgMax{x[i], (unsigned)i});
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Float max, saturating add and argmax built from atomicCAS loops.");
    int n = (int)args.integer("n", 1 << 22, 1, 1 << 28, "threads (values)");
    int nc = (int)args.integer("cells", 16, 1, 4096, "addresses they share (value i goes to cell i % cells)");
    int reps = (int)args.integer("reps", 5, 1, 100, "timed repetitions (median reported)");
    args.parse_or_exit();
    DeviceInfo dev = select_device(args.device());
    (void)dev;
    int blocks = (n + BLOCK - 1) / BLOCK;

    std::vector<float> x = random_vector<float>(n, -1e6f, 1e6f, 1);
    // Exact repeats of one value above all the others, all in one cell (indices tie_first + k * step,
    // step a multiple of nc), so that this cell's max is tied and argmax's tie rule (smallest index)
    // decides its index; an argmax that kept the largest index would fail the index check.
    const int tie_first = n / 3, tie_step = nc * std::max(1, n / (5 * nc));
    int ties = 0;
    for (int i = tie_first; i < n && ties < 4; i += tie_step, ++ties) x[i] = 1.5e6f;
    std::vector<unsigned> u = random_vector<unsigned>(n, 0, 1000, 2);
    // Saturating add writes on every update until a cell is full, so every thread retries against
    // all others on its address (~contenders^2 / 2 attempts): it runs on at most 2^16 values. The
    // expected sum of a cell (values average 500) is the limit: about half of the cells reach it.
    const int sat_n = std::min(n, 1 << 16), sat_blocks = (sat_n + BLOCK - 1) / BLOCK;
    const unsigned limit = (unsigned)(500LL * ((sat_n + nc - 1) / nc));

    // CPU references. Start values: max cells at -FLT_MAX, saturating cells at 0, argmax at (-FLT_MAX, ~0).
    std::vector<float> ref_max(nc, -FLT_MAX);
    std::vector<unsigned long long> ref_sat(nc, 0);
    std::vector<ArgMax> ref_arg(nc, ArgMax{-FLT_MAX, 0xffffffffu});
    for (int i = 0; i < n; ++i) {
        int c = i % nc;
        ref_max[c] = std::max(ref_max[c], x[i]);
        if (i < sat_n) ref_sat[c] = std::min<unsigned long long>(ref_sat[c] + u[i], limit);
        if (better(ArgMax{x[i], (unsigned)i}, ref_arg[c])) ref_arg[c] = ArgMax{x[i], (unsigned)i};
    }

    float *d_x, *d_max;
    unsigned *d_u, *d_sat;
    int* d_imax;
    unsigned long long* d_arg;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_u, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_max, nc * sizeof(float)));
    CHECK(cudaMalloc(&d_imax, nc * sizeof(int)));
    CHECK(cudaMalloc(&d_sat, nc * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_arg, nc * sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_u, u.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));

    std::vector<float> lowest(nc, -FLT_MAX);
    std::vector<unsigned long long> arg_start(nc, ((unsigned long long)0xff7fffffu << 32) | 0xffffffffu);  // (-FLT_MAX, ~0)
    auto reset_max = [&] { CHECK(cudaMemcpy(d_max, lowest.data(), nc * sizeof(float), cudaMemcpyHostToDevice)); };

    Verdict verdict;
    std::vector<float> got(nc);
    reset_max();
    max_cas<<<blocks, BLOCK>>>(d_max, nc, d_x, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), d_max, nc * sizeof(float), cudaMemcpyDeviceToHost));
    verdict.exact("float max (CAS loop)", ref_max.data(), got.data(), nc);
    // How many CAS the loop issued (a second, untimed run with a counter; the order differs from run
    // to run, so this is one sample of it). Its result is checked too.
    unsigned long long* d_tries;
    unsigned long long tries = 0;
    CHECK(cudaMalloc(&d_tries, sizeof tries));
    CHECK(cudaMemset(d_tries, 0, sizeof tries));
    reset_max();
    max_cas_counted<<<blocks, BLOCK>>>(d_max, nc, d_x, n, d_tries);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(&tries, d_tries, sizeof tries, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(got.data(), d_max, nc * sizeof(float), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_tries));
    verdict.exact("float max (CAS loop, counted run)", ref_max.data(), got.data(), nc);
    std::printf("  float max: %llu CAS attempts for %d values (%.3f per value); the other values only read and compared\n",
                tries, n, (double)tries / n);
    reset_max();
    max_bits<<<blocks, BLOCK>>>(d_max, nc, d_x, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), d_max, nc * sizeof(float), cudaMemcpyDeviceToHost));
    verdict.exact("float max (int/unsigned bit trick)", ref_max.data(), got.data(), nc);

    CHECK(cudaMemset(d_sat, 0, nc * sizeof(unsigned)));
    add_saturate<<<sat_blocks, BLOCK>>>(d_sat, nc, d_u, sat_n, limit);
    CHECK_LAUNCH();
    std::vector<unsigned> sat(nc), ref_sat32(ref_sat.begin(), ref_sat.end());
    CHECK(cudaMemcpy(sat.data(), d_sat, nc * sizeof(unsigned), cudaMemcpyDeviceToHost));
    verdict.exact("saturating add (limit " + std::to_string(limit) + ")", ref_sat32.data(), sat.data(), nc);

    CHECK(cudaMemcpy(d_arg, arg_start.data(), nc * sizeof(unsigned long long), cudaMemcpyHostToDevice));
    argmax<<<blocks, BLOCK>>>(d_arg, nc, d_x, n);
    CHECK_LAUNCH();
    std::vector<unsigned long long> arg(nc);
    CHECK(cudaMemcpy(arg.data(), d_arg, nc * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    std::vector<float> av(nc), rv(nc);
    std::vector<unsigned> ai(nc), ri(nc);
    for (int c = 0; c < nc; ++c) {
        uint32_t hi = (uint32_t)(arg[c] >> 32);
        std::memcpy(&av[c], &hi, 4);
        ai[c] = (unsigned)arg[c];
        rv[c] = ref_arg[c].value;
        ri[c] = ref_arg[c].index;
    }
    verdict.exact("argmax value (64-bit CAS)", rv.data(), av.data(), nc);
    verdict.exact("argmax index (first occurrence)", ri.data(), ai.data(), nc);
    if (ties > 1)
        std::printf("  (cell %d: its max 1.5e6 at %d indices, the first is %d)\n", tie_first % nc, ties, tie_first);
    else
        std::printf("  (no tie: n = %d is too small to repeat a value in one of %d cells)\n", n, nc);

    // Timings: all threads on `nc` addresses. Each run starts from its cells' start values, reset
    // by setup() outside the timed interval: only the kernel is timed, the same for all five.
    std::vector<int> int_lowest(nc, INT_MIN);
    auto reset_imax = [&] { CHECK(cudaMemcpy(d_imax, int_lowest.data(), nc * sizeof(int), cudaMemcpyHostToDevice)); };
    auto reset_sat = [&] { CHECK(cudaMemset(d_sat, 0, nc * sizeof(unsigned))); };
    auto reset_arg = [&] { CHECK(cudaMemcpy(d_arg, arg_start.data(), nc * sizeof(unsigned long long), cudaMemcpyHostToDevice)); };
    double t_cas = bench_ms_fresh(reset_max, [&] { max_cas<<<blocks, BLOCK>>>(d_max, nc, d_x, n); }, reps);
    double t_bits = bench_ms_fresh(reset_max, [&] { max_bits<<<blocks, BLOCK>>>(d_max, nc, d_x, n); }, reps);
    double t_int = bench_ms_fresh(reset_imax, [&] {
        max_native_int<<<blocks, BLOCK>>>(d_imax, nc, reinterpret_cast<const int*>(d_x), n);  // the floats' bits
    }, reps);
    double t_sat = bench_ms_fresh(reset_sat, [&] { add_saturate<<<sat_blocks, BLOCK>>>(d_sat, nc, d_u, sat_n, limit); }, reps);
    double t_arg = bench_ms_fresh(reset_arg, [&] { argmax<<<blocks, BLOCK>>>(d_arg, nc, d_x, n); }, reps);
    std::printf("\n%d values on %d addresses, time ms (median of %d):\n", n, nc, reps);
    std::printf("  float max, CAS loop      %9.3f\n  float max, bit trick     %9.3f\n  int atomicMax (native)   %9.3f\n",
                t_cas, t_bits, t_int);
    std::printf("  saturating add, CAS      %9.3f   (%d values)\n  argmax, 64-bit CAS       %9.3f\n", t_sat, sat_n, t_arg);
    std::printf("CAS loop / native: %.2fx (the native atomicMax sends one atomic per value; the CAS loop %.3f CAS per value\n"
                "  in the counted run, an untimed copy of it that adds an atomic per attempt)\n",
                t_cas / t_int, (double)tries / n);

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_u));
    CHECK(cudaFree(d_max));
    CHECK(cudaFree(d_imax));
    CHECK(cudaFree(d_sat));
    CHECK(cudaFree(d_arg));
    return verdict.finish();
}
