// texture_rotate - the guide's transformKernel: rotate a 2D float image through a texture object with
//                  normalized coordinates, wrap addressing and bilinear filtering.
//
// Manual: G 3.2.12.1.1 纹理对象API (transformKernel); G 3.2.12.1 纹理内存 (normalized coordinates,
//         addressing and filter modes); the guide's appendix "Texture Fetching" for the filter formula.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o texture_rotate texture_rotate.cu
// Shows:  the texture unit does the address arithmetic (wrap: frac(x)) and the bilinear interpolation
//         for free, in hardware. Its interpolation weights are 9-bit fixed point with 8 fractional bits,
//         so the result is NOT the exact bilinear value: the CPU reference implements the guide's formula
//         tex(x,y) = (1-a)(1-b)T[i,j] + a(1-b)T[i+1,j] + (1-a)bT[i,j+1] + abT[i+1,j+1] twice, with exact
//         and with 8-bit-fraction weights, and the GPU is shown to follow the 8-bit one.
// Build:  make texture_rotate        Run: ./texture_rotate [--width=1024] [--height=1024] [--angle=0.5]
// Output: max/mean error against both references, the check, time and Gpixel/s, PASSED.
#include <cmath>
#include <cstring>
#include <vector>
#include "common.cuh"

// CPU reference: the guide's bilinear filter for normalized coordinates with wrap addressing.
// quantize = true rounds each weight to the hardware's 1/256 steps (round to nearest, the observed
// behaviour); false uses the exact fraction.
float tex2d_wrap_linear_cpu(const std::vector<float>& t, int w, int h, float u, float v, bool quantize) {
    auto axis = [&](float c, int size, int* i0, int* i1, float* frac) {
        float x = (c - std::floor(c)) * size - 0.5f;  // wrap: frac(c); then the half-texel shift
        int i = (int)std::floor(x);
        float a = x - (float)i;
        if (quantize) a = std::nearbyint(a * 256.f) / 256.f;  // 9-bit weight, 8 fractional bits
        *i0 = ((i % size) + size) % size;                      // wrap the neighbours too
        *i1 = (*i0 + 1) % size;
        *frac = a;
    };
    int x0, x1, y0, y1;
    float a, b;
    axis(u, w, &x0, &x1, &a);
    axis(v, h, &y0, &y1, &b);
    return (1 - a) * (1 - b) * t[(size_t)y0 * w + x0] + a * (1 - b) * t[(size_t)y0 * w + x1] +
           (1 - a) * b * t[(size_t)y1 * w + x0] + a * b * t[(size_t)y1 * w + x1];
}

// The same coordinate transform as the kernel, in the same float operations.
void rotate_cpu(const std::vector<float>& t, std::vector<float>& out, int w, int h, float theta, bool quantize) {
    const float c = cosf(theta), s = sinf(theta);  // once, not 4 calls per pixel: 2^28 pixels at the largest size
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            float u = x / (float)w - 0.5f, v = y / (float)h - 0.5f;
            float tu = u * c - v * s + 0.5f;
            float tv = v * c + u * s + 0.5f;
            out[(size_t)y * w + x] = tex2d_wrap_linear_cpu(t, w, h, tu, tv, quantize);
        }
}

// The guide's kernel. Fix to the guide: it has no bounds check, so a width or height that is not a multiple
// of the 16x16 block writes past the end of `output`; this one returns early outside the image.
__global__ void transformKernel(float* output, cudaTextureObject_t texObj, int width, int height, float theta) {
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= (unsigned)width || y >= (unsigned)height) return;

    float u = x / (float)width;  // normalized: [0, 1) across the image whatever its size
    float v = y / (float)height;
    u -= 0.5f;  // rotate about the centre
    v -= 0.5f;
    float tu = u * cosf(theta) - v * sinf(theta) + 0.5f;
    float tv = v * cosf(theta) + u * sinf(theta) + 0.5f;
    output[y * width + x] = tex2D<float>(texObj, tu, tv);  // corners fall outside [0,1): wrap
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Rotates a float image with tex2D (wrap, bilinear, normalized coordinates) - the guide's transformKernel.");
    int width = (int)args.integer("width", 1024, 1, 16384, "image width");
    int height = (int)args.integer("height", 1024, 1, 16384, "image height");
    double angle = args.real("angle", 0.5, -10.0, 10.0, "rotation angle in radians (the guide uses 0.5)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    select_device(args.device());
    float theta = (float)angle;
    size_t npix = (size_t)width * height, bytes = npix * sizeof(float);
    std::printf("image %d x %d floats, angle %.3f rad, wrap + linear filtering, normalized coordinates\n", width,
                height, theta);

    // Random texels in [0, 1) (the guide fills h_data[i] = i; neighbours that differ by 1 or by the
    // width, up to 1M at the wrap seam, would make the error figures meaningless).
    std::vector<float> h_data = random_vector<float>(npix, 0.f, 1.f, 1), out(npix), ref9(npix), refx(npix);
    CpuTimer cpu;
    rotate_cpu(h_data, ref9, width, height, theta, true);
    double cpu_ms = cpu.stop_ms();
    rotate_cpu(h_data, refx, width, height, theta, false);

    cudaChannelFormatDesc ch = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
    cudaArray_t cuArray;
    CHECK(cudaMallocArray(&cuArray, &ch, width, height));
    CHECK(cudaMemcpy2DToArray(cuArray, 0, 0, h_data.data(), width * sizeof(float), width * sizeof(float), height,
                              cudaMemcpyHostToDevice));

    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = cuArray;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = cudaAddressModeWrap;  // wrap needs normalizedCoords = 1 (else it becomes clamp)
    td.addressMode[1] = cudaAddressModeWrap;
    td.filterMode = cudaFilterModeLinear;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    cudaTextureObject_t texObj = 0;
    CHECK(cudaCreateTextureObject(&texObj, &res, &td, nullptr));

    float* output;
    CHECK(cudaMalloc(&output, bytes));
    dim3 threads(16, 16);
    dim3 blocks((width + threads.x - 1) / threads.x, (height + threads.y - 1) / threads.y);
    auto launch = [&] { transformKernel<<<blocks, threads>>>(output, texObj, width, height, theta); };

    CHECK(cudaMemset(output, 0xff, bytes));  // NaN: a pixel nobody wrote cannot pass
    launch();
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), output, bytes, cudaMemcpyDeviceToHost));

    double max9 = 0, maxx = 0, sum9 = 0, sumx = 0;
    for (size_t i = 0; i < npix; ++i) {
        double e9 = std::fabs((double)out[i] - ref9[i]), ex = std::fabs((double)out[i] - refx[i]);
        max9 = std::max(max9, e9), maxx = std::max(maxx, ex), sum9 += e9, sumx += ex;
    }
    std::printf("GPU vs CPU, 8-bit-fraction weights: max |err| %.3g  mean %.3g\n", max9, sum9 / npix);
    std::printf("GPU vs CPU, exact weights:          max |err| %.3g  mean %.3g  (a weight off by up to 1/512)\n",
                maxx, sumx / npix);

    // Tolerance, derived from the precisions involved. The filtered value is
    // piecewise bilinear in the texel coordinate with texels in [0, 1), so it moves by at most |dx| + |dy|
    // when the coordinate moves by (dx, dy) texels. Against the exact-weight reference the GPU differs by:
    //  - its weights: 8 fractional bits, so within 1/256 of its own coordinate's fraction, whichever way
    //    the texture unit rounds: 1/256 per axis;
    //  - its blend: the texture unit's interpolation is not IEEE fp32 and NVIDIA does not document its
    //    precision; 1/512 covers what the H100 showed at 1024 x 1024 (1.5 steps in all, against 0.8 for a
    //    model with exact blending);
    //  - its coordinate: tu = u*cos - v*sin + 0.5 in the kernel (its own cosf/sinf, 2 ulp; the compiler
    //    fuses multiply-adds) against the same formula here (host cosf/sinf, separate roundings), then
    //    frac() and * size - 0.5 in fp32 on each side. |tu| < 1.25, so each rounding is at most 2^-24:
    //    about 12 such steps in all, times the size in texels: size * 12 / 2^24 texels per axis. That is
    //    what grows with the image: 0.75 steps of 1/256 at width 4096, 3 at 16384, while fp32 keeps the
    //    coordinate's error below one step only up to about 2^24 / (12 * 256) = 5461 texels.
    // So: 2/256 + 1/512 + (width + height) * 12 / 2^24, plus float rounding of the four products.
    double coord_err = (double)(width + height) * 12.0 / 16777216.0;
    double tol = 2.0 / 256 + 1.0 / 512 + coord_err + 1e-5;
    std::printf("tolerance %.4f: 2.5/256 for 8-bit weights and the blend + %.4f for fp32 coordinates at this size\n",
                tol, coord_err);
    Verdict verdict;
    verdict.close("tex2D vs CPU (exact weights, wrap)", refx.data(), out.data(), npix, tol, 0.0);
    // Which model the GPU follows shows only while fp32 coordinates are finer than the weights' 1/256 steps:
    // past 2 steps of coordinate error (width + height above about 10900) the coordinate noise is as large
    // as the signal (at 1 x 16384 and 16384 x 16384 the H100's mean error is then closer to the exact model),
    // so there the comparison is printed, not asserted.
    if (coord_err <= 2.0 / 256)
        verdict.check(sum9 <= sumx, "closer to 8-bit weights than exact");  // equal only if every weight is k/256
    else
        std::printf("mean error %s the 8-bit model: not asserted at this size (fp32 coordinate error up to %.1f"
                    " steps of 1/256 hides the weights' rounding)\n", sum9 <= sumx ? "closer to" : "farther from",
                    coord_err * 256);

    double ms = bench_ms(launch, reps);
    double moved = 2.0 * bytes;  // each pixel: one float written, about one texel's worth read
    std::printf("\nCPU reference (1 thread)  %9.3f ms\n", cpu_ms);
    std::printf("transformKernel           %9.3f ms  %7.2f Gpixel/s  %7.1f GB/s (read + write)  %6.0fx CPU\n", ms,
                npix / (ms * 1e6), gbps(moved, ms), cpu_ms / ms);

    CHECK(cudaDestroyTextureObject(texObj));
    CHECK(cudaFreeArray(cuArray));
    CHECK(cudaFree(output));
    return verdict.finish();
}
