// aos_soa - the book's image coefficients stored as an array of structs (AOS) and as a struct
// of arrays (SOA): same kernel, same results, different memory traffic.
//
// Manual: M "合并与未合并的全局内存访问" (coalesced vs uncoalesced global memory access), the
//         Coefficients example and its nvprof/Visual Profiler analysis; G 5.3.2 设备内存访问.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o aos_soa aos_soa.cu
// Shows:  in AOS, thread i reads data[i].r, data[i].g, ...: neighbouring threads are 32 bytes
//         (one struct) apart, so every load instruction of a warp touches 32 sectors instead of
//         4 and drags the whole struct through the caches. In SOA, thread i reads r[i], g[i], ...:
//         each load is 128 contiguous bytes. The book measured 104 us -> 47 us (2.2x) on a V100
//         at IMAGE_SIZE = 2^20; here the ratio is measured in the same run.
// Build:  make aos_soa           Run: ./aos_soa [--n=2^23] [--block=256] [--reps=20]
//                                     (--n=2^20 is the book's size; on an H100 it fits in L2)
// Output: the checks, then time, GB/s and % of cudaMemcpy D2D for AOS and SOA, and the SOA
//         speedup next to the book's figure; then PASSED.
#include <vector>
#include "common.cuh"
#include "results.cuh"

// One pixel's coefficients, 8 ints = 32 bytes. The book calls this layout "Coefficients_SOA"
// and the pointer layout below "Coefficients_AOS": the names are swapped there (fixed here).
struct Coefficients_AOS {
    int r, b, g, hue, saturation, maxVal, minVal, finalVal;
};

// The same fields, one array each.
struct Coefficients_SOA {
    int *r, *b, *g, *hue, *saturation, *maxVal, *minVal, *finalVal;
};

// CPU reference: the book's formula.
int final_value(int r, int g, int b, int hue, int saturation, int maxVal, int minVal) {
    int grayscale = (r + g + b) / maxVal;
    int hue_sat = hue * saturation / minVal;
    return grayscale * hue_sat;
}

// The book's kernel on AOS (with the bounds check it lacked: n need not be a multiple of the block).
__global__ void complicatedCalculation(Coefficients_AOS* data, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int grayscale = (data[i].r + data[i].g + data[i].b) / data[i].maxVal;
    int hue_sat = data[i].hue * data[i].saturation / data[i].minVal;
    data[i].finalVal = grayscale * hue_sat;
}

// The same computation on SOA: each field access of a warp is 32 consecutive ints.
__global__ void complicatedCalculation(Coefficients_SOA data, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int grayscale = (data.r[i] + data.g[i] + data.b[i]) / data.maxVal[i];
    int hue_sat = data.hue[i] * data.saturation[i] / data.minVal[i];
    data.finalVal[i] = grayscale * hue_sat;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Array of structs vs struct of arrays: the book's Coefficients kernel on both layouts.");
    long long n = args.integer("n", 1LL << 23, 1, 1LL << 27, "pixels (structs of 8 ints)");
    int block = (int)args.integer("block", 256, 32, 1024, "threads per block");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "aos_soa", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    size_t bytes = n * sizeof(Coefficients_AOS), field_bytes = n * sizeof(int);
    std::printf("n = %lld pixels, %.1f MB per layout (%.1fx the L2), block = %d\n", n, bytes / 1e6,
                (double)bytes / dev.real.l2CacheSize, block);  // the L2 measured, also under a profile

    // Seeded inputs in ranges that keep the integer formula exact and free of division by 0.
    // finalVal starts at -1, a value the formula cannot produce: a skipped pixel cannot pass.
    std::vector<int> r = random_vector<int>(n, 0, 255, 1), g = random_vector<int>(n, 0, 255, 2),
                     b = random_vector<int>(n, 0, 255, 3), hue = random_vector<int>(n, 0, 359, 4),
                     sat = random_vector<int>(n, 0, 100, 5), maxv = random_vector<int>(n, 1, 255, 6),
                     minv = random_vector<int>(n, 1, 255, 7), init(n, -1);
    std::vector<int> ref(n);
    std::vector<Coefficients_AOS> aos(n);
    for (long long i = 0; i < n; ++i) {
        ref[i] = final_value(r[i], g[i], b[i], hue[i], sat[i], maxv[i], minv[i]);
        aos[i] = {r[i], b[i], g[i], hue[i], sat[i], maxv[i], minv[i], -1};
    }

    Coefficients_AOS* d_aos;
    CHECK(cudaMalloc(&d_aos, bytes));
    CHECK(cudaMemcpy(d_aos, aos.data(), bytes, cudaMemcpyHostToDevice));
    Coefficients_SOA d_soa;
    int** fields[] = {&d_soa.r, &d_soa.b, &d_soa.g, &d_soa.hue, &d_soa.saturation, &d_soa.maxVal, &d_soa.minVal,
                      &d_soa.finalVal};
    const std::vector<int>* sources[] = {&r, &b, &g, &hue, &sat, &maxv, &minv, &init};
    for (int f = 0; f < 8; ++f) {
        CHECK(cudaMalloc(fields[f], field_bytes));
        CHECK(cudaMemcpy(*fields[f], sources[f]->data(), field_bytes, cudaMemcpyHostToDevice));
    }

    unsigned grid = (unsigned)((n + block - 1) / block);
    auto run_aos = [&] { complicatedCalculation<<<grid, block>>>(d_aos, n); };
    auto run_soa = [&] { complicatedCalculation<<<grid, block>>>(d_soa, n); };

    // Both layouts are checked before timing (the kernels only write finalVal, so re-running them
    // while timing leaves the same result).
    std::vector<int> got(n);
    auto check_aos = [&](Verdict& verdict, const std::string&) {
        CHECK(cudaMemcpy(aos.data(), d_aos, bytes, cudaMemcpyDeviceToHost));
        for (long long i = 0; i < n; ++i) got[i] = aos[i].finalVal;
        verdict.exact("AOS finalVal vs CPU", ref.data(), got.data(), n);
    };
    auto check_soa = [&](Verdict& verdict, const std::string&) {
        CHECK(cudaMemcpy(got.data(), d_soa.finalVal, field_bytes, cudaMemcpyDeviceToHost));
        verdict.exact("SOA finalVal vs CPU", ref.data(), got.data(), n);
    };

    // Useful bytes: 7 ints read + 1 int written per pixel, the same for both layouts. The AOS
    // kernel moves more than this (whole 32-byte sectors for each 4-byte field it writes).
    double useful = 8.0 * sizeof(int) * n;
    table.param("n", n);
    table.param("block", block);
    table.baseline_d2d(bytes);
    table.add("AOS  complicatedCalculation", run_aos, useful, check_aos);
    table.add("SOA  complicatedCalculation", run_soa, useful, check_soa);
    table.speedup_over("AOS  complicatedCalculation");
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *a = table.find("AOS  complicatedCalculation"), *so = table.find("SOA  complicatedCalculation");
    if (a && so)
        std::printf("SOA speedup (AOS time / SOA time): %.2fx   (book on V100, n = 2^20: 104 us -> 47 us, 2.2x)\n",
                    a->ms / so->ms);

    CHECK(cudaFree(d_aos));
    for (int f = 0; f < 8; ++f) CHECK(cudaFree(*fields[f]));
    return verdict.finish();
}
