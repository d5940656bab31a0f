// histogram - a 256-bin byte histogram with atomics: global, shared per block, per warp,
// warp-aggregated, per-thread 8-bit counters, and lane-pair copies; on uniform and on skewed data.
//
// Manual: N 6.3.1 原子操作 (atomicAdd: "many threads want to read X and add to it ... they queue and
//         run one by one"); G 4.1 SIMT 架构 (an atomic instruction of a warp on one address is
//         serialized). The histogram is where that queue becomes the cost: every input byte is one
//         increment of one of only 256 counters.
// Shows:  six versions, each checked bit-exact against a CPU histogram, then timed on two inputs:
//         uniform random bytes, and skewed bytes (--skew=0.9: 90% of the bytes are one value, the
//         rest uniform), where most increments of a warp hit the same counter.
//           1. global atomics          one atomicAdd in L2 per byte
//           2. shared per block        privatized 256 bins per block in shared memory, one global
//                                      atomicAdd per bin per block at the end
//           3. per-warp uint4          16-byte loads, one 256-bin copy per warp (fewer warps collide)
//           4. per-warp + match_any    as 3, but __match_any_sync groups the lanes holding the same
//                                      byte and one lane adds the group's count (skew-proof atomics)
//           5. per-thread 8-bit        no atomics in the inner loop: each thread owns 256 8-bit
//                                      counters in shared memory, laid out so that lane L always
//                                      touches bank L (no bank conflict, whatever the data), merged
//                                      every 240 bytes before a counter can overflow
//           6. lane-pair copies        16 copies per warp, lanes c and c + 16 share one, laid out so
//              (bank-pinned)           that lane c only touches banks c and c + 16: at most 2
//                                      different words per bank on any data; 64 bytes per lane
//                                      loaded one trip ahead
//         GB/s count the input bytes read (the histogram itself is 1 KB); "% of D2D" divides them by
//         cudaMemcpy D2D measured in the same run, which counts read + write.
// Build:  make histogram   (nvcc -std=c++17 -O3 -arch=native -I../common -o histogram histogram.cu)
// Run:    ./histogram [--n=2^28] [--skew=0.9] [--reps=10] [--csv=FILE] [--only=REGEX]
// Output: a check line per version and data set, the table (time, GB/s, % of D2D), a uniform /
//         skewed summary per version, the best of each, PASSED.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

constexpr int BINS = 256;
constexpr unsigned DOMINANT = 42;  // the byte value that dominates the skewed input

// Seeded input. splitmix64 yields 64 random bits per call, several bytes' worth; std::mt19937 one
// call per byte would take seconds for 2^28 bytes.
struct SplitMix64 {
    uint64_t s;
    uint64_t next() {
        uint64_t z = (s += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    }
};

void make_uniform(std::vector<uint8_t>& v, uint64_t seed) {
    SplitMix64 g{seed};
    for (size_t i = 0; i < v.size(); i += 8) {
        uint64_t r = g.next();
        for (size_t k = 0; k < 8 && i + k < v.size(); ++k) v[i + k] = (uint8_t)(r >> (8 * k));
    }
}

// A fraction `skew` of the bytes is DOMINANT, the rest uniform over all 256 values: 16 random bits
// decide, 8 more give the value; two bytes per 64-bit draw.
void make_skewed(std::vector<uint8_t>& v, double skew, uint64_t seed) {
    SplitMix64 g{seed};
    uint32_t threshold = (uint32_t)std::llround(skew * 65536.0);
    for (size_t i = 0; i < v.size(); i += 2) {
        uint64_t r = g.next();
        for (size_t k = 0; k < 2 && i + k < v.size(); ++k) {
            uint32_t bits = (uint32_t)(r >> (32 * k));
            v[i + k] = (bits & 0xffff) < threshold ? (uint8_t)DOMINANT : (uint8_t)(bits >> 16);
        }
    }
}

// CPU reference. 32-bit counts are exact: --n is at most 2^31 bytes.
void histogram_cpu(const std::vector<uint8_t>& v, unsigned* hist) {
    std::fill(hist, hist + BINS, 0u);
    for (uint8_t b : v) ++hist[b];
}

// 1. Every byte is one atomicAdd on global memory, executed by the L2. On uniform data 256 addresses
// spread the work over the L2 slices; on skewed data 90% of all atomics queue on one address.
__global__ void histogram_global(const uint8_t* __restrict__ in, size_t n, unsigned* hist) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) atomicAdd(&hist[in[i]], 1u);
}

// 2. Privatized: the block counts into its own 256 bins in shared memory (atomics in the SM, not
// the L2), reading 4 bytes per load, and adds each bin to the global histogram once at the end.
// All 8 warps of the block still share one copy: on skewed data they all queue on one bank word.
__global__ void histogram_shared(const uint8_t* __restrict__ in, size_t n, unsigned* hist) {
    __shared__ unsigned h[BINS];
    for (int b = threadIdx.x; b < BINS; b += blockDim.x) h[b] = 0;
    __syncthreads();
    const uint32_t* in4 = reinterpret_cast<const uint32_t*>(in);  // cudaMalloc memory is 256-byte aligned
    size_t n4 = n / 4, stride = (size_t)gridDim.x * blockDim.x, first = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (size_t i = first; i < n4; i += stride) {
        uint32_t w = in4[i];
        atomicAdd(&h[w & 0xff], 1u);
        atomicAdd(&h[(w >> 8) & 0xff], 1u);
        atomicAdd(&h[(w >> 16) & 0xff], 1u);
        atomicAdd(&h[w >> 24], 1u);
    }
    for (size_t i = 4 * n4 + first; i < n; i += stride) atomicAdd(&h[in[i]], 1u);  // the last n % 4 bytes
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += blockDim.x)
        if (h[b]) atomicAdd(&hist[b], h[b]);
}

// 3 and 4. One 256-bin copy per warp (8 KB per block of 8 warps) and 16-byte loads. Bin b of every
// copy lies in bank b % 32, so two lanes collide only when their bytes are equal mod 32.
// AGGREGATE: before adding, __match_any_sync finds the lanes of the warp holding the same byte; the
// lowest of them adds the group's size. On skewed data this turns ~29 serialized increments of one
// word into one; on uniform data it is an extra warp-wide instruction per byte for little gain.
constexpr int WARP_BLOCK = 256, WARPS = WARP_BLOCK / 32;

template <bool AGGREGATE>
__device__ __forceinline__ void warp_count_word(unsigned* h, uint32_t w, bool valid) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        unsigned b = (w >> (8 * k)) & 0xff;
        if (AGGREGATE) {
            // Lanes without data vote for 256, which no lane adds.
            unsigned key = valid ? b : BINS;
            unsigned peers = __match_any_sync(0xffffffffu, key);
            if (key < BINS && (threadIdx.x % 32) == (unsigned)(__ffs(peers) - 1)) atomicAdd(&h[key], (unsigned)__popc(peers));
        } else if (valid) {
            atomicAdd(&h[b], 1u);
        }
    }
}

template <bool AGGREGATE>
__global__ void __launch_bounds__(WARP_BLOCK) histogram_warp(const uint8_t* __restrict__ in, size_t n, unsigned* hist) {
    __shared__ unsigned h[WARPS][BINS];
    for (int i = threadIdx.x; i < WARPS * BINS; i += WARP_BLOCK) (&h[0][0])[i] = 0;
    __syncthreads();
    unsigned* mine = h[threadIdx.x / 32];
    const uint4* in16 = reinterpret_cast<const uint4*>(in);
    size_t n16 = n / 16, stride = (size_t)gridDim.x * WARP_BLOCK;
    // The loop bound is tested on the warp's first index, so all 32 lanes make the same trips and
    // __match_any_sync always sees the full warp; lanes past the end carry no data.
    size_t lane = threadIdx.x % 32, warp_first = blockIdx.x * (size_t)WARP_BLOCK + threadIdx.x - lane;
    for (size_t i0 = warp_first; i0 < n16; i0 += stride) {
        size_t i = i0 + lane;
        bool valid = i < n16;
        uint4 v = valid ? in16[i] : make_uint4(0, 0, 0, 0);
        warp_count_word<AGGREGATE>(mine, v.x, valid);
        warp_count_word<AGGREGATE>(mine, v.y, valid);
        warp_count_word<AGGREGATE>(mine, v.z, valid);
        warp_count_word<AGGREGATE>(mine, v.w, valid);
    }
    if (blockIdx.x == 0 && threadIdx.x < n - 16 * n16) atomicAdd(&mine[in[16 * n16 + threadIdx.x]], 1u);  // n % 16 tail
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += WARP_BLOCK) {
        unsigned s = 0;
        for (int w = 0; w < WARPS; ++w) s += h[w][b];
        if (s) atomicAdd(&hist[b], s);
    }
}

// 5. Per-thread 8-bit counters, no atomics while counting. Thread t owns 256 one-byte counters:
// its counters of bins 4g..4g+3 form the 32-bit word cnt[g * P_BLOCK + t], so every access of
// lane t is in bank t % 32 - conflict-free on any data, skewed or not, and race-free (no two
// threads share a word). An increment is a byte load, add and store in shared memory.
// A byte counter overflows at 256, so every P_BATCH uint4 (240 bytes) per thread the block stops,
// and each thread sums one column of 64 words (4 bins, from half of the threads: 16-bit lanes, 64 x
// 240 < 65536) into 32-bit totals in its registers and zeroes them. The totals meet in shared memory
// once at the end: one global atomicAdd per bin per block.
constexpr int P_BLOCK = 128;    // 32 KB of counters per block: 6 blocks (768 threads) per SM on sm_90
constexpr int P_BATCH = 15;     // uint4 per thread between merges: 240 counts < 256
constexpr int P_GROUP = 5;      // uint4 loaded ahead while the previous 5 are counted

__device__ __forceinline__ void private_count_word(uint8_t* my, uint32_t w) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        unsigned b = (w >> (8 * k)) & 0xff;
        my[(b & 0xfc) * P_BLOCK + (b & 3)] += 1;  // byte (b & 3) of word (b / 4) * P_BLOCK + t
    }
}

__device__ __forceinline__ void private_load(uint4* v, const uint4* in16, size_t i, size_t stride, size_t n16) {
#pragma unroll
    for (int j = 0; j < P_GROUP; ++j) {
        size_t idx = i + j * stride;
        v[j] = idx < n16 ? in16[idx] : make_uint4(0, 0, 0, 0);
    }
}

__device__ __forceinline__ void private_count(uint8_t* my, const uint4* v, size_t i, size_t stride, size_t n16) {
#pragma unroll
    for (int j = 0; j < P_GROUP; ++j) {
        if (i + j * stride >= n16) break;
        private_count_word(my, v[j].x);
        private_count_word(my, v[j].y);
        private_count_word(my, v[j].z);
        private_count_word(my, v[j].w);
    }
}

__global__ void __launch_bounds__(P_BLOCK, 6) histogram_private8(const uint8_t* __restrict__ in, size_t n, unsigned* hist) {
    static_assert(P_BATCH == 3 * P_GROUP && P_BATCH * 16 < 256 && P_BLOCK == 128, "see the layout comment");
    __shared__ uint32_t cnt[BINS / 4 * P_BLOCK];
    const unsigned t = threadIdx.x, lane = t % 32;
    for (int i = t; i < BINS / 4 * P_BLOCK; i += P_BLOCK) cnt[i] = 0;
    __syncthreads();
    uint8_t* my = reinterpret_cast<uint8_t*>(cnt) + 4 * t;
    const unsigned g = t % 64, half = t / 64;  // merge role: bins 4g..4g+3 of threads half*64 .. half*64+63
    unsigned tot[4] = {0, 0, 0, 0};
    const uint4* in16 = reinterpret_cast<const uint4*>(in);
    size_t n16 = n / 16, stride = (size_t)gridDim.x * P_BLOCK;
    // `base` is the block's first index of the batch: the same for all its threads, so the
    // barriers below are reached by every thread.
    for (size_t base = blockIdx.x * (size_t)P_BLOCK; base < n16; base += P_BATCH * stride) {
        size_t i = base + t;
        uint4 a[P_GROUP], b[P_GROUP];
        private_load(a, in16, i, stride, n16);
        private_load(b, in16, i + P_GROUP * stride, stride, n16);
        private_count(my, a, i, stride, n16);
        private_load(a, in16, i + 2 * P_GROUP * stride, stride, n16);
        private_count(my, b, i + P_GROUP * stride, stride, n16);
        private_count(my, a, i + 2 * P_GROUP * stride, stride, n16);
        __syncthreads();
        // Lane L starts at a different word of the column, so the 32 lanes read 32 different banks.
        uint32_t* col = cnt + g * P_BLOCK + half * 64;
        unsigned even = 0, odd = 0;
#pragma unroll 8
        for (int j = 0; j < 64; ++j) {
            unsigned k = (j + lane) % 64;
            uint32_t w = col[k];
            col[k] = 0;
            even += w & 0x00ff00ffu;         // bins 4g and 4g+2 in two 16-bit lanes
            odd += (w >> 8) & 0x00ff00ffu;   // bins 4g+1 and 4g+3
        }
        tot[0] += even & 0xffff;
        tot[1] += odd & 0xffff;
        tot[2] += even >> 16;
        tot[3] += odd >> 16;
        __syncthreads();
    }
    // All counters are zero again: cnt[0..255] collects the block's totals.
    for (int k = 0; k < 4; ++k)
        if (tot[k]) atomicAdd(&cnt[4 * g + k], tot[k]);
    if (blockIdx.x == 0 && t < n - 16 * n16) atomicAdd(&cnt[in[16 * n16 + t]], 1u);  // n % 16 tail
    __syncthreads();
    for (int bin = t; bin < BINS; bin += P_BLOCK)
        if (cnt[bin]) atomicAdd(&hist[bin], cnt[bin]);
}

// 6. Lane-pair copies (bank-pinned). In version 3 bin b of the warp's copy lies in bank b % 32, so on
// uniform bytes the 32 lanes of one atomic instruction land in random banks, and lanes on different
// words of one bank are served one after another (ncu, Lab 2: 3.15 wavefronts per shared atomic
// instruction). Here a warp has 16 copies: lanes c and c + 16 share copy c (c = lane % 16), and bin b
// of copy c is word 16 b + c, in bank 16 (b % 2) + c. Lane c only ever touches banks c and c + 16,
// which no lanes but c and c + 16 use: at most 2 different words per bank, on any data. 16 KB per
// warp, so a block has 2 warps.
// Each lane also loads the next trip's LP_AHEAD uint4 (64 bytes) before it counts this trip's, so
// that they are in flight while it counts. The atomics' results are unused, so nothing waits for them.
constexpr int LP_BLOCK = 64, LP_WARPS = LP_BLOCK / 32;
constexpr int LP_WORDS = 16 * BINS;  // shared words per warp: 16 copies of 256 bins
constexpr int LP_AHEAD = 4;          // uint4 per lane and trip

__device__ __forceinline__ void lane_pair_count_word(unsigned* col, uint32_t w) {
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        unsigned b = __byte_perm(w, 0, 0x4440 + k);  // byte k of w, zero-extended
        atomicAdd(&col[16 * b], 1u);                  // col = the warp's copies + lane % 16
    }
}

// The 8 bins whose warp totals lane `lane` collects, k = 0..7; over the 32 lanes, all 256 once.
__device__ __forceinline__ unsigned lane_pair_bin(unsigned lane, int k) { return 2 * (lane % 16 + 16 * k) + lane / 16; }

__device__ __forceinline__ void lane_pair_load(uint4* v, const uint4* in16, size_t i, size_t stride, size_t n16) {
#pragma unroll
    for (int j = 0; j < LP_AHEAD; ++j) {
        size_t idx = i + j * stride;
        v[j] = idx < n16 ? in16[idx] : make_uint4(0, 0, 0, 0);
    }
}

__global__ void __launch_bounds__(LP_BLOCK) histogram_lane_pair(const uint8_t* __restrict__ in, size_t n,
                                                                unsigned* hist) {
    __shared__ unsigned h[LP_WARPS][LP_WORDS];
    __shared__ unsigned total[BINS];
    for (int i = threadIdx.x; i < LP_WARPS * LP_WORDS; i += LP_BLOCK) (&h[0][0])[i] = 0;
    for (int i = threadIdx.x; i < BINS; i += LP_BLOCK) total[i] = 0;
    __syncthreads();
    const unsigned lane = threadIdx.x % 32;
    unsigned* mine = h[threadIdx.x / 32];
    unsigned* col = mine + lane % 16;
    const uint4* in16 = reinterpret_cast<const uint4*>(in);
    size_t n16 = n / 16, stride = (size_t)gridDim.x * LP_BLOCK;
    size_t i = blockIdx.x * (size_t)LP_BLOCK + threadIdx.x;  // this lane's uint4 j of the trip: i + j * stride
    size_t i_warp = i - lane;                                 // lane 0's: the same loop trips for the whole warp
    uint4 cur[LP_AHEAD];
    lane_pair_load(cur, in16, i, stride, n16);
    for (; i_warp < n16; i_warp += LP_AHEAD * stride, i += LP_AHEAD * stride) {
        uint4 next[LP_AHEAD];
        lane_pair_load(next, in16, i + LP_AHEAD * stride, stride, n16);
#pragma unroll
        for (int j = 0; j < LP_AHEAD; ++j) {
            if (i + j * stride < n16) {
                lane_pair_count_word(col, cur[j].x);
                lane_pair_count_word(col, cur[j].y);
                lane_pair_count_word(col, cur[j].z);
                lane_pair_count_word(col, cur[j].w);
            }
        }
#pragma unroll
        for (int j = 0; j < LP_AHEAD; ++j) cur[j] = next[j];
    }
    // Each lane sums the 16 copies of its 8 bins. The words were written by all lanes of the warp,
    // hence the __syncwarp(). Lane L starts each column at a different word, so the 32 lanes of every
    // load read 32 different banks.
    __syncwarp();
    unsigned tot[8];
#pragma unroll
    for (int k = 0; k < 8; ++k) {
        const unsigned* c16 = mine + 16 * lane_pair_bin(lane, k);
        unsigned s = 0;
#pragma unroll 4
        for (int c = 0; c < 16; ++c) s += c16[(c + lane) % 16];  // bank 16 (lane / 16) + (c + lane) % 16
        tot[k] = s;
    }
#pragma unroll
    for (int k = 0; k < 8; ++k)
        if (tot[k]) atomicAdd(&total[lane_pair_bin(lane, k)], tot[k]);
    if (blockIdx.x == 0 && threadIdx.x < n - 16 * n16) atomicAdd(&total[in[16 * n16 + threadIdx.x]], 1u);  // n % 16 tail
    __syncthreads();
    for (int b = threadIdx.x; b < BINS; b += LP_BLOCK)
        if (total[b]) atomicAdd(&hist[b], total[b]);
}

template <class K>
int resident_grid(K kernel, int block, const DeviceInfo& dev, size_t items_per_thread_unit) {
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, 0));
    long long full = (long long)std::max(per_sm, 1) * dev.real.multiProcessorCount;  // one wave on this GPU
    long long needed = (long long)((items_per_thread_unit + block - 1) / block);  // small inputs: fewer blocks
    return (int)std::max<long long>(1, std::min(full, needed));
}

int main(int argc, char** argv) {
    Args args(argc, argv,
              "256-bin byte histogram: global, shared, per-warp, warp-aggregated, per-thread, lane-pair counters.");
    long long n = args.integer("n", 1LL << 28, 1, 1LL << 31, "input bytes (32-bit counts stay exact)");
    double skew = args.real("skew", 0.9, 0.0, 1.0, "fraction of the skewed input that is one byte value");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "histogram", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    std::printf("%lld input bytes (%.1f MB), 256 bins; skewed input: %.0f%% of the bytes are %u\n", n, n / 1e6,
                100 * skew, DOMINANT);

    struct Data {
        const char* name;
        std::vector<uint8_t> host;
        unsigned ref[BINS];
        uint8_t* dev = nullptr;
    } data[2] = {{"uniform", std::vector<uint8_t>(n), {}}, {"skewed", std::vector<uint8_t>(n), {}}};
    make_uniform(data[0].host, 7);
    make_skewed(data[1].host, skew, 8);
    for (auto& d : data) {
        histogram_cpu(d.host, d.ref);
        CHECK(cudaMalloc(&d.dev, n));
        CHECK(cudaMemcpy(d.dev, d.host.data(), n, cudaMemcpyHostToDevice));
    }
    unsigned* d_hist;
    CHECK(cudaMalloc(&d_hist, BINS * sizeof(unsigned)));

    // Byte-wise kernels get one byte, the 4-byte kernel 4, the uint4 kernels 16 bytes per thread-trip.
    CHECK(cudaFuncSetAttribute(histogram_private8, cudaFuncAttributePreferredSharedMemoryCarveout,
                               (int)cudaSharedmemCarveoutMaxShared));
    int g_global = resident_grid(histogram_global, 256, dev, n);
    int g_shared = resident_grid(histogram_shared, 256, dev, n / 4 + 1);
    int g_warp = resident_grid(histogram_warp<false>, WARP_BLOCK, dev, n / 16 + 1);
    int g_agg = resident_grid(histogram_warp<true>, WARP_BLOCK, dev, n / 16 + 1);
    int g_priv = resident_grid(histogram_private8, P_BLOCK, dev, n / 16 + 1);
    CHECK(cudaFuncSetAttribute(histogram_lane_pair, cudaFuncAttributePreferredSharedMemoryCarveout,
                               (int)cudaSharedmemCarveoutMaxShared));
    int g_pair = resident_grid(histogram_lane_pair, LP_BLOCK, dev, n / 16 + 1);

    table.param("n", n);
    table.param("skew", skew);
    table.baseline_d2d((size_t)n);
    const char* names[] = {"global atomics", "shared per block", "per-warp uint4", "per-warp + match_any",
                           "per-thread 8-bit", "lane-pair copies (bank-pinned)"};
    const int n_versions = sizeof names / sizeof names[0];
    for (auto& d : data) {
        const uint8_t* in = d.dev;
        size_t sz = (size_t)n;
        auto zero = [=] { CHECK(cudaMemsetAsync(d_hist, 0, BINS * sizeof(unsigned))); };
        std::function<void()> launches[] = {
            [=] { zero(); histogram_global<<<g_global, 256>>>(in, sz, d_hist); },
            [=] { zero(); histogram_shared<<<g_shared, 256>>>(in, sz, d_hist); },
            [=] { zero(); histogram_warp<false><<<g_warp, WARP_BLOCK>>>(in, sz, d_hist); },
            [=] { zero(); histogram_warp<true><<<g_agg, WARP_BLOCK>>>(in, sz, d_hist); },
            [=] { zero(); histogram_private8<<<g_priv, P_BLOCK>>>(in, sz, d_hist); },
            [=] { zero(); histogram_lane_pair<<<g_pair, LP_BLOCK>>>(in, sz, d_hist); },
        };
        const unsigned* ref = d.ref;
        auto check = [=](Verdict& v, const std::string& name) {
            unsigned got[BINS];
            CHECK(cudaMemcpy(got, d_hist, sizeof got, cudaMemcpyDeviceToHost));
            v.exact(name, ref, got, BINS);
        };
        // Each launch zeroes the bins first (part of the work, as in any real use); the expected
        // counts add up to n > 0, so a kernel that adds nothing, or adds twice, fails the check.
        for (int k = 0; k < n_versions; ++k)
            table.add(std::string(d.name) + ": " + names[k], launches[k], (double)n, check);
    }
    std::printf("grids (blocks): global %d, shared %d, per-warp %d, match_any %d, per-thread %d, lane-pair %d"
                " (%d SMs)\n",
                g_global, g_shared, g_warp, g_agg, g_priv, g_pair, dev.real.multiProcessorCount);

    Verdict verdict;
    table.run(verdict, reps);

    // The same numbers per version, uniform next to skewed: what contention costs each design.
    std::printf("\n%-30s %12s %12s %16s\n", "version (input GB/s)", "uniform", "skewed", "skewed / uniform");
    const Results::Version* best[2] = {nullptr, nullptr};
    for (const char* name : names) {
        const Results::Version* u = table.find(std::string("uniform: ") + name);
        const Results::Version* s = table.find(std::string("skewed: ") + name);
        if (!u || !s) continue;
        std::printf("%-30s %12.1f %12.1f %15.2fx\n", name, u->rate(), s->rate(), s->rate() / u->rate());
        if (!best[0] || u->rate() > best[0]->rate()) best[0] = u;
        if (!best[1] || s->rate() > best[1]->rate()) best[1] = s;
    }
    const Results::Version* d2d = table.base();
    for (auto* b : best)
        if (b && d2d)
            std::printf("best %-40s %8.1f GB/s = %5.1f%% of D2D (%.1f GB/s, read + write)\n", b->name.c_str(), b->rate(),
                        100 * b->rate() / d2d->rate(), d2d->rate());

    for (auto& d : data) CHECK(cudaFree(d.dev));
    CHECK(cudaFree(d_hist));
    return verdict.finish();
}
