// sgemm_steps - C = A * B in FP32, from the guide's kernel to cuBLAS speed, one idea per step.
//
// Manual: G 3.2.4 共享内存 (MatMulKernel with and without shared memory); G 2.5 异步SIMT编程模型
//         (2.5.1 异步操作: copies global -> shared that run while the threads compute);
//         N 5.5 优化矩阵乘法 (5.5.2 矩阵乘法优化).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o sgemm_steps sgemm_steps.cu -lcublas
// Shows:  nine steps, each kernel differing from the one before by one idea, checked and timed
//         against cuBLAS SGEMM (FP32 cores, no TF32) in the same run:
//           1 naive (the guide's kernel without shared memory): every FMA loads A and B
//           2 shared-memory tiles 16x16 (the guide's MatMulKernel): each load reused 16 times
//           3 1D register tiles: a thread computes 8 results of a column, B value reused 8 times
//           4 2D register tiles: 8x8 results per thread, 16 shared loads feed 64 FMAs
//           5 float4: 16-byte global and shared loads, the A tile stored transposed
//           6 warp tiles: a warp's threads own a compact 32x64 block, so its float4 shared reads
//             touch contiguous bytes (next to no bank conflicts; still about 3 wavefronts per
//             load, as ncu measures: see the step 8 notes)
//           7 cp.async (G 2.5): the next tile is copied into a second buffer while the threads
//             compute on the current one; one __syncthreads per tile
//           8 autotuning: step 7 with other tile sizes, and a fast-path kernel (lanes interleaved
//             for 2-cycle shared loads, fragments double-buffered across tiles, L2-friendly block
//             order, copies without row tests) in several configurations, one with its tile chosen
//             from the problem size and the SM count ("by size"); the table names the best
//           9 the last wave split: step 8's 128x256 tile on one persistent block per SM that
//             takes tiles from a queue; when the tiles are not a whole number of waves, the last
//             wave's tiles are cut along k into pieces, summed by the piece that ends last
// Build:  make sgemm_steps
// Run:    ./sgemm_steps [--m=4096 --n=4096 --k=4096] [--kernel=N] [--reps=10] [--csv=FILE] [--only=REGEX]
//         --kernel=N runs step N (and cuBLAS) only; any sizes work (--m=300 --n=257 --k=131)
// Output: how step 9 splits its tiles, check lines (sampled rows against a double-precision CPU
//         product, all of C against cuBLAS), the GPU's FP32 peak, a table (time, GFLOP/s, % of cuBLAS, % of FP32 peak), the
//         best step and its % of cuBLAS and of the peak, PASSED.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>
#include "blas.cuh"  // CHECK_CUBLAS, gemm_rows_cpu (the double-precision ground truth)
#include "common.cuh"
#include "results.cuh"

// Row-major A (M x K), B (K x N), C (M x N). The leading dimensions (floats from one row to the
// next) are rounded up to a multiple of 4, as cudaMallocPitch would: every row starts 16-byte
// aligned, so a float4 at a column that is a multiple of 4 is always an aligned load, whatever K
// and N are. The padding columns are zero (the host clears them once), which is what lets the
// float4 loads read a row's last, partial group of 4 without a per-element test.
struct Operands {
    const float* A;
    const float* B;
    float* C;
    int M, N, K, lda, ldb, ldc;
};

// ---- Edge handling shared by all steps: out-of-range elements load as 0 (a zero adds nothing to a
// dot product) and out-of-range results are not stored. The tiles never need a size multiple.
__device__ __forceinline__ float load1(const float* P, int ld, int row, int col, int rows, int cols) {
    return (row < rows && col < cols) ? P[(size_t)row * ld + col] : 0.f;
}
// col % 4 == 0. col < cols <= ld with both multiples of 4 puts col + 3 inside the (zero) padding.
__device__ __forceinline__ float4 load4(const float* P, int ld, int row, int col, int rows, int cols) {
    return (row < rows && col < cols) ? *reinterpret_cast<const float4*>(&P[(size_t)row * ld + col])
                                      : make_float4(0.f, 0.f, 0.f, 0.f);
}
// Four consecutive results of one row; a float4 store unless the row ends inside them. Rows before
// row_lo are left to another block (step 8's last block row, which overlaps the one above it).
__device__ __forceinline__ void store4(const Operands& p, int row, int col, const float* v, int row_lo = 0) {
    if (row >= p.M || row < row_lo) return;
    float* c = &p.C[(size_t)row * p.ldc + col];
    if (col + 3 < p.N) *reinterpret_cast<float4*>(c) = make_float4(v[0], v[1], v[2], v[3]);
    else
        for (int i = 0; i < 4 && col + i < p.N; ++i) c[i] = v[i];
}

// ---- Step 1: the guide's MatMulKernel without shared memory. Consecutive threads (threadIdx.x)
// take consecutive columns, so B's loads are coalesced and A's are a broadcast; but every FMA
// needs two loads, served by L1/L2, and load bandwidth limits it.
__global__ void sgemm_1_naive(Operands p) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= p.M || col >= p.N) return;
    float acc = 0.f;
    for (int k = 0; k < p.K; ++k) acc = fmaf(p.A[(size_t)row * p.lda + k], p.B[(size_t)k * p.ldb + col], acc);
    p.C[(size_t)row * p.ldc + col] = acc;
}

// ---- Step 2: the guide's shared-memory MatMulKernel (T x T threads, one result each). Each
// element loaded into shared memory is used T times, but each FMA still reads two operands from
// shared memory: now shared-memory bandwidth is the limit.
template <int T>
__global__ void sgemm_2_shared(Operands p) {
    __shared__ float As[T][T], Bs[T][T];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * T + ty, col = blockIdx.x * T + tx;
    float acc = 0.f;
    for (int k0 = 0; k0 < p.K; k0 += T) {
        As[ty][tx] = load1(p.A, p.lda, row, k0 + tx, p.M, p.K);
        Bs[ty][tx] = load1(p.B, p.ldb, k0 + ty, col, p.K, p.N);
        __syncthreads();  // the tiles are complete before anyone multiplies
#pragma unroll
        for (int k = 0; k < T; ++k) acc = fmaf(As[ty][k], Bs[k][tx], acc);
        __syncthreads();  // everyone is done with the tiles before they are overwritten
    }
    if (row < p.M && col < p.N) p.C[(size_t)row * p.ldc + col] = acc;
}

// ---- Step 3: 1D register tiling. A thread computes TM results of one column: one shared load of
// B and TM of A (the same address across the warp: a broadcast) feed TM FMAs, held in registers.
template <int BM, int BN, int BK, int TM>
__global__ void __launch_bounds__(BM * BN / TM) sgemm_3_1d_tiles(Operands p) {
    constexpr int THREADS = BM * BN / TM;
    static_assert(BM * BK == THREADS && BK * BN == THREADS, "each thread loads one element of each tile");
    __shared__ float As[BM][BK], Bs[BK][BN];
    const int tid = threadIdx.x, bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int col = tid % BN, row0 = tid / BN * TM;
    float acc[TM] = {};
    for (int k0 = 0; k0 < p.K; k0 += BK) {
        As[tid / BK][tid % BK] = load1(p.A, p.lda, bm + tid / BK, k0 + tid % BK, p.M, p.K);
        Bs[tid / BN][tid % BN] = load1(p.B, p.ldb, k0 + tid / BN, bn + tid % BN, p.K, p.N);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float b = Bs[k][col];
#pragma unroll
            for (int i = 0; i < TM; ++i) acc[i] = fmaf(As[row0 + i][k], b, acc[i]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
        if (bm + row0 + i < p.M && bn + col < p.N) p.C[(size_t)(bm + row0 + i) * p.ldc + bn + col] = acc[i];
}

// ---- Step 4: 2D register tiling. A thread computes a TM x TN block: per k it loads TM values of A
// and TN of B from shared memory and does TM * TN FMAs (64 FMAs for 16 loads at 8 x 8).
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN)) sgemm_4_2d_tiles(Operands p) {
    constexpr int THREADS = BM * BN / (TM * TN);
    __shared__ float As[BM][BK], Bs[BK][BN];
    const int tid = threadIdx.x, bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int ty = tid / (BN / TN), tx = tid % (BN / TN);
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < p.K; k0 += BK) {
#pragma unroll
        for (int i = 0; i < BM * BK / THREADS; ++i) {
            int e = tid + i * THREADS;
            As[e / BK][e % BK] = load1(p.A, p.lda, bm + e / BK, k0 + e % BK, p.M, p.K);
        }
#pragma unroll
        for (int i = 0; i < BK * BN / THREADS; ++i) {
            int e = tid + i * THREADS;
            Bs[e / BN][e % BN] = load1(p.B, p.ldb, k0 + e / BN, bn + e % BN, p.K, p.N);
        }
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float a[TM], b[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) a[i] = As[ty * TM + i][k];
#pragma unroll
            for (int j = 0; j < TN; ++j) b[j] = Bs[k][tx * TN + j];
#pragma unroll
            for (int i = 0; i < TM; ++i)
#pragma unroll
                for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; j += 4) store4(p, bm + ty * TM + i, bn + tx * TN + j, &acc[i][j]);
}

// ---- Helpers of steps 5-9. The A tile is stored transposed, As[k][m], with BM + 4 floats per row:
// a thread's 4 consecutive rows of A at one k are then one aligned float4, and the +4 spreads the
// transposed stores (4 rows x 8 k per warp) over all 32 banks. Bs[k][n] is B's layout.
//
// Global -> registers -> shared with 16-byte loads: each thread moves BM*BK/4/THREADS float4 of A
// and BK*BN/4/THREADS of B per tile (the whole k-range of a tile row is one or two float4).
template <int BM, int BN, int BK, int THREADS>
__device__ __forceinline__ void load_tiles_float4(const Operands& p, float* As, float* Bs, int bm, int bn, int k0) {
    static_assert(BM * BK % (4 * THREADS) == 0 && BK * BN % (4 * THREADS) == 0, "whole float4 per thread");
    const int tid = threadIdx.x;
#pragma unroll
    for (int i = 0; i < BM * BK / 4 / THREADS; ++i) {
        int f = tid + i * THREADS, m = f / (BK / 4), k = f % (BK / 4) * 4;
        float4 v = load4(p.A, p.lda, bm + m, k0 + k, p.M, p.K);
        As[(k + 0) * (BM + 4) + m] = v.x;
        As[(k + 1) * (BM + 4) + m] = v.y;
        As[(k + 2) * (BM + 4) + m] = v.z;
        As[(k + 3) * (BM + 4) + m] = v.w;
    }
#pragma unroll
    for (int i = 0; i < BK * BN / 4 / THREADS; ++i) {
        int f = tid + i * THREADS, k = f / (BN / 4), n = f % (BN / 4) * 4;
        *reinterpret_cast<float4*>(&Bs[k * BN + n]) = load4(p.B, p.ldb, k0 + k, bn + n, p.K, p.N);
    }
}

// The math on one pair of tiles: a thread owns TM rows of A (TM/4 groups of 4, the groups ASTEP rows
// apart, starting at row am) and TN columns of B (groups BSTEP apart, from column bn). Per k: TM/4 +
// TN/4 float4 shared loads, TM*TN FMAs. Steps 5 and 6 differ only in am, bn, ASTEP and BSTEP.
template <int BM, int BN, int BK, int TM, int TN, int ASTEP, int BSTEP>
__device__ __forceinline__ void mma_tiles(const float* As, const float* Bs, int am, int bn, float (&acc)[TM][TN]) {
#pragma unroll
    for (int k = 0; k < BK; ++k) {
        float4 a4[TM / 4], b4[TN / 4];
#pragma unroll
        for (int i = 0; i < TM / 4; ++i) a4[i] = *reinterpret_cast<const float4*>(&As[k * (BM + 4) + am + i * ASTEP]);
#pragma unroll
        for (int j = 0; j < TN / 4; ++j) b4[j] = *reinterpret_cast<const float4*>(&Bs[k * BN + bn + j * BSTEP]);
        const float* a = reinterpret_cast<const float*>(a4);
        const float* b = reinterpret_cast<const float*>(b4);
#pragma unroll
        for (int i = 0; i < TM; ++i)
#pragma unroll
            for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
    }
}

// Stores float4 number q of a thread's results, acc[i][j .. j + 3] with q = i * TN / 4 + j / 4 (laid
// out as mma_tiles reads them), where it belongs in C.
template <int TN, int ASTEP, int BSTEP>
__device__ __forceinline__ void store_quad(const Operands& p, int row0, int col0, int q, const float* v, int row_lo = 0) {
    const int i = q / (TN / 4), j = q % (TN / 4) * 4;
    store4(p, row0 + i / 4 * ASTEP + i % 4, col0 + j / 4 * BSTEP, v, row_lo);
}

// Writes a thread's TM x TN results with float4 stores.
template <int TM, int TN, int ASTEP, int BSTEP>
__device__ __forceinline__ void store_results(const Operands& p, int row0, int col0, float (&acc)[TM][TN], int row_lo = 0) {
#pragma unroll
    for (int q = 0; q < TM * TN / 4; ++q) store_quad<TN, ASTEP, BSTEP>(p, row0, col0, q, &acc[0][0] + 4 * q, row_lo);
}

// ---- Step 5: float4 loads from global and shared memory, A transposed in shared memory. Thread
// (ty, tx) owns rows ty*TM.. and columns tx*TN.. (contiguous). A warp is 2 x 16 threads: its B
// reads are 16 float4 at a 32-byte stride, which fall on the same banks in groups of four.
template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(BM * BN / (TM * TN)) sgemm_5_float4(Operands p) {
    constexpr int THREADS = BM * BN / (TM * TN);
    __shared__ __align__(16) float As[BK * (BM + 4)];
    __shared__ __align__(16) float Bs[BK * BN];
    const int tid = threadIdx.x, bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const int am = tid / (BN / TN) * TM, bcol = tid % (BN / TN) * TN;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < p.K; k0 += BK) {
        load_tiles_float4<BM, BN, BK, THREADS>(p, As, Bs, bm, bn, k0);
        __syncthreads();
        mma_tiles<BM, BN, BK, TM, TN, 4, 4>(As, Bs, am, bcol, acc);
        __syncthreads();
    }
    store_results<TM, TN, 4, 4>(p, bm + am, bn + bcol, acc);
}

// ---- Step 6: warp tiling. The same loads and math; only the map from threads to results changes.
// A warp owns a WM x WN = (TM*4) x (TN*8) block of C, its lanes a 4 x 8 grid: lane (lr, lc) takes
// the 4 x 4 sub-blocks at rows lr*4 + 16i and columns lc*4 + 32j. At one k the warp reads 4
// consecutive float4 of As (64 B) and 8 of Bs (128 B): no bank conflicts, but an LDS.128 hands 512
// bytes to the warp, and only the A reads have lanes pairing up on one address (the step 8 notes):
// about 2 + 4 cycles for the two loads, the 3.00 wavefronts per load that ncu measured (README lab 6).
template <int BM, int BN, int TM, int TN>
struct WarpTiles {
    static constexpr int WM = TM * 4, WN = TN * 8, THREADS = BM / WM * (BN / WN) * 32;
    static_assert(BM % WM == 0 && BN % WN == 0 && TM % 4 == 0 && TN % 4 == 0, "whole warps, 4x4 sub-blocks");
    int am, bn;  // first row (of As) and column (of Bs) of this thread
    __device__ WarpTiles() {
        int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        am = warp / (BN / WN) * WM + lane / 8 * 4;
        bn = warp % (BN / WN) * WN + lane % 8 * 4;
    }
};

template <int BM, int BN, int BK, int TM, int TN>
__global__ void __launch_bounds__(WarpTiles<BM, BN, TM, TN>::THREADS) sgemm_6_warp_tiles(Operands p) {
    using W = WarpTiles<BM, BN, TM, TN>;
    __shared__ __align__(16) float As[BK * (BM + 4)];
    __shared__ __align__(16) float Bs[BK * BN];
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;
    const W w;
    float acc[TM][TN] = {};
    for (int k0 = 0; k0 < p.K; k0 += BK) {
        load_tiles_float4<BM, BN, BK, W::THREADS>(p, As, Bs, bm, bn, k0);
        __syncthreads();
        mma_tiles<BM, BN, BK, TM, TN, 16, 32>(As, Bs, w.am, w.bn, acc);
        __syncthreads();
    }
    store_results<TM, TN, 16, 32>(p, bm + w.am, bn + w.bn, acc);
}

// ---- Step 7: asynchronous copies (G 2.5). cp.async moves global -> shared without passing through
// registers and without stalling the thread: the copy of tile t + STAGES - 1 runs while the threads
// compute on tile t. With src_size 0 it writes zeros, which is the edge handling. A is copied 4
// bytes at a time so that it can land transposed in As; B 16 bytes. Before sm_80 (no cp.async)
// the same functions do plain loads and stores, so the kernel still runs, without the overlap.
__device__ __forceinline__ void cp_async4(float* dst, const float* src, bool ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(s), "l"(src), "r"(ok ? 4 : 0) : "memory");
#else
    *dst = ok ? *src : 0.f;
#endif
}
__device__ __forceinline__ void cp_async16(float* dst, const float* src, bool ok) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    unsigned s = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(s), "l"(src), "r"(ok ? 16 : 0) : "memory");
#else
    *reinterpret_cast<float4*>(dst) = ok ? *reinterpret_cast<const float4*>(src) : make_float4(0.f, 0.f, 0.f, 0.f);
#endif
}
__device__ __forceinline__ void cp_async_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\n" ::: "memory");
#endif
}
template <int PENDING>  // wait until at most PENDING of this thread's committed groups are in flight
__device__ __forceinline__ void cp_async_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory");
#endif
}

// One thread's copies of a tile pair, planned once; per tile the loop issues them and moves the
// two source pointers on (A: BK columns right, B: BK rows down). The thread-to-data map is step 5's:
//   A: group i is row m = f / (BK/4), columns kq..kq+3 (f = tid + i * THREADS, kq = f % (BK/4) * 4),
//      copied as four 4-byte copies that land transposed in As[kq + j][m]: the offsets of the four
//      are compile-time constants on both sides, and a warp's stores cover all 32 banks.
//   B: group i is row f / (BN/4), columns n..n+3, one 16-byte copy (n < N: the rest is padding).
// Rows of A past M are clamped to row M - 1 (a valid address; the copy writes zeros). Only the last
// tile can reach past K: there (EDGE) each copy also tests its k, and one not made points at A / B.
// (Step 8 also uses AK = 1: a group is one column, see there; step 7 uses AK = 4 as described.)
// KSPAN (AK = 1 only; 0 = the map above): a warp's 32 copies cover KSPAN consecutive k of
// 32 / KSPAN rows, the warps side by side along k first; A_ROWS stays THREADS / BK.
template <int BM, int BN, int BK, int THREADS, int AK = 4, int KSPAN = 0>
struct TileCopier {
    static constexpr int NA = BM * BK / AK / THREADS, NB = BK * BN / 4 / THREADS;
    static_assert(NA * AK * THREADS == BM * BK && NB * 4 * THREADS == BK * BN, "whole groups per thread");
    static_assert(THREADS % (BK / AK) == 0 && THREADS % (BN / 4) == 0 && NA <= 32, "same column in every group");
    static constexpr int KS = KSPAN > 0 ? KSPAN : 1;  // a divisor in the assertion below
    static_assert(KSPAN == 0 || (AK == 1 && BK % KS == 0 && 32 % KS == 0 && THREADS / 32 % (BK / KS) == 0),
                  "whole warps per KSPAN-wide column block");
    static constexpr int A_ROWS = THREADS / (BK / AK), B_ROWS = THREADS / (BN / 4);  // rows between groups
    // This thread's row of group 0 (within the tile) and its first k.
    __device__ static int a_row() {
        const int tid = threadIdx.x;
        if constexpr (KSPAN == 0) return tid / (BK / AK);
        else return tid / 32 / (BK / KSPAN) * (32 / KSPAN) + tid % 32 / KSPAN;
    }
    __device__ static int a_k() {
        const int tid = threadIdx.x;
        if constexpr (KSPAN == 0) return tid % (BK / AK) * AK;
        else return tid / 32 % (BK / KSPAN) * KSPAN + tid % KSPAN;
    }
    const float* a;    // A[row of group 0][k0 + kq] of the next tile
    const float* b;    // B[k0 + row of group 0][bn + n] of the next tile
    unsigned a_in = 0; // bit i: group i's row is inside A
    bool b_in;         // this thread's columns of B start inside B
    int a_rows, b_rows;  // A_ROWS * lda, B_ROWS * ldb: floats between two groups

    __device__ TileCopier(const Operands& p, int bm, int bn) {
        const int tid = threadIdx.x, row = bm + a_row(), col = bn + tid % (BN / 4) * 4;
#pragma unroll
        for (int i = 0; i < NA; ++i) a_in |= (row + i * A_ROWS < p.M ? 1u : 0u) << i;
        a = p.A + (size_t)min(row, p.M - 1) * p.lda + a_k();
        a_rows = A_ROWS * p.lda;
        b_in = col < p.N;
        b = p.B + (size_t)(tid / (BN / 4)) * p.ldb + min(col, p.ldb - 4);
        b_rows = B_ROWS * p.ldb;
    }

    template <bool EDGE, bool ALL_ROWS = false>  // ALL_ROWS: every group's row is inside A (no a_in tests)
    __device__ __forceinline__ void issue(const Operands& p, float* As, float* Bs, int k0) {
        const int tid = threadIdx.x, m = a_row(), kq = a_k();
#pragma unroll
        for (int i = 0; i < NA; ++i) {
            // a group whose row is past M copies nothing; it points at group 0's (clamped) row
            const bool in = ALL_ROWS || (a_in >> i & 1);
            const float* src = in ? a + i * a_rows : a;  // int: i * a_rows spans fewer than BM rows
#pragma unroll
            for (int j = 0; j < AK; ++j) {
                bool ok = in && (!EDGE || k0 + kq + j < p.K);
                cp_async4(&As[(kq + j) * (BM + 4) + m + i * A_ROWS], EDGE && !ok ? p.A : src + j, ok);
            }
        }
#pragma unroll
        for (int i = 0; i < NB; ++i) {
            int k = tid / (BN / 4) + i * B_ROWS;
            bool ok = b_in && (!EDGE || k0 + k < p.K);
            cp_async16(&Bs[k * BN + tid % (BN / 4) * 4], EDGE && !ok ? p.B : b + (size_t)i * b_rows, ok);
        }
    }

    // Starts the copies at column k0 of A / row k0 of B instead of 0 (a k range: step 9).
    __device__ void skip(const Operands& p, int k0) {
        a += k0;
        b += (size_t)k0 * p.ldb;
    }

    // Copies the tile pair that starts at k0 into one stage (As, Bs) and moves on to the next.
    // ALL_ROWS (steps 8 and 9): the caller guarantees that every row of the block tile is inside A,
    // so the copies go without the per-row selects, compiled into a kernel of their own.
    template <bool ALL_ROWS = false>
    __device__ __forceinline__ void copy(const Operands& p, float* As, float* Bs, int k0) {
        if (k0 + BK > p.K) issue<true, ALL_ROWS>(p, As, Bs, k0);
        else issue<false, ALL_ROWS>(p, As, Bs, k0);
        a += BK;
        b += (size_t)BK * p.ldb;
    }
};

template <int BM, int BN, int BK, int STAGES>
constexpr size_t async_smem_bytes() {
    return sizeof(float) * STAGES * (BK * (BM + 4) + BK * BN);
}

// STAGES shared buffers in a ring. Iteration t waits for tile t (its own copies, then the barrier
// for everyone's), then starts the copy of tile t + STAGES - 1 into the buffer that tile t - 1
// used - every thread has passed the barrier, so nobody reads it any more - and computes on tile t.
// One __syncthreads per tile. MIN_BLOCKS caps the registers (65536 / (THREADS * MIN_BLOCKS)).
template <int BM, int BN, int BK, int TM, int TN, int STAGES, int MIN_BLOCKS>
__global__ void __launch_bounds__(WarpTiles<BM, BN, TM, TN>::THREADS, MIN_BLOCKS) sgemm_7_async(Operands p) {
    using W = WarpTiles<BM, BN, TM, TN>;
    static_assert(STAGES >= 2, "at least double buffering");
    constexpr int A_SIZE = BK * (BM + 4), B_SIZE = BK * BN;
    extern __shared__ __align__(16) float smem[];  // STAGES x As, then STAGES x Bs
    float* As = smem;
    float* Bs = smem + STAGES * A_SIZE;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN, tiles = (p.K + BK - 1) / BK;
    const W w;
    TileCopier<BM, BN, BK, W::THREADS> copier(p, bm, bn);
    float acc[TM][TN] = {};
#pragma unroll
    for (int s = 0; s < STAGES - 1; ++s) {
        if (s < tiles) copier.copy(p, As + s * A_SIZE, Bs + s * B_SIZE, s * BK);
        cp_async_commit();  // one group per tile, empty or not, so that the counting below holds
    }
    for (int t = 0; t < tiles; ++t) {
        cp_async_wait<STAGES - 2>();  // groups 0..t (tiles 0..t) of this thread have landed
        __syncthreads();              // everyone's have, and everyone is done with tile t - 1
        int next = t + STAGES - 1, s = next % STAGES;
        if (next < tiles) copier.copy(p, As + s * A_SIZE, Bs + s * B_SIZE, next * BK);
        cp_async_commit();
        mma_tiles<BM, BN, BK, TM, TN, 16, 32>(As + t % STAGES * A_SIZE, Bs + t % STAGES * B_SIZE, w.am, w.bn, acc);
    }
    store_results<TM, TN, 16, 32>(p, bm + w.am, bn + w.bn, acc);
}

// ---- Step 8 fast path: step 7 reorganised around what an H100 SM runs out of first.
//  - Issue slots: an H100 sub-partition issues one warp instruction per clock and does one warp
//    FFMA per clock, so every non-FFMA instruction in the loop costs an FMA. The stage of a tile
//    is a counter (no % STAGES); the copies are step 7's TileCopier (planned once, EDGE only on the
//    last tile). No copy tests its row: the last block row is moved up to end at row M
//    (tile_top), so every tile lies inside A, and the kernel is compiled without the row tests
//    (ALL_ROWS; the kernel with them runs only when M < BM). On the H100 at 4096^3 the loop with
//    the tests, rebuilding a mask of the thread's rows in about 64 instructions per k tile, took
//    about 2.5% longer (README).
//  - Shared-memory bandwidth (128 bytes per clock per SM): an LDS.128 returns 512 bytes to a warp,
//    4 cycles, but only 2 when lanes 2i and 2i+1 (or lanes n and n ^ 2) all read the same address
//    (the packed case, known from sm_70-75; the "plain lanes" candidate measures it here). At 8x8
//    per thread 4 LDS.128 feed 64 FFMAs: 16 SM cycles of shared memory against 16 SM cycles of
//    FFMA issue (4 schedulers) per warp and k if every load is a 4-cycle one. In step 6's lane
//    grid (row group lane / 8, column group lane % 8) only the A reads pair up. With INTERLEAVE
//    the row group comes from lane bits 0 and 4 and the column group from bits 1-3: lanes 2i and
//    2i+1 share their B float4, lanes n and n ^ 2 their A float4, and every fragment load is a
//    2-cycle one (the same addresses as in step 6, read by other lanes).
//  - Latency: the fragments of k + 1 are loaded into a second set of registers before the FMAs
//    of k, also across tiles: the tile's single barrier sits before its last k step, so the first
//    fragments of the next tile load while the FMAs of the last k of this one run, and no warp
//    waits on shared memory after a barrier. All STAGES buffers start filled; the barrier frees
//    the current tile's buffer, which receives tile t + STAGES.
//  - L1: step 7's A copy gives a thread 4 consecutive k of a row, so one 4-byte cp.async of a warp
//    touches 32 / (BK/4) rows: 16 lines at BK = 8, each for 4 bytes, and the 4 copies touch the
//    same 16 lines again. With AK = 1 consecutive lanes take consecutive k of a row (lane -> row
//    e / BK, column e % BK): a copy instruction reads 32 / BK whole row segments, 4 lines at
//    BK = 8, and the transposed stores still hit 32 banks (BK = 8; 2-way at BK = 16).
//  - L2: with group > 1 consecutive blocks walk down a band of `group` block rows before moving
//    right, so the blocks resident at one time read fewer distinct A and B panels.
template <int BM, int BN, int TM, int TN, bool INTERLEAVE>
struct LaneTiles {
    using W = WarpTiles<BM, BN, TM, TN>;
    int am, bn;  // first row (of As) and column (of Bs) of this thread, as in WarpTiles
    __device__ LaneTiles() {
        int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
        int lr = INTERLEAVE ? (lane & 1) | (lane >> 4) << 1 : lane / 8;
        int lc = INTERLEAVE ? (lane >> 1) & 7 : lane % 8;
        am = warp / (BN / W::WN) * W::WM + lr * 4;
        bn = warp % (BN / W::WN) * W::WN + lc * 4;
    }
};

// Block (bx, by) of this launch: blocks in launch order fill a band of `group` block rows
// column by column (the last band may have fewer rows); group <= 1 keeps the grid's own order.
// tile_coords does the same for tile `id` of a gx x gy grid of tiles (step 9's 1D launch).
__device__ __forceinline__ void tile_coords(int id, int gx, int gy, int group, int& bx, int& by) {
    bx = id % gx;
    by = id / gx;
    if (group <= 1) return;
    int band = id / (group * gx);
    int first = band * group, rows = min(group, gy - first), r = id - first * gx;
    by = first + r % rows;
    bx = r / rows;
}
// The first row of block row by: by * BM, except that a last block row reaching past M is moved up
// to end at row M (when M >= BM), so that every tile lies inside A and the copies need no row tests.
// Its first rows are then also the last rows of the block row above; it does not store them.
template <int BM>
__device__ __forceinline__ int tile_top(const Operands& p, int by) {
    return by * BM + BM > p.M && p.M >= BM ? p.M - BM : by * BM;
}
__device__ __forceinline__ void block_coords(int group, int& bx, int& by) {
    tile_coords(blockIdx.y * gridDim.x + blockIdx.x, gridDim.x, gridDim.y, group, bx, by);
}

// The fragments of one k: TM/4 float4 of A (ASTEP = 16 rows apart) and TN/4 of B (32 columns apart).
template <int BM, int BN, int TM, int TN>
__device__ __forceinline__ void load_fragments(const float* As, const float* Bs, int k, int am, int bn,
                                               float4 (&a)[TM / 4], float4 (&b)[TN / 4]) {
#pragma unroll
    for (int i = 0; i < TM / 4; ++i) a[i] = *reinterpret_cast<const float4*>(&As[k * (BM + 4) + am + i * 16]);
#pragma unroll
    for (int j = 0; j < TN / 4; ++j) b[j] = *reinterpret_cast<const float4*>(&Bs[k * BN + bn + j * 32]);
}

template <int TM, int TN>
__device__ __forceinline__ void outer_product(const float4 (&a4)[TM / 4], const float4 (&b4)[TN / 4],
                                              float (&acc)[TM][TN]) {
    const float* a = reinterpret_cast<const float*>(a4);
    const float* b = reinterpret_cast<const float*>(b4);
#pragma unroll
    for (int i = 0; i < TM; ++i)
#pragma unroll
        for (int j = 0; j < TN; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
}

// The pipelined main loop on the k tiles kt0 .. kt1 - 1 of block tile (bm, bn), added into acc.
template <int BM, int BN, int BK, int TM, int TN, int STAGES, bool INTERLEAVE, int AK, int KSPAN, bool ALL_ROWS>
__device__ __forceinline__ void pipelined_k_range(const Operands& p, float* smem, int bm, int bn, int kt0, int kt1,
                                                  float (&acc)[TM][TN]) {
    using W = WarpTiles<BM, BN, TM, TN>;
    static_assert(STAGES >= 2 && BK % 2 == 0, "double buffering; the next tile's fragments go to set 0");
    constexpr int A_SIZE = BK * (BM + 4), B_SIZE = BK * BN;
    float* As = smem;  // STAGES x As, then STAGES x Bs
    float* Bs = smem + STAGES * A_SIZE;
    const int tiles = kt1 - kt0;
    const LaneTiles<BM, BN, TM, TN, INTERLEAVE> w;
    TileCopier<BM, BN, BK, W::THREADS, AK, KSPAN> copier(p, bm, bn);
    copier.skip(p, kt0 * BK);
#pragma unroll
    for (int s = 0; s < STAGES; ++s) {  // tiles 0 .. STAGES-1, one commit group each (empty or not)
        if (s < tiles) copier.template copy<ALL_ROWS>(p, As + s * A_SIZE, Bs + s * B_SIZE, (kt0 + s) * BK);
        cp_async_commit();
    }
    cp_async_wait<STAGES - 1>();  // tile 0 of this thread has landed
    __syncthreads();              // everyone's has
    float4 fa[2][TM / 4], fb[2][TN / 4];
    load_fragments<BM, BN, TM, TN>(As, Bs, 0, w.am, w.bn, fa[0], fb[0]);
    int stage = 0;  // the buffer that holds tile t
    for (int t = 0; t < tiles; ++t) {
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            if (k < BK - 1) {
                load_fragments<BM, BN, TM, TN>(As + stage * A_SIZE, Bs + stage * B_SIZE, k + 1, w.am, w.bn,
                                               fa[(k + 1) % 2], fb[(k + 1) % 2]);
            } else {
                // Tiles 0 .. t + STAGES - 1 are committed; at most STAGES - 2 pending = tile t + 1 landed.
                cp_async_wait<STAGES - 2>();
                __syncthreads();  // tile t + 1 complete for everyone; nobody reads tile t any more
                if (t + STAGES < tiles)
                    copier.template copy<ALL_ROWS>(p, As + stage * A_SIZE, Bs + stage * B_SIZE, (kt0 + t + STAGES) * BK);
                cp_async_commit();
                stage = stage + 1 == STAGES ? 0 : stage + 1;
                // k = 0 of tile t + 1 (after the last tile: reads a buffer, uses nothing)
                load_fragments<BM, BN, TM, TN>(As + stage * A_SIZE, Bs + stage * B_SIZE, 0, w.am, w.bn, fa[0], fb[0]);
            }
            outer_product<TM, TN>(fa[k % 2], fb[k % 2], acc);
        }
    }
}

template <int BM, int BN, int BK, int TM, int TN, int STAGES, int MIN_BLOCKS, bool INTERLEAVE, int AK, int KSPAN,
          bool ALL_ROWS>
__global__ void __launch_bounds__(WarpTiles<BM, BN, TM, TN>::THREADS, MIN_BLOCKS)
    sgemm_8_pipelined(Operands p, int group) {
    extern __shared__ __align__(16) float smem[];
    int bx, by;
    block_coords(group, bx, by);
    const int bm = tile_top<BM>(p, by), bn = bx * BN;
    const LaneTiles<BM, BN, TM, TN, INTERLEAVE> w;
    float acc[TM][TN] = {};
    const int kts = (p.K + BK - 1) / BK;
    pipelined_k_range<BM, BN, BK, TM, TN, STAGES, INTERLEAVE, AK, KSPAN, ALL_ROWS>(p, smem, bm, bn, 0, kts, acc);
    store_results<TM, TN, 16, 32>(p, bm + w.am, bn + w.bn, acc, by * BM);
}

// ---- Step 9: the last wave balanced. With one block per SM, T tiles run in waves of S = #SMs
// blocks; when S does not divide T the last wave leaves SMs idle: at 4096^3, 512 tiles of 128x256
// on 132 SMs are 3 full waves and R = 116 tiles, so 16 SMs sit out the last tile's time. Here the
// R tiles of the last wave are cut along k into P pieces each (split-K for those tiles only), and
// the work goes out as one queue: S persistent blocks take units from an atomic counter - first the
// T - R whole tiles, in step 8's order, then the R x P pieces, a tile's pieces one after another. A
// block that is ahead simply takes more units, as the hardware's block scheduler gives step 8's
// next block to whichever SM is free (a test build with the shares fixed in advance left the SMs
// idle 10% of its time: README). A piece leaves its partial sums in a workspace slot
// and counts itself in on its tile; the piece that arrives last adds the P slots in the order of k
// (the same on every run: no atomics on C) and stores the tile. P is chosen on the host (below).
// The counters clean up after themselves: the last arrival of a tile clears that tile's count, and
// the last block to leave clears the queue, so the next launch starts from zero without a memset.
// (The stream-K paper, Osama et al., PPoPP 2023, splits the last tiles evenly over the SMs in
// advance; a static split like that measured slower here, see the README.)
struct TailWork {
    float4* partials;    // R x P slots of THREADS * TM * TN floats, thread-interleaved float4
    unsigned* counters;  // [0] next unit, [1] blocks done, [2 + r] pieces of split tile r arrived
    int whole, R, P;     // whole tiles (the first units), split tiles, pieces per split tile
};

template <int BM, int BN, int BK, int TM, int TN, int STAGES, bool ALL_ROWS>
__global__ void __launch_bounds__(WarpTiles<BM, BN, TM, TN>::THREADS, 1)
    sgemm_9_split_tail(Operands p, int group, int gx, int gy, TailWork work) {
    using W = WarpTiles<BM, BN, TM, TN>;
    constexpr int Q = TM * TN / 4;  // float4 per thread in a slot
    extern __shared__ __align__(16) float smem[];
    __shared__ int unit_s, last_s;
    const int kts = (p.K + BK - 1) / BK;
    // Unit u: whole tile u (u < whole), else piece `piece` of split tile `split`: its tile and k-tiles.
    struct Unit {
        int split, piece, tile, kt0, kt1;
    };
    auto unit = [&](int u) {
        Unit x{-1, 0, u, 0, kts};
        if (u >= work.whole) {
            x.split = (u - work.whole) / work.P;
            x.piece = (u - work.whole) % work.P;
            x.tile = work.whole + x.split;
            x.kt0 = kts * x.piece / work.P;
            x.kt1 = kts * (x.piece + 1) / work.P;
        }
        return x;
    };
    for (;;) {
        __syncthreads();  // everyone is done with unit_s and the stages
        if (threadIdx.x == 0) unit_s = (int)atomicAdd(&work.counters[0], 1u);
        __syncthreads();
        if (unit_s >= work.whole + work.R * work.P) break;
        float acc[TM][TN] = {};
        {
            const Unit x = unit(unit_s);
            int bx, by;
            tile_coords(x.tile, gx, gy, group, bx, by);
            const int bm = tile_top<BM>(p, by);
            pipelined_k_range<BM, BN, BK, TM, TN, STAGES, true, 1, 0, ALL_ROWS>(p, smem, bm, bx * BN, x.kt0, x.kt1, acc);
        }
        const Unit x = unit(unit_s);  // again, rather than kept in registers through the k loop
        const LaneTiles<BM, BN, TM, TN, true> w;
        int bx, by;
        tile_coords(x.tile, gx, gy, group, bx, by);
        const int bm = tile_top<BM>(p, by);  // the tile's first row; it stores rows from by * BM on
        if (x.split >= 0) {
            float4* slots = work.partials + (size_t)x.split * work.P * Q * W::THREADS + threadIdx.x;
            float4* v = reinterpret_cast<float4*>(&acc[0][0]);
#pragma unroll
            for (int q = 0; q < Q; ++q) __stcg(slots + ((size_t)x.piece * Q + q) * W::THREADS, v[q]);
            __threadfence();  // the slot is visible GPU-wide before the count
            __syncthreads();
            if (threadIdx.x == 0) {
                last_s = atomicAdd(&work.counters[2 + x.split], 1u) == (unsigned)work.P - 1;
                if (last_s) work.counters[2 + x.split] = 0;  // for the next launch; nobody counts on it now
            }
            __syncthreads();
            if (!last_s) continue;
            __threadfence();  // the other pieces' slots, seen after their counts
            // Each float4 of results: slot 0 + slot 1 + ... (k order), stored as store_results would.
#pragma unroll 4
            for (int q = 0; q < Q; ++q) {
                float4 sum = __ldcg(slots + (size_t)q * W::THREADS);
                for (int other = 1; other < work.P; ++other) {
                    float4 y = __ldcg(slots + ((size_t)other * Q + q) * W::THREADS);
                    sum.x += y.x;
                    sum.y += y.y;
                    sum.z += y.z;
                    sum.w += y.w;
                }
                const float part[4] = {sum.x, sum.y, sum.z, sum.w};
                store_quad<TN, 16, 32>(p, bm + w.am, bx * BN + w.bn, q, part, by * BM);
            }
            continue;
        }
        store_results<TM, TN, 16, 32>(p, bm + w.am, bx * BN + w.bn, acc, by * BM);
    }
    if (threadIdx.x == 0 && atomicAdd(&work.counters[1], 1u) == gridDim.x - 1) {
        work.counters[0] = 0;  // every block has taken its last unit: the queue is free
        work.counters[1] = 0;
    }
}

// ---- Host side.
struct DeviceMatrix {
    int rows, cols, ld;
    float* d;
};

DeviceMatrix upload(const std::vector<float>& h, int rows, int cols) {
    DeviceMatrix m{rows, cols, (cols + 3) / 4 * 4, nullptr};
    size_t bytes = (size_t)m.ld * rows * sizeof(float);
    CHECK(cudaMalloc(&m.d, bytes));
    CHECK(cudaMemset(m.d, 0, bytes));  // the padding columns are zero (see Operands)
    if (!h.empty())
        CHECK(cudaMemcpy2D(m.d, m.ld * sizeof(float), h.data(), cols * sizeof(float), cols * sizeof(float), rows,
                           cudaMemcpyHostToDevice));
    return m;
}

// A launcher for step 7's kernel with one configuration: grid, block and (opted-in) shared memory.
template <int BM, int BN, int BK, int TM, int TN, int STAGES, int MIN_BLOCKS>
std::function<void()> async_launcher(const Operands& p, const DeviceInfo& dev, bool* fits) {
    auto kernel = sgemm_7_async<BM, BN, BK, TM, TN, STAGES, MIN_BLOCKS>;
    constexpr size_t smem = async_smem_bytes<BM, BN, BK, STAGES>();
    *fits = smem <= dev.smem_optin();
    if (*fits) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    dim3 grid((p.N + BN - 1) / BN, (p.M + BM - 1) / BM);
    int threads = WarpTiles<BM, BN, TM, TN>::THREADS;
    return [=] { kernel<<<grid, threads, smem>>>(p); };
}

// The same for the step 8 fast path; group: block rows per band of the launch order (1 = none).
template <int BM, int BN, int BK, int TM, int TN, int STAGES, int MIN_BLOCKS, bool INTERLEAVE = true, int AK = 1,
          int KSPAN = 0>
std::function<void()> pipelined_launcher(const Operands& p, const DeviceInfo& dev, bool* fits, int group = 16) {
    // M >= BM: every tile lies inside A (tile_top), and the kernel compiled without row tests runs.
    auto kernel = p.M >= BM ? sgemm_8_pipelined<BM, BN, BK, TM, TN, STAGES, MIN_BLOCKS, INTERLEAVE, AK, KSPAN, true>
                            : sgemm_8_pipelined<BM, BN, BK, TM, TN, STAGES, MIN_BLOCKS, INTERLEAVE, AK, KSPAN, false>;
    constexpr size_t smem = async_smem_bytes<BM, BN, BK, STAGES>();
    *fits = smem <= dev.smem_optin();
    if (*fits) CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    dim3 grid((p.N + BN - 1) / BN, (p.M + BM - 1) / BM);
    int threads = WarpTiles<BM, BN, TM, TN>::THREADS;
    return [=] { kernel<<<grid, threads, smem>>>(p, group); };
}

// Step 9's launch: one block per SM (as many as fit at once). The workspace (slots for the pieces,
// the counters) is allocated once and lives as long as the launcher.
// P: the last R tiles cut into P pieces are R * P units for S blocks, ceil(R * P / S) rounds of
// 1/P tile each if all SMs kept the same pace; P (2..16, pieces of at least 4 k-tiles) minimises
// that, counting each piece as SPLIT_COST k-tiles longer (its pipeline start, its slot, the sum:
// on the H100 a piece cost about 30 us more than its share of a tile, 5-6 k-tiles at 2048^3 and
// 4096^3). P = 1 (no split) when that gains nothing over one round of whole tiles. At 4096^3 on
// 132 SMs (R = 116 of 512 tiles, 128 k-tiles each) no P gains: 9 pieces would be 8 rounds of
// (14 + 6) k-tiles, more than 128. Where the last wave is nearly empty it pays: 4300 x 3000 x 777,
// R = 12 of 408 tiles, P = 6.
constexpr double SPLIT_COST = 6.0;
template <int BM, int BN, int BK, int TM, int TN, int STAGES>
std::function<void()> split_tail_launcher(const Operands& p, const DeviceInfo& dev, bool* fits, int group = 16) {
    auto kernel = p.M >= BM ? sgemm_9_split_tail<BM, BN, BK, TM, TN, STAGES, true>
                            : sgemm_9_split_tail<BM, BN, BK, TM, TN, STAGES, false>;
    constexpr size_t smem = async_smem_bytes<BM, BN, BK, STAGES>();
    constexpr int threads = WarpTiles<BM, BN, TM, TN>::THREADS;
    *fits = smem <= dev.smem_optin();
    if (!*fits) return [] {};
    CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem));
    const int S = std::max(per_sm, 1) * dev.real.multiProcessorCount;
    const int gx = (p.N + BN - 1) / BN, gy = (p.M + BM - 1) / BM, T = gx * gy, kts = (p.K + BK - 1) / BK;
    const int R = T % S;
    int P = 1;
    double best = 1.0;  // the last round's length in tiles without a split
    for (int c = 2; c <= 16 && kts / c >= 4 && R > 0; ++c) {
        double length = (double)((R * c + S - 1) / S) * (1.0 / c + SPLIT_COST / kts);
        if (length < best) best = length, P = c;
    }
    const int split = P > 1 ? R : 0;
    struct Workspace {
        float4* partials = nullptr;
        unsigned* counters = nullptr;
        ~Workspace() {
            cudaFree(partials);  // at exit; an error here has nowhere to go
            cudaFree(counters);
        }
    };
    auto ws = std::make_shared<Workspace>();
    CHECK(cudaMalloc(&ws->partials, std::max((size_t)split * P * threads * TM * TN * sizeof(float), (size_t)16)));
    CHECK(cudaMalloc(&ws->counters, (2 + split) * sizeof(unsigned)));
    CHECK(cudaMemset(ws->counters, 0, (2 + split) * sizeof(unsigned)));
    if (split)
        std::printf("step 9: %d tiles for %d blocks: %d whole, the last %d cut into %d pieces along k\n", T, S, T - split,
                    split, P);
    else
        std::printf("step 9: %d tiles for %d blocks, all whole (cutting the last wave would not shorten it)\n", T, S);
    return [=] {
        TailWork work{ws->partials, ws->counters, T - split, split, P};
        kernel<<<S, threads, smem>>>(p, group, gx, gy, work);
    };
}

int main(int argc, char** argv) {
    Args args(argc, argv, "SGEMM step by step: naive -> shared tiles -> register tiles -> float4 -> warp tiles -> cp.async, vs cuBLAS.");
    Results table(args, "sgemm_steps", Results::GFLOPS);
    int M = (int)args.integer("m", 4096, 1, 16384, "rows of A and C");
    int N = (int)args.integer("n", 4096, 1, 16384, "columns of B and C");
    int K = (int)args.integer("k", 4096, 1, 16384, "columns of A, rows of B");
    int step = (int)args.integer("kernel", 0, 0, 9, "run only this step (and cuBLAS); 0 = all steps");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    std::printf("C[%d x %d] = A[%d x %d] * B[%d x %d], fp32; %.1f GFLOP per product\n", M, N, M, K, K, N,
                2.0 * M * N * K / 1e9);
    // The cp_async* helpers above compile to plain loads and stores below sm_80: on such a GPU, and
    // in a build for compute_75 whatever the GPU (the driver JIT-compiles that PTX; the manual's
    // G 3.1). Every kernel of this file is compiled for the same architectures, so step 1 tells.
    if (dev.cc() < 80)
        std::printf("sm_%d has no cp.async (sm_80+): steps 7-9 copy with ordinary loads and stores\n", dev.cc());
    else if (!kernel_has_arch((const void*)sgemm_1_naive, 80))
        std::printf("the kernels were compiled for %s, without cp.async (sm_80+): steps 7-9 copy with ordinary "
                    "loads and stores\n", kernel_arch_text((const void*)sgemm_1_naive).c_str());
    table.param("m", M);
    table.param("n", N);
    table.param("k", K);

    std::vector<float> a = random_vector<float>((size_t)M * K, -1.f, 1.f, 1);
    std::vector<float> b = random_vector<float>((size_t)K * N, -1.f, 1.f, 2);
    std::vector<float> c((size_t)M * N), c_blas((size_t)M * N);
    DeviceMatrix dA = upload(a, M, K), dB = upload(b, K, N), dC = upload({}, M, N);
    const Operands p{dA.d, dB.d, dC.d, M, N, K, dA.ld, dB.ld, dC.ld};

    cublasHandle_t handle;
    CHECK_CUBLAS(cublasCreate(&handle));
    // FP32 on the FP32 cores: the default math mode never uses TF32 tensor cores for cublasSgemm
    // (only CUBLAS_TF32_TENSOR_OP_MATH would), so cuBLAS does the same arithmetic as the kernels.
    CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    const float one = 1.f, zero = 0.f;

    // Ground truth: a double-precision CPU product of sampled rows - all rows when the product is
    // small, else up to 64 rows spread from the first to the last (fewer at the largest sizes, so
    // that the CPU stays under a few seconds). The rest of C is compared with cuBLAS.
    std::vector<int> rows;
    int nsample = (double)M * N * K <= 1.5e8 ? M : std::min(M, (int)std::clamp(2e9 / ((double)N * K), 8.0, 64.0));
    for (int i = 0; i < nsample; ++i)
        rows.push_back(nsample == M ? i : (int)((long long)i * (M - 1) / std::max(nsample - 1, 1)));
    std::vector<double> ref(rows.size() * N);
    gemm_rows_cpu(a, b, ref, rows, N, K);
    std::vector<float> sampled(rows.size() * N), sampled_ref(ref.begin(), ref.end());
    // Tolerance: each result sums K products of numbers in [-1, 1]. fp32 rounding errors (u = 2^-24)
    // add like a random walk, ~sqrt(K) * u * |partial sums| <= K^1.5 * u: 0.016 at K = 4096, ~100x the
    // typical error. A wrong index is off by ~|C| ~ sqrt(K / 9) ~ 21 at K = 4096; a lost k-tile drops BK
// products, ~sqrt(BK / 9) ~ 1 (BK = 8 or 16), still ~60x the tolerance.
    double atol = std::pow((double)K, 1.5) * std::ldexp(1.0, -24);

    bool blas_done = false;
    auto check = [&](Verdict& v, const std::string& name) {
        bool is_blas = name.rfind("cuBLAS", 0) == 0;
        std::vector<float>& out = is_blas ? c_blas : c;
        CHECK(cudaMemcpy2D(out.data(), N * sizeof(float), dC.d, dC.ld * sizeof(float), N * sizeof(float), M,
                           cudaMemcpyDeviceToHost));
        for (size_t r = 0; r < rows.size(); ++r)
            std::copy(out.begin() + (size_t)rows[r] * N, out.begin() + (size_t)(rows[r] + 1) * N, sampled.begin() + r * N);
        std::string what = name.substr(0, 24);
        v.close(what + (nsample == M ? " vs CPU" : " vs CPU rows"), sampled_ref.data(), sampled.data(), sampled.size(),
                atol, 0.0);
        if (is_blas) blas_done = true;
        else if (nsample != M && blas_done)
            v.close(what + " vs cuBLAS", c_blas.data(), c.data(), c.size(), 2 * atol, 0.0);
    };
    auto poison = [&] { CHECK(cudaMemset(dC.d, 0xff, (size_t)dC.ld * M * sizeof(float))); };  // NaN: unwritten fails

    // cuBLAS is column-major. A row-major M x N matrix is a column-major N x M one (its transpose),
    // and C^T = B^T * A^T: pass B first, with the sizes swapped. No copies.
    Results::Version& blas = table.baseline("cuBLAS SGEMM (FP32)", [&] {
        CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB.d, dB.ld, dA.d, dA.ld, &zero,
                                 dC.d, dC.ld));
    }, 2.0 * M * N * K, check);
    blas.prepare = poison;

    auto grid = [&](int bm, int bn) { return dim3((N + bn - 1) / bn, (M + bm - 1) / bm); };
    auto add = [&](int s, const std::string& name, std::function<void()> launch) {
        if (step == 0 || step == s) table.add(name, std::move(launch), 2.0 * M * N * K, check, poison);
    };
    add(1, "1 naive (G 3.2.4)", [&, g = grid(16, 16)] { sgemm_1_naive<<<g, dim3(16, 16)>>>(p); });
    add(2, "2 shared 16x16 (G 3.2.4)", [&, g = grid(16, 16)] { sgemm_2_shared<16><<<g, dim3(16, 16)>>>(p); });
    add(3, "3 1D regs 64x64, 8x1", [&, g = grid(64, 64)] { sgemm_3_1d_tiles<64, 64, 8, 8><<<g, 512>>>(p); });
    add(4, "4 2D regs 128x128, 8x8", [&, g = grid(128, 128)] { sgemm_4_2d_tiles<128, 128, 8, 8, 8><<<g, 256>>>(p); });
    add(5, "5 float4, A transposed", [&, g = grid(128, 128)] { sgemm_5_float4<128, 128, 8, 8, 8><<<g, 256>>>(p); });
    add(6, "6 warp tiles 32x64", [&, g = grid(128, 128)] { sgemm_6_warp_tiles<128, 128, 8, 8, 8><<<g, 256>>>(p); });
    // Step 7 and the autotuning candidates of step 8: block tile BMxBNxBK, results per thread TMxTN,
    // pipeline stages, blocks per SM that __launch_bounds__ asks registers for.
    bool fits = true;
    auto tuned = [&](int s, const std::string& name, std::function<void()> launch) {
        if (fits) add(s, name, std::move(launch));
        else std::printf("  (%s needs more shared memory than this GPU allows per block: left out)\n", name.c_str());
    };
    tuned(7, "7 cp.async 128x128x8 2st", async_launcher<128, 128, 8, 8, 8, 2, 2>(p, dev, &fits));
    tuned(8, "8 tuned 128x128x16 3st", async_launcher<128, 128, 16, 8, 8, 3, 2>(p, dev, &fits));
    tuned(8, "8 tuned 128x256x8 3st 8x16", async_launcher<128, 256, 8, 8, 16, 3, 1>(p, dev, &fits));
    // The step 8 fast path ("pipe"): interleaved lanes, fragments double-buffered across tiles,
    // A copied row-wise (AK = 1), bands of 16 block rows. "plain lanes", "A by 4" (step 7's A copy)
    // and "no bands" each switch one of those off.
    tuned(8, "8 pipe 128x128x8 3st", pipelined_launcher<128, 128, 8, 8, 8, 3, 2>(p, dev, &fits));
    tuned(8, "8 pipe 128x128x16 3st", pipelined_launcher<128, 128, 16, 8, 8, 3, 2>(p, dev, &fits));
    tuned(8, "8 pipe 128x128x16 plain lanes", pipelined_launcher<128, 128, 16, 8, 8, 3, 2, false>(p, dev, &fits));
    tuned(8, "8 pipe 128x128x16 A by 4", pipelined_launcher<128, 128, 16, 8, 8, 3, 2, true, 4>(p, dev, &fits));
    tuned(8, "8 pipe 128x128x16 no bands", pipelined_launcher<128, 128, 16, 8, 8, 3, 2>(p, dev, &fits, 1));
    tuned(8, "8 pipe 128x256x8 8x16", pipelined_launcher<128, 256, 8, 8, 16, 3, 1>(p, dev, &fits));
    tuned(8, "8 pipe 128x256x16 8x16", pipelined_launcher<128, 256, 16, 8, 16, 3, 1>(p, dev, &fits));
    tuned(8, "8 pipe 128x128x8 4w 8x16", pipelined_launcher<128, 128, 8, 8, 16, 4, 2>(p, dev, &fits));
    // The tile chosen from the problem size and the GPU ("by size"). A 128x256 block (the best tile
    // at 4096^3) needs a whole SM, so a small product leaves SMs idle: at 1024^3 its 32 tiles keep
    // 32 of 132 H100 SMs busy. Then 128x64 tiles of 4 warps (up to 4 blocks per SM) take over:
    // 8x as many blocks, 128 at 1024^3. The switch point, 128x256 tiles for fewer than 3/4 of
    // the SMs, lies between the sizes measured (1024^3: 32 tiles; 2048^3: 128 tiles, where 128x256
    // is the faster one); it is not tuned in between. "k8": KSPAN = 8, a warp's A copies cover
    // 8 k of 4 rows, so the transposed stores are conflict-free at BK = 16.
    const long long wide_tiles = (long long)((N + 255) / 256) * ((M + 127) / 128);
    // Waves count this GPU's SMs (dev.real); the shared memory a block may opt in to is the smaller of
    // the profile's GPU and this one (dev.smem_optin(), device.cuh) under CUDA_LAB_PROFILE.
    const bool small = wide_tiles * 4 < 3LL * dev.real.multiProcessorCount;
    // Large products take the 128x256 tile with BK = 32 and 4 stages when there are at least two
    // waves of such tiles (one block per SM) and the GPU lets a block opt in to its 194 KB of shared
    // memory (sm_90: 227 KB); else BK = 16 and 3 stages (74.5 KB). On the H100 the deep tile won at
    // 4096^3 (512 tiles: 94.3% against 91.9% of cuBLAS) and 8192^3 (95.0% against 93.2%), and lost
    // at 2048^3 (128 tiles, under one wave: 91.5% against 93.5%); the switch point between is not
    // tuned. With the copies without row tests, one run: 4096^3 97.2% against 95.1%, 2048^3 94.1%
    // against 96.8%.
    const bool deep = wide_tiles >= 2LL * dev.real.multiProcessorCount &&
                      async_smem_bytes<128, 256, 32, 4>() <= dev.smem_optin();
    tuned(8, std::string("8 pipe by size: ") + (small ? "128x64x16 4w k8" : deep ? "128x256x32 16x8 4st" : "128x256x16 16x8"),
          small  ? pipelined_launcher<128, 64, 16, 8, 8, 3, 4, true, 1, 8>(p, dev, &fits)
          : deep ? pipelined_launcher<128, 256, 32, 16, 8, 4, 1>(p, dev, &fits)
                 : pipelined_launcher<128, 256, 16, 16, 8, 3, 1>(p, dev, &fits));
    // "16x8": each thread computes 16 rows x 8 columns, so a warp tile is 64x64 instead of 32x128:
    // the same 6 float4 shared loads per thread and k, but 4 KB of distinct shared data per block
    // and k instead of 5 KB. On the H100 it was the fastest 4096^3 and 2048^3 tile (92.1% and 94.8%
    // of cuBLAS against 91.3% and 94.2% for 8x16; the 256x128 orientation measured 87.6%), so the
    // "by size" row uses it for large products of fewer than two waves of tiles, and where the
    // BK = 32 tile below does not fit. (With the copies without row tests 8x16 came out ahead in
    // one run: 95.6% against 95.1% at 4096^3, 97.5% against 96.8% at 2048^3; not re-tuned.)
    tuned(8, "8 pipe 128x256x16 16x8", pipelined_launcher<128, 256, 16, 16, 8, 3, 1>(p, dev, &fits));
    // BK = 32 and 4 stages: half as many barriers and copy rounds per k, and a stage more in
    // flight. On the H100 at 4096^3: 2832-2839 against 2890-2910 us for BK = 16 and 3 stages
    // (93.5-94.2% against 91.7-91.9% of cuBLAS in the same six runs; with the copies without row
    // tests 2771 against 2832 us in one run); BK = 64, partial unrolling of the k loop and BK = 32
    // with 8x16 per thread were slower. What separates it from cuBLAS: README, "The SGEMM progression".
    tuned(8, "8 pipe 128x256x32 16x8 4st", pipelined_launcher<128, 256, 32, 16, 8, 4, 1>(p, dev, &fits));
    // Step 9: step 8's large tile (BK = 32 and 4 stages where a block may opt in to that much shared
    // memory, else BK = 16 and 3 stages) with the last wave balanced.
    if (async_smem_bytes<128, 256, 32, 4>() <= dev.smem_optin())
        tuned(9, "9 split tail 128x256x32 4st", split_tail_launcher<128, 256, 32, 16, 8, 4>(p, dev, &fits));
    else
        tuned(9, "9 split tail 128x256x16 3st", split_tail_launcher<128, 256, 16, 16, 8, 3>(p, dev, &fits));

    // The physical ceiling: every FP32 lane of every SM doing one FMA (2 flops) per clock. FP32 lanes
    // per SM (the programming guide's arithmetic throughput table): 64 on cc 7.x and 8.0, 128 on
    // 8.6 and newer. cudaDevAttrClockRate is the SM's top (boost) clock.
    // The GPU measured (dev.real), also under CUDA_LAB_PROFILE: the peak is a measurement's yardstick.
    const int real_cc = dev.real.major * 10 + dev.real.minor;
    const int lanes = dev.real.major == 7 || real_cc == 80 ? 64 : 128;
    const double peak = dev.real.multiProcessorCount * lanes * 2.0 * dev.sm_clock_khz * 1e3 / 1e9;
    std::printf("FP32 peak: %d SMs x %d lanes x 2 flops x %.0f MHz = %.0f GFLOP/s\n", dev.real.multiProcessorCount,
                lanes, dev.sm_clock_khz / 1e3, peak);
    table.column("% of FP32 peak", "pct_of_fp32_peak", [&](const Results::Version& v) { return 100 * v.rate() / peak; },
                 "%.1f%%");

    Verdict verdict;
    table.run(verdict, reps);

    const Results::Version* best = table.best();
    const Results::Version* base = table.base();
    if (best && base)
        std::printf("best step: %s, %.1f%% of cuBLAS (%.1f vs %.1f GFLOP/s), %.1f%% of FP32 peak\n", best->name.c_str(),
                    100.0 * best->rate() / base->rate(), best->rate(), base->rate(), 100 * best->rate() / peak);

    CHECK_CUBLAS(cublasDestroy(handle));
    CHECK(cudaFree(dA.d));
    CHECK(cudaFree(dB.d));
    CHECK(cudaFree(dC.d));
    return verdict.finish();
}
