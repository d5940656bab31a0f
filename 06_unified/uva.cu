// uva - the unified virtual address space: what cudaPointerGetAttributes says about each kind of
// memory, and cudaMemcpyDefault between every pair of kinds.
//
// Manual: G “统一虚拟地址空间” (unnumbered in the translation, after 3.2.7.5; 3.2.8 in the English guide) (cudaPointerGetAttributes, cudaMemcpyDefault,
//         cudaHostAlloc pointers usable in kernels directly, the unifiedAddressing attribute);
//         G 3.2.5.3 Mapped Memory (a registered block may have a different device address);
//         N 6.1 统一内存 (6.6.2 编程: "在具有计算能力 6.x 及更高版本的设备的支持平台上,统一内存将使应用程序
//         能够使用默认系统分配器分配和共享数据" - the GPU reading plain malloc memory); M "带宽测试-固定与分页"
//         ("默认情况下，GPU 将不访问可分页内存").
// Shows:  in a 64-bit process host memory and every GPU's memory share one virtual address range,
//         so a pointer's value says where it points. For malloc(), cudaMallocHost, cudaHostAlloc
//         (mapped), cudaHostRegister, cudaMalloc and cudaMallocManaged memory the program prints
//         the attributes and compares them with what the guide and the runtime API document (notes:
//         the runtime's own answers, not GPU results):
//         type Unregistered / Host / Host / Host / Device / Managed; pinned and mapped blocks have
//         the same address on the device (no cudaHostGetDevicePointer needed); device memory has
//         no host address; managed memory has both, equal. Kernels then use the device pointers
//         directly, and cudaMemcpy(dst, src, bytes, cudaMemcpyDefault) copies between all 30
//         pairs of different kinds (6 x 6 minus a kind onto itself): the runtime infers the direction
//         from the addresses. A kernel reads and writes the plain malloc() buffer itself only where
//         cudaDevAttrPageableMemoryAccess is 1 (the "supported platforms" of N 6.6.2: HMM on Linux,
//         or a coherent CPU-GPU link); where it is 0 that part prints why it is skipped and the rest
//         runs and is checked as before. The copies that involve device or managed memory are the
//         checks; the 12 between two host kinds (copied by the CPU) are notes.
// Build:  make uva  (nvcc -std=c++17 -O3 -arch=native -I../common -o uva uva.cu)
// Run:    ./uva [--n=2^22] [--reps=3]
// Output: one line of attributes per kind, the notes, the kernel checks, a 6 x 6 table of
//         cudaMemcpyDefault GB/s (every copy compared), PASSED. The malloc kernel line says "ok" or "skipped: ...".
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>
#include "common.cuh"

enum Kind { PAGEABLE, PINNED, MAPPED, REGISTERED, DEVICE, MANAGED, KINDS };
const char* kind_name[KINDS] = {"malloc", "cudaMallocHost", "cudaHostAlloc(Mapped)", "cudaHostRegister",
                                "cudaMalloc", "cudaMallocManaged"};
const char* short_name[KINDS] = {"malloc", "pinned", "mapped", "registered", "device", "managed"};

// Filling and reading a buffer without cudaMemcpyDefault (the thing under test): the CPU writes
// and reads every kind but device memory directly, device memory goes through explicit copies.
void put(int kind, void* p, const void* from, size_t bytes) {
    if (kind == DEVICE) CHECK(cudaMemcpy(p, from, bytes, cudaMemcpyHostToDevice));
    else std::memcpy(p, from, bytes);
}
void get(int kind, void* to, const void* p, size_t bytes) {
    if (kind == DEVICE) CHECK(cudaMemcpy(to, p, bytes, cudaMemcpyDeviceToHost));
    else std::memcpy(to, p, bytes);
}
void poison(int kind, void* p, size_t bytes) {  // 0xff bytes: NaN floats
    if (kind == DEVICE) CHECK(cudaMemset(p, 0xff, bytes));
    else std::memset(p, 0xff, bytes);
}

const char* type_name(cudaMemoryType t) {
    switch (t) {
        case cudaMemoryTypeUnregistered: return "Unregistered";
        case cudaMemoryTypeHost: return "Host";
        case cudaMemoryTypeDevice: return "Device";
        case cudaMemoryTypeManaged: return "Managed";
    }
    return "?";
}

// "= ptr", "NULL" or the other address: how an alias relates to the pointer asked about.
std::string alias(const void* q, const void* p) {
    if (q == p) return "= ptr";
    if (!q) return "NULL";
    char buf[32];
    std::snprintf(buf, sizeof buf, "%p", q);
    return buf;
}

__global__ void scale(float* data, long long n) {
    long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (i < n) data[i] = 2.f * data[i] + 1.f;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Unified virtual addressing: cudaPointerGetAttributes and cudaMemcpyDefault on six kinds of memory.");
    long long n = args.integer("n", 1LL << 22, 1, 1LL << 27, "floats per buffer");
    int reps = (int)args.integer("reps", 3, 1, 100, "timed copies per pair (median reported)");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    int unified = 0, pageable = 0, host_ptr_ok = 0, host_tables = 0;
    unified = device_attribute(cudaDevAttrUnifiedAddressing, dev.id);
    pageable = device_attribute(cudaDevAttrPageableMemoryAccess, dev.id);
    host_ptr_ok = device_attribute(cudaDevAttrCanUseHostPointerForRegisteredMem, dev.id);
    host_tables = device_attribute(cudaDevAttrPageableMemoryAccessUsesHostPageTables, dev.id);
    std::printf("unifiedAddressing %d, pageableMemoryAccess %d, canUseHostPointerForRegisteredMem %d, "
                "pageableMemoryAccessUsesHostPageTables %d\n", unified, pageable, host_ptr_ok, host_tables);
    if (!unified) skip("this device does not use the unified address space (cudaDevAttrUnifiedAddressing = 0)");
    // The notes below predict what cudaPointerGetAttributes answers, which is the real GPU's and
    // platform's answer also under CUDA_LAB_PROFILE: they take the real attributes (device.cuh).
    // canUseHostPointerForRegisteredMem is in no profile (the real value above, also under one).
    int real_host_ptr_ok = 0, real_host_tables = 0;
    CHECK(cudaDeviceGetAttribute(&real_host_ptr_ok, cudaDevAttrCanUseHostPointerForRegisteredMem, dev.id));
    CHECK(cudaDeviceGetAttribute(&real_host_tables, cudaDevAttrPageableMemoryAccessUsesHostPageTables, dev.id));

    size_t bytes = (size_t)n * sizeof(float);
    size_t reg_bytes = (bytes + 4095) / 4096 * 4096;  // aligned_alloc wants a multiple of the alignment
    void* p[KINDS];
    p[PAGEABLE] = std::malloc(bytes);
    CHECK(cudaMallocHost(&p[PINNED], bytes));
    CHECK(cudaHostAlloc(&p[MAPPED], bytes, cudaHostAllocMapped));
    p[REGISTERED] = std::aligned_alloc(4096, reg_bytes);
    if (!p[PAGEABLE] || !p[REGISTERED]) {
        std::printf("FAILED: host allocation of %zu bytes\n", bytes);
        return 1;
    }
    CHECK(cudaHostRegister(p[REGISTERED], reg_bytes, cudaHostRegisterDefault));
    CHECK(cudaMalloc(&p[DEVICE], bytes));
    CHECK(cudaMallocManaged(&p[MANAGED], bytes));

    // 1. What the runtime knows about each pointer.
    Verdict verdict;
    cudaPointerAttributes at[KINDS];
    std::printf("\n%-22s %-13s %6s %-16s %-16s\n", "allocated by", "type", "device", "devicePointer", "hostPointer");
    for (int k = 0; k < KINDS; ++k) {
        CHECK(cudaPointerGetAttributes(&at[k], p[k]));
        std::printf("%-22s %-13s %6d %-16s %-16s\n", kind_name[k], type_name(at[k].type), at[k].device,
                    alias(at[k].devicePointer, p[k]).c_str(), alias(at[k].hostPointer, p[k]).c_str());
    }
    // Documented: malloc memory is Unregistered (since CUDA 11 the call succeeds); pinned and
    // mapped blocks are Host memory that kernels reach at the same address (UVA); a registered
    // block is Host memory with some device alias (equal only if the device can use the host
    // pointer); device memory has no host alias (unless the platform maps device memory for the
    // CPU, as coherent CPU-GPU links do); managed memory is one address for both.
    auto host_kind = [&](int k, bool same_device_ptr) {
        return at[k].type == cudaMemoryTypeHost && at[k].device == dev.id && at[k].hostPointer == p[k] &&
               (same_device_ptr ? at[k].devicePointer == p[k] : at[k].devicePointer != nullptr);
    };
    void* mapped_dev = nullptr;
    CHECK(cudaHostGetDevicePointer(&mapped_dev, p[MAPPED], 0));
    // The runtime's answers against the documentation: no GPU computed them, so they are notes;
    // the kernels on each alias (2) and the copies (3) are the checks.
    verdict.note(at[PAGEABLE].type == cudaMemoryTypeUnregistered, "malloc: Unregistered");
    verdict.note(host_kind(PINNED, true), "cudaMallocHost: Host, devicePointer = ptr");
    verdict.note(host_kind(MAPPED, true) && mapped_dev == p[MAPPED], "mapped: cudaHostGetDevicePointer = ptr");
    verdict.note(host_kind(REGISTERED, real_host_ptr_ok != 0), "cudaHostRegister: Host, device alias");
    verdict.note(at[DEVICE].type == cudaMemoryTypeDevice && at[DEVICE].device == dev.id &&
                      at[DEVICE].devicePointer == p[DEVICE] && (real_host_tables || at[DEVICE].hostPointer == nullptr),
                  "cudaMalloc: Device, no host alias");
    verdict.note(at[MANAGED].type == cudaMemoryTypeManaged && at[MANAGED].device == dev.id &&
                      at[MANAGED].devicePointer == p[MANAGED] && at[MANAGED].hostPointer == p[MANAGED],
                  "managed: one address for host and device");

    // 2. Kernels use each device alias as it is; malloc memory only where the GPU can reach
    // pageable memory (2b below).
    std::vector<float> src = random_vector<float>(n, -1.f, 1.f, 1), want(n), got(n);
    for (long long i = 0; i < n; ++i) want[i] = 2.f * src[i] + 1.f;
    unsigned grid = (unsigned)((n + 255) / 256);
    for (int k = PINNED; k < KINDS; ++k) {
        put(k, p[k], src.data(), bytes);
        scale<<<grid, 256>>>(static_cast<float*>(at[k].devicePointer), n);
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());  // the CPU reads host and managed memory the kernel wrote
        get(k, got.data(), p[k], bytes);
        verdict.exact(std::string("kernel on ") + kind_name[k], want.data(), got.data(), n);
    }

    // 2b. The plain malloc() pointer in a kernel. pageableMemoryAccess = 1: the GPU can access
    // pageable host memory (the driver's HMM on Linux, or the CPU's page tables over NVLink-C2C /
    // ATS); a kernel may then dereference any host pointer. 0 (e.g. a PCIe system without HMM):
    // the same kernel would fault (cudaErrorIllegalAddress), so it is not launched.
    if (pageable) {
        put(PAGEABLE, p[PAGEABLE], src.data(), bytes);
        scale<<<grid, 256>>>(static_cast<float*>(p[PAGEABLE]), n);
        CHECK_LAUNCH();
        CHECK(cudaDeviceSynchronize());
        get(PAGEABLE, got.data(), p[PAGEABLE], bytes);
        verdict.exact("kernel on malloc (pageable)", want.data(), got.data(), n);
    } else {
        std::printf("  check %-34s skipped: pageableMemoryAccess = 0 (this system does not let the GPU read\n"
                    "        pageable host memory: no HMM, no coherent CPU-GPU link); the malloc buffer is used\n"
                    "        only through cudaMemcpyDefault below\n", "kernel on malloc (pageable)");
    }

    // 3. cudaMemcpyDefault between every pair: compared once, then timed (wall clock of the
    // synchronous copy). A pair with device or managed memory on one side is a check; the 12 pairs
    // between two host kinds are copied by the CPU, no GPU involved: notes.
    std::printf("\ncudaMemcpyDefault GB/s (%.1f MB, median of %d), rows: from, columns: to\n%-12s", bytes / 1e6, reps,
                "");
    for (int d = 0; d < KINDS; ++d) std::printf(" %10s", short_name[d]);
    std::printf("\n");
    std::vector<float> pattern = random_vector<float>(n, -1.f, 1.f, 7);
    for (int s = 0; s < KINDS; ++s) {
        std::printf("%-12s", short_name[s]);
        long long bad_pairs = 0, bad_host_pairs = 0;  // host <-> host pairs: notes
        for (int d = 0; d < KINDS; ++d) {
            if (s == d) {  // a copy onto itself is pointless: a second buffer of the same kind would be needed
                std::printf(" %10s", "-");
                continue;
            }
            put(s, p[s], pattern.data(), bytes);
            poison(d, p[d], bytes);
            CHECK(cudaDeviceSynchronize());
            CHECK(cudaMemcpy(p[d], p[s], bytes, cudaMemcpyDefault));
            CHECK(cudaDeviceSynchronize());
            get(d, got.data(), p[d], bytes);
            lab_corrupt(got.data(), got.size());  // CUDA_LAB_CORRUPT: this check must be able to fail (corrupt.h)
            bool ok = std::memcmp(got.data(), pattern.data(), bytes) == 0;
            (s < DEVICE && d < DEVICE ? bad_host_pairs : bad_pairs) += !ok;
            std::vector<double> ms;
            for (int r = 0; r < reps; ++r) {
                CpuTimer t;
                CHECK(cudaMemcpy(p[d], p[s], bytes, cudaMemcpyDefault));
                CHECK(cudaDeviceSynchronize());
                ms.push_back(t.stop_ms());
            }
            if (ok) std::printf(" %10.1f", gbps((double)bytes, median(ms)));
            else std::printf(" %10s", "WRONG");
        }
        std::printf("\n");
        verdict.check(bad_pairs == 0, std::string("cudaMemcpyDefault from ") + short_name[s] +
                                          (s < DEVICE ? " (to device, managed)" : ""));
        if (s < DEVICE)
            verdict.note(bad_host_pairs == 0, std::string("cudaMemcpyDefault from ") + short_name[s] + " to host kinds");
    }

    CHECK(cudaFree(p[MANAGED]));
    CHECK(cudaFree(p[DEVICE]));
    CHECK(cudaHostUnregister(p[REGISTERED]));
    std::free(p[REGISTERED]);
    CHECK(cudaFreeHost(p[MAPPED]));
    CHECK(cudaFreeHost(p[PINNED]));
    std::free(p[PAGEABLE]);
    return verdict.finish();
}
