// shared_bytes - exercise (find and fix): dynamic shared memory, sized at launch.
//
// Manual: N 5.4.2 申请共享内存 (动态申请: extern __shared__ and the third launch parameter);
//         G 3.2.4 共享内存 (Shared Memory).
// Your task: reverse_segments reverses every segment of `block` elements in place through a
//         dynamically sized shared array, so that one kernel serves any block size. Find the bug
//         with compute-sanitizer and fix it.
// Build and check (from 03_shared): `make exercises` builds workspace/shared_bytes from your copy in
//         workspace/; `make check` runs it and compute-sanitizer --tool memcheck on it.
//         By hand: cd workspace && compute-sanitizer --tool memcheck ./shared_bytes --n=100003 --block=1024
// Compile by hand (in workspace/): nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o shared_bytes shared_bytes.cu
// Output: the check of the reversed array, and that reverse_segments wrote every element, PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <vector>
#include <cstring>
#include "common.cuh"
#include "witness.cuh"  // gpu_witness, witness(), witness_sum(), witness_now(): the kernel's record

// CPU reference: reverse every segment of `seg` elements (the last one may be shorter).
void reverse_segments_cpu(const int* in, int* out, long long n, long long seg) {
    for (long long base = 0; base < n; base += seg) {
        long long len = std::min(seg, n - base);
        for (long long i = 0; i < len; ++i) out[base + i] = in[base + len - 1 - i];
    }
}

// The size of s is not known at compile time: it is whatever the launch asks for.
__global__ void reverse_segments(int* data, long long n) {
    extern __shared__ int s[];
    long long base = (long long)blockIdx.x * blockDim.x;
    int len = (int)min((long long)blockDim.x, n - base);  // the last block may be partial
    int t = threadIdx.x;
    if (t < len) s[t] = data[base + t];
    __syncthreads();  // thread t reads the slot that thread len - 1 - t wrote
    if (t < len) {
        data[base + t] = s[len - 1 - t];
        atomicAdd(&gpu_witness, witness(&data[base + t], (unsigned)data[base + t]));
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: reverses segments in place through dynamic shared memory; find the bug.");
    long long n = args.integer("n", 100003, 1, 1LL << 28, "number of int32 elements");
    int block = (int)args.integer("block", 256, 32, 1024, "threads per block = segment length");
    args.parse_or_exit();

    select_device(args.device());
    long long blocks = (n + block - 1) / block;
    std::printf("%lld int32 in segments of %d (%lld blocks)\n", n, block, blocks);
    std::vector<int> h = random_vector<int>(n, -1000000, 1000000, 1), ref(n);
    reverse_segments_cpu(h.data(), ref.data(), n, block);

    int* d = nullptr;  // the device copy of h: allocated and filled in your region
    // Your region is a function: it sees copies of main's variables, which stay as they are, except d and h.
    auto your_region = [=, &d, &h]() {
    // ---- your change: begin ----
    CHECK(cudaMalloc(&d, n * sizeof(int)));
    CHECK(cudaMemcpy(d, h.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    // <<<blocks, threads, dynamic shared memory per block>>>
    reverse_segments<<<(unsigned)blocks, block, block * sizeof(int)>>>(d, n);  // bytes, not elements
    CHECK_LAUNCH();
    // ---- your change: end ----
    REGION_GUARD_RUNTIME();  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
    REGION_GUARD(witness_sum); REGION_GUARD_TYPE(Verdict);
    };
    your_region();
    std::fill(h.begin(), h.end(), -1);  // the result must come from the GPU
    CHECK(cudaMemcpy(h.data(), d, n * sizeof(int), cudaMemcpyDeviceToHost));

    unsigned long long wrote = 0;
    CHECK(cudaMemcpyFromSymbol(&wrote, gpu_witness, sizeof wrote));
    Verdict verdict;
    verdict.exact("reverse_segments vs CPU", ref.data(), h.data(), n);
    verdict.check(wrote == witness_sum(d, h.data(), n), "every element written by reverse_segments, once");
    CHECK(cudaFree(d));
    return verdict.finish();
}
