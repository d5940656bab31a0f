// surface_bytes - exercise (find and fix): invert an RGBA image through surface objects.
//
// Manual: G 3.2.12.2.1 表面内存对象API (surface object API: surf2Dread / surf2Dwrite);
//         G 3.2.12.2 表面内存(Surface Memory).
// Your task: invert reads every uchar4 pixel of one CUDA array through a surface, inverts R, G and B
//         (alpha is kept) and writes it into a second array through another surface. It fails
//         (on the H100 with a CUDA error, cudaErrorMisalignedAddress). Find the bug and fix it.
// Build and check (from 04_texture): `make exercises` builds workspace/surface_bytes from your copy
//         in workspace/; `make check` runs it and reads its own CPU check.
//         By hand: cd workspace && ./surface_bytes --width=333 --height=211
// Compile by hand (in workspace/): nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o surface_bytes surface_bytes.cu
// Output: the check of every byte of the output array, PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <vector>
#include "common.cuh"

void invert_cpu(const unsigned char* in, unsigned char* out, size_t pixels) {
    for (size_t p = 0; p < pixels; ++p) {
        for (int c = 0; c < 3; ++c) out[4 * p + c] = (unsigned char)(255 - in[4 * p + c]);
        out[4 * p + 3] = in[4 * p + 3];
    }
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// Column x, row y of both arrays (uchar4 elements).
__global__ void invert(cudaSurfaceObject_t in, cudaSurfaceObject_t out, int width, int height) {
    int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;
    if (x >= width || y >= height) return;
    uchar4 p;
    surf2Dread(&p, in, x, y);
    p = make_uchar4(255 - p.x, 255 - p.y, 255 - p.z, p.w);
    surf2Dwrite(p, out, x, y);
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::invert;
REGION_SIGNATURE(invert, void (*)(cudaSurfaceObject_t, cudaSurfaceObject_t, int, int));

cudaSurfaceObject_t make_surface(cudaArray_t arr) {
    cudaResourceDesc res{};
    res.resType = cudaResourceTypeArray;
    res.res.array.array = arr;
    cudaSurfaceObject_t s = 0;
    CHECK(cudaCreateSurfaceObject(&s, &res));
    return s;
}

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(invert_cpu); REGION_GUARD(make_surface); REGION_GUARD(random_vector<unsigned char>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: inverts a uchar4 image through surf2Dread/surf2Dwrite; find the bug.");
    int width = (int)args.integer("width", 333, 1, 16384, "image width in uchar4 pixels");
    int height = (int)args.integer("height", 211, 1, 16384, "image height in rows");
    args.parse_or_exit();

    select_device(args.device());
    size_t pixels = (size_t)width * height, bytes = 4 * pixels, pitch = 4 * (size_t)width;
    std::printf("uchar4 image %d x %d (%zu bytes), R, G, B inverted, alpha kept\n", width, height, bytes);
    std::vector<unsigned char> h_in = random_vector<unsigned char>(bytes, 0, 255, 1), ref(bytes);
    std::vector<unsigned char> h_out(bytes, 0xab);  // a pixel the kernel skips keeps 0xab
    invert_cpu(h_in.data(), ref.data(), pixels);

    cudaChannelFormatDesc ch = cudaCreateChannelDesc(8, 8, 8, 8, cudaChannelFormatKindUnsigned);
    cudaArray_t a_in, a_out;
    CHECK(cudaMallocArray(&a_in, &ch, width, height, cudaArraySurfaceLoadStore));
    CHECK(cudaMallocArray(&a_out, &ch, width, height, cudaArraySurfaceLoadStore));
    CHECK(cudaMemcpy2DToArray(a_in, 0, 0, h_in.data(), pitch, pitch, height, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy2DToArray(a_out, 0, 0, h_out.data(), pitch, pitch, height, cudaMemcpyHostToDevice));
    cudaSurfaceObject_t s_in = make_surface(a_in), s_out = make_surface(a_out);

    dim3 block(16, 16), grid((width + 15) / 16, (height + 15) / 16);
    invert<<<grid, block>>>(s_in, s_out, width, height);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy2DFromArray(h_out.data(), pitch, a_out, 0, 0, pitch, height, cudaMemcpyDeviceToHost));

    Verdict verdict;
    verdict.exact("invert vs CPU (bytes)", ref.data(), h_out.data(), bytes);

    CHECK(cudaDestroySurfaceObject(s_in));
    CHECK(cudaDestroySurfaceObject(s_out));
    CHECK(cudaFreeArray(a_in));
    CHECK(cudaFreeArray(a_out));
    return verdict.finish();
}
