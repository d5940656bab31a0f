// bank_conflicts - shared-memory bank conflicts: stride 1..32, broadcast and padding.
//
// Manual: M "银行冲突及其对共享内存的影响" (bank conflicts and their effect on shared memory);
//         G 5.3.2 设备内存访问 (Device Memory Accesses), paragraph "共享内存";
//         N 5.4.3 Bank Conflict, N 5.6.2 Bank conflicts.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o bank_conflicts bank_conflicts.cu
// Shows:  shared memory is 32 banks of 4-byte words; word w lives in bank w % 32. When the 32
//         threads of a warp read words lane*S, lanes l and l' collide whenever (l - l')*S is a
//         multiple of 32, so gcd(S, 32) lanes share every bank that is used: the hardware splits the
//         request into gcd(S, 32) conflict-free passes ("n-way bank conflict", G 5.3.2). Odd strides
//         are conflict-free, stride 32 is the 32-way worst case, all lanes reading one word is a
//         single broadcast, and the column of a [32][33] padded tile (stride 33) is conflict-free
//         again - the padding trick of the transpose. Each thread follows a chain of dependent
//         loads (a = s[a]) so the compiler cannot hoist or merge them; clock64() around the chain
//         gives cycles per load, CUDA events the kernel time.
// Build:  make bank_conflicts   Run: ./bank_conflicts [--iters=4096] [--stride=S] [--all-strides] [--reps=10]
// Output: one row per access pattern (the version table of common/results.cuh: --csv=FILE,
//         --only=REGEX): kernel time, predicted conflict degree gcd(S,32), measured cycles per
//         warp load and the time ratio to stride 1; then PASSED.
//         --stride=S runs only that stride (for ncu: see the chapter README's lab).
#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

constexpr int kWords = 2048;  // shared table: 64 rows of 32 words (8 KB); rows * 32 > 31 * 64
constexpr int kBanks = 32;
constexpr int kBlock = 256;   // 8 warps per block, 8 blocks per SM: the LSU is kept busy

// The chain: next(a) keeps a's bank (a % 32) and moves it to a permuted row. A bank-preserving
// bijection keeps the 32 lanes on 32 distinct words with the same bank pattern at every step, so
// the conflict degree of the first load holds for all of them.
std::vector<unsigned> make_table(uint32_t seed) {
    std::vector<unsigned> perm(kWords / kBanks), table(kWords);
    std::iota(perm.begin(), perm.end(), 0u);
    std::mt19937 gen(seed);
    std::shuffle(perm.begin(), perm.end(), gen);
    for (int a = 0; a < kWords; ++a) table[a] = perm[a / kBanks] * kBanks + a % kBanks;
    return table;
}

// Start word of a thread: lane * stride, shifted by one row per warp (a whole row keeps banks).
// stride 0 = every lane of the warp on the same word (broadcast).
__host__ __device__ inline unsigned start_word(int tid, int stride) {
    int lane = tid % 32, warp = tid / 32;
    return (unsigned)(lane * stride + kBanks * warp) % kWords;
}

// CPU reference: every block does the same, so one block's worth of threads.
void chase_cpu(const std::vector<unsigned>& table, int stride, int iters, unsigned* sums) {
    for (int t = 0; t < kBlock; ++t) {
        unsigned a = start_word(t, stride), sum = 0;
        for (int k = 0; k < iters; ++k) {
            a = table[a];
            sum += a;
        }
        sums[t] = sum;
    }
}

// The same body for both kernels; the names differ so that ncu can pick one with -k.
__device__ __forceinline__ void chase(const unsigned* table, int stride, int iters, unsigned* sums,
                                      long long* cycles) {
    __shared__ unsigned s[kWords];
    for (int i = threadIdx.x; i < kWords; i += blockDim.x) s[i] = table[i];  // consecutive: no conflicts
    __syncthreads();
    unsigned a = start_word(threadIdx.x, stride), sum = 0;
    long long t0 = clock64();
    for (int k = 0; k < iters; ++k) {
        a = s[a];  // the next address depends on this load: nothing to hoist, merge or overlap
        sum += a;
    }
    long long t1 = clock64();
    sums[blockIdx.x * blockDim.x + threadIdx.x] = sum;
    if (threadIdx.x % 32 == 0) cycles[(blockIdx.x * blockDim.x + threadIdx.x) / 32] = t1 - t0;
}

// Lane l reads word l*stride (+ a row per warp): a gcd(stride, 32)-way bank conflict per load.
__global__ void bank_conflict_strided(const unsigned* table, int stride, int iters, unsigned* sums,
                                      long long* cycles) {
    chase(table, stride, iters, sums, cycles);
}

// All lanes of a warp read the same word: one pass, the value is broadcast.
__global__ void bank_conflict_broadcast(const unsigned* table, int iters, unsigned* sums, long long* cycles) {
    chase(table, 0, iters, sums, cycles);
}

// The version's name: the stride and, where it has one, the pattern it stands for.
std::string version_name(int stride) {
    switch (stride) {
        case 0: return "broadcast: all lanes, one word";
        case 1: return "stride 1: row of a tile";
        case 32: return "stride 32: column of [32][32]";
        case 33: return "stride 33: column of [32][33]";
        default: return "stride " + std::to_string(stride) + (stride % 2 ? ": odd" : "");
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Times shared-memory loads with stride 1..32, broadcast and padding (bank conflicts).");
    int iters = (int)args.integer("iters", 4096, 1, 1 << 20, "dependent shared loads per thread");
    int only = (int)args.integer("stride", 0, 0, 64, "run only this stride (1..64); 0 = the standard sweep");
    int blocks_per_sm = (int)args.integer("blocks-per-sm", 8, 1, 32, "blocks per SM in the grid");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    bool all = args.flag("all-strides", "every stride 1..33 and broadcast (for a chart)");
    Results results(args, "bank_conflicts", Results::TIME_ONLY);
    args.parse_or_exit();
    results.validate();

    DeviceInfo dev = select_device(args.device());
    int grid = dev.real.multiProcessorCount * blocks_per_sm;  // this GPU's SMs, also under a profile
    long long threads = (long long)grid * kBlock, warps = threads / 32;

    std::vector<int> strides = {0, 1, 2, 3, 4, 8, 16, 32, 33};  // 0 = broadcast
    if (only) strides = {only};
    else if (all) {
        strides = {0};
        for (int s = 1; s <= 33; ++s) strides.push_back(s);
    }

    std::vector<unsigned> table = make_table(5);
    unsigned *d_table, *d_sums;
    long long* d_cycles;
    CHECK(cudaMalloc(&d_table, kWords * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_sums, threads * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_cycles, warps * sizeof(long long)));
    CHECK(cudaMemcpy(d_table, table.data(), kWords * sizeof(unsigned), cudaMemcpyHostToDevice));
    std::printf("%d blocks x %d threads, %d dependent loads per thread, shared table %d words\n", grid, kBlock,
                iters, kWords);

    // One version per access pattern. Its check compares every thread's chain sum with the CPU's and
    // keeps the clock64() cycles per load that the checking launch recorded (a column below).
    std::vector<unsigned> ref(kBlock), expected(threads), got(threads);
    std::vector<long long> cyc(warps);
    std::map<std::string, std::pair<int, double>> seen;  // version -> (stride, cycles per load)
    for (int stride : strides) {
        std::string name = version_name(stride);
        auto launch = [&, stride] {
            if (stride == 0) bank_conflict_broadcast<<<grid, kBlock>>>(d_table, iters, d_sums, d_cycles);
            else bank_conflict_strided<<<grid, kBlock>>>(d_table, stride, iters, d_sums, d_cycles);
        };
        auto check = [&, stride](Verdict& verdict, const std::string& version) {
            CHECK(cudaMemcpy(got.data(), d_sums, threads * sizeof(unsigned), cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(cyc.data(), d_cycles, warps * sizeof(long long), cudaMemcpyDeviceToHost));
            chase_cpu(table, stride, iters, ref.data());
            for (long long i = 0; i < threads; ++i) expected[i] = ref[i % kBlock];
            verdict.exact(version + " chain sums", expected.data(), got.data(), threads);
            double cycles = 0;
            for (long long w = 0; w < warps; ++w) cycles += (double)cyc[w];
            seen[version] = {stride, cycles / ((double)warps * iters)};
        };
        auto poison = [&] {
            CHECK(cudaMemset(d_sums, 0xff, threads * sizeof(unsigned)));
            CHECK(cudaMemset(d_cycles, 0, warps * sizeof(long long)));
        };
        results.add(name, launch, 0, check, poison).param("stride", stride);
    }
    auto stride_of = [&](const Results::Version& v) { return seen.count(v.name) ? seen[v.name].first : -1; };
    results.column("degree", "predicted_degree", [&](const Results::Version& v) {
        int s = stride_of(v);  // gcd(S, 32) passes per warp load; broadcast: one
        return s < 0 ? NAN : s == 0 ? 1.0 : (double)std::gcd(s, kBanks);
    }, "%.0f");
    results.column("cycles/load", "cycles_per_load", [&](const Results::Version& v) {
        return seen.count(v.name) ? seen[v.name].second : NAN;
    }, "%.1f");
    results.column("time / s=1", "ratio_to_stride1", [&](const Results::Version& v) {
        const Results::Version* s1 = results.find(version_name(1));
        return s1 ? v.ms / s1->ms : NAN;
    }, "%.2fx");

    Verdict verdict;
    results.run(verdict, reps);
    const Results::Version *s1 = results.find(version_name(1)), *s32 = results.find(version_name(32));
    if (s1 && s32)
        std::printf("stride 32 / stride 1: %.1fx the time (gcd predicts 32 passes per load instead of 1)\n",
                    s32->ms / s1->ms);
    if (only) {
        // What `ncu --metrics l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum` should show
        // for ONE launch: each warp load costs `degree` wavefronts, degree - 1 of them extra.
        int degree = std::gcd(only, kBanks);
        double loads = (double)warps * iters;
        std::printf("predicted per launch: %.0f warp loads (shared ld), %.0f wavefronts, %.0f bank conflicts\n",
                    loads, loads * degree, loads * (degree - 1));
    }

    CHECK(cudaFree(d_table));
    CHECK(cudaFree(d_sums));
    CHECK(cudaFree(d_cycles));
    return verdict.finish();
}
