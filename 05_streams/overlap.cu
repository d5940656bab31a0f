// overlap - copy/compute overlap: H2D -> kernel -> D2H of one large pinned buffer, cut into chunks
//           and spread over streams, against the same work done serially.
//
// Manual: G 3.2.6.3 数据传输和内核执行的重叠, 3.2.6.4 并行数据传输, 3.2.6.5 流,
//         3.2.6.5.5 重叠行为; N 6.2.1 CUDA流.
// Shows:  a GPU has separate engines for host->device copies, device->host copies and kernels
//         (asyncEngineCount copy engines; 2 or more: both directions at once). One stream runs
//         them one after another, so the serial time is H2D + kernel + D2H. Cut into chunks and
//         issued to several streams, chunk k+1 is uploaded while chunk k computes and chunk k-1
//         downloads, and the time approaches max(H2D, kernel, D2H) - the lower bound, measured
//         alone in the same run. The kernel's work (--iters multiply-adds per element) is calibrated
//         so that it takes as long as the copies ("assume copies and kernel take the same time", as
//         N 6.2.1 draws it; the slower of H2D, D2H and both directions at once). Versions: 1, 2, 4, 8 (and --streams=N) streams, depth-first issue
//         (H2D, kernel, D2H of one chunk, then the next) and breadth-first (all H2D of a round, all
//         kernels, all D2H: G 3.2.6.5.5's rewrite). Each version is checked against the CPU. A second
//         run records a CUDA event before and after every copy and kernel and writes the timeline
//         (--timeline=FILE) that `make plots` draws as a Gantt chart.
// Build:  nvcc -std=c++17 -O3 -arch=native -I../common -o overlap overlap.cu   (or: make overlap)
// Run:    ./overlap [--n=2^26] [--chunks=32] [--streams=N] [--iters=0 (calibrate)] [--reps=10]
//                   [--timeline=FILE] [--csv=FILE] [--only=REGEX]
// Output: asyncEngineCount; the table (time, x serial) of the copies and the kernel alone, both
//         copies at once, serial and every streamed version; the lower bound, best / bound, serial /
//         best; the event overhead of the timeline run; then PASSED.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

// One step of a 32-bit linear congruential generator. k steps compose to another affine map,
// x -> A_k x + C_k (mod 2^32), so the CPU checks all elements with one multiply-add each while the
// GPU does k dependent multiply-adds: a kernel with adjustable arithmetic and a cheap exact check.
constexpr uint32_t LCG_A = 1664525u, LCG_C = 1013904223u;

struct Affine {
    uint32_t a = 1, c = 0;
};
Affine lcg_power(int k) {
    Affine f;
    for (int i = 0; i < k; ++i) f = {f.a * LCG_A, f.c * LCG_A + LCG_C};
    return f;
}

__global__ void lcg_steps(const uint32_t* __restrict__ in, uint32_t* __restrict__ out, size_t n, int iters) {
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    if (i >= n) return;
    uint32_t x = in[i];
#pragma unroll 1  // one multiply-add per iteration: unrolling would let the compiler fold steps together
    for (int k = 0; k < iters; ++k) x = x * LCG_A + LCG_C;
    out[i] = x;
}

enum Op { H2D = 0, KERNEL = 1, D2H = 2 };
const char* op_name(int op) { return op == H2D ? "H2D" : op == KERNEL ? "kernel" : "D2H"; }

struct Schedule {  // one version of the table: how many streams, chunks, which issue order
    std::string name;
    int streams, chunks;
    bool breadth;
};

// One copy or kernel as the timeline run saw it (ms from the start event).
struct OpTime {
    int stream, chunk, op;
    double ready, start, end;
};

int main(int argc, char** argv) {
    Args args(argc, argv, "Overlaps H2D copies, kernels and D2H copies with streams; serial vs streamed vs the bound.");
    long long n = args.integer("n", 1LL << 26, 1, 1LL << 29, "elements (uint32) in the buffer");
    int chunks = (int)args.integer("chunks", 32, 1, 1024, "chunks the buffer is cut into for the multi-stream versions");
    int extra = (int)args.integer("streams", 0, 0, 64, "also run this many streams (0: only 1, 2, 4, 8)");
    int iters_arg = (int)args.integer("iters", 0, 0, 1 << 20, "multiply-adds per element (0: calibrate to the copy time)");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    std::string timeline_file = args.text("timeline", "", "write the per-op event timeline as CSV to FILE");
    Results table(args, "overlap", Results::TIME_ONLY);
    args.parse_or_exit();
    table.validate();

    DeviceInfo dev = select_device(args.device());
    size_t bytes = (size_t)n * sizeof(uint32_t);
    chunks = (int)std::min<long long>(chunks, n);
    std::printf("asyncEngineCount %d (%s), concurrentKernels %d; buffer %.1f MB pinned, %d chunks\n",
                dev.prop.asyncEngineCount,
                dev.prop.asyncEngineCount >= 2 ? "copies in both directions overlap each other and kernels"
                : dev.prop.asyncEngineCount == 1 ? "one copy at a time overlaps kernels"
                                                 : "no copy/kernel overlap on this device",
                dev.prop.concurrentKernels, bytes / 1e6, chunks);
    if (dev.profile)  // the attributes above are the profile's GPU's; what overlaps below is measured here
        std::printf("profile %s: the timings and overlaps below are %s's (asyncEngineCount %d), not the profile's\n",
                    dev.profile->key.c_str(), dev.real.name, dev.real.asyncEngineCount);

    // Pinned host memory: the copy engines read and write it directly. Pageable memory would go
    // through the driver's staging buffer, and cudaMemcpyAsync would not overlap (G 3.2.6.3).
    uint32_t *h_in, *h_out, *d_in, *d_out;
    CHECK(cudaMallocHost(&h_in, bytes));
    CHECK(cudaMallocHost(&h_out, bytes));
    CHECK(cudaMalloc(&d_in, bytes));
    CHECK(cudaMalloc(&d_out, bytes));
    CHECK(cudaMemset(d_out, 0, bytes));  // the calibration's D2H reads it before any kernel wrote it
    {
        std::vector<uint32_t> v = random_vector<uint32_t>(n, 0u, 0xffffffffu, 5);
        std::memcpy(h_in, v.data(), bytes);
    }

    // Blocking streams (cudaStreamCreate): they synchronize with the legacy default stream, so the
    // events that bench_ms records on stream 0 bracket all of their work (G 3.2.6.5.4).
    int max_streams = std::max(8, extra);
    std::vector<cudaStream_t> streams(max_streams);
    for (auto& s : streams) CHECK(cudaStreamCreate(&s));

    const int threads = 256;
    auto launch_kernel = [&](size_t off, size_t len, int iters, cudaStream_t s) {
        lcg_steps<<<(unsigned)((len + threads - 1) / threads), threads, 0, s>>>(d_in + off, d_out + off, len, iters);
        CHECK_LAUNCH();
    };

    // The copies alone, to calibrate the kernel and for the bound.
    auto h2d_all = [&] { CHECK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, 0)); };
    auto d2h_all = [&] { CHECK(cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, 0)); };
    h2d_all();
    CHECK(cudaDeviceSynchronize());
    int iters = iters_arg;
    if (iters == 0) {
        // Kernel time grows linearly with iters: two points give the slope. The target is the
        // slowest copy stage as the pipeline will see it: each direction alone, and both at once
        // (if the link or host memory cannot carry both directions at full speed, the copies
        // slow down when they overlap, and a kernel matched to the lone copy would leave the
        // copy engines as the bottleneck, above the bound measured alone).
        auto both_at_once = [&] {
            CHECK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, streams[0]));
            CHECK(cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, streams[1]));
        };
        double copy_ms = std::max({bench_ms(h2d_all, 3), bench_ms(d2h_all, 3), bench_ms(both_at_once, 3)});
        const int a = 64, b = 1088;
        double ta = bench_ms([&] { launch_kernel(0, n, a, 0); }, 3);
        double tb = bench_ms([&] { launch_kernel(0, n, b, 0); }, 3);
        double slope = (tb - ta) / (b - a);
        double it = slope > 0 ? a + (copy_ms - ta) / slope : b;
        iters = (int)std::min<double>(std::max<double>(it, 1.0), 1 << 20);
        std::printf("calibrated --iters=%d: kernel time ~ the slowest copy stage (%.3f ms)\n", iters, copy_ms);
    }

    std::vector<uint32_t> expected(n);
    {
        Affine f = lcg_power(iters);
        for (long long i = 0; i < n; ++i) expected[i] = h_in[i] * f.a + f.c;
    }

    std::vector<Schedule> versions;
    versions.push_back({"serial (1 stream, 1 chunk)", 1, 1, false});
    versions.push_back({"1 stream, " + std::to_string(chunks) + " chunks", 1, chunks, false});
    if (chunks >= 2) {
        versions.push_back({"2 streams x 1 chunk, depth-first", 2, 2, false});   // G 3.2.6.5.1's code
        versions.push_back({"2 streams x 1 chunk, breadth-first", 2, 2, true});  // G 3.2.6.5.5's rewrite
    }
    std::vector<int> counts = {2, 4, 8};
    if (extra > 0 && std::find(counts.begin(), counts.end(), extra) == counts.end() && extra != 1) counts.push_back(extra);
    for (int s : counts) {
        if (s > chunks) continue;
        std::string base = std::to_string(s) + " streams, " + std::to_string(chunks) + " chunks, ";
        versions.push_back({base + "depth-first", s, chunks, false});
        versions.push_back({base + "breadth-first", s, chunks, true});
    }

    // Enqueues one version. Chunk c goes to stream c % streams. Depth-first issues H2D, kernel,
    // D2H of chunk c before chunk c+1; breadth-first issues, per round of `streams` chunks, all
    // H2D, then all kernels, then all D2H. Inside each stream the order is the same either way;
    // only the order in which the host hands work to the streams differs. With `ev` the op is
    // bracketed by two events recorded in its stream (ev[2 * (3 c + op)] before, +1 after).
    auto enqueue = [&](const Schedule& v, std::vector<cudaEvent_t>* ev) {
        size_t csize = ((size_t)n + v.chunks - 1) / v.chunks;
        auto issue = [&](int c, int op) {
            size_t off = (size_t)c * csize;
            if (off >= (size_t)n) return;
            size_t len = std::min(csize, (size_t)n - off);
            cudaStream_t s = streams[c % v.streams];
            if (ev) CHECK(cudaEventRecord((*ev)[2 * (3 * c + op)], s));
            if (op == H2D)
                CHECK(cudaMemcpyAsync(d_in + off, h_in + off, len * sizeof(uint32_t), cudaMemcpyHostToDevice, s));
            else if (op == KERNEL)
                launch_kernel(off, len, iters, s);
            else
                CHECK(cudaMemcpyAsync(h_out + off, d_out + off, len * sizeof(uint32_t), cudaMemcpyDeviceToHost, s));
            if (ev) CHECK(cudaEventRecord((*ev)[2 * (3 * c + op) + 1], s));
        };
        if (!v.breadth) {
            for (int c = 0; c < v.chunks; ++c)
                for (int op = 0; op < 3; ++op) issue(c, op);
        } else {
            for (int r = 0; r < v.chunks; r += v.streams)
                for (int op = 0; op < 3; ++op)
                    for (int c = r; c < std::min(r + v.streams, v.chunks); ++c) issue(c, op);
        }
    };

    // The version table. Every row enqueues its work between two events on the legacy default
    // stream (bench_ms), which wait for the blocking streams: the time is the whole pipeline.
    Verdict verdict;
    auto check = [&](Verdict& vd, const std::string& name) { vd.exact(name, expected.data(), h_out, n); };
    // Before each checked run: a chunk never copied back fails the check, and so does a chunk never
    // computed (d_out) and one computed before its upload or without it (d_in: every version
    // uploads all of h_in itself, so the check sees a dropped or misordered H2D, not the data an
    // earlier run left on the device).
    auto poison = [&] {
        std::memset(h_out, 0xff, bytes);
        CHECK(cudaMemset(d_out, 0xff, bytes));
        CHECK(cudaMemset(d_in, 0xff, bytes));
        CHECK(cudaDeviceSynchronize());
    };
    table.param("n", n);
    table.param("chunks", chunks);
    table.param("iters", iters);
    table.param("async_engines", dev.real.asyncEngineCount);  // the GPU measured
    table.add("H2D alone", h2d_all, 0);
    table.add("kernel alone", [&] { launch_kernel(0, n, iters, 0); }, 0);
    table.add("D2H alone", d2h_all, 0);
    table.add("H2D + D2H at once", [&] {
        CHECK(cudaMemcpyAsync(d_in, h_in, bytes, cudaMemcpyHostToDevice, streams[0]));
        CHECK(cudaMemcpyAsync(h_out, d_out, bytes, cudaMemcpyDeviceToHost, streams[1]));
    }, 0);
    std::vector<Results::Version*> rows;
    for (auto& v : versions) rows.push_back(&table.add(v.name, [&, v] { enqueue(v, nullptr); }, 0, check, poison));
    table.speedup_over(versions[0].name);
    table.run(verdict, reps);

    // The bound and the headline ratios (only when the rows they need were selected by --only).
    const Results::Version *h2d = table.find("H2D alone"), *ker = table.find("kernel alone"),
                           *d2h = table.find("D2H alone"), *both = table.find("H2D + D2H at once"),
                           *serial = table.find(versions[0].name);
    const Results::Version* best = nullptr;
    for (size_t i = 1; i < rows.size(); ++i)
        if (rows[i]->ms > 0 && (!best || rows[i]->ms < best->ms)) best = rows[i];
    double bound = 0;
    std::printf("\n");
    if (h2d && ker && d2h) {
        bound = std::max({h2d->ms, ker->ms, d2h->ms});
        std::printf("alone: H2D %.3f ms (%.1f GB/s), kernel %.3f ms (--iters=%d), D2H %.3f ms (%.1f GB/s)\n", h2d->ms,
                    gbps(bytes, h2d->ms), ker->ms, iters, d2h->ms, gbps(bytes, d2h->ms));
        if (both)
            std::printf("both copies at once: %.3f ms (%.2fx the slower one alone: %s)\n", both->ms,
                        both->ms / std::max(h2d->ms, d2h->ms),
                        both->ms < 1.1 * std::max(h2d->ms, d2h->ms) ? "both directions at nearly full speed"
                                                                    : "the two directions slow each other down");
        std::printf("lower bound max(H2D, kernel, D2H) = %.3f ms; no overlap H2D + kernel + D2H = %.3f ms\n", bound,
                    h2d->ms + ker->ms + d2h->ms);
    }
    if (best && bound > 0)
        std::printf("best streamed: %s, %.3f ms = %.2fx the lower bound (target <= 1.10x, set on an H100 with "
                    "asyncEngineCount 3)\n",
                    best->name.c_str(), best->ms, best->ms / bound);
    if (best && serial)
        std::printf("serial / best = %.2fx (%.3f ms -> %.3f ms)\n", serial->ms / best->ms, serial->ms, best->ms);

    // Timeline run: each selected version once more, now with an event before and after every op.
    // An event before an op completes when the stream reaches the op (the stream is "ready"), not
    // when its engine starts it: a copy may still wait behind another stream's copy. Assuming each
    // copy direction and the compute engine work through their ops one after another, an op starts
    // at the later of "ready" and the end of the previous op on the same engine. (Chunk kernels
    // fill the GPU; the next one's first blocks may start during the previous one's last wave, so
    // kernel bars can start a little late.)
    std::vector<cudaEvent_t> ev(6 * (size_t)chunks);
    for (auto& e : ev) CHECK(cudaEventCreate(&e));
    cudaEvent_t t0, t1;
    CHECK(cudaEventCreate(&t0));
    CHECK(cudaEventCreate(&t1));
    FILE* tf = nullptr;
    if (!timeline_file.empty()) {
        tf = std::fopen(timeline_file.c_str(), "w");
        if (!tf) std::fprintf(stderr, "warning: could not write '%s'\n", timeline_file.c_str());
    }
    if (tf)  // the device columns first, as in results.cuh's CSV; one row per copy or kernel
        std::fprintf(tf, "gpu,cc,driver,cuda,program,n,iters,version,streams,chunks,order,table_ms,events_ms,bound_ms,"
                         "stream,chunk,op,ready_ms,start_ms,end_ms\n");
    double best_events_ms = 0;
    for (size_t vi = 0; vi < versions.size(); ++vi) {
        const Schedule& v = versions[vi];
        if (rows[vi]->ms <= 0) continue;  // not selected by --only
        CHECK(cudaEventRecord(t0, 0));
        enqueue(v, &ev);
        CHECK(cudaEventRecord(t1, 0));
        CHECK(cudaEventSynchronize(t1));
        float total = 0;
        CHECK(cudaEventElapsedTime(&total, t0, t1));
        if (rows[vi] == best) best_events_ms = total;
        std::vector<OpTime> ops;
        size_t csize = ((size_t)n + v.chunks - 1) / v.chunks;
        for (int c = 0; c < v.chunks; ++c) {
            if ((size_t)c * csize >= (size_t)n) break;
            for (int op = 0; op < 3; ++op) {
                float r = 0, e = 0;
                CHECK(cudaEventElapsedTime(&r, t0, ev[2 * (3 * c + op)]));
                CHECK(cudaEventElapsedTime(&e, t0, ev[2 * (3 * c + op) + 1]));
                ops.push_back({c % v.streams, c, op, r, r, e});
            }
        }
        for (int op = 0; op < 3; ++op) {  // one engine at a time: start = max(ready, previous end)
            std::vector<OpTime*> eng;
            for (auto& o : ops)
                if (o.op == op) eng.push_back(&o);
            std::sort(eng.begin(), eng.end(), [](const OpTime* a, const OpTime* b) { return a->end < b->end; });
            double prev = 0;
            for (auto* o : eng) {
                o->start = std::min(o->end, std::max(o->ready, prev));
                prev = o->end;
            }
        }
        if (tf) {
            int driver = 0, runtime = 0;
            CHECK(cudaDriverGetVersion(&driver));
            CHECK(cudaRuntimeGetVersion(&runtime));
            std::string gpu = dev.real.name;  // the GPU measured, also under a profile
            if (gpu.find_first_of(",\"") != std::string::npos) gpu = "\"" + gpu + "\"";
            for (auto& o : ops)
                std::fprintf(tf, "%s,%d.%d,%d.%d,%d.%d,overlap,%lld,%d,\"%s\",%d,%d,%s,%.4f,%.4f,%.4f,%d,%d,%s,%.4f,%.4f,%.4f\n",
                             gpu.c_str(), dev.real.major, dev.real.minor, driver / 1000, driver % 1000 / 10,
                             runtime / 1000, runtime % 1000 / 10, n, iters, v.name.c_str(), v.streams, v.chunks,
                             v.breadth ? "breadth" : "depth", rows[vi]->ms, total, bound, o.stream, o.chunk,
                             op_name(o.op), o.ready, o.start, o.end);
        }
    }
    if (best && best_events_ms > 0)
        std::printf("timeline run with 2 events per op: best version %.3f ms (%.3f ms without: events add %.1f%%)\n",
                    best_events_ms, best->ms, 100.0 * (best_events_ms - best->ms) / best->ms);
    if (tf) {
        std::fclose(tf);
        std::printf("  wrote %s\n", timeline_file.c_str());
    }

    for (auto& e : ev) CHECK(cudaEventDestroy(e));
    CHECK(cudaEventDestroy(t0));
    CHECK(cudaEventDestroy(t1));
    for (auto& s : streams) CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_in));
    CHECK(cudaFree(d_out));
    CHECK(cudaFreeHost(h_in));
    CHECK(cudaFreeHost(h_out));
    return verdict.finish();
}
