// atomic_functions - all eleven atomic functions of the notes, on every type they list, with many
// threads hitting a few addresses; every final value checked against the CPU.
//
// Manual: N 6.3.1 原子操作 (atomicAdd, atomicSub, atomicExch, atomicMin, atomicMax, atomicInc,
//         atomicDec, atomicCAS, atomicAnd, atomicOr, atomicXor: "read old, compute, store, in one
//         atomic transaction, return old"); G 4.1 SIMT 架构 (the atomic updates of a warp to one
//         address are all performed, serialized, in an undefined order).
// Shows:  --threads threads update --cells addresses (thread i updates cell i % cells), so thousands
//         of updates queue on each address. The order is undefined, so the checks use what does not
//         depend on it:
//         - Add, Sub, Min, Max, And, Or, Xor commute: the final value equals the CPU's sequential
//           result exactly. Integer Add/Sub wrap modulo 2^bits on both sides. float / double / half2
//           sums are exact in any order because the values are chosen so that every partial sum is
//           representable (float: integers in [-4, 4], at most 2^22 of them: |sum| <= 2^24; double:
//           multiples of 1/8; half2: (0 or 1, 0 or 0.25), at most 2048 per address) - otherwise
//           rounding would make the result order-dependent and an exact check impossible.
//         - Inc / Dec repeat one function f(old) (Inc: old >= val ? 0 : old + 1; Dec: old == 0 ||
//           old > val ? val : old - 1), so k updates give f^k(start) in any order: the CPU applies
//           the formula k times, from starts above and below val.
//         - Exch: the returned olds plus the final value are the start value plus all written
//           values (the same multiset): no update lost or duplicated, whatever the order.
//         - CAS: a counter incremented with atomicCAS retry loops ends at start + k, and the
//           values each thread swapped in are start, start+1, ..., start+k-1 (each exactly once).
//           (At most 2^16 threads: retries grow with the square of the contenders.)
// Build:  make atomic_functions   (nvcc -std=c++17 -O3 -arch=native -I../common -o atomic_functions atomic_functions.cu)
// Run:    ./atomic_functions [--threads=2^20] [--cells=8]
// Output: one check line per function listing the types checked, then PASSED.
#include <cuda_fp16.h>
#include <algorithm>
#include <climits>
#include <cstdint>
#include <sstream>
#include <random>
#include <string>
#include <type_traits>
#include <vector>
#include "common.cuh"

// ---- integer arithmetic modulo 2^bits, like the hardware's atomics. Signed overflow is undefined
// behaviour in C++ (a compiler may assume it never happens), so the sums go through the unsigned
// type, whose arithmetic wraps by definition. Used by the CPU references and by the CAS counter. ----
template <class T>
__host__ __device__ T wrap_add(T a, T b) {
    if constexpr (std::is_integral<T>::value) {
        using U = std::make_unsigned_t<T>;
        return (T)(U)((U)a + (U)b);
    } else return a + b;
}
template <class T>
__host__ __device__ T wrap_sub(T a, T b) {
    using U = std::make_unsigned_t<T>;
    return (T)(U)((U)a - (U)b);
}

// ---- device operations: one functor per atomic function, the same kernel applies each ----
struct Add { template <class T> __device__ T operator()(T* a, T v) const { return atomicAdd(a, v); } };
struct Sub { template <class T> __device__ T operator()(T* a, T v) const { return atomicSub(a, v); } };
struct Exch { template <class T> __device__ T operator()(T* a, T v) const { return atomicExch(a, v); } };
struct Min { template <class T> __device__ T operator()(T* a, T v) const { return atomicMin(a, v); } };
struct Max { template <class T> __device__ T operator()(T* a, T v) const { return atomicMax(a, v); } };
struct And { template <class T> __device__ T operator()(T* a, T v) const { return atomicAnd(a, v); } };
struct Or { template <class T> __device__ T operator()(T* a, T v) const { return atomicOr(a, v); } };
struct Xor { template <class T> __device__ T operator()(T* a, T v) const { return atomicXor(a, v); } };
struct Inc { unsigned limit; __device__ unsigned operator()(unsigned* a, unsigned) const { return atomicInc(a, limit); } };
struct Dec { unsigned limit; __device__ unsigned operator()(unsigned* a, unsigned) const { return atomicDec(a, limit); } };

// Thread i applies op to cell i % cells with its own value; olds (if given) receives the returned old.
template <class T, class Op>
__global__ void apply_atomic(T* cells, int ncells, const T* vals, int n, T* olds, Op op) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T old = op(&cells[i % ncells], vals[i]);
    if (olds) olds[i] = old;
}

// A counter built from compare-and-swap: read, try to swap in old + 1, retry with the value the
// failed CAS returned until no other thread got in between. swapped[i] = the value thread i replaced.
template <class T>
__global__ void cas_counter(T* cells, int ncells, int n, T* swapped) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    T* a = &cells[i % ncells];
    T old = *a, assumed;  // a first guess; atomicCAS returns the real value if it is stale
    do {
        assumed = old;
        old = atomicCAS(a, assumed, wrap_add(assumed, (T)1));  // INT_MAX + 1 wraps to INT_MIN
    } while (old != assumed);
    swapped[i] = assumed;
}

template <class T>
std::string txt(T v) {
    std::ostringstream os;
    os.precision(10);
    os << +v;
    return os.str();
}

template <class T>
struct DeviceBuffers {
    T *cells = nullptr, *vals = nullptr, *olds = nullptr;
    DeviceBuffers(const std::vector<T>& c, const std::vector<T>& v) {
        CHECK(cudaMalloc(&cells, c.size() * sizeof(T)));
        CHECK(cudaMalloc(&vals, v.size() * sizeof(T)));
        CHECK(cudaMalloc(&olds, v.size() * sizeof(T)));
        CHECK(cudaMemcpy(cells, c.data(), c.size() * sizeof(T), cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(vals, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice));
        CHECK(cudaMemset(olds, 0xff, v.size() * sizeof(T)));
    }
    ~DeviceBuffers() {
        cudaFree(cells);
        cudaFree(vals);
        cudaFree(olds);
    }
};

int blocks_for(size_t n) { return (int)((n + 255) / 256); }

// Runs op on the GPU and the CPU's sequential equivalent `cpu`; true if every cell matches.
template <class T, class Op, class Cpu>
bool commutative(const char* fn, const char* type, Op op, Cpu cpu, const std::vector<T>& vals, std::vector<T> cells) {
    DeviceBuffers<T> d(cells, vals);
    int n = (int)vals.size(), nc = (int)cells.size();
    apply_atomic<<<blocks_for(n), 256>>>(d.cells, nc, d.vals, n, (T*)nullptr, op);
    CHECK_LAUNCH();
    std::vector<T> got(nc);
    CHECK(cudaMemcpy(got.data(), d.cells, nc * sizeof(T), cudaMemcpyDeviceToHost));
    lab_corrupt(got.data(), got.size());  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
    for (int i = 0; i < n; ++i) cells[i % nc] = cpu(cells[i % nc], vals[i]);
    for (int c = 0; c < nc; ++c)
        if (!(got[c] == cells[c])) {
            std::printf("    %s(%s) cell %d: CPU %s, GPU %s\n", fn, type, c, txt(cells[c]).c_str(), txt(got[c]).c_str());
            return false;
        }
    return true;
}

// atomicExch: per cell, {start} + {values written} must equal {olds returned} + {final} as multisets.
template <class T>
bool exchange(const char* type, const std::vector<T>& vals, const std::vector<T>& start) {
    DeviceBuffers<T> d(start, vals);
    int n = (int)vals.size(), nc = (int)start.size();
    apply_atomic<<<blocks_for(n), 256>>>(d.cells, nc, d.vals, n, d.olds, Exch{});
    CHECK_LAUNCH();
    std::vector<T> final_v(nc), olds(n);
    CHECK(cudaMemcpy(final_v.data(), d.cells, nc * sizeof(T), cudaMemcpyDeviceToHost));
    lab_corrupt(final_v.data(), final_v.size());  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
    CHECK(cudaMemcpy(olds.data(), d.olds, n * sizeof(T), cudaMemcpyDeviceToHost));
    for (int c = 0; c < nc; ++c) {
        std::vector<T> in{start[c]}, out{final_v[c]};
        for (int i = c; i < n; i += nc) {
            in.push_back(vals[i]);
            out.push_back(olds[i]);
        }
        std::sort(in.begin(), in.end());
        std::sort(out.begin(), out.end());
        if (in != out) {
            std::printf("    atomicExch(%s) cell %d: olds + final are not start + written values\n", type, c);
            return false;
        }
    }
    return true;
}

// atomicCAS counter: final = start + k (mod 2^bits); for 32/64-bit types the swapped-out values of
// a cell are exactly start .. start + k - 1.
template <class T>
bool cas(const char* type, int n, const std::vector<T>& start) {
    std::vector<T> unused(n);
    DeviceBuffers<T> d(start, unused);
    int nc = (int)start.size();
    cas_counter<<<blocks_for(n), 256>>>(d.cells, nc, n, d.olds);
    CHECK_LAUNCH();
    std::vector<T> final_v(nc), swapped(n);
    CHECK(cudaMemcpy(final_v.data(), d.cells, nc * sizeof(T), cudaMemcpyDeviceToHost));
    lab_corrupt(final_v.data(), final_v.size());  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
    CHECK(cudaMemcpy(swapped.data(), d.olds, n * sizeof(T), cudaMemcpyDeviceToHost));
    for (int c = 0; c < nc; ++c) {
        T k = (T)((n - c + nc - 1) / nc);  // threads on cell c
        T expect = wrap_add(start[c], k);
        if (final_v[c] != expect) {
            std::printf("    atomicCAS(%s) cell %d: counter %s, expected %s\n", type, c, txt(final_v[c]).c_str(),
                        txt(expect).c_str());
            return false;
        }
        if (sizeof(T) < 4) continue;  // 16 bits wrap after 65536 updates: the swapped values repeat
        std::vector<T> s;
        for (int i = c; i < n; i += nc) s.push_back(wrap_sub(swapped[i], start[c]));
        std::sort(s.begin(), s.end());
        for (size_t j = 0; j < s.size(); ++j)
            if (s[j] != (T)j) {
                std::printf("    atomicCAS(%s) cell %d: a value was swapped out twice or never\n", type, c);
                return false;
            }
    }
    return true;
}

// atomicAdd on __half2: each half adds separately (the guide: atomic per __half, not per 32 bits).
__global__ void add_half2(__half2* cells, int ncells, const __half2* vals, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) atomicAdd(&cells[i % ncells], vals[i]);
}

bool half2_add(int n, int nc, uint32_t seed) {
    std::vector<int> lo = random_vector<int>(n, 0, 1, seed), hi = random_vector<int>(n, 0, 1, seed + 1);
    std::vector<__half2> vals(n), cells(nc, __floats2half2_rn(0.f, 0.f));
    std::vector<double> ref_lo(nc, 0), ref_hi(nc, 0);
    for (int i = 0; i < n; ++i) {
        vals[i] = __floats2half2_rn((float)lo[i], 0.25f * hi[i]);
        ref_lo[i % nc] += lo[i];
        ref_hi[i % nc] += 0.25 * hi[i];
    }
    __half2 *d_cells, *d_vals;
    CHECK(cudaMalloc(&d_cells, nc * sizeof(__half2)));
    CHECK(cudaMalloc(&d_vals, n * sizeof(__half2)));
    CHECK(cudaMemcpy(d_cells, cells.data(), nc * sizeof(__half2), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_vals, vals.data(), n * sizeof(__half2), cudaMemcpyHostToDevice));
    add_half2<<<blocks_for(n), 256>>>(d_cells, nc, d_vals, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(cells.data(), d_cells, nc * sizeof(__half2), cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_cells));
    CHECK(cudaFree(d_vals));
    for (int c = 0; c < nc; ++c) {
        double glo = __low2float(cells[c]), ghi = __high2float(cells[c]);
        if (glo != ref_lo[c] || ghi != ref_hi[c]) {
            std::printf("    atomicAdd(half2) cell %d: CPU (%g, %g), GPU (%g, %g)\n", c, ref_lo[c], ref_hi[c], glo, ghi);
            return false;
        }
    }
    return true;
}

// Values whose bits matter: for And, all ones but one low-half bit; for Or, one low-half bit; so the
// high half of each cell keeps its start bits and the low half shows which bits some thread hit.
template <class T>
std::vector<T> one_bit(int n, bool invert, uint32_t seed) {
    std::vector<int> r = random_vector<int>(n, 0, (int)(4 * sizeof(T)) - 1, seed);
    std::vector<T> v(n);
    for (int i = 0; i < n; ++i) v[i] = invert ? (T) ~((T)1 << r[i]) : (T)((T)1 << r[i]);
    return v;
}

// Every bit pattern of T equally likely (random.h's helper draws through long long, which cannot
// hold the range of unsigned long long).
template <class T>
std::vector<T> full_range(int n, uint32_t seed) {
    std::mt19937_64 gen(seed);
    std::vector<T> v(n);
    for (auto& x : v) x = (T)gen();
    return v;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Every atomic function of the notes on every listed type, many threads on few addresses.");
    int n = (int)args.integer("threads", 1 << 20, 1, 1 << 22, "threads, one atomic each (<= 2^22 keeps float sums exact)");
    int nc = (int)args.integer("cells", 8, 1, 4096, "addresses they share (thread i updates cell i % cells)");
    args.parse_or_exit();
    DeviceInfo dev = select_device(args.device());
    (void)dev;
    std::printf("%d threads on %d addresses (~%d atomics per address), every final value against the CPU\n", n, nc,
                (n + nc - 1) / nc);

    using ull = unsigned long long;
    using ll = long long;
    auto add = [](auto a, auto v) { return wrap_add(a, v); };
    auto sub = [](auto a, auto v) { return wrap_sub(a, v); };
    auto mn = [](auto a, auto v) { return std::min(a, v); };
    auto mx = [](auto a, auto v) { return std::max(a, v); };
    auto band = [](auto a, auto v) { return (decltype(a))(a & v); };
    auto bor = [](auto a, auto v) { return (decltype(a))(a | v); };
    auto bxor = [](auto a, auto v) { return (decltype(a))(a ^ v); };
    Verdict verdict;
    bool ok;

    // Start values: random, so a kernel that does nothing, or writes zeros, fails.
    ok = commutative("atomicAdd", "int", Add{}, add, random_vector<int>(n, -1000, 1000, 1), full_range<int>(nc, 2));
    ok &= commutative("atomicAdd", "unsigned", Add{}, add, full_range<unsigned>(n, 3), full_range<unsigned>(nc, 4));
    ok &= commutative("atomicAdd", "ull", Add{}, add, full_range<ull>(n, 5), full_range<ull>(nc, 6));
    {
        std::vector<int> k = random_vector<int>(n, -4, 4, 7);
        ok &= commutative("atomicAdd", "float", Add{}, add, std::vector<float>(k.begin(), k.end()), std::vector<float>(nc, 0.f));
    }
    {
        std::vector<int> k = random_vector<int>(n, -8000, 8000, 8);
        std::vector<double> v(n);
        for (int i = 0; i < n; ++i) v[i] = k[i] / 8.0;
        ok &= commutative("atomicAdd", "double", Add{}, add, v, std::vector<double>(nc, 0.5));
    }
    ok &= half2_add(std::min(n, 2048 * nc), nc, 9);
    verdict.check(ok, "atomicAdd  int uint ull float double half2");

    ok = commutative("atomicSub", "int", Sub{}, sub, full_range<int>(n, 10), full_range<int>(nc, 11));
    ok &= commutative("atomicSub", "unsigned", Sub{}, sub, full_range<unsigned>(n, 12), full_range<unsigned>(nc, 13));
    verdict.check(ok, "atomicSub  int uint");

    ok = exchange("int", full_range<int>(n, 14), full_range<int>(nc, 15));
    ok &= exchange("unsigned", full_range<unsigned>(n, 16), full_range<unsigned>(nc, 17));
    ok &= exchange("ull", full_range<ull>(n, 18), full_range<ull>(nc, 19));
    ok &= exchange("float", random_vector<float>(n, -1e6f, 1e6f, 20), random_vector<float>(nc, -1e6f, 1e6f, 21));
    verdict.check(ok, "atomicExch int uint ull float");

    ok = commutative("atomicMin", "int", Min{}, mn, full_range<int>(n, 22), full_range<int>(nc, 23));
    ok &= commutative("atomicMin", "unsigned", Min{}, mn, full_range<unsigned>(n, 24), full_range<unsigned>(nc, 25));
    ok &= commutative("atomicMin", "ull", Min{}, mn, full_range<ull>(n, 26), full_range<ull>(nc, 27));
    ok &= commutative("atomicMin", "long long", Min{}, mn, full_range<ll>(n, 28), full_range<ll>(nc, 29));
    verdict.check(ok, "atomicMin  int uint ull ll");

    ok = commutative("atomicMax", "int", Max{}, mx, full_range<int>(n, 30), full_range<int>(nc, 31));
    ok &= commutative("atomicMax", "unsigned", Max{}, mx, full_range<unsigned>(n, 32), full_range<unsigned>(nc, 33));
    ok &= commutative("atomicMax", "ull", Max{}, mx, full_range<ull>(n, 34), full_range<ull>(nc, 35));
    ok &= commutative("atomicMax", "long long", Max{}, mx, full_range<ll>(n, 36), full_range<ll>(nc, 37));
    verdict.check(ok, "atomicMax  int uint ull ll");

    // Inc / Dec: limit 1000, starts in [0, 2000] (some above the limit, where the formulas wrap at once).
    const unsigned limit = 1000;
    auto inc = [=](unsigned old, unsigned) { return old >= limit ? 0u : old + 1; };
    auto dec = [=](unsigned old, unsigned) { return (old == 0 || old > limit) ? limit : old - 1; };
    std::vector<unsigned> unused(n, 0);
    ok = commutative("atomicInc", "unsigned", Inc{limit}, inc, unused, random_vector<unsigned>(nc, 0, 2 * limit, 38));
    verdict.check(ok, "atomicInc  uint (wraps at val=1000)");
    ok = commutative("atomicDec", "unsigned", Dec{limit}, dec, unused, random_vector<unsigned>(nc, 0, 2 * limit, 39));
    verdict.check(ok, "atomicDec  uint (wraps at val=1000)");

    // A CAS retry loop under contention costs about (threads on the address)^2 / 2 attempts, all
    // served one at a time by that address's L2 slice: at most 2^16 threads here.
    int ncas = std::min(n, 1 << 16);
    ok = cas<int>("int", ncas, full_range<int>(nc, 40));
    ok &= cas<unsigned>("unsigned", ncas, full_range<unsigned>(nc, 41));
    ok &= cas<ull>("ull", ncas, full_range<ull>(nc, 42));
    ok &= cas<unsigned short>("unsigned short", ncas, full_range<unsigned short>(nc, 43));
    verdict.check(ok, "atomicCAS  int uint ull ushort (counter)");

    ok = commutative("atomicAnd", "int", And{}, band, one_bit<int>(n, true, 44), full_range<int>(nc, 45));
    ok &= commutative("atomicAnd", "unsigned", And{}, band, one_bit<unsigned>(n, true, 46), full_range<unsigned>(nc, 47));
    ok &= commutative("atomicAnd", "ull", And{}, band, one_bit<ull>(n, true, 48), full_range<ull>(nc, 49));
    verdict.check(ok, "atomicAnd  int uint ull");
    ok = commutative("atomicOr", "int", Or{}, bor, one_bit<int>(n, false, 50), full_range<int>(nc, 51));
    ok &= commutative("atomicOr", "unsigned", Or{}, bor, one_bit<unsigned>(n, false, 52), full_range<unsigned>(nc, 53));
    ok &= commutative("atomicOr", "ull", Or{}, bor, one_bit<ull>(n, false, 54), full_range<ull>(nc, 55));
    verdict.check(ok, "atomicOr   int uint ull");
    ok = commutative("atomicXor", "int", Xor{}, bxor, full_range<int>(n, 56), full_range<int>(nc, 57));
    ok &= commutative("atomicXor", "unsigned", Xor{}, bxor, full_range<unsigned>(n, 58), full_range<unsigned>(nc, 59));
    ok &= commutative("atomicXor", "ull", Xor{}, bxor, full_range<ull>(n, 60), full_range<ull>(nc, 61));
    verdict.check(ok, "atomicXor  int uint ull");

    return verdict.finish();
}
