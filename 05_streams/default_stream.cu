// default_stream - where the default stream serializes other streams, and where it does not.
//
// Manual: G 3.2.6.5.2 默认流, 3.2.6.5.3 显式同步, 3.2.6.5.4 隐式同步.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o default_stream default_stream.cu
// Shows:  kernel A in stream a, then some operation X, then kernel B in stream b. A and B each spin
//         for --spin-ms on one block and stamp their start and end with the GPU's global timer; the
//         program reads the two windows back and sees whether A and B ran at the same time.
//         Built as is (the default, --default-stream legacy), stream 0 is the NULL stream: a command
//         on it waits for all earlier work in blocking streams (cudaStreamCreate) and all later work
//         in them waits for it, so "A | kernel on stream 0 | B" serializes; streams created with
//         cudaStreamNonBlocking are exempt. Built with --default-stream per-thread (the Makefile's
//         default_stream_per_thread), stream 0 is the host thread's own ordinary stream and nothing
//         serializes, except an explicit cudaStreamLegacy, which is the NULL stream in both builds.
//         The guide's other implicit-synchronization triggers (pinned / device allocation, memset,
//         device-to-device copy) are measured and printed, not asserted.
// Build:  make default_stream default_stream_per_thread (the second: default_stream_per_thread.cu)
// Run:    ./default_stream [--spin-ms=20]    ./default_stream_per_thread [--spin-ms=20]
// Output: one line per case: what sits between A and B, what the guide leads us to expect for this
//         build, what was observed (concurrent / serialized) and how long A and B overlapped; PASSED.
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <string>
#include <vector>
#include "common.cuh"

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM  // defined by nvcc --default-stream per-thread
constexpr bool PER_THREAD = true;
#else
constexpr bool PER_THREAD = false;
#endif

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One thread spins until `ns` nanoseconds of global time have passed; window = [start, end).
__global__ void spin(long long ns, unsigned long long* window) {
    unsigned long long t0 = global_ns(), t = t0;
    while ((long long)(t - t0) < ns) t = global_ns();
    window[0] = t0;
    window[1] = t;
}

// The operation on stream 0 between A and B: a small kernel whose result is checked.
__global__ void scale(float* x, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = 2.0f * x[i] + 1.0f;
}

enum Expect { CONCURRENT, SERIALIZED, PRINTED };

struct Case {
    std::string name;
    bool nonblocking;            // streams a and b created with cudaStreamNonBlocking
    Expect expect;               // for this build
    std::function<void()> between;
};

int main(int argc, char** argv) {
    Args args(argc, argv, "Kernel A | operation X | kernel B: does X make A and B run one after the other?");
    int spin_ms = (int)args.integer("spin-ms", 20, 1, 1000, "how long kernels A and B each run");
    args.parse_or_exit();

    select_device(args.device());
    std::printf("build: %s\n", PER_THREAD ? "--default-stream per-thread (stream 0 = this thread's own stream)"
                                          : "--default-stream legacy (stream 0 = the NULL stream), the default");
    bool tool = cuda_tool_attached();  // timing claims are printed, not asserted, under a tool
    if (tool) std::printf("a CUDA tool is attached: concurrency is printed, not asserted\n");

    const int n = 100003;
    std::vector<float> h = random_vector<float>(n, -1.0f, 1.0f, 3), expect = h;
    float* d_x;
    unsigned long long* d_win;
    void* d_tmp = nullptr;
    CHECK(cudaMalloc(&d_x, n * sizeof(float)));
    CHECK(cudaMalloc(&d_tmp, 1 << 20));
    CHECK(cudaMalloc(&d_win, 4 * sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_x, h.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    std::vector<void*> leftovers;  // allocations made between A and B, freed at the end

    int scale_calls = 0;
    auto scale_on = [&](cudaStream_t s) {
        scale<<<(n + 255) / 256, 256, 0, s>>>(d_x, n);
        CHECK_LAUNCH();
        ++scale_calls;
    };
    Expect legacy_serial = PER_THREAD ? CONCURRENT : SERIALIZED;
    std::vector<Case> cases = {
        {"nothing", false, CONCURRENT, [] {}},
        {"kernel on stream 0", false, legacy_serial, [&] { scale_on(0); }},
        {"kernel on stream 0, non-blocking a/b", true, CONCURRENT, [&] { scale_on(0); }},
        {"kernel on cudaStreamLegacy", false, SERIALIZED, [&] { scale_on(cudaStreamLegacy); }},
        {"kernel on cudaStreamPerThread", false, PRINTED, [&] { scale_on(cudaStreamPerThread); }},
        {"cudaMemset (stream 0)", false, PRINTED, [&] { CHECK(cudaMemset(d_tmp, 1, 1 << 20)); }},
        {"cudaMemcpy device to device", false, PRINTED,
         [&] { CHECK(cudaMemcpy((char*)d_tmp + 4096, d_tmp, 4096, cudaMemcpyDeviceToDevice)); }},
        {"cudaMalloc", false, PRINTED, [&] {
             void* p;
             CHECK(cudaMalloc(&p, 1 << 20));
             leftovers.push_back(p);
         }},
        {"cudaMallocHost", false, PRINTED, [&] {
             void* p;
             CHECK(cudaMallocHost(&p, 1 << 20));
             leftovers.push_back(p);
         }},
    };

    // Warm-up: load both kernels outside the cases. With lazy module loading (the default on Linux
    // since CUDA 12.2, on Windows since 12.3) a kernel is loaded at its first launch, which can itself
    // synchronize.
    spin<<<1, 1>>>(1000, d_win);
    CHECK_LAUNCH();
    scale_on(0);
    CHECK(cudaDeviceSynchronize());

    Verdict verdict;
    long long ns = spin_ms * 1000000LL;
    std::printf("\n%-38s %-11s %-11s %s\n", "between A and B", "expected", "observed", "A/B overlap");
    for (auto& c : cases) {
        cudaStream_t a, b;
        unsigned flags = c.nonblocking ? cudaStreamNonBlocking : cudaStreamDefault;
        CHECK(cudaStreamCreateWithFlags(&a, flags));
        CHECK(cudaStreamCreateWithFlags(&b, flags));
        CHECK(cudaDeviceSynchronize());
        spin<<<1, 1, 0, a>>>(ns, d_win);
        CHECK_LAUNCH();
        c.between();
        spin<<<1, 1, 0, b>>>(ns, d_win + 2);
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        unsigned long long w[4];
        CHECK(cudaMemcpy(w, d_win, sizeof w, cudaMemcpyDeviceToHost));
        long long lo = (long long)std::max(w[0], w[2]), hi = (long long)std::min(w[1], w[3]);
        double overlap_ms = hi > lo ? (hi - lo) / 1e6 : 0.0;
        // Large margins: "concurrent" = overlapping for more than half a kernel, "serialized" = not
        // overlapping at all (beyond 1% of a kernel, for the timer's granularity).
        const char* seen = overlap_ms > 0.5 * spin_ms ? "concurrent" : overlap_ms <= 0.01 * spin_ms ? "serialized" : "partial";
        const char* want = c.expect == CONCURRENT ? "concurrent" : c.expect == SERIALIZED ? "serialized" : "(printed)";
        std::printf("%-38s %-11s %-11s %.2f ms of %d\n", c.name.c_str(), want, seen, overlap_ms, spin_ms);
        if (c.expect == SERIALIZED || (c.expect == CONCURRENT && !tool))
            if (std::string(seen) != want) verdict.check(false, c.name + ": expected " + want + ", saw " + seen);
        CHECK(cudaStreamDestroy(a));
        CHECK(cudaStreamDestroy(b));
    }
    std::printf("(expected = what G 3.2.6.5.2/3.2.6.5.4 imply for this build; (printed) = measured only)\n\n");

    // The kernels that ran on stream 0 did real work: x -> 2x + 1, scale_calls times.
    for (int k = 0; k < scale_calls; ++k)
        for (auto& v : expect) v = 2.0f * v + 1.0f;
    CHECK(cudaMemcpy(h.data(), d_x, n * sizeof(float), cudaMemcpyDeviceToHost));
    verdict.close("x after the stream-0 kernels", expect.data(), h.data(), n, 1e-6, 1e-6);

    for (void* p : leftovers) {
        cudaPointerAttributes at{};
        CHECK(cudaPointerGetAttributes(&at, p));
        if (at.type == cudaMemoryTypeHost) CHECK(cudaFreeHost(p));
        else CHECK(cudaFree(p));
    }
    CHECK(cudaFree(d_x));
    CHECK(cudaFree(d_tmp));
    CHECK(cudaFree(d_win));
    return verdict.finish();
}
