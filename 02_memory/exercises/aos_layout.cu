// aos_layout - exercise (faster): the book's Coefficients kernel; the device layout is yours.
//
// Manual: M "合并与未合并的全局内存访问" (coalesced vs uncoalesced global memory access: the
//         Coefficients example, AOS vs SOA); G 5.3.2 设备内存访问.
// Your task: make the kernel move its useful bytes at least 0.65x as fast as cudaMemcpy
//         device-to-device moves bytes (`ratio vs D2D`, measured in the same run). Change only
//         the part between the markers: the layout and the kernel. The layout is one function,
//         field_offset(field, i, n): the int of the program's pixel buffer that holds field `field`
//         (a name of enum Field) of pixel i, for n pixels. The buffer has FIELDS * n + FIELDS * 32
//         ints: room to pad every field to a multiple of 32 ints. The kernel reads the 7 input
//         fields of each pixel and writes its FINALVAL with the book's formula (keep the formula).
// What the program does with them: before any pixel exists, its own kernel evaluates your
//         field_offset for every field and pixel into a table, and the program checks that every
//         offset lies in the buffer and that no two are equal (if not: FAILED, naming field_offset,
//         and it stops). From then on it places the inputs and reads finalVal only through that
//         table; of your code only the kernel runs again. Every launch, the timed ones included,
//         gets new input and finalVal = -1 in every pixel, and is checked against the CPU after it
//         (each timed round's input comes from a key drawn at run time for it; `--seed=N` derives
//         the keys from N instead, to repeat a run).
// Build and check, from 02_memory: make exercises (builds workspace/aos_layout.cu), then
//         make check (says `solved` or `not yet` with a hint). By hand:
//           cd workspace && ./aos_layout --n=8388607
// Compile: nvcc -std=c++17 -O3 -lineinfo -arch=native -Werror all-warnings -Xcompiler -Wall,-Wextra -I../../common -o aos_layout aos_layout.cu
// Output: where the timed rounds' keys come from, the layout check, the checks (the first launch
//         on seeded input, then every timed round, new input each), the kernel's time and GB/s,
//         cudaMemcpy D2D's GB/s, `ratio vs D2D: X.XX`, PASSED.
// Yours to change: only the lines between the two "your change" markers; make check refuses a file changed elsewhere.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <random>
#include <string>
#include <vector>
#include "common.cuh"

// The fields of a pixel, in the order of the book's struct Coefficients_AOS: 7 inputs, then the
// result. FIELDS is their number.
enum Field { R, B, G, HUE, SATURATION, MAXVAL, MINVAL, FINALVAL, FIELDS };

// CPU reference: the book's formula.
int final_value(int r, int g, int b, int hue, int saturation, int maxVal, int minVal) {
    int grayscale = (r + g + b) / maxVal;
    int hue_sat = hue * saturation / minVal;
    return grayscale * hue_sat;
}

namespace yours {  // Your region is a namespace of its own: the code after it calls only what the `using` line names.
// ---- your change: begin (the layout, field_offset, and the kernel) ----
// Array of structs, the book's Coefficients_AOS: the 8 fields of pixel i side by side, 32 bytes
// per pixel.
__device__ long long field_offset(int field, long long i, long long n) {
    (void)n;  // this layout does not depend on the number of pixels
    return i * FIELDS + field;
}

__global__ void complicatedCalculation(int* data, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    int grayscale = (data[field_offset(R, i, n)] + data[field_offset(G, i, n)] + data[field_offset(B, i, n)]) /
                    data[field_offset(MAXVAL, i, n)];
    int hue_sat = data[field_offset(HUE, i, n)] * data[field_offset(SATURATION, i, n)] / data[field_offset(MINVAL, i, n)];
    data[field_offset(FINALVAL, i, n)] = grayscale * hue_sat;
}
// ---- your change: end ----
REGION_GUARD_RUNTIME();  // Guard (common/guard.h): the build stops here if your region declares a name the code below calls.
REGION_GUARD(final_value); REGION_GUARD(random_vector<int>); REGION_GUARD(bench_turns_ms); REGION_GUARD(gbps);
REGION_GUARD(lab_corrupt<int>);
}  // namespace yours: the program calls only these of your region, and with these types
using yours::field_offset; using yours::complicatedCalculation;
REGION_SIGNATURE(field_offset, long long (*)(int, long long, long long));
REGION_SIGNATURE(complicatedCalculation, void (*)(int*, long long));

// The layout as the program uses it: offset[f * n + i] = field_offset(f, i, n), evaluated once, before
// any pixel exists, or -1 where it lies outside the buffer of `size` ints (an int holds every offset
// inside it: size <= FIELDS * 2^24 + FIELDS * 32 < 2^31).
__global__ void offsets_table(int* offset, long long n, long long size) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i >= n) return;
    for (int f = 0; f < FIELDS; ++f) {
        long long o = field_offset(f, i, n);
        offset[f * n + i] = o >= 0 && o < size ? (int)o : -1;
    }
}

// What is wrong with the table, or "": every offset inside the buffer, no two equal (a byte per int
// of the buffer marks the ints already taken).
std::string layout_problem(const std::vector<int>& offset, long long n, long long size) {
    static const char* const name[FIELDS] = {"R", "B", "G", "HUE", "SATURATION", "MAXVAL", "MINVAL", "FINALVAL"};
    auto at = [&](long long k) { return std::string("(") + name[k / n] + ", " + std::to_string(k % n) + ")"; };
    std::vector<unsigned char> taken(size, 0);
    for (long long k = 0; k < FIELDS * n; ++k) {
        int o = offset[k];
        if (o < 0 || o >= size)
            return "field_offset" + at(k) + " lies outside the buffer of " + std::to_string(size) + " ints";
        if (taken[o]) {
            long long first = std::find(offset.begin(), offset.begin() + k, o) - offset.begin();
            return "field_offset" + at(first) + " and field_offset" + at(k) + " share int " + std::to_string(o);
        }
        taken[o] = 1;
    }
    return "";
}

// The ranges of the 7 inputs (R, B, G, HUE, SATURATION, MAXVAL, MINVAL): the integer formula stays
// exact, never divides by 0 and is never negative.
const int lowest[MINVAL + 1] = {0, 0, 0, 0, 0, 1, 1}, highest[MINVAL + 1] = {255, 255, 255, 359, 100, 255, 255};

// Puts pixel i's inputs, input(i, v) (v[f] for f = R .. MINVAL), into the host image of the buffer
// through the table, finalVal = -1 (a pixel the kernel skips cannot pass: the formula is never
// negative), and the CPU's finalVal into ref[i].
template <class Input>
void place(int* buffer, const std::vector<int>& offset, long long n, std::vector<int>& ref, Input input) {
    for (long long i = 0; i < n; ++i) {
        int v[MINVAL + 1];
        input(i, v);
        for (int f = 0; f <= MINVAL; ++f) buffer[offset[f * n + i]] = v[f];
        buffer[offset[FINALVAL * n + i]] = -1;
        ref[i] = final_value(v[R], v[G], v[B], v[HUE], v[SATURATION], v[MAXVAL], v[MINVAL]);
    }
}

// finalVal of every pixel from the host image of the buffer, through the table.
void gather(std::vector<int>& got, const int* buffer, const std::vector<int>& offset, long long n) {
    for (long long i = 0; i < n; ++i) got[i] = buffer[offset[FINALVAL * n + i]];
}

// The timed rounds' input: counter-based random bits, SplitMix64's finalizer (S. Vigna) of the run's
// round's key and the pixel; each 64-bit value gives two fields (its halves, scaled into their
// ranges). Nothing before a round can tell its input: each round's key is drawn at run time (unless
// --seed=N gives them, mix64(N + round * c), to repeat a run).
uint64_t mix64(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
void round_input(uint64_t key, long long i, int* v) {
    for (int f = 0; f <= MINVAL; f += 2) {
        uint64_t bits = mix64(key + (uint64_t)(4 * i + f / 2) * 0x9e3779b97f4a7c15ull);
        for (int h = 0; h < 2 && f + h <= MINVAL; ++h, bits >>= 32) {
            uint64_t span = highest[f + h] - lowest[f + h] + 1;
            v[f + h] = lowest[f + h] + (int)(((bits & 0xffffffffull) * span) >> 32);
        }
    }
}

// A key from std::random_device, which is built at the first call: only a run without --seed has one.
uint64_t drawn_key() {
    static std::random_device entropy;
    return (uint64_t)entropy() << 32 ^ entropy();
}

// Reads the n ints of a scratch buffer twice the size of the L2, before each timed run: afterwards
// the L2 holds lines of the scratch buffer, not of the data that the run reads, so the kernel and
// the copy both start with their data in DRAM (the kernel would otherwise follow the upload of its
// pixels, 268 MB at the default n, part of which may still be in the L2, while the copy follows the
// kernel). It only reads, so it leaves no lines in the L2 that the timed run would have to write back.
__global__ void flush_l2(const int* scratch, size_t n, int* sink) {
    int acc = 0;
    size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += stride) acc ^= scratch[i];
    if (acc == 1) *sink = acc;  // never (the buffer is zeros), but the compiler cannot drop the reads
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Exercise: the Coefficients kernel; choose a device layout that coalesces.");
    long long n = args.integer("n", 8388607, 1, 1LL << 24,
                               "pixels (8 ints each; the host holds about 130 bytes per pixel, 64 of them pinned: 2.2 GB at 2^24)");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed rounds (kernel and copy once per round; the shortest reported)");
    long long seed = args.integer("seed", 0, 0, LLONG_MAX,
                                  "the timed rounds' keys derive from it (0: a new key per round from std::random_device)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    const long long size = FIELDS * n + FIELDS * 32;  // the buffer, in ints
    size_t bytes = n * 8 * sizeof(int);               // 7 ints read + 1 written per pixel: the useful bytes
    std::printf("n = %lld pixels, %.1f MB of useful data (%.1fx the L2), a buffer of %lld ints\n", n, bytes / 1e6,
                (double)bytes / dev.real.l2CacheSize, size);
    if (seed)
        std::printf("seed = %lld: the timed rounds' keys derive from it (the same input as any run with it)\n", seed);
    else
        std::printf("timed rounds: a new key each from std::random_device (--seed=N derives them from N)\n");

    // The layout, before any pixel exists: field_offset's table, checked on the host.
    Verdict verdict;
    std::vector<int> offset(FIELDS * n);
    const int block = 256;
    unsigned grid = (unsigned)((n + block - 1) / block);
    {
        int* d_offset;
        CHECK(cudaMalloc(&d_offset, offset.size() * sizeof(int)));
        offsets_table<<<grid, block>>>(d_offset, n, size);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(offset.data(), d_offset, offset.size() * sizeof(int), cudaMemcpyDeviceToHost));
        CHECK(cudaFree(d_offset));
    }
    std::string problem = layout_problem(offset, n, size);
    if (!verdict.check(problem.empty(), problem.empty() ? "field_offset: one int of the buffer per field and pixel"
                                                        : problem))
        return verdict.finish();

    // The buffer on the device, and two host images of it in pinned memory: what goes up (the padding,
    // the ints no field uses, stays 0) and what comes back.
    int *d_data, *up, *down;
    CHECK(cudaMalloc(&d_data, size * sizeof(int)));
    CHECK(cudaMallocHost(&up, size * sizeof(int)));
    CHECK(cudaMallocHost(&down, size * sizeof(int)));
    std::fill(up, up + size, 0);
    std::vector<int> ref(n), got(n);
    auto launch = [&] { complicatedCalculation<<<grid, block>>>(d_data, n); };

    // The first launch: seeded input (the same every run), checked pixel by pixel.
    {
        std::vector<int> in[MINVAL + 1];
        for (int f = 0; f <= MINVAL; ++f) in[f] = random_vector<int>(n, lowest[f], highest[f], f + 1);
        place(up, offset, n, ref, [&](long long i, int* v) {
            for (int f = 0; f <= MINVAL; ++f) v[f] = in[f][i];
        });
    }
    CHECK(cudaMemcpy(d_data, up, size * sizeof(int), cudaMemcpyHostToDevice));
    complicatedCalculation<<<grid, block>>>(d_data, n);
    CHECK_LAUNCH();
    CHECK(cudaMemcpy(down, d_data, size * sizeof(int), cudaMemcpyDeviceToHost));
    gather(got, down, offset, n);
    verdict.exact("finalVal vs CPU (seeded input)", ref.data(), got.data(), n);

    // The kernel and a cudaMemcpy D2D of `bytes` (which reads and writes them: counted both ways),
    // timed in turns, `reps` rounds: the shortest time of each (bench_turns_ms). Before every round,
    // warm-ups included, the previous round's finalVal is checked, then the round's new input (from
    // the round's key) goes up with finalVal = -1. Outside the timed intervals, a round costs
    // the host two passes over the pixels (place, gather: at n = 8388607 0.1 to 0.25 s together on a
    // shared 2-core build machine) and two copies of the 268 MB buffer.
    int round = 0;
    long long wrong_rounds = 0;
    auto check_round = [&] {
        CHECK(cudaMemcpy(down, d_data, size * sizeof(int), cudaMemcpyDeviceToHost));
        gather(got, down, offset, n);
        lab_corrupt(got.data(), (size_t)n);  // CUDA_LAB_CORRUPT=1: this check too must fail (common/corrupt.h)
        wrong_rounds += !std::equal(ref.begin(), ref.end(), got.begin());
    };
    auto next_round = [&] {
        if (round > 0) check_round();
        uint64_t key = seed ? mix64((uint64_t)seed + (uint64_t)round * 0xd1b54a32d192ed03ull) : drawn_key();
        place(up, offset, n, ref, [&](long long i, int* v) { round_input(key, i, v); });
        CHECK(cudaMemcpy(d_data, up, size * sizeof(int), cudaMemcpyHostToDevice));
        ++round;
    };
    // In each round the kernel and the copy are each preceded by flush_l2 (timed too, in turns with
    // them; its times are not used): both start from the same state of the L2.
    D2DCopy copy(bytes);
    size_t scratch_n = 2 * (size_t)dev.real.l2CacheSize / sizeof(int);
    int *d_scratch, *d_sink;
    CHECK(cudaMalloc(&d_scratch, scratch_n * sizeof(int)));
    CHECK(cudaMalloc(&d_sink, sizeof(int)));
    CHECK(cudaMemset(d_scratch, 0, scratch_n * sizeof(int)));
    auto flush = [&] { flush_l2<<<1024, 256>>>(d_scratch, scratch_n, d_sink); };
    std::vector<double> t = bench_turns_ms({flush, launch, flush, [&] { copy(); }}, reps, next_round);
    check_round();
    verdict.check(wrong_rounds == 0, "finalVal vs CPU in all " + std::to_string(round) +
                                         " rounds, warm-ups and timed (new input each): " + std::to_string(wrong_rounds) + " wrong");
    double ms = t[1], kernel_gbps = gbps((double)bytes, ms), d2d = copy.gbps(t[3]);
    std::printf("kernel %.1f us, %.1f GB/s of useful bytes; cudaMemcpy D2D %.1f GB/s\n", ms * 1e3, kernel_gbps, d2d);
    std::printf("ratio vs D2D: %.2f (target: 0.65 of this GPU's cudaMemcpy D2D GB/s, set on an H100 and an H200)\n", kernel_gbps / d2d);
    CHECK(cudaFree(d_data));
    CHECK(cudaFree(d_scratch));
    CHECK(cudaFree(d_sink));
    CHECK(cudaFreeHost(up));
    CHECK(cudaFreeHost(down));
    return verdict.finish();
}
