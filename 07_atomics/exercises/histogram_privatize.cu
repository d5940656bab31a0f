// histogram_privatize - a 256-bin byte histogram, on uniform and on skewed bytes: make it fast.
//
// Manual: N 6.3.1 原子操作 (atomicAdd: threads that update one address queue and run one by one);
//         G 4.1 SIMT 架构 (an atomic instruction of a warp on one address is serialized).
// Your task: histogram_student() below is yours to change (only the lines between the two marker
//         comments). As given, it sends one atomicAdd per input byte to global memory: every update
//         travels to the L2 and queues there behind the others on the same bin - on skewed input,
//         90% of them on one address. Make it at least 0.15 x as fast as a cudaMemcpy of the same
//         bytes ("ratio vs copy" below, the slower of the two inputs), keeping the counts exact.
//         The launch gives it blocks of 256 threads and as many blocks as fit on the GPU at once
//         (computed from your kernel's registers and shared memory), capped at one byte per thread.
// Build and check (from the chapter folder):
//         make exercises && cd workspace && ./histogram_privatize   (builds your copy in workspace/)
//         make check                                                (solved / not yet, with hints)
//         nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o histogram_privatize histogram_privatize.cu
// Run:    ./histogram_privatize [--n=16777259] [--skew=0.9] [--reps=10]
// Output: two check lines per input (the first launch, every timed round on new input), time,
//         input GB/s and % of D2D per input, the ratio vs copy,
//         PASSED or FAILED (FAILED only if a count is wrong: the ratio is judged by make check).
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>
#include "common.cuh"

constexpr int BINS = 256;
constexpr int BLOCK = 256;       // threads per block of every launch of histogram_student
constexpr unsigned DOMINANT = 42;  // the byte value that dominates the skewed input

void histogram_cpu(const std::vector<uint8_t>& v, unsigned* hist) {
    std::fill(hist, hist + BINS, 0u);
    for (uint8_t b : v) ++hist[b];
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin (the kernel) ----
// Counts the n bytes of `in` into hist[256] (zeroed before every launch). Every block has BLOCK threads.
__global__ void histogram_student(const uint8_t* __restrict__ in, size_t n, unsigned* hist) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) atomicAdd(&hist[in[i]], 1u);
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::histogram_student;
REGION_SIGNATURE(histogram_student, void (*)(const uint8_t*, size_t, unsigned*));

// For the timed rounds: new input each round, written on the GPU (the host never sees it), and its
// histogram by the plain global-atomic kernel into a buffer of its own, for the comparison.
__host__ __device__ inline uint32_t hash_u32(uint32_t x) {  // lowbias32 (C. Wellons' hash-prospector)
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
__global__ void fill_round(uint8_t* in, size_t n, uint32_t seed, uint32_t threshold) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) {
        uint32_t r = hash_u32((uint32_t)i ^ hash_u32(seed + (uint32_t)(i >> 32) * 0x9e3779b9u));
        in[i] = (r & 0xffff) < threshold ? (uint8_t)DOMINANT : (uint8_t)(r >> 24);
    }
}
__global__ void histogram_global(const uint8_t* in, size_t n, unsigned* hist) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) atomicAdd(&hist[in[i]], 1u);
}

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(histogram_cpu); REGION_GUARD(hash_u32); REGION_GUARD(fill_round); REGION_GUARD(histogram_global);
REGION_GUARD(bench_turns_ms); REGION_GUARD(gbps); REGION_GUARD(lab_corrupt<unsigned>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "256-bin byte histogram on uniform and skewed bytes, timed against cudaMemcpy D2D.");
    long long n = args.integer("n", 16777259, 1, 1LL << 30, "input bytes (32-bit counts stay exact)");
    double skew = args.real("skew", 0.9, 0.0, 1.0, "fraction of the skewed input that is one byte value");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed rounds (kernel and copy once per round; the shortest reported)");
    args.parse_or_exit();
    DeviceInfo dev = select_device(args.device());

    // Seeded input: uniform bytes, and bytes of which a fraction `skew` is DOMINANT.
    std::vector<uint8_t> data[2] = {std::vector<uint8_t>(n), std::vector<uint8_t>(n)};
    std::mt19937 gen(2024);
    for (long long i = 0; i < n; ++i) data[0][i] = (uint8_t)(gen() >> 24);
    uint32_t threshold = (uint32_t)(skew * 65536.0);
    for (long long i = 0; i < n; ++i) {
        uint32_t r = gen();
        data[1][i] = (r & 0xffff) < threshold ? (uint8_t)DOMINANT : (uint8_t)(r >> 24);
    }

    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, histogram_student, BLOCK, 0));
    long long full = (long long)std::max(per_sm, 1) * dev.prop.multiProcessorCount;
    int blocks = (int)std::min(full, (n + BLOCK - 1) / BLOCK);
    std::printf("%lld input bytes, %d blocks of %d threads; skewed input: %.0f%% of the bytes are %u\n", n, blocks,
                BLOCK, 100 * skew, DOMINANT);

    uint8_t* d_in;
    unsigned *d_hist, *d_ref_hist;
    CHECK(cudaMalloc(&d_in, n));
    CHECK(cudaMalloc(&d_hist, BINS * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_ref_hist, BINS * sizeof(unsigned)));
    D2DCopy copy((size_t)n);  // the baseline: cudaMemcpy D2D of the same n bytes (counts read + write)
    std::printf("each input timed in turns with cudaMemcpy D2D of n bytes, %d rounds: the shortest of each\n\n", reps);

    Verdict verdict;
    const char* names[2] = {"uniform", "skewed"};
    double worst = 1e30;
    for (int d = 0; d < 2; ++d) {
        CHECK(cudaMemcpy(d_in, data[d].data(), n, cudaMemcpyHostToDevice));
        unsigned ref[BINS], got[BINS];
        histogram_cpu(data[d], ref);
        // Zeroing the bins is part of every launch, as in any real use; the counts add up to n > 0,
        // so a kernel that adds nothing, or adds twice, fails the check.
        auto launch = [&] {
            CHECK(cudaMemsetAsync(d_hist, 0, BINS * sizeof(unsigned)));
            histogram_student<<<blocks, BLOCK>>>(d_in, (size_t)n, d_hist);
        };
        launch();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(got, d_hist, sizeof got, cudaMemcpyDeviceToHost));
        verdict.exact(std::string(names[d]) + " histogram", ref, got, BINS);
        // Every timed round, warm-ups included, counts new input (uniform, or as skewed as this one,
        // from a key drawn at run time for that round: no kernel can know it before the round), and
        // after it your counts are compared with the plain kernel's of the same input. Those are
        // counted before your kernel runs and copied to the host (want), and the device copy is
        // zeroed: no buffer holds the answer to the input while yours runs, and nothing it writes
        // can change the counts it is compared with.
        int round = 0;
        long long wrong_rounds = 0;
        unsigned want[BINS];
        std::random_device entropy;
        auto compare_round = [&] {
            CHECK(cudaMemcpy(got, d_hist, sizeof got, cudaMemcpyDeviceToHost));
            lab_corrupt(got, BINS);  // CUDA_LAB_CORRUPT=1: this check too must fail (common/corrupt.h)
            wrong_rounds += !std::equal(want, want + BINS, got);
        };
        auto next_round = [&] {
            if (round > 0) compare_round();
            fill_round<<<blocks, BLOCK>>>(d_in, (size_t)n, entropy(), d == 0 ? 0u : threshold);
            CHECK_LAUNCH();
            CHECK(cudaMemset(d_ref_hist, 0, BINS * sizeof(unsigned)));
            histogram_global<<<blocks, BLOCK>>>(d_in, (size_t)n, d_ref_hist);
            CHECK_LAUNCH();
            CHECK(cudaMemcpy(want, d_ref_hist, sizeof want, cudaMemcpyDeviceToHost));
            CHECK(cudaMemset(d_ref_hist, 0, BINS * sizeof(unsigned)));
            CHECK(cudaMemset(d_hist, 0xff, BINS * sizeof(unsigned)));
            ++round;
        };
        std::vector<double> t = bench_turns_ms({launch, [&] { copy(); }}, reps, next_round);
        compare_round();
        verdict.check(wrong_rounds == 0, std::string(names[d]) + " histogram of all " + std::to_string(round) +
                                             " rounds, warm-ups and timed (new input each) vs the global-atomic kernel: " +
                                             std::to_string(wrong_rounds) + " rounds differ");
        double ms = t[0], copy_gbps = copy.gbps(t[1]);
        double rate = gbps((double)n, ms);  // input bytes read; the 1 KB histogram is not counted
        std::printf("  %-8s %9.3f ms %9.1f GB/s  %6.1f%% of D2D (%.1f GB/s)\n", names[d], ms, rate,
                    100 * rate / copy_gbps, copy_gbps);
        worst = std::min(worst, rate / copy_gbps);
    }
    std::printf("ratio vs copy: %.4f (input GB/s of the slower input / this GPU's D2D GB/s; make check wants >= 0.15, set on an H100)\n", worst);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_hist));
    CHECK(cudaFree(d_ref_hist));
    return verdict.finish();
}
