// alignment - the guide's size and alignment rule for global memory: a struct of 12 bytes against
// the same struct with __align__(16) (stored as nvcc stores it, and with one 16-byte store), and
// 8 bytes with and without __align__(8).
//
// Manual: G 5.3.2 设备内存访问, "尺寸和对齐要求" (global memory instructions read words of 1, 2, 4, 8
//         or 16 bytes; a type of another size or alignment compiles to several instructions with an
//         interleaved access pattern; __align__(8) / __align__(16) make the compiler use one).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o alignment alignment.cu
// Shows:  out[i] = f(in[i]) over an array of structs, four layouts: {x,y,z} floats without and with
//         __align__(16) (12 and 16 bytes), {x,y} without and with __align__(8) (alignment 4 and 8).
//         Without the specifier each field is its own 4-byte load (3 or 2 LDG.E per element, each
//         warp instruction spread over 384 or 256 bytes); with it one LDG.E.128 or LDG.E.64 reads
//         the element. In the sm_90 SASS (`make alignment.sass`, lab.sh step 7; the claims are in
//         tests/sass_claims/02_memory.txt): Float3 3 LDG.E + 3 STG.E, Float3A16 1 LDG.E.128 but
//         STG.E.64 + STG.E for the store: nvcc writes the 12 field bytes and leaves the 4 padding
//         bytes alone, so no warp store covers its 32-byte sectors whole. map3_store16 stores the
//         same struct with one STG.E.128, padding included, so the two Float3A16 rows separate the
//         padding bytes (both move them) from the partial store (only the first has it). Float2
//         2 LDG.E + 2 STG.E, Float2A8 1 LDG.E.64 + 1 STG.E.64. GB/s counts sizeof(T) read and
//         written per element, the "useful GB/s" column the field bytes only.
// Build:  make alignment           Run: ./alignment [--n=2^24] [--reps=20] [--csv=FILE]
// Output: the checks, a version table (time, GB/s of sizeof bytes, useful GB/s), then the ratios:
//         Float3 against each Float3A16 store (beside the 0.75x that the extra bytes alone predict),
//         the 16-byte store against the partial one, Float2 against Float2A8; PASSED.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

struct Float3 { float x, y, z; };                    // 12 bytes, aligned to 4
struct __align__(16) Float3A16 { float x, y, z; };  // 16 bytes (4 of padding), aligned to 16
struct Float2 { float x, y; };                       // 8 bytes, aligned to 4
struct __align__(8) Float2A8 { float x, y; };       // 8 bytes, aligned to 8
static_assert(sizeof(Float3) == 12 && alignof(Float3) == 4, "");
static_assert(sizeof(Float3A16) == 16 && alignof(Float3A16) == 16, "");
static_assert(sizeof(Float2) == 8 && alignof(Float2) == 4, "");
static_assert(sizeof(Float2A8) == 8 && alignof(Float2A8) == 8, "");

// The same arithmetic for every layout: rotate the fields and add (single roundings, no FMA
// possible: the CPU result is bit-identical).
template <class T> __host__ __device__ T f3(T a) { return {a.y, a.z, a.x + a.y}; }
template <class T> __host__ __device__ T f2(T a) { return {a.y, a.x + a.y}; }

template <class T>
__global__ void map3(const T* __restrict__ in, T* __restrict__ out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = f3(in[i]);
}
// The same struct and arithmetic, stored with one 16-byte store: the padding is written too (as 0),
// so every 32-byte sector of `out` is written whole by the warp.
__global__ void map3_store16(const Float3A16* __restrict__ in, Float3A16* __restrict__ out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        Float3A16 r = f3(in[i]);
        reinterpret_cast<float4*>(out)[i] = make_float4(r.x, r.y, r.z, 0.f);
    }
}
template <class T>
__global__ void map2(const T* __restrict__ in, T* __restrict__ out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = f2(in[i]);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Structs of 12 / 16 and 8 bytes with and without __align__: the loads nvcc emits and their speed.");
    long long n = args.integer("n", 1LL << 24, 1, 1LL << 27, "structs per array");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "alignment", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    const int block = 256;
    unsigned grid = (unsigned)((n + block - 1) / block);
    std::printf("n = %lld structs: %.1f MB per array of 16-byte structs (%.1fx the L2)\n", n, n * 16 / 1e6,
                n * 16.0 / dev.real.l2CacheSize);  // the L2 measured, also under a profile

    // The same random fields for all four layouts.
    std::vector<float> fields = random_vector<float>(3 * n, -1.f, 1.f, 1);
    std::vector<float> expect3(3 * n), expect2(2 * n), got(3 * n);
    for (long long i = 0; i < n; ++i) {
        Float3 r = f3(Float3{fields[3 * i], fields[3 * i + 1], fields[3 * i + 2]});
        expect3[3 * i] = r.x, expect3[3 * i + 1] = r.y, expect3[3 * i + 2] = r.z;
        Float2 q = f2(Float2{fields[3 * i], fields[3 * i + 1]});
        expect2[2 * i] = q.x, expect2[2 * i + 1] = q.y;
    }

    // One device pair (in, out) large enough for the 16-byte layout, reused by every version.
    void *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * 16));
    CHECK(cudaMalloc(&d_out, n * 16));
    Verdict verdict;
    // Writes the fields into the device array in layout T (3 or 2 fields per element).
    auto upload = [&](auto tag, int nf) {
        using T = decltype(tag);
        std::vector<T> h(n);
        for (long long i = 0; i < n; ++i) std::memcpy(&h[i], &fields[3 * i], nf * sizeof(float));
        CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    };
    // Reads the output array of layout T back and compares its fields with the CPU's.
    auto checker = [&](auto tag, int nf) {
        return [&, tag, nf](Verdict& v, const std::string& name) {
            using T = decltype(tag);
            std::vector<T> h(n);
            CHECK(cudaMemcpy(h.data(), d_out, n * sizeof(T), cudaMemcpyDeviceToHost));
            for (long long i = 0; i < n; ++i) std::memcpy(&got[nf * i], &h[i], nf * sizeof(float));
            v.exact(name, nf == 3 ? expect3.data() : expect2.data(), got.data(), nf * n);
        };
    };
    auto poison = [&] { CHECK(cudaMemset(d_out, 0xff, n * 16)); };  // NaN: an unwritten field fails

    table.param("n", n);
    table.add("Float3, 12 bytes (align 4)", [&] {
        map3<<<grid, block>>>((const Float3*)d_in, (Float3*)d_out, n); }, 2.0 * n * 12, checker(Float3{}, 3), poison)
        .setup = [&] { upload(Float3{}, 3); };
    table.add("Float3A16, 8+4-byte store", [&] {
        map3<<<grid, block>>>((const Float3A16*)d_in, (Float3A16*)d_out, n); }, 2.0 * n * 16, checker(Float3A16{}, 3), poison)
        .setup = [&] { upload(Float3A16{}, 3); };
    table.add("Float3A16, 16-byte store", [&] {
        map3_store16<<<grid, block>>>((const Float3A16*)d_in, (Float3A16*)d_out, n); }, 2.0 * n * 16, checker(Float3A16{}, 3), poison)
        .setup = [&] { upload(Float3A16{}, 3); };
    table.add("Float2, 8 bytes (align 4)", [&] {
        map2<<<grid, block>>>((const Float2*)d_in, (Float2*)d_out, n); }, 2.0 * n * 8, checker(Float2{}, 2), poison)
        .setup = [&] { upload(Float2{}, 2); };
    table.add("Float2A8, __align__(8)", [&] {
        map2<<<grid, block>>>((const Float2A8*)d_in, (Float2A8*)d_out, n); }, 2.0 * n * 8, checker(Float2A8{}, 2), poison)
        .setup = [&] { upload(Float2A8{}, 2); };
    auto useful = [&](const Results::Version& v) {  // 12 or 8 bytes of fields per element, read + written
        return (v.name.rfind("Float3", 0) == 0 ? 2.0 * n * 12 : 2.0 * n * 8) / (v.ms * 1e6);
    };
    table.column("useful GB/s", "useful_gbps", useful, "%.1f");
    table.run(verdict, reps);

    auto ratio = [&](const char* slow, const char* fast) {
        const Results::Version *a = table.find(slow), *b = table.find(fast);
        return a && b ? a->ms / b->ms : NAN;
    };
    // > 1: the second layout is faster. 24 against 32 bytes read + written per element: if only the
    // bytes counted, Float3 / Float3A16 would be 24 / 32 = 0.75x.
    std::printf("\ntime Float3 / Float3A16, 8+4-byte store: %.2fx (12 bytes in 3 loads vs 16 bytes in 1; > 1: the aligned layout is faster)\n",
                ratio("Float3, 12 bytes (align 4)", "Float3A16, 8+4-byte store"));
    std::printf("time Float3 / Float3A16, 16-byte store:  %.2fx (the extra padding bytes alone predict %.2fx)\n",
                ratio("Float3, 12 bytes (align 4)", "Float3A16, 16-byte store"), 24.0 / 32.0);
    std::printf("time Float3A16 8+4-byte store / 16-byte store: %.2fx (the same sizeof, 12 vs 16 bytes stored; > 1: the partial store costs that much)\n",
                ratio("Float3A16, 8+4-byte store", "Float3A16, 16-byte store"));
    std::printf("time Float2 / Float2A8:  %.2fx (the same 8 bytes in 2 loads vs 1)\n",
                ratio("Float2, 8 bytes (align 4)", "Float2A8, __align__(8)"));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
