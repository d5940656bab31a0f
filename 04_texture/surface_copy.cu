// surface_copy - the guide's copyKernel: surf2Dread / surf2Dwrite between two uchar4 CUDA arrays.
//
// Manual: G 3.2.12.2.1 表面内存对象API (surface object API); G 3.2.12.2 表面内存(Surface Memory).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o surface_copy surface_copy.cu
// Shows:  a CUDA array made with cudaArraySurfaceLoadStore can be read AND written by a kernel through
//         a surface object (a texture object can only read). The x coordinate of every surf*
//         function is a BYTE offset - column x of a uchar4 array is at x * 4 - while y is a row index.
//         The guide's host code uses cudaMemcpy2DToArray / cudaMemcpy2DFromArray (the 1D
//         cudaMemcpyToArray is deprecated); its input was h_data[i] = i, here it is random bytes.
//         The copy is checked byte for byte, then timed next to cudaMemcpy device-to-device.
// Build:  make surface_copy    Run: ./surface_copy [--width=8192] [--height=8192] [--reps=20]
// Output: the check, then copyKernel's time and GB/s next to cudaMemcpy D2D, then PASSED.
#include <cstring>
#include <vector>
#include "common.cuh"

// Simple copy kernel (G 3.2.12.2.1). Surface coordinates: x in bytes, y in rows.
__global__ void copyKernel(cudaSurfaceObject_t inputSurfObj, cudaSurfaceObject_t outputSurfObj, int width, int height) {
    unsigned int x = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned int y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x < width && y < height) {
        uchar4 data;
        surf2Dread(&data, inputSurfObj, x * 4, y);   // x * 4: a uchar4 is 4 bytes
        surf2Dwrite(data, outputSurfObj, x * 4, y);
    }
}

cudaSurfaceObject_t make_surface(cudaArray_t arr) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaSurfaceObject_t s = 0;
    CHECK(cudaCreateSurfaceObject(&s, &res));
    return s;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Copies a uchar4 CUDA array to another through surf2Dread/surf2Dwrite (G 3.2.12.2.1).");
    int width = (int)args.integer("width", 8192, 1, 32768, "array width in uchar4 elements");
    int height = (int)args.integer("height", 8192, 1, 32768, "array height in rows");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    if (width > dev.prop.maxSurface2D[0] || height > dev.prop.maxSurface2D[1])
        skip("array larger than this GPU's maxSurface2D");
    size_t bytes = (size_t)width * height * 4;
    std::printf("uchar4 CUDA arrays %d x %d (%.1f MB each)\n", width, height, bytes / 1e6);

    std::vector<unsigned char> h_data = random_vector<unsigned char>(bytes, 0, 255, 1);
    std::vector<unsigned char> h_out(bytes, 0xab);

    cudaChannelFormatDesc channelDesc = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    cudaArray_t cuInputArray, cuOutputArray;
    CHECK(cudaMallocArray(&cuInputArray, &channelDesc, width, height, cudaArraySurfaceLoadStore));
    CHECK(cudaMallocArray(&cuOutputArray, &channelDesc, width, height, cudaArraySurfaceLoadStore));
    const size_t spitch = 4 * (size_t)width;  // host rows are packed: pitch = row width in bytes
    CHECK(cudaMemcpy2DToArray(cuInputArray, 0, 0, h_data.data(), spitch, spitch, height, cudaMemcpyHostToDevice));
    // A known pattern in the output array: an element the kernel skips keeps 0xab and is caught.
    CHECK(cudaMemcpy2DToArray(cuOutputArray, 0, 0, h_out.data(), spitch, spitch, height, cudaMemcpyHostToDevice));
    cudaSurfaceObject_t inputSurfObj = make_surface(cuInputArray), outputSurfObj = make_surface(cuOutputArray);

    dim3 threadsperBlock(16, 16);
    dim3 numBlocks((width + threadsperBlock.x - 1) / threadsperBlock.x, (height + threadsperBlock.y - 1) / threadsperBlock.y);
    auto copy = [&] { copyKernel<<<numBlocks, threadsperBlock>>>(inputSurfObj, outputSurfObj, width, height); };
    copy();
    CHECK_LAUNCH();
    CHECK(cudaMemcpy2DFromArray(h_out.data(), spitch, cuOutputArray, 0, 0, spitch, height, cudaMemcpyDeviceToHost));

    Verdict verdict;
    verdict.exact("copyKernel bytes", h_data.data(), h_out.data(), bytes);

    double ms = bench_ms(copy, reps);
    double d2d = d2d_copy_gbps(bytes, reps);
    double bw = gbps(2.0 * bytes, ms);  // read every byte once, write it once
    std::printf("\ncudaMemcpy D2D (linear memory)     %8.1f GB/s\n", d2d);
    std::printf("copyKernel (surf2Dread/surf2Dwrite) %8.3f ms %8.1f GB/s  %5.1f%% of D2D  %5.1f%% of peak\n", ms, bw,
                100 * bw / d2d, 100 * bw / dev.peak_gbps);

    CHECK(cudaDestroySurfaceObject(inputSurfObj));
    CHECK(cudaDestroySurfaceObject(outputSurfObj));
    CHECK(cudaFreeArray(cuInputArray));
    CHECK(cudaFreeArray(cuOutputArray));
    return verdict.finish();
}
