// racy_count - count the values above a threshold: every thread that finds one adds 1 to a counter.
//
// Manual: N 6.3.1 原子操作 ("if many threads write x = x + a, one thread may read while another
//         writes: the result is undefined; atomic operations make them queue, one by one");
//         G 4.1 SIMT 架构 (when the lanes of a warp write one location with a non-atomic
//         instruction, only one write is guaranteed to land).
// Your task: the program counts how many of n random values in [0, 999] are above --threshold,
//         once on the CPU and once on the GPU, and compares the two counts. The GPU count comes
//         out wrong. Find out why, and fix the program so that the check passes (keep one counter
//         in global memory: the point is to update it correctly, not to avoid it).
// Build and check (from the chapter folder):
//         make exercises && cd workspace && ./racy_count       (builds your copy in workspace/)
//         make check                                           (says solved / not yet, with hints)
//         nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o racy_count racy_count.cu   (by hand)
// Run:    ./racy_count [--n=1000003] [--threshold=500]
// Output: the CPU count, the GPU count, how many increments were lost, PASSED or FAILED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include "common.cuh"

constexpr int BLOCK = 256;

int count_cpu(const std::vector<int>& v, int threshold) {
    int c = 0;
    for (int x : v) c += x > threshold;
    return c;
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// One thread per value.
__global__ void count_above(const int* __restrict__ in, int n, int threshold, unsigned* count) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n && in[i] > threshold) atomicAdd(count, 1u);  // one indivisible update each: none is lost
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::count_above;
REGION_SIGNATURE(count_above, void (*)(const int*, int, int, unsigned*));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(count_cpu); REGION_GUARD(random_vector<int>); REGION_GUARD(lab_corrupt<unsigned>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Counts the values above a threshold with one global counter.");
    int n = (int)args.integer("n", 1000003, 1, 1 << 28, "number of values (one thread each)");
    int threshold = (int)args.integer("threshold", 500, 0, 998, "count the values > threshold (values in [0, 999])");
    args.parse_or_exit();
    select_device(args.device());

    std::vector<int> h = random_vector<int>(n, 0, 999, 13);
    int expected = count_cpu(h, threshold);
    int* d_in;
    unsigned* d_count;
    CHECK(cudaMalloc(&d_in, n * sizeof(int)));
    CHECK(cudaMalloc(&d_count, sizeof(unsigned)));
    CHECK(cudaMemcpy(d_in, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));

    // The counter must start at 0: that is part of the algorithm, not a poison value.
    CHECK(cudaMemset(d_count, 0, sizeof(unsigned)));
    int blocks = (n + BLOCK - 1) / BLOCK;
    count_above<<<blocks, BLOCK>>>(d_in, n, threshold, d_count);
    CHECK_LAUNCH();
    unsigned got = 0;
    CHECK(cudaMemcpy(&got, d_count, sizeof got, cudaMemcpyDeviceToHost));
    lab_corrupt(&got, 1);  // CUDA_LAB_CORRUPT=1: the check below must fail (common/corrupt.h)

    std::printf("%d values in [0, 999], %d blocks of %d threads; values > %d:\n", n, blocks, BLOCK, threshold);
    std::printf("  CPU count %d\n  GPU count %u (%lld increments lost)\n", expected, got,
                (long long)expected - (long long)got);
    Verdict verdict;
    verdict.check(got == (unsigned)expected, "GPU count == CPU count");
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_count));
    return verdict.finish();
}
