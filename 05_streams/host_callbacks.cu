// host_callbacks - cudaLaunchHostFunc: a CPU function placed in a stream after each chunk's work.
//
// Manual: G 3.2.6.5.6 Host函数(回调).
// Shows:  per stream, --rounds times: H2D of a chunk, a kernel, D2H of the result, then
//         cudaLaunchHostFunc(stream, MyCallback, &record). The runtime calls MyCallback on one of
//         its own threads once everything before it in that stream has finished, so the callback
//         can read the chunk's result in host memory: it compares it with the CPU (no CUDA call in
//         the callback - the guide forbids it, it could deadlock) and stamps a global order number.
//         The guide's second rule, "commands after a host function do not start before it
//         completes", is checked too: the callback writes a token into pinned host memory and the
//         next round's kernel in the same stream reads it; it must see the new value.
// Build:  nvcc -std=c++17 -O3 -arch=native -I../common -o host_callbacks host_callbacks.cu
// Run:    ./host_callbacks [--n=2^20] [--streams=4] [--rounds=3]
// Output: per stream the order in which its callbacks ran, then the checks (data seen by every
//         callback, stream order, tokens seen by the next kernel), then PASSED.
#include <atomic>
#include <cstdint>
#include <string>
#include <vector>
#include "common.cuh"

constexpr uint32_t LCG_A = 1664525u, LCG_C = 1013904223u;
constexpr int ITERS = 64;

// out[i] = 64 LCG steps of in[i]; block 0 thread 0 also records the token the previous callback
// of this stream left in host memory (read through the pinned pointer: UVA maps it for the GPU).
__global__ void MyKernel(uint32_t* out, const uint32_t* in, size_t n, const volatile int* token, int* seen) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i == 0) *seen = *token;
    if (i >= n) return;
    uint32_t x = in[i];
    for (int k = 0; k < ITERS; ++k) x = x * LCG_A + LCG_C;
    out[i] = x;
}

// What one callback needs: plain host data only.
struct Record {
    int stream = 0, round = 0;
    const uint32_t* result = nullptr;    // this chunk's D2H destination (pinned)
    const uint32_t* expected = nullptr;  // the CPU reference for the chunk
    size_t n = 0;
    volatile int* token = nullptr;        // this stream's token, read by the next round's kernel
    std::atomic<int>* clock = nullptr;    // global order of callbacks
    int order = -1;                       // filled in by the callback
    size_t mismatches = ~(size_t)0;       // filled in by the callback
};

// cudaHostFn_t: void(void*). (The guide's listing uses the older cudaStreamAddCallback signature
// (stream, status, data), which cudaLaunchHostFunc does not accept.) No CUDA calls in here.
void CUDART_CB MyCallback(void* data) {
    Record* r = static_cast<Record*>(data);
    size_t bad = 0;
    for (size_t i = 0; i < r->n; ++i) bad += r->result[i] != r->expected[i];
    r->mismatches = bad;
    r->order = r->clock->fetch_add(1);
    *r->token = r->round + 1;  // the next kernel in this stream must see this
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Host functions in streams: they run in stream order and see finished data.");
    long long n = args.integer("n", 1 << 20, 1, 1 << 26, "elements per chunk");
    int nstreams = (int)args.integer("streams", 4, 1, 32, "number of streams");
    int rounds = (int)args.integer("rounds", 3, 1, 64, "chunks (and callbacks) per stream");
    args.parse_or_exit();

    select_device(args.device());
    int chunks = nstreams * rounds;
    size_t total = (size_t)n * chunks;
    std::printf("%d streams x %d rounds, %lld elements per chunk\n", nstreams, rounds, n);

    uint32_t *h_in, *h_out, *d_in, *d_out;
    int *h_token, *d_seen;
    CHECK(cudaMallocHost(&h_in, total * sizeof(uint32_t)));
    CHECK(cudaMallocHost(&h_out, total * sizeof(uint32_t)));
    CHECK(cudaMallocHost(&h_token, nstreams * sizeof(int)));
    CHECK(cudaMalloc(&d_in, total * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_out, total * sizeof(uint32_t)));
    CHECK(cudaMalloc(&d_seen, chunks * sizeof(int)));
    CHECK(cudaMemset(d_seen, 0xff, chunks * sizeof(int)));
    std::vector<uint32_t> in = random_vector<uint32_t>(total, 0u, 0xffffffffu, 13), expected(total);
    uint32_t a = 1, c = 0;
    for (int k = 0; k < ITERS; ++k) {
        a *= LCG_A;
        c = c * LCG_A + LCG_C;
    }
    for (size_t i = 0; i < total; ++i) {
        h_in[i] = in[i];
        expected[i] = in[i] * a + c;
        h_out[i] = ~expected[i];  // a callback that ran too early would see this
    }
    for (int s = 0; s < nstreams; ++s) h_token[s] = 0;

    std::atomic<int> clock{0};
    std::vector<Record> rec(chunks);
    std::vector<cudaStream_t> stream(nstreams);
    for (auto& s : stream) CHECK(cudaStreamCreate(&s));
    for (int r = 0; r < rounds; ++r)
        for (int s = 0; s < nstreams; ++s) {
            int ch = r * nstreams + s;
            size_t off = (size_t)ch * n;
            Record& R = rec[ch];
            R.stream = s;
            R.round = r;
            R.result = h_out + off;
            R.expected = expected.data() + off;
            R.n = n;
            R.token = h_token + s;
            R.clock = &clock;
            CHECK(cudaMemcpyAsync(d_in + off, h_in + off, n * sizeof(uint32_t), cudaMemcpyHostToDevice, stream[s]));
            MyKernel<<<(unsigned)((n + 255) / 256), 256, 0, stream[s]>>>(d_out + off, d_in + off, n, h_token + s,
                                                                         d_seen + ch);
            CHECK_LAUNCH();
            CHECK(cudaMemcpyAsync(h_out + off, d_out + off, n * sizeof(uint32_t), cudaMemcpyDeviceToHost, stream[s]));
            CHECK(cudaLaunchHostFunc(stream[s], MyCallback, &R));
        }
    CHECK(cudaDeviceSynchronize());  // also waits for the host functions

    std::vector<int> seen(chunks);
    CHECK(cudaMemcpy(seen.data(), d_seen, chunks * sizeof(int), cudaMemcpyDeviceToHost));
    Verdict verdict;
    size_t bad_data = 0;
    int out_of_order = 0, bad_tokens = 0, not_run = 0;
    for (int s = 0; s < nstreams; ++s) {
        if (s < 4) std::printf("stream %d: callbacks ran as number", s);
        for (int r = 0; r < rounds; ++r) {
            const Record& R = rec[r * nstreams + s];
            if (s < 4 && r < 12) std::printf(" %d", R.order);
            if (R.order < 0) ++not_run;
            else bad_data += R.mismatches;
            if (r > 0 && R.order <= rec[(r - 1) * nstreams + s].order) ++out_of_order;
            if (seen[r * nstreams + s] != r) ++bad_tokens;  // round r's kernel after round r-1's callback
        }
        if (s < 4) std::printf("\n");
    }
    verdict.check(not_run == 0 && clock.load() == chunks, "every callback ran once (" + std::to_string(chunks) + ")");
    verdict.check(bad_data == 0, "each callback saw its chunk finished");
    verdict.check(out_of_order == 0, "callbacks of a stream ran in its order");
    verdict.check(bad_tokens == 0, "next kernel saw the callback's token");
    verdict.exact("all results vs CPU", expected.data(), h_out, total);

    for (auto& s : stream) CHECK(cudaStreamDestroy(s));
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    CHECK(cudaFreeHost(h_token));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFree(d_seen));
    return verdict.finish();
}
