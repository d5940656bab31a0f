// transpose_pad - exercise (make it faster): a matrix transpose through a shared-memory tile.
//
// Manual: M "银行冲突及其对共享内存的影响" (bank conflicts and their effect on shared memory);
//         N 5.6.2 Bank conflicts.
// Your task: transpose_tile below is the book's matrix_transpose_shared. It is correct, but far
//         from the copy speed that a transpose can reach. Make it faster until the printed
//         `ratio vs copy` meets the target in exercises/exercises.txt, without breaking the check
//         (any shape; sizes need not be multiples of 32). Change only the kernel.
// Build and check (from 03_shared): `make exercises` builds workspace/transpose_pad from your copy
//         in workspace/; `make check` runs it at the exercise's size and says `solved` or `not yet`.
//         By hand: cd workspace && ./transpose_pad --rows=8191 --cols=8193
// Compile by hand (in workspace/): nvcc -std=c++17 -O3 -arch=native -I../../common -o transpose_pad transpose_pad.cu
// Output: the check, the kernel's and cudaMemcpy D2D's time and GB/s, `ratio vs copy: X.XX`, PASSED.
#include <vector>
#include "common.cuh"

constexpr int TILE = 32, ROWS = 8;  // a TILE x ROWS block moves a TILE x TILE tile

void transpose_cpu(const float* in, float* out, int rows, int cols) {
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}

// in is rows x cols (row-major), out is cols x rows. Both global accesses are row-wise: the tile
// is loaded by rows and written back by rows of out, the transpose happens in shared memory.
__global__ void transpose_tile(const float* in, float* out, int rows, int cols) {
    __shared__ float tile[TILE][TILE + 1];  // +1: a column of the tile spans all 32 banks
    int x = blockIdx.x * TILE + threadIdx.x, y = blockIdx.y * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < cols && y + j < rows) tile[threadIdx.x][threadIdx.y + j] = in[(size_t)(y + j) * cols + x];
    __syncthreads();
    x = blockIdx.y * TILE + threadIdx.x;
    y = blockIdx.x * TILE + threadIdx.y;
    for (int j = 0; j < TILE; j += ROWS)
        if (x < rows && y + j < cols) out[(size_t)(y + j) * rows + x] = tile[threadIdx.y + j][threadIdx.x];
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: transposes a float matrix through a shared tile; make it faster.");
    int rows = (int)args.integer("rows", 8191, 1, 16384, "rows of the input matrix");
    int cols = (int)args.integer("cols", 8193, 1, 16384, "columns of the input matrix");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    select_device(args.device());
    size_t n = (size_t)rows * cols, bytes = n * sizeof(float);
    std::printf("transpose %d x %d fp32 (%.1f MB per matrix), tile %dx%d, block %dx%d\n", rows, cols, bytes / 1e6,
                TILE, TILE, TILE, ROWS);
    std::vector<float> h_in = random_vector<float>(n, -1000.f, 1000.f, 1), ref(n), h_out(n);
    transpose_cpu(h_in.data(), ref.data(), rows, cols);

    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0xff, bytes));  // NaN: an element never written fails the check
    dim3 block(TILE, ROWS), grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    auto run = [&] { transpose_tile<<<grid, block>>>(d_in, d_out, rows, cols); };
    run();
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(h_out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
    Verdict verdict;
    verdict.exact("transpose_tile vs CPU", ref.data(), h_out.data(), n);

    // A transpose reads and writes every byte once, like a copy: cudaMemcpy D2D is its ceiling.
    double ms = bench_ms(run, reps), bw = gbps(2.0 * bytes, ms), d2d = d2d_copy_gbps(bytes, reps);
    std::printf("cudaMemcpy D2D   %8.1f GB/s\n", d2d);
    std::printf("transpose_tile   %8.1f GB/s  %8.3f ms\n", bw, ms);
    std::printf("ratio vs copy: %.2f\n", bw / d2d);

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
