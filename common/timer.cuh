// timer.cuh - timing on the GPU (CUDA events) and on the CPU (std::chrono).
//
// A kernel launch returns before the kernel runs, so a CPU clock around it measures the launch,
// not the work. GpuTimer records CUDA events into the stream and reads the time between them
// on the GPU's own clock. bench_ms() runs a callable a few times to warm up (first launches pay
// for module loading and cold caches), then times each of `reps` runs separately and returns
// the median, which one slow run (another process, a clock change) cannot move.
// d2d_copy_gbps() measures cudaMemcpy device-to-device: the practical ceiling for a kernel that
// streams memory, used as the baseline in the same run. Bandwidth counts bytes read + written.
// bench_turns_ms() times two or more callables in turns, for a ratio that must hold while other
// processes share the GPU (the exercises' "make it faster" targets; D2DCopy is their copy baseline).
#pragma once
#include <algorithm>
#include <type_traits>
#include <vector>
#include <cuda_runtime.h>
#include "build_mode.h"
#include "check.cuh"

class GpuTimer {
  public:
    explicit GpuTimer(cudaStream_t stream = 0);
    ~GpuTimer();
    GpuTimer(const GpuTimer&) = delete;
    GpuTimer& operator=(const GpuTimer&) = delete;
    void start();
    // Waits for the stop event and returns the elapsed milliseconds.
    float stop();

  private:
    cudaStream_t stream_;
    cudaEvent_t start_, stop_;
};

LAB_INLINE double median(std::vector<double> v);

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

// Times the callables in turns - fns[0], fns[1], ..., fns[0], fns[1], ... - for `rounds` rounds
// after `warmup` untimed ones, and returns each one's shortest time in ms. For a ratio that must
// hold while other processes share the GPU: their work delays whichever of our runs it overlaps,
// so timing the two sides in turns exposes both to the same load, and the shortest of many runs is
// the least delayed one (a median moves as soon as more than half of the runs are delayed; timing
// one side after the other would compare two different loads). before(), if given, runs before
// every round, warm-up included, outside the timed intervals (the stream is synchronized after it).
// Each fn must only enqueue work on `stream` (or on blocking streams, which the events bracket).
//   std::vector<double> ms = bench_turns_ms({[&] { mine<<<g, b>>>(...); }, [&] { copy(); }}, reps);
//
// FnRef, what it takes, refers to a callable (a lambda, a D2DCopy) without owning it, like a
// std::function that copies nothing: it spares every program the heavy <functional> header, and is
// enough because what it refers to lives through the call - lambdas written in the argument list,
// as above, or named ones. (An FnRef kept after its lambda is gone would call freed memory.)
class FnRef {
  public:
    FnRef() = default;
    template <class F, class = typename std::enable_if<!std::is_same<typename std::decay<F>::type, FnRef>::value>::type>
    FnRef(F&& f)
        : fn_(const_cast<void*>(static_cast<const void*>(&f))),
          call_([](void* fn) { (*static_cast<typename std::remove_reference<F>::type*>(fn))(); }) {}
    void operator()() const { call_(fn_); }
    explicit operator bool() const { return call_ != nullptr; }

  private:
    void* fn_ = nullptr;
    void (*call_)(void*) = nullptr;
};

LAB_INLINE std::vector<double> bench_turns_ms(const std::vector<FnRef>& fns, int rounds, FnRef before = {},
                                             int warmup = 2, cudaStream_t stream = 0);

// The copy baseline as a callable: two device buffers of `bytes` and a cudaMemcpyAsync
// device-to-device between them; gbps(ms) counts the bytes read + written.
class D2DCopy {
  public:
    explicit D2DCopy(size_t bytes);
    ~D2DCopy();
    D2DCopy(const D2DCopy&) = delete;
    D2DCopy& operator=(const D2DCopy&) = delete;
    void operator()() const;
    double gbps(double ms) const { return ms > 0 ? 2.0 * bytes_ / (ms * 1e6) : 0.0; }

  private:
    size_t bytes_;
    void *src_ = nullptr, *dst_ = nullptr;
};

// Bandwidth in GB/s (1e9 bytes per second) for `bytes` moved in `ms` milliseconds.
inline double gbps(double bytes, double ms) { return ms > 0 ? bytes / (ms * 1e6) : 0.0; }

// cudaMemcpy device-to-device of `bytes` bytes: GB/s counting bytes read + written.
LAB_INLINE double d2d_copy_gbps(size_t bytes, int reps);

// The host's clock (std::chrono::steady_clock), from construction or start() to stop_ms().
class CpuTimer {
  public:
    CpuTimer() { start(); }
    void start();
    double stop_ms() const;

  private:
    long long t0_ns_ = 0;  // steady_clock time in nanoseconds (<chrono> is in the bodies only)
};

// ---- the bodies: inline here (header-only), or compiled once into the library (build_mode.h) ----
#if LAB_COMMON_BODIES
#include <chrono>

LAB_INLINE GpuTimer::GpuTimer(cudaStream_t stream) : stream_(stream) {
    CHECK(cudaEventCreate(&start_));
    CHECK(cudaEventCreate(&stop_));
}

LAB_INLINE GpuTimer::~GpuTimer() {
    cudaEventDestroy(start_);
    cudaEventDestroy(stop_);
}

LAB_INLINE void GpuTimer::start() { CHECK(cudaEventRecord(start_, stream_)); }

LAB_INLINE float GpuTimer::stop() {
    CHECK(cudaEventRecord(stop_, stream_));
    CHECK(cudaEventSynchronize(stop_));
    float ms = 0.f;
    CHECK(cudaEventElapsedTime(&ms, start_, stop_));
    return ms;
}

LAB_INLINE double median(std::vector<double> v) {
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

LAB_INLINE std::vector<double> bench_turns_ms(const std::vector<FnRef>& fns, int rounds, FnRef before, int warmup,
                                             cudaStream_t stream) {
    std::vector<double> best(fns.size(), 1e300);
    GpuTimer t(stream);
    for (int r = 0; r < warmup + std::max(rounds, 1); ++r) {
        if (before) before();
        CHECK(cudaStreamSynchronize(stream));
        for (size_t i = 0; i < fns.size(); ++i) {
            t.start();
            fns[i]();
            double ms = t.stop();
            if (r >= warmup) best[i] = std::min(best[i], ms);
        }
        CHECK(cudaGetLastError());
    }
    return best;
}

LAB_INLINE D2DCopy::D2DCopy(size_t bytes) : bytes_(bytes) {
    CHECK(cudaMalloc(&src_, bytes));
    CHECK(cudaMalloc(&dst_, bytes));
    CHECK(cudaMemset(src_, 1, bytes));
}

LAB_INLINE D2DCopy::~D2DCopy() {
    cudaFree(src_);
    cudaFree(dst_);
}

LAB_INLINE void D2DCopy::operator()() const { CHECK(cudaMemcpyAsync(dst_, src_, bytes_, cudaMemcpyDeviceToDevice)); }

LAB_INLINE double d2d_copy_gbps(size_t bytes, int reps) {
    D2DCopy copy(bytes);
    return copy.gbps(bench_ms(copy, reps));
}

LAB_INLINE void CpuTimer::start() {
    t0_ns_ = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
                 .count();
}

LAB_INLINE double CpuTimer::stop_ms() const {
    auto now = std::chrono::steady_clock::now().time_since_epoch();
    return std::chrono::duration<double, std::milli>(now - std::chrono::nanoseconds(t0_ns_)).count();
}
#endif  // LAB_COMMON_BODIES
