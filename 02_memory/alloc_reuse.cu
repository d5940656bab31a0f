// alloc_reuse - a scratch buffer allocated and freed every iteration, reused, or taken from a pool.
//
// Manual: G 5.5最小化内存抖动 ("减少应用程序中的 cudaMalloc+cudaFree 调用次数,尤其是在性能关键区域").
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o alloc_reuse alloc_reuse.cu
// Shows:  a loop that needs a temporary device buffer each iteration (scale the input into it,
//         then reduce it to one sum). Three ways to get the buffer:
//         1. churn: cudaMalloc + cudaFree every iteration. cudaMalloc maps fresh pages and
//            cudaFree waits for the whole device to go idle, so the GPU drains every iteration;
//         2. reuse: one cudaMalloc before the loop (what the guide recommends);
//         3. pool: cudaMallocAsync / cudaFreeAsync, stream-ordered: the memory returns to the
//            device's default pool, not to the OS, and the next allocation on the stream reuses
//            it without synchronizing. cudaMemPoolAttrReleaseThreshold = UINT64_MAX keeps the pool
//            from trimming itself back to 0 bytes at every synchronization.
// Build:  make alloc_reuse         Run: ./alloc_reuse [--n=2^22] [--iters=200] [--reps=5]
// Output: the version table of common/results.cuh (--csv=FILE, --only=REGEX): time of the whole
//         loop and per iteration (host wall clock, GPU work included), the ratios to churn; every
//         iteration's sum is checked against the CPU; PASSED.
#include <algorithm>
#include <cstdint>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// CPU reference: the sum of iteration it's scratch values.
unsigned long long iteration_sum_cpu(const uint32_t* in, long long n, int it) {
    unsigned long long s = 0;
    for (long long i = 0; i < n; ++i) s += (in[i] ^ (uint32_t)it) & 0xffffu;
    return s;
}

// Writes the scratch buffer: this iteration's transformed input.
__global__ void fill_scratch(const uint32_t* in, uint32_t* tmp, long long n, int it) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) tmp[i] = (in[i] ^ (uint32_t)it) & 0xffffu;
}

// Sums the scratch buffer into sums[it]: a grid-stride loop per thread, a warp shuffle sum, then
// one 64-bit atomicAdd per warp. Integer addition is associative, so the order does not matter.
__global__ void sum_scratch(const uint32_t* tmp, long long n, unsigned long long* sums, int it) {
    unsigned long long s = 0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)gridDim.x * blockDim.x)
        s += tmp[i];
    for (int off = 16; off > 0; off /= 2) s += __shfl_down_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(&sums[it], s);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "cudaMalloc/cudaFree every iteration vs one reused buffer vs cudaMallocAsync pool.");
    long long n = args.integer("n", 1LL << 22, 1, 1LL << 28, "elements (uint32) of the scratch buffer");
    int iters = (int)args.integer("iters", 200, 1, 100000, "loop iterations, one scratch buffer each");
    int reps = (int)args.integer("reps", 5, 1, 100, "timed repetitions of the whole loop (median reported)");
    Results results(args, "alloc_reuse", Results::TIME_ONLY);
    args.parse_or_exit();
    results.validate();

    DeviceInfo dev = select_device(args.device());
    int pools = 0;
    pools = device_attribute(cudaDevAttrMemoryPoolsSupported, dev.id);
    if (!pools) skip("this device/driver has no stream-ordered memory allocator (cudaDevAttrMemoryPoolsSupported = 0)");
    size_t bytes = n * sizeof(uint32_t);
    std::printf("%d iterations, scratch buffer %.2f MB each\n", iters, bytes / 1048576.0);

    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0u, 0xffffffffu, 5);
    std::vector<unsigned long long> ref(iters), got(iters);
    for (int it = 0; it < iters; ++it) ref[it] = iteration_sum_cpu(in.data(), n, it);

    uint32_t *d_in, *d_keep;
    unsigned long long* d_sums;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_keep, bytes));
    CHECK(cudaMalloc(&d_sums, iters * sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));
    cudaStream_t s;
    CHECK(cudaStreamCreate(&s));

    // Keep freed memory in the default pool instead of giving it back at each synchronization.
    cudaMemPool_t pool;
    CHECK(cudaDeviceGetDefaultMemPool(&pool, dev.id));
    uint64_t keep_all = UINT64_MAX;
    CHECK(cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep_all));

    int block = 256;
    int grid_fill = (int)((n + block - 1) / block);
    int grid_sum = std::min<long long>(grid_fill, 4LL * dev.real.multiProcessorCount);  // this GPU's SMs, also under a profile
    auto work = [&](uint32_t* tmp, int it) {
        fill_scratch<<<grid_fill, block, 0, s>>>(d_in, tmp, n, it);
        sum_scratch<<<grid_sum, block, 0, s>>>(tmp, n, d_sums, it);
    };
    auto churn = [&] {
        for (int it = 0; it < iters; ++it) {
            uint32_t* tmp;
            CHECK(cudaMalloc(&tmp, bytes));
            work(tmp, it);
            CHECK(cudaFree(tmp));  // implicitly waits for the device to finish
        }
    };
    auto reuse = [&] {
        for (int it = 0; it < iters; ++it) work(d_keep, it);
    };
    auto pooled = [&] {
        for (int it = 0; it < iters; ++it) {
            uint32_t* tmp;
            CHECK(cudaMallocAsync(&tmp, bytes, s));
            work(tmp, it);
            CHECK(cudaFreeAsync(tmp, s));  // the memory is reusable by later work on s
        }
    };
    // Each version runs the whole loop; every iteration's sum must equal the CPU's. They are timed by
    // the host clock around the loop plus a final synchronization: the cost of cudaMalloc and cudaFree
    // is spent on the host, and cudaFree's implicit wait is what stalls the GPU.
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpyAsync(got.data(), d_sums, iters * sizeof(unsigned long long), cudaMemcpyDeviceToHost, s));
        CHECK(cudaStreamSynchronize(s));
        verdict.exact(name, ref.data(), got.data(), iters);
    };
    auto clear = [&] { CHECK(cudaMemsetAsync(d_sums, 0, iters * sizeof(unsigned long long), s)); };
    const char* churn_name = "churn (cudaMalloc/cudaFree each iteration)";
    results.add(churn_name, churn, 0, check, clear).host_timed(s).reset = clear;
    results.add("reuse (one buffer)", reuse, 0, check, clear).host_timed(s).reset = clear;
    results.add("pool (cudaMallocAsync/cudaFreeAsync)", pooled, 0, check, clear).host_timed(s).reset = clear;
    results.speedup_over(churn_name);
    results.column("us/iteration", "us_per_iteration", [&](const Results::Version& v) { return 1e3 * v.ms / iters; },
                   "%.1f");
    Verdict verdict;
    results.run(verdict, reps);
    uint64_t reserved = 0;
    CHECK(cudaMemPoolGetAttribute(pool, cudaMemPoolAttrReservedMemCurrent, &reserved));
    verdict.note(reserved >= bytes, "pool kept its memory after the sync");  // a pool attribute, not GPU data
    std::printf("x churn > 1: faster than allocating and freeing every iteration (G 5.5)\n");

    CHECK(cudaMemPoolTrimTo(pool, 0));  // hand the pool's memory back
    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_keep));
    CHECK(cudaFree(d_sums));
    return verdict.finish();
}
