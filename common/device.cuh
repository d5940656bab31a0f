// device.cuh - picking the GPU, printing what it is, and skipping where it cannot run.
//
// select_device() is the first CUDA call of every program. If the runtime finds no usable GPU
// (no driver, no device, a driver too old for this toolkit) the program prints
// "SKIPPED: <the runtime's reason>" and exits 77, the conventional "skipped" code that the test
// suite understands. Otherwise it prints one banner line with the facts that later figures are
// compared with: compute capability, SM count, L2 size and the theoretical DRAM bandwidth,
// computed as 2 (double data rate) x memory clock x bus width. CUDA 13 removed
// cudaDeviceProp::memoryClockRate and clockRate, so those come from cudaDeviceGetAttribute.
// require_cc() skips (77) with a reason on a GPU older than a feature needs. select_device() also
// skips on a GPU older than every architecture the program was compiled for (nvcc's
// __CUDA_ARCH_LIST__, lowest first): such a GPU can run none of its kernels, and without this check
// the first launch would fail with cudaErrorNoKernelImageForDevice.
#pragma once
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <cuda_runtime.h>
#include "build_mode.h"
#include "check.cuh"

[[noreturn]] LAB_INLINE void skip(const std::string& reason);

struct DeviceInfo {
    int id = 0;
    cudaDeviceProp prop{};
    int mem_clock_khz = 0;    // cudaDevAttrMemoryClockRate
    int sm_clock_khz = 0;     // cudaDevAttrClockRate
    double peak_gbps = 0.0;   // theoretical DRAM bandwidth, 1e9 B/s
    int cc() const { return prop.major * 10 + prop.minor; }
};

LAB_INLINE DeviceInfo device_info(int id);

// select_device() with the lowest architecture this program was built for (e.g. 750; 0: unknown),
// which the inline select_device() below takes from the program's own __CUDA_ARCH_LIST__.
LAB_INLINE DeviceInfo select_device_built_for(int id, bool banner, int lowest_arch);

inline DeviceInfo select_device(int id, bool banner = true) {
#ifdef __CUDA_ARCH_LIST__
    constexpr int built_for[] = {__CUDA_ARCH_LIST__};  // e.g. 750,800,860,890,900 (the portable build)
    return select_device_built_for(id, banner, built_for[0]);
#else
    return select_device_built_for(id, banner, 0);
#endif
}

LAB_INLINE void require_cc(const DeviceInfo& d, int major, int minor, const char* feature);

// Whether a CUDA tool (compute-sanitizer, ncu, nsys) is attached to this process. They attach
// through the CUDA injection hook and take over parts of launching and synchronization, so a
// program prints its timing-dependent claims (concurrency, overlap, CPU cost of a wait) under them
// but does not assert them. Call after CUDA is initialized: the tool's library is then mapped into
// this process (Linux: /proc/self/maps; elsewhere only the environment variable is seen).
// The ordering stress of the test suite (tests/stress.py: random delays in front of every
// asynchronous operation, CUDA_LAB_STRESS=1 in the environment) counts as such a tool.
LAB_INLINE bool cuda_tool_attached();

// A texture object on linear memory needs devPtr aligned to the device's textureAlignment
// (cudaDevAttrTextureAlignment: 512 bytes on the H100). cudaMalloc promises only 256 (the
// programming guide), so the pointer is checked against the device's own figure, not assumed.
LAB_INLINE void check_texture_alignment(const void* p, const char* name);

// ---- the bodies: inline here (header-only), or compiled once into the library (build_mode.h) ----
#if LAB_COMMON_BODIES
#include <fstream>

[[noreturn]] LAB_INLINE void skip(const std::string& reason) {
    std::printf("SKIPPED: %s\n", reason.c_str());
    std::exit(77);
}

LAB_INLINE DeviceInfo device_info(int id) {
    DeviceInfo d;
    d.id = id;
    CHECK(cudaGetDeviceProperties(&d.prop, id));
    CHECK(cudaDeviceGetAttribute(&d.mem_clock_khz, cudaDevAttrMemoryClockRate, id));
    CHECK(cudaDeviceGetAttribute(&d.sm_clock_khz, cudaDevAttrClockRate, id));
    d.peak_gbps = 2.0 * d.mem_clock_khz * 1e3 * (d.prop.memoryBusWidth / 8.0) / 1e9;
    return d;
}

LAB_INLINE DeviceInfo select_device_built_for(int id, bool banner, int lowest_arch) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess)
        skip(std::string("no usable CUDA device (") + cudaGetErrorName(err) + ": " + cudaGetErrorString(err) + ")");
    if (count == 0) skip("no CUDA device found");
    if (id >= count) {
        std::fprintf(stderr, "error: --device=%d but this machine has %d CUDA device(s)\n", id, count);
        std::exit(2);
    }
    CHECK(cudaSetDevice(id));
    DeviceInfo d = device_info(id);
    if (banner)
        std::printf("GPU %d: %s | sm_%d | %d SMs | %d MB L2 | %.0f GB/s peak DRAM\n", id, d.prop.name, d.cc(),
                    d.prop.multiProcessorCount, d.prop.l2CacheSize >> 20, d.peak_gbps);
    if (lowest_arch > 0 && d.cc() * 10 < lowest_arch)
        skip("this build has code for compute capability " + std::to_string(lowest_arch / 100) + "." +
             std::to_string(lowest_arch / 10 % 10) + " and newer; " + d.prop.name + " is " +
             std::to_string(d.prop.major) + "." + std::to_string(d.prop.minor) +
             " (CUDA 13 compiles for 7.5 and newer; an older toolkit may build for it: make ARCH=sm_" +
             std::to_string(d.cc()) + ")");
    return d;
}

LAB_INLINE void require_cc(const DeviceInfo& d, int major, int minor, const char* feature) {
    if (d.prop.major * 10 + d.prop.minor < major * 10 + minor)
        skip(std::string(feature) + " requires compute capability " + std::to_string(major) + "." +
             std::to_string(minor) + "; " + d.prop.name + " is " + std::to_string(d.prop.major) + "." +
             std::to_string(d.prop.minor));
}

LAB_INLINE bool cuda_tool_attached() {
    const char* inj = std::getenv("CUDA_INJECTION64_PATH");
    if (inj && *inj) return true;
    const char* stress = std::getenv("CUDA_LAB_STRESS");
    if (stress && *stress && std::string(stress) != "0") return true;
    std::ifstream maps("/proc/self/maps");
    std::string line;
    while (std::getline(maps, line))
        if (line.find("sanitizer") != std::string::npos || line.find("njection") != std::string::npos) return true;
    return false;
}

LAB_INLINE void check_texture_alignment(const void* p, const char* name) {
    int dev = 0, align = 0;
    CHECK(cudaGetDevice(&dev));
    CHECK(cudaDeviceGetAttribute(&align, cudaDevAttrTextureAlignment, dev));
    if (reinterpret_cast<uintptr_t>(p) % (uintptr_t)align != 0) {
        std::printf("FAILED: %s = %p is not a multiple of textureAlignment (%d bytes)\n", name, p, align);
        std::exit(1);
    }
}
#endif  // LAB_COMMON_BODIES
