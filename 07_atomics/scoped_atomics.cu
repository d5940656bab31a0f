// scoped_atomics - cuda::atomic_ref with block, device and system scope; system-scope counters that
// the GPU and the CPU update at the same time.
//
// Manual: G 2.5.1 异步操作 (the thread scopes: thread_scope_thread / block / device / system - "all
//         or any CUDA or CPU threads in the same system"; implemented in the CUDA C++ standard
//         library as an extension of standard C++); N 6.3.1 原子操作.
// Shows:  a scope says which threads an atomic must be atomic (and ordered) with; a narrower scope
//         lets the hardware do less.
//           block   per-block sums with atomic_ref<unsigned, thread_scope_block> on shared memory
//           device  one counter and one maximum for the whole grid, thread_scope_device
//           system  a counter in managed memory that GPU threads (atomic_ref, thread_scope_system)
//                   and CPU threads (the same atomic_ref, compiled for the host) increment while the
//                   kernel runs; needs concurrentManagedAccess (the CPU may touch managed memory
//                   during a kernel). And atomicAdd_system on pinned, mapped host memory with CPU
//                   atomics on the same word; needs hostNativeAtomicSupported (the link between
//                   GPU and CPU, e.g. NVLink-C2C, performs atomics natively; over PCIe it does not,
//                   and the guide's 3.2.5.3 says atomics on mapped memory are then not atomic for
//                   the host). A part the device cannot run is skipped with the attribute's value;
//                   the program passes if everything that ran is exact.
// Build:  make scoped_atomics   (nvcc -std=c++17 -O3 -arch=native -I../common -o scoped_atomics scoped_atomics.cu)
// Run:    ./scoped_atomics [--n=2^20] [--gpu-iters=64] [--cpu-ops=2^16]
// Output: the attributes, a check line per scope (or "skipped: <reason>"), PASSED.
#include <cuda/atomic>
#include <algorithm>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>
#include "common.cuh"

constexpr int BLOCK = 256, CPU_THREADS = 2, SYS_BLOCKS = 8;

// Block scope: only threads of this block touch `s`, so block scope is enough (and the shared
// memory atomic never leaves the SM). Thread 0 then publishes the block's sum.
// The scope is in the instruction: ATOM.E.ADD.STRONG.SM here (sm_90; .CTA on sm_75), .GPU for device
// scope, .SYS for system scope. The compiler also sums a warp's values first and one lane issues
// the warp's single atomic: REDUX.SUM on sm_90; sm_75 has no REDUX and, when all 32 lanes are active
// (VOTE.ANY), sums with a tree of five SHFL.BFLY, else issues one atomic per lane.
__global__ void block_sums(const unsigned* x, int n, unsigned* sums) {
    __shared__ unsigned s;
    if (threadIdx.x == 0) s = 0;
    __syncthreads();
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i < n) cuda::atomic_ref<unsigned, cuda::thread_scope_block>(s).fetch_add(x[i], cuda::memory_order_relaxed);
    __syncthreads();
    if (threadIdx.x == 0) sums[blockIdx.x] = s;
}

// Device scope: every thread of the grid adds to one counter and offers its value to one maximum.
// In the SASS the 32-bit maximum is aggregated per warp (sm_90: REDUX.MAX, one ATOM.E.MAX; sm_75: a
// SHFL.BFLY tree), the 64-bit sum is not (no vote, no REDUX, no shuffle): one ATOM.E.ADD.64 per lane.
__global__ void device_total(const unsigned* x, int n, unsigned long long* total, unsigned* maximum) {
    int i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_device>(*total).fetch_add(x[i], cuda::memory_order_relaxed);
    cuda::atomic_ref<unsigned, cuda::thread_scope_device>(*maximum).fetch_max(x[i], cuda::memory_order_relaxed);
}

// System scope: the counter is shared with CPU threads. Every lane adds 1 to one address, so the
// compiler aggregates the warp: a vote of the active lanes (VOTEU.ANY), their count (UPOPC) and ONE
// atomic per warp and iteration adding that count (ATOM.E.ADD.64.STRONG.SYS here, REDG...SYS in the
// mapped version; sm_75: the same vote, ATOM / RED). The GPU's increments therefore reach memory as
// 1/32 as many atomics, and the CPU threads compete with those.
__global__ void system_count(unsigned long long* counter, int iters) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> c(*counter);
    for (int k = 0; k < iters; ++k) c.fetch_add(1, cuda::memory_order_relaxed);
}
__global__ void system_count_mapped(unsigned long long* counter, int iters) {
    for (int k = 0; k < iters; ++k) atomicAdd_system(counter, 1ull);
}

// CPU side of the system-scope counters: the same cuda::atomic_ref type, compiled for the host.
void cpu_count(unsigned long long* counter, long long ops) {
    cuda::atomic_ref<unsigned long long, cuda::thread_scope_system> c(*counter);
    for (long long k = 0; k < ops; ++k) c.fetch_add(1, cuda::memory_order_relaxed);
}

// Launches the GPU increments, runs the CPU threads meanwhile, reports whether the kernel was still
// running when the CPU finished (the two really overlapped) and checks the total.
template <class Launch>
void concurrent_count(const char* what, unsigned long long* counter, Launch launch, long long gpu_ops, long long cpu_ops,
                      Verdict& verdict) {
    launch();
    CHECK_LAUNCH();
    std::vector<std::thread> cpu;
    for (int t = 0; t < CPU_THREADS; ++t) cpu.emplace_back(cpu_count, counter, cpu_ops);
    for (auto& t : cpu) t.join();
    cudaError_t q = cudaStreamQuery(0);
    if (q != cudaErrorNotReady) CHECK(q);
    CHECK(cudaDeviceSynchronize());
    unsigned long long got = cuda::atomic_ref<unsigned long long, cuda::thread_scope_system>(*counter).load();
    lab_corrupt(&got, 1);  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
    unsigned long long expect = gpu_ops + CPU_THREADS * cpu_ops;
    std::printf("  %s: GPU %lld + CPU %d x %lld = %llu, counted %llu (%s)\n", what, gpu_ops, CPU_THREADS, cpu_ops, expect,
                got, q == cudaErrorNotReady ? "the kernel was still running when the CPU threads finished"
                                            : "the kernel had finished by the time the CPU threads were done: they may not have overlapped");
    verdict.check(got == expect, std::string(what) + " exact");
}

int main(int argc, char** argv) {
    Args args(argc, argv, "cuda::atomic_ref at block, device and system scope; GPU and CPU sharing one counter.");
    int n = (int)args.integer("n", 1 << 20, 1, 1 << 26, "threads of the block- and device-scope parts");
    int gpu_iters = (int)args.integer("gpu-iters", 64, 1, 1 << 16, "increments per GPU thread (system scope)");
    long long cpu_ops = args.integer("cpu-ops", 1 << 16, 1, 1LL << 26, "increments per CPU thread (system scope)");
    args.parse_or_exit();
    DeviceInfo dev = select_device(args.device());

    int managed = 0, concurrent = 0, native = 0, can_map = 0;
    managed = device_attribute(cudaDevAttrManagedMemory, dev.id);
    concurrent = device_attribute(cudaDevAttrConcurrentManagedAccess, dev.id);
    native = device_attribute(cudaDevAttrHostNativeAtomicSupported, dev.id);
    can_map = device_attribute(cudaDevAttrCanMapHostMemory, dev.id);
    std::printf("managedMemory %d, concurrentManagedAccess %d, hostNativeAtomicSupported %d, canMapHostMemory %d\n",
                managed, concurrent, native, can_map);

    Verdict verdict;
    // Block and device scope on random values (sums of up to 2^26 values < 2^20 fit 64 bits; a
    // block's sum of 256 values < 2^20 fits 32 bits).
    std::vector<unsigned> x = random_vector<unsigned>(n, 0, (1u << 20) - 1, 5);
    int blocks = (n + BLOCK - 1) / BLOCK;
    std::vector<unsigned> ref_sums(blocks, 0);
    unsigned long long ref_total = 0;
    unsigned ref_max = 0;
    for (int i = 0; i < n; ++i) {
        ref_sums[i / BLOCK] += x[i];
        ref_total += x[i];
        ref_max = std::max(ref_max, x[i]);
    }
    unsigned *d_x, *d_sums, *d_max;
    unsigned long long* d_total;
    CHECK(cudaMalloc(&d_x, n * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_sums, blocks * sizeof(unsigned)));
    CHECK(cudaMalloc(&d_max, sizeof(unsigned)));
    CHECK(cudaMalloc(&d_total, sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_x, x.data(), n * sizeof(unsigned), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d_sums, 0xff, blocks * sizeof(unsigned)));
    CHECK(cudaMemset(d_total, 0, sizeof(unsigned long long)));
    CHECK(cudaMemset(d_max, 0, sizeof(unsigned)));
    block_sums<<<blocks, BLOCK>>>(d_x, n, d_sums);
    CHECK_LAUNCH();
    device_total<<<blocks, BLOCK>>>(d_x, n, d_total, d_max);
    CHECK_LAUNCH();
    std::vector<unsigned> sums(blocks);
    unsigned long long total = 0;
    unsigned maximum = 0;
    CHECK(cudaMemcpy(sums.data(), d_sums, blocks * sizeof(unsigned), cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&total, d_total, sizeof total, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpy(&maximum, d_max, sizeof maximum, cudaMemcpyDeviceToHost));
    std::printf("block / device scope: %d threads in %d blocks\n", n, blocks);
    verdict.exact("thread_scope_block: per-block sums", ref_sums.data(), sums.data(), blocks);
    verdict.exact("thread_scope_device: grid total", &ref_total, &total, 1);
    verdict.exact("thread_scope_device: grid maximum", &ref_max, &maximum, 1);

    long long gpu_ops = (long long)SYS_BLOCKS * BLOCK * gpu_iters;
    std::printf("system scope: %d GPU blocks x %d threads x %d increments, %d CPU threads at the same time\n", SYS_BLOCKS,
                BLOCK, gpu_iters, CPU_THREADS);
    std::printf("  (the compiler aggregates each warp's increments of the one counter: the GPU's %lld increments\n"
                "   are %lld atomics, one per warp and iteration; SASS: VOTEU.ANY, UPOPC, one ATOM/REDG per warp)\n",
                gpu_ops, gpu_ops / 32);
    if (managed && concurrent) {
        unsigned long long* counter;
        CHECK(cudaMallocManaged(&counter, sizeof(unsigned long long)));
        *counter = 0;  // first touch on the CPU; the page migrates to whichever processor touches it next
        concurrent_count("managed memory, atomic_ref<system>", counter,
                         [&] { system_count<<<SYS_BLOCKS, BLOCK>>>(counter, gpu_iters); }, gpu_ops, cpu_ops, verdict);
        CHECK(cudaFree(counter));
    } else {
        std::printf("  managed memory: skipped: %s\n",
                    !managed ? "managedMemory = 0 (no managed memory)"
                             : "concurrentManagedAccess = 0: the CPU must not touch managed memory while a kernel runs");
    }
    if (native && can_map) {
        unsigned long long *host, *dev_ptr;
        CHECK(cudaHostAlloc(&host, sizeof(unsigned long long), cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer(&dev_ptr, host, 0));
        *host = 0;
        concurrent_count("mapped pinned memory, atomicAdd_system", host,
                         [&] { system_count_mapped<<<SYS_BLOCKS, BLOCK>>>(dev_ptr, gpu_iters); }, gpu_ops, cpu_ops, verdict);
        CHECK(cudaFreeHost(host));
    } else {
        std::printf("  mapped pinned memory: skipped: %s\n",
                    !can_map ? "canMapHostMemory = 0"
                             : "hostNativeAtomicSupported = 0: the GPU-CPU link (PCIe) has no native atomics, so GPU "
                               "atomics on host memory are not atomic for the CPU");
    }

    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_sums));
    CHECK(cudaFree(d_max));
    CHECK(cudaFree(d_total));
    return verdict.finish();
}
