// matmul_naive - naive integer matrix multiply, timed with CUDA events, in two thread layouts.
//
// Manual: N 4.4 矩阵乘法; N 5.2 CUDA编程模型中的事件 (5.2.1 使用实例: timing with cudaEventRecord /
//         cudaEventElapsedTime).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o matmul_naive matmul_naive.cu
// Shows:  C (m x k) = A (m x n) * B (n x k), one thread per element of C, 16x16 blocks.
//         The notes' first version (4.4) takes the ROW from threadIdx.x: the 16 threads of a
//         half-warp then read A at 16 rows n*4 bytes apart and write C at 16 rows apart, one
//         32-byte sector per thread. The version in 5.2.1 takes the COLUMN from threadIdx.x:
//         those threads read one A element (broadcast) and 16 consecutive B elements, and write
//         C contiguously. Same arithmetic, far fewer memory transactions: the coalesced layout
//         is faster, and the ratio is printed.
//         Fixed from the notes: they compared ints through fabs(...) > 1e-10 and only printed
//         Pass/Error, and 5.2.1 never frees h_cc; here the check is exact, reports the first
//         mismatch and sets the exit code. Values stay in [0, 1023] as in the notes, and
//         n <= 2048 keeps every sum below 2^31 (no int overflow).
//         Continued in 03_shared/matmul_tiled.cu: the guide's float version of the same
//         one-thread-per-element kernel, then shared-memory tiles, register blocking and cuBLAS.
//         (The notes name the inner dimension n, so --n here is matmul_tiled's --k.)
// Build:  make matmul_naive      Run: ./matmul_naive [--m=1024] [--n=1024] [--k=1024] [--reps=10]
// Output: the exact checks of both layouts, then time, GOP/s and the notes / coalesced ratio.
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

#define BLOCK_SIZE 16

// CPU reference, loops ordered i-h-j so the inner loop walks B and C contiguously.
void cpu_matrix_mult(const int* a, const int* b, int* c, int m, int n, int k) {
    for (int i = 0; i < m; ++i) {
        int* row = c + (long long)i * k;
        for (int j = 0; j < k; ++j) row[j] = 0;
        for (int h = 0; h < n; ++h) {
            int aih = a[(long long)i * n + h];
            const int* brow = b + (long long)h * k;
            for (int j = 0; j < k; ++j) row[j] += aih * brow[j];
        }
    }
}

// N 4.4: row from x, column from y; the grid is (rows, cols) in blocks.
__global__ void gpu_matrix_mult_rowx(const int* a, const int* b, int* c, int m, int n, int k) {
    int row = blockIdx.x * blockDim.x + threadIdx.x;
    int col = blockIdx.y * blockDim.y + threadIdx.y;
    if (col < k && row < m) {
        int sum = 0;
        for (int i = 0; i < n; i++) sum += a[row * n + i] * b[i * k + col];
        c[row * k + col] = sum;
    }
}

// N 5.2.1: column from x, row from y; the grid is (cols, rows) in blocks.
__global__ void gpu_matrix_mult(const int* a, const int* b, int* c, int m, int n, int k) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (col < k && row < m) {
        int sum = 0;
        for (int i = 0; i < n; i++) sum += a[row * n + i] * b[i * k + col];
        c[row * k + col] = sum;
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Naive integer matrix multiply: the notes' row-from-x layout vs the coalesced one.");
    int m = (int)args.integer("m", 1024, 1, 8192, "rows of A and C");
    int n = (int)args.integer("n", 1024, 1, 2048, "columns of A = rows of B (<= 2048 keeps int sums exact)");
    int k = (int)args.integer("k", 1024, 1, 8192, "columns of B and C");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "matmul_naive", Results::GOPS);
    args.parse_or_exit();
    table.validate();

    select_device(args.device());
    std::printf("C(%d x %d) = A(%d x %d) * B(%d x %d), int, blocks of %dx%d\n", m, k, m, n, n, k, BLOCK_SIZE,
                BLOCK_SIZE);

    std::vector<int> a = random_vector<int>((size_t)m * n, 0, 1023, 1), b = random_vector<int>((size_t)n * k, 0, 1023, 2);
    std::vector<int> ref((size_t)m * k), out((size_t)m * k);
    CpuTimer cpu;
    cpu_matrix_mult(a.data(), b.data(), ref.data(), m, n, k);
    double cpu_ms = cpu.stop_ms();

    int *d_a, *d_b, *d_c;
    size_t bytes_c = (size_t)m * k * sizeof(int);
    CHECK(cudaMalloc(&d_a, (size_t)m * n * sizeof(int)));
    CHECK(cudaMalloc(&d_b, (size_t)n * k * sizeof(int)));
    CHECK(cudaMalloc(&d_c, bytes_c));
    CHECK(cudaMemcpy(d_a, a.data(), (size_t)m * n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), (size_t)n * k * sizeof(int), cudaMemcpyHostToDevice));

    unsigned grid_rows = (m + BLOCK_SIZE - 1) / BLOCK_SIZE, grid_cols = (k + BLOCK_SIZE - 1) / BLOCK_SIZE;
    dim3 block(BLOCK_SIZE, BLOCK_SIZE);
    auto rowx = [&] { gpu_matrix_mult_rowx<<<dim3(grid_rows, grid_cols), block>>>(d_a, d_b, d_c, m, n, k); };
    auto colx = [&] { gpu_matrix_mult<<<dim3(grid_cols, grid_rows), block>>>(d_a, d_b, d_c, m, n, k); };
    auto check = [&](Verdict& verdict, const std::string& name) {
        CHECK(cudaMemcpy(out.data(), d_c, bytes_c, cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), out.data(), (size_t)m * k);
    };
    auto poison = [&] { CHECK(cudaMemset(d_c, 0xff, bytes_c)); };  // -1 everywhere: a skipped element cannot pass

    // bench_ms brackets each launch with cudaEventRecord(start) / (stop) and reads
    // cudaEventElapsedTime, as in N 5.2.1, after warm-up launches, and takes the median.
    double ops = 2.0 * m * n * k;  // one multiply and one add per inner step
    table.param("m", m);
    table.param("n", n);
    table.param("k", k);
    table.add("notes 4.4 (row from threadIdx.x)", rowx, ops, check, poison);
    table.add("coalesced (col from threadIdx.x)", colx, ops, check, poison);
    table.speedup_over("notes 4.4 (row from threadIdx.x)");
    std::printf("CPU (1 thread, i-h-j loops): %.3f ms, %.1f GOP/s\n", cpu_ms, ops / (cpu_ms * 1e6));
    Verdict verdict;
    table.run(verdict, reps);
    const Results::Version *notes = table.find("notes 4.4 (row from threadIdx.x)"),
                           *coal = table.find("coalesced (col from threadIdx.x)");
    if (notes && coal) std::printf("notes 4.4 / coalesced time: %.1fx\n", notes->ms / coal->ms);

    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    return verdict.finish();
}
