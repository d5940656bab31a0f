// warp_divergence - a branch that splits a warp costs both paths; one aligned to warps is free.
//
// Manual: G 4.1 SIMT 架构, G 5.4.2 控制流指令 (control flow instructions).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o warp_divergence warp_divergence.cu
// Shows:  even elements take path A (an LCG loop), odd elements path B (a xorshift loop). In
//         branch_on_tid the branch is tid % 2, so every warp holds both kinds of threads: the warp
//         runs path A with half its threads masked off, then path B with the other half. In
//         branch_on_warp the threads are mapped to elements so that all 32 lanes of a warp take
//         the same path (the condition depends only on threadIdx / warpSize, as the guide
//         suggests): the same work and the same result in about half the time.
//         Each path is a loop whose trip count comes from the data, so the compiler cannot turn
//         the branch into predicated selects (guide 5.4.2) - with two short arms it would, and
//         the ratio would be 1.
// Build:  make warp_divergence   Run: ./warp_divergence [--n=2^18] [--iters=512] [--reps=20]
// Output: time of each version and the ratio divergent / uniform, then PASSED.
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// Path A: iterations of a linear congruential generator (one multiply-add each).
__host__ __device__ inline uint32_t path_a(uint32_t v, int iters) {
    uint32_t h = v;
    int k = iters + (int)(v & 63);
    for (int j = 0; j < k; ++j) h = h * 1664525u + 1013904223u;
    return h;
}
// Path B: iterations of xorshift32 (three shifts and three xors each).
__host__ __device__ inline uint32_t path_b(uint32_t v, int iters) {
    uint32_t h = v | 1u;
    int k = iters + (int)((v >> 6) & 63);
    for (int j = 0; j < k; ++j) {
        h ^= h << 13;
        h ^= h >> 17;
        h ^= h << 5;
    }
    return h;
}

// CPU reference: element e takes path A if e is even, B if odd.
void work_cpu(const uint32_t* in, uint32_t* out, long long n, int iters) {
    for (long long e = 0; e < n; ++e) out[e] = (e % 2 == 0) ? path_a(in[e], iters) : path_b(in[e], iters);
}

// Version 1: thread t handles element t and branches on t % 2 - neighbouring lanes disagree,
// so every warp diverges and executes both loops one after the other.
__global__ void branch_on_tid(const uint32_t* in, uint32_t* out, long long n, int iters) {
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= n) return;
    if (t % 2 == 0) out[t] = path_a(in[t], iters);
    else out[t] = path_b(in[t], iters);
}

// Version 2: the same elements, re-dealt so that a warp holds one parity. Warps 2p and 2p+1
// share the 64 elements 64p .. 64p+63: the even warp takes the even ones, the odd warp the odd
// ones. The branch depends on the warp index only, so no warp diverges. (The accesses become
// stride-2, which costs little next to the loops.)
__global__ void branch_on_warp(const uint32_t* in, uint32_t* out, long long n, int iters) {
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long warp = t / warpSize;
    int lane = (int)(t % warpSize);
    long long e = (warp / 2) * 2 * warpSize + 2 * lane + (warp & 1);
    if (e >= n) return;
    if ((warp & 1) == 0) out[e] = path_a(in[e], iters);
    else out[e] = path_b(in[e], iters);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Times a branch on tid % 2 (divergent warps) against one on the warp index.");
    long long n = args.integer("n", 1LL << 18, 1, 1LL << 26, "number of elements");
    int iters = (int)args.integer("iters", 512, 1, 1 << 16, "loop iterations per element (plus 0..63 from the data)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "warp_divergence", Results::TIME_ONLY);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    const int block = 256;
    double resident = (double)dev.real.maxThreadsPerMultiProcessor * dev.real.multiProcessorCount;  // this GPU's, also under a profile
    std::printf("n = %lld elements (%.1f x the threads the GPU holds at once), %d..%d iterations each\n", n,
                n / resident, iters, iters + 63);

    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0u, 0xffffffffu, 1), ref(n), out(n);
    work_cpu(in.data(), ref.data(), n, iters);

    size_t bytes = n * sizeof(uint32_t);
    uint32_t *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));

    long long grid1 = (n + block - 1) / block;
    long long threads2 = (n + 63) / 64 * 64;  // whole pairs of warps, so every element has a thread
    long long grid2 = (threads2 + block - 1) / block;
    // Both are checked before timing: the same elements get the same path in both versions, so
    // both must equal the same CPU result.
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), out.data(), n);
    };
    auto poison = [&] { CHECK(cudaMemset(d_out, 0xff, bytes)); };  // a skipped element cannot pass
    table.param("n", n);
    table.param("iters", iters);
    table.add("branch_on_tid  (tid % 2: divergent)", [&] { branch_on_tid<<<grid1, block>>>(d_in, d_out, n, iters); }, 0,
              check, poison);
    table.add("branch_on_warp (warp % 2: uniform)", [&] { branch_on_warp<<<grid2, block>>>(d_in, d_out, n, iters); },
              0, check, poison);
    table.speedup_over("branch_on_tid  (tid % 2: divergent)");
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *div = table.find("branch_on_tid  (tid % 2: divergent)"),
                           *uni = table.find("branch_on_warp (warp % 2: uniform)");
    // A divergent warp issues the instructions of both loops; a uniform warp those of one.
    if (div && uni)
        std::printf("divergent / uniform: %.2fx (about 2 expected: each divergent warp runs both paths)\n",
                    div->ms / uni->ms);

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
