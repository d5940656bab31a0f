// texture_double - doubles through a texture: texels of int2 over double data, reassembled with
//                  __hiloint2double, bit-exact.
//
// Manual: T "Using texture memory in CUDA" (CUDA, 用于大量数据的超级运算:第13节): "你还可以使用int2 和
//         hiloint2double 以利用双精度值" (use int2 and __hiloint2double for double-precision values);
//         G 3.2.12.1 纹理内存 (texel types: integer and single-precision float components only, at
//         most 32 bits each); G 3.2.12.3 CUDA Array (components of 8, 16 or 32 bits).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o texture_double texture_double.cu
// Shows:  there is no 64-bit texel format, so a double is read as the int2 that holds its bytes:
//         .x = the low 32 bits, .y = the high 32 bits (little-endian), and __hiloint2double(hi, lo)
//         puts them back together without changing a bit. Two views of the same doubles:
//         A) 1D linear memory (cudaMalloc, channel desc <int2>): tex1Dfetch<int2>(tex, i);
//         B) a 2D CUDA array of int2 (cudaMallocArray, point filtering, clamp): tex2D<int2> at texel
//            centres, and at coordinates outside the array, which clamp to the edge texels.
//         The data include -0.0, +-inf, NaNs with payloads, subnormals, DBL_MAX and random doubles;
//         every result is compared bit for bit (as uint64) with the CPU, so a conversion that touched
//         a value (a NaN quieted, a subnormal flushed, hi and lo swapped) would fail. Filtering
//         (cudaFilterModeLinear) is impossible here: it needs float texels, and int2 is read as
//         element type.
// Build:  make texture_double        Run: ./texture_double [--width=1024] [--height=1024]
// Output: three bit-exact checks, the first values as read, PASSED.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>
#include "common.cuh"

uint64_t bits(double d) {
    uint64_t u;
    std::memcpy(&u, &d, sizeof u);
    return u;
}
double from_bits(uint64_t u) {
    double d;
    std::memcpy(&d, &u, sizeof d);
    return d;
}

// A) tex1Dfetch of the int2 that holds element i; hi = .y, lo = .x.
__global__ void fetch_linear(cudaTextureObject_t tex, double* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int2 v = tex1Dfetch<int2>(tex, i);
    out[i] = __hiloint2double(v.y, v.x);
}

// B) tex2D of the int2 texel at (x, y) of a CUDA array, shifted by (dx, dy) texels: with clamp
// addressing, coordinates outside [0, w) x [0, h) return the nearest edge texel.
__global__ void fetch_array(cudaTextureObject_t tex, double* out, int w, int h, int dx, int dy) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    int2 v = tex2D<int2>(tex, x + dx + 0.5f, y + dy + 0.5f);
    out[(size_t)y * w + x] = __hiloint2double(v.y, v.x);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Doubles through int2 textures and __hiloint2double (1D linear memory and a 2D CUDA array), bit-exact.");
    int w = (int)args.integer("width", 1024, 1, 16384, "width (doubles per row)");
    int h = (int)args.integer("height", 1024, 1, 4096, "height (rows; width x height <= 2^26 fits the 1D linear limit)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    size_t n = (size_t)w * h, bytes = n * sizeof(double);
    cudaChannelFormatDesc ch = cudaCreateChannelDesc<int2>();  // two signed 32-bit components per texel
    size_t max_linear = 0;
    CHECK(cudaDeviceGetTexture1DLinearMaxWidth(&max_linear, &ch, dev.id));
    if (n > max_linear) skip("width x height exceeds this GPU's 1D linear texture width " + std::to_string(max_linear));
    std::printf("%d x %d doubles (%.1f MB), each read as one int2 texel (%d-bit x, %d-bit y)\n", w, h, bytes / 1e6,
                ch.x, ch.y);

    // Values that a float path, a flush to zero or a NaN canonicalisation would change, then random ones.
    std::vector<double> data = random_vector<double>(n, -1e300, 1e300, 1);
    // Given as bit patterns and copied bytewise: no host arithmetic touches them on the way.
    const uint64_t special[] = {0x8000000000000000ULL /* -0.0 */, 0x3fd5555555555555ULL /* 1/3 */,
                                0x7ff0000000000000ULL /* +inf */, 0xfff0000000000000ULL /* -inf */,
                                0x7ff8000000000123ULL /* quiet NaN, payload 0x123 */,
                                0xfff4000000000abcULL /* signalling NaN, payload 0x4000000000abc */,
                                0x0000000000000001ULL /* smallest subnormal */, 0x800fffffffffffffULL /* largest negative subnormal */,
                                0x7fefffffffffffffULL /* DBL_MAX */, 0x0010000000000000ULL /* DBL_MIN */};
    for (size_t i = 0; i < sizeof special / sizeof special[0] && i < n; ++i) std::memcpy(&data[i], &special[i], 8);
    std::vector<uint64_t> want(n), got(n);
    for (size_t i = 0; i < n; ++i) want[i] = bits(data[i]);

    // A texture on linear memory must start at a multiple of textureAlignment (cudaResourceDesc docs);
    // cudaMalloc guarantees 256 bytes, which may be less: allocate more and round the base up.
    int tex_align = 0;
    tex_align = device_attribute(cudaDevAttrTextureAlignment, dev.id);
    char* d_raw;
    double* d_out;
    CHECK(cudaMalloc(&d_raw, bytes + tex_align));
    double* d_data = reinterpret_cast<double*>(d_raw + (tex_align - (uintptr_t)d_raw % tex_align) % tex_align);
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_data, data.data(), bytes, cudaMemcpyHostToDevice));
    Verdict verdict;
    auto fetch_back = [&] { CHECK(cudaMemcpy(got.data(), d_out, bytes, cudaMemcpyDeviceToHost)); };

    // A) 1D linear memory: the texture describes the double buffer as n int2 texels.
    cudaResourceDesc lres;
    std::memset(&lres, 0, sizeof lres);
    lres.resType = cudaResourceTypeLinear;
    lres.res.linear.devPtr = d_data;
    lres.res.linear.desc = ch;
    lres.res.linear.sizeInBytes = bytes;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.readMode = cudaReadModeElementType;  // integers come back unconverted; NormalizedFloat is for 8/16 bits
    cudaTextureObject_t ltex = 0;
    CHECK(cudaCreateTextureObject(&ltex, &lres, &td, nullptr));
    CHECK(cudaMemset(d_out, 0, bytes));
    fetch_linear<<<(unsigned)((n + 255) / 256), 256>>>(ltex, d_out, (int)n);
    CHECK_LAUNCH();
    fetch_back();
    verdict.exact("A tex1Dfetch<int2> -> __hiloint2double", want.data(), got.data(), n);

    // B) a 2D CUDA array of int2, filled from the same doubles (8 bytes per texel).
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &ch, w, h));
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, data.data(), w * sizeof(double), w * sizeof(double), h,
                              cudaMemcpyHostToDevice));
    cudaResourceDesc ares;
    std::memset(&ares, 0, sizeof ares);
    ares.resType = cudaResourceTypeArray;
    ares.res.array.array = arr;
    cudaTextureDesc atd = td;
    atd.addressMode[0] = atd.addressMode[1] = cudaAddressModeClamp;
    atd.filterMode = cudaFilterModePoint;  // cudaFilterModeLinear needs float texels: rejected for int2
    cudaTextureObject_t atex = 0;
    CHECK(cudaCreateTextureObject(&atex, &ares, &atd, nullptr));
    dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    CHECK(cudaMemset(d_out, 0, bytes));
    fetch_array<<<grid, block>>>(atex, d_out, w, h, 0, 0);
    CHECK_LAUNCH();
    fetch_back();
    verdict.exact("B tex2D<int2> at texel centres", want.data(), got.data(), n);

    // Shifted by (+3, -2) texels: clamp returns the edge texel's double, still bit-exact.
    const int dx = 3, dy = -2;
    std::vector<uint64_t> want_shift(n);
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x) {
            int sx = std::min(std::max(x + dx, 0), w - 1), sy = std::min(std::max(y + dy, 0), h - 1);
            want_shift[(size_t)y * w + x] = want[(size_t)sy * w + sx];
        }
    CHECK(cudaMemset(d_out, 0, bytes));
    fetch_array<<<grid, block>>>(atex, d_out, w, h, dx, dy);
    CHECK_LAUNCH();
    fetch_back();
    verdict.exact("B tex2D<int2> shifted (+3,-2), clamp", want_shift.data(), got.data(), n);

    std::printf("first values as read (A): ");
    CHECK(cudaMemset(d_out, 0, bytes));
    fetch_linear<<<(unsigned)((n + 255) / 256), 256>>>(ltex, d_out, (int)n);
    CHECK_LAUNCH();
    fetch_back();
    for (size_t i = 0; i < n && i < 6; ++i) std::printf("%s%.17g", i ? ", " : "", from_bits(got[i]));
    std::printf("\n");

    CHECK(cudaDestroyTextureObject(ltex));
    CHECK(cudaDestroyTextureObject(atex));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_raw));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
