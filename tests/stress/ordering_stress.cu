// ordering_stress.cu - a preloaded library that makes stream timing hostile (tests/stress.py).
//
// An order between two pieces of GPU work holds only if the program states it: the same stream,
// an event, a synchronization. Work that is ordered "because the first one is short" or "because
// the GPU was idle" passes on a quiet GPU and fails in a lab where eight programs share it. This
// library, preloaded into a program built with the shared CUDA runtime (make CUDART=shared), puts
// a spin kernel of random length (up to CUDA_LAB_STRESS_MAX_US microseconds, default 200) in front of
//   - every asynchronous operation, in its own stream: kernel launches, cudaMemcpyAsync,
//     cudaMemcpy2DAsync, cudaMemsetAsync, cudaMemcpyPeerAsync, cudaGraphLaunch, cudaLaunchHostFunc
//     (half of them get none, the others 0 to the maximum);
//   - every cudaMemset and cudaMemcpy, on the legacy default stream (or the per-thread one in a
//     --default-stream per-thread build), which both may return before the device has done them
//     (each gets half the maximum to the maximum); a cudaMemcpy from pageable memory to the
//     device returns as soon as its source is copied, before its DMA (below).
// So the operation starts later than it would have, by a different amount each time, while its
// stream's order (and every order the program states) still holds: only an order that was never
// stated can break.
//
// Nothing is added while a stream capture is in progress (cudaStreamBeginCapture ..
// cudaStreamEndCapture, counted here), so that captured graphs keep their nodes; nor into a stream
// of another device than the current one. The delays come from CUDA_LAB_STRESS_SEED (default: the
// process id). Build (tests/stress.py does):
//   nvcc -std=c++17 -shared -Xcompiler -fPIC -cudart shared -arch=native -o libordering_stress.so ordering_stress.cu -ldl
// (the top-level Makefile's target .stress/libordering_stress.so).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <dlfcn.h>
#include <unistd.h>
#include <cuda_runtime.h>

__global__ void lab_stress_spin(unsigned long long ns) {
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

// The rest is host code: the device pass of nvcc sees the device runtime's own declarations of
// some of the names wrapped below (cuda_device_runtime_api.h), so it does not see these.
#if !defined(__CUDA_ARCH__)
namespace {

std::atomic<int> g_captures{0};  // stream captures in progress (any stream, any mode)
std::atomic<long long> g_calls{0}, g_delays{0};  // operations seen, spins added

// CUDA_LAB_STRESS_VERBOSE=1: at exit, how many operations were seen and how many got a delay.
struct Report {
    ~Report() {
        const char* v = std::getenv("CUDA_LAB_STRESS_VERBOSE");
        if (v && *v && *v != '0')
            std::fprintf(stderr, "ordering_stress: %lld operations, %lld delayed\n", g_calls.load(), g_delays.load());
    }
} g_report;
thread_local int t_inside = 0;   // > 0 while this library itself calls the runtime

template <class F>
F real(const char* name) {
    void* p = dlsym(RTLD_NEXT, name);
    if (!p) {
        std::fprintf(stderr, "ordering_stress: %s not found in the CUDA runtime\n", name);
        std::abort();
    }
    return reinterpret_cast<F>(p);
}

// The next delay: for cudaMemset or cudaMemcpy on the legacy (or per-thread) default stream, between
// max/2 and max (a program most often takes these as done when they return); for any other
// operation, 0 half of the time, else between 0 and max.
unsigned long long next_delay_ns(bool legacy_sync) {
    static std::atomic<unsigned long long> state{[] {
        const char* s = std::getenv("CUDA_LAB_STRESS_SEED");
        return s && *s ? std::strtoull(s, nullptr, 10) : static_cast<unsigned long long>(getpid());
    }()};
    static const unsigned long long max_us = [] {
        const char* s = std::getenv("CUDA_LAB_STRESS_MAX_US");
        return s && *s ? std::strtoull(s, nullptr, 10) : 200ull;
    }();
    unsigned long long x = state.fetch_add(0x9E3779B97F4A7C15ull) + 0x9E3779B97F4A7C15ull;  // splitmix64
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    x ^= x >> 31;
    const unsigned long long max_ns = max_us * 1000;
    if (legacy_sync) return max_ns / 2 + (x >> 1) % (max_ns / 2 + 1);
    if (x & 1) return 0;
    return (x >> 1) % (max_ns + 1);
}

// Whether `stream` belongs to the current device (a legacy or per-thread handle always does).
// cudaStreamGetDevice is runtime API from CUDA 12.8; before that every stream is taken as the
// current device's (a spin launched into another device's stream fails, and is then left out).
bool on_current_device(cudaStream_t stream) {
    if (stream == nullptr || stream == cudaStreamLegacy || stream == cudaStreamPerThread) return true;
#if CUDART_VERSION >= 12080
    int sd = -1, cur = -1;
    if (cudaStreamGetDevice(stream, &sd) != cudaSuccess || cudaGetDevice(&cur) != cudaSuccess) return false;
    return sd == cur;
#else
    return true;
#endif
}

using LaunchFn = cudaError_t (*)(const void*, dim3, dim3, void**, size_t, cudaStream_t);

void delay(cudaStream_t stream, bool legacy_sync = false) {
    if (!t_inside) ++g_calls;
    if (t_inside || g_captures.load() > 0 || !on_current_device(stream)) return;
    unsigned long long ns = next_delay_ns(legacy_sync);
    if (ns == 0) return;
    static LaunchFn launch = real<LaunchFn>("cudaLaunchKernel");
    ++t_inside;
    void* args[] = {&ns};
    cudaError_t e = launch(reinterpret_cast<const void*>(lab_stress_spin), dim3(1), dim3(1), args, 0, stream);
    if (e != cudaSuccess) (void)cudaGetLastError();
    else ++g_delays;  // could not be made here: no delay, and no error left behind
    --t_inside;
}

}  // namespace

// Each wrapper: the delay in front, then the runtime's own function.
#define FORWARD_AS(ret, name, params, args, stream_expr, legacy_sync) \
    extern "C" ret name params {                                       \
        using Fn = ret(*) params;                                      \
        static Fn fn = real<Fn>(#name);                                \
        delay(stream_expr, legacy_sync);                               \
        return fn args;                                                \
    }
#define FORWARD(ret, name, params, args, stream_expr) FORWARD_AS(ret, name, params, args, stream_expr, false)
#define FORWARD_SYNC(ret, name, params, args, stream_expr) FORWARD_AS(ret, name, params, args, stream_expr, true)

FORWARD(cudaError_t, cudaLaunchKernel, (const void* f, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st),
        (f, g, b, a, s, st), st)
FORWARD(cudaError_t, cudaLaunchKernel_ptsz, (const void* f, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st),
        (f, g, b, a, s, st), st == nullptr ? cudaStreamPerThread : st)
FORWARD(cudaError_t, cudaLaunchKernelExC, (const cudaLaunchConfig_t* c, const void* f, void** a), (c, f, a),
        c ? c->stream : nullptr)
FORWARD(cudaError_t, cudaLaunchKernelExC_ptsz, (const cudaLaunchConfig_t* c, const void* f, void** a), (c, f, a),
        c && c->stream ? c->stream : cudaStreamPerThread)
FORWARD(cudaError_t, cudaMemcpyAsync, (void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st),
        (d, s, n, k, st), st)
FORWARD(cudaError_t, cudaMemcpyAsync_ptsz, (void* d, const void* s, size_t n, cudaMemcpyKind k, cudaStream_t st),
        (d, s, n, k, st), st == nullptr ? cudaStreamPerThread : st)
FORWARD(cudaError_t, cudaMemcpy2DAsync,
        (void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k, cudaStream_t st),
        (d, dp, s, sp, w, h, k, st), st)
FORWARD(cudaError_t, cudaMemsetAsync, (void* p, int v, size_t n, cudaStream_t st), (p, v, n, st), st)
FORWARD(cudaError_t, cudaMemsetAsync_ptsz, (void* p, int v, size_t n, cudaStream_t st), (p, v, n, st),
        st == nullptr ? cudaStreamPerThread : st)
FORWARD(cudaError_t, cudaMemcpyPeerAsync, (void* d, int dd, const void* s, int sd, size_t n, cudaStream_t st),
        (d, dd, s, sd, n, st), st)
FORWARD(cudaError_t, cudaGraphLaunch, (cudaGraphExec_t g, cudaStream_t st), (g, st), st)
FORWARD(cudaError_t, cudaGraphLaunch_ptsz, (cudaGraphExec_t g, cudaStream_t st), (g, st),
        st == nullptr ? cudaStreamPerThread : st)
FORWARD(cudaError_t, cudaLaunchHostFunc, (cudaStream_t st, cudaHostFn_t fn2, void* u), (st, fn2, u), st)
FORWARD_SYNC(cudaError_t, cudaMemset, (void* p, int v, size_t n), (p, v, n), nullptr)
FORWARD_SYNC(cudaError_t, cudaMemset_ptds, (void* p, int v, size_t n), (p, v, n), cudaStreamPerThread)
// cudaMemcpy from pageable host memory to the device returns "once the pageable buffer has been
// copied to the staging memory for DMA transfer to device memory, but the DMA to final destination
// may not have completed" (CUDA Runtime API, API synchronization behavior). Here it does exactly
// that, as late as allowed: the source is copied into a pinned staging buffer of this library, and
// the copy to the device goes into the legacy stream behind a delay, and the call returns at once.
// Work in the legacy stream after it still sees the data; work in a non-blocking stream that never
// waited for the legacy stream does not.
namespace {
struct Staging {
    void* buf = nullptr;
    size_t cap = 0;
    cudaEvent_t done = nullptr;
};
std::mutex g_staging_lock;
Staging g_staging[8];
int g_staging_next = 0;

bool pageable_to_device(void* d, const void* s, cudaMemcpyKind k) {
    cudaPointerAttributes ad{}, as{};
    if (cudaPointerGetAttributes(&as, s) != cudaSuccess || cudaPointerGetAttributes(&ad, d) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return (k == cudaMemcpyHostToDevice || k == cudaMemcpyDefault) && as.type == cudaMemoryTypeUnregistered &&
           ad.type == cudaMemoryTypeDevice;
}
}  // namespace

extern "C" cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) {
    using Fn = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind);
    using AsyncFn = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
    static Fn fn = real<Fn>("cudaMemcpy");
    static AsyncFn async = real<AsyncFn>("cudaMemcpyAsync");
    if (t_inside || g_captures.load() > 0 || n == 0 || n > (256u << 20) || !pageable_to_device(d, s, k)) {
        delay(nullptr, true);
        return fn(d, s, n, k);
    }
    ++t_inside;
    cudaError_t e = cudaSuccess;
    {
        std::lock_guard<std::mutex> lock(g_staging_lock);
        Staging& st = g_staging[g_staging_next];
        g_staging_next = (g_staging_next + 1) % 8;
        if (st.done) e = cudaEventSynchronize(st.done);  // the slot's previous copy has left it
        if (e == cudaSuccess && st.cap < n) {
            if (st.buf) cudaFreeHost(st.buf);
            st.buf = nullptr, st.cap = 0;
            e = cudaMallocHost(&st.buf, n);
            if (e == cudaSuccess) st.cap = n;
        }
        if (e == cudaSuccess && !st.done) e = cudaEventCreateWithFlags(&st.done, cudaEventDisableTiming);
        if (e == cudaSuccess) {
            std::memcpy(st.buf, s, n);
            --t_inside;
            delay(nullptr, true);
            ++t_inside;
            e = async(d, st.buf, n, cudaMemcpyHostToDevice, nullptr);
            if (e == cudaSuccess) e = cudaEventRecord(st.done, nullptr);
        }
    }
    --t_inside;
    if (e != cudaSuccess) {  // the staging route failed (out of pinned memory ...): the plain call
        (void)cudaGetLastError();
        delay(nullptr, true);
        return fn(d, s, n, k);
    }
    return cudaSuccess;
}
FORWARD_SYNC(cudaError_t, cudaMemcpy_ptds, (void* d, const void* s, size_t n, cudaMemcpyKind k), (d, s, n, k),
        cudaStreamPerThread)

// Captures: counted, so that nothing is added to a graph being captured.
#define CAPTURE_BEGIN(name, params, args)                              \
    extern "C" cudaError_t name params {                               \
        using Fn = cudaError_t(*) params;                              \
        static Fn fn = real<Fn>(#name);                                \
        cudaError_t e = fn args;                                       \
        if (e == cudaSuccess) ++g_captures;                            \
        return e;                                                      \
    }
CAPTURE_BEGIN(cudaStreamBeginCapture, (cudaStream_t st, cudaStreamCaptureMode m), (st, m))
CAPTURE_BEGIN(cudaStreamBeginCapture_ptsz, (cudaStream_t st, cudaStreamCaptureMode m), (st, m))

#define CAPTURE_END(name)                                              \
    extern "C" cudaError_t name(cudaStream_t st, cudaGraph_t* g) {     \
        using Fn = cudaError_t (*)(cudaStream_t, cudaGraph_t*);        \
        static Fn fn = real<Fn>(#name);                                \
        cudaError_t e = fn(st, g);                                     \
        if (g_captures.load() > 0) --g_captures;                       \
        return e;                                                      \
    }
CAPTURE_END(cudaStreamEndCapture)
CAPTURE_END(cudaStreamEndCapture_ptsz)
#endif  // !__CUDA_ARCH__
