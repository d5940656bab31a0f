// wrap_mode - exercise (find and fix): a circular shift of a periodic signal through a 1D texture.
//
// Manual: G 3.2.12.1 纹理内存 (寻址方式 / addressing mode, 标准化纹理坐标 / normalized coordinates);
//         T "Using texture memory in CUDA" (Wrap 模式).
// Your task: one period of a signal lies in a 1D CUDA array of n texels; circular_shift should
//         return out[i] = in[(i + shift) mod n] for every i, letting the texture unit do the modulo
//         (normalized coordinates, point filtering). The CPU check says it does not. Find the bug
//         and fix it.
// Build and check (from 04_texture): `make exercises` builds workspace/wrap_mode from your copy in
//         workspace/; `make check` runs it and reads its own CPU check.
//         By hand: cd workspace && ./wrap_mode --n=10007 --shift=4321
// Compile by hand (in workspace/): nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o wrap_mode wrap_mode.cu
// Output: a few values, the check of all n, of the texture's addressing mode, of your texture read by
//         the program's kernel and of your kernel on a clamping texture, PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <cstring>
#include <vector>
#include "common.cuh"

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// Sample i reads the centre of texel i + shift, in normalized coordinates (texel k covers
// [k / n, (k + 1) / n)): the coordinate leaves [0, 1) whenever i + shift >= n or < 0.
__global__ void circular_shift(float* out, int n, int shift, cudaTextureObject_t tex) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, ((float)(i + shift) + 0.5f) / (float)n);
}

cudaTextureObject_t make_texture(cudaArray_t arr) {
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = cudaAddressModeWrap;   // frac(x): the coordinate repeats with period 1
    td.filterMode = cudaFilterModePoint;       // the texel itself, no interpolation
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;                   // [0, 1) spans the whole array
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    return tex;
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::circular_shift; using yours::make_texture;
REGION_SIGNATURE(circular_shift, void (*)(float*, int, int, cudaTextureObject_t));
REGION_SIGNATURE(make_texture, cudaTextureObject_t (*)(cudaArray_t));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(random_vector<float>);
}  // namespace yours

// The published sampling line as a kernel of the program's: it reads your texture (make_texture's)
// at texel i + shift, so what wraps there is the texture, whatever your kernel does.
__global__ void sample_shifted(float* out, int n, int shift, cudaTextureObject_t tex) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = tex1D<float>(tex, ((float)(i + shift) + 0.5f) / (float)n);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: circular shift of a periodic signal through a 1D texture; find the bug.");
    int n = (int)args.integer("n", 10007, 1, 65536, "texels in one period");
    int shift = (int)args.integer("shift", 4321, -65536, 65536, "shift in texels (may be negative)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    if (n > dev.prop.maxTexture1D) skip("n exceeds this GPU's maxTexture1D");
    std::printf("n = %d texels, shift %d: out[i] = in[(i + shift) mod n]\n", n, shift);
    std::vector<float> in = random_vector<float>(n, -1.f, 1.f, 1), ref(n), out(n);
    for (int i = 0; i < n; ++i) ref[i] = in[(((long long)i + shift) % n + n) % n];

    cudaChannelFormatDesc ch = cudaCreateChannelDesc<float>();
    cudaArray_t arr;
    CHECK(cudaMallocArray(&arr, &ch, n, 0));  // height 0: a 1D array, as tex1D reads it (height 1 would make it 2D, n x 1)
    CHECK(cudaMemcpy2DToArray(arr, 0, 0, in.data(), n * sizeof(float), n * sizeof(float), 1, cudaMemcpyHostToDevice));
    cudaTextureObject_t tex = make_texture(arr);
    float* d_out;
    CHECK(cudaMalloc(&d_out, n * sizeof(float)));
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(float)));  // NaN: a sample never written fails
    circular_shift<<<(n + 255) / 256, 256>>>(d_out, n, shift, tex);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));

    int last = n - 1;
    std::printf("out[0] = %f (in[%lld] = %f), out[%d] = %f (in[%lld] = %f)\n", out[0],
                ((long long)shift % n + n) % n, ref[0], last, out[last], (((long long)last + shift) % n + n) % n,
                ref[last]);
    Verdict verdict;
    verdict.exact("circular_shift vs CPU", ref.data(), out.data(), n);
    // The exercise is the texture's addressing mode: the hardware wraps, not the kernel's arithmetic.
    cudaTextureDesc used;
    CHECK(cudaGetTextureObjectTextureDesc(&used, tex));
    verdict.check(used.addressMode[0] == cudaAddressModeWrap, "the texture wraps (addressMode[0] = cudaAddressModeWrap)");
    // It wraps when the program's own kernel reads it, too,
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(float)));
    sample_shifted<<<(n + 255) / 256, 256>>>(d_out, n, shift, tex);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    verdict.exact("your texture read by the program's kernel wraps", ref.data(), out.data(), n);
    // and your kernel leaves the wrapping to it: the same launch on a texture of the program's own
    // that clamps must give the clamped samples, in[i + shift] limited to [0, n - 1] (a kernel that
    // wrapped the coordinate itself would give the circular ones).
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaTextureDesc td{};
    td.addressMode[0] = cudaAddressModeClamp;
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 1;
    cudaTextureObject_t clamped;
    CHECK(cudaCreateTextureObject(&clamped, &res, &td, nullptr));
    std::vector<float> ref_clamped(n);
    for (int i = 0; i < n; ++i) ref_clamped[i] = in[std::min(std::max((long long)i + shift, 0LL), (long long)n - 1)];
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(float)));
    circular_shift<<<(n + 255) / 256, 256>>>(d_out, n, shift, clamped);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(float), cudaMemcpyDeviceToHost));
    verdict.exact("circular_shift on a clamping texture clamps (the kernel does not wrap)", ref_clamped.data(),
                  out.data(), n);
    CHECK(cudaDestroyTextureObject(clamped));

    CHECK(cudaDestroyTextureObject(tex));
    CHECK(cudaFreeArray(arr));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
