// shared_dynamic - static vs dynamic shared memory, and the opt-in above 48 KB per block.
//
// Manual: N 5.4.2 申请共享内存 (allocating shared memory: 静态申请 / 动态申请);
//         G 3.2.4 共享内存 (Shared Memory); G 5.2.3 多处理器层次 (static + dynamic = a block's total).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o shared_dynamic shared_dynamic.cu
// Shows:  the same in-block reverse written three ways. (1) a static array `__shared__ int s[256]`
//         whose size is fixed at compile time; (2) `extern __shared__ int s[]` whose size is the third
//         launch parameter <<<grid, block, bytes>>>, so one kernel serves any block size; (3) a block
//         that needs more than 48 KB. 48 KB is all a launch may ask for by default; more (up to
//         sharedMemPerBlockOptin: 64 KB on sm_75, 163 KB on sm_80, 227 KB on sm_90) must be dynamic
//         and the kernel must opt in with cudaFuncSetAttribute(cudaFuncAttributeMaxDynamicSharedMemorySize).
//         The program launches (3) without the opt-in first and shows the documented error
//         (cudaErrorInvalidValue, non-sticky), then opts in and launches it again.
//         Fixes to the notes' code: they write `treadIdx` and `dynamicFun<<1, n, n*sizeof(int)>>`,
//         which do not compile; the launch needs <<<...>>>. Their `__shared__ int s[64]` is written
//         at s[t] by n threads (past its end for n > 64); here array and block share kStaticBlock.
// Build:  make shared_dynamic   Run: ./shared_dynamic [--n=2^26] [--block=512] [--smem-kb=64] [--reps=20]
// Output: function attributes before/after the opt-in, the failed and the successful launch, each
//         version's check, time and GB/s; then PASSED.
#include <algorithm>
#include <vector>
#include "common.cuh"
#include "results.cuh"

constexpr int kStaticBlock = 256;  // the static version's array size = its block size

// CPU reference: reverse every segment of `seg` elements (the last one may be shorter).
void reverse_segments_cpu(const int* in, int* out, long long n, long long seg) {
    for (long long base = 0; base < n; base += seg) {
        long long len = std::min(seg, n - base);
        for (long long i = 0; i < len; ++i) out[base + i] = in[base + len - 1 - i];
    }
}

// (1) Static: the size is part of the kernel, known to the compiler (and to ptxas -v).
__global__ void reverse_static(const int* in, int* out, long long n) {
    __shared__ int s[kStaticBlock];
    long long base = (long long)blockIdx.x * kStaticBlock;
    int len = (int)min((long long)kStaticBlock, n - base);  // the last block may be partial
    int t = threadIdx.x;
    if (t < len) s[t] = in[base + t];
    __syncthreads();  // thread t reads what thread len-1-t wrote
    if (t < len) out[base + t] = s[len - 1 - t];
}

// (2) Dynamic: one unsized extern array; its bytes come from the launch (blockDim.x ints here).
__global__ void reverse_dynamic(const int* in, int* out, long long n) {
    extern __shared__ int s[];
    long long base = (long long)blockIdx.x * blockDim.x;
    int len = (int)min((long long)blockDim.x, n - base);
    int t = threadIdx.x;
    if (t < len) s[t] = in[base + t];
    __syncthreads();
    if (t < len) out[base + t] = s[len - 1 - t];
}

// (3) A segment larger than 48 KB per block: each thread moves seg / blockDim elements.
__global__ void reverse_large(const int* in, int* out, long long n, int seg) {
    extern __shared__ int s[];
    long long base = (long long)blockIdx.x * seg;
    int len = (int)min((long long)seg, n - base);
    for (int i = threadIdx.x; i < len; i += blockDim.x) s[i] = in[base + i];
    __syncthreads();
    for (int i = threadIdx.x; i < len; i += blockDim.x) out[base + i] = s[len - 1 - i];
}

// (4) The best version: the dynamic kernel with 16-byte accesses. Each thread moves kVec int4 in
// and out of global memory (4x the bytes per instruction, all its loads issued before the barrier)
// and reads shared memory as int4 too, swapping the four ints of the mirrored int4. A block's
// segment is blockDim.x * 4 * kVec ints; it starts at a multiple of that, so whole segments are
// 16-byte aligned. The partial last segment goes one int at a time.
constexpr int kVec = 2;
__global__ void reverse_dynamic_vec4(const int* in, int* out, long long n) {
    extern __shared__ __align__(16) int sv[];
    int seg = blockDim.x * 4 * kVec;
    long long base = (long long)blockIdx.x * seg;
    int len = (int)min((long long)seg, n - base);
    if (len == seg) {
        const int4* in4 = reinterpret_cast<const int4*>(in + base);
        int4* out4 = reinterpret_cast<int4*>(out + base);
        int4* s4 = reinterpret_cast<int4*>(sv);
        int4 v[kVec];
#pragma unroll
        for (int k = 0; k < kVec; ++k) v[k] = in4[threadIdx.x + k * blockDim.x];
#pragma unroll
        for (int k = 0; k < kVec; ++k) s4[threadIdx.x + k * blockDim.x] = v[k];
        __syncthreads();
        int quads = seg / 4;
#pragma unroll
        for (int k = 0; k < kVec; ++k) {
            int j = threadIdx.x + k * blockDim.x;
            int4 m = s4[quads - 1 - j];
            out4[j] = make_int4(m.w, m.z, m.y, m.x);
        }
    } else {
        for (int i = threadIdx.x; i < len; i += blockDim.x) sv[i] = in[base + i];
        __syncthreads();
        for (int i = threadIdx.x; i < len; i += blockDim.x) out[base + i] = sv[len - 1 - i];
    }
}

void print_attributes(const char* when, const void* kernel) {
    cudaFuncAttributes a;
    CHECK(cudaFuncGetAttributes(&a, kernel));
    std::printf("  reverse_large %-16s static %zu B, maxDynamicSharedSizeBytes %d B\n", when, a.sharedSizeBytes,
                a.maxDynamicSharedSizeBytes);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "In-block reverse with static and dynamic shared memory, and the >48 KB opt-in.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 30, "number of ints");
    int block = (int)args.integer("block", 512, 32, 1024, "threads per block of the dynamic version");
    int smem_kb = (int)args.integer("smem-kb", 64, 49, 1024, "KB of shared memory per block of version 3 (> 48)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "shared_dynamic", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    size_t big = (size_t)smem_kb * 1024;
    // Under CUDA_LAB_PROFILE: the smaller of the profile's limit and this GPU's (device.cuh), since the
    // opt-in below is set on this GPU.
    if (big > dev.smem_optin()) {
        std::fprintf(stderr, "error: --smem-kb=%d exceeds this GPU's opt-in limit of %zu KB per block\n", smem_kb,
                     dev.smem_optin() / 1024);
        return 2;
    }
    int seg = (int)(big / sizeof(int));
    size_t bytes = n * sizeof(int);
    std::printf("n = %lld ints (%.1f MB); sharedMemPerBlock %zu KB, sharedMemPerBlockOptin %zu KB\n", n, bytes / 1e6,
                dev.prop.sharedMemPerBlock / 1024, dev.prop.sharedMemPerBlockOptin / 1024);

    std::vector<int> in = random_vector<int>(n, -1000000, 1000000, 3), out(n), ref(n);
    int *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));
    Verdict verdict;

    // Version 3 without the opt-in: the launch itself is refused (nothing runs, nothing is sticky).
    long long grid3 = (n + seg - 1) / seg;
    int block3 = 1024;
    std::printf("version 3 asks for %d KB of dynamic shared memory per block:\n", smem_kb);
    print_attributes("(default):", (const void*)reverse_large);
    reverse_large<<<grid3, block3, big>>>(d_in, d_out, n, seg);
    cudaError_t err = cudaGetLastError();  // reads and clears the launch error
    std::printf("  launch without opt-in: %s (%s)\n", cudaGetErrorName(err), cudaGetErrorString(err));
    verdict.check(err == cudaErrorInvalidValue, "no opt-in: launch -> cudaErrorInvalidValue");
    verdict.check(cudaGetLastError() == cudaSuccess, "launch error is not sticky");

    // Beyond the device's opt-in limit the attribute itself is refused: the limit of the GPU this runs
    // on (dev.real), also under CUDA_LAB_PROFILE, whose smaller limit the runtime does not know.
    err = cudaFuncSetAttribute(reverse_large, cudaFuncAttributeMaxDynamicSharedMemorySize,
                               (int)dev.real.sharedMemPerBlockOptin + 1024);
    std::printf("  opt-in above sharedMemPerBlockOptin: %s\n", cudaGetErrorName(err));
    verdict.check(err == cudaErrorInvalidValue, "opt-in > limit -> cudaErrorInvalidValue");
    (void)cudaGetLastError();  // clear it: a refused attribute is not sticky either

    CHECK(cudaFuncSetAttribute(reverse_large, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)big));
    print_attributes("(after opt-in):", (const void*)reverse_large);

    // Each version reverses segments of its own length (its block's share of shared memory).
    auto check_segments = [&](long long seg_len) {
        return [&, seg_len](Verdict& verdict, const std::string& name) {
            CHECK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
            reverse_segments_cpu(in.data(), ref.data(), n, seg_len);
            verdict.exact(name, ref.data(), out.data(), n);
        };
    };
    auto poison = [&] { CHECK(cudaMemset(d_out, 0xff, bytes)); };  // -1 everywhere: an element left unwritten cannot pass
    long long grid1 = (n + kStaticBlock - 1) / kStaticBlock, grid2 = (n + block - 1) / block;
    double moved = 2.0 * bytes;  // read + write each int
    table.param("n", n);
    table.param("block", block);
    table.param("smem_kb", smem_kb);
    table.baseline_d2d(bytes);
    table.add("1 static __shared__ int s[256]", [&] { reverse_static<<<grid1, kStaticBlock>>>(d_in, d_out, n); },
              moved, check_segments(kStaticBlock), poison);
    table.add("2 extern __shared__, block*4 B",
              [&] { reverse_dynamic<<<grid2, block, block * sizeof(int)>>>(d_in, d_out, n); }, moved,
              check_segments(block), poison);
    table.add("3 extern __shared__, opted in", [&] { reverse_large<<<grid3, block3, big>>>(d_in, d_out, n, seg); },
              moved, check_segments(seg), poison);
    long long seg4 = (long long)block * 4 * kVec, grid4 = (n + seg4 - 1) / seg4;
    table.add("4 extern __shared__, int4 x2 per thread",
              [&] { reverse_dynamic_vec4<<<grid4, block, seg4 * sizeof(int)>>>(d_in, d_out, n); }, moved,
              check_segments(seg4), poison);
    table.run(verdict, reps);
    const Results::Version *st = table.find("1 static __shared__ int s[256]"),
                           *dyn = table.find("2 extern __shared__, block*4 B");
    // Static and dynamic shared memory are the same hardware; what can differ is the code: with a
    // compile-time size the compiler knows the array bounds, with a run-time size it does not.
    if (st && dyn)
        std::printf("dynamic (block %d) / static (block %d) time: %.2fx - the same shared memory; a gap comes\n"
                    "from the block size and the code (compile-time vs run-time array size), not the memory\n",
                    block, kStaticBlock, dyn->ms / st->ms);

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
