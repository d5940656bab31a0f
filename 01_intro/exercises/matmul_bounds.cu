// matmul_bounds - exercise (fix): the notes' integer matrix multiply, one thread per element of C.
//
// Manual: N 4.4 矩阵乘法 (and N 5.2.1, whose layout this kernel uses: column from threadIdx.x).
// Your task: at the notes' sizes (m = 100, n = 50, k = 113: none a multiple of the 16 x 16 block)
//         this program is wrong, and compute-sanitizer memcheck says where. Find the bug, fix it,
//         and make the program pass its own check with memcheck reporting 0 errors.
// Build and check, from 01_intro: make exercises (builds workspace/matmul_bounds.cu), then
//         make check (runs it and memcheck, says `solved` or `not yet` with a hint). By hand:
//           cd workspace && ./matmul_bounds --m=100 --n=50 --k=113
//           compute-sanitizer --tool memcheck ./matmul_bounds --m=100 --n=50 --k=113
// Compile: nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o matmul_bounds matmul_bounds.cu
// Output: the exact check of C against the CPU, then PASSED or FAILED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <vector>
#include "common.cuh"

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

// C (m x k) = A (m x n) * B (n x k): one thread per element of C, the row from y, the column
// from x; the grid is rounded up to whole 16 x 16 blocks.
namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
__global__ void gpu_matrix_mult(const int* a, const int* b, int* c, int m, int n, int k) {
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int sum = 0;
    for (int i = 0; i < n; i++) sum += a[row * n + i] * b[i * k + col];
    c[row * k + col] = sum;
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::gpu_matrix_mult;
REGION_SIGNATURE(gpu_matrix_mult, void (*)(const int*, const int*, int*, int, int, int));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(cpu_matrix_mult); REGION_GUARD(random_vector<int>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: the notes' integer matrix multiply at sizes that are not multiples of 16.");
    int m = (int)args.integer("m", 100, 1, 4096, "rows of A and C");
    int n = (int)args.integer("n", 50, 1, 2048, "columns of A = rows of B (<= 2048 keeps int sums exact)");
    int k = (int)args.integer("k", 113, 1, 4096, "columns of B and C");
    args.parse_or_exit();

    select_device(args.device());
    std::printf("C(%d x %d) = A(%d x %d) * B(%d x %d), int, blocks of %dx%d\n", m, k, m, n, n, k, BLOCK_SIZE,
                BLOCK_SIZE);
    std::vector<int> a = random_vector<int>((size_t)m * n, 0, 1023, 1), b = random_vector<int>((size_t)n * k, 0, 1023, 2);
    std::vector<int> ref((size_t)m * k), out((size_t)m * k);
    cpu_matrix_mult(a.data(), b.data(), ref.data(), m, n, k);

    int *d_a, *d_b, *d_c;
    size_t bytes_a = (size_t)m * n * sizeof(int), bytes_b = (size_t)n * k * sizeof(int),
           bytes_c = (size_t)m * k * sizeof(int);
    CHECK(cudaMalloc(&d_a, bytes_a));
    CHECK(cudaMalloc(&d_b, bytes_b));
    CHECK(cudaMalloc(&d_c, bytes_c));
    CHECK(cudaMemcpy(d_a, a.data(), bytes_a, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), bytes_b, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_c, 0xff, bytes_c));  // -1 everywhere: an element no thread wrote cannot pass

    dim3 block(BLOCK_SIZE, BLOCK_SIZE);
    dim3 grid((k + BLOCK_SIZE - 1) / BLOCK_SIZE, (m + BLOCK_SIZE - 1) / BLOCK_SIZE);
    gpu_matrix_mult<<<grid, block>>>(d_a, d_b, d_c, m, n, k);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_c, bytes_c, cudaMemcpyDeviceToHost));

    Verdict verdict;
    verdict.exact("C vs CPU (exact)", ref.data(), out.data(), (size_t)m * k);
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    return verdict.finish();
}
