// sum_overflow - the notes' vector sum: per-thread sums, a tree per block, one atomicAdd per block.
//
// Manual: N 6.3.2 向量求和代码 (grid-stride per-thread sums, a shared-memory tree per block, and
//         atomicAdd of each block's sum into the result); N 6.3.1 原子操作 (atomicAdd).
// Your task: the program sums n random values from [0, 2^31 - 1] (the range of rand(), as in the
//         notes) on the CPU and on the GPU and compares the two sums. The GPU's is wrong. Find the
//         bug and fix it so that the check passes.
// Build and check (from the chapter folder):
//         make exercises && cd workspace && ./sum_overflow     (builds your copy in workspace/)
//         make check                                           (says solved / not yet, with hints)
//         nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o sum_overflow sum_overflow.cu   (by hand)
// Run:    ./sum_overflow [--n=1000003] [--blocks=1024]
// Output: the CPU sum, the GPU sum, their difference in units of 2^32, PASSED or FAILED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <climits>
#include "common.cuh"

constexpr int BLOCK = 256;

long long sum_cpu(const std::vector<int>& v) {
    long long s = 0;
    for (int x : v) s += x;
    return s;
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// The notes' shape: each thread sums a grid-stride slice, the block adds its threads' sums in a
// tree in shared memory, and thread 0 adds the block's sum to the result.
__global__ void sum_gpu(const int* __restrict__ in, int n, unsigned long long* total) {
    __shared__ long long s[BLOCK];  // 64-bit: a block's sum of values up to 2^31 - 1 passes 2^31 at once
    long long v = 0;
    for (int i = blockIdx.x * BLOCK + threadIdx.x; i < n; i += gridDim.x * BLOCK) v += in[i];
    s[threadIdx.x] = v;
    __syncthreads();
    for (int h = BLOCK / 2; h > 0; h /= 2) {
        if (threadIdx.x < h) s[threadIdx.x] += s[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(total, (unsigned long long)s[0]);
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::sum_gpu;
REGION_SIGNATURE(sum_gpu, void (*)(const int*, int, unsigned long long*));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(sum_cpu); REGION_GUARD(random_vector<int>); REGION_GUARD(lab_corrupt<unsigned long long>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Sums random ints from [0, 2^31 - 1] with per-block trees and atomicAdd.");
    int n = (int)args.integer("n", 1000003, 1, 1 << 28, "number of values");
    int max_blocks = (int)args.integer("blocks", 1024, 1, 1 << 16, "at most this many blocks (grid-stride)");
    args.parse_or_exit();
    select_device(args.device());

    std::vector<int> h = random_vector<int>(n, 0, INT_MAX, 17);
    long long expected = sum_cpu(h);  // < 2^28 x 2^31 = 2^59: exact in 64 bits
    int* d_in;
    unsigned long long* d_total;
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_total, sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    int blocks = std::min((n + BLOCK - 1) / BLOCK, max_blocks);
    CHECK(cudaMemset(d_total, 0, sizeof(unsigned long long)));  // the sum starts at 0
    sum_gpu<<<blocks, BLOCK>>>(d_in, n, d_total);
    CHECK_LAUNCH();
    unsigned long long got = 0;
    CHECK(cudaMemcpy(&got, d_total, sizeof got, cudaMemcpyDeviceToHost));
    lab_corrupt(&got, 1);  // CUDA_LAB_CORRUPT=1: the check below must fail (common/corrupt.h)

    long long diff = (long long)(got - (unsigned long long)expected);  // two's complement difference
    std::printf("%d values in [0, 2^31 - 1], %d blocks of %d threads\n", n, blocks, BLOCK);
    std::printf("  CPU sum %lld\n  GPU sum %lld\n  GPU - CPU = %lld = %.3f x 2^32\n", expected, (long long)got, diff,
                diff / 4294967296.0);
    Verdict verdict;
    verdict.check(got == (unsigned long long)expected, "GPU sum == CPU sum");
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_total));
    return verdict.finish();
}
