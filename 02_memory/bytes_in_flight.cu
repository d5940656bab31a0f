// bytes_in_flight - DRAM bandwidth against the bytes each SM has requested and not yet received:
// resident warps x independent loads per thread x 4 bytes x 32 threads, and Little's law.
//
// Manual: M "内存吞吐量分析" (飞行中的并发访问数量: about 6 KB in flight per SM reach 90% of the
//         peak bandwidth on a V100; other architectures differ).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o bytes_in_flight bytes_in_flight.cu
// Shows:  a load takes hundreds of nanoseconds (see latency), so to stream DRAM at B bytes per ns
//         the GPU must keep latency x B bytes requested at any moment (Little's law). A kernel gets
//         there with more resident warps (occupancy) or more independent loads per thread (ILP):
//         here every thread issues K loads of 4 bytes before it adds any of them (K = 1..16), and
//         the number of resident 2-warp blocks per SM is set with dynamic shared memory (a block
//         asks for 1/B of the SM's shared memory, so B fit; the occupancy API confirms B, and the
//         grid is B blocks per SM). Bytes in flight per SM = 64 threads x B x K x 4 bytes. The
//         program measures the DRAM latency of one load (a pointer chase through nodes 256 bytes
//         apart after the L2 was flushed) and prints Little's law with it.
// Build:  make bytes_in_flight     Run: ./bytes_in_flight [--n=2^26] [--reps=10] [--csv=FILE]
// Output: the checks (each thread's sum against the CPU; a note for the occupancy of every setting),
//         a table of GB/s by resident warps and loads per thread, the smallest bytes in flight per SM
//         that reach 90% of the best, the settings with equal bytes in flight side by side (do warps
//         or loads per thread win?), Little's law with the measured latency, the book's 6 KB; PASSED.
//         --csv=FILE writes one row per setting for plot.py (figures/bytes_in_flight.png).
#include <algorithm>
#include <cstdint>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

const int BLOCK = 64;  // 2 warps: resident warps per SM go up in steps of 2
const int KS[] = {1, 2, 4, 8, 16};

// CPU reference: thread t of T sums the elements i with i % T == t (wrapping 32-bit sum).
std::vector<uint32_t> sums_cpu(const std::vector<uint32_t>& in, long long threads) {
    std::vector<uint32_t> out(threads, 0);
    for (size_t i = 0; i < in.size(); ++i) out[i % threads] += in[i];
    return out;
}

// Each thread loads K words T apart (T = threads in the grid, so each of the K loads is a
// coalesced warp request), all before adding any: K independent loads in flight per thread.
// Then the next K. The tail (fewer than K left for this thread) goes one load at a time.
// Both loops carry `#pragma unroll 1`: without it nvcc unrolls the outer loop on its own (K = 1 by
// 16, so 16 loads per iteration, and the tail by 4), and K would not be the loads in flight. The
// SASS (tests/sass_claims/02_memory.txt) has K LDG in the main loop and one in the tail loop.
template <int K>
__global__ void read_k(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, long long n) {
    long long T = (long long)gridDim.x * blockDim.x, t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    uint32_t sum = 0;
    long long i = t;
#pragma unroll 1
    for (; i + (K - 1) * T < n; i += K * T) {
        uint32_t v[K];
#pragma unroll
        for (int k = 0; k < K; ++k) v[k] = in[i + k * T];
#pragma unroll
        for (int k = 0; k < K; ++k) sum += v[k];
    }
#pragma unroll 1
    for (; i < n; i += T) sum += in[i];
    out[t] = sum;
}

// The DRAM latency: one thread, each node holding the next node's address, read past L1.
__global__ void chase(const unsigned long long* start, long long steps, unsigned long long* last, long long* ns) {
    const unsigned long long* p = start;
    unsigned long long v = 0;
    long long t0, t1;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0)::"memory");
    for (long long s = 0; s < steps; ++s) {
        v = __ldcg(p);
        p = reinterpret_cast<const unsigned long long*>(v);
    }
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t1)::"memory");
    *last = v;
    *ns = t1 - t0;
}

__global__ void flush_l2(uint4* buf, size_t n) {  // read and write 4x the L2: the chase's lines are gone
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) buf[i].x ^= 1u;
}

// ns per DRAM load: `nodes` nodes 256 bytes apart in a random cycle, walked once after a flush.
// Checks that the walk ended where the CPU's walk of the same cycle does (back at node 0).
double dram_latency_ns(const DeviceInfo& dev, Verdict& verdict) {
    const uint32_t nodes = 8192, stride = 256;
    std::vector<uint32_t> order(nodes), next(nodes);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin() + 1, order.end(), std::mt19937(7));
    for (uint32_t k = 0; k < nodes; ++k) next[order[k]] = order[(k + 1) % nodes];
    unsigned long long* d_buf;
    CHECK(cudaMalloc(&d_buf, (size_t)nodes * stride));
    unsigned long long base = reinterpret_cast<unsigned long long>(d_buf);
    std::vector<unsigned long long> h((size_t)nodes * stride / 8, 0);
    for (uint32_t i = 0; i < nodes; ++i) h[(size_t)i * stride / 8] = base + (unsigned long long)next[i] * stride;
    CHECK(cudaMemcpy(d_buf, h.data(), h.size() * 8, cudaMemcpyHostToDevice));
    unsigned long long* d_last;
    long long* d_ns;
    CHECK(cudaMalloc(&d_last, 8));
    CHECK(cudaMalloc(&d_ns, 8));
    chase<<<1, 1>>>(d_buf, nodes, d_last, d_ns);  // pages mapped, TLB filled
    CHECK_LAUNCH();
    size_t words = 4 * (size_t)dev.real.l2CacheSize / 16;  // the L2 measured, also under a profile (device.cuh)
    uint4* d_flush;
    CHECK(cudaMalloc(&d_flush, words * 16));
    CHECK(cudaMemset(d_flush, 1, words * 16));
    flush_l2<<<dev.real.multiProcessorCount * 4, 256>>>(d_flush, words);
    CHECK_LAUNCH();
    chase<<<1, 1>>>(d_buf, nodes, d_last, d_ns);
    CHECK_LAUNCH();
    unsigned long long last = 0;
    long long ns = 0;
    CHECK(cudaMemcpy(&last, d_last, 8, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&ns, d_ns, 8, cudaMemcpyDeviceToHost));
    lab_corrupt(&last, 1);  // CUDA_LAB_CORRUPT (corrupt.h): this check must be able to fail
    uint32_t j = 0;
    for (uint32_t s = 0; s < nodes; ++s) j = next[j];  // the CPU walk: one cycle, back at node 0
    verdict.check(j == 0 && last == base, "DRAM chase: back at node 0 after one cycle");
    CHECK(cudaFree(d_flush));
    CHECK(cudaFree(d_buf));
    CHECK(cudaFree(d_last));
    CHECK(cudaFree(d_ns));
    return (double)ns / nodes;
}

template <int K>
void launch(unsigned grid, size_t smem, const uint32_t* in, uint32_t* out, long long n) {
    read_k<K><<<grid, BLOCK, smem>>>(in, out, n);
}
using Launcher = void (*)(unsigned, size_t, const uint32_t*, uint32_t*, long long);
const void* kernel_of(int k) {
    switch (k) {
        case 1: return (const void*)read_k<1>;
        case 2: return (const void*)read_k<2>;
        case 4: return (const void*)read_k<4>;
        case 8: return (const void*)read_k<8>;
        default: return (const void*)read_k<16>;
    }
}
Launcher launcher_of(int k) {
    switch (k) {
        case 1: return launch<1>;
        case 2: return launch<2>;
        case 4: return launch<4>;
        case 8: return launch<8>;
        default: return launch<16>;
    }
}

// The dynamic shared memory per block that leaves exactly `blocks` resident per SM (0 if none does).
size_t smem_for(const void* kernel, int blocks, const cudaDeviceProp& p) {
    auto occ = [&](size_t s) {
        int b = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&b, kernel, BLOCK, s));
        return b;
    };
    size_t s = p.sharedMemPerMultiprocessor / blocks;
    s = s > p.reservedSharedMemPerBlock ? (s - p.reservedSharedMemPerBlock) / 128 * 128 : 0;
    s = std::min(s, p.sharedMemPerBlockOptin);
    while (occ(s) > blocks && s + 128 <= p.sharedMemPerBlockOptin) s += 128;
    while (occ(s) < blocks && s >= 128) s -= 128;
    return occ(s) == blocks ? s : (size_t)-1;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "DRAM bandwidth vs bytes in flight per SM (resident warps x independent loads); Little's law.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 28, "uint32 words read per launch");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "bytes_in_flight", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    // Resident blocks per SM, waves and Little's law are measurements of this GPU: its own attributes
    // (dev.real), also under CUDA_LAB_PROFILE (device.cuh).
    const cudaDeviceProp& p = dev.real;
    int sms = p.multiProcessorCount;
    int max_blocks = std::min(p.maxBlocksPerMultiProcessor, p.maxThreadsPerMultiProcessor / BLOCK);
    std::printf("n = %lld uint32 (%.1f MB, %.1fx the L2); blocks of %d threads; up to %d blocks (%d warps) per SM\n", n,
                n * 4 / 1e6, n * 4.0 / p.l2CacheSize, BLOCK, max_blocks, max_blocks * BLOCK / 32);
    Verdict verdict;
    double latency_ns = dram_latency_ns(dev, verdict);

    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0u, 0xffffffffu, 1);
    uint32_t *d_in, *d_out;
    long long max_threads = (long long)max_blocks * sms * BLOCK;
    CHECK(cudaMalloc(&d_in, n * 4));
    CHECK(cudaMalloc(&d_out, max_threads * 4));
    CHECK(cudaMemcpy(d_in, in.data(), n * 4, cudaMemcpyHostToDevice));
    for (int k : KS) {
        CHECK(cudaFuncSetAttribute(kernel_of(k), cudaFuncAttributeMaxDynamicSharedMemorySize, (int)p.sharedMemPerBlockOptin));
        CHECK(cudaFuncSetAttribute(kernel_of(k), cudaFuncAttributePreferredSharedMemoryCarveout, cudaSharedmemCarveoutMaxShared));
    }

    // One row per (resident blocks B, loads per thread K); the CPU sums depend on the grid only.
    std::map<long long, std::vector<uint32_t>> ref;
    std::vector<uint32_t> got(max_threads);
    table.param("n", n);
    table.param("sms", sms);
    table.param("peak_gbps", dev.peak_gbps);
    table.param("dram_latency_ns", latency_ns);
    std::vector<int> blocks_list;
    for (int b = 1; b <= max_blocks; b *= 2) blocks_list.push_back(b);
    struct Setting { int warps, k; double bytes_per_sm; };
    std::map<std::string, Setting> settings;
    for (int b : blocks_list) {
        long long threads = (long long)b * sms * BLOCK;
        ref[threads] = sums_cpu(in, threads);
        for (int k : KS) {
            size_t smem = smem_for(kernel_of(k), b, p);
            bool ok = smem != (size_t)-1;
            // The occupancy API against itself (the shared memory was chosen with it): a note, and a
            // setting it cannot produce is left out of the table.
            verdict.note(ok, std::to_string(b) + " blocks/SM, K=" + std::to_string(k) + ": occupancy API agrees");
            if (!ok) continue;
            std::string name = std::to_string(2 * b) + " warps x " + std::to_string(k) + " loads";
            Launcher run = launcher_of(k);
            unsigned grid = (unsigned)(b * sms);
            double bytes_per_sm = (double)BLOCK * b * k * 4;
            settings[name] = {2 * b, k, bytes_per_sm};
            auto check = [&, threads](Verdict& v, const std::string& nm) {
                CHECK(cudaMemcpy(got.data(), d_out, threads * 4, cudaMemcpyDeviceToHost));
                v.exact(nm + " sums", ref[threads].data(), got.data(), threads);
            };
            auto poison = [&, threads] { CHECK(cudaMemset(d_out, 0xab, threads * 4)); };
            table.add(name, [=] { run(grid, smem, d_in, d_out, n); }, 4.0 * (n + threads), check, poison)
                .param("warps_per_sm", 2 * b)
                .param("loads_per_thread", k)
                .param("bytes_in_flight_per_sm", bytes_per_sm);
        }
    }
    table.column("% of peak", "pct_of_peak", [&](const Results::Version& v) { return 100 * v.rate() / dev.peak_gbps; },
                 "%.1f%%");
    table.quiet();
    table.run(verdict, reps);

    // The table: GB/s by resident warps (rows) and loads per thread (columns).
    std::printf("\nGB/s by resident warps per SM (rows) and independent loads per thread (K); bytes in flight per SM"
                " = warps x 32 x K x 4\n%-10s", "warps/SM");
    for (int k : KS) std::printf("  K=%-6d", k);
    std::printf("\n");
    const Results::Version* best = table.best();
    for (int b : blocks_list) {
        std::printf("%-10d", 2 * b);
        for (int k : KS) {
            const Results::Version* v = table.find(std::to_string(2 * b) + " warps x " + std::to_string(k) + " loads");
            if (v) std::printf("  %-8.0f", v->rate());
            else std::printf("  %-8s", "-");
        }
        std::printf("\n");
    }
    if (best) {
        const Setting* first = nullptr;  // the fewest bytes in flight reaching 90% of the best
        std::string first_name;
        for (auto& [name, s] : settings) {
            const Results::Version* v = table.find(name);
            if (v && v->rate() >= 0.9 * best->rate() && (!first || s.bytes_per_sm < first->bytes_per_sm)) {
                first = &s;
                first_name = name;
            }
        }
        std::printf("\nbest: %s, %.0f GB/s (%.1f%% of peak)\n", best->name.c_str(), best->rate(),
                    100 * best->rate() / dev.peak_gbps);
        if (first)
            std::printf("90%% of the best first at %.1f KB in flight per SM (%s)  [book, V100: ~6 KB for 90%% of peak]\n",
                        first->bytes_per_sm / 1024, first_name.c_str());
    }
    // Warps or loads: the settings with the same bytes in flight per SM (warps x K constant), fastest
    // first. Where more warps win every group, occupancy buys what ILP does not, and the reverse.
    // But a row with fewer warps per SM than the SM has schedulers (4 from sm_70 on: Programming
    // Guide, compute capabilities) leaves schedulers with no warp to issue from: 2 warps (one block)
    // use at most 2 of the 4. Its comparison changes the schedulers at work as well as the warps, so
    // each group is judged again without the rows of fewer than 4 warps.
    const int schedulers = 4;
    std::map<double, std::vector<std::pair<double, std::string>>> same;  // bytes per SM -> (GB/s, name)
    for (auto& [name, s] : settings)
        if (const Results::Version* v = table.find(name)) same[s.bytes_per_sm].push_back({v->rate(), name});
    auto warps = [&](const std::string& nm) { return settings[nm].warps; };
    struct Tally { int groups = 0, most_warps = 0, fewest_warps = 0; double gap = 0, gap_bytes = 0; };
    auto judge = [&](Tally& t, const std::vector<std::pair<double, std::string>>& rows, double bytes) {
        if (rows.size() < 2) return;  // rows: fastest first
        int max_w = 0, min_w = 1 << 30;
        double r_max = 0, r_min = 0;
        for (auto& [gbps, nm] : rows) {
            if (warps(nm) > max_w) max_w = warps(nm), r_max = gbps;
            if (warps(nm) < min_w) min_w = warps(nm), r_min = gbps;
        }
        ++t.groups;
        t.most_warps += warps(rows[0].second) == max_w;
        t.fewest_warps += warps(rows[0].second) == min_w;
        if (r_min > 0 && r_max / r_min > t.gap) t.gap = r_max / r_min, t.gap_bytes = bytes;
    };
    Tally all, full;  // full: rows of at least `schedulers` warps per SM only
    std::printf("\nsame bytes in flight per SM, fastest first (GB/s):\n");
    for (auto& [bytes, rows] : same) {
        if (rows.size() < 3) continue;
        std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.first > b.first; });
        std::printf("  %5.1f KB:", bytes / 1024);
        for (auto& [gbps, name] : rows) std::printf("  %s %.0f;", name.c_str(), gbps);
        std::printf("\n");
        judge(all, rows, bytes);
        std::vector<std::pair<double, std::string>> kept;
        for (auto& r : rows)
            if (warps(r.second) >= schedulers) kept.push_back(r);
        judge(full, kept, bytes);
    }
    if (all.groups)
        std::printf("at the same bytes in flight, the most warps (fewest loads per thread) were fastest in %d of %d groups,"
                    " the fewest warps (most loads per thread) in %d; largest gap, most / fewest warps: %.2fx at %.1f KB\n",
                    all.most_warps, all.groups, all.fewest_warps, all.gap, all.gap_bytes / 1024);
    if (full.groups)
        std::printf("  but %d warps per SM leave at least %d of the SM's %d schedulers without a warp; without the rows of"
                    " fewer than %d warps: most warps fastest in %d of %d groups, fewest in %d; largest gap %.2fx at %.1f KB\n",
                    BLOCK / 32, schedulers - BLOCK / 32, schedulers, schedulers, full.most_warps, full.groups,
                    full.fewest_warps, full.gap, full.gap_bytes / 1024);
    double need = latency_ns * dev.peak_gbps / sms;  // ns x GB/s = bytes
    std::printf("Little's law: bytes in flight per SM = DRAM latency x peak / SMs = %.0f ns x %.0f GB/s / %d = %.1f KB\n"
                "  (the latency of a lone load, measured here; under load it is longer)\n",
                latency_ns, dev.peak_gbps, sms, need / 1024);

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
