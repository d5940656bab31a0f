// device_query - the device properties and attributes that later chapters rely on.
//
// Manual: G 2.6 Compute Capability; G 3.3 版本和兼容性; G 3.4 Compute Modes;
//         G 4.1 SIMT 架构 / 4.2 硬件多线程 (warps, resident threads, registers, shared memory per SM);
//         N 2.2 显卡硬件架构:SM、SP、Warp.
// Compile: nvcc -std=c++17 -O3 -arch=native -I../common -o device_query device_query.cu
// Shows:  the limits every later program is sized by: compute capability, SMs, warp size,
//         resident threads and blocks per SM, shared memory per block (default and opt-in) and per
//         SM, registers, L2 and its persisting part, memory clock x bus width -> theoretical DRAM
//         bandwidth, copy engines, concurrent kernels, managed / pageable memory access, compute
//         mode, driver and runtime versions. CUDA 13 removed several cudaDeviceProp fields
//         (clockRate, memoryClockRate, computeMode, kernelExecTimeoutEnabled, deviceOverlap, ...);
//         those are read with cudaDeviceGetAttribute, as the notes already recommend (N 1.1.1:
//         cuDeviceGetAttribute is what cudaGetDeviceProperties calls underneath).
//         As N 2.2 says, the number of CUDA cores per SM is not queryable: it follows from the CC.
// Build:  make device_query      Run: ./device_query [--max-devices=8]
// Output: one line per device, then a two-column table for the selected one, the check that a
//         block of maxThreadsPerBlock threads runs and sees the properties' warp and block size,
//         then notes (runtime <= driver version, limits ordered as documented), PASSED.
#include <string>
#include <vector>
#include "common.cuh"

// Through common/'s device_attribute(): with CUDA_LAB_PROFILE set, the profile's GPU answers
// (common/profiles.h), as dev.prop does.
static int attr(cudaDeviceAttr a, int dev) { return device_attribute(a, dev); }

static std::string version(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

static const char* compute_mode_name(int m) {
    switch (m) {
        case cudaComputeModeDefault: return "default (many contexts)";
        case cudaComputeModeExclusiveProcess: return "exclusive process";
        case cudaComputeModeProhibited: return "prohibited";
        default: return "unknown";
    }
}

static void row(const char* name, const std::string& value) { std::printf("  %-34s %s\n", name, value.c_str()); }
static std::string kb(size_t bytes) { return std::to_string(bytes / 1024) + " KB"; }
static std::string yes(int v) { return v ? "yes" : "no"; }

// What the device itself reports, to check the properties against: each thread of one block of
// maxThreadsPerBlock threads writes how many threads its warp has and how many its block has. The
// warp's threads are counted as they run: __activemask() has one bit per active thread of the
// warp. The programming model does not promise that every thread of a warp is active at a given
// point, so __syncwarp() first reconverges them (the block has no partial warp: maxThreadsPerBlock
// is a multiple of 32). (The built-in warpSize would not do: nvcc compiles it to the constant 32.)
// blockDim.x is read on the device.
__global__ void self_report(int* out) {
    __syncwarp();
    out[threadIdx.x] = __popc(__activemask()) * 65536 + blockDim.x;
}

int main(int argc, char** argv) {
    Args args(argc, argv, "Prints the device properties and attributes that later chapters rely on.");
    int max_devices = (int)args.integer("max-devices", 8, 1, 64, "list at most this many devices");
    args.parse_or_exit();

    DeviceInfo dev = select_device(args.device());
    const cudaDeviceProp& p = dev.prop;
    int id = dev.id;

    int driver = 0, runtime = 0, count = 0;
    CHECK(cudaDriverGetVersion(&driver));
    CHECK(cudaRuntimeGetVersion(&runtime));
    CHECK(cudaGetDeviceCount(&count));
    for (int d = 0; d < count && d < max_devices; ++d) {
        cudaDeviceProp q = device_info(d).prop;  // the profile's GPU when CUDA_LAB_PROFILE is set
        std::printf("device %d: %s, CC %d.%d, %.1f GB%s\n", d, q.name, q.major, q.minor, q.totalGlobalMem / 1e9,
                    d == id ? "  <- selected" : "");
    }
    if (count > max_devices) std::printf("(%d more not listed)\n", count - max_devices);

    // Attributes for the fields CUDA 13 removed from cudaDeviceProp.
    int mode = attr(cudaDevAttrComputeMode, id);
    int timeout = attr(cudaDevAttrKernelExecTimeout, id);
    int optin = attr(cudaDevAttrMaxSharedMemoryPerBlockOptin, id);
    char buf[160];

    row("driver / runtime version", version(driver) + " / " + version(runtime));
    row("compute capability", std::to_string(p.major) + "." + std::to_string(p.minor));
    std::snprintf(buf, sizeof buf, "%d SMs, warp size %d, SM clock %d MHz", p.multiProcessorCount, p.warpSize,
                  dev.sm_clock_khz / 1000);
    row("multiprocessors", buf);
    std::snprintf(buf, sizeof buf, "%d per block, %d per SM, %d blocks per SM", p.maxThreadsPerBlock,
                  p.maxThreadsPerMultiProcessor, p.maxBlocksPerMultiProcessor);
    row("threads", buf);
    std::snprintf(buf, sizeof buf, "block %d x %d x %d, grid %d x %d x %d", p.maxThreadsDim[0], p.maxThreadsDim[1],
                  p.maxThreadsDim[2], p.maxGridSize[0], p.maxGridSize[1], p.maxGridSize[2]);
    row("max dimensions", buf);
    row("shared memory per block / opt-in", kb(p.sharedMemPerBlock) + " / " + kb(optin));
    row("shared memory per SM / reserved", kb(p.sharedMemPerMultiprocessor) + " / " + kb(p.reservedSharedMemPerBlock) +
                                               " per block");
    std::snprintf(buf, sizeof buf, "%d per block, %d per SM (32-bit)", p.regsPerBlock, p.regsPerMultiprocessor);
    row("registers", buf);
    row("constant memory", kb(p.totalConstMem));
    std::snprintf(buf, sizeof buf, "%d KB, persisting max %d KB, window max %d MB", p.l2CacheSize >> 10,
                  p.persistingL2CacheMaxSize >> 10, p.accessPolicyMaxWindowSize >> 20);
    row("L2 cache", buf);
    const int mem_khz = attr(cudaDevAttrMemoryClockRate, id);  // the profile's under CUDA_LAB_PROFILE
    std::snprintf(buf, sizeof buf, "%.1f GB, %d-bit bus, %d MHz -> %.0f GB/s peak", p.totalGlobalMem / 1e9,
                  p.memoryBusWidth, mem_khz / 1000, 2.0 * mem_khz * 1e3 * (p.memoryBusWidth / 8.0) / 1e9);
    row("global memory", buf);
    row("copy engines (asyncEngineCount)", std::to_string(p.asyncEngineCount));
    row("concurrent kernels", yes(p.concurrentKernels));
    row("managed memory / concurrent access", yes(p.managedMemory) + " / " + yes(p.concurrentManagedAccess));
    row("pageable memory access (HMM/ATS)", yes(p.pageableMemoryAccess));
    row("unified addressing / map host mem", yes(p.unifiedAddressing) + " / " + yes(p.canMapHostMemory));
    row("compute mode", compute_mode_name(mode));
    row("compute preemption / kernel timeout", yes(attr(cudaDevAttrComputePreemptionSupported, id)) + " / " +
                                                   yes(timeout));
    row("cooperative launch / cluster launch", yes(p.cooperativeLaunch) + " / " + yes(p.clusterLaunch));

    Verdict verdict;
    // The GPU's own view, checked against the properties: a block of the maximum size runs, and every
    // thread counts the threads of its warp and of its block: the warp size and the block size that
    // cudaDeviceProp reports.
    {
        int* d_out;
        const int nt = p.maxThreadsPerBlock;
        std::vector<int> got(nt), want(nt, p.warpSize * 65536 + nt);
        CHECK(cudaMalloc(&d_out, nt * sizeof(int)));
        CHECK(cudaMemset(d_out, 0xff, nt * sizeof(int)));
        self_report<<<1, nt>>>(d_out);
        CHECK_LAUNCH();
        CHECK(cudaMemcpy(got.data(), d_out, nt * sizeof(int), cudaMemcpyDeviceToHost));
        verdict.exact("threads per warp * 65536 + blockDim.x, counted on the device", want.data(), got.data(), nt);
        CHECK(cudaFree(d_out));
    }
    // The rest compares the API with itself or with documented constants: notes, not checks.
    // A runtime needs a driver at least as new (G 3.3: the driver API is backward compatible only).
    verdict.note(runtime <= driver, "runtime version <= driver version");
    verdict.note(p.warpSize == 32 && p.maxThreadsPerBlock == 1024 && p.maxThreadsDim[0] == 1024 &&
                     p.maxThreadsDim[2] == 64 && p.maxGridSize[0] == 0x7fffffff,
                 "documented limits (warp 32, block 1024)");
    verdict.note(p.maxThreadsPerBlock <= p.maxThreadsPerMultiProcessor && p.regsPerBlock <= p.regsPerMultiprocessor &&
                     p.sharedMemPerBlock <= (size_t)optin && (size_t)optin <= p.sharedMemPerMultiprocessor &&
                     p.persistingL2CacheMaxSize <= p.l2CacheSize,
                 "block limits <= SM limits");
    int sm_attr = attr(cudaDevAttrMultiProcessorCount, id);
    verdict.note(sm_attr == p.multiProcessorCount &&
                     (size_t)optin == p.sharedMemPerBlockOptin && attr(cudaDevAttrL2CacheSize, id) == p.l2CacheSize,
                 "attributes agree with cudaDeviceProp");
    verdict.note(dev.mem_clock_khz > 0 && dev.sm_clock_khz > 0 && p.memoryBusWidth > 0,
                 "clocks and bus width from attributes");
    return verdict.finish();
}
