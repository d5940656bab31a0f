// memcpy_bytes - exercise (fix): SAXPY, y = a * x + y, with small helpers for the transfers.
//
// Manual: G 3.2.2 设备存储 (cudaMalloc / cudaMemcpy); M "全局内存上的矢量加法".
// Your task: the program's own check fails. Find the bug with the check's output and with
//         compute-sanitizer initcheck (it reports every read of device memory that nothing has
//         written), fix it, and make the program pass with initcheck reporting 0 errors.
// Build and check, from 02_memory: make exercises (builds workspace/memcpy_bytes.cu), then
//         make check (runs it and initcheck, says `solved` or `not yet` with a hint). By hand:
//           cd workspace && ./memcpy_bytes --n=1000003
//           compute-sanitizer --tool initcheck ./memcpy_bytes --n=1000003
// Compile: nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o memcpy_bytes memcpy_bytes.cu
// Output: the check of y against the CPU, and that it is what saxpy wrote, then PASSED or FAILED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <vector>
#include <cstring>
#include "common.cuh"
#include "witness.cuh"  // gpu_witness, witness(), witness_sum(), witness_now(): the kernel's record

// CPU reference.
void saxpy_cpu(float a, const float* x, float* y, long long n) {
    for (long long i = 0; i < n; ++i) y[i] = a * x[i] + y[i];
}

__global__ void saxpy(float a, const float* x, float* y, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) {
        y[i] = a * x[i] + y[i];
        atomicAdd(&gpu_witness, witness(&y[i], __float_as_uint(y[i])));
    }
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// Device buffers the size of a host vector, and the copies in both directions.
float* device_alloc(const std::vector<float>& h) {
    float* d = nullptr;
    CHECK(cudaMalloc(&d, h.size() * sizeof(float)));
    return d;
}
void upload(float* d, const std::vector<float>& h) {
    CHECK(cudaMemcpy(d, h.data(), h.size(), cudaMemcpyHostToDevice));
}
void download(std::vector<float>& h, const float* d) {
    CHECK(cudaMemcpy(h.data(), d, h.size() * sizeof(float), cudaMemcpyDeviceToHost));
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::device_alloc; using yours::upload; using yours::download;
REGION_SIGNATURE(device_alloc, float* (*)(const std::vector<float>&));
REGION_SIGNATURE(upload, void (*)(float*, const std::vector<float>&));
REGION_SIGNATURE(download, void (*)(std::vector<float>&, const float*));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(saxpy_cpu); REGION_GUARD(saxpy); REGION_GUARD(witness_sum); REGION_GUARD(random_vector<float>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: SAXPY with helper functions for the host<->device copies.");
    long long n = args.integer("n", 1000003, 1, 1LL << 28, "number of elements");
    args.parse_or_exit();

    select_device(args.device());
    const float a = 2.5f;
    std::vector<float> x = random_vector<float>(n, -1.f, 1.f, 1), y = random_vector<float>(n, -1.f, 1.f, 2);
    std::vector<float> ref = y, out(n, -1.f);
    saxpy_cpu(a, x.data(), ref.data(), n);
    std::printf("n = %lld floats (%.1f MB per vector), y = %.1f * x + y\n", n, n * sizeof(float) / 1e6, a);

    float* d_x = device_alloc(x);
    float* d_y = device_alloc(y);
    upload(d_x, x);
    upload(d_y, y);
    saxpy<<<(unsigned)((n + 255) / 256), 256>>>(a, d_x, d_y, n);
    CHECK_LAUNCH();
    download(out, d_y);

    // The GPU may fuse a * x + y into one FMA (one rounding instead of two): allow an ulp or so.
    unsigned long long wrote = 0;
    CHECK(cudaMemcpyFromSymbol(&wrote, gpu_witness, sizeof wrote));
    Verdict verdict;
    verdict.close("y vs CPU", ref.data(), out.data(), n, 1e-6, 1e-6);
    verdict.check(wrote == witness_sum(d_y, out.data(), n), "y downloaded is what saxpy wrote");
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));
    return verdict.finish();
}
