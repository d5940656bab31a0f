// pinned_pipeline - exercise (faster): a chunked H2D -> kernel -> D2H pipeline in 4 streams that
//                   should overlap its copies with its kernels, and does not.
//
// Manual: G 3.2.6.3 数据传输和内核执行的重叠, 3.2.6.5.5 重叠行为; N 6.2.1 CUDA流.
// The program cuts n uint32 into --chunks chunks and issues each chunk's upload, kernel (--iters
// LCG steps per element, calibrated to take as long as one copy) and download to stream c % 4,
// depth-first, as ./overlap does. In the same run it measures, on its own buffers, the lower bound
// of any such pipeline: max(both copy directions at once, the kernel), each over the whole array.
// It prints `streamed / lower bound: X` (1.0 would be perfect overlap). It checks that host_alloc
// gives host memory, then, in the checked run and in every round (new input each), every element of
// h_out and of p.d_out against the CPU, and that lcg_steps computed each of them from p.d_in, once.
// Your task: bring `streamed / lower bound` to 1.6 or below (./overlap reaches about 1.05 on an
// H100) by changing only the part between the markers; the kernel, the chunking and the measurement stay.
// Build and check: from the chapter folder, `make exercises` builds workspace/pinned_pipeline from
// your copy, `make check` runs it and says solved / not yet (with a hint after a miss).
// Run:    cd workspace && ./pinned_pipeline [--n=2^25] [--chunks=32] [--reps=5]
// Output: asyncEngineCount; H2D, D2H, both at once, kernel and the bound in ms; the streamed time;
//         the line `streamed / lower bound: X`; the checks; PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include "common.cuh"

constexpr uint32_t LCG_A = 1664525u, LCG_C = 1013904223u;

// How many elements lcg_steps has computed from the pipeline's p.d_in into its p.d_out: thread 0 of
// each block adds its block's share when the block's elements [i, i + len) of `in` lie inside
// [pipe_in, pipe_in + pipe_n) and `out` is at the same offset from pipe_out (main sets the three to
// p.d_in, p.d_out and n). The check sees that the kernel did the work, not the CPU, and on the
// pipeline's buffers: the bound's launches, on buffers of the program's own, do not count.
__device__ unsigned long long lcg_elements;
__device__ const uint32_t* pipe_in;
__device__ const uint32_t* pipe_out;
__device__ size_t pipe_n;

// k steps of x -> A x + C (mod 2^32) are one affine map: the CPU checks with one multiply-add.
__global__ void lcg_steps(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, size_t n, int iters) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    if (threadIdx.x == 0) {
        size_t len = n - i < blockDim.x ? n - i : blockDim.x;
        uintptr_t at = (uintptr_t)(in + i), lo = (uintptr_t)pipe_in;
        if (at >= lo && at + len * sizeof(uint32_t) <= lo + pipe_n * sizeof(uint32_t) &&
            (uintptr_t)(out + i) - (uintptr_t)pipe_out == at - lo)
            atomicAdd(&lcg_elements, (unsigned long long)len);
    }
    uint32_t x = in[i];
#pragma unroll 1
    for (int k = 0; k < iters; ++k) x = x * LCG_A + LCG_C;
    out[i] = x;
}

struct Pipeline {
    uint32_t *h_in, *h_out, *d_in, *d_out;
    size_t n, chunk;
    int chunks, iters;
    std::vector<cudaStream_t> streams;
};

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin (the host buffers of the pipeline and how its work is issued) ----
uint32_t* host_alloc(size_t n) { return new uint32_t[n]; }
void host_free(uint32_t* p) { delete[] p; }

void issue_pipeline(Pipeline p) {  // a copy: main's Pipeline stays as it is
    for (int c = 0; c < p.chunks; ++c) {
        cudaStream_t s = p.streams[c % p.streams.size()];
        size_t off = (size_t)c * p.chunk, len = std::min(p.chunk, p.n - off);
        CHECK(cudaMemcpyAsync(p.d_in + off, p.h_in + off, len * 4, cudaMemcpyHostToDevice, s));
        lcg_steps<<<(unsigned)((len + 255) / 256), 256, 0, s>>>(p.d_in + off, p.d_out + off, len, p.iters);
        CHECK_LAUNCH();
        CHECK(cudaMemcpyAsync(p.h_out + off, p.d_out + off, len * 4, cudaMemcpyDeviceToHost, s));
    }
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::host_alloc; using yours::host_free; using yours::issue_pipeline;
REGION_SIGNATURE(host_alloc, uint32_t* (*)(size_t));
REGION_SIGNATURE(host_free, void (*)(uint32_t*));
REGION_SIGNATURE(issue_pipeline, void (*)(Pipeline));

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(lcg_steps); REGION_GUARD(random_vector<uint32_t>); REGION_GUARD(bench_ms<FnRef>);
REGION_GUARD(bench_turns_ms); REGION_GUARD(lab_corrupt<uint32_t>); REGION_GUARD(lab_corrupt<unsigned long long>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: make a 4-stream H2D/kernel/D2H pipeline reach the overlap bound.");
    long long n = args.integer("n", 1LL << 25, 1, 1LL << 28, "uint32 elements");
    int chunks = (int)args.integer("chunks", 32, 4, 256, "chunks the array is cut into");
    int reps = (int)args.integer("reps", 5, 1, 100, "timed rounds (each part once per round; the shortest reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    if (dev.prop.asyncEngineCount < 1) skip("asyncEngineCount 0: this GPU cannot overlap copies with kernels");
    size_t bytes = (size_t)n * 4;
    std::printf("asyncEngineCount %d; %lld uint32 (%.1f MB) in %d chunks, 4 streams\n", dev.prop.asyncEngineCount,
                n, bytes / 1e6, chunks);

    Pipeline p;
    p.n = (size_t)n;
    p.chunk = (p.n + chunks - 1) / chunks;
    p.chunks = (int)((p.n + p.chunk - 1) / p.chunk);  // fewer when n is small: no empty chunk
    p.h_in = host_alloc(p.n);
    p.h_out = host_alloc(p.n);
    // The pipeline's host buffers must be host memory: pinned (cudaMallocHost, cudaHostRegister) or
    // pageable (new, malloc) - what the exercise is about. Managed or device memory is refused here,
    // with a message that says so, before anything uses them (device memory is not the host's to
    // fill). What keeps the work in lcg_steps on the pipeline's device buffers is the count and the
    // check of p.d_out below: a kernel can read and write pinned memory in place too.
    auto memory = [](const void* q) -> std::string {
        cudaPointerAttributes a{};
        CHECK(cudaPointerGetAttributes(&a, q));
        switch (a.type) {
            case cudaMemoryTypeHost: return "pinned";
            case cudaMemoryTypeUnregistered: return q ? "pageable" : "null";
            case cudaMemoryTypeDevice: return "device";
            case cudaMemoryTypeManaged: return "managed";
        }
        return "unknown";
    };
    std::string in_memory = memory(p.h_in), out_memory = memory(p.h_out);
    auto host = [](const std::string& m) { return m == "pinned" || m == "pageable"; };
    Verdict verdict;
    if (!verdict.check(host(in_memory) && host(out_memory), "host_alloc returns host memory, pinned or pageable (h_in: " +
                                                                in_memory + ", h_out: " + out_memory + ")")) {
        host_free(p.h_in);
        host_free(p.h_out);
        return verdict.finish();  // nothing to fill, run or time
    }
    CHECK(cudaMalloc(&p.d_in, bytes));
    CHECK(cudaMalloc(&p.d_out, bytes));
    // The range whose elements lcg_steps counts: the pipeline's device buffers (main's p: the region's
    // issue_pipeline gets a copy).
    const uint32_t *range_in = p.d_in, *range_out = p.d_out;
    CHECK(cudaMemcpyToSymbol(pipe_in, &range_in, sizeof range_in));
    CHECK(cudaMemcpyToSymbol(pipe_out, &range_out, sizeof range_out));
    CHECK(cudaMemcpyToSymbol(pipe_n, &p.n, sizeof p.n));
    std::vector<uint32_t> input = random_vector<uint32_t>(p.n, 0u, 0xffffffffu, 13);
    std::memcpy(p.h_in, input.data(), bytes);
    p.streams.resize(4);
    for (auto& s : p.streams) CHECK(cudaStreamCreate(&s));  // blocking: bench_ms's events bracket them

    // The bound, measured on pinned buffers of the program's own (not the pipeline's), and on device
    // buffers of its own too: only the pipeline writes p.d_in and p.d_out.
    uint32_t *pin_in, *pin_out, *bound_in, *bound_out;
    CHECK(cudaMallocHost(&pin_in, bytes));
    CHECK(cudaMallocHost(&pin_out, bytes));
    CHECK(cudaMalloc(&bound_in, bytes));
    CHECK(cudaMalloc(&bound_out, bytes));
    CHECK(cudaMemset(bound_in, 0, bytes));
    CHECK(cudaMemset(bound_out, 0, bytes));
    auto h2d = [&](cudaStream_t s) { CHECK(cudaMemcpyAsync(bound_in, pin_in, bytes, cudaMemcpyHostToDevice, s)); };
    auto d2h = [&](cudaStream_t s) { CHECK(cudaMemcpyAsync(pin_out, bound_out, bytes, cudaMemcpyDeviceToHost, s)); };
    auto kernel = [&](int iters) { lcg_steps<<<(unsigned)((n + 255) / 256), 256>>>(bound_in, bound_out, n, iters); };
    // Calibrate: the kernel takes as long as the slower single copy (time is linear in iters).
    double target = std::max(bench_ms([&] { h2d(0); }, reps), bench_ms([&] { d2h(0); }, reps));
    p.iters = 64;
    for (int round = 0; round < 3; ++round)
        p.iters = (int)std::clamp(p.iters * target / bench_ms([&] { kernel(p.iters); }, reps), 1.0, (double)(1 << 16));

    // Checked run: outputs poisoned on both sides first. Checked: h_out, p.d_out (copied back by the
    // program) and the count of elements that lcg_steps computed from p.d_in into p.d_out.
    std::vector<uint32_t> expected(p.n);
    uint32_t fa = 1, fc = 0;
    for (int k = 0; k < p.iters; ++k) {
        fa *= LCG_A;
        fc = fc * LCG_A + LCG_C;
    }
    for (size_t i = 0; i < p.n; ++i) expected[i] = fa * input[i] + fc;
    std::memset(p.h_out, 0xff, bytes);
    CHECK(cudaMemset(p.d_out, 0xff, bytes));
    unsigned long long zero = 0, computed = 0;
    CHECK(cudaMemcpyToSymbol(lcg_elements, &zero, sizeof zero));
    CHECK(cudaDeviceSynchronize());  // the resets above are done before work on any stream begins
    issue_pipeline(p);
    CHECK(cudaDeviceSynchronize());
    std::vector<uint32_t> got_h(p.n), got_d(p.n);  // the program's copies of h_out and p.d_out
    CHECK(cudaMemcpy(got_d.data(), p.d_out, bytes, cudaMemcpyDeviceToHost));
    CHECK(cudaMemcpyFromSymbol(&computed, lcg_elements, sizeof computed));
    lab_corrupt(&computed, 1);  // CUDA_LAB_CORRUPT=1: the count's check too must fail (common/corrupt.h)
    verdict.exact("pipeline output h_out vs CPU", expected.data(), p.h_out, p.n);
    verdict.exact("device output p.d_out vs CPU", expected.data(), got_d.data(), p.n);
    verdict.check(computed == p.n, "lcg_steps computed p.d_out from p.d_in, each element once (" +
                                       std::to_string(computed) + " of " + std::to_string(p.n) + ")");

    // Timed in turns, `reps` rounds: the parts of the bound and the pipeline, the shortest time of each
    // (bench_turns_ms, which keeps the ratio when other processes share the GPU). Every round, warm-ups
    // included, gets new input (the seeded input xor a key drawn at run time for that round, so that
    // no earlier call can have staged it) and poisoned outputs on both
    // sides, and after it (untimed) the program copies h_out and p.d_out and checks both, with the
    // count of elements that lcg_steps computed from p.d_in into p.d_out in that round: n (every
    // element by the kernel, once; the bound's kernel, on the program's buffers, does not count).
    int round = 0;
    uint32_t key = 0;
    std::random_device entropy;
    long long wrong_rounds = 0;
    auto check_round = [&] {
        CHECK(cudaDeviceSynchronize());
        CHECK(cudaMemcpyFromSymbol(&computed, lcg_elements, sizeof computed));
        std::memcpy(got_h.data(), p.h_out, bytes);
        CHECK(cudaMemcpy(got_d.data(), p.d_out, bytes, cudaMemcpyDeviceToHost));
        lab_corrupt(got_h.data(), p.n);  // CUDA_LAB_CORRUPT (common/corrupt.h): this check must fail too
        lab_corrupt(got_d.data(), p.n);
        bool ok = computed == (unsigned long long)p.n;
        for (size_t i = 0; i < p.n && ok; ++i) {
            uint32_t want = fa * (input[i] ^ key) + fc;
            ok = got_h[i] == want && got_d[i] == want;
        }
        wrong_rounds += !ok;
    };
    auto next_round = [&] {
        if (round > 0) check_round();
        key = entropy();
        for (size_t i = 0; i < p.n; ++i) p.h_in[i] = input[i] ^ key;
        std::memset(p.h_out, 0xff, bytes);
        CHECK(cudaMemset(p.d_out, 0xff, bytes));
        CHECK(cudaMemset(p.d_in, 0, bytes));
        CHECK(cudaMemcpyToSymbol(lcg_elements, &zero, sizeof zero));
        ++round;
    };
    // The pipeline is timed up to a device synchronization: bench_turns_ms's events are recorded in the
    // legacy default stream, which waits for the blocking streams of p.streams but not for a
    // non-blocking stream; after cudaDeviceSynchronize the stop event follows all of the pipeline's
    // work, whatever streams it used.
    std::vector<double> t = bench_turns_ms({[&] { h2d(0); }, [&] { d2h(0); },
                                            [&] { h2d(p.streams[0]); d2h(p.streams[1]); }, [&] { kernel(p.iters); },
                                            [&] { issue_pipeline(p); CHECK(cudaDeviceSynchronize()); }},
                                           reps, next_round);
    double h2d_ms = t[0], d2h_ms = t[1], both_ms = t[2], k_ms = t[3], streamed_ms = t[4];
    check_round();
    verdict.check(wrong_rounds == 0, "h_out, p.d_out vs CPU and lcg_steps' count, all " + std::to_string(round) +
                                         " rounds, warm-ups and timed (new input each): " +
                                         std::to_string(wrong_rounds) + " wrong");
    double bound = std::max({h2d_ms, d2h_ms, both_ms, k_ms});
    std::printf("alone (pinned): H2D %.3f ms, D2H %.3f ms, both at once %.3f ms; kernel (%d iters) %.3f ms\n",
                h2d_ms, d2h_ms, both_ms, p.iters, k_ms);
    std::printf("lower bound max(both copies, kernel): %.3f ms; pinned serial sum H2D + kernel + D2H: %.3f ms\n", bound,
                h2d_ms + k_ms + d2h_ms);
    std::printf("streamed (4 streams x %d chunks): %.3f ms; pinned serial sum / streamed = %.2fx\n", p.chunks,
                streamed_ms, (h2d_ms + k_ms + d2h_ms) / streamed_ms);
    std::printf("streamed / lower bound: %.2f (target <= 1.6 of the bound measured above on this GPU; set on an H100)\n", streamed_ms / bound);

    for (auto& s : p.streams) CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(pin_in));
    CHECK(cudaFreeHost(pin_out));
    CHECK(cudaFree(bound_in));
    CHECK(cudaFree(bound_out));
    CHECK(cudaFree(p.d_in));
    CHECK(cudaFree(p.d_out));
    host_free(p.h_in);
    host_free(p.h_out);
    return verdict.finish();
}
