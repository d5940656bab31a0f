// stream_priorities - a small kernel arriving behind a flood of work: low vs high stream priority.
//
// Manual: G 3.2.6.5.7 流优先级.
// Shows:  cudaDeviceGetStreamPriorityRange(&least, &greatest) (lower numbers mean higher priority)
//         and cudaStreamCreateWithPriority. A low-priority stream is filled with --flood kernels,
//         each with several waves of blocks that spin for --block-us. Right behind them a one-block
//         probe kernel is issued, once in a second stream of the same low priority and once in a
//         high-priority stream. The block scheduler gives pending blocks of the high-priority
//         stream the next free slot; running blocks are not interrupted, so the probe waits about
//         one flood block. At low priority it waits until the flood kernel that is being scheduled
//         has handed out all of its blocks. The latency is measured with events in the probe's
//         stream (recorded just before and after it) as the median of --reps runs. The latencies
//         are printed, not asserted: another process on the GPU can change them.
// Build:  nvcc -std=c++17 -O3 -arch=native -I../common -o stream_priorities stream_priorities.cu
// Run:    ./stream_priorities [--flood=8] [--waves=8] [--block-us=50] [--reps=5]
// Output: the priority range; probe latency at low and at high priority and their ratio; the checks
//         of the probe's and the flood's results; PASSED.
#include <algorithm>
#include <vector>
#include "common.cuh"

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Each block spins for `ns` and then counts itself, so the flood's result is checkable.
__global__ void flood_kernel(long long ns, unsigned int* blocks_done) {
    unsigned long long t0 = global_ns();
    while ((long long)(global_ns() - t0) < ns) {
    }
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(blocks_done, 1u);
}

// The probe: a small real computation, out[i] = 3 in[i] - 1.
__global__ void probe(const int* in, int* out, int n) {
    for (int i = threadIdx.x; i < n; i += blockDim.x) out[i] = 3 * in[i] - 1;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Latency of a small kernel behind a flood of work, at low and at high stream priority.");
    int flood = (int)args.integer("flood", 8, 1, 1000, "flood kernels issued before the probe");
    int waves = (int)args.integer("waves", 8, 1, 1000, "waves of blocks per flood kernel (the GPU full, several times)");
    int block_us = (int)args.integer("block-us", 50, 1, 100000, "how long each flood block spins (us)");
    int reps = (int)args.integer("reps", 5, 1, 100, "repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int least = 0, greatest = 0;
    CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
    std::printf("stream priorities: least %d, greatest %d (a lower number is a higher priority)\n", least, greatest);
    if (least == greatest) skip("this device has a single stream priority");

    const int threads = 256;
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, flood_kernel, threads, 0));
    // Waves of this GPU (the occupancy API answers for it): its SMs, also under CUDA_LAB_PROFILE.
    long long blocks = (long long)waves * per_sm * dev.real.multiProcessorCount;
    std::printf("flood: %d kernels x %lld blocks (%d waves of %d per SM x %d SMs), %d us per block\n", flood, blocks,
                waves, per_sm, dev.real.multiProcessorCount, block_us);

    cudaStream_t st_low, st_low2, st_high;
    CHECK(cudaStreamCreateWithPriority(&st_low, cudaStreamNonBlocking, least));
    CHECK(cudaStreamCreateWithPriority(&st_low2, cudaStreamNonBlocking, least));
    CHECK(cudaStreamCreateWithPriority(&st_high, cudaStreamNonBlocking, greatest));

    const int n = 1000;
    std::vector<int> h_in = random_vector<int>(n, -1000000, 1000000, 17), h_out(n), expected(n);
    for (int i = 0; i < n; ++i) expected[i] = 3 * h_in[i] - 1;
    int *d_in, *d_out;
    unsigned int* d_done;
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_out, n * sizeof(int)));
    CHECK(cudaMalloc(&d_done, sizeof(unsigned int)));
    // In st_low, where the warm-up probe reads d_in: the streams are non-blocking, so a copy on the
    // legacy stream would not be ordered before it.
    CHECK(cudaMemcpyAsync(d_in, h_in.data(), n * sizeof(int), cudaMemcpyHostToDevice, st_low));
    cudaEvent_t before, after;
    CHECK(cudaEventCreate(&before));
    CHECK(cudaEventCreate(&after));

    // Warm-up: load both kernels before anything is timed.
    CHECK(cudaMemsetAsync(d_done, 0, sizeof(unsigned int), st_low));
    flood_kernel<<<1, threads, 0, st_low>>>(1000, d_done);
    probe<<<1, 256, 0, st_low>>>(d_in, d_out, n);
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());

    Verdict verdict;
    auto measure = [&](cudaStream_t ps, const char* label) {
        std::vector<double> lat;
        for (int r = 0; r < reps; ++r) {
            CHECK(cudaMemset(d_done, 0, sizeof(unsigned int)));
            CHECK(cudaMemset(d_out, 0xff, n * sizeof(int)));
            CHECK(cudaDeviceSynchronize());
            for (int f = 0; f < flood; ++f) {
                flood_kernel<<<(unsigned)blocks, threads, 0, st_low>>>(block_us * 1000LL, d_done);
                CHECK_LAUNCH();
            }
            CHECK(cudaEventRecord(before, ps));  // completes at once: the probe's stream is empty
            probe<<<1, 256, 0, ps>>>(d_in, d_out, n);
            CHECK_LAUNCH();
            CHECK(cudaEventRecord(after, ps));
            CHECK(cudaDeviceSynchronize());
            float ms = 0;
            CHECK(cudaEventElapsedTime(&ms, before, after));
            lat.push_back(ms);
        }
        unsigned int done = 0;
        CHECK(cudaMemcpy(&done, d_done, sizeof done, cudaMemcpyDeviceToHost));
        lab_corrupt(&done, 1);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
        CHECK(cudaMemcpy(h_out.data(), d_out, n * sizeof(int), cudaMemcpyDeviceToHost));
        verdict.exact(std::string("probe result, ") + label, expected.data(), h_out.data(), n);
        verdict.check(done == (unsigned)(flood * blocks), std::string("every flood block ran, ") + label);
        return median(lat);
    };
    double low = measure(st_low2, "low priority");
    double high = measure(st_high, "high priority");
    double flood_ms = (double)flood * waves * block_us / 1000.0;  // up to 1000 x 1000 x 100000: not in int
    std::printf("\nflood ~%.1f ms; probe latency: low priority %.3f ms, high priority %.3f ms; low / high = %.1fx\n",
                flood_ms, low, high, low / high);
    std::printf("(printed, not asserted: other work on the GPU changes these; the guide: high-priority pending\n"
                " work is scheduled first, so high < low, about one flood block of %d us at best)\n", block_us);

    CHECK(cudaEventDestroy(before));
    CHECK(cudaEventDestroy(after));
    CHECK(cudaStreamDestroy(st_low));
    CHECK(cudaStreamDestroy(st_low2));
    CHECK(cudaStreamDestroy(st_high));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_done));
    return verdict.finish();
}
