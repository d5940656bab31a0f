// negate_array - the article's example 1: a texture on linear memory, read with tex1Dfetch, and the
//                kernel writing its result into the very buffer the texture reads.
//
// Manual: T "Using texture memory in CUDA" (CUDA, 用于大量数据的超级运算:第13节), 样例 1: 将纹理绑定到被更新的
//         线性内存上 (negateArray.cu); G 3.2.12.1.1 纹理对象API; G 3.2.12.4 读写一致性.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o negate_array negate_array.cu
// Shows:  a texture object over plain cudaMalloc memory (cudaResourceTypeLinear) - no CUDA array, no
//         filtering, no addressing modes, integer indices only (tex1Dfetch). The kernel reads a[i]
//         through the texture cache and writes -a[i] to the same buffer: allowed, because no thread
//         reads an element that another thread of the same launch wrote (the texture cache is not
//         kept coherent with global writes within one launch, G 3.2.12.4). Then it times the texture
//         path against an ordinary global load on a buffer several times the L2.
// Build:  make negate_array        Run: ./negate_array [--n=2^26] [--reps=20]
// Output: per version: time, GB/s, % of cudaMemcpy D2D; then PASSED.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// CPU reference.
void negate_cpu(const float* in, float* out, long long n) {
    for (long long i = 0; i < n; ++i) out[i] = -in[i];
}

// The article's kernel: the texture object replaces the file-scope texture<float,1> texRef. Fix to the article:
// the article's check loop `for (i = 0; i << N; i++)` never ran (0 << N is 0); here every element is checked.
__global__ void negate_texture(long long n, float* d_out, cudaTextureObject_t tex) {
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx < n) d_out[idx] = -tex1Dfetch<float>(tex, (int)idx);
}

// Baseline: the same in-place negation through an ordinary global load.
__global__ void negate_global(long long n, float* d_a) {
    long long idx = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (idx < n) d_a[idx] = -d_a[idx];
}

// The best version adds one idea: 16-byte accesses. Thread i negates float4 number i, so one load
// instruction of a warp moves 512 bytes instead of 128 and a quarter of the threads carry the same
// bytes. cudaMalloc pointers are 256-byte aligned, so the float4 view is aligned; the last n % 4
// floats are negated by the first threads, one float each.
__global__ void negate_global_vec4(long long n, float* d_a) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x, n4 = n / 4;
    if (i < n4) {
        float4 v = reinterpret_cast<float4*>(d_a)[i];
        reinterpret_cast<float4*>(d_a)[i] = make_float4(-v.x, -v.y, -v.z, -v.w);
    } else if (i < n4 + n % 4) {
        d_a[4 * n4 + (i - n4)] = -d_a[4 * n4 + (i - n4)];
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Negates an array in place, reading it through a texture object on linear memory.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 27, "number of floats (texture on linear memory: <= 2^27)");
    int block = (int)args.integer("block", 256, 32, 1024, "threads per block");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "negate_array", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    // tex1Dfetch addresses at most this many elements of linear memory (2^27 on current GPUs).
    size_t max_width = 0;
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&max_width, &ch, dev.id));
    if ((size_t)n > max_width) skip("--n exceeds this GPU's 1D linear texture width " + std::to_string(max_width));
    size_t bytes = n * sizeof(float);
    std::printf("n = %lld floats (%.1f MB), in place, block = %d\n", n, bytes / 1e6, block);

    std::vector<float> data = random_vector<float>(n, -100.f, 100.f, 1), ref(n), out(n);
    negate_cpu(data.data(), ref.data(), n);

    float* d_a;
    CHECK(cudaMalloc(&d_a, bytes));
    check_texture_alignment(d_a, "d_a");

    // cudaBindTexture(0, texRef, d_a, memSize) becomes a resource description of the linear range.
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = d_a;
    res.res.linear.desc = ch;
    res.res.linear.sizeInBytes = bytes;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);  // filter/address modes are ignored for linear memory
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

    long long grid = (n + block - 1) / block;
    auto v1 = [&] { negate_texture<<<grid, block>>>(n, d_a, tex); };
    auto v2 = [&] { negate_global<<<grid, block>>>(n, d_a); };
    long long grid4 = (n / 4 + n % 4 + block - 1) / block;
    auto v3 = [&] { negate_global_vec4<<<grid4, block>>>(n, d_a); };

    // Every version is checked before timing, each starting from the original data in the buffer.
    // Timing: every run negates again (the sign flips each time); the traffic is the same.
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_a, bytes, cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), out.data(), n);
    };
    auto restore = [&] { CHECK(cudaMemcpy(d_a, data.data(), bytes, cudaMemcpyHostToDevice)); };
    double moved = 2.0 * bytes;  // read a, write a
    table.param("n", n);
    table.param("block", block);
    table.baseline_d2d(bytes);
    table.add("negate_texture (tex1Dfetch, in place)", v1, moved, check, restore);
    table.add("negate_global (ld.global, in place)", v2, moved, check, restore);
    table.add("negate_global_vec4 (float4 loads and stores)", v3, moved, check, restore);
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *t = table.find("negate_texture (tex1Dfetch, in place)"),
                           *g = table.find("negate_global (ld.global, in place)");
    if (t && g)
        std::printf("texture / global time: %.2fx (each element is read once: no reuse for a cache)\n", t->ms / g->ms);

    CHECK(cudaDestroyTextureObject(tex));  // replaces cudaUnbindTexture(texRef)
    CHECK(cudaFree(d_a));
    return verdict.finish();
}
