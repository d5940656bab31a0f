// prefetch_add - exercise (faster): the book's add() on managed memory that the CPU initialized,
//                against the same kernel on cudaMalloc memory.
//
// Manual: M "统一内存的优化使用数据预取" (and "了解统一内存页面分配和传输"); G 2.4 异构编程.
// The program allocates x and y with cudaMallocManaged (a few MB), writes them on the CPU - so their
// pages are created in host memory - calls prepare(), and then times add() (y = x + y) alone with
// CUDA events. It repeats this from fresh allocations (shortest of --reps) and compares with add() on
// cudaMalloc memory in the same run: `managed / cudaMalloc: X` (1.0: as fast as device memory).
// Your task: bring `managed / cudaMalloc` to 10 or below by changing only prepare(), the part
// between the markers (um_page_faults reaches about 1.1 at 2^26 floats on an H100). It runs outside the
// timed interval; the CPU initialization, the kernel and the measurement stay as they are.
// Build and check: from the chapter folder, `make exercises` builds workspace/prefetch_add from your
// copy, `make check` runs it and says solved / not yet (with a hint after a miss).
// Run:    cd workspace && ./prefetch_add [--n=2^20] [--reps=5]
// Output: concurrentManagedAccess; add() ms on cudaMalloc and on managed memory; the line
//         `managed / cudaMalloc: X`; the CPU checks (the last run, every timed round); PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <cstring>
#include <vector>
#include "common.cuh"

__global__ void add(long long n, const float* x, float* y) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + y[i];
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin (runs after the CPU has written x and y, before add() is launched; untimed) ----
// Move the pages to the GPU in bulk before the launch, instead of one page fault (and one small
// transfer) at a time inside add(). CUDA 13: cudaMemPrefetchAsync(x, bytes, gpu, 0, 0), gpu a
// cudaMemLocation {cudaMemLocationTypeDevice, device}, then flags 0 and the stream; CUDA 12 has
// (x, bytes, device, stream) - compat::mem_prefetch_async (common/cuda_compat.cuh) builds with both.
void prepare(float* x, float* y, size_t bytes, int device) {
    cudaMemLocation gpu = compat::device_location(device);
    CHECK(compat::mem_prefetch_async(x, bytes, gpu));
    CHECK(compat::mem_prefetch_async(y, bytes, gpu));
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::prepare;
REGION_SIGNATURE(prepare, void (*)(float*, float*, size_t, int));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(add); REGION_GUARD(random_vector<int>); REGION_GUARD(device_attribute); REGION_GUARD(bench_turns_ms); REGION_GUARD(lab_corrupt<float>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: add() on CPU-initialized managed memory vs on cudaMalloc memory.");
    long long n = args.integer("n", 1LL << 20, 1, 1LL << 22, "floats in x and in y (managed: at most 2 x 16 MB)");
    int reps = (int)args.integer("reps", 5, 1, 100, "timed rounds, each from fresh allocations (the shortest reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int managed = 0, concurrent = 0;
    managed = device_attribute(cudaDevAttrManagedMemory, dev.id);
    concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, dev.id);
    std::printf("managedMemory %d, concurrentManagedAccess %d\n", managed, concurrent);
    if (!managed) skip("this GPU cannot allocate managed memory (cudaDevAttrManagedMemory = 0)");
    // Without it the driver moves all managed pages at every launch: there are no page faults to avoid.
    if (!concurrent) skip("no on-demand page migration on this GPU/OS (cudaDevAttrConcurrentManagedAccess = 0)");

    size_t bytes = (size_t)n * sizeof(float);
    // x in [1, 2) is never 0, so an element that add() skipped cannot equal x + y.
    std::vector<int> kx = random_vector<int>(n, 0, 1023, 31), ky = random_vector<int>(n, -1024, 1023, 32);
    std::vector<float> hx(n), hy(n), ref(n);
    for (long long i = 0; i < n; ++i) {
        hx[i] = 1.0f + kx[i] / 1024.0f;
        hy[i] = ky[i] / 1024.0f;
        ref[i] = hx[i] + hy[i];
    }
    const int block = 256;
    unsigned grid = (unsigned)((n + block - 1) / block);

    // Baseline: the same kernel on device memory (y changes with every run; only the time counts).
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, bytes));
    CHECK(cudaMalloc(&dy, bytes));
    CHECK(cudaMemcpy(dx, hx.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(dy, hy.data(), bytes, cudaMemcpyHostToDevice));

    // Managed: every run starts from fresh allocations written by the CPU, then prepare(). The two
    // are timed in turns, `reps` rounds after one warm-up round, each round from a fresh setup():
    // the shortest time of each (bench_turns_ms, which keeps the ratio when the GPU is shared).
    // The result of every round, warm-up included, is checked before the next setup() frees it.
    float *mx = nullptr, *my = nullptr;
    int rounds = 0;
    long long wrong_rounds = 0;
    auto check_round = [&] {
        CHECK(cudaDeviceSynchronize());  // the CPU reads my only after add() has finished
        std::vector<float> got(my, my + n);
        lab_corrupt(got.data(), (size_t)n);  // CUDA_LAB_CORRUPT=1: this check too must fail (common/corrupt.h)
        wrong_rounds += !std::equal(ref.begin(), ref.end(), got.begin());
        ++rounds;
    };
    auto setup = [&] {
        if (mx) {
            check_round();
            CHECK(cudaFree(mx));
            CHECK(cudaFree(my));
        }
        CHECK(cudaMallocManaged(&mx, bytes));
        CHECK(cudaMallocManaged(&my, bytes));
        std::memcpy(mx, hx.data(), bytes);  // first touch on the CPU: the pages are created in host memory
        std::memcpy(my, hy.data(), bytes);
        prepare(mx, my, bytes, dev.id);
        CHECK(cudaDeviceSynchronize());
    };
    std::vector<double> t = bench_turns_ms(
        {[&] { add<<<grid, block>>>(n, dx, dy); }, [&] { add<<<grid, block>>>(n, mx, my); }}, reps, setup, 1);
    double base_ms = t[0], managed_ms = t[1];
    CHECK(cudaDeviceSynchronize());  // the CPU reads my only after the last add() has finished
    Verdict verdict;
    verdict.exact("y = x + y (managed, last run)", ref.data(), my, n);
    check_round();
    verdict.check(wrong_rounds == 0, "y = x + y (managed) in all " + std::to_string(rounds) + " rounds, warm-up and timed: " +
                                         std::to_string(wrong_rounds) + " wrong");

    std::printf("add() of %lld floats (3 x %.1f MB): cudaMalloc %.4f ms (%.1f GB/s), managed %.4f ms (%.1f GB/s)\n", n,
                bytes / 1e6, base_ms, gbps(3.0 * bytes, base_ms), managed_ms, gbps(3.0 * bytes, managed_ms));
    std::printf("managed / cudaMalloc: %.2f (target <= 10, both timed on this GPU; set on an H100)\n", managed_ms / base_ms);

    CHECK(cudaFree(mx));
    CHECK(cudaFree(my));
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    return verdict.finish();
}
