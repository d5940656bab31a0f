// racy_increment - `counter += 1` from many threads loses updates; atomicAdd does not.
//
// Manual: N 6.3.1 原子操作 ("if many threads write x = x + a at the end of the kernel, one thread may
//         read while another writes: undefined results; atomic operations queue them one by one");
//         G 4.1 SIMT 架构 (when the threads of a warp write one location with a non-atomic
//         instruction, only one write is guaranteed to land, and which one is undefined; an atomic
//         instruction's read-modify-writes all happen, serialized).
// Shows:  every thread adds 1, --iters times, to one counter in four ways:
//           racy global    volatile load, add, store on global memory: threads that read the same
//                          old value all store old + 1, and all but one increment are lost
//           racy shared    the same on a __shared__ counter per block (what compute-sanitizer
//                          racecheck can see: it checks shared memory only)
//           atomic global  atomicAdd on the global counter
//           atomic shared  atomicAdd on a __shared__ counter, then one global atomicAdd per block
//         The atomic totals must equal threads x iters exactly; the racy totals are printed with
//         the share of updates lost (no fixed number is asserted: it depends on the GPU and timing,
//         only that a racy total can never exceed the exact one).
// Build:  make racy_increment   (nvcc -std=c++17 -O3 -arch=native -I../common -o racy_increment racy_increment.cu)
// Run:    ./racy_increment [--threads=2^20] [--iters=16] [--reps=5]
// Output: the four totals, updates lost, times, PASSED (if both atomic totals are exact).
//         compute-sanitizer --tool racecheck ./racy_increment  reports the shared-memory hazards.
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
    unsigned* d_counter;
    CHECK(cudaMalloc(&d_counter, sizeof(unsigned)));
    int blocks = (n + BLOCK - 1) / BLOCK;

    Verdict verdict;
    const char* names[] = {"racy global", "racy shared", "atomic global", "atomic shared"};
    unsigned totals[4];
    std::printf("%-14s %12s %14s %10s\n", "way", "total", "updates lost", "time ms");
    for (int w = 0; w < 4; ++w) {
        auto launch = [&] {
            CHECK(cudaMemsetAsync(d_counter, 0, sizeof(unsigned)));
            switch (w) {
                case 0: racy_global<<<blocks, BLOCK>>>(d_counter, n, iters); break;
                case 1: racy_shared<<<blocks, BLOCK>>>(d_counter, n, iters); break;
                case 2: atomic_global<<<blocks, BLOCK>>>(d_counter, n, iters); break;
                default: atomic_shared<<<blocks, BLOCK>>>(d_counter, n, iters); break;
            }
        };
        CHECK(cudaMemset(d_counter, 0xff, sizeof(unsigned)));  // a kernel that writes nothing cannot pass
        launch();
        CHECK_LAUNCH();
        unsigned total = 0;
        CHECK(cudaMemcpy(&total, d_counter, sizeof total, cudaMemcpyDeviceToHost));
        lab_corrupt(&total, 1);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
        double ms = bench_ms(launch, reps);
        std::printf("%-14s %12u %13.2f%% %10.3f\n", names[w], total, 100.0 * ((double)expected - total) / expected, ms);
        totals[w] = total;
    }
    std::printf("(the racy totals differ from run to run; with very few threads none may be lost)\n\n");
    for (int w = 0; w < 4; ++w) {
        if (w >= 2) verdict.check(totals[w] == expected, std::string(names[w]) + " total exact");
        else verdict.check(totals[w] <= expected, std::string(names[w]) + " total <= exact (none invented)");
    }
    CHECK(cudaFree(d_counter));
    return verdict.finish();
}
