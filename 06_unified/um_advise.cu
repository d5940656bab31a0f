// um_advise - cudaMemAdvise on two workloads where the advice matters, timed with and without it.
//
// Manual: M "统一内存" (cudaMemAdviseSetReadMostly, cudaMemAdviseSetPreferredLocation,
//         cudaMemAdviseSetAccessedBy); G 5.5 最小化内存抖动 (the right cudaMemAdvise policies keep
//         most of cudaMalloc's performance).
// Shows:  without advice a managed page lives in one place and moves to whichever processor
//         faults on it. A. Read-mostly data that the GPU and the CPU read in turns then migrates
//         back and forth every round; SetReadMostly lets each processor keep a read-only copy, so
//         after the first round neither side faults. B. Data the CPU rewrites every round and the
//         GPU reads once per round: migrating it to the GPU and back costs two bus crossings plus
//         the faults; SetPreferredLocation(CPU) keeps it in host memory and the GPU reads it over
//         the bus through a mapping instead, and SetAccessedBy(GPU) keeps that mapping in the
//         GPU's page tables so that even its first access does not fault.
//         CUDA 13 signature: cudaMemAdvise(ptr, bytes, advice, cudaMemLocation{type, id}); the
//         book's cudaMemAdvise(ptr, bytes, advice, device) no longer compiles. CUDA 12.2-12.9 have
//         both, the location form as cudaMemAdvise_v2: the program calls compat::mem_advise
//         (common/cuda_compat.cuh), which builds with each. The host location and the attribute
//         cudaMemRangeAttributePreferredLocationType exist from CUDA 12.2.
//         Every round the GPU sums the data (64-bit integer sum, exact) and the sum is checked
//         against the CPU's; each configuration starts from a fresh cudaMallocManaged.
// Build:  make um_advise  (nvcc -std=c++17 -O3 -arch=native -I../common -o um_advise um_advise.cu)
// Run:    ./um_advise [--n=2^25] [--rounds=6]
// Output: per workload and advice: median GPU time, CPU time and round time over rounds 2..R
//         (round 1 places the pages), the speed-up over no advice; the checks; PASSED.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"
#include "cuda_compat.cuh"

// Seeded pseudo-random 32-bit values, different in every round.
inline uint32_t value(long long i, int round) {
    uint32_t u = (uint32_t)i * 0x9e3779b1u ^ (uint32_t)(round + 1) * 0x85ebca6bu;
    u ^= u >> 16;
    u *= 0x7feb352du;
    u ^= u >> 15;
    return u;
}

// GPU read of the whole buffer: each thread sums a grid-stride slice, the warp adds its 32
// partial sums with shuffles, one atomicAdd per warp. Integer sums: exact in any order.
__global__ void gpu_sum(const uint32_t* data, long long n, unsigned long long* total) {
    unsigned long long s = 0;
    long long stride = (long long)blockDim.x * gridDim.x;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride) s += data[i];
    for (int off = 16; off > 0; off >>= 1) s += __shfl_down_sync(0xffffffffu, s, off);
    if ((threadIdx.x & 31) == 0) atomicAdd(total, s);
}

enum Workload { READ_MOSTLY, CPU_WRITES };

struct Config {
    const char* name;
    Workload workload;
    bool read_mostly, prefer_cpu, accessed_by_gpu;
};

struct Timing {
    double gpu_ms = 0, cpu_ms = 0, round_ms = 0;
};

int main(int argc, char** argv) {
    Args args(argc, argv, "cudaMemAdvise: SetReadMostly, SetPreferredLocation, SetAccessedBy, each timed with and without.");
    long long n = args.integer("n", 1LL << 25, 1, 1LL << 28, "32-bit words in the managed buffer");
    int rounds = (int)args.integer("rounds", 6, 2, 100, "rounds of GPU + CPU access (round 1 is not timed)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int managed = 0, concurrent = 0, pageable = 0;
    managed = device_attribute(cudaDevAttrManagedMemory, dev.id);
    concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, dev.id);
    pageable = device_attribute(cudaDevAttrPageableMemoryAccess, dev.id);
    std::printf("managedMemory %d, concurrentManagedAccess %d, pageableMemoryAccess %d\n", managed, concurrent,
                pageable);
    if (!managed) skip("this GPU cannot allocate managed memory (cudaDevAttrManagedMemory = 0)");
    // Read duplication, a GPU preferred location and GPU AccessedBy all need it (cudaMemAdvise docs).
    if (!concurrent)
        skip("cudaMemAdvise policies need cudaDevAttrConcurrentManagedAccess = 1 (0 on this GPU/OS)");
    size_t bytes = (size_t)n * sizeof(uint32_t);
    size_t free_b = 0, total_b = 0;
    mem_get_info(&free_b, &total_b);
    if (bytes > free_b / 2)
        skip("--n needs " + std::to_string(bytes >> 20) + " MB of managed memory, only " +
             std::to_string(free_b >> 20) + " MB free on the GPU; choose a smaller --n");
    std::printf("buffer: %lld words = %.1f MB of managed memory; %d rounds per configuration\n", n, bytes / 1e6,
                rounds);

    unsigned long long* d_total;
    CHECK(cudaMalloc(&d_total, sizeof *d_total));
    const int block = 256;
    int grid = dev.real.multiProcessorCount * 8;  // 8 blocks per SM of this GPU, also under a profile
    // {cudaMemLocationTypeDevice, dev.id} and {cudaMemLocationTypeHost, id ignored}
    cudaMemLocation gpu = compat::device_location(dev.id), cpu = compat::host_location();

    const Config configs[] = {
        {"A read-mostly, no advice", READ_MOSTLY, false, false, false},
        {"A SetReadMostly", READ_MOSTLY, true, false, false},
        {"B CPU writes, no advice", CPU_WRITES, false, false, false},
        {"B SetPreferredLocation(CPU)", CPU_WRITES, false, true, false},
        {"B PreferredLocation(CPU) + AccessedBy(GPU)", CPU_WRITES, false, true, true},
        {"B SetAccessedBy(GPU)", CPU_WRITES, false, false, true},
    };
    Verdict verdict;
    std::vector<Timing> results;
    GpuTimer gt;
    for (const Config& c : configs) {
        uint32_t* data;
        CHECK(cudaMallocManaged(&data, bytes));
        if (c.read_mostly) CHECK(compat::mem_advise(data, bytes, cudaMemAdviseSetReadMostly, gpu));  // location ignored
        if (c.prefer_cpu) CHECK(compat::mem_advise(data, bytes, cudaMemAdviseSetPreferredLocation, cpu));
        if (c.accessed_by_gpu) CHECK(compat::mem_advise(data, bytes, cudaMemAdviseSetAccessedBy, gpu));

        // The advice is recorded on the range: read it back.
        int rm = -1, ptype = -1, by[4] = {-9, -9, -9, -9};
        CHECK(cudaMemRangeGetAttribute(&rm, sizeof rm, cudaMemRangeAttributeReadMostly, data, bytes));
        CHECK(cudaMemRangeGetAttribute(&ptype, sizeof ptype, cudaMemRangeAttributePreferredLocationType, data, bytes));
        CHECK(cudaMemRangeGetAttribute(by, sizeof by, cudaMemRangeAttributeAccessedBy, data, bytes));
        bool has_gpu = false;
        for (int d : by) has_gpu |= d == dev.id;
        bool advice_ok = rm == (c.read_mostly ? 1 : 0) &&
                         (ptype == cudaMemLocationTypeHost) == c.prefer_cpu && has_gpu == c.accessed_by_gpu;

        // First touch on the CPU: the pages start in host memory in every configuration.
        uint64_t expected = 0;
        for (long long i = 0; i < n; ++i) expected += data[i] = value(i, 0);

        std::vector<double> gpu_ms, cpu_ms, round_ms;
        long long bad_rounds = 0;
        for (int r = 0; r < rounds; ++r) {
            CpuTimer round;
            if (c.workload == CPU_WRITES && r > 0) {  // the CPU produces new data every round
                CpuTimer ct;
                expected = 0;
                for (long long i = 0; i < n; ++i) expected += data[i] = value(i, r);
                cpu_ms.push_back(ct.stop_ms());
            }
            CHECK(cudaMemset(d_total, 0, sizeof *d_total));  // a kernel that reads nothing sums to 0
            gt.start();
            gpu_sum<<<grid, block>>>(data, n, d_total);
            CHECK_LAUNCH();
            double g = gt.stop();
            unsigned long long got = 0;
            CHECK(cudaMemcpy(&got, d_total, sizeof got, cudaMemcpyDeviceToHost));
            lab_corrupt(&got, 1);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
            bad_rounds += got != expected;
            if (c.workload == READ_MOSTLY) {  // the CPU reads the same data, after the GPU
                CpuTimer ct;
                uint64_t s = 0;
                for (long long i = 0; i < n; ++i) s += data[i];
                cpu_ms.push_back(ct.stop_ms());
                bad_rounds += s != expected;
            }
            double t = round.stop_ms();
            if (r > 0) {  // round 1 places the pages (and, for CPU_WRITES, has no CPU part)
                gpu_ms.push_back(g);
                round_ms.push_back(t);
            }
        }
        if (c.workload == READ_MOSTLY) cpu_ms.erase(cpu_ms.begin());
        // The advice read back is the runtime's record of what this program asked for, not a GPU
        // result: a note. The sums the GPU (and the CPU, in A) computed every round are the check.
        verdict.note(advice_ok, std::string(c.name) + ": advice read back");
        verdict.check(bad_rounds == 0, std::string(c.name) + ": every round's sum");
        results.push_back({median(gpu_ms), median(cpu_ms), median(round_ms)});
        CHECK(cudaFree(data));
    }

    std::printf("\n%-44s %10s %10s %10s %9s\n", "workload / advice", "GPU ms", "CPU ms", "round ms", "speed-up");
    double gb = bytes / 1e9;
    for (size_t k = 0; k < results.size(); ++k) {
        const Timing& t = results[k];
        const Timing& none = results[configs[k].workload == READ_MOSTLY ? 0 : 2];
        std::printf("%-44s %10.3f %10.3f %10.3f %8.2fx\n", configs[k].name, t.gpu_ms, t.cpu_ms, t.round_ms,
                    none.round_ms / t.round_ms);
    }
    std::printf("(median of rounds 2..%d; GPU ms: the kernel reading %.1f MB = %.1f GB/s without advice in A, "
                "%.1f GB/s with SetReadMostly)\n", rounds, bytes / 1e6, gb / (results[0].gpu_ms / 1e3),
                gb / (results[1].gpu_ms / 1e3));
    std::printf("A: SetReadMostly %.2fx per round; B: best advice %.2fx per round (over no advice)\n",
                results[0].round_ms / results[1].round_ms,
                results[2].round_ms / std::min(std::min(results[3].round_ms, results[4].round_ms), results[5].round_ms));

    CHECK(cudaFree(d_total));
    return verdict.finish();
}
