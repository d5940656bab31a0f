// sobel_texture - Sobel edge detection three ways: global memory, a 2D texture, a shared-memory tile.
//
// Manual: N 4.3 sobel边缘检测 (the notes' Sobel) tied to G 3.2.12 纹理内存和表面内存 and
//         G 3.2.12.1 纹理内存 (clamp addressing handles out-of-range coordinates in hardware).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o sobel_texture sobel_texture.cu
//            $(pkg-config --cflags --libs opencv4)
// Shows:  the 3x3 stencil's centre weight is 0 in both Gx and Gy, so each output reads 8 neighbours
//         and each input pixel is read 8 times. sobel_global_kernel is the kernel of
//         01_intro/sobel_edge.cu (sobel_gpu, same arguments: in, out, width, height) and clamps its indices by hand;
//         sobel_texture_kernel lets the texture unit clamp (cudaAddressModeClamp) and reads from a CUDA
//         array, whose block-linear layout keeps 2D neighbours in the same cache lines;
//         sobel_shared_kernel loads a (32+2) x (8+2) tile with its halo once per block and reads the 8
//         neighbours from shared memory. All three must equal a CPU Sobel with clamped borders
//         exactly. The notes' kernel skipped the borders, read past the last row/column and let
//         (|Gx| + |Gy|) / 2 (up to 1020) wrap in an unsigned char; here the border is clamped and the
//         result saturates at 255.
// Build:  make sobel_texture    Run: ./sobel_texture [--width=8192] [--height=8192] [--image=PATH]
//                                                    [--out=edges.png] [--reps=20]
// Output: CPU time, the three checks, then per version: time, GB/s (1 byte read + 1 written per
//         pixel), ratio to the global-memory version; PASSED.
#include <algorithm>
#include <cstdlib>
#include <vector>
#include "common.cuh"
#include "results.cuh"
#include "image.h"

constexpr int BX = 32, BY = 8;  // block = one shared tile's interior

// CPU reference. Gx = right column - left column, Gy = bottom row - top row (weights 1, 2, 1);
// coordinates outside the image are clamped to the nearest edge pixel.
void sobel_cpu(const unsigned char* in, unsigned char* out, int w, int h) {
    for (int y = 0; y < h; ++y) {
        int ym = std::max(y - 1, 0), yp = std::min(y + 1, h - 1);
        for (int x = 0; x < w; ++x) {
            int xm = std::max(x - 1, 0), xp = std::min(x + 1, w - 1);
            auto p = [&](int xx, int yy) { return (int)in[(size_t)yy * w + xx]; };
            int gx = (p(xp, ym) + 2 * p(xp, y) + p(xp, yp)) - (p(xm, ym) + 2 * p(xm, y) + p(xm, yp));
            int gy = (p(xm, yp) + 2 * p(x, yp) + p(xp, yp)) - (p(xm, ym) + 2 * p(x, ym) + p(xp, ym));
            out[(size_t)y * w + x] = (unsigned char)std::min((std::abs(gx) + std::abs(gy)) / 2, 255);
        }
    }
}

// The same arithmetic on the 3x3 neighbourhood p[row][col], shared by the three kernels.
__device__ __forceinline__ unsigned char sobel_3x3(int p00, int p01, int p02, int p10, int p12, int p20, int p21, int p22) {
    int gx = (p02 + 2 * p12 + p22) - (p00 + 2 * p10 + p20);
    int gy = (p20 + 2 * p21 + p22) - (p00 + 2 * p01 + p02);
    return (unsigned char)min((abs(gx) + abs(gy)) / 2, 255);
}

// Version 1: global memory, borders clamped by hand (the notes' kernel, fixed).
__global__ void sobel_global_kernel(const unsigned char* in, unsigned char* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int xm = max(x - 1, 0), xp = min(x + 1, w - 1);
    const unsigned char* up = in + (size_t)max(y - 1, 0) * w;
    const unsigned char* mid = in + (size_t)y * w;
    const unsigned char* dn = in + (size_t)min(y + 1, h - 1) * w;
    out[(size_t)y * w + x] = sobel_3x3(up[xm], up[x], up[xp], mid[xm], mid[xp], dn[xm], dn[x], dn[xp]);
}

// Version 2: a 2D texture with clamp addressing: no index arithmetic for the border at all.
// Unnormalized coordinates address texel centres at +0.5.
__global__ void sobel_texture_kernel(cudaTextureObject_t tex, unsigned char* out, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float fx = x + 0.5f, fy = y + 0.5f;
    auto t = [&](float dx, float dy) { return (int)tex2D<unsigned char>(tex, fx + dx, fy + dy); };
    out[(size_t)y * w + x] = sobel_3x3(t(-1, -1), t(0, -1), t(1, -1), t(-1, 0), t(1, 0), t(-1, 1), t(0, 1), t(1, 1));
}

// Version 3: the block stages its (BY+2) x (BX+2) neighbourhood (tile + 1-pixel halo) in shared memory,
// so each input byte is read from global memory about once instead of up to 8 times.
__global__ void sobel_shared_kernel(const unsigned char* in, unsigned char* out, int w, int h) {
    __shared__ unsigned char tile[BY + 2][BX + 2];
    int x0 = blockIdx.x * BX - 1, y0 = blockIdx.y * BY - 1;  // image position of tile[0][0]
    for (int k = threadIdx.y * BX + threadIdx.x; k < (BY + 2) * (BX + 2); k += BX * BY) {
        int ty = k / (BX + 2), tx = k % (BX + 2);
        int gx = min(max(x0 + tx, 0), w - 1), gy = min(max(y0 + ty, 0), h - 1);
        tile[ty][tx] = in[(size_t)gy * w + gx];
    }
    __syncthreads();  // every thread of the block, including those past the image edge, gets here
    int x = blockIdx.x * BX + threadIdx.x, y = blockIdx.y * BY + threadIdx.y;
    if (x >= w || y >= h) return;
    int c = threadIdx.x + 1, r = threadIdx.y + 1;
    out[(size_t)y * w + x] = sobel_3x3(tile[r - 1][c - 1], tile[r - 1][c], tile[r - 1][c + 1], tile[r][c - 1],
                                       tile[r][c + 1], tile[r + 1][c - 1], tile[r + 1][c], tile[r + 1][c + 1]);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Sobel through global memory, a clamped 2D texture and a shared-memory tile.");
    int width = (int)args.integer("width", 8192, 1, 32768, "synthetic image width (ignored with --image)");
    int height = (int)args.integer("height", 8192, 1, 32768, "synthetic image height (ignored with --image)");
    std::string image = args.text("image", "", "grayscale input image (default: synthetic)");
    std::string out_path = args.text("out", "", "write the texture version's edges to this PNG");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "sobel_texture", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    cv::Mat img;
    if (!image.empty()) img = load_image(image, 0, 0, CV_8UC1);  // a bad path exits 2 before any CUDA call
    DeviceInfo dev = select_device(args.device());
    if (img.empty()) img = load_image("", width, height, CV_8UC1);
    int w = img.cols, h = img.rows;
    if (w > dev.prop.maxTexture2D[0] || h > dev.prop.maxTexture2D[1]) skip("image larger than maxTexture2D");
    size_t n = (size_t)w * h;
    std::printf("image %d x %d (%s), block %d x %d\n", w, h, image.empty() ? "synthetic" : image.c_str(), BX, BY);
    if (!img.isContinuous()) img = img.clone();

    std::vector<unsigned char> ref(n), out(n);
    CpuTimer cpu;
    sobel_cpu(img.data, ref.data(), w, h);
    double cpu_ms = cpu.stop_ms();

    unsigned char *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n));
    CHECK(cudaMalloc(&d_out, n));
    CHECK(cudaMemcpy(d_in, img.data, n, cudaMemcpyHostToDevice));
    cudaChannelFormatDesc desc = cudaCreateChannelDesc<unsigned char>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &desc, w, h));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img.data, w, w, h, cudaMemcpyHostToDevice));
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td{};
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;  // the border rule, in hardware
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

    dim3 block(BX, BY), grid((w + BX - 1) / BX, (h + BY - 1) / BY);
    // Every version is checked first (in this order); the first version's output is also compared
    // with the others. A skipped pixel keeps 0xff and fails unless the edge is 255.
    std::vector<unsigned char> first(n);
    bool have_first = false;
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_out, n, cudaMemcpyDeviceToHost));
        verdict.exact(name + " vs CPU", ref.data(), out.data(), n);
        if (!have_first) first = out, have_first = true;
        else verdict.exact(name + " vs global", first.data(), out.data(), n);
        if (name.rfind("sobel_texture_kernel", 0) == 0 && !out_path.empty())
            save_image(out_path, cv::Mat(h, w, CV_8UC1, out.data()));
    };
    auto poison = [&] { CHECK(cudaMemset(d_out, 0xff, n)); };
    double moved = 2.0 * n;  // each pixel: 1 byte read (once, ideally) + 1 byte written
    table.param("width", w);
    table.param("height", h);
    table.param("image", image.empty() ? "synthetic" : image);
    table.baseline_d2d(n);
    table.add("sobel_global_kernel", [&] { sobel_global_kernel<<<grid, block>>>(d_in, d_out, w, h); }, moved, check,
              poison);
    table.add("sobel_texture_kernel (clamp)", [&] { sobel_texture_kernel<<<grid, block>>>(tex, d_out, w, h); }, moved,
              check, poison);
    table.add("sobel_shared_kernel (tile+halo)", [&] { sobel_shared_kernel<<<grid, block>>>(d_in, d_out, w, h); },
              moved, check, poison);
    table.speedup_over("sobel_global_kernel");
    std::printf("CPU (1 thread): %.3f ms\n", cpu_ms);
    Verdict verdict;
    table.run(verdict, reps);

    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
