// memcpy_async - staging global -> shared tiles with cuda::memcpy_async and a two-stage cuda::pipeline.
//
// Manual: G 2.5 异步SIMT编程模型 (Asynchronous SIMT Programming Model), G 2.5.1 异步操作
//         (Asynchronous Operations); G 5.3 最大化存储吞吐量 (the stage-in-shared pattern:
//         load, synchronize, process, synchronize, write back).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o memcpy_async memcpy_async.cu
// Shows:  the guide's staging pattern done eight ways on the same work (each block reverses a tile
//         of 1024 ints in shared memory and mixes every element with its mirror through a few
//         integer hash rounds):
//           1 direct_global   no shared memory, both reads from global;
//           2 sync_staging    ordinary loads into shared, __syncthreads, compute, __syncthreads:
//                             while a block waits for its tile its warps have nothing to compute;
//           3 async_pipeline  cuda::memcpy_async into one of two shared buffers, tracked by a
//                             thread-scope cuda::pipeline plus __syncthreads: tile k+1 is in flight
//                             while tile k is computed (double buffering). On sm_80+ the copy is the cp.async
//                             instruction (global -> shared without passing through registers);
//                             on sm_70/75 libcu++ falls back to an ordinary copy, same semantics.
//           4 + uint4 stores  version 3 writing its results 16 bytes at a time (each thread mixes
//                             four neighbours with their four mirrors): a quarter of the store
//                             instructions.
//           5 cuda::barrier   the guide's other completion mechanism (G 2.5.1, 3.2.4): one thread
//                             asks for the whole 4 KB tile with one cuda::memcpy_async on a
//                             block-scope cuda::barrier, and every thread arrive_and_wait()s on it.
//                             On sm_90 libcu++ issues it as one cp.async.bulk (the copy engine moves
//                             the tile and the barrier counts its bytes).
//           6 + 4 chains      version 4 with the four elements' hash rounds in one loop: `rounds` is
//                             a run-time value, so the compiler keeps version 4's four loops one
//                             after the other, each a chain of dependent multiply-shift-xor steps
//                             with its own counter and branch; one loop over four independent
//                             chains issues fewer instructions per element and gives the scheduler
//                             four of them to overlap (指令级并行性, instruction-level parallelism:
//                             G 5.2.3 多处理器层次).
//           7 bulk 16 KB      version 5's bulk copy moving four tiles (16 KB) at a time, so the
//                             copy-wait-compute round trip is paid once per 16 KB; version 6's chains;
//           8 + evict_first   version 7 with an L2 cache hint on the copy: the input is read once,
//                             so L2 may give it up first (PTX; sm_90, left out below with a line).
//         All must equal the CPU; then times and GB/s are compared.
// Build:  make memcpy_async   Run: ./memcpy_async [--n=2^26] [--rounds=8] [--reps=20]
// Output: the checks, then ms, GB/s, % of cudaMemcpy D2D and the speed-up over version 2.
#include <cuda/barrier>
#include <cuda/pipeline>
#include <vector>
#include "common.cuh"
#include "results.cuh"

constexpr int kTile = 1024;   // ints per tile (4 KB)
constexpr int kBlock = 256;   // 4 elements per thread per tile

// The per-element work: mix an element with its mirror in the tile, then `rounds` hash rounds.
// Integer arithmetic, so the GPU and CPU agree bit for bit.
__host__ __device__ inline unsigned mirror_in(unsigned x, unsigned mirror) { return x ^ mirror * 0x9E3779B9u; }
__host__ __device__ inline unsigned hash_round(unsigned x) {
    x = x * 0x85EBCA6Bu + 0xC2B2AE35u;
    return x ^ (x >> 13);
}

__host__ __device__ inline unsigned mix(unsigned x, unsigned mirror, int rounds) {
    x = mirror_in(x, mirror);
    for (int r = 0; r < rounds; ++r) x = hash_round(x);
    return x;
}

// The same work on four elements at once: element k of x with element k of m (the caller pairs
// them with their mirrors). Bit for bit mix() of each, but the four chains share one loop.
__device__ inline uint4 mix4(uint4 x, uint4 m, int rounds) {
    x = make_uint4(mirror_in(x.x, m.x), mirror_in(x.y, m.y), mirror_in(x.z, m.z), mirror_in(x.w, m.w));
    for (int r = 0; r < rounds; ++r) x = make_uint4(hash_round(x.x), hash_round(x.y), hash_round(x.z), hash_round(x.w));
    return x;
}

void staged_mix_cpu(const unsigned* in, unsigned* out, long long n, int rounds) {
    for (long long base = 0; base < n; base += kTile) {
        int len = (int)std::min<long long>(kTile, n - base);
        for (int i = 0; i < len; ++i) out[base + i] = mix(in[base + i], in[base + len - 1 - i], rounds);
    }
}

// Version 1: no staging. Blocks loop over tiles (grid-stride) like the other two.
__global__ void direct_global(const unsigned* in, unsigned* out, long long n, int rounds) {
    long long tiles = (n + kTile - 1) / kTile;
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        long long base = t * kTile;
        int len = (int)min((long long)kTile, n - base);
        for (int i = threadIdx.x; i < len; i += blockDim.x)
            out[base + i] = mix(in[base + i], in[base + len - 1 - i], rounds);
    }
}

// Version 2: synchronous staging. The second __syncthreads keeps the next tile's loads from
// overwriting elements that slower threads are still reading.
__global__ void sync_staging(const unsigned* in, unsigned* out, long long n, int rounds) {
    __shared__ unsigned tile[kTile];
    long long tiles = (n + kTile - 1) / kTile;
    for (long long t = blockIdx.x; t < tiles; t += gridDim.x) {
        long long base = t * kTile;
        int len = (int)min((long long)kTile, n - base);
        for (int i = threadIdx.x; i < len; i += blockDim.x) tile[i] = in[base + i];
        __syncthreads();
        for (int i = threadIdx.x; i < len; i += blockDim.x) out[base + i] = mix(tile[i], tile[len - 1 - i], rounds);
        __syncthreads();
    }
}

// The units (tiles, or stages of several tiles) that block blockIdx.x of a persistent grid works on:
// unit blockIdx.x, then every gridDim.x-th. The block's k-th unit starts at element base(k) and has
// len(k) elements (fewer than `size` only for the last unit of the array).
struct BlockUnits {
    long long n;
    int size;
    __device__ long long count() const {
        long long units = (n + size - 1) / size;
        return units > blockIdx.x ? (units - blockIdx.x + gridDim.x - 1) / gridDim.x : 0;
    }
    __device__ long long base(long long k) const { return (blockIdx.x + k * gridDim.x) * (long long)size; }
    __device__ int len(long long k) const { return (int)min((long long)size, n - base(k)); }
};

// One block-scope barrier per stage, each expecting every thread of the block; visible to all after.
template <int Stages>
__device__ void init_barriers(cuda::barrier<cuda::thread_scope_block> (&bar)[Stages]) {
    if (threadIdx.x == 0)
        for (auto& b : bar) init(&b, blockDim.x);
    __syncthreads();
}

// Version 3: double buffering with cuda::memcpy_async and a thread-scope cuda::pipeline (G 2.5.1:
// the synchronization object's scope decides which threads it synchronizes). Each thread's
// copies form its own pipeline stages - on sm_80+ they are cp.async instructions, committed as a
// group and waited for with cp.async.wait_group, no memory barrier object involved. A thread's
// consumer_wait() only covers its own copies, so a __syncthreads() then makes the whole tile
// (written by all threads) visible, and a second one keeps the buffer from being refilled while
// slower threads still read it. Tile k+1 is in flight while tile k is computed.
// Wide (version 4): whole tiles are written with 16-byte stores. Chains (version 6): and their four
// hash chains run in one loop (mix4).
template <int Stages, bool Wide = false, bool Chains = false>
__global__ void async_pipeline(const unsigned* in, unsigned* out, long long n, int rounds) {
    __shared__ __align__(16) unsigned tile[Stages][kTile];
    cuda::pipeline<cuda::thread_scope_thread> pipe = cuda::make_pipeline();

    const BlockUnits tiles{n, kTile};
    long long mine = tiles.count();  // tiles of this block

    for (long long compute = 0, fetch = 0; compute < mine; ++compute) {
        for (; fetch < mine && fetch < compute + Stages; ++fetch) {  // keep Stages tiles in flight
            pipe.producer_acquire();
            unsigned* dst = tile[fetch % Stages];
            const unsigned* src = in + tiles.base(fetch);
            int len = tiles.len(fetch);
            if (len == kTile)  // whole tiles are 16-byte aligned: 16 B per cp.async
                for (int i = 4 * threadIdx.x; i < kTile; i += 4 * blockDim.x)
                    cuda::memcpy_async(dst + i, src + i, cuda::aligned_size_t<16>(16), pipe);
            else
                for (int i = threadIdx.x; i < len; i += blockDim.x)
                    cuda::memcpy_async(dst + i, src + i, sizeof(unsigned), pipe);
            pipe.producer_commit();
        }
        pipe.consumer_wait();  // this thread's copies of the oldest tile have landed
        __syncthreads();       // ... and so have everyone else's
        const unsigned* t = tile[compute % Stages];
        long long base = tiles.base(compute);
        int len = tiles.len(compute);
        if (Wide && len == kTile) {  // 16-byte stores: element 4j+k mixes with mirror kTile-1-4j-k
            const uint4* t4 = reinterpret_cast<const uint4*>(t);
            uint4* o4 = reinterpret_cast<uint4*>(out + base);
            for (int j = threadIdx.x; j < kTile / 4; j += blockDim.x) {
                uint4 a = t4[j], m = t4[kTile / 4 - 1 - j];
                if (Chains) o4[j] = mix4(a, make_uint4(m.w, m.z, m.y, m.x), rounds);
                else o4[j] = make_uint4(mix(a.x, m.w, rounds), mix(a.y, m.z, rounds), mix(a.z, m.y, rounds),
                                        mix(a.w, m.x, rounds));
            }
        } else {
            for (int i = threadIdx.x; i < len; i += blockDim.x) out[base + i] = mix(t[i], t[len - 1 - i], rounds);
        }
        __syncthreads();  // everyone has read this buffer before it is refilled
        pipe.consumer_release();
    }
}

// Bulk version: one thread asks for the whole 4 KB tile with one cuda::memcpy_async completing on a
// block-scope cuda::barrier in shared memory. On sm_90 libcu++ turns that into one cp.async.bulk
// (the copy engine moves the tile; the barrier counts its bytes), so the other 255 threads issue no
// load at all. All threads then arrive_and_wait on the tile's barrier. The partial last tile is
// copied with ordinary loads and stores by all threads: the barrier's arrival (a release) and its
// wait (an acquire) make them visible to the whole block, as __syncthreads would.
template <int Stages>
__global__ void async_bulk(const unsigned* in, unsigned* out, long long n, int rounds) {
    __shared__ __align__(128) unsigned tile[Stages][kTile];
    using barrier_t = cuda::barrier<cuda::thread_scope_block>;
#pragma nv_diag_suppress static_var_with_dynamic_init  // the barriers are initialised by init_barriers() below
    __shared__ barrier_t bar[Stages];
    init_barriers(bar);
    const BlockUnits tiles{n, kTile};
    long long mine = tiles.count();
    auto fetch = [&](long long k) {
        unsigned* dst = tile[k % Stages];
        const unsigned* src = in + tiles.base(k);
        int len = tiles.len(k);
        if (len == kTile) {
            if (threadIdx.x == 0) cuda::memcpy_async(dst, src, cuda::aligned_size_t<16>(kTile * sizeof(unsigned)), bar[k % Stages]);
        } else {  // the partial last tile: ordinary loads; the barrier's arrive/wait below orders them
            for (int i = threadIdx.x; i < len; i += blockDim.x) dst[i] = src[i];
        }
    };
    for (long long k = 0; k < mine && k < Stages; ++k) fetch(k);
    for (long long k = 0; k < mine; ++k) {
        bar[k % Stages].arrive_and_wait();  // the tile's bytes have landed
        const unsigned* t = tile[k % Stages];
        long long base = tiles.base(k);
        int len = tiles.len(k);
        for (int i = threadIdx.x; i < len; i += blockDim.x) out[base + i] = mix(t[i], t[len - 1 - i], rounds);
        __syncthreads();  // everyone has read the buffer before it is refilled
        if (k + Stages < mine) fetch(k + Stages);
    }
}

// Versions 7 and 8: version 5's bulk copy with 16 KB per copy, and version 6's four chains.
//  - Version 7: a stage holds kStageTiles = 4 consecutive tiles (each still mirrored on its own),
//    so the round trip between a stage's copy and its use (arrive, wait, compute, __syncthreads,
//    next copy) is paid once per 16 KB instead of once per 4 KB. Same libcu++ call as version 5.
//  - Version 8 adds one thing: the copy tells the L2 cache that the input is read once.
//    createpolicy makes an evict_first policy and cp.async.bulk carries it (.L2::cache_hint), so
//    L2 gives these lines up first. libcu++'s memcpy_async has no such parameter, hence the PTX
//    (PTX ISA: createpolicy, mbarrier.expect_tx, cp.async.bulk). It needs sm_90; main() leaves
//    version 8 out below that. What it changed on the H100: README.
constexpr int kStageTiles = 4;  // tiles per bulk copy (16 KB)

__device__ __forceinline__ void bulk_copy_evict_first(unsigned* dst, const unsigned* src, unsigned bytes,
                                                      cuda::barrier<cuda::thread_scope_block>& bar) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(policy));
    unsigned d = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    unsigned b = static_cast<unsigned>(__cvta_generic_to_shared(cuda::device::barrier_native_handle(bar)));
    // The barrier's current phase now also waits for `bytes` bytes, which the copy reports as it lands.
    asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(b), "r"(bytes) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint [%0], [%1], %2, [%3], %4;"
                 ::"r"(d), "l"(src), "r"(bytes), "r"(b), "l"(policy) : "memory");
#else
    (void)dst, (void)src, (void)bytes, (void)bar;  // not launched below sm_90 (main)
#endif
}

template <bool EvictFirst>
__global__ void bulk_stages(const unsigned* in, unsigned* out, long long n, int rounds) {
    constexpr int kStage = kStageTiles * kTile, kStages = 2;
    __shared__ __align__(128) unsigned tile[kStages][kStage];
    using barrier_t = cuda::barrier<cuda::thread_scope_block>;
#pragma nv_diag_suppress static_var_with_dynamic_init  // the barriers are initialised by init_barriers() below
    __shared__ barrier_t bar[kStages];
    init_barriers(bar);
    const BlockUnits stages{n, kStage};
    long long mine = stages.count();
    auto fetch = [&](long long k) {  // whole stages only; the partial last one is read from global below
        if (threadIdx.x != 0 || stages.len(k) != kStage) return;
        if (EvictFirst) bulk_copy_evict_first(tile[k % kStages], in + stages.base(k), kStage * sizeof(unsigned), bar[k % kStages]);
        else cuda::memcpy_async(tile[k % kStages], in + stages.base(k), cuda::aligned_size_t<16>(kStage * sizeof(unsigned)), bar[k % kStages]);
    };
    for (long long k = 0; k < mine && k < kStages; ++k) fetch(k);
    for (long long k = 0; k < mine; ++k) {
        long long base = stages.base(k);
        int len = stages.len(k);
        if (len == kStage) {
            bar[k % kStages].arrive_and_wait();  // the 16 KB have landed
            const uint4* t4 = reinterpret_cast<const uint4*>(tile[k % kStages]);
            uint4* o4 = reinterpret_cast<uint4*>(out + base);
            for (int i = threadIdx.x; i < kStage / 4; i += blockDim.x) {  // uint4 i of tile i / 256
                int first = i / (kTile / 4) * (kTile / 4), j = i - first;
                uint4 a = t4[i], m = t4[first + kTile / 4 - 1 - j];
                o4[i] = mix4(a, make_uint4(m.w, m.z, m.y, m.x), rounds);
            }
            __syncthreads();  // everyone has read the buffer before it is refilled
            if (k + kStages < mine) fetch(k + kStages);
        } else {  // the partial last stage (the block's last): tile by tile, straight from global memory
            for (int q = 0; q * kTile < len; ++q) {
                const unsigned* src = in + base + q * kTile;
                int l = min(kTile, len - q * kTile);
                for (int i = threadIdx.x; i < l; i += blockDim.x) out[base + q * kTile + i] = mix(src[i], src[l - 1 - i], rounds);
            }
        }
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Stages tiles in shared memory with cuda::memcpy_async + cuda::pipeline vs synchronous loads.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 30, "number of 32-bit elements");
    int rounds = (int)args.integer("rounds", 8, 0, 1000, "hash rounds per element (compute per byte)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "memcpy_async", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    size_t bytes = n * sizeof(unsigned);
    long long tiles = (n + kTile - 1) / kTile;

    // A persistent grid (as many blocks as fit at once), so each block walks through many tiles
    // and the pipeline has something to prefetch.
    auto grid_for = [&](const void* kernel) {
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, kBlock, 0));
        return (int)std::min<long long>(tiles, (long long)std::max(per_sm, 1) * dev.real.multiProcessorCount);  // this GPU's SMs
    };
    int g1 = grid_for((const void*)direct_global), g2 = grid_for((const void*)sync_staging),
        g3 = grid_for((const void*)async_pipeline<2>), g4 = grid_for((const void*)async_pipeline<2, true>), g5 = grid_for((const void*)async_bulk<2>),
        g6 = grid_for((const void*)async_pipeline<2, true, true>);
    std::printf("n = %lld uint32 (%.1f MB), %lld tiles of %d, %d hash rounds; grids %d / %d / %d / %d / %d / %d blocks of %d\n",
                n, bytes / 1e6, tiles, kTile, rounds, g1, g2, g3, g4, g5, g6, kBlock);
    // What libcu++ compiled into the kernels follows the architecture they were compiled for, not the
    // GPU: a build for compute_75 that the driver JIT-compiles for an sm_90 GPU still has the
    // fallback (the manual's G 3.1: binary and PTX compatibility). So the kernel is asked, too.
    const bool cp_async = dev.cc() >= 80 && kernel_has_arch((const void*)async_pipeline<2>, 80);
    std::printf("copy path: %s\n", cp_async ? "cp.async (sm_80+, hardware-accelerated)"
                                              : ("software fallback (same API, ordinary loads; kernels compiled for " +
                                                 kernel_arch_text((const void*)async_pipeline<2>) + ")").c_str());

    std::vector<unsigned> in = random_vector<unsigned>(n, 0u, 0xffffffffu, 11), ref(n), out(n);
    staged_mix_cpu(in.data(), ref.data(), n, rounds);
    unsigned *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));

    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), out.data(), n);
    };
    auto poison = [&] { CHECK(cudaMemset(d_out, 0xff, bytes)); };
    double moved = 2.0 * bytes;  // read + write
    table.param("n", n);
    table.param("rounds", rounds);
    table.baseline_d2d(bytes);
    table.add("1 direct_global (no shared)", [&] { direct_global<<<g1, kBlock>>>(d_in, d_out, n, rounds); }, moved,
              check, poison);
    table.add("2 sync_staging (ld/st, 2x sync)", [&] { sync_staging<<<g2, kBlock>>>(d_in, d_out, n, rounds); }, moved,
              check, poison);
    table.add("3 async_pipeline (2 stages)", [&] { async_pipeline<2><<<g3, kBlock>>>(d_in, d_out, n, rounds); }, moved,
              check, poison);
    table.add("4 async_pipeline + uint4 stores", [&] { async_pipeline<2, true><<<g4, kBlock>>>(d_in, d_out, n, rounds); },
              moved, check, poison);
    table.add("5 cuda::barrier + bulk copy", [&] { async_bulk<2><<<g5, kBlock>>>(d_in, d_out, n, rounds); }, moved,
              check, poison);
    table.add("6 async_pipeline + uint4 + 4 chains", [&] { async_pipeline<2, true, true><<<g6, kBlock>>>(d_in, d_out, n, rounds); },
              moved, check, poison);
    // Versions 7 and 8 walk through stages of kStageTiles tiles: their grids are capped by that number.
    long long stages = (tiles + kStageTiles - 1) / kStageTiles;
    int g7 = (int)std::min<long long>(grid_for((const void*)bulk_stages<false>), stages),
        g8 = (int)std::min<long long>(grid_for((const void*)bulk_stages<true>), stages);
    table.add("7 bulk copy 16 KB + 4 chains", [&, g7] { bulk_stages<false><<<g7, kBlock>>>(d_in, d_out, n, rounds); },
              moved, check, poison);
    // bulk_copy_evict_first() is compiled out below sm_90: a compute_75 / compute_80 build lacks
    // it on any GPU, so the kernel's own architecture decides too (G 3.1).
    if (dev.cc() >= 90 && kernel_has_arch((const void*)bulk_stages<true>, 90))
        table.add("8 bulk 16 KB + L2 evict_first", [&, g8] { bulk_stages<true><<<g8, kBlock>>>(d_in, d_out, n, rounds); },
                  moved, check, poison);
    else
        std::printf("(8 bulk 16 KB + L2 evict_first needs sm_90 and code compiled for it, cp.async.bulk with a cache "
                    "hint: left out; kernels compiled for %s)\n", kernel_arch_text((const void*)bulk_stages<true>).c_str());
    table.speedup_over("2 sync_staging (ld/st, 2x sync)");
    Verdict verdict;
    table.run(verdict, reps);
    std::printf("(x sync_st > 1: the pipeline hides the tile loads behind the compute of the previous tile)\n");

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
