// pitch_2d_3d - 2D and 3D arrays in linear device memory with padded rows: cudaMallocPitch +
// cudaMemcpy2D, cudaMalloc3D + cudaMemcpy3D.
//
// Manual: G 3.2.2 设备存储 (device memory): the MyKernel examples for cudaMallocPitch and
//         cudaMalloc3D; G 5.3.2 设备内存访问, "二维数组" (why rows are padded).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o pitch_2d_3d pitch_2d_3d.cu
// Shows:  the runtime rounds each row up to a `pitch` (bytes) so that every row starts aligned;
//         a kernel must step rows by the pitch, never by width * sizeof(float). The copies take
//         the host's tight row length and the device pitch separately and move only the `width`
//         bytes of each row: the padding is never written, and never read (initcheck agrees).
//         Then 5.3.2's reason for the padding, timed: the same kernel (one element per thread,
//         32 x 8 blocks, a warp per row segment) on a 2D array of the same odd width, --time-mb
//         large, once with pitched rows and once with unpadded rows (row r at r * width * 4
//         bytes, so most warps' 128 bytes start inside a 32-byte sector and touch 5 sectors).
// Build:  make pitch_2d_3d       Run: ./pitch_2d_3d [--width=1001] [--height=999] [--depth=65] [--time-mb=256]
// Output: the pitch and padding of each allocation, then the checks (round trip, kernel vs CPU),
//         the pitched and unpadded times and their ratio, then PASSED.
#include <algorithm>
#include <cstdlib>
#include <vector>
#include "common.cuh"

// CPU reference: each element gets its own linear index added, so an element read from or
// written to the wrong row (a width-for-pitch mix-up) changes the result.
void touch_cpu(std::vector<float>& v) {
    for (size_t i = 0; i < v.size(); ++i) v[i] += (float)(long long)i;
}

// The guide's 2D MyKernel walks the whole array in every thread; here each thread takes one
// element. The row address comes from the pitch.
__global__ void touch_2d(float* devPtr, size_t pitch, int width, int height) {
    int c = blockIdx.x * blockDim.x + threadIdx.x, r = blockIdx.y * blockDim.y + threadIdx.y;
    if (c >= width || r >= height) return;
    float* row = (float*)((char*)devPtr + r * pitch);
    row[c] += (float)((long long)r * width + c);
}

// The guide's 3D MyKernel, one thread per element: a slice is pitch * height bytes. (The guide
// writes `char* devPtr = devPitchedPtr.ptr;`, which does not compile: ptr is a void*.)
__global__ void touch_3d(cudaPitchedPtr devPitchedPtr, int width, int height, int depth) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y, z = blockIdx.z;
    if (x >= width || y >= height || z >= depth) return;
    char* devPtr = (char*)devPitchedPtr.ptr;
    size_t pitch = devPitchedPtr.pitch, slicePitch = pitch * height;
    float* row = (float*)(devPtr + z * slicePitch + y * pitch);
    row[x] += (float)(((long long)z * height + y) * width + x);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Pitched 2D and 3D device arrays: allocation, copies and a kernel that uses the pitch.");
    int width = (int)args.integer("width", 1001, 1, 1 << 16, "floats per row (odd by default: rows get padded)");
    int height = (int)args.integer("height", 999, 1, 1 << 16, "rows");
    int depth = (int)args.integer("depth", 65, 1, 4096, "slices of the 3D array");
    int time_mb = (int)args.integer("time-mb", 256, 1, 1024, "MB of each timed 2D array (pitched vs unpadded rows)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();
    if ((long long)width * height * depth > (1LL << 28)) {
        std::fprintf(stderr, "pitch_2d_3d: error: width*height*depth must be at most 2^28 elements\n%s",
                     args.usage().c_str());
        return 2;
    }

    DeviceInfo dev = select_device(args.device());
    Verdict verdict;
    size_t row_bytes = width * sizeof(float);
    dim3 block(32, 8);

    // ---- 2D: cudaMallocPitch + cudaMemcpy2D
    std::vector<float> h2 = random_vector<float>((size_t)width * height, -1.f, 1.f, 1);
    std::vector<float> back(h2.size());
    float* d2;
    size_t pitch;
    CHECK(cudaMallocPitch(&d2, &pitch, row_bytes, height));
    std::printf("2D %d x %d floats: row %zu bytes -> pitch %zu bytes (%zu padding bytes per row)\n", width, height,
                row_bytes, pitch, pitch - row_bytes);
    // What the runtime chose, and a copy there and back with the same API: notes (the API against
    // itself). The kernel below, which steps rows by the pitch, is the check.
    verdict.note(pitch >= row_bytes, "2D pitch >= width * sizeof(float)");
    verdict.note(pitch % dev.prop.texturePitchAlignment == 0,
                 "2D pitch multiple of " + std::to_string(dev.prop.texturePitchAlignment) + " B");
    // Host rows are tight (spitch = row_bytes), device rows are `pitch` apart; width bytes per row.
    CHECK(cudaMemcpy2D(d2, pitch, h2.data(), row_bytes, row_bytes, height, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy2D(back.data(), row_bytes, d2, pitch, row_bytes, height, cudaMemcpyDeviceToHost));
    verdict.note(back == h2, "2D round trip (H2D, D2H)");
    touch_2d<<<dim3((width + 31) / 32, (height + 7) / 8), block>>>(d2, pitch, width, height);
    CHECK_LAUNCH();
    std::fill(back.begin(), back.end(), -99.f);
    CHECK(cudaMemcpy2D(back.data(), row_bytes, d2, pitch, row_bytes, height, cudaMemcpyDeviceToHost));
    touch_cpu(h2);
    verdict.exact("2D kernel via pitch vs CPU", h2.data(), back.data(), h2.size());
    CHECK(cudaFree(d2));

    // ---- G 5.3.2 二维数组: pitched vs unpadded rows of the same odd width, the same kernel (an
    // unpadded array is a pitched one whose pitch is width * sizeof(float)). grid.y <= 65535.
    long long t_rows = std::min<long long>((long long)time_mb * (1 << 20) / (long long)row_bytes, 65535LL * 8);
    t_rows = std::max<long long>(t_rows, 1);
    std::vector<float> ht = random_vector<float>((size_t)width * t_rows, -1.f, 1.f, 3), tback(ht.size());
    float *t_pitched, *t_tight;
    size_t t_pitch;
    CHECK(cudaMallocPitch(&t_pitched, &t_pitch, row_bytes, t_rows));
    CHECK(cudaMalloc(&t_tight, row_bytes * t_rows));
    CHECK(cudaMemcpy2D(t_pitched, t_pitch, ht.data(), row_bytes, row_bytes, t_rows, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(t_tight, ht.data(), row_bytes * t_rows, cudaMemcpyHostToDevice));
    dim3 t_grid((width + 31) / 32, (unsigned)((t_rows + 7) / 8));
    auto pitched = [&] { touch_2d<<<t_grid, block>>>(t_pitched, t_pitch, width, (int)t_rows); };
    auto tight = [&] { touch_2d<<<t_grid, block>>>(t_tight, row_bytes, width, (int)t_rows); };
    pitched();
    CHECK_LAUNCH();
    tight();
    CHECK_LAUNCH();
    touch_cpu(ht);
    CHECK(cudaMemcpy2D(tback.data(), row_bytes, t_pitched, t_pitch, row_bytes, t_rows, cudaMemcpyDeviceToHost));
    verdict.exact("timed array, pitched rows vs CPU", ht.data(), tback.data(), ht.size());
    std::fill(tback.begin(), tback.end(), -99.f);
    CHECK(cudaMemcpy(tback.data(), t_tight, row_bytes * t_rows, cudaMemcpyDeviceToHost));
    verdict.exact("timed array, unpadded rows vs CPU", ht.data(), tback.data(), ht.size());
    double ms_pitched = bench_ms(pitched, reps), ms_tight = bench_ms(tight, reps);
    double moved = 2.0 * row_bytes * t_rows;  // each element read and written once
    std::printf("timed: %d x %lld floats (%.0f MB): pitched rows (%zu bytes) %.1f us, %.0f GB/s; unpadded rows (%zu "
                "bytes) %.1f us, %.0f GB/s\nunpadded / pitched time: %.2fx (G 5.3.2: padded rows keep every warp's "
                "row segment aligned)\n", width, t_rows, row_bytes * t_rows / 1048576.0, t_pitch, 1e3 * ms_pitched,
                gbps(moved, ms_pitched), row_bytes, 1e3 * ms_tight, gbps(moved, ms_tight), ms_tight / ms_pitched);
    CHECK(cudaFree(t_pitched));
    CHECK(cudaFree(t_tight));

    // ---- 3D: cudaMalloc3D + cudaMemcpy3D
    std::vector<float> h3 = random_vector<float>((size_t)width * height * depth, -1.f, 1.f, 2);
    back.assign(h3.size(), -99.f);
    cudaExtent extent = make_cudaExtent(row_bytes, height, depth);  // width in BYTES for linear memory
    cudaPitchedPtr d3;
    CHECK(cudaMalloc3D(&d3, extent));
    std::printf("3D %d x %d x %d floats: pitch %zu bytes, slice %zu bytes (%.1f%% padding)\n", width, height, depth,
                d3.pitch, d3.pitch * height, 100.0 * (d3.pitch - row_bytes) / d3.pitch);
    verdict.note(d3.pitch >= row_bytes && d3.xsize == row_bytes && d3.ysize == (size_t)height,
                 "3D pitch >= row, xsize/ysize as asked");

    cudaMemcpy3DParms up = {};
    up.srcPtr = make_cudaPitchedPtr(h3.data(), row_bytes, width, height);  // tight host rows
    up.dstPtr = d3;
    up.extent = extent;
    up.kind = cudaMemcpyHostToDevice;
    CHECK(cudaMemcpy3D(&up));
    cudaMemcpy3DParms down = {};
    down.srcPtr = d3;
    down.dstPtr = make_cudaPitchedPtr(back.data(), row_bytes, width, height);
    down.extent = extent;
    down.kind = cudaMemcpyDeviceToHost;
    CHECK(cudaMemcpy3D(&down));
    verdict.note(back == h3, "3D round trip (H2D, D2H)");
    touch_3d<<<dim3((width + 31) / 32, (height + 7) / 8, depth), block>>>(d3, width, height, depth);
    CHECK_LAUNCH();
    std::fill(back.begin(), back.end(), -99.f);
    CHECK(cudaMemcpy3D(&down));
    touch_cpu(h3);
    verdict.exact("3D kernel via pitch vs CPU", h3.data(), back.data(), h3.size());
    CHECK(cudaFree(d3.ptr));
    return verdict.finish();
}
