// transpose - matrix transpose: naive, write-coalesced, shared-memory tile, padded tile (32x32 and 64x64).
//
// Manual: M "共享内存上的矩阵转置" (matrix transpose on shared memory) and
//         M "银行冲突及其对共享内存的影响" (bank conflicts and their effect on shared memory);
//         N 5.6 矩阵转置, 5.6.1 实现方法, 5.6.2 Bank conflicts.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o transpose transpose.cu
// Shows:  a transpose moves every byte once in and once out, so a copy of the same matrix at the
//         same tiling (same block, same loads per thread) is its reference; one copy is timed for
//         each tiling. The naive kernel reads rows but writes columns (each warp store touches 32
//         sectors); staging a tile in shared memory makes both global accesses row-wise, and the
//         [T][T+1] padding removes the 32-way bank conflict of the column access in shared memory.
//         Every version is checked against a CPU transpose, then timed: GB/s (read + write), % of
//         cudaMemcpy D2D measured in the same run, speedup over naive.
// Build:  make transpose
// Run:    ./transpose                        8192 x 8192 fp32 (268 MB per matrix, several x the L2)
//         ./transpose --rows=3000 --cols=1001   any shape; sizes need not be multiples of the tile
//         ./transpose --book                 the book's setup: 2048 x 2048, 32x32 thread blocks,
//                                            one element per thread; the book's V100 times alongside
//         ./transpose --csv=FILE             also write the table as CSV (plot.py reads it)
// Output: one check line per version, a table (time, GB/s, % of D2D, x naive), the best transpose
//         (% of D2D, % of the copy at its tiling, x naive), the book's steps beside these, the
//         padding step, the unpadded tile against write-coalesced, PASSED.
#include <algorithm>
#include <functional>
#include <map>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// Tile parameters (chosen on an H100; worth re-tuning on another GPU). A block of TILE x ROWS threads
// moves one TILE x TILE tile, TILE / ROWS elements per thread: fewer, busier threads keep several
// loads in flight each. A 32 x 8 or 64 x 8 block is 256 threads: by the thread count, at most
// maxThreadsPerMultiProcessor / 256 blocks fit on an SM (8 on sm_80 and sm_90, 6 on sm_86 and
// sm_89, 4 on sm_75).
// Loads in flight: every kernel below first loads its TILE / ROWS elements into registers, then
// stores them, and takes in and out as __restrict__; each issues all its loads before its first
// store (SASS: tests/sass_claims/03_shared.txt; README "Notes: transpose" shows what one load-store
// loop on plain pointers compiled to). __restrict__ const also lets nvcc use the read-only path
// (LDG.E.CONSTANT) in every kernel alike. At one tiling the versions then differ only in how they
// access memory; the copy kernel of that tiling is their reference. The shared-tile kernels load from
// a clamped address: an edge thread reloads a valid element that it then does not store.
constexpr int TILE = 32, ROWS = 8;
constexpr int BIG_TILE = 64, BIG_ROWS = 8;   // a wider tile: 256-byte rows, 8 elements per thread

// CPU reference: in is rows x cols, row-major; out is cols x rows.
void transpose_cpu(const float* in, float* out, int rows, int cols) {
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}

// Baseline: a copy with the same tiling, bounds checks and loads per thread. Both accesses are
// row-wise (coalesced): the rate a transpose would reach if its column side cost nothing.
template <int T, int R>
__global__ void copy_tile(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x >= cols) return;
    float v[T / R];
#pragma unroll
    for (int j = 0; j < T; j += R)
        if (y + j < rows) v[j / R] = in[(size_t)(y + j) * cols + x];
#pragma unroll
    for (int j = 0; j < T; j += R)
        if (y + j < rows) out[(size_t)(y + j) * cols + x] = v[j / R];
}

// The book's matrix_transpose_naive as in its code repository: reads a row (coalesced), writes a
// column: the 32 threads of a warp store to 32 different rows of out, 32 sectors per store.
template <int T, int R>
__global__ void matrix_transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;
    if (x >= cols) return;
    float v[T / R];
#pragma unroll
    for (int j = 0; j < T; j += R)
        if (y + j < rows) v[j / R] = in[(size_t)(y + j) * cols + x];
#pragma unroll
    for (int j = 0; j < T; j += R)
        if (y + j < rows) out[(size_t)x * rows + (y + j)] = v[j / R];
}

// The other naive choice (the book's printed listing, N's transpose2): write a row of out, read a
// column of in. Usually faster than read-coalesced: a strided read fetches a 32-byte sector into
// L1/L2 and the next 7 columns, read by neighbouring threads of the block, hit it; a strided write
// cannot be merged in the write-through L1 and reaches L2 as 32 partial-sector writes.
template <int T, int R>
__global__ void matrix_transpose_write_coalesced(const float* __restrict__ in, float* __restrict__ out, int rows,
                                                 int cols) {
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;  // x: a column of out
    if (x >= rows) return;
    float v[T / R];
#pragma unroll
    for (int j = 0; j < T; j += R)
        if (y + j < cols) v[j / R] = in[(size_t)x * cols + (y + j)];
#pragma unroll
    for (int j = 0; j < T; j += R)
        if (y + j < cols) out[(size_t)(y + j) * rows + x] = v[j / R];
}

// Shared-memory tile, the book's matrix_transpose_shared generalised to T/R elements per thread
// and any shape. The tile is read row-wise from in and stored transposed into shared memory
// (tile[tx][..]): the 32 threads of a warp write addresses 32 words apart, all in one bank unless
// PAD = 1 shifts each row of the tile by one bank. After the barrier the block writes a row-wise
// (coalesced) stripe of out. PAD = 0 is the book's [T][T] version, PAD = 1 its [T][T+1] fix.
template <int T, int R, int PAD>
__device__ void transpose_via_shared(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[T][T + PAD];
    int x = blockIdx.x * T + threadIdx.x, y = blockIdx.y * T + threadIdx.y;  // element of in
    float v[T / R];
#pragma unroll
    for (int j = 0; j < T; j += R)
        v[j / R] = in[(size_t)min(y + j, rows - 1) * cols + min(x, cols - 1)];
#pragma unroll
    for (int j = 0; j < T; j += R)
        if (x < cols && y + j < rows) tile[threadIdx.x][threadIdx.y + j] = v[j / R];
    __syncthreads();  // the block writes elements other threads loaded
    x = blockIdx.y * T + threadIdx.x;  // element of out: the block's tile, mirrored
    y = blockIdx.x * T + threadIdx.y;
    for (int j = 0; j < T; j += R)
        if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.y + j][threadIdx.x];
}

// Two kernel names (not one template argument) so that ncu -k can pick each one out.
template <int T, int R>
__global__ void matrix_transpose_shared(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    transpose_via_shared<T, R, 0>(in, out, rows, cols);
}
template <int T, int R>
__global__ void matrix_transpose_padded(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    transpose_via_shared<T, R, 1>(in, out, rows, cols);
}

// The copy and the transposes at one tile configuration: with `all` the four kinds (naive,
// write-coalesced, shared tile, padded tile), else the padded tile only. main() runs [32][32] with
// all and [64][64] padded: five transposes (--book: [32][32] only, four). The grid covers in
// (rows x cols) in T x T tiles, rounded up: the bounds checks handle the ragged edge. Every version
// is checked bit-exactly (a transpose is a permutation) after its output is set to a NaN pattern: an
// element never written cannot pass. The copy kernel's output must equal its input.
template <int T, int R>
void add_versions(Results& table, const float* in, float* out, int rows, int cols, bool all,
                  const std::vector<float>& h_in, const std::vector<float>& ref, std::vector<float>& h_out,
                  std::map<std::string, std::string>& copy_of) {
    dim3 block(T, R), grid((cols + T - 1) / T, (rows + T - 1) / T), grid_t((rows + T - 1) / T, (cols + T - 1) / T);
    std::string cfg = "[" + std::to_string(T) + "][" + std::to_string(T);
    size_t n = (size_t)rows * cols, bytes = n * sizeof(float);
    double moved = 2.0 * bytes;  // every element read once and written once
    auto poison = [=] { CHECK(cudaMemset(out, 0xff, bytes)); };
    auto check_against = [&, out, n, bytes](const std::vector<float>& expected) {
        return [&expected, &h_out, out, n, bytes](Verdict& verdict, const std::string& name) {
            CHECK(cudaMemcpy(h_out.data(), out, bytes, cudaMemcpyDeviceToHost));
            verdict.exact(name, expected.data(), h_out.data(), n);
        };
    };
    // The copy at this tiling: the reference for the transposes below (same block, same loads per
    // thread), not one of the transposes.
    std::string copy = "copy kernel (" + std::to_string(T) + "x" + std::to_string(R) + " tiling)";
    table.add(copy, [=] { copy_tile<T, R><<<grid, block>>>(in, out, rows, cols); }, moved, check_against(h_in), poison)
        .as_ceiling();
    if (all) {
        copy_of["naive (read-coalesced)"] = copy_of["write-coalesced"] = copy_of["shared tile " + cfg + "]"] = copy;
        table.add("naive (read-coalesced)", [=] { matrix_transpose_naive<T, R><<<grid, block>>>(in, out, rows, cols); },
                  moved, check_against(ref), poison);
        table.add("write-coalesced", [=] {
            matrix_transpose_write_coalesced<T, R><<<grid_t, block>>>(in, out, rows, cols);
        }, moved, check_against(ref), poison);
        table.add("shared tile " + cfg + "]", [=] {
            matrix_transpose_shared<T, R><<<grid, block>>>(in, out, rows, cols);
        }, moved, check_against(ref), poison);
    }
    copy_of["padded tile " + cfg + "+1]"] = copy;
    table.add("padded tile " + cfg + "+1]", [=] {
        matrix_transpose_padded<T, R><<<grid, block>>>(in, out, rows, cols);
    }, moved, check_against(ref), poison);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Transposes a float matrix five ways (four with --book) and compares each with a copy of its tiling.");
    int rows = (int)args.integer("rows", 8192, 1, 32768, "rows of the input matrix");
    int cols = (int)args.integer("cols", 8192, 1, 32768, "columns of the input matrix");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    bool book = args.flag("book", "the book's setup: 2048 x 2048, 32x32 blocks (overrides --rows/--cols)");
    Results table(args, "transpose", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    // The book's code repository (02_memory_overview/04_matrix_transpose) transposes N x N ints
    // with N = 2048 and BLOCK_SIZE 32; float has the same 4 bytes.
    if (book) rows = cols = 2048;
    size_t n = (size_t)rows * cols, bytes = n * sizeof(float);
    int tile = book ? 32 : TILE, per_thread = book ? 1 : TILE / ROWS;
    std::printf("transpose %d x %d fp32: %.1f MB per matrix (%.1fx the L2); tile %dx%d, block %dx%d, %d elem/thread\n",
                rows, cols, bytes / 1e6, (double)bytes / dev.real.l2CacheSize, tile, tile, tile, tile / per_thread,
                per_thread);

    std::vector<float> in = random_vector<float>(n, -1000.f, 1000.f, 1), ref(n), out(n);
    transpose_cpu(in.data(), ref.data(), rows, cols);

    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));

    table.param("rows", rows);
    table.param("cols", cols);
    table.param("setup", book ? "book" : "default");
    table.baseline_d2d(bytes);
    std::map<std::string, std::string> copy_of;  // each transpose -> the copy kernel of its tiling
    if (book)  // the book's launch shape
        add_versions<32, 32>(table, d_in, d_out, rows, cols, true, in, ref, out, copy_of);
    else {
        add_versions<TILE, ROWS>(table, d_in, d_out, rows, cols, true, in, ref, out, copy_of);
        add_versions<BIG_TILE, BIG_ROWS>(table, d_in, d_out, rows, cols, false, in, ref, out, copy_of);
    }
    table.speedup_over("naive (read-coalesced)");
    Verdict verdict;
    table.run(verdict, reps);

    // D2D is a DRAM ceiling only when in and out do not fit in the L2 together.
    // The L2 of the GPU measured (dev.real), also under CUDA_LAB_PROFILE (device.cuh).
    bool in_l2 = 2.0 * bytes <= (double)dev.real.l2CacheSize;
    if (in_l2)
        std::printf("in + out = %.1f MB fit in the %.1f MB L2: cudaMemcpy D2D (and %% of D2D) is not a ceiling "
                    "at this size\n", 2e-6 * bytes, dev.real.l2CacheSize / 1e6);
    const Results::Version *best = table.best(), *d2d = table.base(), *naive = table.find("naive (read-coalesced)");
    if (best && d2d && naive) {
        const Results::Version* copy = copy_of.count(best->name) ? table.find(copy_of[best->name]) : nullptr;
        std::printf("best transpose: %s = %.1f%% of cudaMemcpy D2D%s", best->name.c_str(),
                    100 * best->rate() / d2d->rate(), in_l2 ? " (not a ceiling here)" : "");
        if (copy) std::printf(", %.1f%% of the %s", 100 * best->rate() / copy->rate(), copy->name.c_str());
        std::printf(", %.1fx naive\n", naive->ms / best->ms);
    }
    const Results::Version *wc = table.find("write-coalesced"), *shared = table.find("shared tile [32][32]"),
                           *padded = table.find("padded tile [32][32+1]");
    if (naive && shared && padded) {
        // The book's figures (V100 PCIe, 2048 x 2048): naive 60 us -> shared 21 us -> padded 13 us.
        std::printf("book (V100): naive %.0f us -> shared %.0f us -> padded %.0f us = 1 : %.1fx : %.1fx\n", 60.0, 21.0,
                    13.0, 60.0 / 21, 60.0 / 13);
        std::printf("here       : naive %.0f us -> shared %.0f us -> padded %.0f us = 1 : %.1fx : %.1fx%s\n",
                    1e3 * naive->ms, 1e3 * shared->ms, 1e3 * padded->ms, naive->ms / shared->ms, naive->ms / padded->ms,
                    book ? "" : "  (--book for the book's size)");
        std::printf("padding step: shared %.1f us -> padded %.1f us = %.2fx here; book (V100) 21 -> 13 us = %.2fx\n",
                    1e3 * shared->ms, 1e3 * padded->ms, shared->ms / padded->ms, 21.0 / 13);
    }
    if (wc && shared)
        std::printf("shared tile [32][32] vs write-coalesced: %.1f vs %.1f us: the unpadded tile is %.2fx %s\n",
                    1e3 * shared->ms, 1e3 * wc->ms, shared->ms > wc->ms ? shared->ms / wc->ms : wc->ms / shared->ms,
                    shared->ms > wc->ms ? "slower" : "faster");

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
