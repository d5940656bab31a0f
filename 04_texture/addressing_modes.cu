// addressing_modes - what a texture returns for coordinates outside it: clamp, border, wrap, mirror,
//                    with normalized and with unnormalized coordinates.
//
// Manual: G 3.2.12.1 纹理内存 (寻址方式 / addressing mode, 纹理坐标是否标准化 / normalized coordinates);
//         T "Using texture memory in CUDA" (Wrap 模式, 钳制 / clamp).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o addressing_modes addressing_modes.cu
// Shows:  a 1D texture of N texels sampled at the centres of texels -2N .. 3N-1, i.e. well outside it
//         on both sides, with point filtering. Each mode is checked against the guide's formulas on
//         the CPU: clamp -> nearest edge texel; border -> 0; wrap -> frac(x) = x - floor(x); mirror ->
//         frac(x) if floor(x) is even, 1 - frac(x) if odd. Wrap and mirror exist only for normalized
//         coordinates: with unnormalized ones the runtime switches them to clamp (runtime API reference,
//         cudaCreateTextureObject), which is checked too.
// Build:  make addressing_modes        Run: ./addressing_modes [--n=5]
// Output: for each mode and coordinate kind, the texel index returned for a window of coordinates
//         ('.' = border zero), then the checks and PASSED.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>
#include "common.cuh"

// CPU reference: the guide's formulas, for point filtering at texel coordinate x (in texels, so x / N
// is the normalized coordinate). Returns the texel index, or -1 for the border value 0.
int address_cpu(cudaTextureAddressMode mode, bool normalized, double x, int n) {
    if (!normalized && (mode == cudaAddressModeWrap || mode == cudaAddressModeMirror))
        mode = cudaAddressModeClamp;  // documented fallback for unnormalized coordinates
    double c = x / n;                 // normalized coordinate
    switch (mode) {
        case cudaAddressModeBorder: return (c < 0.0 || c >= 1.0) ? -1 : (int)std::floor(x);
        case cudaAddressModeWrap: return (int)std::floor((c - std::floor(c)) * n);
        case cudaAddressModeMirror: {
            double f = c - std::floor(c);
            double m = ((long long)std::floor(c) % 2 == 0) ? f : 1.0 - f;
            return std::min((int)std::floor(m * n), n - 1);
        }
        default: return std::min(std::max((int)std::floor(x), 0), n - 1);  // clamp to [0, N)
    }
}

// Sample i reads texel coordinate x = first + i + 0.5 (a texel centre), in the texture's own units.
__global__ void sample(float* out, int count, cudaTextureObject_t tex, int first, float scale) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < count) out[i] = tex1D<float>(tex, ((float)(first + i) + 0.5f) * scale);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Samples a 1D texture far outside its range with each addressing mode (clamp/border/wrap/mirror).");
    int n = (int)args.integer("n", 5, 1, 4096, "number of texels");
    args.parse_or_exit();

    select_device(args.device());
    int first = -2 * n, count = 5 * n;  // texel coordinates [-2N, 3N)
    std::printf("N = %d texels, point filtering, samples at texel centres %d.5 .. %d.5\n", n, first, first + count - 1);

    // Random texel values in [1, 2): distinct from the border value 0 and from each other.
    std::vector<float> texels = random_vector<float>(n, 1.f, 2.f, 1);
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &ch, n, 0));  // height 0: a 1D array (height 1 would make it 2D, n x 1)
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, texels.data(), n * sizeof(float), n * sizeof(float), 1, cudaMemcpyHostToDevice));
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;

    float* d_out;
    CHECK(cudaMalloc(&d_out, count * sizeof(float)));
    std::vector<float> out(count), ref(count);

    struct Mode { cudaTextureAddressMode mode; const char* name; };
    const Mode modes[] = {{cudaAddressModeClamp, "clamp"}, {cudaAddressModeBorder, "border"},
                          {cudaAddressModeWrap, "wrap"}, {cudaAddressModeMirror, "mirror"}};
    // Printed window: the texture and up to 20 coordinates around it (the checks cover all 5N).
    int pad = n <= 16 ? std::min((20 - n) / 2, 2 * n) : 0;
    int win0 = n <= 16 ? -pad : -10, win = n <= 16 ? n + 2 * pad : 20;
    std::printf("%-22s x =", "texel index returned");
    for (int i = 0; i < win; ++i) std::printf("%3d", win0 + i);
    std::printf("\n");

    Verdict verdict;
    for (int normalized = 1; normalized >= 0; --normalized)
        for (const Mode& m : modes) {
            cudaTextureDesc td;
            std::memset(&td, 0, sizeof td);
            td.addressMode[0] = m.mode;
            td.filterMode = cudaFilterModePoint;
            td.readMode = cudaReadModeElementType;
            td.normalizedCoords = normalized;  // borderColor stays {0,0,0,0}
            cudaTextureObject_t tex = 0;
            CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

            CHECK(cudaMemset(d_out, 0xff, count * sizeof(float)));  // NaN: an unwritten sample fails
            sample<<<(count + 127) / 128, 128>>>(d_out, count, tex, first, normalized ? 1.f / n : 1.f);
            CHECK_LAUNCH();
            CHECK(cudaMemcpy(out.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));
            CHECK(cudaDestroyTextureObject(tex));

            std::string row;
            for (int i = 0; i < count; ++i) {
                int t = address_cpu(m.mode, normalized, first + i + 0.5, n);
                ref[i] = t < 0 ? 0.f : texels[t];
            }
            for (int i = win0 - first; i < win0 - first + win; ++i) {
                int k = -2;  // which texel did the GPU return? (values are distinct)
                for (int t = 0; t < n; ++t)
                    if (out[i] == texels[t]) k = t;
                if (out[i] == 0.f) k = -1;
                char buf[8];
                std::snprintf(buf, sizeof buf, "%3s", k == -1 ? "." : k == -2 ? "?" : std::to_string(k).c_str());
                row += buf;
            }
            std::string label = std::string(normalized ? "normalized   " : "unnormalized ") + m.name;
            std::printf("%-25s %s\n", label.c_str(), row.c_str());
            verdict.exact(label, ref.data(), out.data(), count);
        }
    std::printf("(unnormalized wrap/mirror read as clamp: the runtime switches them, as documented)\n");

    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
