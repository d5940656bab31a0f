// concurrent_kernels - N small kernels in N streams run at the same time; in one stream, one by one.
//
// Manual: G 3.2.6.2 并行执行内核 (concurrentKernels; the maximum number of resident grids per device,
//         128 on compute capability 9.0, in the guide's table 15).
// Shows:  each kernel is one block of 256 threads doing a fixed chain of multiply-adds, so it keeps
//         one SM busy for about --ms milliseconds and leaves the others idle. In one stream the N
//         kernels run one after another: N x --ms. Each in its own stream, they run side by side on
//         N SMs: close to 1 x --ms, i.e. 1/N of the serialized time. Each kernel also stamps its
//         start and end with the GPU's global timer, from which the program counts how many ran at
//         the same time. Every kernel's output is checked against the CPU in both runs. The program
//         raises CUDA_DEVICE_MAX_CONNECTIONS to 32 (unless set): with the default 8 hardware queues,
//         streams 8 apart share a queue and their kernels serialize.
// Build:  nvcc -std=c++17 -O3 -arch=native -I../common -o concurrent_kernels concurrent_kernels.cu
// Run:    ./concurrent_kernels [--kernels=16] [--ms=1] [--n=1000] [--reps=10]
// Output: concurrentKernels, the calibrated work, serialized and concurrent time, concurrent / (serial
//         / N) (ideal 1.0; target <= 1.5, set on an H100; a ratio of this GPU's times), the most
//         kernels seen running at once, PASSED.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>
#include "common.cuh"

constexpr uint32_t LCG_A = 1664525u, LCG_C = 1013904223u;

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// One block: out[i] = iters LCG steps of in[i] (k steps compose to x -> A_k x + C_k, which the CPU
// evaluates directly). window[0..1] = global timer at the block's start and end (ns).
__global__ void small_kernel(const uint32_t* in, uint32_t* out, int n, int iters, unsigned long long* window) {
    unsigned long long t0 = global_ns();
    for (int i = threadIdx.x; i < n; i += blockDim.x) {
        uint32_t x = in[i];
#pragma unroll 1
        for (int k = 0; k < iters; ++k) x = x * LCG_A + LCG_C;
        out[i] = x;
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        window[0] = t0;
        window[1] = global_ns();
    }
}

// The largest number of [start, end) windows that contain one instant.
int max_overlap(const std::vector<unsigned long long>& w, int k) {
    int best = 0;
    for (int i = 0; i < k; ++i) {
        int c = 0;
        for (int j = 0; j < k; ++j)
            if (w[2 * j] <= w[2 * i] && w[2 * i] < w[2 * j + 1]) ++c;
        best = std::max(best, c);
    }
    return best;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Runs N one-block kernels in one stream and in N streams; concurrent vs serialized time.");
    int nk = (int)args.integer("kernels", 16, 1, 128, "number of kernels (and streams)");
    double target_ms = args.real("ms", 1.0, 0.01, 100.0, "run time of one kernel (calibrated)");
    int n = (int)args.integer("n", 1000, 1, 1 << 20, "elements per kernel (one block of 256 threads)");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    // Streams reach the GPU through a fixed number of hardware work queues ("connections", default
    // 8). Streams that share a queue are serialized as if they were one stream, so 16 kernels in
    // 16 streams would run in two rounds. The variable must be set before the CUDA context exists;
    // a value already in the environment wins.
    setenv("CUDA_DEVICE_MAX_CONNECTIONS", "32", 0);
    DeviceInfo dev = select_device(args.device());
    std::printf("concurrentKernels %d, %d SMs; %d kernels of 1 block x 256 threads, %d elements each\n",
                dev.prop.concurrentKernels, dev.real.multiProcessorCount, nk, n);
    std::printf("CUDA_DEVICE_MAX_CONNECTIONS=%s (hardware queues; more streams than this share queues and serialize)\n",
                std::getenv("CUDA_DEVICE_MAX_CONNECTIONS"));

    size_t total = (size_t)nk * n;
    std::vector<uint32_t> h_in = random_vector<uint32_t>(total, 0u, 0xffffffffu, 11), h_out(total);
    uint32_t *d_in, *d_out;
    unsigned long long* d_win;
    CHECK(cudaMalloc(&d_in, total * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_out, total * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_win, 2 * nk * sizeof(unsigned long long)));
    CHECK(cudaMemcpy(d_in, h_in.data(), total * sizeof(uint32_t), cudaMemcpyHostToDevice));

    // Blocking streams: the events bench_ms records on the legacy default stream wait for them.
    std::vector<cudaStream_t> stream(nk);
    for (auto& s : stream) CHECK(cudaStreamCreate(&s));
    int iters = 1;
    auto launch_all = [&](bool concurrent) {
        for (int k = 0; k < nk; ++k) {
            small_kernel<<<1, 256, 0, concurrent ? stream[k] : stream[0]>>>(d_in + (size_t)k * n, d_out + (size_t)k * n,
                                                                             n, iters, d_win + 2 * k);
            CHECK_LAUNCH();
        }
    };

    // Calibrate: time is proportional to iters (one dependent chain per thread).
    iters = 4096;
    double t = bench_ms([&] { small_kernel<<<1, 256>>>(d_in, d_out, n, iters, d_win); }, 3);
    iters = (int)std::min<double>(std::max<double>(iters * target_ms / std::max(t, 1e-3), 1.0), 1 << 30);
    double one_ms = bench_ms([&] { small_kernel<<<1, 256>>>(d_in, d_out, n, iters, d_win); }, 3);
    std::printf("one kernel: --iters=%d, %.3f ms\n", iters, one_ms);

    std::vector<uint32_t> expected(total);
    {
        uint32_t a = 1, c = 0;
        for (int k = 0; k < iters; ++k) {
            a *= LCG_A;
            c = c * LCG_A + LCG_C;
        }
        for (size_t i = 0; i < total; ++i) expected[i] = h_in[i] * a + c;
    }

    Verdict verdict;
    std::vector<unsigned long long> win(2 * nk);
    int seen[2] = {0, 0};
    for (int concurrent = 0; concurrent < 2; ++concurrent) {
        CHECK(cudaMemset(d_out, 0xff, total * sizeof(uint32_t)));
        CHECK(cudaDeviceSynchronize());
        launch_all(concurrent);
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpy(h_out.data(), d_out, total * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(win.data(), d_win, win.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
        verdict.exact(concurrent ? "outputs, N streams" : "outputs, 1 stream", expected.data(), h_out.data(), total);
        seen[concurrent] = max_overlap(win, nk);
    }

    double serial = bench_ms([&] { launch_all(false); }, reps);
    double conc = bench_ms([&] { launch_all(true); }, reps);
    std::printf("\n1 stream  : %8.3f ms  (%d kernels one after another; most running at once: %d)\n", serial, nk, seen[0]);
    std::printf("%2d streams: %8.3f ms  (most running at once: %d)\n", nk, conc, seen[1]);
    std::printf("serialized / concurrent = %.2fx (ideal %d)\n", serial / conc, nk);
    std::printf("concurrent / (serialized / %d) = %.2f (ideal 1.0; target <= 1.5, set on an H100; a ratio of this "
                "GPU's times)\n", nk, conc / (serial / nk));

    for (auto& s : stream) CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_win));
    return verdict.finish();
}
