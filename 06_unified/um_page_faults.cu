// um_page_faults - the book's four versions of add() on unified (managed) memory, against the
// same kernel on cudaMalloc memory: where the page faults go and what they cost.
//
// Manual: M "了解统一内存页面分配和传输", "使用每页 warp 优化统一内存", "统一内存的优化使用数据预取"
//         (unified_memory.cu, unified_memory_initialized.cu, unified_memory_64align.cu,
//         unified_memory_prefetch.cu); G 2.4 异构编程 (managed memory bridges the two spaces).
// Shows:  since Pascal, cudaMallocManaged allocates no physical memory: a page is created where
//         it is first touched. 1. The CPU initializes x and y, so their pages live in host memory
//         and add() page-faults on the GPU: every fault stalls the SM's TLB while the driver
//         unmaps the host page, copies it over the bus and maps it on the GPU, all inside the
//         kernel's time (book, P100: 5 GB/s). 2. An init kernel touches the pages first on the
//         GPU, so add() finds them there (book: 670 GB/s). 3. The init kernel gives each warp one
//         64 KB range, so the faults of a warp fall into one page and fewer fault groups reach the
//         driver (the init kernel gets faster; add() is the same as in 2). 4. The CPU initializes,
//         then cudaMemPrefetchAsync moves the pages to the GPU in bulk before the launch, and
//         add() runs as fast as on cudaMalloc memory.
//         Each repetition re-creates its version's state from a fresh cudaMallocManaged, outside
//         the timing, so every timed add() is the first kernel after that version's
//         initialization - the situation the book measures (later runs would find the pages on
//         the GPU already and all look the same).
// Build:  make um_page_faults  (nvcc -std=c++17 -O3 -arch=native -I../common -o um_page_faults um_page_faults.cu)
// Run:    ./um_page_faults [--n=2^26] [--reps=5] [--csv=figures/um_page_faults.csv] [--only=REGEX]
// Output: the managed-memory attributes of the GPU, the five checks against the CPU, a table of
//         add() time, GB/s (3 x 4 bytes per element) and % of the cudaMalloc baseline, the book's
//         P100 figures beside the measured ones, the init-kernel and prefetch times; PASSED.
#include <algorithm>
#include <cstring>
#include <vector>
#include "common.cuh"
#include "cuda_compat.cuh"
#include "results.cuh"

// Seeded pseudo-random input that the CPU and the GPU init kernels compute alike, so all four
// versions start from the same data and share one CPU reference. Values in [-1, 1).
__host__ __device__ inline float input_value(long long i, unsigned seed) {
    unsigned u = (unsigned)i * 0x9e3779b1u ^ seed * 0x85ebca6bu;
    u ^= u >> 15;
    u *= 0x2c1b3c6du;
    u ^= u >> 12;
    return (float)(u >> 8) * (1.0f / 8388608.0f) - 1.0f;  // exact: 24-bit integer times 2^-23
}
constexpr unsigned SEED_X = 1, SEED_Y = 2;

// CPU reference: one float addition per element, rounded the same way on the GPU.
void add_cpu(long long n, const float* x, const float* y, float* out) {
    for (long long i = 0; i < n; ++i) out[i] = x[i] + y[i];
}

// The book's kernel: y = x + y, one element per thread. Three 4-byte accesses per element.
__global__ void add(long long n, const float* x, float* y) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + y[i];
}

// Version 2's init (unified_memory_initialized.cu): a grid-stride loop, so consecutive threads
// touch consecutive floats and one 64 KB range (16384 floats) is touched by 512 different warps
// (64 blocks of 256 threads), each raising its own fault for it.
__global__ void init(long long n, float* x, float* y) {
    long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) {
        x[i] = input_value(i, SEED_X);
        y[i] = input_value(i, SEED_Y);
    }
}

// Version 3's init (unified_memory_64align.cu): warp w fills the w-th 64 KB range of x and of y,
// its 32 lanes stepping through it together, so a fault is raised by one warp per page and the
// driver sees few, large fault groups. The last range may be partial (i < n).
constexpr long long PAGE_64K = 65536;
__global__ void init_warp_per_page(long long n, float* x, float* y) {
    constexpr long long per_page = PAGE_64K / sizeof(float);  // 16384 floats
    int lane = threadIdx.x & 31;
    long long warp = (blockIdx.x * (long long)blockDim.x + threadIdx.x) >> 5;
    long long warps = ((long long)blockDim.x * gridDim.x) >> 5;
    long long pages = (n + per_page - 1) / per_page;
    for (; warp < pages; warp += warps) {
#pragma unroll 8
        for (int rep = 0; rep < per_page / 32; ++rep) {
            long long i = warp * per_page + rep * 32 + lane;
            if (i < n) {
                x[i] = input_value(i, SEED_X);
                y[i] = input_value(i, SEED_Y);
            }
        }
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "The book's four add() versions on managed memory (page faults, GPU init, warp per page, prefetch) vs cudaMalloc.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 29, "floats in x and in y");
    int reps = (int)args.integer("reps", 5, 1, 100, "timed repetitions, each from a fresh allocation (median reported)");
    Results table(args, "um_page_faults", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    int managed = 0, concurrent = 0, pageable = 0, host_tables = 0;
    managed = device_attribute(cudaDevAttrManagedMemory, dev.id);
    concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, dev.id);
    pageable = device_attribute(cudaDevAttrPageableMemoryAccess, dev.id);
    host_tables = device_attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables, dev.id);
    std::printf("managedMemory %d, concurrentManagedAccess %d, pageableMemoryAccess %d, "
                "pageableMemoryAccessUsesHostPageTables %d\n", managed, concurrent, pageable, host_tables);
    if (!managed) skip("this GPU cannot allocate managed memory (cudaDevAttrManagedMemory = 0)");
    // Without concurrent managed access (pre-Pascal, Windows, some Tegra) there are no GPU page
    // faults: the driver migrates every managed page at each launch, which is not the book's case.
    if (!concurrent)
        skip("no on-demand page migration on this GPU/OS (cudaDevAttrConcurrentManagedAccess = 0)");

    size_t bytes = (size_t)n * sizeof(float);
    size_t free_b = 0, total_b = 0;
    mem_get_info(&free_b, &total_b);
    // Managed x, y plus cudaMalloc x, y must fit in what is free: never oversubscribe here.
    if (4 * bytes > free_b / 10 * 9)
        skip("--n needs " + std::to_string(4 * bytes >> 20) + " MB of GPU memory, only " +
             std::to_string(free_b >> 20) + " MB free; choose a smaller --n");
    std::printf("n = %lld floats per array: add() moves 3 x %.1f MB; %d timed runs per version\n", n, bytes / 1e6,
                reps);

    std::vector<float> hx(n), hy(n), ref(n), got(n);
    for (long long i = 0; i < n; ++i) {
        hx[i] = input_value(i, SEED_X);
        hy[i] = input_value(i, SEED_Y);
    }
    add_cpu(n, hx.data(), hy.data(), ref.data());

    // Baseline: the same kernel on device memory, with explicit copies.
    float *dx, *dy;
    CHECK(cudaMalloc(&dx, bytes));
    CHECK(cudaMalloc(&dy, bytes));
    const int block = 256;  // a multiple of 32: init_warp_per_page works in whole warps
    unsigned grid = (unsigned)((n + block - 1) / block);
    long long pages = (long long)((bytes + PAGE_64K - 1) / PAGE_64K);
    unsigned grid_pages = (unsigned)((pages * 32 + block - 1) / block);  // one warp per 64 KB page

    // Load the three kernels once (lazy module loading) so that no timed run pays for it.
    init<<<grid, block>>>(n, dx, dy);
    init_warp_per_page<<<grid_pages, block>>>(n, dx, dy);
    add<<<grid, block>>>(n, dx, dy);
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());

    // The managed pair, re-created by every reset: a fresh allocation has no pages anywhere.
    float *mx = nullptr, *my = nullptr;
    auto fresh = [&] {
        if (mx) {
            CHECK(cudaFree(mx));
            CHECK(cudaFree(my));
        }
        CHECK(cudaMallocManaged(&mx, bytes));
        CHECK(cudaMallocManaged(&my, bytes));
    };
    auto cpu_init = [&] {  // the book's CPU loop: first touch on the CPU, pages created in host memory
        std::memcpy(mx, hx.data(), bytes);
        std::memcpy(my, hy.data(), bytes);
    };
    cudaMemLocation gpu_loc = compat::device_location(dev.id);  // {cudaMemLocationTypeDevice, dev.id}

    GpuTimer aside;  // times the untimed-by-the-table parts: init kernels and prefetches
    std::vector<double> init_ms, init_page_ms, prefetch_ms;
    auto reset_cpu = [&] {
        fresh();
        cpu_init();
    };
    auto reset_gpu_init = [&] {
        fresh();
        aside.start();
        init<<<grid, block>>>(n, mx, my);
        CHECK_LAUNCH();
        init_ms.push_back(aside.stop());
    };
    auto reset_page_init = [&] {
        fresh();
        aside.start();
        init_warp_per_page<<<grid_pages, block>>>(n, mx, my);
        CHECK_LAUNCH();
        init_page_ms.push_back(aside.stop());
    };
    auto reset_prefetch = [&] {
        fresh();
        cpu_init();
        // The book: cudaMemPrefetchAsync(ptr, bytes, device, stream). CUDA 13: the destination is a
        // cudaMemLocation (type + id) and a flags word follows: (ptr, bytes, location, 0, stream);
        // CUDA 12.2-12.9 call that form cudaMemPrefetchAsync_v2. compat:: calls the toolkit's own.
        aside.start();
        CHECK(compat::mem_prefetch_async(mx, bytes, gpu_loc));
        CHECK(compat::mem_prefetch_async(my, bytes, gpu_loc));
        prefetch_ms.push_back(aside.stop());
    };

    auto add_managed = [&] { add<<<grid, block>>>(n, mx, my); };
    auto check_managed = [&](Verdict& v, const std::string& name) {
        v.exact(name, ref.data(), my, n);  // the CPU reads the result where it is: no copy
    };
    double work = 3.0 * bytes;
    table.param("n", n);
    const char* V1 = "1 CPU init (faults in add)";
    const char* V2 = "2 GPU init kernel";
    const char* V3 = "3 warp-per-64KB-page init";
    const char* V4 = "4 CPU init + prefetch";
    table.add(V1, add_managed, work, check_managed, reset_cpu).reset = reset_cpu;
    table.add(V2, add_managed, work, check_managed, reset_gpu_init).reset = reset_gpu_init;
    table.add(V3, add_managed, work, check_managed, reset_page_init).reset = reset_page_init;
    table.add(V4, add_managed, work, check_managed, reset_prefetch).reset = reset_prefetch;
    table.baseline("device add (cudaMalloc)", [&] { add<<<grid, block>>>(n, dx, dy); }, work,
                   [&](Verdict& v, const std::string& name) {
                       CHECK(cudaMemcpy(got.data(), dy, bytes, cudaMemcpyDeviceToHost));
                       v.exact(name, ref.data(), got.data(), n);
                   }).prepare = [&] {
        CHECK(cudaMemcpy(dx, hx.data(), bytes, cudaMemcpyHostToDevice));
        CHECK(cudaMemcpy(dy, hy.data(), bytes, cudaMemcpyHostToDevice));
    };
    table.speedup_over(V1);

    Verdict verdict;
    table.run(verdict, reps, 1);

    // The book's figures (Tesla P100, N = 2^20 floats, nvprof kernel times) beside these.
    const auto *v1 = table.find(V1), *v2 = table.find(V2), *v4 = table.find(V4), *base = table.base();
    std::printf("\nbook, Tesla P100 (720 GB/s peak), N = 2^20: 1 CPU init 2620.5 us = 5 GB/s; "
                "2 GPU init 18.84 us = 670 GB/s (3, 4: no figure)\n");
    if (v1 && v2)
        std::printf("here, %s: 1 CPU init %.1f GB/s; 2 GPU init %.1f GB/s: %.0fx (book 134x)\n", dev.real.name,
                    v1->rate(), v2->rate(), v2->rate() / v1->rate());
    if (v1 && v4)
        std::printf("naive -> prefetched: %.1f -> %.1f GB/s = %.0fx (book: 5 -> 670 GB/s = 134x, naive -> GPU init)\n",
                    v1->rate(), v4->rate(), v4->rate() / v1->rate());
    if (v4 && base)
        std::printf("prefetched / cudaMalloc baseline: %.1f%% (target >= 85%% of this GPU's baseline, set on an H100: "
                    "%s)\n", 100 * v4->rate() / base->rate(),
                    v4->rate() >= 0.85 * base->rate() ? "met" : "NOT met");
    // The initializations themselves, each the first touch of fresh pages (median over all runs).
    if (!init_ms.empty() && !init_page_ms.empty())
        std::printf("init kernels (first touch on the GPU, 2 x %.1f MB): grid-stride %.3f ms, warp per 64 KB page "
                    "%.3f ms (%.2fx)\n", bytes / 1e6, median(init_ms), median(init_page_ms),
                    median(init_ms) / median(init_page_ms));
    if (!prefetch_ms.empty())
        std::printf("cudaMemPrefetchAsync of x and y to the GPU: %.3f ms = %.1f GB/s of page migration\n",
                    median(prefetch_ms), gbps(2.0 * bytes, median(prefetch_ms)));

    if (mx) {
        CHECK(cudaFree(mx));
        CHECK(cudaFree(my));
    }
    CHECK(cudaFree(dx));
    CHECK(cudaFree(dy));
    return verdict.finish();
}
