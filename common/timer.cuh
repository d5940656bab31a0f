// timer.cuh - timing on the GPU (CUDA events) and on the CPU (std::chrono).
//
// A kernel launch returns before the kernel runs, so a CPU clock around it measures the launch,
// not the work. GpuTimer records CUDA events into the stream and reads the time between them
// on the GPU's own clock. bench_ms() runs a callable a few times to warm up (first launches pay
// for module loading and cold caches), then times each of `reps` runs separately and returns
// the median, which one slow run (another process, a clock change) cannot move.
// d2d_copy_gbps() measures cudaMemcpy device-to-device: the practical ceiling for a kernel that
// streams memory, used as the baseline in the same run. Bandwidth counts bytes read + written.
#pragma once
#include <algorithm>
#include <chrono>
#include <vector>
#include <cuda_runtime.h>
#include "check.cuh"

class GpuTimer {
  public:
    explicit GpuTimer(cudaStream_t stream = 0) : stream_(stream) {
        CHECK(cudaEventCreate(&start_));
        CHECK(cudaEventCreate(&stop_));
    }
    ~GpuTimer() {
        cudaEventDestroy(start_);
        cudaEventDestroy(stop_);
    }
    GpuTimer(const GpuTimer&) = delete;
    GpuTimer& operator=(const GpuTimer&) = delete;
    void start() { CHECK(cudaEventRecord(start_, stream_)); }
    // Waits for the stop event and returns the elapsed milliseconds.
    float stop() {
        CHECK(cudaEventRecord(stop_, stream_));
        CHECK(cudaEventSynchronize(stop_));
        float ms = 0.f;
        CHECK(cudaEventElapsedTime(&ms, start_, stop_));
        return ms;
    }

  private:
    cudaStream_t stream_;
    cudaEvent_t start_, stop_;
};

inline double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

// Runs fn() `warmup` times, then times `reps` runs with events; returns the median in ms.
// fn must only enqueue work on `stream` (launches, async copies).
template <class F>
double bench_ms(F&& fn, int reps, int warmup = 2, cudaStream_t stream = 0) {
    for (int i = 0; i < warmup; ++i) fn();
    CHECK(cudaGetLastError());
    CHECK(cudaStreamSynchronize(stream));
    GpuTimer t(stream);
    std::vector<double> times;
    for (int i = 0; i < std::max(reps, 1); ++i) {
        t.start();
        fn();
        times.push_back(t.stop());
    }
    CHECK(cudaGetLastError());
    return median(times);
}

// Like bench_ms, but calls setup() before every run, warm-up included, outside the timed
// interval (the stream is synchronized before the start event is recorded). For measurements
// of a first run from a given state - e.g. a kernel's first touch of freshly allocated managed
// memory - where each repetition has to re-create that state.
template <class S, class F>
double bench_ms_fresh(S&& setup, F&& fn, int reps, int warmup = 1, cudaStream_t stream = 0) {
    for (int i = 0; i < warmup; ++i) {
        setup();
        fn();
        CHECK(cudaStreamSynchronize(stream));
    }
    CHECK(cudaGetLastError());
    GpuTimer t(stream);
    std::vector<double> times;
    for (int i = 0; i < std::max(reps, 1); ++i) {
        setup();
        CHECK(cudaStreamSynchronize(stream));
        t.start();
        fn();
        times.push_back(t.stop());
    }
    CHECK(cudaGetLastError());
    return median(times);
}

// Bandwidth in GB/s (1e9 bytes per second) for `bytes` moved in `ms` milliseconds.
inline double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

// cudaMemcpy device-to-device of `bytes` bytes: GB/s counting bytes read + written.
inline double d2d_copy_gbps(size_t bytes, int reps) {
    void *a = nullptr, *b = nullptr;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMemset(a, 1, bytes));
    double ms = bench_ms([&] { CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice)); }, reps);
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
    return gbps(2.0 * bytes, ms);
}

class CpuTimer {
  public:
    void start() { t0_ = std::chrono::steady_clock::now(); }
    double stop_ms() const {
        return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
    }

  private:
    std::chrono::steady_clock::time_point t0_ = std::chrono::steady_clock::now();
};
