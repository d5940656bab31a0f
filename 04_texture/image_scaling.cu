// image_scaling - resize a grayscale image by sampling a 2D texture: nearest texel vs hardware bilinear.
//
// Manual: M "计算机视觉-使用纹理内存进行图像缩放" (computer vision: image scaling with texture memory);
//         G 3.2.12.1 纹理内存 (filter modes, read modes); G 3.2.12.1.1 纹理对象API.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o image_scaling image_scaling.cu
//            $(pkg-config --cflags --libs opencv4)
// Shows:  one CUDA array holds the 8-bit image; two texture objects view it. The book's one uses
//         cudaFilterModePoint (nearest texel: blocky). The second uses cudaFilterModeLinear, which needs a
//         float result, so it also sets cudaReadModeNormalizedFloat (8-bit 0..255 -> 0.0..1.0); the
//         texture unit then interpolates the four neighbours in hardware. A third kernel does the same
//         bilinear interpolation by hand from global memory, for comparison. The hardware's weights have
//         8 fractional bits, so it can differ from an exact CPU bilinear by a level or two.
// Build:  make image_scaling
// Run:    ./image_scaling [--image=in.png] [--width=1024 --height=768 (synthetic)] [--ratio=2]
//                         [--out=figures/scaling]   (writes _input.png, _point.png, _bilinear.png)
// Output: sizes, one check per version, time and Gpixel/s per version, PASSED.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include "common.cuh"
#include "results.cuh"
#include "image.h"

// Output pixel (x, y) samples the source at its centre: ((x + 0.5) * inv_x, (y + 0.5) * inv_y) in texel
// units, where texel i covers [i, i + 1) and inv_x = in_w / out_w. The book sampled at x * scale_factor
// (the pixel's corner), which shifts the picture by half an output pixel; the centre is what cv::resize
// does too.
__host__ __device__ inline float src_coord(int x, float inv) { return ((float)x + 0.5f) * inv; }

// CPU reference, nearest texel (cudaFilterModePoint): T[floor(x)], clamped.
unsigned char point_cpu(const cv::Mat& img, float sx, float sy) {
    int ix = std::min(std::max((int)std::floor(sx), 0), img.cols - 1);
    int iy = std::min(std::max((int)std::floor(sy), 0), img.rows - 1);
    return img.at<unsigned char>(iy, ix);
}

// CPU reference, the guide's bilinear filter with clamp: xB = x - 0.5, i = floor(xB), a = frac(xB),
// a rounded to 8 fractional bits when quantize (as the texture unit does); texels read as v / 255.
unsigned char bilinear_cpu(const cv::Mat& img, float sx, float sy, bool quantize) {
    auto axis = [&](float c, int size, int* i0, int* i1, float* a) {
        float xb = c - 0.5f;
        int i = (int)std::floor(xb);
        *a = xb - (float)i;
        if (quantize) *a = std::nearbyint(*a * 256.f) / 256.f;
        *i0 = std::min(std::max(i, 0), size - 1);
        *i1 = std::min(std::max(i + 1, 0), size - 1);
    };
    int x0, x1, y0, y1;
    float a, b;
    axis(sx, img.cols, &x0, &x1, &a);
    axis(sy, img.rows, &y0, &y1, &b);
    auto T = [&](int y, int x) { return img.at<unsigned char>(y, x) / 255.f; };
    float v = (1 - a) * (1 - b) * T(y0, x0) + a * (1 - b) * T(y0, x1) + (1 - a) * b * T(y1, x0) + a * b * T(y1, x1);
    return (unsigned char)std::min(v * 255.f + 0.5f, 255.f);
}

// Version 1, the book's kernel: nearest texel, the 8-bit value returned as is (cudaReadModeElementType).
__global__ void scale_point(unsigned char* out, int out_w, int out_h, float inv_x, float inv_y, cudaTextureObject_t tex) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < out_w && y < out_h) out[(size_t)y * out_w + x] = tex2D<unsigned char>(tex, src_coord(x, inv_x), src_coord(y, inv_y));
}

// Version 2: hardware bilinear. The fetch returns a float in [0, 1]; scale and round back to 8 bits.
__global__ void scale_bilinear(unsigned char* out, int out_w, int out_h, float inv_x, float inv_y, cudaTextureObject_t tex) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out_w || y >= out_h) return;
    float v = tex2D<float>(tex, src_coord(x, inv_x), src_coord(y, inv_y));
    out[(size_t)y * out_w + x] = (unsigned char)fminf(v * 255.f + 0.5f, 255.f);
}

// Version 3: the same bilinear filter by hand from global memory (exact fp32 weights, clamp): four
// scattered loads and the arithmetic per pixel that the texture unit does in version 2.
__global__ void scale_bilinear_global(unsigned char* out, int out_w, int out_h, float inv_x, float inv_y,
                                      const unsigned char* __restrict__ in, int in_w, int in_h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out_w || y >= out_h) return;
    float xb = src_coord(x, inv_x) - 0.5f, yb = src_coord(y, inv_y) - 0.5f;
    int i = (int)floorf(xb), j = (int)floorf(yb);
    float a = xb - i, b = yb - j;
    int x0 = min(max(i, 0), in_w - 1), x1 = min(max(i + 1, 0), in_w - 1);
    int y0 = min(max(j, 0), in_h - 1), y1 = min(max(j + 1, 0), in_h - 1);
    float v = (1 - a) * (1 - b) * in[(size_t)y0 * in_w + x0] + a * (1 - b) * in[(size_t)y0 * in_w + x1] +
              (1 - a) * b * in[(size_t)y1 * in_w + x0] + a * b * in[(size_t)y1 * in_w + x1];
    out[(size_t)y * out_w + x] = (unsigned char)fminf(v + 0.5f, 255.f);
}

cudaTextureObject_t make_texture(cudaArray_t arr, cudaTextureFilterMode filter, cudaTextureReadMode read) {
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = cudaAddressModeClamp;  // the book's choice: edge pixels repeat outward
    td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = filter;
    td.readMode = read;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    return tex;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Scales a grayscale image with texture sampling: point vs hardware bilinear (vs software bilinear).");
    std::string path = args.text("image", "", "grayscale input image; none = a synthetic picture");
    int width = (int)args.integer("width", 1024, 8, 8192, "synthetic image width (ignored with --image)");
    int height = (int)args.integer("height", 768, 8, 8192, "synthetic image height (ignored with --image)");
    double ratio = args.real("ratio", 2.0, 0.125, 8.0, "output size / input size");
    std::string out_prefix = args.text("out", "", "write PREFIX_input.png, PREFIX_point.png, PREFIX_bilinear.png");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "image_scaling", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    cv::Mat img = load_image(path, width, height, CV_8UC1);  // bad path: exit 2, before any CUDA call
    if (!img.isContinuous()) img = img.clone();
    int in_w = img.cols, in_h = img.rows;
    int out_w = std::max(1, (int)std::lround(in_w * ratio)), out_h = std::max(1, (int)std::lround(in_h * ratio));
    if ((double)out_w * out_h > (1 << 28)) {
        std::fprintf(stderr, "error: output %d x %d is too large (at most 2^28 pixels)\n", out_w, out_h);
        return 2;
    }
    float inv_x = (float)in_w / out_w, inv_y = (float)in_h / out_h;  // exact fit, per axis

    select_device(args.device());
    std::printf("input %d x %d (%s) -> output %d x %d (ratio %.3g), clamp addressing\n", in_w, in_h,
                path.empty() ? "synthetic" : path.c_str(), out_w, out_h, ratio);
    size_t out_px = (size_t)out_w * out_h;

    // CPU references.
    cv::Mat ref_point(out_h, out_w, CV_8UC1), ref_bilinear(out_h, out_w, CV_8UC1);
    CpuTimer cpu;
    for (int y = 0; y < out_h; ++y)
        for (int x = 0; x < out_w; ++x)
            ref_bilinear.at<unsigned char>(y, x) = bilinear_cpu(img, src_coord(x, inv_x), src_coord(y, inv_y), true);
    double cpu_ms = cpu.stop_ms();
    for (int y = 0; y < out_h; ++y)
        for (int x = 0; x < out_w; ++x) ref_point.at<unsigned char>(y, x) = point_cpu(img, src_coord(x, inv_x), src_coord(y, inv_y));

    // One CUDA array, two views of it. cudaMemcpy2DToArray takes the Mat's row pitch (img.step).
    cudaChannelFormatDesc ch = cudaCreateChannelDesc(8, 0, 0, 0, cudaChannelFormatKindUnsigned);
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &ch, in_w, in_h));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img.data, img.step, in_w, in_h, cudaMemcpyHostToDevice));
    cudaTextureObject_t tex_point = make_texture(arr, cudaFilterModePoint, cudaReadModeElementType);
    // Linear filtering is only valid for a float result: 8-bit texels must be read as normalized floats.
    cudaTextureObject_t tex_linear = make_texture(arr, cudaFilterModeLinear, cudaReadModeNormalizedFloat);

    unsigned char *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, (size_t)in_w * in_h));
    CHECK(cudaMemcpy(d_in, img.data, (size_t)in_w * in_h, cudaMemcpyHostToDevice));
    CHECK(cudaMalloc(&d_out, out_px));
    dim3 threads(32, 8);
    dim3 blocks((out_w + threads.x - 1) / threads.x, (out_h + threads.y - 1) / threads.y);

    cv::Mat got_point(out_h, out_w, CV_8UC1), got_bilinear(out_h, out_w, CV_8UC1);
    auto copy_back = [&](cv::Mat& got) { CHECK(cudaMemcpy(got.data, d_out, out_px, cudaMemcpyDeviceToHost)); };
    auto check_point = [&](Verdict& verdict, const std::string& name) {
        copy_back(got_point);
        const unsigned char* g = got_point.data;
        cv::Mat expect = ref_point.clone();
        // Nearest texel: a source coordinate within 1/256 below a texel edge may be rounded up to the
        // edge by the texture unit's fixed-point address; there either neighbour is accepted.
        for (int y = 0; y < out_h; ++y)
            for (int x = 0; x < out_w; ++x) {
                float sx = src_coord(x, inv_x), sy = src_coord(y, inv_y);
                bool near_x = std::ceil(sx) - sx < 1.f / 256, near_y = std::ceil(sy) - sy < 1.f / 256;
                if (!near_x && !near_y) continue;
                unsigned char alt = point_cpu(img, near_x ? std::ceil(sx) : sx, near_y ? std::ceil(sy) : sy);
                if (g[(size_t)y * out_w + x] == alt) expect.at<unsigned char>(y, x) = alt;
            }
        verdict.exact(name, expect.data, g, out_px);
    };
    // 9-bit weights: a weight one 1/256 step away moves the value by < 1 level per axis; plus the
    // final rounding. The hand-written version uses exact weights, which differ by up to 1/512.
    auto check_bilinear = [&](cv::Mat& got) {
        return [&](Verdict& verdict, const std::string& name) {
            copy_back(got);
            verdict.close(name, ref_bilinear.data, got.data, out_px, 2, 0.0);
        };
    };
    cv::Mat got_hand(out_h, out_w, CV_8UC1);
    auto poison = [&] { CHECK(cudaMemset(d_out, 0x5a, out_px)); };  // a kernel that skips pixels leaves 0x5a: most mismatch

    double bytes = (double)out_px;  // written; reads mostly hit in cache (each texel is used ~ratio^2 times)
    table.param("width", in_w);
    table.param("height", in_h);
    table.param("ratio", ratio);
    table.add("scale_point (tex2D, point)",
              [&] { scale_point<<<blocks, threads>>>(d_out, out_w, out_h, inv_x, inv_y, tex_point); }, bytes,
              check_point, poison);
    table.add("scale_bilinear (tex2D, linear)",
              [&] { scale_bilinear<<<blocks, threads>>>(d_out, out_w, out_h, inv_x, inv_y, tex_linear); }, bytes,
              check_bilinear(got_bilinear), poison);
    table.add("scale_bilinear_global (by hand)", [&] {
        scale_bilinear_global<<<blocks, threads>>>(d_out, out_w, out_h, inv_x, inv_y, d_in, in_w, in_h);
    }, bytes, check_bilinear(got_hand), poison);
    table.column("Gpixel/s", "gpixel_per_s", [&](const Results::Version& v) { return out_px / (v.ms * 1e6); }, "%.2f");
    table.column("x CPU", "x_cpu", [&](const Results::Version& v) { return cpu_ms / v.ms; }, "%.0fx");
    std::printf("CPU bilinear (1 thread): %.3f ms; GB/s counts the bytes written\n", cpu_ms);
    Verdict verdict;
    table.run(verdict, reps);

    if (table.find("scale_bilinear (tex2D, linear)")) {
        cv::Mat cv_lin;
        cv::resize(img, cv_lin, cv::Size(out_w, out_h), 0, 0, cv::INTER_LINEAR);
        double cv_diff = cv::norm(cv_lin, got_bilinear, cv::NORM_INF);
        std::printf("  (info) max |texture bilinear - cv::resize INTER_LINEAR| = %.0f levels\n", cv_diff);
    }
    if (!out_prefix.empty()) {
        bool ok = save_image(out_prefix + "_input.png", img) && save_image(out_prefix + "_point.png", got_point) &&
                  save_image(out_prefix + "_bilinear.png", got_bilinear);
        verdict.check(ok, "PNG files written");
    }
    const Results::Version *pt = table.find("scale_point (tex2D, point)"),
                           *hw = table.find("scale_bilinear (tex2D, linear)"),
                           *hand = table.find("scale_bilinear_global (by hand)");
    if (pt && hw && hand)
        std::printf("hardware bilinear / point time: %.2fx   hand bilinear / hardware bilinear: %.2fx\n",
                    hw->ms / pt->ms, hand->ms / hw->ms);

    CHECK(cudaDestroyTextureObject(tex_point));
    CHECK(cudaDestroyTextureObject(tex_linear));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
