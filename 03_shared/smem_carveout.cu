// smem_carveout - the L1 / shared-memory split (carveout) and what it does to occupancy.
//
// Manual: G 5.3 最大化存储吞吐量 (Maximize Memory Throughput): "the same on-chip memory is used
//         for L1 and shared memory, and how much of it is dedicated to L1 versus shared memory is
//         configurable for each kernel call"; G 5.2.3 多处理器层次 / 5.2.3.1 占用率计算 (occupancy).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o smem_carveout smem_carveout.cu
// Shows:  on Volta and later one on-chip array per SM is split between L1 cache and shared memory.
//         cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, P) asks for P %
//         of the maximum shared memory (0 = cudaSharedmemCarveoutMaxL1, 100 = ...MaxShared,
//         -1 = ...Default). It is a hint: the driver rounds up to a size the SM supports
//         (H100: 0, 8, 16, 32, 64, 100, 132, 164, 196, 228 KB) and never below what one block needs.
//         A block that uses 32 KB of shared memory (+1 KB the system reserves per block on sm_80+)
//         fits 6 times into 228 KB but only once into 64 KB, so a small carveout cuts the resident
//         blocks and with them the warps that hide memory latency. For each carveout the program
//         prints cudaOccupancyMaxActiveBlocksPerMultiprocessor, the documented occupancy model of
//         cuda_occupancy.h for that carveout, the kernel time and GB/s; every result is checked.
// Build:  make smem_carveout   Run: ./smem_carveout [--smem-kb=32] [--n=2^26] [--carveout=P] [--reps=20]
// Output: one row per carveout: blocks/SM (runtime API, model), occupancy %, ms, GB/s; then PASSED.
//         --carveout=P runs only that setting (for ncu's achieved occupancy, see the README lab).
#include <cuda_occupancy.h>
#include <algorithm>
#include <vector>
#include "common.cuh"

constexpr int kBlock = 256;

// CPU reference: in every tile of `tile` ints, out[i] = in[i] + in[mirror of i].
void mirror_add_cpu(const int* in, int* out, long long n, long long tile) {
    for (long long base = 0; base < n; base += tile) {
        long long len = std::min(tile, n - base);
        for (long long i = 0; i < len; ++i) out[base + i] = in[base + i] + in[base + len - 1 - i];
    }
}

// A memory-bound kernel whose shared memory use per block is set at launch: each block stages one
// tile (the whole dynamic allocation) and adds every element to its mirror. Memory-bound kernels
// need many resident warps to keep enough loads in flight, so occupancy shows up in the time.
__global__ void mirror_add_tile(const int* in, int* out, long long n, int tile) {
    extern __shared__ int s[];
    long long base = (long long)blockIdx.x * tile;
    int len = (int)min((long long)tile, n - base);
    for (int i = threadIdx.x; i < len; i += blockDim.x) s[i] = in[base + i];
    __syncthreads();
    for (int i = threadIdx.x; i < len; i += blockDim.x) out[base + i] = s[i] + s[len - 1 - i];
}

const char* carveout_name(int p) {
    return p == cudaSharedmemCarveoutDefault ? "Default" : p == cudaSharedmemCarveoutMaxL1 ? "MaxL1"
                                                       : p == cudaSharedmemCarveoutMaxShared ? "MaxShared" : "";
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Shared memory carveout (L1/shared split) vs occupancy and time.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 30, "number of ints");
    int smem_kb = (int)args.integer("smem-kb", 32, 1, 256, "KB of dynamic shared memory per block");
    int only = (int)args.integer("carveout", -2, -1, 100, "run only this carveout percent (-1 = Default); "
                                                            "-2 = sweep");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    size_t smem = (size_t)smem_kb * 1024;
    // Under CUDA_LAB_PROFILE the limit is the smaller of the profile's GPU and this one (the attribute
    // below is set on this GPU); the occupancy, its model and the timings are this GPU's (dev.real).
    if (smem > dev.smem_optin()) {
        std::fprintf(stderr, "error: --smem-kb=%d exceeds this GPU's %zu KB per block\n", smem_kb,
                     dev.smem_optin() / 1024);
        return 2;
    }
    int tile = (int)(smem / sizeof(int));
    long long grid = (n + tile - 1) / tile;
    size_t bytes = n * sizeof(int);
    const void* kernel = (const void*)mirror_add_tile;
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));  // > 48 KB needs it
    cudaFuncAttributes attr;
    CHECK(cudaFuncGetAttributes(&attr, kernel));
    std::printf("%d KB shared/block (+%zu B reserved), %d threads, %d regs; SM: %zu KB shared max, %d threads max\n",
                smem_kb, dev.real.reservedSharedMemPerBlock, kBlock, attr.numRegs,
                dev.real.sharedMemPerMultiprocessor / 1024, dev.real.maxThreadsPerMultiProcessor);

    std::vector<int> in = random_vector<int>(n, -1000000, 1000000, 21), out(n), ref(n);
    mirror_add_cpu(in.data(), ref.data(), n, tile);
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));

    // The occupancy model of cuda_occupancy.h (the header behind the Occupancy Calculator) takes
    // the carveout as an explicit input, so it shows what the hint is expected to do.
    cudaOccDeviceProp occ_prop(dev.real);
    cudaOccFuncAttributes occ_attr(attr);
    auto model_blocks = [&](int carveout) {
        cudaOccDeviceState state;
        state.carveoutConfig = carveout;
        cudaOccResult result{};
        cudaOccError e = cudaOccMaxActiveBlocksPerMultiprocessor(&result, &occ_prop, &occ_attr, &state, kBlock, smem);
        return e == CUDA_OCC_SUCCESS ? result.activeBlocksPerMultiprocessor : -1;
    };

    std::vector<int> settings = {cudaSharedmemCarveoutDefault, 0, 25, 50, 75, 100};
    if (only != -2) settings = {only};
    Verdict verdict;
    std::printf("%-14s %10s %10s %9s %9s %9s\n", "carveout", "blocks/SM", "(model)", "occupancy", "ms", "GB/s");
    int api_max_shared = -1;
    std::vector<int> model_sweep;
    bool all_ok = true;
    for (int p : settings) {
        // The carveout is a property of the kernel: it applies to every later launch of it.
        CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, p));
        int blocks = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, kBlock, smem));
        int model = model_blocks(p);
        if (p == 100) api_max_shared = blocks;
        if (p >= 0) model_sweep.push_back(model);

        auto launch = [&] { mirror_add_tile<<<grid, kBlock, smem>>>(d_in, d_out, n, tile); };
        CHECK(cudaMemset(d_out, 0xff, bytes));
        launch();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
        lab_corrupt(out.data(), n);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
        bool ok = std::equal(ref.begin(), ref.end(), out.begin());
        if (!ok || only != -2)
            verdict.exact("carveout " + std::to_string(p) + " result", ref.data(), out.data(), n);
        all_ok = all_ok && ok;

        double ms = bench_ms(launch, reps);
        double occupancy = 100.0 * blocks * kBlock / dev.real.maxThreadsPerMultiProcessor;
        char label[32];
        std::snprintf(label, sizeof label, "%d%s%s%s", p, *carveout_name(p) ? " (" : "", carveout_name(p),
                      *carveout_name(p) ? ")" : "");
        std::printf("%-14s %10d %10d %8.0f%% %9.3f %9.1f\n", label, blocks, model, occupancy, ms,
                    gbps(2.0 * bytes, ms));
    }
    if (only == -2) {
        verdict.check(all_ok, "results of all carveouts == CPU");
        // By hand at MaxShared: the SM's shared memory over one block's (dynamic + reserved), and the
        // thread / block limits. Registers are printed beside them; where they would be the limit,
        // the by-hand count is not compared with the API (below).
        int by_smem = (int)(dev.real.sharedMemPerMultiprocessor / (smem + dev.real.reservedSharedMemPerBlock));
        int by_threads = dev.real.maxThreadsPerMultiProcessor / kBlock;
        int by_regs = dev.real.regsPerMultiprocessor / (std::max(attr.numRegs, 1) * kBlock);
        int by_hand = std::min({by_smem, by_threads, dev.real.maxBlocksPerMultiProcessor});
        std::printf("by hand at MaxShared: min(%d by shared, %d by threads, %d by blocks) = %d (%d by registers)\n",
                    by_smem, by_threads, dev.real.maxBlocksPerMultiProcessor, by_hand, by_regs);
        // Notes, not checks: the occupancy API against a host model of it, and the model itself, are
        // no GPU result (the kernel's results are checked above).
        if (by_regs >= by_hand) verdict.note(api_max_shared == by_hand, "API blocks/SM at 100% == by hand");
        verdict.note(std::is_sorted(model_sweep.begin(), model_sweep.end()), "model: more carveout, never fewer blocks");
        verdict.note(model_sweep.front() >= 1, "model: 0% still fits one block");
    }
    std::printf("(the carveout is a hint; ncu's launch__shared_mem_config_size shows what was applied)\n");

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
