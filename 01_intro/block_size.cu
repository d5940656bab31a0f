// block_size - a block is made of whole warps: 33 threads cost two; and a block-size sweep
// measured against the notes' launch-size guidelines.
//
// Manual: N 2.2 显卡硬件架构:SM、SP、Warp ("改成33就会分配两个warp"; the four guidelines: a multiple
//         of 32 threads, at least 128-256 threads per block, blocks adjusted to the kernel's
//         resources, many more blocks than SMs); N 3.2.3 CUDA线程分配; G 5.2.3 (threads per block a
//         multiple of the warp size, "to avoid wasting resources on under-populated warps").
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o block_size block_size.cu
// Shows:  1. the occupancy API counts a partial warp as a whole one: for every block size B the
//            resident blocks per SM equal those of a block of ceil(B / 32) x 32 threads; for 33
//            and 65 threads, what that costs in resident threads.
//         2. a timing: the same number of threads, each running a chain of FMAs, launched in blocks
//            of 32 and of 33: the 33-thread blocks issue two warp instructions per 33 threads (one
//            for a single live lane), so they take about 64/33 = 1.94x as long per thread.
//         3. a sweep of block sizes (multiples of 32 and not) for a memory-bound kernel: warps per
//            block, resident blocks per SM, occupancy, blocks per SM in the grid, GB/s.
//         And what the notes got wrong: resident threads per GPU are SMs x maxThreadsPerSM, not
//         SMs x 32; a block of 33 is legal (it runs, and its result is checked).
// Build:  make block_size           Run: ./block_size [--n=2^25] [--fmas=4096] [--reps=10]
// Output: the API table, the 32 vs 33 timing, the sweep table; PASSED.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include "common.cuh"

// Part 2: every thread runs `rounds` dependent FMAs from its own start value.
// fmaf: one rounding on the CPU and the GPU alike (a * b + c could be contracted on one side only).
__host__ __device__ inline float start_value(long long i) { return fmaf((float)(i % 977), 1e-3f, 1.0f); }
__global__ void fma_work(float* out, long long threads, int rounds, float a, float b) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= threads) return;
    float v = start_value(i);
    for (int r = 0; r < rounds; ++r) v = __fmaf_rn(v, a, b);
    out[i] = v;
}

// Part 3: y = a * x + b, one element per thread: memory-bound.
__global__ void axpb(const float* __restrict__ x, float* __restrict__ y, long long n, float a, float b) {
    const long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = __fmaf_rn(a, x[i], b);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "33 threads per block cost two warps (occupancy API, timing); a block-size sweep.");
    long long n = args.integer("n", 1LL << 25, 1, 1LL << 29, "elements of the memory-bound sweep");
    int fmas = (int)args.integer("fmas", 4096, 1, 1 << 16, "FMAs per thread in the 32 vs 33 timing");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    // Occupancy (the API answers for this GPU), waves and bandwidth are measurements of the GPU this
    // runs on: its own attributes (dev.real), also under CUDA_LAB_PROFILE (device.cuh).
    const cudaDeviceProp& p = dev.real;
    const int sms = p.multiProcessorCount, ws = p.warpSize;
    Verdict verdict;

    // ---- 1. the occupancy API: a partial warp is a whole warp ----
    bool whole_warps = true;
    for (int b = 1; b <= p.maxThreadsPerBlock; ++b) {
        int got = 0, rounded = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&got, fma_work, b, 0));
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&rounded, fma_work, (b + ws - 1) / ws * ws, 0));
        whole_warps &= got == rounded;
    }
    std::printf("resident per SM (occupancy API, fma_work): block -> warps/block, blocks, warps, threads\n");
    for (int b : {32, 33, 64, 65, 256}) {
        int blocks = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, fma_work, b, 0));
        const int wpb = (b + ws - 1) / ws;
        std::printf("  %4d threads -> %d warp%s, %2d blocks, %2d warps, %4d threads (%.0f%% of the lanes in use)\n", b,
                    wpb, wpb > 1 ? "s" : "", blocks, blocks * wpb, blocks * b, 100.0 * b / (wpb * ws));
    }
    verdict.note(whole_warps, "blocks/SM(B) == blocks/SM(ceil(B/32)*32), B = 1.." + std::to_string(p.maxThreadsPerBlock));
    int full = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&full, fma_work, 256, 0));
    std::printf("resident threads on this GPU: %d SMs x %d = %d (the notes 2.2: \"at most SMs x warp\" = %d)\n", sms,
                full * 256, sms * full * 256, sms * ws);

    // ---- 2. the same threads in blocks of 32 and of 33 ----
    const long long threads = (long long)sms * 32 * 32 * 33;  // a multiple of both: full blocks in both launches
    const float fa = 0.999f, fb = 0.001f;
    float* d_out;
    CHECK(cudaMalloc(&d_out, threads * sizeof(float)));
    std::vector<float> got(threads);
    double ms[2];
    const int sizes[2] = {32, 33};
    for (int s = 0; s < 2; ++s) {
        const int b = sizes[s];
        auto run = [&] { fma_work<<<(unsigned)(threads / b), b>>>(d_out, threads, fmas, fa, fb); };
        CHECK(cudaMemset(d_out, 0xff, threads * sizeof(float)));
        run();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(got.data(), d_out, threads * sizeof(float), cudaMemcpyDeviceToHost));
        // Every 997th thread and the last one (it wrote: not the 0xff NaN pattern), recomputed on the CPU.
        std::vector<long long> idx;
        for (long long i = 0; i < threads; i += 997) idx.push_back(i);
        if (idx.back() != threads - 1) idx.push_back(threads - 1);
        std::vector<float> sample, want;
        for (long long i : idx) {
            float v = start_value(i);
            for (int r = 0; r < fmas; ++r) v = std::fmaf(v, fa, fb);
            sample.push_back(got[i]);
            want.push_back(v);
        }
        verdict.exact("fma_work, block " + std::to_string(b) + " (sampled threads)", want.data(), sample.data(),
                      sample.size());
        ms[s] = bench_ms(run, reps);
    }
    std::printf("%lld threads x %d FMAs: block 32 %.3f ms, block 33 %.3f ms -> 33 / 32 = %.2fx (2 warps per 33 "
                "threads: %.2fx)\n",
                threads, fmas, ms[0], ms[1], ms[1] / ms[0], (2.0 / 33) / (1.0 / 32));
    CHECK(cudaFree(d_out));

    // ---- 3. block-size sweep on a memory-bound kernel ----
    std::vector<float> x = random_vector<float>(n, -1.0f, 1.0f, 1), y(n), ref(n);
    const float a = 1.5f, b = -0.25f;
    for (long long i = 0; i < n; ++i) ref[i] = std::fmaf(a, x[i], b);
    float *d_x, *d_y;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    std::printf("\ny = a * x + b, n = %lld (%.0f MB moved), DRAM peak %.0f GB/s\n", n, 8.0 * n / 1e6, dev.peak_gbps);
    std::printf("%6s %6s %10s %10s %13s %8s %8s\n", "block", "warps", "blocks/SM", "occupancy", "grid/SMs", "GB/s",
                "% peak");
    bool sweep_ok = true;
    for (int bs : {32, 33, 64, 96, 100, 128, 192, 256, 384, 512, 768, 1024}) {
        if (bs > p.maxThreadsPerBlock) break;
        const long long grid = (n + bs - 1) / bs;
        auto run = [&] { axpb<<<(unsigned)grid, bs>>>(d_x, d_y, n, a, b); };
        CHECK(cudaMemset(d_y, 0xff, n * sizeof(float)));
        run();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(y.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
        lab_corrupt(y.data(), n);  // CUDA_LAB_CORRUPT (corrupt.h): this check must be able to fail
        const bool ok = std::equal(ref.begin(), ref.end(), y.begin());
        sweep_ok &= ok;
        const double g = gbps(8.0 * n, bench_ms(run, reps));
        int blocks = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, axpb, bs, 0));
        const int wpb = (bs + ws - 1) / ws;
        std::printf("%6d %6d %10d %9.0f%% %13.1f %8.0f %7.1f%%%s\n", bs, wpb, blocks,
                    100.0 * blocks * wpb * ws / p.maxThreadsPerMultiProcessor, (double)grid / sms, g,
                    100 * g / dev.peak_gbps, ok ? "" : "  MISMATCH");
    }
    verdict.check(sweep_ok, "y = a * x + b exact at every block size");
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    return verdict.finish();
}
