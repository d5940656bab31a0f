// call_stack - recursion on the GPU: the per-thread call stack, cudaLimitStackSize, overflow.
//
// Manual: G 3.2.11 调用栈 (cudaDeviceGetLimit / cudaDeviceSetLimit for the call stack; an overflow
//         makes the kernel fail: a stack-overflow error under a debugger, otherwise an unspecified
//         launch failure).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -Xptxas --suppress-stack-size-warning
//            -Xptxas --sp-bounds-check -o call_stack call_stack.cu
// Shows:  each thread has its own stack in local memory, cudaLimitStackSize bytes of it (1 KB by
//         default). For ordinary code ptxas knows the deepest call chain and the driver sizes the
//         stack at launch; for recursion it cannot ("Stack size cannot be statically determined",
//         silenced in the Makefile), so a deep recursion overflows the default. Here recurse()
//         keeps a 32-int array alive across its recursive call, so every level costs a real frame:
//           - a child process (forked before this process touches CUDA) runs it at the default
//             limit: the kernel fails (the error is sticky, hence the separate process);
//           - this process raises the limit to depth x frame and the same kernel succeeds and
//             matches the CPU.
//         The Makefile also builds this file with -Xptxas --sp-bounds-check, so an overflow traps
//         instead of silently writing over the neighbouring threads' stacks.
// Build:  make call_stack        Run: ./call_stack [--depth=64] [--threads=4096]
// Output: the default limit, the child's error, the raised limit, the check, PASSED.
#include <cstdint>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include "common.cuh"

constexpr int FRAME_INTS = 32;
// Generous upper bound for one recurse() frame (128-byte array + saved registers + return
// address); `-Xptxas -v` reports the real figure ("bytes stack frame").
constexpr size_t FRAME_BYTES_MAX = 256;

// The same recursion on the host and the device: a frame of FRAME_INTS values that is still
// read after the recursive call returns, so it must live on the stack through the whole chain.
__host__ __device__ uint32_t recurse(int depth, uint32_t seed) {
    uint32_t frame[FRAME_INTS];
    for (int i = 0; i < FRAME_INTS; ++i) frame[i] = seed * 2654435761u + (uint32_t)(i * depth);
    if (depth == 0) return frame[seed % FRAME_INTS];
    uint32_t below = recurse(depth - 1, frame[(seed + depth) % FRAME_INTS]);
    return below ^ frame[below % FRAME_INTS];
}

__global__ void recurse_kernel(uint32_t* out, int depth, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = recurse(depth, (uint32_t)i);
}

// Runs the kernel at the current stack limit; returns the error of the launch and the sync.
static cudaError_t run_recursion(uint32_t* d_out, int depth, int n) {
    recurse_kernel<<<(n + 127) / 128, 128>>>(d_out, depth, n);
    cudaError_t err = cudaGetLastError();
    return err != cudaSuccess ? err : cudaDeviceSynchronize();
}

// The overflow, in a child process: writes the error code it saw into a pipe.
static cudaError_t overflow_in_child(int device, int depth, int n, size_t* child_limit) {
    int fd[2];
    if (pipe(fd) != 0) return cudaErrorUnknown;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        close(fd[0]);
        int msg[2] = {(int)cudaErrorNoDevice, 0};
        int count = 0;
        if (cudaGetDeviceCount(&count) == cudaSuccess && device < count && cudaSetDevice(device) == cudaSuccess) {
            size_t limit = 0;
            uint32_t* d_out = nullptr;
            cudaDeviceGetLimit(&limit, cudaLimitStackSize);
            msg[1] = (int)limit;
            cudaMalloc(&d_out, n * sizeof(uint32_t));
            msg[0] = (int)run_recursion(d_out, depth, n);
            cudaFree(d_out);  // fails after the fault; the process exit frees everything anyway
        }
        if (write(fd[1], msg, sizeof msg) != sizeof msg) std::_Exit(3);
        std::_Exit(0);
    }
    close(fd[1]);
    int msg[2] = {(int)cudaErrorUnknown, 0};
    if (read(fd[0], msg, sizeof msg) != sizeof msg) msg[0] = (int)cudaErrorUnknown;
    close(fd[0]);
    waitpid(pid, nullptr, 0);
    *child_limit = (size_t)msg[1];
    return (cudaError_t)msg[0];
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Recursion overflows the default GPU call stack and fits after cudaLimitStackSize.");
    int depth = (int)args.integer("depth", 64, 16, 128, "recursion depth (each level is a >= 128-byte frame)");
    int n = (int)args.integer("threads", 4096, 1, 1 << 20, "threads running the recursion");
    args.parse_or_exit();

    size_t child_limit = 0;
    cudaError_t overflow = overflow_in_child(args.device(), depth, n, &child_limit);
    select_device(args.device());

    std::vector<uint32_t> ref(n), out(n);
    for (int i = 0; i < n; ++i) ref[i] = recurse(depth, (uint32_t)i);

    Verdict verdict;
    size_t limit = 0;
    CHECK(cudaDeviceGetLimit(&limit, cudaLimitStackSize));
    std::printf("recursion depth %d, >= %zu bytes per level: needs >= %zu bytes of stack per thread\n", depth,
                FRAME_INTS * sizeof(uint32_t), depth * FRAME_INTS * sizeof(uint32_t));
    std::printf("default cudaLimitStackSize: %zu bytes per thread\n", limit);
    // An overflow is reported as a stack error (cudaErrorHardwareStackError on recent GPUs), the
    // guide's "unspecified launch failure" (cudaErrorLaunchFailure), or an illegal address.
    std::printf("child process at the default limit (%zu bytes): %s\n", child_limit, cudaGetErrorName(overflow));
    verdict.check(overflow == cudaErrorHardwareStackError || overflow == cudaErrorLaunchFailure ||
                      overflow == cudaErrorIllegalAddress,
                  "default stack overflows (kernel fails)");

    // The driver reserves the stack for every thread that can be resident at once
    // (SMs x max threads per SM), so the limit costs limit x ~250K bytes on an H100.
    size_t want = depth * FRAME_BYTES_MAX + 1024;
    CHECK(cudaDeviceSetLimit(cudaLimitStackSize, want));
    CHECK(cudaDeviceGetLimit(&limit, cudaLimitStackSize));
    std::printf("cudaDeviceSetLimit(cudaLimitStackSize, %zu) -> limit now %zu bytes\n", want, limit);
    verdict.note(limit >= want, "limit raised");

    uint32_t* d_out;
    CHECK(cudaMalloc(&d_out, n * sizeof(uint32_t)));
    CHECK(cudaMemset(d_out, 0, n * sizeof(uint32_t)));
    cudaError_t err = run_recursion(d_out, depth, n);
    std::printf("same kernel with the raised limit: %s\n", cudaGetErrorName(err));
    verdict.check(err == cudaSuccess, "raised limit: kernel succeeds");
    if (err == cudaSuccess) {
        CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        verdict.exact("recursion result vs CPU", ref.data(), out.data(), n);
        CHECK(cudaFree(d_out));
    }
    return verdict.finish();
}
