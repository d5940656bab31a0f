// latency - how many clock cycles a load waits, from each level of the memory hierarchy: a pointer
// chase, one thread, every load's address being the value the load before it returned.
//
// Manual: N 5.5.1 CUDA内存读写速度比较 (registers ~1 cycle, shared ~5, global ~500, constant ~5).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o latency latency.cu
// Shows:  a GPU hides latency behind other warps, so a throughput kernel never shows it. One thread
//         whose next address depends on the last load's value cannot overlap two loads: its time
//         per step is the latency of one load. The chase follows a random cyclic permutation
//         (seeded) over a working set sized for each level: 16 KB of shared
//         memory; 16 KB of global memory read through L1 (ld.global.ca, kernel preferring L1); a
//         quarter of the L2 read past L1 (ld.global.cg); nodes 256 bytes apart read once each right
//         after a kernel streamed 4x the L2 through it (so every load misses L2: DRAM); 1 KB of
//         __constant__ memory; 16 KB through a texture object. Each warm level first walks its
//         cycle once untimed (the same thread, so its own SM's L1 is filled), then walks it again,
//         timed with clock64() (SM cycles) and %globaltimer (ns). A chain of dependent integer
//         multiply-adds stands in for the notes' "registers": it measures the ALU's latency.
// Check:  on the CPU every permutation is one cycle through all its nodes (each visited exactly
//         once: a note, the CPU's own data); the GPU's final node and the sum of the values it loaded equal the CPU walk's over
//         the same number of steps, so every load happened and followed the chain.
// Why the compiler keeps the loads: each address is the previous load's value (nothing to hoist or
//         reorder) and the final value and the sum are stored (nothing to remove); the clock reads
//         are volatile asm. `make latency.sass` shows one load per step (lab.sh, step 6).
// Build:  make latency            Run: ./latency [--passes=8] [--dram-nodes=16384]
// Output: one row per level: nodes, working set, cycles and ns per load, the notes' figure beside;
//         then Little's law for this GPU's DRAM; PASSED.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include "common.cuh"

const int SHARED_WORDS = 4096;  // 16 KB of shared memory
const int CONST_WORDS = 256;    // 1 KB of constant memory, well inside the constant cache
const size_t L1_SPAN = 16 << 10;  // 16 KB: a quarter or less of the L1 of any GPU from sm_75 on
                                  // when the kernel prefers L1 (the device reports no L1 size)
const size_t L1_STRIDE = 32, L2_STRIDE = 128, DRAM_STRIDE = 256;  // bytes between nodes
__constant__ unsigned c_chase[CONST_WORDS];

struct Timing {  // what one chase kernel reports
    long long cycles, ns;         // over the timed steps
    unsigned long long last, sum;  // the last value loaded, the sum of all values loaded
};

__device__ __forceinline__ long long globaltimer_ns() {
    long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t)::"memory");
    return t;
}
__device__ __forceinline__ long long clock_cycles() {
    long long t;
    asm volatile("mov.u64 %0, %%clock64;" : "=l"(t)::"memory");
    return t;
}

// Global memory: each node holds the address of the next. CACHE_L1 picks ld.global.ca (cached in
// L1 and L2) or ld.global.cg (L2 only). `warm` untimed steps, then `steps` timed ones.
template <bool CACHE_L1>
__global__ void chase_global(const unsigned long long* start, long long warm, long long steps, Timing* out) {
    const unsigned long long* p = start;
    unsigned long long sum = 0, v = 0;
    for (long long s = 0; s < warm; ++s) {
        v = CACHE_L1 ? __ldca(p) : __ldcg(p);
        sum += v;
        p = reinterpret_cast<const unsigned long long*>(v);
    }
    long long c0 = clock_cycles(), t0 = globaltimer_ns();
    for (long long s = 0; s < steps; ++s) {
        v = CACHE_L1 ? __ldca(p) : __ldcg(p);
        sum += v;
        p = reinterpret_cast<const unsigned long long*>(v);
    }
    long long c1 = clock_cycles(), t1 = globaltimer_ns();
    *out = {c1 - c0, t1 - t0, v, sum};
}

// Shared memory: the block copies the chain in, then thread 0 chases it. Each word holds the byte
// offset of the next node, so the address is the loaded value plus the array's fixed offset.
__global__ void chase_shared(const unsigned* next_bytes, int nodes, long long warm, long long steps, Timing* out) {
    __shared__ unsigned s_chase[SHARED_WORDS];
    for (int i = threadIdx.x; i < nodes; i += blockDim.x) s_chase[i] = next_bytes[i];
    __syncthreads();
    if (threadIdx.x != 0) return;
    const char* base = reinterpret_cast<const char*>(s_chase);
    unsigned j = 0;
    unsigned long long sum = 0;
    for (long long s = 0; s < warm; ++s) {
        j = *reinterpret_cast<const unsigned*>(base + j);
        sum += j;
    }
    long long c0 = clock_cycles(), t0 = globaltimer_ns();
    for (long long s = 0; s < steps; ++s) {
        j = *reinterpret_cast<const unsigned*>(base + j);
        sum += j;
    }
    long long c1 = clock_cycles(), t1 = globaltimer_ns();
    *out = {c1 - c0, t1 - t0, j, sum};
}

// Constant memory, byte offsets as in shared memory.
__global__ void chase_constant(long long warm, long long steps, Timing* out) {
    const char* base = reinterpret_cast<const char*>(c_chase);
    unsigned j = 0;
    unsigned long long sum = 0;
    for (long long s = 0; s < warm; ++s) {
        j = *reinterpret_cast<const unsigned*>(base + j);
        sum += j;
    }
    long long c0 = clock_cycles(), t0 = globaltimer_ns();
    for (long long s = 0; s < steps; ++s) {
        j = *reinterpret_cast<const unsigned*>(base + j);
        sum += j;
    }
    long long c1 = clock_cycles(), t1 = globaltimer_ns();
    *out = {c1 - c0, t1 - t0, j, sum};
}

// Texture: each element holds the index of the next; tex1Dfetch takes the index itself.
__global__ void chase_texture(cudaTextureObject_t tex, long long warm, long long steps, Timing* out) {
    unsigned j = 0;
    unsigned long long sum = 0;
    for (long long s = 0; s < warm; ++s) {
        j = tex1Dfetch<unsigned>(tex, (int)j);
        sum += j;
    }
    long long c0 = clock_cycles(), t0 = globaltimer_ns();
    for (long long s = 0; s < steps; ++s) {
        j = tex1Dfetch<unsigned>(tex, (int)j);
        sum += j;
    }
    long long c1 = clock_cycles(), t1 = globaltimer_ns();
    *out = {c1 - c0, t1 - t0, j, sum};
}

// Registers: j = j * a + b, each step needing the last one's result (a and b come from the host,
// so the compiler cannot fold the chain). What it measures is the latency of one IMAD.
__global__ void chase_registers(unsigned a, unsigned b, long long steps, Timing* out) {
    unsigned j = 1;
    long long c0 = clock_cycles(), t0 = globaltimer_ns();
    for (long long s = 0; s < steps; ++s) asm volatile("mad.lo.u32 %0, %0, %1, %2;" : "+r"(j) : "r"(a), "r"(b));
    long long c1 = clock_cycles(), t1 = globaltimer_ns();
    *out = {c1 - c0, t1 - t0, j, 0};
}

// Reads and writes every 16-byte word of a buffer 4x the L2: afterwards the chase's lines are gone.
__global__ void flush_l2(uint4* buf, size_t n) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) buf[i].x ^= 1u;
}

// A random cyclic permutation of 0..n-1, seeded: the nodes in a shuffled order, each pointing to the
// next one in that order and the last to the first, so one cycle runs through all n.
std::vector<uint32_t> random_cycle(uint32_t n, uint32_t seed) {
    std::vector<uint32_t> order(n);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937(seed));
    std::vector<uint32_t> next(n);
    for (uint32_t k = 0; k < n; ++k) next[order[k]] = order[(k + 1) % n];
    return next;
}

// CPU walk from node 0: is it one cycle visiting each node exactly once?
bool one_cycle(const std::vector<uint32_t>& next) {
    std::vector<char> seen(next.size(), 0);
    uint32_t j = 0;
    for (size_t s = 0; s < next.size(); ++s) {
        if (seen[j]++) return false;
        j = next[j];
    }
    return j == 0;
}

// The CPU walk of `steps` steps from node 0: the last node and the sum of value(node) over the nodes
// reached (value maps a node index to what the GPU array stores for it: an address, a byte offset).
template <class V>
std::pair<unsigned long long, unsigned long long> cpu_walk(const std::vector<uint32_t>& next, long long steps, V value) {
    uint32_t j = 0;
    unsigned long long sum = 0;
    for (long long s = 0; s < steps; ++s) {
        j = next[j];
        sum += value(j);
    }
    return {value(j), sum};
}

struct Row {
    std::string level;
    long long nodes;
    double span_kb, cycles, ns;  // per load
    const char* notes;           // the notes' figure
};

int main(int argc, char** argv) {
    Args args(argc, argv, "Load latency in cycles of shared memory, L1, L2, DRAM, constant and texture: a pointer chase.");
    int passes = (int)args.integer("passes", 8, 1, 1000, "timed steps of each warm level: 8192 x this, rounded up to whole walks of its cycle");
    long long dram_nodes = args.integer("dram-nodes", 16384, 1, 1 << 20, "nodes of the DRAM chase, 256 bytes apart (one timed walk)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    Verdict verdict;
    std::vector<Row> rows;
    Timing* d_t;
    CHECK(cudaMalloc(&d_t, sizeof(Timing)));
    Timing t{};
    auto fetch = [&] {
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(&t, d_t, sizeof t, cudaMemcpyDeviceToHost));
        lab_corrupt(&t.last, 1);  // CUDA_LAB_CORRUPT (corrupt.h): each check of GPU data compares t.last
    };
    // Warm levels walk their cycle `rounds` times: at least 8192 * passes steps, whole cycles.
    auto rounds_for = [&](long long nodes) { return std::max<long long>(1, (8192LL * passes + nodes - 1) / nodes); };
    // Compares the GPU's last value and sum with the CPU walk; records the row.
    auto finish = [&](const std::string& level, const std::vector<uint32_t>& next, long long warm, long long steps,
                      double span_kb, const char* notes, auto value) {
        verdict.note(one_cycle(next), level + ": one cycle over " + std::to_string(next.size()) + " nodes");  // CPU data
        auto [last, sum] = cpu_walk(next, warm + steps, value);
        verdict.check(t.last == last && t.sum == sum, level + ": last node and sum = CPU walk");
        rows.push_back({level, (long long)next.size(), span_kb, (double)t.cycles / steps, (double)t.ns / steps, notes});
    };

    // ---- registers (ALU latency), as the baseline the notes' "~1 cycle" is about
    {
        long long steps = 8192LL * passes;
        const unsigned a = 0x9E3779B1u, b = 12345u;
        chase_registers<<<1, 1>>>(a, b, steps, d_t);
        fetch();
        unsigned j = 1;
        for (long long s = 0; s < steps; ++s) j = j * a + b;
        verdict.check(t.last == j, "registers: IMAD chain = CPU");
        rows.push_back({"registers (dependent IMAD)", 0, 0, (double)t.cycles / steps, (double)t.ns / steps, "~1"});
    }

    // ---- shared memory: byte offsets of the next node
    {
        std::vector<uint32_t> next = random_cycle(SHARED_WORDS, 1);
        std::vector<unsigned> bytes(SHARED_WORDS);
        for (int i = 0; i < SHARED_WORDS; ++i) bytes[i] = next[i] * 4u;
        unsigned* d_next;
        CHECK(cudaMalloc(&d_next, SHARED_WORDS * 4));
        CHECK(cudaMemcpy(d_next, bytes.data(), SHARED_WORDS * 4, cudaMemcpyHostToDevice));
        long long steps = rounds_for(SHARED_WORDS) * SHARED_WORDS;
        chase_shared<<<1, 256>>>(d_next, SHARED_WORDS, SHARED_WORDS, steps, d_t);
        fetch();
        finish("shared memory", next, SHARED_WORDS, steps, SHARED_WORDS * 4 / 1024.0, "~5",
               [](uint32_t j) { return (unsigned long long)j * 4u; });
        CHECK(cudaFree(d_next));
    }

    // ---- global memory: L1, L2 and DRAM, each node holding the next node's device address
    auto chase_level = [&](const std::string& level, uint32_t nodes, size_t stride, bool l1, bool cold, uint32_t seed) {
        std::vector<uint32_t> next = random_cycle(nodes, seed);
        size_t words = (size_t)nodes * stride / 8;
        unsigned long long* d_buf;
        CHECK(cudaMalloc(&d_buf, words * 8));
        unsigned long long base = reinterpret_cast<unsigned long long>(d_buf);
        auto value = [&](uint32_t j) { return base + (unsigned long long)j * stride; };
        std::vector<unsigned long long> h(words, 0);
        for (uint32_t i = 0; i < nodes; ++i) h[(size_t)i * stride / 8] = value(next[i]);
        CHECK(cudaMemcpy(d_buf, h.data(), words * 8, cudaMemcpyHostToDevice));
        long long steps = cold ? nodes : rounds_for(nodes) * nodes, warm = cold ? 0 : nodes;
        if (cold) {  // walk once (pages mapped, TLB filled), then evict every line from L2
            chase_global<false><<<1, 1>>>(d_buf, nodes, 0, d_t);
            fetch();
            // The L2 of the GPU measured (dev.real), also under CUDA_LAB_PROFILE (device.cuh).
            size_t flush_words = 4 * (size_t)dev.real.l2CacheSize / 16;
            uint4* d_flush;
            CHECK(cudaMalloc(&d_flush, flush_words * 16));
            CHECK(cudaMemset(d_flush, 1, flush_words * 16));
            flush_l2<<<dev.real.multiProcessorCount * 4, 256>>>(d_flush, flush_words);
            CHECK_LAUNCH();
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaFree(d_flush));
        }
        if (l1) chase_global<true><<<1, 1>>>(d_buf, warm, steps, d_t);
        else chase_global<false><<<1, 1>>>(d_buf, warm, steps, d_t);
        fetch();
        finish(level, next, warm, steps, (double)nodes * stride / 1024.0, "~500 (global)", value);
        CHECK(cudaFree(d_buf));
    };
    CHECK(cudaFuncSetAttribute(chase_global<true>, cudaFuncAttributePreferredSharedMemoryCarveout,
                               cudaSharedmemCarveoutMaxL1));
    chase_level("L1 (ld.global.ca)", (uint32_t)(L1_SPAN / L1_STRIDE), L1_STRIDE, true, false, 2);
    uint32_t l2_nodes = (uint32_t)std::max<size_t>(1, (size_t)dev.real.l2CacheSize / 4 / L2_STRIDE);
    chase_level("L2 (ld.global.cg)", l2_nodes, L2_STRIDE, false, false, 3);
    chase_level("DRAM (L2 flushed)", (uint32_t)dram_nodes, DRAM_STRIDE, false, true, 4);
    double dram_ns = rows.back().ns;

    // ---- constant memory: byte offsets, in the __constant__ array
    {
        std::vector<uint32_t> next = random_cycle(CONST_WORDS, 5);
        std::vector<unsigned> bytes(CONST_WORDS);
        for (int i = 0; i < CONST_WORDS; ++i) bytes[i] = next[i] * 4u;
        CHECK(cudaMemcpyToSymbol(c_chase, bytes.data(), CONST_WORDS * 4));
        long long steps = rounds_for(CONST_WORDS) * CONST_WORDS;
        chase_constant<<<1, 1>>>(CONST_WORDS, steps, d_t);
        fetch();
        finish("constant memory", next, CONST_WORDS, steps, CONST_WORDS * 4 / 1024.0, "~5",
               [](uint32_t j) { return (unsigned long long)j * 4u; });
    }

    // ---- texture: indices, through a texture object on linear memory
    {
        const uint32_t nodes = (uint32_t)(L1_SPAN / 4);
        std::vector<uint32_t> next = random_cycle(nodes, 6);
        unsigned* d_next;
        CHECK(cudaMalloc(&d_next, nodes * 4));
        CHECK(cudaMemcpy(d_next, next.data(), nodes * 4, cudaMemcpyHostToDevice));
        cudaResourceDesc res = {};
        res.resType = cudaResourceTypeLinear;
        res.res.linear.devPtr = d_next;
        res.res.linear.desc = cudaCreateChannelDesc<unsigned>();
        res.res.linear.sizeInBytes = nodes * 4;
        cudaTextureDesc td = {};
        td.readMode = cudaReadModeElementType;
        cudaTextureObject_t tex;
        CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
        long long steps = rounds_for(nodes) * nodes;
        chase_texture<<<1, 1>>>(tex, nodes, steps, d_t);
        fetch();
        finish("texture (tex1Dfetch)", next, nodes, steps, nodes * 4 / 1024.0, "-",
               [](uint32_t j) { return (unsigned long long)j; });
        CHECK(cudaDestroyTextureObject(tex));
        CHECK(cudaFree(d_next));
    }

    std::printf("\n%-28s %8s %11s %12s %9s  %s\n", "level", "nodes", "working set", "cycles/load", "ns/load",
                "notes 5.5.1 (cycles)");
    for (const Row& r : rows) {
        char span[32] = "-";
        if (r.span_kb > 0) std::snprintf(span, sizeof span, r.span_kb >= 1024 ? "%.1f MB" : "%.0f KB",
                                         r.span_kb >= 1024 ? r.span_kb / 1024 : r.span_kb);
        std::string nodes = r.nodes ? std::to_string(r.nodes) : "-";
        std::printf("%-28s %8s %11s %12.1f %9.1f  %s\n", r.level.c_str(), nodes.c_str(), span, r.cycles, r.ns, r.notes);
    }
    // Little's law: to keep a pipe busy, the work in flight = latency x throughput. Here: the bytes a
    // GPU must have requested and not yet received to stream DRAM at its peak.
    double per_sm = dram_ns * dev.peak_gbps / dev.real.multiProcessorCount;  // ns x GB/s = bytes
    std::printf("\nLittle's law: bytes in flight = latency x bandwidth = %.0f ns x %.0f GB/s = %.0f KB on the GPU,"
                "\n  %.1f KB per SM (%d SMs); a lone load's latency: under load it grows, and so does this figure\n",
                dram_ns, dev.peak_gbps, dram_ns * dev.peak_gbps / 1024, per_sm / 1024, dev.real.multiProcessorCount);
    CHECK(cudaFree(d_t));
    return verdict.finish();
}
