// matmul_tiled - C = A * B: the guide's naive and shared-memory kernels, a register-blocked kernel, cuBLAS.
//
// Manual: G 3.2.4 共享内存 (the Matrix struct with stride, GetSubMatrix / GetElement / SetElement,
//         MatMulKernel with and without shared memory); N 5.5 优化矩阵乘法 (5.5.2 矩阵乘法优化).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o matmul_tiled matmul_tiled.cu -lcublas
// Shows:  the naive kernel reads a row of A and a column of B from global memory for every element
//         of C (A is read B.width times). The guide's 16x16 tiles read each element of A and B once
//         per tile into shared memory and reuse it 16 times: A is read B.width / 16 times. A
//         128x128 block tile with 8x8 results per thread (register blocking) reuses every shared
//         load 8 times from registers and reads A B.width / 128 times. cuBLAS SGEMM (FP32, no tensor
//         cores) is the reference point: GFLOP/s and % of cuBLAS for each kernel.
//         The one-thread-per-element kernel first appears in 01_intro/matmul_naive.cu (the notes'
//         integer version, two thread layouts, timed with events). Sizes follow BLAS: C is M x N,
//         the inner dimension is K (matmul_naive follows the notes and calls it n).
// Build:  make matmul_tiled            (links -lcublas)
// Run:    ./matmul_tiled [--m=4096 --n=4096 --k=4096] [--reps=10] [--csv=FILE]
//         any sizes work: --m=1000 --n=999 --k=3 (tiles past the edge are zero-filled, stores guarded)
// Output: check lines (sampled rows against a double-precision CPU product, all of C against cuBLAS),
//         a table (time, GFLOP/s, % of cuBLAS, x naive), PASSED.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>
#include "blas.cuh"  // CHECK_CUBLAS, gemm_rows_cpu (the double-precision ground truth)
#include "common.cuh"
#include "results.cuh"

// The guide's matrix type: row-major, M(row, col) = *(M.elements + row * M.stride + col). The
// stride lets a sub-matrix share its parent's storage. Here the device matrices get a stride
// rounded up to 4 floats, so every row starts 16-byte aligned (what float4 loads need), as
// cudaMallocPitch would do.
struct Matrix {
    int width;
    int height;
    int stride;
    float* elements;
};

constexpr int BLOCK_SIZE = 16;  // the guide's thread block: 16 x 16

// ---- The guide's device functions. Changed: the guide assumes sizes that are multiples of
// BLOCK_SIZE. Here a sub-matrix at the edge is clipped, GetElement returns 0 outside the matrix
// (a zero adds nothing to the dot product) and SetElement ignores positions outside it.
__device__ float GetElement(const Matrix A, int row, int col) {
    return (row < A.height && col < A.width) ? A.elements[row * A.stride + col] : 0.f;
}
__device__ void SetElement(Matrix A, int row, int col, float value) {
    if (row < A.height && col < A.width) A.elements[row * A.stride + col] = value;
}
// The BLOCK_SIZE x BLOCK_SIZE sub-matrix Asub of A that is `col` sub-matrices to the right and
// `row` sub-matrices down from the upper-left corner of A.
__device__ Matrix GetSubMatrix(Matrix A, int row, int col) {
    Matrix Asub;
    Asub.width = max(0, min(BLOCK_SIZE, A.width - BLOCK_SIZE * col));
    Asub.height = max(0, min(BLOCK_SIZE, A.height - BLOCK_SIZE * row));
    Asub.stride = A.stride;
    Asub.elements = &A.elements[A.stride * BLOCK_SIZE * row + BLOCK_SIZE * col];
    return Asub;
}

// The guide names both kernels MatMulKernel; a namespace keeps the names.
namespace naive {
// Each thread reads a row of A and a column of B from global memory: 2 * A.width loads per result.
__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= C.height || col >= C.width) return;  // added: the grid is rounded up
    float Cvalue = 0;
    for (int e = 0; e < A.width; ++e) Cvalue += A.elements[row * A.stride + e] * B.elements[e * B.stride + col];
    C.elements[row * C.stride + col] = Cvalue;
}
}  // namespace naive

namespace shared {
// The guide's shared-memory kernel: each block computes one 16 x 16 Csub, walking along A's block
// row and B's block column one pair of 16 x 16 tiles at a time.
__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {
    int blockRow = blockIdx.y, blockCol = blockIdx.x;
    Matrix Csub = GetSubMatrix(C, blockRow, blockCol);
    float Cvalue = 0;
    int row = threadIdx.y, col = threadIdx.x;
    // Changed: the guide loops A.width / BLOCK_SIZE times, dropping the last partial tile.
    for (int m = 0; m < (A.width + BLOCK_SIZE - 1) / BLOCK_SIZE; ++m) {
        Matrix Asub = GetSubMatrix(A, blockRow, m);
        Matrix Bsub = GetSubMatrix(B, m, blockCol);
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        As[row][col] = GetElement(Asub, row, col);  // each thread loads one element of each tile
        Bs[row][col] = GetElement(Bsub, row, col);
        __syncthreads();  // the tiles are complete before anyone multiplies
        for (int e = 0; e < BLOCK_SIZE; ++e) Cvalue += As[row][e] * Bs[e][col];
        __syncthreads();  // everyone is done with the tiles before they are overwritten
    }
    SetElement(Csub, row, col, Cvalue);
}
}  // namespace shared

// ---- Register blocking (the steps of siboehm/SGEMM_CUDA kernels 4-6, plus double buffering).
// A block of 256 threads computes a BM x BN = 128 x 128 tile of C; each thread keeps an 8 x 8
// block of results in registers: rows {4ty..4ty+3, 64+4ty..} and columns {4tx..4tx+3, 64+4tx..}.
// Per k step a thread loads 8 values of A and 8 of B from shared memory (four 16-byte loads) and
// does 64 FMAs with them, so shared memory bandwidth stops being the limit. The A tile is stored
// transposed (As[k][m]) so that a thread's 4 consecutive rows are one float4. Two shared buffers:
// the global loads of tile t+1 are issued before the math on tile t and land in the other buffer
// afterwards, so one barrier per tile suffices and the load latency hides behind the FMAs.
constexpr int BM = 128, BN = 128, BK = 8, THREADS = 256;

__device__ float4 load4(const Matrix M, int row, int col) {  // col % 4 == 0; zeros outside M
    if (row < M.height && col + 3 < M.width)
        return *reinterpret_cast<const float4*>(&M.elements[(size_t)row * M.stride + col]);
    float v[4];
    for (int i = 0; i < 4; ++i) v[i] = (row < M.height && col + i < M.width) ? M.elements[(size_t)row * M.stride + col + i] : 0.f;
    return make_float4(v[0], v[1], v[2], v[3]);
}

__device__ void store4(Matrix M, int row, int col, const float* v) {
    if (row >= M.height) return;
    if (col + 3 < M.width) *reinterpret_cast<float4*>(&M.elements[(size_t)row * M.stride + col]) = make_float4(v[0], v[1], v[2], v[3]);
    else
        for (int i = 0; i < 4; ++i)
            if (col + i < M.width) M.elements[(size_t)row * M.stride + col + i] = v[i];
}

__global__ void __launch_bounds__(THREADS, 2) sgemm_register_blocked(Matrix A, Matrix B, Matrix C) {
    // +4 floats per row: the transposed stores of A land in different banks, rows stay 16-B aligned.
    __shared__ __align__(16) float As[2][BK][BM + 4];
    __shared__ __align__(16) float Bs[2][BK][BN];
    constexpr int LA = BM * BK / 4 / THREADS, LB = BK * BN / 4 / THREADS;  // float4 loads per thread
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    // A warp covers 4 x 8 threads: its float4 reads of As (4 distinct) and Bs (8 distinct, 128
    // contiguous bytes) have no bank conflicts, but an LDS.128 hands 512 bytes to the warp and takes
    // more than one wavefront: sgemm_steps' step 6 reads the same 4 + 8 float4 per warp and ncu
    // measured 3.00 wavefronts per load there (its README, lab 6).
    const int ty = (warp / 2) * 4 + lane / 8, tx = (warp % 2) * 8 + lane % 8;
    const int bm = blockIdx.y * BM, bn = blockIdx.x * BN;

    float4 ra[LA], rb[LB];
    auto load_tile = [&](int k0) {  // global -> registers
        for (int i = 0; i < LA; ++i) {
            int f = tid + i * THREADS, r = f / (BK / 4), c = (f % (BK / 4)) * 4;
            ra[i] = load4(A, bm + r, k0 + c);
        }
        for (int i = 0; i < LB; ++i) {
            int f = tid + i * THREADS, r = f / (BN / 4), c = (f % (BN / 4)) * 4;
            rb[i] = load4(B, k0 + r, bn + c);
        }
    };
    auto store_tile = [&](int buf) {  // registers -> shared, A transposed
        for (int i = 0; i < LA; ++i) {
            int f = tid + i * THREADS, r = f / (BK / 4), c = (f % (BK / 4)) * 4;
            As[buf][c + 0][r] = ra[i].x;
            As[buf][c + 1][r] = ra[i].y;
            As[buf][c + 2][r] = ra[i].z;
            As[buf][c + 3][r] = ra[i].w;
        }
        for (int i = 0; i < LB; ++i) {
            int f = tid + i * THREADS, r = f / (BN / 4), c = (f % (BN / 4)) * 4;
            *reinterpret_cast<float4*>(&Bs[buf][r][c]) = rb[i];
        }
    };

    float acc[8][8] = {};
    const int tiles = (A.width + BK - 1) / BK;
    load_tile(0);
    store_tile(0);
    __syncthreads();
    for (int t = 0; t < tiles; ++t) {
        const int cur = t & 1;
        if (t + 1 < tiles) load_tile((t + 1) * BK);  // in flight during the math below
#pragma unroll
        for (int k = 0; k < BK; ++k) {
            float4 a4[2], b4[2];  // four 16-byte shared loads feed 64 FMAs
            a4[0] = *reinterpret_cast<const float4*>(&As[cur][k][4 * ty]);
            a4[1] = *reinterpret_cast<const float4*>(&As[cur][k][64 + 4 * ty]);
            b4[0] = *reinterpret_cast<const float4*>(&Bs[cur][k][4 * tx]);
            b4[1] = *reinterpret_cast<const float4*>(&Bs[cur][k][64 + 4 * tx]);
            const float* a = reinterpret_cast<const float*>(a4);
            const float* b = reinterpret_cast<const float*>(b4);
#pragma unroll
            for (int i = 0; i < 8; ++i)
#pragma unroll
                for (int j = 0; j < 8; ++j) acc[i][j] = fmaf(a[i], b[j], acc[i][j]);
        }
        // The other buffer was last read in iteration t-1, before the barrier that ended it.
        if (t + 1 < tiles) store_tile(cur ^ 1);
        __syncthreads();
    }
#pragma unroll  // acc must stay in registers: every index is a compile-time constant
    for (int i = 0; i < 8; ++i) {
        int row = bm + (i < 4 ? 4 * ty + i : 64 + 4 * ty + i - 4);
        store4(C, row, bn + 4 * tx, &acc[i][0]);
        store4(C, row, bn + 64 + 4 * tx, &acc[i][4]);
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Multiplies float matrices: naive, 16x16 shared tiles, register blocking, cuBLAS.");
    int M = (int)args.integer("m", 4096, 1, 16384, "rows of A and C");
    int N = (int)args.integer("n", 4096, 1, 16384, "columns of B and C");
    int K = (int)args.integer("k", 4096, 1, 16384, "columns of A, rows of B");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "matmul_tiled", Results::GFLOPS);
    args.parse_or_exit();
    table.validate();

    select_device(args.device());
    std::printf("C[%d x %d] = A[%d x %d] * B[%d x %d], fp32; %.1f GFLOP per product\n", M, N, M, K, K, N,
                2.0 * M * N * K / 1e9);

    std::vector<float> a = random_vector<float>((size_t)M * K, -1.f, 1.f, 1);
    std::vector<float> b = random_vector<float>((size_t)K * N, -1.f, 1.f, 2);
    std::vector<float> c((size_t)M * N), c_blas((size_t)M * N);

    // Device matrices with a stride rounded up to 4 floats (16-byte aligned rows).
    auto alloc = [](int height, int width) {
        Matrix m{width, height, (width + 3) / 4 * 4, nullptr};
        size_t bytes = (size_t)m.stride * height * sizeof(float);
        CHECK(cudaMalloc(&m.elements, bytes));
        CHECK(cudaMemset(m.elements, 0, bytes));  // the padding columns are defined too
        return m;
    };
    Matrix dA = alloc(M, K), dB = alloc(K, N), dC = alloc(M, N);
    CHECK(cudaMemcpy2D(dA.elements, dA.stride * sizeof(float), a.data(), K * sizeof(float), K * sizeof(float), M,
                       cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy2D(dB.elements, dB.stride * sizeof(float), b.data(), N * sizeof(float), N * sizeof(float), K,
                       cudaMemcpyHostToDevice));

    cublasHandle_t handle;
    CHECK_CUBLAS(cublasCreate(&handle));
    // FP32 on the FP32 cores: the default math mode never uses TF32 tensor cores for cublasSgemm
    // (only CUBLAS_TF32_TENSOR_OP_MATH would), so cuBLAS does the same arithmetic as our kernels.
    CHECK_CUBLAS(cublasSetMathMode(handle, CUBLAS_DEFAULT_MATH));
    const float one = 1.f, zero = 0.f;

    dim3 b16(BLOCK_SIZE, BLOCK_SIZE), g16((N + BLOCK_SIZE - 1) / BLOCK_SIZE, (M + BLOCK_SIZE - 1) / BLOCK_SIZE);
    dim3 gbig((N + BN - 1) / BN, (M + BM - 1) / BM);

    // Ground truth: a double-precision CPU product of sampled rows (all rows when the product is
    // small; at 4096^3 all of C would take minutes on one core) - 64 rows spread evenly from the
    // first to the last: every 128-row block row holds one while M <= 8065 (the gap is (M - 1) / 63);
    // above that some block rows are only compared with cuBLAS. The rest of C is compared with cuBLAS.
    std::vector<int> rows;
    int nsample = (double)M * N * K <= 1.5e8 ? M : std::min(M, 64);
    for (int i = 0; i < nsample; ++i) rows.push_back(nsample == M ? i : (int)((long long)i * (M - 1) / (nsample - 1)));
    std::vector<double> ref(rows.size() * N);
    gemm_rows_cpu(a, b, ref, rows, N, K);
    // Tolerance: each result sums K products of numbers in [-1, 1]. fp32 rounding (u = 2^-24) adds
    // an error per addition proportional to the running sum; these errors add like a random walk,
    // ~sqrt(K) * u * |partial sums| <= sqrt(K) * u * K (worst case |sum| ~ K). atol = K^1.5 * u is
    // ~0.016 at K = 4096, about 100x the typical error; a wrong index is off by ~|C| ~ sqrt(K / 9)
    // ~ 21 and fails by three orders of magnitude, a lost k-tile (BK = 8 products) by ~sqrt(8 / 9)
    // ~ 0.9, still ~60x the tolerance.
    double atol = std::pow((double)K, 1.5) * std::ldexp(1.0, -24);

    std::vector<float> sampled(rows.size() * N), sampled_ref(rows.size() * N);
    for (size_t i = 0; i < sampled_ref.size(); ++i) sampled_ref[i] = (float)ref[i];
    const std::string blas_name = "cuBLAS SGEMM (FP32)";
    // cuBLAS is checked first (it is the baseline row): the full-size reference for the others.
    auto check = [&](Verdict& verdict, const std::string& name) {
        bool blas = name == blas_name;
        std::vector<float>& out = blas ? c_blas : c;
        CHECK(cudaMemcpy2D(out.data(), N * sizeof(float), dC.elements, dC.stride * sizeof(float), N * sizeof(float),
                           M, cudaMemcpyDeviceToHost));
        for (size_t r = 0; r < rows.size(); ++r)
            std::copy(out.begin() + (size_t)rows[r] * N, out.begin() + (size_t)(rows[r] + 1) * N, sampled.begin() + r * N);
        std::string what = name.substr(0, 22);
        verdict.close(what + (nsample == M ? " vs CPU" : " vs CPU rows"), sampled_ref.data(), sampled.data(),
                      sampled.size(), atol, 0.0);
        if (!blas && nsample != M) verdict.close(what + " vs cuBLAS", c_blas.data(), c.data(), c.size(), 2 * atol, 0.0);
    };
    auto poison = [&] { CHECK(cudaMemset(dC.elements, 0xff, (size_t)dC.stride * M * sizeof(float))); };  // NaN

    double flop = 2.0 * M * N * K;
    table.param("m", M);
    table.param("n", N);
    table.param("k", K);
    // cuBLAS is column-major. A row-major M x N matrix is a column-major N x M one (its
    // transpose), and C^T = B^T * A^T: pass B first, with the sizes swapped. No copies.
    table.baseline(blas_name, [&] {
        CHECK_CUBLAS(cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, N, M, K, &one, dB.elements, dB.stride, dA.elements,
                                 dA.stride, &zero, dC.elements, dC.stride));
    }, flop, check).prepare = poison;
    table.add("naive MatMulKernel (G 3.2.4)", [&] { naive::MatMulKernel<<<g16, b16>>>(dA, dB, dC); }, flop, check,
              poison);
    table.add("shared 16x16 MatMulKernel", [&] { shared::MatMulKernel<<<g16, b16>>>(dA, dB, dC); }, flop, check, poison);
    table.add("register-blocked 128x128 (8x8)", [&] { sgemm_register_blocked<<<gbig, THREADS>>>(dA, dB, dC); }, flop,
              check, poison);
    table.speedup_over("naive MatMulKernel (G 3.2.4)");
    Verdict verdict;
    table.run(verdict, reps, 1);

    // Global loads of A and B (before caches): naive 2MNK; a T x T tile divides them by T.
    double naive_gb = 2.0 * M * N * K * 4 / 1e9;
    std::printf("global reads of A+B: naive %.1f GB, 16x16 tiles %.1f GB (/16), 128x128 tiles %.2f GB (/128)\n",
                naive_gb, naive_gb / 16, naive_gb / 128);
    const Results::Version *best = table.find("register-blocked 128x128 (8x8)"), *blas = table.base();
    if (best && blas) std::printf("best own kernel / cuBLAS: %.1f%%\n", 100 * blas->ms / best->ms);

    CHECK_CUBLAS(cublasDestroy(handle));
    CHECK(cudaFree(dA.elements));
    CHECK(cudaFree(dB.elements));
    CHECK(cudaFree(dC.elements));
    return verdict.finish();
}
