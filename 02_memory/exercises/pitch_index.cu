// pitch_index - exercise (fix): a 2D array in pitched device memory (cudaMallocPitch), scaled into
// a dense output array.
//
// Manual: G 3.2.2 设备存储 (cudaMallocPitch, cudaMemcpy2D, the row address from the pitch);
//         G 5.3.2 设备内存访问 (二维数组).
// Your task: the program's own check fails, and compute-sanitizer initcheck reports reads of
//         device memory that nothing ever wrote. Find the bug, fix it, and make the program pass
//         with initcheck reporting 0 errors.
// Build and check, from 02_memory: make exercises (builds workspace/pitch_index.cu), then
//         make check (runs it and initcheck, says `solved` or `not yet` with a hint). By hand:
//           cd workspace && ./pitch_index --width=1001 --height=777
//           compute-sanitizer --tool initcheck ./pitch_index --width=1001 --height=777
// Compile: nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o pitch_index pitch_index.cu
// Output: the pitch the runtime chose, the check against the CPU, then PASSED or FAILED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <vector>
#include "common.cuh"

// CPU reference on the dense host array.
void scale_cpu(const float* in, float* out, int width, int height, float s) {
    for (long long i = 0; i < (long long)width * height; ++i) out[i] = s * in[i];
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// in: height rows of width floats, each row starting `pitch` bytes after the previous one;
// out: the same values times s, rows packed densely (width floats apart).
__global__ void scale_pitched(const float* in, size_t pitch, float* out, int width, int height, float s) {
    int c = blockIdx.x * blockDim.x + threadIdx.x;
    int r = blockIdx.y * blockDim.y + threadIdx.y;
    if (r < height && c < width) {
        const float* row = in + (size_t)r * width;
        out[(size_t)r * width + c] = s * row[c];
    }
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::scale_pitched;
REGION_SIGNATURE(scale_pitched, void (*)(const float*, size_t, float*, int, int, float));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(scale_cpu); REGION_GUARD(random_vector<float>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: scale a pitched 2D device array into a dense one.");
    int width = (int)args.integer("width", 1001, 1, 16384, "floats per row");
    int height = (int)args.integer("height", 777, 1, 16384, "rows");
    args.parse_or_exit();

    select_device(args.device());
    const float s = 3.0f;
    size_t count = (size_t)width * height, row_bytes = width * sizeof(float);
    std::vector<float> h = random_vector<float>(count, -1.f, 1.f, 1), ref(count), out(count);
    scale_cpu(h.data(), ref.data(), width, height, s);

    // The runtime pads each row so that every row starts at an aligned address (G 3.2.2).
    float *d_in, *d_out;
    size_t pitch = 0;
    CHECK(cudaMallocPitch(&d_in, &pitch, row_bytes, height));
    CHECK(cudaMalloc(&d_out, count * sizeof(float)));
    std::printf("%d x %d floats: row of %zu bytes -> pitch %zu bytes (%zu padding bytes per row)\n", width, height,
                row_bytes, pitch, pitch - row_bytes);
    CHECK(cudaMemcpy2D(d_in, pitch, h.data(), row_bytes, row_bytes, height, cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_out, 0xff, count * sizeof(float)));  // NaN: an element no thread wrote cannot pass

    dim3 block(32, 8), grid((width + 31) / 32, (height + 7) / 8);
    scale_pitched<<<grid, block>>>(d_in, pitch, d_out, width, height, s);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_out, count * sizeof(float), cudaMemcpyDeviceToHost));

    Verdict verdict;
    verdict.exact("out vs CPU", ref.data(), out.data(), count);  // one multiply, rounded alike on both
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
