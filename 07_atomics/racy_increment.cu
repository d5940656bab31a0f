// racy_increment - `counter += 1` from many threads loses updates; atomicAdd does not.
//
// Manual: N 6.3.1 原子操作 ("if many threads write x = x + a at the end of the kernel, one thread may
//         read while another writes: undefined results; atomic operations queue them one by one");
//         G 4.1 SIMT 架构 (when the threads of a warp write one location with a non-atomic
//         instruction, only one write is guaranteed to land, and which one is undefined; an atomic
//         instruction's read-modify-writes all happen, serialized).
// Shows:  every thread adds 1, --iters times, to one counter in five ways:
//           racy global    volatile load, add, store on global memory: threads that read the same
//                          old value all store old + 1, and all but one increment are lost
//           racy shared    the same on a __shared__ counter per block (what compute-sanitizer
//                          racecheck can see: it checks shared memory only)
//           atomic global  atomicAdd on the global counter. The compiler (ptxas) sees that every
//                          lane of a warp adds 1 to the same address and aggregates them: one vote
//                          of the active lanes (VOTEU.ANY), their count (POPC), and ONE reduction
//                          (REDG on sm_90, RED on sm_75) adding that count, sent by one lane. So
//                          threads x iters increments become (threads / 32) x iters atomic
//                          instructions (counted from the SASS: tests/sass_claims/07_atomics.txt).
//           atomic lanes   the same atomicAdd, but each lane's address is counter + offset[i],
//                          with offset[] all 0 in memory: the compiler cannot prove that the lanes
//                          share one address, so it cannot aggregate: no vote, and every lane's
//                          REDG is issued - threads x iters atomics on one address.
//           atomic shared  atomicAdd on a __shared__ counter, then one global atomicAdd per block
//                          (aggregated too: on sm_90 the shared +1 is ATOMS.POPC.INC.32, one
//                          instruction per warp that adds the number of active lanes; on sm_75 a
//                          vote, POPC and one ATOMS.ADD)
//         The atomic totals must equal threads x iters exactly; the racy totals are printed with
//         the share of updates lost (no number is asserted, it depends on the GPU and timing; a
//         racy total must lie in 1 .. exact: one store of old + 1 lands, none is invented).
// Build:  make racy_increment   (nvcc -std=c++17 -O3 -arch=native -I../common -o racy_increment racy_increment.cu)
// Run:    ./racy_increment [--threads=2^20] [--iters=16] [--reps=5]
// Output: the five totals, updates lost, times, the atomic instructions of the two global versions,
//         their ratio, the slowest way; PASSED (atomic totals exact, racy totals in 1 .. exact).
//         compute-sanitizer --tool racecheck ./racy_increment  reports the shared-memory hazards.
#include <algorithm>
#include <string>
#include "common.cuh"

constexpr int BLOCK = 256;

// volatile: each `+= 1` really is a load, an add and a store to memory (without it the compiler
// may keep the counter in a register for the loop and store once - a different, still racy, bug).
__global__ void racy_global(volatile unsigned* counter, int n, int iters) {
    if (blockIdx.x * BLOCK + threadIdx.x >= n) return;
    for (int k = 0; k < iters; ++k) *counter += 1;
}

__global__ void racy_shared(unsigned* counter, int n, int iters) {
    __shared__ unsigned s;
    if (threadIdx.x == 0) s = 0;
    __syncthreads();
    volatile unsigned* vs = &s;
    if (blockIdx.x * BLOCK + threadIdx.x < n)
        for (int k = 0; k < iters; ++k) *vs += 1;  // the data race racecheck reports
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(counter, s);
}

__global__ void atomic_global(unsigned* counter, int n, int iters) {
    if (blockIdx.x * BLOCK + threadIdx.x >= n) return;
    for (int k = 0; k < iters; ++k) atomicAdd(counter, 1u);
}

// As atomic_global, with an address that only the data makes uniform (offset[i] == 0 for every i).
// Aggregation needs a warp-uniform address that the compiler can prove; here it cannot, so each lane
// issues its own reduction, all on one address.
__global__ void atomic_lanes(unsigned* counter, const unsigned* __restrict__ offset, int n, int iters) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    unsigned* c = counter + offset[i];
    for (int k = 0; k < iters; ++k) atomicAdd(c, 1u);
}

__global__ void atomic_shared(unsigned* counter, int n, int iters) {
    __shared__ unsigned s;
    if (threadIdx.x == 0) s = 0;
    __syncthreads();
    if (blockIdx.x * BLOCK + threadIdx.x < n)
        for (int k = 0; k < iters; ++k) atomicAdd(&s, 1u);
    __syncthreads();
    if (threadIdx.x == 0) atomicAdd(counter, s);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Racy += versus atomicAdd on one counter, in global and in shared memory.");
    int n = (int)args.integer("threads", 1 << 20, 1, 1 << 26, "threads");
    int iters = (int)args.integer("iters", 16, 1, 32, "increments per thread (threads x iters < 2^32)");
    int reps = (int)args.integer("reps", 5, 1, 100, "timed repetitions (median reported)");
    args.parse_or_exit();
    DeviceInfo dev = select_device(args.device());
    (void)dev;

    unsigned expected = (unsigned)n * (unsigned)iters;
    std::printf("%d threads x %d increments of one counter = %u expected\n\n", n, iters, expected);
    unsigned *d_counter, *d_offset;
    CHECK(cudaMalloc(&d_counter, sizeof(unsigned)));
    CHECK(cudaMalloc(&d_offset, (size_t)n * sizeof(unsigned)));
    CHECK(cudaMemset(d_offset, 0, (size_t)n * sizeof(unsigned)));  // every lane's address: counter + 0
    int blocks = (n + BLOCK - 1) / BLOCK;

    Verdict verdict;
    const int WAYS = 5;
    const char* names[WAYS] = {"racy global", "racy shared", "atomic global", "atomic lanes", "atomic shared"};
    unsigned totals[WAYS];
    double times[WAYS];
    std::printf("%-14s %12s %14s %10s\n", "way", "total", "updates lost", "time ms");
    for (int w = 0; w < WAYS; ++w) {
        auto launch = [&] {
            CHECK(cudaMemsetAsync(d_counter, 0, sizeof(unsigned)));
            switch (w) {
                case 0: racy_global<<<blocks, BLOCK>>>(d_counter, n, iters); break;
                case 1: racy_shared<<<blocks, BLOCK>>>(d_counter, n, iters); break;
                case 2: atomic_global<<<blocks, BLOCK>>>(d_counter, n, iters); break;
                case 3: atomic_lanes<<<blocks, BLOCK>>>(d_counter, d_offset, n, iters); break;
                default: atomic_shared<<<blocks, BLOCK>>>(d_counter, n, iters); break;
            }
        };
        launch();  // zeroes the counter first: a racy total of 0 (nothing written) fails its check below
        CHECK_LAUNCH();
        unsigned total = 0;
        CHECK(cudaMemcpy(&total, d_counter, sizeof total, cudaMemcpyDeviceToHost));
        lab_corrupt(&total, 1);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
        double ms = bench_ms(launch, reps);
        std::printf("%-14s %12u %13.2f%% %10.3f\n", names[w], total, 100.0 * ((double)expected - total) / expected, ms);
        totals[w] = total;
        times[w] = ms;
    }
    std::printf("(the racy totals differ from run to run; with very few threads none may be lost)\n\n");
    // The atomic instructions issued follow from the SASS (tests/sass_claims/07_atomics.txt), not from
    // a measurement: atomic global issues one reduction per warp and iteration, atomic lanes one per
    // thread and iteration.
    long long warps = 0;
    for (int b = 0; b < blocks; ++b) warps += (std::min(BLOCK, n - b * BLOCK) + 31) / 32;
    long long per_warp = warps * iters, per_lane = (long long)n * iters;
    std::printf("global atomics on one address: %lld increments\n", per_lane);
    std::printf("  atomic global: aggregated by the compiler, one REDG per warp and iteration = %lld atomic instructions, %.3f ms\n",
                per_warp, times[2]);
    std::printf("  atomic lanes:  not aggregated, one REDG per lane and iteration     = %lld atomic instructions, %.3f ms\n",
                per_lane, times[3]);
    if (times[2] > 0)
        std::printf("  lanes / aggregated: %.1fx the time for %.1fx the atomic instructions (counted from the SASS)\n",
                    times[3] / times[2], (double)per_lane / per_warp);
    int slowest = (int)(std::max_element(times, times + WAYS) - times);
    std::printf("  the slowest way in this run: %s (%.3f ms)\n\n", names[slowest], times[slowest]);
    for (int w = 0; w < WAYS; ++w) {
        if (w >= 2) verdict.check(totals[w] == expected, std::string(names[w]) + " total exact");
        else verdict.check(totals[w] >= 1 && totals[w] <= expected, std::string(names[w]) + " total in 1..exact");
    }
    CHECK(cudaFree(d_counter));
    CHECK(cudaFree(d_offset));
    return verdict.finish();
}
