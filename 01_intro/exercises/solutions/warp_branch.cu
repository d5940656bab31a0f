// warp_branch - exercise (faster): even elements take path A, odd elements path B.
//
// Manual: G 4.1 SIMT 架构; G 5.4.2 控制流指令.
// Your task: make the kernel `work` (between the markers) at least 1.3x as fast as
//         `work_reference`, which the program times in the same run. The result must not change:
//         element e still takes path A if e is even and path B if it is odd, and every element
//         is written once. Change only `work`: the launch gives it one thread per element,
//         rounded up to whole blocks of 256 threads, and the same arguments.
// Build and check, from 01_intro: make exercises (builds workspace/warp_branch.cu), then
//         make check (says `solved` or `not yet` with a hint). By hand:
//           cd workspace && ./warp_branch --n=262143
// Compile: nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o warp_branch warp_branch.cu
// Output: the checks of both kernels (and of yours in every timed round, new input each), their
//         times, `speedup vs reference: X.XXx`, then PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <cstdint>
#include <random>
#include <vector>
#include "common.cuh"

// The two paths are loops whose k steps cannot be taken in fewer: a plain linear congruential step
// (affine mod 2^32) or a plain xorshift (linear over GF(2)) can be jumped ahead k steps in about
// log2(k) products, which would make a kernel faster without touching the divergence the exercise is
// about. So path A follows each multiply-add with an xor-shift, and path B adds a constant after each
// xorshift: mixing + and ^ makes either step neither (review of 5826316). The chapter's
// warp_divergence.cu has the plain steps.
// Path A: iterations of a multiply-add and an xor-shift.
__host__ __device__ inline uint32_t path_a(uint32_t v, int iters) {
    uint32_t h = v;
    int k = iters + (int)(v & 63);
    for (int j = 0; j < k; ++j) {
        h = h * 1664525u + 1013904223u;
        h ^= h >> 15;
    }
    return h;
}
// Path B: iterations of xorshift32 (three shifts and three xors) and an added constant.
__host__ __device__ inline uint32_t path_b(uint32_t v, int iters) {
    uint32_t h = v | 1u;
    int k = iters + (int)((v >> 6) & 63);
    for (int j = 0; j < k; ++j) {
        h ^= h << 13;
        h ^= h >> 17;
        h ^= h << 5;
        h += 0x9e3779b9u;
    }
    return h;
}

// CPU reference: element e takes path A if e is even, B if odd.
void work_cpu(const uint32_t* in, uint32_t* out, long long n, int iters) {
    for (long long e = 0; e < n; ++e) out[e] = (e % 2 == 0) ? path_a(in[e], iters) : path_b(in[e], iters);
}

// The baseline (do not change): thread t handles element t.
__global__ void work_reference(const uint32_t* in, uint32_t* out, long long n, int iters) {
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (t >= n) return;
    if (t % 2 == 0) out[t] = path_a(in[t], iters);
    else out[t] = path_b(in[t], iters);
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the using line names.
// ---- your change: begin ----
// YOURS: make this faster (same result, same launch).
// The branch now depends on the warp index only, so all 32 lanes of a warp take the same path:
// warps 2p and 2p+1 share the 64 elements 64p .. 64p+63, the even warp the even elements, the
// odd warp the odd ones. The grid is a whole number of 256-thread blocks, hence of warp pairs,
// so every element below n still gets exactly one thread.
__global__ void work(const uint32_t* in, uint32_t* out, long long n, int iters) {
    long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    long long warp = t / warpSize;
    int lane = (int)(t % warpSize);
    long long e = (warp / 2) * 2 * warpSize + 2 * lane + (warp & 1);
    if (e >= n) return;
    if ((warp & 1) == 0) out[e] = path_a(in[e], iters);
    else out[e] = path_b(in[e], iters);
}
// ---- your change: end ----
}  // namespace yours: the program calls only these of your region, and with these types
using yours::work;
REGION_SIGNATURE(work, void (*)(const uint32_t*, uint32_t*, long long, int));

// For the timed rounds: input that the host never sees (a hash of the element's index and the
// round's key, written on the GPU). Each round's key is drawn at run time (std::random_device),
// independently: with keys that follow from one another (fixed 1000, 1001, ..., or key0 + r * c,
// which one round's input gives away: the hash is invertible) a kernel could compute the later
// rounds' answers in an untimed launch and write them when it recognised a round (issue 35).
__host__ __device__ inline uint32_t hash_u32(uint32_t x) {  // lowbias32 (C. Wellons' hash-prospector)
    x ^= x >> 16;
    x *= 0x7feb352du;
    x ^= x >> 15;
    x *= 0x846ca68bu;
    x ^= x >> 16;
    return x;
}
__global__ void fill_round(uint32_t* in, long long n, uint32_t seed) {
    long long e = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (e < n) in[e] = hash_u32((uint32_t)e * 0x9e3779b9u ^ hash_u32(seed + (uint32_t)(e >> 32)));
}

namespace yours {  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD_RUNTIME();
REGION_GUARD(work_cpu); REGION_GUARD(work_reference); REGION_GUARD(fill_round);
REGION_GUARD(hash_u32); REGION_GUARD(random_vector<uint32_t>); REGION_GUARD(bench_turns_ms);
REGION_GUARD(lab_corrupt<uint32_t>);
}  // namespace yours

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: make the even/odd kernel faster than the reference.");
    long long n = args.integer("n", 262143, 1, 1LL << 22, "number of elements (the CPU check's time grows with n * iters)");
    int iters = (int)args.integer("iters", 512, 1, 1 << 12, "loop iterations per element (plus 0..63 from the data)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed rounds (each kernel once per round; the shortest reported)");
    args.parse_or_exit();

    select_device(args.device());
    const int block = 256;
    std::vector<uint32_t> in = random_vector<uint32_t>(n, 0u, 0xffffffffu, 1), ref(n), out(n);
    work_cpu(in.data(), ref.data(), n, iters);

    // The reference and your kernel each have their own input and output buffers.
    size_t bytes = n * sizeof(uint32_t);
    uint32_t *d_in, *d_ref_in, *d_out, *d_ref_out;
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_ref_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMalloc(&d_ref_out, bytes));
    CHECK(cudaMemcpy(d_in, in.data(), bytes, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_ref_in, in.data(), bytes, cudaMemcpyHostToDevice));

    long long grid = (n + block - 1) / block;
    auto reference = [&] { work_reference<<<grid, block>>>(d_ref_in, d_ref_out, n, iters); };
    auto yours = [&] { work<<<grid, block>>>(d_in, d_out, n, iters); };

    // Each kernel is checked against the CPU (after a poisoning memset, so a skipped element cannot
    // pass), then both are timed in turns, `reps` rounds after two warm-ups: the shortest time of
    // each (bench_turns_ms, which keeps the ratio when other processes share the GPU). Every round,
    // warm-ups included, gets new input written on the GPU and a poisoned output, and after it
    // your output is compared on the host with the round's answer.
    Verdict verdict;
    auto check = [&](auto launch, uint32_t* d_result, const char* name) {
        CHECK(cudaMemset(d_result, 0xff, bytes));
        launch();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(out.data(), d_result, bytes, cudaMemcpyDeviceToHost));
        verdict.exact(name, ref.data(), out.data(), n);
    };
    // Yours runs before the reference here: no buffer holds the answer to its input while it runs
    // (a kernel could otherwise copy it from the reference's output).
    check(yours, d_out, "work (yours) vs CPU");
    check(reference, d_ref_out, "work_reference vs CPU");
    // A round's answer: the reference kernel's output for the round's input, computed before your
    // kernel runs and copied to the host (ref), then erased on the device (d_ref_out = 0), so that
    // no device buffer holds it while yours runs and nothing yours writes can change it. (The timed
    // run of the reference, after yours, writes it again into d_ref_out.)
    int round = 0;
    long long wrong = 0;
    std::random_device entropy;
    auto compare_round = [&] {
        CHECK(cudaMemcpy(out.data(), d_out, bytes, cudaMemcpyDeviceToHost));
        lab_corrupt(out.data(), (size_t)n);  // CUDA_LAB_CORRUPT=1: this check too must fail (common/corrupt.h)
        for (long long e = 0; e < n; ++e) wrong += out[e] != ref[e];
    };
    auto next_round = [&] {
        if (round > 0) compare_round();
        fill_round<<<grid, block>>>(d_in, n, entropy());
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(d_ref_in, d_in, bytes, cudaMemcpyDeviceToDevice));
        reference();
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(ref.data(), d_ref_out, bytes, cudaMemcpyDeviceToHost));
        CHECK(cudaMemset(d_out, 0xff, bytes));
        CHECK(cudaMemset(d_ref_out, 0, bytes));
        ++round;
    };
    std::vector<double> ms = bench_turns_ms({yours, reference}, reps, next_round);
    compare_round();
    verdict.check(wrong == 0, "work (yours) vs work_reference in all " + std::to_string(round) +
                                  " rounds, warm-ups and timed (new input each): " + std::to_string(wrong) + " elements differ");
    double your_ms = ms[0], ref_ms = ms[1];
    std::printf("n = %lld, %d..%d iterations per element\n", n, iters, iters + 63);
    std::printf("work_reference %8.3f ms\nwork (yours)   %8.3f ms\n", ref_ms, your_ms);
    std::printf("speedup vs reference: %.2fx (target: 1.3x, both kernels timed on this GPU; set on an H100)\n", ref_ms / your_ms);

    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_ref_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_ref_out));
    return verdict.finish();
}
