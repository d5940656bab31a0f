// layered_texture - a 2D layered texture: one CUDA array, many 2D layers, filtering within a layer only.
//
// Manual: G 3.2.12.1.4 分层纹理 (layered textures).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o layered_texture layered_texture.cu
// Shows:  a 2D layered texture is a CUDA array made by cudaMalloc3DArray() with the cudaArrayLayered
//         flag (depth = number of layers) and fetched with tex2DLayered(tex, x, y, layer): the layer is
//         an integer index, x and y are float coordinates. Linear filtering mixes the four nearest
//         texels of ONE layer, never texels of the next layer. Layer L holds values in
//         [8 (L mod 4), 8 (L mod 4) + 1), so any two neighbouring layers differ by >= 7: a fetch that
//         mixed in even 1/256 of another layer would be off by >= 7/256 = 0.027, well beyond the
//         2/256 tolerance of the 8-bit filter weights. (Offsets stay small so fp32 rounding of the
//         interpolation, ~1e-6 here, does not eat into that tolerance.)
// Build:  make layered_texture    Run: ./layered_texture [--width=509] [--height=321] [--layers=8]
//                                                        [--samples=2^20]
// Output: the array shape, the largest |GPU - CPU| overall and at the layer's edges (where clamp
//         addressing must repeat the edge texel of the same layer), the checks, PASSED.
#include <algorithm>
#include <cmath>
#include <vector>
#include "common.cuh"

// CPU reference: bilinear filtering as in the guide's "linear filtering" appendix, unnormalized
// coordinates, clamp addressing, texel indices clamped inside the SAME layer (no cross-layer mixing).
float bilinear_layer_cpu(const float* data, int w, int h, int layer, float x, float y) {
    const float* t = data + (size_t)layer * w * h;
    double xb = (double)x - 0.5, yb = (double)y - 0.5;
    double fx = std::floor(xb), fy = std::floor(yb);
    double a = xb - fx, b = yb - fy;  // the hardware stores these with 8 fractional bits
    auto at = [&](long long i, long long j) {
        i = std::min<long long>(std::max<long long>(i, 0), w - 1);
        j = std::min<long long>(std::max<long long>(j, 0), h - 1);
        return (double)t[j * w + i];
    };
    long long i = (long long)fx, j = (long long)fy;
    return (float)((1 - a) * (1 - b) * at(i, j) + a * (1 - b) * at(i + 1, j) + (1 - a) * b * at(i, j + 1) +
                   a * b * at(i + 1, j + 1));
}

// One fetch per sample: coordinates and layer come from arrays so the CPU can replay them.
__global__ void fetch_layered(cudaTextureObject_t tex, const float* xs, const float* ys, const int* layers,
                              float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex2DLayered<float>(tex, xs[i], ys[i], layers[i]);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "2D layered texture (tex2DLayered): linear filtering stays inside one layer.");
    int w = (int)args.integer("width", 509, 1, 16384, "layer width in texels");
    int h = (int)args.integer("height", 321, 1, 16384, "layer height in texels");
    int layers = (int)args.integer("layers", 8, 1, 2048, "number of layers");
    int n = (int)args.integer("samples", 1 << 20, 1, 1 << 26, "number of random fetches");
    args.parse_or_exit();

    if ((long long)w * h * layers > (1LL << 28)) {
        std::fprintf(stderr, "error: width*height*layers must be <= 2^28 texels\n%s", args.usage().c_str());
        return 2;
    }
    DeviceInfo dev = select_device(args.device());
    if (w > dev.prop.maxTexture2DLayered[0] || h > dev.prop.maxTexture2DLayered[1] ||
        layers > dev.prop.maxTexture2DLayered[2])
        skip("layered texture larger than this GPU's maxTexture2DLayered");
    std::printf("2D layered texture: %d x %d texels x %d layers (float), %d random fetches\n", w, h, layers, n);

    // Layer L holds values in [8 (L mod 4), 8 (L mod 4) + 1): neighbouring layers are >= 7 apart.
    size_t texels = (size_t)w * h * layers;
    std::vector<float> data = random_vector<float>(texels, 0.f, 1.f, 1);
    for (size_t k = 0; k < texels; ++k) data[k] += 8.f * (float)((k / ((size_t)w * h)) % 4);

    // Coordinates reach 1.5 texels past each edge to exercise clamp addressing at the layer border.
    std::vector<float> xs = random_vector<float>(n, -1.5f, w + 1.5f, 2), ys = random_vector<float>(n, -1.5f, h + 1.5f, 3);
    std::vector<int> ls = random_vector<int>(n, 0, layers - 1, 4);
    std::vector<float> ref(n), out(n);
    for (int i = 0; i < n; ++i) ref[i] = bilinear_layer_cpu(data.data(), w, h, ls[i], xs[i], ys[i]);

    // A layered array is a 3D allocation whose depth counts layers; the flag tells the hardware not
    // to filter along that third dimension.
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CHECK(cudaMalloc3DArray(&arr, &desc, make_cudaExtent(w, h, layers), cudaArrayLayered));
    cudaMemcpy3DParms cp{};
    cp.srcPtr = make_cudaPitchedPtr(data.data(), w * sizeof(float), w, h);
    cp.dstArray = arr;
    cp.extent = make_cudaExtent(w, h, layers);  // in elements, since one side is a CUDA array
    cp.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&cp));

    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

    float *d_x, *d_y, *d_out;
    int* d_l;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CHECK(cudaMalloc(&d_l, n * sizeof(int)));
    CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CHECK(cudaMemcpy(d_x, xs.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_y, ys.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_l, ls.data(), n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(float)));  // NaN: a skipped sample cannot pass

    int block = 256;
    fetch_layered<<<(n + block - 1) / block, block>>>(tex, d_x, d_y, d_l, d_out, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));

    // Error statistics, separately for samples whose 2x2 footprint touches a layer edge.
    double max_err = 0, max_edge = 0;
    long long edge = 0;
    for (int i = 0; i < n; ++i) {
        double e = std::fabs((double)out[i] - ref[i]);
        if (std::isnan(e)) e = INFINITY;
        max_err = std::max(max_err, e);
        bool at_edge = xs[i] < 1.f || xs[i] > w - 1.f || ys[i] < 1.f || ys[i] > h - 1.f;
        if (at_edge) ++edge, max_edge = std::max(max_edge, e);
    }
    // Tolerance: the filter weights alpha, beta have 8 fractional bits (G "linear filtering"), so each
    // is off by < 1/256; with texel differences < 1 inside a layer the result is off by < 2/256.
    const double tol = 2.0 / 256;
    std::printf("max |GPU - CPU|            %.6f  (tolerance %.6f: 8-bit filter weights)\n", max_err, tol);
    std::printf("max |GPU - CPU| at edges   %.6f  (%lld samples whose footprint touches a layer edge)\n",
                max_edge, edge);
    std::printf("mixing in 1/256 of another layer would add >= %.4f (layers differ by >= 7)\n", 7.0 / 256);

    Verdict verdict;
    verdict.close("tex2DLayered vs CPU (one layer)", ref.data(), out.data(), n, tol, 0.0);
    verdict.check(max_edge <= tol, "clamp repeats the same layer's edge");

    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    CHECK(cudaFree(d_l));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
