// texture_float4 - one float4 texture fetch against four float fetches of the same 16 bytes.
//
// Manual: T "Using texture memory in CUDA" (CUDA, 用于大量数据的超级运算:第13节): "如果可能,就打包数据,
//         因为单个的float4纹理读取比四个单独的float纹理读取要快" (a tip from the forums: pack the data, one
//         float4 fetch is faster than four float fetches); G 3.2.12.1 纹理内存 (texel types: 1-, 2- and
//         4-component vectors).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o texture_float4 texture_float4.cu
// Shows:  the same cudaMalloc buffer of n float4 seen through two texture objects on linear memory:
//         one with a float4 channel (cudaCreateChannelDesc<float4>: one tex1Dfetch<float4> per thread,
//         one fetch instruction, PTX tex.1d.v4.f32) and one with a float channel (four
//         tex1Dfetch<float> at 4i .. 4i+3: four tex.1d.v4.f32, each filling one of its four values). Each thread writes x + y + z + w, so both
//         read 16 bytes and write 4; the CPU computes the same sum in the same order, so both are
//         checked bit-exactly. A plain global float4 load is the third row. The buffer is several
//         times the L2, so the texture cache cannot hold it: what differs is the number of fetch
//         instructions and texture requests per byte.
// Build:  make texture_float4        Run: ./texture_float4 [--n=2^24] [--block=256] [--reps=20]
// Output: per version: time, GB/s, % of cudaMemcpy D2D; the 4 x float / float4 time ratio; PASSED.
#include <cstdint>
#include <cstring>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// CPU reference: the sum in the order the kernels add.
void sum4_cpu(const float4* in, float* out, long long n) {
    for (long long i = 0; i < n; ++i) out[i] = ((in[i].x + in[i].y) + in[i].z) + in[i].w;
}

// One fetch of a float4 texel: 16 bytes in one texture instruction.
__global__ void sum_tex_float4(cudaTextureObject_t tex4, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = tex1Dfetch<float4>(tex4, (int)i);
    out[i] = ((v.x + v.y) + v.z) + v.w;
}

// Four fetches of float texels from a float view of the same memory.
__global__ void sum_tex_4x_float(cudaTextureObject_t tex1, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int j = (int)(4 * i);
    float x = tex1Dfetch<float>(tex1, j), y = tex1Dfetch<float>(tex1, j + 1), z = tex1Dfetch<float>(tex1, j + 2),
          w = tex1Dfetch<float>(tex1, j + 3);
    out[i] = ((x + y) + z) + w;
}

// Baseline: one 16-byte global load (ld.global.v4.f32).
__global__ void sum_global_float4(const float4* in, float* out, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    float4 v = in[i];
    out[i] = ((v.x + v.y) + v.z) + v.w;
}

// A texture object over `bytes` of linear memory at d, texel type given by ch.
cudaTextureObject_t linear_texture(void* d, size_t bytes, cudaChannelFormatDesc ch) {
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = d;
    res.res.linear.desc = ch;
    res.res.linear.sizeInBytes = bytes;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.readMode = cudaReadModeElementType;
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    return tex;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "One float4 texture fetch vs four float fetches of the same data (T: pack the data).");
    long long n = args.integer("n", 1LL << 24, 1, 1LL << 25,
                               "float4 elements (the float view has 4n texels: 4n <= 2^27, the 1D linear limit)");
    int block = (int)args.integer("block", 256, 32, 1024, "threads per block");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "texture_float4", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    cudaChannelFormatDesc ch4 = cudaCreateChannelDesc<float4>(), ch1 = cudaCreateChannelDesc<float>();
    size_t max4 = 0, max1 = 0;  // the 1D linear limit counts texels, whatever their size
    CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&max4, &ch4, dev.id));
    CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&max1, &ch1, dev.id));
    if ((size_t)n > max4 || (size_t)(4 * n) > max1)
        skip("--n exceeds this GPU's 1D linear texture width (" + std::to_string(max1) + " float texels)");
    size_t in_bytes = n * sizeof(float4), out_bytes = n * sizeof(float);
    std::printf("n = %lld float4 (%.1f MB in, %.1f MB out), block = %d\n", n, in_bytes / 1e6, out_bytes / 1e6, block);

    std::vector<float> flat = random_vector<float>(4 * n, -1.f, 1.f, 1), ref(n), out(n);
    const float4* h_in = reinterpret_cast<const float4*>(flat.data());
    sum4_cpu(h_in, ref.data(), n);

    // A texture on linear memory must start at a multiple of textureAlignment (cudaResourceDesc docs).
    // cudaMalloc guarantees 256 bytes, which may be less: allocate more and round the base up.
    int tex_align = 0;
    tex_align = device_attribute(cudaDevAttrTextureAlignment, dev.id);
    char* d_raw;
    float* d_out;
    CHECK(cudaMalloc(&d_raw, in_bytes + tex_align));
    float4* d_in = reinterpret_cast<float4*>(d_raw + (tex_align - (uintptr_t)d_raw % tex_align) % tex_align);
    CHECK(cudaMalloc(&d_out, out_bytes));
    CHECK(cudaMemcpy(d_in, flat.data(), in_bytes, cudaMemcpyHostToDevice));
    cudaTextureObject_t tex4 = linear_texture(d_in, in_bytes, ch4);  // texel = 16 bytes
    cudaTextureObject_t tex1 = linear_texture(d_in, in_bytes, ch1);  // texel = 4 bytes, same memory

    long long grid = (n + block - 1) / block;
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_out, out_bytes, cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), out.data(), n);
    };
    auto poison = [&] { CHECK(cudaMemset(d_out, 0xff, out_bytes)); };  // NaN: an unwritten element fails
    double moved = (double)in_bytes + out_bytes;
    table.param("n", n);
    table.param("block", block);
    table.baseline_d2d((in_bytes + out_bytes) / 2);  // the same bytes moved as a kernel
    const char *k4 = "tex1Dfetch<float4> x 1", *k1 = "tex1Dfetch<float> x 4", *kg = "global float4 load";
    table.add(k4, [&] { sum_tex_float4<<<grid, block>>>(tex4, d_out, n); }, moved, check, poison);
    table.add(k1, [&] { sum_tex_4x_float<<<grid, block>>>(tex1, d_out, n); }, moved, check, poison);
    table.add(kg, [&] { sum_global_float4<<<grid, block>>>(d_in, d_out, n); }, moved, check, poison);
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *v4 = table.find(k4), *v1 = table.find(k1);
    if (v4 && v1)
        std::printf("4 x float / 1 x float4 fetch time: %.2fx (T: the float4 fetch is faster; > 1 agrees)\n",
                    v1->ms / v4->ms);

    CHECK(cudaDestroyTextureObject(tex4));
    CHECK(cudaDestroyTextureObject(tex1));
    CHECK(cudaFree(d_raw));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
