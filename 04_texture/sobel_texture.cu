// sobel_texture - Sobel edge detection three ways: global memory, a 2D texture, a shared-memory tile;
//                 then 8 pixels per thread with 64-bit loads, from registers and from a wide shared tile.
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
//         neighbours from shared memory. Two more versions go for DRAM speed: sobel_wide_kernel
//         (8 px/thread, 16-row window) gives each thread 8 adjacent pixels (one 64-bit load per row,
//         neighbours by __shfl, exact __half2 arithmetic on the separable filter) and slides them down
//         16 rows, keeping the sums of 3 rows in registers, so each input row is loaded once;
//         sobel_tile_kernel (shared tile, word-wide halo) computes the same strips from a 1024 x (16+2)
//         shared tile that the block fills with 64-bit loads, its halo as whole aligned 8-byte words,
//         not single bytes. All five must equal a CPU Sobel with clamped borders exactly. The notes'
//         kernel skipped the borders, read past the last row/column and let (|Gx| + |Gy|) / 2 (up to
//         765) wrap in an unsigned char; here the border is clamped and the result saturates at 255.
// Build:  make sobel_texture    Run: ./sobel_texture [--width=8192] [--height=8192] [--image=PATH]
//                                                    [--out=edges.png] [--reps=20]
// Output: CPU time, then per version (each checked against the CPU and the first version): time,
//         GB/s (1 byte read + 1 written per pixel), % of cudaMemcpy D2D, ratio to the global-memory
//         version; PASSED.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <cuda_fp16.h>
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

// The same arithmetic on the 3x3 neighbourhood p[row][col], shared by the first three kernels.
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

// ---- Versions 4 and 5: several pixels per thread, wide loads ------------------------------------------
// Several pixels per thread: a thread owns 8 horizontally adjacent pixels (one 64-bit word per row).
// The Sobel filter is separable: with, per row, d = right - left and S = left + 2*centre + right,
//     Gx = d(row above) + 2 d(this row) + d(row below),   Gy = S(row below) - S(row above),
// so a row's d and S are computed once and serve the 3 outputs that use the row.
// The arithmetic runs on __half2: two pixels per register and per instruction, exactly. Every
// intermediate below is a multiple of 0.5 with magnitude <= 1020, which a half (11 significant bits)
// holds exactly, so no operation ever rounds. Bytes become halves without a conversion
// instruction: the 16-bit pattern 0x64XX is the half 1024 + 0xXX, so one __byte_perm that puts 0x64
// above each byte gives two pixels + 1024, and one __hsub2 removes the 1024.
constexpr int WIDE_THREADS = 128;         // threads per block of the wide versions (x only)
constexpr int WIDE_PX = 8;                // pixels per thread
constexpr int TILE_W = WIDE_THREADS * WIDE_PX;  // pixels per block row (1024)
constexpr int ROWS = 16;                  // output rows per thread (the window slides down them)

__device__ __forceinline__ __half2 u2h(unsigned u) {
    __half2 h;
    memcpy(&h, &u, sizeof h);
    return h;
}
__device__ __forceinline__ unsigned h2u(__half2 h) {
    unsigned u;
    memcpy(&u, &h, sizeof u);
    return u;
}

// d and S / 2 of one row for the thread's 8 pixels, as 4 pixel pairs (k: pixels 2k, 2k+1).
struct Row8 {
    __half2 d[4], s[4];
};

// lo, hi: the 8 bytes (pixels 0..3, 4..7); l, r: the pixels just left and right of them (clamped).
__device__ __forceinline__ Row8 sobel_row8(unsigned lo, unsigned hi, unsigned l, unsigned r) {
    const unsigned E = 0x64646464u;              // exponent byte of the halves 1024..1279
    const __half2 k1024 = __float2half2_rn(1024.f), half = __float2half2_rn(0.5f);
    __half2 c[4] = {__hsub2(u2h(__byte_perm(lo, E, 0x4140)), k1024), __hsub2(u2h(__byte_perm(lo, E, 0x4342)), k1024),
                    __hsub2(u2h(__byte_perm(hi, E, 0x4140)), k1024), __hsub2(u2h(__byte_perm(hi, E, 0x4342)), k1024)};
    unsigned lr = h2u(__hsub2(u2h(__byte_perm(l | (r << 8), E, 0x4140)), k1024));  // (l, r)
    unsigned m0 = __byte_perm(h2u(c[0]), h2u(c[1]), 0x5432);  // pixels (1, 2)
    unsigned m1 = __byte_perm(h2u(c[1]), h2u(c[2]), 0x5432);  // (3, 4)
    unsigned m2 = __byte_perm(h2u(c[2]), h2u(c[3]), 0x5432);  // (5, 6)
    __half2 left[4] = {u2h(__byte_perm(lr, h2u(c[0]), 0x5410)), u2h(m0), u2h(m1), u2h(m2)};  // (l, 0) ...
    __half2 right[4] = {u2h(m0), u2h(m1), u2h(m2), u2h(__byte_perm(h2u(c[3]), lr, 0x7632))};  // ... (7, r)
    Row8 row;
#pragma unroll
    for (int k = 0; k < 4; ++k) {
        row.d[k] = __hsub2(right[k], left[k]);                          // -255 .. 255
        row.s[k] = __hfma2(__hadd2(left[k], right[k]), half, c[k]);     // S / 2: 0 .. 510 in steps of 0.5
    }
    return row;
}

// The 4 output bytes of pairs k, k+1 from the rows above (a), at (b) and below (c).
// Gx/2 and Gy/2 are multiples of 0.5; Gx and Gy have the same parity (Gx + Gy = 2 (p22 - p00)), so
// |Gx|/2 + |Gy|/2 = (|Gx| + |Gy|) / 2 is an integer: the CPU's integer division, exactly. Adding 1024
// after the min with 255 makes each half 0x64XX with XX the result byte, which __byte_perm collects.
__device__ __forceinline__ unsigned sobel_out4(const Row8& a, const Row8& b, const Row8& c, int k) {
    const __half2 half = __float2half2_rn(0.5f), k255 = __float2half2_rn(255.f), k1024 = __float2half2_rn(1024.f);
    unsigned v[2];
#pragma unroll
    for (int j = 0; j < 2; ++j) {
        __half2 gx2 = __hfma2(__hadd2(a.d[k + j], c.d[k + j]), half, b.d[k + j]);  // Gx / 2
        __half2 gy2 = __hsub2(c.s[k + j], a.s[k + j]);                              // Gy / 2
        v[j] = h2u(__hadd2(__hmin2(__hadd2(__habs2(gx2), __habs2(gy2)), k255), k1024));
    }
    return __byte_perm(v[0], v[1], 0x6420);
}

// Row y of the image, clamped to 0 .. h - 1 (unsigned product: one IMAD.WIDE.U32).
__device__ __forceinline__ const unsigned char* clamped_row(const unsigned char* in, int w, int h, int y) {
    return in + (size_t)(unsigned)min(max(y, 0), h - 1) * (unsigned)w;
}

// The 8 bytes of row `row` at x, every byte clamped to the image (the generic path, any width).
__device__ __forceinline__ uint2 bytes8_clamped(const unsigned char* row, int w, int x) {
    auto px = [&](int i) { return (unsigned)row[min(max(x + i, 0), w - 1)]; };
    return make_uint2(px(0) | px(1) << 8 | px(2) << 16 | px(3) << 24, px(4) | px(5) << 8 | px(6) << 16 | px(7) << 24);
}

// Stores the thread's 8 output pixels of row y (w % 8 == 0: one 64-bit store).
template <bool FAST>
__device__ __forceinline__ void store_row8(unsigned char* out, int w, int x0, int y, unsigned lo, unsigned hi) {
    unsigned char* row = out + (size_t)(unsigned)y * (unsigned)w;
    if (FAST) {
        *reinterpret_cast<uint2*>(row + x0) = make_uint2(lo, hi);
    } else {
        for (int i = 0; i < WIDE_PX && x0 + i < w; ++i)
            row[x0 + i] = (unsigned char)((i < 4 ? lo : hi) >> (8 * (i % 4)));
    }
}

// Version 4: each thread computes an 8-pixel strip ROWS rows tall. It first issues the loads of all
// ROWS + 2 input rows (so they are in flight together), then slides down: the d and S of 3 rows live
// in registers, so each input row is loaded once and serves 3 output rows.
// FAST (w % 8 == 0): one aligned 64-bit load per row; the neighbour bytes come from the adjacent
// lanes' words through __shfl, and lanes 0 and 31, which have no such neighbour, use one extra byte
// load (every lane issues it, so there is no branch). Lanes past the image's right edge read the last
// word (they must take part in the __shfl) and store nothing. Otherwise: byte loads, each clamped.
template <bool FAST>
__global__ void __launch_bounds__(WIDE_THREADS) sobel_wide_kernel(const unsigned char* __restrict__ in,
                                                                  unsigned char* __restrict__ out, int w, int h) {
    int x0 = (blockIdx.x * WIDE_THREADS + threadIdx.x) * WIDE_PX, y0 = blockIdx.y * ROWS;
    int lane = threadIdx.x % 32;
    int xs = FAST ? min(x0, w - WIDE_PX) : x0;
    uint2 v[ROWS + 2];
    unsigned e[ROWS + 2];  // FAST: lane 0's left / lane 31's right neighbour; else (left | right << 8)
#pragma unroll
    for (int r = 0; r < ROWS + 2; ++r) {
        const unsigned char* row = clamped_row(in, w, h, y0 - 1 + r);
        if (FAST) {
            v[r] = *reinterpret_cast<const uint2*>(row + xs);
            e[r] = row[lane == 0 ? max(xs - 1, 0) : min(xs + WIDE_PX, w - 1)];
        } else {
            v[r] = bytes8_clamped(row, w, x0);
            e[r] = row[min(max(x0 - 1, 0), w - 1)] | (unsigned)row[min(x0 + WIDE_PX, w - 1)] << 8;  // x0 may be >= w
        }
    }
    auto row8 = [&](int r) {
        unsigned lo = v[r].x, hi = v[r].y, l = e[r] & 0xff, rr = e[r] >> 8;
        if (FAST) {
            unsigned from_left = __shfl_up_sync(0xffffffffu, hi, 1), from_right = __shfl_down_sync(0xffffffffu, lo, 1);
            l = xs == 0 ? lo & 0xff : lane == 0 ? e[r] : from_left >> 24;             // x = 0: clamp
            rr = xs + WIDE_PX >= w ? hi >> 24 : lane == 31 ? e[r] : from_right & 0xff;  // x = w - 1: clamp
        }
        return sobel_row8(lo, hi, l, rr);
    };
    Row8 a = row8(0), b = row8(1);
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        Row8 c = row8(i + 2);
        if (x0 < w && y0 + i < h) store_row8<FAST>(out, w, x0, y0 + i, sobel_out4(a, b, c, 0), sobel_out4(a, b, c, 2));
        a = b, b = c;
    }
}

// Version 5: the same strips, but the block first copies its (ROWS + 2) x 1024-pixel tile into shared
// memory with coalesced 64-bit loads, plus one whole aligned 8-byte halo word on each side of every
// row (not single bytes); each thread then reads its rows and its two neighbour bytes from shared
// memory.
template <bool FAST>
__global__ void __launch_bounds__(WIDE_THREADS) sobel_tile_kernel(const unsigned char* __restrict__ in,
                                                                  unsigned char* __restrict__ out, int w, int h) {
    // tile[r][8 + i] holds column bx0 + i of image row y0 - 1 + r; bytes 0..7 and TILE_W + 8.. the halo words.
    __shared__ __align__(8) unsigned char tile[ROWS + 2][TILE_W + 2 * WIDE_PX];
    int t = threadIdx.x, bx0 = blockIdx.x * TILE_W, x0 = bx0 + t * WIDE_PX, y0 = blockIdx.y * ROWS;
    auto word = [&](int r, int x) {  // the 8 image bytes at x of tile row r, clamped to the image
        const unsigned char* row = clamped_row(in, w, h, y0 - 1 + r);
        return FAST ? *reinterpret_cast<const uint2*>(row + min(max(x, 0), w - WIDE_PX)) : bytes8_clamped(row, w, x);
    };
    uint2 v[ROWS + 2];  // all loads first, then all shared stores: the loads are in flight together
#pragma unroll
    for (int r = 0; r < ROWS + 2; ++r) v[r] = word(r, x0);
#pragma unroll
    for (int r = 0; r < ROWS + 2; ++r) *reinterpret_cast<uint2*>(&tile[r][WIDE_PX + t * WIDE_PX]) = v[r];
    for (int k = t; k < 2 * (ROWS + 2); k += WIDE_THREADS)  // halo words: left of the tile, right of it
        *reinterpret_cast<uint2*>(&tile[k / 2][k % 2 ? TILE_W + WIDE_PX : 0]) =
            word(k / 2, k % 2 ? bx0 + TILE_W : bx0 - WIDE_PX);
    __syncthreads();
    auto row8 = [&](int r) {
        const unsigned char* p = &tile[r][WIDE_PX + t * WIDE_PX];
        uint2 c = *reinterpret_cast<const uint2*>(p);
        unsigned l = p[-1], rr = p[WIDE_PX];
        // The generic copy clamped every byte, so the tile already holds the clamped border. The FAST
        // copy clamped whole words: at the image's left edge pixel 0, at its right edge pixel w - 1
        // (byte 7, since w % 8 == 0) is the neighbour.
        if (FAST && x0 == 0) l = c.x & 0xff;
        if (FAST && x0 + WIDE_PX >= w) rr = c.y >> 24;
        return sobel_row8(c.x, c.y, l, rr);
    };
    Row8 a = row8(0), b = row8(1);
#pragma unroll
    for (int i = 0; i < ROWS; ++i) {
        Row8 c = row8(i + 2);
        if (x0 < w && y0 + i < h) store_row8<FAST>(out, w, x0, y0 + i, sobel_out4(a, b, c, 0), sobel_out4(a, b, c, 2));
        a = b, b = c;
    }
}

// One block: 1024 pixels wide (128 threads x 8), ROWS rows tall; the 64-bit path needs w % 8 == 0.
void launch_wide(const unsigned char* in, unsigned char* out, int w, int h) {
    dim3 grid((w + TILE_W - 1) / TILE_W, (h + ROWS - 1) / ROWS);
    if (w % WIDE_PX == 0) sobel_wide_kernel<true><<<grid, WIDE_THREADS>>>(in, out, w, h);
    else sobel_wide_kernel<false><<<grid, WIDE_THREADS>>>(in, out, w, h);
}
void launch_tile(const unsigned char* in, unsigned char* out, int w, int h) {
    dim3 grid((w + TILE_W - 1) / TILE_W, (h + ROWS - 1) / ROWS);
    if (w % WIDE_PX == 0) sobel_tile_kernel<true><<<grid, WIDE_THREADS>>>(in, out, w, h);
    else sobel_tile_kernel<false><<<grid, WIDE_THREADS>>>(in, out, w, h);
}

int main(int argc, char** argv) {
    Args args(argc, argv,
              "Sobel through global memory, a clamped 2D texture, shared-memory tiles, 8 pixels per thread.");
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
    table.add("sobel_wide_kernel (8 px/thread, 16-row window)", [&] { launch_wide(d_in, d_out, w, h); }, moved, check,
              poison);
    table.add("sobel_tile_kernel (shared tile, word-wide halo)", [&] { launch_tile(d_in, d_out, w, h); }, moved, check,
              poison);
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
