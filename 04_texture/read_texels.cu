// read_texels - the article's readTexels: a 1D texture with linear filtering, read at integer coordinates.
//
// Manual: T "Using texture memory in CUDA" (CUDA, 用于大量数据的超级运算:第13节), example readTexels.cu;
//         G 3.2.12.1 纹理内存 (filter mode), G 3.2.12.1.1 纹理对象API.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o read_texels read_texels.cu
// Shows:  a CUDA array of N floats 0, 1, 2, ... read with tex1D at x = 0, 1, 2, ... returns
//         0.0 0.5 1.5 ... 8.5, not 0 1 2 ...: with linear filtering a texel's value sits at its
//         CENTRE, x = i + 0.5. The filter computes xB = x - 0.5, i = floor(xB), a = frac(xB) and returns
//         (1 - a) T[i] + a T[i+1]; at x = 3 that is 0.5 T[2] + 0.5 T[3] = 2.5. At x = 0, T[-1] is
//         clamped to T[0], hence 0.0. Reading at x + 0.5 lands on the centres: 0 1 2 ... exactly.
//         The article used a texture REFERENCE (texture<float,1> texRef + cudaBindTextureToArray), removed
//         in CUDA 12; here the same texture is a texture OBJECT passed to the kernel as an argument.
// Build:  make read_texels        Run: ./read_texels [--n=10]
// Output: the two lines of values (the first is the article's output), the checks, PASSED.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#include "common.cuh"

// The article's printed output for N = 10 (one value per line there, one line here).
static const char* kArticleLine =
    "0.000000 0.500000 1.500000 2.500000 3.500000 4.500000 5.500000 6.500000 7.500000 8.500000";

// CPU reference: the guide's linear filter (Appendix "Texture Fetching") for unnormalized coordinates
// with clamp addressing. T[i] = i and every a here is 0 or 0.5, so the 9-bit weights are exact and
// the GPU must match bit for bit.
float linear_fetch_cpu(const std::vector<float>& t, float x) {
    int n = (int)t.size();
    float xb = x - 0.5f;
    int i = (int)std::floor(xb);
    float a = xb - (float)i;
    auto at = [&](int k) { return t[std::min(std::max(k, 0), n - 1)]; };  // clamp
    return (1.f - a) * at(i) + a * at(i + 1);
}

// The article's kernel, with the texture object as an argument instead of a file-scope reference.
__global__ void readTexels(int n, float* d_out, cudaTextureObject_t tex, float offset) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx < n) d_out[idx] = tex1D<float>(tex, float(idx) + offset);
}

std::string format_values(const std::vector<float>& v, int count) {
    std::string s;
    char buf[32];
    for (int i = 0; i < count; ++i) {
        std::snprintf(buf, sizeof buf, "%s%f", i ? " " : "", v[i]);
        s += buf;
    }
    return s;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Reads a 1D float texture with linear filtering at x and x + 0.5 (the article's readTexels).");
    int n = (int)args.integer("n", 10, 1, 4096, "number of texels (the article uses 10)");
    args.parse_or_exit();

    select_device(args.device());
    const int threads = 256;  // the article's NUM_THREADS
    int blocks = (n + threads - 1) / threads;

    std::vector<float> data(n);
    for (int i = 0; i < n; ++i) data[i] = float(i);  // the article's data: T[i] = i

    // CUDA array: an opaque, 2D-locality-friendly layout that the texture unit can filter.
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &ch, n, 0));  // height 0: a 1D array (height 1 would make it 2D, n x 1)
    // cudaMemcpyToArray (the article's call) is deprecated: cudaMemcpy2DToArray with one row.
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, data.data(), n * sizeof(float), n * sizeof(float), 1,
                              cudaMemcpyHostToDevice));

    // What texRef.normalized = false; texRef.filterMode = cudaFilterModeLinear set on the reference.
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    // A texture<> reference defaulted to clamp; a zeroed cudaTextureDesc means cudaAddressModeWrap (0),
    // which the runtime turns into clamp for unnormalized coordinates anyway. Say it explicitly.
    td.addressMode[0] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

    float* d_out;
    CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    std::vector<float> out(n), ref(n);
    Verdict verdict;
    int show = std::min(n, 10);
    std::printf("N = %d texels, T[i] = i, linear filtering, unnormalized coordinates, clamp\n", n);

    const float offsets[] = {0.f, 0.5f};
    for (float off : offsets) {
        CHECK(cudaMemset(d_out, 0xff, n * sizeof(float)));  // NaN: a thread that writes nothing fails
        readTexels<<<blocks, threads>>>(n, d_out, tex, off);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
        for (int i = 0; i < n; ++i) ref[i] = linear_fetch_cpu(data, float(i) + off);
        std::string line = format_values(out, show);
        std::printf("\ntex1D(x%s), x = 0..%d:%s\n  %s\n", off == 0.f ? "" : " + 0.5", show - 1,
                    n > show ? " (first 10)" : "", line.c_str());
        if (off == 0.f) {
            verdict.exact("tex1D(x) vs guide's linear filter", ref.data(), out.data(), n);
            if (n >= 10) verdict.check(line == kArticleLine, "first 10 == the article's output");
        } else {
            verdict.exact("tex1D(x + 0.5) vs guide's filter", ref.data(), out.data(), n);
            verdict.exact("tex1D(x + 0.5) == T[x] (texel centres)", data.data(), out.data(), n);
        }
    }
    std::printf("\nWhy: texel i covers [i, i+1) and its value sits at i + 0.5; tex1D(3) is halfway between\n"
                "texels 2 and 3 -> 2.5. tex1D(0) would blend T[-1] and T[0]; clamp makes T[-1] = T[0] -> 0.0.\n");

    CHECK(cudaDestroyTextureObject(tex));  // replaces cudaUnbindTexture(texRef)
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
