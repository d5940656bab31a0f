// error_checking - CUDA errors on purpose: what each call returns, and sticky vs non-sticky.
//
// Manual: G 3.2.10 错误检查; N 5.1 Cuda编程模型中的错误检测 (the CHECK macro, cudaGetLastError vs
//         cudaPeekAtLastError).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o error_checking error_checking.cu
// Shows:  every runtime call returns a cudaError_t; a kernel launch returns nothing, so its
//         errors are read with cudaPeekAtLastError (leaves the error variable set) or
//         cudaGetLastError (returns it and resets it to cudaSuccess). CHECK() (common/check.cuh,
//         the notes' macro with the error's name added) stops the program at the first error, so
//         this program calls the API directly to look at each cudaError_t:
//           1. CHECK in action, in a child process: an invalid memcpy, the message, exit 1;
//           2. a launch with 2048 threads per block: a launch-configuration error, seen twice by
//              peek and once by get, then gone - a non-sticky error; the GPU keeps working. The
//              guide and the notes name it cudaErrorInvalidConfiguration; CUDA 13.0 (driver 580,
//              H200) returned cudaErrorInvalidValue for it, so either is accepted and the one seen
//              is printed;
//           3. cudaMemcpy with an invalid direction: the call returns the error and also records
//              it in the error variable (G 3.2.10: "whether parameter validation or async");
//           4. a kernel that stores through a wild pointer: the launch looks fine, the fault
//              surfaces at cudaDeviceSynchronize (G 3.2.10: only a synchronization reports
//              asynchronous errors) as cudaErrorIllegalAddress, and it is sticky: every later call
//              fails with it until the process exits. So this step comes last.
// Build:  make error_checking    Run: ./error_checking [--n=1000003]
// Output: the child's CHECK message, then one line per call with the error it returned and a
//         check that it is the documented one; PASSED.
#include <cstdint>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include "common.cuh"

// CPU reference.
void scale_cpu(const float* x, float* y, int n) {
    for (int i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

__global__ void scale(const float* x, float* y, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = 2.0f * x[i];
}

// Every thread stores through `wild`, a pointer that was never set to an allocation (nullptr
// here, plus an offset): the lowest pages of the address space are never mapped, neither for the
// host nor for the GPU, so the store faults on every GPU and every run.
__global__ void write_through_wild_pointer(int* wild, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) wild[1024 + i] = i;
}

// One line per call: what it returned; a mismatch names the documented code that was expected.
static bool expect(Verdict& v, const char* call, cudaError_t got, cudaError_t want) {
    std::string what = std::string(call) + " -> " + cudaGetErrorName(got);
    if (got != want) what += " (documented: " + std::string(cudaGetErrorName(want)) + ")";
    return v.check(got == want, what);
}

// Step 1, in a child process forked before the parent touches CUDA: CHECK on a failing call
// prints file, line, call, error name and text, and exits 1. Returns the child's output.
static std::string check_in_child(int device, int* exit_code) {
    int fd[2];
    if (pipe(fd) != 0) return "pipe() failed";
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        dup2(fd[1], 1);
        dup2(fd[1], 2);
        close(fd[0]);
        select_device(device, false);  // no GPU: SKIPPED, exit 77
        float host = 1.0f, *d = nullptr;
        CHECK(cudaMalloc(&d, sizeof(float)));
        CHECK(cudaMemcpy(d, &host, sizeof(float), static_cast<cudaMemcpyKind>(42)));
        std::_Exit(0);  // not reached
    }
    close(fd[1]);
    std::string text;
    char buf[512];
    ssize_t got;
    while ((got = read(fd[0], buf, sizeof buf)) > 0) text.append(buf, got);
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    return text;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Provokes CUDA errors on purpose and checks the documented error codes.");
    int n = (int)args.integer("n", 1000003, 1, 1 << 26, "elements of the test vector");
    args.parse_or_exit();

    int child_rc = 0;
    std::string child = check_in_child(args.device(), &child_rc);
    DeviceInfo dev = select_device(args.device());  // skips here if the child found no GPU
    (void)dev;
    Verdict verdict;

    std::printf("1. CHECK(cudaMemcpy(..., invalid kind)) in a child process:\n");
    size_t start = 0, end;
    while ((end = child.find('\n', start)) != std::string::npos && start < child.size()) {
        if (child.compare(start, 7, "FAILED:") != 0)  // CHECK's verdict line is the child's, not ours
            std::printf("   | %s\n", child.substr(start, end - start).c_str());
        start = end + 1;
    }
    verdict.check(child_rc == 1 && child.find("cudaErrorInvalidMemcpyDirection") != std::string::npos,
                  "CHECK printed the error and exited 1");

    std::vector<float> x = random_vector<float>(n, -1.f, 1.f, 1), ref(n), out(n);
    scale_cpu(x.data(), ref.data(), n);
    float *d_x, *d_y;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_y, n * sizeof(float)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(float), cudaMemcpyHostToDevice));

    std::printf("2. launch with 2048 threads per block (limit 1024):\n");
    CHECK(cudaGetLastError());  // start from cudaSuccess, so what follows comes from the launch
    scale<<<(n + 2047) / 2048, 2048>>>(d_x, d_y, n);
    cudaError_t cfg = cudaPeekAtLastError();
    verdict.check(cfg == cudaErrorInvalidConfiguration || cfg == cudaErrorInvalidValue,
                  std::string("cudaPeekAtLastError() -> ") + cudaGetErrorName(cfg) + " (a launch-config error)");
    if (cfg == cudaErrorInvalidValue)
        std::printf("    (the guide and the notes say cudaErrorInvalidConfiguration; this runtime reports"
                    " cudaErrorInvalidValue)\n");
    expect(verdict, "cudaPeekAtLastError() again (not reset)", cudaPeekAtLastError(), cfg);
    expect(verdict, "cudaGetLastError() (returns and resets)", cudaGetLastError(), cfg);
    expect(verdict, "cudaGetLastError() again", cudaGetLastError(), cudaSuccess);
    CHECK(cudaMemset(d_y, 0xff, n * sizeof(float)));  // NaN: an element the kernel skipped shows
    scale<<<(n + 255) / 256, 256>>>(d_x, d_y, n);     // non-sticky: the GPU still works
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(out.data(), d_y, n * sizeof(float), cudaMemcpyDeviceToHost));
    verdict.exact("then a valid launch works", ref.data(), out.data(), n);

    std::printf("3. cudaMemcpy with an invalid direction:\n");
    expect(verdict, "cudaMemcpy(d_y, host, ..., kind 42)",
           cudaMemcpy(d_y, x.data(), sizeof(float), static_cast<cudaMemcpyKind>(42)), cudaErrorInvalidMemcpyDirection);
    expect(verdict, "cudaGetLastError() (recorded it too)", cudaGetLastError(), cudaErrorInvalidMemcpyDirection);

    // Free everything now: after step 4 no call can succeed any more.
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_y));

    std::printf("4. kernel storing through a wild pointer (last: the error is sticky):\n");
    int* wild = nullptr;
    write_through_wild_pointer<<<(n + 255) / 256, 256>>>(wild, n);
    cudaError_t launch = cudaGetLastError();  // usually cudaSuccess: the kernel has not run yet
    std::printf("  cudaGetLastError() right after the launch -> %s (the launch itself was valid)\n",
                cudaGetErrorName(launch));
    expect(verdict, "cudaDeviceSynchronize()", cudaDeviceSynchronize(), cudaErrorIllegalAddress);
    expect(verdict, "cudaGetLastError()", cudaGetLastError(), cudaErrorIllegalAddress);
    void* p = nullptr;
    expect(verdict, "cudaMalloc() afterwards (sticky)", cudaMalloc(&p, 16), cudaErrorIllegalAddress);
    return verdict.finish();
}
