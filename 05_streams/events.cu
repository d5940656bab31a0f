// events - CUDA events: timing a kernel, polling with cudaEventQuery, and what each way of
// waiting for the GPU costs the host CPU (spin / yield / blocking sync).
//
// Manual: G 3.2.6.7 事件 (3.2.6.7.1 创建和销毁, 3.2.6.7.2 计算时间), G 3.2.6.8 同步调用;
//         N 5.2 CUDA编程模型中的事件 (5.2.1 使用实例).
// Shows:  an event is a marker in a stream; it completes when everything before it in that stream
//         has completed. cudaEventElapsedTime reads the GPU's own clock between two events, so a
//         kernel is timed without the launch latency that a CPU clock would add. cudaEventQuery
//         never blocks: it returns cudaErrorNotReady until the event completes, so the CPU can do
//         its own work meanwhile (here: it computes the CPU reference while the GPU runs).
//         A synchronous call (cudaDeviceSynchronize, cudaEventSynchronize) has to wait somehow.
//         By default the host thread spins on the CPU: lowest latency, one core at 100% for the
//         whole wait. cudaSetDeviceFlags(cudaDeviceScheduleYield) spins but yields the core to other
//         threads; cudaDeviceScheduleBlockingSync (or, per event, cudaEventBlockingSync) puts the
//         thread to sleep until the GPU signals completion: almost no CPU time, a little more
//         latency. The guide sets the flag before any other CUDA call (the current runtime also
//         lets it overwrite the flags of a live context); here each of the three flags gets a
//         fresh context of its own, in a child process forked before this process touches CUDA,
//         so no measurement depends on the one before it. The per-event flag runs in this process. CPU time = getrusage(RUSAGE_SELF) user + system, over the
//         wait for a kernel that runs --ms milliseconds.
// Build:  make events   (nvcc -std=c++17 -O3 -arch=native -I../common -o events events.cu)
// Run:    ./events [--n=2^22] [--ms=200]
// Output: the event-timed kernel, the polling count, a table of wall and CPU milliseconds for
//         every way of waiting, the blocking / spin CPU ratio, the checks, PASSED.
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>
#include "common.cuh"

// A cheap integer hash: every output element depends on its index, so a wrong index shows.
__host__ __device__ inline uint32_t hash32(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

void cpu_reference(std::vector<uint32_t>& out, const std::vector<uint32_t>& in, size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) out[i] = hash32(in[i] ^ (uint32_t)i);
}

// The GPU's nanosecond timer (PTX %globaltimer): wall time, independent of the SM clock, so the
// kernel lasts --ms milliseconds whatever clock the GPU runs at.
__device__ inline unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Every thread hashes its element; thread 0 then keeps the kernel alive for wait_ns. It sleeps
// between looks at the timer (__nanosleep), so the wait does not burn the SM.
__global__ void busy_kernel(const uint32_t* in, uint32_t* out, int n, unsigned long long wait_ns) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = hash32(in[i] ^ (uint32_t)i);
    if (i == 0 && wait_ns > 0) {
        unsigned long long t0 = global_ns();
        while (global_ns() - t0 < wait_ns) __nanosleep(20000);
    }
}

double cpu_ms_now() {
    rusage ru{};
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

struct WaitCost {
    int err = (int)cudaErrorUnknown;  // first CUDA error in the child (cudaSuccess if none)
    double wall_ms = 0, cpu_ms = 0, gpu_ms = 0;
    long long mismatches = -1;  // output elements that differ from the CPU reference
};

// Launches the --ms kernel, then measures wall and CPU time of `wait()`.
template <class Wait>
WaitCost timed_wait(const uint32_t* d_in, uint32_t* d_out, int n, double ms, cudaEvent_t start, cudaEvent_t stop,
                    Wait wait) {
    WaitCost c;
    const int block = 256;
    CHECK(cudaEventRecord(start));
    busy_kernel<<<(n + block - 1) / block, block>>>(d_in, d_out, n, (unsigned long long)(ms * 1e6));
    CHECK_LAUNCH();
    CHECK(cudaEventRecord(stop));
    CpuTimer wall;
    double cpu0 = cpu_ms_now();
    wait();
    c.cpu_ms = cpu_ms_now() - cpu0;
    c.wall_ms = wall.stop_ms();
    float g = 0;
    CHECK(cudaEventElapsedTime(&g, start, stop));
    c.gpu_ms = g;
    c.err = (int)cudaSuccess;
    return c;
}

long long count_mismatches(const std::vector<uint32_t>& ref, const uint32_t* d_out, int n) {
    std::vector<uint32_t> got(n);
    CHECK(cudaMemcpy(got.data(), d_out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    lab_corrupt(got.data(), n);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
    long long bad = 0;
    for (int i = 0; i < n; ++i) bad += got[i] != ref[i];
    return bad;
}

// One child process per device flag, each with a fresh context created with that flag (the
// guide's order: flag first). The child reports through a pipe; a CUDA failure in the child is
// reported as its error code.
WaitCost wait_in_child(unsigned flag, int device, const std::vector<uint32_t>& in, const std::vector<uint32_t>& ref,
                       double ms) {
    WaitCost result;
    int fd[2];
    if (pipe(fd) != 0) return result;
    std::fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return result;
    if (pid == 0) {
        close(fd[0]);
        WaitCost c;
        int n = (int)in.size(), count = 0;
        uint32_t *d_in = nullptr, *d_out = nullptr;
        cudaEvent_t start = nullptr, stop = nullptr;
        // cudaSetDeviceFlags with no current device initializes the default device, device 0, and
        // cudaSetDevice initializes the device it selects (CUDA 12+). So that the flag comes first
        // for the GPU of --device, the child makes that GPU its only visible one (its device 0).
        cudaError_t e = cudaSuccess;
        std::string visible = std::to_string(device);
        if (const char* env = std::getenv("CUDA_VISIBLE_DEVICES")) {  // --device indexes this list
            std::vector<std::string> list(1);
            for (const char* ch = env; *ch; ++ch)
                if (*ch == ',') list.emplace_back();
                else list.back() += *ch;
            if (device < (int)list.size()) visible = list[device];
            else e = cudaErrorInvalidDevice;
        }
        if (e == cudaSuccess && setenv("CUDA_VISIBLE_DEVICES", visible.c_str(), 1) != 0) e = cudaErrorUnknown;
        if (e == cudaSuccess) e = cudaGetDeviceCount(&count);
        if (e == cudaSuccess && count < 1) e = cudaErrorInvalidDevice;
        if (e == cudaSuccess) e = cudaSetDeviceFlags(flag);  // initializes device 0 with the flag
        if (e == cudaSuccess) e = cudaSetDevice(0);
        if (e == cudaSuccess) e = cudaMalloc(&d_in, n * sizeof(uint32_t));
        if (e == cudaSuccess) e = cudaMalloc(&d_out, n * sizeof(uint32_t));
        if (e == cudaSuccess) e = cudaMemcpy(d_in, in.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice);
        if (e == cudaSuccess) e = cudaMemset(d_out, 0xff, n * sizeof(uint32_t));
        if (e == cudaSuccess) e = cudaEventCreate(&start);
        if (e == cudaSuccess) e = cudaEventCreate(&stop);
        if (e == cudaSuccess) {  // warm-up: module load and first launch out of the measurement
            busy_kernel<<<1, 32>>>(d_in, d_out, 0, 0);
            e = cudaDeviceSynchronize();
        }
        if (e == cudaSuccess) {
            // G 3.2.6.8: the flag decides how this synchronous call waits.
            c = timed_wait(d_in, d_out, n, ms, start, stop, [] { CHECK(cudaDeviceSynchronize()); });
            c.mismatches = count_mismatches(ref, d_out, n);
        } else {
            c.err = (int)e;
        }
        // Release everything and exit normally, so that the runtime (and compute-sanitizer, which
        // follows child processes) shuts down cleanly and a leak check finds nothing. stdout was
        // flushed before the fork, so nothing the parent printed is printed twice.
        if (start) cudaEventDestroy(start);
        if (stop) cudaEventDestroy(stop);
        if (d_in) cudaFree(d_in);
        if (d_out) cudaFree(d_out);
        if (write(fd[1], &c, sizeof c) != (ssize_t)sizeof c) std::_Exit(3);
        std::exit(0);
    }
    close(fd[1]);
    if (read(fd[0], &result, sizeof result) != (ssize_t)sizeof result) result.err = (int)cudaErrorUnknown;
    close(fd[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) result.err = (int)cudaErrorUnknown;
    return result;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "CUDA events: timing, cudaEventQuery polling, and the host CPU cost of spin / yield / blocking sync.");
    long long n_arg = args.integer("n", 1 << 22, 1, 1 << 28, "elements the kernel hashes (checked on the CPU)");
    double ms = args.real("ms", 200, 10, 5000, "how long the kernel runs, in milliseconds (the wait being measured)");
    args.parse_or_exit();
    int n = (int)n_arg;

    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0, 0xffffffffu, 5);
    std::vector<uint32_t> ref(n);
    cpu_reference(ref, in, 0, n);

    // Children first: this process must not have touched CUDA when it forks.
    const unsigned flags[3] = {cudaDeviceScheduleSpin, cudaDeviceScheduleYield, cudaDeviceScheduleBlockingSync};
    const char* flag_names[3] = {"cudaDeviceScheduleSpin", "cudaDeviceScheduleYield", "cudaDeviceScheduleBlockingSync"};
    WaitCost child[3];
    for (int k = 0; k < 3; ++k) child[k] = wait_in_child(flags[k], args.device(), in, ref, ms);

    DeviceInfo dev = select_device(args.device());
    (void)dev;
    Verdict verdict;
    const int block = 256;
    uint32_t *d_in, *d_out;
    CHECK(cudaMalloc(&d_in, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_out, n * sizeof(uint32_t)));
    CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));

    // 1. Timing with events (N 5.2.1, G 3.2.6.7.2). The notes call cudaEventQuery(start) right after
    //    recording it: on Windows (WDDM) the driver batches commands, and the query flushes the
    //    batch so that the start event is really submitted before the kernel. On Linux it is
    //    harmless. The kernel here has no wait: its time is the hashing alone.
    cudaEvent_t start, stop;
    CHECK(cudaEventCreate(&start));
    CHECK(cudaEventCreate(&stop));
    busy_kernel<<<(n + block - 1) / block, block>>>(d_in, d_out, n, 0);  // warm-up
    CHECK_LAUNCH();
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(uint32_t)));  // poison: an unwritten element fails
    CHECK(cudaEventRecord(start));
    cudaError_t q = cudaEventQuery(start);  // the notes' flush; cudaErrorNotReady is a normal answer
    if (q != cudaSuccess && q != cudaErrorNotReady) CHECK(q);
    busy_kernel<<<(n + block - 1) / block, block>>>(d_in, d_out, n, 0);
    CHECK_LAUNCH();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float hash_ms = 0;
    CHECK(cudaEventElapsedTime(&hash_ms, start, stop));
    std::printf("1. event timing (one run, as in the notes; bench_ms in common/timer.cuh takes a median):\n"
                "   hash of %d elements %.3f ms (%.1f GB/s read + write)\n", n, hash_ms,
                gbps(2.0 * n * sizeof(uint32_t), hash_ms));
    std::vector<uint32_t> out(n);
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    verdict.exact("hash kernel vs CPU", ref.data(), out.data(), n);

    // 2. Polling: the kernel runs --ms ms; meanwhile the CPU recomputes the reference in slices
    //    between cudaEventQuery calls instead of blocking.
    std::vector<uint32_t> ref2(n);
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(uint32_t)));
    CHECK(cudaEventRecord(start));
    busy_kernel<<<(n + block - 1) / block, block>>>(d_in, d_out, n, (unsigned long long)(ms * 1e6));
    CHECK_LAUNCH();
    CHECK(cudaEventRecord(stop));
    cudaError_t first = cudaEventQuery(stop);
    long long polls = 1;
    size_t done = 0, slice = 65536;
    cudaError_t st = first;
    while (st == cudaErrorNotReady) {
        if (done < (size_t)n) {
            size_t end = std::min(done + slice, (size_t)n);
            cpu_reference(ref2, in, done, end);
            done = end;
        }
        st = cudaEventQuery(stop);
        ++polls;
    }
    CHECK(st);
    cudaError_t last = cudaGetLastError();  // NotReady answers are not errors; clear them
    if (last != cudaSuccess && last != cudaErrorNotReady) CHECK(last);
    if (done < (size_t)n) cpu_reference(ref2, in, done, n);
    float poll_gpu_ms = 0;
    CHECK(cudaEventElapsedTime(&poll_gpu_ms, start, stop));
    std::printf("2. cudaEventQuery polling: first answer %s, %lld polls; the CPU meanwhile computed the reference\n"
                "   for %zu of %d elements; the kernel took %.1f ms (asked for %.0f)\n",
                cudaGetErrorName(first), polls, std::min(done, (size_t)n), n, poll_gpu_ms, ms);
    bool tool = cuda_tool_attached();  // timing claims are printed, not asserted, under a tool
    if (tool) std::printf("   (a CUDA tool is attached: launches may not be asynchronous; NotReady not asserted)\n");
    else verdict.check(first == cudaErrorNotReady, "first cudaEventQuery: NotReady");
    verdict.check(poll_gpu_ms >= 0.95 * ms, "kernel lasted --ms (event time)");
    CHECK(cudaMemcpy(out.data(), d_out, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    verdict.exact("polled kernel vs CPU", ref2.data(), out.data(), n);

    // 3. Per-event flag in this process (its context has the default, automatic schedule: it spins
    //    when there are fewer active contexts than CPU cores, i.e. almost always).
    cudaEvent_t stop_blocking;
    CHECK(cudaEventCreateWithFlags(&stop_blocking, cudaEventBlockingSync));
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(uint32_t)));
    WaitCost dflt = timed_wait(d_in, d_out, n, ms, start, stop, [&] { CHECK(cudaEventSynchronize(stop)); });
    dflt.mismatches = count_mismatches(ref, d_out, n);
    CHECK(cudaMemset(d_out, 0xff, n * sizeof(uint32_t)));
    WaitCost blk = timed_wait(d_in, d_out, n, ms, start, stop, [&] {
        CHECK(cudaEventRecord(stop_blocking));  // behind `stop`: completes when the kernel does
        CHECK(cudaEventSynchronize(stop_blocking));
    });
    blk.mismatches = count_mismatches(ref, d_out, n);

    std::printf("\n3. waiting for a %.0f ms kernel:\n   %-40s %9s %9s %9s %9s\n", ms, "how the host thread waits", "wall ms",
                "CPU ms", "CPU/wall", "kernel ms");
    auto row = [&](const std::string& name, const WaitCost& c) {
        if (c.err != (int)cudaSuccess) {
            std::printf("   %-40s failed: %s\n", name.c_str(), cudaGetErrorName((cudaError_t)c.err));
            return;
        }
        std::printf("   %-40s %9.1f %9.1f %8.0f%% %9.1f\n", name.c_str(), c.wall_ms, c.cpu_ms,
                    c.wall_ms > 0 ? 100.0 * c.cpu_ms / c.wall_ms : 0.0, c.gpu_ms);
    };
    for (int k = 0; k < 3; ++k) row(std::string(flag_names[k]) + " (child)", child[k]);
    row("default event, cudaEventSynchronize", dflt);
    row("cudaEventBlockingSync event", blk);

    for (int k = 0; k < 3; ++k) {
        verdict.check(child[k].err == (int)cudaSuccess, std::string(flag_names[k] + 18) + " child ran");
        verdict.check(child[k].mismatches == 0, std::string(flag_names[k] + 18) + " child result vs CPU");
    }
    verdict.check(dflt.mismatches == 0 && blk.mismatches == 0, "per-event waits: results vs CPU");

    // The documented behaviour, asserted with a wide margin: blocking sync costs a small fraction
    // of the CPU time that spinning does. Yield is not asserted: on an otherwise idle machine
    // sched_yield returns at once and yielding looks like spinning.
    const WaitCost& spin = child[0];
    const WaitCost& blocking = child[2];
    if (spin.err == (int)cudaSuccess && blocking.err == (int)cudaSuccess) {
        double ratio = spin.cpu_ms > 0 ? blocking.cpu_ms / spin.cpu_ms : 0.0;
        std::printf("   BlockingSync / Spin CPU time: %.3f (a sleeping thread leaves the core to others)\n", ratio);
        if (tool)
            std::printf("   (a CUDA tool is attached: CPU times are not compared)\n");
        else
            verdict.check(blocking.cpu_ms < 0.5 * spin.cpu_ms, "blocking-sync CPU < 0.5 x spin CPU");
    }
    if (dflt.wall_ms > 0 && dflt.cpu_ms >= 0.5 * dflt.wall_ms) {
        std::printf("   BlockingSync event / default event CPU time: %.3f\n", blk.cpu_ms / dflt.cpu_ms);
        if (!tool) verdict.check(blk.cpu_ms < 0.5 * dflt.cpu_ms, "blocking event CPU < 0.5 x default");
    } else {
        std::printf("   (the default event did not spin here - the automatic schedule chose to yield or block;"
                    " not compared)\n");
    }

    CHECK(cudaEventDestroy(start));
    CHECK(cudaEventDestroy(stop));
    CHECK(cudaEventDestroy(stop_blocking));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    return verdict.finish();
}
