// aos_layout - exercise (faster): the book's Coefficients kernel; the device layout is yours.
//
// Manual: M "合并与未合并的全局内存访问" (coalesced vs uncoalesced global memory access: the
//         Coefficients example, AOS vs SOA); G 5.3.2 设备内存访问.
// Your task: make the kernel move its useful bytes at least 0.75x as fast as cudaMemcpy
//         device-to-device moves bytes (`ratio vs D2D`, measured in the same run). Change only
//         the part between the markers: how the pixels are laid out on the device, how they get there
//         (upload), how finalVal comes back (download), release, and the kernel. Keep the
//         formula, and keep finalVal at -1 until the kernel writes it (a pixel the kernel skips
//         must not pass the check).
// Build and check, from 02_memory: make exercises (builds workspace/aos_layout.cu), then
//         make check (says `solved` or `not yet` with a hint). By hand:
//           cd workspace && ./aos_layout --n=8388607
// Compile: nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o aos_layout aos_layout.cu
// Output: the checks (finalVal -1 after every upload, the formula's after every timed round, new
//         input each), the kernel's time and GB/s, cudaMemcpy D2D's GB/s, `ratio vs D2D: X.XX`, PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <vector>
#include "common.cuh"

// The pixels on the host: one vector per field, filled with seeded random values.
struct Host {
    long long n;
    std::vector<int> r, b, g, hue, saturation, maxVal, minVal;
};

// CPU reference: the book's formula.
int final_value(int r, int g, int b, int hue, int saturation, int maxVal, int minVal) {
    int grayscale = (r + g + b) / maxVal;
    int hue_sat = hue * saturation / minVal;
    return grayscale * hue_sat;
}

// ---- your change: begin (the device layout, upload, download, release and the kernel) ----
// Struct of arrays: one array per field. Thread i reads r[i], g[i], ...: each load of a warp is
// 32 consecutive ints, 128 bytes = 4 sectors, all of them used (the struct layout drew 32
// sectors per load, one per thread, and dragged unread fields through L1 and L2).
struct Device {
    int *r, *b, *g, *hue, *saturation, *maxVal, *minVal, *finalVal;
};

Device upload(const Host& h) {
    Device d;
    int** fields[] = {&d.r, &d.b, &d.g, &d.hue, &d.saturation, &d.maxVal, &d.minVal, &d.finalVal};
    const std::vector<int>* sources[] = {&h.r, &h.b, &h.g, &h.hue, &h.saturation, &h.maxVal, &h.minVal};
    for (int f = 0; f < 8; ++f) CHECK(cudaMalloc(fields[f], h.n * sizeof(int)));
    for (int f = 0; f < 7; ++f)
        CHECK(cudaMemcpy(*fields[f], sources[f]->data(), h.n * sizeof(int), cudaMemcpyHostToDevice));
    CHECK(cudaMemset(d.finalVal, 0xff, h.n * sizeof(int)));  // -1 in every pixel
    return d;
}
void download(std::vector<int>& finalVal, const Device& d) {
    CHECK(cudaMemcpy(finalVal.data(), d.finalVal, finalVal.size() * sizeof(int), cudaMemcpyDeviceToHost));
}
void release(Device& d) {
    for (int* p : {d.r, d.b, d.g, d.hue, d.saturation, d.maxVal, d.minVal, d.finalVal}) CHECK(cudaFree(p));
}

__global__ void complicatedCalculation(Device d, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int grayscale = (d.r[i] + d.g[i] + d.b[i]) / d.maxVal[i];
    int hue_sat = d.hue[i] * d.saturation[i] / d.minVal[i];
    d.finalVal[i] = grayscale * hue_sat;
}
// ---- your change: end ----

REGION_GUARD_RUNTIME();  // Guard (common/guard.h): the build stops here if your region replaced what the code below calls.
REGION_GUARD(final_value); REGION_GUARD(random_vector<int>); REGION_GUARD(bench_turns_ms); REGION_GUARD(gbps);

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: the Coefficients kernel; choose a device layout that coalesces.");
    long long n = args.integer("n", 8388607, 1, 1LL << 26, "pixels (8 ints each)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed rounds (kernel and copy once per round; the shortest reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    // Seeded inputs in ranges that keep the integer formula exact and free of division by 0.
    Host h{n, random_vector<int>(n, 0, 255, 1), random_vector<int>(n, 0, 255, 2), random_vector<int>(n, 0, 255, 3),
           random_vector<int>(n, 0, 359, 4), random_vector<int>(n, 0, 100, 5), random_vector<int>(n, 1, 255, 6),
           random_vector<int>(n, 1, 255, 7)};
    std::vector<int> ref(n), got(n);
    for (long long i = 0; i < n; ++i)
        ref[i] = final_value(h.r[i], h.g[i], h.b[i], h.hue[i], h.saturation[i], h.maxVal[i], h.minVal[i]);
    size_t bytes = n * 8 * sizeof(int);  // 7 ints read + 1 written per pixel: the useful bytes
    std::printf("n = %lld pixels, %.1f MB of useful data (%.1fx the L2)\n", n, bytes / 1e6,
                (double)bytes / dev.prop.l2CacheSize);

    Device d = upload(h);
    const int block = 256;
    unsigned grid = (unsigned)((n + block - 1) / block);
    auto launch = [&] { complicatedCalculation<<<grid, block>>>(d, n); };
    download(got, d);  // before the kernel: finalVal is still -1 everywhere
    long long early = std::count_if(got.begin(), got.end(), [](int v) { return v != -1; });
    launch();
    CHECK_LAUNCH();
    download(got, d);
    Verdict verdict;
    verdict.exact("finalVal vs CPU", ref.data(), got.data(), n);

    // The kernel and a cudaMemcpy D2D of `bytes` (which reads and writes them: counted both ways),
    // timed in turns, `reps` rounds: the shortest time of each (bench_turns_ms). Every round, warm-ups
    // included, starts from a fresh upload of the pixels rotated by a further 7919 places (new input
    // at every address); right after the upload finalVal must be -1 everywhere, after the round it
    // must be the formula's.
    int round = 0;
    long long wrong_rounds = 0;
    const long long step = 7919 % n;
    auto next_round = [&] {
        if (round > 0) {
            download(got, d);
            wrong_rounds += !std::equal(ref.begin(), ref.end(), got.begin());
        }
        release(d);
        for (std::vector<int>* v : {&h.r, &h.b, &h.g, &h.hue, &h.saturation, &h.maxVal, &h.minVal, &ref})
            std::rotate(v->begin(), v->begin() + step, v->end());
        d = upload(h);
        download(got, d);
        early += std::count_if(got.begin(), got.end(), [](int v) { return v != -1; });
        ++round;
    };
    D2DCopy copy(bytes);
    std::vector<double> t = bench_turns_ms({launch, [&] { copy(); }}, reps, next_round);
    download(got, d);
    wrong_rounds += !std::equal(ref.begin(), ref.end(), got.begin());
    verdict.check(early == 0, "finalVal is -1 after every upload, before the kernel (" + std::to_string(early) +
                                  " values were not)");
    verdict.check(wrong_rounds == 0, "finalVal vs CPU in all " + std::to_string(round) +
                                         " timed rounds (new input each): " + std::to_string(wrong_rounds) + " wrong");
    double ms = t[0], kernel_gbps = gbps((double)bytes, ms), d2d = copy.gbps(t[1]);
    std::printf("kernel %.1f us, %.1f GB/s of useful bytes; cudaMemcpy D2D %.1f GB/s\n", ms * 1e3, kernel_gbps, d2d);
    std::printf("ratio vs D2D: %.2f (target: 0.75 of this GPU's cudaMemcpy D2D GB/s, set on an H100)\n", kernel_gbps / d2d);
    release(d);
    return verdict.finish();
}
