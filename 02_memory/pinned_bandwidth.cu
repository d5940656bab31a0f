// pinned_bandwidth - host<->device copy bandwidth for pageable, pinned (cudaMallocHost),
// registered (cudaHostRegister) and write-combined host memory over a range of sizes (a "shmoo",
// like the bandwidthTest sample the book runs), and how slowly the CPU reads write-combined memory.
//
// Manual: M "固定内存" (pinned memory) and "带宽测试-固定与分页" (bandwidth test: pinned vs
//         pageable); G 3.2.5 Page-Locked主机内存, 3.2.5.2 写合并内存; G 5.3.1 设备与主机之间的数据传输.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o pinned_bandwidth pinned_bandwidth.cu
// Shows:  the DMA engine can only read page-locked memory, so a copy from malloc() memory is
//         staged by the driver through a pinned bounce buffer: an extra CPU copy and extra
//         latency that dominate small transfers. Pinned memory skips the staging. Write-combined
//         memory is not cached by the CPU and not snooped over PCIe: fine to write and to DMA
//         from, very slow for the CPU to read.
// Build:  make pinned_bandwidth  Run: ./pinned_bandwidth [--max-size=2^28] [--reps=10] [--csv=FILE]
// Output: round-trip checks, a table of H2D and D2H GB/s per size and memory kind, the ratios
//         the book and the guide talk about, the CPU read speed of WC vs cached pinned memory;
//         --csv=FILE writes one row per direction, memory kind and size for plot.py.
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

enum Kind { PAGEABLE, PINNED, REGISTERED, WRITE_COMBINED, KINDS };
const char* kind_name[KINDS] = {"pageable", "pinned", "registered", "write-combined"};

// CPU read of a buffer, 8 bytes at a time; the sum keeps the compiler from skipping the reads.
uint64_t cpu_read_sum(const uint64_t* p, size_t words) {
    uint64_t s = 0;
    for (size_t i = 0; i < words; ++i) s += p[i];
    return s;
}

std::string size_label(size_t b) {
    char buf[32];
    if (b >= (1u << 20)) std::snprintf(buf, sizeof buf, "%g MB", b / 1048576.0);
    else std::snprintf(buf, sizeof buf, "%g KB", b / 1024.0);
    return buf;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Host<->device bandwidth: pageable vs pinned vs registered vs write-combined, over sizes.");
    long long max_size = args.integer("max-size", 1LL << 28, 1024, 1LL << 32, "largest transfer in bytes");
    long long min_size = args.integer("min-size", 1024, 1, 1LL << 32, "smallest transfer in bytes");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions per size (median reported)");
    Results table(args, "pinned_bandwidth", Results::GBPS);
    args.parse_or_exit();
    table.validate();
    min_size = std::min(min_size, max_size);

    select_device(args.device());
    size_t max_bytes = (size_t)max_size;
    std::vector<size_t> sizes;  // doubling from min_size, and max_size itself
    for (size_t s = (size_t)min_size; s <= max_bytes; s *= 2) sizes.push_back(s);
    if (sizes.back() != max_bytes) sizes.push_back(max_bytes);

    // The four kinds of host buffer. malloc'ed pages are touched first so that no first-touch page
    // fault lands in a timed copy.
    unsigned char* host[KINDS];
    host[PAGEABLE] = (unsigned char*)std::malloc(max_bytes);
    host[REGISTERED] = (unsigned char*)std::malloc(max_bytes);
    if (!host[PAGEABLE] || !host[REGISTERED]) {
        std::printf("FAILED: malloc of %zu bytes\n", max_bytes);
        return 1;
    }
    CHECK(cudaMallocHost(&host[PINNED], max_bytes));
    CHECK(cudaHostRegister(host[REGISTERED], max_bytes, cudaHostRegisterDefault));  // pins existing pages
    CHECK(cudaHostAlloc(&host[WRITE_COMBINED], max_bytes, cudaHostAllocWriteCombined));
    for (auto* h : host) std::memset(h, 1, max_bytes);
    unsigned char* d_buf;
    CHECK(cudaMalloc(&d_buf, max_bytes));
    CHECK(cudaMemset(d_buf, 0, max_bytes));

    // Round trip of every kind: host -> device -> (host cleared) -> host, byte-exact.
    Verdict verdict;
    size_t check_bytes = std::min<size_t>(max_bytes, 4u << 20);
    std::vector<unsigned char> pattern = random_vector<unsigned char>(check_bytes, 0, 255, 1);
    for (int k = 0; k < KINDS; ++k) {
        std::memcpy(host[k], pattern.data(), check_bytes);
        CHECK(cudaMemcpy(d_buf, host[k], check_bytes, cudaMemcpyHostToDevice));
        std::memset(host[k], 0, check_bytes);
        CHECK(cudaMemcpy(host[k], d_buf, check_bytes, cudaMemcpyDeviceToHost));
        verdict.exact(std::string(kind_name[k]) + " round trip " + size_label(check_bytes), pattern.data(), host[k],
                      check_bytes);
        CHECK(cudaMemset(d_buf, 0, check_bytes));  // the next kind must bring its own data
    }

    // The shmoo. cudaMemcpy is what the book's bandwidthTest times; for pageable memory it
    // includes the driver's staging copy, which is the point.
    table.param("max_size", max_size);
    for (int dir = 0; dir < 2; ++dir)
        for (int k = 0; k < KINDS; ++k)
            for (size_t s : sizes)
                table.add(std::string(dir == 0 ? "H2D " : "D2H ") + kind_name[k] + " " + size_label(s), [&, dir, k, s] {
                    if (dir == 0) CHECK(cudaMemcpy(d_buf, host[k], s, cudaMemcpyHostToDevice));
                    else CHECK(cudaMemcpy(host[k], d_buf, s, cudaMemcpyDeviceToHost));
                }, (double)s).param("direction", dir == 0 ? "H2D" : "D2H").param("memory", kind_name[k]).param("bytes", s);
    table.quiet();  // 8 x sizes rows: the CSV has them all, the screen a summary
    table.run(verdict, reps);
    std::vector<double> bw[2][KINDS];  // [direction][kind][size index]; NaN where --only left it out
    for (int dir = 0; dir < 2; ++dir)
        for (int k = 0; k < KINDS; ++k)
            for (size_t s : sizes) {
                auto* v = table.find(std::string(dir == 0 ? "H2D " : "D2H ") + kind_name[k] + " " + size_label(s));
                bw[dir][k].push_back(v ? v->rate() : std::nan(""));
            }

    // CPU reads: cached pinned memory vs write-combined (uncached: every load goes over the bus).
    size_t read_bytes = std::min<size_t>(max_bytes, 16u << 20) & ~size_t(7);
    CpuTimer t;
    uint64_t sum_pinned = cpu_read_sum((const uint64_t*)host[PINNED], read_bytes / 8);
    double pinned_ms = t.stop_ms();
    t.start();
    uint64_t sum_wc = cpu_read_sum((const uint64_t*)host[WRITE_COMBINED], read_bytes / 8);
    double wc_ms = t.stop_ms();
    verdict.note(sum_pinned == sum_wc, "CPU reads pinned == write-combined");  // the CPU's own data

    std::printf("\n%-9s %-35s %s\n", "", "H2D GB/s", "D2H GB/s");
    std::printf("%-9s", "size");
    for (int dir = 0; dir < 2; ++dir)
        std::printf(" %9s %7s %7s %7s  ", "pageable", "pinned", "regist.", "WC");
    std::printf("\n");
    for (size_t i = 0; i < sizes.size(); ++i) {
        if (i % 2 && i + 1 != sizes.size()) continue;  // every 4x step, and the largest
        std::printf("%-9s", size_label(sizes[i]).c_str());
        for (int dir = 0; dir < 2; ++dir)
            std::printf(" %9.2f %7.2f %7.2f %7.2f  ", bw[dir][PAGEABLE][i], bw[dir][PINNED][i],
                        bw[dir][REGISTERED][i], bw[dir][WRITE_COMBINED][i]);
        std::printf("\n");
    }
    size_t last = sizes.size() - 1;
    for (int dir = 0; dir < 2; ++dir) {
        size_t best = 0;  // the size where pinned gains most over pageable
        for (size_t i = 0; i < sizes.size(); ++i)
            if (bw[dir][PINNED][i] / bw[dir][PAGEABLE][i] > bw[dir][PINNED][best] / bw[dir][PAGEABLE][best]) best = i;
        std::printf("pinned / pageable %s: %.1fx at %s, %.1fx at %s, %.1fx at %s (largest gain)\n",
                    dir == 0 ? "H2D" : "D2H", bw[dir][PINNED][0] / bw[dir][PAGEABLE][0],
                    size_label(sizes[0]).c_str(), bw[dir][PINNED][last] / bw[dir][PAGEABLE][last],
                    size_label(sizes[last]).c_str(), bw[dir][PINNED][best] / bw[dir][PAGEABLE][best],
                    size_label(sizes[best]).c_str());
    }
    std::printf("write-combined / pinned H2D at %s: %.2fx (guide: up to 1.4x where PCIe snooping costs)\n",
                size_label(sizes[last]).c_str(), bw[0][WRITE_COMBINED][last] / bw[0][PINNED][last]);
    // G 3.2.5.2: write-combined memory is not cached on the host, so CPU reads of it are slow.
    // A virtual machine may map it as ordinary memory; then no difference shows.
    double slow = wc_ms / pinned_ms;
    std::printf("CPU read of %s: pinned %.2f GB/s, write-combined %.2f GB/s -> WC read time / pinned: %.2fx%s\n",
                size_label(read_bytes).c_str(), gbps(read_bytes, pinned_ms), gbps(read_bytes, wc_ms), slow,
                slow > 1.5 ? " (slow, as the guide says)" : " (guide: slow; not seen on this machine)");

    CHECK(cudaFree(d_buf));
    CHECK(cudaFreeHost(host[PINNED]));
    CHECK(cudaFreeHost(host[WRITE_COMBINED]));
    CHECK(cudaHostUnregister(host[REGISTERED]));
    std::free(host[REGISTERED]);
    std::free(host[PAGEABLE]);
    return verdict.finish();
}
