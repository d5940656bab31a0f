// um_oversubscription - what page migration costs when the CPU and the GPU take turns on one
// managed buffer, and (only when asked for explicitly) a managed buffer larger than the GPU.
//
// Manual: G 2.4 异构编程 (managed memory "enables oversubscription of device memory");
//         G 5.5 最小化内存抖动 (cudaMallocManaged allows oversubscription and does not force an
//         allocation to be resident until it is needed or prefetched); M "统一内存" (DGX-2: many
//         GPUs' memory plus host memory seen as one).
// Shows:  a managed page lives where it was last touched. Each round the CPU checks and rewrites
//         the whole buffer (the pages fault back to host memory), then a kernel transforms it in
//         place (the pages fault over to the GPU). Each pass is then run once more on pages
//         already where it needs them (after a prefetch): the difference between the two times is
//         what demand paging cost to move the buffer one way, printed as GB/s. cudaMemPrefetchAsync
//         moves the same bytes in bulk, without faults, for comparison.
//         By default the buffer is a modest share of the GPU's free memory (--fraction, capped by
//         --max-mb and by the host's available RAM), so nothing is oversubscribed.
//         --oversubscribe=F sizes the buffer to F x the GPU's free memory instead. With F >= 1 the
//         buffer does not fit: the driver evicts pages to host memory while the kernel runs. Do
//         that only on your own machine: on a GPU that other people share it takes the memory
//         they need and can stall the GPU for a long time. It is never part of the test suite,
//         which runs the same code path with F < 1.
// Build:  make um_oversubscription  (nvcc -std=c++17 -O3 -arch=native -I../common -o um_oversubscription um_oversubscription.cu)
// Run:    ./um_oversubscription [--fraction=0.25] [--max-mb=512] [--rounds=4]
//         ./um_oversubscription --oversubscribe=1.5      (your own GPU only: 1.5 x its free memory)
// Output: the checks, free GPU memory and host RAM, the buffer size, then per pass (CPU and GPU,
//         demand-paged and resident, and their difference; the prefetches) time and GB/s; PASSED.
#include <algorithm>
#include <cstdint>
#include <fstream>
#include <string>
#include <vector>
#include "common.cuh"
#include "cuda_compat.cuh"

// Seeded pseudo-random 32-bit values, different in every round.
inline uint32_t value(size_t i, int round) {
    uint32_t u = (uint32_t)i * 0x9e3779b1u ^ (uint32_t)(round + 1) * 0x85ebca6bu;
    u ^= u >> 16;
    u *= 0x7feb352du;
    u ^= u >> 15;
    return u;
}

// The GPU's transform; the CPU applies the same one to predict the result.
__host__ __device__ inline uint32_t transform(uint32_t v) { return v * 2654435761u + 12345u; }

// In place, grid-stride: reads and writes every word once, so every page is touched on the GPU.
__global__ void transform_kernel(uint32_t* data, size_t n) {
    size_t stride = (size_t)blockDim.x * gridDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) data[i] = transform(data[i]);
}

// MemAvailable from /proc/meminfo in bytes (0 if unknown): the RAM that evicted pages land in.
size_t host_available_bytes() {
    std::ifstream f("/proc/meminfo");
    std::string key, unit;
    size_t kb = 0;
    while (f >> key >> kb >> unit)
        if (key == "MemAvailable:") return kb * 1024;
    return 0;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Page migration when CPU and GPU take turns on one managed buffer; explicit oversubscription.");
    double fraction = args.real("fraction", 0.25, 0.001, 0.5, "default mode: buffer = this share of the free GPU memory");
    long long max_mb = args.integer("max-mb", 512, 1, 1LL << 20, "default mode: at most this many MB");
    double over = args.real("oversubscribe", 0, 0.001, 4.0,
                            "if given (0 = off): buffer = F x free GPU memory; F >= 1 oversubscribes, your own GPU only");
    int rounds = (int)args.integer("rounds", 4, 2, 100, "CPU + GPU rounds (round 1, the first touch, is not timed)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int managed = 0, concurrent = 0;
    CHECK(cudaDeviceGetAttribute(&managed, cudaDevAttrManagedMemory, dev.id));
    CHECK(cudaDeviceGetAttribute(&concurrent, cudaDevAttrConcurrentManagedAccess, dev.id));
    if (!managed) skip("this GPU cannot allocate managed memory (cudaDevAttrManagedMemory = 0)");
    // Demand paging (and with it oversubscription) needs Pascal or later on Linux.
    if (!concurrent) skip("no on-demand page migration on this GPU/OS (cudaDevAttrConcurrentManagedAccess = 0)");

    size_t free_b = 0, total_b = 0;
    CHECK(cudaMemGetInfo(&free_b, &total_b));
    size_t host_b = host_available_bytes();
    std::printf("GPU memory: %.2f GB free of %.2f GB; host RAM available: %.2f GB\n", free_b / 1e9, total_b / 1e9,
                host_b / 1e9);
    size_t bytes;
    if (over > 0) {
        bytes = (size_t)(over * (double)free_b);
        if (over >= 1.0)
            std::printf("WARNING: --oversubscribe=%g asks for %.2f GB of managed memory, more than the %.2f GB free "
                        "on the GPU.\n         Pages will be evicted to host memory while kernels run. Never do "
                        "this on a GPU that others share.\n", over, bytes / 1e9, free_b / 1e9);
        // Evicted pages need host RAM; keep half of what is available for everything else.
        if (host_b && bytes > host_b / 2)
            skip("--oversubscribe=" + std::to_string(over) + " needs " + std::to_string(bytes >> 20) +
                 " MB, more than half of the host's available RAM (" + std::to_string(host_b >> 20) + " MB)");
    } else {
        bytes = std::min((size_t)(fraction * (double)free_b), (size_t)max_mb << 20);
        if (host_b) bytes = std::min(bytes, host_b / 4);
    }
    size_t n = bytes / sizeof(uint32_t);
    if (n == 0) skip("the buffer would be empty (no free GPU memory?)");
    bytes = n * sizeof(uint32_t);
    std::printf("managed buffer: %.1f MB = %.3f x the free GPU memory%s; %d rounds\n", bytes / 1e6,
                (double)bytes / free_b, over >= 1.0 ? " (OVERSUBSCRIBED)" : "", rounds);

    uint32_t* data;
    CHECK(cudaMallocManaged(&data, bytes));
    const int block = 256;
    int grid = dev.prop.multiProcessorCount * 32;
    GpuTimer gt;
    long long bad = 0;  // words the CPU found different from what the GPU should have written

    // The CPU's turn: check the GPU's last result (round > 0), then write the next input.
    auto cpu_pass = [&](int round) {
        for (size_t i = 0; i < n; ++i) {
            if (round > 0) bad += data[i] != transform(value(i, round - 1));
            data[i] = value(i, round);
        }
    };
    std::vector<double> cpu_ms, gpu_ms;
    double first_touch_ms = 0;
    for (int r = 0; r < rounds; ++r) {
        CpuTimer ct;
        cpu_pass(r);
        double c = ct.stop_ms();
        gt.start();
        transform_kernel<<<grid, block>>>(data, n);
        CHECK_LAUNCH();
        double g = gt.stop();
        if (r == 0) first_touch_ms = c;  // pages created in host memory: no migration yet
        else cpu_ms.push_back(c);
        if (r > 0) gpu_ms.push_back(g);
    }
    // The same moves in bulk: prefetch the buffer back to the CPU and run the CPU pass once more on
    // resident pages (the same work: check and rewrite every word); then prefetch it to the GPU and
    // run the kernel on resident pages. The time a demand-paged pass spends on migration is its time
    // minus the same pass on resident pages: that, not the whole pass, compares with a prefetch.
    // Locations: {cudaMemLocationTypeDevice, dev.id} and {cudaMemLocationTypeHost, 0}. The book's
    // int-device form (dev.id / cudaCpuDeviceId) is gone in CUDA 13; 12.2-12.9 name the
    // cudaMemLocation form cudaMemPrefetchAsync_v2 - compat::mem_prefetch_async picks it.
    cudaMemLocation gpu = compat::device_location(dev.id), cpu = compat::host_location();
    gt.start();
    CHECK(compat::mem_prefetch_async(data, bytes, cpu));  // CUDA 13: (ptr, bytes, location, flags, stream)
    double to_cpu_ms = gt.stop();
    lab_corrupt(data, n);  // CUDA_LAB_CORRUPT: the check below must be able to fail (corrupt.h)
    CpuTimer ct;
    cpu_pass(rounds);  // checks the last demand-paged round, writes round `rounds`'s input
    double cpu_resident_ms = ct.stop_ms();
    Verdict verdict;
    verdict.check(bad == 0, "every round's GPU result on the CPU");
    gt.start();
    CHECK(compat::mem_prefetch_async(data, bytes, gpu));
    double to_gpu_ms = gt.stop();
    gt.start();
    transform_kernel<<<grid, block>>>(data, n);
    CHECK_LAUNCH();
    double resident_ms = gt.stop();
    long long bad2 = 0;  // last check on the CPU (pages come back once more), untimed
    for (size_t i = 0; i < n; ++i) bad2 += data[i] != transform(value(i, rounds));
    verdict.check(bad2 == 0, "after prefetch to GPU, kernel (CPU check)");

    double gb = bytes / 1e9;
    auto line = [&](const char* what, double ms, const char* note) {
        if (ms > 0) std::printf("%-46s %10.3f ms %9.2f GB/s  %s\n", what, ms, gb / (ms / 1e3), note);
        else std::printf("%-46s %10.3f ms %9s       %s\n", what, ms, "-", note);
    };
    // Migration time of a demand-paged pass: the pass minus the same pass on resident pages.
    double gpu_mig = median(gpu_ms) - resident_ms, cpu_mig = median(cpu_ms) - cpu_resident_ms;
    std::printf("\n(demand-paged passes: medians of rounds 2..%d; GB/s = buffer bytes / time)\n", rounds);
    line("CPU first touch (round 1)", first_touch_ms, "pages created in host memory");
    line("GPU pass, pages fault over to the GPU", median(gpu_ms), "demand paging + the kernel's work");
    line("GPU pass on prefetched pages", resident_ms, over >= 1.0 ? "still faults: the buffer does not fit"
                                                                    : "no migration: device-memory speed");
    line("  difference: demand paging host -> GPU", gpu_mig, "migration alone");
    line("cudaMemPrefetchAsync to the GPU", to_gpu_ms, "bulk migration host -> GPU");
    line("CPU pass, pages fault back to the CPU", median(cpu_ms), "demand paging + the CPU's work");
    line("CPU pass on prefetched pages", cpu_resident_ms, "no migration: the same work at the CPU's own speed");
    line("  difference: demand paging GPU -> host", cpu_mig, "migration alone");
    line("cudaMemPrefetchAsync to the CPU", to_cpu_ms, "bulk migration GPU -> host");
    if (gpu_mig > 0 && cpu_mig > 0)
        std::printf("prefetch vs demand paging (migration alone): host -> GPU %.1fx faster, GPU -> host %.1fx faster\n",
                    gpu_mig / to_gpu_ms, cpu_mig / to_cpu_ms);
    else
        std::printf("prefetch vs demand paging: a pass on resident pages was not faster than the paged one (noise at "
                    "this size), no ratio\n");

    CHECK(cudaFree(data));
    return verdict.finish();
}
