// launch_config - exercise (fix): C = alpha * A + B on a matrix, one thread per element, 2D grid.
//
// Manual: G 3.2.10 错误检查; N 5.1 Cuda编程模型中的错误检测; G 2.2 线程层次.
// Your task: the program's own check fails, yet no CUDA error stopped it: every runtime call is
//         wrapped in CHECK. Find out why the kernel's result is missing and why nothing reported
//         it, fix the bug, and make sure that this kind of error stops the program at the line
//         that caused it from now on (common/check.cuh has what you need).
// Build and check, from 01_intro: make exercises (builds workspace/launch_config.cu), then
//         make check (says `solved` or `not yet` with a hint). By hand:
//           cd workspace && ./launch_config --rows=1000 --cols=1500
// Compile: nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o launch_config launch_config.cu
// Output: the check of C against the CPU and that axpy_2d wrote every element of it (the program
//         downloads C itself), then PASSED or FAILED. make check also wants CHECK_LAUNCH() in your
//         region (the error check this exercise is about).
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <vector>
#include <cstring>
#include "common.cuh"
#include "witness.cuh"  // gpu_witness, witness(), witness_sum(), witness_now(): the kernel's record

// CPU reference.
void axpy_cpu(const float* a, const float* b, float* c, long long count, float alpha) {
    for (long long i = 0; i < count; ++i) c[i] = alpha * a[i] + b[i];
}

// x walks the columns, so the threads of a warp touch consecutive addresses of one row.
__global__ void axpy_2d(const float* a, const float* b, float* c, int rows, int cols, float alpha) {
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row < rows && col < cols) {
        size_t i = (size_t)row * cols + col;
        c[i] = alpha * a[i] + b[i];
        atomicAdd(&gpu_witness, witness(&c[i], __float_as_uint(c[i])));
    }
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: C = alpha * A + B on a rows x cols matrix with a 2D grid.");
    int rows = (int)args.integer("rows", 1000, 1, 16384, "matrix rows");
    int cols = (int)args.integer("cols", 1500, 1, 16384, "matrix columns");
    args.parse_or_exit();

    select_device(args.device());
    long long count = (long long)rows * cols;
    size_t bytes = count * sizeof(float);
    const float alpha = 1.5f;
    std::printf("%d x %d floats, C = %.1f * A + B\n", rows, cols, alpha);
    std::vector<float> a = random_vector<float>(count, -1.f, 1.f, 1), b = random_vector<float>(count, -1.f, 1.f, 2);
    std::vector<float> ref(count), out(count);
    axpy_cpu(a.data(), b.data(), ref.data(), count, alpha);

    float *d_a, *d_b, *d_c;
    CHECK(cudaMalloc(&d_a, bytes));
    CHECK(cudaMalloc(&d_b, bytes));
    CHECK(cudaMalloc(&d_c, bytes));
    CHECK(cudaMemcpy(d_a, a.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_b, b.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_c, 0xff, bytes));  // NaN everywhere: an element no thread wrote cannot pass

    // Your region is a function: it sees copies of main's variables, which stay as they are, except out.
    auto your_region = [=, &out]() {
    // ---- your change: begin ----
    // Two warps across a row and 32 rows per block: each block covers a 64 x 32 tile.
    dim3 block(64, 32);
    dim3 grid((cols + block.x - 1) / block.x, (rows + block.y - 1) / block.y);
    axpy_2d<<<grid, block>>>(d_a, d_b, d_c, rows, cols, alpha);
    CHECK(cudaMemcpy(out.data(), d_c, bytes, cudaMemcpyDeviceToHost));
    // ---- your change: end ----
    REGION_GUARD_RUNTIME();  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
    REGION_GUARD(witness_sum); REGION_GUARD_TYPE(Verdict);
    };
    your_region();

    // The program downloads C itself. The GPU may fuse alpha * a + b into one FMA (one rounding
    // instead of two): allow an ulp or so. Every element must have been written by axpy_2d, once.
    std::vector<float> got(count);
    CHECK(cudaMemcpy(got.data(), d_c, bytes, cudaMemcpyDeviceToHost));
    unsigned long long wrote = 0;
    CHECK(cudaMemcpyFromSymbol(&wrote, gpu_witness, sizeof wrote));
    Verdict verdict;
    verdict.close("C vs CPU", ref.data(), got.data(), count, 1e-6, 1e-6);
    verdict.check(wrote == witness_sum(d_c, got.data(), count), "every element of C written by axpy_2d, once");
    CHECK(cudaFree(d_a));
    CHECK(cudaFree(d_b));
    CHECK(cudaFree(d_c));
    return verdict.finish();
}
