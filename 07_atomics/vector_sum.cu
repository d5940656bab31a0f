// vector_sum - the notes' vector sum with atomicAdd, its two bugs, and the fixed fast version.
//
// Manual: N 6.3.2 向量求和代码 (grid-stride per-thread sums, a shared-memory tree per block, one
//         atomicAdd per block into the result); N 6.3.1 原子操作 (atomicAdd).
// Shows:  1. the notes' program as written has two bugs. Its `int` accumulators overflow: 10^7
//            values from rand() sum to ~1.07e16, so CPU and GPU agree on a wrapped number (the
//            notes' "Test Passed!" compares two wrong sums). And it times the first launch with a
//            host clock while the __managed__ input still sits in CPU memory where it was filled:
//            that time is mostly page migration, not the kernel. The program reruns the notes'
//            kernel on managed memory, prints the wrapped 32-bit result next to the exact one, and
//            the notes' timing next to the kernel's own (data prefetched to the GPU, CUDA events).
//         2. the fix, timed against cudaMemcpy D2D: exact 64-bit sums (two's complement: the
//            unsigned long long atomicAdd adds signed values correctly), first with the notes'
//            shape (one element per thread, shared tree), then grid-stride int4 loads, warp-shuffle
//            block sums and one atomicAdd per block. GB/s count the bytes read; D2D counts read +
//            write, so a pure read stream can reach or pass 100%.
// Build:  make vector_sum   (nvcc -std=c++17 -O3 -arch=native -I../common -o vector_sum vector_sum.cu)
// Run:    ./vector_sum [--n=2^27] [--notes-n=10000000] [--reps=20] [--csv=FILE] [--only=REGEX]
// Output: the notes' sum (wrapped) and times, a check line per version, the table, PASSED.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"
#include "cuda_compat.cuh"
#include "results.cuh"

constexpr int BLOCK = 256;

long long sum_cpu(const int* x, long long n) {
    long long s = 0;
    for (long long i = 0; i < n; ++i) s += x[i];
    return s;
}

// The notes' _sum_gpu: per-thread grid-stride sum, a tree in shared memory, atomicAdd per block -
// with 32-bit accumulators as in the notes. They use `int`; signed overflow is undefined behaviour
// in C++, so this copy uses `unsigned`, which wraps to the same bits the hardware gives the notes'.
__global__ void sum_gpu_notes(const int* input, int count, unsigned* output) {
    __shared__ unsigned sum_per_block[BLOCK];
    unsigned temp = 0;
    for (int idx = threadIdx.x + blockDim.x * blockIdx.x; idx < count; idx += gridDim.x * blockDim.x) temp += input[idx];
    sum_per_block[threadIdx.x] = temp;
    __syncthreads();
    for (int length = BLOCK / 2; length >= 1; length /= 2) {
        if (threadIdx.x < length) sum_per_block[threadIdx.x] += sum_per_block[threadIdx.x + length];
        __syncthreads();  // one barrier per step is enough (03_shared/reduction explains the notes' two)
    }
    if (threadIdx.x == 0) atomicAdd(output, sum_per_block[0]);
}

// The same shape with 64-bit sums: correct, but one element per thread means 2^20 blocks for 2^28
// elements, each doing 8 tree steps with barriers and one atomic for 1 KB of input.
__global__ void sum_notes_fixed(const int* input, long long n, unsigned long long* output) {
    __shared__ long long s[BLOCK];
    long long i = blockIdx.x * (long long)BLOCK + threadIdx.x;
    s[threadIdx.x] = i < n ? input[i] : 0;
    __syncthreads();
    for (int len = BLOCK / 2; len >= 1; len /= 2) {
        if (threadIdx.x < len) s[threadIdx.x] += s[threadIdx.x + len];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(output, (unsigned long long)s[0]);
}

// Block sum: shuffles inside each warp (registers, no barrier), one shared slot per warp, then
// warp 0 adds the 8 warp sums. Valid in thread 0.
__device__ long long block_sum(long long v) {
    __shared__ long long warp_sums[BLOCK / 32];
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (threadIdx.x % 32 == 0) warp_sums[threadIdx.x / 32] = v;
    __syncthreads();
    v = 0;
    if (threadIdx.x < 32) {
        if (threadIdx.x < BLOCK / 32) v = warp_sums[threadIdx.x];
        for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v;
}

// The fast version: a grid that just fills the GPU, each thread summing many int4 (16-byte) loads,
// two of them in flight per trip; then one block sum and one atomicAdd per block (~1000 atomics in
// all instead of 2^20). The n % 4 tail is added element by element.
__global__ void __launch_bounds__(BLOCK) sum_grid_stride(const int* __restrict__ in, long long n, unsigned long long* out) {
    const int4* in4 = reinterpret_cast<const int4*>(in);  // cudaMalloc memory is 256-byte aligned
    long long n4 = n / 4, stride = (long long)gridDim.x * BLOCK;
    long long i = blockIdx.x * (long long)BLOCK + threadIdx.x, s = 0;
    for (; i + stride < n4; i += 2 * stride) {
        int4 a = in4[i], b = in4[i + stride];
        s += (long long)a.x + a.y + a.z + a.w;
        s += (long long)b.x + b.y + b.z + b.w;
    }
    if (i < n4) {
        int4 a = in4[i];
        s += (long long)a.x + a.y + a.z + a.w;
    }
    for (long long j = 4 * n4 + blockIdx.x * (long long)BLOCK + threadIdx.x; j < n; j += stride) s += in[j];
    s = block_sum(s);
    if (threadIdx.x == 0) atomicAdd(out, (unsigned long long)s);
}

// Part 1: the notes' program on managed memory, at the notes' size (skipped, with the reason, where
// the system has no managed memory or too little free GPU memory).
void notes_version(const DeviceInfo& dev, long long count, int reps, Verdict& verdict) {
    int managed = 0, concurrent = 0;
    managed = device_attribute(cudaDevAttrManagedMemory, dev.id);
    concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, dev.id);
    size_t bytes = count * sizeof(int), free_b = 0, total_b = 0;
    mem_get_info(&free_b, &total_b);
    if (!managed || bytes > free_b / 2) {
        std::printf("notes' version: skipped (%s)\n", !managed ? "no managed memory on this device/system"
                                                               : "not enough free GPU memory for the managed input");
        return;
    }
    int* source;
    unsigned* result;
    CHECK(cudaMallocManaged(&source, bytes));
    CHECK(cudaMallocManaged(&result, sizeof(unsigned)));
    std::vector<int> x = random_vector<int>(count, 0, INT_MAX, 3);  // rand() range, but seeded
    std::copy(x.begin(), x.end(), source);  // first touch on the CPU: the pages live in CPU memory
    long long exact = sum_cpu(x.data(), count);
    int blocks = (int)((count + BLOCK - 1) / BLOCK);

    // Load the module before timing (a launch on 1 element), so the host clock below measures what
    // the notes' clock measured apart from that: the launch, page migration and the kernel.
    *result = 0;
    sum_gpu_notes<<<1, BLOCK>>>(source, 1, result);
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    std::copy(x.begin(), x.begin() + 1, source);  // the CPU touches page 0 again, as the notes' fill did

    *result = 0;
    CpuTimer host;
    host.start();
    sum_gpu_notes<<<blocks, BLOCK>>>(source, (int)count, result);
    CHECK_LAUNCH();
    CHECK(cudaDeviceSynchronize());
    double notes_ms = host.stop_ms();
    unsigned gpu32 = *result;
    lab_corrupt(&gpu32, 1);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)

    // The kernel alone: input already in GPU memory, events, median.
    if (concurrent) {
        // CUDA 13: cudaMemPrefetchAsync(ptr, bytes, cudaMemLocation{device, id}, flags, stream); 12.x:
        // (ptr, bytes, device, stream), or the location form as ..._v2 from 12.2. compat:: picks one.
        cudaMemLocation gpu = compat::device_location(dev.id);
        CHECK(compat::mem_prefetch_async(source, bytes, gpu));
        CHECK(compat::mem_prefetch_async(result, sizeof(unsigned), gpu));
    }
    double kernel_ms = bench_ms([&] {
        CHECK(cudaMemsetAsync(result, 0, sizeof(unsigned)));
        sum_gpu_notes<<<blocks, BLOCK>>>(source, (int)count, result);
    }, reps);
    CHECK(cudaDeviceSynchronize());

    std::printf("notes' version (N 6.3.2): %lld rand()-range ints in managed memory (%.1f MB)\n", count, bytes / 1e6);
    std::printf("  int accumulators give %d (printed with %%u as the notes do: %u); the exact sum is %lld\n", (int)gpu32,
                gpu32, exact);
    verdict.check(gpu32 == (unsigned)(uint64_t)exact, "notes' 32-bit sum = exact mod 2^32");
    std::printf("  notes' timing (host clock, first launch, pages on the CPU): %9.3f ms\n", notes_ms);
    std::printf("  the kernel alone (events, median, data %s):   %9.3f ms   -> the notes' time is %.1fx the kernel's\n",
                concurrent ? "prefetched to GPU" : "already migrated", kernel_ms, notes_ms / kernel_ms);
    CHECK(cudaFree(source));
    CHECK(cudaFree(result));
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Vector sum with atomicAdd: the notes' version (its overflow and timing), then the fixed fast one.");
    // 2^27: the 512 MiB input and the D2D baseline's two buffers, 1.5 GiB, fit a 4 GB card
    // (tools/peak_memory.py); the README's H100 figures were measured at --n=2^28.
    long long n = args.integer("n", 1LL << 27, 1, 1LL << 30, "number of int32 elements of the fast sum");
    long long notes_n = args.integer("notes-n", 10000000, 1, 1LL << 28, "elements of the notes' managed-memory run (N in the notes)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "vector_sum", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    Verdict verdict;
    notes_version(dev, notes_n, reps, verdict);

    size_t bytes = n * sizeof(int);
    std::printf("\nfixed: sum of %lld random int32 in [INT_MIN, INT_MAX] (%.1f MB), 64-bit sums\n", n, bytes / 1e6);
    std::vector<int> x = random_vector<int>(n, INT_MIN, INT_MAX, 1);
    long long ref = sum_cpu(x.data(), n);
    int* d_x;
    unsigned long long* d_sum;
    CHECK(cudaMalloc(&d_x, bytes));
    CHECK(cudaMalloc(&d_sum, sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_x, x.data(), bytes, cudaMemcpyHostToDevice));

    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, sum_grid_stride, BLOCK, 0));
    long long grid = std::min<long long>((long long)per_sm * dev.real.multiProcessorCount, (n + 8LL * BLOCK - 1) / (8LL * BLOCK));
    grid = std::max<long long>(grid, 1);
    long long notes_blocks = (n + BLOCK - 1) / BLOCK;

    table.param("n", n);
    table.baseline_d2d(bytes);
    auto check = [&](Verdict& v, const std::string& name) {
        long long got = 0;
        CHECK(cudaMemcpy(&got, d_sum, sizeof got, cudaMemcpyDeviceToHost));
        v.exact(name, &ref, &got, 1);
    };
    // Each launch zeroes the sum first; the random input's sum is not 0, so a kernel that adds nothing fails.
    table.add("notes' shape 64-bit", [&] {
        CHECK(cudaMemsetAsync(d_sum, 0, sizeof(unsigned long long)));  // part of the work: the sum starts at 0
        sum_notes_fixed<<<(unsigned)notes_blocks, BLOCK>>>(d_x, n, d_sum);
    }, (double)bytes, check);
    table.add("grid-stride int4 + shuffle", [&] {
        CHECK(cudaMemsetAsync(d_sum, 0, sizeof(unsigned long long)));
        sum_grid_stride<<<(unsigned)grid, BLOCK>>>(d_x, n, d_sum);
    }, (double)bytes, check);
    table.run(verdict, reps);
    std::printf("sum = %lld (a 32-bit int accumulator would wrap to %d); %lld blocks -> %lld atomicAdds\n", ref,
                (int)(uint32_t)(uint64_t)ref, grid, grid);
    if (const Results::Version* b = table.best())
        if (const Results::Version* d = table.base())
            std::printf("best (%s): %.1f GB/s read = %.1f%% of cudaMemcpy D2D (%.1f GB/s, read + write)\n", b->name.c_str(),
                        b->rate(), 100 * b->rate() / d->rate(), d->rate());

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_sum));
    return verdict.finish();
}
