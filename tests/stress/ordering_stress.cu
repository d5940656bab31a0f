// ordering_stress.cu - a preloaded library that makes stream timing hostile (tests/stress.py).
//
// An order between two pieces of GPU work holds only if the program states it: the same stream,
// an event, a synchronization. Work that is ordered "because the first one is short" or "because
// the GPU was idle" passes on a quiet GPU and fails in a lab where eight programs share it. This
// library, preloaded into a program built with the shared CUDA runtime (make CUDART=shared), puts
// a spin kernel of random length (up to CUDA_LAB_STRESS_MAX_US microseconds, default 200) in front of
//   - the asynchronous operations, each in its own stream: kernel launches (<<<>>>, cudaLaunchKernel,
//     cudaLaunchKernelExC, cudaLaunchCooperativeKernel), cudaMemcpyAsync, cudaMemcpy2DAsync,
//     cudaMemcpy3DAsync, cudaMemcpyToSymbolAsync / FromSymbolAsync, cudaMemsetAsync,
//     cudaMemset2DAsync, cudaMemcpyPeerAsync, cudaGraphLaunch, cudaLaunchHostFunc (and their
//     per-thread-stream forms); half of them get none, the others 0 to the maximum. Not delayed:
//     cudaMemPrefetchAsync (its signature differs between CUDA 12 and 13) and stream-ordered
//     allocation;
//   - cudaMemset, cudaMemset2D, cudaMemcpy, cudaMemcpy2D and cudaMemcpyToSymbol, on the legacy
//     default stream (or the per-thread one in a --default-stream per-thread build), which may
//     return before the device has done them (each gets half the maximum to the maximum); a
//     cudaMemcpy from pageable memory to the current device returns as soon as its source is
//     copied, before its DMA (below).
// So the operation starts later than it would have, by a different amount each time, while its
// stream's order (and every order the program states) still holds: only an order that was never
// stated can break.
//
// Nothing is added while a stream capture is in progress (cudaStreamBeginCapture[ToGraph] ..
// cudaStreamEndCapture, counted here), so that captured graphs keep their nodes; nor into a stream
// of another device than the current one; nor while the program has an error pending. With
// CUDA_LAB_STRESS_VERBOSE=1 it says at exit how many operations it saw and delayed (tests/stress.py
// fails a run in which nothing was delayed). The delays come from CUDA_LAB_STRESS_SEED (default: the
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
std::atomic<long long> g_calls{0}, g_delays{0}, g_failed{0};  // operations seen, spins added, spins refused

// CUDA_LAB_STRESS_VERBOSE=1: at exit, how many operations were seen and how many got a delay.
struct Report {
    ~Report() {
        const char* v = std::getenv("CUDA_LAB_STRESS_VERBOSE");
        if (v && *v && *v != '0')
            std::fprintf(stderr, "ordering_stress: %lld operations, %lld delayed, %lld spins refused\n", g_calls.load(),
                         g_delays.load(), g_failed.load());
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
    // Nothing while a capture is in progress, nor while the program has an error pending (a failed
    // call of ours would then be indistinguishable from the program's, and clearing ours would
    // clear the program's too).
    if (t_inside || g_captures.load() > 0 || cudaPeekAtLastError() != cudaSuccess) return;
    ++t_inside;
    bool here = on_current_device(stream);
    --t_inside;
    if (!here) {
        (void)cudaGetLastError();  // only ours can be pending: there was none before
        return;
    }
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
// CUDA 13's <<<...>>> calls __cudaLaunchKernel (or _ptsz) with a cudaKernel_t (crt/device_functions.h),
// not cudaLaunchKernel; CUDA 12's calls cudaLaunchKernel.
#if CUDART_VERSION >= 13000
FORWARD(cudaError_t, __cudaLaunchKernel, (cudaKernel_t f, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st),
        (f, g, b, a, s, st), st)
FORWARD(cudaError_t, __cudaLaunchKernel_ptsz, (cudaKernel_t f, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st),
        (f, g, b, a, s, st), st == nullptr ? cudaStreamPerThread : st)
#endif
FORWARD(cudaError_t, cudaLaunchCooperativeKernel, (const void* f, dim3 g, dim3 b, void** a, size_t s, cudaStream_t st),
        (f, g, b, a, s, st), st)
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
FORWARD(cudaError_t, cudaMemcpy2DAsync_ptsz,
        (void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k, cudaStream_t st),
        (d, dp, s, sp, w, h, k, st), st == nullptr ? cudaStreamPerThread : st)
FORWARD(cudaError_t, cudaMemcpy3DAsync, (const cudaMemcpy3DParms* p, cudaStream_t st), (p, st), st)
FORWARD(cudaError_t, cudaMemcpyToSymbolAsync,
        (const void* sym, const void* s, size_t n, size_t off, cudaMemcpyKind k, cudaStream_t st),
        (sym, s, n, off, k, st), st)
FORWARD(cudaError_t, cudaMemcpyFromSymbolAsync,
        (void* d, const void* sym, size_t n, size_t off, cudaMemcpyKind k, cudaStream_t st), (d, sym, n, off, k, st), st)
FORWARD(cudaError_t, cudaMemset2DAsync, (void* p, size_t pitch, int v, size_t w, size_t h, cudaStream_t st),
        (p, pitch, v, w, h, st), st)
FORWARD(cudaError_t, cudaMemsetAsync, (void* p, int v, size_t n, cudaStream_t st), (p, v, n, st), st)
FORWARD(cudaError_t, cudaMemsetAsync_ptsz, (void* p, int v, size_t n, cudaStream_t st), (p, v, n, st),
        st == nullptr ? cudaStreamPerThread : st)
FORWARD(cudaError_t, cudaMemcpyPeerAsync, (void* d, int dd, const void* s, int sd, size_t n, cudaStream_t st),
        (d, dd, s, sd, n, st), st)
FORWARD(cudaError_t, cudaGraphLaunch, (cudaGraphExec_t g, cudaStream_t st), (g, st), st)
FORWARD(cudaError_t, cudaGraphLaunch_ptsz, (cudaGraphExec_t g, cudaStream_t st), (g, st),
        st == nullptr ? cudaStreamPerThread : st)
FORWARD(cudaError_t, cudaLaunchHostFunc, (cudaStream_t st, cudaHostFn_t fn2, void* u), (st, fn2, u), st)
FORWARD(cudaError_t, cudaLaunchHostFunc_ptsz, (cudaStream_t st, cudaHostFn_t fn2, void* u), (st, fn2, u),
        st == nullptr ? cudaStreamPerThread : st)
FORWARD(cudaError_t, cudaMemcpyPeerAsync_ptsz, (void* d, int dd, const void* s, int sd, size_t n, cudaStream_t st),
        (d, dd, s, sd, n, st), st == nullptr ? cudaStreamPerThread : st)
FORWARD_SYNC(cudaError_t, cudaMemset2D, (void* p, size_t pitch, int v, size_t w, size_t h), (p, pitch, v, w, h), nullptr)
FORWARD_SYNC(cudaError_t, cudaMemcpy2D, (void* d, size_t dp, const void* s, size_t sp, size_t w, size_t h, cudaMemcpyKind k),
             (d, dp, s, sp, w, h, k), nullptr)
FORWARD_SYNC(cudaError_t, cudaMemcpyToSymbol, (const void* sym, const void* s, size_t n, size_t off, cudaMemcpyKind k),
             (sym, s, n, off, k), nullptr)
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
    int device = -1;  // the device whose legacy stream the event is recorded in
};
std::mutex g_staging_lock;
Staging g_staging[8];
int g_staging_next = 0;

// A copy from pageable host memory to memory of the current device (called with no error pending).
bool pageable_to_device(void* d, const void* s, cudaMemcpyKind k, int* device) {
    cudaPointerAttributes ad{}, as{};
    if (cudaGetDevice(device) != cudaSuccess || cudaPointerGetAttributes(&as, s) != cudaSuccess ||
        cudaPointerGetAttributes(&ad, d) != cudaSuccess) {
        (void)cudaGetLastError();
        return false;
    }
    return (k == cudaMemcpyHostToDevice || k == cudaMemcpyDefault) && as.type == cudaMemoryTypeUnregistered &&
           ad.type == cudaMemoryTypeDevice && ad.device == *device;
}
}  // namespace

extern "C" cudaError_t cudaMemcpy(void* d, const void* s, size_t n, cudaMemcpyKind k) {
    using Fn = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind);
    using AsyncFn = cudaError_t (*)(void*, const void*, size_t, cudaMemcpyKind, cudaStream_t);
    static Fn fn = real<Fn>("cudaMemcpy");
    static AsyncFn async = real<AsyncFn>("cudaMemcpyAsync");
    int dev = -1;
    if (t_inside || g_captures.load() > 0 || n == 0 || n > (256u << 20) || cudaPeekAtLastError() != cudaSuccess ||
        !pageable_to_device(d, s, k, &dev)) {
        delay(nullptr, true);
        return fn(d, s, n, k);
    }
    ++t_inside;
    // "For transfers from pageable host memory to device memory, a stream sync is performed before
    // the copy is initiated": that part is kept.
    cudaError_t e = cudaStreamSynchronize(nullptr);
    {
        std::lock_guard<std::mutex> lock(g_staging_lock);
        Staging& st = g_staging[g_staging_next];
        g_staging_next = (g_staging_next + 1) % 8;
        if (e == cudaSuccess && st.done) e = cudaEventSynchronize(st.done);  // the slot's last copy has left it
        if (e == cudaSuccess && st.done && st.device != dev) {  // an event of another device: a new one here
            cudaEventDestroy(st.done);
            st.done = nullptr;
        }
        if (e == cudaSuccess && st.cap < n) {
            if (st.buf) cudaFreeHost(st.buf);
            st.buf = nullptr, st.cap = 0;
            e = cudaHostAlloc(&st.buf, n, cudaHostAllocPortable);
            if (e == cudaSuccess) st.cap = n;
        }
        if (e == cudaSuccess && !st.done) {
            e = cudaEventCreateWithFlags(&st.done, cudaEventDisableTiming);
            st.device = dev;
        }
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
    if (e != cudaSuccess) {  // the staging route failed before its copy was queued (out of pinned memory ...)
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
#if CUDART_VERSION >= 12030
CAPTURE_BEGIN(cudaStreamBeginCaptureToGraph,
              (cudaStream_t st, cudaGraph_t g, const cudaGraphNode_t* deps, const cudaGraphEdgeData* ed, size_t n,
               cudaStreamCaptureMode m),
              (st, g, deps, ed, n, m))
#endif

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
