// flop_byte - the FLOP : byte ratio of this GPU, and what share of the FP32 peak a kernel reaches
// when it does too little arithmetic per byte it reads.
//
// Manual: M "CUDA 内存管理" (its opening: a V100 does about 7 FLOP per byte of bandwidth, so a
//         kernel doing one operation per 4-byte float reaches 3.2% of the peak); G 5.2.3 (the
//         arithmetic intensity of a program).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o flop_byte flop_byte.cu
// Shows:  the FP32 peak = SMs x FP32 lanes per SM x 2 (an FMA is two FLOPs) x the SM clock
//         (cudaDevAttrClockRate; lanes per SM by compute capability, from the guide's throughput
//         table), the DRAM peak (common/device.cuh) and their ratio, the "ridge point": a kernel
//         below that many FLOPs per byte is limited by memory. Then a family of kernels that read
//         an array much larger than the L2 once and do 1 FLOP per 4-byte float (the book's case),
//         then 2, 4, 8, ... 256 FLOPs per float: GFLOP/s, % of the FP32 peak, and the roofline's
//         prediction min(1, (FLOP/B) / ridge). Every thread's sum is recomputed on the CPU for a
//         sample of threads, bit for bit (__fmaf_rn / __fadd_rn are not reassociated).
// Build:  make flop_byte            Run: ./flop_byte [--n=2^26] [--reps=20]
// Output: the peaks and the ratio; a table FLOP/B / GFLOP/s / GB/s / % of FP32 peak / roofline %;
//         the 1-FLOP-per-float line beside the book's 3.2%; PASSED.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// FP32 lanes (FMA units) per SM, from the arithmetic-instruction throughput table of the
// Programming Guide (32-bit floating-point add, multiply, multiply-add, per SM per clock).
// Device properties do not report it (the notes 2.2 say the same: it must be hard-coded).
static int fp32_lanes_per_sm(int major, int minor) {
    if (major < 7) return major == 6 && minor == 0 ? 64 : 128;
    if (major == 7 || (major == 8 && minor == 0)) return 64;  // Volta, Turing, A100
    return 128;                                               // sm_86, sm_89, sm_90 and newer
}

// CPU reference of one thread: the same elements in the same order, the same roundings.
template <int K>
float thread_sum_cpu(const float* x, long long n, long long tid, long long stride, float c, float d, float a) {
    float acc = 0.0f;
    for (long long i = tid; i < n; i += stride) {
        float t = x[i];
        if (K < 0) {
            acc = acc + t;
        } else {
            for (int k = 0; k < K; ++k) t = std::fmaf(t, c, d);
            acc = std::fmaf(t, a, acc);
        }
    }
    return acc;
}

// K < 0: acc += x (1 FLOP per float). K >= 0: K FMAs on x, then one FMA into the sum:
// 2K + 2 FLOPs per 4-byte float. c, d, a are parameters so the compiler cannot fold them.
template <int K>
__global__ void intensity(const float* __restrict__ x, float* __restrict__ out, long long n, float c, float d,
                          float a) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const long long tid = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    float acc = 0.0f;
#pragma unroll 4
    for (long long i = tid; i < n; i += stride) {
        float t = x[i];
        if constexpr (K < 0) {
            acc = __fadd_rn(acc, t);
        } else {
#pragma unroll
            for (int k = 0; k < K; ++k) t = __fmaf_rn(t, c, d);
            acc = __fmaf_rn(t, a, acc);
        }
    }
    out[tid] = acc;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "This GPU's FLOP:byte ratio, and the share of the FP32 peak reached at 1..256 FLOPs per float.");
    Results table(args, "flop_byte", Results::GFLOPS);
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 30, "floats read (the default, 256 MB, is several times the L2)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    // The peak and the grid are yardsticks of a measurement on this GPU: its own attributes (dev.real),
    // also under CUDA_LAB_PROFILE (device.cuh).
    const cudaDeviceProp& p = dev.real;
    const int lanes = fp32_lanes_per_sm(p.major, p.minor);
    const double peak_gflops = p.multiProcessorCount * (double)lanes * 2.0 * dev.sm_clock_khz / 1e6;
    const double ridge = peak_gflops / dev.peak_gbps;
    std::printf("FP32 peak: %d SMs x %d lanes x 2 FLOP x %.0f MHz = %.0f GFLOP/s\n", p.multiProcessorCount, lanes,
                dev.sm_clock_khz / 1e3, peak_gflops);
    std::printf("DRAM peak: %.0f GB/s -> FLOP : byte = %.1f (book, V100: about 7)\n", dev.peak_gbps, ridge);
    std::printf("1 FLOP per 4-byte float can reach at most %.1f%% of the FP32 peak (book, V100: 3.2%%)\n",
                100.0 * std::min(1.0, 0.25 / ridge));

    const int block = 256;
    const int grid = (int)std::min<long long>(p.multiProcessorCount * (p.maxThreadsPerMultiProcessor / block),
                                              (n + block - 1) / block);
    const long long threads = (long long)grid * block;
    const float c = 0.999f, d = 0.001f, a = 0.5f;
    std::vector<float> x = random_vector<float>(n, -1.0f, 1.0f, 1), out(threads);
    float *d_x, *d_out;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_out, threads * sizeof(float)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    std::printf("n = %lld floats (%.1f MB), %d blocks x %d threads, grid-stride\n", n, n * 4 / 1e6, grid, block);

    // Every version's sums, for a sample of about 1000 threads (always the first and the last).
    const long long step = std::max(1LL, threads / 1000);
    auto checker = [&](auto cpu) {
        return [&, cpu](Verdict& v, const std::string& name) {
            CHECK(cudaMemcpy(out.data(), d_out, threads * sizeof(float), cudaMemcpyDeviceToHost));
            std::vector<long long> ids;
            for (long long t = 0; t < threads; t += step) ids.push_back(t);
            if (ids.back() != threads - 1) ids.push_back(threads - 1);
            std::vector<float> want, got;
            for (long long t : ids) {
                want.push_back(cpu(x.data(), n, t, threads, c, d, a));
                got.push_back(out[t]);
            }
            v.exact(name + " (sampled threads)", want.data(), got.data(), want.size());
        };
    };
    auto poison = [&] { CHECK(cudaMemset(d_out, 0xff, threads * sizeof(float))); };
    auto add = [&](const char* name, auto kernel, auto cpu, double flop_per_float) {
        table.add(name, [=] { kernel<<<grid, block>>>(d_x, d_out, n, c, d, a); }, flop_per_float * n, checker(cpu),
                  poison);
    };
    add("1 FLOP/float (acc += x)", intensity<-1>, thread_sum_cpu<-1>, 1);
    add("2 FLOP/float", intensity<0>, thread_sum_cpu<0>, 2);
    add("4 FLOP/float (1 FLOP/B)", intensity<1>, thread_sum_cpu<1>, 4);
    add("8 FLOP/float", intensity<3>, thread_sum_cpu<3>, 8);
    add("16 FLOP/float", intensity<7>, thread_sum_cpu<7>, 16);
    add("32 FLOP/float", intensity<15>, thread_sum_cpu<15>, 32);
    add("64 FLOP/float", intensity<31>, thread_sum_cpu<31>, 64);
    add("128 FLOP/float", intensity<63>, thread_sum_cpu<63>, 128);
    add("256 FLOP/float", intensity<127>, thread_sum_cpu<127>, 256);
    table.param("n", n);
    table.param("fp32_peak_gflops", peak_gflops);
    table.param("dram_peak_gbps", dev.peak_gbps);
    auto flop_per_byte = [&](const Results::Version& v) { return v.work / (4.0 * n); };
    table.column("FLOP/B", "flop_per_byte", flop_per_byte, "%.2f");
    table.column("GB/s", "gbps", [&](const Results::Version& v) { return v.rate() / flop_per_byte(v); }, "%.0f");
    table.column("% of FP32 peak", "pct_of_peak", [&](const Results::Version& v) { return 100 * v.rate() / peak_gflops; },
                 "%.1f%%");
    table.column("roofline", "roofline_pct",
                 [&](const Results::Version& v) { return 100 * std::min(1.0, flop_per_byte(v) / ridge); }, "%.1f%%");
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *v1 = table.find("1 FLOP/float (acc += x)"), *v4 = table.find("4 FLOP/float (1 FLOP/B)");
    if (v1 && v4)
        std::printf("measured: 1 FLOP per float %.1f%% of the FP32 peak (book, V100: 3.2%%), 1 FLOP per byte %.1f%%\n",
                    100 * v1->rate() / peak_gflops, 100 * v4->rate() / peak_gflops);

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
