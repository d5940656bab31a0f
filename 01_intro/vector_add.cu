// vector_add - the canonical first kernel: C = A + B, one element per thread.
//
// Manual: G 2.1 内核, G 3.2.2 设备存储, G 1.1 我们为什么要使用GPU;
//         M "全局内存上的矢量加法" (vector add on global memory).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o vector_add vector_add.cu
// Shows:  the bounds check `if (i < n)` that lets the grid overshoot n, the grid size
//         (n + block - 1) / block, and that a streaming kernel is limited by memory bandwidth:
//         it moves 12 bytes per 1 flop. Its GB/s is printed next to cudaMemcpy device-to-device
//         (the practical ceiling, measured in the same run) and the DRAM's theoretical peak.
// Build:  make vector_add        Run: ./vector_add [--n=2^27] [--block=256] [--reps=20]
// Output: CPU time, then per version: time, GB/s, % of the D2D copy, % of peak; then PASSED.
#include <string>
#include <vector>
#include <cstdint>
#include "common.cuh"
#include "results.cuh"

// CPU reference.
void vector_add_cpu(const float* a, const float* b, float* c, long long n) {
    for (long long i = 0; i < n; ++i) c[i] = a[i] + b[i];
}

// Version 1, as in the guide: one thread per element. The grid has at least n threads; the ones
// past the end must do nothing, hence the bounds check.
__global__ void vector_add(const float* a, const float* b, float* c, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
#ifdef PLANT_BUG  // for the compute-sanitizer lab: the classic off-by-one, one element past the end
    if (i <= n) c[i] = a[i] + b[i];
#else
    if (i < n) c[i] = a[i] + b[i];
#endif
}

// Version 2: each thread moves 16 bytes per load (float4), in a grid-stride loop sized to fill
// the GPU: a quarter of the memory instructions for the same bytes (nvcc unrolls the loop 4 times:
// 8 LDG.E.128 and 4 STG.E.128 per iteration, tests/sass_claims/01_intro.txt; without __restrict__
// the copies stay in order, two loads then their store, so the unrolled iterations do not overlap). cudaMalloc
// returns 256-byte-aligned pointers, so the float4 view is aligned; the tail (n % 4) is done
// one float at a time.
__global__ void vector_add_vec4(const float* a, const float* b, float* c, long long n) {
    long long n4 = n / 4;
    long long stride = (long long)gridDim.x * blockDim.x;
    const float4* a4 = reinterpret_cast<const float4*>(a);
    const float4* b4 = reinterpret_cast<const float4*>(b);
    float4* c4 = reinterpret_cast<float4*>(c);
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n4; i += stride) {
        float4 x = a4[i], y = b4[i];
        c4[i] = make_float4(x.x + y.x, x.y + y.y, x.z + y.z, x.w + y.w);
    }
    for (long long i = 4 * n4 + blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += stride)
        c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Adds two float vectors on the GPU and compares the bandwidth with cudaMemcpy.");
    // 2^27: three 512 MiB vectors and the D2D baseline's two buffers, 2.5 GiB in all, fit a 4 GB card
    // (tools/peak_memory.py); the README's H100 figures were measured at --n=2^28.
    long long n = args.integer("n", 1LL << 27, 1, 1LL << 31, "number of elements");
    int block = (int)args.integer("block", 256, 32, 1024, "threads per block");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "vector_add", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    size_t bytes = n * sizeof(float);
    std::printf("n = %lld floats (%.1f MB per vector), block = %d\n", n, bytes / 1e6, block);

    std::vector<float> a = random_vector<float>(n, -1.f, 1.f, 1), b = random_vector<float>(n, -1.f, 1.f, 2);
    std::vector<float> ref(n), out(n);
    CpuTimer cpu;
    vector_add_cpu(a.data(), b.data(), ref.data(), n);
    double cpu_ms = cpu.stop_ms();

    // c has a guard of `block` floats after its n elements: the threads of the last block past the
    // end must leave it alone (a kernel without the bounds check writes there; without the guard
    // such a write lands in the allocation's padding and no comparison of c[0..n-1] sees it).
    const size_t guard = block * sizeof(float);
    float *d_a, *d_b, *d_c;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_c, bytes + guard));
    CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));

    long long grid1 = (n + block - 1) / block;  // enough blocks to cover n
    // A full GPU's worth of threads: as many blocks as fit on every SM by its thread limit
    // (maxThreadsPerMultiProcessor: 2048 on sm_80 and sm_90, 1536 on sm_86/89, 1024 on sm_75).
    // The GPU this runs on (dev.real), also under CUDA_LAB_PROFILE: a wave is this GPU's (device.cuh).
    int grid2 = dev.real.multiProcessorCount * (dev.real.maxThreadsPerMultiProcessor / block);
    auto v1 = [&] { vector_add<<<grid1, block>>>(d_a, d_b, d_c, n); };
    auto v2 = [&] { vector_add_vec4<<<grid2, block>>>(d_a, d_b, d_c, n); };

    // Every version is checked before any is timed; the output and its guard are set to a NaN
    // pattern first, so a skipped element cannot pass and a write past the end is seen.
    const std::vector<uint32_t> guard_want(block, 0xffffffffu);
    std::vector<uint32_t> guard_got(block);
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_c, bytes, cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), out.data(), n);
        CHECK(cudaMemcpy(guard_got.data(), d_c + n, guard, cudaMemcpyDeviceToHost));
        verdict.exact(name + ": past the end", guard_want.data(), guard_got.data(), block);
    };
    auto poison = [&] { CHECK(cudaMemset(d_c, 0xff, bytes + guard)); };
    double moved = 3.0 * bytes;  // read a and b, write c
    table.param("n", n);
    table.param("block", block);
    table.baseline_d2d(bytes);
    table.add("vector_add (1 elem/thread)", v1, moved, check, poison);
    table.add("vector_add_vec4 (float4, grid-stride)", v2, moved, check, poison);
    table.column("% of peak", "pct_of_peak", [&](const Results::Version& v) { return 100 * v.rate() / dev.peak_gbps; },
                 "%.1f%%");
    table.column("x CPU", "x_cpu", [&](const Results::Version& v) { return cpu_ms / v.ms; }, "%.0fx");
    std::printf("CPU (1 thread): %.3f ms\n", cpu_ms);
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *best = table.best(), *d2d = table.base();
    if (best && d2d) std::printf("best kernel / cudaMemcpy D2D: %.1f%%\n", 100 * best->rate() / d2d->rate());

    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    return verdict.finish();
}
