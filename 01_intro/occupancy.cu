// occupancy - how many blocks fit on one SM, by hand from the device limits and by the API.
//
// Manual: G 5.2.3 多处理器层次 (multiprocessor level), G 5.2.3.1 占用率计算 (occupancy calculation).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o occupancy occupancy.cu
// Shows:  the resident blocks per SM are the minimum of four limits: warps (maxThreadsPerSM / 32),
//         blocks (maxBlocksPerSM), registers (allocated per warp in units of 256, per SM
//         sub-partition) and shared memory (allocated per block in units of 128 bytes, plus the
//         1 KB the driver reserves per block since sm_80). The program computes the limits by
//         hand for the guide's MyKernel and for a register-hungry kernel with and without
//         __launch_bounds__, checks cudaOccupancyMaxActiveBlocksPerMultiprocessor agrees, checks
//         that cudaOccupancyMaxPotentialBlockSize picks a block size of maximal occupancy, and
//         redoes the guide's arithmetic (512 threads x 64 vs 65 registers).
// Build:  make occupancy          Run: ./occupancy [--n=2^18] [--rounds=8] [--reps=20]
//         `nvcc -Xptxas -v` (see README) prints the registers ptxas gave each kernel.
// Output: a table kernel / regs / block / dyn smem / blocks per SM (hand, API) / occupancy /
//         limiter; the block sizes MaxPotentialBlockSize picks; kernel checks and times; PASSED.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"

constexpr int K = 72;  // live 32-bit values per thread in mix(): more than 64 registers' worth

// Full unrolling keeps v[] in registers (a dynamically indexed array would live in local
// memory); the host compiler does not know the pragma, so it only sees it on the device pass.
#ifdef __CUDA_ARCH__
#define UNROLL _Pragma("unroll")
#else
#define UNROLL
#endif

// K values kept alive across a loop with a run-time trip count: the compiler must hold them all
// in registers (or spill them to local memory when a launch bound caps the register count).
__host__ __device__ inline uint32_t mix(uint32_t x, int rounds) {
    uint32_t v[K];
    UNROLL
    for (int k = 0; k < K; ++k) v[k] = x * (2u * k + 1u) + k;
    for (int r = 0; r < rounds; ++r) {
        UNROLL
        for (int k = 0; k < K; ++k) v[k] = (v[k] ^ (v[(k + 1) % K] >> 7)) * 0x9E3779B1u + v[(k + K - 1) % K];
    }
    uint32_t s = 0;
    UNROLL
    for (int k = 0; k < K; ++k) s ^= v[k] + k;
    return s;
}

// CPU references.
void multiply_cpu(const int* a, const int* b, int* d, long long n) {
    for (long long i = 0; i < n; ++i) d[i] = a[i] * b[i];
}
void mix_cpu(const uint32_t* in, uint32_t* out, long long n, int rounds) {
    for (long long i = 0; i < n; ++i) out[i] = mix(in[i], rounds);
}

// The guide's MyKernel (with the bounds check its first version lacks): few registers.
__global__ void MyKernel(int* d, const int* a, const int* b, long long n) {
    long long idx = threadIdx.x + blockIdx.x * (long long)blockDim.x;
    if (idx < n) d[idx] = a[idx] * b[idx];
}

// The register-hungry kernel as the compiler likes it...
__global__ void mix_free(const uint32_t* in, uint32_t* out, long long n, int rounds) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = mix(in[i], rounds);
}

// ...and the same body promised to run 2 blocks of 512 threads per SM: ptxas must fit it into
// 65536 / (2 x 512) = 64 registers per thread, spilling what does not fit.
__global__ void __launch_bounds__(512, 2) mix_bounded(const uint32_t* in, uint32_t* out, long long n, int rounds) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) out[i] = mix(in[i], rounds);
}

static int round_up(long long x, long long unit) { return (int)((x + unit - 1) / unit * unit); }

struct Occupancy {
    int blocks = 0;
    std::string limiter;
};

// Resident blocks per SM from the device limits and the kernel's attributes, following the
// guide (5.2.3) and the arithmetic of the CUDA occupancy calculator (cuda_occupancy.h).
Occupancy by_hand(const cudaDeviceProp& p, const cudaFuncAttributes& fa, int block, size_t dyn_smem) {
    const int warps = (block + p.warpSize - 1) / p.warpSize;  // a partial warp costs a whole one
    const int sub_partitions = 4;                               // SM quarters, each with its own register file
    // Registers are allocated per warp in units of 256 (8 registers x 32 threads).
    const int regs_per_warp = round_up((long long)fa.numRegs * p.warpSize, 256);
    int by_regs;
    if ((long long)regs_per_warp * round_up(warps, sub_partitions) > p.regsPerBlock) by_regs = 0;  // cannot launch
    else by_regs = (p.regsPerMultiprocessor / sub_partitions / regs_per_warp) * sub_partitions / warps;
    // Shared memory per block: static + dynamic + the driver's reserve, in units of 128 bytes
    // (256 before sm_80).
    const int smem_unit = p.major >= 8 ? 128 : 256;
    long long smem = round_up((long long)fa.sharedSizeBytes + dyn_smem + p.reservedSharedMemPerBlock, smem_unit);
    int by_smem = smem == 0 ? INT_MAX
                  : smem > (long long)(p.sharedMemPerBlock + p.reservedSharedMemPerBlock) ? 0
                  : (int)(p.sharedMemPerMultiprocessor / smem);
    struct { int v; const char* name; } lim[] = {{p.maxThreadsPerMultiProcessor / p.warpSize / warps, "warps"},
                                                 {p.maxBlocksPerMultiProcessor, "blocks/SM"},
                                                 {by_regs, "registers"},
                                                 {by_smem, "shared mem"}};
    Occupancy o{INT_MAX, ""};
    for (auto& l : lim)
        if (l.v < o.blocks) o = {l.v, l.name};
    return o;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Computes occupancy by hand from the device limits and checks the CUDA occupancy API.");
    long long n = args.integer("n", 1LL << 18, 1, 1LL << 28, "elements for the kernel runs");
    int rounds = (int)args.integer("rounds", 8, 1, 1000, "rounds of mix() per element");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    // The occupancy API answers for the GPU this runs on, so the hand model takes that GPU's limits
    // (dev.real), also under CUDA_LAB_PROFILE (device.cuh: occupancy and its model are measurements).
    const cudaDeviceProp& p = dev.real;
    if (dev.profile)
        std::printf("(profile %s: the occupancy below is %s's, the GPU the occupancy API answers for)\n",
                    dev.profile->key.c_str(), p.name);
    const int max_warps = p.maxThreadsPerMultiProcessor / p.warpSize;
    std::printf("per SM: %d regs, %d threads (%d warps), %d blocks, %zu B shared (+%zu B reserved per block)\n",
                p.regsPerMultiprocessor, p.maxThreadsPerMultiProcessor, max_warps, p.maxBlocksPerMultiProcessor,
                p.sharedMemPerMultiprocessor, p.reservedSharedMemPerBlock);

    struct Kern { const char* name; const void* fn; cudaFuncAttributes fa; };
    Kern kernels[] = {{"MyKernel", (const void*)MyKernel, {}},
                      {"mix_free", (const void*)mix_free, {}},
                      {"mix_bounded", (const void*)mix_bounded, {}}};
    for (auto& k : kernels) CHECK(cudaFuncGetAttributes(&k.fa, k.fn));

    // kernel index, block size, dynamic shared memory per block
    struct Case { int k; int block; size_t smem; };
    const Case cases[] = {{0, 32, 0},   {0, 256, 0},  {0, 256, 40 << 10}, {1, 256, 0},
                          {1, 1024, 0}, {2, 256, 0},  {2, 512, 0}};
    Verdict verdict;
    bool all_agree = true;
    std::printf("\n%-12s %5s %6s %9s %12s %11s %10s  %s\n", "kernel", "regs", "block", "dyn smem", "blocks hand",
                "blocks API", "occupancy", "limited by");
    for (const Case& c : cases) {
        const Kern& k = kernels[c.k];
        Occupancy hand = by_hand(p, k.fa, c.block, c.smem);
        int api = -1;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&api, k.fn, c.block, c.smem));
        all_agree &= api == hand.blocks;
        int warps = api * ((c.block + p.warpSize - 1) / p.warpSize);  // the guide: blocks -> warps -> %
        std::printf("%-12s %5d %6d %9zu %12d %11d %9.1f%%  %s%s\n", k.name, k.fa.numRegs, c.block, c.smem,
                    hand.blocks, api, 100.0 * warps / max_warps, hand.limiter.c_str(),
                    api == 0 ? " (cannot launch)" : "");
    }
    verdict.note(all_agree, "hand calculation == occupancy API");

    // The guide's example: 512-thread blocks, 64 vs 65 registers per thread.
    for (int regs : {64, 65}) {
        cudaFuncAttributes fa = kernels[0].fa;
        fa.numRegs = regs;
        fa.sharedSizeBytes = 0;
        Occupancy o = by_hand(p, fa, 512, 0);
        std::printf("guide 5.2.3: 512 threads x %d regs -> %d block(s) = %d warps per SM\n", regs, o.blocks,
                    o.blocks * 16);
    }

    // cudaOccupancyMaxPotentialBlockSize promises a block size of maximal occupancy.
    int chosen[3];
    for (int i = 0; i < 3; ++i) {
        const Kern& k = kernels[i];
        int min_grid = 0;
        CHECK(cudaOccupancyMaxPotentialBlockSize(&min_grid, &chosen[i], k.fn, 0, 0));
        int best = 0;
        for (int b = p.warpSize; b <= k.fa.maxThreadsPerBlock; b += p.warpSize)
            best = std::max(best, by_hand(p, k.fa, b, 0).blocks * (b / p.warpSize));
        int got = by_hand(p, k.fa, chosen[i], 0).blocks * ((chosen[i] + p.warpSize - 1) / p.warpSize);
        std::printf("MaxPotentialBlockSize(%s): block %d, min grid %d -> %d of %d warps (best by hand %d)\n", k.name,
                    chosen[i], min_grid, got, max_warps, best);
        verdict.note(got == best, std::string(k.name) + ": its block size is optimal");
    }

    // Run the kernels with CPU checks; the guide's second example launches with the chosen size.
    std::vector<int> a = random_vector<int>(n, -30000, 30000, 1), b = random_vector<int>(n, -30000, 30000, 2);
    std::vector<int> d_ref(n), d_out(n);
    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0u, 0xffffffffu, 3), mix_ref(n), mix_out(n);
    multiply_cpu(a.data(), b.data(), d_ref.data(), n);
    mix_cpu(in.data(), mix_ref.data(), n, rounds);
    int *g_a, *g_b, *g_d;
    uint32_t *g_in, *g_out;
    CHECK(cudaMalloc(&g_a, n * sizeof(int)));
    CHECK(cudaMalloc(&g_b, n * sizeof(int)));
    CHECK(cudaMalloc(&g_d, n * sizeof(int)));
    CHECK(cudaMalloc(&g_in, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&g_out, n * sizeof(uint32_t)));
    CHECK(cudaMemcpy(g_a, a.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(g_b, b.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(g_in, in.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));

    auto grid = [&](int block) { return (unsigned)((n + block - 1) / block); };
    CHECK(cudaMemset(g_d, 0xff, n * sizeof(int)));
    MyKernel<<<grid(chosen[0]), chosen[0]>>>(g_d, g_a, g_b, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(d_out.data(), g_d, n * sizeof(int), cudaMemcpyDeviceToHost));
    verdict.exact("MyKernel", d_ref.data(), d_out.data(), n);

    auto run_free = [&] { mix_free<<<grid(256), 256>>>(g_in, g_out, n, rounds); };
    auto run_bounded = [&] { mix_bounded<<<grid(256), 256>>>(g_in, g_out, n, rounds); };
    for (int v = 0; v < 2; ++v) {
        CHECK(cudaMemset(g_out, 0xff, n * sizeof(uint32_t)));
        v == 0 ? run_free() : run_bounded();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(mix_out.data(), g_out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        verdict.exact(v == 0 ? "mix_free" : "mix_bounded", mix_ref.data(), mix_out.data(), n);
    }
    double t_free = bench_ms(run_free, reps), t_bounded = bench_ms(run_bounded, reps);
    std::printf("block 256: mix_free %.3f ms, mix_bounded %.3f ms (bounded / free %.2fx; spills, if any, cost)\n",
                t_free, t_bounded, t_bounded / t_free);

    CHECK(cudaFree(g_a));
    CHECK(cudaFree(g_b));
    CHECK(cudaFree(g_d));
    CHECK(cudaFree(g_in));
    CHECK(cudaFree(g_out));
    return verdict.finish();
}
