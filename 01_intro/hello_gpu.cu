// hello_gpu - the first kernel: printf from the GPU, and what the launch configuration means.
//
// Manual: N 1.1 nvcc; N 3.1 三个函数 (__global__ / __device__ / __host__);
//         G 2.1 内核 (<<<...>>> execution configuration, built-in threadIdx / blockIdx).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o hello_gpu hello_gpu.cu
// Shows:  a __global__ function runs once per thread: <<<blocks, threads>>> starts
//         blocks x threads copies of it. A few threads say hello with device printf (its output
//         is buffered on the GPU and appears when the host synchronizes); every thread also
//         writes its blockIdx.x and threadIdx.x into a buffer, which the CPU checks, so the
//         program can tell a wrong launch from a right one. The multi-file version of the same
//         program (separate compilation, `nvcc -dc` + device link) is hello_multi.cu.
// Build:  make hello_gpu         Run: ./hello_gpu [--blocks=2] [--threads=4]
// Output: the launch configuration, a few "Hello World from block b thread t" lines (in any
//         order: blocks are scheduled independently), the id check, then PASSED.
#include <vector>
#include "common.cuh"

// CPU reference: thread g of the grid belongs to block g / threads and is thread g % threads there.
void expected_ids(int* block, int* thread, long long total, int threads) {
    for (long long g = 0; g < total; ++g) {
        block[g] = static_cast<int>(g / threads);
        thread[g] = static_cast<int>(g % threads);
    }
}

// Every thread of the grid runs this body once. printf is limited to the first two threads of
// the first two blocks: device printf goes through a fixed-size FIFO (1 MB by default) that a
// large grid would overflow, silently dropping lines.
__global__ void hello_from_gpu(int* block_out, int* thread_out) {
    long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (blockIdx.x < 2 && threadIdx.x < 2)
        printf("  Hello World from block %d thread %d (of %d x %d)\n", blockIdx.x, threadIdx.x, gridDim.x,
               blockDim.x);
    block_out[g] = blockIdx.x;
    thread_out[g] = threadIdx.x;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Hello World from the GPU: device printf and the launch configuration.");
    int blocks = (int)args.integer("blocks", 2, 1, 1 << 20, "blocks in the grid (gridDim.x)");
    int threads = (int)args.integer("threads", 4, 1, 1024, "threads per block (blockDim.x)");
    args.parse_or_exit();

    select_device(args.device());
    long long total = (long long)blocks * threads;
    std::printf("hello_from_gpu<<<%d, %d>>>: %lld threads run the kernel body\n", blocks, threads, total);

    std::vector<int> ref_block(total), ref_thread(total), got_block(total), got_thread(total);
    expected_ids(ref_block.data(), ref_thread.data(), total, threads);

    int *d_block, *d_thread;
    CHECK(cudaMalloc(&d_block, total * sizeof(int)));
    CHECK(cudaMalloc(&d_thread, total * sizeof(int)));
    // -1 everywhere: a thread that did not run leaves -1, which no real id equals.
    CHECK(cudaMemset(d_block, 0xff, total * sizeof(int)));
    CHECK(cudaMemset(d_thread, 0xff, total * sizeof(int)));

    hello_from_gpu<<<blocks, threads>>>(d_block, d_thread);
    CHECK_LAUNCH();
    // The launch returned at once; the printf lines arrive when the host waits for the GPU.
    CHECK(cudaDeviceSynchronize());

    CHECK(cudaMemcpy(got_block.data(), d_block, total * sizeof(int), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(got_thread.data(), d_thread, total * sizeof(int), cudaMemcpyDeviceToHost));
    Verdict verdict;
    verdict.exact("blockIdx.x of every thread", ref_block.data(), got_block.data(), total);
    verdict.exact("threadIdx.x of every thread", ref_thread.data(), got_thread.data(), total);

    CHECK(cudaFree(d_block));
    CHECK(cudaFree(d_thread));
    return verdict.finish();
}
