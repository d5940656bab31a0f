// managed_sync - exercise (fix): a kernel writes its result into managed memory and the CPU checks
//                it through the same pointer. The check fails.
//
// Manual: N 6.1 统一内存 (6.6.2 编程); M "统一内存"; G 2.4 异构编程.
// The program allocates x and y with cudaMallocManaged (a few MB), fills x on the CPU, launches a
// kernel that computes y = x * x - 1 (its blocks first wait --work-ms, standing for a longer
// computation), then compares y with the CPU's result - no cudaMemcpy anywhere, the point of
// managed memory - and prints the kernel's time (CUDA events).
// Your task: find out why the CPU check fails and fix it with the smallest change; the result must
// pass for any --work-ms. Do not change the kernel.
// Build and check: from the chapter folder, `make exercises` builds workspace/managed_sync from your
// copy, `make check` runs it and says solved / not yet (with a hint after a miss).
// Run:    cd workspace && ./managed_sync [--n=1000003] [--work-ms=50]
// Output: concurrentManagedAccess, the CPU check and that y is what the kernel wrote, complete when
//         the CPU checked it, the kernel's time, PASSED (or FAILED: with the first mismatches).
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

// y = x * x - 1 over a grid-stride loop; thread 0 of every block first waits work_ns of global
// time, and its block waits for it, so no element is written before that.
__global__ void square_minus_one(const float* x, float* y, long long n, long long work_ns) {
    if (threadIdx.x == 0) {
        unsigned long long t0 = global_ns();
        while (global_ns() - t0 < (unsigned long long)work_ns) {
        }
    }
    __syncthreads();
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
    {
        y[i] = x[i] * x[i] - 1.0f;
        atomicAdd(&gpu_witness, witness(&y[i], __float_as_uint(y[i])));
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: a kernel writes managed memory, the CPU checks it; the check fails.");
    long long n = args.integer("n", 1000003, 1, 1LL << 22, "floats in x and in y (managed: at most 2 x 16 MB)");
    int work_ms = (int)args.integer("work-ms", 50, 1, 2000, "how long each block waits before it writes");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int managed = 0, concurrent = 0;
    managed = device_attribute(cudaDevAttrManagedMemory, dev.id);
    concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, dev.id);
    std::printf("managedMemory %d, concurrentManagedAccess %d\n", managed, concurrent);
    if (!managed) skip("this GPU cannot allocate managed memory (cudaDevAttrManagedMemory = 0)");

    // Multiples of 1/256 in [-1, 1): x * x - 1 is exact in float, so the check can be exact.
    std::vector<int> k = random_vector<int>(n, -256, 255, 41);
    std::vector<float> expected(n);
    float *x, *y;
    CHECK(cudaMallocManaged(&x, n * sizeof(float)));
    CHECK(cudaMallocManaged(&y, n * sizeof(float)));
    for (long long i = 0; i < n; ++i) {
        x[i] = k[i] / 256.0f;
        expected[i] = x[i] * x[i] - 1.0f;
        y[i] = 1.0f;  // poison: x * x - 1 < 1 for every x here
    }

    // 32 blocks, on most GPUs all resident at once: the kernel takes about --work-ms.
    // The stop event is recorded after your region: the kernel's time, plus any wait your fix adds.
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    Verdict verdict;
    CHECK(cudaEventRecord(start));
    // Your region is a function: it sees copies of main's variables, which stay as they are.
    auto your_region = [=]() {
    // ---- your change: begin ----
    square_minus_one<<<32, 256>>>(x, y, n, work_ms * 1000000LL);
    CHECK_LAUNCH();
    // ---- your change: end ----
    REGION_GUARD_RUNTIME();  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
    REGION_GUARD(witness_now); REGION_GUARD(witness_sum); REGION_GUARD_TYPE(Verdict);
    };
    your_region();
    CHECK(cudaEventRecord(stop));
    unsigned long long wrote = witness_now();  // what the kernel has written by the time of the check
    verdict.exact("y = x * x - 1 (read by the CPU)", expected.data(), y, n);
    verdict.check(wrote == witness_sum(y, y, n), "y is what square_minus_one wrote, complete when the CPU checked it");
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    std::printf("kernel: %.3f ms (each block waits %d ms before it writes)\n", ms, work_ms);

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    return verdict.finish();
}
