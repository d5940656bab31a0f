// managed_matmul - the notes' integer matrix multiply on __managed__ global arrays: no
// cudaMalloc, no cudaMemcpy, the CPU and the GPU use the same variables.
//
// Manual: N 6.1 统一内存 (6.6.1 统一内存介绍, 6.6.2 编程: "__managed__ int a[1000 * 1000]; ...
//         从而不用在 main() 函数中使用 cudaMemcpy()"); N 4.4 矩阵乘法 (gpu_matrix_mult,
//         cpu_matrix_mult).
// Shows:  a __managed__ variable is a __device__ variable that host code may also read and write
//         by its name. The CPU fills a and b, the kernel reads them and writes c_gpu, the CPU
//         computes c_cpu and compares - with no copy in the program. The data still moves: the
//         first launch pays for migrating a, b and c_gpu to the GPU (page faults inside the
//         kernel), later launches find them there. The host must not touch managed memory while
//         a kernel may use it: cudaDeviceSynchronize() after the launch (without
//         concurrentManagedAccess the CPU access would even crash the program).
// Build:  make managed_matmul  (nvcc -std=c++17 -O3 -arch=native -I../common -o managed_matmul managed_matmul.cu)
// Run:    ./managed_matmul [--m=1000] [--n=1000] [--k=1000] [--reps=10]
// Output: the first launch's time (with migration) and the resident time, two checks against
//         the CPU; PASSED.
#include <algorithm>
#include <climits>
#include <vector>
#include "common.cuh"

// The notes' declarations: fixed-size global arrays, visible to host and device code alike.
constexpr int MAX_ELEMS = 1000 * 1000;
__managed__ int a[MAX_ELEMS];
__managed__ int b[MAX_ELEMS];
__managed__ int c_gpu[MAX_ELEMS];
__managed__ int c_cpu[MAX_ELEMS];

// CPU reference (the notes' cpu_matrix_mult): a is m x n, b is n x k, result m x k, row-major.
// Loop order i-h-j walks b and the result row by row (the notes' i-j-h order strides through b);
// integer sums are exact in any order.
void cpu_matrix_mult(const int* h_a, const int* h_b, int* h_result, int m, int n, int k) {
    for (int i = 0; i < m; ++i) {
        int* row = h_result + (size_t)i * k;
        std::fill(row, row + k, 0);
        for (int h = 0; h < n; ++h) {
            int aih = h_a[i * n + h];
            for (int j = 0; j < k; ++j) row[j] += aih * h_b[h * k + j];
        }
    }
}

// One thread per output element. Unlike the notes (row from x), the column comes from threadIdx.x
// so that a warp reads consecutive b[] and writes consecutive c[] (coalesced).
__global__ void gpu_matrix_mult(const int* a, const int* b, int* c, int m, int n, int k) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < m && col < k) {
        int sum = 0;
        for (int i = 0; i < n; ++i) sum += a[row * n + i] * b[i * k + col];
        c[row * k + col] = sum;
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Matrix multiply on __managed__ global arrays, no explicit copies (notes 6.1).");
    int m = (int)args.integer("m", 1000, 1, 1000, "rows of A and C");
    int n = (int)args.integer("n", 1000, 1, 1000, "columns of A, rows of B");
    int k = (int)args.integer("k", 1000, 1, 1000, "columns of B and C");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int managed = 0, concurrent = 0;
    managed = device_attribute(cudaDevAttrManagedMemory, dev.id);
    concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, dev.id);
    if (!managed) skip("this GPU has no managed memory (cudaDevAttrManagedMemory = 0): __managed__ needs it");
    std::printf("A %d x %d, B %d x %d, C %d x %d (int32) in __managed__ arrays of %d ints; "
                "concurrentManagedAccess %d\n", m, n, n, k, m, k, MAX_ELEMS, concurrent);

    // The host writes the managed arrays by their names: no cudaMemcpy anywhere.
    std::vector<int> ra = random_vector<int>((size_t)m * n, -50, 50, 1);
    std::vector<int> rb = random_vector<int>((size_t)n * k, -50, 50, 2);
    std::copy(ra.begin(), ra.end(), a);
    std::copy(rb.begin(), rb.end(), b);
    std::fill(c_gpu, c_gpu + (size_t)m * k, INT_MIN);  // poison: an element not written cannot pass
    cpu_matrix_mult(a, b, c_cpu, m, n, k);

    dim3 block(16, 16);
    dim3 grid((k + block.x - 1) / block.x, (m + block.y - 1) / block.y);
    cudaFuncAttributes fa;
    CHECK(cudaFuncGetAttributes(&fa, gpu_matrix_mult));  // loads the module now, not in the timed launch
    Verdict verdict;
    GpuTimer t;
    // First launch: a, b and c_gpu were last touched by the CPU, so their pages migrate now.
    t.start();
    gpu_matrix_mult<<<grid, block>>>(a, b, c_gpu, m, n, k);
    CHECK_LAUNCH();
    double first_ms = t.stop();
    CHECK(cudaDeviceSynchronize());  // the CPU may read managed memory only after the kernel is done
    verdict.exact("first launch vs cpu_matrix_mult", c_cpu, c_gpu, (size_t)m * k);

    // Poisoned again by the CPU; the timed launches must rewrite every element.
    std::fill(c_gpu, c_gpu + (size_t)m * k, INT_MIN);
    double resident_ms = bench_ms([&] { gpu_matrix_mult<<<grid, block>>>(a, b, c_gpu, m, n, k); }, reps);
    CHECK(cudaDeviceSynchronize());
    verdict.exact("timed launches vs cpu_matrix_mult", c_cpu, c_gpu, (size_t)m * k);

    double ops = 2.0 * m * n * k;
    std::printf("\nfirst launch (pages migrate to the GPU)   %9.3f ms %8.1f Gop/s\n", first_ms, ops / (first_ms * 1e6));
    std::printf("later launches (pages resident, median)   %9.3f ms %8.1f Gop/s\n", resident_ms,
                ops / (resident_ms * 1e6));
    std::printf("first / resident: %.1fx (the migration of %.1f MB is paid inside the first kernel)\n",
                first_ms / resident_ms, 4.0 * ((double)m * n + (double)n * k + (double)m * k) / 1e6);
    return verdict.finish();
}
