// transpose - matrix transpose: naive, write-coalesced, shared-memory tile, padded tile.
//
// Manual: M "共享内存上的矩阵转置" (matrix transpose on shared memory) and
//         M "银行冲突及其对共享内存的影响" (bank conflicts and their effect on shared memory);
//         N 5.6 矩阵转置, 5.6.1 实现方法, 5.6.2 Bank conflicts.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o transpose transpose.cu
// Shows:  a transpose moves every byte once in and once out, so the copy of the same matrix (same
//         tiling, same loads per thread) is its reference. The naive kernel reads rows but writes columns (each warp store touches 32
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
// Output: one check line per version, a table (time, GB/s, % of D2D, x naive), the best ratio, PASSED.
#include <algorithm>
#include <functional>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// Tile parameters (chosen on an H100; worth re-tuning on another GPU). A block of TILE x ROWS threads moves one
// TILE x TILE tile, TILE / ROWS elements per thread: fewer, busier threads keep several loads in
// flight each, and the block is small enough for 8 blocks per SM.
// Loads in flight: every kernel below first loads its TILE / ROWS elements into registers, then
// stores them, and takes in and out as __restrict__. Written as one loop (load, store, load, store)
// with plain pointers, nvcc must assume that a store to out may change in, so it cannot move a load
// above an earlier store: the direct kernels then alternated LDG STG LDG STG, one load in flight per
// thread, while the [32][32] shared-tile
// kernels (whose global stores wait behind a barrier) had all four in flight (the 64 x 64 tile: one,
// then seven, as a tile store waited for the first). Now each kernel issues all its
// loads (LDG.E.CONSTANT: __restrict__ const also lets nvcc use the read-only path, for all five alike)
// before its first store (SASS: tests/sass_claims/03_shared.txt; the two loops alone already give
// that order), so the versions differ only in how they access memory. The shared-tile kernels load from a clamped address (an edge thread reloads a
// valid element it then does not store): with a test around each load ptxas placed some of the tile
// stores between the loads of the 64 x 64 tile.
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

// The five kernels at one tile configuration; the grid covers in (rows x cols) in T x T tiles,
// rounded up: the bounds checks handle the ragged edge. Every version is checked bit-exactly (a
// transpose is a permutation) after its output is set to a NaN pattern: an element never written
// cannot pass. The copy kernel's output must equal its input.
template <int T, int R>
void add_versions(Results& table, const float* in, float* out, int rows, int cols, bool all,
                  const std::vector<float>& h_in, const std::vector<float>& ref, std::vector<float>& h_out) {
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
    if (all) {
        table.add("copy kernel (same tiling)", [=] { copy_tile<T, R><<<grid, block>>>(in, out, rows, cols); }, moved,
                  check_against(h_in), poison)
            .as_ceiling();  // the bound a transpose approaches, not one of the transposes
        table.add("naive (read-coalesced)", [=] { matrix_transpose_naive<T, R><<<grid, block>>>(in, out, rows, cols); },
                  moved, check_against(ref), poison);
        table.add("write-coalesced", [=] {
            matrix_transpose_write_coalesced<T, R><<<grid_t, block>>>(in, out, rows, cols);
        }, moved, check_against(ref), poison);
        table.add("shared tile " + cfg + "]", [=] {
            matrix_transpose_shared<T, R><<<grid, block>>>(in, out, rows, cols);
        }, moved, check_against(ref), poison);
    }
    table.add("padded tile " + cfg + "+1]", [=] {
        matrix_transpose_padded<T, R><<<grid, block>>>(in, out, rows, cols);
    }, moved, check_against(ref), poison);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Transposes a float matrix four ways and compares each with a copy.");
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
                rows, cols, bytes / 1e6, (double)bytes / dev.prop.l2CacheSize, tile, tile, tile, tile / per_thread,
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
    if (book) add_versions<32, 32>(table, d_in, d_out, rows, cols, true, in, ref, out);  // the book's launch shape
    else {
        add_versions<TILE, ROWS>(table, d_in, d_out, rows, cols, true, in, ref, out);
        add_versions<BIG_TILE, BIG_ROWS>(table, d_in, d_out, rows, cols, false, in, ref, out);
    }
    table.speedup_over("naive (read-coalesced)");
    Verdict verdict;
    table.run(verdict, reps);

    const Results::Version *best = nullptr, *d2d = table.base();
    for (auto& v : table.versions())
        if (v.ms > 0 && !v.baseline && v.name.rfind("copy", 0) != 0 && (!best || v.rate() > best->rate())) best = &v;
    const Results::Version *naive = table.find("naive (read-coalesced)"), *shared = table.find("shared tile [32][32]"),
                           *padded = table.find("padded tile [32][32+1]");
    if (best && d2d && naive)
        std::printf("best transpose: %s = %.1f%% of cudaMemcpy D2D, %.1fx naive\n", best->name.c_str(),
                    100 * best->rate() / d2d->rate(), naive->ms / best->ms);
    if (naive && shared && padded) {
        // The book's figures (V100 PCIe, 2048 x 2048): naive 60 us -> shared 21 us -> padded 13 us.
        std::printf("book (V100): naive %.0f us -> shared %.0f us -> padded %.0f us = 1 : %.1fx : %.1fx\n", 60.0, 21.0,
                    13.0, 60.0 / 21, 60.0 / 13);
        std::printf("here       : naive %.0f us -> shared %.0f us -> padded %.0f us = 1 : %.1fx : %.1fx%s\n",
                    1e3 * naive->ms, 1e3 * shared->ms, 1e3 * padded->ms, naive->ms / shared->ms, naive->ms / padded->ms,
                    book ? "" : "  (--book for the book's size)");
    }

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
