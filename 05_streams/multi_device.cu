// multi_device - several GPUs in one process: enumeration, per-device streams and events, the
// guide's cross-device stream / event rules as return codes, peer access and peer copies.
//
// Manual: G 3.2.7 多设备系统: 3.2.7.1 设备枚举, 3.2.7.2 设备选择, 3.2.7.3 流和事件行为,
//         3.2.7.4 Peer-to-Peer的内存访问 (3.2.7.4.1 Linux上的IOMMU), 3.2.7.5 Peer-to-Peer内存拷贝;
//         G 3.2.5.1 Portable Memory (可移植内存).
// Shows:  streams and events belong to the device that was current when they were created, and
//         cudaSetDevice() picks where allocations and launches go. The guide's rules, each checked
//         as the return code of the call:
//           - a kernel launched into a stream of another device fails (the guide; a CUDA 12+
//             runtime may instead run it on the stream's device - both are accepted, see below);
//           - a memory copy issued into a stream of another device succeeds;
//           - cudaEventRecord fails when the event and the stream belong to different devices;
//           - cudaEventElapsedTime fails for events of two devices;
//           - cudaEventSynchronize / cudaEventQuery succeed on an event of another device;
//           - cudaStreamWaitEvent succeeds across devices, so one device can wait for another:
//             device A computes, device B waits for A's event, copies A's result and computes on it.
//         With peer access (cudaDeviceCanAccessPeer, cudaDeviceEnablePeerAccess) a kernel on one
//         GPU dereferences the other's memory, and cudaMemcpyPeer goes GPU to GPU (NVLink or PCIe)
//         instead of through host memory. The copy is timed against staging through pinned host
//         memory (D2H then H2D) in the same run. Portable pinned memory (G 3.2.5.1): a buffer
//         allocated with cudaHostAllocPortable | cudaHostAllocMapped while the first device is current
//         is read in place by a kernel on the second (checked) and copied to it (GB/s against
//         pageable memory, printed); cudaHostGetFlags of it and of a default allocation are printed.
//         Needs two GPUs: with one it prints why and exits 77 (SKIPPED).
// Build:  make multi_device   (nvcc -std=c++17 -O3 -arch=native -I../common -o multi_device multi_device.cu)
// Run:    ./multi_device [--device=0] [--peer=1] [--mb=256] [--reps=10] [--csv=FILE] [--only=REGEX]
// Output: the devices and the peer-access matrix, each rule with the error it returned, the
//         cross-device pipeline check, a table of GB/s for staged vs peer copies, PASSED.
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>
#include "common.cuh"
#include "results.cuh"

__global__ void scale(uint32_t* x, int n, uint32_t mul, uint32_t add) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] = x[i] * mul + add;
}

// Reads `in` (possibly another GPU's memory, through peer access) and writes local memory.
__global__ void add_from(uint32_t* out, const uint32_t* in, int n, uint32_t add) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = in[i] + add;
}

int grid_for(int n) { return (n + 255) / 256; }

std::vector<uint32_t> download(const uint32_t* d_ptr, int device, int n) {
    std::vector<uint32_t> h(n);
    int cur = 0;
    CHECK(cudaGetDevice(&cur));
    CHECK(cudaSetDevice(device));
    CHECK(cudaMemcpy(h.data(), d_ptr, n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    CHECK(cudaSetDevice(cur));
    return h;
}

// A deliberate failing call: prints its error, clears it (none of these is sticky), and checks it.
void expect(Verdict& v, const char* what, cudaError_t got, bool want_success) {
    std::printf("   %-58s -> %s\n", what, cudaGetErrorName(got));
    (void)cudaGetLastError();
    v.check(want_success ? got == cudaSuccess : got != cudaSuccess,
            std::string(want_success ? "succeeds: " : "fails: ") + what);
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Multi-GPU: enumeration, cross-device stream/event rules, peer access, cudaMemcpyPeer vs staging.");
    int peer = (int)args.integer("peer", 1, 0, 63, "index of the second GPU (--device is the first)");
    long long mb = args.integer("mb", 256, 1, 4096, "megabytes copied between the GPUs in the bandwidth table");
    int reps = (int)args.integer("reps", 10, 1, 1000, "timed repetitions (median reported)");
    Results table(args, "multi_device", Results::GBPS);
    args.parse_or_exit();
    table.validate();
    int d0 = args.device(), d1 = peer;
    if (d0 == d1) {
        std::fprintf(stderr, "multi_device: error: --peer=%d must differ from --device=%d\n%s", d1, d0,
                     args.usage().c_str());
        return 2;
    }

    select_device(d0);
    int count = 0;
    CHECK(cudaGetDeviceCount(&count));
    if (count < 2) skip("needs two GPUs; this machine has " + std::to_string(count));
    if (d1 >= count) {
        std::fprintf(stderr, "multi_device: error: --peer=%d but this machine has %d CUDA devices\n", d1, count);
        return 2;
    }

    // 3.2.7.1 Enumeration, and who can access whom.
    std::printf("%d devices:\n", count);
    for (int d = 0; d < count; ++d) {
        cudaDeviceProp p = device_info(d).prop;  // the profile's GPU when CUDA_LAB_PROFILE is set
        std::printf("   %d: %s, compute capability %d.%d, %d SMs, %.0f GB, unifiedAddressing %d\n", d, p.name, p.major,
                    p.minor, p.multiProcessorCount, p.totalGlobalMem / 1e9, p.unifiedAddressing);
    }
    int shown = std::min(count, 8);
    std::printf("cudaDeviceCanAccessPeer (row -> column):\n      ");
    for (int b = 0; b < shown; ++b) std::printf("%3d", b);
    std::printf("\n");
    for (int a = 0; a < shown; ++a) {
        std::printf("   %d: ", a);
        for (int b = 0; b < shown; ++b) {
            bool can = a != b && can_access_peer(a, b);  // through the profile's peerAccess
            std::printf("%3s", a == b ? "-" : can ? "1" : "0");
        }
        std::printf("\n");
    }

    // The kernels loaded on both devices now (common/device.cuh): a kernel's lazy first load on a
    // device can synchronize that device and would hide an order the program forgot to state.
    for (int d : {d0, d1}) {
        CHECK(cudaSetDevice(d));
        LOAD_KERNELS((const void*)scale, (const void*)add_from);
    }
    CHECK(cudaSetDevice(d0));

    Verdict verdict;
    int n = (int)(mb * (1 << 20) / sizeof(uint32_t));
    size_t bytes = (size_t)n * sizeof(uint32_t);
    std::vector<uint32_t> pattern = random_vector<uint32_t>(n, 0, 0xffffffffu, 41);

    // 3.2.7.2 Allocations, streams and events land on the current device.
    uint32_t *p0, *p1, *h;
    cudaStream_t s0, s1;
    cudaEvent_t e0, e1;
    CHECK(cudaSetDevice(d0));
    CHECK(cudaMalloc(&p0, bytes));
    CHECK(cudaStreamCreateWithFlags(&s0, cudaStreamNonBlocking));
    // The rule checks below run kernels over p0 and p1 in s0 and s1 before they hold data. Zeroed in
    // those streams: a cudaMemset on the legacy stream would not be ordered before non-blocking s0.
    CHECK(cudaMemsetAsync(p0, 0, bytes, s0));
    // The zeroing checked at once, with d0 current, by a kernel in s0 that adds to it (the rule
    // check below launches into s0 with d1 current, and that launch may fail).
    scale<<<grid_for(n), 256, 0, s0>>>(p0, n, 1u, 0xA5u);  // p0 = 0xA5 everywhere
    CHECK_LAUNCH();
    CHECK(cudaStreamSynchronize(s0));
    {
        std::vector<uint32_t> seen = download(p0, d0, n), want_a5(n, 0xA5u);
        verdict.exact("kernel in s0 after the zeroing in s0 (device 0 current)", want_a5.data(), seen.data(), n);
    }
    CHECK(cudaEventCreate(&e0));
    CHECK(cudaMallocHost(&h, bytes));  // pinned, usable by every device (UVA: portable)
    CHECK(cudaSetDevice(d1));
    CHECK(cudaMalloc(&p1, bytes));
    CHECK(cudaStreamCreateWithFlags(&s1, cudaStreamNonBlocking));
    CHECK(cudaMemsetAsync(p1, 0, bytes, s1));
    CHECK(cudaEventCreate(&e1));

    // 3.2.7.3 The rules. Current device: d1; s0 and e0 belong to d0.
    std::printf("\nstream and event rules (current device %d; s0, e0 on device %d; s1, e1 on device %d):\n", d1, d0, d1);
    scale<<<grid_for(n), 256, 0, s1>>>(p1, n, 1u, 0u);  // s1 on d1: fine
    expect(verdict, "kernel into s1 (current device's stream)", cudaGetLastError(), true);
    // The guide: this launch fails. Since CUDA 12 the runtime loads kernels context-independently
    // (cuLibrary), and the driver documents that such a kernel is launched into the context of
    // the stream it is given; so a current runtime may run it on the stream's device instead.
    // Either outcome is accepted; a launch that "succeeds" must then have run on d0.
    scale<<<grid_for(n), 256, 0, s0>>>(p0, n, 1u, 0x5Au);  // p0 is all 0xA5: result 0xFF everywhere
    cudaError_t foreign = cudaGetLastError();
    bool foreign_ok = foreign != cudaSuccess;
    if (foreign == cudaSuccess) {
        CHECK(cudaStreamSynchronize(s0));
        std::vector<uint32_t> seen = download(p0, d0, n), want_ff(n, 0xFFu);
        foreign_ok = seen == want_ff;
    }
    std::printf("   %-58s -> %s%s\n", "kernel into s0 (another device's stream)", cudaGetErrorName(foreign),
                foreign != cudaSuccess ? " (fails, as the guide says)"
                : foreign_ok ? " (this runtime ran it on the stream's device, d0)" : " (and d0's data is wrong)");
    verdict.check(foreign_ok, "kernel into another device's stream: fails, or runs on that stream's device");
    expect(verdict, "cudaMemcpyAsync into s0 (another device's stream)",
           cudaMemcpyAsync(p0, pattern.data(), bytes, cudaMemcpyHostToDevice, s0), true);
    CHECK(cudaStreamSynchronize(s0));
    expect(verdict, "cudaEventRecord(e0 of d0, s1 of d1)", cudaEventRecord(e0, s1), false);
    CHECK(cudaSetDevice(d0));
    CHECK(cudaEventRecord(e0, s0));
    CHECK(cudaSetDevice(d1));
    CHECK(cudaEventRecord(e1, s1));
    CHECK(cudaStreamSynchronize(s1));
    expect(verdict, "cudaEventSynchronize(e0 of another device)", cudaEventSynchronize(e0), true);
    expect(verdict, "cudaEventQuery(e0 of another device)", cudaEventQuery(e0), true);
    float ms = 0;
    expect(verdict, "cudaEventElapsedTime(e0 of d0, e1 of d1)", cudaEventElapsedTime(&ms, e0, e1), false);

    // cudaStreamWaitEvent across devices: d0 computes, d1 waits for d0's event, copies and computes.
    CHECK(cudaSetDevice(d0));
    CHECK(cudaMemcpyAsync(p0, pattern.data(), bytes, cudaMemcpyHostToDevice, s0));  // pageable: staged
    scale<<<grid_for(n), 256, 0, s0>>>(p0, n, 3u, 1u);
    CHECK_LAUNCH();
    CHECK(cudaEventRecord(e0, s0));
    CHECK(cudaSetDevice(d1));
    CHECK(cudaMemsetAsync(p1, 0xff, bytes, s1));
    expect(verdict, "cudaStreamWaitEvent(s1 of d1, e0 of d0)", cudaStreamWaitEvent(s1, e0, 0), true);
    CHECK(cudaMemcpyPeerAsync(p1, d1, p0, d0, bytes, s1));  // ordered after d0's kernel by the wait
    scale<<<grid_for(n), 256, 0, s1>>>(p1, n, 1u, 5u);
    CHECK_LAUNCH();
    CHECK(cudaStreamSynchronize(s1));
    std::vector<uint32_t> want(n);
    for (int i = 0; i < n; ++i) want[i] = pattern[i] * 3u + 1u + 5u;
    std::vector<uint32_t> got = download(p1, d1, n);
    verdict.exact("d0 kernel -> wait -> peer copy -> d1 kernel", want.data(), got.data(), n);

    // 3.2.7.4 Peer access, both directions where the topology allows it.
    int can01 = can_access_peer(d0, d1), can10 = can_access_peer(d1, d0);
    CHECK(cudaSetDevice(d0));
    CHECK(cudaMemcpy(p0, pattern.data(), bytes, cudaMemcpyHostToDevice));

    // cudaMemcpyPeer before peer access is enabled: the driver stages it through host memory.
    auto peer_copy = [&] { CHECK(cudaMemcpyPeerAsync(p1, d1, p0, d0, bytes, 0)); };
    double no_p2p_ms = bench_ms(peer_copy, reps);
    if (can10 && can01) {
        CHECK(cudaSetDevice(d1));
        CHECK(cudaDeviceEnablePeerAccess(d0, 0));  // d1 may access d0's memory
        CHECK(cudaSetDevice(d0));
        CHECK(cudaDeviceEnablePeerAccess(d1, 0));  // and d0 d1's
        // A kernel on d1 reading d0's memory through the unified address space.
        CHECK(cudaSetDevice(d1));
        CHECK(cudaMemset(p1, 0xff, bytes));
        add_from<<<grid_for(n), 256>>>(p1, p0, n, 7u);
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        for (int i = 0; i < n; ++i) want[i] = pattern[i] + 7u;
        got = download(p1, d1, n);
        verdict.exact("kernel on d1 reads d0 memory (peer)", want.data(), got.data(), n);
        CHECK(cudaSetDevice(d0));
    } else {
        std::printf("\nno peer access between devices %d and %d (topology, or an IOMMU on bare-metal Linux,"
                    " 3.2.7.4.1): copies go through host memory\n", d0, d1);
    }

    // G 3.2.5.1 Portable memory: pinned memory allocated while d0 is current, with
    // cudaHostAllocPortable (and Mapped, for the kernel below), used by d1: a kernel on d1 reads it
    // in place, and d1 copies from it at pinned speed (timed against pageable memory, printed).
    {
        int pn = std::min(n, 1 << 24);  // at most 64 MB
        size_t pbytes = (size_t)pn * sizeof(uint32_t);
        uint32_t *hp, *hd, *hp_on_d1;
        CHECK(cudaSetDevice(d0));
        CHECK(cudaHostAlloc(&hp, pbytes, cudaHostAllocPortable | cudaHostAllocMapped));
        CHECK(cudaHostAlloc(&hd, sizeof(uint32_t), cudaHostAllocDefault));  // for its flags only
        unsigned fp = 0, fd = 0;
        CHECK(cudaHostGetFlags(&fp, hp));
        CHECK(cudaHostGetFlags(&fd, hd));
        std::copy(pattern.begin(), pattern.begin() + pn, hp);
        CHECK(cudaSetDevice(d1));
        CHECK(cudaHostGetDevicePointer(&hp_on_d1, hp, 0));  // asked with d1 current
        CHECK(cudaMemset(p1, 0xff, pbytes));
        add_from<<<grid_for(pn), 256>>>(p1, hp_on_d1, pn, 9u);
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        std::vector<uint32_t> pw(pn);
        for (int i = 0; i < pn; ++i) pw[i] = pattern[i] + 9u;
        std::vector<uint32_t> pg = download(p1, d1, pn);
        std::printf("\nportable pinned memory (G 3.2.5.1), allocated with device %d current: cudaHostGetFlags 0x%x "
                    "(Portable 0x%x, Mapped 0x%x; a default allocation: 0x%x)\n", d0, fp, cudaHostAllocPortable,
                    cudaHostAllocMapped, fd);
        // The flags this program asked for, read back from the runtime: a note, not a GPU result.
        verdict.note((fp & cudaHostAllocPortable) && (fp & cudaHostAllocMapped), "flags Portable | Mapped");
        verdict.exact("kernel on d1 reads portable memory", pw.data(), pg.data(), pn);
        // Both copies write the same values: each is checked after its own runs, with p1 poisoned
        // before the second (on d1's legacy stream, where bench_ms copies), so that a copy that did
        // nothing fails.
        double pin_ms = bench_ms([&] { CHECK(cudaMemcpyAsync(p1, hp, pbytes, cudaMemcpyHostToDevice, 0)); }, reps);
        pg = download(p1, d1, pn);
        verdict.exact("d1 copy from the portable buffer", pattern.data(), pg.data(), pn);
        CHECK(cudaMemset(p1, 0xff, pbytes));
        double page_ms = bench_ms([&] { CHECK(cudaMemcpyAsync(p1, pattern.data(), pbytes, cudaMemcpyHostToDevice, 0)); }, reps);
        pg = download(p1, d1, pn);
        verdict.exact("d1 copy from pageable memory", pattern.data(), pg.data(), pn);
        std::printf("   device %d, H2D of %.1f MB: from the portable buffer %.1f GB/s, from pageable memory %.1f GB/s "
                    "(%.2fx; printed)\n", d1, pbytes / 1e6, gbps((double)pbytes, pin_ms), gbps((double)pbytes, page_ms),
                    page_ms / pin_ms);
        CHECK(cudaSetDevice(d0));
        CHECK(cudaFreeHost(hp));
        CHECK(cudaFreeHost(hd));
    }

    // 3.2.7.5 Bandwidth: GPU -> GPU copy vs staging through pinned host memory. Current device d0;
    // bench_ms times on d0's default stream, which both versions finish on (the staged version's
    // copies from and to pinned memory return only when done).
    // The poison goes on d1's legacy stream, the peer copy on d0's: two devices, two streams, and no
    // documented order between them. d1 finishes its memset before the copy is issued (and
    // results.cuh's cudaDeviceSynchronize after the copy waits for d0, the current device, only).
    // (Without that wait, on two H100s, the copy never overtook the memset in 8 runs under the
    // ordering stress: the driver may order it anyway, but nothing documents that.)
    auto prepare = [&] {
        CHECK(cudaSetDevice(d1));
        CHECK(cudaMemset(p1, 0xff, bytes));
        CHECK(cudaDeviceSynchronize());  // d1's
        CHECK(cudaSetDevice(d0));
    };
    auto check = [&](Verdict& v, const std::string& name) {
        std::vector<uint32_t> g = download(p1, d1, n);
        v.exact(name + " vs source", pattern.data(), g.data(), n);
    };
    table.param("mb", mb);
    table.param("peer_access", can10 && can01 ? 1 : 0);
    table.baseline("staged via pinned host", [&] {
        CHECK(cudaMemcpy(h, p0, bytes, cudaMemcpyDeviceToHost));
        CHECK(cudaSetDevice(d1));
        CHECK(cudaMemcpy(p1, h, bytes, cudaMemcpyHostToDevice));
        CHECK(cudaSetDevice(d0));
    }, (double)bytes, check).prepare = prepare;  // poisoned first: a copy that did nothing fails
    std::string peer_name = can10 && can01 ? "cudaMemcpyPeer (peer access)" : "cudaMemcpyPeer (no peer access)";
    table.add(peer_name, peer_copy, (double)bytes, check, prepare);
    table.speedup_over("staged via pinned host");
    std::printf("\n%lld MB from device %d to device %d:", mb, d0, d1);
    table.run(verdict, reps);
    std::printf("cudaMemcpyPeer before cudaDeviceEnablePeerAccess: %.1f GB/s\n", gbps((double)bytes, no_p2p_ms));
    const Results::Version* pv = table.find(peer_name);
    const Results::Version* sv = table.base();
    if (pv && sv)
        std::printf("peer / staged: %.2fx (with peer access the copy does not go through the host)\n",
                    pv->rate() / sv->rate());

    CHECK(cudaSetDevice(d0));
    CHECK(cudaEventDestroy(e0));
    CHECK(cudaStreamDestroy(s0));
    CHECK(cudaFree(p0));
    CHECK(cudaFreeHost(h));
    CHECK(cudaSetDevice(d1));
    CHECK(cudaEventDestroy(e1));
    CHECK(cudaStreamDestroy(s1));
    CHECK(cudaFree(p1));
    CHECK(cudaSetDevice(d0));
    return verdict.finish();
}
