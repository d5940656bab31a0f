// texel_centre - exercise (find and fix): enlarge an 8-bit image with hardware bilinear filtering.
//
// Manual: M "计算机视觉-使用纹理内存进行图像缩放" (image scaling with texture memory);
//         G 3.2.12.1 纹理内存 (filter modes: cudaFilterModeLinear, the texel-centre convention).
// Your task: upscale enlarges a grayscale image `ratio` times; the texture unit interpolates
//         (cudaFilterModeLinear, cudaReadModeNormalizedFloat, unnormalized coordinates). The CPU
//         reference, the guide's bilinear filter sampled at the centre of every output pixel, does
//         not agree with it. Find the bug in the GPU code and fix it.
// Build and check (from 04_texture): `make exercises` builds workspace/texel_centre from your copy
//         in workspace/; `make check` runs it and reads its own CPU check.
//         By hand: cd workspace && ./texel_centre --width=509 --height=307 --ratio=2
// Compile by hand (in workspace/): nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o texel_centre texel_centre.cu
// Output: the sizes, the check of every output pixel, PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>
#include "common.cuh"

// CPU reference, the guide's linear filter (appendix "Texture Fetching") with clamp: xB = x - 0.5,
// i = floor(xB), a = frac(xB); texels read as v / 255. Exact weights: the hardware's have 8
// fractional bits (up to 1/256 off: one level of 255 per axis) and its blend rounds too, so the
// check allows 4 levels; a wrong filter or coordinate is off by tens of levels on random pixels.
float bilinear_cpu(const std::vector<unsigned char>& img, int w, int h, float sx, float sy) {
    auto axis = [](float c, int size, int* i0, int* i1, float* a) {
        int i = (int)std::floor(c - 0.5f);
        *a = (c - 0.5f) - (float)i;
        *i0 = std::min(std::max(i, 0), size - 1);
        *i1 = std::min(std::max(i + 1, 0), size - 1);
    };
    int x0, x1, y0, y1;
    float a, b;
    axis(sx, w, &x0, &x1, &a);
    axis(sy, h, &y0, &y1, &b);
    auto T = [&](int y, int x) { return img[(size_t)y * w + x] / 255.f; };
    return (1 - a) * (1 - b) * T(y0, x0) + a * (1 - b) * T(y0, x1) + (1 - a) * b * T(y1, x0) + a * b * T(y1, x1);
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// Output pixel (x, y) covers [x, x + 1) x [y, y + 1) of the output; inv = 1 / ratio maps it onto
// the input, whose texel i covers [i, i + 1) with its value at i + 0.5.
__global__ void upscale(unsigned char* out, int out_w, int out_h, float inv, cudaTextureObject_t tex) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= out_w || y >= out_h) return;
    float v = tex2D<float>(tex, ((float)x + 0.5f) * inv, ((float)y + 0.5f) * inv);  // pixel centre; v in [0, 1]
    out[(size_t)y * out_w + x] = (unsigned char)(v * 255.f + 0.5f);
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::upscale;
REGION_SIGNATURE(upscale, void (*)(unsigned char*, int, int, float, cudaTextureObject_t));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(bilinear_cpu); REGION_GUARD(random_vector<unsigned char>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: enlarges an 8-bit image with hardware bilinear filtering; find the bug.");
    // At most 2048 x 2048 x ratio 8: 2^28 output pixels, about 2.4 GB of host memory and as many
    // bilinear evaluations on the CPU (8192 x 8192 held ~39 GB).
    int w = (int)args.integer("width", 509, 1, 2048, "input width in pixels");
    int h = (int)args.integer("height", 307, 1, 2048, "input height in pixels");
    int ratio = (int)args.integer("ratio", 2, 2, 8, "enlargement factor");
    args.parse_or_exit();

    select_device(args.device());
    int ow = w * ratio, oh = h * ratio;
    float inv = 1.f / (float)ratio;
    std::printf("%d x %d 8-bit image -> %d x %d, hardware bilinear\n", w, h, ow, oh);
    std::vector<unsigned char> img = random_vector<unsigned char>((size_t)w * h, 0, 255, 1);
    std::vector<unsigned char> out((size_t)ow * oh);
    std::vector<float> ref((size_t)ow * oh), got((size_t)ow * oh);
    for (int y = 0; y < oh; ++y)
        for (int x = 0; x < ow; ++x)
            ref[(size_t)y * ow + x] = 255.f * bilinear_cpu(img, w, h, ((float)x + 0.5f) * inv, ((float)y + 0.5f) * inv);

    cudaChannelFormatDesc ch = cudaCreateChannelDesc<unsigned char>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &ch, w, h));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, img.data(), w, w, h, cudaMemcpyHostToDevice));
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModeLinear;         // needs a float result:
    td.readMode = cudaReadModeNormalizedFloat;    // 0..255 is read as 0.0..1.0
    td.normalizedCoords = 0;
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));

    unsigned char* d_out;
    CHECK(cudaMalloc(&d_out, out.size()));
    CHECK(cudaMemset(d_out, 0, out.size()));
    dim3 block(16, 16), grid((ow + 15) / 16, (oh + 15) / 16);
    upscale<<<grid, block>>>(d_out, ow, oh, inv, tex);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, out.size(), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < out.size(); ++i) got[i] = out[i];

    Verdict verdict;
    verdict.close("upscale vs CPU bilinear (4 levels)", ref.data(), got.data(), ref.size(), 4.0, 0.0);

    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
