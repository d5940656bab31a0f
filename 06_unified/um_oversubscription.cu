// um_oversubscription - what page migration costs when the CPU and the GPU take turns on one
// managed buffer, and (only when asked for explicitly) a managed buffer larger than the GPU.
//
// Manual: G 2.4 异构编程 (managed memory "enables oversubscription of device memory");
//         G 5.5 最小化内存抖动 (cudaMallocManaged allows oversubscription and does not force an
//         allocation to be resident until it is needed or prefetched); M "统一内存" (DGX-2: many
//         GPUs' memory plus host memory seen as one).
// Shows:  a managed page lives where it was last touched. Each round the CPU checks and rewrites
//         the whole buffer, then a kernel transforms it in place, so the pages go back and forth.
//         The migration itself is timed by a pass that does nothing but read one word of every
//         host page (on the CPU: the pages fault back to host memory; on the GPU: a kernel, the
//         pages fault over to the GPU), minus the same read pass on pages that are already there
//         (a small floor, printed). Every figure is the median of the rounds 2..R (several samples),
//         and every rate is compared with the pinned cudaMemcpy over the same link, measured in
//         the same run: a migration cannot be faster than that, so a rate above it is not printed
//         as one (the measurement could not separate the migration). cudaMemPrefetchAsync moves
//         the same bytes in bulk, without faults, in rounds of its own, for comparison.
//         By default the buffer is a modest share of the GPU's free memory (--fraction, capped by
//         --max-mb and by the host's available RAM), so nothing is oversubscribed.
//         --oversubscribe=F sizes the buffer to F x the GPU's free memory instead. With F >= 1 the
//         buffer does not fit: the driver evicts pages to host memory while the kernel runs. Do
//         that only on your own machine: on a GPU that other people share it takes the memory
//         they need and can stall the GPU for a long time. It is never part of the test suite,
//         which runs the same code path with F < 1.
// Build:  make um_oversubscription  (nvcc -std=c++17 -O3 -arch=native -I../common -o um_oversubscription um_oversubscription.cu)
// Run:    ./um_oversubscription [--fraction=0.25] [--max-mb=512] [--rounds=6]
//         ./um_oversubscription --oversubscribe=1.5      (your own GPU only: 1.5 x its free memory)
// Output: the checks, free GPU memory and host RAM, the buffer size, the pinned copy rates, then per
//         direction the demand-paged migration (touch pass, floor, difference) and the prefetch,
//         time and GB/s, the prefetch / demand paging comparison; PASSED.
#include <algorithm>
#include <cstring>
#include <cstdint>
#include <fstream>
#include <unistd.h>
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

// One read of every `stride`-th word (one per host page), grid-stride: every page is touched on the
// GPU, and the kernel's own work is a few instructions per 4 KB. The sum goes to `sink` only if it
// has an impossible value, so the loads stay but nothing is written.
__global__ void touch_kernel(const uint32_t* data, size_t n, size_t stride, uint32_t* sink) {
    uint32_t acc = 0;
    size_t step = (size_t)blockDim.x * gridDim.x * stride;
    for (size_t i = (blockIdx.x * (size_t)blockDim.x + threadIdx.x) * stride; i < n; i += step) acc += data[i];
    if (acc == 0xdeadbeefu) *sink = acc;
}

// The same on the CPU: one volatile read per page (volatile: each read happens, in order).
uint32_t touch_cpu(const uint32_t* data, size_t n, size_t stride) {
    const volatile uint32_t* v = data;
    uint32_t acc = 0;
    for (size_t i = 0; i < n; i += stride) acc += v[i];
    return acc;
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
    int rounds = (int)args.integer("rounds", 6, 2, 100, "CPU + GPU rounds of demand paging (round 1, the first touch, is not timed), and R - 1 of prefetch");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int managed = 0, concurrent = 0;
    managed = device_attribute(cudaDevAttrManagedMemory, dev.id);
    concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, dev.id);
    if (!managed) skip("this GPU cannot allocate managed memory (cudaDevAttrManagedMemory = 0)");
    // Demand paging (and with it oversubscription) needs Pascal or later on Linux.
    if (!concurrent) skip("no on-demand page migration on this GPU/OS (cudaDevAttrConcurrentManagedAccess = 0)");

    size_t free_b = 0, total_b = 0;
    mem_get_info(&free_b, &total_b);
    size_t host_b = host_available_bytes();
    // Under CUDA_LAB_PROFILE free_b is the profile's card; whether pages are evicted depends on the
    // memory of the GPU this runs on (device.cuh), so an --oversubscribe buffer is compared with it.
    size_t real_free = 0, real_total = 0;
    CHECK(cudaMemGetInfo(&real_free, &real_total));
    std::printf("GPU memory: %.2f GB free of %.2f GB; host RAM available: %.2f GB\n", free_b / 1e9, total_b / 1e9,
                host_b / 1e9);
    size_t bytes;
    if (over > 0) {
        bytes = (size_t)(over * (double)free_b);
        if (over >= 1.0)
            std::printf("WARNING: --oversubscribe=%g asks for %.2f GB of managed memory, more than the %.2f GB free "
                        "on the GPU.\n         Pages will be evicted to host memory while kernels run. Never do "
                        "this on a GPU that others share.\n", over, bytes / 1e9, free_b / 1e9);
        if (dev.profile && over >= 1.0 && bytes <= real_free)
            std::printf("profile %s: the buffer is sized from its card, but %s has %.2f GB free: the buffer fits "
                        "here,\n         no page is evicted, and the figures below are not those of an "
                        "oversubscription\n", dev.profile ? dev.profile->key.c_str() : "", dev.real.name,
                        real_free / 1e9);
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
    // on the GPU this runs on: without a profile the free memory is this GPU's own (--oversubscribe=1
    // asks for all of it, and the rest of the context needs some too); with one, the real GPU may be larger
    const bool oversubscribed = over >= 1.0 && (!dev.profile || bytes > real_free);
    std::printf("managed buffer: %.1f MB = %.3f x the free GPU memory%s; %d rounds\n", bytes / 1e6,
                (double)bytes / free_b, oversubscribed ? " (OVERSUBSCRIBED)" : "", rounds);

    // The link's own speed, in this run: pinned cudaMemcpy both ways (median of 9), on a buffer of at
    // most 64 MiB (allocated before the managed one; never more than the managed buffer).
    size_t link_bytes = std::min(bytes, (size_t)64 << 20);
    void *pinned, *dbuf;
    CHECK(cudaMallocHost(&pinned, link_bytes));
    CHECK(cudaMalloc(&dbuf, link_bytes));
    std::memset(pinned, 1, link_bytes);
    double h2d_link = gbps((double)link_bytes,
                           bench_ms([&] { CHECK(cudaMemcpyAsync(dbuf, pinned, link_bytes, cudaMemcpyHostToDevice)); }, 9));
    double d2h_link = gbps((double)link_bytes,
                           bench_ms([&] { CHECK(cudaMemcpyAsync(pinned, dbuf, link_bytes, cudaMemcpyDeviceToHost)); }, 9));
    CHECK(cudaFree(dbuf));
    CHECK(cudaFreeHost(pinned));
    std::printf("pinned cudaMemcpy over the link (%.1f MB, median of 9): host -> GPU %.2f GB/s, GPU -> host %.2f GB/s\n",
                link_bytes / 1e6, h2d_link, d2h_link);

    uint32_t* data;
    CHECK(cudaMallocManaged(&data, bytes));
    uint32_t* sink;
    CHECK(cudaMalloc(&sink, sizeof(uint32_t)));
    const int block = 256;
    int grid = dev.real.multiProcessorCount * 32;  // 32 blocks per SM of this GPU
    long page = sysconf(_SC_PAGESIZE);
    size_t stride = (size_t)std::max(page, 1024L) / sizeof(uint32_t);  // words per host page (4 KB: 1024)
    GpuTimer gt;
    long long bad = 0;  // words (and read passes) the CPU found different from what the GPU should have written

    // The CPU's turn: check the GPU's last result (round > 0), then write the next input.
    auto cpu_pass = [&](int round) {
        for (size_t i = 0; i < n; ++i) {
            if (round > 0) bad += data[i] != transform(value(i, round - 1));
            data[i] = value(i, round);
        }
    };
    // The read pass sees the GPU's last result too: the sum of the words it read is compared (after
    // the timer) with the CPU's own, computed before the kernel was launched.
    auto cpu_touch_ms = [&](uint32_t expect) {
        CpuTimer ct;
        uint32_t got = touch_cpu(data, n, stride);
        double ms = ct.stop_ms();
        bad += got != expect;
        return ms;
    };
    auto gpu_touch_ms = [&] {
        gt.start();
        touch_kernel<<<grid, block>>>(data, n, stride, sink);
        CHECK_LAUNCH();
        return (double)gt.stop();
    };
    // Demand paging, rounds 1..R: round 1 creates the pages on the CPU (first touch) and is not
    // counted (it also pays the module's lazy loading). In rounds 2..R the pages start on the GPU.
    std::vector<double> c_touch, c_floor, g_touch, g_floor, cpu_ms, gpu_ms;
    double first_touch_ms = 0;
    int round = 0;  // the input round the buffer holds
    // What the last transform kernel wrote, computed before its launch, so that the CPU's first read
    // of its result follows the wait for it at once: the word it writes last (every thread of the
    // grid-stride kernel walks the buffer front to back, so data[n - 1] is among the last words
    // written) and the sum of the words the read pass reads. A CPU that did not wait may read
    // data[n - 1] before the kernel has written it (the untimed read migrates that one page early);
    // on the H100 that mutant was caught under the ordering stress, not without it.
    uint32_t expect = 0, expect_last = 0;
    for (int r = 0; r < rounds; ++r, ++round) {
        if (r == 0) {
            CpuTimer ct;
            cpu_pass(round);
            first_touch_ms = ct.stop_ms();
        } else {
            bad += data[n - 1] != expect_last;
            c_touch.push_back(cpu_touch_ms(expect));  // GPU -> host: the pages fault back to the CPU
            c_floor.push_back(cpu_touch_ms(expect));  // the same reads on pages now in host memory
            CpuTimer ct;
            cpu_pass(round);  // resident pages: the CPU's own work
            cpu_ms.push_back(ct.stop_ms());
        }
        double gt1 = gpu_touch_ms(), gt2 = gpu_touch_ms();  // host -> GPU, then on resident pages
        expect = 0;  // the words the next read pass reads, as this round's kernel is to write them
        for (size_t i = 0; i < n; i += stride) expect += transform(value(i, round));
        expect_last = transform(value(n - 1, round));
        gt.start();
        transform_kernel<<<grid, block>>>(data, n);
        CHECK_LAUNCH();
        double g = gt.stop();  // waits for the kernel: only now may the CPU read its result
        if (r > 0) {
            g_touch.push_back(gt1);
            g_floor.push_back(gt2);
            gpu_ms.push_back(g);
        }
    }
    // Bulk migration, rounds R+1..2R-1: the same turns, each preceded by cudaMemPrefetchAsync to the
    // processor about to work. Locations: {cudaMemLocationTypeDevice, dev.id} and
    // {cudaMemLocationTypeHost, 0}. The book's int-device form (dev.id / cudaCpuDeviceId) is gone in
    // CUDA 13; 12.2-12.9 name the cudaMemLocation form cudaMemPrefetchAsync_v2 - compat picks it.
    cudaMemLocation gpu = compat::device_location(dev.id), cpu = compat::host_location();
    std::vector<double> to_cpu, to_gpu;
    for (int r = 1; r < rounds; ++r, ++round) {
        gt.start();
        CHECK(compat::mem_prefetch_async(data, bytes, cpu));  // CUDA 13: (ptr, bytes, location, flags, stream)
        to_cpu.push_back(gt.stop());
        cpu_pass(round);
        gt.start();
        CHECK(compat::mem_prefetch_async(data, bytes, gpu));
        to_gpu.push_back(gt.stop());
        transform_kernel<<<grid, block>>>(data, n);
        CHECK_LAUNCH();  // the next round's prefetch timer waits for this kernel before the CPU pass
    }
    // The last result, checked on the CPU (the pages come back once more), untimed. The kernel must
    // have finished: a CPU read while it runs is allowed (concurrentManagedAccess) but sees old data.
    // The check runs from the last word down: every thread of the grid-stride kernel walks the buffer
    // front to back, so the last words are among the last written, and a CPU that did not wait for
    // the kernel reads them before they are (checked from the front, it trails the kernel: without the
    // wait it passed on the H100).
    CHECK(cudaDeviceSynchronize());
    lab_corrupt(data, n);  // CUDA_LAB_CORRUPT: the check below must be able to fail (corrupt.h)
    long long bad2 = 0;
    for (size_t i = n; i-- > 0;) bad2 += data[i] != transform(value(i, round - 1));
    Verdict verdict;
    verdict.check(bad == 0, "every round's GPU result on the CPU");
    verdict.check(bad2 == 0, "after prefetch to GPU, kernel (CPU check)");

    // `moved`: the bytes a line's rate counts, in buffers (1: the buffer once; 2: read + write;
    // 0: no rate, for a pass that reads one word per page and so moves no buffer's worth of bytes).
    double gb = bytes / 1e9;
    auto line = [&](const char* what, double ms, const char* note, double moved = 1.0) {
        if (ms > 0 && moved > 0) std::printf("  %-44s %10.3f ms %9.2f GB/s  %s\n", what, ms, moved * gb / (ms / 1e3), note);
        else std::printf("  %-44s %10.3f ms %9s       %s\n", what, ms, "-", note);
    };
    size_t pages = (n + stride - 1) / stride;  // the words a read pass reads
    auto floor_line = [&](const char* what, double ms, const char* note) {
        char buf[160];
        std::snprintf(buf, sizeof buf, "%s (%zu pages, %.1f ns per page)", note, pages, ms * 1e6 / (double)pages);
        line(what, ms, buf, 0.0);
    };
    // A migration time is usable if the read pass on resident pages is a small part of the paged one
    // and the rate it gives is not above the pinned copy over the same link (10% allowance for noise).
    auto migration = [&](const char* what, double touch, double floor, double link) {
        double ms = touch - floor;
        if (!(floor < 0.5 * touch)) {
            std::printf("  %-44s %10s    %9s       not separated: the reads on resident pages (%.3f ms) are not "
                        "small against the paged ones (%.3f ms)\n", what, "-", "-", floor, touch);
            return 0.0;
        }
        if (gbps(bytes, ms) > 1.1 * link) {
            std::printf("  %-44s %10.3f ms %9s       not separated: %.2f GB/s would be faster than the pinned copy "
                        "over the link (%.2f GB/s)\n", what, ms, "-", gbps(bytes, ms), link);
            return 0.0;
        }
        line(what, ms, "migration alone (paged read pass minus resident one)");
        return ms;
    };
    auto bulk = [&](const char* what, double ms, double link) {
        if (gbps(bytes, ms) > 1.1 * link) {
            std::printf("  %-44s %10.3f ms %9s       faster than the pinned copy (%.2f GB/s): not a migration rate\n",
                        what, ms, "-", link);
            return 0.0;
        }
        line(what, ms, "bulk migration, no faults");
        return ms;
    };
    std::printf("\n(medians of %d samples, rounds 2..%d; GB/s = buffer bytes / time, twice the buffer for the passes that\n"
                " read and write every word; none for the passes on resident pages, which read one word per page)\n",
                rounds - 1, rounds);
    line("CPU first touch (round 1)", first_touch_ms, "pages created in host memory");
    std::printf("host -> GPU (pinned copy: %.2f GB/s)\n", h2d_link);
    line("GPU read pass, pages fault over to the GPU", median(g_touch), "one read per page: demand paging");
    floor_line("GPU read pass on resident pages", median(g_floor),
               oversubscribed ? "still faults: the buffer does not fit" : "the floor: the reads alone");
    double gpu_mig = migration("difference: demand paging host -> GPU", median(g_touch), median(g_floor), h2d_link);
    double to_gpu_ms = bulk("cudaMemPrefetchAsync to the GPU", median(to_gpu), h2d_link);
    line("GPU transform on resident pages", median(gpu_ms), "the kernel's work (GB/s: read + write)", 2.0);
    std::printf("GPU -> host (pinned copy: %.2f GB/s)\n", d2h_link);
    line("CPU read pass, pages fault back to the CPU", median(c_touch), "one read per page: demand paging");
    floor_line("CPU read pass on resident pages", median(c_floor), "the floor: the reads alone");
    double cpu_mig = migration("difference: demand paging GPU -> host", median(c_touch), median(c_floor), d2h_link);
    double to_cpu_ms = bulk("cudaMemPrefetchAsync to the CPU", median(to_cpu), d2h_link);
    line("CPU check + rewrite on resident pages", median(cpu_ms), "the CPU's own work (GB/s: read + write)", 2.0);
    auto compare = [&](const char* dir, double paged, double bulk_ms) {
        if (paged > 0 && bulk_ms > 0)
            std::printf("%s: demand paging took %.1fx the prefetch's time (%s)\n", dir, paged / bulk_ms,
                        paged > bulk_ms ? "the prefetch is faster" : "demand paging was not slower this time");
        else
            std::printf("%s: no comparison (a figure above could not be separated)\n", dir);
    };
    compare("host -> GPU", gpu_mig, to_gpu_ms);
    compare("GPU -> host", cpu_mig, to_cpu_ms);

    CHECK(cudaFree(sink));
    CHECK(cudaFree(data));
    return verdict.finish();
}
