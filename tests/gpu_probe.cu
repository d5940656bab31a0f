// gpu_probe: tells the test suite whether a usable CUDA GPU is present.
// Exit 0 and the GPU's name, or exit 77 and the runtime's reason (no driver, no device ...).
#include <cstdio>
#include <cuda_runtime.h>

int main() {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess) {
        std::printf("no usable CUDA device (%s: %s)\n", cudaGetErrorName(err), cudaGetErrorString(err));
        return 77;
    }
    if (count == 0) {
        std::printf("no CUDA device found\n");
        return 77;
    }
    cudaDeviceProp p;
    if (cudaGetDeviceProperties(&p, 0) != cudaSuccess) {
        std::printf("cannot query device 0\n");
        return 77;
    }
    std::printf("%d device(s); device 0: %s (sm_%d%d)\n", count, p.name, p.major, p.minor);
    return 0;
}
