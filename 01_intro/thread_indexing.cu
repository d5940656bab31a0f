// thread_indexing - the nine grid/block layouts and the global thread index of each.
//
// Manual: G 2.2 线程层次 (thread ID x + y*Dx + z*Dx*Dy; at most 1024 threads per block);
//         N 3.2.2 CUDA线程索引, N 3.2.3 CUDA线程分配, N 3.3.4 CUDA Thread Indexing.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o thread_indexing thread_indexing.cu
// Shows:  for every combination of a 1D/2D/3D grid with 1D/2D/3D blocks, the notes' index
//         function getGlobalIdx_<grid>_<block>() numbers the threads 0..total-1 exactly once, and
//         the threads of one block get consecutive numbers (block id = the guide's formula applied
//         to blockIdx/gridDim, thread id = the formula applied to threadIdx/blockDim). The grid
//         overshoots n, so threads with an index >= n must do nothing (the bounds check). The 2D
//         and 3D grids are about twice as wide (x) as tall (y): on a square one a formula that
//         takes gridDim.y for gridDim.x would number every thread right.
//         Finally a block of 1025 threads is refused. The guide and the notes name the error
//         cudaErrorInvalidConfiguration; CUDA 13.0 (driver 580, H200) returns
//         cudaErrorInvalidValue for it. Either is accepted; the one seen is printed.
//         Bugs in the notes, fixed: they name the 1D-grid-of-2D-blocks function getGlobalIdx_1D_3D
//         (a second definition with the same name: it does not compile) and the 1D_3D one lacks a
//         '*' in "threadIdx.z blockDim.y" (a syntax error). Here they are getGlobalIdx_1D_2D and
//         getGlobalIdx_1D_3D with threadIdx.z * blockDim.y * blockDim.x.
// Build:  make thread_indexing   Run: ./thread_indexing [--n=1000003]
// Output: one line per layout with its grid and block shape and the check, the 1025-thread
//         launch's error code, then PASSED.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include "common.cuh"

// The notes' nine index functions (N 3.3.4), corrected where noted above.
__device__ int getGlobalIdx_1D_1D() { return blockIdx.x * blockDim.x + threadIdx.x; }
__device__ int getGlobalIdx_1D_2D() {
    return blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
}
__device__ int getGlobalIdx_1D_3D() {
    return blockIdx.x * blockDim.x * blockDim.y * blockDim.z + threadIdx.z * blockDim.y * blockDim.x +
           threadIdx.y * blockDim.x + threadIdx.x;
}
__device__ int getGlobalIdx_2D_1D() {
    int blockId = blockIdx.y * gridDim.x + blockIdx.x;
    return blockId * blockDim.x + threadIdx.x;
}
__device__ int getGlobalIdx_2D_2D() {
    int blockId = blockIdx.x + blockIdx.y * gridDim.x;
    return blockId * (blockDim.x * blockDim.y) + (threadIdx.y * blockDim.x) + threadIdx.x;
}
__device__ int getGlobalIdx_2D_3D() {
    int blockId = blockIdx.x + blockIdx.y * gridDim.x;
    return blockId * (blockDim.x * blockDim.y * blockDim.z) + (threadIdx.z * (blockDim.x * blockDim.y)) +
           (threadIdx.y * blockDim.x) + threadIdx.x;
}
__device__ int getGlobalIdx_3D_1D() {
    int blockId = blockIdx.x + blockIdx.y * gridDim.x + gridDim.x * gridDim.y * blockIdx.z;
    return blockId * blockDim.x + threadIdx.x;
}
__device__ int getGlobalIdx_3D_2D() {
    int blockId = blockIdx.x + blockIdx.y * gridDim.x + gridDim.x * gridDim.y * blockIdx.z;
    return blockId * (blockDim.x * blockDim.y) + (threadIdx.y * blockDim.x) + threadIdx.x;
}
__device__ int getGlobalIdx_3D_3D() {
    int blockId = blockIdx.x + blockIdx.y * gridDim.x + gridDim.x * gridDim.y * blockIdx.z;
    return blockId * (blockDim.x * blockDim.y * blockDim.z) + (threadIdx.z * (blockDim.x * blockDim.y)) +
           (threadIdx.y * blockDim.x) + threadIdx.x;
}

// One kernel per layout. Each thread counts a hit on its index (a duplicate index shows as 2) and
// records which block it came from, numbered with the guide's formula x + y*Dx + z*Dx*Dy applied
// to the block's coordinates in the grid.
template <int GRID_DIMS, int BLOCK_DIMS>
__global__ void record_index(int* hits, int* block_of, int n) {
    int id;
    if (GRID_DIMS == 1 && BLOCK_DIMS == 1) id = getGlobalIdx_1D_1D();
    else if (GRID_DIMS == 1 && BLOCK_DIMS == 2) id = getGlobalIdx_1D_2D();
    else if (GRID_DIMS == 1) id = getGlobalIdx_1D_3D();
    else if (GRID_DIMS == 2 && BLOCK_DIMS == 1) id = getGlobalIdx_2D_1D();
    else if (GRID_DIMS == 2 && BLOCK_DIMS == 2) id = getGlobalIdx_2D_2D();
    else if (GRID_DIMS == 2) id = getGlobalIdx_2D_3D();
    else if (BLOCK_DIMS == 1) id = getGlobalIdx_3D_1D();
    else if (BLOCK_DIMS == 2) id = getGlobalIdx_3D_2D();
    else id = getGlobalIdx_3D_3D();
    if (id < 0 || id >= n) return;  // the grid overshoots n
    atomicAdd(&hits[id], 1);
    block_of[id] = blockIdx.x + blockIdx.y * gridDim.x + blockIdx.z * gridDim.x * gridDim.y;
}

// CPU check: every index 0..n-1 hit exactly once, and index i was produced by block i / threads.
std::string check_layout(const std::vector<int>& hits, const std::vector<int>& block_of, int n, int threads) {
    for (int i = 0; i < n; ++i) {
        if (hits[i] != 1) return "index " + std::to_string(i) + " hit " + std::to_string(hits[i]) + " times";
        if (block_of[i] != i / threads)
            return "index " + std::to_string(i) + " came from block " + std::to_string(block_of[i]) + ", expected " +
                   std::to_string(i / threads);
    }
    return "";
}

// A grid of `dims` dimensions with at least `blocks` blocks, its x extent about twice its y extent
// (x = ceil(sqrt(2 * blocks)) > y for every blocks >= 1; in 3D x = 2y + 1): on a square grid,
// gridDim.x == gridDim.y, a formula that multiplies by the wrong one (blockIdx.y * gridDim.y)
// numbers the blocks right by luck and no check could see it.
dim3 make_grid(long long blocks, int dims) {
    if (dims == 1) return dim3((unsigned)blocks);
    if (dims == 2) {
        unsigned x = (unsigned)std::ceil(std::sqrt(2.0 * (double)blocks));
        return dim3(x, (unsigned)((blocks + x - 1) / x));
    }
    unsigned y = std::max(1u, (unsigned)std::lround(std::cbrt((double)blocks / 4))), x = 2 * y + 1;
    return dim3(x, y, (unsigned)((blocks + (long long)x * y - 1) / ((long long)x * y)));
}

__global__ void empty_kernel() {}

int main(int argc, char** argv) {
    Args args(argc, argv, "Checks the nine grid/block layouts and their global thread index formulas.");
    int n = (int)args.integer("n", 1000003, 1, 1 << 28, "threads that must get an index (0..n-1)");
    args.parse_or_exit();

    select_device(args.device());
    std::printf("n = %d; each layout must number its first n threads 0..n-1 exactly once\n", n);

    // Blocks of 256 threads in every shape; a warp is 32 threads along x first.
    const dim3 block_shapes[3] = {dim3(256), dim3(32, 8), dim3(16, 4, 4)};
    const int threads = 256;
    long long blocks = (n + threads - 1) / threads;

    int *d_hits, *d_block_of;
    CHECK(cudaMalloc(&d_hits, n * sizeof(int)));
    CHECK(cudaMalloc(&d_block_of, n * sizeof(int)));
    std::vector<int> hits(n), block_of(n);

    using Kernel = void (*)(int*, int*, int);
    const Kernel kernels[3][3] = {{record_index<1, 1>, record_index<1, 2>, record_index<1, 3>},
                                  {record_index<2, 1>, record_index<2, 2>, record_index<2, 3>},
                                  {record_index<3, 1>, record_index<3, 2>, record_index<3, 3>}};
    Verdict verdict;
    for (int g = 1; g <= 3; ++g)
        for (int b = 1; b <= 3; ++b) {
            dim3 grid = make_grid(blocks, g), block = block_shapes[b - 1];
            CHECK(cudaMemset(d_hits, 0, n * sizeof(int)));
            CHECK(cudaMemset(d_block_of, 0xff, n * sizeof(int)));  // -1: an index nobody wrote
            kernels[g - 1][b - 1]<<<grid, block>>>(d_hits, d_block_of, n);
            CHECK_LAUNCH();
            CHECK(cudaMemcpy(hits.data(), d_hits, n * sizeof(int), cudaMemcpyDeviceToHost));
            CHECK(cudaMemcpy(block_of.data(), d_block_of, n * sizeof(int), cudaMemcpyDeviceToHost));
            lab_corrupt(hits.data(), n);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
            std::string err = check_layout(hits, block_of, n, threads);
            char what[96];
            std::snprintf(what, sizeof what, "%dD_%dD grid %ux%ux%u block %ux%ux%u", g, b, grid.x, grid.y, grid.z,
                          block.x, block.y, block.z);
            verdict.check(err.empty(), what);
            if (!err.empty()) std::printf("    %s\n", err.c_str());
        }

    // G 2.2: a block may hold at most 1024 threads (all of them must fit on one SM). The launch
    // itself fails; the error is reported by cudaGetLastError and is not sticky.
    CHECK(cudaGetLastError());
    empty_kernel<<<1, 1025>>>();
    cudaError_t too_big = cudaGetLastError();
    std::printf("empty_kernel<<<1, 1025>>>: %s (%s)\n", cudaGetErrorName(too_big), cudaGetErrorString(too_big));
    verdict.check(too_big == cudaErrorInvalidConfiguration || too_big == cudaErrorInvalidValue,
                  "1025 threads refused (launch-config error)");
    empty_kernel<<<1, dim3(32, 32, 1)>>>();  // exactly 1024 is allowed, and the device still works
    verdict.check(cudaGetLastError() == cudaSuccess && cudaDeviceSynchronize() == cudaSuccess,
                  "1024 threads (32x32) launch fine");

    CHECK(cudaFree(d_hits));
    CHECK(cudaFree(d_block_of));
    return verdict.finish();
}
