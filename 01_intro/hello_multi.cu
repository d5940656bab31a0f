// hello_multi.cu - hello_gpu split over two files (this one and hello_multi_device.cu): separate
// compilation and device linking. The program is hello_multi, built from both.
//
// Manual: N 1.1.1 常用命令 (nvcc多文件编译, --device-c, the Makefile for a multi-file build);
//         G 2.1 内核.
// Shows:  the kernel in this file calls __device__ functions defined in hello_multi_device.cu.
//         That needs relocatable device code: each file is compiled with `nvcc -dc`
//         (--device-c, short for -rdc=true -c), and the final nvcc link runs the device linker
//         (nvlink) that resolves the cross-file GPU calls before the host link. Compiled the
//         ordinary way (whole-program mode) the build fails with "External calls are not
//         supported" / an unresolved extern function. The notes' recipe was
//         `nvcc --device-c hello_from_gpu.cu -o hello_from_gpu.o` then linking the objects.
//         What make runs, simplified (two .o with relocatable GPU code, then device + host link):
//           nvcc -std=c++17 -O3 -arch=native -I../common -dc hello_multi.cu hello_multi_device.cu
//           nvcc -arch=native -o hello_multi hello_multi.o hello_multi_device.o
//         or, with a host linker: nvcc -dlink *.o -o dlink.o; g++ *.o dlink.o -lcudart
// Build:  make hello_multi       Run: ./hello_multi [--blocks=2] [--threads=4]
// Output: the launch, a few hello lines from the other file's code, the id check, PASSED.
#include <vector>
#include "common.cuh"

// Defined in hello_multi_device.cu; resolved by the device linker.
extern __device__ void say_hello();
extern __device__ void record_ids(int* block_out, int* thread_out);

// CPU reference: thread g of the grid belongs to block g / threads and is thread g % threads there.
void expected_ids(int* block, int* thread, long long total, int threads) {
    for (long long g = 0; g < total; ++g) {
        block[g] = static_cast<int>(g / threads);
        thread[g] = static_cast<int>(g % threads);
    }
}

__global__ void hello_from_gpu(int* block_out, int* thread_out) {
    say_hello();
    record_ids(block_out, thread_out);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Hello World from the GPU, built from two files with -dc and device linking.");
    int blocks = (int)args.integer("blocks", 2, 1, 1 << 20, "blocks in the grid (gridDim.x)");
    int threads = (int)args.integer("threads", 4, 1, 1024, "threads per block (blockDim.x)");
    args.parse_or_exit();

    select_device(args.device());
    long long total = (long long)blocks * threads;
    std::printf("hello_from_gpu<<<%d, %d>>> calling device functions of another file\n", blocks, threads);

    std::vector<int> ref_block(total), ref_thread(total), got_block(total), got_thread(total);
    expected_ids(ref_block.data(), ref_thread.data(), total, threads);

    int *d_block, *d_thread;
    CHECK(cudaMalloc(&d_block, total * sizeof(int)));
    CHECK(cudaMalloc(&d_thread, total * sizeof(int)));
    CHECK(cudaMemset(d_block, 0xff, total * sizeof(int)));  // -1: a thread that did not run shows
    CHECK(cudaMemset(d_thread, 0xff, total * sizeof(int)));

    hello_from_gpu<<<blocks, threads>>>(d_block, d_thread);
    CHECK_LAUNCH();
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
