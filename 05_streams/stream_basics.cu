// stream_basics - the guide's two streams, each H2D -> kernel -> D2H on its half of a pinned buffer.
//
// Manual: G 3.2.6.5 流, 3.2.6.5.1 创建与销毁.
// Shows:  cudaStreamCreate, cudaMallocHost, and per stream one cudaMemcpyAsync to the device, one
//         launch of MyKernel<<<100, 512, 0, stream[i]>>> and one cudaMemcpyAsync back into the same
//         part of hostPtr. The streams are destroyed right after the work is issued, before it has
//         finished: the guide says cudaStreamDestroy then returns at once and the stream's resources
//         are released when its work is done, so the results must still arrive (checked against the
//         CPU after cudaDeviceSynchronize). The guide's code mixes bytes and elements in `size`; here
//         `n` counts floats and the copies move n * sizeof(float) bytes.
// Build:  nvcc -std=c++17 -O3 -arch=native -I../common -o stream_basics stream_basics.cu
// Run:    ./stream_basics [--n=2^22] [--streams=2]
// Output: the device's asyncEngineCount / concurrentKernels, the time of the two-stream pipeline vs
//         the same work in one stream, the CPU check, then PASSED.
#include <cstring>
#include <vector>
#include "common.cuh"

// MyKernel: out = 2 * in + 1 for every element of its part. 100 blocks of 512 threads, as in the
// guide, cover any size with a grid-stride loop. Inputs are multiples of 1/1024 in [-1, 1), so
// 2x + 1 is exact in float and the check can be exact.
__global__ void MyKernel(float* out, const float* in, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        out[i] = 2.0f * in[i] + 1.0f;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "The guide's streams example: per stream H2D, MyKernel, D2H on a pinned buffer.");
    long long n = args.integer("n", 1 << 22, 1, 1LL << 28, "floats per stream");
    int nstreams = (int)args.integer("streams", 2, 1, 32, "number of streams (the guide uses 2)");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    std::printf("asyncEngineCount %d, concurrentKernels %d; %d streams x %lld floats\n", dev.prop.asyncEngineCount,
                dev.prop.concurrentKernels, nstreams, n);
    size_t total = (size_t)n * nstreams, part_bytes = (size_t)n * sizeof(float);

    // The guide: page-locked hostPtr holding all parts; hostPtr must be pinned for the copies to
    // overlap with anything (G 3.2.6.5.1, last sentence).
    float *hostPtr, *inputDevPtr, *outputDevPtr;
    CHECK(cudaMallocHost(&hostPtr, total * sizeof(float)));
    CHECK(cudaMalloc(&inputDevPtr, total * sizeof(float)));
    CHECK(cudaMalloc(&outputDevPtr, total * sizeof(float)));
    std::vector<int> k = random_vector<int>(total, -1024, 1023, 7);
    std::vector<float> input(total), expected(total);
    for (size_t i = 0; i < total; ++i) {
        input[i] = k[i] / 1024.0f;
        expected[i] = 2.0f * input[i] + 1.0f;
    }

    auto issue = [&](const std::vector<cudaStream_t>& stream) {
        for (int i = 0; i < nstreams; ++i) {
            cudaStream_t s = stream[i % stream.size()];
            size_t off = (size_t)i * n;
            CHECK(cudaMemcpyAsync(inputDevPtr + off, hostPtr + off, part_bytes, cudaMemcpyHostToDevice, s));
            MyKernel<<<100, 512, 0, s>>>(outputDevPtr + off, inputDevPtr + off, n);
            CHECK_LAUNCH();
            CHECK(cudaMemcpyAsync(hostPtr + off, outputDevPtr + off, part_bytes, cudaMemcpyDeviceToHost, s));
        }
    };

    // Checked run: streams created, work issued, streams destroyed while the work may still run.
    Verdict verdict;
    std::memcpy(hostPtr, input.data(), total * sizeof(float));
    // NaN in both device buffers: an element never computed, or computed before (or without) its
    // upload, fails. The legacy stream's memsets are ordered before the blocking streams' work.
    CHECK(cudaMemset(outputDevPtr, 0xff, total * sizeof(float)));
    CHECK(cudaMemset(inputDevPtr, 0xff, total * sizeof(float)));
    std::vector<cudaStream_t> stream(nstreams);
    for (auto& s : stream) CHECK(cudaStreamCreate(&s));
    issue(stream);
    for (auto& s : stream) CHECK(cudaStreamDestroy(s));  // returns at once; resources freed when done
    CHECK(cudaDeviceSynchronize());
    verdict.exact("hostPtr = 2 * input + 1 (all streams)", expected.data(), hostPtr, total);

    // Timing: the same pipeline in nstreams streams vs all of it in one stream. The streams are
    // blocking (cudaStreamCreate), so bench_ms's events on the legacy stream bracket their work.
    for (auto& s : stream) CHECK(cudaStreamCreate(&s));
    cudaStream_t one;
    CHECK(cudaStreamCreate(&one));
    auto reset = [&] { std::memcpy(hostPtr, input.data(), total * sizeof(float)); };
    reset();
    double ms_multi = bench_ms([&] { issue(stream); }, reps);
    reset();
    double ms_one = bench_ms([&] { issue({one}); }, reps);
    std::printf("%d streams: %.3f ms; the same in 1 stream: %.3f ms; 1 stream / %d streams = %.2fx\n", nstreams,
                ms_multi, ms_one, nstreams, ms_one / ms_multi);
    std::printf("(overlap needs copies and kernels of similar length and more chunks: see ./overlap)\n");

    // The timing runs applied the kernel repeatedly to hostPtr; one more checked run in 1 stream.
    reset();
    CHECK(cudaMemset(outputDevPtr, 0xff, total * sizeof(float)));
    CHECK(cudaMemset(inputDevPtr, 0xff, total * sizeof(float)));
    issue({one});
    CHECK(cudaStreamSynchronize(one));
    verdict.exact("hostPtr = 2 * input + 1 (one stream)", expected.data(), hostPtr, total);

    for (auto& s : stream) CHECK(cudaStreamDestroy(s));
    CHECK(cudaStreamDestroy(one));
    CHECK(cudaFree(inputDevPtr));
    CHECK(cudaFree(outputDevPtr));
    CHECK(cudaFreeHost(hostPtr));
    return verdict.finish();
}
