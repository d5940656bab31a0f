// sobel_edge - 3x3 Sobel edge detection on a grayscale image, one thread per pixel.
//
// Manual: N 4.3 sobel边缘检测 (Sobel edge detection), 4.3.1 基本原理, 4.3.2 代码.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o sobel_edge sobel_edge.cu
//            $(pkg-config --cflags --libs opencv4)
// Shows:  each thread reads the 8 neighbours x0..x8 around its pixel x4 (the centre's weight is 0
//         in both Sobel kernels, so x4 itself is not read), forms the horizontal and vertical
//         gradients Gx, Gy and writes (|Gx| + |Gy|) / 2. As in the notes,
//         the image is smoothed with a 3x3 Gaussian first. Three fixes to the notes' code:
//         (1) its bounds test `x < imgWidth && y < imgHeight` let x+1 and y+1 run one pixel past
//         the image (reading the next row, or past the buffer on the last row), and `x > 0 &&
//         y > 0` never wrote row 0 and column 0; here border pixels replicate their edge
//         neighbour (OpenCV's BORDER_REPLICATE), so every pixel is defined; (2) (|Gx| + |Gy|) / 2
//         reaches 765 and the notes stored it in an unsigned char, so strong edges wrapped
//         around to dark values; here it is clamped to 255; (3) the notes gave the CPU the
//         blurred image and the GPU the raw one; here both get the same input.
//         The same kernel returns in 04_texture/sobel_texture.cu (sobel_global_kernel), timed
//         against a version that reads through a texture and one that stages a shared-memory tile.
// Build:  make sobel_edge         (needs OpenCV)
// Run:    ./sobel_edge [--image=photo.jpg] [--out=edges.png] [--width=3840 --height=2160]
// Output: image size, exact checks against a CPU Sobel and against cv::Sobel, how many pixels
//         the clamp saved from wrapping, kernel time and GB/s, then PASSED.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include "common.cuh"
#include "image.h"

// The 3x3 neighbourhood, as the notes label it:   x0 x1 x2
//                                                 x3 x4 x5
//                                                 x6 x7 x8
// Gx = (x0 + 2 x3 + x6) - (x2 + 2 x5 + x8), Gy = (x0 + 2 x1 + x2) - (x6 + 2 x7 + x8).
__host__ __device__ inline int sobel_sum(int x0, int x1, int x2, int x3, int x5, int x6, int x7, int x8) {
    int gx = (x0 + 2 * x3 + x6) - (x2 + 2 * x5 + x8);
    int gy = (x0 + 2 * x1 + x2) - (x6 + 2 * x7 + x8);
    return (abs(gx) + abs(gy)) / 2;  // 0 .. 765: |Gx| + |Gy| <= 6 x 255
}

// CPU reference, borders replicated.
void sobel_cpu(const uint8_t* in, uint8_t* out, int w, int h, long long* over_255) {
    *over_255 = 0;
    for (int y = 0; y < h; ++y) {
        const uint8_t* up = in + (size_t)std::max(y - 1, 0) * w;
        const uint8_t* mid = in + (size_t)y * w;
        const uint8_t* down = in + (size_t)std::min(y + 1, h - 1) * w;
        for (int x = 0; x < w; ++x) {
            int l = std::max(x - 1, 0), r = std::min(x + 1, w - 1);
            int s = sobel_sum(up[l], up[x], up[r], mid[l], mid[r], down[l], down[x], down[r]);
            *over_255 += s > 255;
            out[(size_t)y * w + x] = (uint8_t)std::min(s, 255);
        }
    }
}

// The notes' sobel_gpu, fixed: clamped neighbour coordinates, clamped result. The notes pass
// (imgHeight, imgWidth); every kernel in this repository takes width first, then height.
__global__ void sobel_gpu(const unsigned char* in, unsigned char* out, int imgWidth, int imgHeight) {
    int x = threadIdx.x + blockDim.x * blockIdx.x;
    int y = threadIdx.y + blockDim.y * blockIdx.y;
    if (x >= imgWidth || y >= imgHeight) return;
    int l = max(x - 1, 0), r = min(x + 1, imgWidth - 1);
    const unsigned char* up = in + (size_t)max(y - 1, 0) * imgWidth;
    const unsigned char* mid = in + (size_t)y * imgWidth;
    const unsigned char* down = in + (size_t)min(y + 1, imgHeight - 1) * imgWidth;
    int s = sobel_sum(up[l], up[x], up[r], mid[l], mid[r], down[l], down[x], down[r]);
    out[(size_t)y * imgWidth + x] = (unsigned char)min(s, 255);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "3x3 Sobel edge detection on the GPU, checked against a CPU Sobel and cv::Sobel.");
    std::string image = args.text("image", "", "input image, read as grayscale (default: a synthetic picture)");
    std::string out_path = args.text("out", "", "write the edge image here (PNG), if given");
    int width = (int)args.integer("width", 3840, 1, 16384, "synthetic image width");
    int height = (int)args.integer("height", 2160, 1, 16384, "synthetic image height");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    cv::Mat img = load_image(image, width, height, CV_8UC1);  // bad path: exit 2, before any CUDA call
    DeviceInfo dev = select_device(args.device());
    cv::Mat src;
    cv::GaussianBlur(img, src, cv::Size(3, 3), 0, 0, cv::BORDER_DEFAULT);  // the notes' denoising step
    width = src.cols;
    height = src.rows;
    size_t pixels = (size_t)width * height;
    std::printf("image %s: %d x %d gray, 3x3 Gaussian blur, then Sobel\n",
                image.empty() ? "(synthetic)" : image.c_str(), width, height);

    cv::Mat ref(height, width, CV_8UC1);
    long long over_255 = 0;
    sobel_cpu(src.data, ref.data, width, height, &over_255);
    // Independent reference: OpenCV's Sobel with the same border rule. Its kernels have the
    // opposite sign (right - left), which |.| removes.
    cv::Mat gx, gy, cv_ref(height, width, CV_8UC1);
    cv::Sobel(src, gx, CV_16S, 1, 0, 3, 1, 0, cv::BORDER_REPLICATE);
    cv::Sobel(src, gy, CV_16S, 0, 1, 3, 1, 0, cv::BORDER_REPLICATE);
    for (int y = 0; y < height; ++y)
        for (int x = 0; x < width; ++x)
            cv_ref.at<uint8_t>(y, x) =
                (uint8_t)std::min((std::abs(gx.at<int16_t>(y, x)) + std::abs(gy.at<int16_t>(y, x))) / 2, 255);

    unsigned char *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, pixels));
    CHECK(cudaMalloc(&d_out, pixels));
    CHECK(cudaMemcpy(d_in, src.data, pixels, cudaMemcpyHostToDevice));  // src is continuous (a new Mat)

    dim3 block(32, 8);  // a warp reads 32 neighbouring pixels of a row (plus the 3 rows it needs)
    dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    auto launch = [&] { sobel_gpu<<<grid, block>>>(d_in, d_out, width, height); };

    Verdict verdict;
    verdict.exact("CPU Sobel vs cv::Sobel (references)", cv_ref.data, ref.data, pixels);
    // Validate twice, the output filled with 0x00 and then 0xff: a skipped pixel fails one of them.
    cv::Mat edges(height, width, CV_8UC1);
    for (int fill : {0x00, 0xff}) {
        CHECK(cudaMemset(d_out, fill, pixels));
        launch();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(edges.data, d_out, pixels, cudaMemcpyDeviceToHost));
        verdict.exact(fill ? "sobel_gpu vs CPU (fill 0xff)" : "sobel_gpu vs CPU (fill 0x00)", ref.data, edges.data,
                      pixels);
    }
    std::printf("  pixels with (|Gx|+|Gy|)/2 > 255, clamped here (the notes' uchar store wrapped them): %lld\n",
                over_255);

    double ms = bench_ms(launch, reps);
    double bw = gbps(2.0 * pixels, ms);  // 1 B read (neighbours come from cache) + 1 B written per pixel
    std::printf("sobel_gpu: %.3f ms, %.1f GB/s (%.0f%% of the DRAM peak)\n", ms, bw, 100 * bw / dev.peak_gbps);
    if (!out_path.empty()) verdict.note(save_image(out_path, edges), "write --out image");

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
