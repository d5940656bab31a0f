// runtime_init - the runtime initializes lazily; the primary context; cudaDeviceReset.
//
// Manual: G 3.2.1 初始化.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o runtime_init runtime_init.cu
// Shows:  the runtime has no init function: the first call that needs the device creates the
//         primary context (driver load, GPU memory mappings, module registration), so that call
//         is far slower than the same call afterwards - time it apart, and read a first error
//         with that in mind. Kernels load lazily too (CUDA_MODULE_LOADING=LAZY, the default since
//         CUDA 12.2): the first launch of a kernel pays for loading its code. The primary
//         context is shared by all host threads: a pointer allocated here works in a kernel
//         launched from another std::thread with no setup. cudaDeviceReset() destroys the
//         context: the next call creates a new one (slow again), and a pointer from before the
//         reset is no longer known to CUDA - cudaFree of it returns an error.
// Build:  make runtime_init      Run: ./runtime_init [--n=1000003] [--reps=5]
// Output: first vs following call times (init, cudaMalloc, kernel launch), the other-thread
//         check, the reset checks with the error codes, PASSED.
#include <thread>
#include <vector>
#include "common.cuh"

// CPU reference.
void add_one_cpu(const int* x, int* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = x[i] + 1;
}

__global__ void add_one(const int* x, int* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = x[i] + 1;
}

// Median time in ms of `reps` calls of fn, on the CPU clock (these are host-side API costs).
template <class F>
double cpu_median_ms(F&& fn, int reps) {
    std::vector<double> t;
    for (int i = 0; i < reps; ++i) {
        CpuTimer c;
        fn();
        t.push_back(c.stop_ms());
    }
    return median(t);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Times the runtime's lazy initialization and shows cudaDeviceReset invalidating pointers.");
    int n = (int)args.integer("n", 1000003, 1, 1 << 26, "elements of the test buffers");
    int reps = (int)args.integer("reps", 5, 1, 1000, "repetitions of the 'following' calls (median)");
    args.parse_or_exit();

    // The first CUDA calls of the process: device count, cudaSetDevice (which creates the
    // primary context since CUDA 12) and the property queries.
    CpuTimer init_timer;
    DeviceInfo dev = select_device(args.device());
    double init_ms = init_timer.stop_ms();
    double again_ms = cpu_median_ms([&] { (void)select_device(args.device(), false); }, reps);
    size_t bytes = (size_t)n * sizeof(int);
    std::vector<int> x = random_vector<int>(n, -1000000, 1000000, 1), ref(n), out(n);
    add_one_cpu(x.data(), ref.data(), n);

    int *d_x, *d_y;
    CpuTimer first_malloc;
    CHECK(cudaMalloc(&d_x, bytes));
    double malloc_first_ms = first_malloc.stop_ms();
    double malloc_next_ms = cpu_median_ms([&] { void* p; CHECK(cudaMalloc(&p, bytes)); CHECK(cudaFree(p)); }, reps);
    CHECK(cudaMalloc(&d_y, bytes));
    CHECK(cudaMemcpy(d_x, x.data(), bytes, cudaMemcpyHostToDevice));

    int grid = (n + 255) / 256;
    auto launch = [&] { add_one<<<grid, 256>>>(d_x, d_y, n); CHECK_LAUNCH(); CHECK(cudaDeviceSynchronize()); };
    CpuTimer first_launch;
    launch();
    double launch_first_ms = first_launch.stop_ms();
    double launch_next_ms = cpu_median_ms(launch, reps);

    std::printf("%-44s %10s %10s\n", "call (CPU clock, ms)", "first", "following");
    std::printf("%-44s %10.3f %10.3f\n", "select_device (runtime + primary context)", init_ms, again_ms);
    std::printf("%-44s %10.3f %10.3f\n", "cudaMalloc (+ cudaFree for the following)", malloc_first_ms, malloc_next_ms);
    std::printf("%-44s %10.3f %10.3f\n", "add_one launch + sync (lazy module load)", launch_first_ms, launch_next_ms);
    Verdict verdict;
    verdict.note(init_ms > again_ms, "first call (init) slower than later");
    // Printed, not checked: a tool that instruments every launch (compute-sanitizer) or a module
    // already loaded eagerly (CUDA_MODULE_LOADING=EAGER) makes the two equal.
    std::printf("  first launch / following: %.1fx (lazy loading puts the module load in the first launch)\n",
                launch_first_ms / launch_next_ms);

    // Another host thread uses the same primary context: the pointers are valid there as is.
    CHECK(cudaMemset(d_y, 0xff, bytes));
    std::thread other([&] { add_one<<<grid, 256>>>(d_x, d_y, n); CHECK_LAUNCH(); CHECK(cudaDeviceSynchronize()); });
    other.join();
    CHECK(cudaMemcpy(out.data(), d_y, bytes, cudaMemcpyDeviceToHost));
    verdict.exact("kernel from another host thread", ref.data(), out.data(), n);

    // cudaDeviceReset destroys the primary context and everything in it. d_x is deliberately
    // still allocated: its address means nothing to the new context.
    CHECK(cudaFree(d_y));
    cudaPointerAttributes attr{};
    CHECK(cudaPointerGetAttributes(&attr, d_x));
    verdict.check(attr.type == cudaMemoryTypeDevice, "before reset: d_x is device memory");
    CHECK(cudaDeviceReset());
    CpuTimer reinit;
    CHECK(cudaFree(nullptr));  // the classic "initialize now" call: creates a new primary context
    double reinit_ms = reinit.stop_ms();
    double free0_ms = cpu_median_ms([] { CHECK(cudaFree(nullptr)); }, reps);
    std::printf("after cudaDeviceReset: first call %.3f ms, following %.3f ms (new primary context)\n", reinit_ms,
                free0_ms);
    CHECK(cudaPointerGetAttributes(&attr, d_x));
    verdict.check(attr.type == cudaMemoryTypeUnregistered, "after reset: d_x is unknown memory");
    // (Copying from it is undefined behaviour - cudaMemcpy trusts the pointer it is given - so
    // the old pointer is only handed to calls that validate it.)
    cudaError_t free_err = cudaFree(d_x);
    std::printf("cudaFree(old pointer) -> %s\n", cudaGetErrorName(free_err));
    verdict.check(free_err == cudaErrorInvalidValue, "old pointer: cudaFree -> InvalidValue");
    cudaGetLastError();  // clear the recorded errors; the new context itself is fine
    (void)dev;
    return verdict.finish();
}
