// rgb_to_gray - colour to grayscale, one thread per pixel, image in and out through OpenCV.
//
// Manual: N 4.5 图像转化成灰度图 (converting an image to grayscale), 4.5.1 灰度图像算法.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o rgb_to_gray rgb_to_gray.cu
//            $(pkg-config --cflags --libs opencv4)
// Shows:  a 2D grid over the image, a uchar3 per pixel, and the weighted sum that models the
//         eye's sensitivity: gray = 0.299 R + 0.587 G + 0.114 B (the notes round it to
//         0.30 / 0.59 / 0.11; these are OpenCV's weights). OpenCV stores pixels as B, G, R, so
//         in a uchar3 .x is blue and .z is red. The notes' kernel applied 0.30 to .x as if it
//         were red - a bug that made blue things bright and red things dark; fixed here, and
//         the program prints how far the notes' formula lands from OpenCV.
// Build:  make rgb_to_gray        (needs OpenCV)
// Run:    ./rgb_to_gray [--image=photo.jpg] [--out=gray.png] [--width=3840 --height=2160]
// Output: image size, the check against cv::cvtColor(BGR2GRAY) (within 1 level), the notes'
//         error, kernel time and GB/s, then PASSED.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include "common.cuh"
#include "image.h"

// CPU view of the notes' formula, channel order taken from the notes' kernel: (x, y, z) = (B, G, R)
// weighted as if it were (R, G, B). Only used to show the size of that mistake.
uint8_t gray_notes_bug(const uint8_t* bgr) {
    return (uint8_t)(0.30f * bgr[0] + 0.59f * bgr[1] + 0.11f * bgr[2]);
}

// The kernel (the notes' im2gray, fixed). The + 0.5f rounds to nearest as OpenCV does, instead
// of truncating. Width first, then height, as in every kernel here (the notes pass height first).
__global__ void im2gray(const uchar3* in, unsigned char* out, int width, int height) {
    int x = threadIdx.x + blockIdx.x * blockDim.x;
    int y = threadIdx.y + blockIdx.y * blockDim.y;
    if (x < width && y < height) {
        uchar3 bgr = in[y * width + x];  // OpenCV order: .x = B, .y = G, .z = R
        out[y * width + x] = (unsigned char)(0.299f * bgr.z + 0.587f * bgr.y + 0.114f * bgr.x + 0.5f);
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Converts a BGR image to grayscale on the GPU and compares with cv::cvtColor.");
    std::string image = args.text("image", "", "input image (default: a synthetic picture)");
    std::string out_path = args.text("out", "", "write the gray image here (PNG), if given");
    int width = (int)args.integer("width", 3840, 1, 16384, "synthetic image width");
    int height = (int)args.integer("height", 2160, 1, 16384, "synthetic image height");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    cv::Mat src = load_image(image, width, height, CV_8UC3);  // bad path: exit 2, before any CUDA call
    if (!src.isContinuous()) src = src.clone();
    DeviceInfo dev = select_device(args.device());
    width = src.cols;
    height = src.rows;
    size_t pixels = (size_t)width * height;
    std::printf("image %s: %d x %d (%.1f MB BGR)\n", image.empty() ? "(synthetic)" : image.c_str(), width, height,
                pixels * 3 / 1e6);

    cv::Mat ref;
    cv::cvtColor(src, ref, cv::COLOR_BGR2GRAY);  // the reference: OpenCV's fixed-point conversion
    int notes_max = 0;
    for (size_t i = 0; i < pixels; ++i)
        notes_max = std::max(notes_max, std::abs((int)gray_notes_bug(src.data + 3 * i) - (int)ref.data[i]));

    uchar3* d_in;
    unsigned char* d_out;
    CHECK(cudaMalloc(&d_in, pixels * sizeof(uchar3)));
    CHECK(cudaMalloc(&d_out, pixels));
    CHECK(cudaMemcpy(d_in, src.data, pixels * sizeof(uchar3), cudaMemcpyHostToDevice));

    dim3 block(32, 8);  // a warp spans 32 neighbouring pixels of one row: coalesced
    dim3 grid((width + block.x - 1) / block.x, (height + block.y - 1) / block.y);
    auto launch = [&] { im2gray<<<grid, block>>>(d_in, d_out, width, height); };

    // Validate twice, the output first filled with 0x00 and then 0xff: a pixel the kernel skipped
    // cannot be within 1 of the reference both times.
    Verdict verdict;
    cv::Mat gray(height, width, CV_8UC1);
    for (int fill : {0x00, 0xff}) {
        CHECK(cudaMemset(d_out, fill, pixels));
        launch();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(gray.data, d_out, pixels, cudaMemcpyDeviceToHost));
        // OpenCV uses 14-bit fixed-point weights; float weights may round the other way at .5.
        verdict.close(fill ? "im2gray vs cvtColor, +-1 (fill 0xff)" : "im2gray vs cvtColor, +-1 (fill 0x00)",
                      ref.data, gray.data, pixels, 1.0, 0.0);
    }
    size_t off_by_one = 0;
    for (size_t i = 0; i < pixels; ++i) off_by_one += gray.data[i] != ref.data[i];
    std::printf("  pixels off by one level: %zu of %zu; the notes' formula (BGR as RGB) is off by up to %d\n",
                off_by_one, pixels, notes_max);

    double ms = bench_ms(launch, reps);
    double bw = gbps(4.0 * pixels, ms);  // 3 B read + 1 B written per pixel
    std::printf("im2gray: %.3f ms, %.1f GB/s (%.0f%% of the DRAM peak)\n", ms, bw, 100 * bw / dev.peak_gbps);
    if (!out_path.empty()) verdict.note(save_image(out_path, gray), "write --out image");

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
