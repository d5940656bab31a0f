// async_read - exercise (fix): upload, compute and download in a stream, then check the result
//              on the CPU. The check fails.
//
// Manual: G 3.2.6.5.3 显式同步 (cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize);
//         G 3.2.6.5 流.
// The program works on one pinned host buffer: cudaMemcpyAsync to the device in a non-blocking
// stream, a kernel that computes y = 3x + 1 (after a --work-ms pause that stands for a longer
// computation), cudaMemcpyAsync back into the same pinned buffer, then it compares every element
// with the CPU and prints how long the stream's work took (CUDA events).
// Your task: find out why the CPU check fails and fix it with the smallest change; the result must
// pass the CPU check for any --work-ms. Do not change the kernel.
// Build and check: from the chapter folder, `make exercises` builds workspace/async_read from your
// copy, `make check` runs it and says solved / not yet (with a hint after a miss).
// Run:    cd workspace && ./async_read [--n=1000003] [--work-ms=50]
// Output: the CPU check, and that h_x is what the kernel wrote, complete when the CPU checked it;
//         the stream's time; PASSED (or FAILED: with the first mismatches).
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <vector>
#include <cstring>
#include "common.cuh"
#include "witness.cuh"  // gpu_witness, witness(), witness_sum(), witness_now(): the kernel's record

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// y = 3x + 1 in place. Thread 0 of block 0 first waits work_ns of global time: the kernel, and so
// the download queued behind it, ends at least that long after it started.
__global__ void triple_plus_one(float* x, size_t n, long long work_ns) {
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        unsigned long long t0 = global_ns();
        while (global_ns() - t0 < (unsigned long long)work_ns) {
        }
    }
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i < n) {
        x[i] = 3.0f * x[i] + 1.0f;
        atomicAdd(&gpu_witness, witness(&x[i], __float_as_uint(x[i])));
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: an asynchronous H2D -> kernel -> D2H round trip whose CPU check fails.");
    long long n = args.integer("n", 1000003, 1, 1LL << 27, "floats in the buffer");
    int work_ms = (int)args.integer("work-ms", 50, 1, 2000, "how long the kernel runs before it writes");
    args.parse_or_exit();

    select_device(args.device());
    size_t bytes = (size_t)n * sizeof(float);
    // Multiples of 1/1024 in [-1, 1): 3x + 1 is exact in float, so the check can be exact.
    std::vector<int> k = random_vector<int>(n, -1024, 1023, 21);
    std::vector<float> input(n), expected(n);
    for (long long i = 0; i < n; ++i) {
        input[i] = k[i] / 1024.0f;
        expected[i] = 3.0f * input[i] + 1.0f;
    }

    float *h_x, *d_x;
    CHECK(cudaMallocHost(&h_x, bytes));  // pinned: the copies below really are asynchronous
    CHECK(cudaMalloc(&d_x, bytes));  // no poison: the upload in s overwrites all of d_x (a cudaMemset
    // here, on the legacy stream, would not be ordered before the non-blocking stream s: G 3.2.6.5.2)
    std::copy(input.begin(), input.end(), h_x);
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));

    Verdict verdict;
    // Your region is a function: it sees copies of main's variables, which stay as they are.
    auto your_region = [=]() {
    // ---- your change: begin ----
    CHECK(cudaEventRecord(start, s));
    CHECK(cudaMemcpyAsync(d_x, h_x, bytes, cudaMemcpyHostToDevice, s));
    triple_plus_one<<<(unsigned)((n + 255) / 256), 256, 0, s>>>(d_x, n, work_ms * 1000000LL);
    CHECK_LAUNCH();
    CHECK(cudaMemcpyAsync(h_x, d_x, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaEventRecord(stop, s));
    // cudaMemcpyAsync only queues the copy: h_x holds the result once the stream has run it.
    CHECK(cudaStreamSynchronize(s));
    // ---- your change: end ----
    REGION_GUARD_RUNTIME();  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
    REGION_GUARD(witness_now); REGION_GUARD(witness_sum); REGION_GUARD_TYPE(Verdict);
    };
    your_region();
    unsigned long long wrote = witness_now();  // what the kernel has written by the time of the check
    verdict.exact("h_x = 3 * input + 1", expected.data(), h_x, n);
    verdict.check(wrote == witness_sum(d_x, h_x, n), "h_x is what triple_plus_one wrote, complete when the CPU checked it");
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("H2D + kernel + D2H in the stream: %.3f ms (the kernel waits %d ms before it writes)\n", ms, work_ms);

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_x));
    CHECK(cudaFreeHost(h_x));
    return verdict.finish();
}
