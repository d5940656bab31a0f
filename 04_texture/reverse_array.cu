// reverse_array - the article's example 2: reverseArray_multiblock reading its input through a texture.
//
// Manual: T "Using texture memory in CUDA" (CUDA, 用于大量数据的超级运算:第13节), 样例 2: 重新访问
//         reverseArray_multiblock.cu 样例 (reverseArray_multiblockTexture.cu); G 3.2.12.1.1 纹理对象API.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o reverse_array reverse_array.cu
// Shows:  the only change from the global-memory kernel is where the input comes from: d_in[in]
//         becomes tex1Dfetch<int>(tex, in). Block b of the grid writes the mirror-image block at the
//         other end, each thread its mirror element, so reads and writes are both coalesced. The
//         article's index formula assumes n is a multiple of the block size; this version works for
//         any n. Both kernels are timed on buffers several times the L2.
// Build:  make reverse_array        Run: ./reverse_array [--n=2^26] [--block=256] [--reps=20]
// Output: per version: time, GB/s, % of cudaMemcpy D2D; the texture/global ratio; PASSED.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// CPU reference.
void reverse_cpu(const int* in, int* out, long long n) {
    for (long long i = 0; i < n; ++i) out[n - 1 - i] = in[i];
}

// Fix to the article: it computes out = blockDim.x * (gridDim.x - 1 - blockIdx.x) + (blockDim.x - 1 -
// threadIdx.x), which equals gridDim.x * blockDim.x - 1 - in: correct only when the grid covers n
// exactly (its dimA = 256K is a multiple of 256). With a partial last block that formula shifts every
// element by the padding, so this version writes to n - 1 - in and skips threads past the end.
__global__ void reverseArrayBlock(int* d_out, const int* d_in, long long n) {
    long long in = blockDim.x * (long long)blockIdx.x + threadIdx.x;
    if (in < n) d_out[n - 1 - in] = d_in[in];
}

// The article's reverseArrayTexture: the texture object replaces the file-scope texture<int, 1> tex_d_a.
__global__ void reverseArrayTexture(int* d_out, cudaTextureObject_t tex, long long n) {
    long long in = blockDim.x * (long long)blockIdx.x + threadIdx.x;
    if (in < n) d_out[n - 1 - in] = tex1Dfetch<int>(tex, (int)in);
}

// The best version adds one idea: 16-byte accesses. Thread i reads int4 number i (aligned:
// cudaMalloc pointers are 256-byte aligned) and writes its four ints, in reverse order, to the
// mirror positions n - 4 - 4i .. n - 1 - 4i. Those form an aligned int4 only when n % 4 == 0, so
// the kernel takes that as a template parameter: with it, one 16-byte store; without it, four
// 4-byte stores. The last n % 4 inputs (at the front of the output) go one int each.
template <bool MirrorAligned>
__global__ void reverseArrayVec4(int* d_out, const int* d_in, long long n) {
    long long i = blockDim.x * (long long)blockIdx.x + threadIdx.x, n4 = n / 4;
    if (i < n4) {
        int4 v = reinterpret_cast<const int4*>(d_in)[i];
        long long o = n - 4 - 4 * i;  // first of the four mirror positions
        if (MirrorAligned) {
            reinterpret_cast<int4*>(d_out)[o / 4] = make_int4(v.w, v.z, v.y, v.x);
        } else {
            d_out[o] = v.w;
            d_out[o + 1] = v.z;
            d_out[o + 2] = v.y;
            d_out[o + 3] = v.x;
        }
    } else if (i < n4 + n % 4) {
        long long j = 4 * n4 + (i - n4);
        d_out[n - 1 - j] = d_in[j];
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Reverses an int array, reading it through a texture object (reverseArray_multiblockTexture).");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 27, "number of ints (texture on linear memory: <= 2^27)");
    int block = (int)args.integer("block", 256, 32, 1024, "threads per block (the article's numThreadsPerBlock)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "reverse_array", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<int>();
    size_t max_width = 0;
    CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&max_width, &ch, dev.id));
    if ((size_t)n > max_width) skip("--n exceeds this GPU's 1D linear texture width " + std::to_string(max_width));
    size_t bytes = n * sizeof(int);
    std::printf("n = %lld ints (%.1f MB per buffer), block = %d\n", n, bytes / 1e6, block);

    // Random input (the article's h_a[i] = i would hide some index errors behind a symmetric pattern).
    std::vector<int> h_a = random_vector<int>(n, -1000000, 1000000, 1), ref(n), out(n);
    reverse_cpu(h_a.data(), ref.data(), n);

    int *d_a, *d_b;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMemcpy(d_a, h_a.data(), bytes, cudaMemcpyHostToDevice));
    check_texture_alignment(d_a, "d_a");

    // cudaBindTexture(NULL, tex_d_a, d_a) becomes a texture object over the linear range d_a.
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeLinear;
    res.res.linear.devPtr = d_a;
    res.res.linear.desc = ch;
    res.res.linear.sizeInBytes = bytes;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.readMode = cudaReadModeElementType;  // the reference's default; ints come back unconverted
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

    long long grid = (n + block - 1) / block;
    auto v1 = [&] { reverseArrayBlock<<<grid, block>>>(d_b, d_a, n); };
    auto v2 = [&] { reverseArrayTexture<<<grid, block>>>(d_b, tex, n); };
    long long grid4 = (n / 4 + n % 4 + block - 1) / block;
    auto v3 = [&] {
        if (n % 4 == 0)
            reverseArrayVec4<true><<<grid4, block>>>(d_b, d_a, n);
        else
            reverseArrayVec4<false><<<grid4, block>>>(d_b, d_a, n);
    };

    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_b, bytes, cudaMemcpyDeviceToHost));  // waits for the kernel (the article's
        verdict.exact(name, ref.data(), out.data(), n);                      // cudaThreadSynchronize() is gone)
    };
    auto poison = [&] { CHECK(cudaMemset(d_b, 0xff, bytes)); };  // -1 everywhere: an element nobody wrote cannot pass
    double moved = 2.0 * bytes;  // read d_a, write d_b
    table.param("n", n);
    table.param("block", block);
    table.baseline_d2d(bytes);
    table.add("reverseArrayBlock (global load)", v1, moved, check, poison);
    table.add("reverseArrayTexture (tex1Dfetch)", v2, moved, check, poison);
    table.add(n % 4 == 0 ? "reverseArrayVec4 (int4 loads and stores)" : "reverseArrayVec4 (int4 loads, n % 4 != 0: int stores)",
              v3, moved, check, poison);
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *g = table.find("reverseArrayBlock (global load)"),
                           *t = table.find("reverseArrayTexture (tex1Dfetch)");
    if (t && g) std::printf("texture / global time: %.2fx\n", t->ms / g->ms);

    CHECK(cudaDestroyTextureObject(tex));  // replaces cudaUnbindTexture(tex_d_a)
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    return verdict.finish();
}
