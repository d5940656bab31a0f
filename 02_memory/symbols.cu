// symbols - variables declared in the global and constant memory spaces (__device__,
// __constant__), reached from the host through their symbols; and why constant memory wants
// every thread of a warp to read the same address.
//
// Manual: G 3.2.2 设备存储 (device memory): cudaMemcpyToSymbol / cudaMemcpyFromSymbol,
//         cudaGetSymbolAddress, cudaGetSymbolSize; G 5.3.2 设备内存访问, "常量内存" (a request
//         is split into as many requests as there are different addresses in it).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o symbols symbols.cu
// Shows:  the guide's constData / devData / devPointer examples with checked results and sizes;
//         then the constant cache: a warp reading one address gets it broadcast in one request,
//         a warp reading 32 different addresses is served in 32 requests one after the other.
// Build:  make symbols           Run: ./symbols [--n=2^20] [--iters=256] [--reps=20]
// Output: the symbol checks, then the uniform and divergent kernel times and their ratio; PASSED.
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

const int CONST_N = 256;
__constant__ float constData[CONST_N];  // the guide's names; 1 KB of the 64 KB constant space
__device__ float devData;
__device__ float* devPointer;

// CPU reference for the constant-cache kernels: thread i of a block of `block` threads starts
// from in[i] and adds constData entries in order (only additions: no FMA, so the GPU's float
// sum is bit-identical). `divergent` shifts the index by threadIdx.x.
void const_sum_cpu(const float* c, const float* in, float* out, long long n, int iters, int block, bool divergent) {
    for (long long i = 0; i < n; ++i) {
        int lane = divergent ? (int)(i % block) : 0;
        float sum = in[i];
        for (int k = 0; k < iters; ++k) sum += c[(k + lane) & (CONST_N - 1)];
        out[i] = sum;
    }
}

// Reads both __device__ variables: the value of devData, and the buffer devPointer points to.
__global__ void use_device_symbols(long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) devPointer[i] = devData + (float)i;
}

// Every thread of the warp reads constData[k]: one address, broadcast by the constant cache. In the
// SASS the read is a ULDC (a load of the uniform datapath, once per warp into a uniform register),
// the divergent kernel's an LDC per thread (tests/sass_claims/02_memory.txt).
__global__ void const_uniform(const float* in, float* out, long long n, int iters) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = in[i];
    for (int k = 0; k < iters; ++k) sum += constData[k & (CONST_N - 1)];
    out[i] = sum;
}

// Thread t reads constData[k + t]: 32 addresses per warp, so 32 serialized requests.
__global__ void const_divergent(const float* in, float* out, long long n, int iters) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float sum = in[i];
    for (int k = 0; k < iters; ++k) sum += constData[(k + threadIdx.x) & (CONST_N - 1)];
    out[i] = sum;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "__constant__ and __device__ symbols; constant cache broadcast vs divergent reads.");
    long long n = args.integer("n", 1LL << 20, 1, 1LL << 26, "threads (elements) of the constant-cache kernels");
    int iters = (int)args.integer("iters", 256, 1, 4096, "constant reads per thread");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "symbols", Results::TIME_ONLY);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    const int block = 256;
    unsigned grid = (unsigned)((n + block - 1) / block);
    Verdict verdict;

    // Sizes as the runtime reports them (cudaGetSymbolSize) vs the declarations: the runtime against
    // the program's own declarations, so notes. The API round trips below are notes too; what the
    // GPU makes of the symbols is checked by the kernels (devData / devPointer, the constant reads).
    size_t size = 0;
    CHECK(cudaGetSymbolSize(&size, constData));
    verdict.note(size == CONST_N * sizeof(float), "cudaGetSymbolSize(constData) = " + std::to_string(size));
    CHECK(cudaGetSymbolSize(&size, devData));
    verdict.note(size == sizeof(float), "cudaGetSymbolSize(devData) = " + std::to_string(size));
    CHECK(cudaGetSymbolSize(&size, devPointer));
    verdict.note(size == sizeof(float*), "cudaGetSymbolSize(devPointer) = " + std::to_string(size));
    std::printf("  (constant memory on this GPU: %zu KB in all)\n", dev.prop.totalConstMem >> 10);

    // constData: to the symbol and back.
    std::vector<float> data = random_vector<float>(CONST_N, -1.f, 1.f, 1), back(CONST_N, -99.f);
    CHECK(cudaMemcpyToSymbol(constData, data.data(), CONST_N * sizeof(float)));
    CHECK(cudaMemcpyFromSymbol(back.data(), constData, CONST_N * sizeof(float)));
    verdict.note(back == data, "constData to/from symbol");

    // devData by value; its address (cudaGetSymbolAddress) is an ordinary device pointer.
    float value = 3.14f, got = 0.f;
    CHECK(cudaMemcpyToSymbol(devData, &value, sizeof(float)));
    float* addr = nullptr;
    CHECK(cudaGetSymbolAddress((void**)&addr, devData));
    CHECK(cudaMemcpy(&got, addr, sizeof(float), cudaMemcpyDeviceToHost));
    verdict.note(got == value, "devData read through its address");

    // devPointer: the symbol holds a pointer to a cudaMalloc'ed buffer that kernels write through.
    float* ptr = nullptr;
    CHECK(cudaMalloc(&ptr, n * sizeof(float)));
    CHECK(cudaMemset(ptr, 0xff, n * sizeof(float)));  // NaN: an element the kernel skips cannot pass
    CHECK(cudaMemcpyToSymbol(devPointer, &ptr, sizeof(ptr)));
    float* ptr_back = nullptr;
    CHECK(cudaMemcpyFromSymbol(&ptr_back, devPointer, sizeof(ptr)));
    verdict.note(ptr_back == ptr, "devPointer holds the cudaMalloc pointer");
    use_device_symbols<<<grid, block>>>(n);
    CHECK_LAUNCH();
    std::vector<float> out(n), ref(n);
    CHECK(cudaMemcpy(out.data(), ptr, n * sizeof(float), cudaMemcpyDeviceToHost));
    for (long long i = 0; i < n; ++i) ref[i] = value + (float)i;
    verdict.exact("kernel via devData / devPointer", ref.data(), out.data(), n);

    // Constant cache: validate both access patterns, then time them.
    std::vector<float> in = random_vector<float>(n, -1.f, 1.f, 2);
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(float)));
    CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    auto uniform = [&] { const_uniform<<<grid, block>>>(d_in, d_out, n, iters); };
    auto divergent = [&] { const_divergent<<<grid, block>>>(d_in, d_out, n, iters); };
    auto check = [&](Verdict& verdict, const std::string& name) {
        bool div = name.rfind("const_divergent", 0) == 0;
        CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
        const_sum_cpu(data.data(), in.data(), ref.data(), n, iters, block, div);
        verdict.exact(div ? "const_divergent vs CPU" : "const_uniform vs CPU", ref.data(), out.data(), n);
    };
    auto poison = [&] { CHECK(cudaMemset(d_out, 0xff, n * sizeof(float))); };
    double reads = (double)n * iters;  // constant reads per kernel
    table.param("n", n);
    table.param("iters", iters);
    table.add("const_uniform   (1 address per warp)", uniform, reads, check, poison);
    table.add("const_divergent (32 addresses per warp)", divergent, reads, check, poison);
    table.column("G reads/s", "greads_per_s", [](const Results::Version& v) { return v.work / (v.ms * 1e6); }, "%.1f");
    table.speedup_over("const_uniform   (1 address per warp)");
    table.run(verdict, reps);
    const Results::Version *u = table.find("const_uniform   (1 address per warp)"),
                           *d = table.find("const_divergent (32 addresses per warp)");
    if (u && d)
        std::printf("divergent / uniform: %.1fx slower (the guide: one request per distinct address, up to 32)\n",
                    d->ms / u->ms);

    CHECK(cudaFree(ptr));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
