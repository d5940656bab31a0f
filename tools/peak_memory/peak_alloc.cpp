// peak_alloc.cpp - a preloaded library that records a program's peak device memory (tools/peak_memory.py).
//
// Preloaded into a program built with the shared CUDA runtime (make CUDART=shared, as for the
// ordering stress: a static runtime hides its functions), it wraps the runtime's allocation calls
//   cudaMalloc, cudaMallocPitch, cudaMalloc3D, cudaMallocArray, cudaMalloc3DArray,
//   cudaMallocMipmappedArray, cudaMallocAsync, cudaMallocFromPoolAsync (device memory) and
//   cudaMallocManaged (managed memory, counted apart)
// and their frees (cudaFree, cudaFreeAsync, cudaFreeArray, cudaFreeMipmappedArray; cudaDeviceReset
// frees everything), and keeps the live bytes and their maximum. A linear allocation counts the bytes
// asked for (cudaMallocPitch and cudaMalloc3D: pitch x rows), an array its elements' bytes (width x
// height x depth or layers x element size; a mipmapped array each level's).
// It also records the largest cudaLimitStackSize and cudaLimitMallocHeapSize a program sets
// (cudaDeviceSetLimit) and this GPU's resident threads: the driver reserves that stack for every
// thread that can be resident, and the heap whole.
// What it does not see: the context (code, the default stack of every resident thread, printf's buffer),
// __device__ and __managed__ variables (allocated when the module loads), memory that a library
// allocates through its own copy of the runtime or the driver API (cuBLAS's workspace), and what a
// memory pool keeps reserved after cudaFreeAsync.
//
// For those, a thread samples NVML (libnvidia-ml.so.1, loaded if present) every 10 ms: the memory
// NVML charges to this process (nvmlDeviceGetComputeRunningProcesses: context and libraries
// included; absent where the process's pid is not the one NVML sees, as in some containers) and the
// memory in use on device 0 (nvmlDeviceGetMemoryInfo: every process on the GPU).
//
// Each process (a child forked before it touches CUDA gets its own) writes
// $CUDA_LAB_PEAK_DIR/peak.<pid> as key=value lines, rewritten when a figure changes and at exit,
// so that a run killed by a timeout still leaves its peak so far:
//   pid ppid device_peak managed_peak combined_peak allocs nvml_process_peak nvml_device_used_first
//   nvml_device_used_max done
// (bytes; nvml_* = -1 when NVML gave nothing; _first is sampled when the library loads, before the
// program's context; done=1 once the process exited normally). Build:
//   nvcc -std=c++17 -shared -Xcompiler -fPIC -cudart shared -o libpeak_alloc.so peak_alloc.cpp -ldl -lpthread
// (common.mk's target peak-lib writes .stress/libpeak_alloc.so).
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <dlfcn.h>
#include <pthread.h>
#include <unistd.h>
#include <cuda_runtime.h>

namespace {

template <class F>
F real(const char* name) {
    void* p = dlsym(RTLD_NEXT, name);
    if (!p) {
        std::fprintf(stderr, "peak_alloc: %s not found in the CUDA runtime\n", name);
        std::abort();
    }
    return reinterpret_cast<F>(p);
}

struct Block {
    size_t bytes;
    bool managed;
};

// All state behind one mutex (allocation calls are rare next to the work between them).
std::mutex g_mu;
std::unordered_map<const void*, Block>* g_live = nullptr;  // never destroyed: frees may come after exit
long long g_device = 0, g_managed = 0, g_device_peak = 0, g_managed_peak = 0, g_combined_peak = 0, g_allocs = 0;
long long g_nvml_process_peak = -1, g_nvml_device_max = -1, g_nvml_device_first = -1;
// cudaDeviceSetLimit: the driver reserves the per-thread stack for every thread that can be resident
// (SMs x max threads per SM) and the device malloc heap whole; the largest values set, and this GPU's
// resident threads, so that the tool can scale the stack to a smaller card.
long long g_stack_limit = 0, g_heap_limit = 0, g_resident_threads = 0;
bool g_dirty = true;

void write_report(bool done) {
    const char* dir = std::getenv("CUDA_LAB_PEAK_DIR");
    if (!dir || !*dir) return;
    char path[4096], tmp[4200];
    std::snprintf(path, sizeof path, "%s/peak.%d", dir, static_cast<int>(getpid()));
    std::snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE* f = std::fopen(tmp, "w");
    if (!f) return;
    std::fprintf(f,
                 "pid=%d\nppid=%d\ndevice_peak=%lld\nmanaged_peak=%lld\ncombined_peak=%lld\nallocs=%lld\n"
                 "nvml_process_peak=%lld\nnvml_device_used_first=%lld\nnvml_device_used_max=%lld\n"
                 "stack_limit=%lld\nheap_limit=%lld\nresident_threads=%lld\ndone=%d\n",
                 static_cast<int>(getpid()), static_cast<int>(getppid()), g_device_peak, g_managed_peak,
                 g_combined_peak, g_allocs, g_nvml_process_peak, g_nvml_device_first, g_nvml_device_max,
                 g_stack_limit, g_heap_limit, g_resident_threads, done ? 1 : 0);
    std::fclose(f);
    std::rename(tmp, path);  // a reader never sees half a file
}

void added(const void* p, size_t bytes, bool managed) {
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_live) g_live = new std::unordered_map<const void*, Block>;
    auto old = g_live->find(p);  // an address we missed the free of (none known): counted once
    if (old != g_live->end()) (old->second.managed ? g_managed : g_device) -= static_cast<long long>(old->second.bytes);
    (*g_live)[p] = {bytes, managed};
    (managed ? g_managed : g_device) += static_cast<long long>(bytes);
    ++g_allocs;
    g_device_peak = std::max(g_device_peak, g_device);
    g_managed_peak = std::max(g_managed_peak, g_managed);
    if (g_device + g_managed > g_combined_peak) {
        g_combined_peak = g_device + g_managed;
        write_report(false);  // now: a child that ends with _exit() may never reach the sampler's next write
    }
    g_dirty = true;
}

void removed(const void* p) {
    if (!p) return;
    std::lock_guard<std::mutex> lock(g_mu);
    if (!g_live) return;
    auto it = g_live->find(p);
    if (it == g_live->end()) return;
    (it->second.managed ? g_managed : g_device) -= static_cast<long long>(it->second.bytes);
    g_live->erase(it);
}

void removed_all() {
    std::lock_guard<std::mutex> lock(g_mu);
    if (g_live) g_live->clear();
    g_device = g_managed = 0;
}

// ---- NVML, declared here (the toolkit ships no nvml.h; these are the driver's stable entry points) ----
struct NvmlMemory {
    unsigned long long total, free, used;
};
struct NvmlProcess {  // nvmlProcessInfo_t as the _v3 query fills it
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId, computeInstanceId;
};
using NvmlInit = int (*)();
using NvmlHandle = int (*)(unsigned int, void**);
using NvmlMemInfo = int (*)(void*, NvmlMemory*);
using NvmlProcs = int (*)(void*, unsigned int*, NvmlProcess*);

struct Sampler {
    std::thread thread;
    std::mutex mu;
    std::condition_variable cv;
    bool stop = false, exited = false;
    void* dev = nullptr;
    NvmlMemInfo mem_info = nullptr;
    NvmlProcs procs = nullptr;

    void open_nvml() {
        void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
        if (!lib) return;
        auto init = reinterpret_cast<NvmlInit>(dlsym(lib, "nvmlInit_v2"));
        auto handle = reinterpret_cast<NvmlHandle>(dlsym(lib, "nvmlDeviceGetHandleByIndex_v2"));
        mem_info = reinterpret_cast<NvmlMemInfo>(dlsym(lib, "nvmlDeviceGetMemoryInfo"));
        procs = reinterpret_cast<NvmlProcs>(dlsym(lib, "nvmlDeviceGetComputeRunningProcesses_v3"));
        if (!init || !handle || init() != 0 || handle(0, &dev) != 0) dev = nullptr;
    }

    void sample() {
        if (!dev) return;
        long long process = -1, used = -1;
        NvmlMemory m{};
        if (mem_info && mem_info(dev, &m) == 0) used = static_cast<long long>(m.used);
        if (procs) {
            NvmlProcess list[256];
            unsigned int count = 256;
            if (procs(dev, &count, list) == 0)
                for (unsigned int i = 0; i < count && i < 256; ++i)
                    if (list[i].pid == static_cast<unsigned int>(getpid()) && list[i].usedGpuMemory != ~0ull)
                        process = static_cast<long long>(list[i].usedGpuMemory);
        }
        std::lock_guard<std::mutex> lock(g_mu);
        if (process > g_nvml_process_peak) g_nvml_process_peak = process, g_dirty = true;
        if (used > g_nvml_device_max) g_nvml_device_max = used, g_dirty = true;
        if (g_nvml_device_first < 0 && used >= 0) g_nvml_device_first = used;
    }

    void loop(bool opened) {
        if (!opened) open_nvml();
        std::unique_lock<std::mutex> lock(mu);
        while (!stop) {
            lock.unlock();
            sample();
            {
                std::lock_guard<std::mutex> g(g_mu);
                if (g_dirty) write_report(false), g_dirty = false;
            }
            lock.lock();
            cv.wait_for(lock, std::chrono::milliseconds(10), [this] { return stop; });
        }
        exited = true;
        cv.notify_all();
    }

    // sync: NVML opened and sampled once before returning (in the constructor, before main has
    // created a CUDA context: the first sample is the GPU's use before this process); a forked
    // child opens it in the thread instead (not inside the fork handler).
    void start(bool sync) {
        stop = false;
        if (sync) open_nvml(), sample();
        thread = std::thread([this, sync] { loop(sync); });
    }

    // Joins the thread, unless it does not come back within a second (an NVML call stuck, in a
    // forked child, on a lock its parent held): then it is left to end with the process.
    void finish() {
        std::unique_lock<std::mutex> lock(mu);
        stop = true;
        cv.notify_all();
        bool ok = cv.wait_for(lock, std::chrono::seconds(1), [this] { return exited; });
        lock.unlock();
        if (thread.joinable()) ok ? thread.join() : thread.detach();
    }
};

Sampler* g_sampler = nullptr;

// fork(): the child has no sampler thread and its own pid (the programs fork before they touch
// CUDA, so the child starts with nothing allocated); hold g_mu across the fork so that the child
// never inherits it locked.
void before_fork() { g_mu.lock(); }
void after_fork_parent() { g_mu.unlock(); }
void after_fork_child() {
    g_mu.unlock();
    if (g_live) g_live->clear();
    g_device = g_managed = g_device_peak = g_managed_peak = g_combined_peak = g_allocs = 0;
    g_nvml_process_peak = g_nvml_device_max = g_nvml_device_first = -1;
    g_dirty = true;
    g_sampler = new Sampler;  // the parent's object: its thread does not exist here (leaked on purpose)
    g_sampler->start(false);
}

struct Lifetime {
    Lifetime() {
        pthread_atfork(before_fork, after_fork_parent, after_fork_child);
        g_sampler = new Sampler;
        g_sampler->start(true);
    }
    ~Lifetime() {
        if (g_sampler) g_sampler->finish();
        std::lock_guard<std::mutex> lock(g_mu);
        write_report(true);
    }
} g_lifetime;

// The bytes of an array's elements. The driver lays arrays out in its own tiled order and pads them;
// what that adds is not seen (cudaArrayGetMemoryRequirements answers only for arrays created with
// cudaArrayDeferredMapping).
size_t array_bytes(const cudaChannelFormatDesc* d, cudaExtent e) {
    size_t elem = d ? static_cast<size_t>(d->x + d->y + d->z + d->w) / 8 : 4;
    return std::max<size_t>(e.width, 1) * std::max<size_t>(e.height, 1) * std::max<size_t>(e.depth, 1) * elem;
}

size_t mipmapped_bytes(const cudaChannelFormatDesc* d, cudaExtent e, unsigned levels) {
    size_t elem = d ? static_cast<size_t>(d->x + d->y + d->z + d->w) / 8 : 4, total = 0;
    for (unsigned l = 0; l < std::max(levels, 1u); ++l)
        total += std::max<size_t>(e.width >> l, 1) * std::max<size_t>(e.height >> l, 1) *
                 std::max<size_t>(e.depth >> l, 1) * elem;
    return total;
}

}  // namespace

#define REAL(name, ...)                                  \
    using Fn = cudaError_t (*)(__VA_ARGS__);             \
    static Fn fn = real<Fn>(#name)

extern "C" {

cudaError_t cudaDeviceSetLimit(cudaLimit limit, size_t value) {
    REAL(cudaDeviceSetLimit, cudaLimit, size_t);
    cudaError_t e = fn(limit, value);
    if (e == cudaSuccess && (limit == cudaLimitStackSize || limit == cudaLimitMallocHeapSize)) {
        // the program's own runtime, through dlsym as every call here: a direct call would link this
        // library to libcudart and load it into processes that never use CUDA
        using GetLimit = cudaError_t (*)(size_t*, cudaLimit);
        using GetDevice = cudaError_t (*)(int*);
        using GetAttr = cudaError_t (*)(int*, cudaDeviceAttr, int);
        static GetLimit get_limit = real<GetLimit>("cudaDeviceGetLimit");
        static GetDevice get_device = real<GetDevice>("cudaGetDevice");
        static GetAttr get_attr = real<GetAttr>("cudaDeviceGetAttribute");
        size_t set = 0;
        int dev = 0, sms = 0, threads = 0;
        bool ok = get_limit(&set, limit) == cudaSuccess && get_device(&dev) == cudaSuccess &&
                  get_attr(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
                  get_attr(&threads, cudaDevAttrMaxThreadsPerMultiProcessor, dev) == cudaSuccess;
        std::lock_guard<std::mutex> lock(g_mu);
        if (ok) {
            long long& v = limit == cudaLimitStackSize ? g_stack_limit : g_heap_limit;
            v = std::max(v, static_cast<long long>(set));
            g_resident_threads = static_cast<long long>(sms) * threads;
            write_report(false);
        }
    }
    return e;
}

cudaError_t cudaMalloc(void** p, size_t n) {
    REAL(cudaMalloc, void**, size_t);
    cudaError_t e = fn(p, n);
    if (e == cudaSuccess && p) added(*p, n, false);
    return e;
}

cudaError_t cudaMallocManaged(void** p, size_t n, unsigned int flags) {
    REAL(cudaMallocManaged, void**, size_t, unsigned int);
    cudaError_t e = fn(p, n, flags);
    if (e == cudaSuccess && p) added(*p, n, true);
    return e;
}

cudaError_t cudaMallocPitch(void** p, size_t* pitch, size_t w, size_t h) {
    REAL(cudaMallocPitch, void**, size_t*, size_t, size_t);
    cudaError_t e = fn(p, pitch, w, h);
    if (e == cudaSuccess && p && pitch) added(*p, *pitch * h, false);
    return e;
}

cudaError_t cudaMalloc3D(cudaPitchedPtr* p, cudaExtent ext) {
    REAL(cudaMalloc3D, cudaPitchedPtr*, cudaExtent);
    cudaError_t e = fn(p, ext);
    if (e == cudaSuccess && p)
        added(p->ptr, p->pitch * std::max<size_t>(ext.height, 1) * std::max<size_t>(ext.depth, 1), false);
    return e;
}

cudaError_t cudaMallocArray(cudaArray_t* a, const cudaChannelFormatDesc* d, size_t w, size_t h, unsigned int flags) {
    REAL(cudaMallocArray, cudaArray_t*, const cudaChannelFormatDesc*, size_t, size_t, unsigned int);
    cudaError_t e = fn(a, d, w, h, flags);
    if (e == cudaSuccess && a) added(*a, array_bytes(d, make_cudaExtent(w, h, 0)), false);
    return e;
}

cudaError_t cudaMalloc3DArray(cudaArray_t* a, const cudaChannelFormatDesc* d, cudaExtent ext, unsigned int flags) {
    REAL(cudaMalloc3DArray, cudaArray_t*, const cudaChannelFormatDesc*, cudaExtent, unsigned int);
    cudaError_t e = fn(a, d, ext, flags);
    if (e == cudaSuccess && a) added(*a, array_bytes(d, ext), false);
    return e;
}

cudaError_t cudaMallocMipmappedArray(cudaMipmappedArray_t* a, const cudaChannelFormatDesc* d, cudaExtent ext,
                                     unsigned int levels, unsigned int flags) {
    REAL(cudaMallocMipmappedArray, cudaMipmappedArray_t*, const cudaChannelFormatDesc*, cudaExtent, unsigned int,
         unsigned int);
    cudaError_t e = fn(a, d, ext, levels, flags);
    if (e == cudaSuccess && a) added(*a, mipmapped_bytes(d, ext, levels), false);
    return e;
}

cudaError_t cudaMallocAsync(void** p, size_t n, cudaStream_t s) {
    REAL(cudaMallocAsync, void**, size_t, cudaStream_t);
    cudaError_t e = fn(p, n, s);
    if (e == cudaSuccess && p) added(*p, n, false);
    return e;
}

cudaError_t cudaMallocAsync_ptsz(void** p, size_t n, cudaStream_t s) {
    REAL(cudaMallocAsync_ptsz, void**, size_t, cudaStream_t);
    cudaError_t e = fn(p, n, s);
    if (e == cudaSuccess && p) added(*p, n, false);
    return e;
}

cudaError_t cudaMallocFromPoolAsync(void** p, size_t n, cudaMemPool_t pool, cudaStream_t s) {
    REAL(cudaMallocFromPoolAsync, void**, size_t, cudaMemPool_t, cudaStream_t);
    cudaError_t e = fn(p, n, pool, s);
    if (e == cudaSuccess && p) added(*p, n, false);
    return e;
}

cudaError_t cudaMallocFromPoolAsync_ptsz(void** p, size_t n, cudaMemPool_t pool, cudaStream_t s) {
    REAL(cudaMallocFromPoolAsync_ptsz, void**, size_t, cudaMemPool_t, cudaStream_t);
    cudaError_t e = fn(p, n, pool, s);
    if (e == cudaSuccess && p) added(*p, n, false);
    return e;
}

cudaError_t cudaFree(void* p) {
    REAL(cudaFree, void*);
    cudaError_t e = fn(p);
    if (e == cudaSuccess) removed(p);
    return e;
}

cudaError_t cudaFreeAsync(void* p, cudaStream_t s) {
    REAL(cudaFreeAsync, void*, cudaStream_t);
    cudaError_t e = fn(p, s);
    if (e == cudaSuccess) removed(p);
    return e;
}

cudaError_t cudaFreeAsync_ptsz(void* p, cudaStream_t s) {
    REAL(cudaFreeAsync_ptsz, void*, cudaStream_t);
    cudaError_t e = fn(p, s);
    if (e == cudaSuccess) removed(p);
    return e;
}

cudaError_t cudaFreeArray(cudaArray_t a) {
    REAL(cudaFreeArray, cudaArray_t);
    cudaError_t e = fn(a);
    if (e == cudaSuccess) removed(a);
    return e;
}

cudaError_t cudaFreeMipmappedArray(cudaMipmappedArray_t a) {
    REAL(cudaFreeMipmappedArray, cudaMipmappedArray_t);
    cudaError_t e = fn(a);
    if (e == cudaSuccess) removed(a);
    return e;
}

cudaError_t cudaDeviceReset() {
    REAL(cudaDeviceReset, void);
    cudaError_t e = fn();
    if (e == cudaSuccess) removed_all();  // every allocation of the process (one device here)
    return e;
}

}  // extern "C"
