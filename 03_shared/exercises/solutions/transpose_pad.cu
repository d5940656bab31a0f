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
//         By hand: cd workspace && ./transpose_pad (checks 1001 x 777 and 8192 x 8192, times 8192 x 8192)
// Compile by hand (in workspace/): nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o transpose_pad transpose_pad.cu
// Output: the checks (each timed round too: a new matrix each), the kernel's and cudaMemcpy D2D's
//         time and GB/s, `ratio vs copy: X.XX`, PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <random>
#include <string>
#include <vector>
#include "common.cuh"

constexpr int TILE = 32, ROWS = 8;  // a TILE x ROWS block moves a TILE x TILE tile

void transpose_cpu(const float* in, float* out, int rows, int cols) {
    for (int y = 0; y < rows; ++y)
        for (int x = 0; x < cols; ++x) out[(size_t)x * rows + y] = in[(size_t)y * cols + x];
}
namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----

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
// ---- your change: end ----
}
}  // namespace yours: the program calls only these of your region, and with these types
using yours::transpose_tile;
REGION_SIGNATURE(transpose_tile, void (*)(const float*, float*, int, int));

// Transposes a rows x cols matrix of seeded random floats on the GPU and compares it with the CPU.
void check_shape(int rows, int cols, Verdict& verdict) {
    size_t n = (size_t)rows * cols, bytes = n * sizeof(float);
    std::vector<float> h_in = random_vector<float>(n, -1000.f, 1000.f, 1), ref(n), h_out(n);
    transpose_cpu(h_in.data(), ref.data(), rows, cols);
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemcpy(d_in, h_in.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0xff, bytes));  // NaN: an element never written fails the check
    dim3 block(TILE, ROWS), grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    transpose_tile<<<grid, block>>>(d_in, d_out, rows, cols);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(h_out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
    verdict.exact("transpose_tile vs CPU, " + std::to_string(rows) + " x " + std::to_string(cols), ref.data(),
                  h_out.data(), n);
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
}

// For the timed rounds: a matrix that the host never sees, new each round (a hash of the element's
// index and the round's key, written on the GPU), and a kernel that counts the elements of out that
// are not the transpose of it (it recomputes the input from the hash: out alone is read). Each
// round's key is drawn at run time (std::random_device, 64 bits), independently of the others, and a
// value keeps 24 of the 64 mixed bits: a kernel cannot tell a round's matrix from anything it saw
// before (fixed seeds 5001, 5002, ... let a kernel recognise them from in[0] and write out from the
// hash without reading in: issue 35).
__host__ __device__ inline float hashed_value(size_t i, unsigned long long key) {
    unsigned long long x = i * 0x9e3779b97f4a7c15ull + key;
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;  // SplitMix64's finalizer (S. Vigna)
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return (float)(x >> 40) * (1.f / 16777216.f) * 2000.f - 1000.f;
}
__global__ void fill_round(float* in, size_t n, unsigned long long key) {
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) in[i] = hashed_value(i, key);
}
__global__ void count_wrong(const float* out, int rows, int cols, unsigned long long key, unsigned long long* wrong) {
    size_t n = (size_t)rows * cols, stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long mine = 0;
    for (size_t o = blockIdx.x * (size_t)blockDim.x + threadIdx.x; o < n; o += stride) {
        size_t x = o / rows, y = o % rows;  // out[x * rows + y] = in[y * cols + x]
        mine += out[o] != hashed_value(y * cols + x, key);
    }
    if (mine) atomicAdd(wrong, mine);
}

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(transpose_cpu); REGION_GUARD(check_shape); REGION_GUARD(hashed_value); REGION_GUARD(fill_round);
REGION_GUARD(count_wrong); REGION_GUARD(random_vector<float>); REGION_GUARD(bench_turns_ms); REGION_GUARD(gbps);
REGION_GUARD(lab_corrupt<float>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: transposes a float matrix through a shared tile; make it faster.");
    int rows = (int)args.integer("rows", 8192, 1, 16384, "rows of the input matrix (checked and timed)");
    int cols = (int)args.integer("cols", 8192, 1, 16384, "columns of the input matrix");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed rounds (kernel and copy once per round; the shortest reported)");
    args.parse_or_exit();

    select_device(args.device());
    std::printf("transpose %d x %d fp32 (%.1f MB per matrix), tile %dx%d, block %dx%d\n", rows, cols,
                (double)rows * cols * 4 / 1e6, TILE, TILE, TILE, ROWS);
    // Correct at any shape: an odd one with partial tiles on both edges, then the timed one.
    Verdict verdict;
    check_shape(1001, 777, verdict);
    check_shape(rows, cols, verdict);

    // The timing runs at the given size; at sizes that are multiples of 32 every row of both matrices
    // starts on a 128-byte line, so what is left to see is the tile's shared-memory cost (at odd
    // sizes misaligned rows cost about as much as the bank conflicts, and hide them).
    size_t bytes = (size_t)rows * cols * sizeof(float);
    float *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    unsigned long long* d_wrong;
    CHECK(cudaMalloc(&d_wrong, sizeof(unsigned long long)));
    dim3 block(TILE, ROWS), grid((cols + TILE - 1) / TILE, (rows + TILE - 1) / TILE);
    auto run = [&] { transpose_tile<<<grid, block>>>(d_in, d_out, rows, cols); };
    // A transpose reads and writes every byte once, like a copy: cudaMemcpy D2D is its ceiling. The
    // two are timed in turns, `reps` rounds: the shortest time of each (bench_turns_ms). Every round,
    // warm-ups included, transposes a new matrix into a poisoned (NaN) output, checked after it.
    D2DCopy copy(bytes);
    int round = 0;
    std::random_device entropy;
    unsigned long long key = 0;  // the round's, drawn at run time for each round
    // Each round's count is zeroed before it, read back after it and added up on the host: a later
    // round cannot hide an earlier wrong one by resetting the count. With CUDA_LAB_CORRUPT=1 one
    // element of out is changed (on the host, common/corrupt.h) before the count: it must see it.
    unsigned long long wrong = 0;
    auto check_round = [&] {
        if (lab_corrupt_on()) {
            size_t mid = lab_corrupt_index((size_t)rows * cols);
            float v = 0.f;
            CHECK(cudaMemcpy(&v, d_out + mid, sizeof v, cudaMemcpyDeviceToHost));
            lab_corrupt(&v, 1);
            CHECK(cudaMemcpy(d_out + mid, &v, sizeof v, cudaMemcpyHostToDevice));
        }
        CHECK(cudaMemset(d_wrong, 0, sizeof(unsigned long long)));
        count_wrong<<<1024, 256>>>(d_out, rows, cols, key, d_wrong);
        CHECK_LAUNCH();
        unsigned long long c = 0;
        CHECK(cudaMemcpy(&c, d_wrong, sizeof c, cudaMemcpyDeviceToHost));
        wrong += c;
    };
    auto next_round = [&] {
        if (round > 0) check_round();
        ++round;
        key = (unsigned long long)entropy() << 32 ^ entropy();
        fill_round<<<1024, 256>>>(d_in, (size_t)rows * cols, key);
        CHECK_LAUNCH();
        CHECK(cudaMemset(d_out, 0xff, bytes));
    };
    std::vector<double> t = bench_turns_ms({run, [&] { copy(); }}, reps, next_round);
    check_round();
    verdict.check(wrong == 0, "transpose_tile in all " + std::to_string(round) + " rounds, warm-ups and timed (new matrix each): " +
                                  std::to_string(wrong) + " elements wrong");
    double ms = t[0], bw = gbps(2.0 * bytes, ms), d2d = copy.gbps(t[1]);
    std::printf("cudaMemcpy D2D   %8.1f GB/s\n", d2d);
    std::printf("transpose_tile   %8.1f GB/s  %8.3f ms\n", bw, ms);
    std::printf("ratio vs copy: %.2f (target: 0.75 of this GPU's cudaMemcpy D2D GB/s, set on an H100)\n", bw / d2d);

    CHECK(cudaFree(d_wrong));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
