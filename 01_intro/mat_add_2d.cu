// mat_add_2d - the guide's MatAdd: 2D blocks of 16x16 threads over an N x N matrix.
//
// Manual: G 2.2 线程层次 (MatAdd with dim3 threadsPerBlock(16, 16) and a bounds check).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o mat_add_2d mat_add_2d.cu
// Shows:  a 2D grid of 16x16 blocks covers a matrix whose size is not a multiple of 16 only if
//         the grid is rounded UP and the kernel checks bounds. The guide's own launch
//         numBlocks(N / 16, N / 16) rounds down ("for simplicity assumes N is a multiple of 16"):
//         here it is launched once to show the rows and columns it leaves untouched. Then the
//         guide's indexing (i = x index picks the ROW, C[i][j]) is compared with the coalesced
//         one (x picks the column): in the guide's version the 16 threads of a half-warp touch
//         16 different rows, N*4 bytes apart, so each access needs its own 32-byte sector.
// Build:  make mat_add_2d        Run: ./mat_add_2d [--n=8191] [--reps=20]
// Output: the untouched-element count of the round-down grid, the exact checks, then time, GB/s
//         and share of cudaMemcpy D2D for both indexings and their ratio; PASSED.
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// CPU reference: C = A + B, row-major N x N.
void mat_add_cpu(const float* a, const float* b, float* c, int n) {
    for (long long i = 0; i < (long long)n * n; ++i) c[i] = a[i] + b[i];
}

// The guide's MatAdd with its indexing: i from x is the row. Row-major float A[N][N] is passed
// as a pointer because N is a run-time value here.
__global__ void MatAdd(const float* A, const float* B, float* C, int N) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    int j = blockIdx.y * blockDim.y + threadIdx.y;
    if (i < N && j < N) C[(long long)i * N + j] = A[(long long)i * N + j] + B[(long long)i * N + j];
}

// Same work, x picks the column: consecutive threads of a warp read consecutive floats.
__global__ void MatAdd_coalesced(const float* A, const float* B, float* C, int N) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < N && col < N) C[(long long)row * N + col] = A[(long long)row * N + col] + B[(long long)row * N + col];
}

// The best version adds one idea to the coalesced one: a block one warp wide. A 16x16 block gives
// each warp two half rows of 64 bytes; a 32x4 block gives each warp one row segment of 128 bytes,
// and each thread adds kRows rows (loads of both rows issued before the first add). Measured on the
// H100, taller blocks (32x8 with 4 rows per thread) were slower than this 32x4 one (the README).
constexpr int kRows = 2;
__global__ void MatAdd_wide(const float* A, const float* B, float* C, int N) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row0 = blockIdx.y * blockDim.y * kRows + threadIdx.y;
    if (col >= N) return;
    float a[kRows], b[kRows];
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        long long row = row0 + k * blockDim.y;
        if (row < N) {
            a[k] = A[row * N + col];
            b[k] = B[row * N + col];
        }
    }
#pragma unroll
    for (int k = 0; k < kRows; ++k) {
        long long row = row0 + k * blockDim.y;
        if (row < N) C[row * N + col] = a[k] + b[k];
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Adds two N x N matrices with 16x16 thread blocks (the guide's MatAdd).");
    int n = (int)args.integer("n", 8191, 1, 16384, "matrix size N (N x N floats)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "mat_add_2d", Results::GBPS);
    args.parse_or_exit();
    table.validate();

    select_device(args.device());
    long long elems = (long long)n * n;
    size_t bytes = elems * sizeof(float);
    std::printf("N = %d (%.1f MB per matrix), blocks of 16x16\n", n, bytes / 1e6);

    std::vector<float> a = random_vector<float>(elems, -1.f, 1.f, 1), b = random_vector<float>(elems, -1.f, 1.f, 2);
    std::vector<float> ref(elems), out(elems);
    mat_add_cpu(a.data(), b.data(), ref.data(), n);

    float *d_a, *d_b, *d_c;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_c, bytes));
    CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));

    dim3 threadsPerBlock(16, 16);
    Verdict verdict;

    // The guide's grid, rounded down: the last N % 16 rows and columns get no thread.
    dim3 floorBlocks(n / 16, n / 16);
    long long untouched = -1;
    if (floorBlocks.x > 0) {  // N < 16 would be an empty grid: an invalid launch
        CHECK(cudaMemset(d_c, 0xff, bytes));  // NaN pattern: an element no thread wrote
        MatAdd<<<floorBlocks, threadsPerBlock>>>(d_a, d_b, d_c, n);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out.data(), d_c, bytes, cudaMemcpyDeviceToHost));
        untouched = 0;
        for (long long k = 0; k < elems; ++k) untouched += out[k] != out[k];  // NaN != NaN
        long long covered = (long long)(n / 16 * 16) * (n / 16 * 16);
        std::printf("guide's grid N/16 x N/16 = %u x %u: %lld of %lld elements untouched (expected %lld)\n",
                    floorBlocks.x, floorBlocks.y, untouched, elems, elems - covered);
        verdict.check(untouched == elems - covered, "round-down grid misses the edge");
    }

    // Rounded up: enough blocks for every element; the bounds check idles the extra threads.
    dim3 numBlocks((n + 15) / 16, (n + 15) / 16);
    auto guide = [&] { MatAdd<<<numBlocks, threadsPerBlock>>>(d_a, d_b, d_c, n); };
    auto coalesced = [&] { MatAdd_coalesced<<<numBlocks, threadsPerBlock>>>(d_a, d_b, d_c, n); };
    dim3 wideBlock(32, 4), wideBlocks((n + 31) / 32, (n + 4 * kRows - 1) / (4 * kRows));
    auto wide = [&] { MatAdd_wide<<<wideBlocks, wideBlock>>>(d_a, d_b, d_c, n); };
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_c, bytes, cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), out.data(), elems);  // one IEEE add each: bit-exact
    };
    auto poison = [&] { CHECK(cudaMemset(d_c, 0xff, bytes)); };
    double moved = 3.0 * bytes;  // read A and B, write C
    table.param("n", n);
    table.baseline_d2d(bytes);
    table.add("MatAdd (guide: x -> row)", guide, moved, check, poison);
    table.add("MatAdd_coalesced (x -> column)", coalesced, moved, check, poison);
    table.add("MatAdd_wide (32x4 block, 2 rows per thread)", wide, moved, check, poison);
    table.run(verdict, reps);
    const Results::Version *g = table.find("MatAdd (guide: x -> row)"), *c = table.find("MatAdd_coalesced (x -> column)");
    if (g && c) std::printf("guide / coalesced time: %.1fx\n", g->ms / c->ms);

    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    return verdict.finish();
}
