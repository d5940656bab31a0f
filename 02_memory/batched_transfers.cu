// batched_transfers - many small host<->device copies vs one large copy of the same bytes.
//
// Manual: G 5.3.1 设备与主机之间的数据传输 ("由于与每次传输相关的开销,将许多小传输批处理为
//         单个大传输总是比单独进行每个传输执行得更好").
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o batched_transfers batched_transfers.cu
// Shows:  every cudaMemcpyAsync pays a fixed cost (driver call, a DMA descriptor, a PCIe/NVLink
//         round trip) of a few microseconds whatever its size. 1024 copies of 4 KB pay it 1024
//         times and spend most of their time on overhead; one copy of 4 MB pays it once and runs at
//         link speed. Both use pinned (cudaMallocHost) memory, so the difference is the per-copy
//         overhead alone, not the pageable staging copy (see pinned_bandwidth for that).
// Build:  make batched_transfers   Run: ./batched_transfers [--chunks=1024] [--chunk-kb=4] [--reps=20]
// Output: per direction (H2D, D2H): time and GB/s of the chunked and of the single copy, the ratio
//         and the time per small copy; then PASSED.
#include <cstring>
#include <functional>
#include <vector>
#include "common.cuh"

int main(int argc, char** argv) {
    Args args(argc, argv, "Times N small cudaMemcpyAsync calls against one copy of the same total size.");
    long long chunks = args.integer("chunks", 1024, 1, 1 << 14, "number of small copies");
    long long chunk_kb = args.integer("chunk-kb", 4, 1, 64, "size of each small copy in KiB");
    int reps = (int)args.integer("reps", 20, 1, 1000, "timed repetitions (median reported)");
    args.parse_or_exit();

    select_device(args.device());
    size_t chunk = chunk_kb * 1024, total = chunks * chunk, nwords = total / sizeof(unsigned);
    std::printf("%lld copies of %lld KiB vs 1 copy of %.2f MiB, pinned host memory\n", chunks, chunk_kb,
                total / 1048576.0);

    // Pinned host buffers: the DMA engine reads/writes them directly. With pageable memory the
    // driver would first copy through its own pinned staging buffer, hiding the effect.
    unsigned *h_src, *h_dst, *d_buf;
    CHECK(cudaMallocHost(&h_src, total));
    CHECK(cudaMallocHost(&h_dst, total));
    CHECK(cudaMalloc(&d_buf, total));
    std::vector<unsigned> data = random_vector<unsigned>(nwords, 0u, 0xffffffffu, 1);
    std::memcpy(h_src, data.data(), total);

    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    char* hs = reinterpret_cast<char*>(h_src);
    char* hd = reinterpret_cast<char*>(h_dst);
    char* db = reinterpret_cast<char*>(d_buf);
    auto h2d_many = [&] {
        for (long long c = 0; c < chunks; ++c)
            CHECK(cudaMemcpyAsync(db + c * chunk, hs + c * chunk, chunk, cudaMemcpyHostToDevice, s));
    };
    auto h2d_one = [&] { CHECK(cudaMemcpyAsync(db, hs, total, cudaMemcpyHostToDevice, s)); };
    auto d2h_many = [&] {
        for (long long c = 0; c < chunks; ++c)
            CHECK(cudaMemcpyAsync(hd + c * chunk, db + c * chunk, chunk, cudaMemcpyDeviceToHost, s));
    };
    auto d2h_one = [&] { CHECK(cudaMemcpyAsync(hd, db, total, cudaMemcpyDeviceToHost, s)); };

    // Validate every path first: each upload is read back with the other kind of download, and
    // the target is overwritten with a pattern beforehand so that a chunk that was never copied
    // cannot pass.
    Verdict verdict;
    struct Trip { const char* name; std::function<void()> up, down; };
    Trip trips[] = {{"H2D chunked, D2H single", h2d_many, d2h_one},
                    {"H2D single, D2H chunked", h2d_one, d2h_many}};
    for (auto& t : trips) {
        CHECK(cudaMemsetAsync(d_buf, 0xff, total, s));
        t.up();
        std::memset(h_dst, 0xee, total);
        t.down();
        CHECK(cudaStreamSynchronize(s));
        verdict.exact(t.name, data.data(), h_dst, nwords);
    }

    // Events bracket the whole batch on the stream, so the time includes the gaps in which the
    // copy engine waits for the host to submit the next small copy.
    struct Row { const char* dir; std::function<void()> many, one; };
    Row rows[] = {{"H2D", h2d_many, h2d_one}, {"D2H", d2h_many, d2h_one}};
    std::printf("\n%-4s %28s %28s %9s %12s\n", "dir", "chunked (ms, GB/s)", "single (ms, GB/s)", "ratio",
                "us per copy");
    for (auto& r : rows) {
        double many = bench_ms(r.many, reps, 2, s);
        double one = bench_ms(r.one, reps, 2, s);
        std::printf("%-4s %16.3f ms %7.2f GB/s %16.3f ms %7.2f GB/s %8.1fx %12.2f\n", r.dir, many,
                    gbps(total, many), one, gbps(total, one), many / one, 1e3 * many / chunks);
    }
    std::printf("chunked / single > 1: the fixed cost per copy dominates small transfers (G 5.3.1)\n");

    CHECK(cudaStreamDestroy(s));
    CHECK(cudaFree(d_buf));
    CHECK(cudaFreeHost(h_src));
    CHECK(cudaFreeHost(h_dst));
    return verdict.finish();
}
