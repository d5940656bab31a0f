// hello_multi_device.cu - the device half of hello_multi (see hello_multi.cu).
//
// Manual: N 1.1.1 常用命令 ("nvcc多文件编译": nvcc --device-c hello_from_gpu.cu -o hello_from_gpu.o).
// This file holds __device__ functions that a kernel in ANOTHER file calls. Without relocatable
// device code every .cu file is a closed GPU module and such a call cannot be resolved, so both
// files are compiled with `nvcc -dc` (= -rdc=true -c) and the GPU code is linked in a device-link
// step, just as the host linker resolves calls between host objects.
// Build:  make hello_multi  (compiles hello_multi.o and hello_multi_device.o with -dc, then links)
#include <cstdio>

// The kernel calling these lives in hello_multi.cu; the declarations there must match.
__device__ void say_hello() {
    if (blockIdx.x < 2 && threadIdx.x < 2)
        printf("  Hello World from block %d thread %d (device code from hello_multi_device.cu)\n", blockIdx.x,
               threadIdx.x);
}

__device__ void record_ids(int* block_out, int* thread_out) {
    long long g = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    block_out[g] = blockIdx.x;
    thread_out[g] = threadIdx.x;
}
