// ipc - two processes share a device buffer and an event through the CUDA IPC API.
//
// Manual: G 3.2.9 进程间通信 (cudaIpcGetMemHandle / cudaIpcOpenMemHandle, event handles,
//         "share only allocations with 2MiB-aligned sizes", not for cudaMallocManaged memory).
// Shows:  a device pointer means nothing in another process; an IPC handle (64 opaque bytes) does.
//         The program forks before it makes any CUDA call (a CUDA context must not cross a
//         fork): the child waits on a pipe. The parent then allocates a buffer with cudaMalloc,
//         fills it with seeded random ints, creates two events with cudaEventInterprocess |
//         cudaEventDisableTiming, records `filled` behind the fill, and sends the three handles
//         through the pipe. Two processes' streams are not ordered with each other: a cudaMemcpy
//         from pageable memory may return before its last bytes reach the GPU, so the child makes
//         its stream wait for `filled` before it reads. The child opens the handles
//         (cudaIpcOpenMemHandle maps the parent's memory into its own address space), enqueues
//         a kernel that spins for --delay-ms and then rewrites every element, records `done`
//         behind it and tells the parent. The parent makes its stream wait for `done`
//         (cudaStreamWaitEvent: the GPU waits, not the CPU), copies the buffer back and checks
//         x -> 3x + 1 for every element: without the event the copy would run before the
//         child's kernel finished and see the old data. The child closes the handles before the
//         parent frees anything; every wait has a timeout, so a dead child cannot hang the parent.
// Build:  make ipc  (nvcc -std=c++17 -O3 -arch=native -I../common -o ipc ipc.cu)
// Run:    ./ipc [--n=2^24] [--delay-ms=50]
// Output: the IPC attributes, the handles' sizes, how long the parent's stream waited for the
//         child's event (GPU time between an event recorded before the wait and one after it), the check; PASSED, or SKIPPED where the platform has no CUDA IPC.
#include <cerrno>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <string>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include "common.cuh"

constexpr int TIMEOUT_MS = 120000;  // generous: CUDA start-up under compute-sanitizer is slow

// What the parent sends (go = 1) and what the child answers. Handles are plain bytes.
struct ToChild {
    int go;
    int device;
    long long n;
    long long delay_ns;
    cudaIpcMemHandle_t mem;
    cudaIpcEventHandle_t filled;  // the parent recorded it behind its fill of the buffer
    cudaIpcEventHandle_t done;    // the child records it behind its kernel
};
struct FromChild {
    int ok;
    int error;  // a cudaError_t
    char call[96];
};

// Reads exactly len bytes, waiting at most timeout_ms in all; false on timeout, EOF or error.
bool read_full(int fd, void* buf, size_t len, int timeout_ms) {
    char* p = static_cast<char*>(buf);
    CpuTimer t;
    while (len > 0) {
        int left = timeout_ms - (int)t.stop_ms();
        pollfd pfd{fd, POLLIN, 0};
        if (left <= 0 || poll(&pfd, 1, left) <= 0) return false;
        ssize_t got = read(fd, p, len);
        if (got <= 0) {
            if (got < 0 && errno == EINTR) continue;
            return false;
        }
        p += got;
        len -= (size_t)got;
    }
    return true;
}

bool write_full(int fd, const void* buf, size_t len) {
    const char* p = static_cast<const char*>(buf);
    while (len > 0) {
        ssize_t put = write(fd, p, len);
        if (put < 0 && errno == EINTR) continue;
        if (put <= 0) return false;
        p += put;
        len -= (size_t)put;
    }
    return true;
}

// The child's kernels. The spin keeps the child's work in flight long enough that a parent
// which did not wait for the event would read the buffer before it changed.
__global__ void spin(long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        __nanosleep(10000);
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while ((long long)(t - t0) < ns);
}

__global__ void modify(int* data, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) data[i] = 3 * data[i] + 1;
}

// ---- the child process: no CUDA state from before the fork, reports errors through the pipe.
[[noreturn]] void child_fail(int wfd, cudaError_t err, const char* call) {
    FromChild r{};
    r.ok = 0;
    r.error = (int)err;
    std::snprintf(r.call, sizeof r.call, "%s", call);
    write_full(wfd, &r, sizeof r);
    std::_Exit(1);
}
#define CHILD_CHECK(call)                                         \
    do {                                                          \
        cudaError_t e_ = (call);                                  \
        if (e_ != cudaSuccess) child_fail(wfd, e_, #call);        \
    } while (0)

int child_main(int rfd, int wfd) {
    int devnull = open("/dev/null", O_WRONLY);  // the parent prints the report
    if (devnull >= 0) dup2(devnull, 1);
    ToChild msg{};
    if (!read_full(rfd, &msg, sizeof msg, TIMEOUT_MS) || !msg.go) return 0;  // parent skipped or failed
    CHILD_CHECK(cudaSetDevice(msg.device));
    int* data = nullptr;
    CHILD_CHECK(cudaIpcOpenMemHandle((void**)&data, msg.mem, cudaIpcMemLazyEnablePeerAccess));
    cudaEvent_t filled, done;
    CHILD_CHECK(cudaIpcOpenEventHandle(&filled, msg.filled));
    CHILD_CHECK(cudaIpcOpenEventHandle(&done, msg.done));
    cudaStream_t s;
    CHILD_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHILD_CHECK(cudaStreamWaitEvent(s, filled, 0));  // the parent's fill has reached the GPU
    spin<<<1, 1, 0, s>>>(msg.delay_ns);
    modify<<<(unsigned)((msg.n + 255) / 256), 256, 0, s>>>(data, msg.n);
    CHILD_CHECK(cudaGetLastError());
    CHILD_CHECK(cudaEventRecord(done, s));  // the parent's event, recorded in this process's stream
    FromChild r{};
    r.ok = 1;
    if (!write_full(wfd, &r, sizeof r)) return 1;
    // Keep the mapping until the parent has used the data: it frees the buffer only after we exit.
    char bye = 0;
    read_full(rfd, &bye, 1, TIMEOUT_MS);
    CHILD_CHECK(cudaStreamSynchronize(s));
    CHILD_CHECK(cudaStreamDestroy(s));
    CHILD_CHECK(cudaEventDestroy(done));
    CHILD_CHECK(cudaEventDestroy(filled));
    CHILD_CHECK(cudaIpcCloseMemHandle(data));
    return 0;
}

// ---- the parent.
static pid_t g_child = 0;
static int g_to_child = -1;

// Waits up to timeout_ms for the child to exit; kills it after that. Returns its exit code, or -1.
int reap_child(int timeout_ms) {
    if (g_child <= 0) return -1;
    if (g_to_child >= 0) {  // EOF tells a waiting child to leave
        close(g_to_child);
        g_to_child = -1;
    }
    int status = 0;
    CpuTimer t;
    pid_t got = 0;
    while ((got = waitpid(g_child, &status, WNOHANG)) == 0 && t.stop_ms() < timeout_ms) usleep(10000);
    if (got == 0) {
        kill(g_child, SIGKILL);
        waitpid(g_child, &status, 0);
        status = -1;
    }
    g_child = 0;
    return status >= 0 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "CUDA IPC: a forked child opens the parent's buffer and event, modifies the buffer, records the event.");
    long long n = args.integer("n", 1LL << 24, 1, 1LL << 28, "ints in the shared buffer");
    long long delay_ms = args.integer("delay-ms", 50, 1, 10000, "the child's kernel spins this long before writing");
    args.parse_or_exit();

    // Fork first: no CUDA call has been made in this process yet.
    int down[2], up[2];
    if (pipe(down) != 0 || pipe(up) != 0) {
        std::printf("FAILED: pipe(): %s\n", std::strerror(errno));
        return 1;
    }
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
        std::printf("FAILED: fork(): %s\n", std::strerror(errno));
        return 1;
    }
    if (pid == 0) {
        close(down[1]);
        close(up[0]);
        return child_main(down[0], up[1]);
    }
    close(down[0]);
    close(up[1]);
    g_child = pid;
    g_to_child = down[1];
    std::signal(SIGPIPE, SIG_IGN);               // a dead child must not kill the parent on write
    std::atexit([] { reap_child(10000); });      // every exit path (skip, CHECK) lets the child go

    DeviceInfo dev = select_device(args.device());
    int unified = 0, ipc_events = 0;
    unified = device_attribute(cudaDevAttrUnifiedAddressing, dev.id);
    ipc_events = device_attribute(cudaDevAttrIpcEventSupport, dev.id);
    std::printf("unifiedAddressing %d, ipcEventSupport %d; child pid %d\n", unified, ipc_events, (int)pid);
    if (!unified) skip("CUDA IPC needs unified addressing (cudaDevAttrUnifiedAddressing = 0)");
    if (!ipc_events) skip("this device/platform does not support CUDA IPC (cudaDevAttrIpcEventSupport = 0)");

    // The guide: cudaMalloc may sub-allocate from a larger block and IPC shares the whole block,
    // so share allocations whose size is a multiple of 2 MiB.
    size_t bytes = (size_t)n * sizeof(int);
    size_t alloc = (bytes + (2u << 20) - 1) / (2u << 20) * (2u << 20);
    int* d_data;
    CHECK(cudaMalloc(&d_data, alloc));
    std::vector<int> h = random_vector<int>(n, -1000000, 1000000, 1), out(n, 0), want(n);
    for (long long i = 0; i < n; ++i) want[i] = 3 * h[i] + 1;
    cudaEvent_t filled, done;
    CHECK(cudaEventCreateWithFlags(&filled, cudaEventDisableTiming | cudaEventInterprocess));
    CHECK(cudaEventCreateWithFlags(&done, cudaEventDisableTiming | cudaEventInterprocess));
    // From pageable memory, cudaMemcpy may return once the data is staged, before the DMA to the
    // buffer has finished; the child's stream knows nothing of this process's stream. `filled`,
    // recorded behind the copy and waited for by the child on the GPU, orders the two.
    CHECK(cudaMemcpy(d_data, h.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaEventRecord(filled, 0));

    ToChild msg{};
    msg.go = 1;
    msg.device = dev.id;
    msg.n = n;
    msg.delay_ns = delay_ms * 1000000;
    cudaError_t e = cudaIpcGetMemHandle(&msg.mem, d_data);
    if (e == cudaErrorNotSupported) skip("cudaIpcGetMemHandle: cudaErrorNotSupported (no CUDA IPC here)");
    CHECK(e);
    e = cudaIpcGetEventHandle(&msg.filled, filled);
    if (e == cudaErrorNotSupported) skip("cudaIpcGetEventHandle: cudaErrorNotSupported (no CUDA IPC here)");
    CHECK(e);
    CHECK(cudaIpcGetEventHandle(&msg.done, done));
    std::printf("buffer %.1f MB (allocated %.1f MB, a multiple of 2 MiB); handles: memory %zu bytes, event %zu bytes\n",
                bytes / 1e6, alloc / 1e6, sizeof msg.mem, sizeof msg.done);
    if (!write_full(g_to_child, &msg, sizeof msg)) {
        std::printf("FAILED: could not send the handles to the child (it died?)\n");
        return 1;
    }

    FromChild rep{};
    if (!read_full(up[0], &rep, sizeof rep, TIMEOUT_MS)) {
        std::printf("FAILED: no report from the child within %d s (or it died)\n", TIMEOUT_MS / 1000);
        return 1;
    }
    if (!rep.ok) {
        cudaError_t ce = (cudaError_t)rep.error;
        std::string what = std::string(rep.call) + " in the child: " + cudaGetErrorName(ce);
        if (ce == cudaErrorNotSupported) skip(what + " (no CUDA IPC here)");
        std::printf("FAILED: %s (%s)\n", what.c_str(), cudaGetErrorString(ce));
        return 1;
    }

    // The child's kernels are queued behind a spin of --delay-ms. Order this process's copy after
    // them on the GPU: the stream waits for the event the child recorded. The wait alone is timed,
    // on the GPU's clock, by two (local, timing) events around it; the copy comes after t1.
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    CHECK(cudaEventRecord(t0, s));  // the stream is empty: t0 completes at once
    CHECK(cudaStreamWaitEvent(s, done, 0));
    CHECK(cudaEventRecord(t1, s));  // completes when the child's `done` has
    CHECK(cudaMemcpyAsync(out.data(), d_data, bytes, cudaMemcpyDeviceToHost, s));
    CHECK(cudaStreamSynchronize(s));
    float waited = 0.f;
    CHECK(cudaEventElapsedTime(&waited, t0, t1));
    std::printf("the parent's stream waited %.1f ms for the child's event (the child's kernel spins %lld ms first)\n",
                waited, delay_ms);

    Verdict verdict;
    verdict.exact("child's 3x + 1, seen by the parent", want.data(), out.data(), n);
    char bye = 1;
    write_full(g_to_child, &bye, 1);
    int code = reap_child(TIMEOUT_MS);  // the child closes its handles before we free anything
    verdict.check(code == 0, "child closed its handles and exited 0");

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaEventDestroy(t0));
    CHECK(cudaEventDestroy(t1));
    CHECK(cudaEventDestroy(done));
    CHECK(cudaEventDestroy(filled));
    CHECK(cudaFree(d_data));
    close(up[0]);
    return verdict.finish();
}
