// latency_hiding - throughput against resident warps per SM, with one and with several independent
// operations per thread (instruction-level parallelism): fewer warps hide the latency when each
// has more independent work.
//
// Manual: G 5.2.3 多处理器层次 (multiprocessor level: latency, 4L instructions to hide L cycles,
//         16 warps for the 4-cycle arithmetic latency, "hundreds of cycles" for off-chip memory,
//         fewer warps needed with ILP); N 2.2 (active warps limited by the SM's resources).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o latency_hiding latency_hiding.cu
// Shows:  the number of warps resident per SM is set exactly: blocks of 32, 64 or 128 threads and
//         a dynamic shared memory request that lets only k blocks fit on an SM (the occupancy API
//         confirms k), with a grid of k blocks per SM. At each setting, two kernels:
//         - loads: every thread sums an array much larger than the L2 (grid-stride), ILP = 1, 2, 4
//           or 8 independent loads in flight per thread: GB/s and % of the DRAM peak;
//         - FMA chains: ILP = 1 or 4 independent dependent-FMA chains per thread: GFLOP/s.
//         The guide: at ILP 1 the FMA rate needs about 16 warps per SM (4 schedulers x 4 cycles);
//         with ILP 4 about 4 warps. Memory needs many more bytes in flight.
//         Checks: the load sums are exact (uint32 arithmetic modulo 2^32, order-independent);
//         the FMA chains of a sample of threads are recomputed bit for bit on the CPU.
// Build:  make latency_hiding       Run: ./latency_hiding [--n=2^26] [--fmas=16384] [--reps=10]
// Output: one row per warps/SM: blocks x threads, GB/s at ILP 1/2/4/8, GFLOP/s at ILP 1/4; then,
//         from that table, where each FMA column and the ILP 1 and 8 load columns level off; PASSED.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"

// Sums x with U loads issued before any of them is used. `#pragma unroll 1` keeps the compiler
// from unrolling the loop itself, which would add loads in flight behind our back.
template <int U>
__global__ void load_sum(const uint32_t* __restrict__ x, long long n, unsigned int* total) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    uint32_t s = 0;
#pragma unroll 1
    for (; i + (U - 1) * stride < n; i += U * stride) {
        uint32_t v[U];
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = x[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; ++u) s += v[u];
    }
#pragma unroll 1
    for (; i < n; i += stride) s += x[i];
    atomicAdd(total, s);
}

// U independent chains of `rounds` dependent FMAs each; one store per thread.
// fmaf: one rounding on the CPU and the GPU alike (a * b + c could be contracted on one side only).
// `#pragma unroll 16` on the rounds loop: its body is then 16 x U FFMA and 3 other instructions
// (counter, compare, branch; on sm_75 4 at ILP 4; tests/sass_claims/01_intro.txt). An SM's
// scheduler issues one instruction per clock, so the loop caps the rate at 16 / 19 = 84% of the
// FP32 peak at ILP 1 and 64 / 67 = 96% at ILP 4, whatever the number of warps (print_level_off
// prints the cap, on sm_90 only: see main). With `#pragma unroll 1` the ILP 1 loop is one FFMA in
// four issued instructions, which caps it at about a quarter of the FP32 peak: its curve would show
// the loop, not the latency.
// Per iteration of fma_chains' loop, unrolled 16 times: 16 x U FFMA and 3 other instructions (sm_90).
constexpr int kUnroll = 16, kLoopOther = 3;
__host__ __device__ inline float chain_start(long long tid, int u) { return fmaf((float)((tid * 7 + u) % 1000), 1e-3f, 1.0f); }
template <int U>
__global__ void fma_chains(float* out, int rounds, float a, float b) {
    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    float v[U];
#pragma unroll
    for (int u = 0; u < U; ++u) v[u] = chain_start(tid, u);
#pragma unroll 16
    for (int r = 0; r < rounds; ++r) {
#pragma unroll
        for (int u = 0; u < U; ++u) v[u] = __fmaf_rn(v[u], a, b);
    }
    float s = 0.0f;
#pragma unroll
    for (int u = 0; u < U; ++u) s = __fadd_rn(s, v[u]);
    out[tid] = s;
}
static float fma_chains_cpu(long long tid, int U, int rounds, float a, float b) {
    float s = 0.0f;
    for (int u = 0; u < U; ++u) {
        float v = chain_start(tid, u);
        for (int r = 0; r < rounds; ++r) v = std::fmaf(v, a, b);
        s = s + v;
    }
    return s;
}

// FP32 lanes (FMA units) per SM, from the Programming Guide's arithmetic-instruction throughput
// table (as in flop_byte.cu): no device attribute reports it.
static int fp32_lanes_per_sm(int major, int minor) {
    if (major == 7 || (major == 8 && minor == 0)) return 64;  // Volta, Turing, A100
    return 128;                                               // sm_86, sm_89, sm_90 and newer
}

// Where a column of the table levels off, from its own data: the last row reached by doublings of
// the warps that each still gave at least 1.5x (2x is linear growth: the added warps found issue
// slots idle), with its rate, and the first row within 10% of the column's best. cap: the share of
// the peak the kernel's loop allows (0: none printed).
static int g_max_warps = 0;  // this GPU's resident warps per SM (main sets it)
static void print_level_off(const char* what, const std::vector<int>& warps, const std::vector<double>& rate,
                            const char* unit, double peak, const char* guide, double cap = 0) {
    size_t linear = 0, near = 0, best = 0;
    while (linear + 1 < rate.size() && rate[linear + 1] >= 1.5 * rate[linear]) ++linear;
    for (size_t i = 0; i < rate.size(); ++i) best = rate[i] > rate[best] ? i : best;
    while (rate[near] < 0.9 * rate[best]) ++near;
    if (linear + 1 == rate.size()) {  // every doubling still gave 1.5x: the curve has not levelled off
        // The rows double the warps: on a GPU whose maximum is not a power of two (48 warps/SM on
        // sm_86 and sm_89) the last row is below it.
        std::printf("%-11s: >= 1.5x per doubling of the warps up to the last row, %d warps/SM (%.0f %s, %.0f%% of "
                    "peak)%s: still rising, no level-off up to %d of this GPU's %d warps/SM",
                    what, warps[linear], rate[linear], unit, 100 * rate[linear] / peak, guide, warps[linear],
                    g_max_warps);
    } else {
        std::printf("%-11s: >= 1.5x per doubling of the warps up to %d warps/SM (%.0f %s, %.0f%% of peak)%s; "
                    "within 10%% of its best (%.0f %s, %.0f%% of peak) from %d warps/SM",
                    what, warps[linear], rate[linear], unit, 100 * rate[linear] / peak, guide, rate[best], unit,
                    100 * rate[best] / peak, warps[near]);
    }
    if (cap > 0) std::printf("; the loop allows at most %.0f%% of peak", 100 * cap);
    std::printf("\n");
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Throughput against resident warps per SM, with 1..8 independent loads or FMA chains per thread.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 30, "uint32 values summed by the load kernels");
    int fmas = (int)args.integer("fmas", 16384, 4, 1 << 18, "FMAs per thread in the FMA kernels");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    // Everything here is a measurement of this GPU, so its own attributes (dev.real) set the warps
    // per SM, the shared memory split and the FP32 peak, also under CUDA_LAB_PROFILE (device.cuh).
    const cudaDeviceProp& p = dev.real;
    const int sms = p.multiProcessorCount, max_warps = p.maxThreadsPerMultiProcessor / p.warpSize;
    g_max_warps = max_warps;
    Verdict verdict;

    std::vector<uint32_t> x = random_vector<uint32_t>(n, 0u, 0xffffffffu, 1);
    uint32_t want = 0;
    for (uint32_t v : x) want += v;  // modulo 2^32, like the GPU
    uint32_t* d_x;
    unsigned int* d_total;
    float* d_out;
    CHECK(cudaMalloc(&d_x, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_total, sizeof(unsigned int)));
    CHECK(cudaMalloc(&d_out, (size_t)sms * p.maxThreadsPerMultiProcessor * sizeof(float)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));

    // The kernels get the whole shared memory of an SM as their carveout, and may ask for all of it.
    const void* kernels[] = {(const void*)load_sum<1>, (const void*)load_sum<2>, (const void*)load_sum<4>,
                             (const void*)load_sum<8>, (const void*)fma_chains<1>, (const void*)fma_chains<4>};
    for (const void* k : kernels) {
        CHECK(cudaFuncSetAttribute(k, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
        CHECK(cudaFuncSetAttribute(k, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.sharedMemPerBlockOptin));
    }
    const float fa = 0.999f, fb = 0.001f;
    std::printf("n = %lld uint32 (%.1f MB); %d FMAs per thread; DRAM peak %.0f GB/s\n", n, n * 4 / 1e6, fmas,
                dev.peak_gbps);
    std::printf("%35s| %-40s| %s\n", "", "loads: GB/s (% of peak at ILP 8)", "FMA chains: GFLOP/s");
    std::printf("%8s %14s %9s | %6s %6s %6s %6s %10s | %9s %9s\n", "warps/SM", "blocks x thr", "smem/blk", "ILP 1",
                "ILP 2", "ILP 4", "ILP 8", "", "ILP 1", "ILP 4");
    bool resident_ok = true, loads_ok = true, fma_ok = true;
    std::vector<int> rows;                              // warps per SM of each row
    std::vector<double> load1, load8, fma1, fma4;       // the columns the conclusion is drawn from
    for (int warps = 1; warps <= max_warps; warps *= 2) {
        const int block = 32 * std::min(warps, 4), k = warps / std::min(warps, 4);
        if (k > p.maxBlocksPerMultiProcessor) break;
        // k blocks fit on an SM, k + 1 do not: each takes 1/k of the SM's shared memory (with the
        // driver's per-block reserve), rounded down to the 128-byte allocation unit.
        size_t smem = (p.sharedMemPerMultiprocessor / k - p.reservedSharedMemPerBlock) / 128 * 128;
        smem = std::min(smem, p.sharedMemPerBlockOptin);
        bool row_ok = true;
        for (const void* kf : kernels) {
            int blocks = 0;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kf, block, smem));
            row_ok &= blocks == k;
        }
        resident_ok &= row_ok;
        const int grid = k * sms;
        double bw[4], gflops[2];
        auto loads = [&](int u) {
            switch (u) {
                case 0: load_sum<1><<<grid, block, smem>>>(d_x, n, d_total); break;
                case 1: load_sum<2><<<grid, block, smem>>>(d_x, n, d_total); break;
                case 2: load_sum<4><<<grid, block, smem>>>(d_x, n, d_total); break;
                default: load_sum<8><<<grid, block, smem>>>(d_x, n, d_total); break;
            }
        };
        for (int u = 0; u < 4; ++u) {
            CHECK(cudaMemset(d_total, 0, sizeof(unsigned int)));
            loads(u);
            CHECK_LAUNCH();
            uint32_t got = 0;
            CHECK(cudaMemcpy(&got, d_total, sizeof(got), cudaMemcpyDeviceToHost));
            lab_corrupt(&got, 1);  // CUDA_LAB_CORRUPT (corrupt.h): this check must be able to fail
            loads_ok &= got == want;
            // The total keeps accumulating over the timed runs; only the first run was checked.
            bw[u] = gbps(n * 4.0, bench_ms([&] { loads(u); }, reps));
        }
        const long long threads = (long long)grid * block;
        for (int c = 0; c < 2; ++c) {
            const int U = c == 0 ? 1 : 4, rounds = std::max(1, fmas / U);
            auto run = [&] {
                if (c == 0) fma_chains<1><<<grid, block, smem>>>(d_out, rounds, fa, fb);
                else fma_chains<4><<<grid, block, smem>>>(d_out, rounds, fa, fb);
            };
            CHECK(cudaMemset(d_out, 0xff, threads * sizeof(float)));
            run();
            CHECK_LAUNCH();
            std::vector<float> got(threads);
            CHECK(cudaMemcpy(got.data(), d_out, threads * sizeof(float), cudaMemcpyDeviceToHost));
            const long long step = std::max(1LL, threads / 64);
            std::vector<float> sample, want_sample;  // every step-th thread
            for (long long t = 0; t < threads; t += step) {
                sample.push_back(got[t]);
                want_sample.push_back(fma_chains_cpu(t, U, rounds, fa, fb));
            }
            lab_corrupt(sample.data(), sample.size());  // CUDA_LAB_CORRUPT: a sampled value, not an unchecked one
            fma_ok &= sample == want_sample;
            gflops[c] = 2.0 * threads * U * rounds / (bench_ms(run, reps) * 1e6);
        }
        std::printf("%8d %7d x %-5d %8zuK | %6.0f %6.0f %6.0f %6.0f %9.1f%% | %9.0f %9.0f%s\n", warps, k, block,
                    smem >> 10, bw[0], bw[1], bw[2], bw[3], 100 * bw[3] / dev.peak_gbps, gflops[0], gflops[1],
                    row_ok ? "" : "  (API: not k blocks/SM)");
        rows.push_back(warps);
        load1.push_back(bw[0]), load8.push_back(bw[3]), fma1.push_back(gflops[0]), fma4.push_back(gflops[1]);
    }
    const double fp32_peak = sms * 2.0 * fp32_lanes_per_sm(p.major, p.minor) * dev.sm_clock_khz / 1e6;
    std::printf("FP32 peak %.0f GFLOP/s (%d SMs x %d lanes x 2 x %.0f MHz). Where each column levels off:\n",
                fp32_peak, sms, fp32_lanes_per_sm(p.major, p.minor), dev.sm_clock_khz / 1e3);
    // The cap holds where its two premises were checked: the loop's 3 other instructions (the SASS
    // claims, sm_90) and 128 FP32 lanes per SM fed by 4 schedulers of one 32-thread instruction per
    // clock, so that every issue slot is needed. On a 64-lane SM (sm_75, sm_80) an FFMA occupies its
    // lanes for 2 clocks and leaves issue slots for the loop; other GPUs differ again: no cap printed.
    const bool cap_known = p.major == 9 && p.minor == 0;
    auto cap = [cap_known](int U) { return cap_known ? double(kUnroll * U) / (kUnroll * U + kLoopOther) : 0.0; };
    print_level_off("FMA ILP 1", rows, fma1, "GFLOP/s", fp32_peak, " (guide: 16)", cap(1));
    print_level_off("FMA ILP 4", rows, fma4, "GFLOP/s", fp32_peak, " (guide: 4)", cap(4));
    print_level_off("loads ILP 1", rows, load1, "GB/s", dev.peak_gbps, "");
    print_level_off("loads ILP 8", rows, load8, "GB/s", dev.peak_gbps, "");
    // The occupancy API against the program's own arithmetic: set-up, not a GPU result.
    verdict.note(resident_ok, "blocks per SM as intended (occupancy API)");
    verdict.check(loads_ok, "load sums exact (every row, ILP)");
    verdict.check(fma_ok, "FMA chains bit-exact (sampled threads)");

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_total));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
