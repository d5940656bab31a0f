// reduction - the sum of 2^27 integers: block reductions in shared memory, warp shuffles, atomics.
//
// Manual: G 5.2.1 应用程序层次 (threads of one block share data through shared memory and
//         __syncthreads(); threads of different blocks only through global memory, across two
//         kernel calls); N 6.3.2 向量求和代码 (the per-block tree with "two __syncthreads() - why?",
//         the final atomicAdd per block).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o reduction reduction.cu
// Shows:  four versions of the same exact sum. (1) interleaved tree, one element per thread, the
//         kernel launched again on the per-block partials until one value is left; (2) sequential
//         addressing (no divergent warps, one barrier per step); (3) int4 grid-stride loads and a
//         warp-shuffle tree, two launches; (4) one launch, each block adds its result with one
//         atomicAdd. A reduction reads every byte once and does almost no math, so its ceiling is
//         the memory: GB/s are printed next to cudaMemcpy D2D measured in the same run.
// Build:  make reduction
// Run:    ./reduction [--n=2^27] [--reps=20]
// Output: one check line per version (exact against the CPU), a table (time, GB/s, % of D2D), PASSED.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>
#include "common.cuh"
#include "results.cuh"

constexpr int BLOCK = 256;

// CPU reference. 64-bit: 2^28 values up to 2^31 in size sum to up to 2^59. A 32-bit int (the
// notes' `int sum`) overflows after a few values - undefined behaviour for signed integers in C++.
long long sum_cpu(const int* x, long long n) {
    long long s = 0;
    for (long long i = 0; i < n; ++i) s += x[i];
    return s;
}

// (1) Interleaved addressing: at step `stride` the threads whose index is a multiple of
// 2 * stride add their neighbour. Active threads are scattered over all warps, so every warp
// stays busy (diverged) until the last steps. Templated: pass 1 reads int, later passes read the
// 64-bit partial sums.
template <class T>
__global__ void reduce_interleaved(const T* in, long long* out, long long n) {
    __shared__ long long s[BLOCK];
    unsigned t = threadIdx.x;
    long long i = blockIdx.x * (long long)BLOCK + t;
    s[t] = i < n ? (long long)in[i] : 0;  // threads past the end add zero
    __syncthreads();
    for (unsigned stride = 1; stride < BLOCK; stride *= 2) {
        if (t % (2 * stride) == 0) s[t] += s[t + stride];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// (2) Sequential addressing: the active threads are the first `len`, so whole warps retire.
// The notes ask why their loop has two __syncthreads(). They compute tmp = s[t] + s[t + len],
// sync, then store s[t] = tmp, sync. The second barrier is required: the next step reads
// s[t + len/2], written by another thread in this step (read after write). The first is not:
// in one step slot s[t] is written only by thread t and read only by thread t (t + len is never
// below len), so no other thread can see a half-updated value. It would be needed if a step read
// a slot that another thread writes in the same step (e.g. a scan, s[t] += s[t - len]).
// compute-sanitizer --tool racecheck confirms: one barrier per step, no hazard.
template <class T>
__global__ void reduce_sequential(const T* in, long long* out, long long n) {
    __shared__ long long s[BLOCK];
    unsigned t = threadIdx.x;
    long long i = blockIdx.x * (long long)BLOCK + t;
    s[t] = i < n ? (long long)in[i] : 0;
    __syncthreads();
    for (unsigned len = BLOCK / 2; len > 0; len /= 2) {
        if (t < len) s[t] += s[t + len];
        __syncthreads();
    }
    if (t == 0) out[blockIdx.x] = s[0];
}

// Sum over the block: shuffles within each warp (registers, no shared memory, no barrier), one
// shared slot per warp, then the first warp adds the warp sums. Result valid in thread 0.
__device__ long long block_sum(long long v) {
    __shared__ long long warp_sums[32];
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    if (lane == 0) warp_sums[warp] = v;
    __syncthreads();
    if (warp == 0) {
        v = lane < (int)(blockDim.x / 32) ? warp_sums[lane] : 0;
        for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    }
    return v;
}

// Each thread sums many elements first: 16-byte int4 loads, four of them in flight per loop
// trip, in a grid-stride loop over a grid that just fills the GPU. cudaMalloc's alignment makes
// the int4 view valid; the last n % 4 ints are added one by one.
__device__ long long thread_sum(const int* in, long long n) {
    const int4* in4 = reinterpret_cast<const int4*>(in);
    long long n4 = n / 4, stride = (long long)gridDim.x * blockDim.x;
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x, sum = 0;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        int4 a = in4[i], b = in4[i + stride], c = in4[i + 2 * stride], d = in4[i + 3 * stride];
        sum += (long long)a.x + a.y + a.z + a.w + b.x + b.y + b.z + b.w;
        sum += (long long)c.x + c.y + c.z + c.w + d.x + d.y + d.z + d.w;
    }
    for (; i < n4; i += stride) {
        int4 a = in4[i];
        sum += (long long)a.x + a.y + a.z + a.w;
    }
    for (i = 4 * n4 + blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) sum += in[i];
    return sum;
}

// (3) Pass 1 writes one partial per block; pass 2 (one block) adds the partials.
__global__ void reduce_shuffle(const int* in, long long* partials, long long n) {
    long long s = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) partials[blockIdx.x] = s;
}
__global__ void reduce_partials(const long long* partials, long long* out, int count) {
    long long v = 0;
    for (int i = threadIdx.x; i < count; i += blockDim.x) v += partials[i];
    v = block_sum(v);
    if (threadIdx.x == 0) *out = v;
}

// (4) One pass: each block adds its sum to the result with one atomicAdd. There is no 64-bit
// signed atomicAdd; two's-complement addition modulo 2^64 is the same bit operation, so the
// unsigned one gives the exact signed sum.
__global__ void reduce_atomic(const int* in, unsigned long long* out, long long n) {
    long long s = block_sum(thread_sum(in, n));
    if (threadIdx.x == 0) atomicAdd(out, (unsigned long long)s);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Sums integers four ways (shared-memory trees, warp shuffles, atomics).");
    // 2^27: the 512 MiB input and the D2D baseline's two buffers, 1.5 GiB, fit a 4 GB card
    // (tools/peak_memory.py); the README's H100 figures were measured at --n=2^28.
    long long n = args.integer("n", 1LL << 27, 1, 1LL << 30, "number of int32 elements");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "reduction", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    size_t bytes = n * sizeof(int);
    std::printf("sum of %lld random int32 in [INT_MIN, INT_MAX] (%.1f MB), 64-bit accumulators\n", n, bytes / 1e6);

    std::vector<int> x = random_vector<int>(n, INT_MIN, INT_MAX, 1);
    long long ref = sum_cpu(x.data(), n);

    int *d_x;
    long long *d_p1, *d_p2, *d_sum;
    long long np1 = (n + BLOCK - 1) / BLOCK, np2 = (np1 + BLOCK - 1) / BLOCK;  // partials of passes 1, 2
    CHECK(cudaMalloc(&d_x, bytes));
    CHECK(cudaMalloc(&d_p1, np1 * sizeof(long long)));
    CHECK(cudaMalloc(&d_p2, np2 * sizeof(long long)));
    CHECK(cudaMalloc(&d_sum, sizeof(long long)));
    CHECK(cudaMemcpy(d_x, x.data(), bytes, cudaMemcpyHostToDevice));

    // Versions 1 and 2: pass 1 turns n ints into np1 partials; further passes (same kernel, 64-bit
    // input) shrink them 256x each, ping-ponging between two buffers, until one value is left.
    auto multi_pass = [&](void (*first)(const int*, long long*, long long),
                          void (*next)(const long long*, long long*, long long)) {
        long long count = np1;
        first<<<(unsigned)count, BLOCK>>>(d_x, count == 1 ? d_sum : d_p1, n);
        long long* src = d_p1;
        long long* dst = d_p2;
        while (count > 1) {
            long long blocks = (count + BLOCK - 1) / BLOCK;
            next<<<(unsigned)blocks, BLOCK>>>(src, blocks == 1 ? d_sum : dst, count);
            std::swap(src, dst);
            count = blocks;
        }
    };
    // One full wave of resident blocks: the SM's thread limit (2048 on sm_80/90, 1536 on sm_86/89,
    // 1024 on sm_75) over the block size, of the GPU this runs on (dev.real, also under a profile).
    int grid = dev.real.multiProcessorCount * (dev.real.maxThreadsPerMultiProcessor / BLOCK);
    grid = (int)std::min<long long>(grid, (n + 4LL * BLOCK - 1) / (4LL * BLOCK));  // small n: fewer blocks
    // Every version is checked before any is timed; the sum is set to -1 first, so a result never
    // written cannot pass. Work: each int read once (the partials are < 0.5% more).
    auto check = [&](Verdict& verdict, const std::string& name) {
        long long got = 0;
        CHECK(cudaMemcpy(&got, d_sum, sizeof got, cudaMemcpyDeviceToHost));
        verdict.exact(name, &ref, &got, 1);
    };
    auto poison = [&] { CHECK(cudaMemset(d_sum, 0xff, sizeof(long long))); };
    table.param("n", n);
    table.baseline_d2d(bytes);
    table.add("interleaved (multi-pass)", [&] { multi_pass(reduce_interleaved<int>, reduce_interleaved<long long>); },
              (double)bytes, check, poison);
    table.add("sequential addr. (multi-pass)",
              [&] { multi_pass(reduce_sequential<int>, reduce_sequential<long long>); }, (double)bytes, check, poison);
    table.add("shuffle + int4 loads (2 passes)", [&] {
        reduce_shuffle<<<grid, BLOCK>>>(d_x, d_p1, n);
        reduce_partials<<<1, 1024>>>(d_p1, d_sum, grid);
    }, (double)bytes, check, poison);
    table.add("one pass, atomicAdd per block", [&] {
        CHECK(cudaMemsetAsync(d_sum, 0, sizeof(long long)));  // part of the work: the sum starts at 0
        reduce_atomic<<<grid, BLOCK>>>(d_x, reinterpret_cast<unsigned long long*>(d_sum), n);
    }, (double)bytes, check, poison);
    std::printf("sum = %lld (a 32-bit int accumulator would wrap to %d)\n", ref, (int)(uint32_t)(uint64_t)ref);
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *best = table.best(), *d2d = table.base();
    if (best && d2d) std::printf("best / cudaMemcpy D2D: %.1f%%\n", 100 * best->rate() / d2d->rate());

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_p1));
    CHECK(cudaFree(d_p2));
    CHECK(cudaFree(d_sum));
    return verdict.finish();
}
