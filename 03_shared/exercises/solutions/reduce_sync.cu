// reduce_sync - exercise (find and fix): a block reduction in shared memory.
//
// Manual: N 6.3.2 向量求和代码 (the per-block tree and its __syncthreads());
//         G 5.2.1 应用程序层次 (threads of a block share data through shared memory and barriers).
// Your task: block_sums adds the 256 values of each block with a tree in shared memory, one
//         64-bit partial sum per block; the CPU adds the partials. The sums are wrong (on the H100 nearly
//         all); racecheck names the race even in a run that passes: find it with compute-sanitizer, fix it.
// Build and check (from 03_shared): `make exercises` builds workspace/reduce_sync from your copy in
//         workspace/; `make check` runs it and compute-sanitizer --tool racecheck on it.
//         By hand: cd workspace && compute-sanitizer --tool racecheck ./reduce_sync --n=100003
// Compile by hand (in workspace/): nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o reduce_sync reduce_sync.cu
// Output: the check of every block's partial sum, the total, PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <climits>
#include <vector>
#include "common.cuh"

constexpr int BLOCK = 256;

// CPU reference: the sum of each block's BLOCK elements (the last block may be partial).
void block_sums_cpu(const int* x, long long n, long long* sums) {
    for (long long b = 0; b * BLOCK < n; ++b) {
        sums[b] = 0;
        for (long long i = b * BLOCK; i < n && i < (b + 1) * BLOCK; ++i) sums[b] += x[i];
    }
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// Sequential addressing: at each step the first `len` threads add the slot `len` above their own.
// 64-bit slots: 256 int32 values can exceed the range of an int.
__global__ void block_sums(const int* in, long long* sums, long long n) {
    __shared__ long long s[BLOCK];
    unsigned t = threadIdx.x;
    long long i = blockIdx.x * (long long)BLOCK + t;
    s[t] = i < n ? (long long)in[i] : 0;  // threads past the end add zero
    __syncthreads();  // step 1 reads s[t + 128], which another warp has just written
    for (unsigned len = BLOCK / 2; len > 0; len /= 2) {
        if (t < len) s[t] += s[t + len];
        __syncthreads();
    }
    if (t == 0) sums[blockIdx.x] = s[0];
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::block_sums;
REGION_SIGNATURE(block_sums, void (*)(const int*, long long*, long long));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(block_sums_cpu); REGION_GUARD(random_vector<int>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: per-block sums in shared memory; find the bug with racecheck.");
    long long n = args.integer("n", 100003, 1, 1LL << 28, "number of int32 elements");
    args.parse_or_exit();

    select_device(args.device());
    long long blocks = (n + BLOCK - 1) / BLOCK;
    std::printf("%lld random int32 in %lld blocks of %d threads\n", n, blocks, BLOCK);
    std::vector<int> x = random_vector<int>(n, INT_MIN, INT_MAX, 1);
    std::vector<long long> ref(blocks), got(blocks);
    block_sums_cpu(x.data(), n, ref.data());

    int* d_x;
    long long* d_sums;
    CHECK(cudaMalloc(&d_x, n * sizeof(int)));
    CHECK(cudaMalloc(&d_sums, blocks * sizeof(long long)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_sums, 0xff, blocks * sizeof(long long)));  // -1: a sum never written fails
    block_sums<<<(unsigned)blocks, BLOCK>>>(d_x, d_sums, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(got.data(), d_sums, blocks * sizeof(long long), cudaMemcpyDeviceToHost));

    Verdict verdict;
    verdict.exact("block_sums vs CPU", ref.data(), got.data(), blocks);
    long long total = 0, total_ref = 0;
    for (long long b = 0; b < blocks; ++b) total += got[b], total_ref += ref[b];
    std::printf("total %lld (CPU %lld)\n", total, total_ref);

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_sums));
    return verdict.finish();
}
