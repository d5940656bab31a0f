// texture_pitch2d - a 2D texture on pitched linear memory (cudaResourceTypePitch2D) that kernels
//                   rewrite between launches: each launch's texture fetches see the previous
//                   launch's plain global stores.
//
// Manual: T "Using texture memory in CUDA" (CUDA, 用于大量数据的超级运算:第13节): "CUDA Toolkit 2.2 引入了
//         向...与线性内存绑定的2D纹理写入的能力" (a 2D texture on linear memory that kernels update: no
//         copy into a CUDA array), "更新支持纹理缓存的内存直到下一个内核调用时才可见", and its advice to
//         bind 2D textures to cudaMallocPitch memory "这样纹理单元边界处理就会正确运作";
//         G 3.2.12.1.2 [[已弃用]] 纹理引用 API ("建议使用 cudaMallocPitch() 在线性内存中分配二维纹理");
//         G 3.2.12.3 CUDA Array (arrays are written only through surfaces); G 3.2.12.4 读写一致性.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o texture_pitch2d texture_pitch2d.cu
// Shows:  two cudaMallocPitch buffers A and B, each seen through a 2D texture object with
//         resType = cudaResourceTypePitch2D (width, height, pitchInBytes from cudaMallocPitch) and
//         clamp addressing. One smoothing step reads the 4 neighbours of every pixel through the
//         texture (the texture unit clamps at the border) and writes their mean with ordinary stores
//         into the other buffer. Rounds ping-pong A -> B -> A ...: from round 2 on, every texture
//         reads memory that the previous launch wrote, and texture A's cache was filled with A's old
//         contents in round 1. After every round the written buffer is compared bit-exactly with
//         the CPU doing the same rounds (clamping by hand): one stale texel would propagate and fail.
// Build:  make texture_pitch2d        Run: ./texture_pitch2d [--width=2048] [--height=2048] [--rounds=4]
// Output: the pitch cudaMallocPitch chose, one check per round, PASSED.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include "common.cuh"

// CPU reference: one smoothing step with the border clamped by hand (what cudaAddressModeClamp does).
void smooth_cpu(const std::vector<float>& in, std::vector<float>& out, int w, int h) {
    auto at = [&](int x, int y) { return in[(size_t)std::clamp(y, 0, h - 1) * w + std::clamp(x, 0, w - 1)]; };
    for (int y = 0; y < h; ++y)
        for (int x = 0; x < w; ++x)
            out[(size_t)y * w + x] = (((at(x - 1, y) + at(x + 1, y)) + at(x, y - 1)) + at(x, y + 1)) * 0.25f;
}

// One step: fetch the 4 neighbours through the texture (texel centres at x + 0.5; x - 0.5 at the left
// border is clamped to texel 0 by the hardware), write the mean into `out` (a pitched buffer that another
// texture object views) with plain stores. Multiplying by 0.25 is exact, so the CPU matches bit for bit.
__global__ void smooth_step(cudaTextureObject_t in, float* out, size_t out_pitch, int w, int h) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= w || y >= h) return;
    float fx = x + 0.5f, fy = y + 0.5f;
    float s = ((tex2D<float>(in, fx - 1.f, fy) + tex2D<float>(in, fx + 1.f, fy)) + tex2D<float>(in, fx, fy - 1.f)) +
              tex2D<float>(in, fx, fy + 1.f);
    float* row = (float*)((char*)out + (size_t)y * out_pitch);  // rows are `pitch` bytes apart, not w * 4
    row[x] = s * 0.25f;
}

// A 2D texture over pitched linear memory (cudaBindTexture2D in the manual's reference API).
cudaTextureObject_t pitch2d_texture(float* d, size_t pitch, int w, int h) {
    cudaResourceDesc res;
    std::memset(&res, 0, sizeof res);
    res.resType = cudaResourceTypePitch2D;
    res.res.pitch2D.devPtr = d;
    res.res.pitch2D.desc = cudaCreateChannelDesc<float>();
    res.res.pitch2D.width = w;
    res.res.pitch2D.height = h;
    res.res.pitch2D.pitchInBytes = pitch;
    cudaTextureDesc td;
    std::memset(&td, 0, sizeof td);
    td.addressMode[0] = td.addressMode[1] = cudaAddressModeClamp;  // honoured: this is not 1D linear memory
    td.filterMode = cudaFilterModePoint;
    td.readMode = cudaReadModeElementType;
    td.normalizedCoords = 0;
    cudaTextureObject_t tex = 0;
    CHECK(cudaCreateTextureObject(&tex, &res, &td, nullptr));
    return tex;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "A 2D texture on cudaMallocPitch memory, rewritten by kernels between launches (ping-pong smoothing).");
    int w = (int)args.integer("width", 2048, 1, 16384, "image width (floats)");
    int h = (int)args.integer("height", 2048, 1, 16384, "image height (rows)");
    int rounds = (int)args.integer("rounds", 4, 1, 16, "smoothing steps (ping-pong between the two buffers)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int max_w = 0, max_h = 0, max_pitch = 0, pitch_align = 0;
    max_w = device_attribute(cudaDevAttrMaxTexture2DLinearWidth, dev.id);
    max_h = device_attribute(cudaDevAttrMaxTexture2DLinearHeight, dev.id);
    max_pitch = device_attribute(cudaDevAttrMaxTexture2DLinearPitch, dev.id);
    pitch_align = device_attribute(cudaDevAttrTexturePitchAlignment, dev.id);
    if (w > max_w || h > max_h) skip("image larger than this GPU's 2D linear texture limits");

    size_t n = (size_t)w * h, row_bytes = (size_t)w * sizeof(float);
    float *d_a, *d_b;
    size_t pitch_a = 0, pitch_b = 0;
    CHECK(cudaMallocPitch(&d_a, &pitch_a, row_bytes, h));
    CHECK(cudaMallocPitch(&d_b, &pitch_b, row_bytes, h));
    if (pitch_a > (size_t)max_pitch) skip("pitch larger than this GPU's 2D linear texture pitch limit");
    std::printf("%d x %d floats; row = %zu bytes, cudaMallocPitch pitch = %zu bytes (texturePitchAlignment %d)\n", w,
                h, row_bytes, pitch_a, pitch_align);
    int tex_align = 0;  // a Pitch2D texture's base must be a multiple of this (cudaResourceDesc docs)
    tex_align = device_attribute(cudaDevAttrTextureAlignment, dev.id);
    Verdict verdict;
    // Notes: what cudaMallocPitch/cudaMalloc returned against the device's alignment attributes (the
    // runtime against itself); the checks are the smoothed rounds below.
    verdict.note(pitch_a % pitch_align == 0 && pitch_b % pitch_align == 0, "pitch multiple of texturePitchAlignment");
    verdict.note((uintptr_t)d_a % tex_align == 0 && (uintptr_t)d_b % tex_align == 0,
                  "base multiple of textureAlignment");

    std::vector<float> cur = random_vector<float>(n, 0.f, 1.f, 1), next(n), got(n);
    CHECK(cudaMemcpy2D(d_a, pitch_a, cur.data(), row_bytes, row_bytes, h, cudaMemcpyHostToDevice));
    CHECK(cudaMemset2D(d_b, pitch_b, 0xff, row_bytes, h));  // NaN: a pixel nobody wrote cannot pass
    cudaTextureObject_t tex_a = pitch2d_texture(d_a, pitch_a, w, h), tex_b = pitch2d_texture(d_b, pitch_b, w, h);

    dim3 block(32, 8), grid((w + 31) / 32, (h + 7) / 8);
    for (int r = 1; r <= rounds; ++r) {
        bool a_to_b = r % 2 == 1;  // round 1 reads A (uploaded), writes B; round 2 reads B (written by round 1) ...
        smooth_step<<<grid, block>>>(a_to_b ? tex_a : tex_b, a_to_b ? d_b : d_a, a_to_b ? pitch_b : pitch_a, w, h);
        CHECK_LAUNCH();
        smooth_cpu(cur, next, w, h);
        cur.swap(next);
        CHECK(cudaMemcpy2D(got.data(), row_bytes, a_to_b ? d_b : d_a, a_to_b ? pitch_b : pitch_a, row_bytes, h,
                           cudaMemcpyDeviceToHost));
        std::string what = "round " + std::to_string(r) + (a_to_b ? ": tex A -> B" : ": tex B -> A") +
                           (r == 1 ? " (A from cudaMemcpy2D)" : " (written by round " + std::to_string(r - 1) + ")");
        verdict.exact(what, cur.data(), got.data(), n);
    }
    std::printf("Rounds >= 2 read through a texture what the previous launch stored with plain writes; from\n"
                "round 3 on, into a buffer whose texture was read before it was rewritten. Between launches the\n"
                "texture cache does not return stale data (G 3.2.12.4); within one launch it may.\n");

    CHECK(cudaDestroyTextureObject(tex_a));
    CHECK(cudaDestroyTextureObject(tex_b));
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    return verdict.finish();
}
