// coalescing - how the addresses of one warp turn into memory transactions: a copy kernel run
// with a misaligned start (offset 0..32) and with a stride between threads (1..32).
//
// Manual: M "合并与未合并的全局内存访问" (coalesced vs uncoalesced global memory access);
//         G 5.3.2 设备内存访问 (device memory access), "全局内存";
//         N 5.6 矩阵转置 (the add1 / add2 example: a warp starting one float late needs 5
//         32-byte transfers instead of 4).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o coalescing coalescing.cu
// Shows:  a warp's 32 four-byte loads are served in 32-byte sectors. Aligned and contiguous, they
//         need 4 sectors (100% of the fetched bytes used); shifted by one element they straddle 5
//         sectors; with a stride of 8 or more elements every thread needs a sector of its own, so
//         at most 4 of every 32 fetched bytes are used. The effect is printed as GB/s per
//         setting, next to cudaMemcpy device-to-device and a vectorized copy (the fast path).
// Build:  make coalescing        Run: ./coalescing [--n=2^26] [--block=256] [--reps=20] [--csv=FILE]
// Output: the checks, then GB/s for a few offsets and strides and the ratios
//         offset 0 / offset 1 and stride 1 / stride 32; --csv=FILE writes every setting
//         as a row (offset or stride column) for plot.py. Sectors per request: see README "Lab" (ncu).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

const uint32_t FILL = 0xffffffffu;  // what the output holds where no thread may write
const int MAX_SHIFT = 32;           // largest offset and stride

// CPU reference, written as a check: out[j] must equal in[j] for j = first, first+step, ...
// below last, and still hold FILL everywhere else. Returns "" or the first difference.
std::string copy_diff(const uint32_t* in, const uint32_t* out, long long total, long long first, long long last,
                      long long step) {
    long long next = first;  // the next index the copy must have written
    for (long long j = 0; j < total; ++j) {
        bool written = j == next && j < last;
        if (written) next += step;
        uint32_t expect = written ? in[j] : FILL;
        if (out[j] != expect)
            return "[" + std::to_string(j) + "] expected " + std::to_string(expect) + " got " + std::to_string(out[j]);
    }
    return "";
}

// The manual's simple kernel (add1 / add2 in N 5.6), as a copy: thread i moves element
// i + offset. With offset 0 a warp reads 128 aligned bytes = 4 sectors; with offset 1 its
// 128 bytes start 4 bytes into a sector and end in a fifth one.
__global__ void copy_offset(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, long long n, int offset) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i + offset] = in[i + offset];
}

// Thread i moves element i * stride. Neighbouring threads are stride * 4 bytes apart, so one
// warp touches min(32, 4 * stride) sectors for 32 useful words.
__global__ void copy_stride(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, long long n, int stride) {
    long long j = (blockIdx.x * (long long)blockDim.x + threadIdx.x) * stride;
    if (j < n) out[j] = in[j];
}

// The fast path: 16-byte loads and stores (uint4) in a grid-stride loop over a grid that just
// fills the GPU. One instruction moves 4x the bytes of the simple kernel, so a quarter of the
// instructions move the same bytes (nvcc unrolls the loop by 4: 4 LDG.E.128 and 4 STG.E.128 per
// iteration, tests/sass_claims/02_memory.txt; the loads and stores are interleaved, not all loads
// first). cudaMalloc pointers are 256-byte aligned, so the uint4 view is aligned; the n % 4 tail
// is copied one word at a time.
__global__ void copy_vec4(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, long long n) {
    long long n4 = n / 4, stride = (long long)gridDim.x * blockDim.x;
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    const uint4* in4 = reinterpret_cast<const uint4*>(in);
    uint4* out4 = reinterpret_cast<uint4*>(out);
    for (long long i = t; i < n4; i += stride) out4[i] = in4[i];
    for (long long i = 4 * n4 + t; i < n; i += stride) out[i] = in[i];
}

// The best version: copy_vec4's 16-byte accesses without its grid-stride loop. Thread i copies
// uint4 number i and the grid covers all of n / 4: blocks are short-lived and the block scheduler
// hands out new ones as old ones finish. On the H100 this measured about 100% of cudaMemcpy D2D
// against 92-93% for copy_vec4's just-full grid looping over the array (the README's table).
__global__ void copy_vec4_grid(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x, n4 = n / 4;
    if (i < n4)
        reinterpret_cast<uint4*>(out)[i] = reinterpret_cast<const uint4*>(in)[i];
    else if (i < n4 + n % 4)
        out[4 * n4 + (i - n4)] = in[4 * n4 + (i - n4)];
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Copies memory with an offset and with a stride between threads; GB/s per setting.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 30, "elements (uint32) copied per offset setting");
    int block = (int)args.integer("block", 256, 32, 1024, "threads per block");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "coalescing", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    long long total = n + MAX_SHIFT;  // room for the largest offset
    size_t bytes = total * sizeof(uint32_t);
    std::printf("n = %lld uint32 (%.1f MB per buffer, %.1fx the L2), block = %d\n", n, bytes / 1e6,
                (double)bytes / dev.real.l2CacheSize, block);  // the L2 measured, also under a profile

    std::vector<uint32_t> in = random_vector<uint32_t>(total, 0u, FILL - 1, 1);  // never FILL
    uint32_t* out = nullptr;  // pinned: 66 read-backs of a large buffer go at full PCIe speed
    CHECK(cudaMallocHost(&out, bytes));
    uint32_t *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));

    auto grid_for = [&](long long threads) { return (unsigned)((threads + block - 1) / block); };
    auto run_offset = [&](int o) { copy_offset<<<grid_for(n), block>>>(d_in, d_out, n, o); };
    auto run_stride = [&](int s) { copy_stride<<<grid_for((n + s - 1) / s), block>>>(d_in, d_out, n, s); };
    // A full GPU's worth of threads: as many blocks as fit on every SM by its thread limit (2048 on
    // sm_80/sm_90, 1536 on sm_86/sm_89, 1024 on sm_75: the attribute, not a constant).
    int grid_vec = dev.real.multiProcessorCount * (dev.real.maxThreadsPerMultiProcessor / block);  // this GPU's
    auto run_vec4 = [&] { copy_vec4<<<grid_vec, block>>>(d_in, d_out, n); };
    auto run_vec4_grid = [&] { copy_vec4_grid<<<grid_for(n / 4 + n % 4), block>>>(d_in, d_out, n); };

    // Validate every setting before timing any. The output is reset to FILL each time, so an
    // element that a kernel skipped, or one written where it should not be, is caught.
    Verdict verdict;
    auto validate = [&](auto launch, long long first, long long last, long long step) {
        CHECK(cudaMemset(d_out, 0xff, bytes));
        launch();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out, d_out, bytes, cudaMemcpyDeviceToHost));
        lab_corrupt(out, total);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
        return copy_diff(in.data(), out, total, first, last, step);
    };
    std::string bad;
    for (int o = 0; o <= MAX_SHIFT && bad.empty(); ++o) {
        bad = validate([&] { run_offset(o); }, o, o + n, 1);
        if (!bad.empty()) bad = "offset " + std::to_string(o) + ": " + bad;
    }
    verdict.check(bad.empty(), "copy_offset, offsets 0..32" + (bad.empty() ? "" : " (" + bad + ")"));
    bad.clear();
    for (int s = 1; s <= MAX_SHIFT && bad.empty(); ++s) {
        bad = validate([&] { run_stride(s); }, 0, n, s);
        if (!bad.empty()) bad = "stride " + std::to_string(s) + ": " + bad;
    }
    verdict.check(bad.empty(), "copy_stride, strides 1..32" + (bad.empty() ? "" : " (" + bad + ")"));
    bad = validate(run_vec4, 0, n, 1);
    verdict.check(bad.empty(), "copy_vec4 (uint4, grid-stride)" + (bad.empty() ? "" : " (" + bad + ")"));
    bad = validate(run_vec4_grid, 0, n, 1);
    verdict.check(bad.empty(), "copy_vec4_grid (uint4, one per thread)" + (bad.empty() ? "" : " (" + bad + ")"));

    // Time. GB/s counts the useful bytes: each copied element is read once and written once.
    // Every setting is one row (the CSV for plot.py); the screen gets the summary below.
    table.param("n", n);
    table.param("block", block);
    table.baseline_d2d(n * sizeof(uint32_t));
    table.add("copy_vec4", run_vec4, 2.0 * n * 4);
    table.add("copy_vec4_grid", run_vec4_grid, 2.0 * n * 4);
    for (int o = 0; o <= MAX_SHIFT; ++o)
        table.add("offset " + std::to_string(o), [&, o] { run_offset(o); }, 2.0 * n * 4).param("offset", o);
    for (int s = 1; s <= MAX_SHIFT; ++s)
        table.add("stride " + std::to_string(s), [&, s] { run_stride(s); }, 2.0 * ((n + s - 1) / s) * 4)
            .param("stride", s);
    table.quiet();
    table.run(verdict, reps);

    auto bw = [&](const std::string& name) {  // NaN when --only left it out
        const Results::Version* v = table.find(name);
        return v ? v->rate() : std::nan("");
    };
    double d2d = bw("cudaMemcpy D2D"), vec = bw("copy_vec4"), vec_grid = bw("copy_vec4_grid");
    std::vector<double> off_gbps(MAX_SHIFT + 1), str_gbps(MAX_SHIFT + 1);
    for (int i = 0; i <= MAX_SHIFT; ++i) {
        off_gbps[i] = bw("offset " + std::to_string(i));
        str_gbps[i] = bw("stride " + std::to_string(i));
    }
    std::printf("\ncudaMemcpy D2D (baseline)          %8.1f GB/s\n", d2d);
    std::printf("copy_vec4 (fast path)              %8.1f GB/s  %5.1f%% of D2D  %5.1f%% of peak\n", vec,
                100 * vec / d2d, 100 * vec / dev.peak_gbps);
    std::printf("copy_vec4_grid (one per thread)    %8.1f GB/s  %5.1f%% of D2D  %5.1f%% of peak\n", vec_grid,
                100 * vec_grid / d2d, 100 * vec_grid / dev.peak_gbps);
    std::printf("copy_offset, offset 0 (simple)     %8.1f GB/s  %5.1f%% of D2D\n", off_gbps[0],
                100 * off_gbps[0] / d2d);
    const int offs[] = {0, 1, 2, 4, 8, 16, 31, 32}, strs[] = {1, 2, 4, 8, 16, 32};
    std::printf("\noffset (elements) ");
    for (int o : offs) std::printf("%8d", o);
    std::printf("\n  GB/s           ");
    for (int o : offs) std::printf("%8.0f", off_gbps[o]);
    std::printf("\nstride (elements) ");
    for (int s : strs) std::printf("%8d", s);
    std::printf("\n  GB/s (useful)  ");
    for (int s : strs) std::printf("%8.0f", str_gbps[s]);
    std::printf("\n\noffset 0 / offset 1:  %.2fx  (5 sectors per warp request instead of 4; L1/L2 absorb part)\n",
                off_gbps[0] / off_gbps[1]);
    std::printf("stride 1 / stride 32: %.1fx  (each 4-byte word costs a whole 32-byte sector)\n",
                str_gbps[1] / str_gbps[32]);
    std::printf("best kernel / cudaMemcpy D2D: %.1f%%\n", 100 * std::max({vec, vec_grid, off_gbps[0]}) / d2d);

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFreeHost(out));
    return verdict.finish();
}
