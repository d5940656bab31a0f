// sync_throughput - how many __syncthreads() an SM executes per clock.
//
// Manual: G 5.4.3 同步指令 (synchronization instructions): "__syncthreads() 的吞吐量 ... 对于计算能力为
//         7.x 和 8.x 的设备,每个时钟周期为 16 次操作" (64 on 5.x/6.1/6.2, 32 on 6.0, 128 on 3.x);
//         G 5.4 最大化指令吞吐量 (throughput is counted in operations per clock per SM: one warp
//         instruction = 32 operations).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o sync_throughput sync_throughput.cu
// Shows:  one wave of blocks (as many per SM as fit) runs a loop of nothing but __syncthreads().
//         Each block reads the SM's cycle counter (clock64) before and after the loop and its SM
//         (%smid); per SM, operations = threads resident there x barriers, clocks = last end - first
//         start of its blocks, and ops/clock/SM is their ratio (the median over SMs is printed),
//         in the guide's unit and beside its figure. Clocks, not seconds: the figure does not
//         depend on the SM clock the GPU chose. Two kernels per block size:
//           bar only - the loop body is one __syncthreads(); the check is that every thread
//                      finished all its barriers;
//           handoff  - each step, every thread writes a value to shared memory, __syncthreads(),
//                      and reads its neighbour's (double-buffered, so one barrier per step):
//                      after N steps thread t holds thread (t+N) % block's start value + N, checked
//                      exactly against the CPU for every thread (without the barrier this races).
//         The block size is swept (32 .. 1024 threads): a 1-warp block's barrier involves one warp,
//         a 1024-thread block's 32, so the rate per operation may depend on it.
// Build:  make sync_throughput   Run: ./sync_throughput [--iters=16384] [--block=N] [--reps=10]
// Output: one row per block size and kernel: blocks and warps per SM, kernel time (CUDA-event
//         median), SM clocks of the loop, ops per clock per SM; the guide's figure; then PASSED.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"

__device__ __forceinline__ unsigned smid() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

__host__ __device__ inline uint32_t start_value(long long gid) { return (uint32_t)(gid * 2654435761ull) ^ 0x9e3779b9u; }

// Barrier loop. HANDOFF = false: only the barrier. HANDOFF = true: a value moves one thread to the
// left per barrier through shared memory (buffer k % 2 in step k, so one barrier per step is
// enough: a thread writes buffer k % 2 again in step k + 2 only after barrier k + 1, which every
// thread reaches after its reads of step k). stamp[3 * block] = {smid, clock before, clock after}.
template <bool HANDOFF>
__global__ void barrier_loop(int iters, uint32_t* out, long long* stamp) {
    extern __shared__ uint32_t s[];  // 2 x blockDim.x (handoff only)
    const int n = blockDim.x, t = threadIdx.x;
    long long gid = (long long)blockIdx.x * n + t;
    uint32_t v = start_value(gid);
    int done = 0;
    __syncthreads();
    long long t0 = clock64();
#pragma unroll 8
    for (int k = 0; k < iters; ++k) {
        if (HANDOFF) {
            uint32_t* buf = s + (k & 1) * n;
            buf[t] = v;
            __syncthreads();
            v = buf[t + 1 == n ? 0 : t + 1] + 1u;
        } else {
            __syncthreads();
            ++done;
        }
    }
    long long t1 = clock64();
    out[gid] = HANDOFF ? v : (uint32_t)done;
    if (t == 0) {
        stamp[3 * blockIdx.x] = smid();
        stamp[3 * blockIdx.x + 1] = t0;
        stamp[3 * blockIdx.x + 2] = t1;
    }
}

struct Rate {
    double ops_per_clock = 0;  // median over SMs
    double clocks = 0;         // median over SMs of the loop's span
    int sms = 0;               // SMs that ran a block
};

// Per SM: threads there x iters / (last end - first start); the median over SMs.
Rate rate_from_stamps(const std::vector<long long>& st, int grid, int block, int iters, int num_sms) {
    std::vector<long long> lo(num_sms, -1), hi(num_sms, -1), threads(num_sms, 0);
    for (int b = 0; b < grid; ++b) {
        long long sm = st[3 * b], t0 = st[3 * b + 1], t1 = st[3 * b + 2];
        if (sm < 0 || sm >= num_sms) continue;
        lo[sm] = lo[sm] < 0 ? t0 : std::min(lo[sm], t0);
        hi[sm] = std::max(hi[sm], t1);
        threads[sm] += block;
    }
    std::vector<double> rates, spans;
    for (int sm = 0; sm < num_sms; ++sm)
        if (threads[sm] > 0 && hi[sm] > lo[sm]) {
            rates.push_back((double)threads[sm] * iters / (double)(hi[sm] - lo[sm]));
            spans.push_back((double)(hi[sm] - lo[sm]));
        }
    Rate r;
    r.ops_per_clock = median(rates);
    r.clocks = median(spans);
    r.sms = (int)rates.size();
    return r;
}

// The guide's figure for this compute capability (ops per clock per SM), 0 where it gives none.
int guide_figure(int major, int minor) {
    if (major == 3) return 128;
    if (major == 5 || (major == 6 && minor > 0)) return 64;
    if (major == 6) return 32;
    if (major == 7 || major == 8) return 16;
    return 0;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Measures __syncthreads() throughput in operations per clock per SM (G 5.4.3).");
    int iters = (int)args.integer("iters", 16384, 1, 1 << 20, "barriers per thread");
    int only_block = (int)args.integer("block", 0, 0, 1024, "run only this block size (1..1024); 0 = 32, 64 .. 1024");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    // A measurement of this GPU: its SMs, and as many blocks per SM as the occupancy API (which
    // answers for this GPU) says, also under CUDA_LAB_PROFILE (device.cuh: yardsticks are dev.real's).
    const int sms = dev.real.multiProcessorCount;
    std::vector<int> blocks = {32, 64, 128, 256, 512, 1024};
    if (only_block) blocks = {only_block};

    // Buffers for the largest wave: every SM full (at most maxThreadsPerMultiProcessor threads each).
    long long max_threads = (long long)sms * dev.real.maxThreadsPerMultiProcessor;
    long long max_blocks = (long long)sms * dev.real.maxBlocksPerMultiProcessor;
    uint32_t* d_out;
    long long* d_stamp;
    CHECK(cudaMalloc(&d_out, max_threads * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_stamp, 3 * max_blocks * sizeof(long long)));

    std::printf("%d barriers per thread, one wave of blocks (as many per SM as fit)\n\n", iters);
    std::printf("%-9s %5s %9s %8s %10s %12s %14s\n", "kernel", "block", "blocks/SM", "warps/SM", "time ms",
                "SM clocks", "ops/clock/SM");
    Verdict verdict;
    double bar_1024 = 0;
    int checked = 0, wrong = 0;
    for (int block : blocks) {
        for (int handoff = 0; handoff < 2; ++handoff) {
            auto kernel = handoff ? barrier_loop<true> : barrier_loop<false>;
            size_t smem = handoff ? 2 * block * sizeof(uint32_t) : 0;
            int per_sm = 0;
            CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem));
            if (per_sm < 1) {
                verdict.check(false, "block " + std::to_string(block) + " fits on an SM");
                continue;
            }
            int grid = sms * per_sm;
            long long threads = (long long)grid * block;
            auto launch = [&] {
                kernel<<<grid, block, smem>>>(iters, d_out, d_stamp);
                CHECK_LAUNCH();
            };
            // Check first (poisoned output), then time.
            CHECK(cudaMemset(d_out, 0xff, threads * sizeof(uint32_t)));
            CHECK(cudaMemset(d_stamp, 0xff, 3 * grid * sizeof(long long)));
            launch();
            CHECK(cudaDeviceSynchronize());
            std::vector<uint32_t> got(threads), want(threads);
            CHECK(cudaMemcpy(got.data(), d_out, threads * sizeof(uint32_t), cudaMemcpyDeviceToHost));
            lab_corrupt(got.data(), got.size());  // CUDA_LAB_CORRUPT (corrupt.h): `got != want` must see it
            for (long long g = 0; g < threads; ++g) {
                if (!handoff) {
                    want[g] = (uint32_t)iters;
                } else {
                    long long b = g / block, t = g % block;
                    want[g] = start_value(b * block + (t + iters) % block) + (uint32_t)iters;
                }
            }
            std::string name = std::string(handoff ? "handoff" : "bar only") + ", block " + std::to_string(block);
            ++checked;
            if (got != want) {
                ++wrong;
                verdict.exact(name, want.data(), got.data(), (size_t)threads);
            }
            double ms = bench_ms(launch, reps);
            std::vector<long long> st(3 * grid);  // the stamps of the last timed launch
            CHECK(cudaMemcpy(st.data(), d_stamp, st.size() * sizeof(long long), cudaMemcpyDeviceToHost));
            Rate r = rate_from_stamps(st, grid, block, iters, sms);
            if (r.sms == 0) verdict.check(false, name + ": clock stamps recorded");
            else if (r.sms != sms)  // the block scheduler decides; a tool may change it
                std::printf("(%s: blocks ran on %d of %d SMs)\n", name.c_str(), r.sms, sms);
            if (!handoff && block == 1024) bar_1024 = r.ops_per_clock;
            std::printf("%-9s %5d %9d %8d %10.3f %12.0f %14.2f\n", handoff ? "handoff" : "bar only", block, per_sm,
                        per_sm * ((block + 31) / 32), ms, r.clocks, r.ops_per_clock);
        }
    }
    // The guide's figure for the GPU measured (dev.real), not the profile's.
    const int major = dev.real.major, minor = dev.real.minor;
    int guide = guide_figure(major, minor);
    std::printf("\nops = threads x barriers (G 5.4: a warp instruction = 32 operations); per SM, the median over SMs\n");
    if (guide)
        std::printf("guide (G 5.4.3) for compute capability %d.%d: %d ops/clock/SM\n", major, minor,
                    guide);
    else
        std::printf("guide (G 5.4.3): 16 ops/clock/SM on 7.x and 8.x, no figure for compute capability %d.%d\n",
                    major, minor);
    if (bar_1024 > 0)
        std::printf("bar only, 1024-thread blocks: %.2f ops/clock/SM = %.2f warp barriers per clock\n", bar_1024,
                    bar_1024 / 32.0);
    verdict.check(wrong == 0, std::to_string(checked) + " kernels, every thread vs CPU");

    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_stamp));
    return verdict.finish();
}
