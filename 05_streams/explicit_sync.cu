// explicit_sync - the four ways G 3.2.6.5.3 gives to synchronize with streams, each with evidence.
//
// Manual: G 3.2.6.5.3 显式同步 (cudaDeviceSynchronize, cudaStreamSynchronize, cudaStreamWaitEvent,
//         cudaStreamQuery); G 3.2.6.7 事件 (the event that cudaStreamWaitEvent waits for).
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o explicit_sync explicit_sync.cu
// Shows:  a "gated" kernel spins until the host writes a flag in mapped pinned memory (the gate), so
//         the host decides when it may finish; its end is written to another mapped flag. That makes
//         the guide's sentences checkable without relying on timing:
//         1. cudaStreamSynchronize(a) waits for stream a only: a has a --ms kernel, b the gated one.
//            When the call returns, a's flag is set, b's is not and cudaStreamQuery(b) answers
//            cudaErrorNotReady ("允许其他流继续在设备上执行"). cudaDeviceSynchronize() then waits for
//            b too: a host thread opens b's gate --ms later, and the call returns only after that,
//            with b's flag set.
//         2. cudaStreamWaitEvent(c, e): e is recorded in b after a gated kernel that writes a marker
//            value. Stream c has no work of its own before the wait, yet its kernel does not start:
//            --ms after the launch c's flag is still 0 and cudaStreamQuery(c) is cudaErrorNotReady.
//            After the gate opens, c's kernel read the marker and started after b's kernel ended
//            (global-timer stamps). A kernel in a fourth stream d, with no wait, is printed: it may
//            finish while b is gated (not asserted: concurrency is allowed, not promised).
//         3. cudaStreamQuery(s) polls: while an n-element kernel that lasts at least --ms runs, the
//            host computes the CPU reference in slices between polls; the first answer is
//            cudaErrorNotReady, the last cudaSuccess, and the kernel's output is checked against that
//            reference.
//         Every gated kernel gives up after 10 s (its flag then says "timed out": FAILED, no hang).
//         Under a CUDA tool (compute-sanitizer), which may run the streams one after another, a gated
//         kernel would wait for a host that waits for it: there the gates open before the launches,
//         every kernel still runs (the tool checks its accesses), the data checks stay, and the checks
//         that need the streams to run at the same time are printed, not asserted.
// Build:  make explicit_sync   Run: ./explicit_sync [--ms=50] [--n=2^20]
// Output: per part the return codes, flags and times it saw, the checks, PASSED.
#include <cuda/atomic>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <thread>
#include <vector>
#include "common.cuh"

constexpr long long TIMEOUT_NS = 10'000'000'000LL;  // a gated kernel's safety limit
enum Flag { NOT_DONE = 0, DONE = 1, TIMED_OUT = 2 };

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// Host-mapped flags are read and written by the host and the GPU at the same time: system-scope
// atomics (the host side uses __atomic builtins on the same ints).
__device__ __forceinline__ int load_sys(int* p) {
    return cuda::atomic_ref<int, cuda::thread_scope_system>(*p).load(cuda::memory_order_acquire);
}
__device__ __forceinline__ void store_sys(int* p, int v) {
    cuda::atomic_ref<int, cuda::thread_scope_system>(*p).store(v, cuda::memory_order_release);
}
int host_load(int* p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
void host_store(int* p, int v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }

// One thread spins for ns nanoseconds, then sets *flag. window = [start, end].
__global__ void timed_kernel(long long ns, int* flag, unsigned long long* window) {
    unsigned long long t0 = global_ns(), t = t0;
    while ((long long)(t - t0) < ns) t = global_ns();
    window[0] = t0;
    window[1] = global_ns();
    store_sys(flag, DONE);
}

// One thread waits until the host opens *gate (or TIMEOUT_NS), writes *marker_out = marker, then
// sets *flag (DONE or TIMED_OUT).
__global__ void gated_kernel(int* gate, int* flag, uint32_t* marker_out, uint32_t marker,
                             unsigned long long* window) {
    unsigned long long t0 = global_ns();
    bool open = false;
    while (!(open = load_sys(gate) != 0) && (long long)(global_ns() - t0) < TIMEOUT_NS) {
    }
    *marker_out = marker;
    window[0] = t0;
    window[1] = global_ns();
    __threadfence();
    store_sys(flag, open ? DONE : TIMED_OUT);
}

// Reads what the gated kernel wrote (stream c, after cudaStreamWaitEvent).
__global__ void reader_kernel(const uint32_t* marker_in, uint32_t* out, int* flag, unsigned long long* window) {
    window[0] = global_ns();
    *out = *marker_in;
    window[1] = global_ns();
    store_sys(flag, DONE);
}

__host__ __device__ inline uint32_t work_value(uint32_t x, uint32_t i) { return x * 2654435761u + (i ^ (x >> 7)); }

// Part 3: out[i] = work_value(in[i], i); thread 0 of block 0 also spins ns, so the kernel lasts >= ns.
__global__ void work_kernel(const uint32_t* in, uint32_t* out, int n, long long ns) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = work_value(in[i], (uint32_t)i);
    if (i == 0) {
        unsigned long long t0 = global_ns();
        while ((long long)(global_ns() - t0) < ns) {
        }
    }
}

const char* flag_name(int f) { return f == DONE ? "done" : f == TIMED_OUT ? "TIMED OUT" : "not done"; }

double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

int main(int argc, char** argv) {
    Args args(argc, argv, "cudaStreamSynchronize vs cudaDeviceSynchronize, cudaStreamWaitEvent, cudaStreamQuery (G 3.2.6.5.3).");
    int ms = (int)args.integer("ms", 50, 1, 2000, "length of the timed kernels and of the host's waits");
    long long n_arg = args.integer("n", 1 << 20, 1, 1 << 26, "elements of part 3's kernel");
    args.parse_or_exit();
    int n = (int)n_arg;
    long long ns = ms * 1000000LL;

    DeviceInfo dev = select_device(args.device());
    if (!dev.prop.canMapHostMemory) skip("the gate needs mapped pinned memory (canMapHostMemory is 0)");
    bool tool = cuda_tool_attached();
    if (tool)
        std::printf("a CUDA tool is attached: it may serialize the streams, so the gates open before the launches\n"
                    "and the checks that need concurrent streams are printed, not asserted\n");

    // Flags in mapped pinned memory: gate1, a_done, b_done, gate2, b2_done, c_ran, d_done.
    int* h_flags;
    CHECK(cudaHostAlloc(&h_flags, 8 * sizeof(int), cudaHostAllocMapped));
    int* d_flags;
    CHECK(cudaHostGetDevicePointer(&d_flags, h_flags, 0));
    for (int i = 0; i < 8; ++i) h_flags[i] = NOT_DONE;
    enum { GATE1, A_DONE, B_DONE, GATE2, B2_DONE, C_RAN, D_DONE };
    uint32_t *d_marker, *d_out;
    unsigned long long* d_win;  // [a, b, b2, c, d] x {start, end}
    CHECK(cudaMalloc(&d_marker, sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_out, sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_win, 10 * sizeof(unsigned long long)));
    CHECK(cudaMemset(d_marker, 0, sizeof(uint32_t)));
    CHECK(cudaMemset(d_out, 0, sizeof(uint32_t)));

    cudaStream_t a, b, c, d;
    for (cudaStream_t* s : {&a, &b, &c, &d}) CHECK(cudaStreamCreateWithFlags(s, cudaStreamNonBlocking));
    cudaEvent_t e;
    CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
    // Load the kernels before any part: with lazy loading a first launch can itself synchronize.
    {
        int* f = d_flags + 7;
        timed_kernel<<<1, 1>>>(0, f, d_win);
        host_store(h_flags + GATE1, 1);
        gated_kernel<<<1, 1>>>(d_flags + GATE1, f, d_marker, 0, d_win);
        reader_kernel<<<1, 1>>>(d_marker, d_out, f, d_win);
        work_kernel<<<1, 1>>>(d_marker, d_out, 0, 0);
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        host_store(h_flags + GATE1, 0);
    }
    Verdict verdict;
    // A check that holds only while streams run concurrently: under a tool, printed, not asserted.
    auto concurrent_check = [&](bool ok, const std::string& what) {
        if (!tool) verdict.check(ok, what);
        else std::printf("  (not asserted, tool) %-34s %s\n", what.c_str(), ok ? "ok" : "no");
    };

    // 1. cudaStreamSynchronize(a) vs cudaDeviceSynchronize().
    auto t0 = std::chrono::steady_clock::now();
    if (tool) host_store(h_flags + GATE1, 1);  // b must not wait for a host that waits for b
    timed_kernel<<<1, 1, 0, a>>>(ns, d_flags + A_DONE, d_win);
    gated_kernel<<<1, 1, 0, b>>>(d_flags + GATE1, d_flags + B_DONE, d_marker, 1u, d_win + 2);
    CHECK_LAUNCH();
    CHECK(cudaStreamSynchronize(a));
    double t_sync_a = ms_since(t0);
    cudaError_t q_b = cudaStreamQuery(b);
    int a_flag = host_load(h_flags + A_DONE), b_flag = host_load(h_flags + B_DONE);
    std::printf("1. a: %d ms kernel; b: gated kernel\n", ms);
    std::printf("   cudaStreamSynchronize(a) returned after %.1f ms: a %s, b %s, cudaStreamQuery(b) = %s\n", t_sync_a,
                flag_name(a_flag), flag_name(b_flag), cudaGetErrorName(q_b));
    verdict.check(a_flag == DONE, "stream a finished at its sync");
    concurrent_check(b_flag == NOT_DONE && q_b == cudaErrorNotReady, "stream b still running then");
    std::atomic<double> t_open{0.0};
    std::thread opener;
    if (!tool)
        opener = std::thread([&] {  // opens b's gate --ms from now
            std::this_thread::sleep_for(std::chrono::milliseconds(ms));
            t_open = ms_since(t0);
            host_store(h_flags + GATE1, 1);
        });
    CHECK(cudaDeviceSynchronize());
    double t_dev = ms_since(t0);
    if (opener.joinable()) opener.join();
    b_flag = host_load(h_flags + B_DONE);
    if (tool)
        std::printf("   b's gate was open before the launch; cudaDeviceSynchronize() returned at %.1f ms: b %s\n", t_dev,
                    flag_name(b_flag));
    else
        std::printf("   the host opened b's gate at %.1f ms; cudaDeviceSynchronize() returned at %.1f ms: b %s\n",
                    t_open.load(), t_dev, flag_name(b_flag));
    verdict.check(b_flag == DONE, "b done at cudaDeviceSynchronize");
    concurrent_check(t_dev >= t_open.load(), "cudaDeviceSynchronize waited for b");

    // 2. cudaStreamWaitEvent(c, e): c waits for b's gated kernel; d does not wait for anything.
    const uint32_t MARK = 0x5eed1234u;
    if (tool) host_store(h_flags + GATE2, 1);  // as in part 1
    gated_kernel<<<1, 1, 0, b>>>(d_flags + GATE2, d_flags + B2_DONE, d_marker, MARK, d_win + 4);
    CHECK_LAUNCH();
    CHECK(cudaEventRecord(e, b));
    CHECK(cudaStreamWaitEvent(c, e, 0));
    reader_kernel<<<1, 1, 0, c>>>(d_marker, d_out, d_flags + C_RAN, d_win + 6);
    CHECK_LAUNCH();
    timed_kernel<<<1, 1, 0, d>>>(0, d_flags + D_DONE, d_win + 8);
    CHECK_LAUNCH();
    std::this_thread::sleep_for(std::chrono::milliseconds(ms));
    cudaError_t q_c = cudaStreamQuery(c);
    int c_flag = host_load(h_flags + C_RAN), d_flag = host_load(h_flags + D_DONE);
    int b2_flag = host_load(h_flags + B2_DONE);
    std::printf("2. b: gated kernel writing a marker, event e; c: cudaStreamWaitEvent(c, e), reader kernel; d: kernel\n");
    std::printf("   %d ms after the launches, gate %s: b %s, c's kernel %s (cudaStreamQuery(c) = %s), d's kernel %s%s\n",
                ms, tool ? "open" : "closed", flag_name(b2_flag), c_flag == DONE ? "ran" : "not started",
                cudaGetErrorName(q_c),
                d_flag == DONE ? "finished" : "not finished", " (d: printed, not asserted)");
    concurrent_check(b2_flag == NOT_DONE, "b's gated kernel still waiting");
    concurrent_check(c_flag == NOT_DONE && q_c == cudaErrorNotReady, "c delayed by the event wait");
    host_store(h_flags + GATE2, 1);
    CHECK(cudaStreamSynchronize(c));
    uint32_t got = 0;
    unsigned long long w[10];
    CHECK(cudaMemcpy(&got, d_out, sizeof got, cudaMemcpyDeviceToHost));
    lab_corrupt(&got, 1);  // CUDA_LAB_CORRUPT (corrupt.h): the marker check must be able to fail
    CHECK(cudaDeviceSynchronize());
    CHECK(cudaMemcpy(w, d_win, sizeof w, cudaMemcpyDeviceToHost));
    long long gap = (long long)(w[6] - w[5]);  // c's start - b's end
    std::printf("   gate opened: c read 0x%08x (b wrote 0x%08x); c started %.3f ms after b ended\n", got, MARK, gap / 1e6);
    verdict.check(host_load(h_flags + B2_DONE) == DONE, "b's gated kernel done");
    verdict.check(got == MARK, "c saw b's marker");
    verdict.check(w[6] >= w[5], "c started after b ended");

    // 3. cudaStreamQuery polling, with CPU work in between.
    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0, 0xffffffffu, 17), want(n), out(n);
    uint32_t *d_in, *d_res;
    CHECK(cudaMalloc(&d_in, n * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_res, n * sizeof(uint32_t)));
    CHECK(cudaMemcpy(d_in, in.data(), n * sizeof(uint32_t), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_res, 0xff, n * sizeof(uint32_t)));
    CHECK(cudaDeviceSynchronize());
    t0 = std::chrono::steady_clock::now();
    work_kernel<<<(n + 255) / 256, 256, 0, a>>>(d_in, d_res, n, ns);
    CHECK_LAUNCH();
    cudaError_t first = cudaStreamQuery(a), last = first;
    long long polls = 1, done_cpu = 0;
    const int slice = 4096;
    while (last == cudaErrorNotReady) {
        for (int k = 0; k < slice && done_cpu < n; ++k, ++done_cpu)
            want[done_cpu] = work_value(in[done_cpu], (uint32_t)done_cpu);
        if (done_cpu == n) std::this_thread::sleep_for(std::chrono::microseconds(100));
        last = cudaStreamQuery(a);
        ++polls;
    }
    double t_poll = ms_since(t0);
    long long during = done_cpu;
    for (; done_cpu < n; ++done_cpu) want[done_cpu] = work_value(in[done_cpu], (uint32_t)done_cpu);
    std::printf("3. cudaStreamQuery(a) on a kernel of >= %d ms: first %s, %lld polls, then %s after %.1f ms;\n"
                "   the CPU computed %lld of %d reference elements meanwhile\n",
                ms, cudaGetErrorName(first), polls, cudaGetErrorName(last), t_poll, during, n);
    verdict.check(first == cudaErrorNotReady, "first query: cudaErrorNotReady");
    verdict.check(last == cudaSuccess, "last query: cudaSuccess");
    verdict.check(t_poll >= 0.99 * ms, "polling lasted the kernel's length");
    CHECK(cudaMemcpy(out.data(), d_res, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    verdict.exact("kernel output vs CPU", want.data(), out.data(), n);

    for (cudaStream_t s : {a, b, c, d}) CHECK(cudaStreamDestroy(s));
    CHECK(cudaEventDestroy(e));
    for (void* p : {(void*)d_marker, (void*)d_out, (void*)d_win, (void*)d_in, (void*)d_res}) CHECK(cudaFree(p));
    CHECK(cudaFreeHost(h_flags));
    return verdict.finish();
}
